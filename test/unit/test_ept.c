/* Host tests for vmx/ept.c: the identity EPT built from a memory map. The
 * page allocator hands out host memory, so the "physical" table addresses in
 * the entries are host pointers and the tables can be walked directly. Each
 * build is checked two ways: a walker translates single addresses the way the
 * CPU would, and a whole-tree check compares every entry against a reference
 * classification computed here from the memory map. */
#include "test.h"
#include "../../vmx/ept.h"
#include "../../vmx/ept_live.h"

#define ADDR_MASK 0x000ffffffffff000ull          /* bits 51:12 */
#define HEAP_SIZE MIB(16)
#define MT_WB 6
#define MT_UC 0
#define RWX 7ull

enum { C_WB, C_UC, C_HV, C_MIXED };              /* ept_region_class's codes */

/* ---- memory maps ---- */

/* usable [0,0x9f000), reserved [0x9f000,1M), usable [1M,256M-64K), ACPI up to
 * 256M, boot data [8M,8M+20K), hypervisor [2M,2M+128K) and [200M,248M), a
 * reserved page in the MMIO hole at 0xfec00000, then usable [4G,5G+2M). */
static struct memmap *main_map(void)
{
	static struct memmap m;
	memset(&m, 0, sizeof m);
	memmap_add(&m, 0, 0x9f000, MEM_USABLE);
	memmap_add(&m, 0x9f000, 0x100000 - 0x9f000, MEM_RESERVED);
	memmap_add(&m, MIB(1), MIB(255), MEM_USABLE);
	memmap_add(&m, MIB(256) - KIB(64), KIB(64), MEM_ACPI);
	memmap_add(&m, MIB(8), KIB(20), MEM_BOOT);
	memmap_add(&m, 0xfec00000, PAGE_SIZE, MEM_RESERVED);
	memmap_add(&m, GIB(4), GIB(1) + MIB(2), MEM_USABLE);
	memmap_normalize(&m);
	memmap_claim(&m, MIB(2), 0x20000);
	memmap_claim(&m, MIB(200), MIB(48));
	return &m;
}

/* ---- reference model ---- */

static int ref_type_class(uint32_t t)
{
	switch (t) {
	case MEM_USABLE: case MEM_ACPI: case MEM_NVS: case MEM_BOOT: return C_WB;
	case MEM_HV: return C_HV;
	default: return C_UC;                    /* reserved, bad, and holes (0) */
	}
}

/* The type is constant between range edges: [a,b) is uniform when the class
 * at a equals the class at every range edge inside it. */
static int ref_class(const struct memmap *m, uint64_t a, uint64_t b)
{
	int c = ref_type_class(memmap_type_at(m, a));
	for (uint32_t i = 0; i < m->count; i++) {
		uint64_t e[2] = { m->r[i].base, m->r[i].base + m->r[i].len };
		for (int k = 0; k < 2; k++)
			if (e[k] > a && e[k] < b && ref_type_class(memmap_type_at(m, e[k])) != c)
				return C_MIXED;
	}
	return c;
}

static uint64_t want_leaf(uint64_t pa, int cls, bool large)
{
	return pa | RWX | ((cls == C_WB ? MT_WB : MT_UC) << 3) | (large ? EPT_LARGE : 0);
}

/* ---- building ---- */

struct built {
	uint8_t *heap;
	uint64_t eptp, end;
	struct ept_stats st;
	struct vmx_caps caps;
	const struct memmap *m;
};

static void build(struct built *b, const struct memmap *m, bool g1, bool m2, uint64_t end)
{
	memset(b, 0, sizeof *b);
	b->heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)b->heap, HEAP_SIZE);
	b->caps.ept = true;
	b->caps.ept_1g = g1;
	b->caps.ept_2m = m2;
	b->m = m;
	b->end = ALIGN_UP(end, GIB(1));
	b->eptp = ept_build(m, NULL, &b->caps, end, &b->st);
}

static void done(struct built *b)
{
	page_alloc_init(0, 0);
	free(b->heap);
}

static uint64_t *table_of(uint64_t e)
{
	return (uint64_t *)(uintptr_t)(e & ADDR_MASK);
}

/* Translates gpa as the CPU would. Returns the leaf entry (0 when the walk
 * ends at a not-present entry); *level is 3 (1 GiB), 2 (2 MiB) or 1 (4 KiB),
 * or where the walk stopped. */
static uint64_t ept_walk(uint64_t eptp, uint64_t gpa, int *memtype, bool *present, int *level)
{
	uint64_t *t = table_of(eptp);
	*present = false;
	*memtype = -1;
	for (int lvl = 4; lvl >= 1; lvl--) {
		uint64_t e = t[(gpa >> (12 + 9 * (lvl - 1))) & 511];
		*level = lvl;
		if (!(e & RWX))
			return 0;
		if (lvl == 1 || ((lvl == 2 || lvl == 3) && (e & EPT_LARGE))) {
			*present = true;
			*memtype = (int)((e >> 3) & 7);
			return e;
		}
		t = table_of(e);
	}
	return 0;
}

/* Walks every page of [from, to) like the CPU would: present RWX identity
 * with the right type, or absent when the hypervisor owns it. Reports the
 * first mismatch only. */
static void check_pages(const struct built *b, uint64_t from, uint64_t to, int line)
{
	for (uint64_t gpa = from; gpa < to; gpa += PAGE_SIZE) {
		int mt, lvl;
		bool present;
		uint64_t e = ept_walk(b->eptp, gpa, &mt, &present, &lvl);
		int cls = ref_type_class(memmap_type_at(b->m, gpa));
		uint64_t size = 1ull << (12 + 9 * (lvl - 1));
		uint64_t out = (e & ADDR_MASK & ~(size - 1)) | (gpa & (size - 1));
		if (cls == C_HV ? !present : present && (e & RWX) == RWX && out == gpa &&
		    mt == (cls == C_WB ? MT_WB : MT_UC))
			continue;
		char why[200];
		snprintf(why, sizeof why, "page 0x%llx: present %d entry 0x%llx level %d (want %s)",
			 (unsigned long long)gpa, present, (unsigned long long)e, lvl,
			 cls == C_HV ? "not present" : cls == C_WB ? "WB" : "UC");
		return test_fail(__FILE__, line, why);
	}
}

