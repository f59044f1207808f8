/* pci/bar.c: see there. */
#ifndef PCI_BAR_H
#define PCI_BAR_H
#include "model.h"

/* The size of BAR bir, sized at boot (decoding off meanwhile); 0: an I/O
 * or unusable BAR. */
uint64_t vmsi_bar_size(const struct vmsi_hw *hw, uint16_t bdf, unsigned bir);
/* The same for a PF's VF BAR bir (its SR-IOV capability at sriov). */
uint64_t vmsi_vf_bar_size(const struct vmsi_hw *hw, uint16_t pf, uint16_t sriov, unsigned bir);
/* Every VF BAR of PF f sized (vf_bar_size[]; the upper half of a 64-bit
 * one 0), unless VF MSE is on (sizing writes the BARs). */
void vmsi_vf_bars_size(const struct vmsi_hw *hw, struct vmsi_fn *f);
/* Resizable BAR: does [off, off + size) touch a control register of f's
 * capability for its table's BAR; the size the control register sets now
 * (VMSI_BAR_UNDEFINED where the capability does not list it). */
bool vmsi_touches_rebar(const struct vmsi_hw *hw, const struct vmsi_fn *f, uint16_t off, unsigned size);
#define VMSI_BAR_UNDEFINED 1              /* a size no table fits in: refused as outside its BAR */
uint64_t vmsi_rebar_size(const struct vmsi_hw *hw, const struct vmsi_fn *f);
/* Does [off, off + size) touch the BAR (both dwords of a 64-bit one) that
 * holds the function's MSI-X table? */
static inline bool vmsi_touches_table_bar(const struct vmsi_fn *f, uint16_t off, unsigned size)
{
	unsigned bir = f->msix_table & 7;
	if (!f->msix || bir > 5)
		return false;
	uint16_t bar = (uint16_t)(CFG_BAR0 + 4 * bir);
	return off + size > bar && off < bar + 8;
}
#endif
