/* The hang check's decision, pure: a vCPU is stuck when the same pending
 * vectors (its virtual IRR and its descriptor's PIR, as another CPU sees
 * them) stay pending across a whole threshold with no VM exit of its own.
 * A healthy vCPU takes a pending vector within microseconds or exits; an
 * idle one has nothing pending, so an idle guest is never suspected. */
#ifndef VMX_HANG_H
#define VMX_HANG_H
#include "../lib/types.h"

enum hang_verdict { HANG_NONE, HANG_SUSPECT, HANG_STUCK };

struct hang_watch {
	uint64_t since;          /* TSC of the sample that found the vectors pending */
	uint64_t exits;          /* the vCPU's exit count then */
	uint32_t pending[8];     /* the vectors pending at every sample since (bit v of word v/32) */
	int stage;               /* 0: nothing suspected; 1: suspected; 2: said stuck */
};

/* One sample: 'exits' is the vCPU's exit count now, 'pending' its pending
 * vectors now. Returns HANG_STUCK once per stuck episode (the first sample at
 * least 'threshold' TSC cycles after the first, with no exit in between and
 * a vector pending at every sample since); an exit, or a sample that shares
 * no vector with all before it, ends the episode (the latter starts one). */
enum hang_verdict hang_observe(struct hang_watch *w, uint64_t now, uint64_t exits, const uint32_t pending[8],
			       uint64_t threshold);
/* The lowest vector in both sets, or -1. */
int hang_common_vector(const uint32_t a[8], const uint32_t b[8]);
#endif
