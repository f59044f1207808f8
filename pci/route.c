/* A function's messages onto the interrupt router (apic/vioapic.c): the
 * guest's MSI address/data as an RTE, routed in compatibility or remappable
 * format, and the route's outcome counted. */
#include "route.h"

static const char *const vm_names[VM_COUNT - VR_COUNT] = {
	[VM_BAD_ADDR - VR_COUNT] = "not_an_msi_address", [VM_NO_IRTE - VR_COUNT] = "no_irte_left",
	[VM_NO_TABLE - VR_COUNT] = "msix_table_not_emulated", [VM_PARKED - VR_COUNT] = "parked",
	[VM_TABLE_OUTSIDE_BAR - VR_COUNT] = "msix_table_outside_bar",
	[VM_TABLE_OUTSIDE_WINDOW - VR_COUNT] = "msix_table_outside_bridge_window",
	[VM_TABLE_OVER_MEMORY - VR_COUNT] = "msix_table_over_memory",
	[VM_TABLE_OVER_CLAIMED - VR_COUNT] = "msix_table_over_claimed_range",
	[VM_TABLE_OVER_TABLE - VR_COUNT] = "msix_table_over_another_table",
	[VM_TABLE_BEYOND_MAP - VR_COUNT] = "msix_table_beyond_map",
	[VM_TABLE_NO_ROOM - VR_COUNT] = "msix_table_no_room",
	[VM_TABLE_BEYOND_PHYS - VR_COUNT] = "msix_table_beyond_phys_width",
};

const char *vmsi_refusal_name(unsigned r)
{
	return r < VR_COUNT ? vioapic_refusal_names[r] : r < VM_COUNT ? vm_names[r - VR_COUNT] : "?";
}

/* SDM Vol. 3A, "Message Address Register Format" / "Message Data Register
 * Format" onto the RTE's fields (82093AA), which the router judges; KVM's
 * MSI_EXT_DEST_ID puts destination bits 14:8 in address bits 11:5 (RTE
 * 55:49), only when offered. Bit 4 (remappable format) is never the
 * guest's: it owns no IRTEs. */
static unsigned msi_rte(const struct vioapic_dom *d, uint64_t addr, uint32_t data, uint64_t *rte)
{
	if ((addr >> 20) != 0xfee)
		return VM_BAD_ADDR;
	uint64_t ext = (addr >> 5) & 0x7f;
	if ((addr & BIT(4)) || (ext && !d->ext_dest))
		return VR_EXT_DEST;
	*rte = (uint64_t)(data & 0x7ff) | ((addr & BIT(2)) ? VIOAPIC_LOGICAL : 0) | ((data & BIT(15)) ? VIOAPIC_LEVEL : 0) |
	       (uint64_t)((addr >> 12) & 0xff) << 56 | ext << 49;
	return VR_NONE;
}

/* VT-d "Remappable Format" of an MSI: 31:20 0xFEE, 19:5 handle 14:0, 4 the
 * format (1), 3 SHV, 2 handle 15. */
unsigned vmsi_route(const struct vioapic_dom *d, uint64_t addr, uint32_t data, unsigned nvec, uint32_t index,
		    uint32_t src, struct vioapic_irte *irte, uint64_t *paddr, uint32_t *pdata)
{
	*paddr = 0;
	*pdata = 0;
	for (unsigned i = 0; irte && i < nvec; i++)
		irte[i] = (struct vioapic_irte){ 0, 0 };
	uint64_t rte = 0, prte = 0;
	unsigned r = msi_rte(d, addr, data, &rte);
	if (r != VR_NONE)
		return r;
	unsigned base = data & 0xff & ~(nvec - 1);   /* the device puts the message number in the low bits */
	for (unsigned i = 0; i < nvec; i++) {
		uint64_t v = (rte & ~0xffull) | (base + i);
		r = irte ? vioapic_route_ir(d, v, index + i, src, &prte, &irte[i]) : vioapic_route(d, v, &prte);
		if (r == VR_NONE)
			continue;
		for (unsigned j = 0; irte && j < nvec; j++)
			irte[j] = (struct vioapic_irte){ 0, 0 };
		return r;
	}
	if (irte) {
		*paddr = 0xfee00000u | (index & 0x7fff) << 5 | BIT(4) | (nvec > 1 ? BIT(3) : 0) | ((index & 0x8000) ? BIT(2) : 0);
		return VR_NONE;
	}
	*paddr = 0xfee00000u | (uint32_t)(VIOAPIC_DEST(prte)) << 12;
	*pdata = data & 0xc7ff;              /* vector, delivery mode, level, trigger */
	return VR_NONE;
}

/* The route of nvec vectors of function f from its IRTE 'slot' on (owned
 * remapping: the IRTEs written, present or not) or in compatibility format;
 * whom it reaches kept for the report. */
unsigned vmsi_route_fn(const struct vioapic_dom *d, const struct vmsi_hw *hw, struct vmsi_fn *f, uint32_t slot,
			 uint64_t addr, uint32_t data, unsigned nvec, uint64_t *pa, uint32_t *pd)
{
	struct vioapic_irte e[VMSI_MSI_IRTES] = { { 0, 0 } };
	unsigned r;
	if (!d->remap) {
		r = vmsi_route(d, addr, data, nvec, 0, 0, NULL, pa, pd);
	} else if (f->irte == VMSI_NO_IRTE) {
		*pa = 0;
		*pd = 0;
		return VM_NO_IRTE;
	} else {
		r = vmsi_route(d, addr, data, nvec, f->irte + slot, f->src, e, pa, pd);
		for (unsigned i = 0; hw->irte && i < nvec; i++)
			hw->irte(hw->ctx, f->irte + slot + i, &e[i]);
	}
	if (r == VR_NONE)
		f->reach = vioapic_reach(d, (uint32_t)(*pa >> 12) & 0xff, &e[0]);   /* SDM: destination 19:12 */
	return r;
}

void vmsi_count_route(struct vmsi *s, struct vmsi_fn *f, unsigned r, uint64_t va, uint32_t vd, uint64_t pa, uint32_t pd)
{
	f->last_refusal = (uint8_t)r;
	f->vaddr = va, f->vdata = vd;
	if (r == VM_BAD_ADDR && va == 0) {
		/* Address 0 is no message (PCI 3.0 has no "off" value but the
		 * enable bit; Linux writes an all-zero message to a vector it
		 * tears down, before clearing it): the caller keeps the device
		 * silent as for a refusal, which this is not. */
		f->last_refusal = VM_PARKED;
		f->parks++;
	} else if (r == VR_NONE) {
		f->routes++;
		f->paddr = pa, f->pdata = pd;
	} else {
		f->refusals++;
		s->refused_by[r]++;
	}
}