/* Looks up gpa and checks its memory type (-1: not present) and page level. */
static void expect_at(const struct built *b, uint64_t gpa, int mt, int level, int line)
{
	int got_mt, got_lvl;
	bool present;
	ept_walk(b->eptp, gpa, &got_mt, &present, &got_lvl);
	if (got_mt != mt || got_lvl != level) {
		char msg[200];
		snprintf(msg, sizeof msg, "gpa 0x%llx: type %d level %d, want type %d level %d",
			 (unsigned long long)gpa, got_mt, got_lvl, mt, level);
		test_fail(__FILE__, line, msg);
	}
}
#define EXPECT_AT(b, gpa, mt, level) expect_at(b, gpa, mt, level, __LINE__)

/* ---- the whole tree against the reference ---- */

struct tree {
	uint64_t p1g, p2m, p4k, holes, tables, pts, hv_2m, bad;
	uint64_t large_pd, large_pt;             /* entries with bit 7 below the 1G level */
	char first[200];
};

static void tree_bad(struct tree *t, const char *what, uint64_t gpa, uint64_t e, uint64_t want)
{
	if (!t->bad++)
		snprintf(t->first, sizeof t->first, "%s at gpa 0x%llx: entry 0x%llx, want 0x%llx",
			 what, (unsigned long long)gpa, (unsigned long long)e, (unsigned long long)want);
}

static bool is_table(struct tree *t, uint64_t e, uint64_t gpa)
{
	/* A non-leaf entry: RWX, bits 7:3 clear, the address of a table. */
	if ((e & ~ADDR_MASK) != RWX || !(e & ADDR_MASK)) {
		tree_bad(t, "not a table entry", gpa, e, (e & ADDR_MASK) | RWX);
		return false;
	}
	t->tables++;
	return true;
}

static void check_pt(struct tree *t, const struct built *b, uint64_t *pt, uint64_t base)
{
	for (int i = 0; i < 512; i++) {
		uint64_t pa = base + (uint64_t)i * PAGE_SIZE;
		int k = ref_class(b->m, pa, pa + PAGE_SIZE);
		t->large_pt += !!(pt[i] & EPT_LARGE);
		uint64_t want = k == C_HV ? 0 : want_leaf(pa, k, false);
		if (pt[i] != want)
			tree_bad(t, "4K entry", pa, pt[i], want);
		if (k == C_HV)
			t->holes++;
		else
			t->p4k++;
	}
}

static void check_pd(struct tree *t, const struct built *b, uint64_t *pd, uint64_t g)
{
	for (int j = 0; j < 512; j++) {
		uint64_t base = g + (uint64_t)j * MIB(2), e = pd[j];
		int cls = ref_class(b->m, base, base + MIB(2));
		t->large_pd += !!(e & EPT_LARGE);
		if (b->caps.ept_2m && (cls == C_WB || cls == C_UC)) {
			if (e != want_leaf(base, cls, true))
				tree_bad(t, "2M entry", base, e, want_leaf(base, cls, true));
			t->p2m++;
			continue;
		}
		if (cls == C_HV) {
			/* A page table of holes, so that the sink (ept_map_sink) fills
			 * one at run time without allocating. */
			if (!is_table(t, e, base))
				continue;
			t->hv_2m++;
			check_pt(t, b, table_of(e), base);
			continue;
		}
		if (!is_table(t, e, base))
			continue;
		t->pts++;
		check_pt(t, b, table_of(e), base);
	}
}

static void check_tree(const struct built *b, struct tree *t, int line)
{
	memset(t, 0, sizeof *t);
	uint64_t *pml4 = table_of(b->eptp);
	t->tables = 1;
	for (int i4 = 0; i4 < 512; i4++) {
		uint64_t base4 = (uint64_t)i4 << 39, e4 = pml4[i4];
		if (base4 >= b->end) {
			if (e4)
				tree_bad(t, "PML4 entry past the end", base4, e4, 0);
			continue;
		}
		if (!is_table(t, e4, base4))
			continue;
		uint64_t *pdpt = table_of(e4);
		for (int i3 = 0; i3 < 512; i3++) {
			uint64_t g = base4 + ((uint64_t)i3 << 30), e = pdpt[i3];
			if (g >= b->end) {
				if (e)
					tree_bad(t, "PDPT entry past the end", g, e, 0);
				continue;
			}
			int cls = ref_class(b->m, g, g + GIB(1));
			if (b->caps.ept_1g && (cls == C_WB || cls == C_UC)) {
				if (e != want_leaf(g, cls, true))
					tree_bad(t, "1G entry", g, e, want_leaf(g, cls, true));
				t->p1g++;
				continue;
			}
			if (is_table(t, e, g))
				check_pd(t, b, table_of(e), g);
		}
	}
	if (t->bad)
		test_fail(__FILE__, line, t->first);
	/* Every statistic the builder reports matches the tables. */
	const struct ept_stats *st = &b->st;
	if (st->pages_1g != t->p1g || st->pages_2m != t->p2m || st->pages_4k != t->p4k ||
	    st->holes_4k != t->holes || st->tables != t->tables) {
		char msg[300];
		snprintf(msg, sizeof msg, "stats 1g/2m/4k/holes/tables %lu/%lu/%lu/%lu/%lu, tables say %lu/%lu/%lu/%lu/%lu",
			 st->pages_1g, st->pages_2m, st->pages_4k, st->holes_4k, st->tables,
			 t->p1g, t->p2m, t->p4k, t->holes, t->tables);
		test_fail(__FILE__, line, msg);
	}
	/* Every 4 KiB of [0, end) is counted exactly once. */
	if (st->pages_1g * 512 * 512 + st->pages_2m * 512 + st->pages_4k + st->holes_4k != b->end / PAGE_SIZE)
		test_fail(__FILE__, line, "stats do not cover [0, end) exactly once");
	/* 4 KiB pages and holes come in whole split 2 MiB regions. */
	if (st->pages_4k + st->holes_4k != 512 * (t->pts + t->hv_2m))
		test_fail(__FILE__, line, "pages_4k + holes_4k != 512 * split or left-out 2M regions");
	/* Every table came from page_alloc, and nothing else did. */
	if (page_alloc_used() != st->tables * PAGE_SIZE)
		test_fail(__FILE__, line, "page_alloc_used() != tables * 4096");
}

