/* Identity EPT with the largest pages each region allows. */
#include "ept.h"
#include "vmx_defs.h"
#include "../lib/options.h"
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

#define T_HV    (-2)
#define T_MIXED (-1)

struct ept_ctx {
	const struct memmap *mem;
	const struct mtrr_state *mtrr;     /* NULL or disabled: the memory map alone */
	struct ept_stats *st;
};

/* The EPT memory type of [a, a+size), T_HV, or T_MIXED (split it). */
static int region_type(const struct ept_ctx *x, uint64_t a, uint64_t size)
{
	int cls = ept_region_class(x->mem, a, a + size);
	if (cls == CLS_HV)
		return T_HV;
	if (cls == CLS_MIXED)
		return T_MIXED;
	int mt = x->mtrr && x->mtrr->enabled ? mtrr_region_type(x->mtrr, a, size) : -2;
	if (mt == MTRR_MIXED)
		return T_MIXED;
	if (cls == CLS_WB)
		return mt >= 0 ? mt : MTRR_WB;
	return mt == MTRR_WC || mt == MTRR_WT || mt == MTRR_WP ? mt : MTRR_UC;
}

static bool nx_huge;

void ept_set_nx_huge(bool on) { nx_huge = on; }
bool ept_nx_huge(void) { return nx_huge; }

bool ept_nx_huge_wanted(int opt, bool intel, bool arch_cap_msr, uint64_t arch_cap)
{
	if (opt == NXHUGE_ON || opt == NXHUGE_OFF)
		return opt == NXHUGE_ON;
	return intel && !(arch_cap_msr && (arch_cap & BIT(6)));
}

static uint64_t leaf(uint64_t pa, int type, bool large)
{
	uint64_t x = large && nx_huge ? 0 : EPT_X;
	return pa | EPT_R | EPT_W | x | ((uint64_t)type << EPT_MT_SHIFT) | (large ? EPT_LARGE : 0);
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

static bool overlaps_hv(const struct memmap *m, uint64_t a, uint64_t b)
{
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].type == MEM_HV && m->r[i].base < b && m->r[i].base + m->r[i].len > a)
			return true;
	return false;
}

/* A 4 KiB page table for a 2 MiB region; a page that is partly the
 * hypervisor's stays out (claims are page-aligned, so that is only defensive). */
static uint64_t map_4k(const struct ept_ctx *x, uint64_t base)
{
	uint64_t *pt = new_table(x->st);
	for (int i = 0; i < 512; i++) {
		uint64_t pa = base + (uint64_t)i * PAGE_SIZE;
		int t = region_type(x, pa, PAGE_SIZE);
		if (t == T_MIXED)
			t = overlaps_hv(x->mem, pa, pa + PAGE_SIZE) ? T_HV : MTRR_UC;
		if (t == T_HV) {
			x->st->holes_4k++;
			continue;
		}
		pt[i] = leaf(pa, t, false);
		x->st->pages_4k++;
	}
	return table_entry(pt);
}

/* One 2 MiB region: a large page when uniform, else 4 KiB pages. */
static uint64_t map_2m(const struct ept_ctx *x, uint64_t base, bool large_ok)
{
	int t = region_type(x, base, MIB(2));
	if (t >= 0 && large_ok) {
		x->st->pages_2m++;
		return leaf(base, t, true);
	}
	/* A hypervisor-only region gets its page table too, all holes: the
	 * sink (ept_map_sink) fills a hole at run time without allocating. */
	return map_4k(x, base);
}

static uint64_t *next_table(uint64_t e)
{
	if (!(e & EPT_R) || (e & EPT_LARGE))
		return NULL;
	return (uint64_t *)(uintptr_t)(e & 0x000ffffffffff000ull);
}

