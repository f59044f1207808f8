/* Starting the guest, the one call boot/ makes after bringing up the CPUs:
 * the guest's side (guest/setup.c), then the VMX structures (EPT, the MSR
 * and I/O bitmaps, the posted-interrupt descriptors and the PID-pointer
 * table, the VMCS control words), the interrupt model's run time, and every
 * CPU launches its vCPU. */
#ifndef VMX_SETUP_H
#define VMX_SETUP_H
#include "../lib/types.h"
#include "../lib/boot_info.h"
#include "../lib/acpi.h"
#include "../lib/options.h"
#include "caps.h"
#include "tiers.h"

struct percpu;

/* What boot/ found and chose. Kept by reference: the exit handlers read
 * the memory map, the ACPI tables and the capabilities for the whole run. */
struct vmx_start {
	struct boot_info *bi;            /* memory map, RSDP, the guest's kernel, initrd and command line */
	const struct acpi_info *acpi;    /* the firmware's tables, parsed */
	const struct hv_options *opts;
	const struct vmx_caps *caps;     /* the boot CPU's, decoded */
	const struct hv_tiers *tiers;
	/* The CPU kept for the timer service (housekeeping=), or NULL, and how
	 * boot/ hands it its work (it waits parked in VMX root operation). */
	const struct percpu *housekeeper;
	void (*housekeeper_start)(void (*fn)(void), uint8_t wake_vector);
	/* How an AP waiting in its mailbox (halted) is given its launch. */
	void (*post_work)(struct percpu *p, void (*fn)(void));
	/* bochstest=1: the aid's exit hooks (testaid/bochstest.h), NULL: none. */
	const struct vmx_exit_aid *aid;
};

struct cpufeat;
/* The guest's CPU features as this CPU (CPUID, IA32_MISC_ENABLE under
 * an exception handler) and its VMX capabilities allow them
 * (cpuid_features_decide), into out[] (CPUFEAT_MAX); the count. Sets the
 * policy's fsrm and waitpkg. */
unsigned vmx_guest_features(const struct vmx_caps *caps, struct cpufeat *out);

/* Never returns: the boot CPU ends in its own vCPU. A setup error prints
 * its reason and ends the run (hv_fail). */
__noreturn void vmx_start_guest(const struct vmx_start *s);
#endif
