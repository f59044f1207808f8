/* The virtual x2APIC timer (timer/vtimer.c) against the SDM, Vol. 3A,
 * "APIC Timer", constants written out here: Divide Configuration Register
 * bits 0, 1 and 3 (0000b /2, 0001b /4, 0010b /8, 0011b /16, 1000b /32,
 * 1001b /64, 1010b /128, 1011b /1); LVT timer: vector 7:0, mask bit 16, mode
 * bits 18:17 (00b one-shot, 01b periodic, 10b TSC-deadline); the current
 * count falls from the initial count to 0; a write of 0 to the initial count
 * stops the timer; TSC-deadline mode ignores the initial count, a write of 0
 * to IA32_TSC_DEADLINE disarms, and the MSR reads 0 after it fired; a change
 * to or from TSC-deadline mode disarms (the other transitions are in
 * test_vtimer_sdm.c). Then the accounting invariant over random sequences. */
#include "test.h"
#include "../../timer/vtimer.h"

#define M_MASK      (1u << 16)
#define M_ONESHOT   (0u << 17)
#define M_PERIODIC  (1u << 17)
#define M_DEADLINE  (2u << 17)

static const struct { uint32_t tdcr, div; } m_divs[] = {
	{ 0x0, 2 }, { 0x1, 4 }, { 0x2, 8 }, { 0x3, 16 }, { 0x8, 32 }, { 0x9, 64 }, { 0xa, 128 }, { 0xb, 1 },
};

TEST(vtimer_divide_values)
{
	for (size_t i = 0; i < ARRAY_SIZE(m_divs); i++)
		CHECK_EQ(1u << vtimer_div_shift(m_divs[i].tdcr), m_divs[i].div);
}

TEST(vtimer_oneshot_counts_down_and_fires_once)
{
	for (size_t i = 0; i < ARRAY_SIZE(m_divs); i++) {
		struct vtimer t;
		memset(&t, 0, sizeof t);
		vtimer_reset(&t);
		vtimer_write_lvt(&t, 0x31 | M_ONESHOT, 0);
		vtimer_write_tdcr(&t, m_divs[i].tdcr);
		vtimer_write_tmict(&t, 1000, 5000);
		uint64_t end = 5000 + 1000ull * m_divs[i].div;
		CHECK_EQ(vtimer_read_tmcct(&t, 5000), 1000);
		CHECK_EQ(vtimer_read_tmcct(&t, 5000 + 10 * m_divs[i].div), 990);
		CHECK_EQ(vtimer_expire(&t, end - 1), -1);
		CHECK_EQ(vtimer_expire(&t, end), 0x31);
		CHECK_EQ(vtimer_expire(&t, end + 100000), -1);          /* once */
		CHECK_EQ(vtimer_read_tmcct(&t, end + 1), 0);
	}
}

TEST(vtimer_periodic_rearms_each_period)
{
	struct vtimer t;
	memset(&t, 0, sizeof t);
	vtimer_reset(&t);
	vtimer_write_lvt(&t, 0xec | M_PERIODIC, 0);
	vtimer_write_tdcr(&t, 0xb);                                     /* /1 */
	vtimer_write_tmict(&t, 500, 0);
	for (int k = 1; k <= 5; k++) {
		CHECK_EQ(vtimer_expire(&t, 500ull * k - 1), -1);
		CHECK_EQ(vtimer_expire(&t, 500ull * k), 0xec);
	}
	vtimer_write_tmict(&t, 0, 2600);                                /* 0 stops it */
	CHECK_EQ(vtimer_expire(&t, 1000000), -1);
	CHECK_EQ(t.armed, t.replaced + t.fired);
}

TEST(vtimer_tsc_deadline_mode)
{
	struct vtimer t;
	memset(&t, 0, sizeof t);
	vtimer_reset(&t);
	vtimer_write_tsc_deadline(&t, 7000);                            /* not in TSC-deadline mode: ignored */
	CHECK_EQ(vtimer_expire(&t, 8000), -1);
	vtimer_write_lvt(&t, 0xef | M_DEADLINE, 0);
	vtimer_write_tmict(&t, 100, 0);                                 /* ignored in this mode */
	CHECK_EQ(vtimer_expire(&t, 200), -1);
	vtimer_write_tsc_deadline(&t, 9000);
	CHECK_EQ(t.tsc_deadline, 9000);
	CHECK_EQ(vtimer_expire(&t, 8999), -1);
	CHECK_EQ(vtimer_expire(&t, 9100), 0xef);
	CHECK_EQ(t.tsc_deadline, 0);                                    /* reads 0 after it fired */
	vtimer_write_tsc_deadline(&t, 20000);
	vtimer_write_tsc_deadline(&t, 0);                               /* disarm */
	CHECK_EQ(vtimer_expire(&t, 30000), -1);
	vtimer_write_tsc_deadline(&t, 40000);
	vtimer_write_lvt(&t, 0xef | M_ONESHOT, 35000);                  /* leaving TSC-deadline mode disarms */
	CHECK_EQ(vtimer_expire(&t, 50000), -1);
	CHECK_EQ(t.armed, 3);
	CHECK_EQ(t.fired, 1);
	CHECK_EQ(t.replaced, 2);
	CHECK_EQ(t.late_max, 100);
}

