/* Issue 43: more lines a mutation check found unguarded, each with a test
 * that fails when its line is changed:
 *  - lib/paging.c: an MMIO range that straddles the identity map's end is
 *    mapped above it (SDM Vol. 3A, "4-Level Paging": PML4 47:39, PDPT
 *    38:30, PD 29:21, PT 20:12; a 1 GiB page PS bit 7; a 4 KiB PTE P, R/W,
 *    PWT bit 3, PCD bit 4), not reported mapped for its first byte's sake;
 *  - lib/tsc_ref.c: a window's ceiling counts its slack (the TSC ticks it
 *    may have lasted: ticks + slack over the reference's counts);
 *  - lib/tsc_sync.c: a package's skew is its tightest measurement, and the
 *    boot CPU's package is never made up for;
 *  - iommu/vtd.c: the fault recording registers read (VT-d, "Fault Status
 *    Register": PFO bit 0, PPF bit 1, FRI 15:8; "Fault Recording
 *    Registers": 128 bits, F 127, T 126 (1: read), FR 103:96, SID 79:64,
 *    FI 63:12), through the register model (vtd_regs_model.h). */
#include "test.h"
#include "cpu_fake.h"
#include "vtd_regs_model.h"
#include "../../lib/paging.h"
#include "../../lib/memmap.h"
#include "../../lib/tsc_ref.h"
#include "../../lib/tsc_sync.h"
#include "../../iommu/vtd.h"

/* ---- lib/paging.c ---- */

#define ADDR 0x000ffffffffff000ull
static uint64_t *at(uint64_t e) { return (uint64_t *)(uintptr_t)(e & ADDR); }
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

TEST(mutant_wall_paging_mmio_straddling_the_identity_end_mapped)
{
	static uint8_t *heap;
	if (!heap)
		heap = aligned_alloc(4096, 64 * 4096);
	page_alloc_init((uintptr_t)heap, 64 * 4096);
	cpu_fake_cpuid(0x80000000, 0, 0x80000008, 0, 0, 0);
	cpu_fake_cpuid(0x80000001, 0, 0, 0, 0, 1u << 26);           /* 1 GiB pages */
	cpu_fake_cpuid(0x80000008, 0, 0x3027, 0, 0, 0);             /* MAXPHYADDR 39 */
	uint64_t end = 4ull << 30;
	uint64_t *pml4 = (uint64_t *)(uintptr_t)paging_build_identity(end);
	CHECK_EQ(paging_identity_end, end);
	CHECK_EQ(leaf(pml4, end), 0);
	/* A table's last page inside, the next one above: both reached. */
	CHECK(paging_map_mmio(end - 0x1000, 0x2000));
	CHECK_EQ(leaf(pml4, end), end | 0x1b);
	CHECK_EQ(leaf(pml4, end - 0x1000) & 0x81, 0x81);          /* the identity's 1 GiB page as it was */
	/* 16 bytes either side of the end. */
	CHECK_EQ(leaf(pml4, end + 0x1000), 0);
	CHECK(paging_map_mmio(end + 0x1000 - 0x10, 0x20));
	CHECK_EQ(leaf(pml4, end + 0x1000), (end + 0x1000) | 0x1b);
	page_alloc_init(0, 0);
}

/* ---- lib/tsc_ref.c ---- */

TEST(mutant_wall_tsc_ref_ceiling_counts_the_window_slack)
{
	struct tsc_ref_meas m = { .kind = TSC_REF_PMTMR, .hz = 3579545, .bits = 24 };
	/* 10 ms of the PM timer (35795 counts) in 30,000,000 ticks known to
	 * +-20,000: the TSC ran at most 30,020,000 ticks in that time. */
	struct tsc_ref_window w = { 30000000, 20000, 35795 };
	uint64_t lo = 30000000ull * 3579545 / (35795ull * 1000);
	uint64_t hi = (30020000ull * 3579545 + 35795ull * 1000 - 1) / (35795ull * 1000);
	CHECK_EQ(tsc_ref_khz(&m, &w), lo);
	CHECK_EQ(tsc_ref_khz_max(&m, &w), hi);
	CHECK(hi - lo >= 1990);                                     /* 20,000 ticks in 10 ms: ~2 MHz */
	/* No slack: the ceiling is the rate rounded up. */
	struct tsc_ref_window e = { 30000000, 0, 35795 };
	CHECK_EQ(tsc_ref_khz_max(&m, &e), (30000000ull * 3579545 + 35795ull * 1000 - 1) / (35795ull * 1000));
}

/* ---- lib/tsc_sync.c ---- */

