/* The VT-d model (see vtd_model.h). Bit positions from the specification's
 * "Root Entry", "Context Entry" and "Second-Level Paging Entries" figures;
 * fault reasons from "Non-recoverable Fault Reason Encodings". */
#include "vtd_model.h"

static uint64_t field(uint64_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

static const uint64_t *at(uint64_t pa) { return (const uint64_t *)(uintptr_t)pa; }

int vtd_model_translate(const struct vtd_model *u, uint16_t sid, uint64_t addr, bool write, uint64_t *hpa)
{
	unsigned bus = sid >> 8, devfn = sid & 0xff;
	uint64_t haw_mask = (u->haw >= 64 ? ~0ull : (1ull << u->haw) - 1) & ~0xfffull;

	/* Root entry: 127:64 reserved (legacy), 63:12 context-table pointer,
	 * 11:1 reserved, 0 present. */
	const uint64_t *re = at(u->rtaddr + 16ull * bus);
	if (!field(re[0], 0, 0))
		return 0x1;
	if (field(re[0], 11, 1) || re[1] || (re[0] & ~0xfffull & ~haw_mask))
		return 0xa;
	/* Context entry: low 63:12 second-level pointer, 11:4 reserved, 3:2
	 * translation type, 1 fault processing disable, 0 present; high 23:8
	 * domain ID, 7 reserved, 6:3 available, 2:0 address width. */
	const uint64_t *ce = at((re[0] & ~0xfffull) + 16ull * devfn);
	if (!field(ce[0], 0, 0))
		return 0x2;
	if (field(ce[0], 11, 4) || field(ce[1], 63, 24) || field(ce[1], 7, 7) || (ce[0] & ~0xfffull & ~haw_mask))
		return 0xb;
	if (field(ce[0], 3, 2) != 0)
		return 0x3;                    /* only untranslated requests modelled */
	unsigned aw = (unsigned)field(ce[1], 2, 0);
	if (aw < 1 || aw > 3 || !(u->sagaw & (1u << aw)))
		return 0x3;
	unsigned agaw = 30 + 9 * aw, levels = aw + 2;
	unsigned width = agaw < u->mgaw ? agaw : u->mgaw;
	if (width < 64 && addr >> width)
		return 0x4;
	/* The walk: R bit 0, W bit 1, bits 6:2 reserved here (no execute, no
	 * memory type), 7 page size (PDPTE: 1 GiB, PDE: 2 MiB), 11 snoop
	 * (leaf only), address up to HAW, 63 reserved. Rights are the AND of
	 * every level's. */
	uint64_t table = ce[0] & ~0xfffull;
	for (unsigned level = levels; level >= 1; level--) {
		unsigned shift = 12 + 9 * (level - 1);
		uint64_t e = at(table)[(addr >> shift) & 511];
		if (!(e & 3))
			return write ? 0x5 : 0x6;
		bool ps = field(e, 7, 7) && level <= 3 && level >= 2;
		if (field(e, 6, 2) || field(e, 63, 63) || (e & ~0xfffull & 0x000fffffffffffffull & ~haw_mask))
			return 0xc;
		if (field(e, 7, 7) && (level > 3 || (level == 3 && !u->lp_1g) || (level == 2 && !u->lp_2m)))
			return 0xc;
		if (write ? !(e & 2) : !(e & 1))
			return write ? 0x5 : 0x6;
		if (ps || level == 1) {
			uint64_t page = 1ull << shift;
			uint64_t base = e & 0x000ffffffffff000ull;
			if (base & (page - 1))
				return 0xc;            /* address bits below a large page's size are reserved */
			*hpa = base | (addr & (page - 1));
			return 0;
		}
		if (field(e, 11, 11))
			return 0xc;                /* SNP only in a leaf */
		table = e & 0x000ffffffffff000ull;
	}
	return 0x7;
}
