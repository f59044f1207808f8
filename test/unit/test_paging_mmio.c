/* lib/paging.c's MMIO pages above the identity map (issue 35, item 1):
 * the hypervisor's own 4-level tables (SDM Vol. 3A, "4-Level Paging":
 * PML4 index 47:39, PDPT 38:30, PD 29:21, PT 20:12; a 4 KiB PTE with P,
 * R/W, PWT bit 3 and PCD bit 4, PAT entry 3 = UC at reset) grow a path to
 * each page at its own address; the identity map is left as it was. The
 * tables live in a host buffer (their addresses the buffer's). */
#include "test.h"
#include "cpu_fake.h"
#include "../../lib/paging.h"
#include "../../lib/memmap.h"

#define HEAP_PAGES 256
#define ADDR 0x000ffffffffff000ull

static uint64_t *at(uint64_t e) { return (uint64_t *)(uintptr_t)(e & ADDR); }

/* The leaf entry that maps va (0: absent on the way). */
static uint64_t leaf(uint64_t *pml4, uint64_t va)
{
	uint64_t e = pml4[va >> 39 & 511];
	if (!(e & 1))
		return 0;
	e = at(e)[va >> 30 & 511];
	if (!(e & 1) || (e & 0x80))
		return e;
	e = at(e)[va >> 21 & 511];
	if (!(e & 1) || (e & 0x80))
		return e;
	return at(e)[va >> 12 & 511];
}

TEST(paging_mmio_above_the_identity_map_uncached_all_or_none)
{
	static uint8_t *heap;
	if (!heap)
		heap = aligned_alloc(4096, HEAP_PAGES * 4096);
	page_alloc_init((uintptr_t)heap, HEAP_PAGES * 4096);
	cpu_fake_cpuid(0x80000000, 0, 0x80000008, 0, 0, 0);
	cpu_fake_cpuid(0x80000001, 0, 0, 0, 0, 1u << 26);           /* 1 GiB pages */
	cpu_fake_cpuid(0x80000008, 0, 0x3027, 0, 0, 0);             /* MAXPHYADDR 39 */
	CHECK_EQ(paging_phys_bits(), 39);
	uint64_t *pml4 = (uint64_t *)(uintptr_t)paging_build_identity(128ull << 30);
	CHECK_EQ(paging_identity_end, 128ull << 30);
	uint64_t used = page_alloc_used();
	/* Below the identity map: already reached, nothing made. */
	CHECK(paging_map_mmio(0xfebf0000u, 0x1000));
	CHECK(paging_map_mmio((128ull << 30) - 0x1000, 0x1000));
	CHECK_EQ(page_alloc_used(), used);
	/* An MSI-X table at 0x38_0000_2000 (256 entries: 4 KiB): its page,
	 * PD and PT made under the identity map's PDPT, the 1 GiB pages kept. */
	CHECK_EQ(leaf(pml4, 0x3800002000ull), 0);
	CHECK(paging_map_mmio(0x3800002000ull, 0x1000));
	CHECK_EQ(leaf(pml4, 0x3800002000ull), 0x3800002000ull | 0x1b);
	CHECK_EQ(leaf(pml4, 0x3800001000ull), 0);                  /* only the pages asked for */
	CHECK_EQ(leaf(pml4, 0x3800003000ull), 0);
	CHECK_EQ(page_alloc_used() - used, 2 * 4096);
	CHECK_EQ(leaf(pml4, 0x40000000ull), 0x40000000ull | 0x83);  /* identity 1 GiB page as it was */
	/* A table across a page boundary: both pages; again: nothing new. */
	CHECK(paging_map_mmio(0x3800003ff0ull, 0x20));
	CHECK_EQ(leaf(pml4, 0x3800004000ull), 0x3800004000ull | 0x1b);
	CHECK(paging_map_mmio(0x3800002000ull, 0x1000));
	CHECK_EQ(page_alloc_used() - used, 2 * 4096);
	/* Another 512 GiB (a new PDPT too), up to the canonical lower half. */
	CHECK(paging_map_mmio(0x7ffffffff000ull, 0x1000));
	CHECK_EQ(leaf(pml4, 0x7ffffffff000ull), 0x7ffffffff000ull | 0x1b);
	CHECK(!paging_map_mmio(PAGING_MMIO_REACH, 0x1000));
	CHECK(!paging_map_mmio(PAGING_MMIO_REACH - 0x1000, 0x2000));
	CHECK(!paging_map_mmio(~0xfffull, 0x2000));                 /* wraps */
	/* The budget: 64 tables in all; a place that would pass it maps nothing. */
	unsigned k = 0;
	while (paging_map_mmio((uint64_t)(2 + k) << 39, 0x1000))
		k++;
	CHECK_EQ(5 + 3 * k <= PAGING_MMIO_MAX_TABLES, 1);
	CHECK_EQ(5 + 3 * (k + 1) > PAGING_MMIO_MAX_TABLES, 1);
	CHECK_EQ(pml4[2 + k], 0);                                   /* all or none */
	page_alloc_init(0, 0);
}
