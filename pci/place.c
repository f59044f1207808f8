/* Where an MSI-X table lies, and the trap's wall: its place from the BAR as
 * the function decodes it, judged (inside its BAR as sized at boot, inside
 * the bridges' windows above, over no memory-map range, claimed range or
 * other table, within reach); only placed tables' pages trapped. */
#include "place.h"
#include "bridge.h"

bool vmsi_claim(struct vmsi_claims *c, uint64_t base, uint64_t len)
{
	if (c->n >= VMSI_MAX_CLAIMS)
		return false;
	c->r[c->n].base = base;
	c->r[c->n++].len = len;
	return true;
}

static bool overlaps(uint64_t a, uint64_t b, uint64_t lo, uint64_t len) { return lo < b && lo + len > a; }

void vmsi_claims_reach(struct vmsi_claims *c, unsigned phys_bits, uint64_t map_end)
{
	if (phys_bits < 32 || phys_bits > 52)
		phys_bits = 36;                  /* no sane width reported: the SDM's default */
	c->phys_end = 1ull << phys_bits;
	c->reach_end = map_end < c->phys_end ? map_end : c->phys_end;
}

unsigned vmsi_place_judge(struct vmsi_claims *c, uint64_t pa, uint64_t len)
{
	uint64_t end = pa + len;
	if (!len)
		return VM_TABLE_OUTSIDE_BAR;     /* nothing judged: no place */
	if (end < pa || (c->phys_end && end > c->phys_end))
		return VM_TABLE_BEYOND_PHYS;
	if (end > c->reach_end)
		return VM_TABLE_BEYOND_MAP;
	if (!c->mem)
		return VM_TABLE_OVER_MEMORY;     /* no memory map to judge by: nowhere is safe */
	for (uint32_t i = 0; c->mem && i < c->mem->count; i++) {
		const struct mem_range *m = &c->mem->r[i];
		if (!overlaps(pa, end, m->base, m->len))
			continue;
		if (m->type == MEM_RESERVED && i < 64 && (c->boot || (c->window_ranges >> i & 1))) {
			c->window_ranges |= c->boot ? 1ull << i : 0;
			continue;
		}
		return VM_TABLE_OVER_MEMORY;
	}
	for (uint32_t i = 0; i < c->n; i++)
		if (overlaps(pa, end, c->r[i].base, c->r[i].len))
			return VM_TABLE_OVER_CLAIMED;
	return VR_NONE;
}

/* A VF's PF (NULL: f is no VF). */
static const struct vmsi_fn *pf_of(const struct vmsi *s, const struct vmsi_fn *f)
{
	return f->pf && f->pf <= s->nfn ? &s->fn[f->pf - 1] : NULL;
}

/* A 32- or 64-bit memory BAR at 'reg' of function bdf: its base, 0 for an
 * I/O BAR or none (64 bits: the next dword is the upper half). */
static uint64_t bar_at(const struct vmsi_hw *hw, uint16_t bdf, uint16_t reg, bool last)
{
	uint32_t lo = hw->cfg_read(hw->ctx, bdf, reg, 4);
	if (lo & 1)
		return 0;                        /* an I/O BAR cannot hold a table */
	uint64_t base = lo & ~0xfull;
	if ((lo & 6) == 4 && !last)
		base |= (uint64_t)hw->cfg_read(hw->ctx, bdf, reg + 4, 4) << 32;
	return base;
}

/* The table's BAR as the function decodes it now: its base (memory, 32
 * or 64 bits), 0 when not assigned or when memory decoding is off (PCI
 * 3.0, "Command Register" bit 1: the device answers no memory access).
 * A VF's BARs read 0 (SR-IOV, "VF BAR"): VF n's BAR i is the PF's VF BAR
 * i plus (n - 1) times its size. */
