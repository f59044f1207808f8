/* The TSC rate: CPUID 0x15/0x16, the HPET or the ACPI PM timer, and the
 * 8254 PIT gathered here, weighed by tsc_choose() (lib/tsc_choose.c, which
 * states the rule). */
#include "tsc.h"
#include "acpi.h"
#include "cpu.h"
#include "msr.h"
#include "printk.h"

uint64_t tsc_khz;
/* Before the calibration: the fastest TSC, so that no wait is short. */
uint64_t tsc_ceil_khz = TSC_MAX_KHZ;
enum tsc_source tsc_source;
bool tsc_emulator;
bool tsc_under_kvm;

#define PIT_CH2 0x42
#define PIT_CMD 0x43
#define PIT_GATE 0x61                   /* NMI status and control: speaker gate, OUT2 */
#define PIT_GATE_CH2 0x01
#define PIT_GATE_SPEAKER 0x02
#define PIT_GATE_OUT2 0x20
#define PIT_CMD_CH2_LOHI_MODE0 0xb0    /* channel 2, lobyte/hibyte, mode 0, binary */
#define PIT_WINDOW_COUNT 11932          /* 10 ms of TSC_PIT_HZ */

/* One window of PIT channel 2 in mode 0: OUT goes low when the mode is
 * written and high when the count reaches 0. Bounded by the TSC, not by port
 * reads (each can take a microsecond): a window longer than the fastest TSC
 * could make it is a PIT that does not count (channel 2 gated off, or none).
 * Counts the reads, which tell an emulator's instruction clock apart. */
static enum tsc_pit_end pit_window(uint16_t count, uint64_t *ticks, uint32_t *reads)
{
	const uint64_t max = TSC_MAX_KHZ * 1000 * count / TSC_PIT_HZ;
	uint8_t gate = inb(PIT_GATE);
	uint32_t n = 0;

	outb(PIT_GATE, (gate & ~PIT_GATE_SPEAKER) | PIT_GATE_CH2);
	outb(PIT_CMD, PIT_CMD_CH2_LOHI_MODE0);
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	uint64_t t0 = rdtsc();
	for (;;) {
		bool out = inb(PIT_GATE) & PIT_GATE_OUT2;
		n++;
		if (out)
			break;
		if (rdtsc() - t0 > max)
			return TSC_PIT_STUCK;
	}
	*ticks = rdtsc() - t0;
	*reads = n;
	return n == 1 ? TSC_PIT_AT_ONCE : TSC_PIT_COUNTED;
}

/* RDTSC waits for nothing; LFENCE before it makes it wait for the loads
 * before (SDM Vol. 2B, RDTSC): the reference read lies between the two. */
static uint64_t tsc_ordered(void *ctx)
{
	(void)ctx;
	__asm__ volatile("lfence" ::: "memory");
	return rdtsc();
}

static uint64_t pmtmr_read(void *ctx)
{
	return inl((uint16_t)(uintptr_t)ctx);
}

/* IA-PC HPET Specification 1.0a, "Register Definition and Address Map":
 * General Capabilities and ID at 0x000 (COUNTER_CLK_PERIOD in bits 63:32,
 * femtoseconds, non-zero and at most 10^8; COUNT_SIZE_CAP bit 13: a 64-bit
 * main counter; REV_ID bits 7:0, non-zero), General Configuration at 0x010
 * (ENABLE_CNF bit 0: the main counter runs), the main counter at 0x0F0. */
#define HPET_GCAP_ID 0x000
#define HPET_GEN_CONF 0x010
#define HPET_MAIN_COUNTER 0x0f0
#define HPET_CAP_64BIT BIT(13)
#define HPET_CONF_ENABLE BIT(0)
#define HPET_PERIOD_MAX_FS 100000000ull
#define HPET_FS_PER_S 1000000000000000ull
#define HPET_REG_BLOCK 1024

static uint64_t hpet_read(void *ctx)
{
	return *(volatile uint64_t *)((uintptr_t)ctx + HPET_MAIN_COUNTER);
}

static struct tsc_ref_ops pmtmr_ops(uint16_t port)
{
	return (struct tsc_ref_ops){ tsc_ordered, pmtmr_read, (void *)(uintptr_t)port };
}

/* The HPET, its counter running for the measurement and its configuration
 * put back after (the guest finds it as the firmware left it); false when
 * its capabilities name no HPET. */
static bool hpet_measure(uint64_t base, struct tsc_ref_meas *m)
{
	volatile uint64_t *r = (volatile uint64_t *)(uintptr_t)base;
	uint64_t cap = r[HPET_GCAP_ID / 8], period = cap >> 32;
	if (!(cap & 0xff) || cap == ~0ull || !period || period > HPET_PERIOD_MAX_FS ||
	    HPET_FS_PER_S / period > TSC_REF_MAX_HZ) {
		pr_warn("tsc: HPET at 0x%llx: capabilities 0x%016llx name no HPET (revision 0, or a period of %llu fs): not used\n",
			(unsigned long long)base, (unsigned long long)cap, (unsigned long long)period);
		return false;
	}
	uint64_t conf = r[HPET_GEN_CONF / 8];
	if (!(conf & HPET_CONF_ENABLE))
		r[HPET_GEN_CONF / 8] = conf | HPET_CONF_ENABLE;
	struct tsc_ref_ops o = { tsc_ordered, hpet_read, (void *)(uintptr_t)base };
	tsc_ref_measure(&o, TSC_REF_HPET, HPET_FS_PER_S / period, cap & HPET_CAP_64BIT ? 64 : 32, m);
	if (!(conf & HPET_CONF_ENABLE))
		r[HPET_GEN_CONF / 8] = conf;
	return true;
}

