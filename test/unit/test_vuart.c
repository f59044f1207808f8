/* The guest's virtual 16550A (guest/vuart.c) against the PC16550D data
 * sheet, written out here: register map (DLAB selects DLL/DLM at 0/1),
 * "Interrupt Control Functions" (IIR priorities and what resets each),
 * LSR and MSR bits, loopback wiring; and the probe that Linux's 8250
 * driver runs (autoconfig), which must find a 16550A. */
#include "test.h"
#include "../../guest/vuart.h"

/* Data sheet register map (A2..A0). */
enum { RBR_THR_DLL = 0, IER_DLM = 1, IIR_FCR = 2, LCR = 3, MCR = 4, LSR = 5, MSR = 6, SCR = 7 };
/* Data sheet bits. */
#define DS_IER_RDA  0x01
#define DS_IER_THRE 0x02
#define DS_IER_RLS  0x04
#define DS_IER_MS   0x08
#define DS_LCR_DLAB 0x80
#define DS_MCR_DTR 0x01
#define DS_MCR_RTS 0x02
#define DS_MCR_OUT1 0x04
#define DS_MCR_OUT2 0x08
#define DS_MCR_LOOP 0x10
#define DS_LSR_DR 0x01
#define DS_LSR_OE 0x02
#define DS_LSR_THRE 0x20
#define DS_LSR_TEMT 0x40
#define DS_FCR_ENABLE 0x01
#define DS_FCR_RX_RESET 0x02
/* IIR bits 3:0 by priority (data sheet table): 1st receiver line status
 * 0110, 2nd received data available 0100 (or character timeout 1100), 3rd
 * THR empty 0010, 4th modem status 0000; bit 0 = 1: none pending. Bits 7:6
 * set when FCR0 = 1; bits 5:4 always 0. */
#define DS_IIR_NONE 0x01
#define DS_IIR_RLS  0x06
#define DS_IIR_RDA  0x04
#define DS_IIR_THRE 0x02
#define DS_IIR_MS   0x00
#define DS_IIR_FIFO 0xc0

struct out { char buf[8192]; size_t len; int whole, piece; };

static void capture(void *ctx, const char *s, size_t n, bool whole)
{
	struct out *o = ctx;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = 0;
	if (whole)
		o->whole++;
	else
		o->piece++;
}

static struct vuart u;
static struct out out;

static void reset(void)
{
	memset(&out, 0, sizeof out);
	vuart_init(&u, capture, &out);
}

#define IN(r) vuart_read(&u, (r))
#define OUT(r, v) vuart_write(&u, (r), (v))

/* Linux's 8250 autoconfig, as its steps probe a port (the decisions it
 * takes on what it reads), returning the type it would settle on. */
