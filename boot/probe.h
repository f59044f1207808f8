/* probe (an option): checks the machine and prints one verdict table
 * (item | value | ok / degraded: why / missing), then stops; never turns
 * translation on, never starts the guest, never fails for what is missing. */
#ifndef BOOT_PROBE_H
#define BOOT_PROBE_H
#include "../lib/types.h"
#include "../lib/acpi.h"
#include "../vmx/caps.h"
#include "../vmx/tiers.h"

struct probe_in {
	const struct acpi_info *acpi;
	const struct vmx_caps *caps;   /* caps->vmx false: no VMX, the VMX rows say missing */
	const struct hv_tiers *tiers;  /* what auto chose; NULL without VMX */
	uint32_t vmxon_ok;             /* CPUs where VMXON and VMXOFF succeeded */
};

/* The start of the probe: the SMI count and the TSC (needs the IDT and
 * this CPU's per-CPU area: rdmsr_safe). */
void probe_begin(void);
/* Prints the table and stops (hv_exit(true)). */
__noreturn void probe_finish(const struct probe_in *in);
#endif
