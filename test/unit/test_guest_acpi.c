/* The guest's ACPI copies (guest/acpi.c): layouts from the ACPI
 * specification ("Root System Description Pointer", "System Description
 * Table Header", "Multiple APIC Description Table"), written out here. */
#include "test.h"
#include <sys/mman.h>
#include "../../guest/acpi.h"
#include "../../guest/setup.h"

/* Below 4 GiB (MAP_32BIT): RSDT entries are 32-bit physical addresses. */
static uint8_t (*mem)[4096];
static uint8_t *out;
#define OUT_SIZE 8192

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint8_t sum(const uint8_t *p, size_t n) { uint8_t s = 0; while (n--) s = (uint8_t)(s + *p++); return s; }
static void csum(uint8_t *p, size_t n, size_t at) { p[at] = 0; p[at] = (uint8_t)-sum(p, n); }

static void header(uint8_t *t, const char *sig, uint32_t len)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = 1;
	memcpy(t + 10, "HVTEST", 6);
}

/* RSDP rev 2 -> XSDT and RSDT -> MADT with local APICs 0, 1, 2 (type 0),
 * x2APIC 0x100 (type 9), one disabled local APIC 7, and an IOAPIC (type 1). */
static paddr_t build(void)
{
	memset(mem, 0, 4 * 4096);
	uint8_t *rsdp = mem[0], *xsdt = mem[1], *rsdt = mem[1] + 2048, *madt = mem[2];
	uint32_t o = 44;
	header(madt, "APIC", 0);
	put32(madt + 36, 0xfee00000);
	for (int id = 0; id < 3; id++, o += 8) {
		madt[o] = 0; madt[o + 1] = 8; madt[o + 2] = (uint8_t)id; madt[o + 3] = (uint8_t)id; put32(madt + o + 4, 1);
	}
	madt[o] = 0; madt[o + 1] = 8; madt[o + 2] = 9; madt[o + 3] = 7; put32(madt + o + 4, 0); o += 8;
	madt[o] = 1; madt[o + 1] = 12; madt[o + 2] = 2; put32(madt + o + 4, 0xfec00000); o += 12;
	madt[o] = 9; madt[o + 1] = 16; put32(madt + o + 4, 0x100); put32(madt + o + 8, 1); put32(madt + o + 12, 5); o += 16;
	put32(madt + 4, o);
	csum(madt, o, 9);
	header(xsdt, "XSDT", 36 + 8);
	put64(xsdt + 36, (uint64_t)(uintptr_t)madt);
	csum(xsdt, 44, 9);
	header(rsdt, "RSDT", 36 + 4);
	put32(rsdt + 36, (uint32_t)(uintptr_t)madt);
	csum(rsdt, 40, 9);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	put32(rsdp + 16, (uint32_t)(uintptr_t)rsdt);
	put32(rsdp + 20, 36);
	put64(rsdp + 24, (uint64_t)(uintptr_t)xsdt);
	csum(rsdp, 20, 8);
	csum(rsdp, 36, 32);
	return (paddr_t)(uintptr_t)rsdp;
}

static uint32_t madt_flags_of(const uint8_t *madt, uint32_t id)
{
	uint32_t len = get32(madt + 4);
	for (uint32_t o = 44; o < len; o += madt[o + 1]) {
		if (madt[o] == 0 && madt[o + 3] == id)
			return get32(madt + o + 4);
		if (madt[o] == 9 && get32(madt + o + 4) == id)
			return get32(madt + o + 8);
	}
	return 0xdead;
}

/* A DSDT with Name(_S3_, ...), Name(\\_S4_, ...), Name(_S5_, ...) and a
 * method called _S3_ elsewhere (no NameOp before it): only the first two go. */