static uint64_t bar_now(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f);
static uint64_t table_bar(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f, bool decode)
{
	if ((f->msix_table & 7) > 5 || !decode || !vmsi_forwarded(s, hw, f))
		return 0;
	return bar_now(s, hw, f);
}

/* The table's BAR as programmed, decoding or not. */
static uint64_t bar_now(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	unsigned bir = f->msix_table & 7;
	if (bir > 5)
		return 0;
	const struct vmsi_fn *pf = pf_of(s, f);
	if (!pf)
		return bar_at(hw, f->bdf, (uint16_t)(CFG_BAR0 + 4 * bir), bir == 5);
	uint64_t base = bar_at(hw, pf->bdf, (uint16_t)(pf->sriov + SRIOV_VF_BAR0 + 4 * bir), bir == 5);
	return base && pf->vf_bar_size[bir] ? base + (uint64_t)(f->vf - 1) * pf->vf_bar_size[bir] : 0;
}

/* The bridge the scan saw at bdf, NULL: none (or not forwarded now). */
static const struct vmsi_bridge *bridge_at(const struct vmsi *s, uint16_t bdf)
{
	return vmsi_bridge_named((struct vmsi *)s, bdf, true);
}

/* PCI-to-PCI Bridge Architecture, "Command Register": with Memory Space
 * Enable clear the bridge forwards no memory transaction downstream. */
bool vmsi_forwarded(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	const struct vmsi_bridge *b = f->parent == VMSI_NO_PARENT ? NULL : bridge_at(s, f->parent);
	for (uint32_t n = 0; b && n < s->nbridge; n++, b = b->parent == VMSI_NO_PARENT ? NULL : bridge_at(s, b->parent))
		if (b->bdf + 1u != s->held_bridge && !(hw->cfg_read(hw->ctx, b->bdf, CFG_COMMAND, 2) & CMD_MEM))
			return false;
	return true;
}

bool vmsi_decoding(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	const struct vmsi_fn *pf = pf_of(s, f);
	if (!vmsi_forwarded(s, hw, f))
		return false;
	if (!pf)
		return hw->cfg_read(hw->ctx, f->bdf, CFG_COMMAND, 2) & CMD_MEM;
	uint32_t c = hw->cfg_read(hw->ctx, pf->bdf, (uint16_t)(pf->sriov + SRIOV_CTRL), 2);
	return (c & SRIOV_VFE) && (c & SRIOV_MSE);
}

static uint64_t table_len(const struct vmsi_fn *f) { return 16ull * f->nent; }
static uint64_t first_page(uint64_t pa) { return pa & ~0xfffull; }
static uint64_t end_page(uint64_t pa, uint64_t len) { return (pa + len + 0xfff) & ~0xfffull; }

/* Does the placed table of a function other than 'except' (NULL: any)
 * cover page pg? */
static bool page_in_use(const struct vmsi *s, uint64_t pg, const struct vmsi_fn *except)
{
	for (uint32_t k = 0; k < s->nfn; k++) {
		const struct vmsi_fn *g = &s->fn[k];
		if (g != except && g->table_pa && pg >= first_page(g->table_pa) && pg < end_page(g->table_pa, table_len(g)))
			return true;
	}
	return false;
}

static bool page_listed(const struct vmsi *s, uint64_t pg)
{
	for (uint32_t i = 0; i < s->npages; i++)
		if (s->page[i] == pg)
			return true;
	return false;
}

/* The bridge's memory windows ("PCI-to-PCI Bridge Architecture", memory
 * base/limit at 0x20, 31:20 in bits 15:4 of each word; prefetchable at
 * 0x24, 64-bit when its low nibble is 1, upper halves at 0x28/0x2C): does
 * one of them hold [a, b)? */
