/* The MSI capability emulated: the device's registers from the guest's. */
#include "msi.h"
#include "route.h"

/* The device's MSI registers from the guest's: routed when enabled; a
 * refused MSI is masked (per-vector masking) or left disabled. */
void vmsi_msi_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f)
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
	unsigned r = vmsi_route_fn(d, hw, f, 0, va, f->msi_data & 0xffff, 1u << (mme > 5 ? 5 : mme), &pa, &pd);
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
