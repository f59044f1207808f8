/* Printing the exit counters of every vCPU. */
#include "report.h"
#include "vcpu.h"
#include "virq.h"
#include "vconsole.h"
#include "vioapic_trap.h"
#include "msi_trap.h"
#include "hpet_trap.h"
#include "ept.h"
#include "ept_live.h"
#include "../apic/pi.h"
#include "../iommu/iommu.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"
#include "../lib/string.h"
#include "../lib/tsc.h"
#include "../lib/cpu.h"
#include "../lib/hist.h"
#include "../lib/options.h"

static spinlock_t report_lock;

/* The published cost of one VM exit on hardware used for the projection:
 * 1,080 ns, the average MSR-write exit in the perf-kvm-stat figures of the
 * KVM PV EOI seed (Skylake server; 580 ns with KVM's fast path). */
#define REPORT_NS_PER_EXIT 1080u

/* TSC cycles this vCPU spent in the hypervisor, over all its exits. */
static uint64_t time_in_hv(const struct vcpu *v)
{
	uint64_t t = 0;
	for (uint32_t r = 0; r < EXIT_REASON_MAX; r++)
		t += v->exit_time[r].sum;
	return t;
}

static uint32_t report_cpus = REPORT_CPUS_AUTO;
static uint64_t sum_vals[MAX_CPUS], sum_scratch[MAX_CPUS];
static uint32_t sum_index[MAX_CPUS], sum_worst[MAX_CPUS];
static bool sum_detail[MAX_CPUS];

void report_cpus_set(uint32_t n)
{
	report_cpus = n;
}

static void summary_line(const char *what, uint32_t n)
{
	struct dist d;
	dist_of(sum_vals, n, sum_scratch, &d);
	pr_info("hvstat: summary %s total=%llu cpus=%u min=%llu median=%llu max=%llu max_cpu=%u\n", what,
		(unsigned long long)d.total, n, (unsigned long long)d.min, (unsigned long long)d.median,
		(unsigned long long)d.max, n ? sum_index[d.max_at] : 0);
}

/* On a large machine (more than REPORT_CPUS_AUTO_MAX vCPUs, reportcpus=auto,
 * or reportcpus=N) the report is a summary over every vCPU (each figure's
 * total, min, median, max and the vCPU with the most), then the whole
 * per-vCPU detail of the few with the most exits: a 448-CPU report in
 * tens of lines, not 18,000. Marks the vCPUs to detail in sum_detail. */
/* Fills sum_index/sum_vals (the key: each vCPU's exits, total or in the
 * interval) first. All vCPUs detailed (false), or the few with the most
 * marked in sum_detail and named in list (true). */
static bool choose_detail(uint32_t n, char *list, size_t len, uint32_t *k_out)
{
	uint32_t want = report_cpus;
	bool all = want == REPORT_CPUS_ALL || (want == REPORT_CPUS_AUTO && n <= REPORT_CPUS_AUTO_MAX);
	for (uint32_t i = 0; i < ncpus; i++)
		sum_detail[i] = all;
	if (all)
		return false;
	uint32_t k = top_k(sum_vals, n, want == REPORT_CPUS_AUTO ? REPORT_CPUS_AUTO_WORST : want, sum_worst);
	size_t at = 0;
	list[0] = 0;
	for (uint32_t j = 0; j < k; j++) {
		sum_detail[sum_index[sum_worst[j]]] = true;
		if (at < len - 12)
			at += (size_t)snprintf(list + at, len - at, "%s%u", j ? "," : "", sum_index[sum_worst[j]]);
	}
	*k_out = k;
	return true;
}

