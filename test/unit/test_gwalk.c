/* The software walk of the guest's paging (guest/gwalk.c) against tables
 * built here as the SDM lays them out (Vol. 3A, "4-Level Paging": PML4E,
 * PDPTE (PS = 1 GiB), PDE (PS = 2 MiB), PTE; present bit 0, R/W bit 1, PS
 * bit 7, addresses in bits 51:12; "32-Bit Paging": PDE PS = 4 MiB with
 * CR4.PSE). Physical addresses are host pointers here. */
#include "test.h"
#include <sys/mman.h>
#include "../../guest/gwalk.h"

static uint64_t *page(void)
{
	uint64_t *p = aligned_alloc(4096, 4096);
	memset(p, 0, 4096);
	return p;
}
#define PA(p) ((uint64_t)(uintptr_t)(p))

TEST(gwalk_4level_pages)
{
	uint64_t *pml4 = page(), *pdpt = page(), *pd = page(), *pt = page();
	uint64_t data = 0x7654321000ull;
	uint64_t la = (0x1ull << 39) | (0x2ull << 30) | (0x3ull << 21) | (0x4ull << 12) | 0x567;
	pml4[1] = PA(pdpt) | 3;
	pdpt[2] = PA(pd) | 3;
	pd[3] = PA(pt) | 3;
	pt[4] = data | 1;                                   /* read-only */
	struct gwalk_regs r = { .cr0 = 0x80000001, .cr3 = PA(pml4), .cr4 = 0x20, .efer = 0x500 };
	uint64_t gpa = 0;
	CHECK_EQ(gwalk(&r, la, false, &gpa), 0);
	CHECK_EQ(gpa, data | 0x567);
	CHECK_EQ(gwalk(&r, la, true, &gpa), -1);           /* not writable */
	CHECK_EQ(gwalk(&r, la + 0x1000, false, &gpa), -1); /* not present */
	pd[5] = 0x40000000ull | 0x83;                      /* a 2 MiB page */
	CHECK_EQ(gwalk(&r, (0x1ull << 39) | (0x2ull << 30) | (0x5ull << 21) | 0x12345, true, &gpa), 0);
	CHECK_EQ(gpa, 0x40012345ull);
	pdpt[7] = 0x80000000ull | 0x83;                    /* a 1 GiB page */
	CHECK_EQ(gwalk(&r, (0x1ull << 39) | (0x7ull << 30) | 0x2345678, false, &gpa), 0);
	CHECK_EQ(gpa, 0x82345678ull);
	free(pml4); free(pdpt); free(pd); free(pt);
}

TEST(gwalk_no_paging_and_32bit)
{
	struct gwalk_regs r = { .cr0 = 1 };
	uint64_t gpa = 0;
	CHECK_EQ(gwalk(&r, 0x12345678, false, &gpa), 0);
	CHECK_EQ(gpa, 0x12345678);
	/* 32-bit tables sit below 4 GiB: MAP_32BIT gives the host such pages. */
	uint32_t *pd = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(pd != MAP_FAILED);
	if (pd == MAP_FAILED)
		return;
	uint32_t *pt = pd + 1024;
	pd[1] = (uint32_t)PA(pt) | 3;
	pt[2] = 0x00abc000u | 3;
	pd[3] = 0x00c00000u | 0x83;                         /* 4 MiB page with PSE */
	r = (struct gwalk_regs){ .cr0 = 0x80000001, .cr3 = PA(pd), .cr4 = 0x10 };
	CHECK_EQ(gwalk(&r, (1u << 22) | (2u << 12) | 0x7f, true, &gpa), 0);
	CHECK_EQ(gpa, 0x00abc07full);
	CHECK_EQ(gwalk(&r, (3u << 22) | 0x123456, false, &gpa), 0);
	CHECK_EQ(gpa, 0x00c00000ull | 0x123456);
	munmap(pd, 8192);
}

/* A CR3 (or an entry) beyond what the hypervisor maps: the walk fails, it
 * reads nothing there (the guest picks CR3; before gwalk_readable_end the
 * walk read the address as it came, a host fault past the identity map). */
TEST(gwalk_tables_beyond_the_readable_end)
{
	uint64_t saved = gwalk_readable_end;
	gwalk_readable_end = 1ull << 40;
	struct gwalk_regs r = { BIT(31) | 1, 1ull << 46, BIT(5), BIT(10) | BIT(8) };
	uint64_t gpa = 7;
	CHECK_EQ(gwalk(&r, 0x1000, false, &gpa), -1);
	CHECK_EQ(gpa, 7);                         /* nothing written */
	/* The bound itself: an entry straddling the end is not readable. */
	CHECK(gwalk_readable(0, 1) && !gwalk_readable(1ull << 40, 1) && !gwalk_readable((1ull << 40) - 4, 8));
	gwalk_readable_end = saved;
}