/* The checks every configuration must pass. */
static void check_common(const struct built *b, struct tree *t, int line)
{
	if ((b->eptp & 0xfff) != (6 | (3 << 3)))
		test_fail(__FILE__, line, "EPTP low bits are not WB + 4-level (0x1e)");
	if ((b->eptp & ADDR_MASK) != (uintptr_t)b->heap)
		test_fail(__FILE__, line, "EPTP does not point at the first allocated page (the PML4)");
	check_tree(b, t, line);
	if (t->large_pt)
		test_fail(__FILE__, line, "bit 7 set in a 4K entry");
	/* Every page of the first 16 MiB and of both hypervisor ranges (with a
	 * page either side), walked like the CPU would. */
	check_pages(b, 0, MIB(16), line);
	check_pages(b, MIB(2) - PAGE_SIZE, MIB(2) + 0x21000, line);
	check_pages(b, MIB(200) - PAGE_SIZE, MIB(248) + PAGE_SIZE, line);
	check_pages(b, MIB(254), MIB(258), line);
	check_pages(b, GIB(5), GIB(5) + MIB(4), line);
}

/* ---- tests ---- */

/* Addresses whose type and page size do not depend on ept_1g. */
static void common_samples(const struct built *b, int pd_level)
{
	EXPECT_AT(b, 0, MT_WB, 1);                  /* [0,2M) mixes RAM, reserved, RAM */
	EXPECT_AT(b, 0x9e000, MT_WB, 1);
	EXPECT_AT(b, 0x9f000, MT_UC, 1);
	EXPECT_AT(b, 0xff000, MT_UC, 1);
	EXPECT_AT(b, 0x100000, MT_WB, 1);
	EXPECT_AT(b, 0x1ff000, MT_WB, 1);
	EXPECT_AT(b, MIB(2), -1, 1);                /* hypervisor, inside a split 2M */
	EXPECT_AT(b, MIB(2) + 0x1f000, -1, 1);
	EXPECT_AT(b, MIB(2) + 0x20000, MT_WB, 1);
	EXPECT_AT(b, MIB(4), MT_WB, pd_level);      /* uniform RAM */
	EXPECT_AT(b, MIB(8), MT_WB, pd_level);      /* boot data + RAM: both WB */
	EXPECT_AT(b, MIB(8) + 0x4fff, MT_WB, pd_level);
	EXPECT_AT(b, MIB(198), MT_WB, pd_level);
	EXPECT_AT(b, MIB(200), -1, 1);              /* hypervisor-only 2M: a table of holes */
	EXPECT_AT(b, MIB(248) - 1, -1, 1);
	EXPECT_AT(b, MIB(248), MT_WB, pd_level);
	EXPECT_AT(b, MIB(256) - KIB(64), MT_WB, pd_level);   /* ACPI next to RAM */
	EXPECT_AT(b, MIB(256), MT_UC, pd_level);    /* the hole above */
	EXPECT_AT(b, MIB(1023), MT_UC, pd_level);
	EXPECT_AT(b, GIB(5), MT_WB, pd_level);
	EXPECT_AT(b, GIB(5) + MIB(2), MT_UC, pd_level);
	EXPECT_AT(b, GIB(6) - 1, MT_UC, pd_level);
}

TEST(ept_1g_and_2m_pages)
{
	struct built b;
	struct tree t;
	const struct memmap *m = main_map();
	build(&b, m, true, true, memmap_end(m));
	CHECK_EQ(b.end, GIB(6));
	check_common(&b, &t, __LINE__);
	common_samples(&b, 2);
	CHECK_EQ(t.large_pd, b.st.pages_2m);
	EXPECT_AT(&b, GIB(1), MT_UC, 3);            /* [1G,2G): hole, one 1 GiB page */
	EXPECT_AT(&b, GIB(2) - 1, MT_UC, 3);
	EXPECT_AT(&b, 0xfec00000, MT_UC, 3);        /* reserved + hole: still uniform UC */
	EXPECT_AT(&b, GIB(4), MT_WB, 3);            /* [4G,5G) RAM */
	EXPECT_AT(&b, GIB(5) - 1, MT_WB, 3);
	/* [0,1G) and [5G,6G) mixed: 4 x 1G, each 4 KiB page elsewhere accounted. */
	CHECK_EQ(b.st.pages_1g, 4);
	CHECK_EQ(b.st.holes_4k, 0x20000 / PAGE_SIZE + MIB(48) / PAGE_SIZE);
	/* Split 2M regions: [0,2M), [2M,4M) and, with 256M-64K ACPI both WB, nothing else. */
	CHECK_EQ(b.st.pages_4k + b.st.holes_4k, 512 * 2 + MIB(48) / PAGE_SIZE);
	CHECK_EQ(b.st.pages_4k, 2 * 512 - 0x20);
	CHECK_EQ(b.st.tables, 1 + 1 + 2 + 2 + MIB(48) / MIB(2));   /* PML4, PDPT, 2 PDs, 2 PTs, 24 PTs of holes */
	done(&b);
}

