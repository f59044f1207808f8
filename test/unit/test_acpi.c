/* ACPI parser tests on synthetic tables built in memory.  "Physical
 * addresses" are pointers into a static arena. */
#include "test.h"
#include "../../lib/cpusum.h"
#include "../../lib/acpi_print.h"
#include "../../lib/options.h"
#include <sys/mman.h>
#include "../../lib/acpi.h"

#define ARENA_SIZE (64 * 1024)
static uint8_t arena_static[ARENA_SIZE] __attribute__((aligned(16)));
static uint8_t *arena = arena_static;
static size_t arena_used;
static struct acpi_info info;
static char err[160];

static uint8_t *alloc(size_t n)
{
	size_t at = (arena_used + 15) & ~(size_t)15;
	if (at + n > ARENA_SIZE)
		abort();        /* arena exhausted */
	arena_used = at + n;
	memset(arena + at, 0, n);
	return arena + at;
}

/* The RSDT holds 32-bit addresses, so keep the tables below 4 GiB. */
__attribute__((constructor)) static void arena_init(void)
{
#ifdef MAP_32BIT
	void *p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (p != MAP_FAILED)
		arena = p;
#endif
}

static paddr_t pa_of(const void *p) { return (paddr_t)(uintptr_t)p; }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static void fix_sum(uint8_t *p, size_t len, size_t at)
{
	uint8_t s = 0;
	p[at] = 0;
	for (size_t i = 0; i < len; i++)
		s = (uint8_t)(s + p[i]);
	p[at] = (uint8_t)-s;
}

/* Recomputes an SDT's checksum from its length field. */
static void sdt_fix(uint8_t *t) { fix_sum(t, get32(t + 4), 9); }

static uint8_t *sdt_new(const char *sig, uint32_t len, size_t alloc_len)
{
	uint8_t *t = alloc(alloc_len > len ? alloc_len : len);
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = 1;
	memcpy(t + 10, "HVTESTUNITTEST", 14);  /* OEM ID, OEM table ID */
	memcpy(t + 28, "TEST", 4);
	sdt_fix(t);
	return t;
}

/* RSDP revision 0 (20 bytes) or 2 (36 bytes, with the XSDT address). */
static uint8_t *rsdp_new(uint8_t rev, paddr_t xsdt, paddr_t rsdt)
{
	uint8_t *r = alloc(36);
	memcpy(r, "RSD PTR HVTEST", 15);
	r[15] = rev;
	put32(r + 16, (uint32_t)rsdt);
	if (rev >= 2) {
		put32(r + 20, 36);
		put64(r + 24, xsdt);
	}
	fix_sum(r, 20, 8);
	if (rev >= 2)
		fix_sum(r, 36, 32);
	return r;
}

static uint8_t *rsdp_v2(paddr_t xsdt, paddr_t rsdt) { return rsdp_new(2, xsdt, rsdt); }
static uint8_t *rsdp_v1(paddr_t rsdt) { return rsdp_new(0, 0, rsdt); }

/* XSDT (8-byte entries) or RSDT (4-byte entries). */
static uint8_t *root_new(const char *sig, const paddr_t *e, int n)
{
	int esz = sig[0] == 'X' ? 8 : 4;
	uint8_t *t = sdt_new(sig, 36 + esz * n, 0);
	for (int i = 0; i < n; i++)
		memcpy(t + 36 + esz * i, &e[i], esz);   /* little-endian */
	sdt_fix(t);
	return t;
}

static uint8_t *xsdt_new(const paddr_t *e, int n) { return root_new("XSDT", e, n); }
static uint8_t *rsdt_new(const paddr_t *e, int n) { return root_new("RSDT", e, n); }

/* MADT builder: madt_begin, entries, madt_end (sets length, checksum). */
static uint8_t *madt;
static uint32_t madt_len;

static void madt_begin(uint32_t lapic_addr, size_t room)
{
	madt = sdt_new("APIC", 44, 44 + room);
	madt_len = 44;
	put32(madt + 36, lapic_addr);
	put32(madt + 40, 1);    /* PCAT_COMPAT */
}

static uint8_t *madt_entry(uint8_t type, uint8_t len)
{
	uint8_t *e = madt + madt_len;
	e[0] = type;
	e[1] = len;
	madt_len += len;
	return e;
}

static void madt_lapic(uint8_t uid, uint8_t id, uint32_t flags)
{
	uint8_t *e = madt_entry(0, 8);
	e[2] = uid, e[3] = id, put32(e + 4, flags);
}

