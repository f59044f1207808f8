/* NUMA-local memory for per-CPU structures. Where the SRAT gives the nodes,
 * each node with CPUs gets a pool claimed from usable RAM inside its own
 * memory ranges (never given to the guest); page_alloc_node takes pages from
 * the CPU's node's pool and falls back to the main heap, counted, when the
 * node has none or it is full. Without pools (no SRAT) everything comes
 * from the heap, as before, or from a pool for any node (node NODEMEM_ANY)
 * that boot code claims when the heap is too small for the CPUs. */
#ifndef LIB_NODEMEM_H
#define LIB_NODEMEM_H
#include "types.h"
#include "memmap.h"
#include "srat.h"

#define NODEMEM_ANY 0xffffffffu

struct node_pool {
	uint32_t node;               /* proximity domain, or NODEMEM_ANY */
	uint32_t ncpus;              /* the CPUs it was sized for */
	uint64_t base, len, used;    /* physical = virtual (identity map) */
};

/* Claims, in m, a pool of per_cpu bytes per CPU for each node of s that has
 * CPUs, from usable RAM inside that node's enabled, not hot-pluggable memory
 * ranges (highest address first, at or above 1 MiB). Nodes with no such
 * room get no pool (named). Returns how many pools it made. Once, at boot. */
uint32_t nodemem_init(struct memmap *m, const struct srat_info *s, uint64_t per_cpu);
/* A pool of len bytes for any node (requests with node < 0 or without a
 * pool of their own), below limit. false when no room. */
bool nodemem_add_any(struct memmap *m, uint64_t len, uint64_t limit);
/* Zeroed, page-aligned pages from node's pool (node < 0: the any-node pool),
 * else from the heap (page_alloc); panics when both are out. */
void *page_alloc_node(int64_t node, uint64_t pages);
/* The SRAT the per-CPU allocations follow (NULL: none, every node -1). */
extern const struct srat_info *nodemem_srat;
/* The node of the CPU with this APIC ID per nodemem_srat, or -1. */
int64_t nodemem_node_of(uint32_t apic_id);
/* Whether node (< 0: none) has a pool of its own. */
bool nodemem_has_pool(int64_t node);
/* Pages that wanted a node's pool and came from the heap. */
uint64_t nodemem_fallback_pages(void);
/* Bytes taken from pools. */
uint64_t nodemem_pool_used(void);
/* Each pool's use, and the fallback count, at info level. */
void nodemem_print(void);
/* Forgets the pools (unit tests). */
void nodemem_reset(void);
#endif
