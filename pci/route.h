/* pci/route.c: see there. */
#ifndef PCI_ROUTE_H
#define PCI_ROUTE_H
#include "model.h"

const char *vmsi_refusal_name(unsigned r);
/* The device's address/data for the guest's, nvec consecutive vectors
 * (multiple message enable): VR_NONE, or a refusal (VR_*, VM_BAD_ADDR).
 * irte NULL: compatibility format, physical destination mode, RH 0. Else
 * owned remapping: the nvec IRTEs from 'index' (source check 'src', the
 * function's, VMSI_SRC_*; not present when refused) in irte[], and the
 * device's remappable-format address/data: the handle 'index', SHV with
 * subhandle 0 when nvec > 1 (the device puts its message number in the
 * data's low bits: index + message). Pure. */
unsigned vmsi_route(const struct vioapic_dom *d, uint64_t addr, uint32_t data, unsigned nvec, uint32_t index,
		    uint32_t src, struct vioapic_irte *irte, uint64_t *paddr, uint32_t *pdata);
/* The route of nvec vectors of function f from its IRTE 'slot' on (owned
 * remapping: the IRTEs written through hw->irte) or in compatibility format;
 * whom it reaches kept on f for the report. */
unsigned vmsi_route_fn(const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f, uint32_t slot,
		       uint64_t addr, uint32_t data, unsigned nvec, uint64_t *pa, uint32_t *pd);
/* The route's outcome counted on f (and in s->refused_by for a refusal). */
void vmsi_count_route(struct vmsi *s, struct vmsi_fn *f, unsigned r, uint64_t va, uint32_t vd, uint64_t pa, uint32_t pd);
#endif