static void madt_x2apic(uint32_t id, uint32_t uid, uint32_t flags)
{
	uint8_t *e = madt_entry(9, 16);
	put32(e + 4, id), put32(e + 8, flags), put32(e + 12, uid);
}

static void madt_ioapic(uint8_t id, uint32_t addr, uint32_t gsi)
{
	uint8_t *e = madt_entry(1, 12);
	e[2] = id, put32(e + 4, addr), put32(e + 8, gsi);
}

static void madt_override(uint64_t addr) { put64(madt_entry(5, 12) + 4, addr); }

static uint8_t *madt_end(void)
{
	put32(madt + 4, madt_len);
	sdt_fix(madt);
	return madt;
}

static uint8_t *dsdt_new(const uint8_t *aml, size_t n)
{
	uint8_t *t = sdt_new("DSDT", 36 + (uint32_t)n, 0);
	memcpy(t + 36, aml, n);
	sdt_fix(t);
	return t;
}

/* A 276-byte (ACPI 6) FADT with only the legacy fields filled in. */
static uint8_t *fadt_new(paddr_t dsdt, uint32_t pm1a, uint32_t pm1b, uint32_t tmr, uint32_t flags)
{
	uint8_t *f = sdt_new("FACP", 276, 0);
	f[8] = 6;
	put32(f + 40, (uint32_t)dsdt);
	put32(f + 64, pm1a), put32(f + 68, pm1b), put32(f + 76, tmr);
	f[89] = 2, f[91] = 4;   /* PM1_CNT_LEN, PM_TMR_LEN */
	put32(f + 112, flags);
	sdt_fix(f);
	return f;
}

/* A Generic Address Structure. */
static void gas_set(uint8_t *g, uint8_t space, uint64_t addr)
{
	g[0] = space, g[1] = 16;
	put64(g + 4, addr);
}

/* Name (_S5_, Package () { 5, 5, 0, 0 }) after some unrelated AML. */
static const uint8_t aml_s5_byte[] = {
	0x10, 0x05, '_', 'S', 'B', '_',             /* Scope (_SB_) {} */
	0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0a, 0x05, 0x0a, 0x05, 0x00, 0x00,
};

struct tables { uint8_t *rsdp, *root, *madt, *fadt, *dsdt; };

/* The standard machine: RSDP v2 -> XSDT -> {FADT -> DSDT, MADT with two
 * CPUs and one IOAPIC}. */
static struct tables std_v2(void)
{
	struct tables t;
	arena_used = 0;
	t.dsdt = dsdt_new(aml_s5_byte, sizeof aml_s5_byte);
	t.fadt = fadt_new(pa_of(t.dsdt), 0x604, 0, 0x608, 0);
	madt_begin(0xfee00000, 256);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 2, 1);
	madt_ioapic(1, 0xfec00000, 0);
	t.madt = madt_end();
	paddr_t e[] = { pa_of(t.fadt), pa_of(t.madt) };
	t.root = xsdt_new(e, 2);
	t.rsdp = rsdp_v2(pa_of(t.root), 0);
	return t;
}

/* RSDP v2 -> XSDT -> the current MADT builder contents (no FADT). */
static uint8_t *with_madt_only(void)
{
	paddr_t e[] = { pa_of(madt_end()) };
	return rsdp_v2(pa_of(xsdt_new(e, 1)), 0);
}

/* An RSDT can only point below 4 GiB (see arena_init). */
static bool rsdt_unreachable(const uint8_t *rsdt)
{
	if (!(pa_of(rsdt) >> 32))
		return false;
	printf("    (skipped: no memory below 4 GiB for an RSDT)\n");
	return true;
}

static int parse(const uint8_t *rsdp)
{
	memset(err, 0, sizeof err);
	return acpi_parse(pa_of(rsdp), &info, err, sizeof err);
}

