/* SR-IOV: a PF's VF Enable, VF MSE and VF BARs written, its VFs' tables
 * placed again or let go of. */
#include "sriov.h"
#include "bar.h"
#include "msix.h"
#include "place.h"
#include "scan.h"

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

void vmsi_sriov_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
		      uint16_t off, unsigned size, uint32_t val)
{
	uint16_t reg = (uint16_t)(f->sriov + SRIOV_CTRL);
	uint16_t ctl = (uint16_t)hw->cfg_read(hw->ctx, f->bdf, reg, 2), want = merge16(ctl, reg, off, size, val);
	bool bars = vmsi_touches(off, size, f->sriov + SRIOV_VF_BAR0, 24);
	bool gone = (ctl & SRIOV_VFE) && !(want & SRIOV_VFE), decode = (want & SRIOV_VFE) && (want & SRIOV_MSE);
	bool on = !(ctl & SRIOV_VFE) && (want & SRIOV_VFE);
	/* VF Enable 0 -> 1: what decides where each VF decodes (NumVFs, ARI
	 * Capable Hierarchy, System Page Size, a VF Resizable BAR: the guest
	 * may change them only while VF Enable is clear) is taken afresh: the
	 * VF BARs sized again (VF MSE is off while VF Enable is), the VFs
	 * held before retired, each found again at the guest's first access. */
	if (on)
		vmsi_vf_bars_size(hw, f);
	/* As for a BAR (vmsi_bar_write): the VFs' memory stays undecoded
	 * until their tables' new places are out of every vCPU's view. */
	bool quiet = decode && (bars || !(ctl & SRIOV_MSE));
	if (quiet)
		hw->cfg_write(hw->ctx, f->bdf, reg, 2, want & ~SRIOV_MSE);
	if (!quiet || bars)
		hw->cfg_write(hw->ctx, f->bdf, off, size, quiet && vmsi_touches(off, size, reg, 2) ? val & ~(SRIOV_MSE << 8 * (reg - off)) : val);
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
			vmsi_msix_ctl_apply(s, d, hw, g, true, false, old, (int)why);
	}
	if (quiet) {
		hw->cfg_write(hw->ctx, f->bdf, reg, 2, want);
		vmsi_release(s, d, hw);
	}
}
