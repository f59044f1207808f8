/* The guest's FADT copy and the tables its root tables leave out
 * (guest/acpi.c). From the ACPI specification (6.x), written out here:
 * "Fixed ACPI Description Table": signature "FACP", Flags at byte offset
 * 112 (4 bytes), bit 19 FORCE_APIC_PHYSICAL_DESTINATION_MODE; "System
 * Description Table Header": length at 4, checksum at 9 (all bytes sum to
 * 0); XSDT entries are 8-byte, RSDT entries 4-byte physical addresses from
 * offset 36; RSDP: RSDT address at 16, XSDT address at 24, checksums at 8
 * (first 20 bytes) and 32 (36 bytes). DMAR is the VT-d table (Intel VT-d
 * specification, "DMA Remapping Reporting Structure"). */
#include "test.h"
#include <sys/mman.h>
#include "../../guest/acpi.h"

static void p32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void p64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t g32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t g64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint8_t sum8(const uint8_t *p, size_t n) { uint8_t s = 0; while (n--) s = (uint8_t)(s + *p++); return s; }
static void fix(uint8_t *p, size_t n, size_t at) { p[at] = 0; p[at] = (uint8_t)-sum8(p, n); }
static void hdr(uint8_t *t, const char *sig, uint32_t len) { memcpy(t, sig, 4); p32(t + 4, len); t[8] = 6; }

TEST(guest_acpi_fadt_forces_physical_x2apic_and_dmar_is_hidden)
{
	uint8_t (*mem)[4096] = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return;
	uint8_t *rsdp = mem[0], *xsdt = mem[1], *rsdt = mem[1] + 2048, *madt = mem[2], *fadt = mem[3], *dmar = mem[4];
	uint8_t *out = mem[5];
	hdr(madt, "APIC", 52);
	madt[44] = 0; madt[45] = 8; madt[47] = 0; p32(madt + 48, 1);
	fix(madt, 52, 9);
	hdr(fadt, "FACP", 276);
	p32(fadt + 112, 0x000084a5);                 /* some flags, bit 19 clear */
	fix(fadt, 276, 9);
	hdr(dmar, "DMAR", 48);
	fix(dmar, 48, 9);
	hdr(xsdt, "XSDT", 36 + 3 * 8);
	p64(xsdt + 36, (uintptr_t)fadt); p64(xsdt + 44, (uintptr_t)dmar); p64(xsdt + 52, (uintptr_t)madt);
	fix(xsdt, 60, 9);
	hdr(rsdt, "RSDT", 36 + 3 * 4);
	p32(rsdt + 36, (uint32_t)(uintptr_t)fadt); p32(rsdt + 40, (uint32_t)(uintptr_t)dmar);
	p32(rsdt + 44, (uint32_t)(uintptr_t)madt);
	fix(rsdt, 48, 9);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	p32(rsdp + 16, (uint32_t)(uintptr_t)rsdt);
	p32(rsdp + 20, 36);
	p64(rsdp + 24, (uintptr_t)xsdt);
	fix(rsdp, 20, 8);
	fix(rsdp, 36, 32);

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
	CHECK_EQ(sum8(r, 20), 0);
	CHECK_EQ(sum8(r, 36), 0);
	for (int root = 0; root < 2; root++) {
		const uint8_t *t = root ? (const uint8_t *)(uintptr_t)g64(r + 24) : (const uint8_t *)(uintptr_t)g32(r + 16);
		unsigned w = root ? 8 : 4, len = g32(t + 4);
		CHECK(t >= out && t < out + 3 * 4096);
		CHECK_EQ(len, 36 + 2 * w);               /* DMAR left out */
		CHECK_EQ(sum8(t, len), 0);
		const uint8_t *f = NULL;
		for (unsigned o = 36; o + w <= len; o += w) {
			uint64_t e = w == 8 ? g64(t + o) : g32(t + o);
			const uint8_t *tab = (const uint8_t *)(uintptr_t)e;
			CHECK(memcmp(tab, "DMAR", 4) != 0);
			if (!memcmp(tab, "FACP", 4))
				f = tab;
		}
		CHECK(f && f != fadt);                   /* the copy, not the firmware's */
		if (!f)
			continue;
		CHECK_EQ(g32(f + 112), 0x000084a5u | (1u << 19));
		CHECK_EQ(sum8(f, 276), 0);
	}
	CHECK_EQ(g32(fadt + 112), 0x000084a5u);        /* the original untouched */
	CHECK_EQ(g32(xsdt + 4), 60);
	munmap(mem, 8 * 4096);
}

/* Linux without interrupt remapping addresses APIC IDs up to 255 (8-bit
 * IOAPIC and MSI destinations); the guest gets none, so a CPU above that
 * is not made a vCPU. */
#include "../../guest/setup.h"
TEST(guest_apic_ids_above_255_are_not_vcpus)
{
	CHECK(guest_apic_id_usable(0));
	CHECK(guest_apic_id_usable(255));
	CHECK(!guest_apic_id_usable(256));
	CHECK(!guest_apic_id_usable(0xffffffffu));
}
