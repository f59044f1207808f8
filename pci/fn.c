/* The function registry: the trapped functions by BDF, and the
 * first-access bitmap of those that answered. */
#include "fn.h"

struct vmsi_fn *vmsi_find(struct vmsi *s, uint16_t bdf)
{
	for (uint32_t i = 0; i < s->nfn; i++)
		if (s->fn[i].bdf == bdf && !s->fn[i].gone && !s->fn[i].retired)   /* a gone function's BDF may be another's now */
			return &s->fn[i];
	return NULL;
}

void vmsi_mark_seen(struct vmsi *s, uint16_t bdf)
{
	if (s->seen)
		s->seen[bdf >> 3] |= (uint8_t)(1u << (bdf & 7));
}

void vmsi_unsee(struct vmsi *s, uint16_t bdf)
{
	if (s->seen)
		s->seen[bdf >> 3] &= (uint8_t)~(1u << (bdf & 7));
}

bool vmsi_was_seen(const struct vmsi *s, uint16_t bdf)
{
	return s->seen && (s->seen[bdf >> 3] & (1u << (bdf & 7)));
}
