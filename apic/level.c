/* The in-flight level-triggered vectors as the stack the ISR is (level.h). */
#include "level.h"

static bool bit(const uint64_t *m, unsigned v) { return (m[v / 64] >> (v % 64)) & 1; }
static void set(uint64_t *m, unsigned v) { m[v / 64] |= 1ull << (v % 64); }
static void clr(uint64_t *m, unsigned v) { m[v / 64] &= ~(1ull << (v % 64)); }

void level_accept(struct level_stack *s, uint8_t vec)
{
	set(s->inflight, vec);
	clr(s->done, vec);
}

bool level_inflight(const struct level_stack *s, uint8_t vec)
{
	return bit(s->inflight, vec);
}

int level_top(const struct level_stack *s)
{
	for (int w = 3; w >= 0; w--)
		if (s->inflight[w])
			return w * 64 + 63 - __builtin_clzll(s->inflight[w]);
	return -1;
}

unsigned level_guest_eoi(struct level_stack *s, int vec)
{
	if (vec < 0 || vec > 255 || !bit(s->inflight, (unsigned)vec))
		return 0;
	set(s->done, (unsigned)vec);
	unsigned n = 0;
	for (int top = level_top(s); top >= 0 && bit(s->done, (unsigned)top); top = level_top(s)) {
		clr(s->inflight, (unsigned)top);
		clr(s->done, (unsigned)top);
		n++;
	}
	return n;
}

unsigned level_reset(struct level_stack *s)
{
	unsigned n = 0;
	for (unsigned w = 0; w < 4; w++) {
		for (uint64_t m = s->inflight[w]; m; m &= m - 1)   /* no libgcc popcount */
			n++;
		s->inflight[w] = s->done[w] = 0;
	}
	return n;
}
