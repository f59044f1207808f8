/* Interrupt remapping with units in two PCI segments (iommu/iommu.c,
 * iommu_ir_own): a table per segment, each unit's IRTA at its segment's,
 * because an IRTE's source-ID check (16 bits: bus, device, function) names
 * no segment: a device on segment 1 with the BDF of a segment-0 function
 * would pass that function's check in a shared table. iommu_init,
 * iommu_enable and iommu_ir_own run against the register model of
 * vtd_regs_model.c, one model per unit (vrm_attach_units), on a DMAR built
 * here. Every constant below is written out from the VT-d specification
 * (or ACPI), not taken from iommu/. */
#include "test.h"
#include "hw_fake.h"
#include "vtd_regs_model.h"
#include "../../iommu/iommu.h"
#include "../../lib/acpi.h"
#include "../../lib/memmap.h"
#include "../../lib/options.h"

/* VT-d "DMA Remapping Reporting Structure": a 48-byte header (ACPI:
 * length at 4, checksum at 9, all bytes summing to 0; host address width
 * at 36, flags at 37, INTR_REMAP bit 0). "DMA Remapping Hardware Unit
 * Definition Structure": type 0, length at 2, flags at 4 (INCLUDE_PCI_ALL
 * bit 0), size at 5 (2^N pages), segment at 6, register base at 8,
 * device scopes from 16. "Device Scope Structure": type at 0 (3: IOAPIC),
 * length at 1, enumeration ID at 4, start bus at 5, a path of (device,
 * function) pairs from 6. */
#define T_HDR_LEN        48
#define T_HDR_HAW        36
#define T_HDR_FLAGS      37
#define T_INTR_REMAP     0x1
#define T_DRHD           0
#define T_DRHD_FIXED     16
#define T_PCI_ALL        0x1
#define T_SCOPE_IOAPIC   3
#define T_SCOPE_LEN      8               /* one path entry */
#define T_HAW_46         45              /* width - 1 */

/* "Capability Register": SAGAW bits 12:8 (2: 39-bit 3-level, 4: 48-bit
 * 4-level), MGAW 21:16 (width - 1), FRO 33:24 (offset / 16), PLMR 5, PHMR 6.
 * "Extended Capability Register": C 0, QI 1, IR 3, EIM 4, IRO 17:8
 * (offset / 16). As test_vtd_queue.c's unit: fault register at 0x400,
 * IOTLB register at 0x508, both inside the unit's 4 KiB page. */
static const uint64_t cap = (6ull << 8) | (47ull << 16) | (0x40ull << 24) | (1ull << 5) | (1ull << 6);
static const uint64_t ecap = 1 | (1 << 1) | (1 << 3) | (1 << 4) | (0x50ull << 8);
/* "Interrupt Remapping Table Address Register": IRTA 63:12, EIME 11, S 3:0
 * (2^(S+1) entries). "Global Status Register": IRES 25. */
#define IRTA_ADDR(v)     ((v) & ~0xfffull)
#define IRTA_S(v)        ((unsigned)((v) & 0xf))
#define GSTS_IRES        (1u << 25)
/* "Interrupt Remapping Table Entry (IRTE) for Remapped Interrupts": P bit
 * 0, vector 23:16, destination 63:32 (EIM) or 47:40; SID 79:64, SVT 83:82. */
#define IRTE_P           1ull

#define IOAPIC_ID        8
#define IOAPIC_BUS       0xf0
#define IOAPIC_DEV       0x1f
#define PINS_PER_IOAPIC  256             /* the table's entries for each IOAPIC (iommu.h) */
#define MAX_UNITS        3
#define HEAP_SIZE        MIB(8)          /* two tables of 2^16 16-byte entries, and the rest */

struct unit_def {
	uint16_t seg;
	bool pci_all;
	bool ioapic;                     /* holds the IOAPIC's device scope */
};

