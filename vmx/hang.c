#include "hang.h"

int hang_common_vector(const uint32_t a[8], const uint32_t b[8])
{
	for (int w = 0; w < 8; w++)
		if (a[w] & b[w])
			return w * 32 + __builtin_ctz(a[w] & b[w]);
	return -1;
}

static void start(struct hang_watch *w, uint64_t now, uint64_t exits, const uint32_t pending[8])
{
	bool any = false;
	for (int i = 0; i < 8; i++) {
		w->pending[i] = pending[i];
		any |= pending[i] != 0;
	}
	w->since = now;
	w->exits = exits;
	w->stage = any ? 1 : 0;
}

enum hang_verdict hang_observe(struct hang_watch *w, uint64_t now, uint64_t exits, const uint32_t pending[8],
			       uint64_t threshold)
{
	if (w->stage == 0 || exits != w->exits) {
		start(w, now, exits, pending);
		return w->stage ? HANG_SUSPECT : HANG_NONE;
	}
	if (hang_common_vector(w->pending, pending) < 0) {
		/* Every vector pending since the watch began went without an
		 * exit (the CPU delivered it); what is pending now starts anew. */
		start(w, now, exits, pending);
		return w->stage ? HANG_SUSPECT : HANG_NONE;
	}
	for (int i = 0; i < 8; i++)
		w->pending[i] &= pending[i];   /* what has been pending at every sample */
	if (w->stage == 2)
		return HANG_SUSPECT;    /* said already; until an exit or the vectors go */
	if (now - w->since < threshold)
		return HANG_SUSPECT;
	w->stage = 2;
	return HANG_STUCK;
}