static const char *linux_probe(void)
{
	/* The scratch test of IER: 0 reads 0, 0x0f reads 0x0f. */
	uint8_t save_ier = IN(IER_DLM);
	OUT(IER_DLM, 0);
	uint8_t s1 = IN(IER_DLM) & 0x0f;
	OUT(IER_DLM, 0x0f);
	uint8_t s2 = IN(IER_DLM) & 0x0f;
	OUT(IER_DLM, save_ier);
	if (s1 || s2 != 0x0f)
		return "none (IER test)";
	/* The loopback test: MCR = LOOP | OUT2 | RTS must read MSR 7:4 = DCD | CTS. */
	uint8_t save_mcr = IN(MCR), save_lcr = IN(LCR);
	OUT(MCR, DS_MCR_LOOP | DS_MCR_OUT2 | DS_MCR_RTS);
	uint8_t st = IN(MSR) & 0xf0;
	OUT(MCR, save_mcr);
	if (st != 0x90)
		return "none (loopback test)";
	/* LCR = 0xbf, EFR (offset 2) = 0, then FIFOs on: IIR 7:6 names the family. */
	OUT(LCR, 0xbf);
	OUT(IIR_FCR, 0);
	OUT(LCR, 0);
	OUT(IIR_FCR, DS_FCR_ENABLE);
	uint8_t fam = IN(IIR_FCR) >> 6;
	OUT(LCR, save_lcr);
	if (fam != 3)
		return fam == 0 ? "8250/16450" : fam == 1 ? "unknown" : "16550";
	/* 16550A or better: EFR at LCR 0x80 or 0xbf reads 0 on a 16650 and up. */
	OUT(LCR, 0x80);
	if (IN(IIR_FCR) == 0)
		return "16650 (EFR at DLAB)";
	OUT(LCR, 0xbf);
	if (IN(IIR_FCR) == 0)
		return "16650 (EFR)";
	/* National SuperIO: MCR's LOOP bit visible at offset 2 with LCR 0xe0. */
	OUT(LCR, 0);
	uint8_t m1 = IN(MCR);
	OUT(LCR, 0xe0);
	uint8_t m2 = IN(IIR_FCR);
	if (!((m2 ^ m1) & DS_MCR_LOOP)) {
		OUT(LCR, 0);
		OUT(MCR, m1 ^ DS_MCR_LOOP);
		OUT(LCR, 0xe0);
		m2 = IN(IIR_FCR);
		OUT(LCR, 0);
		OUT(MCR, m1);
		if ((m2 ^ m1) & DS_MCR_LOOP)
			return "NS16550A";
	}
	/* TI16750: IIR bit 5 follows FCR bit 5 only with DLAB set. */
	OUT(LCR, 0);
	OUT(IIR_FCR, DS_FCR_ENABLE | 0x20);
	uint8_t t1 = IN(IIR_FCR) >> 5;
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(LCR, DS_LCR_DLAB);
	OUT(IIR_FCR, DS_FCR_ENABLE | 0x20);
	uint8_t t2 = IN(IIR_FCR) >> 5;
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(LCR, 0);
	if (t1 == 6 && t2 == 7)
		return "16750";
	/* XScale: IER bit 6 (UUE) writable. */
	uint8_t ier = IN(IER_DLM);
	OUT(IER_DLM, ier | 0x40);
	bool uue = IN(IER_DLM) & 0x40;
	OUT(IER_DLM, ier);
	if (uue)
		return "XScale";
	return "16550A";
}

TEST(vuart_linux_probe_finds_16550a)
{
	reset();
	CHECK_STR(linux_probe(), "16550A");
	CHECK_EQ(out.len, 0);               /* the probe printed nothing */
	CHECK_EQ(IN(MCR) & DS_MCR_LOOP, 0); /* and left loopback off */
}

TEST(vuart_dlab_selects_divisor)
{
	reset();
	OUT(LCR, DS_LCR_DLAB | 0x03);
	OUT(RBR_THR_DLL, 0x0c);
	OUT(IER_DLM, 0x00);
	CHECK_EQ(IN(RBR_THR_DLL), 0x0c);
	CHECK_EQ(IN(IER_DLM), 0x00);
	CHECK_EQ(out.len, 0);                        /* a divisor write sends nothing */
	OUT(LCR, 0x03);
	CHECK_EQ(IN(IER_DLM), 0x00);                 /* IER kept apart from DLM */
	OUT(IER_DLM, 0xff);
	CHECK_EQ(IN(IER_DLM), 0x0f);                 /* IER bits 7:4 read 0 */
	OUT(LCR, DS_LCR_DLAB);
	CHECK_EQ(IN(IER_DLM), 0x00);
	CHECK_EQ(IN(RBR_THR_DLL), 0x0c);
	CHECK_EQ(IN(LCR), DS_LCR_DLAB);              /* LCR reads back */
	OUT(SCR, 0x5a);
	CHECK_EQ(IN(SCR), 0x5a);
}

/* The data sheet's IIR from the pending conditions. */
static uint8_t ds_iir(uint8_t ier, bool lsr_err, bool data, bool thre, bool msr_delta, bool fifo)
{
	uint8_t f = fifo ? DS_IIR_FIFO : 0;
	if ((ier & DS_IER_RLS) && lsr_err) return f | DS_IIR_RLS;
	if ((ier & DS_IER_RDA) && data) return f | DS_IIR_RDA;
	if ((ier & DS_IER_THRE) && thre) return f | DS_IIR_THRE;
	if ((ier & DS_IER_MS) && msr_delta) return f | DS_IIR_MS;
	return f | DS_IIR_NONE;
}

