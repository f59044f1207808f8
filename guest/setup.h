/* The guest's side of its start: what it is shown of the firmware and the
 * machine, its start-up memory, the idle policy; and, without VMX, the
 * native boot. vmx/setup.c calls the first two while it builds the VMCS. */
#ifndef GUEST_SETUP_H
#define GUEST_SETUP_H
#include "../lib/types.h"
#include "../lib/boot_info.h"
#include "../lib/acpi.h"
#include "boot.h"

/* The guest's ACPI: copies of the RSDP, the root tables and the MADT in
 * which only its vCPUs (cpus[]) are enabled, at GUEST_ACPI (when the
 * firmware has a MADT); the sleep states S1-S4 hidden; then its kernel,
 * initrd and zero page (guest_prepare). Returns 0, or -1 with err. */
int guest_setup(struct boot_info *bi, const struct acpi_info *acpi, struct guest_boot *gb, char *err, size_t errlen);

/* hlt=: whether the guest's HLT exits (and the hypervisor completes it)
 * instead of halting the core; prints the choice and why. 'virt': the
 * virtual interrupt model (in the partition model HLT is the guest's). */
bool guest_hlt_exits(int hlt_opt, bool virt, bool emulated, bool under_kvm);

/* novmx=linux: no VMX here (an emulator without it, an old or locked CPU),
 * so the machine goes to the Linux guest as it is: the same loader, zero
 * page and e820 (the hypervisor's memory stays reserved), the firmware's
 * ACPI tables, every CPU for Linux to start with its own INIT-SIPI (the
 * hypervisor started none). Nothing of the hypervisor runs afterwards. */
__noreturn void guest_start_native(struct boot_info *bi, const struct acpi_info *acpi, const char *why);
/* Whether a CPU with this x2APIC ID can be one of the guest's vCPUs. The
 * guest gets no interrupt remapping (the IOMMU is the hypervisor's, its
 * DMAR hidden), and Linux without it addresses APIC IDs up to 255 only (the
 * IOAPIC's and MSI's 8-bit destination): a vCPU above that would never
 * start. Such a CPU is kept from the guest and parked, with a message.
 * Where the hypervisor owns interrupt remapping (ir_owned, intremap=auto or on)
 * the guest is offered KVM's MSI_EXT_DEST_ID: 15-bit destinations, which
 * the virtual IOAPIC translates into IRTEs, so up to 32767. */
#define GUEST_MAX_APIC_ID     255u
#define GUEST_MAX_APIC_ID_EXT 32767u
static inline bool guest_apic_id_usable(uint32_t apic_id, bool ir_owned)
{
	return apic_id <= (ir_owned ? GUEST_MAX_APIC_ID_EXT : GUEST_MAX_APIC_ID);
}
#endif
