/* The report's log2 histograms (lib/hist.c): exact count, sum, min, max;
 * percentiles as the upper bound of the bucket [2^b, 2^(b+1)) holding the
 * sample of rank ceil(p * n), never above max. */
#include "test.h"
#include "../../lib/hist.h"

TEST(hist_percentiles_are_bucket_bounds)
{
	struct log2_hist h;
	memset(&h, 0, sizeof h);
	CHECK_EQ(hist_percentile(&h, 50), 0);
	for (uint64_t v = 1; v <= 100; v++)     /* 1..100 */
		hist_add(&h, v);
	CHECK_EQ(h.n, 100);
	CHECK_EQ(h.sum, 5050);
	CHECK_EQ(h.min, 1);
	CHECK_EQ(h.max, 100);
	/* rank 50 is the value 50, in [32, 64): bound 63 */
	CHECK_EQ(hist_percentile(&h, 50), 63);
	/* rank 99 is 99, in [64, 128): bound 127, capped at max 100 */
	CHECK_EQ(hist_percentile(&h, 99), 100);
	CHECK_EQ(hist_percentile(&h, 1), 1);    /* the value 1: bucket [1, 2) */
	hist_add(&h, 0);
	CHECK_EQ(h.min, 0);
	hist_add(&h, ~0ull);                     /* the top bucket holds everything above */
	CHECK_EQ(h.max, ~0ull);
	CHECK_EQ(hist_percentile(&h, 100), ~0ull);
}

TEST(hist_one_sample)
{
	struct log2_hist h;
	memset(&h, 0, sizeof h);
	hist_add(&h, 1000);
	CHECK_EQ(hist_percentile(&h, 50), 1000);   /* the bound 1023 capped at max */
	CHECK_EQ(hist_percentile(&h, 99), 1000);
	CHECK_EQ(h.min, 1000);
}

/* The end report's summary over many CPUs (lib/hist.c dist_of, top_k),
 * against a brute-force model: the median of n values is the one with
 * (n - 1) / 2 smaller-or-equal others below it in sorted order. */
static uint64_t m_vals[600], m_scratch[600];
TEST(dist_and_top_k_against_brute_force)
{
	uint64_t seed = 12345;
	for (uint32_t n = 1; n <= 600; n += 37) {
		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1;
			m_vals[i] = (seed >> 33) % 50;   /* many ties */
		}
		struct dist d;
		dist_of(m_vals, n, m_scratch, &d);
		uint64_t total = 0, mn = ~0ull, mx = 0;
		uint32_t at = 0;
		for (uint32_t i = 0; i < n; i++) {
			total += m_vals[i];
			mn = m_vals[i] < mn ? m_vals[i] : mn;
			if (m_vals[i] > mx) { mx = m_vals[i]; at = i; }
		}
		/* The median: a value with at most (n-1)/2 values below it and at
		 * least (n-1)/2 + 1 values at or below it. */
		uint32_t below = 0, at_or_below = 0;
		for (uint32_t i = 0; i < n; i++) {
			below += m_vals[i] < d.median;
			at_or_below += m_vals[i] <= d.median;
		}
		CHECK_EQ(d.total, total);
		CHECK_EQ(d.min, mn);
		CHECK_EQ(d.max, mx);
		CHECK_EQ(d.max_at, at);
		CHECK(below <= (n - 1) / 2 && at_or_below >= (n - 1) / 2 + 1);
		uint32_t top[8];
		uint32_t k = top_k(m_vals, n, 8, top);
		CHECK_EQ(k, n < 8 ? n : 8);
		for (uint32_t j = 0; j < k; j++) {
			/* exactly j values rank above top[j]: larger, or equal and earlier */
			uint32_t above = 0;
			for (uint32_t i = 0; i < n; i++)
				above += m_vals[i] > m_vals[top[j]] || (m_vals[i] == m_vals[top[j]] && i < top[j]);
			CHECK_EQ(above, j);
		}
	}
	struct dist e;
	dist_of(m_vals, 0, m_scratch, &e);
	CHECK_EQ(e.n, 0);
	CHECK_EQ(top_k(m_vals, 5, 0, NULL), 0);
}