TEST(vuart_iir_priorities_follow_the_data_sheet)
{
	/* Every IER value against every set of pending conditions. */
	for (unsigned ier = 0; ier < 16; ier++)
		for (unsigned c = 0; c < 16; c++) {
			bool err = c & 1, data = c & 2, thre = c & 4, ms = c & 8;
			if (err && !data)
				continue;     /* an overrun leaves a full FIFO */
			reset();
			OUT(IIR_FCR, DS_FCR_ENABLE);
			for (int i = 0; i < (err ? 17 : data ? 1 : 0); i++)
				vuart_rx(&u, 'a');   /* the 17th into 16 bytes: overrun */
			if (ms) {             /* modem lines change: into loopback and out */
				OUT(MCR, DS_MCR_LOOP);
				OUT(MCR, 0);
			}
			OUT(IER_DLM, DS_IER_THRE);     /* ETBEI 0 -> 1, THR empty: THRE pending */
			if (!thre)
				(void)IN(IIR_FCR);     /* THRE the one identified: reading IIR resets it */
			OUT(IER_DLM, (uint8_t)ier);    /* no new 0 -> 1 transition of ETBEI */
			CHECK_EQ(vuart_iir(&u), ds_iir((uint8_t)ier, err, data, thre, ms, true));
		}
}

TEST(vuart_thre_interrupt_as_linux_tests_it)
{
	/* serial8250_do_startup: IER = THRI, IIR shows it; IER = 0, IER =
	 * THRI, IIR shows it again (else Linux marks the UART THRE-buggy). */
	reset();
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(LCR, 0x03);
	OUT(IER_DLM, DS_IER_THRE);
	uint8_t iir1 = IN(IIR_FCR);
	OUT(IER_DLM, 0);
	OUT(IER_DLM, DS_IER_THRE);
	uint8_t iir2 = IN(IIR_FCR);
	OUT(IER_DLM, 0);
	CHECK_EQ(iir1 & 0x0f, DS_IIR_THRE);
	CHECK_EQ(iir2 & 0x0f, DS_IIR_THRE);
	CHECK(IN(LSR) & DS_LSR_TEMT);
	/* Reading IIR reset it; a THR write sets it again once sent. */
	OUT(IER_DLM, DS_IER_THRE);
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_THRE);
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_NONE);
	OUT(RBR_THR_DLL, 'x');
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_THRE);
	/* Writing ETBEI 1 again while it is 1 raises nothing new. */
	OUT(IER_DLM, DS_IER_THRE);
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_NONE);
}

TEST(vuart_lsr_bits)
{
	reset();
	CHECK_EQ(IN(LSR), DS_LSR_THRE | DS_LSR_TEMT);  /* transmitter always empty */
	OUT(IIR_FCR, DS_FCR_ENABLE);
	CHECK(vuart_rx(&u, 'k'));
	CHECK_EQ(IN(LSR), DS_LSR_THRE | DS_LSR_TEMT | DS_LSR_DR);
	CHECK_EQ(IN(RBR_THR_DLL), 'k');
	CHECK_EQ(IN(LSR) & DS_LSR_DR, 0);
	for (int i = 0; i < 16; i++)
		CHECK(vuart_rx(&u, (uint8_t)('a' + i)));
	CHECK(!vuart_rx(&u, 'z'));                 /* the 17th overruns: lost, FIFO kept */
	CHECK_EQ(IN(LSR), DS_LSR_THRE | DS_LSR_TEMT | DS_LSR_DR | DS_LSR_OE);
	CHECK_EQ(IN(LSR) & DS_LSR_OE, 0);          /* OE resets when LSR is read */
	for (int i = 0; i < 16; i++)
		CHECK_EQ(IN(RBR_THR_DLL), 'a' + i);
	/* FIFOs off: RBR holds one byte. */
	OUT(IIR_FCR, 0);
	CHECK(vuart_rx(&u, '1'));
	CHECK(!vuart_rx(&u, '2'));
	CHECK_EQ(IN(LSR) & DS_LSR_OE, DS_LSR_OE);
	CHECK_EQ(IN(RBR_THR_DLL), '1');
	CHECK_EQ(IN(IIR_FCR) & 0xf0, 0);           /* IIR 7:6 clear without FIFOs */
	/* FCR's receiver reset empties the FIFO. */
	OUT(IIR_FCR, DS_FCR_ENABLE);
	vuart_rx(&u, 'q');
	OUT(IIR_FCR, DS_FCR_ENABLE | DS_FCR_RX_RESET);
	CHECK_EQ(IN(LSR) & DS_LSR_DR, 0);
}

