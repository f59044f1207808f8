/* AP start-up: INIT-SIPI-SIPI (SDM Vol. 3A, "MP Initialization"), sent to
 * every CPU in turn without waiting for any: one 10 ms INIT wait and one
 * answer timeout for all of them, however many there are. */
#include "smp.h"
#include "probe_verdict.h"
#include "../guest/setup.h"
#include "../iommu/iommu.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/tsc.h"
#include "../lib/cpusum.h"
#include "../apic/lapic.h"
#include "../lib/memmap.h"
#include "../lib/nodemem.h"
#include "../vmx/vmxon.h"

extern const uint8_t trampoline_blob[], trampoline_blob_end[];

/* Mirrors the parameter block at the start of boot/trampoline.asm. */
struct trampoline_params {
	uint8_t head[8];
	uint64_t cr3, entry, table, count, efer, cr4;
	uint16_t gdtr_limit;
	uint32_t gdtr_base;
	uint16_t pad;
	uint32_t pm32_off;
	uint16_t pm32_sel;
	uint32_t lm64_off;
	uint16_t lm64_sel;
} __packed;
_Static_assert(offsetof(struct trampoline_params, cr3) == 8, "trampoline layout");
_Static_assert(offsetof(struct trampoline_params, table) == 24, "trampoline layout");
_Static_assert(offsetof(struct trampoline_params, gdtr_limit) == 56, "trampoline layout");
_Static_assert(offsetof(struct trampoline_params, pm32_off) == 64, "trampoline layout");
_Static_assert(offsetof(struct trampoline_params, lm64_off) == 70, "trampoline layout");

struct percpu *parked[MAX_PARKED];
uint32_t nparked;

/* What the trampoline looks up by the AP's initial APIC ID. */
struct ap_slot {
	uint32_t apic_id, zero;
	uint64_t stack, percpu;
};
_Static_assert(sizeof(struct ap_slot) == 24, "trampoline slot layout");

/* The package shift from CPUID 0x1F, else 0xB, else CPUID.1:EBX[23:16]
 * (boot/probe_verdict.c reads the leaves). */
#define TOPO_SUBLEAVES 8
unsigned smp_pkg_shift(const char **from)
{
	uint32_t max, a[TOPO_SUBLEAVES], b[TOPO_SUBLEAVES], c[TOPO_SUBLEAVES], d;
	cpuid_count(0, 0, &max, &b[0], &c[0], &d);
	static const uint32_t leaves[] = { 0x1f, 0xb };
	static const char *const names[] = { "CPUID 0x1F", "CPUID 0xB" };
	for (unsigned l = 0; l < 2; l++) {
		if (max < leaves[l])
			continue;
		for (unsigned i = 0; i < TOPO_SUBLEAVES; i++)
			cpuid_count(leaves[l], i, &a[i], &b[i], &c[i], &d);
		int s = probe_pkg_shift(a, b, c, TOPO_SUBLEAVES);
		if (s >= 0) {
			*from = names[l];
			return (unsigned)s;
		}
	}
	cpuid_count(1, 0, &a[0], &b[0], &c[0], &d);
	*from = "CPUID.1:EBX[23:16]";
	return probe_shift_from_count(d & BIT(28), (b[0] >> 16) & 0xff);
}

static unsigned pkg_shift;
uint32_t smp_pkg_of(uint32_t apic_id)
{
	return pkg_shift >= 32 ? 0 : apic_id >> pkg_shift;
}

/* Work for an AP: its mailbox, then an IPI that ends its HLT (ap_entry).
 * Halted, not spinning, an AP costs nothing while it waits: under an
 * emulator with hundreds of vCPUs on a few host cores, spinning ones took
 * the host from the few that had work. */
void smp_post_work(struct percpu *p, void (*fn)(void))
{
	__atomic_store_n(&p->work, fn, __ATOMIC_RELEASE);
	lapic_send(p->apic_id, APIC_DM_FIXED | SMP_WAKE_VECTOR);
}

