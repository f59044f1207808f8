/* Trapped MSI and MSI-X at run time (msi=trap, the virtual interrupt
 * model): the guest's PCI configuration ports 0xCF8-0xCFF exit and are
 * carried out by pci/, which emulates each function's MSI and MSI-X
 * capability and writes the device's real address/data itself; each MSI-X
 * table page leaves the guest's EPT and its accesses (EPT violations) are
 * decoded (guest/mmio.c) and emulated. */
#ifndef VMX_MSI_TRAP_H
#define VMX_MSI_TRAP_H
#include "../lib/types.h"

struct acpi_info;
struct vcpu;
struct vmsi_hw;
struct vioapic_dom;

/* Before the guest runs: every function scanned (MSI disabled, MSI-X
 * entries masked on the device), the tables' pages out of the EPT at eptp,
 * ports 0xCF8-0xCFF set in the I/O bitmaps a and b. */
void msi_trap_setup(const struct acpi_info *acpi, uint64_t eptp, uint8_t *io_a, uint8_t *io_b);
/* Before remapping ownership is decided (iommu_ir_own): the MCFG's
 * segments and each one's functions counted (nothing written). Returns
 * the IRTEs the most demanding segment wants (room included); why empty,
 * or what the trap cannot cover (a segment beyond reach, MCFG entries
 * past those kept): then intremap=auto does not own remapping. */
uint32_t msi_trap_count(const struct acpi_info *acpi, char *why, size_t whylen);
/* Whether port is one the trap owns (msi=trap). */
bool msi_trap_owns(uint16_t port);
uint32_t msi_trap_in(uint16_t port, unsigned size);
void msi_trap_out(uint16_t port, unsigned size, uint32_t val);
/* An EPT violation at gpa: true when it was a trapped MSI-X table page's
 * (emulated, RIP advanced; or #GP for an instruction not emulated). */
bool msi_trap_exit(struct vcpu *v, uint64_t gpa);
/* hvstat: one line per function the guest programmed, one summary. */
void msi_trap_report(void);
/* The physical side (ports, configuration mechanism #1, MMIO) for
 * pci/, also for the iommutest aid without a guest (no EPT). */
const struct vmsi_hw *msi_trap_hw(void);
/* What the guest's 0xCF8/0xCFC accesses are carried out through: segment
 * 0's ECAM side where the MCFG gives one, else the ports. */
const struct vmsi_hw *msi_trap_port_hw(void);
struct vmsi;
struct memmap;
/* The test aids' scan (iommutest, no VMX, no EPT): the trap's wall built
 * over 'mem' and the ACPI ranges as msi_trap_setup builds it, then s
 * scanned through msi_trap_hw() as at boot (tables above the identity map
 * mapped by lib/paging.c). */
void msi_trap_scan(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem);
/* The same through segment 0's physical side as the trap uses it: its
 * ECAM (extended configuration space, SR-IOV's capability) where the MCFG
 * gives one, else the ports; returns that side (iommutest=sriov). */
const struct vmsi_hw *msi_trap_scan_seg0(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem);
#endif
