/* Log2 histograms (see hist.h). */
#include "hist.h"

static unsigned bucket(uint64_t v)
{
	unsigned b = 0;
	while (b < HIST_BUCKETS - 1 && v >> (b + 1))
		b++;
	return b;
}

void hist_add(struct log2_hist *h, uint64_t v)
{
	if (!h->n || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	h->sum += v;
	h->b[bucket(v)]++;
}

uint64_t hist_percentile(const struct log2_hist *h, unsigned pct)
{
	if (!h->n)
		return 0;
	uint64_t rank = (h->n * pct + 99) / 100;   /* ceil, at least 1 */
	if (!rank)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= rank) {
			uint64_t hi = b == HIST_BUCKETS - 1 ? h->max : (2ull << b) - 1;
			return hi < h->max ? hi : h->max;
		}
	}
	return h->max;
}
