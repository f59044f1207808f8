/* The MSI capability (PCI 3.0, "MSI Capability Structure"; its bits in
 * model.h): its layout, and the device's registers from the guest's
 * (pci/msi.c). */
#ifndef PCI_MSI_H
#define PCI_MSI_H
#include "model.h"

/* MSI's layout: the offsets (from the capability) of data, mask and the
 * capability's length in bytes up to and including the mask. */
static inline unsigned msi_data_off(const struct vmsi_fn *f) { return (f->msi_ctl & MSI_64) ? 0xc : 0x8; }
static inline unsigned msi_mask_off(const struct vmsi_fn *f) { return msi_data_off(f) + 4; }
static inline unsigned msi_len(const struct vmsi_fn *f)
{
	return (f->msi_ctl & MSI_PVM) ? msi_mask_off(f) + 4 : msi_data_off(f) + 4;
}
static inline uint32_t msi_mask_bits(const struct vmsi_fn *f)
{
	unsigned n = 1u << MSI_MMC(f->msi_ctl);   /* mask bits past the vectors capable are reserved */
	return n >= 32 ? ~0u : (1u << n) - 1;
}

/* The device's MSI registers from the guest's: routed when enabled; a
 * refused MSI is masked (per-vector masking) or left disabled. */
void vmsi_msi_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f);
#endif