TEST(acpi_good_v2)
{
	struct tables t = std_v2();
	CHECK_EQ(parse(t.rsdp), 0); CHECK_STR(err, "");
	CHECK_EQ(info.rsdp, pa_of(t.rsdp)); CHECK_EQ(info.root, pa_of(t.root));
	CHECK(info.xsdt); CHECK_EQ(info.rsdp_revision, 2);
	CHECK_EQ(info.madt, pa_of(t.madt)); CHECK_EQ(info.fadt, pa_of(t.fadt));
	CHECK_EQ(info.dsdt, pa_of(t.dsdt)); CHECK_EQ(info.lapic_addr, 0xfee00000);
	CHECK_EQ(info.ncpus, 2); CHECK_EQ(info.cpu[0].apic_id, 0);
	CHECK_EQ(info.cpu[0].uid, 0); CHECK_EQ(info.cpu[1].apic_id, 2);
	CHECK_EQ(info.cpu[1].uid, 1); CHECK(!info.cpu[1].x2apic_entry);
	CHECK_EQ(info.max_apic_id, 2); CHECK_EQ(info.nioapics, 1);
	CHECK_EQ(info.ioapic[0].id, 1); CHECK_EQ(info.ioapic[0].addr, 0xfec00000);
	CHECK_EQ(info.ioapic[0].gsi_base, 0); CHECK_EQ(info.pm1a_cnt, 0x604);
	CHECK_EQ(info.pm1b_cnt, 0); CHECK_EQ(info.pm_tmr_port, 0x608);
	CHECK(!info.pm_tmr_32bit); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 5); CHECK_EQ(info.slp_typb, 5);
	CHECK(!info.reset_valid);
	CHECK(!strstr(test_log(), "ACPI"));     /* no warnings */

	acpi_print(&info);
	CHECK_CONTAINS(test_log(), "XSDT"); CHECK_CONTAINS(test_log(), "2 CPUs");
	CHECK_CONTAINS(test_log(), " 2/1"); CHECK_CONTAINS(test_log(), "IOAPIC id 1 at 0xfec00000");
	CHECK_CONTAINS(test_log(), "PM1a_CNT 0x604");
	CHECK_CONTAINS(test_log(), "SLP_TYPa 5, SLP_TYPb 5");
}

TEST(acpi_good_v1_rsdt)
{
	arena_used = 0;
	uint8_t *dsdt = dsdt_new(aml_s5_byte, sizeof aml_s5_byte);
	uint8_t *fadt = sdt_new("FACP", 116, 0);     /* ACPI 1.0 size */
	put32(fadt + 40, (uint32_t)pa_of(dsdt));
	put32(fadt + 64, 0x4004);
	put32(fadt + 76, 0x4008);
	put32(fadt + 112, 1u << 8);                   /* TMR_VAL_EXT */
	sdt_fix(fadt);
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_ioapic(4, 0xfec00000, 0);
	paddr_t e[] = { pa_of(madt_end()), pa_of(fadt) };
	uint8_t *rsdt = rsdt_new(e, 2);
	if (rsdt_unreachable(rsdt))
		return;
	uint8_t *r = rsdp_v1(pa_of(rsdt));
	CHECK_EQ(parse(r), 0); CHECK(!info.xsdt);
	CHECK_EQ(info.rsdp_revision, 0); CHECK_EQ(info.root, pa_of(rsdt));
	CHECK_EQ(info.ncpus, 1); CHECK_EQ(info.nioapics, 1);
	CHECK_EQ(info.ioapic[0].id, 4); CHECK_EQ(info.pm1a_cnt, 0x4004);
	CHECK_EQ(info.pm_tmr_port, 0x4008); CHECK(info.pm_tmr_32bit);
	CHECK(info.s5_valid); CHECK_EQ(info.dsdt, pa_of(dsdt));

	/* A revision 2 RSDP whose XSDT address is 0 falls back to the RSDT. */
	CHECK_EQ(parse(rsdp_v2(0, pa_of(rsdt))), 0); CHECK(!info.xsdt);
	CHECK_EQ(info.root, pa_of(rsdt)); CHECK_EQ(info.rsdp_revision, 2);
}

TEST(acpi_x2apic_high_ids)
{
	arena_used = 0;
	madt_begin(0xfee00000, 256);
	madt_lapic(0, 0, 1);
	madt_x2apic(300, 10, 1);
	madt_x2apic(0x1000, 11, 1);
	madt_x2apic(7, 12, 1);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.ncpus, 4);
	CHECK_EQ(info.max_apic_id, 0x1000); CHECK_EQ(info.cpu[1].apic_id, 300);
	CHECK_EQ(info.cpu[1].uid, 10); CHECK(info.cpu[1].x2apic_entry);
	CHECK(!info.cpu[0].x2apic_entry); CHECK_EQ(info.cpu[3].apic_id, 7);
}

