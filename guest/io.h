/* Port I/O passes through, except the ports that end the machine (their
 * writes are seen first so the exit report reaches the console), the ports
 * that reset it (a guest that asks for a reset died: a panic with panic=N,
 * an oops with oops=panic, a reboot) and the hypervisor's console UART (the
 * guest gets a virtual one there). */
#ifndef GUEST_IO_H
#define GUEST_IO_H
#include "../lib/types.h"
#include "../lib/acpi.h"

#define IO_CONSOLE_PORTS 8   /* a 16550's registers */

/* Fills the two 4 KiB I/O bitmaps (A: ports 0-0x7fff, B: 0x8000-0xffff);
 * 'console' is the hypervisor's UART base port (0: none). */
void io_bitmaps_build(uint8_t *a, uint8_t *b, const struct acpi_info *acpi, uint16_t console);
/* The port is one of the console UART's. */
bool io_is_console(uint16_t console, uint16_t port);
/* Sets port's bit (an intercepted port) in the bitmaps a and b. */
void io_bitmap_set(uint8_t *a, uint8_t *b, uint16_t port);
bool io_bitmap_intercepts(const uint8_t *a, const uint8_t *b, uint16_t port);
/* Called for an intercepted OUT of 'size' bytes (1, 2 or 4) before it is
 * carried out: true when the write ends the machine (ACPI sleep, emulator
 * exit) and why. */
/* An intercepted OUT that asks for a sleep state other than S5 (S1-S4):
 * the hypervisor drops it, since resuming from those states would run the
 * guest outside VMX (the guest's DSDT no longer offers them). */
bool io_write_is_sleep(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size);
bool io_write_ends_machine(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size,
			   const char **why);
/* An intercepted OUT that resets the machine, and how: the keyboard
 * controller's reset pulse (port 0x64, commands 0xf0-0xfe with bit 0 clear:
 * Linux writes 0xfe), the reset control register (port 0xcf9 with RST_CPU,
 * bit 2: seen where PCI's ports exit, msi=trap), the FADT's reset register
 * when it is a port (its reset value). The hypervisor cannot restart the
 * guest, so the run ends there (vmx/exit_io.c). */
bool io_write_resets(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size, const char **why);
#endif
