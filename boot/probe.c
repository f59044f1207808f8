/* probe: gathers what the boot found (VMX, the tiers auto chose, the VT-d
 * units as the firmware left them, the CPUs, the TSC) and what only the
 * probe reads (topology leaves, C-states, the SMI count), and prints one
 * table; the verdicts are boot/probe_verdict.c's. */
#include "probe.h"
#include "../lib/memmap.h"
#include "probe_verdict.h"
#include "smp.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/tsc.h"
#include "../lib/percpu.h"
#include "../lib/power.h"
#include "../apic/lapic.h"
#include "../iommu/iommu.h"
#include "../guest/cpuid.h"
#include "../vmx/setup.h"

#define MAX_ROWS 64

static struct probe_row rows[MAX_ROWS];
static unsigned nrows;
static bool smi_have;
static uint64_t smi_start, tsc_start;

void probe_begin(void)
{
	smi_have = rdmsr_safe(MSR_SMI_COUNT, &smi_start);
	tsc_start = rdtsc();
	pr_info("hv: probe: checking the machine (SMI count %s); the table comes after the CPUs are up, no guest will start\n",
		smi_have ? "read" : "not readable");
}

static struct probe_row *row(const char *item, enum probe_verdict v, const char *why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static struct probe_row *row(const char *item, enum probe_verdict v, const char *why, const char *fmt, ...)
{
	static struct probe_row spare;
	struct probe_row *r = nrows < MAX_ROWS ? &rows[nrows++] : &spare;
	va_list ap;
	snprintf(r->item, sizeof r->item, "%s", item);
	va_start(ap, fmt);
	vsnprintf(r->value, sizeof r->value, fmt, ap);
	va_end(ap);
	r->verdict = v;
	snprintf(r->why, sizeof r->why, "%s", why ? why : "");
	return r;
}

static struct probe_row *next(void)
{
	static struct probe_row spare;
	return nrows < MAX_ROWS ? &rows[nrows++] : &spare;
}

static void cpu_rows(void)
{
	uint32_t max, b, c, d, a;
	char vendor[13];
	cpuid_count(0, 0, &max, &b, &c, &d);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	cpuid_count(1, 0, &a, &b, &c, &d);
	unsigned fam = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	if (fam == 6 || fam >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	row("cpu", PROBE_OK, NULL, "%s family %u model 0x%x stepping %u, boot CPU in %s mode", vendor, fam, model,
	    a & 0xf, lapic_x2apic ? "x2APIC" : "xAPIC");
}

static void vmx_rows(const struct probe_in *in)
{
	const struct vmx_caps *c = in->caps;
	static const char *const path_names[] = { "tier ipi", "tier eoi", "tier timer" };
	if (!c || !c->vmx) {
		row("vmx", PROBE_MISSING, "nothing to virtualize: novmx=linux boots the guest natively", "no (CPUID.1:ECX[5] = 0)");
		row("ipi virtualization", PROBE_MISSING, "no VMX", "no");
		row("apic-timer virtualization", PROBE_MISSING, "no VMX", "no");
		for (unsigned i = 0; i < 3; i++)
			row(path_names[i], PROBE_MISSING, "no VMX", "none");
		return;
	}
	row("vmx", PROBE_OK, NULL, "yes, VMCS revision 0x%x", c->revision);
	row("vmx in firmware", c->feature_control_ok ? PROBE_OK : PROBE_MISSING,
	    c->feature_control_ok ? NULL : "IA32_FEATURE_CONTROL locked with VMX off: turn VT-x on in the firmware setup",
	    "IA32_FEATURE_CONTROL %s", c->feature_control_ok ? "allows VMXON" : "forbids VMXON");
	row("vmxon", in->vmxon_ok == ncpus ? PROBE_OK : in->vmxon_ok ? PROBE_DEGRADED : PROBE_MISSING,
	    in->vmxon_ok == ncpus ? NULL : "VMXON failed on some CPU (its line above says why)",
	    "succeeded on %u of %u CPUs", in->vmxon_ok, ncpus);
	row("ept", c->ept && c->ept_4level ? PROBE_OK : PROBE_MISSING, c->ept ? NULL : "the hypervisor needs EPT",
	    "%s, 4-level %s, 2M %s, 1G %s, WB %s", c->ept ? "yes" : "no", c->ept_4level ? "yes" : "no",
	    c->ept_2m ? "yes" : "no", c->ept_1g ? "yes" : "no", c->ept_wb ? "yes" : "no");
	row("unrestricted guest", c->unrestricted ? PROBE_OK : PROBE_MISSING, c->unrestricted ? NULL : "needed for the guest's real-mode SIPI start",
	    "%s", c->unrestricted ? "yes" : "no");
	row("vpid", c->vpid ? PROBE_OK : PROBE_DEGRADED, c->vpid ? NULL : "TLB flushed at every VM exit and entry",
	    "%s", c->vpid ? "yes" : "no");
	row("virtual-interrupt delivery", c->vid ? PROBE_OK : PROBE_MISSING, c->vid ? NULL : "every EOI exits",
	    "%s, APIC-register virtualization %s, x2APIC virtualization %s", c->vid ? "yes" : "no",
	    c->apic_reg_virt ? "yes" : "no", c->virt_x2apic ? "yes" : "no");
	bool pi = c->posted_intr && c->ack_intr_on_exit;
	row("posted interrupts", pi ? PROBE_OK : PROBE_MISSING, pi ? NULL : "IPIs and timers are delivered by exits",
	    "%s", pi ? "yes" : "no");
	row("preemption timer", c->preemption_timer ? PROBE_OK : PROBE_MISSING,
	    c->preemption_timer ? NULL : "no timer=preempt and no hang check timer", "%s", c->preemption_timer ? "yes" : "no");
	row("ipi virtualization", c->ipiv ? PROBE_OK : PROBE_MISSING,
	    c->ipiv ? NULL : c->tertiary ? "not allowed by IA32_VMX_PROCBASED_CTLS3" : "no tertiary controls",
	    "%s (tertiary bit 4)", c->ipiv ? "yes" : "no");
	row("apic-timer virtualization", c->apic_timer_virt ? PROBE_OK : PROBE_MISSING,
	    c->apic_timer_virt ? NULL : c->tertiary ? "not allowed by IA32_VMX_PROCBASED_CTLS3" : "no tertiary controls",
	    "%s (tertiary bit 8)", c->apic_timer_virt ? "yes" : "no");
	int got[3] = { in->tiers->ipi, in->tiers->eoi, in->tiers->timer };
	const char *const *names[3] = { ipi_tier_names, eoi_tier_names, timer_tier_names };
	for (int i = 0; i < 3; i++) {
		const char *why = tiers_why_not_best(c, in->tiers, i);
		row(path_names[i], why ? PROBE_DEGRADED : PROBE_OK, why, "%s (what auto takes)", names[i][got[i]]);
	}
}

static void iommu_rows(bool eim_needed)
{
	const char *state = iommu_state_name();
	uint32_t ndrhd, n = iommu_probed_units(&ndrhd);
	bool on = !strcmp(state, "on");
	bool none = !strncmp(state, "off: no DMAR", 12);
	row("dma isolation", on ? PROBE_OK : none ? PROBE_MISSING : PROBE_DEGRADED,
	    on ? NULL : none ? "no DMAR: no VT-d, or VT-d off in the firmware setup" : state,
	    "%s; %u of %u DRHD units probed", on ? "would turn on before the guest (not now: probe)" : state, n, ndrhd);
	for (uint32_t i = 0; i < n; i++) {
		const struct vtd_unit *u = iommu_unit(i);
		struct probe_row *r = next();
		probe_vtd_row(u->ver, u->cap, u->ecap, u->fw_gsts, u->fw_pmen, u->fw_rtaddr, eim_needed, r);
		snprintf(r->item, sizeof r->item, "vt-d %u at 0x%llx", i, (unsigned long long)u->base);
	}
}

/* Each feature this CPU has that the guest may not get: passed (ok), or
 * hidden with the reason (degraded), as the boot decides it. */
static void feature_rows(const struct probe_in *in)
{
	struct cpufeat f[CPUFEAT_MAX];
	char item[40];
	unsigned n = vmx_guest_features(in->caps, f);
	for (unsigned i = 0; i < n; i++) {
		snprintf(item, sizeof item, "guest %s", f[i].name);
		if (f[i].given)
			row(item, PROBE_OK, NULL, "passed%s%s", f[i].why ? ": " : "", f[i].why ? f[i].why : "");
		else
			row(item, PROBE_DEGRADED, f[i].why, "hidden");
	}
}

static struct probe_layout cpu_rows_layout(const struct acpi_info *acpi)
{
	uint32_t n = acpi->ncpus, self = lapic_id();
	uint32_t *ids = page_alloc(ALIGN_UP((n + 1) * sizeof *ids, PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < n; i++)
		ids[i] = acpi->cpu[i].apic_id;
	if (!n)
		ids[n++] = self;
	const char *from;
	unsigned shift = smp_pkg_shift(&from);
	struct probe_layout l = probe_apic_layout(ids, n, shift);
	uint32_t started = ncpus + nparked;
	char why[96];
	snprintf(why, sizeof why, "%u CPUs of the MADT did not answer (named above)", n > started ? n - started : 0);
	row("cpus", !acpi->ncpus ? PROBE_DEGRADED : n > started ? PROBE_DEGRADED : PROBE_OK,
	    !acpi->ncpus ? "no MADT: only the boot CPU runs" : n > started ? why : NULL,
	    "%u in the MADT, %u started: %u for the guest, %u parked", acpi->ncpus, started, ncpus, nparked);
	row("sockets", PROBE_OK, NULL, "%u (package = APIC ID >> %u, from %s)", l.packages, shift, from);
	row("apic ids", l.above_255 ? PROBE_DEGRADED : PROBE_OK,
	    l.above_255 ? "CPUs above APIC ID 255 stay parked: the guest addresses IDs up to 255 (docs/scale.md)" : NULL,
	    "%u above 255, highest %u", l.above_255, l.highest);
	return l;
}

static void time_rows(void)
{
	probe_tsc_row(tsc_khz, tsc_source, tsc_emulated(), next());
	probe_skew_row(smp_skew.worst.offset, smp_skew.worst.bound, smp_skew.worst_id, smp_skew.measured,
		       smp_skew.total, tsc_khz, next());
	uint32_t max, a, b, c, d, c1, c5 = 0, d5 = 0, a6 = 0;
	cpuid_count(0, 0, &max, &b, &c, &d);
	cpuid_count(1, 0, &a, &b, &c1, &d);
	if (max >= 5)
		cpuid_count(5, 0, &a, &b, &c5, &d5);
	if (max >= 6)
		cpuid_count(6, 0, &a6, &b, &c, &d);
	struct probe_row *cst = next(), *arat = next();
	probe_cstates_rows(c1 & BIT(3), c5, d5, max >= 6, a6, cst, arat);
}

__noreturn void probe_finish(const struct probe_in *in)
{
	unsigned counts[3] = { 0, 0, 0 };
	pr_info("hv: phase probe: building the verdict table\n");
	cpu_rows();
	vmx_rows(in);
	feature_rows(in);
	struct probe_layout l = cpu_rows_layout(in->acpi);
	iommu_rows(l.above_255 > 0);
	time_rows();
	uint64_t smi_end = 0;
	bool have = smi_have && rdmsr_safe(MSR_SMI_COUNT, &smi_end);
	probe_smi_row(have, smi_start, smi_end, tsc_to_us(rdtsc() - tsc_start), next());

	pr_info("probe: ==== verdict table: item | value | verdict ====\n");
	for (unsigned i = 0; i < nrows; i++) {
		const struct probe_row *r = &rows[i];
		counts[r->verdict]++;
		pr_info("probe: %-26s | %s | %s%s%s\n", r->item, r->value, probe_verdict_name(r->verdict),
			r->why[0] ? ": " : "", r->why);
	}
	pr_info("probe: ==== %u rows: %u ok, %u degraded, %u missing ====\n", nrows, counts[PROBE_OK],
		counts[PROBE_DEGRADED], counts[PROBE_MISSING]);
	pr_info("hv: probe: done; no guest started, DMA translation left as the firmware had it\n");
	hv_exit(true);
}
