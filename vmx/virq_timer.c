/* The guest's x2APIC timer at run time (timer/vtimer.c decides): who
 * notices its deadline, and how its vector gets in.
 *  posted, with a housekeeping CPU: its service (timer/service.c) expires
 *     the timer and posts the vector with a notification: no exit here;
 *  posted, without one: this CPU's TSC-deadline timer exits (external
 *     interrupt) and the vector is posted into the vCPU's own descriptor;
 *  preempt: the VMX-preemption timer exits, the vector is posted;
 *  trap: the host timer exits and the vector is put into the virtual IRR
 *     by hand (RVI raised), no descriptor;
 *  apicv: the CPU's APIC-timer virtualization, in the one state it can
 *     serve (vtimer_cpu_serves: TSC-deadline, unmasked, APIC enabled); in
 *     every other state the vCPU's own host timer, as timer=posted;
 *  deadline: in that same state the guest's IA32_TSC_DEADLINE is not
 *     intercepted: its WRMSR and RDMSR reach this core's own LAPIC timer
 *     (TSC-deadline mode, the host's vector, never the guest's LVT), so
 *     arming costs no exit; the expiry exits once (external interrupt) and
 *     the LVT's vector is posted. Every other state: as timer=posted.
 *     Nothing else of the hypervisor's arms a vCPU core's LAPIC timer (the
 *     interval report rides on exits, the timer service has its own CPU).
 *     Only while the vCPU's TSC offset is 0: the LAPIC compares the host's
 *     TSC. A guest that moved its TSC (vmx/tsc.c) is served as posted.
 * Every deadline here is in host TSC; the guest's IA32_TSC_DEADLINE values
 * (guest TSC: host + offset) are converted where they come in. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../lib/nodemem.h"
#include "../apic/lapic.h"
#include "../apic/vapic.h"
#include "../ipi/ipi.h"
#include "../timer/vtimer.h"
#include "../timer/service.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/tsc.h"
#include "../lib/string.h"
#include "../guest/msr.h"

struct timer_service *virq_timer_service;
static struct timer_service service;

static void service_post(void *ctx, uint32_t i, uint8_t vec)
{
	(void)ctx;
	__atomic_fetch_add(&vcpus[i]->timer_posts, 1, __ATOMIC_RELAXED);
	ipi_post(&virq_domain, IPI_NO_VCPU, vcpus[i]->apic_id, vec);
}

void virq_timer_service_init(uint32_t apic_id, int64_t tsc_comp)
{
	service.n = ncpus;
	service.timers = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	service.locks = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	int64_t *skew = page_alloc(ALIGN_UP(ncpus * sizeof(int64_t), PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < ncpus; i++) {
		service.timers[i] = &vcpus[i]->timer;
		service.locks[i] = &vcpus[i]->timer_lock;
		/* vCPU i runs on CPU i: host_service = host_i + comp_i - comp_service
		 * (each package's offset makes the guest's TSC one). */
		skew[i] = cpus[i]->tsc_comp - tsc_comp;
	}
	service.skew = skew;
	service.post = service_post;
	service.apic_id = apic_id;
	service.timer_vector = HOST_TIMER_VECTOR;
	service.kick_vector = KICK_VECTOR;
	service.next = ~0ull;
	__atomic_store_n(&virq_timer_service, &service, __ATOMIC_RELEASE);
}

static void timer_deliver(struct vcpu *v, uint8_t vec)
{
	__atomic_fetch_add(&v->timer_posts, 1, __ATOMIC_RELAXED);
	if (vmx_env.cfg.timer == TIMER_TRAP) {
		virq_virr_set(v, vec);      /* by hand, not counted as a post */
		return;
	}
	virq_post_self(v, vec);
}

static bool timer_by_service(void)
{
	return virq_timer_service != NULL;
}

