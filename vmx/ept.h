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

struct ept_stats { uint64_t pages_1g, pages_2m, pages_4k, holes_4k, tables; };

/* Builds the tables over [0, end) from page_alloc, MEM_HV not present.
 * Memory types: RAM takes the MTRRs' type (write-back when mtrr is NULL or
 * disabled); everything else is uncached unless a variable MTRR makes it WC,
 * WT or WP. Returns the EPT pointer (WB, 4-level). */
uint64_t ept_build(const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		   uint64_t end, struct ept_stats *st);
/* Memory type class of [a, b): 0 = WB, 1 = UC, 2 = hypervisor (unmapped), 3 = mixed. */
int ept_region_class(const struct memmap *m, uint64_t a, uint64_t b);
/* Maps the 4 KiB hole at gpa (a hypervisor page) to the page 'sink'
 * (read, write, execute, write-back). Returns false when gpa has no 4 KiB
 * slot (it is mapped by a large page, or lies beyond the map). */
bool ept_map_sink(uint64_t eptp, uint64_t gpa, paddr_t sink);
/* INVEPT all-context (falls back to single-context). */
void ept_invalidate(uint64_t eptp, const struct vmx_caps *c);
#endif
