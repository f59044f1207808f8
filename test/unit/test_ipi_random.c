/* Randomized tests of ipi/ipi.c against the model (ipi_model.h): 100000
 * ICR writes and PV send-IPI calls from a fixed xorshift seed, each checked
 * byte for byte (descriptors, canaries, the PID-pointer table), callback for
 * callback and counter for counter, with ASan/UBSan watching. At the end the
 * counters must account for every call:
 *   ICR writes = fast + refused (with #GP) + init_deassert + dropped + writes delivered
 *   PV calls   = pv_errors + calls that returned >= 0, pv_targets = sum of returns. */
#include "test.h"
#include "ipi_model.h"
#include "sdm_pid.h"

#define ITERATIONS 100000
static const uint32_t ids[] = { 0, 1, 2, 5, 16, 17, 35, 40 };   /* a vCPU at the last index too */
#define N 8
#define LAST 40

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) { return test_xorshift(&rng); }
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }

static uint32_t gen_dest(void)
{
	unsigned r = pick(100);
	if (r < 40)
		return ids[pick(N)];
	if (r < 55)
		return pick(LAST + 1);                     /* mostly holes */
	if (r < 65)
		return LAST + 1 + pick(30);                /* past the last index */
	if (r < 73)
		return MI_BROADCAST;
	if (r < 85)                                        /* a logical destination */
		return (pick(5) == 4 ? 0xffffu : pick(4)) << 16 | (uint32_t)(rnd() & rnd() & 0xffff);
	return (uint32_t)rnd();
}

static uint64_t gen_icr(void)
{
	static const unsigned modes[] = { MI_FIXED, MI_FIXED, MI_FIXED, MI_FIXED, MI_FIXED, MI_FIXED, MI_LOWEST, MI_LOWEST,
					  MI_NMI, MI_INIT, MI_INIT, MI_SIPI, MI_SMI, MI_MODE3, MI_MODE7 };
	if (pick(100) < 3)
		return rnd();
	uint64_t icr = MI_MODE(modes[pick(ARRAY_SIZE(modes))]) | MI_DEST(gen_dest());
	icr |= pick(100) < 85 ? MI_VEC(16 + pick(240)) : MI_VEC(pick(16));
	icr |= pick(4) == 0 ? MI_LOGICAL : 0;
	icr |= pick(10) < 7 ? MI_SH(MI_SH_NONE) : MI_SH(1 + pick(3));
	icr |= rnd() & (MI_ASSERT | MI_TRIG_LEVEL);
	if (pick(100) < 8) {   /* one reserved bit, or several */
		uint64_t bits = rnd() & MI_RESERVED;
		if (pick(2))
			bits &= -bits;
		icr |= bits ? bits : 1ull << 13;
	}
	return icr;
}

static uint64_t gen_min(void)
{
	static const uint64_t edges[] = { 1ull << 32, (1ull << 32) - 1, (1ull << 32) - 64, 1ull << 63, ~0ull,
					  ~0ull - 63, ~0ull - 127, ~0ull - 1 };
	unsigned r = pick(100);
	if (r < 25)
		return 0;
	if (r < 60)
		return pick(LAST + 10);
	if (r < 75)
		return edges[pick(ARRAY_SIZE(edges))];
	if (r < 85)
		return (uint64_t)LAST - pick(128);        /* wraps below 0 for most */
	return rnd();
}

static uint64_t gen_bitmap(void)
{
	unsigned r = pick(10);
	if (r == 0)
		return 0;
	if (r == 1)
		return ~0ull;
	if (r < 5)
		return 1ull << pick(64);
	return rnd() & rnd() & rnd();
}

static uint64_t gen_pv_icr(void)
{
	static const unsigned modes[] = { MI_FIXED, MI_FIXED, MI_FIXED, MI_LOWEST, MI_NMI };
	if (pick(100) < 20)
		return gen_icr();
	return MI_MODE(modes[pick(ARRAY_SIZE(modes))]) | MI_VEC(pick(100) < 95 ? 16 + pick(240) : pick(16)) |
	       (pick(4) == 0 ? MI_DEST((uint32_t)rnd()) : 0);
}

static uint64_t sum_notifies(const struct mi_dom *m)
{
	uint64_t s = 0;
	for (unsigned k = 0; k < m->n; k++)
		s += m->tstats[k].notifies;
	return s;
}