TEST(ept_2m_pages_without_1g)
{
	struct built b;
	struct tree t;
	const struct memmap *m = main_map();
	build(&b, m, false, true, memmap_end(m));
	check_common(&b, &t, __LINE__);
	common_samples(&b, 2);
	EXPECT_AT(&b, GIB(1), MT_UC, 2);
	EXPECT_AT(&b, 0xfec00000, MT_UC, 2);
	EXPECT_AT(&b, GIB(4), MT_WB, 2);
	CHECK_EQ(b.st.pages_1g, 0);
	CHECK_EQ(b.st.pages_2m, 6 * 512 - 2 - MIB(48) / MIB(2));
	CHECK_EQ(b.st.tables, 1 + 1 + 6 + 2 + MIB(48) / MIB(2));
	done(&b);
}

TEST(ept_1g_without_2m)
{
	struct built b;
	struct tree t;
	const struct memmap *m = main_map();
	build(&b, m, true, false, memmap_end(m));
	check_common(&b, &t, __LINE__);
	common_samples(&b, 1);
	CHECK_EQ(t.large_pd, 0);                    /* no 2M leaf anywhere */
	EXPECT_AT(&b, GIB(1), MT_UC, 3);            /* 1 GiB pages still used */
	EXPECT_AT(&b, GIB(4), MT_WB, 3);
	CHECK_EQ(b.st.pages_1g, 4);
	CHECK_EQ(b.st.pages_2m, 0);
	CHECK_EQ(b.st.pages_4k + b.st.holes_4k, 2 * 512 * 512ull);
	done(&b);
}

TEST(ept_4k_only)
{
	struct built b;
	struct tree t;
	const struct memmap *m = main_map();
	build(&b, m, false, false, memmap_end(m));
	check_common(&b, &t, __LINE__);
	common_samples(&b, 1);
	CHECK_EQ(t.large_pd, 0);
	EXPECT_AT(&b, GIB(1), MT_UC, 1);
	EXPECT_AT(&b, GIB(4), MT_WB, 1);
	CHECK_EQ(b.st.pages_1g + b.st.pages_2m, 0);
	CHECK_EQ(b.st.pages_4k + b.st.holes_4k, GIB(6) / PAGE_SIZE);
	CHECK_EQ(b.st.holes_4k, 0x20000 / PAGE_SIZE + MIB(48) / PAGE_SIZE);
	done(&b);
}

TEST(ept_end_past_512g_uses_a_second_pml4_entry)
{
	struct built b;
	struct tree t;
	const struct memmap *m = main_map();
	build(&b, m, true, true, GIB(512) + 1);     /* rounded up to 513 GiB */
	CHECK_EQ(b.end, GIB(513));
	check_common(&b, &t, __LINE__);
	EXPECT_AT(&b, GIB(511), MT_UC, 3);
	EXPECT_AT(&b, GIB(512) + 5, MT_UC, 3);
	EXPECT_AT(&b, GIB(513), -1, 3);             /* past the end: not mapped */
	CHECK_EQ(b.st.pages_1g, 513 - 2);
	CHECK_EQ(b.st.tables, 1 + 2 + 2 + 2 + MIB(48) / MIB(2));
	done(&b);
}

TEST(ept_end_rounded_to_a_gib)
{
	struct built b;
	struct memmap m = { 0 };
	memmap_add(&m, 0, MIB(3), MEM_USABLE);
	memmap_normalize(&m);
	build(&b, &m, false, true, MIB(3));
	CHECK_EQ(b.end, GIB(1));
	check_tree(&b, &(struct tree){ 0 }, __LINE__);
	EXPECT_AT(&b, 0, MT_WB, 2);
	EXPECT_AT(&b, MIB(2), MT_WB, 1);
	EXPECT_AT(&b, MIB(3), MT_UC, 1);
	EXPECT_AT(&b, MIB(4), MT_UC, 2);
	EXPECT_AT(&b, GIB(1), -1, 3);
	done(&b);
}

TEST(ept_nvs_bad_and_unaligned_edges)
{
	struct built b;
	struct memmap m = { 0 };
	memmap_add(&m, 0, 0x9fc00, MEM_USABLE);          /* a typical BIOS edge, not page aligned */
	memmap_add(&m, 0x9fc00, 0x400, MEM_RESERVED);
	memmap_add(&m, MIB(1), MIB(15), MEM_USABLE);
	memmap_add(&m, MIB(4), PAGE_SIZE, MEM_NVS);
	memmap_add(&m, MIB(9), PAGE_SIZE, MEM_BAD);
	memmap_add(&m, MIB(6), MIB(2), MEM_HV);          /* a whole 2M region */
	memmap_normalize(&m);
	build(&b, &m, true, true, GIB(1));
	check_tree(&b, &(struct tree){ 0 }, __LINE__);
	EXPECT_AT(&b, 0x9e000, MT_WB, 1);
	EXPECT_AT(&b, 0x9f000, MT_UC, 1);               /* RAM + reserved: the safe type */
	EXPECT_AT(&b, MIB(4), MT_WB, 2);                /* NVS is WB, like the RAM around it */
	EXPECT_AT(&b, MIB(9), MT_UC, 1);                /* bad memory is UC */
	EXPECT_AT(&b, MIB(9) + PAGE_SIZE, MT_WB, 1);
	EXPECT_AT(&b, MIB(16), MT_UC, 2);
	EXPECT_AT(&b, MIB(6), -1, 1);                   /* a page table of holes */
	EXPECT_AT(&b, MIB(8) - 1, -1, 1);
	CHECK_EQ(b.st.holes_4k, 512);
	done(&b);
}