static bool in_window(const struct vmsi_hw *hw, uint16_t br, uint64_t a, uint64_t b)
{
	uint32_t m = hw->cfg_read(hw->ctx, br, 0x20, 4), p = hw->cfg_read(hw->ctx, br, 0x24, 4);
	uint64_t mlo = (uint64_t)(m & 0xfff0) << 16, mhi = (uint64_t)(m & 0xfff00000u) | 0xfffff;
	uint64_t plo = (uint64_t)(p & 0xfff0) << 16, phi = (uint64_t)(p & 0xfff00000u) | 0xfffff;
	if ((p & 0xf) == 1) {
		plo |= (uint64_t)hw->cfg_read(hw->ctx, br, 0x28, 4) << 32;
		phi |= (uint64_t)hw->cfg_read(hw->ctx, br, 0x2c, 4) << 32;
	}
	return (mlo <= mhi && a >= mlo && b - 1 <= mhi) || (plo <= phi && a >= plo && b - 1 <= phi);
}

/* Every bridge on the way down forwards [lo, hi): its windows (the
 * guest's to rewrite, followed by vmsi_bridge_write). */
static bool windows_hold(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f, uint64_t lo, uint64_t hi)
{
	const struct vmsi_bridge *b = f->parent == VMSI_NO_PARENT ? NULL : bridge_at(s, f->parent);
	if (f->parent != VMSI_NO_PARENT && !in_window(hw, f->parent, lo, hi))
		return false;
	for (uint32_t n = 0; b && n < s->nbridge; n++, b = b->parent == VMSI_NO_PARENT ? NULL : bridge_at(s, b->parent))
		if (!in_window(hw, b->bdf, lo, hi))
			return false;
	return true;
}

bool vmsi_reaches(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	uint64_t lo = f->bar_size ? f->table_pa - (f->msix_table & ~7u) : f->table_pa;
	uint64_t hi = lo + (f->bar_size ? f->bar_size : table_len(f));
	return f->table_pa && vmsi_forwarded(s, hw, f) && windows_hold(s, hw, f, lo, hi);
}

/* May f's table lie at pa (its BAR at bar)? The wall: the hypervisor
 * writes a table's entries and passes the rest of its pages only where
 * the device alone decodes them (on hardware a BAR over DRAM or another
 * range is not decoded by the device: only the hypervisor's stores would
 * land there). */
static unsigned place_check(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f, uint64_t bar,
			    uint64_t pa)
{
	uint64_t len = table_len(f), off = pa - bar;
	if (f->bar_size && (off >= f->bar_size || len > f->bar_size - off))
		return VM_TABLE_OUTSIDE_BAR;
	uint64_t lo = f->bar_size ? bar : pa, hi = f->bar_size ? bar + f->bar_size : pa + len;
	if (hi < lo)
		return VM_TABLE_OUTSIDE_BAR;     /* wraps */
	if (!windows_hold(s, hw, f, lo, hi))
		return VM_TABLE_OUTSIDE_WINDOW;
	for (uint64_t pg = first_page(pa); pg < end_page(pa, len); pg += 0x1000)
		if (page_in_use(s, pg, f))
			return VM_TABLE_OVER_TABLE;
	/* The whole span at 64 bits (a BAR of 4 GiB or more, native or
	 * resized): a span of no bytes is no judgement, and refused. */
	uint64_t span = end_page(lo, hi - lo) - first_page(lo);
	if (!span || end_page(lo, hi - lo) < lo)
		return VM_TABLE_OUTSIDE_BAR;
	unsigned r = hw->place ? hw->place(hw->ctx, first_page(lo), span) : VR_NONE;
	if (r != VR_NONE)
		return r;
	uint32_t fresh = 0;
	for (uint64_t pg = first_page(pa); pg < end_page(pa, len); pg += 0x1000)
		fresh += !page_listed(s, pg);
	if (s->npages + fresh > s->page_room)
		return VM_TABLE_NO_ROOM;
	return VR_NONE;
}

/* The table placed where the BAR puts it now (decode: memory decoding on,
 * as the function has it or is about to): its new pages trapped first,
 * then the pages no table covers any more given back. VR_NONE, or why the
 * place was refused (the table is then not placed). */
