/* pci/cfg.c: see there. */
#ifndef PCI_CFG_H
#define PCI_CFG_H
#include "model.h"

/* One configuration access (1, 2 or 4 bytes at off; off + size within the
 * dword as mechanism #1 gives it). */
uint32_t vmsi_cfg_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off, unsigned size);
void vmsi_cfg_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		    unsigned size, uint32_t val);
/* Ports 0xCF8-0xCFF as the guest uses them. */
uint32_t vmsi_port_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t port, unsigned size);
void vmsi_port_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t port, unsigned size,
		     uint32_t val);
#endif
