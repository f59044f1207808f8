/* The guest's EPT changed while vCPUs run: one lock for every run-time
 * edit and every table it allocates (the MSI trap's table pages, the sink,
 * the GiBs mapped beyond the identity map), and a budget for the tables a
 * guest can make the trap split, so that no guest exhausts the heap. */
#ifndef VMX_EPT_LIVE_H
#define VMX_EPT_LIVE_H
#include "../lib/types.h"

/* Tables the MSI trap may split at run time (a guest moving a BAR across
 * the MMIO hole); the boot's own splits are not counted. */
#define EPT_LIVE_MAX_TABLES 64

void ept_live_lock(void);
void ept_live_unlock(void);
/* Takes every page of [pa, pa + len) out of the EPT, or none: false when
 * the splits it needs would pass the budget (runtime) or the heap. Takes
 * the lock; no INVEPT (the caller shoots down). */
bool ept_live_unmap(uint64_t eptp, uint64_t pa, uint64_t len, bool runtime);
/* A page that ept_live_unmap took out, back in (no INVEPT needed). */
void ept_live_restore(uint64_t eptp, uint64_t pg);
/* GiBs beyond the identity map (a 64-bit BAR high above RAM), mapped
 * late by ept.h's ept_map_late within EPT_LATE_MAX_TABLES tables (256,
 * 1 MiB: 254 GiB without 1 GiB pages, the whole 46-bit space with them);
 * past that a GiB gets the shared sink GiB (absent memory: every page
 * one page of its own, all ones until the guest writes it, nobody's). Takes the lock. True: the GiB was mapped or sunk now
 * (false: already, by a touch, a trap or another vCPU, or the
 * hypervisor's). *absent: it reads as absent memory (the shared sink, or
 * not mapped): no page of it can be taken out alone. */
#define EPT_LATE_MAX_TABLES 256
struct memmap;
struct mtrr_state;
struct vmx_caps;
struct ept_stats;
bool ept_live_late(uint64_t eptp, const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		   uint64_t gpa, bool *absent);
/* The late GiBs' tables and pages so far. */
void ept_live_late_stats(struct ept_stats *out);
/* A guest fetch from a non-executable large page (nx_huge, ept.h): the
 * page split into executable 4 KiB leaves (ept_exec_split) while the heap
 * keeps EPT_NX_RESERVE free after it, else the large leaf made executable
 * as it is (said once: that page is open to the erratum). 1: split or
 * allowed now; 0: done already (by another vCPU); -1: not such a page.
 * Takes the lock; no INVEPT needed (ept.h). */
#define EPT_NX_RESERVE MIB(4)
int ept_live_exec(uint64_t eptp, uint64_t gpa);
struct ept_nx_stats { uint64_t split_2m, split_1g, allowed_large, again; };
struct ept_nx_stats ept_live_nx_stats(void);
/* Run-time tables allocated so far, and unmaps refused for the budget. */
uint64_t ept_live_tables(void);
uint64_t ept_live_refused(void);
#endif
