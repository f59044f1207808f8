// The project's VT-d remapping units (iodev/vtd.cc, tools/bochs-patch/):
// what the rest of Bochs calls. Without a "vtd:" line in the bochsrc every
// call below behaves as Bochs did before the patch.
#ifndef BX_IODEV_VTD_H
#define BX_IODEV_VTD_H

// The bochsrc directive "vtd: enabled=1, ..." (config.cc); false on a bad option.
bool bx_vtd_parse_option(const char *context, int num_params, char *params[]);
// After the devices are loaded (bx_devices_c::init) and at each reset.
void bx_vtd_init(void);
void bx_vtd_reset(unsigned type);

// A PCI function's memory access (requester ID rid = bus << 8 | devfunc)
// through the unit whose scope holds it: translated, blocked (a read then
// returns zeros and false: the read completed with an error, which the
// device answers as its specification says) or, with no unit enabled, done
// as DEV_MEM_READ_PHYSICAL (dma false) or DEV_MEM_READ_PHYSICAL_DMA (dma
// true) would. A DWORD write to 0xFEEx_xxxx is an interrupt request, as on
// the bus.
bool bx_vtd_dma_read(Bit16u rid, bx_phy_address addr, unsigned len, Bit8u *data, bool dma);
void bx_vtd_dma_write(Bit16u rid, bx_phy_address addr, unsigned len, Bit8u *data, bool dma);

// A message-signalled interrupt of rid (address 0xFEEx_xxxx): true when a
// unit took it (remapped, posted or blocked and recorded), false when it
// goes on as a compatibility-format message (no unit, interrupt remapping
// off, or passed through with CFI).
bool bx_vtd_msi(Bit16u rid, Bit64u addr, Bit32u data);

// The I/OxAPIC's message for a redirection-table entry: -1 when no unit
// takes it (deliver as before), else 1 (delivered, or blocked and
// recorded) or 0 (no local APIC accepted it).
int bx_vtd_ioapic(Bit64u rte);

// Device-interrupt latency: each interrupt a unit delivers to one physical
// destination (remapped, or posted to a descriptor's NDST) is stamped with
// the emulated time, by destination and vector. The CPU calls
// bx_vtd_taken for each external interrupt it takes through its IDT
// (vmx: 0 outside VMX operation, 1 in VMX root, 2 in non-root) while
// bx_vtd_stamps is not 0; the time from the stamp to the vector's first
// delivery to a handler (in root: none, that is the hypervisor's) is kept
// by source and kind and printed at exit ("bochs-vtd: latency ...").
extern unsigned bx_vtd_stamps;
void bx_vtd_taken(Bit32u apic_id, Bit8u vector, unsigned vmx);

// Before Bochs frees the guest's memory (bx_atexit): every cached context
// entry, IOTLB entry and IRTE compared with memory; one that differs is
// stale, counted on the "bochs-vtd: ... stale_*" lines.
void bx_vtd_exit_audit(void);

#endif