TEST(vuart_loopback)
{
	reset();
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(MCR, DS_MCR_LOOP);
	(void)IN(MSR);
	/* Data sheet: DTR->DSR (MSR5), RTS->CTS (MSR4), OUT1->RI (MSR6), OUT2->DCD (MSR7). */
	OUT(MCR, DS_MCR_LOOP | DS_MCR_DTR);
	CHECK_EQ(IN(MSR), 0x20 | 0x02);           /* DSR, delta DSR */
	OUT(MCR, DS_MCR_LOOP | DS_MCR_RTS);
	CHECK_EQ(IN(MSR), 0x10 | 0x01 | 0x02);    /* CTS, delta CTS, delta DSR */
	OUT(MCR, DS_MCR_LOOP | DS_MCR_OUT1);
	CHECK_EQ(IN(MSR), 0x40 | 0x01);           /* RI rising: no TERI yet; delta CTS */
	OUT(MCR, DS_MCR_LOOP | DS_MCR_OUT2);
	CHECK_EQ(IN(MSR), 0x80 | 0x04 | 0x08);    /* DCD; RI fell: TERI; delta DCD */
	CHECK_EQ(IN(MSR), 0x80);                  /* deltas reset by the read */
	/* The transmitter feeds the receiver; nothing leaves. */
	OUT(RBR_THR_DLL, 'L');
	CHECK_EQ(out.len, 0);
	CHECK_EQ(IN(LSR) & DS_LSR_DR, DS_LSR_DR);
	CHECK_EQ(IN(RBR_THR_DLL), 'L');
	CHECK(!vuart_rx(&u, 'x'));                /* the line is cut off */
	/* No interrupt out of loopback, whatever is pending. */
	OUT(IER_DLM, DS_IER_THRE);
	CHECK(!vuart_irq_edge(&u));
	/* Out of loopback: a connected line (CTS, DSR, DCD). */
	OUT(MCR, 0);
	CHECK_EQ(IN(MSR) & 0xf0, 0xb0);
}

TEST(vuart_irq_line_rises_with_out2)
{
	reset();
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(IER_DLM, DS_IER_THRE);                 /* pending, OUT2 off: no line */
	CHECK(!vuart_irq_edge(&u));
	OUT(MCR, DS_MCR_OUT2 | DS_MCR_DTR | DS_MCR_RTS);
	CHECK(vuart_irq_edge(&u));                  /* the rising edge */
	CHECK(!vuart_irq_edge(&u));                 /* held high: no new edge */
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_THRE);
	CHECK(!vuart_irq_edge(&u));                 /* fell */
	OUT(RBR_THR_DLL, 'a');
	CHECK(vuart_irq_edge(&u));                  /* THR sent: THRE again */
	OUT(RBR_THR_DLL, 'b');
	CHECK(!vuart_irq_edge(&u));                 /* still high */
	(void)IN(IIR_FCR);
	CHECK(!vuart_irq_edge(&u));
	OUT(IER_DLM, DS_IER_RDA);
	vuart_rx(&u, 'r');
	CHECK(vuart_irq_edge(&u));                  /* received data */
	(void)IN(RBR_THR_DLL);
	CHECK(!vuart_irq_edge(&u));
}

static void send(const char *s)
{
	for (; *s; s++)
		OUT(RBR_THR_DLL, (uint8_t)*s);
}

TEST(vuart_lines_forwarded_whole)
{
	reset();
	send("first line\r\n");
	CHECK_EQ(out.whole, 1);
	CHECK(!strcmp(out.buf, "first line\r\n"));
	send("partial");
	CHECK_EQ(out.whole, 1);                     /* held until its newline */
	send(" end\n");
	CHECK_EQ(out.whole, 2);
	CHECK(!strcmp(out.buf, "first line\r\npartial end\n"));
	CHECK_EQ(u.lines, 2);
	/* A partial line comes out at the flush. */
	send("/ # ");
	vuart_flush(&u);
	CHECK_EQ(out.piece, 1);
	CHECK(!strcmp(out.buf + strlen("first line\r\npartial end\n"), "/ # "));
	vuart_flush(&u);
	CHECK_EQ(out.piece, 1);                     /* nothing left: nothing emitted */
}