/* Expires the served timer as of host TSC 'now'. */
static void timer_check_at(struct vcpu *v, uint64_t now)
{
	if (timer_by_service())
		return;
	spin_lock(&v->timer_lock);
	uint64_t deadline = v->timer.deadline;
	int vec = vtimer_expire(&v->timer, now);
	spin_unlock(&v->timer_lock);
	if (vec >= 16)
		timer_deliver(v, (uint8_t)vec);
	/* Said once per vCPU: an expiry noticed more than 10 ms late. */
	if (vec >= 0 && now - deadline > tsc_khz * 10 && !v->timer_late_said) {
		v->timer_late_said = true;
		pr_warn("hv: timer: cpu%u noticed its deadline 0x%llx %llu us late (rip 0x%llx, activity %llu, exit %u)\n",
			v->index, (unsigned long long)deadline, (unsigned long long)((now - deadline) / (tsc_khz / 1000 ? tsc_khz / 1000 : 1)),
			(unsigned long long)vmcs_read(VMCS_GUEST_RIP), (unsigned long long)vmcs_read(VMCS_GUEST_ACTIVITY_STATE),
			v->reason & 0xffff);
	}
}

void virq_timer_check(struct vcpu *v)
{
	timer_check_at(v, rdtsc());
}

static void kick(uint32_t apic_id, uint8_t vec)
{
	lapic_send(apic_id, APIC_DM_FIXED | vec);
}

/* The one serving the timer learns of a new deadline. */
static void timer_notify(struct vcpu *v)
{
	if (timer_by_service())
		timer_service_armed(virq_timer_service, v->index, __atomic_load_n(&v->timer.deadline, __ATOMIC_SEQ_CST), kick);
	else
		virq_timer_check(v);
}

/* After the guest changed its timer. */
static void timer_changed(struct vcpu *v)
{
	v->timer_exits_arm++;
	timer_notify(v);
}

/* --- timer=apicv: who serves the guest's timer follows its LVT and SVR ---
 * The CPU (tertiary bit 8 on, IA32_TSC_DEADLINE passed through into the
 * guest deadline fields, the LVT's vector as the virtual timer vector) only
 * while vtimer_cpu_serves; else the host, as timer=posted: bit 8 off,
 * IA32_TSC_DEADLINE intercepted (passed through with bit 8 off, the guest's
 * WRMSR would reach the host's own timer), the fields clear, the deadline in
 * v->timer. A deadline moves with the service, so none is lost or doubled.
 * It all runs in the vCPU's own exits, on its CPU, its VMCS current. */

static bool timer_handed(void)
{
	return vmx_env.cfg.apic_timer_virt || vmx_env.cfg.deadline_pass;
}

void virq_timer_msr_bitmap(struct vcpu *v, uint8_t *shared)
{
	v->msr_bitmap = shared;
	if (!timer_handed())
		return;
	v->msr_bitmap = page_alloc_node(v->node, 1);
	memcpy(v->msr_bitmap, shared, PAGE_SIZE);   /* IA32_TSC_DEADLINE intercepted */
}

static bool cpu_may_serve(struct vcpu *v, uint32_t lvt)
{
	if (vmx_env.cfg.deadline_pass && v->tsc.offset)
		return false;   /* the LAPIC would compare the host's TSC */
	return timer_handed() && vtimer_cpu_serves(lvt, vapic_get(v->vapic, APIC_SVR) & APIC_SVR_ENABLED);
}

static void cpu_timer_on(struct vcpu *v, bool on)
{
	if (vmx_env.cfg.apic_timer_virt) {
		uint64_t p3 = vmx_env.cfg.proc3 & ~VMX_PROC3_APIC_TIMER_VIRT;
		vmcs_write(VMCS_TERTIARY_CONTROLS, on ? p3 | VMX_PROC3_APIC_TIMER_VIRT : p3);
	}
	msr_bitmap_pass(v->msr_bitmap, MSR_IA32_TSC_DEADLINE, on);
	v->timer_by_cpu = on;
}

/* --- timer=deadline: the guest's deadline in the LAPIC ---
 * Root mode runs with interrupts off, so a LAPIC timer that fires during an
 * exit waits in the IRR and exits right after the next entry. Every such
 * interrupt while the LAPIC serves is the guest's expiry but one: the
 * host's own deadline (the served timer) that fired in root mode just
 * before it handed the timer to the LAPIC. Its interrupt is the first to
 * come after the hand-over, and is the guest's too only where the deadline
 * handed over has come as well (the IRR holds one request per vector; the
 * MSR reads 0 once the timer fired, "TSC-Deadline Mode"). Otherwise an
 * interrupt is never judged by the MSR: an emulator that recognizes it late
 * (Bochs 3.0 defect 2: not before the guest's STI) lets the guest re-arm
 * first, and a dropped expiry would stop the guest's clockevent for good (it
 * re-arms from the interrupt); an extra one only makes it look again. */