TEST(guest_acpi_hides_s1_to_s4)
{
	static uint8_t d[128];
	memset(d, 0, sizeof d);
	header(d, "DSDT", 80);
	static const uint8_t body[] = { 0x08, '_', 'S', '3', '_', 0x12, 0x04, 0x01, 0x0a, 0x05,
					0x08, '\\', '_', 'S', '4', '_', 0x12, 0x04, 0x01, 0x0a, 0x06,
					0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x01, 0x0a, 0x00,
					0x14, '_', 'S', '3', '_', 0x00 };
	memcpy(d + 36, body, sizeof body);
	csum(d, 80, 9);
	CHECK_EQ(acpi_hide_sleep_states((paddr_t)(uintptr_t)d), 2);
	CHECK(!memcmp(d + 37, "XS3_", 4));
	CHECK(!memcmp(d + 48, "XS4_", 4));
	CHECK(!memcmp(d + 58, "_S5_", 4));
	CHECK(!memcmp(d + 68, "_S3_", 4));
	CHECK_EQ(sum(d, 80), 0);
	CHECK_EQ(acpi_hide_sleep_states((paddr_t)(uintptr_t)d), 0);     /* idempotent */
	CHECK_EQ(acpi_hide_sleep_states(0), 0);
}

TEST(guest_acpi_copy_disables_non_vcpus)
{
	mem = mmap(NULL, 4 * 4096 + OUT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	out = (uint8_t *)mem + 4 * 4096;
	struct acpi_info a;
	char err[160];
	paddr_t rs = build();
	CHECK_EQ(acpi_parse(rs, &a, err, sizeof err), 0);
	CHECK_EQ(a.ncpus, 4);                            /* 0, 1, 2, 0x100 */
	const uint32_t ids[] = { 0, 1 };
	paddr_t copy, out_pa = (paddr_t)(uintptr_t)out;
	uint32_t disabled = 99;
	CHECK_EQ(acpi_guest_copy(&a, ids, 2, out, OUT_SIZE, out_pa, &copy, &disabled, err, sizeof err), 0);
	CHECK_EQ(disabled, 2);                           /* APIC 2 and x2APIC 0x100 */
	CHECK_EQ(copy, out_pa);
	/* Every copy checksums to 0, and the originals are untouched. */
	const uint8_t *r = out;
	CHECK(!memcmp(r, "RSD PTR ", 8));
	CHECK_EQ(sum(r, 20), 0);
	CHECK_EQ(sum(r, 36), 0);
	const uint8_t *x = (const uint8_t *)(uintptr_t)get64(r + 24), *t = (const uint8_t *)(uintptr_t)get32(r + 16);
	CHECK(x >= out && x < out + OUT_SIZE);
	CHECK_EQ(sum(x, get32(x + 4)), 0);
	const uint8_t *m = (const uint8_t *)(uintptr_t)get64(x + 36);
	CHECK(m >= out && m < out + OUT_SIZE);
	CHECK_EQ(sum(m, get32(m + 4)), 0);
	CHECK_EQ(madt_flags_of(m, 0), 1);
	CHECK_EQ(madt_flags_of(m, 1), 1);
	CHECK_EQ(madt_flags_of(m, 2), 0);
	CHECK_EQ(madt_flags_of(m, 0x100), 0);
	CHECK_EQ(madt_flags_of(m, 7), 0);
	CHECK_EQ(madt_flags_of(mem[2], 2), 1);           /* original */
	CHECK(t >= out && t < out + OUT_SIZE);
	CHECK_EQ(sum(t, get32(t + 4)), 0);
	CHECK_EQ(get32(t + 36), (uint32_t)(uintptr_t)m);
	/* The copy parses, and the guest sees exactly its vCPUs. */
	struct acpi_info g;
	CHECK_EQ(acpi_parse(copy, &g, err, sizeof err), 0);
	CHECK_EQ(g.ncpus, 2);
	CHECK_EQ(g.cpu[0].apic_id, 0);
	CHECK_EQ(g.cpu[1].apic_id, 1);
	CHECK_EQ(g.nioapics, 1);
	/* Too small a buffer: a clear error, not a partial copy. */
	CHECK_EQ(acpi_guest_copy(&a, ids, 2, out, 64, out_pa, &copy, &disabled, err, sizeof err), -1);
	CHECK_CONTAINS(err, "does not fit");
	munmap(mem, 4 * 4096 + OUT_SIZE);
}

/* The MADT copy hides every CPU the guest does not get: both flags that let
 * an OS use it go. ACPI 6.3+, "Multiple APIC Description Table", Local APIC
 * (type 0, 8 bytes: uid at 2, APIC ID at 3, flags at 4) and Local x2APIC
 * (type 9, 16 bytes: x2APIC ID at 4, flags at 8, uid at 12) flags: bit 0
 * Enabled, bit 1 Online Capable (an OS may enable a CPU whose Enabled is 0
 * and Online Capable is 1 at run time). The guest's own entries keep theirs. */
#define MADT_F_ENABLED 1u
#define MADT_F_ONLINE_CAPABLE 2u
TEST(guest_acpi_copy_clears_enabled_and_online_capable)
{
	static const struct { uint8_t type; uint32_t id, flags, want; } e[] = {
		{ 0, 0, MADT_F_ENABLED, MADT_F_ENABLED },                                  /* the guest's */
		{ 0, 1, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE, 0 },
		{ 0, 2, MADT_F_ONLINE_CAPABLE, 0 },                                        /* hot-pluggable */
		{ 0, 3, MADT_F_ENABLED, 0 },
		{ 0, 4, 0, 0 },                                                            /* unusable already */
		{ 0, 5, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE }, /* the guest's */
		{ 9, 0x200, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE }, /* the guest's */
		{ 9, 0x201, MADT_F_ENABLED | MADT_F_ONLINE_CAPABLE, 0 },
		{ 9, 0x202, MADT_F_ONLINE_CAPABLE, 0 },
		{ 9, 0x203, MADT_F_ENABLED, 0 },
		{ 9, 0x204, 0, 0 },
	};
	const uint32_t ids[] = { 0, 5, 0x200 };
	const uint32_t want_disabled = 6;   /* the entries with a flag set that are not the guest's */
	mem = mmap(NULL, 4 * 4096 + OUT_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	out = (uint8_t *)mem + 4 * 4096;
	memset(mem, 0, 4 * 4096);
	uint8_t *rsdp = mem[0], *xsdt = mem[1], *madt = mem[2];
	uint32_t o = 44;
	header(madt, "APIC", 0);
	put32(madt + 36, 0xfee00000);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		madt[o] = e[i].type;
		if (e[i].type == 0) {
			madt[o + 1] = 8; madt[o + 2] = (uint8_t)i; madt[o + 3] = (uint8_t)e[i].id;
			put32(madt + o + 4, e[i].flags);
		} else {
			madt[o + 1] = 16; put32(madt + o + 4, e[i].id); put32(madt + o + 8, e[i].flags);
			put32(madt + o + 12, (uint32_t)i);
		}
		o += madt[o + 1];
	}
	put32(madt + 4, o);
	csum(madt, o, 9);
	header(xsdt, "XSDT", 36 + 8);
	put64(xsdt + 36, (uint64_t)(uintptr_t)madt);
	csum(xsdt, 44, 9);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	put32(rsdp + 20, 36);
	put64(rsdp + 24, (uint64_t)(uintptr_t)xsdt);
	csum(rsdp, 20, 8);
	csum(rsdp, 36, 32);
	uint8_t orig[4096];
	memcpy(orig, madt, o);

	struct acpi_info a;
	char err[160];
	CHECK_EQ(acpi_parse((paddr_t)(uintptr_t)rsdp, &a, err, sizeof err), 0);
	paddr_t copy, out_pa = (paddr_t)(uintptr_t)out;
	uint32_t disabled = 99;
	CHECK_EQ(acpi_guest_copy(&a, ids, ARRAY_SIZE(ids), out, OUT_SIZE, out_pa, &copy, &disabled, err, sizeof err), 0);
	CHECK_EQ(disabled, want_disabled);
	const uint8_t *x = (const uint8_t *)(uintptr_t)get64(out + 24);
	CHECK(x >= out && x < out + OUT_SIZE);
	const uint8_t *m = (const uint8_t *)(uintptr_t)get64(x + 36);
	CHECK(m >= out && m < out + OUT_SIZE);
	CHECK_EQ(get32(m + 4), o);
	CHECK_EQ(sum(m, o), 0);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		uint32_t got = madt_flags_of(m, e[i].id);
		if (got != e[i].want)
			printf("    MADT %s ID 0x%x: flags 0x%x in the copy, want 0x%x (firmware 0x%x)\n",
			       e[i].type ? "x2APIC" : "local APIC", e[i].id, got, e[i].want, e[i].flags);
		CHECK_EQ(got, e[i].want);
	}
	/* Only flags changed: every other byte of the copy (but the checksum) is the firmware's. */
	uint32_t changed = 0;
	for (uint32_t b = 0; b < o; b++)
		changed += b != 9 && m[b] != orig[b];
	CHECK_EQ(changed, want_disabled);   /* one flags byte (bits 0 and 1 live in byte 0) per hidden CPU */
	CHECK(!memcmp(madt, orig, o));      /* the firmware's table untouched */
	munmap(mem, 4 * 4096 + OUT_SIZE);
}

