/* The guest's virtual 16550A at the ports of the hypervisor's console UART
 * (docs/console.md). A pure model of the registers (PC16550D data sheet):
 * no port I/O, no locks; the caller serializes, forwards the output lines
 * and raises the guest's IRQ on a rising edge of the interrupt line. */
#ifndef GUEST_VUART_H
#define GUEST_VUART_H
#include "../lib/types.h"

#define VUART_LINE 1024      /* the longest line forwarded whole */
#define VUART_FIFO 16

struct vuart {
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	uint8_t lsr_err;          /* overrun error, cleared by reading LSR */
	uint8_t msr_delta;        /* MSR bits 3:0 since the last MSR read */
	uint8_t msr_lines;        /* MSR bits 7:4 as last computed */
	bool thre_ip;             /* the THRE interrupt is pending */
	bool irq_line;            /* the interrupt output as last evaluated */
	uint8_t rx[VUART_FIFO];
	uint8_t rx_err[VUART_FIFO];  /* each byte's LSR error bits (break, framing, parity) */
	uint32_t rx_head, rx_n;
	char line[VUART_LINE];
	uint32_t line_len;
	/* Receives each output line (with its '\n'), a piece of a line longer
	 * than VUART_LINE, or what vuart_flush drains. */
	void (*emit)(void *ctx, const char *s, size_t n, bool whole);
	void *ctx;
	uint64_t tx_bytes, lines, pieces, rx_bytes, rx_dropped, breaks;
	uint64_t partials;        /* partial lines sent when the guest stopped transmitting */
};

/* As after a master reset, with 'emit' as the output. */
void vuart_init(struct vuart *u, void (*emit)(void *, const char *, size_t, bool), void *ctx);
/* A guest access of one byte at register 'off' (0-7 from the base port). */
uint8_t vuart_read(struct vuart *u, unsigned off);
void vuart_write(struct vuart *u, unsigned off, uint8_t val);
/* A byte received on the line (not in loopback): into the receive FIFO;
 * false when the FIFO was full (the byte is lost, LSR.OE set). */
bool vuart_rx(struct vuart *u, uint8_t b);
/* The same with the line's error bits for it (LSR 4:2: 0x10 a break, whose
 * byte is 0; 0x08 framing, 0x04 parity): reported by LSR while the byte is
 * at the top of the FIFO (PC16550D, "Line Status Register"). */
bool vuart_rx_err(struct vuart *u, uint8_t b, uint8_t err);
/* Room in the receive FIFO. */
uint32_t vuart_rx_room(const struct vuart *u);
/* Drains a partial output line (the guest's power-off, the report). A
 * partial line also goes out when the guest stops transmitting: its
 * driver turns the THRE interrupt off with nothing left to send (Linux's
 * 8250 at the end of each burst: a prompt, the echo of a typed byte). */
void vuart_flush(struct vuart *u);
/* The IIR value that a read would return now (no side effect). */
uint8_t vuart_iir(const struct vuart *u);
/* Evaluates the interrupt output (an interrupt identified and OUT2 set,
 * loopback off, as on the PC's ISA wiring); true on a rising edge. */
bool vuart_irq_edge(struct vuart *u);
#endif
