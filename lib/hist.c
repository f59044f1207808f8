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

/* Shell sort: no recursion, no allocation, fine for a few thousand CPUs. */
static void sort_u64(uint64_t *a, uint32_t n)
{
	for (uint32_t gap = n / 2; gap; gap /= 2)
		for (uint32_t i = gap; i < n; i++) {
			uint64_t x = a[i];
			uint32_t j = i;
			for (; j >= gap && a[j - gap] > x; j -= gap)
				a[j] = a[j - gap];
			a[j] = x;
		}
}

void dist_of(const uint64_t *vals, uint32_t n, uint64_t *scratch, struct dist *out)
{
	*out = (struct dist){ .n = n };
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		scratch[i] = vals[i];
		out->total += vals[i];
		if (vals[i] > vals[out->max_at])
			out->max_at = i;
	}
	sort_u64(scratch, n);
	out->min = scratch[0];
	out->median = scratch[(n - 1) / 2];
	out->max = scratch[n - 1];
}

uint32_t top_k(const uint64_t *vals, uint32_t n, uint32_t k, uint32_t *top)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		/* Insert i into top[0..m), kept largest first. */
		uint32_t j = m < k ? m++ : k;
		if (j == k && (k == 0 || vals[i] <= vals[top[k - 1]]))
			continue;
		if (j == k)
			j = k - 1;
		while (j > 0 && vals[top[j - 1]] < vals[i]) {
			top[j] = top[j - 1];
			j--;
		}
		top[j] = i;
	}
	return m;
}
