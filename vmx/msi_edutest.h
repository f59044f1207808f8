/* iommutest=1's trapped-MSI check (QEMU with -device edu, no VMX, no
 * guest): edu's MSI capability programmed as a guest would program it,
 * through configuration mechanism #1, into apic/vmsi.c over the real ports
 * (vmx/msi_trap.c's physical side); the device's real registers must hold
 * the hypervisor's route, and edu's interrupt must arrive (or, refused,
 * not) in this CPU's local APIC IRR. */
#ifndef VMX_MSI_EDUTEST_H
#define VMX_MSI_EDUTEST_H
#include "../lib/types.h"

/* One "iommutest: msi-trap ..." line a check; true when all pass. Before
 * interrupt remapping is on (compatibility format). */
bool msi_edutest(bool (*requested)(uint8_t vector), uint32_t apic_id);
#endif