/* The HPET where the ACPI names one, else (or when it did not count) the
 * PM timer of the FADT. */
static void ref_measure(const struct acpi_info *acpi, struct tsc_ref_meas *m)
{
	*m = (struct tsc_ref_meas){ .kind = TSC_REF_NONE };
	uint64_t base = acpi ? acpi->hpet_base : 0;
	if (base && base < acpi_readable_hi && acpi_readable_hi - base >= HPET_REG_BLOCK) {
		if (hpet_measure(base, m) && !m->stuck)
			return;
		if (m->stuck)
			pr_warn("tsc: the HPET at 0x%llx did not count: %s\n", (unsigned long long)base,
				acpi->pm_tmr_port ? "the PM timer instead" : "no PM timer either");
	}
	if (acpi && acpi->pm_tmr_port) {
		struct tsc_ref_ops o = pmtmr_ops((uint16_t)acpi->pm_tmr_port);
		tsc_ref_measure(&o, TSC_REF_PMTMR, TSC_PMTMR_HZ, acpi->pm_tmr_32bit ? 32 : 24, m);
	}
}

/* A hypervisor's guest: its highest leaf, its timing leaf, and KVM's pvclock
 * read once (KVM writes the structure while the MSR points at it, at the
 * entry after the WRMSR; turned off again, so that it writes nothing of
 * ours later). Documentation/virt/kvm/x86/cpuid.rst: "KVMKVMKVM\0\0\0" at
 * 0x40000000, KVM_FEATURE_CLOCKSOURCE2 (bit 3 of 0x40000001 EAX) names
 * MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01; msr.rst: bit 0 enables, the rest is the
 * 4-byte-aligned physical address of struct pvclock_vcpu_time_info, whose
 * version is odd while KVM writes it. The identity map makes &pv physical. */
#define KVM_SIG_EBX 0x4b4d564bu         /* "KVMK" */
#define KVM_SIG_ECX 0x564b4d56u         /* "VMKV" */
#define KVM_SIG_EDX 0x0000004du         /* "M\0\0\0" */
#define KVM_FEATURE_CLOCKSOURCE2 BIT(3)
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01u
#define CPUID1_ECX_HYPERVISOR_BIT BIT(31)

static struct {
	uint32_t version, pad0;
	uint64_t tsc_timestamp, system_time;
	uint32_t mul;
	int8_t shift;
	uint8_t flags, pad[2];
} __attribute__((aligned(32))) kvm_pv;

static void hv_leaves(struct tsc_inputs *in)
{
	uint32_t a, b, c, d;

	cpuid_count(1, 0, &a, &b, &c, &d);
	in->hypervisor = c & CPUID1_ECX_HYPERVISOR_BIT;
	if (!in->hypervisor)
		return;
	cpuid_count(TSC_HV_LEAF_BASE, 0, &in->hv_max, &b, &c, &d);
	if (in->hv_max >= TSC_HV_LEAF_TIMING && in->hv_max < TSC_HV_LEAF_BASE + 0x10000)
		cpuid_count(TSC_HV_LEAF_TIMING, 0, &in->hv_timing_khz, &b, &c, &d);
	bool kvm = b == KVM_SIG_EBX && c == KVM_SIG_ECX && d == KVM_SIG_EDX;
	tsc_under_kvm = kvm;
	if (!kvm || in->hv_max < TSC_HV_LEAF_BASE + 1)
		return;
	cpuid_count(TSC_HV_LEAF_BASE + 1, 0, &a, &b, &c, &d);
	if (!(a & KVM_FEATURE_CLOCKSOURCE2))
		return;
	volatile typeof(kvm_pv) *pv = &kvm_pv;
	pv->version = 0;
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uint64_t)(uintptr_t)&kvm_pv | 1);
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t v = pv->version;
		__asm__ volatile("" ::: "memory");
		uint32_t mul = pv->mul;
		int8_t shift = pv->shift;
		__asm__ volatile("" ::: "memory");
		if (v && !(v & 1) && v == pv->version) {
			in->pvclock = (struct tsc_pvclock){ true, mul, shift };
			break;
		}
		cpu_relax();
	}
	wrmsr(MSR_KVM_SYSTEM_TIME_NEW, 0);
}

