/* The VT-d tables (see tables.h): the formats of the VT-d specification,
 * "Translation Structure Formats" (legacy-mode root and context entries,
 * second-level paging entries). */
#include "tables.h"
#include "vtd_defs.h"
#include "../lib/printk.h"

/* What the guest's e820 holds is mappable; the hypervisor's memory and bad
 * RAM are not. */
static bool type_mappable(uint32_t t)
{
	switch (t) {
	case MEM_USABLE: case MEM_RESERVED: case MEM_ACPI: case MEM_NVS: case MEM_BOOT:
		return true;
	default:
		return false;
	}
}

/* The end of the mappable range containing x, or x when none does. */
static uint64_t covered_to(const struct memmap *m, const struct dmar_rmrr *rmrr, uint32_t nrmrr, uint64_t x)
{
	for (uint32_t i = 0; i < m->count; i++)
		if (type_mappable(m->r[i].type) && m->r[i].base <= x && x - m->r[i].base < m->r[i].len)
			return m->r[i].base + m->r[i].len;
	for (uint32_t i = 0; i < nrmrr; i++)
		if (rmrr[i].base <= x && x <= rmrr[i].limit)
			return rmrr[i].limit + 1;
	return x;
}

int vtd_region_class(const struct memmap *m, const struct dmar_rmrr *rmrr, uint32_t nrmrr, uint64_t a, uint64_t len)
{
	uint64_t b = a + len;
	bool any = false, hv = false;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct mem_range *r = &m->r[i];
		if (r->base >= b || r->base + r->len <= a)
			continue;
		if (r->type == MEM_HV)
			hv = true;
		else if (type_mappable(r->type))
			any = true;
	}
	for (uint32_t i = 0; i < nrmrr; i++)
		if (rmrr[i].base < b && rmrr[i].limit >= a)
			any = true;
	if (!any)
		return 0;
	if (hv)
		return -1;
	/* Whole: walk the union of mappable ranges from a. */
	uint64_t x = a;
	while (x < b) {
		uint64_t y = covered_to(m, rmrr, nrmrr, x);
		if (y == x)
			return -1;
		x = y;
	}
	return 1;
}

struct sl_ctx {
	const struct memmap *m;
	const struct dmar_rmrr *rmrr;
	uint32_t nrmrr;
	bool lp_2m, lp_1g;
	struct vtd_map_stats *st;
};

static uint64_t *new_table(struct vtd_map_stats *st)
{
	st->tables++;
	return page_alloc(1);
}

static void note_end(struct vtd_map_stats *st, uint64_t end)
{
	if (end > st->end)
		st->end = end;
}

/* The entry for [a, a + 2^shift): 0 (nothing mappable), a leaf, or a table
 * of 512 entries for the next level down. */
static uint64_t sl_entry(const struct sl_ctx *x, uint64_t a, int shift)
{
	uint64_t size = 1ull << shift;
	int cls = vtd_region_class(x->m, x->rmrr, x->nrmrr, a, size);
	if (shift == 12 && cls != 1) {
		/* The hypervisor's page (or, only defensively, part of a page:
		 * claims are whole pages) stays out; so does a page partly a hole. */
		for (uint32_t i = 0; i < x->m->count; i++)
			if (x->m->r[i].type == MEM_HV && x->m->r[i].base < a + size && x->m->r[i].base + x->m->r[i].len > a) {
				x->st->hv_pages_out++;
				break;
			}
		return 0;
	}
	if (cls == 0)
		return 0;
	if (shift == 12) {
		x->st->pages_4k++;
		note_end(x->st, a + size);
		return a | VTD_SL_R | VTD_SL_W;
	}
	if (cls == 1 && ((shift == 21 && x->lp_2m) || (shift == 30 && x->lp_1g))) {
		if (shift == 21)
			x->st->pages_2m++;
		else
			x->st->pages_1g++;
		note_end(x->st, a + size);
		return a | VTD_SL_R | VTD_SL_W | VTD_SL_PS;
	}
	uint64_t *t = new_table(x->st);
	for (int i = 0; i < 512; i++)
		t[i] = sl_entry(x, a + ((uint64_t)i << (shift - 9)), shift - 9);
	return (uint64_t)(uintptr_t)t | VTD_SL_R | VTD_SL_W;
}

