/* pci/msix.c: see there. */
#ifndef PCI_MSIX_H
#define PCI_MSIX_H
#include "model.h"

/* Whether pa lies in a trapped page; then a 32-bit aligned access there:
 * a table entry's register emulated, anything else inside the function's
 * BAR (the PBA) passed, the rest dropped (reads all ones), counted. */
bool vmsi_trapped(const struct vmsi *s, uint64_t pa);
uint32_t vmsi_mem_read(struct vmsi *s, const struct vmsi_hw *hw, uint64_t pa);
void vmsi_mem_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint64_t pa, uint32_t val);

/* The two steps where the hypervisor holds decoding off (VF MSE, a
 * bridge's): f's table placed (its pages out of view) while nothing
 * decodes it, vmsi_hold says so (from: where it was before, why: the
 * place's refusal); vmsi_release, decoding back on, writes the held
 * functions' entries and MSI-X control. */
#define VMSI_HELD_ENTRIES 0xff
static inline void vmsi_hold(struct vmsi_fn *f, uint64_t from, unsigned why)
{
	if (!f->held)
		f->held_from = from;
	f->held = (uint8_t)(1 + why);
}
void vmsi_release(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw);
/* The device's MSI-X message control from the guest's; with relocate the
 * table placed again (placed >= 0: the caller did, its refusal) and its
 * entries written where it moved or when enabling (pci/msix.c). */
void vmsi_msix_ctl_apply(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
			 bool relocate, bool enabling, uint64_t old, int placed);
/* A write of an MSI-X function's table BAR, Resizable BAR control or
 * command register: the table may move (pci/msix.c). */
void vmsi_bar_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f,
		    uint16_t off, unsigned size, uint32_t val);
#endif
