/* Identity page tables for the host. */
#include "paging.h"
#include "memmap.h"
#include "cpu.h"
#include "printk.h"
#include "spinlock.h"

#define PTE_P  BIT(0)
#define PTE_W  BIT(1)
#define PTE_PWT BIT(3)
#define PTE_PCD BIT(4)
#define PTE_PS BIT(7)
#define PTE_ADDR 0x000ffffffffff000ull

uint64_t paging_identity_end;
static uint64_t *host_pml4;
static spinlock_t mmio_lock;
static unsigned mmio_tables;

uint64_t paging_build_identity(uint64_t end)
{
	uint32_t a, b, c, d;
	uint64_t *pml4 = page_alloc(1);
	bool gb_pages;

	if (end < GIB(4))
		end = GIB(4);
	end = ALIGN_UP(end, GIB(1));
	cpuid_count(0x80000001, 0, &a, &b, &c, &d);
	gb_pages = d & BIT(26);
	uint64_t ngb = end >> 30;
	if (ngb > 512 * 512)
		ngb = 512 * 512;
	for (uint64_t g = 0; g < ngb; g += 512) {
		uint64_t *pdpt = page_alloc(1);
		pml4[g / 512] = (uint64_t)(uintptr_t)pdpt | PTE_P | PTE_W;
		for (uint64_t i = 0; i < 512 && g + i < ngb; i++) {
			uint64_t base = (g + i) << 30;
			if (gb_pages) {
				pdpt[i] = base | PTE_P | PTE_W | PTE_PS;
				continue;
			}
			uint64_t *pd = page_alloc(1);
			pdpt[i] = (uint64_t)(uintptr_t)pd | PTE_P | PTE_W;
			for (int j = 0; j < 512; j++)
				pd[j] = (base + ((uint64_t)j << 21)) | PTE_P | PTE_W | PTE_PS;
		}
	}
	paging_identity_end = ngb << 30;
	host_pml4 = pml4;
	pr_info("paging: host identity map 0-%llu GiB with %s pages, cr3=0x%llx\n",
		(unsigned long long)ngb, gb_pages ? "1 GiB" : "2 MiB", (unsigned long long)(uintptr_t)pml4);
	return (uint64_t)(uintptr_t)pml4;
}

unsigned paging_phys_bits(void)
{
	uint32_t a, b, c, d;
	cpuid_count(0x80000000, 0, &a, &b, &c, &d);
	if (a < 0x80000008)
		return 36;
	cpuid_count(0x80000008, 0, &a, &b, &c, &d);
	return (a & 0xff) ? (a & 0xff) : 36;
}

/* The table an entry points to, made when absent (counted; NULL: none left). */
static uint64_t *next_level(uint64_t *e)
{
	if (!(*e & PTE_P)) {
		if (mmio_tables >= PAGING_MMIO_MAX_TABLES || page_alloc_free() < PAGE_SIZE)
			return NULL;
		uint64_t *t = page_alloc(1);     /* zeroed: every entry absent */
		mmio_tables++;
		__atomic_store_n(e, (uint64_t)(uintptr_t)t | PTE_P | PTE_W, __ATOMIC_RELEASE);
	}
	return (uint64_t *)(uintptr_t)(*e & PTE_ADDR);
}

/* How many tables mapping pa would add (the walk without allocating). */
static unsigned tables_needed(uint64_t pa)
{
	uint64_t e = host_pml4[pa >> 39 & 511];
	if (!(e & PTE_P))
		return 3;
	e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[pa >> 30 & 511];
	if (!(e & PTE_P))
		return 2;
	if (e & PTE_PS)
		return 0;
	e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[pa >> 21 & 511];
	return (e & PTE_P) ? 0 : 1;
}

bool paging_map_mmio(uint64_t pa, uint64_t len)
{
	if (pa + len < pa || pa + len > PAGING_MMIO_REACH)
		return false;                    /* wraps, or past the lower half */
	uint64_t lo = pa & ~0xfffull, hi = ALIGN_UP(pa + len, PAGE_SIZE);
	if (hi <= paging_identity_end)
		return true;
	if (!host_pml4)
		return false;
	if (lo < paging_identity_end)
		lo = paging_identity_end;
	spin_lock(&mmio_lock);
	/* All or none: the tables every page needs counted first (pages in
	 * one 2 MiB share their tables, so the sum is an upper bound). */
	unsigned need = 0, fresh = 0;
	for (uint64_t p = lo; p < hi; p += PAGE_SIZE)
		need += tables_needed(p);
	bool ok = mmio_tables + need <= PAGING_MMIO_MAX_TABLES && page_alloc_free() >= need * PAGE_SIZE;
	for (uint64_t p = lo; ok && p < hi; p += PAGE_SIZE) {
		uint64_t *pdpt = next_level(&host_pml4[p >> 39 & 511]);
		uint64_t *pd = pdpt ? next_level(&pdpt[p >> 30 & 511]) : NULL;
		uint64_t *pt = pd ? next_level(&pd[p >> 21 & 511]) : NULL;
		if (!pt) {
			ok = false;                  /* not reached: counted above */
			break;
		}
		/* Absent to present: no TLB holds the absent entry (SDM Vol. 3A,
		 * "Caching Translation Information"), no shootdown. */
		fresh += !(pt[p >> 12 & 511] & PTE_P);
		__atomic_store_n(&pt[p >> 12 & 511], p | PTE_P | PTE_W | PTE_PCD | PTE_PWT, __ATOMIC_RELEASE);
	}
	spin_unlock(&mmio_lock);
	if (ok && fresh)
		pr_info("paging: MMIO 0x%llx-0x%llx above the identity map mapped uncached (%u of %u tables used)\n",
			(unsigned long long)lo, (unsigned long long)hi, mmio_tables, PAGING_MMIO_MAX_TABLES);
	else if (!ok)
		pr_warn("paging: MMIO 0x%llx-0x%llx above the identity map not mapped: no page table left (%u of %u used)\n",
			(unsigned long long)lo, (unsigned long long)hi, mmio_tables, PAGING_MMIO_MAX_TABLES);
	return ok;
}
