/* pci/sriov.c: see there. */
#ifndef PCI_SRIOV_H
#define PCI_SRIOV_H
#include "model.h"

/* PF f's SR-IOV registers written: its VFs' tables placed again (VF MSE,
 * VF BARs), or the VFs gone (VF Enable cleared). Internal (vmsi.c). */
void vmsi_sriov_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
		      uint16_t off, unsigned size, uint32_t val);
#endif
