/* The guest's x2APIC timer at run time (timer/vtimer.c decides): who
 * notices its deadline, and how its vector gets in.
 *  posted, with a housekeeping CPU: its service (timer/service.c) expires
 *     the timer and posts the vector with a notification: no exit here;
 *  posted, without one: this CPU's TSC-deadline timer exits (external
 *     interrupt) and the vector is posted into the vCPU's own descriptor;
 *  preempt: the VMX-preemption timer exits, the vector is posted;
 *  trap: the host timer exits and the vector is put into the virtual IRR
 *     by hand (RVI raised), no descriptor;
 *  apicv: the CPU's APIC-timer virtualization, for the TSC-deadline mode. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "vmcs_ops.h"
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

struct timer_service *virq_timer_service;
static struct timer_service service;

static void service_post(void *ctx, uint32_t i, uint8_t vec)
{
	(void)ctx;
	__atomic_fetch_add(&vcpus[i]->timer_posts, 1, __ATOMIC_RELAXED);
	ipi_post(&virq_domain, IPI_NO_VCPU, vcpus[i]->apic_id, vec);
}

void virq_timer_service_init(uint32_t apic_id)
{
	service.n = ncpus;
	service.timers = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	service.locks = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < ncpus; i++) {
		service.timers[i] = &vcpus[i]->timer;
		service.locks[i] = &vcpus[i]->timer_lock;
	}
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

void virq_timer_check(struct vcpu *v)
{
	if (timer_by_service())
		return;
	uint64_t now = rdtsc();
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

static void kick(uint32_t apic_id, uint8_t vec)
{
	lapic_send(apic_id, APIC_DM_FIXED | vec);
}

/* After the guest changed its timer: the one serving it learns of it. */
static void timer_changed(struct vcpu *v)
{
	v->timer_exits_arm++;
	if (timer_by_service())
		timer_service_armed(virq_timer_service, __atomic_load_n(&v->timer.deadline, __ATOMIC_SEQ_CST), kick);
	else
		virq_timer_check(v);
}

void virq_host_timer_program(struct vcpu *v)
{
	if (timer_by_service())
		return;
	if (vmx_env.cfg.timer == TIMER_PREEMPT) {
		/* The preemption timer counts down at TSC >> rate; 0 exits at once. */
		uint64_t d = v->timer.deadline, now = rdtsc(), ticks = 0xffffffffull;
		if (d)
			ticks = d <= now ? 0 : (d - now) >> vmx_env.cfg.preempt_rate;
		vmcs_write(VMCS_PREEMPTION_TIMER_VALUE, ticks > 0xffffffffull ? 0xffffffffull : ticks);
		return;
	}
	if (v->timer.deadline != v->host_deadline) {
		v->host_deadline = v->timer.deadline;
		wrmsr(MSR_IA32_TSC_DEADLINE, v->host_deadline);
	}
}

void exit_preemption_timer(struct vcpu *v)
{
	v->timer_exits_fire++;
	virq_timer_check(v);      /* virq_before_entry re-arms it */
}

int virq_timer_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	uint64_t now = rdtsc();
	if (msr == MSR_IA32_TSC_DEADLINE) {
		spin_lock(&v->timer_lock);
		vtimer_write_tsc_deadline(&v->timer, val);
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
		virq_timer_check(v);   /* an expiry due now is judged by the LVT it came under */
		spin_lock(&v->timer_lock);
		vtimer_write_lvt(&v->timer, (uint32_t)val, now);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_LVT_TIMER, v->timer.lvt);
		vapic_set(v->vapic, APIC_TMICT, v->timer.tmict);   /* a change to or from TSC-deadline clears it */
		if (vmx_env.cfg.apic_timer_virt)   /* the vector the CPU delivers at the guest deadline */
			vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR,
				   (v->timer.lvt & APIC_LVT_MASKED) || LVT_TIMER_MODE(v->timer.lvt) != VTIMER_TSC_DEADLINE ? 0 : v->timer.lvt & 0xff);
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
	return t.armed == t.replaced + t.fired + (t.deadline ? 1 : 0) && t.fired - t.masked == posts;
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
