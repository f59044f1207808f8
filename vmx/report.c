/* Printing the exit counters of every vCPU. */
#include "report.h"
#include "vcpu.h"
#include "virq.h"
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
		if (v->sleep_refused)
			pr_info("hvstat: cpu=%u sleep_refused=%llu\n", i, (unsigned long long)v->sleep_refused);
		if (v->xsetbv_refused)
			pr_info("hvstat: cpu=%u xsetbv_refused=%llu\n", i, (unsigned long long)v->xsetbv_refused);
		if (v->ept_hv_faults)
			pr_info("hvstat: cpu=%u ept_hv_faults=%llu\n", i, (unsigned long long)v->ept_hv_faults);
	}
	pr_info("hvstat: end total_exits=%llu\n", (unsigned long long)total);
	spin_unlock(&report_lock);
}