TEST(acpi_disabled_cpu_skipped)
{
	arena_used = 0;
	madt_begin(0xfee00000, 256);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 0);            /* disabled */
	madt_lapic(2, 9, 2);            /* online-capable only: still not enabled */
	madt_x2apic(500, 3, 0);         /* disabled */
	madt_lapic(4, 4, 1);
	madt_lapic(5, 0xff, 1);         /* broadcast ID: invalid */
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.ncpus, 2);
	CHECK_EQ(info.cpu[0].apic_id, 0); CHECK_EQ(info.cpu[1].apic_id, 4);
	CHECK_EQ(info.max_apic_id, 4);
}

TEST(acpi_duplicate_apic_id)
{
	arena_used = 0;
	madt_begin(0xfee00000, 256);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 1);
	madt_x2apic(1, 7, 1);           /* same CPU listed again as x2APIC */
	madt_lapic(3, 0, 1);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.ncpus, 2);
	CHECK_EQ(info.cpu[1].apic_id, 1); CHECK_EQ(info.cpu[1].uid, 1);
	CHECK(!info.cpu[1].x2apic_entry); CHECK_CONTAINS(test_log(), "APIC ID 1 twice");
}

/* No fixed cap: 1068 CPUs all kept, with the room for phantomcpu= (one
 * more); with no memory for the lists every CPU is named as dropped in one
 * warning and the MADT counts as listing none. */
TEST(acpi_cpu_no_cap)
{
	arena_used = 0;
	madt_begin(0xfee00000, 1068 * 16);
	for (uint32_t i = 0; i < 1068; i++)
		madt_x2apic(i, i, 1);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.ncpus, 1068);
	CHECK_EQ(info.cpu_room, 1069);
	CHECK_EQ(info.max_apic_id, 1067);
	CHECK(!strstr(test_log(), "ignored"));
	acpi_print(&info);              /* past reportcpus=auto's 16: runs (lib/cpusum.h) */
	CHECK_CONTAINS(test_log(), "ACPI:   APIC ID/UID runs: 0-1067/0-1067(x2)\n");
	cpusum_set_limit(REPORT_CPUS_ALL);
	acpi_print(&info);              /* every CPU: the long list must not overflow */
	cpusum_set_limit(REPORT_CPUS_AUTO);
	CHECK_CONTAINS(test_log(), " 1067/1067(x2)");

	test_log_clear();
	acpi_alloc = NULL;
	CHECK_EQ(parse(with_madt_only()), -1); CHECK_CONTAINS(err, "no enabled CPUs");
	CHECK_CONTAINS(test_log(), "1068 enabled CPUs and 0 IOAPICs ignored");
}

/* A four-socket Sapphire Rapids MADT (issue 26): 60 cores a socket, two
 * threads, 480 CPUs. The APIC ID layout is this test's assumption, in the
 * shape CPUID leaf 0x1F reports on such parts: bit 0 the thread, bits 7:1
 * the core slot (sparse: every 16th slot unused), the package from bit 8,
 * so sockets 1-3 have IDs above 255. Firmware lists every thread 0 before
 * the threads 1 and, as the ACPI specification asks, IDs of 255 and above
 * in x2APIC structures (type 9), the others in type 0. */
#define SPR4S_SOCKETS 4
#define SPR4S_CORES   60
#define SPR4S_THREADS 2
#define APIC_PKG_SHIFT 8
#define XAPIC_ID_MAX  254
TEST(acpi_madt_four_socket_spr)
{
	arena_used = 0;
	uint32_t n = SPR4S_SOCKETS * SPR4S_CORES * SPR4S_THREADS, high = 0, max = 0;
	madt_begin(0xfee00000, n * 16);
	for (uint32_t t = 0; t < SPR4S_THREADS; t++)
		for (uint32_t p = 0; p < SPR4S_SOCKETS; p++)
			for (uint32_t c = 0; c < SPR4S_CORES; c++) {
				uint32_t slot = c + c / 15;                 /* every 16th slot unused */
				uint32_t id = p << APIC_PKG_SHIFT | slot << 1 | t;
				uint32_t uid = (t * SPR4S_SOCKETS + p) * SPR4S_CORES + c;
				if (id > XAPIC_ID_MAX) {
					madt_x2apic(id, uid, 1);
					high++;
				} else {
					madt_lapic((uint8_t)uid, (uint8_t)id, 1);
				}
				max = id > max ? id : max;
			}
	CHECK_EQ(parse(with_madt_only()), 0);
	CHECK_EQ(info.ncpus, n);
	CHECK_EQ(info.max_apic_id, max);
	uint32_t x2 = 0, above = 0;
	for (uint32_t i = 0; i < info.ncpus; i++) {
		x2 += info.cpu[i].x2apic_entry;
		above += info.cpu[i].apic_id > 255;
	}
	CHECK_EQ(x2, high);
	CHECK_EQ(above, (SPR4S_SOCKETS - 1) * SPR4S_CORES * SPR4S_THREADS);
	CHECK(!strstr(test_log(), "ignored"));
}