static unsigned place_pa(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f, uint64_t bar, uint64_t pa);

unsigned vmsi_table_place(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f, bool decode)
{
	uint64_t bar = table_bar(s, hw, f, decode), now = f->gone ? 0 : bar_now(s, hw, f);
	if (!f->gone)
		f->last_pa = now ? now + (f->msix_table & ~7u) : 0;
	return place_pa(s, hw, f, bar, bar ? bar + (f->msix_table & ~7u) : 0);
}

/* Does f still decode its placed table there: memory decoding on (a VF:
 * VF Enable and VF MSE), forwarded, the BAR where it was when placed? A
 * function reset or replaced behind the trap (a card pulled and one of
 * the same IDs put in, ready at once: its BARs as firmware left them,
 * decoding off) does not, though vmsi_still_taken finds its IDs: nothing
 * is made there for the guest then (PCI 3.0: a memory access no device
 * decodes ends with no target), until a configuration write the trap
 * sees places the table again. A dark table (a gone function's, placed
 * where it was last read) is not asked. */
bool vmsi_table_decoded(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f)
{
	if (f->dark || f->gone || !f->table_pa)
		return true;
	/* (vmsi_decoding asks the bridges already: not table_bar, which would again) */
	uint64_t bar = vmsi_decoding(s, hw, f) ? bar_now(s, hw, f) : 0;
	return bar && bar + (f->msix_table & ~7u) == f->table_pa;
}

void vmsi_table_place_dark(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	if (f->table_pa || !f->last_pa || place_pa(s, hw, f, f->last_pa - (f->msix_table & ~7u), f->last_pa) != VR_NONE)
		return;
	f->dark = f->blind = true;
}

static unsigned place_pa(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f, uint64_t bar, uint64_t pa)
{
	uint64_t old = f->table_pa;
	/* Judged again where it stays too: the windows above may have moved
	 * (a bridge written, buses renumbered); refused now, it is unplaced. */
	unsigned r = pa ? place_check(s, hw, f, bar, pa) : VR_NONE;
	if (pa == old && r == VR_NONE) {
		f->dark = f->blind = false;          /* its place known, from what it decodes now */
		return VR_NONE;
	}
	if (r == VR_NONE && pa && hw->table_at && !hw->table_at(hw->ctx, pa, (uint32_t)table_len(f)))
		r = VM_TABLE_NO_ROOM;
	if (r != VR_NONE)
		pa = 0;
	for (uint64_t pg = first_page(pa); pa && pg < end_page(pa, table_len(f)); pg += 0x1000)
		if (!page_listed(s, pg))
			s->page[s->npages++] = pg;
	f->table_pa = pa;
	f->dark = f->blind = false;
	for (uint64_t pg = first_page(old); old && pg < end_page(old, table_len(f)); pg += 0x1000) {
		if (page_in_use(s, pg, NULL))
			continue;
		for (uint32_t i = 0; i < s->npages; i++)
			if (s->page[i] == pg) {
				s->page[i] = s->page[--s->npages];
				break;
			}
		if (hw->table_gone)
			hw->table_gone(hw->ctx, pg);
	}
	return r;
}

/* Is pa inside the BAR of a function whose table is placed (the rest of
 * a table's page: its PBA, the device's other registers)? */
struct vmsi_fn *vmsi_placed_bar_of(struct vmsi *s, uint64_t pa)
{
	for (uint32_t k = 0; k < s->nfn; k++) {
		struct vmsi_fn *f = &s->fn[k];
		if (!f->msix || !f->table_pa)
			continue;
		uint64_t lo = f->bar_size ? f->table_pa - (f->msix_table & ~7u) : f->table_pa;
		uint64_t len = f->bar_size ? f->bar_size : table_len(f);
		if (pa >= lo && pa - lo < len)
			return f;
	}
	return NULL;
}
