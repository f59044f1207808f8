/* 16550 UART console: on an I/O port (COM1..COM4) or in memory (a PCI or
 * MMIO UART, registers of 1 or 4 bytes spaced 1 or 4 apart). */
#ifndef LIB_SERIAL_H
#define LIB_SERIAL_H
#include "types.h"
#define COM1_PORT 0x3f8
#define UART_CLOCK_PC 1843200u          /* the PC's 1.8432 MHz crystal: divisor 1 is 115200 baud */

enum { UART_NONE = 0, UART_IO = 1, UART_MMIO = 2 };
struct uart_desc {
	uint8_t space;          /* UART_IO or UART_MMIO; UART_NONE: no console */
	uint8_t width;          /* bytes per register access: 1 (I/O always), or 4 */
	uint8_t shift;          /* register r at base + (r << shift) */
	uint64_t base;
	uint32_t baud;          /* 0: the divisor the firmware left is kept */
	uint32_t clock;         /* the UART's input clock in Hz; 0: UART_CLOCK_PC */
	int32_t gsi;            /* its interrupt as a GSI; -1: unknown */
};

void serial_init_desc(const struct uart_desc *d);
/* Each '\n' as "\r\n". */
void serial_write(const char *s, size_t n);
/* The bytes as they are (the guest's console lines). */
void serial_write_raw(const char *s, size_t n);
/* A received byte, or -1 when none is waiting. */
int serial_getc(void);
/* The same with the Line Status Register read before the byte (its error
 * bits are the byte's: break 0x10, framing 0x08, parity 0x04, overrun 0x02). */
int serial_getc_lsr(uint8_t *lsr);
/* The receive and line-status interrupts on (OUT2 with them) or off. */
void serial_rx_irq(bool on);
/* What the UART is programmed with (call with the console lock held: the
 * divisor is read with DLAB set). */
void serial_config(uint8_t *lcr, uint8_t *ier, uint8_t *mcr, uint16_t *divisor);
/* The UART's base port; 0 when there is none or it is in memory. */
uint16_t serial_base(void);
/* The whole description of the UART in use. */
const struct uart_desc *serial_desc(void);
/* Waits (bounded) until the UART has sent everything. */
void serial_flush(void);
#endif
