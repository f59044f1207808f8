/* Identity page tables for the host. */
#include "paging.h"
#include "memmap.h"
#include "cpu.h"
#include "printk.h"

#define PTE_P  BIT(0)
#define PTE_W  BIT(1)
#define PTE_PS BIT(7)

uint64_t paging_identity_end;

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
	pr_info("paging: host identity map 0-%llu GiB with %s pages, cr3=0x%llx\n",
		(unsigned long long)ngb, gb_pages ? "1 GiB" : "2 MiB", (unsigned long long)(uintptr_t)pml4);
	return (uint64_t)(uintptr_t)pml4;
}
