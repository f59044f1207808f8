/* iommutest=1, a test aid for machines without VMX (QEMU's TCG with
 * -device intel-iommu and -device edu): DMA remapping programmed as for a
 * guest, then QEMU's edu device (vendor 1234, device 11e8) driven through its
 * DMA engine against it: to and from a guest page (must work), from and to
 * a hypervisor page (must be blocked and recorded), above the guest's memory
 * and beyond the address width (blocked, recorded); then edu's MSI through
 * interrupt remapping. */
#ifndef IOMMU_EDUTEST_H
#define IOMMU_EDUTEST_H
#include "../lib/types.h"
#include "../lib/memmap.h"

/* Runs every check, printing one "iommutest:" line each; true when all pass.
 * Where the unit remaps interrupts (ECAP.IR) and uses the queue, also the
 * interrupt-remapping checks: edu's MSI in remappable format through IRTEs
 * from iommu/irte.c, seen arriving (or not) in the local APIC's IRR
 * (requested(vector)) of the CPU with apic_id. */
bool iommu_edu_test(const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id);
/* edu found (memory decode and bus mastering on): its bus/device/function,
 * or false. For the trapped-MSI check (testaid/msi_edutest.c). */
bool iommu_edu_locate(uint16_t *bdf);
/* edu raises its interrupt (as programmed) and takes it back. */
void iommu_edu_raise(void);
/* Whether 'vector' shows in this CPU's local APIC (requested) within
 * wait_us: the test aids' arrival check. */
bool iommu_vector_arrives(bool (*requested)(uint8_t), uint8_t vector, uint64_t wait_us);
#endif
