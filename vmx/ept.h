/* EPT: an identity map of guest-physical memory that leaves out every range
 * the hypervisor owns (SDM Vol. 3C, "EPT Translation Mechanism"). */
#ifndef VMX_EPT_H
#define VMX_EPT_H
#include "../lib/types.h"
#include "../lib/memmap.h"
#include "caps.h"
#include "../lib/mtrr.h"

#define EPT_R BIT(0)
#define EPT_W BIT(1)
#define EPT_X BIT(2)
#define EPT_MT_SHIFT 3
#define EPT_LARGE BIT(7)

struct ept_stats { uint64_t pages_1g, pages_2m, pages_4k, holes_4k, tables, sunk_1g; };

/* Builds the tables over [0, end) from page_alloc, MEM_HV not present.
 * Memory types: RAM takes the MTRRs' type (write-back when mtrr is NULL or
 * disabled); everything else is uncached unless a variable MTRR makes it WC,
 * WT or WP. Returns the EPT pointer (WB, 4-level). */
uint64_t ept_build(const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		   uint64_t end, struct ept_stats *st);
/* Memory type class of [a, b): 0 = WB, 1 = UC, 2 = hypervisor (unmapped), 3 = mixed. */
int ept_region_class(const struct memmap *m, uint64_t a, uint64_t b);
/* Maps the 1 GiB region holding gpa, beyond what ept_build covered (a
 * 64-bit BAR high above RAM), with the types the memory map and the MTRRs
 * give it; false when that region is mapped already or is the hypervisor's.
 * Allocates tables, counted in st->tables, at most max_tables: past that
 * budget (a guest walking the whole physical-address space) the GiB gets
 * sink_pd (from ept_sink_gib), where every page is the sink, counted in
 * st->sunk_1g. The caller serializes. */
bool ept_map_late(uint64_t eptp, const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		  uint64_t gpa, struct ept_stats *st, uint64_t max_tables, uint64_t sink_pd);
/* A page-directory entry value for a GiB whose every 4 KiB page is 'sink'
 * (two tables, shared by every GiB that gets it). */
uint64_t ept_sink_gib(paddr_t sink, struct ept_stats *st);
/* Maps the 4 KiB hole at gpa (a hypervisor page) to absent memory: for a
 * read or fetch the page 'sink' (all ones, read and execute only, so that
 * it stays all ones), for a write the page 'wsink' (read, write, execute:
 * writes land there and nowhere else; what they leave is nobody's).
 * Write-back. Returns 1 when it did, 0 when the slot already holds what
 * the access needs (another vCPU was first, or a processor used a cached
 * translation: the caller invalidates), -1 when gpa has no 4 KiB hole (it
 * is mapped by a large page, lies beyond the map, or is a page a trap took
 * out with ept_unmap_page: a trap's page is never the sink's). */
int ept_map_sink(uint64_t eptp, uint64_t gpa, paddr_t sink, paddr_t wsink, bool write);
/* Takes the 4 KiB page at gpa out of the map (an emulated MMIO page: the
 * virtual IOAPIC's), splitting the 1 GiB or 2 MiB page that held it into
 * pages of the same type and rights. Returns false when gpa is not mapped.
 * No INVEPT: before the guest runs, or the caller shoots down (ept_sync.h). */
bool ept_unmap_page(uint64_t eptp, uint64_t gpa, struct ept_stats *st);
/* The tables ept_unmap_page(gpa) would allocate now (0, 1 or 2). */
unsigned ept_unmap_needs(uint64_t eptp, uint64_t gpa);
/* Puts back a page that ept_unmap_page took out (identity, its type and
 * rights as before). Not present to present: no INVEPT needed. False when
 * gpa is not such a page. */
bool ept_restore_page(uint64_t eptp, uint64_t gpa);
/* The iTLB multihit erratum ("machine check error on page size change",
 * Skylake-SP to Cascade Lake: IA32_ARCH_CAPABILITIES bit 6,
 * IF_PSCHANGE_MC_NO, clear or the MSR absent): an instruction fetch
 * through a translation whose page size changed without a TLB
 * invalidation may raise a machine check, which a guest changing its own
 * page tables can cause. With nx_huge on, no large EPT leaf is executable,
 * so every executable translation is 4 KiB whatever the guest's paging
 * says: a guest fetch from a large page is an EPT violation, and
 * ept_exec_split makes that page a table of executable 4 KiB leaves (the
 * same addresses, type and rights); the large leaf was never executable,
 * so no processor holds it in an instruction TLB. A 2 MiB split of any
 * other cause (a trap's page taken out) makes its 4 KiB leaves executable
 * too. Set before ept_build. */
void ept_set_nx_huge(bool on);
bool ept_nx_huge(void);
/* The policy: on where asked, off where asked; auto: on for an Intel CPU
 * whose IA32_ARCH_CAPABILITIES (enumerated by CPUID.(EAX=7,ECX=0):EDX[29])
 * does not say IF_PSCHANGE_MC_NO (bit 6). */
bool ept_nx_huge_wanted(int opt, bool intel, bool arch_cap_msr, uint64_t arch_cap);
/* A fetch from gpa met a non-executable large leaf (nx_huge): the 1 GiB
 * leaf becomes 512 non-executable 2 MiB leaves, the 2 MiB one 512
 * executable 4 KiB leaves. 1: split; 0: the leaf is executable already
 * (another vCPU split it; the EPT violation itself dropped this CPU's
 * cached translation of the gpa, SDM Vol. 3C "Operations that Invalidate
 * Cached Mappings"); -1: no such leaf (not present, a 4 KiB page that is
 * not executable, or nx_huge off). Allocates ept_unmap_needs(gpa) tables. */
int ept_exec_split(uint64_t eptp, uint64_t gpa, struct ept_stats *st);
/* The large leaf holding gpa made executable as it is (the fallback when
 * no table can be had): 1 made now, 0 executable already, -1 none. */
int ept_exec_allow_large(uint64_t eptp, uint64_t gpa);
/* INVEPT all-context (falls back to single-context). */
void ept_invalidate(uint64_t eptp, const struct vmx_caps *c);
#endif
