/* The hang check: a vCPU that keeps an interrupt pending and makes no exit
 * for hangcheck= seconds is diagnosed (issue 19). The decision is
 * vmx/hang.c's; here the samples, taken at other vCPUs' exits, and the
 * two descriptions: what another CPU sees (the virtual-APIC page, the
 * posted-interrupt descriptor, the last exits, the timer) at once, and
 * what the stuck vCPU's own VMCS says (activity state, interruptibility,
 * RFLAGS.IF, RVI and SVI) at the exit the kick gives it, if it comes. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "hang.h"
#include "vmcs_ops.h"
#include "../apic/vapic.h"
#include "../apic/lapic.h"
#include "../lib/cpu.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/tsc.h"

static uint64_t threshold_tsc, sample_tsc;
static uint64_t next_sample;             /* atomic: the TSC of the next sample */
uint32_t virq_hangs;                     /* stuck episodes found */

void virq_hang_init(uint32_t seconds)
{
	threshold_tsc = (uint64_t)seconds * tsc_khz * 1000;
	sample_tsc = (uint64_t)tsc_khz * 1000;   /* a sample a second */
}

static void pending_of(const struct vcpu *v, uint32_t out[8])
{
	for (int w = 0; w < 8; w++)
		out[w] = vapic_get(v->vapic, APIC_IRR + 16 * w) |
			 (uint32_t)(__atomic_load_n(&v->pid->pir[w / 2], __ATOMIC_RELAXED) >> (w % 2 * 32));
}

/* Up to 8 vectors of a 256-bit set as "0xec,0xfb", or "-". */
static const char *vectors(char *buf, const uint32_t set[8])
{
	char *p = buf;
	int n = 0;
	for (int vec = 0; vec < 256 && n < 8; vec++)
		if (set[vec / 32] & BIT(vec % 32)) {
			p += snprintf(p, 8, "%s0x%02x", n ? "," : "", vec);
			n++;
		}
	if (!n)
		*p++ = '-';
	*p = 0;
	return buf;
}

static void regs_of(const struct vcpu *v, uint32_t off, uint32_t out[8])
{
	for (int w = 0; w < 8; w++)
		out[w] = vapic_get(v->vapic, off + 16 * w);
}

/* What any CPU can see of vCPU 'v' (racy reads of memory it owns: a snapshot). */
static void describe_remote(const struct vcpu *v, uint64_t now, uint64_t since, const char *why)
{
	uint32_t irr[8], isr[8], tmr[8], pir[8];
	char a[64], b[64], c[64], d[64];
	regs_of(v, APIC_IRR, irr);
	regs_of(v, APIC_ISR, isr);
	regs_of(v, APIC_TMR, tmr);
	for (int w = 0; w < 8; w++)
		pir[w] = (uint32_t)(__atomic_load_n(&v->pid->pir[w / 2], __ATOMIC_RELAXED) >> (w % 2 * 32));
	uint16_t ctl = __atomic_load_n(&v->pid->control, __ATOMIC_RELAXED);
	pr_info("hvdiag: cpu=%u %s: no exit for %llu ms; virr=%s visr=%s vtmr=%s tpr=0x%02x ppr=0x%02x\n", v->index,
		why, (unsigned long long)tsc_to_us(now - since) / 1000, vectors(a, irr), vectors(b, isr),
		vectors(c, tmr), vapic_get(v->vapic, APIC_TPR), vapic_get(v->vapic, APIC_PPR));
	pr_info("hvdiag: cpu=%u pid on=%u sn=%u nv=0x%02x ndst=0x%x pir=%s; timer lvt=0x%x deadline=%s%llu us armed=%llu fired=%llu\n",
		v->index, ctl & PI_ON ? 1 : 0, ctl & PI_SN ? 1 : 0, v->pid->nv, v->pid->ndst, vectors(d, pir), v->timer.lvt,
		v->timer.deadline && v->timer.deadline < now ? "-" : "+",
		(unsigned long long)tsc_to_us(v->timer.deadline ? (v->timer.deadline < now ? now - v->timer.deadline
											    : v->timer.deadline - now) : 0),
		(unsigned long long)v->timer.armed, (unsigned long long)v->timer.fired);
	uint32_t n = __atomic_load_n(&v->trace_n, __ATOMIC_RELAXED);
	char line[16 * 24], *p = line;
	for (uint32_t i = n > 16 ? n - 16 : 0; i < n; i++) {
		const struct exit_trace *t = &v->trace[i % 16];
		p += snprintf(p, 24, " %u@-%llums", t->reason, (unsigned long long)tsc_to_us(now - t->tsc) / 1000);
	}
	*p = 0;
	pr_info("hvdiag: cpu=%u last exits (reason@age), oldest first:%s\n", v->index, n ? line : " none");
}

