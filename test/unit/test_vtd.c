/* Host tests for iommu/tables.c: the VT-d tables the hypervisor gives every
 * device, walked by a model of the remapping unit written from the VT-d
 * specification's formats (vtd_model.c). Every page of the map is
 * translated for a read and a write and compared with what the memory map
 * says the guest owns; the hypervisor's pages must fault. */
#include "test.h"
#include "vtd_model.h"
#include "../../iommu/tables.h"

#define HEAP_SIZE MIB(8)

/* usable [0,0x9f000), reserved to 1M, usable [1M,1G), ACPI and NVS pages,
 * boot data, bad RAM, the hypervisor [2M,2M+128K) and [200M,248M), a
 * reserved page in the hole at 0xfec00000, usable [4G,4G+64M) with a
 * hypervisor page at 4G+1M. */
static struct memmap *map(void)
{
	static struct memmap m;
	memset(&m, 0, sizeof m);
	memmap_add(&m, 0, 0x9f000, MEM_USABLE);
	memmap_add(&m, 0x9f000, 0x100000 - 0x9f000, MEM_RESERVED);
	memmap_add(&m, MIB(1), MIB(1023), MEM_USABLE);
	memmap_add(&m, MIB(512), KIB(16), MEM_ACPI);
	memmap_add(&m, MIB(600), KIB(8), MEM_NVS);
	memmap_add(&m, MIB(8), KIB(20), MEM_BOOT);
	memmap_add(&m, MIB(700), KIB(4), MEM_BAD);
	memmap_add(&m, 0xfec00000, PAGE_SIZE, MEM_RESERVED);
	memmap_add(&m, GIB(4), MIB(64), MEM_USABLE);
	memmap_normalize(&m);
	memmap_claim(&m, MIB(2), 0x20000);
	memmap_claim(&m, MIB(200), MIB(48));
	memmap_claim(&m, GIB(4) + MIB(1), PAGE_SIZE);
	return &m;
}

/* RMRRs: one in the hole (a USB controller's buffer, say), one that
 * overlaps the hypervisor's heap (whose pages must stay out). */
static const struct dmar_rmrr rmrrs[] = {
	{ .base = 0xfe000000, .limit = 0xfe003fff },
	{ .base = MIB(247), .limit = MIB(249) - 1 },
};

/* What the guest may reach: its e820 types and the RMRRs, never MEM_HV. */
static bool want_mapped(const struct memmap *m, uint64_t pa)
{
	uint32_t t = memmap_type_at(m, pa);
	if (t == MEM_HV)
		return false;
	if (t == MEM_USABLE || t == MEM_RESERVED || t == MEM_ACPI || t == MEM_NVS || t == MEM_BOOT)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(rmrrs); i++)
		if (pa >= rmrrs[i].base && pa <= rmrrs[i].limit)
			return true;
	return false;
}

