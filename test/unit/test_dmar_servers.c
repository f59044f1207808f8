/* The DMAR parser on tables shaped like real multi-socket Xeon servers
 * (issue 26): one DRHD per IIO stack, the last DRHD of each PCI segment
 * with INCLUDE_PCI_ALL (holding the PCH's IOAPIC and HPET on segment 0),
 * RMRRs for the USB controller and a BMC device behind a root port, an
 * ATSR per socket naming its root ports, an RHSA per unit, and on Granite
 * Rapids an SATC per socket naming its accelerators.
 *
 * Where the shapes come from: the unit-per-IIO-stack layout and the size of
 * a two-socket Sapphire Rapids board's DMAR from the Intel M50FCP's
 * acpidump quoted in a public issue (`DMAR 0x518`, dmar0..dmarN, one per
 * stack); Emerald Rapids runs on the same platform (Eagle Stream) and has
 * the same shape. The counts per socket are this file's assumptions, not
 * copied from one dump: 6 or 8 stacks a socket (SPR: up to 6 PCIe/CXL
 * stacks plus the accelerator stack), root ports per stack from the x16
 * port's bifurcation (x4x4x4x4 on SPR, down to x2 on GNR: 8 ports), and
 * accelerator endpoints per socket (SPR/GNR: up to 4 each of DSA, IAA,
 * QAT and DLB: 16). A four-socket board with more stacks than 256 buses
 * hold uses two segments, each with its own INCLUDE_PCI_ALL unit. */
#include "test.h"
#include "fixture.h"
#include "vtd_regs_model.h"
#include "../../lib/dmar.h"
#include "../../lib/acpi.h"
#include "../../lib/memmap.h"
#include "../../lib/options.h"
#include "../../iommu/iommu.h"
#include "../../iommu/vtd_defs.h"

/* VT-d specification, "BIOS Considerations": structure and scope layouts. */
#define HDR_LEN        48
#define HDR_HAW        36
#define HDR_FLAGS      37
#define DRHD_FIXED     16
#define RMRR_FIXED     24
#define ATSR_FIXED     8
#define RHSA_LEN       20
#define SATC_FIXED     8
#define SATC_TYPE      5               /* SoC Integrated Address Translation Cache */
#define SATC_ATC_REQUIRED 0x1
#define SCOPE_LEN(np)  (6 + 2 * (np))
#define HAW_46         45              /* the field is width - 1: SPR/GNR report 46 bits */
#define PCH_IOAPIC_ID  8
#define PCH_IOAPIC_BUS 0xf0            /* the bus firmware gives the PCH's IOAPIC and HPET */
#define PCH_DEV        0x1f
#define XHCI_DEV       0x14
#define BUSES_PER_STACK 16
#define STACK_BASE(i)  (0x90000000ull + (uint64_t)(i) * 0x800000 + 0x7fc000)

#define TAB_MAX (32 * 1024)
static uint8_t tab[TAB_MAX];
static uint32_t tlen;

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static uint8_t *st_begin(uint16_t type)
{
	uint8_t *s = tab + tlen;
	put16(s, type);
	tlen += 4;
	return s;
}
static void st_end(uint8_t *s) { put16(s + 2, (uint16_t)(tab + tlen - s)); }

/* A device scope at the end of the open structure. */
static void sc(uint8_t type, uint8_t id, uint8_t bus, int np, const uint8_t *path)
{
	uint8_t *p = tab + tlen;
	memset(p, 0, SCOPE_LEN(np));
	p[0] = type;
	p[1] = (uint8_t)SCOPE_LEN(np);
	p[4] = id;
	p[5] = bus;
	memcpy(p + 6, path, 2 * np);
	tlen += SCOPE_LEN(np);
}

struct shape {
	const char *name;
	int sockets, stacks, ports, accels, segments;
	bool satc;
};

