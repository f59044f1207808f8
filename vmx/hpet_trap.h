/* The HPET's trap (issue 35 item 8, hpet=auto|trap|pass): the page (or two
 * pages) holding the HPET's registers leave the guest's EPT; the guest's
 * accesses exit as EPT violations, are decoded (guest/mmio_width.c, 32 and
 * 64 bits) and carried out on the real HPET by apic/vhpet.c, which hides
 * FSB (MSI) delivery: a guest cannot make the HPET send an interrupt
 * message, so its timers interrupt through the (virtual) IOAPIC alone.
 * auto traps where some timer is FSB-capable; every exit is counted. */
#ifndef VMX_HPET_TRAP_H
#define VMX_HPET_TRAP_H
#include "../lib/types.h"

struct acpi_info;
struct vcpu;

/* Before the guest runs (virtual model): the HPET of the ACPI tables read,
 * its page out of the EPT at eptp as opt (enum hpet_opt) says, said. */
void hpet_trap_setup(const struct acpi_info *acpi, uint64_t eptp, int opt);
/* An EPT violation at gpa: true when it was the HPET page's (emulated,
 * RIP advanced; or an access not emulated: #GP). */
bool hpet_trap_exit(struct vcpu *v, uint64_t gpa);
/* hvstat: one line, when the HPET is trapped. */
void hpet_trap_report(void);
#endif
