/* Identity EPT with the largest pages each region allows. */
#include "ept.h"
#include "vmx_defs.h"
#include "../lib/printk.h"

enum { CLS_WB, CLS_UC, CLS_HV, CLS_MIXED };

static int type_class(uint32_t t)
{
	switch (t) {
	case MEM_USABLE: case MEM_ACPI: case MEM_NVS: case MEM_BOOT:
		return CLS_WB;
	case MEM_HV:
		return CLS_HV;
	default:
		return CLS_UC;   /* reserved, bad: MMIO and firmware */
	}
}

int ept_region_class(const struct memmap *m, uint64_t a, uint64_t b)
{
	int cls = -1;
	uint64_t covered = 0;
	for (uint32_t i = 0; i < m->count; i++) {
		uint64_t lo = m->r[i].base, hi = m->r[i].base + m->r[i].len;
		if (hi <= a || lo >= b)
			continue;
		int c = type_class(m->r[i].type);
		if (cls >= 0 && c != cls)
			return CLS_MIXED;
		cls = c;
		covered += (hi < b ? hi : b) - (lo > a ? lo : a);
	}
	if (covered < b - a) {            /* a hole: MMIO, uncached */
		if (cls >= 0 && cls != CLS_UC)
			return CLS_MIXED;
		cls = CLS_UC;
	}
	return cls;
}

static uint64_t leaf(uint64_t pa, int cls, bool large)
{
	return pa | EPT_R | EPT_W | EPT_X | (cls == CLS_WB ? EPT_MT_WB : EPT_MT_UC) | (large ? EPT_LARGE : 0);
}

static uint64_t *new_table(struct ept_stats *st)
{
	st->tables++;
	return page_alloc(1);
}

static uint64_t table_entry(uint64_t *t)
{
	return (uint64_t)(uintptr_t)t | EPT_R | EPT_W | EPT_X;
}

/* Fills one 2 MiB region; splits into 4 KiB pages when it is not uniform. */
static uint64_t map_2m(const struct memmap *m, uint64_t base, struct ept_stats *st)
{
	int cls = ept_region_class(m, base, base + MIB(2));
	if (cls == CLS_WB || cls == CLS_UC) {
		st->pages_2m++;
		return leaf(base, cls, true);
	}
	if (cls == CLS_HV) {
		st->holes_4k += 512;
		return 0;
	}
	uint64_t *pt = new_table(st);
	for (int i = 0; i < 512; i++) {
		uint64_t pa = base + (uint64_t)i * PAGE_SIZE;
		int c = ept_region_class(m, pa, pa + PAGE_SIZE);
		if (c == CLS_HV) {
			st->holes_4k++;
			continue;
		}
		pt[i] = leaf(pa, c, false);
		st->pages_4k++;
	}
	return table_entry(pt);
}

uint64_t ept_build(const struct memmap *m, const struct vmx_caps *c, uint64_t end, struct ept_stats *st)
{
	uint64_t *pml4 = new_table(st);
	end = ALIGN_UP(end, GIB(1));
	for (uint64_t g = 0; g < end; g += GIB(1)) {
		uint64_t *pdpt;
		uint64_t i4 = g >> 39, i3 = (g >> 30) & 511;
		if (!pml4[i4])
			pml4[i4] = table_entry(new_table(st));
		pdpt = (uint64_t *)(uintptr_t)(pml4[i4] & ~0xfffull);
		int cls = ept_region_class(m, g, g + GIB(1));
		if (c->ept_1g && (cls == CLS_WB || cls == CLS_UC)) {
			pdpt[i3] = leaf(g, cls, true);
			st->pages_1g++;
			continue;
		}
		uint64_t *pd = new_table(st);
		pdpt[i3] = table_entry(pd);
		for (int j = 0; j < 512; j++) {
			uint64_t base = g + (uint64_t)j * MIB(2);
			if (c->ept_2m) {
				pd[j] = map_2m(m, base, st);
				continue;
			}
			/* No 2 MiB pages: always a 4 KiB table (the split path does exactly that). */
			uint64_t *pt = new_table(st);
			for (int i = 0; i < 512; i++) {
				uint64_t pa = base + (uint64_t)i * PAGE_SIZE;
				int k = ept_region_class(m, pa, pa + PAGE_SIZE);
				if (k != CLS_HV) {
					pt[i] = leaf(pa, k, false);
					st->pages_4k++;
				} else {
					st->holes_4k++;
				}
			}
			pd[j] = table_entry(pt);
		}
	}
	/* EPTP: WB paging-structure memory type, page-walk length 4 (encoded 3). */
	return (uint64_t)(uintptr_t)pml4 | 6 | (3 << 3);
}

#ifndef HV_HOST_TEST
void ept_invalidate(uint64_t eptp, const struct vmx_caps *c)
{
	struct { uint64_t eptp, rsvd; } desc = { eptp, 0 };
	uint64_t type = (c->ept_vpid & VMX_EPT_CAP_INVEPT_ALL) ? 2 : 1;
	if (!(c->ept_vpid & VMX_EPT_CAP_INVEPT))
		return;
	__asm__ volatile("invept %0, %1" :: "m"(desc), "r"(type) : "cc", "memory");
}
#endif
