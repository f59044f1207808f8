/* pci/scan.c: see there. */
#ifndef PCI_SCAN_H
#define PCI_SCAN_H
#include "model.h"

/* One bus walk: every function's capabilities counted, nothing written. */
void vmsi_count(const struct vmsi_hw *hw, struct vmsi_need *n);
/* The IRTEs a scan with this need takes at most (room included). */
uint32_t vmsi_irtes_wanted(const struct vmsi_need *n);
/* A function the trap lets go of (vmsi_forget): its table's pages back,
 * its guest state as after reset, its BDF asked afresh at the next access.
 * vmsi_still_taken: is f still the function taken (its IDs as then)? Not:
 * let go of (a PF with its VFs), its IRTEs cleared, counted in swapped. */
void vmsi_forget(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f);
bool vmsi_still_taken(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f);
/* Function bdf at the guest's access to it: the trap's, or one that
 * answers for the first time taken into the trap now (NULL: none, or no
 * MSI and no MSI-X). */
struct vmsi_fn *vmsi_seen(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf);

/* Every bus, device and function through hw->cfg_read: each MSI and MSI-X
 * capability found, the guest's state taken from the physical one (MSI
 * disabled, every MSI-X entry masked physically), its table located.
 * Where s->fn is NULL the arrays are first sized from vmsi_count (with
 * the room above) and taken from hw->alloc; false: no memory (nothing
 * trapped, every function counted in untrapped). */
bool vmsi_scan(struct vmsi *s, const struct vmsi_hw *hw);
#endif