TEST(ept_region_class_cases)
{
	const struct memmap *m = main_map();
	CHECK_EQ(ept_region_class(m, MIB(4), MIB(6)), C_WB);
	CHECK_EQ(ept_region_class(m, MIB(8), MIB(10)), C_WB);            /* boot + RAM */
	CHECK_EQ(ept_region_class(m, MIB(254), MIB(256)), C_WB);         /* RAM + ACPI */
	CHECK_EQ(ept_region_class(m, GIB(4), GIB(5)), C_WB);
	CHECK_EQ(ept_region_class(m, 0x9f000, 0x100000), C_UC);
	CHECK_EQ(ept_region_class(m, MIB(300), MIB(302)), C_UC);         /* hole */
	CHECK_EQ(ept_region_class(m, 0xfec00000, 0xfec01000), C_UC);     /* reserved */
	CHECK_EQ(ept_region_class(m, 0xfebff000, 0xfec02000), C_UC);     /* hole + reserved + hole */
	CHECK_EQ(ept_region_class(m, GIB(1), GIB(2)), C_UC);
	CHECK_EQ(ept_region_class(m, MIB(2), MIB(2) + 0x20000), C_HV);
	CHECK_EQ(ept_region_class(m, MIB(200), MIB(248)), C_HV);
	CHECK_EQ(ept_region_class(m, MIB(202), MIB(204)), C_HV);
	CHECK_EQ(ept_region_class(m, 0, MIB(2)), C_MIXED);               /* RAM + reserved */
	CHECK_EQ(ept_region_class(m, MIB(2), MIB(4)), C_MIXED);          /* hypervisor + RAM */
	CHECK_EQ(ept_region_class(m, MIB(248) - PAGE_SIZE, MIB(248) + PAGE_SIZE), C_MIXED);
	CHECK_EQ(ept_region_class(m, MIB(256) - PAGE_SIZE, MIB(256) + PAGE_SIZE), C_MIXED); /* ACPI + hole */
	CHECK_EQ(ept_region_class(m, GIB(5), GIB(6)), C_MIXED);          /* RAM + hole */
	CHECK_EQ(ept_region_class(m, 0, GIB(1)), C_MIXED);

	/* Hypervisor memory next to a hole is mixed, not "hypervisor". */
	struct memmap h = { 0 };
	memmap_add(&h, MIB(2), MIB(1), MEM_HV);
	memmap_normalize(&h);
	CHECK_EQ(ept_region_class(&h, MIB(2), MIB(3)), C_HV);
	CHECK_EQ(ept_region_class(&h, MIB(2), MIB(4)), C_MIXED);
	CHECK_EQ(ept_region_class(&h, MIB(1), MIB(3)), C_MIXED);
	CHECK_EQ(ept_region_class(&h, 0, MIB(1)), C_UC);                 /* nothing covers it */
}

/* The sink: a hypervisor page the guest read becomes a mapping of one
 * shared all-ones page, read and execute only (SDM Vol. 3C, "EPT
 * Translation Mechanism": bit 1 write access), so that no write of the
 * guest's changes what every such page reads; a write there maps the
 * other sink page, writable. Large-page memory has no slot to fill. */
TEST(ept_sink_fills_a_hole_once)
{
	struct built b;
	const struct memmap *m = main_map();
	build(&b, m, true, true, memmap_end(m));
	static uint8_t sink_page[4096] __attribute__((aligned(4096))), wsink_page[4096] __attribute__((aligned(4096)));
	paddr_t sink = (paddr_t)(uintptr_t)sink_page, wsink = (paddr_t)(uintptr_t)wsink_page;
	int mt, level;
	bool present;
	CHECK_EQ(ept_map_sink(b.eptp, MIB(200) + 0x5123, sink, wsink, false), 1);
	uint64_t e = ept_walk(b.eptp, MIB(200) + 0x5123, &mt, &present, &level);
	CHECK(present);
	CHECK_EQ(e, sink | 5 | (6 << 3));                           /* R-X, WB (501bce7: RWX) */
	CHECK_EQ(ept_map_sink(b.eptp, MIB(200) + 0x5123, sink, wsink, true), 1);   /* a write: the other page */
	e = ept_walk(b.eptp, MIB(200) + 0x5123, &mt, &present, &level);
	CHECK_EQ(e, wsink | 7 | (6 << 3));                          /* RWX, WB */
	CHECK_EQ(ept_map_sink(b.eptp, MIB(200) + 0x5123, sink, wsink, false), 0);  /* a read there: fine as it is */
	CHECK_EQ(mt, 6);
	CHECK_EQ(level, 1);
	CHECK_EQ(ept_map_sink(b.eptp, MIB(200) + 0x5000, sink, wsink, false), 0); /* again: still the sink */
	ept_walk(b.eptp, MIB(200) + 0x6000, &mt, &present, &level); /* its neighbour stays a hole */
	CHECK(!present);
	CHECK_EQ(ept_map_sink(b.eptp, MIB(2) + 0x1000, sink, wsink, false), 1);   /* a hole in a split 2M */
	CHECK_EQ(ept_map_sink(b.eptp, MIB(4), sink, wsink, false), -1);           /* RAM in a 2M page: no slot */
	CHECK_EQ(ept_map_sink(b.eptp, GIB(1), sink, wsink, false), -1);           /* a 1G page */
	done(&b);
}

/* Issue 43, item 9: a trap's page, taken out (ept_unmap_page) but not yet
 * listed by its trap, is never a free slot for the sink: a vCPU faulting
 * in that window is told to run the access again (-1), the entry stays as
 * the trap left it, and ept_restore_page can still give it back. Before,
 * the sink took the slot for good and the restore found 'not this page's'. */
TEST(ept_sink_never_takes_a_trap_page)
{
	struct built b;
	const struct memmap *m = main_map();
	build(&b, m, true, true, memmap_end(m));
	static uint8_t sink_page[4096] __attribute__((aligned(4096))), wsink_page[4096] __attribute__((aligned(4096)));
	paddr_t sink = (paddr_t)(uintptr_t)sink_page, wsink = (paddr_t)(uintptr_t)wsink_page;
	int mt, level;
	bool present;
	uint64_t pg = MIB(4) + 0x3000;                                /* RAM, in a 2M page */
	CHECK(ept_unmap_page(b.eptp, pg, &b.st));
	CHECK_EQ(ept_map_sink(b.eptp, pg + 0x10, sink, wsink, false), -1);
	CHECK_EQ(ept_map_sink(b.eptp, pg + 0x10, sink, wsink, true), -1);
	ept_walk(b.eptp, pg, &mt, &present, &level);
	CHECK(!present);
	CHECK(ept_restore_page(b.eptp, pg));
	uint64_t e = ept_walk(b.eptp, pg, &mt, &present, &level);
	CHECK(present);
	CHECK_EQ(e & 0x000ffffffffff000ull, pg);
	done(&b);
}

