/* The guest's copies of RSDP, XSDT/RSDT, MADT and FADT (see acpi.h). */
#include "acpi.h"
#include "../lib/string.h"
#include "../lib/printk.h"

#define SDT_HEADER 36
#define MADT_FIXED 44
#define MADT_LAPIC 0
#define MADT_X2APIC 9
#define MADT_ENABLED_ONLINE 3u     /* flags bits 0 and 1 */
#define FADT_FLAGS 112             /* FADT "Flags", 4 bytes (ACPI 6.x, "Fixed ACPI Description Table") */
#define FADT_APIC_PHYSICAL BIT(19) /* FORCE_APIC_PHYSICAL_DESTINATION_MODE */

static const uint8_t *phys(paddr_t pa) { return (const uint8_t *)(uintptr_t)pa; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Sets the byte at 'at' so that the n bytes at p sum to 0. */
static void fix_checksum(uint8_t *p, size_t n, size_t at)
{
	uint8_t s = 0;
	p[at] = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	p[at] = (uint8_t)-s;
}

static bool is_vcpu(const uint32_t *ids, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Copies a table into buf at *off (8-byte aligned); returns the copy or NULL. */
static uint8_t *take(uint8_t *buf, size_t size, size_t *off, const uint8_t *src, uint32_t len)
{
	*off = ALIGN_UP(*off, 8);
	if (*off + len > size)
		return NULL;
	uint8_t *p = buf + *off;
	memcpy(p, src, len);
	*off += len;
	return p;
}

/* A root table copy whose entries that named the MADT and the FADT name
 * their copies, and without the tables the hypervisor owns (DMAR: the
 * IOMMU is not the guest's). Returns the copy, NULL if it does not fit. */
static uint8_t *copy_root(paddr_t root, bool xsdt, const paddr_t from[2], const paddr_t to[2], uint8_t *buf,
			  size_t size, size_t *off, uint32_t *hidden)
{
	uint32_t len = rd32(phys(root) + 4), w = xsdt ? 8 : 4, out = SDT_HEADER;
	uint8_t *p = take(buf, size, off, phys(root), len);
	if (!p)
		return NULL;
	for (uint32_t o = SDT_HEADER; o + w <= len; o += w) {
		uint64_t e = xsdt ? rd64(p + o) : rd32(p + o);
		for (int i = 0; i < 2; i++)
			if (from[i] && e == from[i])
				e = to[i];
		if (e && e < (1ull << 48) && !memcmp(phys(e), "DMAR", 4)) {
			(*hidden)++;
			continue;
		}
		if (xsdt)
			wr64(p + out, e);
		else
			wr32(p + out, (uint32_t)e);
		out += w;
	}
	memset(p + out, 0, len - out);
	wr32(p + 4, out);
	fix_checksum(p, out, 9);
	return p;
}

static uint32_t hidden_tables;
uint32_t acpi_guest_hidden(void) { return hidden_tables; }

int acpi_guest_copy(const struct acpi_info *a, const uint32_t *vcpu_ids, uint32_t nvcpus, uint8_t *buf,
		    size_t buf_size, paddr_t buf_pa, paddr_t *rsdp_pa, uint32_t *disabled, char *err, size_t errlen)
{
	size_t off = 0;
	*disabled = 0;
	hidden_tables = 0;
	if (!a->rsdp || !a->root || !a->madt) {
		snprintf(err, errlen, "acpi: no MADT to copy for the guest");
		return -1;
	}
	memset(buf, 0, buf_size);
	/* The RSDP first (36 bytes for revision 2+, else 20), then the MADT. */
	const uint8_t *rs = phys(a->rsdp);
	uint32_t rsdp_len = a->rsdp_revision >= 2 ? 36 : 20;
	uint8_t *r = take(buf, buf_size, &off, rs, rsdp_len);
	uint32_t madt_len = rd32(phys(a->madt) + 4);
	uint8_t *m = take(buf, buf_size, &off, phys(a->madt), madt_len);
	if (!r || !m)
		goto full;
	/* The FADT with FORCE_APIC_PHYSICAL_DESTINATION_MODE: Linux then uses
	 * physical x2APIC destinations, whose unicast IPIs IPI virtualization
	 * virtualizes (it never virtualizes logical ones, which x2APIC cluster
	 * mode sends). */
	paddr_t fadt_pa = 0;
	if (a->fadt) {
		uint32_t fadt_len = rd32(phys(a->fadt) + 4);
		uint8_t *f = take(buf, buf_size, &off, phys(a->fadt), fadt_len);
		if (!f)
			goto full;
		if (fadt_len >= FADT_FLAGS + 4) {
			wr32(f + FADT_FLAGS, rd32(f + FADT_FLAGS) | FADT_APIC_PHYSICAL);
			fix_checksum(f, fadt_len, 9);
		}
		fadt_pa = buf_pa + (size_t)(f - buf);
	}
	paddr_t madt_pa = buf_pa + (size_t)(m - buf);
	for (uint32_t o = MADT_FIXED; o + 2 <= madt_len && m[o + 1] >= 2 && o + m[o + 1] <= madt_len; o += m[o + 1]) {
		uint8_t type = m[o], len = m[o + 1];
		uint32_t id, flags_at;
		if (type == MADT_LAPIC && len >= 8) {
			id = m[o + 3];
			flags_at = o + 4;
		} else if (type == MADT_X2APIC && len >= 16) {
			id = rd32(m + o + 4);
			flags_at = o + 8;
		} else {
			continue;
		}
		uint32_t flags = rd32(m + flags_at);
		if ((flags & MADT_ENABLED_ONLINE) && !is_vcpu(vcpu_ids, nvcpus, id)) {
			wr32(m + flags_at, flags & ~MADT_ENABLED_ONLINE);
			(*disabled)++;
		}
	}
	fix_checksum(m, madt_len, 9);

	/* Both roots when both exist: a guest told to prefer the RSDT
	 * (acpi=rsdt) must find the same MADT. */
	paddr_t rsdt = rd32(rs + 16), xsdt = a->rsdp_revision >= 2 ? rd64(rs + 24) : 0;
	const paddr_t from[2] = { a->madt, a->fadt }, to[2] = { madt_pa, fadt_pa };
	uint32_t hidden_x = 0, hidden_r = 0;
	if (rsdt) {
		uint8_t *t = copy_root(rsdt, false, from, to, buf, buf_size, &off, &hidden_r);
		if (!t)
			goto full;
		wr32(r + 16, (uint32_t)(buf_pa + (size_t)(t - buf)));
	}
	if (xsdt) {
		uint8_t *t = copy_root(xsdt, true, from, to, buf, buf_size, &off, &hidden_x);
		if (!t)
			goto full;
		wr64(r + 24, buf_pa + (size_t)(t - buf));
	}
	fix_checksum(r, 20, 8);
	if (rsdp_len == 36)
		fix_checksum(r, 36, 32);
	*rsdp_pa = buf_pa;
	hidden_tables = hidden_x > hidden_r ? hidden_x : hidden_r;
	return 0;
full:
	snprintf(err, errlen, "acpi: the guest's copy of RSDP, MADT (%u bytes), FADT and root tables does not fit %zu bytes",
		 madt_len, buf_size);
	return -1;
}

#define AML_NAME_OP 0x08
#define AML_ROOT '\\'

uint32_t acpi_hide_sleep_states(paddr_t dsdt)
{
	if (!dsdt)
		return 0;
	uint8_t *t = (uint8_t *)(uintptr_t)dsdt;
	uint32_t len = rd32(t + 4), n = 0;
	for (uint32_t i = SDT_HEADER + 1; i + 4 <= len; i++) {
		uint32_t op = t[i - 1] == AML_ROOT && i >= SDT_HEADER + 2 ? i - 2 : i - 1;
		if (t[op] != AML_NAME_OP || t[i] != '_' || t[i + 1] != 'S' || t[i + 2] < '1' || t[i + 2] > '4' ||
		    t[i + 3] != '_')
			continue;
		t[i] = 'X';
		n++;
	}
	if (n)
		fix_checksum(t, len, 9);
	return n;
}
