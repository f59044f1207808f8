/* The guest's TSC (guest/msr.c, vmx/tsc.c) and its timer in guest TSC time
 * (vmx/virq_timer.c, timer/vtimer.c), on the CPU of hw_fake.h, against the
 * SDM's rules written out here:
 *  - IA32_TSC is MSR 0x10, IA32_TSC_ADJUST MSR 0x3B (Vol. 3B, "Time-Stamp
 *    Counter Adjustment"): "if an execution of WRMSR to the
 *    IA32_TIME_STAMP_COUNTER MSR adds (or subtracts) value X from the TSC,
 *    the logical processor also adds (or subtracts) value X from the
 *    IA32_TSC_ADJUST MSR"; "if an execution of WRMSR to the IA32_TSC_ADJUST
 *    MSR adds (or subtracts) value X from that MSR, the logical processor
 *    also adds (or subtracts) value X from the TSC";
 *  - RDTSC and RDMSR IA32_TSC read the TSC; the TSC counts on;
 *  - IA32_TSC_DEADLINE is MSR 0x6E0; in TSC-deadline mode (LVT timer MSR
 *    0x832, mode bits 18:17 = 10b) the timer fires once the TSC is at or
 *    above the written value, then reads 0 (Vol. 3A, "TSC-Deadline Mode");
 *    the deadline is a TSC value, so moving the TSC moves when it comes;
 *  - the MSR bitmap's read-low half starts at byte 0, write-low at 2048,
 *    bit m % 8 of byte m / 8 (Vol. 3C, "MSR-Bitmap Address"). */
#include "test.h"
#include "hw_fake.h"
#include "sdm_vmcs.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../vmx/tiers.h"
#include "../../guest/msr.h"
#include "../../timer/vtimer.h"

#define M_TSC 0x10
#define M_TSC_ADJUST 0x3b
#define M_TSC_DEADLINE 0x6e0
#define M_LVT_TIMER 0x832
#define M_SVR 0x80f
#define M_LVT_DEADLINE(vec) ((vec) | (2u << 17))
#define M_LVT_MASKED (1u << 16)

static bool m_write_exits(const uint8_t *bm, uint32_t m) { return (bm[2048 + m / 8] >> (m % 8)) & 1; }
static bool m_read_exits(const uint8_t *bm, uint32_t m) { return (bm[m / 8] >> (m % 8)) & 1; }

/* The model: the TSC as the SDM defines it for one logical processor. */
struct m_cpu { uint64_t ahead; uint64_t adjust; };   /* TSC = host time + ahead */
static uint64_t m_tsc(const struct m_cpu *m) { return hw_tsc + m->ahead; }
static void m_write_tsc(struct m_cpu *m, uint64_t val)
{
	uint64_t x = val - m_tsc(m);
	m->ahead += x;
	m->adjust += x;
}
static void m_write_adjust(struct m_cpu *m, uint64_t val)
{
	uint64_t x = val - m->adjust;
	m->adjust = val;
	m->ahead += x;
}

static uint64_t rd(struct vcpu *v, uint32_t msr)
{
	uint64_t val = ~0ull;
	CHECK_EQ(hw_guest_rdmsr(v, msr, &val), 0);
	return val;
}
static void wr(struct vcpu *v, uint32_t msr, uint64_t val) { CHECK_EQ(hw_guest_wrmsr(v, msr, val), 0); }

TEST(tsc_writes_exit_adjust_reads_exit_tsc_reads_pass)
{
	static uint8_t bm[4096];
	for (int virt = 0; virt < 2; virt++) {
		msr_bitmap_build(bm, virt, false);
		CHECK(m_write_exits(bm, M_TSC));
		CHECK(m_write_exits(bm, M_TSC_ADJUST));
		CHECK(!m_read_exits(bm, M_TSC));         /* the CPU adds the offset itself */
		CHECK(m_read_exits(bm, M_TSC_ADJUST));   /* the vCPU's own value */
	}
}