TEST(acpi_ioapic_no_cap)
{
	arena_used = 0;
	madt_begin(0xfee00000, 40 * 12 + 8);
	madt_lapic(0, 0, 1);
	for (uint32_t i = 0; i < 40; i++)
		madt_ioapic((uint8_t)i, 0xfec00000 + i * 0x1000, i * 24);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.nioapics, 40);
	CHECK_EQ(info.ioapic[39].gsi_base, 39 * 24); CHECK(!strstr(test_log(), "ignored"));
}

TEST(acpi_lapic_override)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_override(0xfed00000);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.lapic_addr, 0xfed00000);

	madt_begin(0xfee00000, 64);
	madt_override(0x100fee00000ull); /* above 4 GiB: ignored */
	madt_lapic(0, 0, 1);
	CHECK_EQ(parse(with_madt_only()), 0); CHECK_EQ(info.lapic_addr, 0xfee00000);
	CHECK_CONTAINS(test_log(), "above 4 GiB");
}

TEST(acpi_bad_rsdp_signature)
{
	struct tables t = std_v2();
	t.rsdp[3] = 'X';
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: RSDP signature bad");
	CHECK_EQ(acpi_parse(0, &info, err, sizeof err), -1); CHECK_CONTAINS(err, "RSDP");
}

TEST(acpi_bad_rsdp_checksum)
{
	struct tables t = std_v2();
	t.rsdp[9] ^= 1;                 /* inside the first 20 bytes */
	CHECK_EQ(parse(t.rsdp), -1); CHECK_CONTAINS(err, "ACPI: RSDP checksum bad");

	t = std_v2();
	t.rsdp[33] = 0x77;              /* reserved byte: only the extended sum covers it */
	CHECK_EQ(parse(t.rsdp), -1);
	CHECK_CONTAINS(err, "ACPI: RSDP extended checksum bad (sum 0x77)");

	t = std_v2();
	put32(t.rsdp + 20, 20);         /* v2 length too small */
	fix_sum(t.rsdp, 20, 8);
	CHECK_EQ(parse(t.rsdp), -1); CHECK_CONTAINS(err, "RSDP length 20 bad");
}

TEST(acpi_bad_xsdt_checksum)
{
	struct tables t = std_v2();
	t.root[8] += 0x10;              /* revision byte */
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: XSDT checksum bad (sum 0x10)");

	t = std_v2();
	memcpy(t.root, "XSDX", 4);
	CHECK_EQ(parse(t.rsdp), -1); CHECK_CONTAINS(err, "ACPI: XSDT signature bad");
}

TEST(acpi_bad_madt_checksum)
{
	struct tables t = std_v2();
	t.madt[40] ^= 0x5a;
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: MADT checksum bad (sum 0x5a)");
}

TEST(acpi_truncated_madt)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	uint8_t *r = with_madt_only();
	put32(madt + 4, 40);
	sdt_fix(madt);
	CHECK_EQ(parse(r), -1); CHECK_STR(err, "ACPI: MADT truncated (length 40 < 44)");
}

TEST(acpi_madt_entry_length_zero)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_entry(0x7f, 0);
	madt_len += 8;                  /* bytes after the bad entry */
	CHECK_EQ(parse(with_madt_only()), -1);
	CHECK_STR(err, "ACPI: MADT entry at offset 52 has length 0");
}

TEST(acpi_madt_entry_past_end)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 1);
	madt_entry(9, 16);
	madt_len -= 8;                  /* table ends mid-entry */
	CHECK_EQ(parse(with_madt_only()), -1);
	CHECK_STR(err, "ACPI: MADT entry at offset 60 runs past the table end");

	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_len += 1;                  /* a lone type byte */
	CHECK_EQ(parse(with_madt_only()), -1);
	CHECK_STR(err, "ACPI: MADT entry at offset 52 runs past the table end");
}

TEST(acpi_madt_entry_too_short)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	madt_entry(9, 8);               /* x2APIC entries are 16 bytes */
	CHECK_EQ(parse(with_madt_only()), -1);
	CHECK_CONTAINS(err, "ACPI: MADT entry at offset 52 (type 9) too short");
}

