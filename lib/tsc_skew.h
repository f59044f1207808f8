/* The TSC offset between two CPUs from ping-pong samples. Pure. */
#ifndef LIB_TSC_SKEW_H
#define LIB_TSC_SKEW_H
#include "types.h"

/* One round: the boot CPU's TSC before its ping (t0) and after the pong
 * (t1), the other CPU's read between them (tap). */
struct tsc_sample { uint64_t t0, tap, t1; };

struct tsc_skew {
	bool ok;                 /* at least one usable sample */
	int64_t offset;          /* tap minus the boot CPU's midpoint, in ticks */
	uint64_t bound;          /* the true offset lies within offset +- bound */
};

/* From the sample with the shortest round trip: with aligned TSCs the
 * other CPU's read falls between t0 and t1, so the offset is known to
 * within half that round trip. */
struct tsc_skew tsc_skew_estimate(const struct tsc_sample *s, unsigned n);
#endif