TEST(mutant_wall_tsc_sync_tightest_skew_kept_boot_package_left)
{
	static struct tsc_pkgs t;
	tsc_pkgs_init(&t, 0, 0);
	tsc_pkgs_adjust(&t, 0, 0);
	tsc_pkgs_adjust(&t, 1, 0);
	/* Package 1 measured three times: the first loose, the second the
	 * tightest; package 0 (the boot CPU's) once, its offset beyond its
	 * bound. */
	const struct tsc_cpu_skew s[] = {
		{ 1, true, 9000, 5000 },
		{ 1, true, 3000, 100 },
		{ 1, true, 2500, 800 },
		{ 0, true, 700, 50 },
		{ 1, false, 1, 1 },
	};
	CHECK_EQ(tsc_pkgs_compensate(&t, 0, s, 5), 1);
	const struct tsc_pkg *p = tsc_pkgs_find(&t, 1);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->measured, 3);
		CHECK_EQ(p->offset, 3000);
		CHECK_EQ(p->bound, 100);
	}
	CHECK_EQ(tsc_pkgs_comp(&t, 1), (uint64_t)-3000ll);
	CHECK_EQ(tsc_pkgs_comp(&t, 0), 0);
	/* The first measurement the tightest: kept against a looser later. */
	const struct tsc_cpu_skew u[] = { { 1, true, 4000, 10 }, { 1, true, 100, 3000 } };
	CHECK_EQ(tsc_pkgs_compensate(&t, 0, u, 2), 1);
	CHECK_EQ(tsc_pkgs_comp(&t, 1), (uint64_t)-4000ll);
}

/* ---- iommu/vtd.c: the fault records ---- */

TEST(mutant_wall_vtd_fault_records_read_and_cleared)
{
	static struct vtd_regs_model m;
	/* CAP: FRO 0x20 (x 16: 0x200), NFR 3 (4 records), SAGAW 4-level, MGAW
	 * 48; ECAP: IRO 0x50 (x 16: the IOTLB registers at 0x500). */
	vrm_reset(&m, (0x20ull << 24) | (3ull << 40) | (4ull << 8) | (47ull << 16), 0x50ull << 8, false, false, false, false, 0);
	vrm_attach(&m);
	struct vtd_unit u;
	memset(&u, 0, sizeof u);
	char err[256] = "";
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_EQ(u.nfr, 4);
	if (u.nfr != 4) {                                         /* no unit probed: nothing to read (nfr 0 divides) */
		fprintf(stderr, "probe: %s cap 0x%llx nfr %u\n", err, (unsigned long long)u.cap, u.nfr);
		vrm_attach(NULL);
		return;
	}
	/* Record 3: a read by 02:03.0 of 0x12345678abc, reason 06h; record 0
	 * (after the wrap): a write by 01:00.0 of 0xdead000, reason 05h; record
	 * 1 with F clear (an old one); FSTS: PPF, FRI 3, and PFO. */
	m.frcd[3][0] = 0x12345678abcull;
	m.frcd[3][1] = 1ull << 63 | 1ull << 62 | 0x06ull << 32 | 0x0218;
	m.frcd[0][0] = 0xdead000ull;
	m.frcd[0][1] = 1ull << 63 | 0x05ull << 32 | 0x0100;
	m.frcd[1][0] = 0x5000;
	m.frcd[1][1] = 0x07ull << 32 | 0x0300;
	m.fsts = 3u << 8 | 1u << 1 | 1u << 0;
	struct vtd_fault f[4];
	memset(f, 0, sizeof f);
	bool over = false;
	CHECK_EQ(vtd_read_faults(&u, f, 4, &over), 2);
	CHECK(over);
	CHECK_EQ(f[0].sid, 0x0218);
	CHECK_EQ(f[0].reason, 0x06);
	CHECK(f[0].read);
	CHECK_EQ(f[0].addr, 0x12345678000ull);
	CHECK_EQ(f[1].sid, 0x0100);
	CHECK_EQ(f[1].reason, 0x05);
	CHECK(!f[1].read);
	CHECK_EQ(f[1].addr, 0xdead000ull);
	CHECK_EQ(m.frcd[3][1] >> 63, 0);                            /* F written 1: cleared */
	CHECK_EQ(m.frcd[0][1] >> 63, 0);
	CHECK_EQ(m.frcd[1][1], 0x07ull << 32 | 0x0300);             /* the old one untouched */
	CHECK_EQ(m.fsts & 1, 0);                                    /* PFO written 1: cleared */
	/* Read again: nothing left. */
	m.fsts &= ~(1u << 1);
	CHECK_EQ(vtd_read_faults(&u, f, 4, &over), 0);
	CHECK(!over);
	CHECK_STR(m.violation, "");
	vrm_attach(NULL);
}