TEST(acpi_madt_no_enabled_cpus)
{
	arena_used = 0;
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 0);
	madt_ioapic(0, 0xfec00000, 0);
	CHECK_EQ(parse(with_madt_only()), -1); CHECK_CONTAINS(err, "MADT lists no enabled CPUs");
}

TEST(acpi_missing_madt)
{
	struct tables t = std_v2();
	paddr_t e[] = { 0, pa_of(t.fadt) };
	t.rsdp = rsdp_v2(pa_of(xsdt_new(e, 2)), 0);
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: no MADT in XSDT");
}

TEST(acpi_missing_fadt)
{
	struct tables t = std_v2();
	paddr_t e[] = { pa_of(t.madt) };
	t.rsdp = rsdp_v2(pa_of(xsdt_new(e, 1)), 0);
	CHECK_EQ(parse(t.rsdp), 0); CHECK_STR(err, "");
	CHECK_EQ(info.ncpus, 2); CHECK_EQ(info.fadt, 0);
	CHECK(!info.s5_valid); CHECK_EQ(info.pm1a_cnt, 0);
	CHECK_CONTAINS(test_log(), "no FADT in XSDT");
}

TEST(acpi_bad_fadt)
{
	struct tables t = std_v2();
	put32(t.fadt + 4, 40);
	sdt_fix(t.fadt);
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: FADT truncated (length 40 < 116)");

	t = std_v2();
	t.fadt[100] ^= 3;
	CHECK_EQ(parse(t.rsdp), -1); CHECK_STR(err, "ACPI: FADT checksum bad (sum 0x3)");
}

TEST(acpi_fadt_x_fields_and_reset)
{
	struct tables t = std_v2();
	gas_set(t.fadt + 172, 1, 0xb004);            /* X_PM1a_CNT in I/O space */
	gas_set(t.fadt + 184, 0, 0xfed80000);        /* X_PM1b_CNT in memory: not used */
	put32(t.fadt + 68, 0xb100);
	gas_set(t.fadt + 208, 1, 0xb008);            /* X_PM_TMR */
	put32(t.fadt + 112, (1u << 8) | (1u << 10));
	gas_set(t.fadt + 116, 1, 0xcf9);             /* RESET_REG */
	t.fadt[128] = 6;
	uint8_t *dsdt2 = dsdt_new(aml_s5_byte, sizeof aml_s5_byte);
	put64(t.fadt + 140, pa_of(dsdt2));          /* X_DSDT wins */
	sdt_fix(t.fadt);
	CHECK_EQ(parse(t.rsdp), 0); CHECK_EQ(info.pm1a_cnt, 0xb004);
	CHECK_EQ(info.pm1b_cnt, 0xb100); CHECK_EQ(info.pm_tmr_port, 0xb008);
	CHECK(info.pm_tmr_32bit); CHECK(info.reset_valid);
	CHECK_EQ(info.reset_space, ACPI_SPACE_IO); CHECK_EQ(info.reset_addr, 0xcf9);
	CHECK_EQ(info.reset_value, 6); CHECK_EQ(info.dsdt, pa_of(dsdt2));
	CHECK(info.s5_valid);
	acpi_print(&info);
	CHECK_CONTAINS(test_log(), "reset register space 1 addr 0xcf9 value 0x6");

	/* RESET_REG_SUP clear: the register is ignored. */
	put32(t.fadt + 112, 0);
	sdt_fix(t.fadt);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(!info.reset_valid);
}

static void set_dsdt(struct tables *t, const uint8_t *aml, size_t n)
{
	t->dsdt = dsdt_new(aml, n);
	put32(t->fadt + 40, (uint32_t)pa_of(t->dsdt));
	put64(t->fadt + 140, pa_of(t->dsdt));
	sdt_fix(t->fadt);
}

TEST(acpi_dsdt_without_s5)
{
	static const uint8_t aml[] = { 0x08, '_', 'S', '4', '_', 0x12, 0x06, 0x04, 0x00, 0x00, 0x00, 0x00 };
	struct tables t = std_v2();
	set_dsdt(&t, aml, sizeof aml);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(!info.s5_valid);
	CHECK_CONTAINS(test_log(), "no \\_S5_ in DSDT");

	/* "_S5_" only as a reference, never named: still no S5. */
	static const uint8_t ref[] = { 0x70, '_', 'S', '5', '_', 0x60 };
	set_dsdt(&t, ref, sizeof ref);
	test_log_clear();
	CHECK_EQ(parse(t.rsdp), 0); CHECK(!info.s5_valid);
	CHECK_CONTAINS(test_log(), "DSDT \\_S5_ not a package");

	/* A package running past the table end is not trusted. */
	static const uint8_t cut[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x20, 0x04, 0x0a, 0x05 };
	set_dsdt(&t, cut, sizeof cut);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(!info.s5_valid);
}