static uint8_t tab[512];
static uint32_t tlen;
static struct vtd_regs_model m[MAX_UNITS];
static struct acpi_ioapic ioapic = { .id = IOAPIC_ID, .addr = 0xfec00000, .gsi_base = 0 };
static struct acpi_info acpi;
static struct memmap mem;
static uint8_t *heap;
static char err[256];

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The DMAR: unit k's registers at the model's unit k. */
static void build(const struct unit_def *d, unsigned n)
{
	memset(tab, 0, sizeof tab);
	memcpy(tab, "DMAR", 4);
	tab[8] = 1;
	memcpy(tab + 10, "HVTEST", 6);
	tab[T_HDR_HAW] = T_HAW_46;
	tab[T_HDR_FLAGS] = T_INTR_REMAP;
	tlen = T_HDR_LEN;
	for (unsigned k = 0; k < n; k++) {
		uint8_t *s = tab + tlen;
		put16(s, T_DRHD);
		s[4] = d[k].pci_all ? T_PCI_ALL : 0;
		put16(s + 6, d[k].seg);
		put64(s + 8, VRM_BASE + k * VRM_UNIT_SIZE);
		tlen += T_DRHD_FIXED;
		if (d[k].ioapic) {
			uint8_t *p = tab + tlen;
			p[0] = T_SCOPE_IOAPIC;
			p[1] = T_SCOPE_LEN;
			p[4] = IOAPIC_ID;
			p[5] = IOAPIC_BUS;
			p[6] = IOAPIC_DEV;
			p[7] = 0;
			tlen += T_SCOPE_LEN;
		}
		put16(s + 2, (uint16_t)(tab + tlen - s));
	}
	put32(tab + 4, tlen);
	uint8_t sum = 0;
	for (uint32_t i = 0; i < tlen; i++)
		sum = (uint8_t)(sum + tab[i]);
	tab[9] = (uint8_t)-sum;
}

/* iommu_init (iommu=require: a unit it cannot use fails the test) and
 * iommu_enable on units d[0..n-1], then ownership for msi_irtes MSIs
 * (intremap=on). Returns what iommu_ir_own returned; the log holds its line. */
static bool own(const struct unit_def *d, unsigned n, uint32_t msi_irtes)
{
	if (!heap)
		heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);   /* kept: iommu.c's state points into it */
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	hw_tsc = 1;
	for (unsigned k = 0; k < n; k++)
		vrm_reset(&m[k], cap, ecap, false, false, false, false, 0);
	vrm_attach_units(m, n);
	build(d, n);
	memset(&mem, 0, sizeof mem);
	memmap_add(&mem, 0, MIB(16), MEM_USABLE);
	memset(&acpi, 0, sizeof acpi);
	acpi.dmar = (uintptr_t)tab;
	acpi.nioapics = acpi.ioapic_room = 1;
	acpi.ioapic = &ioapic;
	paddr_t lo = acpi_readable_lo, hi = acpi_readable_hi;
	acpi_readable_lo = 0;
	acpi_readable_hi = ~0ull >> 1;
	test_log_clear();
	err[0] = 0;
	int rc = iommu_init(&acpi, IOMMU_OPT_REQUIRE, IOMMU_QI_AUTO, &mem, err, sizeof err);
	acpi_readable_lo = lo;
	acpi_readable_hi = hi;
	if (rc)
		printf("    iommu_init: %s\n", err);
	CHECK_EQ(rc, 0);
	CHECK(iommu_available());
	rc = iommu_enable(&mem, err, sizeof err);
	if (rc)
		printf("    iommu_enable: %s\n", err);
	CHECK_EQ(rc, 0);
	test_log_clear();
	return iommu_ir_own(&acpi, false, true, msi_irtes);
}

/* Remapping given up and iommu.c left with no units (a DMAR with a bad
 * checksum under iommu=auto), so that later tests' reports do not reach
 * these units' registers after the model is gone. */
static void down(unsigned n)
{
	iommu_ir_release("the test is over");
	for (unsigned k = 0; k < n; k++)
		if (m[k].violations)
			printf("    unit %u: %s\n", k, m[k].violation);
	for (unsigned k = 0; k < n; k++)
		CHECK_EQ(m[k].violations, 0);
	tab[9] ^= 1;
	paddr_t lo = acpi_readable_lo, hi = acpi_readable_hi;
	acpi_readable_lo = 0;
	acpi_readable_hi = ~0ull >> 1;
	CHECK_EQ(iommu_init(&acpi, IOMMU_OPT_AUTO, IOMMU_QI_AUTO, &mem, err, sizeof err), 0);
	acpi_readable_lo = lo;
	acpi_readable_hi = hi;
	CHECK(!iommu_available());
	vrm_attach(NULL);
	page_alloc_init(0, 0);
}

/* The smallest S with 2^(S+1) >= want. */
static unsigned s_for(uint64_t want)
{
	unsigned s = 0;
	while ((2ull << s) < want)
		s++;
	return s;
}

/* Segment 0: the IOAPIC's unit, then the INCLUDE_PCI_ALL unit (last of
 * its segment, as the specification has it); segment 1: INCLUDE_PCI_ALL. */
