/* Trapped MSI and MSI-X (vmsi.h): the configuration-space filter, the two
 * capabilities' emulation and the MSI-X table's. */
#include "vmsi.h"

static const char *const vm_names[VM_COUNT - VR_COUNT] = {
	[VM_BAD_ADDR - VR_COUNT] = "not_an_msi_address", [VM_NO_IRTE - VR_COUNT] = "no_irte_left",
	[VM_NO_TABLE - VR_COUNT] = "msix_table_not_emulated", [VM_PARKED - VR_COUNT] = "parked",
	[VM_TABLE_OUTSIDE_BAR - VR_COUNT] = "msix_table_outside_bar",
	[VM_TABLE_OUTSIDE_WINDOW - VR_COUNT] = "msix_table_outside_bridge_window",
	[VM_TABLE_OVER_MEMORY - VR_COUNT] = "msix_table_over_memory",
	[VM_TABLE_OVER_CLAIMED - VR_COUNT] = "msix_table_over_claimed_range",
	[VM_TABLE_OVER_TABLE - VR_COUNT] = "msix_table_over_another_table",
	[VM_TABLE_BEYOND_MAP - VR_COUNT] = "msix_table_beyond_map",
	[VM_TABLE_NO_ROOM - VR_COUNT] = "msix_table_no_room",
	[VM_TABLE_BEYOND_PHYS - VR_COUNT] = "msix_table_beyond_phys_width",
};

const char *vmsi_refusal_name(unsigned r)
{
	return r < VR_COUNT ? vioapic_refusal_names[r] : r < VM_COUNT ? vm_names[r - VR_COUNT] : "?";
}

/* SDM Vol. 3A, "Message Address Register Format" / "Message Data Register
 * Format" onto the RTE's fields (82093AA), which the router judges; KVM's
 * MSI_EXT_DEST_ID puts destination bits 14:8 in address bits 11:5 (RTE
 * 55:49), only when offered. Bit 4 (remappable format) is never the
 * guest's: it owns no IRTEs. */
static unsigned msi_rte(const struct vioapic_dom *d, uint64_t addr, uint32_t data, uint64_t *rte)
{
	if ((addr >> 20) != 0xfee)
		return VM_BAD_ADDR;
	uint64_t ext = (addr >> 5) & 0x7f;
	if ((addr & BIT(4)) || (ext && !d->ext_dest))
		return VR_EXT_DEST;
	*rte = (uint64_t)(data & 0x7ff) | ((addr & BIT(2)) ? VIOAPIC_LOGICAL : 0) | ((data & BIT(15)) ? VIOAPIC_LEVEL : 0) |
	       (uint64_t)((addr >> 12) & 0xff) << 56 | ext << 49;
	return VR_NONE;
}

/* VT-d "Remappable Format" of an MSI: 31:20 0xFEE, 19:5 handle 14:0, 4 the
 * format (1), 3 SHV, 2 handle 15. */
unsigned vmsi_route(const struct vioapic_dom *d, uint64_t addr, uint32_t data, unsigned nvec, uint32_t index,
		    uint32_t src, struct vioapic_irte *irte, uint64_t *paddr, uint32_t *pdata)
{
	*paddr = 0;
	*pdata = 0;
	for (unsigned i = 0; irte && i < nvec; i++)
		irte[i] = (struct vioapic_irte){ 0, 0 };
	uint64_t rte = 0, prte = 0;
	unsigned r = msi_rte(d, addr, data, &rte);
	if (r != VR_NONE)
		return r;
	unsigned base = data & 0xff & ~(nvec - 1);   /* the device puts the message number in the low bits */
	for (unsigned i = 0; i < nvec; i++) {
		uint64_t v = (rte & ~0xffull) | (base + i);
		r = irte ? vioapic_route_ir(d, v, index + i, src, &prte, &irte[i]) : vioapic_route(d, v, &prte);
		if (r == VR_NONE)
			continue;
		for (unsigned j = 0; irte && j < nvec; j++)
			irte[j] = (struct vioapic_irte){ 0, 0 };
		return r;
	}
	if (irte) {
		*paddr = 0xfee00000u | (index & 0x7fff) << 5 | BIT(4) | (nvec > 1 ? BIT(3) : 0) | ((index & 0x8000) ? BIT(2) : 0);
		return VR_NONE;
	}
	*paddr = 0xfee00000u | (uint32_t)(VIOAPIC_DEST(prte)) << 12;
	*pdata = data & 0xc7ff;              /* vector, delivery mode, level, trigger */
	return VR_NONE;
}