TEST(acpi_dsdt_bad_checksum_warns)
{
	struct tables t = std_v2();
	t.dsdt[20] ^= 1;
	CHECK_EQ(parse(t.rsdp), 0); CHECK(!info.s5_valid);
	CHECK_CONTAINS(test_log(), "ACPI: DSDT checksum bad");
}

TEST(acpi_s5_byteprefix)
{
	/* \_S5_ with a root prefix, SLP_TYPa 7 and SLP_TYPb 3, after a
	 * reference to _S5_ that is not a NameOp. */
	static const uint8_t aml[] = {
		0xa4, '_', 'S', '5', '_',
		0x08, '\\', '_', 'S', '5', '_', 0x12, 0x0a, 0x04, 0x0a, 0x07, 0x0a, 0x03, 0x0a, 0x00, 0x0a, 0x00,
	};
	struct tables t = std_v2();
	set_dsdt(&t, aml, sizeof aml);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 7); CHECK_EQ(info.slp_typb, 3);
}

TEST(acpi_s5_zero_one_ops)
{
	static const uint8_t aml[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x00, 0x01, 0x00, 0x00 };
	struct tables t = std_v2();
	set_dsdt(&t, aml, sizeof aml);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 0); CHECK_EQ(info.slp_typb, 1);

	static const uint8_t aml2[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x02, 0x01, 0x00 };
	set_dsdt(&t, aml2, sizeof aml2);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 1); CHECK_EQ(info.slp_typb, 0);
}

TEST(acpi_s5_raw_and_long_pkglength)
{
	/* A two-byte PkgLength (lead 0x48, then 0x00: length 8), a raw small
	 * integer and a WordPrefix element. */
	static const uint8_t aml[] = {
		0x08, '_', 'S', '5', '_', 0x12, 0x48, 0x00, 0x03, 0x05, 0x0b, 0x06, 0x00, 0x00,
	};
	struct tables t = std_v2();
	set_dsdt(&t, aml, sizeof aml);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 5); CHECK_EQ(info.slp_typb, 6);

	/* One-element form: a in bits 7:0, b in bits 15:8. */
	static const uint8_t one[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x05, 0x01, 0x0b, 0x05, 0x07 };
	set_dsdt(&t, one, sizeof one);
	CHECK_EQ(parse(t.rsdp), 0); CHECK(info.s5_valid);
	CHECK_EQ(info.slp_typa, 5); CHECK_EQ(info.slp_typb, 7);
}

TEST(acpi_null_err_buffer)
{
	struct tables t = std_v2();
	t.madt[40] ^= 1;
	CHECK_EQ(acpi_parse(pa_of(t.rsdp), &info, NULL, 0), -1);
	char small[12];
	CHECK_EQ(acpi_parse(pa_of(t.rsdp), &info, small, sizeof small), -1);
	CHECK_STR(small, "ACPI: MADT ");
}

/* An XSDT entry pointing outside memory is skipped before anything at it is
 * read (the host would fault on that address: ASan/SEGV if it were read),
 * and a MADT pointer outside memory is an error, not a read. */
TEST(acpi_xsdt_entry_outside_memory_not_read)
{
	struct tables t = std_v2();
	paddr_t lo = acpi_readable_lo, hi = acpi_readable_hi;
	paddr_t e[] = { 0xdead00000000ull, pa_of(t.madt), pa_of(t.fadt) };
	t.rsdp = rsdp_v2(pa_of(xsdt_new(e, 3)), 0);
	acpi_readable_lo = 0;
	acpi_readable_hi = 0x100000000000ull;               /* below the bogus entry */
	test_log_clear();
	CHECK_EQ(parse(t.rsdp), 0);
	CHECK_EQ(info.ncpus, 2);
	CHECK_CONTAINS(test_log(), "XSDT entry 0 points at 0xdead00000000, outside memory: skipped");
	paddr_t m[] = { 0xdead00000000ull };
	t.rsdp = rsdp_v2(pa_of(xsdt_new(m, 1)), 0);
	CHECK_EQ(parse(t.rsdp), -1);
	CHECK_STR(err, "ACPI: no MADT in XSDT");
	acpi_readable_lo = lo;
	acpi_readable_hi = hi;
}