void tsc_calibrate(const struct acpi_info *acpi)
{
	struct tsc_inputs in = { .pit_count = PIT_WINDOW_COUNT };
	uint32_t b, c, d;
	char why[640];

	in.pit_end = TSC_PIT_COUNTED;
	for (int i = 0; i < TSC_PIT_WINDOWS && in.pit_end == TSC_PIT_COUNTED; i++) {
		in.pit_end = pit_window(in.pit_count, &in.pit_ticks[i], &in.pit_reads[i]);
		if (in.pit_end == TSC_PIT_COUNTED)
			in.pit_windows++;
	}
	cpuid_count(0, 0, &in.cpuid_max, &b, &c, &d);
	if (in.cpuid_max >= 0x15)
		cpuid_count(0x15, 0, &in.l15_eax, &in.l15_ebx, &in.l15_ecx, &d);
	if (in.cpuid_max >= 0x16)
		cpuid_count(0x16, 0, &in.l16_eax, &b, &c, &d);
	ref_measure(acpi, &in.ref);
	hv_leaves(&in);

	struct tsc_choice ch = tsc_choose(&in, why, sizeof why);
	tsc_khz = ch.khz;
	tsc_ceil_khz = ch.ceil_khz;
	tsc_source = ch.source;
	tsc_emulator = ch.emulator;
	if (ch.warn)
		pr_warn("tsc: %s\n", why);
	else
		pr_info("tsc: %s\n", why);
}

/* CPUID.(EAX=07H,ECX=0):EBX[1]: "IA32_TSC_ADJUST MSR is supported if 1"
 * (SDM Vol. 2A, CPUID). */
#define CPUID7_EBX_TSC_ADJUST BIT(1)

struct tsc_pkgs tsc_pkgs;
static bool adjust_have;
static uint32_t boot_pkg;

void tsc_adjust_record(uint32_t pkg)
{
	uint32_t a, b, c, d, max;
	uint64_t v;

	boot_pkg = pkg;
	tsc_pkgs_init(&tsc_pkgs, pkg, 0);
	cpuid_count(0, 0, &max, &b, &c, &d);
	if (max < 7)
		return;
	cpuid_count(7, 0, &a, &b, &c, &d);
	if (!(b & CPUID7_EBX_TSC_ADJUST) || !rdmsr_safe(MSR_IA32_TSC_ADJUST, &v))
		return;
	tsc_pkgs_init(&tsc_pkgs, pkg, (int64_t)v);
	adjust_have = true;
}

/* Each AP, first thing: its package's value (lib/tsc_sync.c). Without
 * the MSR its package is still entered: the skew between packages is
 * measured and made up for all the same. */
void tsc_adjust_align(uint32_t pkg)
{
	uint64_t v = 0;
	bool have = adjust_have && rdmsr_safe(MSR_IA32_TSC_ADJUST, &v);
	int64_t want = tsc_pkgs_adjust(&tsc_pkgs, pkg, (int64_t)v);
	if (have && want != (int64_t)v)
		wrmsr(MSR_IA32_TSC_ADJUST, (uint64_t)want);
}

void tsc_adjust_report(void)
{
	uint32_t set = 0, cpus = 0, other = 0;
	uint64_t diff = 0;
	const struct tsc_pkg *boot = tsc_pkgs_find(&tsc_pkgs, boot_pkg);

	if (!adjust_have) {
		pr_info("tsc: no IA32_TSC_ADJUST (CPUID.7.0:EBX[1] = 0): each CPU's TSC as firmware left it\n");
		return;
	}
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++) {
		const struct tsc_pkg *p = &tsc_pkgs.p[i];
		if (p->state != TSC_PKG_READY)
			continue;
		cpus += p->cpus;
		set += p->set;
		diff = p->max_diff > diff ? p->max_diff : diff;
		other += p->adjust != boot->adjust;
	}
	if (set)
		pr_warn("tsc: IA32_TSC_ADJUST: %u of %u CPUs differed from their package's first CPU, by up to %llu ticks: set equal within each of %u packages, never across\n",
			set, cpus, (unsigned long long)diff, tsc_pkgs.npkgs);
	else if (tsc_pkgs.npkgs == 1)
		pr_info("tsc: IA32_TSC_ADJUST %lld on all %u CPUs (one package)\n", (long long)boot->adjust, cpus);
	else
		pr_info("tsc: IA32_TSC_ADJUST equal within each of %u packages (%u CPUs); the boot CPU's package %u holds %lld\n",
			tsc_pkgs.npkgs, cpus, boot_pkg, (long long)boot->adjust);
	for (uint32_t i = 0; other && i < TSC_PKG_MAX; i++) {
		const struct tsc_pkg *p = &tsc_pkgs.p[i];
		if (p->state == TSC_PKG_READY && p->adjust != boot->adjust)
			pr_info("tsc: IA32_TSC_ADJUST of package %u is %lld, not the boot CPU's %lld: left alone (firmware's own making up for the socket, or a skew measured below)\n",
				p->id, (long long)p->adjust, (long long)boot->adjust);
	}
	if (tsc_pkgs.untracked)
		pr_warn("tsc: %u CPUs beyond %u packages: their IA32_TSC_ADJUST left as it is\n", tsc_pkgs.untracked,
			TSC_PKG_MAX);
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + tsc_from_us(us);
	while (rdtsc() < end)
		cpu_relax();
}
