/* Trapped functions that move (pci/, the layer above MSI-X): buses renumbered
 * above them, their table's BAR resized.
 *
 * Buses: PCI-to-PCI Bridge Architecture Specification, the Secondary and
 * Subordinate Bus Number registers (0x19, 0x1A of the type 1 header): a
 * bridge turns a Type 1 configuration request for its secondary bus into
 * Type 0 on that bus and forwards one for a bus up to its subordinate, so
 * a function answers on its bridge's secondary bus, the bus number being
 * the bridge's register, not the function's. The bridges below keep their
 * own numbers: a write moves the functions directly below the bridge
 * alone; deeper ones stay where their own bridge puts them, reached or
 * not by the bridges above (Linux's pci=assign-busses writes each bridge
 * in turn, top down, after turning forwarding off). A function no bridge
 * forwards to is "gone": its BDF is not its own any more (another
 * function may answer there), the trap does not follow it there, and its
 * device keeps what it was last given (a PCI Express function keeps the
 * Bus Number it captured, so its messages keep the source ID its IRTEs
 * check) until a renumbering reaches it again. */
#include "bridge_write.h"
#include "alias.h"
#include "bridge.h"
#include "msi.h"
#include "msix.h"
#include "place.h"
#include "../lib/string.h"

void vmsi_reroute(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	if (f->msi)
		vmsi_msi_apply(s, d, hw, f);
	if (f->msix)
		vmsi_msix_ctl_apply(s, d, hw, f, true, true, f->table_pa, -1);
}
bool vmsi_touches_bus(uint16_t off, unsigned size)
{
	return off <= CFG_SUB_BUS && off + size > CFG_SEC_BUS;
}

/* Is a function on bus 'bus' below bridge 'up' reached: each bridge up
 * the chain has the function (or the bridge below it) on its secondary
 * bus and forwards 'bus'? A bridge the scan did not record (past the
 * room, or none seen above a bus) is taken as forwarding, as before. */
static bool reached(struct vmsi *s, uint16_t up, uint8_t bus)
{
	uint8_t on = bus;
	for (uint32_t n = 0; up != VMSI_NO_PARENT; n++) {
		const struct vmsi_bridge *b = vmsi_bridge_named(s, up, false);
		if (!b)
			return true;
		if (n >= VMSI_MAX_BRIDGES || !b->sec || b->sec != on || bus < b->sec || bus > b->sub)
			return false;            /* a loop of bridges, or a bus not forwarded */
		on = (uint8_t)(b->bdf >> 8);
		up = b->parent;
	}
	return true;
}

/* A bridge renamed: whatever named it as parent follows, and the buses it
 * is the bridge of. */
static void bridge_renamed(struct vmsi *s, struct vmsi_bridge *c, uint16_t to)
{
	uint16_t from = c->bdf;
	for (uint32_t i = 0; i < s->nbridge; i++)
		if (s->bridge[i].parent == from)
			s->bridge[i].parent = to;
	for (uint32_t i = 0; i < s->nfn; i++)
		if (s->fn[i].parent == from)
			s->fn[i].parent = to;
	for (unsigned b = 0; b < 256; b++)
		if (s->bridge_of[b] == from + 1u)
			s->bridge_of[b] = (uint16_t)(to + 1);
	c->bdf = to;
}

static bool trapped_at(const struct vmsi *s, uint16_t bdf)
{
	for (uint32_t i = 0; i < s->nfn; i++)
		if (s->fn[i].bdf == bdf)
			return true;
	return false;
}

static void forget_buses(struct vmsi *s, uint16_t bdf, uint8_t a, uint8_t a_sub, uint8_t b, uint8_t b_sub)
{
	for (unsigned bus = (bdf >> 8) + 1u; s->seen && bus < 256; bus++)
		if ((bus >= a && bus <= a_sub) || (bus >= b && bus <= b_sub))
			memset(s->seen + bus * 32, 0, 32);      /* the bus's 256 functions, a bit each */
}