static void check_build(int levels, bool lp2m, bool lp1g)
{
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	const struct memmap *m = map();
	struct vtd_map_stats st = { 0 };
	char err[160] = "";
	paddr_t sl = vtd_sl_build(m, rmrrs, ARRAY_SIZE(rmrrs), levels, lp2m, lp1g, &st, err, sizeof err);
	CHECK(sl != 0);
	paddr_t root = vtd_root_build(sl, levels, VTD_DOMAIN_ID, &st);
	CHECK_EQ(page_alloc_used(), st.tables * PAGE_SIZE);
	struct vtd_model u = { .rtaddr = root, .sagaw = 1u << (levels - 2), .mgaw = 12 + 9 * levels, .haw = 48,
			       .lp_2m = lp2m, .lp_1g = lp1g };
	static const uint16_t sids[] = { 0x0000, 0x0010, 0x00fa, 0x1f07, 0xffff };
	uint64_t mapped = 0, bad = 0;
	uint64_t ranges[][2] = { { 0, GIB(1) + MIB(4) }, { 0xfe000000, 0xfee00000 }, { GIB(4), GIB(4) + MIB(66) } };
	for (size_t r = 0; r < ARRAY_SIZE(ranges); r++)
		for (uint64_t pa = ranges[r][0]; pa < ranges[r][1]; pa += PAGE_SIZE) {
			bool want = want_mapped(m, pa);
			uint16_t sid = sids[(pa >> 12) % ARRAY_SIZE(sids)];
			uint64_t hpa = 0;
			int fr = vtd_model_translate(&u, sid, pa + 0x123, false, &hpa);
			int fw = vtd_model_translate(&u, sid, pa + 0x456, true, &hpa);
			if (want ? (fr || fw || hpa != pa + 0x456) : (fr != 6 || fw != 5)) {
				if (bad++ < 5) {
					char msg[160];
					snprintf(msg, sizeof msg, "%d-level lp2m=%d lp1g=%d: page 0x%llx want %s, read fault %d write fault %d",
						 levels, lp2m, lp1g, (unsigned long long)pa, want ? "mapped" : "blocked", fr, fw);
					test_fail(__FILE__, __LINE__, msg);
				}
			}
			mapped += want;
		}
	CHECK_EQ(bad, 0);
	CHECK(mapped > 0);
	/* The hypervisor's pages, at every source ID. */
	uint64_t hpa;
	CHECK_EQ(vtd_model_translate(&u, 0x0010, MIB(2), false, &hpa), 6);
	CHECK_EQ(vtd_model_translate(&u, 0xffff, MIB(248) - PAGE_SIZE, true, &hpa), 5);
	CHECK_EQ(vtd_model_translate(&u, 0x0008, GIB(4) + MIB(1), true, &hpa), 5);
	/* The RMRR's pages in the hole; the one over the heap stays out there. */
	CHECK_EQ(vtd_model_translate(&u, 0x00fa, 0xfe002000, true, &hpa), 0);
	CHECK_EQ(vtd_model_translate(&u, 0x00fa, MIB(248), true, &hpa), 0);        /* heap ends at 248M */
	CHECK_EQ(vtd_model_translate(&u, 0x00fa, MIB(247), true, &hpa), 5);        /* in the heap */
	CHECK_EQ(st.rmrr_hv_conflicts, 1);
	/* Every one of the 2^16 source IDs reaches the one domain alike: a
	 * device's DMA under a bridge's ID (a PCIe-to-PCI bridge's secondary
	 * bus with 00.0, a PCI-X originator's, a conventional bridge's own) or
	 * under another function of its bus (Linux's DMA-alias quirks) is
	 * translated as the device's own (issue 35 item 5). */
	uint64_t ids_bad = 0;
	for (uint32_t id = 0; id <= 0xffff; id++) {
		uint64_t h = 0;
		ids_bad += vtd_model_translate(&u, (uint16_t)id, MIB(1) + 0x10, true, &h) != 0 || h != MIB(1) + 0x10;
	}
	CHECK_EQ(ids_bad, 0);
	/* Above the memory: not mapped; beyond the address width: reason 4. */
	CHECK_EQ(vtd_model_translate(&u, 0x0010, GIB(6), true, &hpa), 5);
	CHECK_EQ(vtd_model_translate(&u, 0x0010, 1ull << (12 + 9 * levels), true, &hpa), 4);
	/* Large pages only where the capability allows them. */
	if (!lp2m)
		CHECK_EQ(st.pages_2m, 0);
	else
		CHECK(st.pages_2m > 0);
	if (!lp1g)
		CHECK_EQ(st.pages_1g, 0);
	CHECK(st.hv_pages_out >= 1);
	CHECK_EQ(st.end, GIB(4) + MIB(64));
	page_alloc_init(0, 0);
	free(heap);
}

TEST(vtd_tables_4level_large_pages) { check_build(4, true, true); }
TEST(vtd_tables_4level_4k_only) { check_build(4, false, false); }
TEST(vtd_tables_3level_2m) { check_build(3, true, false); }
TEST(vtd_tables_5level) { check_build(5, true, true); }

/* The context entries: every bus and device function present, domain 1, the
 * address width of the tables; the model refuses a width SAGAW lacks. */