static const struct unit_def two_segments[] = {
	{ .seg = 0, .pci_all = false, .ioapic = true },
	{ .seg = 0, .pci_all = true, .ioapic = false },
	{ .seg = 1, .pci_all = true, .ioapic = false },
};

/* Each unit latched its segment's table: the same in the units of segment
 * 0, another in segment 1's; S as small as holds the IOAPIC's entries and
 * the scan's. */
static void check_tables(uint32_t msi_irtes)
{
	unsigned s = s_for(PINS_PER_IOAPIC + (uint64_t)msi_irtes);
	if (s > 15)
		s = 15;
	for (unsigned k = 0; k < MAX_UNITS; k++) {
		CHECK(m[k].gsts & GSTS_IRES);
		CHECK(m[k].irt != 0);
		CHECK_EQ(IRTA_S(m[k].irt), s);
		CHECK_EQ(m[k].irt & (1u << 11), 0);              /* EIME: not asked */
	}
	CHECK_EQ(IRTA_ADDR(m[0].irt), IRTA_ADDR(m[1].irt));
	CHECK(IRTA_ADDR(m[0].irt) != IRTA_ADDR(m[2].irt));
	uint32_t entries = 2u << s;
	CHECK_EQ(iommu_msi_irte_base(), PINS_PER_IOAPIC);
	CHECK_EQ(iommu_msi_irte_count(0), entries - PINS_PER_IOAPIC);
	CHECK_EQ(iommu_msi_irte_count(1), entries - PINS_PER_IOAPIC);
	CHECK_EQ(iommu_msi_irte_count(7), 0);                    /* no unit in segment 7 */
}

TEST(irt_a_table_per_segment)
{
	bool owned = own(two_segments, MAX_UNITS, 300);
	if (!owned)
		printf("    %s", test_log());
	CHECK(owned);
	CHECK(iommu_ir_owned());
	/* 256 + 300 = 556 entries wanted: 2^10 = 1024, S = 9. */
	CHECK_EQ(s_for(PINS_PER_IOAPIC + 300), 9);
	check_tables(300);
	CHECK_CONTAINS(test_log(), "a table of 1024 entries (768 for MSIs, 300 wanted by the scan) for each of 2 PCI segments, in 3 units");
	CHECK(!strstr(test_log(), "IRTEs, a table holds"));
	down(MAX_UNITS);
}

/* An IRTE of segment 1: in segment 1's table (the one its unit latched),
 * not in segment 0's; its cached copy invalidated (index-selective) in
 * segment 1's unit alone. Segment 0's: an MSI's (source's unit not known)
 * in both of segment 0's units, the IOAPIC's in its own unit only. */
TEST(irt_write_lands_in_its_segment)
{
	CHECK(own(two_segments, MAX_UNITS, 300));
	const uint32_t i = PINS_PER_IOAPIC + 5, pin = 3;
	const uint64_t lo = (0x41ull << 16) | (2ull << 40), hi = 0x0300;   /* vector 0x41, APIC ID 2, SID 00:00.3 */
	unsigned before[MAX_UNITS];
	for (unsigned k = 0; k < MAX_UNITS; k++)
		before[k] = m[k].iec_index;
	CHECK(!iommu_irte_present(1, i));
	iommu_irte_write(1, i, lo | IRTE_P, hi);
	CHECK(iommu_irte_present(1, i));
	CHECK(!iommu_irte_present(0, i));
	const uint64_t *t0 = (const uint64_t *)(uintptr_t)IRTA_ADDR(m[0].irt);
	const uint64_t *t1 = (const uint64_t *)(uintptr_t)IRTA_ADDR(m[2].irt);
	CHECK_EQ(t1[2 * i], lo | IRTE_P);
	CHECK_EQ(t1[2 * i + 1], hi);
	CHECK_EQ(t0[2 * i], 0);
	CHECK_EQ(m[2].iec_index, before[2] + 1);
	CHECK_EQ(m[2].iec_index_last, i);
	CHECK_EQ(m[0].iec_index, before[0]);
	CHECK_EQ(m[1].iec_index, before[1]);

	for (unsigned k = 0; k < MAX_UNITS; k++)
		before[k] = m[k].iec_index;
	iommu_irte_write(0, i + 1, lo | IRTE_P, hi);
	CHECK(iommu_irte_present(0, i + 1));
	CHECK(!iommu_irte_present(1, i + 1));
	CHECK_EQ(t0[2 * (i + 1)], lo | IRTE_P);
	CHECK_EQ(m[0].iec_index, before[0] + 1);
	CHECK_EQ(m[1].iec_index, before[1] + 1);
	CHECK_EQ(m[0].iec_index_last, i + 1);
	CHECK_EQ(m[1].iec_index_last, i + 1);
	CHECK_EQ(m[2].iec_index, before[2]);

	for (unsigned k = 0; k < MAX_UNITS; k++)
		before[k] = m[k].iec_index;
	iommu_irte_write(0, iommu_ioapic_irte_base(0) + pin, lo | IRTE_P, (uint64_t)iommu_ioapic_sid(0));
	CHECK_EQ(iommu_ioapic_sid(0), IOAPIC_BUS << 8 | IOAPIC_DEV << 3);
	CHECK_EQ(m[0].iec_index, before[0] + 1);
	CHECK_EQ(m[0].iec_index_last, pin);
	CHECK_EQ(m[1].iec_index, before[1]);
	CHECK_EQ(m[2].iec_index, before[2]);
	CHECK(!iommu_irte_present(1, pin));

	/* Past the table, or in a segment with no table: nothing written. */
	for (unsigned k = 0; k < MAX_UNITS; k++)
		before[k] = m[k].iec_index;
	iommu_irte_write(7, i, lo | IRTE_P, hi);
	CHECK(!iommu_irte_present(7, i));
	for (unsigned k = 0; k < MAX_UNITS; k++)
		CHECK_EQ(m[k].iec_index, before[k]);
	down(MAX_UNITS);
}

