/* The guest's virtual 16550A (PC16550D data sheet, "Registers"). The
 * transmitter is infinitely fast: a byte written to THR is on its way at
 * once, so THR and the transmitter are always empty (LSR.THRE and TEMT set)
 * and each THR write ends with a THRE interrupt pending. The modem lines
 * outside loopback read as a connected line (CTS, DSR, DCD). */
#include "vuart.h"
#include "../lib/string.h"

enum { REG_DATA = 0, REG_IER = 1, REG_IIR_FCR = 2, REG_LCR = 3, REG_MCR = 4, REG_LSR = 5, REG_MSR = 6, REG_SCR = 7 };

#define IER_ERBFI 0x01     /* received data available */
#define IER_ETBEI 0x02     /* transmitter holding register empty */
#define IER_ELSI  0x04     /* receiver line status */
#define IER_EDSSI 0x08     /* modem status */
#define IER_MASK  0x0f     /* bits 7:4 are always 0 */

#define IIR_NONE  0x01
#define IIR_RLS   0x06
#define IIR_RDA   0x04
#define IIR_THRE  0x02
#define IIR_MSI   0x00
#define IIR_FIFOS 0xc0     /* FCR bit 0 set */

#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02
#define FCR_KEPT     0xc9  /* trigger level, DMA mode, enable */

#define LCR_DLAB 0x80

#define MCR_DTR  0x01
#define MCR_RTS  0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10
#define MCR_MASK 0x1f

#define LSR_DR   0x01
#define LSR_OE   0x02
#define LSR_BI   0x10
#define LSR_ERRS 0x1c     /* break, framing, parity: the byte's own */
#define LSR_FIFO_ERR 0x80 /* an error byte somewhere in the FIFO (FIFO mode) */
#define LSR_THRE 0x20
#define LSR_TEMT 0x40

#define MSR_CTS  0x10
#define MSR_DSR  0x20
#define MSR_RI   0x40
#define MSR_DCD  0x80
#define MSR_TERI 0x04      /* RI went from on to off */

/* The modem inputs: in loopback, DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD. */
static uint8_t msr_lines(const struct vuart *u)
{
	if (!(u->mcr & MCR_LOOP))
		return MSR_CTS | MSR_DSR | MSR_DCD;
	return (u->mcr & MCR_RTS ? MSR_CTS : 0) | (u->mcr & MCR_DTR ? MSR_DSR : 0) |
	       (u->mcr & MCR_OUT1 ? MSR_RI : 0) | (u->mcr & MCR_OUT2 ? MSR_DCD : 0);
}

static void msr_update(struct vuart *u)
{
	uint8_t now = msr_lines(u), changed = now ^ u->msr_lines;
	u->msr_delta |= ((changed & (MSR_CTS | MSR_DSR | MSR_DCD)) >> 4);
	if ((changed & MSR_RI) && !(now & MSR_RI))
		u->msr_delta |= MSR_TERI;
	u->msr_lines = now;
}

void vuart_init(struct vuart *u, void (*emit)(void *, const char *, size_t, bool), void *ctx)
{
	memset(u, 0, sizeof *u);
	u->emit = emit;
	u->ctx = ctx;
	u->msr_lines = msr_lines(u);
}

static uint32_t rx_capacity(const struct vuart *u)
{
	return u->fcr & FCR_ENABLE ? VUART_FIFO : 1;   /* without FIFOs, RBR alone */
}

uint32_t vuart_rx_room(const struct vuart *u)
{
	return rx_capacity(u) - u->rx_n;
}

static bool rx_put(struct vuart *u, uint8_t b)
{
	if (!vuart_rx_room(u)) {
		u->lsr_err |= LSR_OE;     /* the new byte is lost, the FIFO kept */
		u->rx_dropped++;
		return false;
	}
	u->rx_err[(u->rx_head + u->rx_n) % VUART_FIFO] = 0;
	u->rx[(u->rx_head + u->rx_n++) % VUART_FIFO] = b;
	return true;
}

bool vuart_rx(struct vuart *u, uint8_t b)
{
	if (u->mcr & MCR_LOOP)
		return false;             /* the receiver hears only the transmitter */
	u->rx_bytes++;
	return rx_put(u, b);
}

bool vuart_rx_err(struct vuart *u, uint8_t b, uint8_t err)
{
	if (!vuart_rx(u, b))
		return false;
	u->rx_err[(u->rx_head + u->rx_n - 1) % VUART_FIFO] = err & LSR_ERRS;
	u->breaks += !!(err & LSR_BI);
	return true;
}

/* The error bits of the byte at the top of the FIFO, and whether any byte
 * in it has one. */
static uint8_t head_err(const struct vuart *u)
{
	return u->rx_n ? u->rx_err[u->rx_head] : 0;
}
static bool fifo_err(const struct vuart *u)
{
	for (uint32_t i = 0; i < u->rx_n; i++)
		if (u->rx_err[(u->rx_head + i) % VUART_FIFO])
			return true;
	return false;
}

