/* The virtual interrupt model at run time (docs/interrupts.md): the host
 * owns the physical x2APIC; device and timer interrupts exit and are
 * re-posted; the guest's x2APIC is the virtual-APIC page plus the emulation
 * of the writes that exit; IPIs go through ipi/ over the PID-pointer table. */
#ifndef VMX_VIRQ_H
#define VMX_VIRQ_H
#include "../lib/types.h"

#include "vectors.h"

struct vcpu;
struct ipi_domain;
struct timer_service;

/* CONSOLE_VECTOR's work (vmx/vconsole.c sets it when it takes the UART's
 * receive interrupt), NULL: none. */
extern void (*virq_console_rx)(struct vcpu *v);
/* The housekeeping CPU's timer service, or NULL (each vCPU serves its own). */
extern struct timer_service *virq_timer_service;
/* Sets it up for every vCPU, served by the CPU with this APIC ID. */
void virq_timer_service_init(uint32_t apic_id, int64_t tsc_comp);   /* the housekeeper's package compensation */

/* Sets up the domain of all vCPUs: PID-pointer table, APIC ID maps. */
void virq_init(uint64_t *pid_table, uint32_t last_index);
extern struct ipi_domain virq_domain;

/* Per vCPU, before its first VM entry (on its own CPU). */
void virq_vcpu_start(struct vcpu *v);
/* Before every VM entry: posted vectors into the virtual APIC, a pending
 * NMI, the host timer; v->died set when with this vCPU every vCPU is
 * halted with interrupts off (the caller ends the run). */
void virq_before_entry(struct vcpu *v);
/* Every vCPU halted with IF = 0 (as its last entry said) or waiting for a
 * SIPI, and nothing on its way to wake one. */
bool virq_all_halted_off(void);
/* bochstest=1: vec into the virtual IRR of the vCPU running here, RVI raised. */
void virq_test_virr(struct vcpu *v, uint8_t vec);
/* After the guest's INIT: the virtual APIC and timer as after INIT. */
void virq_vcpu_init(struct vcpu *v);
/* At its creation: the vCPU's MSR bitmap, a copy of 'shared' with
 * timer=apicv (IA32_TSC_DEADLINE's interception follows its LVT), else
 * 'shared' itself. */
void virq_timer_msr_bitmap(struct vcpu *v, uint8_t *shared);

/* Exit handlers of the model. */
void exit_hlt(struct vcpu *v);
void exit_preemption_timer(struct vcpu *v);
void exit_intr_window(struct vcpu *v);
void exit_external_intr(struct vcpu *v);
void exit_virtualized_eoi(struct vcpu *v);
void exit_nmi_window(struct vcpu *v);
void exit_apic_write(struct vcpu *v);
void exit_exception_nmi(struct vcpu *v);
/* vmx/virq_startup.c */
void exit_init(struct vcpu *v);
void exit_sipi(struct vcpu *v);
/* The last step before a VM entry (and the launch): a vCPU that waits for
 * SIPI (virtual model) waits in root mode until its SIPI is recorded. */
void virq_startup_wait(struct vcpu *v);
/* The guest moved its TSC (vmx/tsc.c): its timer follows. */
void virq_timer_tsc_moved(struct vcpu *v);
/* Intercepted x2APIC and TSC-deadline MSRs: 0 done, -1 #GP, 1 not an MSR of the model. */
int virq_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val);
int virq_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val);
/* KVM_HC_SEND_IPI from vCPU v. */
int64_t virq_pv_send_ipi(struct vcpu *v, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr);
/* Posts of 'vector' into the vCPU with x2APIC ID 'apic_id'; -1 if none. */
int64_t virq_vec_posts(uint32_t apic_id, uint32_t vector);
/* An NMI taken in root mode: kept for the guest of a vCPU's core, counted
 * and ignored elsewhere; true (handled) always. */
bool virq_nmi_in_root(void);
extern uint64_t virq_nmis_ignored;
extern uint32_t virq_hangs;   /* stuck vCPUs the hang check found */
/* An 8259 (ExtINT) vector for the vCPU, injected when it can take one. */
void virq_pic_queue(struct vcpu *v, uint8_t vec);
bool virq_pic_pending(const struct vcpu *v);
/* Something waits for the guest's interrupt window (an 8259 vector, a
 * deferred console interrupt): interrupt-window exiting stays on. */
bool virq_window_wanted(const struct vcpu *v);
/* The current VMCS's guest can take an interrupt at the entry (RFLAGS.IF
 * = 1, no blocking by STI or MOV SS). */
bool virq_guest_interruptible(void);
/* Report lines of one vCPU. */
void virq_report(struct vcpu *v);
/* The summarised report's timer line: each timer figure summed over the n
 * vCPUs vcpus[index[0..n-1]] (the same accounting as each vCPU's line). */
void virq_timer_summary(const uint32_t *index, uint32_t n);
/* The hang check (hangcheck=SECONDS), at every exit of every vCPU: once a
 * second, the other vCPUs are sampled; one stuck with an interrupt pending
 * is described as seen from here and kicked, and describes its own VMCS
 * state at the exit that follows. */
void virq_hang_init(uint32_t seconds);
void virq_hang_exit(struct vcpu *v, uint64_t now);
/* The hang check's VMX-preemption timer expired: v made no exit for
 * hangcheck= seconds; diagnosed (once an episode) when a vector waits. */
void virq_hang_watchdog(struct vcpu *v);
/* The VMX-preemption timer's value (the tier's, capped by the hang check's). */
void virq_preempt_write(struct vcpu *v, uint64_t ticks);
/* What vCPU v was served without an exit of its own, so far: vectors
 * posted into its descriptor, notifications sent to it, timer expiries
 * posted, EOIs the guest signalled through PV EOI. */
struct virq_served { uint64_t posts, notifies, timer_posts, pv_eois; };
void virq_served(struct vcpu *v, struct virq_served *out);
/* The timer accounting holds: armed = replaced + fired + pending, every
 * unmasked expiry delivered (true in the partition model). */
bool virq_timer_balanced(struct vcpu *v);
#endif