/* The FADT copy and the tables the root copies leave out (ACPI 6.x, "Fixed
 * ACPI Description Table": Flags at byte offset 112, bit 19
 * FORCE_APIC_PHYSICAL_DESTINATION_MODE; DMAR is VT-d's table, Intel VT-d
 * specification, "DMA Remapping Reporting Structure"). */
TEST(guest_acpi_fadt_forces_physical_x2apic_and_dmar_is_hidden)
{
	uint8_t (*mem)[4096] = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	uint8_t *rsdp = mem[0], *xsdt = mem[1], *rsdt = mem[1] + 2048, *madt = mem[2], *fadt = mem[3], *dmar = mem[4];
	uint8_t *out = mem[5];
	header(madt, "APIC", 52);
	madt[44] = 0; madt[45] = 8; madt[47] = 0; put32(madt + 48, 1);
	csum(madt, 52, 9);
	header(fadt, "FACP", 276);
	put32(fadt + 112, 0x000084a5);                 /* some flags, bit 19 clear */
	csum(fadt, 276, 9);
	header(dmar, "DMAR", 48);
	csum(dmar, 48, 9);
	header(xsdt, "XSDT", 36 + 3 * 8);
	put64(xsdt + 36, (uintptr_t)fadt); put64(xsdt + 44, (uintptr_t)dmar); put64(xsdt + 52, (uintptr_t)madt);
	csum(xsdt, 60, 9);
	header(rsdt, "RSDT", 36 + 3 * 4);
	put32(rsdt + 36, (uint32_t)(uintptr_t)fadt); put32(rsdt + 40, (uint32_t)(uintptr_t)dmar);
	put32(rsdt + 44, (uint32_t)(uintptr_t)madt);
	csum(rsdt, 48, 9);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	put32(rsdp + 16, (uint32_t)(uintptr_t)rsdt);
	put32(rsdp + 20, 36);
	put64(rsdp + 24, (uintptr_t)xsdt);
	csum(rsdp, 20, 8);
	csum(rsdp, 36, 32);

	struct acpi_info a;
	memset(&a, 0, sizeof a);
	a.rsdp = (uintptr_t)rsdp; a.rsdp_revision = 2; a.root = (uintptr_t)xsdt;
	a.madt = (uintptr_t)madt; a.fadt = (uintptr_t)fadt;
	const uint32_t ids[] = { 0 };
	paddr_t copy;
	uint32_t disabled;
	char err[160];
	CHECK_EQ(acpi_guest_copy(&a, ids, 1, out, 3 * 4096, (uintptr_t)out, &copy, &disabled, err, sizeof err), 0);
	CHECK_EQ(acpi_guest_hidden(), 1);
	const uint8_t *r = (const uint8_t *)(uintptr_t)copy;
	CHECK_EQ(sum(r, 20), 0);
	CHECK_EQ(sum(r, 36), 0);
	for (int root = 0; root < 2; root++) {
		const uint8_t *t = root ? (const uint8_t *)(uintptr_t)get64(r + 24) : (const uint8_t *)(uintptr_t)get32(r + 16);
		unsigned w = root ? 8 : 4, len = get32(t + 4);
		CHECK(t >= out && t < out + 3 * 4096);
		CHECK_EQ(len, 36 + 2 * w);               /* DMAR left out */
		CHECK_EQ(sum(t, len), 0);
		const uint8_t *f = NULL;
		for (unsigned o = 36; o + w <= len; o += w) {
			uint64_t e = w == 8 ? get64(t + o) : get32(t + o);
			const uint8_t *tab = (const uint8_t *)(uintptr_t)e;
			CHECK(memcmp(tab, "DMAR", 4) != 0);
			if (!memcmp(tab, "FACP", 4))
				f = tab;
		}
		CHECK(f && f != fadt);                   /* the copy, not the firmware's */
		if (!f)
			continue;
		CHECK_EQ(get32(f + 112), 0x000084a5u | (1u << 19));
		CHECK_EQ(sum(f, 276), 0);
	}
	CHECK_EQ(get32(fadt + 112), 0x000084a5u);        /* the original untouched */
	CHECK_EQ(get32(xsdt + 4), 60);
	munmap(mem, 8 * 4096);
}