static __noreturn void ap_entry(struct percpu *p)
{
	percpu_load(p);
	tsc_adjust_align(smp_pkg_of(p->apic_id));   /* before any TSC here is compared */
	lapic_enable();
	uint32_t want = CPU_STARTING;
	if (lapic_id() != p->apic_id) {  /* its APIC ID register disagrees with its CPUID: named, not used */
		p->id_seen = lapic_id();
		p->id_mismatch = true;
		p->state = CPU_FAILED;
		cpu_halt_forever();
	}
	/* Too late (the boot CPU gave up on it and sent INIT): stays out. */
	if (!__atomic_compare_exchange_n(&p->state, &want, CPU_ONLINE, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		cpu_halt_forever();
	for (;;) {                       /* the mailbox: one function at a time */
		void (*fn)(void) = __atomic_load_n(&p->work, __ATOMIC_ACQUIRE);
		if (!fn) {
			/* STI's shadow covers the HLT: a wake-up sent after the
			 * load above ends it at once (and the handler EOIs it). */
			cpu_wait_turn();
			continue;
		}
		fn();
		__atomic_store_n(&p->work, NULL, __ATOMIC_RELEASE);
	}
}

/* Waits until every slot's CPU is online, or until timeout_us passed
 * without one more answering (an emulator that runs many vCPUs on few host
 * cores brings them up one by one); returns how many are online. */
static uint32_t wait_online(const struct ap_slot *slot, uint32_t n, uint64_t timeout_us)
{
	uint64_t end = rdtsc() + tsc_from_us(timeout_us);
	uint32_t up, seen = 0;
	for (;;) {
		up = 0;
		for (uint32_t k = 0; k < n; k++)
			up += ((struct percpu *)(uintptr_t)slot[k].percpu)->state == CPU_ONLINE;
		if (up == n)
			return up;
		if (up > seen) {
			seen = up;
			end = rdtsc() + tsc_from_us(timeout_us);
		} else if (rdtsc() >= end) {
			return up;
		}
		cpu_relax();
	}
}

static void send_to_slots(const struct ap_slot *slot, uint32_t n, uint32_t icr, bool only_silent)
{
	for (uint32_t k = 0; k < n; k++)
		if (!only_silent || ((struct percpu *)(uintptr_t)slot[k].percpu)->state != CPU_ONLINE)
			lapic_send(slot[k].apic_id, icr);
}

struct percpu *smp_housekeeper;

/* After the start: each CPU, in MADT order, gets its place (a vCPU index,
 * parked, or named as silent); one line a CPU on a small machine, one an
 * outcome on a large one (lib/cpusum.h). */
static uint32_t place_cpus(const struct ap_slot *slot, uint32_t n, uint32_t max_cpus, uint64_t timeout_us,
			   int64_t housekeeping)
{
	static struct cpusum sum;
	uint32_t online = 1, high_parked = 0, high_given = 0;
	bool ir = iommu_ir_owned();
	char cls[CPUSUM_CLASS_LEN];

	cpusum_begin(&sum, "smp: ", "APIC ID", n);
	for (uint32_t k = 0; k < n; k++) {
		struct percpu *p = (struct percpu *)(uintptr_t)slot[k].percpu;
		uint32_t id = slot[k].apic_id;
		bool keep = housekeeping >= 0 && id == (uint64_t)housekeeping;
		bool high = !guest_apic_id_usable(id, ir);
		bool park = keep || high || ncpus >= MAX_CPUS || (max_cpus && ncpus >= max_cpus);
		if (p->state != CPU_ONLINE && p->id_mismatch) {
			cpusum_add(&sum, LOG_ERR, id, "answered with another APIC ID register (CPUID and the MADT disagree); left out",
				   "APIC ID %u answered with APIC ID register %u (CPUID and the MADT disagree); left out",
				   id, p->id_seen);
			continue;
		}
		if (p->state != CPU_ONLINE && park) {
			snprintf(cls, sizeof cls, "not for the guest, did not answer within %llu us", (unsigned long long)timeout_us);
			cpusum_add(&sum, LOG_ERR, id, cls, "APIC ID %u (not for the guest) did not answer within %llu us", id,
				   (unsigned long long)timeout_us);
			continue;
		}
		if (p->state != CPU_ONLINE) {
			snprintf(cls, sizeof cls, "did not answer within %llu us; left out", (unsigned long long)timeout_us);
			cpusum_add(&sum, LOG_ERR, id, cls, "cpu%u (APIC ID %u) did not answer within %llu us; left out",
				   ncpus, id, (unsigned long long)timeout_us);
			continue;
		}
		if (park && nparked >= MAX_PARKED) {
			/* Started but not parkable: it waits in its mailbox, outside VMX. */
			snprintf(cls, sizeof cls, "left out and not parked (more than %u CPUs to park)", (unsigned)MAX_PARKED);
			cpusum_add(&sum, LOG_ERR, id, cls, "cpu with APIC ID %u left out and not parked (more than %u CPUs to park)",
				   id, MAX_PARKED);
			continue;
		}
		if (park) {
			percpu_place(p, PARKED_INDEX + nparked);
			parked[nparked++] = p;
		}
		if (keep) {
			smp_housekeeper = p;
			cpusum_add(&sum, LOG_INFO, id, "kept from the guest for the timer service (housekeeping=)",
				   "APIC ID %u kept from the guest for the timer service (housekeeping=%u)", id, id);
			continue;
		}
		if (high) {
			high_parked++;
			snprintf(cls, sizeof cls, "kept from the guest and parked: above APIC ID %u without interrupt remapping owned",
				 GUEST_MAX_APIC_ID);
			cpusum_add(&sum, LOG_WARN, id, cls,
				   "APIC ID %u kept from the guest and parked: Linux without interrupt remapping addresses APIC IDs up to %u only (interrupt remapping owned where every VT-d unit has IR and EIM, intremap=auto or on; docs/scale.md)",
				   id, ir ? GUEST_MAX_APIC_ID_EXT : GUEST_MAX_APIC_ID);
			continue;
		}
		if (park) {
			uint32_t lim = max_cpus && max_cpus < MAX_CPUS ? max_cpus : MAX_CPUS;
			snprintf(cls, sizeof cls, "kept from the guest (limit %u CPUs): parked", lim);
			cpusum_add(&sum, LOG_INFO, id, cls, "APIC ID %u kept from the guest (limit %u CPUs): parked", id, lim);
			continue;
		}
		high_given += id > GUEST_MAX_APIC_ID;
		percpu_place(p, ncpus);
		cpusum_add(&sum, LOG_INFO, id, "online for the guest", "cpu%u apic_id=%u online", ncpus, id);
		ncpus++;
		online++;
	}
	cpusum_end(&sum);
	if (high_parked)
		pr_warn("smp: %u CPU%s above APIC ID %u parked (given to the guest where the hypervisor owns VT-d interrupt remapping: units with IR and EIM, intremap=auto or on)\n",
			high_parked, high_parked == 1 ? "" : "s", GUEST_MAX_APIC_ID);
	if (high_given)
		pr_info("smp: %u CPU%s above APIC ID %u given to the guest: interrupt remapping owned, MSI_EXT_DEST_ID offered\n",
			high_given, high_given == 1 ? "" : "s", GUEST_MAX_APIC_ID);
	return online;
}

uint32_t smp_start_aps(const struct acpi_info *acpi, paddr_t page, uint64_t cr3,
		       uint32_t max_cpus, uint64_t timeout_us, int64_t housekeeping)
{
	/* Two linker symbols around one blob: their distance as addresses. */
	size_t len = (uintptr_t)trampoline_blob_end - (uintptr_t)trampoline_blob;
	struct trampoline_params *tp = (void *)(uintptr_t)page;
	uint32_t self = lapic_id(), a, b, c, d, n = 0;

	if (!page || page >= MIB(1) || page & 0xfff || len > PAGE_SIZE) {
		pr_err("smp: trampoline page 0x%llx unusable; only the boot CPU runs\n", (unsigned long long)page);
		return 1;
	}
	if (acpi->ncpus <= 1)
		return 1;
	const char *from;
	pkg_shift = smp_pkg_shift(&from);
	tsc_adjust_record(smp_pkg_of(self));
	memcpy(tp, trampoline_blob, len);
	/* The blob holds offsets from its start; make them linear addresses. */
	tp->gdtr_base += page;
	tp->pm32_off += page;
	tp->lm64_off += page;
	tp->cr3 = cr3;
	tp->entry = (uint64_t)(uintptr_t)ap_entry;
	cpuid_count(0x80000001, 0, &a, &b, &c, &d);
	tp->efer = EFER_LME | ((d & BIT(20)) ? EFER_NXE : 0);
	tp->cr4 = X86_CR4_PAE;

	/* One slot per CPU to start: a CPU the guest does not get is started
	 * all the same and parked in VMX root operation, where INIT is
	 * blocked: left in its firmware state, the guest could start it
	 * outside VMX. */
	struct ap_slot *slot = page_alloc(ALIGN_UP(acpi->ncpus * sizeof *slot, PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < acpi->ncpus; i++) {
		uint32_t id = acpi->cpu[i].apic_id;
		if (id == self)
			continue;
		struct percpu *p = percpu_alloc(UNPLACED_INDEX, id);
		p->state = CPU_STARTING;
		slot[n++] = (struct ap_slot){ .apic_id = id, .stack = p->stack_top, .percpu = (uintptr_t)p };
	}
	tp->table = (uintptr_t)slot;
	tp->count = n;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);

	pr_info("smp: starting %u CPUs at once (INIT, 10 ms, SIPI, SIPI to the silent; %llu us for each next answer)\n", n,
		(unsigned long long)timeout_us);
	uint64_t t0 = rdtsc();
	send_to_slots(slot, n, APIC_DM_INIT | APIC_LEVEL_ASSERT, false);
	udelay(10000);
	send_to_slots(slot, n, APIC_DM_STARTUP | (uint32_t)(page >> 12), false);
	wait_online(slot, n, 200);
	send_to_slots(slot, n, APIC_DM_STARTUP | (uint32_t)(page >> 12), true);
	uint32_t up = wait_online(slot, n, timeout_us);
	/* A CPU that did not answer in time is marked failed (it halts if it
	 * gets that far) and held in wait-for-SIPI by another INIT: nothing
	 * of it runs later by surprise. */
	for (uint32_t k = 0; up < n && k < n; k++) {
		struct percpu *p = (struct percpu *)(uintptr_t)slot[k].percpu;
		uint32_t want = CPU_STARTING;
		if (__atomic_compare_exchange_n(&p->state, &want, CPU_FAILED, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			lapic_send(slot[k].apic_id, APIC_DM_INIT | APIC_LEVEL_ASSERT);
	}
	pr_info("smp: %u of %u CPUs answered in %llu us\n", up, n, (unsigned long long)tsc_to_us(rdtsc() - t0));

	uint32_t online = place_cpus(slot, n, max_cpus, timeout_us, housekeeping);
	tsc_adjust_report();
	smp_tsc_skew();
	return online;
}

/* The TSC skew between the boot CPU and each other CPU, by ping-pong
 * through memory (lib/tsc_skew.c), each CPU in its mailbox in turn. Bounded:
 * SKEW_ROUNDS round trips within SKEW_BUDGET_US per CPU, however slowly an
 * emulator schedules it. Each CPU has its own box: one that leaves late
 * (an emulator that ran it too seldom) touches only its own, and the
 * others are measured all the same. */
#define SKEW_ROUNDS 8
#define SKEW_BUDGET_US 20000
struct skew_box {
	uint32_t ready, ping, pong, stop;
	uint64_t tap;
} __aligned(64);
static struct skew_box *skew_cur;

/* RDTSC is not ordered with the loads and stores around it; LFENCE before
 * it makes it wait for them (SDM Vol. 2B, RDTSC). */
static inline uint64_t rdtsc_ordered(void)
{
	__asm__ volatile("lfence" ::: "memory");
	return rdtsc();
}

static void skew_ap(void)
{
	struct skew_box *b = __atomic_load_n(&skew_cur, __ATOMIC_ACQUIRE);
	uint64_t end = rdtsc() + tsc_from_us(SKEW_BUDGET_US);
	__atomic_store_n(&b->ready, 1, __ATOMIC_RELEASE);
	for (uint32_t r = 1; r <= SKEW_ROUNDS; r++) {
		while (__atomic_load_n(&b->ping, __ATOMIC_ACQUIRE) != r) {
			if (__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) || rdtsc() > end)
				return;
			cpu_relax();
		}
		b->tap = rdtsc_ordered();
		__atomic_store_n(&b->pong, r, __ATOMIC_RELEASE);
	}
}

/* False when the CPU did not leave its work in time (it leaves later, on
 * its own box). */
static bool skew_one(struct percpu *p, struct skew_box *b, struct tsc_skew *out)
{
	struct tsc_sample s[SKEW_ROUNDS];
	unsigned n = 0;

	__atomic_store_n(&skew_cur, b, __ATOMIC_RELEASE);
	smp_post_work(p, skew_ap);
	/* The rounds' budget from when it is there: waking from its HLT may
	 * take an emulator longer than the rounds themselves. */
	uint64_t end = rdtsc() + tsc_from_us(SKEW_BUDGET_US);
	while (!__atomic_load_n(&b->ready, __ATOMIC_ACQUIRE) && rdtsc() < end)
		cpu_relax();
	end = rdtsc() + tsc_from_us(SKEW_BUDGET_US);
	for (uint32_t r = 1; r <= SKEW_ROUNDS && __atomic_load_n(&b->ready, __ATOMIC_ACQUIRE); r++) {
		uint64_t t0 = rdtsc_ordered();
		__atomic_store_n(&b->ping, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&b->pong, __ATOMIC_ACQUIRE) != r && rdtsc() < end)
			cpu_relax();
		uint64_t t1 = rdtsc_ordered();
		if (__atomic_load_n(&b->pong, __ATOMIC_ACQUIRE) != r)
			break;
		s[n++] = (struct tsc_sample){ t0, b->tap, t1 };
	}
	__atomic_store_n(&b->stop, 1, __ATOMIC_RELEASE);
	end = rdtsc() + tsc_from_us(SKEW_BUDGET_US);
	while (__atomic_load_n(&p->work, __ATOMIC_ACQUIRE) && rdtsc() < end)
		cpu_relax();
	*out = tsc_skew_estimate(s, n);
	return !__atomic_load_n(&p->work, __ATOMIC_ACQUIRE);
}

struct smp_skew_result smp_skew;

static int64_t ticks_ns(int64_t t)
{
	int64_t khz = (int64_t)(tsc_khz ? tsc_khz : 1);
	return t / khz * 1000000 + t % khz * 1000000 / khz;
}

/* Between packages (lib/tsc_sync.h): each package's skew to the boot CPU,
 * from its best-measured CPU; where it is certain, every CPU of that
 * package gets it as the guest's TSC offset of its vCPU (vmx/tsc.c), so
 * that the guest's TSCs agree across sockets to within the bound (what
 * Linux's TSC synchronization check can see is a step backwards between
 * two CPUs' reads: beyond the bound). The host's own TSCs stay. */
static void compensate(const struct tsc_cpu_skew *each, uint32_t total)
{
	uint32_t boot = smp_pkg_of(lapic_id());
	uint32_t made = tsc_pkgs_compensate(&tsc_pkgs, boot, each, total);
	for (uint32_t i = 0; i < total; i++) {
		struct percpu *p = i < ncpus - 1 ? cpus[i + 1] : parked[i - (ncpus - 1)];
		p->tsc_comp = tsc_pkgs_comp(&tsc_pkgs, smp_pkg_of(p->apic_id));
	}
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++) {
		const struct tsc_pkg *k = &tsc_pkgs.p[i];
		if (k->state != TSC_PKG_READY || k->id == boot)
			continue;
		if (!k->measured) {
			pr_warn("tsc: package %u (%u CPUs): its skew to the boot CPU's package %u not measured: left alone\n",
				k->id, k->cpus, boot);
			continue;
		}
		if (k->comp)
			pr_warn("tsc: package %u (%u CPUs) runs %lld ticks (%lld ns) from the boot CPU's package %u, known to +-%llu: beyond the bound, made up for in its vCPUs' TSC offset (%lld): the guest's TSCs agree to within +-%llu ticks\n",
				k->id, k->cpus, (long long)k->offset, (long long)ticks_ns(k->offset), boot,
				(unsigned long long)k->bound, (long long)k->comp, (unsigned long long)k->bound);
		else
			pr_info("tsc: package %u (%u CPUs) runs %lld ticks (%lld ns) from the boot CPU's package %u, known to +-%llu: within the bound, left alone\n",
				k->id, k->cpus, (long long)k->offset, (long long)ticks_ns(k->offset), boot,
				(unsigned long long)k->bound);
	}
	smp_skew.packages_made_up = made;
}

void smp_tsc_skew(void)
{
	uint32_t measured = 0, late = 0, late_id = 0, total = ncpus - 1 + nparked;
	struct tsc_skew worst = { 0 };
	uint64_t worst_abs = 0;
	uint32_t worst_id = 0;

	if (!total)
		return;
	struct skew_box *box = page_alloc(ALIGN_UP(total * sizeof *box, PAGE_SIZE) / PAGE_SIZE);
	struct tsc_cpu_skew *each = page_alloc(ALIGN_UP(total * sizeof *each, PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < total; i++) {
		struct percpu *p = i < ncpus - 1 ? cpus[i + 1] : parked[i - (ncpus - 1)];
		struct tsc_skew k;
		each[i] = (struct tsc_cpu_skew){ .pkg = smp_pkg_of(p->apic_id) };
		if (__atomic_load_n(&p->work, __ATOMIC_ACQUIRE)) {
			late++;    /* still in some earlier work: not measured */
			late_id = p->apic_id;
			continue;
		}
		bool left = skew_one(p, &box[i], &k);
		if (!left) {
			late++;
			late_id = p->apic_id;
		}
		if (!left || !k.ok)
			continue;
		each[i] = (struct tsc_cpu_skew){ each[i].pkg, true, k.offset, k.bound };
		measured++;
		uint64_t a = k.offset < 0 ? -(uint64_t)k.offset : (uint64_t)k.offset;
		if (measured == 1 || a > worst_abs) {
			worst = k;
			worst_abs = a;
			worst_id = p->apic_id;
		}
	}
	if (late)
		pr_warn("tsc: skew: %u CPUs (the last APIC ID %u) left their measurement late: not counted (an emulator that runs them seldom)\n",
			late, late_id);
	smp_skew = (struct smp_skew_result){ worst, worst_id, measured, total, 0 };
	/* Beyond its bound an offset is certain: the TSCs differ. */
	pr_info("tsc: skew to the boot CPU: largest %lld ticks (%lld ns) at APIC ID %u, known to +-%llu ticks (%s); %u of %u other CPUs measured\n",
		(long long)worst.offset, (long long)ticks_ns(worst.offset), worst_id, (unsigned long long)worst.bound,
		!measured ? "none measured" : worst_abs > worst.bound ? "beyond the bound: the TSCs differ" : "within the bound",
		measured, total);
	compensate(each, total);
}

bool smp_run_on_aps(void (*fn)(void), uint64_t timeout_us)
{
	bool ok = true;
	/* One AP at a time keeps their output apart and makes a hang name its CPU. */
	for (uint32_t i = 1; i < ncpus; i++) {
		struct percpu *p = cpus[i];
		smp_post_work(p, fn);
		uint64_t end = rdtsc() + tsc_from_us(timeout_us);
		while (__atomic_load_n(&p->work, __ATOMIC_ACQUIRE) && rdtsc() < end)
			cpu_relax();
		if (p->work) {
			pr_err("smp: cpu%u did not finish its work in time\n", i);
			ok = false;
		}
	}
	return ok;
}

/* Runs on a parked CPU: VMXON, then halt for good. In VMX root operation
 * INIT is blocked and a SIPI finds no wait-for-SIPI state, so nothing the
 * guest sends can restart this CPU outside VMX (SDM Vol. 3C, "VMX Root
 * Operation"); NMIs land in the host's IDT. */
static const struct vmx_caps *park_caps;
static void (*housekeeping_fn)(void);
static void cpu_park(void)
{
	struct percpu *p = this_cpu();
	char msg[96];
	p->vmxon_status = park_caps ? vmx_on(park_caps, p->vmxon_region, msg, sizeof msg) : -1;
	__atomic_store_n(&p->launched, 1, __ATOMIC_RELEASE);
	if (p != smp_housekeeper)
		cpu_halt_forever();
	/* The housekeeper waits, halted, for its work and the IPI that says so. */
	for (;;) {
		void (*fn)(void) = __atomic_load_n(&housekeeping_fn, __ATOMIC_ACQUIRE);
		if (fn)
			fn();
		__asm__ volatile("sti; hlt; cli" ::: "memory");
	}
}

void smp_housekeeper_start(void (*fn)(void), uint8_t wake_vector)
{
	__atomic_store_n(&housekeeping_fn, fn, __ATOMIC_RELEASE);
	lapic_send(smp_housekeeper->apic_id, APIC_DM_FIXED | wake_vector);
}

uint32_t smp_park(const struct vmx_caps *caps)
{
	uint32_t ok = 0;
	park_caps = caps;
	for (uint32_t i = 0; i < nparked; i++) {
		struct percpu *p = parked[i];
		p->vmxon_region = page_alloc_node(p->node, 1);
		smp_post_work(p, cpu_park);
		uint64_t end = rdtsc() + tsc_from_us(1000000);
		while (!p->launched && rdtsc() < end)
			cpu_relax();
		if (p->launched && p->vmxon_status == 0)
			ok++;
		else
			pr_err("smp: parked APIC ID %u is not in VMX root operation: the guest could restart it\n",
			       p->apic_id);
	}
	if (nparked)
		pr_info("smp: %u CPUs kept from the guest, %u of them parked in VMX root operation\n", nparked, ok);
	return ok;
}
