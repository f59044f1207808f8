/* pci/bridge.c: see there. */
#ifndef PCI_BRIDGE_H
#define PCI_BRIDGE_H
#include "model.h"

/* The DMAR's way of naming function bdf (VT-d, "Device Scope Structure"):
 * the bus where its hierarchy starts and the (device, function) of each
 * bridge down to it, then its own, from the bridges the scan saw. Returns
 * the path's length, or 0 when it is longer than max or loops. */
uint32_t vmsi_scope_path(const struct vmsi *s, uint16_t bdf, uint8_t *start_bus, uint8_t (*path)[2], uint32_t max);
/* A function's name for its remapping unit: a VF's is its PF's (the unit
 * that remaps the PF remaps its VFs, wherever their routing IDs land). */
uint32_t vmsi_fn_scope_path(const struct vmsi *s, const struct vmsi_fn *f, uint8_t *start_bus, uint8_t (*path)[2],
			    uint32_t max);
/* A bridge seen by the scan (false: no room, not followed). */
bool vmsi_bridge_add(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf);
/* The bridge the scan saw at bdf (live: only one still forwarded to); NULL: none. */
struct vmsi_bridge *vmsi_bridge_named(struct vmsi *s, uint16_t bdf, bool live);
#endif
