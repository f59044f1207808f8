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
