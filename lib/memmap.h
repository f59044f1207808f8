/* The physical memory map: normalized from firmware, then used by the page
 * allocator, which records every range the hypervisor owns (EPT and the
 * guest's e820 leave those out). */
#ifndef LIB_MEMMAP_H
#define LIB_MEMMAP_H
#include "types.h"

enum mem_type {
	MEM_USABLE = 1,      /* e820 1 */
	MEM_RESERVED = 2,    /* e820 2 */
	MEM_ACPI = 3,        /* e820 3, reclaimable ACPI tables */
	MEM_NVS = 4,         /* e820 4 */
	MEM_BAD = 5,         /* e820 5 */
	MEM_BOOT = 50,       /* RAM holding boot data (modules, loader info): kept free
	                      * while the hypervisor sets up, RAM for the guest after */
	MEM_HV = 100,        /* owned by the hypervisor: never given to the guest */
};

#define MEMMAP_MAX 256

struct mem_range {
	uint64_t base;
	uint64_t len;
	uint32_t type;
};

struct memmap {
	uint32_t count;
	struct mem_range r[MEMMAP_MAX];
};

/* Adds a raw firmware range (any order, may overlap). Zero-length ranges are
 * dropped. Returns false when the table is full. */
bool memmap_add(struct memmap *m, uint64_t base, uint64_t len, uint32_t type);
/* Sorts, splits overlaps (the more restrictive type wins: higher enum value,
 * except USABLE always loses), and merges adjacent ranges of the same type. */
void memmap_normalize(struct memmap *m);
/* Marks [base, base+len) as owned by the hypervisor (normalizes again). */
bool memmap_claim(struct memmap *m, uint64_t base, uint64_t len);
/* Type at an address, or 0 when no range covers it. */
uint32_t memmap_type_at(const struct memmap *m, uint64_t addr);
/* Total bytes of a type. */
uint64_t memmap_total(const struct memmap *m, uint32_t type);
/* Highest address covered by any range (exclusive end). */
uint64_t memmap_end(const struct memmap *m);
/* Finds a page-aligned usable range of len bytes, highest first, that ends at or
 * below 'limit'. Returns 0 when none. Does not claim it. */
uint64_t memmap_find_free(const struct memmap *m, uint64_t len, uint64_t limit);
/* The same within [floor, limit): the range must start at or above floor. */
uint64_t memmap_find_free_in(const struct memmap *m, uint64_t len, uint64_t floor, uint64_t limit);
const char *memmap_type_name(uint32_t type);
void memmap_print(const struct memmap *m, const char *title);

/* Page allocator over a heap region the hypervisor owns. */
void page_alloc_init(uint64_t base, uint64_t len);
/* Zeroed, page-aligned pages; panics when out of memory (boot-time only). */
void *page_alloc(uint64_t pages);
uint64_t page_alloc_used(void);
uint64_t page_alloc_free(void);
#endif