static void pass_post(struct vcpu *v)
{
	v->pass_fired++;
	uint8_t vec = (uint8_t)(v->timer.lvt & 0xff);   /* the LVT the deadline came under (cpu_may_serve held) */
	if (vec >= 16)
		timer_deliver(v, vec);
}

/* Whether a host-timer interrupt taken now (the MSR reading 'msr') is an
 * expiry of the guest's deadline. */
static bool pass_is_guests(struct vcpu *v, uint64_t msr)
{
	bool stale = v->pass_stale_pending;
	v->pass_stale_pending = false;
	if (stale && (msr || !v->pass_handed)) {
		v->pass_stale++;
		return false;
	}
	return true;
}

/* The LAPIC timer's interrupt, the LAPIC serving the guest's deadline. */
static void pass_interrupt(struct vcpu *v)
{
	if (pass_is_guests(v, rdmsr(MSR_IA32_TSC_DEADLINE)))
		pass_post(v);
}

/* Served -> LAPIC: the deadline armed in v->timer goes into the MSR (a past
 * one fires at once), which the guest then reads and writes itself. The
 * host's own deadline in the MSR until then may have fired: its request is
 * read after the write, which replaces that deadline, so a fire up to the
 * write is seen and one after it cannot be the host's. */
static void pass_give(struct vcpu *v)
{
	spin_lock(&v->timer_lock);
	uint64_t d = vtimer_hand_over(&v->timer);
	spin_unlock(&v->timer_lock);
	v->pass_handed = d;
	wrmsr(MSR_IA32_TSC_DEADLINE, d);
	v->pass_stale_pending = lapic_requested(HOST_TIMER_VECTOR);
	v->host_deadline = d;
}

/* LAPIC -> served: what the MSR holds is armed in v->timer. An expiry the
 * LAPIC requested meanwhile fired after this exit began: while the guest
 * runs, the timer's interrupt exits at once, so one still requested at
 * another exit came in root mode, after the guest's instruction. It is
 * posted only if the guest's timer state after that instruction delivers
 * it ('delivers': the LVT kept, only the TSC offset moved); after an LVT or
 * SVR write that took the timer from the LAPIC (masked, another mode, the
 * APIC disabled) it is an expiry the LAPIC would not have delivered. Its
 * interrupt, still requested, later exits and finds nothing due. */
static void pass_take_back(struct vcpu *v, bool delivers)
{
	uint64_t d = rdmsr(MSR_IA32_TSC_DEADLINE);
	if (lapic_requested(HOST_TIMER_VECTOR) && pass_is_guests(v, d)) {
		if (delivers)
			pass_post(v);
		else
			v->pass_undelivered++;
	}
	v->pass_stale_pending = false;
	v->host_deadline = d;   /* the MSR keeps it: virq_host_timer_program need not write it */
	if (d) {
		spin_lock(&v->timer_lock);
		vtimer_write_tsc_deadline(&v->timer, d);   /* the TSC offset was 0 while the LAPIC served */
		spin_unlock(&v->timer_lock);
	}
}

/* The host takes over: a deadline the CPU holds (TSC-deadline mode, the LVT
 * not yet changed) is armed in v->timer. With APIC-timer virtualization the
 * guest-deadline field is in host TSC and its shadow holds the guest's value
 * (what RDMSR returns). */
static void timer_to_host(struct vcpu *v, bool delivers)
{
	if (vmx_env.cfg.deadline_pass) {
		cpu_timer_on(v, false);
		v->timer_to_host++;
		pass_take_back(v, delivers);
		return;
	}
	uint64_t d = vmcs_read(VMCS_GUEST_DEADLINE), g = vmcs_read(VMCS_GUEST_DEADLINE_SHADOW);
	vmcs_write(VMCS_GUEST_DEADLINE, 0);
	vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, 0);
	vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR, 0);
	cpu_timer_on(v, false);
	v->timer_to_host++;
	if (d) {
		spin_lock(&v->timer_lock);
		vtimer_write_tsc_deadline_at(&v->timer, g ? g : d, d);
		spin_unlock(&v->timer_lock);
	}
}

