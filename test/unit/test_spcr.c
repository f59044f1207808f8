/* Host tests for lib/spcr.c and console= (lib/options.c). The tables are
 * built here byte by byte from Microsoft's "Serial Port Console Redirection
 * Table" (field offsets: interface type 36, base address GAS 40, interrupt
 * type 52, IRQ 53, GSI 54, baud code 58, UART clock 76 (rev 3), precise baud
 * 80 (rev 4)) and the ACPI GAS (space 0 memory / 1 I/O, bit width, bit
 * offset, access size 0 legacy / 1 byte / 3 dword, 64-bit address); the
 * spec's own example for COM1 is the GAS 01 08 00 00 F8 03 00 00 00 00 00 00. */
#include "test.h"
#include "../../lib/spcr.h"
#include "../../lib/options.h"
#include "../../lib/string.h"

static uint8_t tbl[88];

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* A revision-2 table of 80 bytes: the interface type, a GAS, the baud code,
 * an interrupt type with IRQ and GSI. */
static uint32_t make(uint8_t rev, uint8_t type, uint8_t space, uint8_t access, uint64_t addr, uint8_t baud,
		     uint8_t itype, uint8_t irq, uint32_t gsi)
{
	memset(tbl, 0, sizeof tbl);
	memcpy(tbl, "SPCR", 4);
	tbl[8] = rev;
	tbl[36] = type;
	tbl[40] = space;
	tbl[41] = 8;
	tbl[43] = access;
	put32(tbl + 44, (uint32_t)addr);
	put32(tbl + 48, (uint32_t)(addr >> 32));
	tbl[52] = itype;
	tbl[53] = irq;
	put32(tbl + 54, gsi);
	tbl[58] = baud;
	return 80;
}

TEST(spcr_com2_io_from_the_spec_example)
{
	struct uart_desc d;
	char why[96];
	uint32_t len = make(2, 0, 1, 0, 0x2f8, 7, 0x3, 3, 3);
	/* The spec's COM2 GAS, as bytes in memory: 01 08 00 00 F8 02 00 00 00 00 00 00. */
	static const uint8_t gas[12] = { 0x01, 0x08, 0x00, 0x00, 0xf8, 0x02, 0, 0, 0, 0, 0, 0 };
	CHECK(!memcmp(tbl + 40, gas, 12));
	CHECK_EQ(spcr_decode(tbl, len, &d, why, sizeof why), 0);
	CHECK_EQ(d.space, UART_IO);
	CHECK_EQ(d.base, 0x2f8);
	CHECK_EQ(d.width, 1);
	CHECK_EQ(d.shift, 0);
	CHECK_EQ(d.baud, 115200);
	CHECK_EQ(d.gsi, 3);
}

TEST(spcr_baud_codes_and_as_is)
{
	static const struct { uint8_t code; uint32_t baud; } c[] = { { 0, 0 }, { 3, 9600 }, { 4, 19200 }, { 6, 57600 }, { 7, 115200 } };
	struct uart_desc d;
	char why[96];
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		uint32_t len = make(2, 0, 1, 1, 0x3f8, c[i].code, 0, 0, 0);
		CHECK_EQ(spcr_decode(tbl, len, &d, why, sizeof why), 0);
		CHECK_EQ(d.baud, c[i].baud);
		CHECK_EQ(d.gsi, -1);   /* no interrupt type: none known */
	}
	static const uint8_t bad[] = { 1, 2, 5, 8, 0xff };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint32_t len = make(2, 0, 1, 1, 0x3f8, bad[i], 0, 0, 0);
		CHECK_EQ(spcr_decode(tbl, len, &d, why, sizeof why), -1);
		CHECK_CONTAINS(why, "baud");
	}
}