static void emit(struct vuart *u, bool whole)
{
	if (u->line_len && u->emit)
		u->emit(u->ctx, u->line, u->line_len, whole);
	u->line_len = 0;
}

void vuart_flush(struct vuart *u)
{
	if (u->line_len)
		u->pieces++;
	emit(u, false);
}

static void transmit(struct vuart *u, uint8_t b)
{
	u->thre_ip = true;            /* THR empties at once */
	if (u->mcr & MCR_LOOP) {
		rx_put(u, b);
		return;
	}
	u->tx_bytes++;
	u->line[u->line_len++] = (char)b;
	if (b == '\n') {
		u->lines++;
		emit(u, true);
	} else if (u->line_len == VUART_LINE) {
		u->pieces++;
		emit(u, false);
	}
}

uint8_t vuart_iir(const struct vuart *u)
{
	uint8_t fifo = u->fcr & FCR_ENABLE ? IIR_FIFOS : 0;
	if ((u->ier & IER_ELSI) && (u->lsr_err || head_err(u)))
		return fifo | IIR_RLS;
	if ((u->ier & IER_ERBFI) && u->rx_n)
		return fifo | IIR_RDA;
	if ((u->ier & IER_ETBEI) && u->thre_ip)
		return fifo | IIR_THRE;
	if ((u->ier & IER_EDSSI) && u->msr_delta)
		return fifo | IIR_MSI;
	return fifo | IIR_NONE;
}

uint8_t vuart_read(struct vuart *u, unsigned off)
{
	uint8_t v = 0;
	switch (off & 7) {
	case REG_DATA:
		if (u->lcr & LCR_DLAB)
			return u->dll;
		if (u->rx_n) {
			v = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % VUART_FIFO;
			u->rx_n--;
		}
		return v;
	case REG_IER:
		return u->lcr & LCR_DLAB ? u->dlm : u->ier;
	case REG_IIR_FCR:
		v = vuart_iir(u);
		if ((v & 0x0f) == IIR_THRE)
			u->thre_ip = false;   /* reading IIR with THRE as the source clears it */
		return v;
	case REG_LCR:
		return u->lcr;
	case REG_MCR:
		return u->mcr;
	case REG_LSR:
		v = (u->rx_n ? LSR_DR : 0) | u->lsr_err | head_err(u) | LSR_THRE | LSR_TEMT |
		    ((u->fcr & FCR_ENABLE) && fifo_err(u) ? LSR_FIFO_ERR : 0);
		u->lsr_err = 0;
		if (u->rx_n)
			u->rx_err[u->rx_head] = 0;   /* read: cleared (the byte stays to be read) */
		return v;
	case REG_MSR:
		v = u->msr_lines | u->msr_delta;
		u->msr_delta = 0;
		return v;
	default:
		return u->scr;
	}
}

void vuart_write(struct vuart *u, unsigned off, uint8_t val)
{
	switch (off & 7) {
	case REG_DATA:
		if (u->lcr & LCR_DLAB)
			u->dll = val;
		else
			transmit(u, val);
		return;
	case REG_IER:
		if (u->lcr & LCR_DLAB) {
			u->dlm = val;
			return;
		}
		/* Enabling ETBEI with THR empty raises the THRE interrupt. */
		if ((val & IER_ETBEI) && !(u->ier & IER_ETBEI))
			u->thre_ip = true;
		/* Turned off: the driver has nothing more to send for now, and
		 * what it sent of a line (a prompt, an echo) goes out. */
		if (!(val & IER_ETBEI) && (u->ier & IER_ETBEI) && u->line_len) {
			u->partials++;
			emit(u, false);
		}
		u->ier = val & IER_MASK;
		return;
	case REG_IIR_FCR:
		/* Changing the enable bit clears both FIFOs. */
		if ((val ^ u->fcr) & FCR_ENABLE || (val & FCR_CLEAR_RX))
			u->rx_n = u->rx_head = 0;
		u->fcr = val & FCR_KEPT;
		if (u->rx_n > rx_capacity(u))
			u->rx_n = rx_capacity(u);
		return;
	case REG_LCR:
		u->lcr = val;
		return;
	case REG_MCR:
		u->mcr = val & MCR_MASK;
		msr_update(u);
		return;
	case REG_LSR:
	case REG_MSR:
		return;                   /* read-only here (factory test) */
	default:
		u->scr = val;
		return;
	}
}

bool vuart_irq_edge(struct vuart *u)
{
	bool line = !(vuart_iir(u) & IIR_NONE) && (u->mcr & MCR_OUT2) && !(u->mcr & MCR_LOOP);
	bool rise = line && !u->irq_line;
	u->irq_line = line;
	return rise;
}
