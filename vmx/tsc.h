/* The guest's TSC: IA32_TSC and IA32_TSC_ADJUST per vCPU, as the SDM says
 * (Vol. 3B, "Time-Stamp Counter Adjustment"), through the VMCS TSC offset. */
#ifndef VMX_TSC_H
#define VMX_TSC_H
#include "vcpu.h"

/* On the vCPU's own CPU before its launch (its VMCS current): offset comp
 * (the skew of its package to the boot CPU's made up for, boot/smp.c; 0
 * within the boot CPU's package), IA32_TSC_ADJUST as the CPU holds it (if
 * it has one). */
void vcpu_tsc_init(struct vcpu *v, int64_t comp);
/* The guest's RDMSR and WRMSR of IA32_TSC_ADJUST (and WRMSR of IA32_TSC;
 * its reads pass through, the CPU adds the offset): 0 done, -1 #GP, 1 not
 * one of these MSRs. */
int vcpu_tsc_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val);
int vcpu_tsc_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val);
#endif
