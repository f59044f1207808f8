/* A log2 histogram of TSC intervals, for the report's exit times: bucket b
 * counts values in [2^b, 2^(b+1)) (bucket 0 also holds 0), with count, sum,
 * min and max kept exactly. Percentiles are bucket upper bounds: an
 * over-estimate by at most 2x, said as such in the report. */
#ifndef LIB_HIST_H
#define LIB_HIST_H
#include "types.h"

#define HIST_BUCKETS 40

struct log2_hist {
	uint64_t n, sum, min, max;
	uint32_t b[HIST_BUCKETS];
};

void hist_add(struct log2_hist *h, uint64_t v);
/* The upper bound (2^(b+1) - 1, at most max) of the bucket that holds the
 * sample of rank ceil(pct/100 * n); 0 for an empty histogram. */
uint64_t hist_percentile(const struct log2_hist *h, unsigned pct);

/* One figure over many CPUs (the end report's summary on a large machine):
 * its total, smallest, median (the lower middle of an even count), largest
 * value, and the index of the (first) largest. */
struct dist {
	uint64_t total, min, median, max;
	uint32_t n, max_at;
};
/* Of vals[0..n-1]; scratch holds n values (it ends sorted). */
void dist_of(const uint64_t *vals, uint32_t n, uint64_t *scratch, struct dist *out);
/* The indexes of the k largest vals (ties: the lower index first), in
 * that order, into top[0..k-1]; returns how many (at most n). */
uint32_t top_k(const uint64_t *vals, uint32_t n, uint32_t k, uint32_t *top);
#endif