TEST(vtimer_masked_expiry_counts_but_delivers_nothing)
{
	struct vtimer t;
	memset(&t, 0, sizeof t);
	vtimer_reset(&t);
	vtimer_write_lvt(&t, 0x40 | M_DEADLINE | M_MASK, 0);
	vtimer_write_tsc_deadline(&t, 100);
	CHECK_EQ(vtimer_expire(&t, 100), -1);
	CHECK_EQ(t.fired, 1);
	CHECK_EQ(t.masked, 1);
}

TEST(vtimer_lateness_buckets)
{
	CHECK_EQ(vtimer_late_bucket(0), 0);
	CHECK_EQ(vtimer_late_bucket(1), 1);
	CHECK_EQ(vtimer_late_bucket(2), 1);
	CHECK_EQ(vtimer_late_bucket(3), 2);
	CHECK_EQ(vtimer_late_bucket(1022), 9);
	CHECK_EQ(vtimer_late_bucket(1023), 10);
	CHECK_EQ(vtimer_late_bucket(~0ull >> 1), 31);
}

/* Random writes and expiry checks: every arming is replaced or fires. */
TEST(vtimer_accounting_invariant_random)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, now = 1000;
	struct vtimer t;
	memset(&t, 0, sizeof t);
	vtimer_reset(&t);
	uint64_t delivered = 0;
	for (int i = 0; i < 20000; i++) {
		seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
		now += seed % 700;
		switch ((seed >> 20) % 7) {
		case 0: vtimer_write_lvt(&t, 0x30 | (((seed >> 30) % 3) << 17) | ((seed >> 40) % 5 ? 0 : M_MASK), now); break;
		case 1: vtimer_write_tmict(&t, (uint32_t)((seed >> 33) % 2000), now); break;
		case 2: vtimer_write_tsc_deadline(&t, (seed >> 35) % 3 ? now + (seed >> 44) % 3000 : 0); break;
		case 3: vtimer_write_tdcr(&t, m_divs[(seed >> 37) % 8].tdcr); break;
		case 4: if ((seed >> 50) % 50 == 0) vtimer_reset(&t); break;
		default: if (vtimer_expire(&t, now) >= 0) delivered++; break;
		}
		CHECK_EQ(t.armed, t.replaced + t.fired + (t.deadline ? 1 : 0));
		if (t.armed != t.replaced + t.fired + (t.deadline ? 1 : 0))
			break;
	}
	CHECK_EQ(delivered, t.fired - t.masked);
	CHECK(t.fired > 100);
}

/* Periodic mode reloads the count when it reaches 0 (SDM Vol. 3A, "APIC
 * Timer"): the periods follow one another from the load, whenever the
 * expiry is noticed. The next deadline comes from the previous one, not
 * from the time of the late expiry; periods missed altogether are skipped
 * in phase. */
TEST(vtimer_periodic_rearm_keeps_phase)
{
	struct vtimer t;
	memset(&t, 0, sizeof t);
	vtimer_reset(&t);
	vtimer_write_lvt(&t, 0xec | M_PERIODIC, 0);
	vtimer_write_tdcr(&t, 0xb);                                     /* /1 */
	vtimer_write_tmict(&t, 1000, 0);                                /* zeros at 1000, 2000, ... */
	CHECK_EQ(vtimer_expire(&t, 1037), 0xec);                        /* noticed 37 late */
	CHECK_EQ(t.deadline, 2000);
	CHECK_EQ(vtimer_read_tmcct(&t, 1500), 500);
	CHECK_EQ(vtimer_expire(&t, 1999), -1);
	CHECK_EQ(vtimer_expire(&t, 2000), 0xec);
	CHECK_EQ(vtimer_expire(&t, 5500), 0xec);                        /* 3000, 4000, 5000 missed: one */
	CHECK_EQ(t.deadline, 6000);
	CHECK_EQ(vtimer_read_tmcct(&t, 5500), 500);
	CHECK_EQ(vtimer_expire(&t, 6000), 0xec);
	CHECK_EQ(t.deadline, 7000);
	CHECK_EQ(t.armed, t.replaced + t.fired + 1);
}