/* Random writes of either MSR, time passing, reads of all three views. */
TEST(tsc_msr_writes_follow_the_sdm)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	struct m_cpu m = { 0, 0 };
	uint64_t seed = 0x7c5;
	for (int i = 0; i < 2000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t val = seed >> 3;
		switch ((seed >> 60) % 4) {
		case 0: wr(v, M_TSC, val); m_write_tsc(&m, val); break;
		case 1: wr(v, M_TSC_ADJUST, val); m_write_adjust(&m, val); break;
		case 2: wr(v, M_TSC_ADJUST, m.adjust - (seed >> 40)); m_write_adjust(&m, m.adjust - (seed >> 40)); break;
		default: hw_tsc += (seed >> 50) + 1; break;
		}
		if (hw_guest_rdtsc() != m_tsc(&m) || rd(v, M_TSC) != m_tsc(&m) || rd(v, M_TSC_ADJUST) != m.adjust) {
			char msg[160];
			snprintf(msg, sizeof msg, "step %d: rdtsc 0x%llx adjust 0x%llx, the SDM says 0x%llx and 0x%llx", i,
				 (unsigned long long)hw_guest_rdtsc(), (unsigned long long)v->tsc.adjust,
				 (unsigned long long)m_tsc(&m), (unsigned long long)m.adjust);
			test_fail(__FILE__, __LINE__, msg);
			return;
		}
	}
	CHECK_EQ(vmcs_record_get(SDM_TSC_OFFSET), m.ahead);
	/* The host's own TSC and IA32_TSC_ADJUST were never written. */
	CHECK_EQ(hw_msr(M_TSC_ADJUST), 0);
	CHECK_EQ(hw_msr(M_TSC), 0);
}

/* Which tiers: the served ones (posted: the vCPU's own host timer; trap),
 * timer=deadline (the LAPIC at offset 0, served otherwise) and timer=apicv
 * (the CPU's guest deadline in host TSC). */
enum tier { T_POSTED, T_TRAP, T_DEADLINE, T_APICV, T_N };
static const char *const tier_name[] = { "posted", "trap", "deadline", "apicv" };
static void setup(enum tier t)
{
	if (t == T_DEADLINE)
		hw_reset_deadline(1);
	else if (t == T_APICV)
		hw_reset_apicv(1);
	else {
		hw_reset(1);
		vmx_env.cfg.timer = t == T_TRAP ? TIMER_TRAP : TIMER_POSTED;
	}
}
/* Deliveries of vec: the vCPU's posts, or the CPU's own virtual timer. */
static uint64_t delivered(struct vcpu *v, uint8_t vec) { return v->timer_posts + hw_vtimer_fires(vec); }
static void fail_at(int line, enum tier t, const char *what, uint64_t got, uint64_t want)
{
	char msg[200];
	snprintf(msg, sizeof msg, "timer=%s: %s: %llu, want %llu", tier_name[t], what, (unsigned long long)got,
		 (unsigned long long)want);
	test_fail(__FILE__, line, msg);
}
#define EXPECT(t, what, got, want) do { uint64_t _g = (got), _w = (want); if (_g != _w) fail_at(__LINE__, t, what, _g, _w); } while (0)

/* The guest moves its TSC forward, arms a deadline in its own time, moves
 * the TSC back while it is armed: the expiry comes when the guest's TSC
 * reaches the deadline, never at the same host time. */