TEST(spcr_mmio32_precise_baud_and_clock)
{
	struct uart_desc d;
	char why[96];
	make(4, 0x12, 0, 3, 0xfe032000, 7, 0x2, 0, 37);
	put32(tbl + 76, 100000000);     /* a 100 MHz UART clock (revision 3) */
	put32(tbl + 80, 1500000);       /* the precise rate overrides code 7 (revision 4) */
	CHECK_EQ(spcr_decode(tbl, 88, &d, why, sizeof why), 0);
	CHECK_EQ(d.space, UART_MMIO);
	CHECK_EQ(d.base, 0xfe032000);
	CHECK_EQ(d.width, 4);
	CHECK_EQ(d.shift, 2);
	CHECK_EQ(d.clock, 100000000);
	CHECK_EQ(d.baud, 1500000);
	CHECK_EQ(d.gsi, 37);
	/* Revision 2 keeps the configured rate: bytes 76.. are not its fields. */
	tbl[8] = 2;
	CHECK_EQ(spcr_decode(tbl, 88, &d, why, sizeof why), 0);
	CHECK_EQ(d.baud, 115200);
	CHECK_EQ(d.clock, 0);
	/* Byte registers in memory (access size 1, and 0 legacy). */
	make(2, 0, 0, 1, 0xfe034000, 7, 0, 0, 0);
	CHECK_EQ(spcr_decode(tbl, 80, &d, why, sizeof why), 0);
	CHECK_EQ(d.width, 1);
	CHECK_EQ(d.shift, 0);
}

