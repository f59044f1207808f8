/* The few intercepted ports: those that end the machine, those that reset
 * it, and the 8 of the hypervisor's console UART (the guest's are a virtual
 * 16550A there, guest/vuart.c). Not 0xcf9 (reset control) here: a 32-bit
 * access to PCI's 0xcf8 covers it, and every PCI configuration access would
 * exit; msi=trap, which takes 0xcf8-0xcff anyway, sees it. */
#include "io.h"
#include "../lib/string.h"

#define PORT_BOCHS_SHUTDOWN 0x8900
#define PORT_QEMU_DEBUG_EXIT 0xf4
#define PORT_KBC_COMMAND 0x64
#define PORT_RESET_CONTROL 0xcf9
#define RESET_CONTROL_RST_CPU BIT(2)
#define ACPI_SLP_EN BIT(13)

/* A port of PCI's configuration mechanism #1 (0xcf8-0xcff). */
static bool pci_conf1_port(uint64_t port)
{
	return port >= 0xcf8 && port <= 0xcff;
}

static void set_port(uint8_t *a, uint8_t *b, uint32_t port)
{
	if (!port || port > 0xffff)
		return;
	uint8_t *bm = port < 0x8000 ? a : b;
	uint32_t bit = port & 0x7fff;
	bm[bit / 8] |= 1 << (bit % 8);
}

void io_bitmaps_build(uint8_t *a, uint8_t *b, const struct acpi_info *acpi, uint16_t console)
{
	memset(a, 0, PAGE_SIZE);
	memset(b, 0, PAGE_SIZE);
	/* PM1 control is 16 bits wide: both bytes, so any access size is seen. */
	for (int i = 0; i < 2; i++) {
		set_port(a, b, acpi->pm1a_cnt + i);
		if (acpi->pm1b_cnt)
			set_port(a, b, acpi->pm1b_cnt + i);
	}
	set_port(a, b, PORT_BOCHS_SHUTDOWN);
	set_port(a, b, PORT_KBC_COMMAND);     /* its reads (the status) pass through */
	if (acpi->reset_valid && acpi->reset_space == ACPI_SPACE_IO && !pci_conf1_port(acpi->reset_addr))
		set_port(a, b, (uint32_t)acpi->reset_addr);
	for (int i = 0; i < 4; i++)
		set_port(a, b, PORT_QEMU_DEBUG_EXIT + i);
	for (uint32_t i = 0; console && i < IO_CONSOLE_PORTS; i++)
		set_port(a, b, console + i);
}

void io_bitmap_set(uint8_t *a, uint8_t *b, uint16_t port)
{
	set_port(a, b, port);
}

bool io_is_console(uint16_t console, uint16_t port)
{
	return console && port >= console && port - console < IO_CONSOLE_PORTS;
}

bool io_bitmap_intercepts(const uint8_t *a, const uint8_t *b, uint16_t port)
{
	const uint8_t *bm = port < 0x8000 ? a : b;
	uint32_t bit = port & 0x7fff;
	return bm[bit / 8] & (1 << (bit % 8));
}

/* The PM1 control register's view of a write (a byte at cnt+1 is its high
 * half): whether it sets SLP_EN, and with which SLP_TYP (bits 12:10). */
static bool pm1_slp_en(uint32_t cnt, uint16_t port, uint32_t value, uint32_t *typ)
{
	if (!cnt)
		return false;
	if (port == cnt + 1)
		value <<= 8;
	else if (port != cnt)
		return false;
	*typ = (value >> 10) & 7;
	return value & ACPI_SLP_EN;
}

/* SLP_EN of PM1a or PM1b: 1 for S5 (or any state when \_S5_ is unknown),
 * -1 for another sleep state, 0 for no sleep request. */
static int sleep_request(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size)
{
	uint32_t typ;
	if (size < 4)
		value &= (1u << (size * 8)) - 1;
	if (pm1_slp_en(acpi->pm1a_cnt, port, value, &typ))
		return !acpi->s5_valid || typ == acpi->slp_typa ? 1 : -1;
	if (pm1_slp_en(acpi->pm1b_cnt, port, value, &typ))
		return !acpi->s5_valid || typ == acpi->slp_typb ? 1 : -1;
	return 0;
}

bool io_write_is_sleep(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size)
{
	return sleep_request(acpi, port, value, size) < 0;
}

bool io_write_ends_machine(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size,
			   const char **why)
{
	if (sleep_request(acpi, port, value, size) > 0) {
		*why = "ACPI S5 (SLP_EN in PM1 control)";
		return true;
	}
	if (port == PORT_BOCHS_SHUTDOWN) {
		*why = "Bochs shutdown port";
		return true;
	}
	if (port >= PORT_QEMU_DEBUG_EXIT && port < PORT_QEMU_DEBUG_EXIT + 4) {
		*why = "QEMU isa-debug-exit";
		return true;
	}
	return false;
}

bool io_write_resets(const struct acpi_info *acpi, uint16_t port, uint32_t value, unsigned size, const char **why)
{
	uint8_t byte = (uint8_t)value;     /* every register below is a byte at its port */
	(void)size;
	if (port == PORT_KBC_COMMAND && (byte & 0xf0) == 0xf0 && !(byte & 1)) {
		*why = "the keyboard controller's reset line";
		return true;
	}
	if (port == PORT_RESET_CONTROL && (byte & RESET_CONTROL_RST_CPU)) {
		*why = "the reset control register";
		return true;
	}
	if (acpi->reset_valid && acpi->reset_space == ACPI_SPACE_IO && port == acpi->reset_addr &&
	    byte == acpi->reset_value) {
		*why = "the FADT's reset register";
		return true;
	}
	return false;
}