/* The stack's first bus within its segment, and its segment. */
static int stacks_per_seg(const struct shape *sh) { return sh->sockets * sh->stacks / sh->segments; }
static uint8_t stack_bus(const struct shape *sh, int k) { return (uint8_t)((k % stacks_per_seg(sh)) * BUSES_PER_STACK); }
static uint16_t stack_seg(const struct shape *sh, int k) { return (uint16_t)(k / stacks_per_seg(sh)); }
/* Stack 0 of a segment's first socket: the legacy stack, INCLUDE_PCI_ALL. */
static bool legacy(const struct shape *sh, int k) { return k % stacks_per_seg(sh) == 0; }
static bool accel_stack(const struct shape *sh, int k) { return k % sh->stacks == sh->stacks - 1; }

static void root_ports(const struct shape *sh, int k)
{
	for (int p = 0; p < sh->ports; p++) {
		uint8_t path[2] = { (uint8_t)(1 + p), 0 };
		sc(DMAR_SCOPE_BRIDGE, 0, stack_bus(sh, k), 1, path);
	}
}

static void accels(const struct shape *sh, int k)
{
	for (int a = 0; a < sh->accels; a++) {
		uint8_t path[2] = { (uint8_t)(1 + a), 0 };
		sc(DMAR_SCOPE_ENDPOINT, 0, stack_bus(sh, k), 1, path);
	}
}

/* The header's length and checksum (ACPI: all bytes sum to 0) for the
 * table as it stands. */
static void seal(void)
{
	put32(tab + 4, tlen);
	tab[9] = 0;
	uint8_t sum = 0;
	for (uint32_t i = 0; i < tlen; i++)
		sum = (uint8_t)(sum + tab[i]);
	tab[9] = (uint8_t)-sum;
}

static void build(const struct shape *sh)
{
	int nstacks = sh->sockets * sh->stacks;
	memset(tab, 0, sizeof tab);
	memcpy(tab, "DMAR", 4);
	tab[8] = 1;
	memcpy(tab + 10, "HVTEST", 6);
	tab[HDR_HAW] = HAW_46;
	tab[HDR_FLAGS] = DMAR_F_INTR_REMAP | DMAR_F_X2APIC_OPT_OUT;
	tlen = HDR_LEN;
	/* DRHDs by segment, the legacy stack's last in each. */
	for (int seg = 0; seg < sh->segments; seg++)
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < nstacks; k++) {
				if (stack_seg(sh, k) != seg || legacy(sh, k) != (pass == 1))
					continue;
				uint8_t *s = st_begin(DMAR_DRHD);
				s[4] = legacy(sh, k) ? DMAR_DRHD_INCLUDE_PCI_ALL : 0;
				put16(s + 6, (uint16_t)seg);
				put64(s + 8, STACK_BASE(k));
				tlen = (uint32_t)(s - tab) + DRHD_FIXED;
				if (legacy(sh, k) && seg == 0) {
					uint8_t pch[2] = { PCH_DEV, 0 };
					sc(DMAR_SCOPE_IOAPIC, PCH_IOAPIC_ID, PCH_IOAPIC_BUS, 1, pch);
					sc(DMAR_SCOPE_HPET, 0, PCH_IOAPIC_BUS, 1, pch);
				} else if (!legacy(sh, k)) {
					if (accel_stack(sh, k))
						accels(sh, k);
					else
						root_ports(sh, k);
				}
				st_end(s);
			}
	/* RMRRs: the PCH's xHCI, and a BMC's USB device behind socket 0's stack 1 root port 1. */
	uint8_t *r = st_begin(DMAR_RMRR);
	tlen = (uint32_t)(r - tab) + RMRR_FIXED;
	put64(r + 8, 0x6f000000);
	put64(r + 16, 0x6f01ffff);
	uint8_t xhci[2] = { XHCI_DEV, 0 };
	sc(DMAR_SCOPE_ENDPOINT, 0, 0, 1, xhci);
	st_end(r);
	r = st_begin(DMAR_RMRR);
	tlen = (uint32_t)(r - tab) + RMRR_FIXED;
	put64(r + 8, 0x6f100000);
	put64(r + 16, 0x6f1fffff);
	uint8_t bmc[4] = { 1, 0, 0, 0 };
	sc(DMAR_SCOPE_ENDPOINT, 0, stack_bus(sh, 1), 2, bmc);
	st_end(r);
	/* An ATSR per socket: its root ports. */
	for (int sock = 0; sock < sh->sockets; sock++) {
		uint8_t *a = st_begin(DMAR_ATSR);
		put16(a + 6, stack_seg(sh, sock * sh->stacks));
		tlen = (uint32_t)(a - tab) + ATSR_FIXED;
		for (int k = sock * sh->stacks; k < (sock + 1) * sh->stacks; k++)
			if (!legacy(sh, k) && !accel_stack(sh, k))
				root_ports(sh, k);
		st_end(a);
	}
	/* An RHSA per unit: the socket is the proximity domain. */
	for (int k = 0; k < nstacks; k++) {
		uint8_t *h = st_begin(DMAR_RHSA);
		tlen = (uint32_t)(h - tab) + RHSA_LEN;
		put64(h + 8, STACK_BASE(k));
		put32(h + 16, (uint32_t)(k / sh->stacks));
		st_end(h);
	}
	/* Granite Rapids: an SATC per socket naming its accelerators. */
	for (int sock = 0; sh->satc && sock < sh->sockets; sock++) {
		int k = (sock + 1) * sh->stacks - 1;
		uint8_t *a = st_begin(SATC_TYPE);
		a[4] = SATC_ATC_REQUIRED;
		put16(a + 6, stack_seg(sh, k));
		tlen = (uint32_t)(a - tab) + SATC_FIXED;
		accels(sh, k);
		st_end(a);
	}
	seal();
}