TEST(vtd_context_width_and_domain)
{
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	struct vtd_map_stats st = { 0 };
	char err[160];
	paddr_t sl = vtd_sl_build(map(), NULL, 0, 3, true, false, &st, err, sizeof err);
	paddr_t root = vtd_root_build(sl, 3, VTD_DOMAIN_ID, &st);
	const uint64_t *re = (const uint64_t *)(uintptr_t)root;
	const uint64_t *ce = (const uint64_t *)(uintptr_t)(re[2 * 0x42] & ~0xfffull);
	CHECK_EQ(ce[2 * 0x18 + 1] & 7, 1);                  /* AW 1: 39-bit, 3-level */
	CHECK_EQ((ce[2 * 0x18 + 1] >> 8) & 0xffff, 1);      /* domain 1 */
	CHECK_EQ(ce[2 * 0x18] & 0xf, 1);                    /* present, FPD 0, TT 00b */
	struct vtd_model u = { .rtaddr = root, .sagaw = 1u << 2, .mgaw = 48, .haw = 48, .lp_2m = true };
	uint64_t hpa;
	CHECK_EQ(vtd_model_translate(&u, 0x4218, MIB(16), false, &hpa), 3);   /* SAGAW without 39-bit */
	u.sagaw = 1u << 1;
	CHECK_EQ(vtd_model_translate(&u, 0x4218, MIB(16), false, &hpa), 0);
	CHECK_EQ(hpa, MIB(16));
	page_alloc_init(0, 0);
	free(heap);
}

/* Memory above what the layout reaches is refused by name. */
TEST(vtd_tables_too_high)
{
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	static struct memmap m;
	memset(&m, 0, sizeof m);
	memmap_add(&m, 0, MIB(64), MEM_USABLE);
	memmap_add(&m, GIB(600), GIB(1), MEM_USABLE);
	memmap_normalize(&m);
	struct vtd_map_stats st = { 0 };
	char err[160] = "";
	CHECK_EQ(vtd_sl_build(&m, NULL, 0, 3, true, true, &st, err, sizeof err), 0);
	CHECK_CONTAINS(err, "3-level tables reach 0x8000000000");
	page_alloc_init(0, 0);
	free(heap);
}

/* The layout from the capability register (SAGAW, MGAW). */
TEST(vtd_levels_from_cap)
{
	uint64_t sagaw39 = 2ull << 8, sagaw48 = 4ull << 8, mgaw39 = 38ull << 16, mgaw48 = 47ull << 16;
	CHECK_EQ(vtd_levels(sagaw39 | mgaw39, GIB(4)), 3);                 /* QEMU aw-bits=39 */
	CHECK_EQ(vtd_levels(sagaw39 | sagaw48 | mgaw48, GIB(4)), 4);       /* QEMU aw-bits=48 */
	CHECK_EQ(vtd_levels(sagaw48 | mgaw39, GIB(4)), 4);                 /* 4-level only, MGAW 39 */
	CHECK_EQ(vtd_levels(sagaw39 | mgaw39, GIB(600)), 0);               /* memory beyond 39 bits */
	CHECK_EQ(vtd_levels(mgaw48, GIB(4)), 0);                           /* no layout offered */
}

/* A unit offering 4- and 5-level tables (SAGAW bits 2 and 3: 48- and
 * 57-bit AGAW; VT-d specification, "Capability Register") with MGAW field
 * 47 (48 bits: the field is N - 1) runs 4-level tables, the layout that
 * matches its width; with MGAW 57 (field 56), 5-level ones. */
TEST(vtd_levels_sagaw_4_and_5_follow_mgaw)
{
	uint64_t sagaw48 = 4ull << 8, sagaw57 = 8ull << 8, mgaw48 = 47ull << 16, mgaw57 = 56ull << 16;
	CHECK_EQ(vtd_levels(sagaw48 | sagaw57 | mgaw48, GIB(4)), 4);
	CHECK_EQ(vtd_levels(sagaw48 | sagaw57 | mgaw57, GIB(4)), 5);
}