/* MCFG (PCI Firmware Specification, "MCFG Table Description"): after the
 * 36-byte header and 8 reserved bytes, 16-byte entries: base address (8),
 * segment group (2), start bus (1), end bus (1), 4 reserved. Segment 0's
 * entry is kept apart; every entry is kept in table order (the MSI trap
 * scans and traps each segment). */
TEST(acpi_mcfg_segment0_and_others_counted)
{
	madt_begin(0xfee00000, 64);
	madt_lapic(0, 0, 1);
	uint8_t *m = sdt_new("MCFG", 44 + 3 * 16, 0);
	uint8_t *e = m + 44;
	put64(e, 0xe0000000ull), e[8] = 1, e[10] = 0, e[11] = 0x7f;          /* segment 1 first */
	put64(e + 16, 0xb0000000ull), e[16 + 10] = 0, e[16 + 11] = 0xff;     /* segment 0 */
	put64(e + 32, 0xd0000000ull), e[32 + 8] = 2, e[32 + 11] = 0x3f;     /* segment 2 */
	sdt_fix(m);
	paddr_t x[] = { pa_of(madt_end()), pa_of(m) };
	CHECK_EQ(parse(rsdp_v2(pa_of(xsdt_new(x, 2)), 0)), 0);
	CHECK_EQ(info.mcfg_base, 0xb0000000ull);
	CHECK_EQ(info.mcfg_bus_start, 0);
	CHECK_EQ(info.mcfg_bus_end, 0xff);
	CHECK_EQ(info.mcfg_other_segments, 2);
	CHECK_EQ(info.nmcfg, 3);
	CHECK_EQ(info.mcfg_entry[0].seg, 1);
	CHECK_EQ(info.mcfg_entry[0].base, 0xe0000000ull);
	CHECK_EQ(info.mcfg_entry[0].bus1, 0x7f);
	CHECK_EQ(info.mcfg_entry[2].seg, 2);
	CHECK_EQ(info.mcfg_entry[2].bus1, 0x3f);
}

/* Issue 43, item 8: a segment whose buses two MCFG entries share (0-127
 * at one base, 128-255 at another) is one segment with one ECAM base per
 * bus range; a later entry overlapping an earlier one's buses does not
 * take them (the first covering entry is the bus's). */
TEST(acpi_mcfg_one_base_per_bus_range)
{
	static struct acpi_info a;
	memset(&a, 0, sizeof a);
	a.nmcfg = 4;
	a.mcfg_entry[0] = (struct acpi_mcfg){ 0xe0000000u, 0, 0, 255 };
	a.mcfg_entry[1] = (struct acpi_mcfg){ 0x380000000000ull, 1, 0, 127 };
	a.mcfg_entry[2] = (struct acpi_mcfg){ 0x390000000000ull, 1, 128, 255 };
	a.mcfg_entry[3] = (struct acpi_mcfg){ 0x3a0000000000ull, 1, 100, 140 };
	CHECK_EQ(acpi_mcfg_base(&a, 0, 7), 0xe0000000u);
	CHECK_EQ(acpi_mcfg_base(&a, 1, 0), 0x380000000000ull);
	CHECK_EQ(acpi_mcfg_base(&a, 1, 120), 0x380000000000ull);
	CHECK_EQ(acpi_mcfg_base(&a, 1, 128), 0x390000000000ull);
	CHECK_EQ(acpi_mcfg_base(&a, 1, 255), 0x390000000000ull);
	CHECK_EQ(acpi_mcfg_base(&a, 2, 0), 0);
	uint16_t bdf = 0;
	CHECK(acpi_mcfg_bdf(&a, 1, 0x390000000000ull + (0x8108ull << 12) + 0x40, &bdf));
	CHECK_EQ(bdf, 0x8108);
	CHECK(!acpi_mcfg_bdf(&a, 1, 0x390000000000ull + (0x1000ull << 12), &bdf));   /* bus 16 there: the first entry's */
	CHECK(!acpi_mcfg_bdf(&a, 1, 0x3a0000000000ull + (0x7800ull << 12), &bdf));   /* bus 120: the first entry's */
	CHECK(acpi_mcfg_bdf(&a, 1, 0x380000000000ull + (0x7800ull << 12), &bdf));
	CHECK_EQ(bdf, 0x7800);
}