static void summary(bool detail)
{
	uint32_t n = 0, k = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i]) {
			sum_index[n] = i;
			sum_vals[n++] = vcpus[i]->exits_total;
		}
	char list[160];
	if (!choose_detail(n, list, sizeof list, &k))
		return;
	pr_info("hvstat: summary cpus=%u detailed=%s (the %u with the most exits, in that order; reportcpus=all for every one)\n",
		n, list, k);
	summary_line("exits", n);
	for (uint32_t r = 0; r < EXIT_REASON_MAX; r++) {
		uint64_t any = 0;
		for (uint32_t j = 0; j < n; j++)
			any |= sum_vals[j] = vcpus[sum_index[j]]->exits[r];
		if (!any)
			continue;
		char what[64];
		snprintf(what, sizeof what, "reason=%s code=%u", exit_reason_name(r), r);
		summary_line(what, n);
	}
	if (detail) {
		for (uint32_t j = 0; j < n; j++) {
			const struct vcpu *v = vcpus[sum_index[j]];
			uint64_t guest = v->launch_tsc ? rdtsc() - v->launch_tsc : 0;
			sum_vals[j] = guest ? time_in_hv(v) * 1000 / guest : 0;
		}
		summary_line("in_hv_permille", n);
	}
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL) {   /* the hypervisor serves the guest's timer */
		for (uint32_t j = 0; j < n; j++)
			sum_vals[j] = __atomic_load_n(&vcpus[sum_index[j]]->timer_posts, __ATOMIC_RELAXED);
		summary_line("timer_delivered", n);
		virq_timer_summary(sum_index, n);
	}
}