int ept_map_sink(uint64_t eptp, uint64_t gpa, paddr_t sink, paddr_t wsink, bool write)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		t = next_table(t[(gpa >> shift) & 511]);
		if (!t)
			return -1;
	}
	uint64_t *pte = &t[(gpa >> 12) & 511];
	uint64_t rd = leaf(sink, MTRR_WB, false) & ~EPT_W, wr = leaf(wsink, MTRR_WB, false);
	uint64_t want = write ? wr : rd;
	uint64_t old = __atomic_load_n(pte, __ATOMIC_SEQ_CST);
	/* A hole (nothing ever mapped there), or the read sink met by a
	 * write: the slot takes what is wanted. A page a trap took out
	 * (ept_unmap_page: not present, its own address kept) is never one,
	 * not even before its trap lists it (issue 43 item 9): -1, the access
	 * runs again and meets the trap, or the page given back. */
	bool trap_page = !(old & (EPT_R | EPT_W | EPT_X)) && (old & 0x000ffffffffff000ull) == (gpa & ~0xfffull) &&
			 (old & 0x000ffffffffff000ull);
	bool free_slot = (!(old & (EPT_R | EPT_W | EPT_X)) && !trap_page) || (write && old == rd);
	if (free_slot && __atomic_compare_exchange_n(pte, &old, want, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return 1;
	return old == want || (!write && old == wr) ? 0 : -1;   /* 0: another vCPU filled it first */
}

/* A large leaf into a table of 512 leaves one level down, the same type,
 * rights and ignore-PAT bit (SDM Vol. 3C, "EPT Translation Mechanism":
 * bit 7 is the page size in a PDPTE or PDE, ignored in a PTE); 4 KiB
 * leaves of a readable page executable under nx_huge (ept.h). */
static uint64_t split(uint64_t e, uint64_t step, bool large, struct ept_stats *st)
{
	uint64_t *t = new_table(st);
	uint64_t base = e & 0x000ffffffffff000ull & ~(step * 512 - 1);
	uint64_t bits = e & 0xfffull & ~EPT_LARGE;
	if (!large && nx_huge && (bits & EPT_R))
		bits |= EPT_X;
	for (int i = 0; i < 512; i++)
		t[i] = (base + (uint64_t)i * step) | bits | (large ? EPT_LARGE : 0);
	return table_entry(t);
}

bool ept_unmap_page(uint64_t eptp, uint64_t gpa, struct ept_stats *st)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		uint64_t *e = &t[(gpa >> shift) & 511];
		if (!(*e & EPT_R))
			return false;
		if (shift <= 30 && (*e & EPT_LARGE))
			*e = split(*e, 1ull << (shift - 9), shift == 30, st);
		t = next_table(*e);
	}
	uint64_t *pte = &t[(gpa >> 12) & 511];
	if (!(*pte & EPT_R))
		return false;
	/* Not present (bits 2:0 clear: the rest is ignored, SDM Vol. 3C,
	 * "EPT Translation Mechanism"); the address and type stay for
	 * ept_restore_page. */
	*pte &= ~(EPT_R | EPT_W | EPT_X);
	return true;
}

int ept_exec_split(uint64_t eptp, uint64_t gpa, struct ept_stats *st)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		uint64_t *e = &t[(gpa >> shift) & 511];
		uint64_t v = *e;
		if (!(v & EPT_R))
			return -1;
		if (shift <= 30 && (v & EPT_LARGE)) {
			if (v & EPT_X)
				return 0;
			if (!nx_huge)
				return -1;
			/* The table is whole before the entry points at it. */
			__atomic_store_n(e, split(v, 1ull << (shift - 9), shift == 30, st), __ATOMIC_SEQ_CST);
			if (shift == 21)
				return 1;
		}
		t = next_table(*e);
	}
	return (t[(gpa >> 12) & 511] & (EPT_R | EPT_X)) == (EPT_R | EPT_X) ? 0 : -1;
}

int ept_exec_allow_large(uint64_t eptp, uint64_t gpa)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		uint64_t *e = &t[(gpa >> shift) & 511];
		if (!(*e & EPT_R))
			return -1;
		if (shift <= 30 && (*e & EPT_LARGE))
			return __atomic_fetch_or(e, EPT_X, __ATOMIC_SEQ_CST) & EPT_X ? 0 : 1;
		t = next_table(*e);
	}
	return -1;
}

/* The tables an ept_unmap_page of gpa would allocate: one per large page
 * on the way (a 1 GiB page: a directory, then a table). */