/* Two sockets, 6 stacks each (5 PCIe stacks with 4 root ports, the
 * accelerator stack): 12 units, one segment. */
static const struct shape spr_2s = { "SPR 2S (M50FCP-like)", 2, 6, 4, 8, 1, false };
/* Two sockets, 8 stacks, x2 bifurcation (8 ports), SATC: 16 units. */
static const struct shape gnr_2s = { "GNR 2S", 2, 8, 8, 16, 1, true };
/* Four sockets, 8 stacks: 32 units, two segments, >= 512 scopes. */
static const struct shape gnr_4s = { "GNR 4S", 4, 8, 8, 16, 2, true };

static struct dmar_info info;
static struct dmar_counts counts;
static char err[256];
static void *room;

/* The hypervisor's two passes: count, room from the heap, parse. */
static int parse_tab(void)
{
	if (dmar_count(tab, tlen, &counts, err, sizeof err))
		return -1;
	free(room);
	room = malloc(dmar_bytes(&counts) + 1);
	dmar_place(&info, &counts, room);
	return dmar_parse(tab, tlen, &info, err, sizeof err);
}

static struct dmar_scope dev_at(uint8_t bus, int np, const uint8_t *path)
{
	struct dmar_scope d = { .type = DMAR_SCOPE_ENDPOINT, .bus = bus, .npath = (uint8_t)np };
	memcpy(d.path, path, 2 * np);
	return d;
}

/* Every scope the table names is under a unit; so is a device behind a
 * root port, and one no scope names on a stack's bus (INCLUDE_PCI_ALL). */
