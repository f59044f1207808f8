/* DMA isolation: the hypervisor's use of VT-d. iommu_init decides from the
 * firmware's DMAR and iommu=, claims every unit's registers (so that EPT and
 * the guest's e820 leave them out: the guest reads the sink there);
 * iommu_enable builds the tables and turns translation on, before the
 * guest runs; faults are polled, counted and reported, never fatal. */
#ifndef IOMMU_IOMMU_H
#define IOMMU_IOMMU_H
#include "../lib/types.h"
#include "../lib/memmap.h"
#include "../lib/acpi.h"
#include "vtd.h"

/* Parses the DMAR (sized from the table: its arrays and the units from
 * page_alloc) and probes its units; qi (enum iommu_qi) says whether their
 * caches are invalidated through the queue where ECAP.QI offers it (auto)
 * or through the registers (off). iommu=off: nothing; auto without a DMAR,
 * with one that does not parse, or with a unit it cannot drive (no answer,
 * no table layout shared by all): "DMA isolation: off: <why>" said loudly
 * and 0; require in those cases: -1 with err. Names the devices the DMAR
 * lists that no unit covers (INCLUDE_PCI_ALL is per segment). Prints the
 * "DMA isolation:" line. */
int iommu_init(const struct acpi_info *acpi, int opt, int qi, struct memmap *mem, char *err, size_t errlen);
/* The units' fault events: a hypervisor vector, sent to the boot CPU
 * (iommu_fault_events_to, after iommu_enable); iommu_fault_interrupt reads the records when it arrives
 * (exit_external_intr in VMX root, or lib/trap.c's hook in a STI window),
 * so that the 8 or so records of a unit are read before they overflow. */
#define IOMMU_FAULT_VECTOR 0xf3
void iommu_fault_events_to(uint32_t apic_id);
void iommu_fault_interrupt(void);
/* Whether iommu_init found units to program. */
bool iommu_available(void);
/* Identity tables of everything but the hypervisor's memory (and the RMRRs),
 * translation on in every unit. Returns 0, or -1 with err. */
int iommu_enable(const struct memmap *mem, char *err, size_t errlen);
/* Interrupt remapping on in every unit with the table irt (see
 * vtd_enable_ir; eime: 32-bit destinations); iommu_iec_invalidate after
 * the table changes. 0, or -1 with err. */
int iommu_ir_enable(paddr_t irt, unsigned size_field, bool eime, char *err, size_t errlen);
int iommu_iec_invalidate(char *err, size_t errlen);
/* Whether the hypervisor owns interrupt remapping for the guest (intremap=auto or on
 * and every unit able): the virtual IOAPIC then writes remappable entries
 * and the guest is offered MSI_EXT_DEST_ID. */
bool iommu_ir_owned(void);
/* intremap=auto|on, after iommu_enable and before the APs start: where
 * every unit has ECAP.IR and the queue, and ECAP.EIM when need_eim (an APIC
 * ID above 255, or the host in x2APIC mode), and every IOAPIC of the MADT
 * has its source ID in the DMAR under a unit of segment 0: a table for
 * each PCI segment with units (VIOAPIC_PINS entries for each IOAPIC, then
 * msi_irtes for the trapped MSIs as the scan counted them, 2^16 in all at
 * most), interrupt remapping on in every unit, owned. Otherwise the
 * reason (a warning when 'asked', intremap=on) and nothing changes.
 * Returns whether it is owned. */
#define IOMMU_MAX_SEGS 16
bool iommu_ir_own(const struct acpi_info *acpi, bool need_eim, bool asked, uint32_t msi_irtes);
/* The guest's model turned out to be the partition one (irq=auto on a CPU
 * without virtual-interrupt delivery): remapping off again in every unit,
 * not owned, said with 'why'. */
void iommu_ir_release(const char *why);
/* With remapping owned: whether the IRTEs hold 32-bit destinations; IRTE
 * index written (hi, then lo with P) and the interrupt entry cache
 * invalidated in the unit that remaps its source (iommu_irte_owner; every
 * unit where that is not known); IOAPIC k's first IRTE index and its source ID. */
bool iommu_ir_eim(void);
void iommu_irte_write(uint16_t seg, uint32_t index, uint64_t lo, uint64_t hi);
/* The 128-bit store iommu_irte_write makes (lo: bits 63:0), atomic. */
void irte_store128(volatile uint64_t *e, uint64_t lo, uint64_t hi);
uint32_t iommu_ioapic_irte_base(uint32_t k);
/* IRTEs first .. first + count - 1 belong to a source that unit (a DRHD
 * index; -1: not known) remaps: iommu_irte_write invalidates that unit's
 * interrupt entry cache only (IRTE_ANY: every unit's). The DRHD that
 * remaps a PCI function on segment 0 named by the DMAR's way, a start bus
 * and the (device, function) path of the bridges down to it; -1: none,
 * or only the segment's INCLUDE_PCI_ALL unit takes it (issue 43 item 5:
 * a path not named in a scope may be known wrong, so every unit). */
#define IRTE_ANY 0xff
void iommu_irte_owner(uint16_t seg, uint32_t first, uint32_t count, int unit);
int iommu_unit_of_path(uint16_t seg, uint8_t start_bus, const uint8_t (*path)[2], uint32_t n);
/* The IRTEs after the IOAPICs' for the trapped MSIs and MSI-X entries
 * (pci/ takes 32 per MSI function and one per MSI-X entry): from
 * the base, this many in segment seg's table (0: no table there). */
uint32_t iommu_msi_irte_base(void);
uint32_t iommu_msi_irte_count(uint16_t seg);
/* Owned remapping where every unit posts (CAP.PI): posted IRTEs allowed. */
bool iommu_ir_posting(void);
/* What IRTE 'index' of the owned table holds (the test aids' checks). */
bool iommu_irte_present(uint16_t seg, uint32_t index);
uint32_t iommu_irte_dest(uint16_t seg, uint32_t index);
/* Its bits 127:64 (SID 79:64, SQ 81:80, SVT 83:82: the source check). */
uint64_t iommu_irte_hi(uint16_t seg, uint32_t index);
uint16_t iommu_ioapic_sid(uint32_t k);
/* Reads every unit's recorded faults: each logged and counted. Returns how
 * many were new; the last one in *last when last is not NULL. */
uint32_t iommu_poll_faults(struct vtd_fault *last);
/* "on", "off: no DMAR", ... for the banner and the platform report. */
const char *iommu_state_name(void);
/* hvstat: lines: the state, the units, the faults by reason. */
void iommu_report(void);
/* The units iommu_init probed, also where it then found them unusable
 * (for the probe, boot/probe.c): how many, of *ndrhd in the DMAR; unit i's
 * registers as the firmware left them. */
uint32_t iommu_probed_units(uint32_t *ndrhd);
const struct vtd_unit *iommu_unit(uint32_t i);
/* DMAR unit i's register range (2^size pages); false past the last. */
bool iommu_regs_range(uint32_t i, uint64_t *base, uint64_t *len);
/* The deepest table levels chosen (after iommu_enable), the units. */
int iommu_levels(void);
#endif