TEST(vuart_long_line_in_pieces_no_byte_lost)
{
	reset();
	char line[3 * VUART_LINE + 10];
	for (size_t i = 0; i < sizeof line - 2; i++)
		line[i] = (char)('a' + i % 26);
	line[sizeof line - 2] = '\n';
	line[sizeof line - 1] = 0;
	send(line);
	CHECK_EQ(out.piece, 3);
	CHECK_EQ(out.whole, 1);
	CHECK_EQ(out.len, strlen(line));
	CHECK(!memcmp(out.buf, line, strlen(line)));
	CHECK_EQ(u.tx_bytes, strlen(line));
}

/* Issue 48: what Linux's 8250 tty path sends goes out when it stops: at
 * the end of each burst it turns the THRE interrupt off (IER bit 1) with
 * nothing left, and a prompt or the echo of a typed byte has no '\n'. The
 * kernel console's polled writes of whole lines go out at their '\n'. */
TEST(vuart_partial_line_out_when_the_driver_stops_sending)
{
	reset();
	OUT(IER_DLM, DS_IER_RDA | DS_IER_THRE);            /* start_tx */
	const char *prompt = "~ # ";
	for (const char *c = prompt; *c; c++)
		OUT(RBR_THR_DLL, (uint8_t)*c);
	CHECK_EQ(out.len, 0);                              /* still sending: held */
	OUT(IER_DLM, DS_IER_RDA);                          /* stop_tx: nothing left */
	CHECK(!strcmp(out.buf, "~ # "));
	CHECK_EQ(u.partials, 1);
	OUT(IER_DLM, DS_IER_RDA | DS_IER_THRE);
	OUT(RBR_THR_DLL, 'l');
	OUT(IER_DLM, DS_IER_RDA);
	CHECK(!strcmp(out.buf, "~ # l"));
	OUT(IER_DLM, 0);                                   /* off again with nothing held: nothing sent */
	CHECK_EQ(u.partials, 2);
	OUT(RBR_THR_DLL, 's');
	OUT(RBR_THR_DLL, '\n');
	CHECK(!strcmp(out.buf, "~ # ls\n"));
	CHECK_EQ(out.whole, 1);
}

/* A break received (the line held at space: a 0 byte with LSR.BI, PC16550D
 * "Line Status Register" bit 4) is told at the byte's turn: LSR shows BI
 * while the byte is at the top of the FIFO, the receiver line status
 * interrupt (IIR 0110) comes first, reading LSR clears it, and the byte
 * reads 0; Linux's 8250 then takes it as a break (sysrq on a console). */
TEST(vuart_break_reported_at_its_byte)
{
	reset();
	OUT(IIR_FCR, DS_FCR_ENABLE);
	OUT(IER_DLM, DS_IER_RDA | DS_IER_RLS);
	CHECK(vuart_rx(&u, 'a'));
	CHECK(vuart_rx_err(&u, 0, 0x10));
	CHECK(vuart_rx(&u, 'h'));
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_RDA);           /* 'a' at the top: no error yet */
	CHECK_EQ(IN(LSR) & 0x9f, 0x80 | DS_LSR_DR);         /* an error byte in the FIFO: bit 7 */
	CHECK_EQ(IN(RBR_THR_DLL), 'a');
	CHECK_EQ(IN(IIR_FCR) & 0x0f, DS_IIR_RLS);
	CHECK_EQ(IN(LSR) & 0x1f, 0x10 | DS_LSR_DR);
	CHECK_EQ(IN(LSR) & 0x1f, DS_LSR_DR);                /* cleared by the read */
	CHECK_EQ(IN(RBR_THR_DLL), 0);
	CHECK_EQ(IN(RBR_THR_DLL), 'h');
	CHECK_EQ(u.breaks, 1);
}
