/* MSI-X emulated: the message control, the table's entries onto the
 * device, the table's MMIO as the guest reaches it, and a write to the
 * table's BAR or the command register (the table may move). */
#include "msix.h"
#include "bar.h"
#include "place.h"
#include "route.h"
#include "scan.h"

/* One MSI-X entry onto the device: masked first, address and data, then
 * unmasked only when the guest's entry is unmasked and routed. */
static void msix_entry_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
			     uint32_t i, bool count)
{
	if (!f->table_pa || !f->ent || f->dark)
		return;
	const struct vmsi_entry *e = &f->ent[i];
	uint64_t t = f->table_pa + 16ull * i;
	hw->mem_write(hw->ctx, t + 12, MSIX_ENT_MASK);
	if (e->ctrl & MSIX_ENT_MASK)
		return;
	uint64_t va = e->addr_lo | (uint64_t)e->addr_hi << 32, pa;
	uint32_t pd;
	unsigned r = vmsi_route_fn(d, hw, f, (f->msi ? VMSI_MSI_IRTES : 0) + i, va, e->data, 1, &pa, &pd);
	if (count)
		vmsi_count_route(s, f, r, va, e->data, pa, pd);
	if (r != VR_NONE)
		return;
	hw->mem_write(hw->ctx, t, (uint32_t)pa);
	hw->mem_write(hw->ctx, t + 4, 0);
	hw->mem_write(hw->ctx, t + 8, pd);
	hw->mem_write(hw->ctx, t + 12, 0);
}

/* The device's MSI-X message control from the guest's. With relocate (on
 * enabling, and after a write that may move the table: its BAR, memory
 * decoding turned on) the table is placed again, unless the caller did
 * (placed: its refusal); every entry is written (from the guest's, masked
 * unless routed) when enabling and wherever the table moved: what the
 * device holds at a new place (or what the guest wrote there while no
 * table was placed) never counts. */
void vmsi_msix_ctl_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
			   bool relocate, bool enabling, uint64_t old, int placed)
{
	unsigned why = VR_NONE;
	if (relocate) {
		why = placed >= 0 ? (unsigned)placed : vmsi_table_place(s, hw, f, vmsi_decoding(s, hw, f));
		for (uint32_t i = 0; (enabling || f->table_pa != old) && i < f->nent && f->ent; i++)
			msix_entry_apply(s, d, hw, f, i, false);
	}
	uint16_t pctl = f->msix_ctl;
	if ((pctl & MSIX_EN) && (!f->table_pa || !f->ent)) {
		/* Entries the hypervisor cannot write nor trap: the device's
		 * MSI-X stays off (its INTx too: MSI-X enabled, virtually). */
		pctl &= (uint16_t)~MSIX_EN;
		if (relocate && why == VR_NONE && vmsi_decoding(s, hw, f))
			vmsi_count_route(s, f, VM_NO_TABLE, 0, 0, 0, 0);   /* decoding off: no place, no refusal */
	}
	if (why != VR_NONE)
		vmsi_count_route(s, f, why, 0, 0, 0, 0);
	hw->cfg_write(hw->ctx, f->bdf, f->msix + 2, 2, pctl);
}

void vmsi_release(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw)
{
	for (uint32_t i = 0; i < s->nfn; i++) {
		struct vmsi_fn *g = &s->fn[i];
		unsigned why = g->held - 1u;
		if (g->held == VMSI_HELD_ENTRIES)        /* its registers out of reach: the entries alone */
			for (uint32_t k = 0; k < g->nent && g->ent; k++)
				msix_entry_apply(s, d, hw, g, k, false);
		else if (g->held)
			vmsi_msix_ctl_apply(s, d, hw, g, true, false, g->held_from, (int)why);
		g->held = 0;
	}
}

/* A write to the table's BAR or to the command register of an MSI-X
 * function: the table may move. Where the device would decode a new place
 * before the hypervisor trapped it (decoding on across a BAR write, or
 * turned on now), decoding stays off until the new place is judged and its
 * pages are out of every vCPU's view: no other vCPU reaches the device's
 * real table in between. */