static void check_shape(const struct shape *sh, const char *file, uint32_t want_units, uint32_t min_scopes)
{
	build(sh);
	/* HV_DMAR_CORPUS=test/fuzz/corpus/dmar writes the table there, for the fuzzer. */
	fixture_write_corpus("HV_DMAR_CORPUS", file, tab, tlen);
	int r = parse_tab();
	if (r)
		printf("    %s: %s\n", sh->name, err);
	CHECK_EQ(r, 0);
	printf("    %s: %u bytes, %u DRHD, %u RMRR, %u ATSR, %u RHSA, %u SATC, %u scopes\n", sh->name, tlen, info.ndrhd,
	       info.nrmrr, info.natsr, info.nrhsa, info.nsatc, info.nscopes);
	CHECK_EQ(info.ndrhd, want_units);
	CHECK(info.nscopes >= min_scopes);
	CHECK_EQ(info.nrhsa, info.ndrhd);
	CHECK_EQ(info.natsr, (uint32_t)sh->sockets);
	CHECK_EQ(info.nsatc, sh->satc ? (uint32_t)sh->sockets : 0);
	CHECK_EQ(info.nrmrr, 2);
	CHECK_EQ(counts.nscopes, info.nscopes);
	uint32_t all = 0;
	for (uint32_t i = 0; i < info.ndrhd; i++) {
		all += !!(info.drhd[i].flags & DMAR_DRHD_INCLUDE_PCI_ALL);
		for (uint32_t k = info.drhd[i].first; k < info.drhd[i].first + info.drhd[i].n; k++)
			CHECK_EQ(dmar_unit_of(&info, info.drhd[i].segment, &info.scope[k]), i);
	}
	CHECK_EQ(all, (uint32_t)sh->segments);
	test_log_clear();
	CHECK_EQ(dmar_check_coverage(&info), 0);
	CHECK(!strstr(test_log(), "no remapping unit covers"));
	/* Behind root port 3 of every PCIe stack: that stack's unit. */
	int nstacks = sh->sockets * sh->stacks;
	for (int k = 0; k < nstacks; k++) {
		uint8_t path[4] = { 3, 0, 0, 0 };
		struct dmar_scope d = dev_at(stack_bus(sh, k), 2, path);
		int u = dmar_unit_of(&info, stack_seg(sh, k), &d);
		CHECK(u >= 0);
		if (u >= 0 && !legacy(sh, k) && !accel_stack(sh, k))
			CHECK_EQ(info.drhd[u].base, STACK_BASE(k));
		if (u >= 0 && legacy(sh, k))
			CHECK(info.drhd[u].flags & DMAR_DRHD_INCLUDE_PCI_ALL);
		if (u >= 0)
			CHECK_EQ(info.drhd[u].segment, stack_seg(sh, k));
	}
	test_log_clear();
	dmar_print(&info);
	CHECK(!strstr(test_log(), "no DRHD's register base"));
	char node[32];
	snprintf(node, sizeof node, "node %d", sh->sockets - 1);
	CHECK_CONTAINS(test_log(), node);
}

TEST(dmar_server_spr_2s)
{
	check_shape(&spr_2s, "server-spr-2s", 12, 2 * 5 * 4);
}

TEST(dmar_server_gnr_2s)
{
	check_shape(&gnr_2s, "server-gnr-2s", 16, 256);
}

/* The bar: a DMAR of 32 units and 512 scopes parses (the fixed caps
 * of 16 DRHDs and 128 scopes refused it: "DMAR: more than 128 device
 * scopes"). */
TEST(dmar_server_gnr_4s_32_units_512_scopes)
{
	check_shape(&gnr_4s, "server-gnr-4s", 32, 512);
}

/* INCLUDE_PCI_ALL covers its own segment: a device on segment 1, whose
 * units list scopes only, is named, not taken for segment 0's. */
TEST(dmar_include_pci_all_is_per_segment)
{
	struct shape one = { "per-segment", 1, 2, 2, 0, 1, false };
	build(&one);
	/* Append segment 1: one unit with one root port, and an RMRR naming an
	 * endpoint elsewhere on segment 1. The table's DRHDs come first. */
	uint8_t tail[TAB_MAX];
	uint32_t first_rmrr = HDR_LEN;
	while (tab[first_rmrr] == DMAR_DRHD)
		first_rmrr += tab[first_rmrr + 2] | (uint32_t)tab[first_rmrr + 3] << 8;
	uint32_t ntail = tlen - first_rmrr;
	memcpy(tail, tab + first_rmrr, ntail);
	tlen = first_rmrr;
	uint8_t *s = st_begin(DMAR_DRHD);
	put16(s + 6, 1);
	put64(s + 8, STACK_BASE(40));
	tlen = (uint32_t)(s - tab) + DRHD_FIXED;
	uint8_t rp[2] = { 1, 0 };
	sc(DMAR_SCOPE_BRIDGE, 0, 0x20, 1, rp);
	st_end(s);
	memcpy(tab + tlen, tail, ntail);
	tlen += ntail;
	uint8_t *r = st_begin(DMAR_RMRR);
	tlen = (uint32_t)(r - tab) + RMRR_FIXED;
	put16(r + 6, 1);
	put64(r + 8, 0x70000000);
	put64(r + 16, 0x70000fff);
	uint8_t nic[2] = { 5, 0 };
	sc(DMAR_SCOPE_ENDPOINT, 0, 0x40, 1, nic);
	st_end(r);
	seal();
	CHECK_EQ(parse_tab(), 0);
	uint8_t behind[4] = { 1, 0, 0, 0 };
	struct dmar_scope under = dev_at(0x20, 2, behind), elsewhere = dev_at(0x40, 1, nic);
	CHECK_EQ(info.drhd[dmar_unit_of(&info, 1, &under)].segment, 1);
	CHECK_EQ(dmar_unit_of(&info, 1, &elsewhere), -1);
	CHECK(dmar_unit_of(&info, 0, &elsewhere) >= 0);
	test_log_clear();
	CHECK_EQ(dmar_check_coverage(&info), 1);
	CHECK_CONTAINS(test_log(), "segment 1 has no INCLUDE_PCI_ALL unit");
	CHECK_CONTAINS(test_log(), "RMRR 2 names endpoint 0001:40:05.0 (id 0), which no remapping unit covers");
	CHECK(!strstr(test_log(), "segment 0 has no"));
}

