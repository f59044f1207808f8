/* The interrupt model's report lines of one vCPU (the report itself:
 * vmx/report.c). */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "../apic/vapic.h"
#include "../lib/printk.h"

void virq_report(struct vcpu *v)
{
	uint32_t i = v->index;
	if (v->nmis_injected || v->nmis_host)
		pr_info("hvstat: cpu=%u nmi injected=%llu from_host=%llu\n", i, (unsigned long long)v->nmis_injected,
			(unsigned long long)v->nmis_host);
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	virq_timer_report(v);
	virq_ipi_report(v);
	for (unsigned k = 0; k < 2; k++)
		if (v->lvt_writes[k])
			pr_info("hvstat: cpu=%u lvt %s carried=%llu refused=%llu physical=0x%x guest=0x%x\n", i, k ? "thermal" : "cmci",
				(unsigned long long)v->lvt_writes[k], (unsigned long long)v->lvt_refused[k], v->lvt_phys[k],
				vapic_get(v->vapic, k ? APIC_LVT_THERM : APIC_LVT_CMCI));
	if (v->lvtpc_writes)
		pr_info("hvstat: cpu=%u lvtpc carried=%llu refused=%llu physical=0x%x guest=0x%x\n", i,
			(unsigned long long)v->lvtpc_writes, (unsigned long long)v->lvtpc_refused, v->lvtpc_phys,
			vapic_get(v->vapic, APIC_LVT_PMC));
	if (v->sipi_waits || v->inits_taken)
		pr_info("hvstat: cpu=%u startup inits=%u sipis=%u root_waits=%u stale_sipis=%llu held_inits=%llu nmis_dropped=%llu\n",
			i, v->inits_taken, v->sipis_taken, v->sipi_waits, (unsigned long long)v->sipis_stale,
			(unsigned long long)v->inits_held, (unsigned long long)v->nmis_dropped);
	int isr = -1;
	for (int w = 7; w >= 0 && isr < 0; w--) {
		uint32_t bits = vapic_get(v->vapic, APIC_ISR + 16 * w);
		if (bits)
			isr = w * 32 + 31 - __builtin_clz(bits);
	}
	if (v->pic_injected)
		pr_info("hvstat: cpu=%u pic_injected=%llu\n", i, (unsigned long long)v->pic_injected);
	pr_info("hvstat: cpu=%u vapic tpr=0x%02x ppr=0x%02x isr_top=%d irr_top=%d\n", i,
		vapic_get(v->vapic, APIC_TPR), vapic_get(v->vapic, APIC_PPR), isr, vapic_highest_irr(v->vapic));
	for (unsigned vec = 0; vec < 256; vec++)
		if (v->extint[vec])
			pr_info("hvstat: cpu=%u extint vector=0x%02x count=%u%s\n", i, vec, v->extint[vec],
				(v->eoi_exit[vec / 64] & BIT(vec % 64)) && !vmx_env.cfg.eoi_trap ? " level" : "");
}
