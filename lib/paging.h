/* The hypervisor's own identity page tables (firmware's are left behind,
 * since their memory goes to the guest). */
#ifndef LIB_PAGING_H
#define LIB_PAGING_H
#include "types.h"
/* Builds an identity map of [0, end) (at least 4 GiB), 1 GiB pages when the
 * CPU has them, else 2 MiB; returns the CR3 value (below 4 GiB). */
uint64_t paging_build_identity(uint64_t end);
/* The end of that map: the hypervisor reaches physical addresses below it
 * (MMIO above it, a 64-bit BAR placed high, is not mapped). */
extern uint64_t paging_identity_end;
#endif
