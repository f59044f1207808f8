/* The EPT shootdown (vmx/ept_sync.c) where a mutation check found it
 * unguarded or hanging (issue 36, fault 11 and the hangs). The rule, from
 * SDM Vol. 3C, "Caching Translation Information": a CPU keeps EPT-derived
 * translations until it executes INVEPT; a vCPU that has invalidated at
 * the new generation before its entry holds no stale translation, so the
 * shooter has nothing to wait for. The machine: hw_fake's CPUs (1 GHz TSC),
 * the kick a fixed interrupt with vector 0xF1. */
#include "test.h"
#include "hw_fake.h"
#include "../../vmx/ept_sync.h"
#include "../../vmx/vcpu.h"
#include "../../lib/percpu.h"
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define E_KICK 0xf1u
#define E_MS   1000000ull                 /* TSC ticks a millisecond */

static void e_enter(unsigned i)
{
	hw_set_cpu(i, true);
	hw_vcpu(i)->parked = false;
	ept_sync_entry(hw_vcpu(i));
}

/* While the shooter (CPU 0) waits: each vCPU kicked since 'e_sent0' exits
 * and enters again at once (its INVEPT before the entry); a millisecond
 * passes each turn. */
static unsigned e_sent0, e_turns;
static void e_exit_and_reenter(void)
{
	e_turns++;
	for (unsigned n = e_sent0; n < hw_sent(); n++)
		if ((hw_sent_icr(n) & 0x7ff) == E_KICK) {
			struct vcpu *v = hw_vcpu(hw_sent_dest(n));
			hw_set_cpu(v->index, true);
			ept_sync_exit(v);
			ept_sync_entry(v);
		}
	hw_set_cpu(0, true);
	hw_tsc += E_MS;
}

/* Fault 11: a kicked vCPU that re-entered at the new generation is not
 * waited for: no time-out, the wait ends at the first turn. */
TEST(mutant_ept_shootdown_does_not_wait_for_a_vcpu_caught_up)
{
	hw_reset(3);
	ept_sync_enable();
	e_enter(1);
	e_enter(2);
	hw_set_cpu(0, true);
	ept_sync_exit(hw_vcpu(0));
	e_sent0 = hw_sent();
	e_turns = 0;
	hw_wait_hook = e_exit_and_reenter;
	struct ept_sync_stats s0 = ept_sync_stats();
	uint64_t t0 = hw_tsc;
	unsigned inv1 = hw_invepts(1), inv2 = hw_invepts(2);
	ept_shootdown();
	struct ept_sync_stats s1 = ept_sync_stats();
	CHECK_EQ(s1.kicks - s0.kicks, 2);
	CHECK_EQ(s1.timeouts, s0.timeouts);
	CHECK_EQ(e_turns, 1);
	CHECK(hw_tsc - t0 <= E_MS);
	/* Both back in the guest, each after its INVEPT at the new generation. */
	CHECK(hw_vcpu(1)->in_guest && hw_vcpu(2)->in_guest);
	CHECK_EQ(hw_invepts(1), inv1 + 1);
	CHECK_EQ(hw_invepts(2), inv2 + 1);
	CHECK_EQ(hw_vcpu(1)->ept_seen, hw_vcpu(0)->ept_seen);
	hw_wait_hook = NULL;
}

/* A shooter waiting for a vCPU that never leaves the guest, on a machine
 * whose TSC does not move (so the 100 ms time-out cannot come): the test
 * build's wait bound ends it with a message instead of a hang. */
static void e_frozen(void) { }
static void e_shoot(void *arg)
{
	(void)arg;
	ept_shootdown();
}
TEST(ept_shootdown_that_cannot_end_fails_the_test_not_hangs)
{
	hw_reset(2);
	ept_sync_enable();
	e_enter(1);
	hw_set_cpu(0, true);
	ept_sync_exit(hw_vcpu(0));
	hw_wait_hook = e_frozen;
	char msg[256] = "";
	CHECK(test_expect_bail(e_shoot, NULL, msg, sizeof msg));
	CHECK_CONTAINS(msg, "would never end");
	CHECK_EQ(hw_wait_turns, HW_WAIT_TURNS_MAX + 1);
	hw_wait_hook = NULL;
}