bool vmsi_bus_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		    unsigned size, uint32_t val)
{
	struct vmsi_bridge *b = vmsi_bridge_named(s, bdf, true);
	if (!b)
		return false;
	hw->cfg_write(hw->ctx, bdf, off, size, val);
	uint8_t old = b->sec, old_sub = b->sub, sec = (uint8_t)hw->cfg_read(hw->ctx, bdf, CFG_SEC_BUS, 1);
	b->sub = (uint8_t)hw->cfg_read(hw->ctx, bdf, CFG_SUB_BUS, 1);
	b->sec = sec;
	/* Whoever answered on the buses below before and after answers
	 * elsewhere now, or another function does: their first-access marks
	 * are dropped, each BDF asked afresh at its next access (the trapped
	 * functions are found by their BDFs, not by the marks). */
	if (old != sec || old_sub != b->sub)
		forget_buses(s, bdf, old, old_sub, sec, b->sub);
	/* A secondary bus at or above the bridge's own is no bus below it:
	 * nothing moves there (the functions below stay, not reached). */
	bool move = sec != old && sec > (bdf >> 8);
	if (sec != old && old && s->bridge_of[old] == bdf + 1u)
		s->bridge_of[old] = 0;
	if (move)
		s->bridge_of[sec] = (uint16_t)(bdf + 1);
	/* The bridges directly below: on the new secondary bus. */
	for (uint32_t i = 0; move && i < s->nbridge; i++) {
		struct vmsi_bridge *c = &s->bridge[i];
		uint16_t from = c->bdf, to = (uint16_t)(sec << 8 | (from & 0xff));
		if (c->parent != bdf || from == to)
			continue;
		bridge_renamed(s, c, to);
		if (hw->fn_moved && !trapped_at(s, from))
			hw->fn_moved(hw->ctx, from, to);   /* a trapped bridge: said with the functions below */
	}
	for (uint32_t i = 0; i < s->nbridge; i++)
		s->bridge[i].gone = !reached(s, s->bridge[i].parent, (uint8_t)(s->bridge[i].bdf >> 8));
	/* The trapped functions: those directly below moved; each one's reach
	 * judged again; one that moved, or is reached again, has its messages
	 * routed again from the guest's (IRTEs with its new requester ID) and
	 * its capabilities written at its BDF now, where it captures its bus.
	 * A VF moves with its PF, by its routing ID's offset from the PF's
	 * (First VF Offset + (n - 1) * VF Stride may carry it past the PF's
	 * bus), and is reached where its PF is: the VFs renamed first, while
	 * their PFs still have the BDFs they are offsets from, and routed
	 * again last, once their PFs answer where their VF BARs are read. */
	for (uint32_t pass = 0; pass < 3; pass++)
		for (uint32_t i = 0; i < s->nfn; i++) {
			struct vmsi_fn *f = &s->fn[i];
			const struct vmsi_fn *pf = f->pf && f->pf <= s->nfn ? &s->fn[f->pf - 1] : NULL;
			if (f->retired || (pass == 1) == (pf != NULL))
				continue;
			const struct vmsi_fn *by = pf ? pf : f;
			uint16_t from = f->bdf;
			if (pass < 2) {
				uint16_t by_to = move && by->parent == bdf ? (uint16_t)(sec << 8 | (by->bdf & 0xff)) : by->bdf;
				f->bdf = pf ? (uint16_t)(by_to + (uint16_t)(from - pf->bdf)) : by_to;
				f->moving = f->bdf != from;
				if (f->moving) {
					s->moves++;
					if (hw->fn_moved)
						hw->fn_moved(hw->ctx, from, f->bdf);
				}
				if (pass == 0)
					continue;            /* a VF: routed in the last pass */
			}
			bool was = f->gone;
			f->gone = !reached(s, by->parent, (uint8_t)(by->bdf >> 8));
			s->lost += !was && f->gone;
			if (!f->gone && (was || f->moving)) {
				f->src = vmsi_alias_of(s, hw, f->bdf);   /* its requester ID through the bridges above it now */
				vmsi_reroute(s, d, hw, f);
			}
			f->moving = false;
		}
	return true;
}

static bool windows_touched(uint16_t off, unsigned size)
{
	return off < CFG_WINDOWS_END && off + size > CFG_WINDOWS;
}

bool vmsi_touches_window(uint16_t off, unsigned size)
{
	return (off <= CFG_COMMAND && off + size > CFG_COMMAND) || windows_touched(off, size);
}

/* Is bridge bdf on the way down to f? */
static bool below(struct vmsi *s, const struct vmsi_fn *f, uint16_t bdf)
{
	uint16_t up = f->parent;
	for (uint32_t n = 0; up != VMSI_NO_PARENT && n <= s->nbridge; n++) {
		if (up == bdf)
			return true;
		const struct vmsi_bridge *b = vmsi_bridge_named(s, up, false);
		up = b ? b->parent : VMSI_NO_PARENT;
	}
	return false;
}

bool vmsi_bridge_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		       unsigned size, uint32_t val)
{
	if (!vmsi_bridge_named(s, bdf, true))
		return false;
	uint16_t cmd = (uint16_t)hw->cfg_read(hw->ctx, bdf, CFG_COMMAND, 2);
	uint32_t lane = off <= CFG_COMMAND && off + size > CFG_COMMAND ? CMD_MEM << 8 * (CFG_COMMAND - off) : 0;
	bool on = lane ? (val & lane) : (cmd & CMD_MEM);
	if (!windows_touched(off, size) && on == !!(cmd & CMD_MEM)) {
		/* Forwarding unchanged (INTx Disable, Bus Master, SERR#): passed,
		 * nothing held off, so no access below fails meanwhile. */
		hw->cfg_write(hw->ctx, bdf, off, size, val);
		return true;
	}
	if (on && (cmd & CMD_MEM))
		hw->cfg_write(hw->ctx, bdf, CFG_COMMAND, 2, cmd & ~CMD_MEM);
	hw->cfg_write(hw->ctx, bdf, off, size, on ? val & ~lane : val);
	s->held_bridge = on ? (uint16_t)(bdf + 1) : 0;
	for (uint32_t i = 0; i < s->nfn; i++) {
		struct vmsi_fn *g = &s->fn[i];
		/* The bridge's own table too (a root port's MSI-X): in its BAR,
		 * which its Memory Space Enable gates as well. */
		bool self = g->bdf == bdf;
		if (g->msix && !g->retired && g->gone && below(s, g, bdf)) {
			/* Out of reach of its registers: its table stays where it
			 * was, written again once forwarded there again. */
			vmsi_table_place_dark(s, hw, g);     /* unplaced: out of view where it was last seen */
			bool was = g->dark;
			g->dark = g->blind || !vmsi_reaches(s, hw, g);
			if (was && !g->dark)
				g->held = VMSI_HELD_ENTRIES;
		} else if (g->msix && !g->retired && !g->gone && (self || below(s, g, bdf))) {
			uint64_t from = g->table_pa;
			bool dec = self ? on && vmsi_forwarded(s, hw, g) : vmsi_decoding(s, hw, g);
			vmsi_hold(g, from, vmsi_table_place(s, hw, g, dec));
		}
	}
	s->held_bridge = 0;
	if (on)
		hw->cfg_write(hw->ctx, bdf, CFG_COMMAND, 2, hw->cfg_read(hw->ctx, bdf, CFG_COMMAND, 2) | CMD_MEM);
	vmsi_release(s, d, hw);
	return true;
}
