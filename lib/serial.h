/* 16550 UART console. */
#ifndef LIB_SERIAL_H
#define LIB_SERIAL_H
#include "types.h"
#define COM1_PORT 0x3f8
void serial_init(uint16_t port);
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
/* The UART's base port; 0 when there is none. */
uint16_t serial_base(void);
/* Waits (bounded) until the UART has sent everything. */
void serial_flush(void);
#endif
