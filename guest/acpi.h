/* The guest's ACPI view: copies of the RSDP, the root tables, the MADT and
 * the FADT. In the MADT every processor that is not a vCPU of the guest is
 * disabled, so the guest never tries to start a CPU it does not own (ACPI
 * 6.x, "Multiple APIC Description Table": Local APIC and Local x2APIC
 * structures, flags bit 0 Enabled, bit 1 Online Capable). The FADT sets
 * FORCE_APIC_PHYSICAL_DESTINATION_MODE (flags bit 19), so that the guest
 * sends physical-destination IPIs, the ones IPI virtualization handles. The
 * root tables leave out DMAR: the IOMMU is the hypervisor's. Everything
 * else is passed through. */
#ifndef GUEST_ACPI_H
#define GUEST_ACPI_H
#include "../lib/types.h"
#include "../lib/acpi.h"

/* Builds the copies in buf (at guest-physical buf_pa, buf_size bytes).
 * vcpu_ids: the x2APIC IDs the guest gets. Returns 0 with *rsdp_pa set to the
 * copy of the RSDP and *disabled the number of MADT processor entries
 * disabled, or -1 with err naming what does not fit or is missing. */
int acpi_guest_copy(const struct acpi_info *a, const uint32_t *vcpu_ids, uint32_t nvcpus, uint8_t *buf,
		    size_t buf_size, paddr_t buf_pa, paddr_t *rsdp_pa, uint32_t *disabled, char *err, size_t errlen);
/* Tables the last copy left out of the root tables (DMAR). */
uint32_t acpi_guest_hidden(void);
/* Renames the DSDT's \_S1_ .. \_S4_ objects (a NameOp defining them) to
 * XS1_ .. XS4_ in place and fixes its checksum, so the guest sees those
 * sleep states unsupported: their resume would run it outside VMX. Only
 * S5 stays. Returns how many were hidden. */
uint32_t acpi_hide_sleep_states(paddr_t dsdt);
#endif
