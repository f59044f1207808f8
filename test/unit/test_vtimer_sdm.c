/* The virtual x2APIC timer's mode transitions (timer/vtimer.c) against a
 * model of the SDM's rules, written out here (SDM Vol. 3A, "APIC Timer" and
 * "TSC-Deadline Mode"); nothing is taken from the project's headers but the
 * functions under test.
 *
 * - LVT timer: vector bits 7:0, mask bit 16, mode bits 18:17: 00b one-shot,
 *   01b periodic, 10b TSC-deadline.
 * - Divide configuration bits 3, 1:0: 000b /2, 001b /4, 010b /8, 011b /16,
 *   100b /32, 101b /64, 110b /128, 111b /1.
 * - A write of the initial count loads the current count and starts the
 *   count-down; 0 stops the timer. The count falls by one every 'divide'
 *   clocks (here TSC ticks).
 * - At zero the timer interrupt is generated (not if the LVT is masked: "the
 *   mask flag ... can be used to mask the timer interrupt"); one-shot: "the
 *   timer remains at its 0 value until reprogrammed"; periodic: "the current-
 *   count register is automatically reloaded from the initial-count register
 *   when the count reaches 0 ... and the count-down is repeated".
 * - TSC-deadline mode: initial-count writes are ignored and the current
 *   count reads 0; a non-zero IA32_TSC_DEADLINE arms, 0 disarms; at TSC >=
 *   the deadline the interrupt is generated and the MSR clears; the MSR
 *   ignores writes outside this mode.
 * - "Transitioning between TSC-deadline mode and other timer modes also
 *   disarms the timer." Between one-shot and periodic nothing is disarmed:
 *   the count runs on (the SDM's older sentence that any mode change
 *   disarms was withdrawn in its May 2019 edition; KVM's apic_update_lvtt
 *   does the same), and the new mode decides what happens at zero. */
#include "test.h"
#include "../../timer/vtimer.h"

#define S_MASK       (1u << 16)
#define S_ONESHOT    0u
#define S_PERIODIC   1u
#define S_DEADLINE   2u
#define S_LVT(vec, mode, masked) ((vec) | ((mode) << 17) | ((masked) ? S_MASK : 0))
#define S_MODE(lvt)  (((lvt) >> 17) & 3)

static const struct { uint32_t tdcr, div; } s_divs[] = {
	{ 0x0, 2 }, { 0x1, 4 }, { 0x2, 8 }, { 0x3, 16 }, { 0x8, 32 }, { 0x9, 64 }, { 0xa, 128 }, { 0xb, 1 },
};

struct sdm_timer {
	uint32_t lvt, tmict, div;
	bool counting;           /* current count above 0 and falling */
	uint64_t zero_at;        /* TSC at which the current count reaches 0 */
	uint64_t tsc_deadline;   /* IA32_TSC_DEADLINE */
	bool irq;                /* an interrupt generated since the last poll */
};

static void s_init(struct sdm_timer *s)
{
	memset(s, 0, sizeof *s);
	s->lvt = S_MASK;         /* reset: LVT masked, counts 0, TDCR 0 (/2) */
	s->div = 2;
}

/* Everything that happens up to TSC 'now'. */
static void s_run(struct sdm_timer *s, uint64_t now)
{
	if (S_MODE(s->lvt) == S_DEADLINE) {
		if (s->tsc_deadline && now >= s->tsc_deadline) {
			s->irq |= !(s->lvt & S_MASK);
			s->tsc_deadline = 0;
		}
		return;
	}
	while (s->counting && now >= s->zero_at) {
		s->irq |= !(s->lvt & S_MASK);
		if (S_MODE(s->lvt) == S_PERIODIC)
			s->zero_at += (uint64_t)s->tmict * s->div;   /* reloaded at zero */
		else
			s->counting = false;                          /* stays at 0 */
	}
}

static void s_write_lvt(struct sdm_timer *s, uint32_t val, uint64_t now)
{
	s_run(s, now);
	if ((S_MODE(s->lvt) == S_DEADLINE) != (S_MODE(val) == S_DEADLINE)) {
		s->counting = false;
		s->tsc_deadline = 0;
	}
	s->lvt = val;
}

static void s_write_tmict(struct sdm_timer *s, uint32_t val, uint64_t now)
{
	s_run(s, now);
	if (S_MODE(s->lvt) == S_DEADLINE)
		return;
	s->tmict = val;
	s->counting = val != 0;
	s->zero_at = now + (uint64_t)val * s->div;
}

