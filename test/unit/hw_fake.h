/* The machine under the interrupt run time (vmx/virq*.c) in host tests:
 * MSRs, the TSC, the current CPU, and a physical local APIC that follows
 * the SDM's rules, written out here (Vol. 3A, "Interrupt Acceptance for
 * Fixed Interrupts", "EOI Register", "Trigger Mode Register"):
 *  - an accepted interrupt sets its ISR bit, and its TMR bit when it was
 *    level-triggered (clears it when edge-triggered);
 *  - a vector is accepted only if its priority class (vector >> 4) is above
 *    the class of the highest in-service vector;
 *  - an EOI clears the HIGHEST ISR bit, whichever vector the software meant;
 *    if that vector's TMR bit is set, the EOI is broadcast to the IOAPICs,
 *    which then sample the line again (a still-asserted level line is
 *    delivered again).
 * Also the IOAPIC pins behind level vectors: a pin is asserted until its
 * device is serviced; an EOI broadcast for its vector re-delivers it while it
 * stays asserted (a duplicate, if the guest has not serviced it yet). */
#ifndef TEST_UNIT_HW_FAKE_H
#define TEST_UNIT_HW_FAKE_H
#include <stdint.h>
#include <stdbool.h>

struct vcpu;
extern uint64_t hw_tsc;

void hw_reset(unsigned ncpus);             /* fresh machine, ncpus vCPUs, VMCS record cleared */
struct vcpu *hw_vcpu(unsigned i);
void hw_set_cpu(unsigned index, bool launched);   /* this_cpu() from now on */

/* The physical local APIC of the current CPU. */
bool hw_lapic_isr(uint8_t vec);
bool hw_lapic_accept(uint8_t vec, bool level);   /* false: refused (priority) */
unsigned hw_lapic_eois(void);              /* EOIs the software wrote */
unsigned hw_eoi_broadcasts(uint8_t vec);   /* EOIs that reached the IOAPIC for vec */
/* IPIs the CPU sent: count, and the last one. */
unsigned hw_sent(void);
uint32_t hw_sent_dest(unsigned n), hw_sent_icr(unsigned n);
uint64_t hw_msr(uint32_t msr);

/* An exit as the CPU would report it, and the handler run as vmx/exit.c does
 * (the handler, then virq_before_entry). */
void hw_exit_external(struct vcpu *v, uint8_t vec);
#endif