void vmsi_bar_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
			     uint16_t off, unsigned size, uint32_t val)
{
	uint16_t cmd = (uint16_t)hw->cfg_read(hw->ctx, f->bdf, CFG_COMMAND, 2), want = cmd;
	bool rebar = vmsi_touches_rebar(hw, f, off, size), bar = rebar || vmsi_touches_table_bar(f, off, size);
	uint32_t mem_lane = 0;                  /* the value's bit that is CMD_MEM, if the write holds it */
	for (unsigned i = 0; i < size; i++) {
		unsigned o = off + i;
		if (o == CFG_COMMAND || o == CFG_COMMAND + 1)
			want = (uint16_t)((want & ~(0xffu << 8 * (o - CFG_COMMAND))) | ((val >> 8 * i) & 0xff) << 8 * (o - CFG_COMMAND));
		if (o == CFG_COMMAND)
			mem_lane = CMD_MEM << 8 * i;
	}
	bool on = want & CMD_MEM, quiet = on && (bar || !(cmd & CMD_MEM));
	if (!bar && on == !!(cmd & CMD_MEM)) {
		hw->cfg_write(hw->ctx, f->bdf, off, size, val);   /* decoding unchanged, the BAR untouched */
		return;
	}
	if (quiet && (cmd & CMD_MEM))
		hw->cfg_write(hw->ctx, f->bdf, CFG_COMMAND, 2, cmd & ~CMD_MEM);
	hw->cfg_write(hw->ctx, f->bdf, off, size, quiet ? val & ~mem_lane : val);
	uint64_t old = f->table_pa, sz = rebar ? vmsi_rebar_size(hw, f) : f->bar_size;
	if (sz != f->bar_size) {
		/* Resized without a BAR write: the place judged again at the new
		 * size, the old one not kept for being where it was. */
		f->bar_size = sz;
		s->resizes++;
		vmsi_table_place(s, hw, f, false);
	}
	unsigned why = vmsi_table_place(s, hw, f, on);
	if (quiet)
		hw->cfg_write(hw->ctx, f->bdf, CFG_COMMAND, 2, want);
	vmsi_msix_ctl_apply(s, d, hw, f, true, false, old, (int)why);
}

bool vmsi_trapped(const struct vmsi *s, uint64_t pa)
{
	for (uint32_t i = 0; i < s->npages; i++)
		if (s->page[i] == (pa & ~0xfffull))
			return true;
	return false;
}

/* The function whose current table holds pa, and the entry's index. */
static struct vmsi_fn *entry_of(struct vmsi *s, uint64_t pa, uint32_t *i)
{
	for (uint32_t k = 0; k < s->nfn; k++) {
		struct vmsi_fn *f = &s->fn[k];
		if (f->msix && f->ent && f->table_pa && pa >= f->table_pa && pa - f->table_pa < 16ull * f->nent) {
			*i = (uint32_t)((pa - f->table_pa) / 16);
			return f;
		}
	}
	return NULL;
}


uint32_t vmsi_mem_read(struct vmsi *s, const struct vmsi_hw *hw, uint64_t pa)
{
	uint32_t i;
	struct vmsi_fn *f = entry_of(s, pa, &i), *b = f ? f : vmsi_placed_bar_of(s, pa);
	if (b && (!vmsi_still_taken(s, hw, b) || !vmsi_table_decoded(s, hw, b)))
		f = b = NULL;
	if (!f && b && !b->dark)
		return hw->mem_read(hw->ctx, pa);
	if (!f) {
		s->stray++;
		return 0xffffffffu;              /* no device of the guest's decodes it: all ones */
	}
	s->table_accesses++;
	const struct vmsi_entry *e = &f->ent[i];
	switch (pa & 0xc) {
	case 0:  return e->addr_lo;
	case 4:  return e->addr_hi;
	case 8:  return e->data;
	default: return e->ctrl;
	}
}

void vmsi_mem_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint64_t pa, uint32_t val)
{
	uint32_t i;
	struct vmsi_fn *f = entry_of(s, pa, &i), *b = f ? f : vmsi_placed_bar_of(s, pa);
	if (b && (!vmsi_still_taken(s, hw, b) || !vmsi_table_decoded(s, hw, b)))
		f = b = NULL;
	if (!f) {
		if (b && !b->dark)
			hw->mem_write(hw->ctx, pa, val);
		else
			s->stray++;              /* dropped */
		return;
	}
	s->table_accesses++;
	f->writes++;
	struct vmsi_entry *e = &f->ent[i];
	switch (pa & 0xc) {
	case 0:  e->addr_lo = val & ~3u; break;      /* 1:0 reserved */
	case 4:  e->addr_hi = val; break;
	case 8:  e->data = val; break;
	default: e->ctrl = val & MSIX_ENT_MASK; break;   /* 31:1 reserved here */
	}
	/* Routed again on a change of the mask or, while unmasked, of the
	 * message (the spec lets software change an unmasked entry's message:
	 * the device may then send either). */
	if ((pa & 0xc) == 12 || !(e->ctrl & MSIX_ENT_MASK))
		msix_entry_apply(s, d, hw, f, i, !(e->ctrl & MSIX_ENT_MASK));
}