/* The route of nvec vectors of function f from its IRTE 'slot' on (owned
 * remapping: the IRTEs written, present or not) or in compatibility format;
 * whom it reaches kept for the report. */
static unsigned route_fn(const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f, uint32_t slot,
			 uint64_t addr, uint32_t data, unsigned nvec, uint64_t *pa, uint32_t *pd)
{
	struct vioapic_irte e[VMSI_MSI_IRTES] = { { 0, 0 } };
	unsigned r;
	if (!d->remap) {
		r = vmsi_route(d, addr, data, nvec, 0, 0, NULL, pa, pd);
	} else if (f->irte == VMSI_NO_IRTE) {
		*pa = 0;
		*pd = 0;
		return VM_NO_IRTE;
	} else {
		r = vmsi_route(d, addr, data, nvec, f->irte + slot, f->src, e, pa, pd);
		for (unsigned i = 0; hw->irte && i < nvec; i++)
			hw->irte(hw->ctx, f->irte + slot + i, &e[i]);
	}
	if (r == VR_NONE)
		f->reach = vioapic_reach(d, (uint32_t)(*pa >> 12) & 0xff, &e[0]);   /* SDM: destination 19:12 */
	return r;
}

struct vmsi_fn *vmsi_find(struct vmsi *s, uint16_t bdf)
{
	for (uint32_t i = 0; i < s->nfn; i++)
		if (s->fn[i].bdf == bdf && !s->fn[i].gone && !s->fn[i].retired)   /* a gone function's BDF may be another's now */
			return &s->fn[i];
	return NULL;
}

void vmsi_count_route(struct vmsi *s, struct vmsi_fn *f, unsigned r, uint64_t va, uint32_t vd, uint64_t pa, uint32_t pd)
{
	f->last_refusal = (uint8_t)r;
	f->vaddr = va, f->vdata = vd;
	if (r == VM_BAD_ADDR && va == 0) {
		/* Address 0 is no message (PCI 3.0 has no "off" value but the
		 * enable bit; Linux writes an all-zero message to a vector it
		 * tears down, before clearing it): the caller keeps the device
		 * silent as for a refusal, which this is not. */
		f->last_refusal = VM_PARKED;
		f->parks++;
	} else if (r == VR_NONE) {
		f->routes++;
		f->paddr = pa, f->pdata = pd;
	} else {
		f->refusals++;
		s->refused_by[r]++;
	}
}

/* MSI's layout: the offsets (from the capability) of data, mask and the
 * capability's length in bytes up to and including the mask. */
static unsigned msi_data_off(const struct vmsi_fn *f) { return (f->msi_ctl & MSI_64) ? 0xc : 0x8; }
static unsigned msi_mask_off(const struct vmsi_fn *f) { return msi_data_off(f) + 4; }
static unsigned msi_len(const struct vmsi_fn *f)
{
	return (f->msi_ctl & MSI_PVM) ? msi_mask_off(f) + 4 : msi_data_off(f) + 4;
}
static uint32_t msi_mask_bits(const struct vmsi_fn *f)
{
	unsigned n = 1u << MSI_MMC(f->msi_ctl);   /* mask bits past the vectors capable are reserved */
	return n >= 32 ? ~0u : (1u << n) - 1;
}

/* The device's MSI registers from the guest's: routed when enabled; a
 * refused MSI is masked (per-vector masking) or left disabled. */