/* The CPU serves (vtimer_cpu_serves holds): the LVT's vector, and when it
 * takes over, the deadline armed in v->timer. */
static void timer_to_cpu(struct vcpu *v)
{
	if (vmx_env.cfg.deadline_pass) {
		if (v->timer_by_cpu)
			return;
		pass_give(v);
		cpu_timer_on(v, true);
		v->timer_to_cpu++;
		return;
	}
	vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR, v->timer.lvt & 0xff);
	if (v->timer_by_cpu)
		return;
	spin_lock(&v->timer_lock);
	uint64_t g = v->timer.tsc_deadline, d = vtimer_hand_over(&v->timer);
	spin_unlock(&v->timer_lock);
	vmcs_write(VMCS_GUEST_DEADLINE, d);
	vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, d ? g : 0);
	cpu_timer_on(v, true);
	v->timer_to_cpu++;
}

/* INIT (and the launch): the LVT is masked, the host serves, and whatever
 * the CPU held is gone. */
void virq_timer_init(struct vcpu *v)
{
	spin_lock(&v->timer_lock);
	vtimer_reset(&v->timer);
	spin_unlock(&v->timer_lock);
	if (vmx_env.cfg.deadline_pass) {
		/* The guest's deadline in the LAPIC goes (an interrupt it already
		 * requested exits later and finds nothing due). */
		if (v->timer_by_cpu)
			wrmsr(MSR_IA32_TSC_DEADLINE, 0);
		v->host_deadline = 0;
		v->pass_stale_pending = false;
		cpu_timer_on(v, false);
		return;
	}
	if (!vmx_env.cfg.apic_timer_virt)
		return;
	vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR, 0);
	vmcs_write(VMCS_GUEST_DEADLINE, 0);
	vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, 0);
	cpu_timer_on(v, false);
}

/* The SVR was written (a software disable masked the LVTs, v->timer.lvt
 * follows): the service follows. */
void virq_timer_svr_written(struct vcpu *v)
{
	bool by_cpu = cpu_may_serve(v, v->timer.lvt);
	if (v->timer_by_cpu && !by_cpu)
		timer_to_host(v, false);   /* a software disable masked the LVT */
	else if (by_cpu)
		timer_to_cpu(v);
}

/* The guest moved its TSC (vmx/tsc.c; the VMCS offset is written): an armed
 * TSC deadline keeps its guest value and comes when the guest's TSC reaches
 * it. The LAPIC serves (timer=deadline) only at offset 0. */
void virq_timer_tsc_moved(struct vcpu *v)
{
	uint64_t now = rdtsc(), off = v->tsc.offset;
	if (vmx_env.cfg.deadline_pass && v->timer_by_cpu && off)
		timer_to_host(v, true);    /* the LVT is unchanged: an expiry meanwhile is delivered */
	if (vmx_env.cfg.apic_timer_virt && v->timer_by_cpu && vmcs_read(VMCS_GUEST_DEADLINE))
		vmcs_write(VMCS_GUEST_DEADLINE, vtimer_host_deadline(vmcs_read(VMCS_GUEST_DEADLINE_SHADOW), off, now));
	spin_lock(&v->timer_lock);
	vtimer_rebase(&v->timer, off, now);
	spin_unlock(&v->timer_lock);
	if (!v->timer_by_cpu && cpu_may_serve(v, v->timer.lvt))
		timer_to_cpu(v);
	timer_notify(v);
}

void virq_host_timer_program(struct vcpu *v)
{
	if (timer_by_service() || (vmx_env.cfg.deadline_pass && v->timer_by_cpu))
		return;   /* timer=deadline: the guest's own WRMSRs program the LAPIC */
	if (vmx_env.cfg.timer == TIMER_PREEMPT) {
		/* The preemption timer counts down at TSC >> rate; 0 exits at once. */
		uint64_t d = v->timer.deadline, now = rdtsc(), ticks = 0xffffffffull;
		if (d)
			ticks = d <= now ? 0 : (d - now) >> vmx_env.cfg.preempt_rate;
		virq_preempt_write(v, ticks);
		return;
	}
	if (v->timer.deadline != v->host_deadline) {
		v->host_deadline = v->timer.deadline;
		wrmsr(MSR_IA32_TSC_DEADLINE, v->host_deadline);
	}
}

