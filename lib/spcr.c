/* SPCR decoding (spcr.h). Offsets from Microsoft's "Serial Port Console
 * Redirection Table": interface type at 36 (revision 2 and later: the DBG2
 * serial subtypes), the base address at 40 (an ACPI Generic Address
 * Structure: space, bit width, bit offset, access size, address), the
 * interrupt type at 52 (bit 0 a PC-AT IRQ, bit 1 an I/O APIC GSI), the IRQ
 * at 53, the GSI at 54, the configured baud rate at 58 (0 as is, 3 9600,
 * 4 19200, 6 57600, 7 115200), the UART clock at 76 (revision 3) and the
 * precise baud rate at 80 (revision 4), each 0 when not given. */
#include "spcr.h"
#include "printk.h"

#define SPCR_TYPE      36
#define SPCR_GAS       40
#define SPCR_INT_TYPE  52
#define SPCR_IRQ       53
#define SPCR_GSI       54
#define SPCR_BAUD      58
#define SPCR_CLOCK     76
#define SPCR_PRECISE   80

/* DBG2 "Serial Port Subtypes" for the 16550 family. */
#define DBG2_16550_FULL   0x00
#define DBG2_16550_SUBSET 0x01         /* 16450: still takes FCR writes */
#define DBG2_16550_GAS    0x12         /* 16550-compatible, the GAS giving the register layout */

void uart_desc_com(struct uart_desc *d, uint16_t port)
{
	*d = (struct uart_desc){ .space = UART_IO, .width = 1, .base = port, .baud = 115200,
				 .gsi = port == 0x3f8 || port == 0x3e8 ? 4 : port == 0x2f8 || port == 0x2e8 ? 3 : -1 };
}

void uart_desc_str(const struct uart_desc *d, char *buf, size_t n)
{
	char baud[24] = "the firmware's baud rate";
	if (d->baud)
		snprintf(baud, sizeof baud, "%u baud", d->baud);
	if (d->space == UART_IO)
		snprintf(buf, n, "I/O port 0x%llx, %s", (unsigned long long)d->base, baud);
	else if (d->space == UART_MMIO)
		snprintf(buf, n, "MMIO 0x%llx (%u-byte registers %u apart), %s", (unsigned long long)d->base, d->width,
			 1u << d->shift, baud);
	else
		snprintf(buf, n, "none");
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int refuse(char *why, size_t n, const char *fmt, unsigned long long v)
{
	snprintf(why, n, fmt, v);
	return -1;
}

int spcr_decode(const uint8_t *t, uint32_t len, struct uart_desc *d, char *why, size_t n)
{
	if (len < SPCR_MIN_LEN)
		return refuse(why, n, "SPCR: %llu bytes, shorter than its 80", len);
	uint8_t type = t[SPCR_TYPE];
	if (type != DBG2_16550_FULL && type != DBG2_16550_SUBSET && type != DBG2_16550_GAS)
		return refuse(why, n, "SPCR: interface type 0x%llx, not a 16550", type);
	const uint8_t *g = t + SPCR_GAS;
	uint64_t base = rd32(g + 4) | (uint64_t)rd32(g + 8) << 32;
	if (!base)
		return refuse(why, n, "SPCR: base address 0%llx: console redirection off", 0);
	struct uart_desc u = { .base = base, .width = 1, .gsi = -1 };
	/* The access size (GAS byte 3: 1 byte, 2 word, 3 dword, 0 legacy) is
	 * the register width; the registers are as far apart as they are wide
	 * (Linux's SPCR reading: "mmio" and "mmio32"). */
	uint8_t acc = g[3];
	if (g[0] == 1) {                         /* system I/O */
		if (base > 0xfff8 || (acc != 0 && acc != 1))
			return refuse(why, n, "SPCR: I/O port 0x%llx or its access size not a 16550's", base);
		u.space = UART_IO;
	} else if (g[0] == 0) {                  /* system memory */
		if (acc == 3)
			u.width = 4, u.shift = 2;
		else if (acc > 1)
			return refuse(why, n, "SPCR: MMIO registers of access size %llu: not taken", acc);
		if (base >= (1ull << 32) - 0x20 || base & (u.width - 1u))
			return refuse(why, n, "SPCR: MMIO UART at 0x%llx: above 4 GiB or misaligned", base);
		u.space = UART_MMIO;
	} else {
		return refuse(why, n, "SPCR: address space %llu, neither memory nor I/O", g[0]);
	}
	static const uint32_t bauds[8] = { 0, 0, 0, 9600, 19200, 0, 57600, 115200 };
	uint8_t b = t[SPCR_BAUD];
	if (b >= 8 || (b && !bauds[b]))
		return refuse(why, n, "SPCR: baud rate code %llu undefined", b);
	u.baud = bauds[b];
	uint8_t rev = t[8];
	if (rev >= 3 && len >= SPCR_CLOCK + 4)
		u.clock = rd32(t + SPCR_CLOCK);
	if (rev >= 4 && len >= SPCR_PRECISE + 4 && rd32(t + SPCR_PRECISE))
		u.baud = rd32(t + SPCR_PRECISE);   /* overrides the configured rate */
	if (t[SPCR_INT_TYPE] & 0x2)
		u.gsi = (int32_t)(rd32(t + SPCR_GSI) & 0x7fffffff);
	else if (t[SPCR_INT_TYPE] & 0x1 && t[SPCR_IRQ] < 16)
		u.gsi = t[SPCR_IRQ];             /* identity unless the MADT overrides it (not followed here) */
	*d = u;
	why[0] = 0;
	return 0;
}
