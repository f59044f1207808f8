/* The housekeeping CPU's timer service (timer/service.c): one scan expires
 * every due timer, posts each vector once, and names the earliest deadline
 * left; an arming before that deadline (or during a scan) kicks it. */
#include "test.h"
#include "../../timer/service.h"

static uint32_t posted_to[16], posted_vec[16], nposts;
static void post(void *ctx, uint32_t i, uint8_t vec)
{
	(void)ctx;
	if (nposts < 16) {
		posted_to[nposts] = i;
		posted_vec[nposts] = vec;
	}
	nposts++;
}
static uint32_t kicks, kicked_apic, kicked_vec;
static void kick(uint32_t apic_id, uint8_t vec)
{
	kicks++;
	kicked_apic = apic_id;
	kicked_vec = vec;
}

#define DEADLINE_MODE (2u << 17)

TEST(timer_service_scan_posts_due_timers_once)
{
	struct vtimer t[3];
	spinlock_t l[3] = { { 0 } };
	struct vtimer *tp[3] = { &t[0], &t[1], &t[2] };
	spinlock_t *lp[3] = { &l[0], &l[1], &l[2] };
	struct timer_service s = { .n = 3, .timers = tp, .locks = lp, .post = post, .apic_id = 2,
				   .timer_vector = 0xf0, .kick_vector = 0xf1 };
	memset(t, 0, sizeof t);
	for (int i = 0; i < 3; i++) {
		vtimer_reset(&t[i]);
		vtimer_write_lvt(&t[i], (0xe0u + (unsigned)i) | DEADLINE_MODE, 0);
	}
	vtimer_write_tsc_deadline(&t[0], 1000);
	vtimer_write_tsc_deadline(&t[1], 5000);
	/* t[2] unarmed */
	nposts = 0;
	CHECK_EQ(timer_service_scan(&s, 999), 1000);       /* nothing due; earliest 1000 */
	CHECK_EQ(nposts, 0);
	CHECK_EQ(timer_service_scan(&s, 1200), 5000);
	CHECK_EQ(nposts, 1);
	CHECK_EQ(posted_to[0], 0);
	CHECK_EQ(posted_vec[0], 0xe0);
	CHECK_EQ(timer_service_scan(&s, 1300), 5000);      /* not again */
	CHECK_EQ(nposts, 1);
	CHECK_EQ(timer_service_scan(&s, 6000), 0);         /* the last one: nothing left */
	CHECK_EQ(nposts, 2);
	CHECK_EQ(posted_to[1], 1);
	CHECK_EQ(posted_vec[1], 0xe1);
	CHECK_EQ(s.posts, 2);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(t[i].armed, t[i].replaced + t[i].fired + (t[i].deadline ? 1 : 0));
}

TEST(timer_service_kicked_only_for_an_earlier_deadline)
{
	struct timer_service s = { .apic_id = 7, .kick_vector = 0xf1 };
	kicks = 0;
	s.next = 5000;
	timer_service_armed(&s, 0, 6000, kick);                /* later: it wakes in time anyway */
	CHECK_EQ(kicks, 0);
	timer_service_armed(&s, 0, 0, kick);                   /* a disarm */
	CHECK_EQ(kicks, 0);
	timer_service_armed(&s, 0, 4000, kick);                /* earlier: wake it */
	CHECK_EQ(kicks, 1);
	CHECK_EQ(kicked_apic, 7);
	CHECK_EQ(kicked_vec, 0xf1);
	s.next = 0;                                          /* it is scanning: always */
	timer_service_armed(&s, 0, 999999, kick);
	CHECK_EQ(kicks, 2);
	s.next = ~0ull;                                      /* asleep with nothing armed */
	timer_service_armed(&s, 0, 123, kick);
	CHECK_EQ(kicks, 3);
}

/* Issue 43 (the timer service): a vCPU on another package has its
 * deadline in its own CPU's host TSC; where the packages' TSCs differ (the
 * boot's compensation, boot/smp.c), the service converts before it
 * compares. Here vCPU 1's CPU counts 1000 behind the service's: its
 * deadline 5000 comes at the service's 6000, not at 5000 (early) and the
 * sleep is armed for 6000. */
TEST(timer_service_converts_another_packages_deadline)
{
	struct vtimer t[2];
	spinlock_t l[2] = { { 0 } };
	struct vtimer *tp[2] = { &t[0], &t[1] };
	spinlock_t *lp[2] = { &l[0], &l[1] };
	static const int64_t skew[2] = { 0, 1000 };
	struct timer_service s = { .n = 2, .timers = tp, .locks = lp, .post = post, .apic_id = 2,
				   .timer_vector = 0xf0, .kick_vector = 0xf1, .skew = skew };
	memset(t, 0, sizeof t);
	for (int i = 0; i < 2; i++) {
		vtimer_reset(&t[i]);
		vtimer_write_lvt(&t[i], (0xe0u + (unsigned)i) | DEADLINE_MODE, 0);
	}
	vtimer_write_tsc_deadline(&t[1], 5000);
	nposts = 0;
	CHECK_EQ(timer_service_scan(&s, 5500), 6000);       /* not due yet: its CPU reads 4500 */
	CHECK_EQ(nposts, 0);
	CHECK_EQ(timer_service_scan(&s, 6000), 0);
	CHECK_EQ(nposts, 1);
	CHECK_EQ(posted_to[0], 1);
	/* The kick compares in the service's TSC too: asleep until 5800, a
	 * deadline of 5000 on vCPU 1 (6000 here) needs no kick. */
	s.next = 5800;
	kicks = 0;
	timer_service_armed(&s, 1, 5000, kick);
	CHECK_EQ(kicks, 0);
	timer_service_armed(&s, 1, 4700, kick);             /* 5700 here: before 5800 */
	CHECK_EQ(kicks, 1);
}
