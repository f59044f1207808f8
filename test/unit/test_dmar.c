/* The DMAR parser (lib/dmar.c) on tables built here: one like QEMU's
 * intel-iommu (a DRHD with endpoint and IOAPIC scopes), then every
 * structure type, then the catalog of broken tables, each refused with a
 * message naming the structure and the fault. */
#include "test.h"
#include "../../lib/dmar.h"

static uint8_t tab[1024];
static uint32_t tlen;
static struct dmar_info info;
static char err[200];

/* Counted, room from the heap, parsed: the hypervisor's two passes. */
static void *room;
static int dparse(const uint8_t *t, uint64_t avail, struct dmar_info *d, char *e, size_t elen)
{
	struct dmar_counts c;
	if (dmar_count(t, avail, &c, e, elen))
		return -1;
	free(room);
	room = malloc(dmar_bytes(&c) + 1);
	dmar_place(d, &c, room);
	return dmar_parse(t, avail, d, e, elen);
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void fix(void)
{
	uint8_t s = 0;
	put32(tab + 4, tlen);
	tab[9] = 0;
	for (uint32_t i = 0; i < tlen; i++)
		s = (uint8_t)(s + tab[i]);
	tab[9] = (uint8_t)-s;
}

static void begin(uint8_t haw_field, uint8_t flags)
{
	memset(tab, 0, sizeof tab);
	memcpy(tab, "DMAR", 4);
	tab[8] = 1;
	memcpy(tab + 10, "HVTEST", 6);
	tab[36] = haw_field;
	tab[37] = flags;
	tlen = 48;
}

/* A structure header at the end; returns its start. */
static uint8_t *add(uint16_t type, uint16_t len)
{
	uint8_t *s = tab + tlen;
	put16(s, type);
	put16(s + 2, len);
	tlen += len;
	return s;
}

static void scope(uint8_t *at, uint8_t type, uint8_t id, uint8_t bus, uint8_t dev, uint8_t fn)
{
	at[0] = type;
	at[1] = 8;
	at[4] = id;
	at[5] = bus;
	at[6] = dev;
	at[7] = fn;
}

static uint8_t *drhd(uint8_t flags, uint64_t base, int nscopes)
{
	uint8_t *s = add(DMAR_DRHD, (uint16_t)(16 + 8 * nscopes));
	s[4] = flags;
	put64(s + 8, base);
	for (int i = 0; i < nscopes; i++)
		scope(s + 16 + 8 * i, DMAR_SCOPE_ENDPOINT, 0, 0, (uint8_t)(i + 1), 0);
	return s;
}

static uint8_t *rmrr(uint64_t base, uint64_t limit, int nscopes)
{
	uint8_t *s = add(DMAR_RMRR, (uint16_t)(24 + 8 * nscopes));
	put64(s + 8, base);
	put64(s + 16, limit);
	for (int i = 0; i < nscopes; i++)
		scope(s + 24 + 8 * i, DMAR_SCOPE_ENDPOINT, 0, 0, 0x14, 0);
	return s;
}

static int parse(void) { fix(); return dparse(tab, sizeof tab, &info, err, sizeof err); }

TEST(dmar_qemu_like)
{
	begin(47, DMAR_F_INTR_REMAP);
	uint8_t *d = drhd(0, 0xfed90000, 3);
	(void)d;
	CHECK_EQ(parse(), 0);
	CHECK_EQ(info.haw, 48);
	CHECK_EQ(info.ndrhd, 1);
	CHECK_EQ(info.drhd[0].base, 0xfed90000);
	CHECK_EQ(info.drhd[0].n, 3);
	CHECK_EQ(info.scope[info.drhd[0].first + 2].path[0][0], 3);
	CHECK_EQ(info.nrmrr + info.natsr, 0);
}

TEST(dmar_every_structure)
{
	begin(38, 0);
	drhd(0, 0xfed91000, 1);
	uint8_t *all = drhd(DMAR_DRHD_INCLUDE_PCI_ALL, 0xfed90000, 0);
	all[6] = 0;
	uint8_t *io = add(DMAR_DRHD, 24);            /* segment 1: an IOAPIC scope */
	put16(io + 6, 1);
	put64(io + 8, 0xfed92000);
	scope(io + 16, DMAR_SCOPE_IOAPIC, 8, 0xf0, 0x1f, 0);
	rmrr(0x7f000000, 0x7f0fffff, 2);
	uint8_t *a = add(DMAR_ATSR, 16);
	a[4] = DMAR_ATSR_ALL_PORTS;
	scope(a + 8, DMAR_SCOPE_BRIDGE, 0, 0, 1, 0);
	uint8_t *h = add(DMAR_RHSA, 20);
	put64(h + 8, 0xfed90000);
	uint8_t *n = add(DMAR_ANDD, 12);
	n[7] = 1;
	memcpy(n + 8, "\\_SB", 4);
	uint8_t *sa = add(DMAR_SATC, 16);            /* SATC: one endpoint, ATC required */
	sa[4] = DMAR_SATC_ATC_REQUIRED;
	scope(sa + 8, DMAR_SCOPE_ENDPOINT, 0, 0, 2, 0);
	add(6, 16);                                  /* a later type (SIDP): skipped, named */
	CHECK_EQ(parse(), 0);
	CHECK_EQ(info.haw, 39);
	CHECK_EQ(info.ndrhd, 3);
	CHECK(info.drhd[1].flags & DMAR_DRHD_INCLUDE_PCI_ALL);
	CHECK_EQ(info.drhd[2].segment, 1);
	CHECK_EQ(info.scope[info.drhd[2].first].type, DMAR_SCOPE_IOAPIC);
	CHECK_EQ(info.scope[info.drhd[2].first].enum_id, 8);
	CHECK_EQ(info.nrmrr, 1);
	CHECK_EQ(info.rmrr[0].limit, 0x7f0fffff);
	CHECK_EQ(info.rmrr[0].n, 2);
	CHECK_EQ(info.natsr, 1);
	CHECK(info.atsr[0].flags & DMAR_ATSR_ALL_PORTS);
	CHECK_EQ(info.nrhsa, 1);
	CHECK_EQ(info.nandd, 1);
	CHECK_EQ(info.nsatc, 1);
	CHECK(info.satc[0].flags & DMAR_SATC_ATC_REQUIRED);
	CHECK_EQ(info.nunknown, 1);
	CHECK_EQ(info.unknown_types, 1ull << 6);
	CHECK_EQ(info.nscopes, 6);
	test_log_clear();
	dmar_print(&info);
	CHECK_CONTAINS(test_log(), "1 SATC, 1 ANDD, 1 other, 6 device scopes");
	CHECK_CONTAINS(test_log(), "1 structure of types this parser does not know skipped (types 6)");
}

/* The catalog: each broken table refused, the message naming the fault. */
TEST(catalog_dmar)
{
	uint8_t *s;
	begin(47, 0); drhd(0, 0xfed90000, 1); fix(); tab[0] = 'X';
	CATALOG("DMAR with signature XMAR", dparse(tab, sizeof tab, &info, err, sizeof err), err, "DMAR: signature bad");
	begin(47, 0); drhd(0, 0xfed90000, 1); fix(); tab[20] ^= 1;
	CATALOG("DMAR with a bad checksum", dparse(tab, sizeof tab, &info, err, sizeof err), err, "DMAR: checksum bad");
	begin(47, 0); drhd(0, 0xfed90000, 1); fix();
	CATALOG("DMAR with 40 bytes readable", dparse(tab, 40, &info, err, sizeof err), err, "DMAR: only 40 bytes readable");
	CATALOG("DMAR running past readable memory", dparse(tab, 60, &info, err, sizeof err), err, "runs outside memory");
	begin(47, 0); fix(); put32(tab + 4, 40);
	CATALOG("DMAR with length 40", dparse(tab, sizeof tab, &info, err, sizeof err), err, "DMAR: truncated (length 40 < 48)");
	begin(47, 0);
	CATALOG("DMAR without a DRHD", parse(), err, "DMAR: no DRHD");
	begin(5, 0); drhd(0, 0xfed90000, 0);
	CATALOG("DMAR with host address width 6", parse(), err, "host address width 6 bits implausible");
	begin(47, 0); drhd(0, 0xfed90000, 0); tlen += 2;
	CATALOG("DMAR with 2 bytes after the last structure", parse(), err, "structure 1 at offset 0x40 truncated");
	begin(47, 0); s = drhd(0, 0xfed90000, 0); put16(s + 2, 12); tlen -= 4;
	CATALOG("DRHD of length 12", parse(), err, "structure 0 (DRHD) at offset 0x30 has length 12 (at least 16)");
	begin(47, 0); s = rmrr(0x1000, 0x1fff, 1); put16(s + 2, 20); tlen -= 12;
	CATALOG("RMRR of length 20", parse(), err, "(RMRR) at offset 0x30 has length 20 (at least 24)");
	begin(47, 0); drhd(0, 0xfed90000, 0); s = add(DMAR_RHSA, 12);
	CATALOG("RHSA of length 12", parse(), err, "structure 1 (RHSA) at offset 0x40 has length 12 (at least 20)");
	begin(47, 0); drhd(0, 0xfed90000, 0); s = add(DMAR_ATSR, 6);
	CATALOG("ATSR of length 6", parse(), err, "structure 1 (ATSR) at offset 0x40 has length 6 (at least 8)");
	begin(47, 0); s = drhd(0, 0xfed90000, 1); put16(s + 2, 200);
	CATALOG("DRHD running past the table", parse(), err, "(DRHD) at offset 0x30 (length 200) runs past the table");
	begin(47, 0); drhd(0, 0, 0);
	CATALOG("DRHD with register base 0", parse(), err, "register base 0x0 is 0");
	begin(47, 0); drhd(0, 0xfed90800, 0);
	CATALOG("DRHD with a misaligned register base", parse(), err, "register base 0xfed90800 is not 4 KiB aligned");
	begin(47, 0); drhd(DMAR_DRHD_INCLUDE_PCI_ALL, 0xfed90000, 0); drhd(0, 0xfed91000, 1);
	CATALOG("DRHD after the INCLUDE_PCI_ALL one", parse(), err, "follows the INCLUDE_PCI_ALL DRHD of segment 0");
	begin(47, 0); s = drhd(0, 0xfed90000, 1); s[16 + 1] = 7;
	CATALOG("device scope of odd length 7", parse(), err, "device scope at +0x0 has length 7");
	begin(47, 0); s = drhd(0, 0xfed90000, 1); s[16 + 1] = 6;
	CATALOG("device scope without a path", parse(), err, "device scope at +0x0 has length 6");
	begin(47, 0); s = drhd(0, 0xfed90000, 1); s[16 + 1] = 10;
	CATALOG("device scope running past its DRHD", parse(), err, "device scope at +0x0 (length 10) runs past the structure");
	begin(47, 0); s = drhd(0, 0xfed90000, 2); s[24] = 9;
	CATALOG("device scope of type 9", parse(), err, "device scope at +0x8 has type 9");
	begin(47, 0); s = drhd(0, 0xfed90000, 1); s[16 + 6] = 32;
	CATALOG("device scope with device 32", parse(), err, "path entry 0 is 32.0");
	begin(47, 0); s = drhd(0, 0xfed90000, 0); put16(s + 2, 20); tlen += 4;
	CATALOG("DRHD with a 4-byte scope", parse(), err, "device scope at +0x0 truncated (4 bytes left)");
	begin(47, 0); drhd(0, 0xfed90000, 0); rmrr(0x2000, 0xfff, 1);
	CATALOG("RMRR with its limit below its base", parse(), err, "structure 1 (RMRR) at offset 0x40: limit 0xfff below base 0x2000");
	begin(47, 0); drhd(0, 0xfed90000, 0); rmrr(0x2000, 0x27ff, 1);
	CATALOG("RMRR not whole pages", parse(), err, "[0x2000, 0x27ff] is not whole 4 KiB pages");
	begin(47, 0); drhd(0, 0xfed90000, 0); rmrr(0x2000, 0x2fff, 0);
	CATALOG("RMRR without a device scope", parse(), err, "structure 1 (RMRR) at offset 0x40: no device scope");
	begin(47, 0); drhd(0, 0xfed90000, 0); s = add(DMAR_RHSA, 20); put64(s + 8, 0xfed90010);
	CATALOG("RHSA with a misaligned base", parse(), err, "(RHSA) at offset 0x40: register base 0xfed90010 not 4 KiB aligned");
}
