/* The hang check (vmx/hang.c, vmx/virq_hang.c). The rule, from issue 19:
 * a vCPU is stuck when some interrupt stays pending (virtual IRR or the
 * descriptor's PIR) with no VM exit of that vCPU for the whole threshold;
 * a healthy vCPU takes a pending vector or exits, an idle one has nothing
 * pending. The model below keeps every sample of the episode and decides
 * from them alone. Layouts from the SDM (Vol. 3C, "Virtual-APIC Page": IRR
 * at 0x200, vector v in the dword at 0x200 + 0x10 * (v / 32); "Posted-
 * Interrupt Descriptor": PIR bits 255:0). */
#include "test.h"
#include "hw_fake.h"
#include "../../vmx/hang.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../vmx/vmcs_ops.h"

#define M_IRR 0x200

struct m_sample { uint64_t t, exits; uint32_t p[8]; };

/* The model: 'stuck' at sample k when, over the samples of the current
 * episode (since the last exit, or since the last sample that shared no
 * vector with the running intersection), some vector is pending in every one,
 * the span is >= threshold, and it was not said before in this episode. */
static struct { struct m_sample s[4096]; int first, n; bool said; } m;

static int m_observe(const struct m_sample *x, uint64_t thr)
{
	m.s[m.n] = *x;
	int k = m.n++;
	if (k == 0 || m.s[m.first].exits != x->exits) {
		m.first = k;
		m.said = false;
	}
	uint32_t inter[8];
	bool any = false;
	for (int w = 0; w < 8; w++) {
		inter[w] = ~0u;
		for (int i = m.first; i <= k; i++)
			inter[w] &= m.s[i].p[w];
		any |= inter[w] != 0;
	}
	if (!any) {
		/* the episode restarts at this sample */
		m.first = k;
		m.said = false;
		for (int w = 0; w < 8; w++)
			any |= x->p[w] != 0;
		return any ? 1 : 0;
	}
	if (x->t - m.s[m.first].t >= thr && !m.said && k > m.first) {
		m.said = true;
		return 2;
	}
	return 1;
}

TEST(hang_observe_against_model)
{
	srand(19);
	for (int round = 0; round < 200; round++) {
		struct hang_watch w = { 0 };
		memset(&m, 0, sizeof m);
		uint64_t t = 1000, exits = 5, thr = 10;
		int stuck = 0;
		for (int k = 0; k < 200; k++) {
			struct m_sample x = { .t = t, .exits = exits };
			/* few vectors, so that episodes last */
			int r = rand() % 100;
			if (r < 70)
				x.p[7] |= 1u << (rand() % 3);            /* 0xe0..0xe2 */
			if (r % 3 == 0)
				x.p[7] |= 1u << (rand() % 3);
			int want = m_observe(&x, thr);
			enum hang_verdict got = hang_observe(&w, t, exits, x.p, thr);
			CHECK_EQ(got, want);
			stuck += got == HANG_STUCK;
			t += 1 + rand() % 4;
			if (rand() % 30 == 0)
				exits++;
		}
		(void)stuck;
	}
}

TEST(hang_observe_cases)
{
	struct hang_watch w = { 0 };
	uint32_t none[8] = { 0 }, ec[8] = { 0 }, fb[8] = { 0 };
	ec[0xec / 32] = 1u << (0xec % 32);
	fb[0xfb / 32] = 1u << (0xfb % 32);
	/* idle: never suspected */
	for (uint64_t t = 0; t < 100; t++)
		CHECK_EQ(hang_observe(&w, t, 1, none, 10), HANG_NONE);
	/* a vector pending at every sample for the threshold, no exit: once */
	CHECK_EQ(hang_observe(&w, 100, 1, ec, 10), HANG_SUSPECT);
	CHECK_EQ(hang_observe(&w, 105, 1, ec, 10), HANG_SUSPECT);
	CHECK_EQ(hang_observe(&w, 110, 1, ec, 10), HANG_STUCK);
	CHECK_EQ(hang_observe(&w, 130, 1, ec, 10), HANG_SUSPECT);
	/* an exit ends it; then a different vector each sample never adds up */
	CHECK_EQ(hang_observe(&w, 131, 2, ec, 10), HANG_SUSPECT);
	CHECK_EQ(hang_observe(&w, 140, 2, fb, 10), HANG_SUSPECT);
	CHECK_EQ(hang_observe(&w, 150, 2, ec, 10), HANG_SUSPECT);
	CHECK_EQ(hang_observe(&w, 160, 2, fb, 10), HANG_SUSPECT);
	CHECK_EQ(hang_common_vector(ec, fb), -1);
}

/* The run time: vCPU 1 keeps 0xec in its virtual IRR and 0xfb in its PIR
 * (the signature of the hang in issue 19) while vCPU 0 exits once a second. */
static void exit_at(struct vcpu *v, uint64_t t)
{
	v->exits_total++;
	v->reason = 1;   /* EXTERNAL_INTERRUPT */
	virq_hang_exit(v, t);
}