/* Room short of what the table holds: refused by name, never overrun. */
TEST(dmar_room_short)
{
	build(&gnr_2s);
	CHECK_EQ(dmar_count(tab, tlen, &counts, err, sizeof err), 0);
	struct dmar_counts less = counts;
	less.nscopes--;
	free(room);
	room = malloc(dmar_bytes(&less));
	dmar_place(&info, &less, room);
	CHECK(dmar_parse(tab, tlen, &info, err, sizeof err) != 0);
	CHECK_CONTAINS(err, "more device scopes than the room given");
	less = counts;
	less.ndrhd--;
	dmar_place(&info, &less, room);
	CHECK(dmar_parse(tab, tlen, &info, err, sizeof err) != 0);
	CHECK_CONTAINS(err, "more DRHDs than the room given (15)");
}

/* A path longer than DMAR_MAX_PATH: kept cut, never covering, named. */
TEST(dmar_long_path_named)
{
	struct shape one = { "long path", 1, 2, 1, 0, 1, false };
	build(&one);
	/* Replace the BMC RMRR's scope by one 9 bridges deep: rebuild by hand. */
	tlen = HDR_LEN;
	uint8_t *s = st_begin(DMAR_DRHD);
	put64(s + 8, STACK_BASE(0));
	tlen = (uint32_t)(s - tab) + DRHD_FIXED;
	uint8_t deep[2 * (DMAR_MAX_PATH + 1)];
	memset(deep, 0, sizeof deep);
	deep[0] = 1;
	sc(DMAR_SCOPE_BRIDGE, 0, 0x10, DMAR_MAX_PATH + 1, deep);
	st_end(s);
	seal();
	CHECK_EQ(parse_tab(), 0);
	CHECK_EQ(info.ncut, 1);
	CHECK(info.scope[0].cut);
	CHECK_EQ(info.scope[0].npath, DMAR_MAX_PATH);
	CHECK_EQ(dmar_unit_of(&info, 0, &info.scope[0]), -1);
	test_log_clear();
	dmar_print(&info);
	CHECK_CONTAINS(test_log(), "1 device scope with paths longer than 8 entries");
}

/* iommu_init (iommu/iommu.c) on these tables, the units' registers faked in
 * host memory: iommu=auto never fails a boot over a DMAR or a unit it cannot
 * use, it says "DMA isolation: off: <why>"; iommu=require refuses. */
#define REG_PAGE        4096
#define CAP_SAGAW_4L    (1ull << (8 + 2))      /* SAGAW bit 2: 48-bit 4-level */
#define CAP_MGAW_48     (47ull << 16)          /* MGAW: width - 1 */
#define CAP_FRO_0x200   (0x20ull << 24)        /* fault registers at FRO * 16 */
#define ECAP_IRO_0x300  (0x30ull << 8)         /* IOTLB registers at IRO * 16 */
#define VER_1_0         0x10
#define HEAP_PAGES      64

