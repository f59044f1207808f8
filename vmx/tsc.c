/* See tsc.h. A guest that moves its TSC moves only its own vCPU's view:
 * the VMCS TSC offset (RDTSC, RDTSCP and RDMSR IA32_TSC add it, SDM Vol. 3C,
 * "Timestamp-Counter Offset and Multiplier"). The host's TSC, on which the
 * hypervisor's timers, the timer service, the hang check and the report run,
 * is never written. Its timer follows (vmx/virq_timer.c). */
#include "tsc.h"
#include "virq.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/printk.h"

#define CPUID7_EBX_TSC_ADJUST BIT(1)

void vcpu_tsc_init(struct vcpu *v, int64_t comp)
{
	uint32_t a, b, c, d;
	uint64_t adj = 0;
	cpuid_count(7, 0, &a, &b, &c, &d);
	v->tsc_adjust_exists = (b & CPUID7_EBX_TSC_ADJUST) && rdmsr_safe(MSR_IA32_TSC_ADJUST, &adj);
	v->tsc.offset = 0;
	v->tsc.adjust = v->tsc_adjust_exists ? adj : 0;
	if (comp && !(vmx_env.cfg.proc & VMX_PROC_TSC_OFFSETTING))
		pr_warn("hv: cpu%u: its package's TSC skew (%lld ticks) not made up for: no TSC offsetting\n", v->index,
			(long long)-comp);
	else
		/* Before the guest's first instruction: as if the CPU's TSC had
		 * started with the boot CPU's package. IA32_TSC_ADJUST reads as
		 * the CPU holds it (firmware's own word about this socket). */
		v->tsc.offset = (uint64_t)comp;
	vmcs_write(VMCS_TSC_OFFSET, v->tsc.offset);
}

int vcpu_tsc_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	if (msr != MSR_IA32_TSC_ADJUST)
		return 1;
	if (!v->tsc_adjust_exists)
		return -1;
	*val = v->tsc.adjust;
	return 0;
}

int vcpu_tsc_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	if (msr != MSR_IA32_TSC && msr != MSR_IA32_TSC_ADJUST)
		return 1;
	if (msr == MSR_IA32_TSC_ADJUST && !v->tsc_adjust_exists)
		return -1;
	if (!(vmx_env.cfg.proc & VMX_PROC_TSC_OFFSETTING)) {
		pr_warn("hv: cpu%u: guest write of MSR 0x%x dropped: no TSC offsetting\n", v->index, msr);
		return -1;
	}
	if (msr == MSR_IA32_TSC)
		guest_tsc_write(&v->tsc, rdtsc(), val);
	else
		guest_tsc_adjust_write(&v->tsc, val);
	vmcs_write(VMCS_TSC_OFFSET, v->tsc.offset);
	if (v->tsc_writes++ < 4)
		pr_info("hv: cpu%u: the guest moved its TSC (MSR 0x%x): offset %lld, IA32_TSC_ADJUST 0x%llx\n", v->index,
			msr, (long long)v->tsc.offset, (unsigned long long)v->tsc.adjust);
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL)
		virq_timer_tsc_moved(v);
	return 0;
}
