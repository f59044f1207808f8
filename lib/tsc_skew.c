/* The TSC offset between two CPUs from ping-pong samples. */
#include "tsc_skew.h"

struct tsc_skew tsc_skew_estimate(const struct tsc_sample *s, unsigned n)
{
	struct tsc_skew r = { 0 };
	uint64_t best = ~0ull;

	for (unsigned i = 0; i < n; i++) {
		if (s[i].t1 < s[i].t0)
			continue;                 /* not a round trip */
		uint64_t rtt = s[i].t1 - s[i].t0;
		if (rtt >= best)
			continue;
		best = rtt;
		r.ok = true;
		r.bound = rtt / 2 + rtt % 2;
		r.offset = (int64_t)(s[i].tap - (s[i].t0 + rtt / 2));
	}
	return r;
}