static uint8_t *regs;
static struct memmap mem;
static struct acpi_info acpi;
static uint8_t *heap;

/* The table's DRHD and RHSA bases moved to fake register pages; every
 * unit answers with a 4-level layout unless its page is changed after. */
static void fake_units(void)
{
	int nunits = 0;
	for (uint32_t off = HDR_LEN; off < tlen; off += tab[off + 2] | (uint32_t)tab[off + 3] << 8) {
		uint16_t type = tab[off] | (uint16_t)(tab[off + 1] << 8);
		if (type != DMAR_DRHD && type != DMAR_RHSA)
			continue;
		uint64_t base;
		memcpy(&base, tab + off + 8, 8);
		uint64_t k = (base - STACK_BASE(0)) / (STACK_BASE(1) - STACK_BASE(0));
		put64(tab + off + 8, (uintptr_t)(regs + k * REG_PAGE));
		nunits += type == DMAR_DRHD;
	}
	for (int k = 0; k < nunits; k++) {
		uint8_t *r = regs + (size_t)k * REG_PAGE;
		memset(r, 0, REG_PAGE);
		put32(r + VTD_VER, VER_1_0);
		put64(r + VTD_CAP, CAP_SAGAW_4L | CAP_MGAW_48 | CAP_FRO_0x200);
		put64(r + VTD_ECAP, ECAP_IRO_0x300);
	}
	seal();
}

static int init(const struct shape *sh, int opt, void (*spoil)(void))
{
	vrm_attach(NULL);   /* plain memory behind the units, not the register model of test_vtd_handover.c */
	if (!regs)
		regs = aligned_alloc(REG_PAGE, 64 * REG_PAGE);
	if (!heap)
		heap = aligned_alloc(REG_PAGE, HEAP_PAGES * REG_PAGE);
	page_alloc_init((uintptr_t)heap, HEAP_PAGES * REG_PAGE);
	build(sh);
	fake_units();
	if (spoil)
		spoil();
	memset(&mem, 0, sizeof mem);
	memmap_add(&mem, 0, 1ull << 32, MEM_USABLE);
	memset(&acpi, 0, sizeof acpi);
	acpi.dmar = (uintptr_t)tab;
	paddr_t lo = acpi_readable_lo, hi = acpi_readable_hi;
	acpi_readable_lo = 0;
	acpi_readable_hi = ~0ull >> 1;
	test_log_clear();
	err[0] = 0;
	int r = iommu_init(&acpi, opt, IOMMU_QI_AUTO, &mem, err, sizeof err);
	acpi_readable_lo = lo;
	acpi_readable_hi = hi;
	page_alloc_init(0, 0);
	return r;
}

static void bad_checksum(void) { tab[20] ^= 1; }
static void unit_5_silent(void) { memset(regs + 5 * REG_PAGE, 0xff, REG_PAGE); }
static void unit_7_no_layout(void) { put64(regs + 7 * REG_PAGE + VTD_CAP, CAP_MGAW_48 | CAP_FRO_0x200); }

TEST(iommu_auto_32_units_on)
{
	CHECK_EQ(init(&gnr_4s, IOMMU_OPT_AUTO, NULL), 0);
	CHECK(iommu_available());
	CHECK_STR(iommu_state_name(), "on");
	CHECK_CONTAINS(test_log(), "DMA isolation: on: 32 remapping units");
	CHECK(!strstr(test_log(), "no remapping unit covers"));
}

TEST(iommu_auto_boots_without_a_dmar_it_cannot_use)
{
	CHECK_EQ(init(&gnr_4s, IOMMU_OPT_AUTO, bad_checksum), 0);
	CHECK(!iommu_available());
	CHECK_CONTAINS(strstr(test_log(), "DMA isolation"), "DMA isolation: off: DMAR: checksum bad");
	CHECK_EQ(init(&gnr_4s, IOMMU_OPT_AUTO, unit_5_silent), 0);
	CHECK(!iommu_available());
	CHECK_CONTAINS(strstr(test_log(), "DMA isolation"), "DMA isolation: off: iommu: no remapping unit answers at");
	CHECK_EQ(init(&gnr_4s, IOMMU_OPT_AUTO, unit_7_no_layout), 0);
	CHECK(!iommu_available());
	/* Stack 7 is DRHD 6: stack 0, the INCLUDE_PCI_ALL one, comes last. */
	CHECK_CONTAINS(strstr(test_log(), "DMA isolation"), "DMA isolation: off: iommu: unit 6: no table layout in SAGAW 0x0");
}