/* A GPA beyond the identity map (a BAR high above RAM) gets its GiB on the
 * first touch, identity and uncached (a hole in the memory map), once. */
TEST(ept_late_map_beyond_the_end)
{
	const struct memmap *m = main_map();
	for (int g1 = 0; g1 < 2; g1++) {
		struct built b;
		int mt, level;
		bool present;
		build(&b, m, g1, true, GIB(8));
		uint64_t gpa = GIB(600) + MIB(6) + 0x123, tables = b.st.tables;
		ept_walk(b.eptp, gpa, &mt, &present, &level);
		CHECK(!present);
		CHECK(ept_map_late(b.eptp, m, NULL, &b.caps, gpa, &b.st, 1000, 0));
		uint64_t e = ept_walk(b.eptp, gpa, &mt, &present, &level);
		CHECK(present);
		CHECK_EQ(mt, MT_UC);
		CHECK_EQ(level, g1 ? 3 : 2);
		uint64_t size = g1 ? GIB(1) : MIB(2);
		CHECK_EQ((e & ADDR_MASK & ~(size - 1)) | (gpa & (size - 1)), gpa);
		CHECK_EQ(e & RWX, RWX);
		CHECK_EQ(b.st.tables - tables, g1 ? 1 : 2);        /* a PDPT (512-1023 GiB), and a PD */
		ept_walk(b.eptp, GIB(601), &mt, &present, &level); /* the next GiB: not yet */
		CHECK(!present);
		CHECK(!ept_map_late(b.eptp, m, NULL, &b.caps, gpa + MIB(1), &b.st, 1000, 0));   /* once */
		CHECK(!ept_map_late(b.eptp, m, NULL, &b.caps, MIB(200), &b.st, 1000, 0));        /* the hypervisor's */
		done(&b);
	}
}

/* An MSI-X table page beyond the identity map (issue 35, item 1): taken
 * out of an unmapped GiB, it was out only until a touch elsewhere in that
 * GiB mapped the whole GiB, the table page with it (the guest then wrote
 * the device's table). The trap now maps the GiB first (ept_live_late)
 * and takes the page out of it; a later touch finds the GiB mapped. */
TEST(ept_late_gib_keeps_a_trapped_page_out)
{
	const struct memmap *m = main_map();
	struct built b;
	int mt, level;
	bool present, absent = true;
	uint64_t table = GIB(600) + 0x3000, other = GIB(600) + MIB(5);
	/* The hole, as it was: an unmap of nothing, then a touch. */
	build(&b, m, true, true, GIB(8));
	CHECK(ept_live_unmap(b.eptp, table, 0x1000, false));
	CHECK(ept_map_late(b.eptp, m, NULL, &b.caps, other, &b.st, 1000, 0));
	ept_walk(b.eptp, table, &mt, &present, &level);
	CHECK(present);                                   /* the table page reachable */
	done(&b);
	/* The GiB first, then the page out of it. */
	build(&b, m, true, true, GIB(8));
	CHECK(ept_live_late(b.eptp, m, NULL, &b.caps, table, &absent));
	CHECK(!absent);
	CHECK(ept_live_unmap(b.eptp, table, 0x1000, false));
	CHECK(!ept_live_late(b.eptp, m, NULL, &b.caps, other, &absent));   /* the touch: mapped already */
	CHECK(!absent);
	ept_walk(b.eptp, table, &mt, &present, &level);
	CHECK(!present);
	ept_walk(b.eptp, other, &mt, &present, &level);
	CHECK(present);
	CHECK_EQ(mt, MT_UC);
	ept_walk(b.eptp, table + 0x1000, &mt, &present, &level);
	CHECK(present);
	done(&b);
}

/* Past the table budget a GiB reads as absent memory: every page the sink. */
TEST(ept_late_map_budget_then_sink)
{
	const struct memmap *m = main_map();
	struct built b;
	int mt, level;
	bool present;
	static uint8_t sink_page[4096] __attribute__((aligned(4096)));
	paddr_t sink = (paddr_t)(uintptr_t)sink_page;
	build(&b, m, false, true, GIB(8));
	uint64_t sink_pd = ept_sink_gib(sink, &b.st);
	uint64_t budget = b.st.tables + 2;                   /* two more GiBs' PDs */
	for (int i = 0; i < 4; i++)
		CHECK(ept_map_late(b.eptp, m, NULL, &b.caps, GIB(20 + i) + 0x1000, &b.st, budget, sink_pd));
	CHECK_EQ(b.st.tables, budget);
	CHECK_EQ(b.st.sunk_1g, 2);
	uint64_t e = ept_walk(b.eptp, GIB(21) + 0x1000, &mt, &present, &level);
	CHECK(present && level == 2 && (e & ADDR_MASK) == GIB(21));     /* within the budget: identity */
	e = ept_walk(b.eptp, GIB(23) + 0x7000, &mt, &present, &level);
	CHECK(present);
	CHECK_EQ(level, 1);
	CHECK_EQ(e & ADDR_MASK, sink);                                   /* past it: the sink */
	CHECK_EQ(mt, MT_WB);
	done(&b);
}

/* An emulated MMIO page (the virtual IOAPIC's) leaves the map; the large
 * pages around it are split with their types, every other page unchanged. */