TEST(tsc_deadline_in_guest_time_every_tier)
{
	for (enum tier t = 0; t < T_N; t++) {
		setup(t);
		struct vcpu *v = hw_vcpu(0);
		struct m_cpu m = { 0, 0 };
		wr(v, M_SVR, 0x1ff);
		wr(v, M_LVT_TIMER, M_LVT_DEADLINE(0xec));
		wr(v, M_TSC_ADJUST, 1000000);
		m_write_adjust(&m, 1000000);
		EXPECT(t, "rdtsc after IA32_TSC_ADJUST += 10^6", hw_guest_rdtsc(), m_tsc(&m));
		uint64_t dl = m_tsc(&m) + 5000;               /* guest time */
		wr(v, M_TSC_DEADLINE, dl);
		EXPECT(t, "IA32_TSC_DEADLINE read back", rd(v, M_TSC_DEADLINE), dl);
		hw_run_to(v, dl - m.ahead - 1);
		EXPECT(t, "deliveries one tick before the deadline", delivered(v, 0xec), 0);
		/* Back by 3000 while armed: the deadline is 3000 host ticks later. */
		wr(v, M_TSC, m_tsc(&m) - 3000);
		m_write_tsc(&m, m_tsc(&m) - 3000);
		EXPECT(t, "IA32_TSC_ADJUST after IA32_TSC -= 3000", rd(v, M_TSC_ADJUST), m.adjust);
		EXPECT(t, "IA32_TSC_DEADLINE keeps the guest's value", rd(v, M_TSC_DEADLINE), dl);
		hw_run_to(v, dl - m.ahead - 1);
		EXPECT(t, "deliveries one guest tick before the deadline", delivered(v, 0xec), 0);
		hw_run_to(v, dl - m.ahead);
		EXPECT(t, "deliveries at the deadline", delivered(v, 0xec), 1);
		EXPECT(t, "IA32_TSC_DEADLINE after it fired", rd(v, M_TSC_DEADLINE), 0);
		/* A deadline already passed in guest time fires at once. */
		wr(v, M_TSC_DEADLINE, m_tsc(&m) - 10);
		hw_run_to(v, hw_tsc + 1);
		EXPECT(t, "deliveries of a past deadline", delivered(v, 0xec), 2);
		/* Forward past an armed deadline: it comes at once. */
		wr(v, M_TSC_DEADLINE, m_tsc(&m) + 1000000);
		wr(v, M_TSC_ADJUST, m.adjust + 2000000);
		m_write_adjust(&m, m.adjust + 2000000);
		hw_run_to(v, hw_tsc + 1);
		EXPECT(t, "deliveries after moving past the deadline", delivered(v, 0xec), 3);
		/* The way back to offset 0: timer=deadline hands the LAPIC over again. */
		wr(v, M_TSC_ADJUST, 0);
		m_write_adjust(&m, 0);
		EXPECT(t, "offset back to 0", vmcs_record_get(SDM_TSC_OFFSET), 0);
		if (t == T_DEADLINE)
			EXPECT(t, "the LAPIC serves again at offset 0", v->timer_by_cpu, 1);
		CHECK(virq_timer_balanced(v));
	}
}

/* timer=deadline: the LAPIC compares the host's TSC, so it serves only at
 * offset 0; the guest's accesses of IA32_TSC_DEADLINE exit otherwise. */
TEST(tsc_deadline_pass_through_only_at_offset_zero)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, M_SVR, 0x1ff);
	wr(v, M_LVT_TIMER, M_LVT_DEADLINE(0xec));
	CHECK(v->timer_by_cpu);
	uint64_t g = hw_guest_rdtsc() + 4000;
	wr(v, M_TSC_DEADLINE, g);                    /* straight into the LAPIC */
	CHECK_EQ(hw_msr(M_TSC_DEADLINE), g);
	wr(v, M_TSC_ADJUST, 500);                    /* guest TSC +500 */
	CHECK(!v->timer_by_cpu);
	CHECK_EQ(hw_msr(M_TSC_DEADLINE) == g, false);   /* taken back from the LAPIC */
	unsigned ex = hw_msr_exits();
	CHECK_EQ(rd(v, M_TSC_DEADLINE), g);
	CHECK_EQ(hw_msr_exits(), ex + 1);
	hw_run_to(v, g - 500 - 1);
	CHECK_EQ(v->timer_posts, 0);
	hw_run_to(v, g - 500);
	CHECK_EQ(v->timer_posts, 1);
	CHECK(virq_timer_balanced(v));
}