unsigned ept_unmap_needs(uint64_t eptp, uint64_t gpa)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		uint64_t e = t[(gpa >> shift) & 511];
		if (!(e & EPT_R))
			return 0;
		if (shift <= 30 && (e & EPT_LARGE))
			return (unsigned)(shift - 12) / 9;   /* 1 GiB: 2, 2 MiB: 1 */
		t = next_table(e);
	}
	return 0;
}

bool ept_restore_page(uint64_t eptp, uint64_t gpa)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	for (int shift = 39; shift > 12; shift -= 9) {
		t = next_table(t[(gpa >> shift) & 511]);
		if (!t)
			return false;
	}
	uint64_t *pte = &t[(gpa >> 12) & 511];
	uint64_t e = *pte;
	if ((e & (EPT_R | EPT_W | EPT_X)) || (e & 0x000ffffffffff000ull) != (gpa & ~0xfffull) || !(e & 0x000ffffffffff000ull))
		return false;                  /* present, a hole, or not this page's (a sink) */
	*pte = e | EPT_R | EPT_W | EPT_X;
	return true;
}

/* The 1 GiB region at g (g aligned) into its PDPT entry: one large page when
 * uniform and allowed, else a page directory of 2 MiB regions. */
static uint64_t map_1g(const struct ept_ctx *x, const struct vmx_caps *c, uint64_t g)
{
	int t = region_type(x, g, GIB(1));
	if (c->ept_1g && t >= 0) {
		x->st->pages_1g++;
		return leaf(g, t, true);
	}
	uint64_t *pd = new_table(x->st);
	for (int j = 0; j < 512; j++)
		pd[j] = map_2m(x, g + (uint64_t)j * MIB(2), c->ept_2m);
	return table_entry(pd);
}

uint64_t ept_build(const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		   uint64_t end, struct ept_stats *st)
{
	struct ept_ctx x = { m, mtrr, st };
	uint64_t *pml4 = new_table(st);
	end = ALIGN_UP(end, GIB(1));
	for (uint64_t g = 0; g < end; g += GIB(1)) {
		uint64_t i4 = g >> 39, i3 = (g >> 30) & 511;
		if (!pml4[i4])
			pml4[i4] = table_entry(new_table(st));
		uint64_t *pdpt = (uint64_t *)(uintptr_t)(pml4[i4] & ~0xfffull);
		pdpt[i3] = map_1g(&x, c, g);
	}
	/* EPTP: WB paging-structure memory type, page-walk length 4 (encoded 3). */
	return (uint64_t)(uintptr_t)pml4 | 6 | (3 << 3);
}

bool ept_map_late(uint64_t eptp, const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		  uint64_t gpa, struct ept_stats *st, uint64_t max_tables, uint64_t sink_pd)
{
	struct ept_ctx x = { m, mtrr, st };
	uint64_t *pml4 = (uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	uint64_t *e4 = &pml4[(gpa >> 39) & 511];
	uint64_t g = gpa & ~(GIB(1) - 1);
	if (ept_region_class(m, g, g + GIB(1)) == CLS_HV)
		return false;
	/* The PDPT if missing (one per 512 GiB: bounded by the address width),
	 * then a PD unless a 1 GiB page does: within the budget, or else the
	 * GiB reads as absent memory does (the sink) and costs nothing. */
	if (!*e4)
		*e4 = table_entry(new_table(st));
	uint64_t *e3 = &next_table(*e4)[(gpa >> 30) & 511];
	if (*e3)
		return false;                 /* mapped already: not a region beyond the map */
	bool needs_pd = !(c->ept_1g && region_type(&x, g, GIB(1)) >= 0);
	if (needs_pd && st->tables >= max_tables && sink_pd) {
		*e3 = sink_pd;
		st->sunk_1g++;
		return true;
	}
	*e3 = map_1g(&x, c, g);
	return true;
}

uint64_t ept_sink_gib(paddr_t sink, struct ept_stats *st)
{
	uint64_t *pt = new_table(st), *pd = new_table(st);
	for (int i = 0; i < 512; i++)
		pt[i] = leaf(sink, MTRR_WB, false);
	for (int i = 0; i < 512; i++)
		pd[i] = table_entry(pt);
	return table_entry(pd);
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
