/* The VT-d translation tables the hypervisor gives every device: one root
 * table and one context table (legacy mode) whose every entry names one
 * domain, and that domain's second-level tables: an identity map of what
 * the guest's e820 lists (RAM, ACPI, NVS and reserved-for-firmware) and of
 * every RMRR, without a page of the hypervisor's (MEM_HV). Pure: built in
 * page_alloc's pages, host-testable. */
#ifndef IOMMU_TABLES_H
#define IOMMU_TABLES_H
#include "../lib/types.h"
#include "../lib/memmap.h"
#include "../lib/dmar.h"

#define VTD_DOMAIN_ID 1        /* 0 is reserved when CAP.CM is set */

struct vtd_map_stats {
	uint64_t pages_4k, pages_2m, pages_1g;   /* leaves */
	uint64_t hv_pages_out;                   /* 4 KiB hypervisor pages left out in regions shared with the guest */
	uint64_t tables;                         /* pages allocated */
	uint64_t end;                            /* the highest mapped address + 1 */
	uint32_t rmrr_hv_conflicts;              /* RMRRs overlapping the hypervisor: those pages stay out */
};

/* Builds the second-level identity map with 'levels' levels (3, 4 or 5);
 * large pages where lp_2m / lp_1g allow and a region is wholly mappable.
 * Returns the top table's address, or 0 with a message in err (memory to
 * map above what 'levels' can address). */
paddr_t vtd_sl_build(const struct memmap *m, const struct dmar_rmrr *rmrr, uint32_t nrmrr, int levels,
		     bool lp_2m, bool lp_1g, struct vtd_map_stats *st, char *err, size_t errlen);

/* A root table whose 256 buses all point at one context table whose 256
 * device functions are all present in domain 'did' with the second-level
 * tables 'slpt' of 'levels' levels. Returns the root table's address. */
paddr_t vtd_root_build(paddr_t slpt, int levels, uint16_t did, struct vtd_map_stats *st);

/* The deepest table layout (3, 4 or 5 levels: 39, 48, 57 bits) that the
 * capability register's SAGAW offers within its MGAW and that reaches
 * 'need' bytes, or 0. */
int vtd_levels(uint64_t cap, uint64_t need);

/* Whether the memory map and RMRRs make [a, a + len) mappable: 1 all of
 * it, 0 none, -1 some (used by the builder and its tests). */
int vtd_region_class(const struct memmap *m, const struct dmar_rmrr *rmrr, uint32_t nrmrr, uint64_t a, uint64_t len);
#endif
