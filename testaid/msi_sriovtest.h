/* iommutest=sriov (test aid; QEMU 10 q35 + intel-iommu,intremap=on and an
 * SR-IOV device such as igb; TCG, no VMX, no guest): an SR-IOV PF's VFs
 * enabled the way Linux's sriov_enable does it, through the MSI trap over
 * segment 0's ECAM (pci/, as msi_trap_exit emulates the guest's
 * accesses), and a VF's MSI-X found at the first access to it, trapped,
 * programmed through the trapped table and routed through one of the
 * hypervisor's IRTEs, the VF's interrupt arriving; then VF Enable cleared:
 * the VF gone, its table's page given back. */
#ifndef VMX_MSI_SRIOVTEST_H
#define VMX_MSI_SRIOVTEST_H
#include "../lib/types.h"

struct acpi_info;
struct memmap;
/* One "iommutest: sriov: ..." line a step; true when every check passed. */
bool msi_sriovtest(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id);
#endif
