/* pci/bridge_write.c: see there. */
#ifndef PCI_BRIDGE_WRITE_H
#define PCI_BRIDGE_WRITE_H
#include "model.h"

/* f's messages routed again as the guest last set them (f->bdf new: its
 * IRTEs' source ID follows), its capability registers written again at
 * f->bdf. */
void vmsi_reroute(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f);
/* Does [off, off + size) touch a bridge's secondary or subordinate bus
 * number? vmsi_bus_write: to a bridge the scan saw, the write passed and
 * the functions below followed (true); false: not such a bridge, nothing
 * done. */
bool vmsi_touches_bus(uint16_t off, unsigned size);
bool vmsi_bus_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		    unsigned size, uint32_t val);
/* A write that touches a bridge's command register or memory windows
 * (PCI-to-PCI Bridge Architecture: Memory Space Enable, memory base/limit
 * 0x20, prefetchable 0x24-0x2F)? vmsi_bridge_write: to a bridge the scan
 * saw, the write passed and the tables below judged again (forwarded, in
 * every window on the way), its Memory Space Enable held off meanwhile
 * where it forwards after the write; false: not such a bridge. */
bool vmsi_touches_window(uint16_t off, unsigned size);
bool vmsi_bridge_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		       unsigned size, uint32_t val);
#endif