static void s_write_tdcr(struct sdm_timer *s, uint32_t tdcr)
{
	for (size_t i = 0; i < ARRAY_SIZE(s_divs); i++)
		if (s_divs[i].tdcr == tdcr)
			s->div = s_divs[i].div;
}

static void s_write_deadline(struct sdm_timer *s, uint64_t val, uint64_t now)
{
	s_run(s, now);
	if (S_MODE(s->lvt) == S_DEADLINE)
		s->tsc_deadline = val;
}

/* The current count: the initial count less one per 'div' ticks elapsed. */
static uint32_t s_tmcct(struct sdm_timer *s, uint64_t now)
{
	s_run(s, now);
	if (S_MODE(s->lvt) == S_DEADLINE || !s->counting)
		return 0;
	return (uint32_t)((s->zero_at - now + s->div - 1) / s->div);
}

static bool s_poll(struct sdm_timer *s, uint64_t now)
{
	s_run(s, now);
	bool r = s->irq;
	s->irq = false;
	return r;
}

/* The timer under test and the model side by side; every step first takes
 * the expiries due (as the hypervisor does before it emulates a write),
 * then checks that both agree on the interrupt, the count and the MSR. */
struct pair {
	struct vtimer t;
	struct sdm_timer s;
	uint64_t delivered;
};

static void p_init(struct pair *p)
{
	memset(&p->t, 0, sizeof p->t);
	vtimer_reset(&p->t);
	s_init(&p->s);
	p->delivered = 0;
}

static bool p_balanced(const struct pair *p)
{
	return p->t.armed == p->t.replaced + p->t.fired + (p->t.deadline ? 1 : 0);
}

/* Polls both at 'now'; returns whether an interrupt came. */
static bool p_poll(struct pair *p, uint64_t now)
{
	int vec = vtimer_expire(&p->t, now);
	bool irq = s_poll(&p->s, now);
	CHECK_EQ(vec >= 0, irq);
	if (vec >= 0) {
		CHECK_EQ(vec, p->s.lvt & 0xff);
		p->delivered++;
	}
	CHECK(p_balanced(p));
	return vec >= 0;
}

static void p_lvt(struct pair *p, uint32_t val, uint64_t now)
{
	p_poll(p, now);
	vtimer_write_lvt(&p->t, val, now);
	s_write_lvt(&p->s, val, now);
	CHECK(p_balanced(p));
}

static void p_tmict(struct pair *p, uint32_t val, uint64_t now)
{
	p_poll(p, now);
	vtimer_write_tmict(&p->t, val, now);
	s_write_tmict(&p->s, val, now);
	CHECK(p_balanced(p));
}

static void p_tdcr(struct pair *p, uint32_t tdcr)
{
	vtimer_write_tdcr(&p->t, tdcr);
	s_write_tdcr(&p->s, tdcr);
}

static void p_deadline(struct pair *p, uint64_t val, uint64_t now)
{
	p_poll(p, now);
	vtimer_write_tsc_deadline(&p->t, val);
	s_write_deadline(&p->s, val, now);
	CHECK(p_balanced(p));
}

/* Both counts at 'now' (exact where 'now' is a whole number of divide
 * periods from the load, as in the scenarios below). */
static uint32_t p_count(struct pair *p, uint64_t now)
{
	uint32_t got = vtimer_read_tmcct(&p->t, now), want = s_tmcct(&p->s, now);
	CHECK_EQ(got, want);
	return got;
}

/* The peer's APIC test: TMICT 0x999999 one-shot, wait for the count to be at
 * or below half, switch to periodic: the count runs on (non-zero), and at
 * zero it reloads from the initial count and interrupts every period. */
TEST(vtimer_sdm_oneshot_to_periodic_mid_count)
{
	const uint32_t ict = 0x999999;
	for (size_t d = 0; d < ARRAY_SIZE(s_divs); d++) {
		struct pair p;
		uint64_t div = s_divs[d].div, t0 = 1000, per = ict * div;
		p_init(&p);
		p_tdcr(&p, s_divs[d].tdcr);
		p_lvt(&p, S_LVT(0xec, S_ONESHOT, false), 0);
		p_tmict(&p, ict, t0);
		uint64_t half = t0 + (ict / 2 + 1) * div;
		CHECK(p_count(&p, half) <= ict / 2);
		p_lvt(&p, S_LVT(0xec, S_PERIODIC, false), half);
		CHECK(p_count(&p, half) != 0);                         /* "should have a non-zero value" */
		CHECK_EQ(p_count(&p, half), ict - (ict / 2 + 1));
		CHECK(!p_poll(&p, t0 + per - 1));
		CHECK(p_poll(&p, t0 + per));                           /* the one-shot's zero */
		CHECK_EQ(p_count(&p, t0 + per), ict);                  /* "reset to the initial-count" */
		CHECK_EQ(p_count(&p, t0 + per + 10 * div), ict - 10);
		CHECK(!p_poll(&p, t0 + 2 * per - 1));
		CHECK(p_poll(&p, t0 + 2 * per));                       /* and each period after */
		CHECK(p_poll(&p, t0 + 3 * per));
		CHECK_EQ(p.delivered, 3);
	}
}