void report_print(const char *why)
{
	uint64_t total = 0;
	/* The exit times, guest time and projection only in the report at the
	 * end: a report asked for by the guest keeps its vCPU in the hypervisor
	 * while the UART prints, and 4-vCPU Linux under Bochs 3.0 died right
	 * after the longer report (defect 3's symptom) in 3 of 3 boots. The
	 * report of a guest that died ends the run too. */
	bool detail = !strcmp(why, "shutdown") || !strcmp(why, "death") || !strcmp(why, "reboot");
	if (detail)
		vconsole_flush();      /* the guest's last partial line, before the report */
	spin_lock(&report_lock);
	pr_info("hvstat: begin why=%s cpus=%u\n", why, ncpus);
	summary(detail);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *v = vcpus[i];
		if (!v)
			continue;
		total += v->exits_total;
		if (!sum_detail[i])
			continue;
		pr_info("hvstat: cpu=%u exits=%llu\n", i, (unsigned long long)v->exits_total);
		for (uint32_t r = 0; r < EXIT_REASON_MAX; r++)
			if (v->exits[r])
				pr_info("hvstat: cpu=%u reason=%s code=%u count=%llu\n", i, exit_reason_name(r), r,
					(unsigned long long)v->exits[r]);
		/* Time in the hypervisor per exit (TSC cycles, the handler's first
		 * instruction to its last before VM entry; median and p99 are log2
		 * bucket bounds, at most 2x high), and what the exits would cost on
		 * hardware at a published per-exit figure: a projection. */
		for (uint32_t r = 0; detail && r < EXIT_REASON_MAX; r++) {
			const struct log2_hist *h = &v->exit_time[r];
			if (!h->n)
				continue;
			pr_info("hvstat: cpu=%u exit_time reason=%s code=%u count=%llu min=%llu median=%llu p99=%llu max=%llu avg=%llu tsc\n",
				i, exit_reason_name(r), r, (unsigned long long)h->n, (unsigned long long)h->min,
				(unsigned long long)hist_percentile(h, 50), (unsigned long long)hist_percentile(h, 99),
				(unsigned long long)h->max, (unsigned long long)(h->sum / h->n));
		}
		if (detail) {
			uint64_t in_hv = time_in_hv(v);
			uint64_t guest = v->launch_tsc ? rdtsc() - v->launch_tsc : 0;
			uint64_t guest_us = tsc_to_us(guest);
			pr_info("hvstat: cpu=%u time guest_tsc=%llu in_hv_tsc=%llu in_hv_permille=%llu guest_ms=%llu\n", i,
				(unsigned long long)guest, (unsigned long long)in_hv,
				(unsigned long long)(guest ? in_hv * 1000 / guest : 0), (unsigned long long)(guest_us / 1000));
			pr_info("hvstat: cpu=%u projection exits=%llu ns_per_exit=%u projected_us_per_guest_s=%llu (published hardware cost of an exit: a projection, not measured here)\n",
				i, (unsigned long long)v->exits_total, REPORT_NS_PER_EXIT,
				(unsigned long long)(guest_us ? v->exits_total * REPORT_NS_PER_EXIT * 1000 / guest_us : 0));
		}
		for (uint32_t m = 0; m < v->msr_stats.n; m++)
			pr_info("hvstat: cpu=%u msr=0x%x reads=%u writes=%u\n", i, v->msr_stats.e[m].key,
				v->msr_stats.e[m].reads, v->msr_stats.e[m].writes);
		for (uint32_t m = 0; m < v->io_stats.n; m++)
			pr_info("hvstat: cpu=%u port=0x%x reads=%u writes=%u\n", i, v->io_stats.e[m].key,
				v->io_stats.e[m].reads, v->io_stats.e[m].writes);
		virq_report(v);
		/* What the guest tried and was refused (docs/isolation.md). */
		const struct vcpu_denied *d = &v->denied;
		if (d->msr | d->vmx_insn | d->cr4 | d->apic_base | d->xsetbv | d->sleep | d->ept_hv_pages | d->ept_unowned)
			pr_info("hvstat: cpu=%u denied msr=%llu vmx_insn=%llu cr4=%llu apic_base=%llu xsetbv=%llu sleep=%llu ept_hv_pages=%llu ept_unowned=%llu\n",
				i, (unsigned long long)d->msr, (unsigned long long)d->vmx_insn, (unsigned long long)d->cr4,
				(unsigned long long)d->apic_base, (unsigned long long)d->xsetbv,
				(unsigned long long)d->sleep, (unsigned long long)d->ept_hv_pages,
				(unsigned long long)d->ept_unowned);
		if (v->tsc_writes)   /* the guest moved its own TSC (vmx/tsc.c) */
			pr_info("hvstat: cpu=%u tsc writes=%llu offset=%lld adjust=0x%llx\n", i,
				(unsigned long long)v->tsc_writes, (long long)v->tsc.offset, (unsigned long long)v->tsc.adjust);
	}
	if (virq_nmis_ignored)   /* NMIs the guest aimed at a CPU that runs no vCPU */
		pr_info("hvstat: nmi ignored=%llu (at CPUs without a vCPU)\n", (unsigned long long)virq_nmis_ignored);
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL)
		pr_info("hvstat: hangcheck stuck=%u\n", virq_hangs);
	if (pid_test_spare) {   /* ipivtest=1: what the CPU's virtualized IPIs left in the spare descriptor */
		const struct pi_desc *s = pid_test_spare;
		pr_info("hvstat: ipivtest spare pir=%016llx%016llx%016llx%016llx on=%u sn=%u\n",
			(unsigned long long)s->pir[3], (unsigned long long)s->pir[2], (unsigned long long)s->pir[1],
			(unsigned long long)s->pir[0], s->control & PI_ON ? 1 : 0, s->control & PI_SN ? 1 : 0);
	}
	if (ept_nx_huge()) {     /* the EPT's large pages split for the guest's fetches (vmx/ept.h) */
		struct ept_nx_stats nx = ept_live_nx_stats();
		pr_info("hvstat: ept nx_huge split_2m=%llu split_1g=%llu again=%llu allowed_large=%llu\n",
			(unsigned long long)nx.split_2m, (unsigned long long)nx.split_1g, (unsigned long long)nx.again,
			(unsigned long long)nx.allowed_large);
	}
	vconsole_report(detail); /* the guest's console: lines, exits per line */
	vioapic_trap_report();  /* the virtual IOAPIC's routes */
	msi_trap_report();      /* the trapped MSIs' routes */
	hpet_trap_report();     /* the HPET's exits, its FSB delivery refused */
	iommu_report();         /* DMA isolation and the DMA faults, polled now */
	pr_info("hvstat: end total_exits=%llu\n", (unsigned long long)total);
	spin_unlock(&report_lock);
}

/* ---- the interval report (report=SECONDS) ---- */

static uint64_t period_tsc, next_tsc, last_tsc;
static uint32_t interval_seq;

void report_periodic_init(uint32_t seconds)
{
	period_tsc = (uint64_t)seconds * tsc_khz * 1000;
	if (!period_tsc)
		return;
	last_tsc = rdtsc();
	next_tsc = last_tsc + period_tsc;
	pr_info("report: an interval report every %u s (vCPU 0 prints it at its first exit after each period)\n", seconds);
}

