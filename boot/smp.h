/* Starting the application processors. */
#ifndef BOOT_SMP_H
#define BOOT_SMP_H
#include "../lib/types.h"
#include "../lib/acpi.h"
#include "../lib/tsc_skew.h"

/* Copies the trampoline to 'page' (below 1 MiB) and starts every enabled CPU
 * of the MADT except the caller, one by one, with INIT-SIPI-SIPI. A CPU that
 * does not check in within timeout_us is named and left out. Returns the
 * number of CPUs online, the boot CPU included. */
uint32_t smp_start_aps(const struct acpi_info *acpi, paddr_t page, uint64_t cr3,
		       uint32_t max_cpus, uint64_t timeout_us, int64_t housekeeping);
/* The CPU kept from the guest for the timer service (housekeeping=APICID):
 * parked like the others, then given its work; NULL when none. */
extern struct percpu *smp_housekeeper;
/* Makes the housekeeper run fn (which never returns), in VMX root operation. */
void smp_housekeeper_start(void (*fn)(void), uint8_t wake_vector);
/* CPUs started but kept from the guest (smp=, MAX_CPUS). */
extern struct percpu *parked[];
extern uint32_t nparked;
struct vmx_caps;
/* Takes every parked CPU into VMX root operation and halts it there
 * (caps NULL: just halt). Returns how many are in VMX root operation. */
uint32_t smp_park(const struct vmx_caps *caps);
/* Work for every AP after it checked in; runs on the AP (see hv_main.c). */
void ap_main(void);
/* Runs fn on every online AP in turn, waiting for each; false on timeout. */
bool smp_run_on_aps(void (*fn)(void), uint64_t timeout_us);
/* Measures the TSC skew between the boot CPU and every other started CPU
 * (IA32_TSC_ADJUST already made equal within each package) and prints one
 * line; then one a package other than the boot CPU's: its skew, and where
 * it is certain the guest TSC offset its CPUs' vCPUs get (percpu tsc_comp). */
void smp_tsc_skew(void);
/* The package shift of the APIC IDs (CPUID 0x1F, 0xB, else CPUID.1), and
 * which source said it; a CPU's package (after smp_start_aps). */
unsigned smp_pkg_shift(const char **from);
uint32_t smp_pkg_of(uint32_t apic_id);
/* Gives an AP in its mailbox fn to run, and wakes it (it waits halted). */
#define SMP_WAKE_VECTOR 0xf1     /* KICK_VECTOR's (vmx/virq.h): a vector the hypervisor owns */
struct percpu;
void smp_post_work(struct percpu *p, void (*fn)(void));
/* What smp_tsc_skew found (for the probe): the largest offset, at which
 * APIC ID, how many of the other CPUs were measured. */
struct smp_skew_result { struct tsc_skew worst; uint32_t worst_id, measured, total, packages_made_up; };
extern struct smp_skew_result smp_skew;
#endif