TEST(iommu_require_refuses_what_auto_turns_off)
{
	CHECK(init(&gnr_4s, IOMMU_OPT_REQUIRE, bad_checksum) != 0);
	CHECK_CONTAINS(err, "iommu=require: DMAR: checksum bad");
	CHECK(init(&gnr_4s, IOMMU_OPT_REQUIRE, unit_5_silent) != 0);
	CHECK_CONTAINS(err, "iommu=require: iommu: no remapping unit answers");
	CHECK(init(&gnr_4s, IOMMU_OPT_REQUIRE, unit_7_no_layout) != 0);
	CHECK_CONTAINS(err, "refusing to start the guest");
	CHECK_EQ(init(&gnr_4s, IOMMU_OPT_REQUIRE, NULL), 0);
	CHECK(iommu_available());
}

/* A DMAR of n units on segment 0, one scope: the units' DRHDs as given. */
static struct dmar_info exact_dmar(const struct dmar_drhd *u, uint32_t n, struct dmar_scope sc)
{
	static struct dmar_drhd drhd[2];
	static struct dmar_scope scope[1];
	struct dmar_info d;
	memset(&d, 0, sizeof d);
	memcpy(drhd, u, n * sizeof *u);
	scope[0] = sc;
	d.drhd = drhd;
	d.scope = scope;
	d.ndrhd = n;
	d.nscopes = 1;
	return d;
}

/* Issue 43, item 5: an interrupt entry's cached copy is invalidated on the
 * unit an explicit scope names for its source; a source that only the
 * catch-all (INCLUDE_PCI_ALL) unit takes may, when its path is not known
 * exactly (a VF past its PF's bus, a bus renumbered), lie under another
 * unit: dmar_unit_exact answers -1 and the caller invalidates on every
 * unit of the segment. */
TEST(dmar_unit_exact_refuses_the_catch_all)
{
	const struct dmar_drhd u[2] = { { .segment = 0, .first = 0, .n = 1 },
					{ .segment = 0, .flags = DMAR_DRHD_INCLUDE_PCI_ALL, .first = 1, .n = 0 } };
	struct dmar_info d = exact_dmar(u, 2, (struct dmar_scope){ .type = DMAR_SCOPE_BRIDGE, .bus = 0, .npath = 1, .path = { { 3, 0 } } });
	struct dmar_scope under = { .type = DMAR_SCOPE_ENDPOINT, .bus = 0, .npath = 2, .path = { { 3, 0 }, { 0, 0 } } };
	struct dmar_scope other = { .type = DMAR_SCOPE_ENDPOINT, .bus = 4, .npath = 1, .path = { { 0, 0 } } };
	CHECK_EQ(dmar_unit_of(&d, 0, &under), 0);
	CHECK_EQ(dmar_unit_exact(&d, 0, &under), 0);
	CHECK_EQ(dmar_unit_of(&d, 0, &other), 1);
	CHECK_EQ(dmar_unit_exact(&d, 0, &other), -1);
}

/* A device named in the catch-all unit's own scope is known exactly. */
TEST(dmar_unit_exact_takes_a_scope_of_the_catch_all_unit)
{
	const struct dmar_drhd u[1] = { { .segment = 0, .flags = DMAR_DRHD_INCLUDE_PCI_ALL, .first = 0, .n = 1 } };
	struct dmar_scope named = { .type = DMAR_SCOPE_ENDPOINT, .bus = 0, .npath = 1, .path = { { 2, 0 } } };
	struct dmar_info d = exact_dmar(u, 1, named);
	CHECK_EQ(dmar_unit_exact(&d, 0, &named), 0);
}