static void msi_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	uint16_t c = f->msi;
	uint16_t ctl = f->msi_ctl;
	bool pvm = ctl & MSI_PVM;
	if (!(ctl & MSI_EN)) {
		hw->cfg_write(hw->ctx, f->bdf, c + 2, 2, ctl);
		if (pvm)
			hw->cfg_write(hw->ctx, f->bdf, c + msi_mask_off(f), 4, f->msi_mask);
		return;
	}
	uint64_t va = f->msi_addr | ((ctl & MSI_64) ? (uint64_t)f->msi_addr_hi << 32 : 0), pa;
	uint32_t pd;
	/* The device sends no more vectors than it is capable of. */
	unsigned mme = MSI_MME(ctl) < MSI_MMC(ctl) ? MSI_MME(ctl) : MSI_MMC(ctl);
	unsigned r = route_fn(d, hw, f, 0, va, f->msi_data & 0xffff, 1u << (mme > 5 ? 5 : mme), &pa, &pd);
	vmsi_count_route(s, f, r, va, f->msi_data & 0xffff, pa, pd);
	if (r != VR_NONE) {
		if (pvm) {
			hw->cfg_write(hw->ctx, f->bdf, c + msi_mask_off(f), 4, msi_mask_bits(f));
			hw->cfg_write(hw->ctx, f->bdf, c + 2, 2, ctl);
		} else {
			hw->cfg_write(hw->ctx, f->bdf, c + 2, 2, ctl & ~MSI_EN);
		}
		return;
	}
	hw->cfg_write(hw->ctx, f->bdf, c + 4, 4, (uint32_t)pa);
	if (ctl & MSI_64)
		hw->cfg_write(hw->ctx, f->bdf, c + 8, 4, 0);
	hw->cfg_write(hw->ctx, f->bdf, c + msi_data_off(f), 2, pd);
	if (pvm)
		hw->cfg_write(hw->ctx, f->bdf, c + msi_mask_off(f), 4, f->msi_mask);
	hw->cfg_write(hw->ctx, f->bdf, c + 2, 2, ctl);
}

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
	unsigned r = route_fn(d, hw, f, (f->msi ? VMSI_MSI_IRTES : 0) + i, va, e->data, 1, &pa, &pd);
	if (count)
		vmsi_count_route(s, f, r, va, e->data, pa, pd);
	if (r != VR_NONE)
		return;
	hw->mem_write(hw->ctx, t, (uint32_t)pa);
	hw->mem_write(hw->ctx, t + 4, 0);
	hw->mem_write(hw->ctx, t + 8, pd);
	hw->mem_write(hw->ctx, t + 12, 0);
}


/* Is byte 'off' of the function's space emulated? MSI: message control
 * to the mask (not the ID and next pointer, not the pending bits);
 * MSI-X: message control. */
static bool emulated(const struct vmsi_fn *f, uint16_t off)
{
	if (f->msi && off >= f->msi + 2 && off < f->msi + msi_len(f))
		return true;
	return f->msix && off >= f->msix + 2 && off < f->msix + 4;
}

/* The guest's view of the emulated dword at 'dw' (aligned). */
static uint32_t vdword(const struct vmsi_fn *f, uint16_t dw)
{
	if (f->msix && dw == f->msix)
		return (uint32_t)f->msix_ctl << 16;
	unsigned r = dw - f->msi;
	if (r == 0)
		return (uint32_t)f->msi_ctl << 16;
	if (r == 4)
		return f->msi_addr;
	if (r == 8 && (f->msi_ctl & MSI_64))
		return f->msi_addr_hi;
	if (r == msi_data_off(f))
		return f->msi_data & 0xffff;
	return f->msi_mask;
}