TEST(ipi_random_model_agrees)
{
	static struct mi_dom m;
	struct ipi_src_stats icr_st[N] = { 0 }, pv_st[N] = { 0 };
	uint64_t writes = 0, fast_done = 0, delivered = 0, gp = 0, pv_calls = 0, pv_ok = 0, pv_sum = 0, pv_undoc = 0,
		 notify_events = 0, cls[5] = { 0 };
	char what[160];
	mi_dom_init(&m, ids, N, LAST);
	rng = 0x2545f4914f6cdd1dull;
	for (unsigned it = 0; it < ITERATIONS; it++) {
		uint32_t self = pick(N);
		unsigned r = pick(100);
		if (r < 10)
			mi_drain(&m, pick(N));                      /* the target took its interrupts */
		else if (r < 13)
			mi_set_ctrl(&m, pick(N), pick(2) ? SDM_PID_SN : 0);   /* (un)scheduled; ON dropped */
		r = pick(100);
		if (r < 70) {
			uint64_t icr = gen_icr();
			struct mi_pred p = mi_predict_icr(&m, self, icr);
			writes++;
			snprintf(what, sizeof what, "iteration %u: vCPU %u writes the ICR", it, self);
			if (r < 45 && mi_run_fast(&m, self, icr, &icr_st[self], what) == IPI_DONE) {
				fast_done++;
			} else {
				enum ipi_result res = mi_run_icr(&m, self, icr, &icr_st[self], what, NULL);
				gp += res == IPI_GP;
				delivered += p.cls == MI_DELIVER;
				cls[p.cls]++;
			}
		} else {
			uint64_t lo = gen_bitmap(), hi = gen_bitmap(), min = gen_min(), icr = gen_pv_icr();
			pv_calls++;
			pv_undoc += mi_predict_pv(&m, lo, hi, min, icr).cls == MI_PV_UNDOC;
			snprintf(what, sizeof what, "iteration %u: vCPU %u PV send-IPI a0 0x%llx a1 0x%llx min 0x%llx", it, self,
				 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)min);
			int64_t ret = mi_run_pv(&m, self, lo, hi, min, icr, &pv_st[self], what, NULL);
			if (ret >= 0) {
				pv_ok++;
				pv_sum += (uint64_t)ret;
			}
		}
		notify_events += mi_count_ev(&m, MI_EV_NOTIFY);
		if (m.failures)
			break;   /* the first disagreement is the interesting one */
	}
	CHECK_EQ(m.failures, 0);

	struct ipi_src_stats t = { 0 }, p = { 0 };
	for (unsigned s = 0; s < N; s++) {
		t.fast += icr_st[s].fast;
		t.refused += icr_st[s].refused;
		t.init_deassert += icr_st[s].init_deassert;
		t.dropped += icr_st[s].dropped;
		p.pv_calls += pv_st[s].pv_calls;
		p.pv_errors += pv_st[s].pv_errors;
		p.pv_targets += pv_st[s].pv_targets;
	}
	CHECK_EQ(t.fast, fast_done);
	CHECK_EQ(writes, t.fast + t.refused + t.init_deassert + t.dropped + delivered);
	CHECK_EQ(p.pv_calls, pv_calls);
	CHECK_EQ(p.pv_calls, p.pv_errors + pv_ok);
	CHECK_EQ(p.pv_targets, pv_sum);
	CHECK_EQ(sum_notifies(&m), notify_events);
	/* The generator reached every kind of case. */
	CHECK(fast_done > 1000 && gp > 100 && pv_ok > 1000 && p.pv_errors > 100 && pv_sum > 1000);
	for (int c = 0; c < 5; c++)
		CHECK(cls[c] > 100);
	if (getenv("UNIT_VERBOSE") || m.failures)
		printf("    %llu ICR writes: %llu fast, %llu #GP, %llu refused, %llu de-assert, %llu dropped, %llu delivered; "
		       "%llu PV calls: %llu errors, %llu targets (%llu with a vector < 16, undocumented)\n",
		       (unsigned long long)writes, (unsigned long long)fast_done, (unsigned long long)gp,
		       (unsigned long long)cls[MI_REFUSED], (unsigned long long)cls[MI_DEASSERT],
		       (unsigned long long)cls[MI_DROPPED], (unsigned long long)delivered, (unsigned long long)pv_calls,
		       (unsigned long long)p.pv_errors, (unsigned long long)pv_sum, (unsigned long long)pv_undoc);
	mi_dom_free(&m);
}
