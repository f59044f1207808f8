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
uint32_t hw_lvtpc(unsigned index);         /* the physical LVTPC the hypervisor last wrote on that CPU */
void hw_lvtpc_clear(void);                 /* every CPU's to ~0 (never written) */
uint32_t hw_lvt_fixed(unsigned index, unsigned k);   /* the physical LVT CMCI (k 0) or thermal (k 1) last written there */
void hw_lvt_fixed_clear(uint32_t max_lvt);  /* every CPU's to ~0; the local APIC's Max LVT Entry */
/* IPIs the CPU sent: count, and the last one. */
unsigned hw_sent(void);
uint32_t hw_sent_dest(unsigned n), hw_sent_icr(unsigned n);
uint64_t hw_msr(uint32_t msr);
/* INVEPTs executed on CPU 'cpu' (every type, since the start); the hook,
 * when set, runs in each (an INVEPT takes its time). */
unsigned hw_invepts(unsigned cpu);
extern void (*hw_invept_hook)(void);

/* An exit as the CPU would report it, and the handler run as vmx/exit.c does
 * (the handler, then virq_before_entry). */
void hw_exit_external(struct vcpu *v, uint8_t vec);

/* timer=apicv on a CPU with APIC-timer virtualization (Intel ISE, "APIC-Timer
 * Virtualization"): hw_reset, then each vCPU launched as vmx/setup.c and
 * vmx/vcpu_launch.c do (its controls, its MSR bitmap, virq_vcpu_start). The
 * VMCS record is one VMCS: the last vCPU launched owns it.
 * The CPU, by the ISE's rules, for the guest's instructions below:
 *  - WRMSR/RDMSR exits when the MSR bitmap in the VMCS says so (the handler
 *    and virq_before_entry run, as vmx/exit.c does);
 *  - else, with tertiary control bit 8 "APIC-timer virtualization",
 *    WRMSR IA32_TSC_DEADLINE (0x6E0) writes the guest deadline shadow
 *    (0x204E) with the value and the guest deadline (0x2830) with it in
 *    host TSC (the TSC offset is 0 here), and RDMSR reads the shadow;
 *  - else the access reaches the physical MSR: for 0x6E0, the HOST's own
 *    TSC-deadline timer (counted: hw_guest_host_msr_writes);
 *  - at each instruction boundary in non-root operation, a guest deadline
 *    reached (TSC >= it, non-zero) fires with bit 8 on: both fields are
 *    cleared and the virtual timer vector (0x000A) is recorded in VIRR and
 *    RVI (virtual-interrupt delivery), whatever the guest's LVT says; a
 *    host TSC deadline reached raises the host's timer vector, which exits
 *    (external-interrupt exiting), and the MSR clears. */
void hw_reset_apicv(unsigned ncpus);   /* the TSC starts at 1000 */
/* timer=deadline on the same CPU without bit 8: a WRMSR or RDMSR of
 * IA32_TSC_DEADLINE the bitmap lets through reaches the physical MSR, the
 * host's timer (SDM Vol. 3A, "TSC-Deadline Mode": it fires when the TSC
 * reaches it, then reads 0; writing 0 disarms). Root mode runs with
 * interrupts off: a deadline reached there leaves the vector requested (the
 * IRR: lapic_requested) and it exits at the guest's next instruction. */
void hw_reset_deadline(unsigned ncpus);   /* the TSC starts at 1000 */
/* An emulator that recognizes a requested interrupt late (Bochs 3.0 defect
 * 2: a guest entered with IF = 0 runs on until its STI): while set, the
 * guest's instructions do not exit for it. */
extern bool hw_irq_late;
int hw_guest_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val);   /* 0, or -1 (#GP) */
/* The same, where the WRMSR exits and the TSC reaches 'tsc' in root mode
 * before its handler runs. */
int hw_guest_wrmsr_root_at(struct vcpu *v, uint32_t msr, uint64_t val, uint64_t tsc);
int hw_guest_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val);
void hw_run_to(struct vcpu *v, uint64_t tsc);   /* the guest runs until TSC = tsc */
unsigned hw_msr_exits(void);
unsigned hw_guest_host_msr_writes(void);        /* guest WRMSRs that reached the physical MSR */
unsigned hw_vtimer_fires(uint8_t vec);          /* the CPU's virtual-timer expiries, by vector */
/* A turn of a root-mode wait loop (cpu_wait_turn): runs this hook, which
 * stands for what another CPU does meanwhile. Without one, or past
 * HW_WAIT_TURNS_MAX turns since hw_reset, the wait would never end: the
 * test fails there with a message (test_bail), it does not hang. */
#define HW_WAIT_TURNS_MAX 1000000u
extern void (*hw_wait_hook)(void);
extern unsigned hw_wait_turns;
/* this_cpu() on the calling host thread from now on (NULL: the one that
 * hw_set_cpu sets); for tests where two threads play two CPUs. */
struct percpu;
void hw_thread_cpu(struct percpu *p);
/* The guest's RDTSC: the host TSC plus the VMCS TSC offset. */
uint64_t hw_guest_rdtsc(void);
/* A host TSC deadline reached in root mode fires when it is due at the
 * hypervisor's n-th MSR access after this is set to n (0: the first),
 * standing for the moment the LAPIC latches it; -1 (the default): at once,
 * as the exit begins. */
extern int hw_root_fire_after;
#endif