uint32_t vmsi_cfg_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off, unsigned size)
{
	/* The guest reads the IDs: is the function the one taken (hot-swap)? */
	struct vmsi_fn *f = off < 4 ? vmsi_find(s, bdf) : NULL;
	if (f)
		vmsi_still_taken(s, hw, f);
	f = vmsi_seen(s, hw, bdf);
	uint32_t v = hw->cfg_read(hw->ctx, bdf, off, size);
	bool emu = false;
	for (unsigned i = 0; f && i < size; i++)
		if (emulated(f, (uint16_t)(off + i))) {
			uint16_t o = (uint16_t)(off + i);
			uint32_t b = (vdword(f, o & ~3) >> (8 * (o & 3))) & 0xff;
			v = (v & ~(0xffu << 8 * i)) | b << 8 * i;
			emu = true;
		}
	if (emu)
		s->cfg_emulated++;
	else
		s->cfg_passed++;
	return v;
}

/* A byte written into the guest's emulated dword at 'dw'; the read-only
 * bits stay as they are. */
static void vbyte(struct vmsi_fn *f, uint16_t dw, unsigned k, uint8_t b)
{
	uint32_t old = vdword(f, dw), sh = 8 * k;
	uint32_t v = (old & ~(0xffu << sh)) | (uint32_t)b << sh;
	if (f->msix && dw == f->msix) {
		f->msix_ctl = (uint16_t)((f->msix_ctl & ~MSIX_CTL_RW) | ((v >> 16) & MSIX_CTL_RW));
		return;
	}
	unsigned r = dw - f->msi;
	if (r == 0)
		f->msi_ctl = (uint16_t)((f->msi_ctl & ~MSI_CTL_RW) | ((v >> 16) & MSI_CTL_RW));
	else if (r == 4)
		f->msi_addr = v & ~3u;                 /* 1:0 reserved */
	else if (r == 8 && (f->msi_ctl & MSI_64))
		f->msi_addr_hi = v;
	else if (r == msi_data_off(f))
		f->msi_data = v & 0xffff;              /* 31:16 reserved */
	else
		f->msi_mask = v & msi_mask_bits(f);
}

/* The device's MSI-X message control from the guest's. With relocate (on
 * enabling, and after a write that may move the table: its BAR, memory
 * decoding turned on) the table is placed again, unless the caller did
 * (placed: its refusal); every entry is written (from the guest's, masked
 * unless routed) when enabling and wherever the table moved: what the
 * device holds at a new place (or what the guest wrote there while no
 * table was placed) never counts. */
static void msix_ctl_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
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

/* Does [off, off + size) touch the BAR (both dwords of a 64-bit one) that
 * holds the function's MSI-X table? */
static bool touches_table_bar(const struct vmsi_fn *f, uint16_t off, unsigned size)
{
	unsigned bir = f->msix_table & 7;
	if (!f->msix || bir > 5)
		return false;
	uint16_t bar = (uint16_t)(CFG_BAR0 + 4 * bir);
	return off + size > bar && off < bar + 8;
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
			msix_ctl_apply(s, d, hw, g, true, false, g->held_from, (int)why);
		g->held = 0;
	}
}

void vmsi_reroute(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	if (f->msi)
		msi_apply(s, d, hw, f);
	if (f->msix)
		msix_ctl_apply(s, d, hw, f, true, true, f->table_pa, -1);
}

/* A write to the table's BAR or to the command register of an MSI-X
 * function: the table may move. Where the device would decode a new place
 * before the hypervisor trapped it (decoding on across a BAR write, or
 * turned on now), decoding stays off until the new place is judged and its
 * pages are out of every vCPU's view: no other vCPU reaches the device's
 * real table in between. */
static void bar_or_cmd_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
			     uint16_t off, unsigned size, uint32_t val)
{
	uint16_t cmd = (uint16_t)hw->cfg_read(hw->ctx, f->bdf, CFG_COMMAND, 2), want = cmd;
	bool rebar = vmsi_touches_rebar(hw, f, off, size), bar = rebar || touches_table_bar(f, off, size);
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
	msix_ctl_apply(s, d, hw, f, true, false, old, (int)why);
}