/* A one-shot that already reached 0 stays at 0 ("until reprogrammed") when
 * the mode becomes periodic; the next TMICT write starts it periodic. */
TEST(vtimer_sdm_expired_oneshot_to_periodic_needs_a_count)
{
	struct pair p;
	p_init(&p);
	p_tdcr(&p, 0xb);                                               /* /1 */
	p_lvt(&p, S_LVT(0x40, S_ONESHOT, false), 0);
	p_tmict(&p, 300, 100);
	CHECK(p_poll(&p, 400));
	p_lvt(&p, S_LVT(0x40, S_PERIODIC, false), 500);
	CHECK_EQ(p_count(&p, 500), 0);
	CHECK(!p_poll(&p, 5000));
	p_tmict(&p, 300, 6000);
	CHECK(p_poll(&p, 6300));
	CHECK(p_poll(&p, 6600));
	/* And a periodic timer switched to one-shot mid-period fires at its
	 * zero once more, then stays at 0. */
	p_lvt(&p, S_LVT(0x40, S_ONESHOT, false), 6700);
	CHECK_EQ(p_count(&p, 6700), 200);
	CHECK(p_poll(&p, 6900));
	CHECK_EQ(p_count(&p, 6901), 0);
	CHECK(!p_poll(&p, 100000));
	CHECK_EQ(p.delivered, 4);
}

TEST(vtimer_sdm_periodic_to_oneshot_mid_count)
{
	for (size_t d = 0; d < ARRAY_SIZE(s_divs); d++) {
		struct pair p;
		uint64_t div = s_divs[d].div, per = 1000 * div;
		p_init(&p);
		p_tdcr(&p, s_divs[d].tdcr);
		p_lvt(&p, S_LVT(0x31, S_PERIODIC, false), 0);
		p_tmict(&p, 1000, 0);
		CHECK(p_poll(&p, per));
		CHECK(p_poll(&p, 2 * per));
		p_lvt(&p, S_LVT(0x31, S_ONESHOT, false), 2 * per + 250 * div);
		CHECK_EQ(p_count(&p, 2 * per + 250 * div), 750);        /* runs on */
		CHECK(!p_poll(&p, 3 * per - 1));
		CHECK(p_poll(&p, 3 * per));                            /* fires at its zero */
		CHECK_EQ(p_count(&p, 3 * per + div), 0);               /* no reload */
		CHECK(!p_poll(&p, 10 * per));
		CHECK_EQ(p.delivered, 3);
	}
}

/* Either count mode to TSC-deadline and back: each crossing disarms;
 * between one-shot and periodic the count runs on. */
TEST(vtimer_sdm_deadline_transitions)
{
	struct pair p;
	p_init(&p);
	p_tdcr(&p, 0x3);                                               /* /16 */
	p_lvt(&p, S_LVT(0x50, S_ONESHOT, false), 0);
	p_tmict(&p, 100, 0);                                           /* zero at 1600 */
	p_lvt(&p, S_LVT(0x50, S_DEADLINE, false), 800);                /* one-shot -> deadline: disarmed */
	CHECK_EQ(p_count(&p, 800), 0);
	CHECK(!p_poll(&p, 1600));
	p_tmict(&p, 100, 2000);                                        /* ignored in this mode */
	CHECK(!p_poll(&p, 4000));
	p_deadline(&p, 5000, 4000);
	CHECK_EQ(p.t.tsc_deadline, p.s.tsc_deadline);
	p_lvt(&p, S_LVT(0x50, S_PERIODIC, false), 4500);               /* deadline -> periodic: disarmed */
	CHECK(!p_poll(&p, 5000));
	CHECK_EQ(p.t.tsc_deadline, 0);
	p_deadline(&p, 9000, 5100);                                    /* ignored outside the mode */
	CHECK(!p_poll(&p, 9000));
	p_tmict(&p, 100, 10000);                                       /* periodic, zero at 11600 */
	CHECK(p_poll(&p, 11600));
	p_lvt(&p, S_LVT(0x50, S_ONESHOT, false), 12400);               /* periodic -> one-shot: runs on */
	CHECK_EQ(p_count(&p, 12400), 50);
	p_lvt(&p, S_LVT(0x50, S_PERIODIC, false), 12800);              /* and back: runs on */
	CHECK_EQ(p_count(&p, 12800), 25);
	CHECK(p_poll(&p, 13200));
	CHECK_EQ(p_count(&p, 13200), 100);
	p_lvt(&p, S_LVT(0x50, S_DEADLINE, false), 13600);              /* periodic -> deadline: disarmed */
	CHECK(!p_poll(&p, 20000));
	p_deadline(&p, 21000, 20000);
	CHECK(p_poll(&p, 21000));
	CHECK_EQ(p.t.tsc_deadline, 0);
	p_deadline(&p, 30000, 22000);
	p_lvt(&p, S_LVT(0x50, S_ONESHOT, false), 25000);               /* deadline -> one-shot: disarmed */
	CHECK(!p_poll(&p, 30000));
	CHECK_EQ(p_count(&p, 30000), 0);
	CHECK_EQ(p.delivered, 3);
}