TEST(spcr_refusals_name_what)
{
	struct uart_desc d = { .base = 0x1234 };
	char why[96];
	static const struct { uint8_t type, space, access; uint64_t addr; const char *word; } c[] = {
		{ 3, 0, 3, 0xfe000000, "interface type" },   /* ARM PL011 */
		{ 0x0e, 0, 3, 0xfe000000, "interface type" },/* ARM SBSA generic */
		{ 0, 1, 0, 0, "off" },                      /* base 0: redirection disabled */
		{ 0, 2, 0, 0xcf8, "address space" },        /* PCI configuration space */
		{ 0, 1, 3, 0x3f8, "access size" },          /* dword I/O */
		{ 0, 1, 0, 0x10000, "I/O port" },
		{ 0, 0, 4, 0xfe000000, "access size" },     /* qword registers */
		{ 0, 0, 3, 0x100000000ull, "above 4 GiB" },
		{ 0, 0, 3, 0xfe000002, "misaligned" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		uint32_t len = make(2, c[i].type, c[i].space, c[i].access, c[i].addr, 7, 0, 0, 0);
		CHECK_EQ(spcr_decode(tbl, len, &d, why, sizeof why), -1);
		CHECK_CONTAINS(why, c[i].word);
		CHECK_EQ(d.base, 0x1234);           /* untouched */
	}
	make(2, 0, 1, 0, 0x3f8, 7, 0, 0, 0);
	CHECK_EQ(spcr_decode(tbl, 79, &d, why, sizeof why), -1);
	CHECK_CONTAINS(why, "shorter");
}

TEST(console_option_forms)
{
	struct uart_desc d;
	CHECK(!options_console("loglevel=3", &d));
	CHECK(options_console("console=com2", &d));
	CHECK_EQ(d.space, UART_IO);
	CHECK_EQ(d.base, 0x2f8);
	CHECK_EQ(d.baud, 115200);
	CHECK_EQ(d.gsi, 3);
	CHECK(options_console("console=io,0x2f8,57600", &d));
	CHECK_EQ(d.base, 0x2f8);
	CHECK_EQ(d.baud, 57600);
	CHECK(options_console("console=io,0x3f8,115200n8", &d));
	CHECK_EQ(d.baud, 115200);
	CHECK(options_console("console=0x2f8,keep", &d));
	CHECK_EQ(d.baud, 0);
	CHECK(options_console("console=mmio32,0xfe032000,115200", &d));
	CHECK_EQ(d.space, UART_MMIO);
	CHECK_EQ(d.base, 0xfe032000);
	CHECK_EQ(d.width, 4);
	CHECK_EQ(d.shift, 2);
	CHECK_EQ(d.gsi, -1);
	CHECK(options_console("console=mmio,0xfe030000,9600,stride=4", &d));
	CHECK_EQ(d.width, 1);
	CHECK_EQ(d.shift, 2);
	CHECK_EQ(d.baud, 9600);
	CHECK(options_console("console=mmio,0xfe030000", &d));
	CHECK_EQ(d.shift, 0);
	CHECK_EQ(d.baud, 115200);
	/* Bad forms leave the last good one. */
	static const char *const bad[] = {
		"console=mmio32,0xfe032001", "console=mmio,0x100000000", "console=mmio32,0xfe032000,stride=2",
		"console=io,0x2f8,stride=4", "console=io,0", "console=io,0x10000", "console=com2,12",
		"console=com2,115200,keep,9600,1", "console=mmio", "console=uart,0x3f8", "console=0x2f8,fast",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(options_console("console=com4", &d));
		CHECK(!options_console(bad[i], &d));
		CHECK_EQ(d.base, 0x2e8);
		struct hv_options o;
		char err[300];
		options_defaults(&o);
		CHECK_EQ(options_parse(bad[i], &o, err, sizeof err), -1);
		CHECK_CONTAINS(err, "mmio32,ADDR");
		CHECK(!o.console_set);
	}
	struct hv_options o;
	char err[300];
	options_defaults(&o);
	CHECK_EQ(options_parse("console=mmio32,0xfe032000", &o, err, sizeof err), 0);
	CHECK(o.console_set);
	CHECK(o.console.space != UART_IO);
	CHECK_EQ(o.console.space, UART_MMIO);
}

/* lib/serial.c on a UART in memory (here a buffer standing for its page):
 * registers r at base + (r << shift), written in the access width, as the
 * PC16550D's register map (0 THR/DLL, 1 IER/DLM, 2 FCR, 3 LCR, 4 MCR, 5 LSR)
 * places them; 9600 baud from the 1.8432 MHz clock is divisor 12. */
#include "../../lib/serial.h"
TEST(serial_mmio32_registers_spaced_by_stride)
{
	static uint32_t regs[8];
	memset(regs, 0, sizeof regs);
	regs[5] = 0x60;                  /* LSR: THR empty, transmitter idle */
	struct uart_desc d = { .space = UART_MMIO, .width = 4, .shift = 2, .base = (uintptr_t)regs, .baud = 9600, .gsi = -1 };
	serial_init_desc(&d);
	CHECK_EQ(regs[0], 12);           /* DLL, written with DLAB set */
	CHECK_EQ(regs[1], 0);            /* DLM, then IER 0 */
	CHECK_EQ(regs[2], 0xc7);
	CHECK_EQ(regs[3], 0x03);         /* LCR: 8N1, DLAB clear again */
	CHECK_EQ(regs[4], 0x03);
	serial_write_raw("A", 1);
	CHECK_EQ(regs[0], 'A');
	CHECK_EQ(serial_base(), 0);      /* not an I/O port */
	serial_rx_irq(true);
	CHECK_EQ(regs[1], 0x05);
	CHECK_EQ(regs[4], 0x0b);
	/* Byte registers 4 apart, the firmware's divisor kept (baud 0). */
	static uint8_t bytes[32];
	memset(bytes, 0, sizeof bytes);
	bytes[0] = 0x55;
	bytes[5 * 4] = 0x60;
	struct uart_desc b = { .space = UART_MMIO, .width = 1, .shift = 2, .base = (uintptr_t)bytes, .baud = 0, .gsi = -1 };
	serial_init_desc(&b);
	CHECK_EQ(bytes[0], 0x55);        /* DLL untouched */
	CHECK_EQ(bytes[3 * 4], 0x03);
	CHECK_EQ(bytes[2 * 4], 0xc7);
	CHECK_EQ(bytes[1], 0);           /* nothing between the registers */
	serial_write_raw("Z", 1);
	CHECK_EQ(bytes[0], 'Z');
	struct uart_desc none = { .space = UART_NONE };
	serial_init_desc(&none);
}