/* The 16-bit register at reg as a write of size bytes at off leaves it. */
static uint16_t merge16(uint16_t cur, uint16_t reg, uint16_t off, unsigned size, uint32_t val)
{
	for (unsigned i = 0; i < size; i++) {
		unsigned o = off + i;
		if (o == reg || o == reg + 1u)
			cur = (uint16_t)((cur & ~(0xffu << 8 * (o - reg))) | ((val >> 8 * i) & 0xff) << 8 * (o - reg));
	}
	return cur;
}

static bool touches(uint16_t off, unsigned size, unsigned reg, unsigned len)
{
	return off + size > reg && off < reg + len;
}

void vmsi_sriov_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
		      uint16_t off, unsigned size, uint32_t val)
{
	uint16_t reg = (uint16_t)(f->sriov + SRIOV_CTRL);
	uint16_t ctl = (uint16_t)hw->cfg_read(hw->ctx, f->bdf, reg, 2), want = merge16(ctl, reg, off, size, val);
	bool bars = touches(off, size, f->sriov + SRIOV_VF_BAR0, 24);
	bool gone = (ctl & SRIOV_VFE) && !(want & SRIOV_VFE), decode = (want & SRIOV_VFE) && (want & SRIOV_MSE);
	bool on = !(ctl & SRIOV_VFE) && (want & SRIOV_VFE);
	/* VF Enable 0 -> 1: what decides where each VF decodes (NumVFs, ARI
	 * Capable Hierarchy, System Page Size, a VF Resizable BAR: the guest
	 * may change them only while VF Enable is clear) is taken afresh: the
	 * VF BARs sized again (VF MSE is off while VF Enable is), the VFs
	 * held before retired, each found again at the guest's first access. */
	if (on)
		vmsi_vf_bars_size(hw, f);
	/* As for a BAR (bar_or_cmd_write): the VFs' memory stays undecoded
	 * until their tables' new places are out of every vCPU's view. */
	bool quiet = decode && (bars || !(ctl & SRIOV_MSE));
	if (quiet)
		hw->cfg_write(hw->ctx, f->bdf, reg, 2, want & ~SRIOV_MSE);
	if (!quiet || bars)
		hw->cfg_write(hw->ctx, f->bdf, off, size, quiet && touches(off, size, reg, 2) ? val & ~(SRIOV_MSE << 8 * (reg - off)) : val);
	uint16_t me = (uint16_t)(f - s->fn + 1);
	for (uint32_t i = 0; i < s->nfn; i++) {
		struct vmsi_fn *g = &s->fn[i];
		if (g->pf != me || g->retired)
			continue;
		if (on) {
			vmsi_forget(s, hw, g);
			g->retired = true;
			continue;
		}
		if (!g->msix)
			continue;
		if (gone) {
			/* The VFs are gone (SR-IOV: VF Enable cleared): their tables'
			 * pages back, their state as after reset, found again at the
			 * guest's first access once enabled again. */
			vmsi_forget(s, hw, g);
			s->vfs_gone++;
			continue;
		}
		uint64_t old = g->table_pa;
		unsigned why = vmsi_table_place(s, hw, g, decode);
		if (quiet)
			vmsi_hold(g, old, why);              /* its entries once VF MSE is back */
		else
			msix_ctl_apply(s, d, hw, g, true, false, old, (int)why);
	}
	if (quiet) {
		hw->cfg_write(hw->ctx, f->bdf, reg, 2, want);
		vmsi_release(s, d, hw);
	}
}