/* The three reasons with the most exits since the last interval. */
static void top_reasons(const struct vcpu *v, const uint64_t *now_by, char *buf, size_t len)
{
	uint32_t best[3] = { EXIT_REASON_MAX, EXIT_REASON_MAX, EXIT_REASON_MAX };
	uint64_t delta[3] = { 0, 0, 0 };
	for (uint32_t r = 0; r < EXIT_REASON_MAX; r++) {
		uint64_t d = now_by[r] - v->snap.exits_by[r];
		for (int k = 0; k < 3; k++) {
			if (d > delta[k]) {
				for (int j = 2; j > k; j--) {
					best[j] = best[j - 1];
					delta[j] = delta[j - 1];
				}
				best[k] = r;
				delta[k] = d;
				break;
			}
		}
	}
	size_t n = 0;
	buf[0] = 0;
	for (int k = 0; k < 3 && best[k] < EXIT_REASON_MAX && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s:+%llu", k ? "," : "", exit_reason_name(best[k]),
				      (unsigned long long)delta[k]);
	if (!n)
		snprintf(buf, len, "none");
}

/* One vCPU's interval: its line (when print), then its new snapshot. */
static void interval_cpu(struct vcpu *v, uint64_t us, uint64_t span, bool print)
{
	uint64_t by[EXIT_REASON_MAX];
	for (uint32_t r = 0; r < EXIT_REASON_MAX; r++)
		by[r] = __atomic_load_n(&v->exits[r], __ATOMIC_RELAXED);
	uint64_t exits = __atomic_load_n(&v->exits_total, __ATOMIC_RELAXED);
	uint64_t in_hv = time_in_hv(v);
	struct virq_served s;
	virq_served(v, &s);
	uint64_t de = exits - v->snap.exits;
	if (print) {
		char top[160];
		top_reasons(v, by, top, sizeof top);
		pr_info("hvstat: cpu=%u interval exits=+%llu exits_per_s=%llu in_hv_permille=%llu posted=+%llu notified=+%llu timer_posts=+%llu pv_eois=+%llu top=%s\n",
			v->index, (unsigned long long)de, (unsigned long long)(us ? de * 1000000 / us : 0),
			(unsigned long long)(span ? (in_hv - v->snap.in_hv) * 1000 / span : 0),
			(unsigned long long)(s.posts - v->snap.posts), (unsigned long long)(s.notifies - v->snap.notifies),
			(unsigned long long)(s.timer_posts - v->snap.timer_posts),
			(unsigned long long)(s.pv_eois - v->snap.pv_eois), top);
	}
	v->snap.exits = exits;
	v->snap.in_hv = in_hv;
	v->snap.posts = s.posts;
	v->snap.notifies = s.notifies;
	v->snap.timer_posts = s.timer_posts;
	v->snap.pv_eois = s.pv_eois;
	memcpy(v->snap.exits_by, by, sizeof by);
}

/* On a large machine as the end report: one summary line over every vCPU,
 * then the lines of the few with the most exits in the interval. */
static void report_interval(uint64_t now)
{
	uint64_t span = now - last_tsc;
	uint64_t us = tsc_to_us(span);
	uint32_t n = 0, k = 0;
	char list[160];
	spin_lock(&report_lock);
	pr_info("hvstat: interval seq=%u seconds=%llu.%03llu cpus=%u\n", ++interval_seq,
		(unsigned long long)(us / 1000000), (unsigned long long)(us / 1000 % 1000), ncpus);
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i]) {
			sum_index[n] = i;
			sum_vals[n++] = __atomic_load_n(&vcpus[i]->exits_total, __ATOMIC_RELAXED) - vcpus[i]->snap.exits;
		}
	if (choose_detail(n, list, sizeof list, &k)) {
		pr_info("hvstat: interval summary detailed=%s (the %u with the most exits in it)\n", list, k);
		summary_line("interval_exits", n);
	}
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i])
			interval_cpu(vcpus[i], us, span, sum_detail[i]);
	vconsole_report(false);
	spin_unlock(&report_lock);
}

void report_tick(struct vcpu *v)
{
	if (!period_tsc || v->index != 0)
		return;
	uint64_t now = rdtsc();
	if (now < next_tsc)
		return;
	report_interval(now);
	last_tsc = now;
	next_tsc = now + period_tsc;
}