void virq_timer_host_interrupt(struct vcpu *v)
{
	if (vmx_env.cfg.deadline_pass && v->timer_by_cpu) {
		pass_interrupt(v);
		return;
	}
	uint64_t fired = __atomic_load_n(&v->timer.fired, __ATOMIC_RELAXED);
	virq_timer_check(v);
	/* timer=deadline: the LAPIC's own expiry of the guest's deadline that
	 * fired as the deadline was taken back (the MSR already cleared, its
	 * request not yet visible: pass_take_back cannot see it), reaching an
	 * exit with nothing due. One exit, no interrupt lost: counted as
	 * stale, as the LAPIC's stale requests are. */
	if (vmx_env.cfg.deadline_pass && __atomic_load_n(&v->timer.fired, __ATOMIC_RELAXED) == fired)
		v->pass_stale++;
}

/* The VMX-preemption timer's value for the next entries: the tier's
 * (timer=preempt) or, when that is later, the hang check's. */
void virq_preempt_write(struct vcpu *v, uint64_t ticks)
{
	uint32_t cap = vmx_env.cfg.watchdog_ticks;
	v->preempt_watchdog = cap && ticks >= cap;
	if (ticks > 0xffffffffull)
		ticks = 0xffffffffull;   /* a 32-bit field: a far deadline waits its longest, then again */
	vmcs_write(VMCS_PREEMPTION_TIMER_VALUE, v->preempt_watchdog ? cap : ticks);
}

void exit_preemption_timer(struct vcpu *v)
{
	if (v->preempt_watchdog) {
		virq_hang_watchdog(v);
		return;
	}
	v->timer_exits_fire++;
	virq_timer_check(v);      /* virq_before_entry re-arms it */
}

int virq_timer_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	uint64_t now = rdtsc();
	if (msr == MSR_IA32_TSC_DEADLINE) {
		spin_lock(&v->timer_lock);
		vtimer_write_tsc_deadline_at(&v->timer, val, vtimer_host_deadline(val, v->tsc.offset, now));
		spin_unlock(&v->timer_lock);
		timer_changed(v);
		return 0;
	}
	if (msr < 0x800 || msr > 0x8ff)
		return 1;
	switch (APIC_OFF(msr)) {
	case APIC_LVT_TIMER:
		if (val >> 32)
			return -1;
		if (!(vapic_get(v->vapic, APIC_SVR) & APIC_SVR_ENABLED))
			val |= APIC_LVT_MASKED;
		bool by_cpu = cpu_may_serve(v, (uint32_t)val);
		if (v->timer_by_cpu && !by_cpu)
			timer_to_host(v, false);   /* an expiry in root mode came after this write: not delivered */
		/* An expiry due by the exit came under the old LVT; one due since
		 * comes after the guest's write, judged by the new one. */
		timer_check_at(v, v->exit_tsc && v->exit_tsc <= now ? v->exit_tsc : now);
		spin_lock(&v->timer_lock);
		vtimer_write_lvt(&v->timer, (uint32_t)val, now);   /* a mode change disarms */
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_LVT_TIMER, v->timer.lvt);
		vapic_set(v->vapic, APIC_TMICT, v->timer.tmict);   /* a change to or from TSC-deadline clears it */
		if (by_cpu)
			timer_to_cpu(v);
		timer_changed(v);
		return 0;
	case APIC_TMICT:
		if (val >> 32)
			return -1;
		spin_lock(&v->timer_lock);
		vtimer_write_tmict(&v->timer, (uint32_t)val, now);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_TMICT, v->timer.tmict);
		timer_changed(v);
		return 0;
	case APIC_TDCR:
		if (val >> 32)
			return -1;
		spin_lock(&v->timer_lock);
		vtimer_write_tdcr(&v->timer, (uint32_t)val);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_TDCR, v->timer.tdcr);
		return 0;
	default:
		return 1;
	}
}

bool virq_timer_balanced(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return true;   /* the guest owns its timer */
	spin_lock(&v->timer_lock);
	struct vtimer t = v->timer;
	spin_unlock(&v->timer_lock);
	uint64_t posts = __atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED);
	return t.armed == t.replaced + t.fired + (t.deadline ? 1 : 0) && t.fired - t.masked + v->pass_fired == posts;
}