void vmsi_cfg_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		    unsigned size, uint32_t val)
{
	struct vmsi_fn *f = vmsi_seen(s, hw, bdf);
	if (f && !vmsi_still_taken(s, hw, f))
		f = vmsi_seen(s, hw, bdf);          /* found afresh, or not answering yet */
	if (!f && s->seen && !vmsi_was_seen(s, bdf)) {
		/* Not answering yet (absent, or still in Configuration Request
		 * Retry Status, which a root complex would retry until the
		 * function took it, untrapped): dropped, as a write to an
		 * absent function is. */
		s->not_ready_writes++;
		return;
	}
	bool emu = false;
	for (unsigned i = 0; f && i < size; i++)
		emu |= emulated(f, (uint16_t)(off + i));
	if (!emu) {
		s->cfg_passed++;
		if (vmsi_touches_bus(off, size) && vmsi_bus_write(s, d, hw, bdf, off, size, val))
			return;
		if (vmsi_touches_window(off, size) && vmsi_bridge_write(s, d, hw, bdf, off, size, val))
			return;
		/* A table that moves leaves its new page out of the guest's view
		 * at once (MSI-X enabled or not: the guest writes entries
		 * before enabling too); so does one whose BAR is resized. */
		if (f && f->sriov && !f->pf && (touches(off, size, f->sriov + SRIOV_CTRL, 2) || touches(off, size, f->sriov + SRIOV_VF_BAR0, 24)))
			vmsi_sriov_write(s, d, hw, f, off, size, val);
		else if (f && f->msix && !f->pf && (touches_table_bar(f, off, size) || (off < CFG_COMMAND + 2 && off + size > CFG_COMMAND) ||
						    vmsi_touches_rebar(hw, f, off, size)))
			bar_or_cmd_write(s, d, hw, f, off, size, val);
		else
			hw->cfg_write(hw->ctx, bdf, off, size, val);
		return;
	}
	s->cfg_emulated++;
	f->writes++;
	bool msi = false, msix = false;
	uint16_t old_x = f->msix_ctl;
	for (unsigned i = 0; i < size; i++) {
		uint16_t o = (uint16_t)(off + i);
		uint8_t b = (uint8_t)(val >> 8 * i);
		if (!emulated(f, o)) {
			hw->cfg_write(hw->ctx, bdf, o, 1, b);   /* the ID, next pointer, pending bits: read-only there */
			continue;
		}
		vbyte(f, o & ~3, o & 3, b);
		if (f->msix && (o & ~3) == f->msix)
			msix = true;
		else
			msi = true;
	}
	if (msi)
		msi_apply(s, d, hw, f);
	if (msix) {
		bool on = !(old_x & MSIX_EN) && (f->msix_ctl & MSIX_EN);
		msix_ctl_apply(s, d, hw, f, on, on, f->table_pa, -1);
	}
}

uint32_t vmsi_port_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t port, unsigned size)
{
	if (port == PCI_CFG_ADDR && size == 4)
		return s->cf8;
	if (port < PCI_CFG_DATA || !(s->cf8 & BIT(31))) {
		/* Not configuration space: 0xCF9 (reset control) and the other
		 * bytes of 0xCF8, and 0xCFC-0xCFF with the enable bit clear. */
		hw->io_write(hw->ctx, PCI_CFG_ADDR, 4, s->cf8);
		return hw->io_read(hw->ctx, port, size);
	}
	return vmsi_cfg_read(s, hw, (uint16_t)(s->cf8 >> 8), (uint16_t)((s->cf8 & 0xfc) | (port & 3)), size);
}

void vmsi_port_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t port, unsigned size,
		     uint32_t val)
{
	if (port == PCI_CFG_ADDR && size == 4) {
		s->cf8 = val & 0x80fffffcu;         /* 30:24 and 1:0 read 0 */
		return;
	}
	if (port < PCI_CFG_DATA || !(s->cf8 & BIT(31))) {
		hw->io_write(hw->ctx, PCI_CFG_ADDR, 4, s->cf8);
		hw->io_write(hw->ctx, port, size, val);
		return;
	}
	vmsi_cfg_write(s, d, hw, (uint16_t)(s->cf8 >> 8), (uint16_t)((s->cf8 & 0xfc) | (port & 3)), size, val);
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
	if (b && !vmsi_still_taken(s, hw, b))
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
	if (b && !vmsi_still_taken(s, hw, b))
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