/* The stuck vCPU's own view, at the exit its kick (or anything) caused. */
static void describe_own(struct vcpu *v)
{
	uint64_t st = vmcs_read(VMCS_GUEST_INTR_STATUS);
	pr_info("hvdiag: cpu=%u own view: exit %u rip=0x%llx rflags.if=%u activity=%llu interruptibility=0x%llx rvi=0x%02x svi=0x%02x entry_intr=0x%llx\n",
		v->index, v->reason & 0xffff, (unsigned long long)vmcs_read(VMCS_GUEST_RIP),
		(unsigned)(vmcs_read(VMCS_GUEST_RFLAGS) >> 9 & 1), (unsigned long long)vmcs_read(VMCS_GUEST_ACTIVITY_STATE),
		(unsigned long long)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY), (unsigned)(st & 0xff), (unsigned)(st >> 8 & 0xff),
		(unsigned long long)vmcs_read(VMCS_ENTRY_INTR_INFO));
}

void virq_hang_watchdog(struct vcpu *v)
{
	v->watchdog_exits++;
	uint32_t pending[8];
	pending_of(v, pending);
	uint32_t rvi = (uint32_t)vmcs_read(VMCS_GUEST_INTR_STATUS) & 0xff;
	bool any = rvi != 0;
	for (int w = 0; w < 8; w++)
		any |= pending[w] != 0;
	uint64_t act = vmcs_read(VMCS_GUEST_ACTIVITY_STATE);
	bool parked = act == GUEST_ACTIVITY_WAIT_SIPI ||
		      (act == GUEST_ACTIVITY_HLT && !(vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)));
	if (!any || parked || v->watchdog_said)
		return;     /* idle, parked by the guest (an offline CPU's HLT with IF = 0), or said already */
	v->watchdog_said = true;
	__atomic_fetch_add(&virq_hangs, 1, __ATOMIC_RELAXED);
	v->diags++;
	char a[64];
	pr_info("hvdiag: cpu=%u stuck: vectors %s pending (rvi=0x%02x), no exit, for %u s (hangcheck=); at its own VMX-preemption timer exit\n",
		v->index, vectors(a, pending), rvi, (unsigned)(threshold_tsc / sample_tsc));
	describe_own(v);
	uint64_t now = rdtsc();
	describe_remote(v, now, now - threshold_tsc, "at its watchdog exit");
}

void virq_hang_exit(struct vcpu *v, uint64_t now)
{
	if ((v->reason & 0xffff) != EXIT_REASON_PREEMPTION_TIMER || !v->preempt_watchdog)
		v->watchdog_said = false;
	struct exit_trace *t = &v->trace[v->trace_n % 16];
	t->tsc = now;
	t->reason = v->reason & 0xffff;
	t->qual = (uint32_t)v->qual;
	__atomic_store_n(&v->trace_n, v->trace_n + 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&v->diag_wanted, __ATOMIC_RELAXED) && __atomic_exchange_n(&v->diag_wanted, 0, __ATOMIC_SEQ_CST)) {
		describe_own(v);
		describe_remote(v, now, v->hang.since, "at its exit after the kick");
	}
	if (!threshold_tsc || vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	uint64_t next = __atomic_load_n(&next_sample, __ATOMIC_RELAXED);
	if (now < next || !__atomic_compare_exchange_n(&next_sample, &next, now + sample_tsc, false, __ATOMIC_SEQ_CST,
						       __ATOMIC_RELAXED))
		return;
	/* This CPU samples every other launched vCPU (one sampler at a time:
	 * the watches are its alone). */
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *o = vcpus[i];
		if (!o || o == v || !o->vapic || !o->launch_tsc)
			continue;
		uint32_t pending[8];
		pending_of(o, pending);
		uint64_t exits = __atomic_load_n(&o->exits_total, __ATOMIC_RELAXED);
		if (hang_observe(&o->hang, now, exits, pending, threshold_tsc) != HANG_STUCK)
			continue;
		__atomic_fetch_add(&virq_hangs, 1, __ATOMIC_RELAXED);
		o->diags++;
		char a[64];
		pr_info("hvdiag: cpu=%u stuck: vectors %s pending, no exit, for %u s (hangcheck=); seen from cpu=%u\n", o->index,
			vectors(a, o->hang.pending), (unsigned)(threshold_tsc / sample_tsc), v->index);
		describe_remote(o, now, o->hang.since, "seen from another CPU");
		__atomic_store_n(&o->diag_wanted, 1, __ATOMIC_SEQ_CST);
		lapic_send(o->apic_id, APIC_DM_FIXED | KICK_VECTOR);
	}
}
