/* The ACPI Serial Port Console Redirection table (Microsoft's SPCR
 * specification, revisions 1 to 4): the console port the firmware names.
 * Pure logic. */
#ifndef LIB_SPCR_H
#define LIB_SPCR_H
#include "serial.h"

/* An I/O port at 115200 baud, its ISA IRQ for COM1..COM4 (lib/spcr.c holds
 * these two as the pure half of the console's description). */
void uart_desc_com(struct uart_desc *d, uint16_t port);
/* "I/O port 0x2f8, 115200 baud" and the like, for the boot lines. */
void uart_desc_str(const struct uart_desc *d, char *buf, size_t n);

#define SPCR_MIN_LEN 80                 /* revision 1 and 2: up to the PCI segment and 4 reserved bytes */

/* 0 and *d: a 16550 (interface types 0, 1 and 0x12) the hypervisor can
 * drive; -1 and why otherwise (redirection off, another UART, an address
 * space or width it does not take). t is the whole table, len its length
 * (the header's, already checked against its checksum). */
int spcr_decode(const uint8_t *t, uint32_t len, struct uart_desc *d, char *why, size_t n);
#endif
