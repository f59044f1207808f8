/* The guest's paging, walked in software (gwalk.c). */
#ifndef GUEST_GWALK_H
#define GUEST_GWALK_H
#include "../lib/types.h"

struct gwalk_regs { uint64_t cr0, cr3, cr4, efer; };

/* The end of what the hypervisor can read (its identity map); a walk or
 * a read of guest memory beyond it finds nothing. Default: everything. */
extern uint64_t gwalk_readable_end;
static inline bool gwalk_readable(uint64_t pa, uint64_t len)
{
	return pa < gwalk_readable_end && len <= gwalk_readable_end - pa;
}
/* 0 and *gpa, or -1 when the address is not mapped (or not writable, for a write). */
int gwalk(const struct gwalk_regs *r, uint64_t la, bool write, uint64_t *gpa);
#endif