TEST(ept_unmap_page_splits_large_pages)
{
	for (int g1 = 0; g1 < 2; g1++) {
		struct built b;
		const struct memmap *m = main_map();
		build(&b, m, g1, true, memmap_end(m));
		int mt, level;
		bool present;
		uint64_t before = b.st.tables;
		CHECK(ept_unmap_page(b.eptp, 0xfec00000, &b.st));
		CHECK_EQ(b.st.tables, before + (g1 ? 2 : 1));
		ept_walk(b.eptp, 0xfec00123, &mt, &present, &level);
		CHECK(!present);
		CHECK_EQ(level, 1);
		uint64_t around[] = { 0xfebff000, 0xfec01000, 0xfec00000 + MIB(2), 0xc0000000, GIB(4) - PAGE_SIZE };
		for (unsigned k = 0; k < 5; k++) {
			uint64_t e = ept_walk(b.eptp, around[k], &mt, &present, &level);
			CHECK(present);
			CHECK_EQ(mt, MT_UC);
			CHECK_EQ(e & RWX, RWX);
			CHECK_EQ(e & ADDR_MASK & ~((level == 1 ? PAGE_SIZE : level == 2 ? MIB(2) : GIB(1)) - 1),
				 around[k] & ~((level == 1 ? PAGE_SIZE : level == 2 ? MIB(2) : GIB(1)) - 1));
		}
		CHECK(!ept_unmap_page(b.eptp, 0xfec00000, &b.st));          /* gone already */
		CHECK(!ept_unmap_page(b.eptp, MIB(200), &b.st));            /* hypervisor memory: never mapped */
		CHECK(ept_unmap_page(b.eptp, MIB(4) + 0x3000, &b.st));      /* RAM in a 2M page */
		uint64_t e = ept_walk(b.eptp, MIB(4) + 0x4000, &mt, &present, &level);
		CHECK(present);
		CHECK_EQ(mt, MT_WB);
		CHECK_EQ(e & ADDR_MASK, MIB(4) + 0x4000);
		done(&b);
	}
}

/* Issue 33, item 3: the trap's run-time unmaps take tables within a
 * budget (EPT_LIVE_MAX_TABLES) and never from a heap that cannot give
 * them: a guest moving a table across the MMIO hole a thousand times gets
 * refusals, counted, and no panic; a page given back is mapped again with
 * its type, and the sink still fills a page taken out. */
#include "../../vmx/ept_live.h"
TEST(ept_live_unmap_budget_and_restore)
{
	struct built b;
	const struct memmap *m = main_map();
	build(&b, m, true, true, memmap_end(m));
	uint64_t t0 = ept_live_tables(), r0 = ept_live_refused();
	uint32_t ok = 0, refused = 0;
	for (uint32_t k = 0; k < 1000; k++) {            /* a page in each 2 MiB of [3 GiB, 5 GiB): MMIO and beyond */
		uint64_t pg = GIB(3) + (uint64_t)k * MIB(2);
		if (pg >= GIB(4) - MIB(32))
			pg = GIB(3) + (uint64_t)(k % 64) * MIB(2) + PAGE_SIZE * (k / 64 + 1);   /* already split: free */
		if (ept_live_unmap(b.eptp, pg, 16, true))
			ok++;
		else
			refused++;
	}
	CHECK(ept_live_tables() - t0 <= EPT_LIVE_MAX_TABLES);
	CHECK(refused > 0);
	CHECK_EQ(ept_live_refused() - r0, refused);
	CHECK(ok >= EPT_LIVE_MAX_TABLES / 2);
	/* Taken out, given back: present again, uncached as before. */
	int mt, level;
	bool present;
	CHECK(ept_live_unmap(b.eptp, GIB(3), 16, true));
	ept_walk(b.eptp, GIB(3), &mt, &present, &level);
	CHECK(!present);
	ept_live_restore(b.eptp, GIB(3));
	uint64_t e = ept_walk(b.eptp, GIB(3), &mt, &present, &level);
	CHECK(present);
	CHECK_EQ(mt, MT_UC);
	CHECK_EQ(e & ADDR_MASK, GIB(3));
	/* A page taken out and not given back is its trap's: never the
	 * sink's (issue 43 item 9; this line asked the opposite before). */
	CHECK(ept_live_unmap(b.eptp, GIB(3) + PAGE_SIZE, 16, true));
	CHECK_EQ(ept_map_sink(b.eptp, GIB(3) + PAGE_SIZE, MIB(200), MIB(201), false), -1);
	done(&b);
}

/* ---- the iTLB-multihit erratum (issue 45 item 4; vmx/ept.h) ----
 * From the SDM: IA32_ARCH_CAPABILITIES is MSR 10AH, enumerated by
 * CPUID.(EAX=7,ECX=0):EDX[29]; its bit 6 is IF_PSCHANGE_MC_NO ("the
 * processor is not susceptible to a machine check error due to modifying
 * the size of a code page without TLB invalidation"). An EPT entry's bit 2
 * is execute access, bit 7 the page size in a PDPTE or PDE. Linux's KVM
 * (nx_huge_pages) keeps large pages non-executable where the CPU is
 * affected and maps a fetched page with 4 KiB pages. */
#include "../../lib/options.h"
#define X_BIT (1ull << 2)
#define PS_BIT (1ull << 7)
#define IF_PSCHANGE_MC_NO (1ull << 6)

TEST(ept_nx_huge_policy_from_arch_capabilities)
{
	CHECK(ept_nx_huge_wanted(NXHUGE_AUTO, true, false, 0));                  /* no MSR: affected */
	CHECK(ept_nx_huge_wanted(NXHUGE_AUTO, true, true, 0x1f));                /* the MSR, bit 6 clear */
	CHECK(!ept_nx_huge_wanted(NXHUGE_AUTO, true, true, 0x1f | IF_PSCHANGE_MC_NO));
	CHECK(!ept_nx_huge_wanted(NXHUGE_AUTO, false, false, 0));                /* not Intel */
	CHECK(ept_nx_huge_wanted(NXHUGE_ON, true, true, IF_PSCHANGE_MC_NO));     /* asked for */
	CHECK(!ept_nx_huge_wanted(NXHUGE_OFF, true, false, 0));                  /* asked against */
}

/* Every leaf of [0, end): a large one never executable, a 4 KiB one
 * executable, all readable and writable (hypervisor pages absent). */
