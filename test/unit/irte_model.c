/* The interrupt-remapping model (see irte_model.h). Bit positions from the
 * VT-d specification: "Interrupt Requests in Compatibility Format",
 * "Interrupt Requests in Remappable Format", "Interrupt Remapping Table
 * Entry (IRTE) for Remapped Interrupts", "... for Posted Interrupts",
 * "Interrupt Remapping Fault Conditions"; the RTE from the I/OxAPIC's
 * redirection-table layout. */
#include "irte_model.h"

static uint64_t bits(uint64_t v, unsigned hi, unsigned lo)
{
	unsigned w = hi - lo + 1;
	return (v >> lo) & (w == 64 ? ~0ull : (1ull << w) - 1);
}

/* One 128-bit IRTE as two halves; b(e, hi, lo) across both. */
static uint64_t eb(const uint64_t *e, unsigned hi, unsigned lo)
{
	if (lo >= 64)
		return bits(e[1], hi - 64, lo - 64);
	return bits(e[0], hi, lo);
}

static int translate(const struct irm_unit *u, uint16_t sid, uint32_t index, struct irm_out *out)
{
	if (index >= (1u << (u->size_field + 1)))
		return 0x21;
	const uint64_t *e = &u->irt[2 * (uint64_t)index];
	if (!eb(e, 0, 0))
		return 0x22;
	bool posted = eb(e, 15, 15);
	if (posted && !u->posting)
		return 0x24;
	/* Reserved fields. Both: 127:84 (remapped) or 95:84 (posted). */
	if (!posted) {
		if (eb(e, 14, 12) || eb(e, 31, 24) || eb(e, 127, 84))
			return 0x24;
		if (!u->eime && (eb(e, 39, 32) || eb(e, 63, 48)))
			return 0x24;
		unsigned dlm = (unsigned)eb(e, 7, 5);
		if (dlm == 3 || dlm == 6)
			return 0x24;
	} else {
		if (eb(e, 7, 2) || eb(e, 13, 12) || eb(e, 37, 24) || eb(e, 95, 84))
			return 0x24;
	}
	/* Source validation: SVT 83:82, SQ 81:80, SID 79:64. */
	unsigned svt = (unsigned)eb(e, 83, 82), sq = (unsigned)eb(e, 81, 80);
	uint16_t want = (uint16_t)eb(e, 79, 64);
	if (svt == 3)
		return 0x24;
	if (svt == 1) {
		static const uint16_t ignore[4] = { 0, 0x4, 0x6, 0x7 };   /* function bits not compared */
		if ((sid & ~ignore[sq]) != (want & ~ignore[sq]))
			return 0x26;
	} else if (svt == 2) {
		unsigned bus = sid >> 8;
		if (bus < (unsigned)(want >> 8) || bus > (unsigned)(want & 0xff))
			return 0x26;
	}
	out->index = index;
	out->posted = posted;
	out->vector = (uint8_t)eb(e, 23, 16);
	if (posted) {
		out->pda = eb(e, 63, 38) << 6 | eb(e, 127, 96) << 32;
		out->urgent = eb(e, 14, 14);
	} else {
		out->dest = u->eime ? (uint32_t)eb(e, 63, 32) : (uint32_t)eb(e, 47, 40);
		out->dm = eb(e, 2, 2);
		out->rh = eb(e, 3, 3);
		out->tm = eb(e, 4, 4);
		out->dlm = (unsigned)eb(e, 7, 5);
	}
	return 0;
}

int irm_msi(const struct irm_unit *u, uint16_t sid, uint64_t addr, uint32_t data, struct irm_out *out)
{
	/* Address 31:20 must be 0xFEE for an interrupt request at all. */
	if (bits(addr, 63, 32) || bits(addr, 31, 20) != 0xfee)
		return 0x20;
	if (!bits(addr, 4, 4))
		return 0x25;                   /* compatibility format, CFIS clear */
	/* Remappable: handle 15 in bit 2, 14:0 in 19:5; SHV bit 3 adds the
	 * subhandle, data 15:0. */
	uint32_t index = (uint32_t)(bits(addr, 19, 5) | bits(addr, 2, 2) << 15);
	if (bits(addr, 3, 3))
		index += (uint32_t)bits(data, 15, 0);
	return translate(u, sid, index, out);
}

int irm_ioapic(const struct irm_unit *u, uint16_t sid, uint64_t rte, struct irm_out *out)
{
	if (!bits(rte, 48, 48))
		return 0x25;
	/* Remappable RTE: 63:49 index 14:0, 11 index 15, 10:8 and 47:17 zero. */
	if (bits(rte, 47, 17) || bits(rte, 10, 8))
		return 0x20;
	uint32_t index = (uint32_t)(bits(rte, 63, 49) | bits(rte, 11, 11) << 15);
	return translate(u, sid, index, out);
}

int irm_compat_msi(uint64_t addr, uint32_t data, struct irm_compat *c)
{
	if (bits(addr, 63, 32) || bits(addr, 31, 20) != 0xfee || bits(addr, 4, 4) || bits(addr, 11, 5))
		return -1;
	if (bits(data, 31, 16) || bits(data, 13, 11))
		return -1;
	c->vector = (uint8_t)bits(data, 7, 0);
	c->dlm = (unsigned)bits(data, 10, 8);
	c->tm = bits(data, 15, 15);
	c->dm = bits(addr, 2, 2);
	c->rh = bits(addr, 3, 3);
	c->dest = (uint8_t)bits(addr, 19, 12);
	c->polarity_low = false;
	c->mask = false;
	return (c->dlm == 3 || c->dlm == 6) ? -1 : 0;
}

int irm_compat_rte(uint64_t rte, struct irm_compat *c)
{
	if (bits(rte, 48, 48) || bits(rte, 55, 17))
		return -1;
	c->vector = (uint8_t)bits(rte, 7, 0);
	c->dlm = (unsigned)bits(rte, 10, 8);
	c->dm = bits(rte, 11, 11);
	c->polarity_low = bits(rte, 13, 13);
	c->tm = bits(rte, 15, 15);
	c->mask = bits(rte, 16, 16);
	c->rh = false;
	c->dest = (uint8_t)bits(rte, 63, 56);
	return (c->dlm == 3 || c->dlm == 6) ? -1 : 0;
}