/* The mask stops the interrupt, never the count: set and cleared with and
 * without a mode change, the periods go on. */
TEST(vtimer_sdm_mask_on_off)
{
	struct pair p;
	p_init(&p);
	p_tdcr(&p, 0xb);                                               /* /1 */
	p_lvt(&p, S_LVT(0x60, S_PERIODIC, false), 0);
	p_tmict(&p, 1000, 0);
	CHECK(p_poll(&p, 1000));
	p_lvt(&p, S_LVT(0x60, S_PERIODIC, true), 1500);                /* mask on */
	CHECK_EQ(p_count(&p, 1500), 500);
	CHECK(!p_poll(&p, 2000));                                      /* masked expiry */
	CHECK_EQ(p.t.masked, 1);
	p_lvt(&p, S_LVT(0x61, S_ONESHOT, false), 2300);                /* mask off, one-shot */
	CHECK_EQ(p_count(&p, 2300), 700);
	CHECK(p_poll(&p, 3000));                                       /* delivered, vector 0x61 */
	CHECK(!p_poll(&p, 4000));
	p_tmict(&p, 1000, 4000);
	p_lvt(&p, S_LVT(0x61, S_PERIODIC, true), 4200);                /* mask on, periodic */
	CHECK(!p_poll(&p, 5000));
	CHECK(!p_poll(&p, 6000));
	p_lvt(&p, S_LVT(0x62, S_PERIODIC, false), 6100);               /* mask off */
	CHECK(p_poll(&p, 7000));
	CHECK_EQ(p_count(&p, 7000), 1000);
	CHECK_EQ(p.t.masked, 3);
	CHECK_EQ(p.delivered, 3);
}

/* Random writes of every register, polls at random times: the timer and the
 * model agree on each interrupt, on the count (the model's count falls at
 * the end of each divide period, the timer's may fall at its start: they
 * differ by at most 1) and on IA32_TSC_DEADLINE; the accounts balance. */
TEST(vtimer_sdm_random_against_model)
{
	uint64_t seed = 0x2545f4914f6cdd1dull, now = 1000;
	struct pair p;
	p_init(&p);
	for (int i = 0; i < 30000; i++) {
		seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
		now += seed % 900;
		switch ((seed >> 20) % 8) {
		case 0:
		case 1:
			p_lvt(&p, S_LVT(0x30 + (uint32_t)((seed >> 28) % 16), (uint32_t)((seed >> 33) % 3),
					(seed >> 40) % 4 == 0), now);
			break;
		case 2:
			p_tmict(&p, (uint32_t)((seed >> 35) % 600), now);
			break;
		case 3:  /* a divide change, then a count with it */
			p_tdcr(&p, s_divs[(seed >> 37) % 4].tdcr);
			p_tmict(&p, 1 + (uint32_t)((seed >> 42) % 300), now);
			break;
		case 4:
			p_deadline(&p, (seed >> 45) % 4 ? now + (seed >> 48) % 5000 : 0, now);
			break;
		default: {
			p_poll(&p, now);
			uint32_t got = vtimer_read_tmcct(&p.t, now), want = s_tmcct(&p.s, now);
			CHECK(want == got || want == got + 1);
			CHECK_EQ(p.t.tsc_deadline, p.s.tsc_deadline);
			if (!(want == got || want == got + 1) || p.t.tsc_deadline != p.s.tsc_deadline) {
				printf("    step %d at %llu: tmcct %u, model %u\n", i, (unsigned long long)now, got, want);
				return;
			}
			break;
		}
		}
	}
	CHECK_EQ(p.delivered, p.t.fired - p.t.masked);
	CHECK(p.delivered > 1000);
}