void virq_timer_summary(const uint32_t *index, uint32_t n)
{
	uint64_t armed = 0, replaced = 0, fired = 0, masked = 0, posts = 0, pending = 0, ea = 0, ef = 0, lapic = 0;
	for (uint32_t j = 0; j < n; j++) {
		struct vcpu *v = vcpus[index[j]];
		spin_lock(&v->timer_lock);
		struct vtimer t = v->timer;
		spin_unlock(&v->timer_lock);
		armed += t.armed;
		replaced += t.replaced;
		fired += t.fired;
		masked += t.masked;
		pending += t.deadline ? 1 : 0;
		posts += __atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED);
		ea += v->timer_exits_arm;
		ef += v->timer_exits_fire;
		lapic += v->pass_fired;
	}
	pr_info("hvstat: summary timer tier=%s cpus=%u armed=%llu replaced=%llu fired=%llu masked=%llu fired_by_lapic=%llu delivered=%llu pending=%llu exits_arm=%llu exits_fire=%llu\n",
		timer_tier_names[vmx_env.cfg.timer], n, (unsigned long long)armed, (unsigned long long)replaced,
		(unsigned long long)fired, (unsigned long long)masked, (unsigned long long)lapic,
		(unsigned long long)posts, (unsigned long long)pending, (unsigned long long)ea, (unsigned long long)ef);
}

/* The timer's accounting: armed = replaced + fired + pending, and each
 * unmasked expiry delivered; the exits it cost; lateness as log2 buckets. */
void virq_timer_report(struct vcpu *v)
{
	struct vtimer t;
	spin_lock(&v->timer_lock);
	t = v->timer;
	spin_unlock(&v->timer_lock);
	uint32_t i = v->index;
	pr_info("hvstat: cpu=%u timer tier=%s armed=%llu replaced=%llu fired=%llu masked=%llu delivered=%llu pending=%u exits_arm=%llu exits_fire=%llu late_max=%llu\n",
		i, timer_tier_names[vmx_env.cfg.timer], (unsigned long long)t.armed, (unsigned long long)t.replaced,
		(unsigned long long)t.fired, (unsigned long long)t.masked,
		(unsigned long long)__atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED), t.deadline ? 1u : 0u,
		(unsigned long long)v->timer_exits_arm, (unsigned long long)v->timer_exits_fire,
		(unsigned long long)t.late_max);
	if (vmx_env.cfg.apic_timer_virt)
		pr_info("hvstat: cpu=%u timer_apicv server=%s to_cpu=%llu to_host=%llu\n", i, v->timer_by_cpu ? "cpu" : "host",
			(unsigned long long)v->timer_to_cpu, (unsigned long long)v->timer_to_host);
	/* timer=deadline: the guest's armings in the LAPIC are not seen (that is
	 * the point); each expiry is (fired, posted: in delivered above). */
	if (vmx_env.cfg.deadline_pass)
		pr_info("hvstat: cpu=%u timer_deadline server=%s to_lapic=%llu to_host=%llu fired=%llu stale=%llu undelivered=%llu\n", i,
			v->timer_by_cpu ? "lapic" : "host", (unsigned long long)v->timer_to_cpu,
			(unsigned long long)v->timer_to_host, (unsigned long long)v->pass_fired, (unsigned long long)v->pass_stale,
			(unsigned long long)v->pass_undelivered);
	char buf[400];
	size_t n = 0;
	for (unsigned b = 0; b < VTIMER_LATE_BUCKETS && n < sizeof buf - 32; b++)
		if (t.late_log2[b])
			n += (size_t)snprintf(buf + n, sizeof buf - n, " <%llu:%u", (unsigned long long)(2ull << b) - 1,
					      t.late_log2[b]);
	if (n)
		pr_info("hvstat: cpu=%u timer_late_tsc%s\n", i, buf);
	if (i == 0 && virq_timer_service)
		pr_info("hvstat: timer_service apic_id=%u scans=%llu posts=%llu kicks=%llu\n", virq_timer_service->apic_id,
			(unsigned long long)virq_timer_service->scans, (unsigned long long)virq_timer_service->posts,
			(unsigned long long)virq_timer_service->kicks);
}