/* Linux without interrupt remapping addresses APIC IDs up to 255 (8-bit
 * IOAPIC and MSI destinations); the guest gets none, so a CPU above that
 * is not made a vCPU, unless the hypervisor owns remapping (intremap=on):
 * then the guest has MSI_EXT_DEST_ID (15 bits, up to 32767) and the IRTEs
 * 32-bit destinations. */
TEST(guest_apic_ids_above_255_are_not_vcpus)
{
	CHECK(guest_apic_id_usable(0, false));
	CHECK(guest_apic_id_usable(255, false));
	CHECK(!guest_apic_id_usable(256, false));
	CHECK(!guest_apic_id_usable(0xffffffffu, false));
	CHECK(guest_apic_id_usable(256, true));
	CHECK(guest_apic_id_usable(32767, true));
	CHECK(!guest_apic_id_usable(32768, true));
}

/* An ACPI 1.0 firmware: RSDP revision 0 (20 bytes, RSDT only) and a FADT of
 * 116 bytes, ACPI 1.0's whole table, which ends with its Flags (byte
 * offset 112, 4 bytes; the same place in every later revision): the copy
 * gets bit 19 (FORCE_APIC_PHYSICAL_DESTINATION_MODE) like a longer FADT,
 * its checksum fixed. */
TEST(guest_acpi_fadt_of_116_bytes_gets_the_flag)
{
	uint8_t (*mem)[4096] = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	uint8_t *rsdp = mem[0], *rsdt = mem[1], *madt = mem[2], *fadt = mem[3], *out = mem[5];
	header(madt, "APIC", 52);
	madt[44] = 0; madt[45] = 8; madt[47] = 0; put32(madt + 48, 1);
	csum(madt, 52, 9);
	header(fadt, "FACP", 116);
	put32(fadt + 112, 0x000000a5);                 /* ACPI 1.0 flags, bit 19 clear */
	csum(fadt, 116, 9);
	header(rsdt, "RSDT", 36 + 2 * 4);
	put32(rsdt + 36, (uint32_t)(uintptr_t)fadt); put32(rsdt + 40, (uint32_t)(uintptr_t)madt);
	csum(rsdt, 44, 9);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 0;
	put32(rsdp + 16, (uint32_t)(uintptr_t)rsdt);
	csum(rsdp, 20, 8);

	struct acpi_info a;
	memset(&a, 0, sizeof a);
	a.rsdp = (uintptr_t)rsdp; a.rsdp_revision = 0; a.root = (uintptr_t)rsdt;
	a.madt = (uintptr_t)madt; a.fadt = (uintptr_t)fadt;
	const uint32_t ids[] = { 0 };
	paddr_t copy;
	uint32_t disabled;
	char err[160];
	CHECK_EQ(acpi_guest_copy(&a, ids, 1, out, 3 * 4096, (uintptr_t)out, &copy, &disabled, err, sizeof err), 0);
	const uint8_t *r = (const uint8_t *)(uintptr_t)copy;
	const uint8_t *t = (const uint8_t *)(uintptr_t)get32(r + 16);
	CHECK_EQ(sum(r, 20), 0);
	CHECK(!memcmp(t, "RSDT", 4));
	const uint8_t *f = (const uint8_t *)(uintptr_t)get32(t + 36);
	CHECK(f != fadt && !memcmp(f, "FACP", 4));
	CHECK_EQ(get32(f + 4), 116);
	CHECK_EQ(get32(f + 112), 0x000000a5u | (1u << 19));
	CHECK_EQ(sum(f, 116), 0);
	munmap(mem, 8 * 4096);
}
