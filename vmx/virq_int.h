/* Shared by the interrupt run time's files (vmx/virq*.c), not beyond. */
#ifndef VMX_VIRQ_INT_H
#define VMX_VIRQ_INT_H
#include "../lib/types.h"

struct vcpu;

#define INTR_BLOCK_STI_MOVSS 3u
#define INTR_BLOCK_NMI 8u

/* vmx/virq.c */
void virq_rvi_raise(uint8_t vec);
/* vec into the virtual IRR of the vCPU running here (RVI raised with VID). */
void virq_virr_set(struct vcpu *v, uint8_t vec);
/* Posts vec into the vCPU's own descriptor (processed at the entry). */
void virq_post_self(struct vcpu *v, uint8_t vec);
/* The posted vectors and ON dropped (INIT, and what came while it waited). */
void virq_posted_drop(struct vcpu *v);
/* INIT: the vCPU's whole interrupt state reset (before wait-for-SIPI). */
void virq_vcpu_reset(struct vcpu *v);
/* vmx/virq_startup.c: the guest's INITs and SIPIs recorded for this vCPU. */
bool virq_startup_due(struct vcpu *v);
void virq_startup_step(struct vcpu *v);
/* vmx/virq_apic.c: EOIs, level-triggered vectors, the software x2APIC. */
void virq_write_eoi_exit(struct vcpu *v);
void virq_level_accept(struct vcpu *v, uint8_t vec);
void virq_edge_accept(struct vcpu *v, uint8_t vec);
void virq_level_eoi_done(struct vcpu *v, int vec);
int virq_sw_pending(struct vcpu *v);
/* A self IPI with vector 'vec' (SELF IPI register): a legal vector into the
 * virtual IRR, an illegal one (0-15) an APIC error. */
void virq_self_ipi(struct vcpu *v, uint8_t vec);
void virq_sw_before_entry(struct vcpu *v);
/* vmx/virq_timer.c */
void virq_timer_check(struct vcpu *v);
/* The host's LAPIC timer interrupt (HOST_TIMER_VECTOR) exited: the served
 * timer's check, or with timer=deadline the guest's own expiry. */
void virq_timer_host_interrupt(struct vcpu *v);
void virq_host_timer_program(struct vcpu *v);
/* The guest's timer MSRs: 0 done, -1 #GP, 1 not a timer register. */
int virq_timer_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val);
void virq_timer_report(struct vcpu *v);
/* The timer as after INIT (the host serves it); the SVR written. */
void virq_timer_init(struct vcpu *v);
void virq_timer_svr_written(struct vcpu *v);
/* vmx/virq_ipi.c */
void virq_ipi_init(uint64_t *pid_table, uint32_t last_index);
int virq_icr_write(struct vcpu *v, uint64_t icr);
void virq_ipi_report(struct vcpu *v);
#endif