/* More than a table holds: S = 15 (2^16 entries), said. */
TEST(irt_largest_table_and_the_warning)
{
	CHECK(own(two_segments, MAX_UNITS, 70000));
	check_tables(70000);
	for (unsigned k = 0; k < MAX_UNITS; k++)
		CHECK_EQ(IRTA_S(m[k].irt), 15);
	CHECK_EQ(iommu_msi_irte_count(1), 65536 - PINS_PER_IOAPIC);
	CHECK_CONTAINS(test_log(), "the scan wants 70256 IRTEs, a table holds 65536");
	down(MAX_UNITS);
}

/* The IOAPIC's scope in a unit of segment 1 only: its interrupts would
 * reach a table its source ID was never meant for. Refused, nothing on. */
TEST(irt_ioapic_outside_segment_0_refused)
{
	static const struct unit_def wrong[] = {
		{ .seg = 0, .pci_all = true, .ioapic = false },
		{ .seg = 1, .pci_all = true, .ioapic = true },
	};
	CHECK(!own(wrong, 2, 300));
	CHECK(!iommu_ir_owned());
	CHECK_CONTAINS(test_log(),
		       "intremap=on: interrupt remapping not owned: an IOAPIC of the MADT lies under no unit of PCI segment 0");
	for (unsigned k = 0; k < 2; k++) {
		CHECK_EQ(m[k].gsts & GSTS_IRES, 0);
		CHECK_EQ(m[k].irt, 0);
	}
	CHECK_EQ(iommu_msi_irte_count(0), 0);
	CHECK_EQ(iommu_msi_irte_count(1), 0);
	down(2);
}

/* The model itself: unit k answers in its own page, and an access past the
 * last unit (or below the first) is a violation recorded on unit 0. */
TEST(vrm_units_and_accesses_outside_them)
{
	for (unsigned k = 0; k < 2; k++)
		vrm_reset(&m[k], cap, ecap, false, false, false, false, 0);
	m[1].ver = 0x60;                                         /* "Version Register" at 0 */
	vrm_attach_units(m, 2);
	CHECK_EQ(vtd_mmio_read(VRM_BASE, 4), 0x10);
	CHECK_EQ(vtd_mmio_read(VRM_BASE + VRM_UNIT_SIZE, 4), 0x60);
	vtd_mmio_write(VRM_BASE + VRM_UNIT_SIZE + 0xb8, 8, 0x5000);   /* IRTA */
	CHECK_EQ(m[1].irta, 0x5000);
	CHECK_EQ(m[0].irta, 0);
	CHECK_EQ(m[0].violations + m[1].violations, 0);
	CHECK_EQ(vtd_mmio_read(VRM_BASE + 2 * VRM_UNIT_SIZE, 4), 0);
	CHECK_EQ(m[0].violations, 1);
	CHECK_CONTAINS(m[0].violation, "outside every unit's registers");
	vtd_mmio_write(VRM_BASE - 8, 8, 1);
	CHECK_EQ(m[0].violations, 2);
	CHECK_EQ(m[1].violations, 0);
	vrm_attach(NULL);
}
