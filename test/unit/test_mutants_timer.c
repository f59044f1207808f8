/* timer=deadline's hand-over (vmx/virq_timer.c) where a mutation check
 * found it unguarded (issue 36, faults 19 and 20). The CPU is hw_fake's
 * (hw_fake.h: IA32_TSC_DEADLINE 0x6E0 passed to the LAPIC timer while the
 * guest's LVT serves, SDM Vol. 3A, "TSC-Deadline Mode": the MSR reads 0
 * once the timer fired; root mode runs with interrupts off, so a host
 * timer that fires in an exit waits in the IRR and exits at the guest's
 * next instruction). The guest's timer by the SDM: LVT timer MSR 0x832
 * (vector 7:0, mode 18:17: 00b one-shot, 10b TSC-deadline; "transitioning
 * between TSC-deadline mode and other timer modes also disarms the
 * timer"); SVR MSR 0x80F bit 8; initial count MSR 0x838, divide 0x83E. */
#include "test.h"
#include "hw_fake.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../vmx/virq_int.h"
#include "../../lib/percpu.h"
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define T_DL(vec) ((vec) | (2u << 17))

static bool t_posted(struct vcpu *v, unsigned vec)
{
	uint32_t w;
	memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
	return ((w >> (vec % 32)) & 1) || ((v->pid->pir[vec / 64] >> (vec % 64)) & 1);
}

/* Fault 19: the host served the guest's one-shot; the guest switches to
 * TSC-deadline mode (which disarms it) and arms nothing, and the host's
 * deadline fires in root mode as the exit begins. Handed over is no
 * deadline; the interrupt that comes is the host's, stale: counted, not
 * delivered. */
TEST(mutant_timer_hand_over_of_nothing_keeps_the_hosts_interrupt)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	CHECK_EQ(hw_guest_wrmsr(v, 0x80f, 0x1ff), 0);
	CHECK_EQ(hw_guest_wrmsr(v, 0x83e, 0), 0);           /* divide by 2 */
	CHECK_EQ(hw_guest_wrmsr(v, 0x832, 0xec), 0);        /* one-shot */
	CHECK_EQ(hw_guest_wrmsr(v, 0x838, 2000), 0);
	uint64_t h = hw_msr(0x6e0);
	CHECK(h != 0);                                      /* the host's deadline for it */
	CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x832, T_DL(0xec), h + 10), 0);
	CHECK_EQ(v->pass_handed, 0);
	hw_run_to(v, h + 5000);                             /* the host's interrupt exits */
	CHECK_EQ(v->pass_stale, 1);
	CHECK_EQ(v->pass_fired, 0);
	CHECK_EQ(v->timer_posts, 0);
	CHECK(!t_posted(v, 0xec));
	CHECK(virq_timer_balanced(v));
	/* The guest's own deadline after it is delivered, once. */
	CHECK_EQ(hw_guest_wrmsr(v, 0x6e0, h + 6000), 0);
	hw_run_to(v, h + 7000);
	CHECK(t_posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	CHECK(virq_timer_balanced(v));
}

/* Fault 20 and every dropped lock of the timer: two threads, two CPUs.
 * CPU 0 runs vCPU 0's exits, its LVT toggled between served and handed to
 * the LAPIC and deadlines armed; CPU 1 reports its timer meanwhile, as the
 * interval report does from another CPU: virq_timer_report and
 * virq_timer_summary, and a snapshot of its own under the timer lock held
 * a while. Every snapshot must be whole: armed = replaced + fired +
 * pending (timer/vtimer.h), unchanged while the lock is held. A lock
 * dropped on either side fails the lock check (lib/spinlock.h,
 * test/unit/lockcheck.c); one dropped on CPU 0's side while CPU 1 holds
 * the lock also tears a snapshot here. */
static struct { bool stop; unsigned snaps, torn; } tr;
static struct vcpu *tr_v;

static void *t_reporter(void *arg)
{
	static struct percpu cpu1;
	(void)arg;
	cpu1.index = 1;
	hw_thread_cpu(&cpu1);
	while (!__atomic_load_n(&tr.stop, __ATOMIC_SEQ_CST)) {
		static const uint32_t idx0 = 0;
		virq_timer_report(tr_v);
		virq_timer_summary(&idx0, 1);
		spin_lock(&tr_v->timer_lock);
		struct vtimer t = tr_v->timer;
		sched_yield();                                /* a report takes its time */
		bool whole = !memcmp(&t, &tr_v->timer, sizeof t);
		spin_unlock(&tr_v->timer_lock);
		__atomic_fetch_add(&tr.snaps, 1, __ATOMIC_SEQ_CST);
		if (!whole || t.armed != t.replaced + t.fired + (t.deadline ? 1 : 0))
			tr.torn++;
		usleep(20);                                   /* the next report */
	}
	hw_thread_cpu(NULL);
	return NULL;
}

TEST(timer_hand_over_against_the_report_on_two_threads)
{
	hw_reset_deadline(2);
	struct vcpu *v = tr_v = hw_vcpu(0);
	hw_set_cpu(0, true);
	memset(&tr, 0, sizeof tr);
	CHECK_EQ(hw_guest_wrmsr(v, 0x80f, 0x1ff), 0);
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, t_reporter, NULL), 0);
	while (!__atomic_load_n(&tr.snaps, __ATOMIC_SEQ_CST))
		sched_yield();                                /* CPU 1 reports */
	uint64_t now = hw_tsc;
	for (unsigned i = 0; i < 200; i++) {
		CHECK_EQ(hw_guest_wrmsr(v, 0x832, T_DL(0xec) | 1u << 16), 0);   /* masked: served */
		CHECK_EQ(hw_guest_wrmsr(v, 0x6e0, now + 500), 0);
		CHECK_EQ(hw_guest_wrmsr(v, 0x832, T_DL(0xec)), 0);              /* unmasked: to the LAPIC */
		now += 1000;
		hw_run_to(v, now);                                              /* it fires */
		v->pid->pir[0xec / 64] = 0;
		sched_yield();
	}
	__atomic_store_n(&tr.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	CHECK_EQ(tr.torn, 0);
	CHECK(tr.snaps > 0);
	CHECK(virq_timer_balanced(v));
	test_log_clear();
	virq_timer_report(v);
	/* Each deadline handed to the LAPIC (replaced in the served timer) and
	 * fired there once. */
	CHECK_CONTAINS(test_log(), "hvstat: cpu=0 timer tier=deadline armed=200 replaced=200 fired=0 masked=0 delivered=200 pending=0");
	CHECK_CONTAINS(test_log(), "to_lapic=200 to_host=199 fired=200 stale=0 undelivered=0");
	printf("    timer race: %u snapshots of CPU 1 against 200 hand-overs, %llu expiries\n", tr.snaps,
	       (unsigned long long)v->timer_posts);
}
