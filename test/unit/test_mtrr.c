/* Variable-range MTRR decoding and its use for EPT memory types. */
#include "test.h"
#include "../../lib/mtrr.h"
#include "../../lib/memmap.h"
#include "../../vmx/ept.h"

#define ADDR_MASK 0x000ffffffffff000ull

static void add_range(struct mtrr_state *s, uint64_t base, uint64_t size, uint8_t type)
{
	s->var[s->nvar].base = base;
	s->var[s->nvar].mask = ~(size - 1) & ADDR_MASK;
	s->var[s->nvar].type = type;
	s->nvar++;
}

static struct mtrr_state sample(void)
{
	struct mtrr_state s = { .enabled = true, .def_type = MTRR_WB };
	add_range(&s, 0xc0000000, MIB(512), MTRR_UC);    /* the PCI hole's low half */
	add_range(&s, 0xe0000000, MIB(256), MTRR_WC);    /* a framebuffer */
	add_range(&s, GIB(1), MIB(2), MTRR_WT);
	add_range(&s, GIB(1), MIB(4), MTRR_WB);          /* overlaps the WT one: WT wins */
	return s;
}

TEST(mtrr_uniform_regions)
{
	struct mtrr_state s = sample();
	CHECK_EQ(mtrr_region_type(&s, 0, GIB(1)), MTRR_WB);              /* default */
	CHECK_EQ(mtrr_region_type(&s, 0xc0000000, MIB(2)), MTRR_UC);
	CHECK_EQ(mtrr_region_type(&s, 0xc0000000, MIB(512)), MTRR_UC);
	CHECK_EQ(mtrr_region_type(&s, 0xe0000000, MIB(2)), MTRR_WC);
	CHECK_EQ(mtrr_region_type(&s, 0xf0000000, MIB(2)), MTRR_WB);      /* above the WC range */
	CHECK_EQ(mtrr_region_type(&s, GIB(1), MIB(2)), MTRR_WT);          /* WT and WB overlap */
	CHECK_EQ(mtrr_region_type(&s, GIB(1) + MIB(2), MIB(2)), MTRR_WB);
}

TEST(mtrr_partial_cover_is_mixed)
{
	struct mtrr_state s = sample();
	CHECK_EQ(mtrr_region_type(&s, 0xc0000000, GIB(1)), MTRR_MIXED);  /* UC half, WC, default */
	CHECK_EQ(mtrr_region_type(&s, GIB(1), GIB(1)), MTRR_MIXED);
	CHECK_EQ(mtrr_region_type(&s, GIB(1), MIB(4)), MTRR_MIXED);       /* WT on the first 2 MiB only */
	CHECK_EQ(mtrr_region_type(&s, GIB(1) + PAGE_SIZE, PAGE_SIZE), MTRR_WT);
}

TEST(mtrr_conflicts_resolve_safely)
{
	struct mtrr_state s = { .enabled = true, .def_type = MTRR_UC };
	CHECK_EQ(mtrr_region_type(&s, GIB(2), MIB(2)), MTRR_UC);          /* default UC */
	add_range(&s, 0, GIB(2), MTRR_WB);
	add_range(&s, MIB(64), MIB(2), MTRR_UC);
	add_range(&s, MIB(128), MIB(2), MTRR_WC);
	CHECK_EQ(mtrr_region_type(&s, 0, MIB(2)), MTRR_WB);
	CHECK_EQ(mtrr_region_type(&s, MIB(64), MIB(2)), MTRR_UC);         /* UC beats WB */
	CHECK_EQ(mtrr_region_type(&s, MIB(128), MIB(2)), MTRR_UC);        /* WC + WB: undefined, taken as UC */
}

/* The leaf entry for gpa, or 0; *level 1 = 4K, 2 = 2M, 3 = 1G. */
static uint64_t ept_leaf(uint64_t eptp, uint64_t gpa, int *level)
{
	uint64_t *t = (uint64_t *)(uintptr_t)(eptp & ADDR_MASK);
	for (int l = 4; l >= 1; l--) {
		uint64_t e = t[(gpa >> (12 + 9 * (l - 1))) & 511];
		*level = l;
		if (!(e & 7))
			return 0;
		if (l == 1 || (e & EPT_LARGE))
			return e;
		t = (uint64_t *)(uintptr_t)(e & ADDR_MASK);
	}
	return 0;
}

TEST(ept_takes_memory_types_from_mtrrs)
{
	static struct memmap m;
	struct mtrr_state s = sample();
	struct vmx_caps c = { .ept_1g = true, .ept_2m = true };
	struct ept_stats st = { 0 };
	void *heap = aligned_alloc(PAGE_SIZE, MIB(4));
	int level;
	memset(&m, 0, sizeof m);
	memmap_add(&m, 0, GIB(3), MEM_USABLE);          /* RAM below 3 GiB, the rest is MMIO */
	memmap_add(&m, MIB(100), MIB(2), MEM_HV);
	memmap_normalize(&m);
	page_alloc_init((uint64_t)(uintptr_t)heap, MIB(4));
	uint64_t eptp = ept_build(&m, &s, &c, GIB(8), &st);

	uint64_t e = ept_leaf(eptp, MIB(10), &level);
	CHECK_EQ((e >> 3) & 7, MTRR_WB);                 /* RAM, default WB */
	e = ept_leaf(eptp, GIB(1), &level);
	CHECK_EQ((e >> 3) & 7, MTRR_WT);                 /* RAM under a WT range */
	CHECK_EQ(level, 2);
	e = ept_leaf(eptp, GIB(1) + MIB(2), &level);
	CHECK_EQ((e >> 3) & 7, MTRR_WB);
	e = ept_leaf(eptp, 0xc0000000, &level);
	CHECK_EQ((e >> 3) & 7, MTRR_UC);                 /* MMIO under UC */
	e = ept_leaf(eptp, 0xe0000000, &level);
	CHECK_EQ((e >> 3) & 7, MTRR_WC);                 /* MMIO under WC keeps WC */
	e = ept_leaf(eptp, 0xf0000000, &level);
	CHECK_EQ((e >> 3) & 7, MTRR_UC);                 /* MMIO, MTRR default WB: still UC */
	CHECK(e & 7);
	CHECK_EQ(ept_leaf(eptp, MIB(100), &level), 0);   /* the hypervisor stays out */
	e = ept_leaf(eptp, GIB(5), &level);
	CHECK_EQ(level, 3);                              /* a uniform GiB: one 1 GiB page */
	CHECK_EQ((e >> 3) & 7, MTRR_UC);

	/* Disabled MTRRs: the memory map alone decides. */
	s.enabled = false;
	page_alloc_init((uint64_t)(uintptr_t)heap, MIB(4));
	memset(&st, 0, sizeof st);
	eptp = ept_build(&m, &s, &c, GIB(8), &st);
	e = ept_leaf(eptp, GIB(1), &level);
	CHECK_EQ((e >> 3) & 7, MTRR_WB);
	CHECK_EQ(level, 3);
	e = ept_leaf(eptp, 0xe0000000, &level);
	CHECK_EQ((e >> 3) & 7, MTRR_UC);
	free(heap);
}

TEST(mtrr_print_lists_ranges)
{
	struct mtrr_state s = sample();
	mtrr_print(&s);
	CHECK_CONTAINS(test_log(), "mtrr: default type 6, 4 variable ranges");
	CHECK_CONTAINS(test_log(), "base 0xe0000000 mask 0xffffff0000000 type 1");
}
