/* The configuration-space filter, the top of the PCI model: mechanism #1's
 * ports, each access to a function dispatched (the MSI and MSI-X
 * capabilities' bytes emulated; a bridge's bus numbers and windows, a PF's
 * SR-IOV registers, a table's BAR handed down; the rest passed). */
#include "cfg.h"
#include "bar.h"
#include "bridge_write.h"
#include "fn.h"
#include "msi.h"
#include "msix.h"
#include "scan.h"
#include "sriov.h"

/* Is byte 'off' of the function's space emulated? MSI: message control
 * to the mask (not the ID and next pointer, not the pending bits);
 * MSI-X: message control. */
static bool emulated(const struct vmsi_fn *f, uint16_t off)
{
	if (f->msi && off >= f->msi + 2 && off < f->msi + msi_len(f))
		return true;
	return f->msix && off >= f->msix + 2 && off < f->msix + 4;
}

/* The guest's view of the emulated dword at 'dw' (aligned). */
static uint32_t vdword(const struct vmsi_fn *f, uint16_t dw)
{
	if (f->msix && dw == f->msix)
		return (uint32_t)f->msix_ctl << 16;
	unsigned r = dw - f->msi;
	if (r == 0)
		return (uint32_t)f->msi_ctl << 16;
	if (r == 4)
		return f->msi_addr;
	if (r == 8 && (f->msi_ctl & MSI_64))
		return f->msi_addr_hi;
	if (r == msi_data_off(f))
		return f->msi_data & 0xffff;
	return f->msi_mask;
}

uint32_t vmsi_cfg_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off, unsigned size)
{
	/* The guest reads the IDs: is the function the one taken (hot-swap)? */
	struct vmsi_fn *f = off < 4 ? vmsi_find(s, bdf) : NULL;
	if (f)
		vmsi_still_taken(s, hw, f);
	f = vmsi_seen(s, hw, bdf);
	uint32_t v = hw->cfg_read(hw->ctx, bdf, off, size);
	bool emu = false;
	for (unsigned i = 0; f && i < size; i++)
		if (emulated(f, (uint16_t)(off + i))) {
			uint16_t o = (uint16_t)(off + i);
			uint32_t b = (vdword(f, o & ~3) >> (8 * (o & 3))) & 0xff;
			v = (v & ~(0xffu << 8 * i)) | b << 8 * i;
			emu = true;
		}
	if (emu)
		s->cfg_emulated++;
	else
		s->cfg_passed++;
	return v;
}

/* A byte written into the guest's emulated dword at 'dw'; the read-only
 * bits stay as they are. */
static void vbyte(struct vmsi_fn *f, uint16_t dw, unsigned k, uint8_t b)
{
	uint32_t old = vdword(f, dw), sh = 8 * k;
	uint32_t v = (old & ~(0xffu << sh)) | (uint32_t)b << sh;
	if (f->msix && dw == f->msix) {
		f->msix_ctl = (uint16_t)((f->msix_ctl & ~MSIX_CTL_RW) | ((v >> 16) & MSIX_CTL_RW));
		return;
	}
	unsigned r = dw - f->msi;
	if (r == 0)
		f->msi_ctl = (uint16_t)((f->msi_ctl & ~MSI_CTL_RW) | ((v >> 16) & MSI_CTL_RW));
	else if (r == 4)
		f->msi_addr = v & ~3u;                 /* 1:0 reserved */
	else if (r == 8 && (f->msi_ctl & MSI_64))
		f->msi_addr_hi = v;
	else if (r == msi_data_off(f))
		f->msi_data = v & 0xffff;              /* 31:16 reserved */
	else
		f->msi_mask = v & msi_mask_bits(f);
}