/* Two host threads, two CPUs: CPU 1 runs its vCPU (entry, guest code,
 * exit, again, as fast as it can; it never answers a kick, it just exits
 * often), CPU 0 shoots down again and again. The promise: once a
 * shootdown of generation g has returned, no vCPU runs guest code with a
 * translation older than g. The vCPU's "guest code" checks exactly that:
 * the generation it caught up to against the last one a shooter
 * finished. Any interleaving the hosts make is allowed; none may break it. */
static struct {
	uint64_t done;                       /* the last generation whose shootdown returned */
	bool stop;
	unsigned entries, stale;
	uint64_t stale_seen, stale_done;
} race;

static void *e_vcpu_thread(void *arg)
{
	static struct percpu cpu1;
	(void)arg;
	cpu1.index = 1;
	cpu1.apic_id = 1;
	hw_thread_cpu(&cpu1);
	struct vcpu *v = hw_vcpu(1);
	while (!__atomic_load_n(&race.stop, __ATOMIC_SEQ_CST)) {
		ept_sync_entry(v);
		uint64_t seen = __atomic_load_n(&v->ept_seen, __ATOMIC_SEQ_CST);
		for (unsigned k = 0; k < 64; k++) {       /* guest code */
			uint64_t done = __atomic_load_n(&race.done, __ATOMIC_SEQ_CST);
			if (done > seen && !race.stale++) {
				race.stale_seen = seen;
				race.stale_done = done;
			}
		}
		ept_sync_exit(v);
		__atomic_fetch_add(&race.entries, 1, __ATOMIC_SEQ_CST);
		sched_yield();                           /* root mode: the shooter may run */
	}
	hw_thread_cpu(NULL);
	return NULL;
}

/* The shooter's wait: a yield, then (a host under load may not run CPU 1
 * for a while) sleeps, so that the bound ends only a wait that never ends. */
static void e_yield(void)
{
	if (hw_wait_turns < 1000)
		sched_yield();
	else
		usleep(100);
}
/* CPU 1's INVEPT is slow: the worst case, a shootdown may finish while it
 * runs (waited for, a while, in the vCPU's INVEPT only). */
static void e_slow_invept(void)
{
	if (this_cpu()->index != 1)
		return;
	uint64_t d0 = __atomic_load_n(&race.done, __ATOMIC_SEQ_CST);
	for (unsigned k = 0; k < 200 && __atomic_load_n(&race.done, __ATOMIC_SEQ_CST) == d0; k++)
		sched_yield();
}
#define E_SHOTS 1000

TEST(ept_shootdown_against_entry_on_two_threads)
{
	hw_reset(2);
	ept_sync_enable();
	memset(&race, 0, sizeof race);
	hw_set_cpu(0, true);
	ept_sync_exit(hw_vcpu(0));
	hw_wait_hook = e_yield;
	hw_invept_hook = e_slow_invept;
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, e_vcpu_thread, NULL), 0);
	while (!__atomic_load_n(&race.entries, __ATOMIC_SEQ_CST))
		sched_yield();                           /* CPU 1 runs its vCPU */
	struct ept_sync_stats s0 = ept_sync_stats();
	for (unsigned i = 0; i < E_SHOTS; i++) {
		hw_wait_turns = 0;                       /* the wait bound, per shootdown */
		ept_shootdown();
		__atomic_store_n(&race.done, ept_sync_stats().shootdowns, __ATOMIC_SEQ_CST);
		if (i % 4 == 0)
			sched_yield();
	}
	__atomic_store_n(&race.stop, true, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	struct ept_sync_stats s1 = ept_sync_stats();
	CHECK_EQ(s1.shootdowns - s0.shootdowns, E_SHOTS);
	CHECK_EQ(s1.timeouts, s0.timeouts);
	if (race.stale) {
		char m[160];
		snprintf(m, sizeof m, "%u looks at stale translations: the vCPU at generation %llu after shootdown %llu returned",
			 race.stale, (unsigned long long)race.stale_seen, (unsigned long long)race.stale_done);
		test_fail(__FILE__, __LINE__, m);
	}
	CHECK(race.entries > 0);
	printf("    ept race: %u entries of CPU 1 against %u shootdowns, %llu kicks\n", race.entries, E_SHOTS,
	       (unsigned long long)(s1.kicks - s0.kicks));
	hw_wait_hook = NULL;
	hw_invept_hook = NULL;
}