static void check_nx_leaves(const struct built *b, int line)
{
	unsigned bad = 0;
	for (uint64_t gpa = 0; gpa < b->end && bad < 4; gpa += PAGE_SIZE) {
		int mt, lvl;
		bool present;
		uint64_t e = ept_walk(b->eptp, gpa, &mt, &present, &lvl);
		if (!present)
			continue;
		bool large = lvl > 1;
		if ((e & 3) != 3 || large != !!(e & PS_BIT) || (large ? (e & X_BIT) != 0 : (e & X_BIT) == 0)) {
			printf("    line %d: gpa 0x%llx level %d entry 0x%llx\n", line, (unsigned long long)gpa, lvl, (unsigned long long)e);
			bad++;
		}
		if (large)
			gpa = ALIGN_UP(gpa + 1, lvl == 2 ? MIB(2) : GIB(1)) - PAGE_SIZE;
	}
	CHECK_EQ(bad, 0);
}

TEST(ept_nx_huge_large_leaves_never_executable)
{
	for (int g1 = 0; g1 < 2; g1++) {
		struct built b;
		const struct memmap *m = main_map();
		ept_set_nx_huge(true);
		build(&b, m, g1, true, memmap_end(m));
		check_nx_leaves(&b, __LINE__);
		CHECK(b.st.pages_2m > 0);
		done(&b);
		ept_set_nx_huge(false);
	}
}

/* A fetch's split: the 2 MiB page (RAM at 4 MiB) and the 1 GiB one (RAM
 * at 4 GiB) become executable 4 KiB pages of the same addresses, type and
 * rights; the rest stays large and not executable; once only. */
TEST(ept_exec_split_makes_the_fetched_page_executable)
{
	struct built b;
	const struct memmap *m = main_map();
	ept_set_nx_huge(true);
	build(&b, m, true, true, memmap_end(m));
	struct { uint64_t gpa; unsigned tables; } c[] = { { MIB(4) + 0x123, 1 }, { GIB(4) + MIB(6) + 0x5000, 2 } };
	for (unsigned k = 0; k < 2; k++) {
		int mt, lvl;
		bool present;
		uint64_t t0 = b.st.tables;
		CHECK_EQ(ept_exec_split(b.eptp, c[k].gpa, &b.st), 1);
		CHECK_EQ(b.st.tables - t0, c[k].tables);
		uint64_t page = c[k].gpa & ~(uint64_t)(PAGE_SIZE - 1), region = c[k].gpa & ~(MIB(2) - 1);
		for (uint64_t g = region; g < region + MIB(2); g += PAGE_SIZE) {
			uint64_t e = ept_walk(b.eptp, g, &mt, &present, &lvl);
			if (!present || lvl != 1 || (e & 7) != 7 || (e & ADDR_MASK) != g || mt != MT_WB) {
				CHECK(!"a 4 KiB page of the split region: RWX, identity, WB");
				printf("    gpa 0x%llx entry 0x%llx level %d\n", (unsigned long long)g, (unsigned long long)e, lvl);
				break;
			}
		}
		uint64_t e = ept_walk(b.eptp, region + MIB(2), &mt, &present, &lvl);
		CHECK(present && lvl == 2 && !(e & X_BIT) && (e & 3) == 3);   /* the next 2 MiB: large, not executable */
		CHECK_EQ(ept_exec_split(b.eptp, page, &b.st), 0);              /* split already */
		CHECK_EQ(b.st.tables - t0, c[k].tables);
	}
	check_nx_leaves(&b, __LINE__);
	CHECK_EQ(ept_exec_split(b.eptp, MIB(200), &b.st), -1);                /* the hypervisor's: absent */
	/* A trap's page taken out of a large page: its neighbours executable. */
	CHECK(ept_unmap_page(b.eptp, MIB(10) + 0x3000, &b.st));
	int mt, lvl;
	bool present;
	uint64_t e = ept_walk(b.eptp, MIB(10) + 0x4000, &mt, &present, &lvl);
	CHECK(present && lvl == 1 && (e & 7) == 7);
	CHECK_EQ(ept_exec_split(b.eptp, MIB(10) + 0x3000, &b.st), -1);        /* taken out: not a fetch's to mend */
	done(&b);
	ept_set_nx_huge(false);
	/* nx_huge off: large pages executable, nothing to split. */
	build(&b, m, true, true, memmap_end(m));
	uint64_t t0 = b.st.tables;
	CHECK_EQ(ept_exec_split(b.eptp, MIB(4), &b.st), 0);
	CHECK_EQ(b.st.tables, t0);
	done(&b);
}

/* With the heap short (EPT_NX_RESERVE would not be left) the fetched large
 * page is made executable as it is, counted; with room it is split. */
TEST(ept_live_exec_falls_back_when_the_heap_is_short)
{
	struct built b;
	const struct memmap *m = main_map();
	ept_set_nx_huge(true);
	build(&b, m, true, true, memmap_end(m));
	struct ept_nx_stats s0 = ept_live_nx_stats();
	CHECK_EQ(ept_live_exec(b.eptp, MIB(12)), 1);
	CHECK_EQ(ept_live_nx_stats().split_2m - s0.split_2m, 1);
	CHECK_EQ(ept_live_exec(b.eptp, MIB(12) + 0x1000), 0);
	CHECK_EQ(ept_live_nx_stats().again - s0.again, 1);
	while (page_alloc_free() >= EPT_NX_RESERVE + PAGE_SIZE)
		page_alloc(1);
	CHECK_EQ(ept_live_exec(b.eptp, MIB(14)), 1);
	CHECK_EQ(ept_live_nx_stats().allowed_large - s0.allowed_large, 1);
	int mt, lvl;
	bool present;
	uint64_t e = ept_walk(b.eptp, MIB(14), &mt, &present, &lvl);
	CHECK(present && lvl == 2 && (e & X_BIT));
	CHECK_EQ(ept_live_exec(b.eptp, MIB(14)), 0);                          /* executable now */
	done(&b);
	ept_set_nx_huge(false);
}
