/* iommutest=1's trapped-MSI check (QEMU with -device edu, no VMX, no
 * guest): edu's MSI capability programmed as a guest would program it,
 * through configuration mechanism #1, into pci/ over the real ports
 * (vmx/msi_trap.c's physical side); the device's real registers must hold
 * the hypervisor's route, and edu's interrupt must arrive (or, refused,
 * not) in this CPU's local APIC IRR. */
#ifndef VMX_MSI_EDUTEST_H
#define VMX_MSI_EDUTEST_H
#include "../lib/types.h"

struct acpi_info;
struct memmap;
/* One "iommutest: msi-trap ..." line a check; true when all pass. Before
 * interrupt remapping is on (compatibility format). The scan builds the
 * trap's wall over mem and the ACPI ranges; each MSI-X table it finds
 * above the identity map (OVMF puts the qemu-xhci's 64-bit BAR at
 * 0xe0_0000_0000) must be placed and its entries read through the
 * uncached mapping (one "iommutest: msix-high ..." line each). */
bool msi_edutest(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id);
/* iommutest=ioapic's trapped-MSI check, with interrupt remapping owned
 * (after testaid/irtest.c's): edu's MSI, programmed as a guest would, through
 * one of the hypervisor's IRTEs (the device in remappable format): to this
 * CPU (arrives), to the first CPU above APIC ID 255 through KVM's
 * MSI_EXT_DEST_ID (QEMU's trace shows the destination), SMI refused. */
bool msi_edutest_ir(const struct acpi_info *acpi, bool (*requested)(uint8_t vector), uint32_t apic_id);
/* The aids' prologue: DMA remapping on, the MSI trap's count (msi_trap_count),
 * interrupt remapping owned as intremap=on would (EIM where the host is in
 * x2APIC mode or a CPU has an APIC ID above 255: *need_eim; *far: the
 * first such CPU, 0: none), interrupts off. False, said, when it cannot. */
bool iommutest_own_remapping(const struct acpi_info *acpi, const struct memmap *mem, const char *aid, bool *need_eim,
			     uint32_t *far);
#endif