TEST(hang_check_finds_the_stuck_vcpu_and_kicks_it)
{
	hw_reset(2);
	struct vcpu *v0 = hw_vcpu(0), *v1 = hw_vcpu(1);
	v0->launch_tsc = v1->launch_tsc = 1;
	uint64_t sec = 1000000000ull;   /* hw_fake's TSC: 1 GHz */
	virq_hang_init(10);
	uint32_t hangs0 = virq_hangs;
	*(uint32_t *)(v1->vapic + M_IRR + 0x10 * (0xec / 32)) |= 1u << (0xec % 32);
	v1->pid->pir[0xfb / 64] |= 1ull << (0xfb % 64);
	exit_at(v1, 5 * sec);   /* its last exit */
	test_log_clear();
	unsigned sent0 = hw_sent();
	for (uint64_t s = 10; s <= 19; s++)
		exit_at(v0, s * sec);
	CHECK(!strstr(test_log(), "hvdiag: cpu=1 stuck"));   /* 9 s: not yet */
	exit_at(v0, 20 * sec);
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 stuck: vectors 0xec,0xfb pending, no exit, for 10 s");
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 last exits (reason@age), oldest first: 1@-15000ms");
	CHECK_CONTAINS(test_log(), "virr=0xec ");
	CHECK_CONTAINS(test_log(), "pir=0xfb;");
	CHECK_EQ(virq_hangs, hangs0 + 1);
	CHECK_EQ(hw_sent(), sent0 + 1);
	CHECK_EQ(hw_sent_dest(sent0), 1);
	CHECK_EQ(hw_sent_icr(sent0) & 0x7ff, 0xf1);   /* fixed, the kick vector */
	/* said once per episode */
	test_log_clear();
	for (uint64_t s = 21; s <= 40; s++)
		exit_at(v0, s * sec);
	CHECK(!strstr(test_log(), "stuck"));
	/* the kicked vCPU's exit describes its own state */
	exit_at(v1, 41 * sec);
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 own view: exit 1 ");
	virq_hang_init(0);
}

TEST(hang_check_quiet_for_idle_and_for_exiting_vcpus)
{
	hw_reset(2);
	struct vcpu *v0 = hw_vcpu(0), *v1 = hw_vcpu(1);
	v0->launch_tsc = v1->launch_tsc = 1;
	uint64_t sec = 1000000000ull;
	virq_hang_init(10);
	test_log_clear();
	/* idle: nothing pending, no exit for a minute */
	for (uint64_t s = 100; s <= 160; s++)
		exit_at(v0, s * sec);
	/* pending, but vCPU 1 exits every 5 s */
	*(uint32_t *)(v1->vapic + M_IRR + 0x10 * (0xec / 32)) |= 1u << (0xec % 32);
	for (uint64_t s = 161; s <= 220; s++) {
		exit_at(v0, s * sec);
		if (s % 5 == 0)
			exit_at(v1, s * sec + 1);
	}
	CHECK(!strstr(test_log(), "hvdiag"));
	virq_hang_init(0);
}

/* Every vCPU stuck with interrupts off makes no exit at all, so no other
 * CPU samples it: the hang check's VMX-preemption timer gives each its own
 * exit (hangcheck= seconds after its entry), where a waiting vector is
 * diagnosed once an episode, and an idle vCPU passes quietly. */
static void watchdog_exit(struct vcpu *v, uint64_t t)
{
	v->exits_total++;
	v->reason = EXIT_REASON_PREEMPTION_TIMER;
	virq_hang_exit(v, t);
	exit_preemption_timer(v);
}

TEST(hang_watchdog_diagnoses_at_the_vcpus_own_exit)
{
	hw_reset(2);
	struct vcpu *v1 = hw_vcpu(1);
	v1->launch_tsc = 1;
	uint64_t sec = 1000000000ull;
	virq_hang_init(10);
	/* without the hang check (hangcheck=0) a far deadline is the field's longest */
	vmx_env.cfg.watchdog_ticks = 0;
	virq_preempt_write(v1, 0x123456789ull);
	CHECK_EQ(vmcs_read(VMCS_PREEMPTION_TIMER_VALUE), 0xffffffffull);
	CHECK(!v1->preempt_watchdog);
	vmx_env.cfg.watchdog_ticks = 1000;
	/* the tier's value below the cap stays the tier's; above it, the cap */
	virq_preempt_write(v1, 999);
	CHECK_EQ(vmcs_read(VMCS_PREEMPTION_TIMER_VALUE), 999);
	CHECK(!v1->preempt_watchdog);
	virq_preempt_write(v1, 0xffffffffull);
	CHECK_EQ(vmcs_read(VMCS_PREEMPTION_TIMER_VALUE), 1000);
	CHECK(v1->preempt_watchdog);
	uint32_t hangs0 = virq_hangs;
	uint64_t w0 = v1->watchdog_exits;
	test_log_clear();
	watchdog_exit(v1, 10 * sec);   /* idle: nothing waits */
	CHECK(!strstr(test_log(), "hvdiag"));
	*(uint32_t *)(v1->vapic + M_IRR + 0x10 * (0xec / 32)) |= 1u << (0xec % 32);
	watchdog_exit(v1, 20 * sec);
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 stuck: vectors 0xec pending");
	CHECK_CONTAINS(test_log(), "at its own VMX-preemption timer exit");
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 own view: exit 52 ");
	CHECK_CONTAINS(test_log(), "no exit for 10000 ms");
	CHECK_EQ(virq_hangs, hangs0 + 1);
	test_log_clear();
	watchdog_exit(v1, 30 * sec);   /* the same episode: said once */
	CHECK(!strstr(test_log(), "stuck"));
	exit_at(v1, 31 * sec);         /* any other exit ends it */
	watchdog_exit(v1, 41 * sec);
	CHECK_CONTAINS(test_log(), "hvdiag: cpu=1 stuck");
	CHECK_EQ(virq_hangs, hangs0 + 2);
	CHECK_EQ(v1->watchdog_exits, w0 + 4);
	vmx_env.cfg.watchdog_ticks = 0;
	v1->preempt_watchdog = false;
	virq_hang_init(0);
}
