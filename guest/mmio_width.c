/* Byte and word MOVs onto the 32-bit decoder (mmio_width.h). */
#include "mmio_width.h"

int mmio_decode_width(const uint8_t *b, unsigned avail, struct mmio_access *out, const char **why)
{
	uint8_t c[MMIO_INSN_MAX];
	unsigned n = 0, skipped = 0, i = 0;
	bool opsize = false;
	if (avail > MMIO_INSN_MAX)
		avail = MMIO_INSN_MAX;
	*out = (struct mmio_access){ .size = 4 };
	/* The 0x66 prefixes taken out, the rest copied as is. */
	for (; i < avail; i++) {
		uint8_t x = b[i];
		if (x == 0x66) {
			opsize = true;
			skipped++;
			continue;
		}
		c[n++] = x;
		if (x != 0x26 && x != 0x2e && x != 0x36 && x != 0x3e && x != 0x64 && x != 0x65 && x != 0x67)
			break;
	}
	for (i++; i < avail; i++)
		c[n++] = b[i];
	/* The opcode: after the prefixes and a REX. */
	unsigned k = 0;
	while (k < n && (c[k] == 0x26 || c[k] == 0x2e || c[k] == 0x36 || c[k] == 0x3e || c[k] == 0x64 || c[k] == 0x65 ||
			 c[k] == 0x67))
		k++;
	bool rex = k < n && (c[k] & 0xf0) == 0x40;
	if (rex)
		k++;
	if (k < n) {
		if (c[k] == 0xc6 || (opsize && c[k] == 0xc7)) {
			*why = "MOV of an 8- or 16-bit immediate (C6, 66 C7)";
			return -1;
		}
		if (c[k] == 0x88 || c[k] == 0x8a) {
			if (opsize) {
				*why = "operand-size prefix on an 8-bit MOV";
				return -1;
			}
			c[k] = (uint8_t)(c[k] + 1);     /* 88 -> 89, 8A -> 8B: the same ModRM */
			out->size = 1;
		} else if (opsize) {
			out->size = 2;
		}
	}
	if (mmio_decode(c, n, &out->in, why))
		return -1;
	out->in.len = (uint8_t)(out->in.len + skipped);
	if (out->size == 1 && !rex && out->in.reg >= 4 && out->in.reg < 8 && !out->in.has_imm) {
		out->high_byte = true;
		out->in.reg = (uint8_t)(out->in.reg - 4);
	}
	return 0;
}

uint64_t mmio_merge(uint64_t old, const struct mmio_access *a, uint32_t val)
{
	if (a->size == 4)
		return val;
	if (a->size == 2)
		return (old & ~0xffffull) | (val & 0xffff);
	unsigned sh = a->high_byte ? 8 : 0;
	return (old & ~(0xffull << sh)) | (uint64_t)(val & 0xff) << sh;
}

uint32_t mmio_extract(uint64_t reg, const struct mmio_access *a)
{
	if (a->size == 4)
		return (uint32_t)reg;
	if (a->size == 2)
		return (uint32_t)reg & 0xffff;
	return (uint32_t)(reg >> (a->high_byte ? 8 : 0)) & 0xff;
}

static bool legacy_prefix(uint8_t x)
{
	return x == 0x26 || x == 0x2e || x == 0x36 || x == 0x3e || x == 0x64 || x == 0x65 || x == 0x66 || x == 0x67;
}

int mmio_decode_wide(const uint8_t *b, unsigned avail, struct mmio_access *out, const char **why)
{
	uint8_t c[MMIO_INSN_MAX];
	unsigned i = 0;
	bool opsize = false;
	if (avail > MMIO_INSN_MAX)
		avail = MMIO_INSN_MAX;
	for (; i < avail && legacy_prefix(b[i]); i++)
		opsize |= b[i] == 0x66;
	if (i >= avail || (b[i] & 0xf8) != 0x48)      /* no REX with W set */
		return mmio_decode_width(b, avail, out, why);
	*out = (struct mmio_access){ .size = 8 };
	if (opsize) {
		*why = "operand-size prefix with REX.W";
		return -1;
	}
	if (i + 1 < avail && b[i + 1] != 0x89 && b[i + 1] != 0x8b && b[i + 1] != 0xc7) {
		*why = "REX.W with an opcode other than MOV 89/8B/C7";
		return -1;
	}
	/* The same instruction with W clear is the 32-bit one the decoder
	 * knows: same length, register and immediate. */
	for (unsigned k = 0; k < avail; k++)
		c[k] = b[k];
	c[i] &= (uint8_t)~8;
	return mmio_decode(c, avail, &out->in, why);
}