paddr_t vtd_sl_build(const struct memmap *m, const struct dmar_rmrr *rmrr, uint32_t nrmrr, int levels,
		     bool lp_2m, bool lp_1g, struct vtd_map_stats *st, char *err, size_t errlen)
{
	struct sl_ctx x = { m, rmrr, nrmrr, lp_2m, lp_1g, st };
	if (levels < 3 || levels > 5) {
		snprintf(err, errlen, "iommu: %d-level tables not supported", levels);
		return 0;
	}
	int top = 12 + 9 * (levels - 1);            /* the shift of a top-level entry */
	uint64_t reach = 1ull << (top + 9);
	/* The highest mappable address must lie within the tables' reach. */
	uint64_t want = 0;
	for (uint32_t i = 0; i < m->count; i++)
		if (type_mappable(m->r[i].type) && m->r[i].base + m->r[i].len > want)
			want = m->r[i].base + m->r[i].len;
	for (uint32_t i = 0; i < nrmrr; i++) {
		if (rmrr[i].limit + 1 > want)
			want = rmrr[i].limit + 1;
		if (vtd_region_class(m, NULL, 0, rmrr[i].base, rmrr[i].limit + 1 - rmrr[i].base) != 0) {
			for (uint32_t k = 0; k < m->count; k++)
				if (m->r[k].type == MEM_HV && m->r[k].base <= rmrr[i].limit &&
				    m->r[k].base + m->r[k].len > rmrr[i].base) {
					st->rmrr_hv_conflicts++;
					break;
				}
		}
	}
	if (want > reach) {
		snprintf(err, errlen, "iommu: memory up to 0x%llx, %d-level tables reach 0x%llx",
			 (unsigned long long)want, levels, (unsigned long long)reach);
		return 0;
	}
	uint64_t *t = new_table(st);
	for (uint64_t i = 0; i < 512 && (i << top) < want; i++)
		t[i] = sl_entry(&x, i << top, top);
	return (paddr_t)(uintptr_t)t;
}

paddr_t vtd_root_build(paddr_t slpt, int levels, uint16_t did, struct vtd_map_stats *st)
{
	uint64_t *root = new_table(st), *ctx = new_table(st);
	for (int i = 0; i < 256; i++) {
		ctx[2 * i] = (slpt & VTD_ADDR_MASK) | VTD_CTX_P;          /* TT 00b, FPD 0: faults recorded */
		ctx[2 * i + 1] = VTD_CTX_AW(levels) | ((uint64_t)did << VTD_CTX_DID_SHIFT);
	}
	for (int i = 0; i < 256; i++) {
		root[2 * i] = ((uint64_t)(uintptr_t)ctx & VTD_ADDR_MASK) | VTD_ROOT_P;
		root[2 * i + 1] = 0;
	}
	return (paddr_t)(uintptr_t)root;
}

/* Prefers the layout that matches MGAW, so that a 48-bit unit runs
 * 4-level tables. */
int vtd_levels(uint64_t cap, uint64_t need)
{
	uint64_t sagaw = VTD_CAP_SAGAW(cap), mgaw = VTD_CAP_MGAW(cap);
	for (int levels = 5; levels >= 3; levels--) {
		uint64_t width = 12 + 9 * (uint64_t)levels;
		if ((sagaw & BIT(levels - 2)) && width <= (mgaw > 48 ? 57 : mgaw > 39 ? 48 : 39) &&
		    (width >= 64 || need <= 1ull << width))
			return levels;
	}
	/* A unit whose MGAW is below every layout it offers (SAGAW 4-level
	 * only, MGAW 39): any layout it offers; MGAW bounds the addresses. */
	for (int levels = 3; levels <= 5; levels++)
		if ((sagaw & BIT(levels - 2)) && (levels == 5 || need <= 1ull << (12 + 9 * levels)))
			return levels;
	return 0;
}
