/* Printing the exit counters of every vCPU. */
#include "report.h"
#include "vcpu.h"
#include "virq.h"
#include "../apic/pi.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"

static spinlock_t report_lock;

void report_print(const char *why)
{
	uint64_t total = 0;
	spin_lock(&report_lock);
	pr_info("hvstat: begin why=%s cpus=%u\n", why, ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *v = vcpus[i];
		if (!v)
			continue;
		pr_info("hvstat: cpu=%u exits=%llu\n", i, (unsigned long long)v->exits_total);
		total += v->exits_total;
		for (uint32_t r = 0; r < EXIT_REASON_MAX; r++)
			if (v->exits[r])
				pr_info("hvstat: cpu=%u reason=%s code=%u count=%llu\n", i, exit_reason_name(r), r,
					(unsigned long long)v->exits[r]);
		for (uint32_t m = 0; m < v->msr_stats.n; m++)
			pr_info("hvstat: cpu=%u msr=0x%x reads=%u writes=%u\n", i, v->msr_stats.e[m].key,
				v->msr_stats.e[m].reads, v->msr_stats.e[m].writes);
		for (uint32_t m = 0; m < v->io_stats.n; m++)
			pr_info("hvstat: cpu=%u port=0x%x reads=%u writes=%u\n", i, v->io_stats.e[m].key,
				v->io_stats.e[m].reads, v->io_stats.e[m].writes);
		virq_report(v);
		/* What the guest tried and was refused (docs/isolation.md). */
		const struct vcpu_denied *d = &v->denied;
		if (d->msr | d->vmx_insn | d->cr4 | d->apic_base | d->xsetbv | d->sleep | d->ept_hv_pages)
			pr_info("hvstat: cpu=%u denied msr=%llu vmx_insn=%llu cr4=%llu apic_base=%llu xsetbv=%llu sleep=%llu ept_hv_pages=%llu\n",
				i, (unsigned long long)d->msr, (unsigned long long)d->vmx_insn, (unsigned long long)d->cr4,
				(unsigned long long)d->apic_base, (unsigned long long)d->xsetbv,
				(unsigned long long)d->sleep, (unsigned long long)d->ept_hv_pages);
	}
	if (pid_test_spare) {   /* ipivtest=1: what the CPU's virtualized IPIs left in the spare descriptor */
		const struct pi_desc *s = pid_test_spare;
		pr_info("hvstat: ipivtest spare pir=%016llx%016llx%016llx%016llx on=%u sn=%u\n",
			(unsigned long long)s->pir[3], (unsigned long long)s->pir[2], (unsigned long long)s->pir[1],
			(unsigned long long)s->pir[0], s->control & PI_ON ? 1 : 0, s->control & PI_SN ? 1 : 0);
	}
	pr_info("hvstat: end total_exits=%llu\n", (unsigned long long)total);
	spin_unlock(&report_lock);
}