void vmsi_cfg_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t bdf, uint16_t off,
		    unsigned size, uint32_t val)
{
	struct vmsi_fn *f = vmsi_seen(s, hw, bdf);
	if (f && !vmsi_still_taken(s, hw, f))
		f = vmsi_seen(s, hw, bdf);          /* found afresh, or not answering yet */
	if (!f && s->seen && !vmsi_was_seen(s, bdf)) {
		/* Not answering yet (absent, or still in Configuration Request
		 * Retry Status, which a root complex would retry until the
		 * function took it, untrapped): dropped, as a write to an
		 * absent function is. */
		s->not_ready_writes++;
		return;
	}
	bool emu = false;
	for (unsigned i = 0; f && i < size; i++)
		emu |= emulated(f, (uint16_t)(off + i));
	if (!emu) {
		s->cfg_passed++;
		if (vmsi_touches_bus(off, size) && vmsi_bus_write(s, d, hw, bdf, off, size, val))
			return;
		if (vmsi_touches_window(off, size) && vmsi_bridge_write(s, d, hw, bdf, off, size, val))
			return;
		/* A table that moves leaves its new page out of the guest's view
		 * at once (MSI-X enabled or not: the guest writes entries
		 * before enabling too); so does one whose BAR is resized. */
		if (f && f->sriov && !f->pf && (vmsi_touches(off, size, f->sriov + SRIOV_CTRL, 2) || vmsi_touches(off, size, f->sriov + SRIOV_VF_BAR0, 24)))
			vmsi_sriov_write(s, d, hw, f, off, size, val);
		else if (f && f->msix && !f->pf && (vmsi_touches_table_bar(f, off, size) || (off < CFG_COMMAND + 2 && off + size > CFG_COMMAND) ||
						    vmsi_touches_rebar(hw, f, off, size)))
			vmsi_bar_write(s, d, hw, f, off, size, val);
		else
			hw->cfg_write(hw->ctx, bdf, off, size, val);
		return;
	}
	s->cfg_emulated++;
	f->writes++;
	bool msi = false, msix = false;
	uint16_t old_x = f->msix_ctl;
	for (unsigned i = 0; i < size; i++) {
		uint16_t o = (uint16_t)(off + i);
		uint8_t b = (uint8_t)(val >> 8 * i);
		if (!emulated(f, o)) {
			hw->cfg_write(hw->ctx, bdf, o, 1, b);   /* the ID, next pointer, pending bits: read-only there */
			continue;
		}
		vbyte(f, o & ~3, o & 3, b);
		if (f->msix && (o & ~3) == f->msix)
			msix = true;
		else
			msi = true;
	}
	if (msi)
		vmsi_msi_apply(s, d, hw, f);
	if (msix) {
		bool on = !(old_x & MSIX_EN) && (f->msix_ctl & MSIX_EN);
		vmsi_msix_ctl_apply(s, d, hw, f, on, on, f->table_pa, -1);
	}
}

uint32_t vmsi_port_read(struct vmsi *s, const struct vmsi_hw *hw, uint16_t port, unsigned size)
{
	if (port == PCI_CFG_ADDR && size == 4)
		return s->cf8;
	if (port < PCI_CFG_DATA || !(s->cf8 & BIT(31))) {
		/* Not configuration space: 0xCF9 (reset control) and the other
		 * bytes of 0xCF8, and 0xCFC-0xCFF with the enable bit clear. */
		hw->io_write(hw->ctx, PCI_CFG_ADDR, 4, s->cf8);
		return hw->io_read(hw->ctx, port, size);
	}
	return vmsi_cfg_read(s, hw, (uint16_t)(s->cf8 >> 8), (uint16_t)((s->cf8 & 0xfc) | (port & 3)), size);
}

void vmsi_port_write(struct vmsi *s, const struct vioapic_dom *d, const struct vmsi_hw *hw, uint16_t port, unsigned size,
		     uint32_t val)
{
	if (port == PCI_CFG_ADDR && size == 4) {
		s->cf8 = val & 0x80fffffcu;         /* 30:24 and 1:0 read 0 */
		return;
	}
	if (port < PCI_CFG_DATA || !(s->cf8 & BIT(31))) {
		hw->io_write(hw->ctx, PCI_CFG_ADDR, 4, s->cf8);
		hw->io_write(hw->ctx, port, size, val);
		return;
	}
	vmsi_cfg_write(s, d, hw, (uint16_t)(s->cf8 >> 8), (uint16_t)((s->cf8 & 0xfc) | (port & 3)), size, val);
}
