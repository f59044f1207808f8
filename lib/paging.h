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
/* The CPU's physical-address width, MAXPHYADDR (CPUID 0x80000008 EAX 7:0;
 * 36 without that leaf, SDM Vol. 3A "Physical Address Width"). */
unsigned paging_phys_bits(void);
/* The 4 KiB pages of MMIO [pa, pa + len) above the identity map reached
 * at their own address (virtual = physical), uncached (PCD and PWT: PAT
 * entry 3, UC at reset, whatever the MTRRs say of the high window), their
 * tables from page_alloc under a lock, within PAGING_MMIO_MAX_TABLES.
 * Below the identity map's end: nothing to do. False: beyond the
 * canonical lower half (2^47, 4-level paging) or no table left; nothing
 * mapped then. Mappings stay (the hypervisor touches only what its
 * callers judged). */
#define PAGING_MMIO_MAX_TABLES 64
bool paging_map_mmio(uint64_t pa, uint64_t len);
/* Where paging_map_mmio can reach: the canonical lower half, 2^47. */
#define PAGING_MMIO_REACH (1ull << 47)
#endif
