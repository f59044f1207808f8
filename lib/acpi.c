/* ACPI table parser.  Every table is validated (signature, length against its
 * fixed part, checksum) before any field of it is used, and every scan is
 * bounded by the table's own length.  Multi-byte fields are read with memcpy
 * because ACPI tables make no alignment promises. */
#include "acpi.h"
#include "types.h"
#include "string.h"
#include "printk.h"
#include "tblread.h"

#define RSDP_V1_LEN     20
#define RSDP_V2_LEN     36
#define RSDP_MAX_LEN    4096
#define SDT_HDR_LEN     36
#define MADT_FIXED_LEN  44
#define FADT_MIN_LEN    116             /* the ACPI 1.0 FADT */
#define TABLE_MAX_LEN   (16u << 20)     /* sanity bound on any table */
#define GAS_LEN         12

/* FADT field offsets. */
#define FADT_DSDT         40
#define FADT_PM1A_CNT     64
#define FADT_PM1B_CNT     68
#define FADT_PM_TMR_BLK   76
#define FADT_FLAGS        112
#define FADT_RESET_REG    116
#define FADT_RESET_VALUE  128
#define FADT_X_DSDT       140
#define FADT_X_PM1A_CNT   172
#define FADT_X_PM1B_CNT   184
#define FADT_X_PM_TMR     208

#define FADT_F_TMR_VAL_EXT    BIT(8)
#define FADT_F_RESET_REG_SUP  BIT(10)

/* MADT entry types and their minimum lengths. */
#define MADT_LAPIC          0
#define MADT_IOAPIC         1
#define MADT_LAPIC_OVERRIDE 5
#define MADT_X2APIC         9
#define MADT_ENABLED        BIT(0)

/* AML opcodes used by the \_S5_ scan. */
#define AML_ZERO        0x00
#define AML_ONE         0x01
#define AML_NAME        0x08
#define AML_BYTE        0x0a
#define AML_WORD        0x0b
#define AML_DWORD       0x0c
#define AML_QWORD       0x0e
#define AML_PACKAGE     0x12
#define AML_ROOT_CHAR   0x5c
#define AML_ONES        0xff

struct sdt {
	const uint8_t *p;
	uint32_t len;
};

static const uint8_t *phys(paddr_t pa)
{
	return (const uint8_t *)(uintptr_t)pa;
}

paddr_t acpi_readable_lo = 0, acpi_readable_hi = ~(paddr_t)0;

/* [pa, pa + len) lies where the parser may read (the hypervisor's identity
 * map): a table pointer is checked before anything at it is read. */
static bool readable(paddr_t pa, uint64_t len)
{
	return pa >= acpi_readable_lo && len <= acpi_readable_hi - acpi_readable_lo &&
	       pa - acpi_readable_lo <= acpi_readable_hi - acpi_readable_lo - len;
}


static uint8_t sum8(const uint8_t *p, size_t n)
{
	uint8_t s = 0;
	while (n--)
		s = (uint8_t)(s + *p++);
	return s;
}


/* The 4-character signature at p with anything unprintable shown as '?'. */
static void sig_str(char out[5], const uint8_t *p)
{
	for (int i = 0; i < 4; i++)
		out[i] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
	out[4] = 0;
}

/* Validates the system description table at pa: signature sig, a length of
 * at least minlen (its fixed part), and a zero checksum.  Messages call the
 * table name (the MADT's signature is "APIC", the FADT's "FACP"). */
static int load_sdt(paddr_t pa, const char *sig, const char *name, uint32_t minlen,
		    struct sdt *t, char *err, size_t errlen)
{
	char found[5];
	if (!pa)
		return fail(err, errlen, "ACPI: %s address is 0", name);
	if (!readable(pa, SDT_HDR_LEN))
		return fail(err, errlen, "ACPI: %s at 0x%llx lies outside memory", name, (unsigned long long)pa);
	const uint8_t *p = phys(pa);
	if (memcmp(p, sig, 4) != 0) {
		sig_str(found, p);
		return fail(err, errlen, "ACPI: %s signature bad (found \"%s\")", name, found);
	}
	uint32_t len = rd32(p + 4);
	if (len < minlen)
		return fail(err, errlen, "ACPI: %s truncated (length %u < %u)", name, len, minlen);
	if (len > TABLE_MAX_LEN)
		return fail(err, errlen, "ACPI: %s length %u implausible", name, len);
	if (!readable(pa, len))
		return fail(err, errlen, "ACPI: %s at 0x%llx (%u bytes) runs outside memory", name, (unsigned long long)pa, len);
	uint8_t s = sum8(p, len);
	if (s)
		return fail(err, errlen, "ACPI: %s checksum bad (sum 0x%x)", name, s);
	t->p = p;
	t->len = len;
	return 0;
}

/* ---- MCFG ---- */

/* PCI Firmware Specification 3.0, "MCFG Table Description": the header,
 * 8 reserved bytes, then entries of 16: base address (8), PCI segment
 * group (2), start and end bus (1 each), 4 reserved. Every entry kept,
 * segment 0's first one also apart; a bad table only warns (the port
 * mechanism stays). */
#define MCFG_FIRST 44
static void parse_mcfg(struct acpi_info *out)
{
	struct sdt t;
	char e[128];
	if (load_sdt(out->mcfg, "MCFG", "MCFG", MCFG_FIRST, &t, e, sizeof e)) {
		pr_warn("%s: ignored\n", e);
		return;
	}
	for (uint32_t o = MCFG_FIRST; o + 16 <= t.len; o += 16) {
		struct acpi_mcfg m = { rd64(t.p + o), rd16(t.p + o + 8), t.p[o + 10], t.p[o + 11] };
		if (m.base && m.bus0 <= m.bus1 && out->nmcfg < ACPI_MAX_MCFG)
			out->mcfg_entry[out->nmcfg++] = m;
		else if (m.base && m.bus0 <= m.bus1)
			out->nmcfg_dropped++;
		if (rd16(t.p + o + 8) != 0) {
			out->mcfg_other_segments++;
		} else if (!out->mcfg_base) {
			out->mcfg_base = rd64(t.p + o);
			out->mcfg_bus_start = t.p[o + 10];
			out->mcfg_bus_end = t.p[o + 11];
		}
	}
}

/* ---- MADT ---- */

void *(*acpi_alloc)(size_t bytes);

static void add_cpu(struct acpi_info *out, uint32_t apic_id, uint32_t uid, bool x2,
		    uint32_t *dropped)
{
	for (uint32_t i = 0; i < out->ncpus; i++) {
		if (out->cpu[i].apic_id == apic_id) {
			pr_warn("ACPI: MADT lists APIC ID %u twice (UIDs %u and %u); ignoring the second\n",
				apic_id, out->cpu[i].uid, uid);
			return;
		}
	}
	if (out->ncpus >= out->cpu_room) {
		(*dropped)++;
		return;
	}
	struct acpi_cpu *c = &out->cpu[out->ncpus++];
	c->apic_id = apic_id;
	c->uid = uid;
	c->x2apic_entry = x2;
	if (apic_id > out->max_apic_id)
		out->max_apic_id = apic_id;
}

static uint32_t madt_min_len(uint8_t type)
{
	switch (type) {
	case MADT_LAPIC:          return 8;
	case MADT_IOAPIC:         return 12;
	case MADT_LAPIC_OVERRIDE: return 12;
	case MADT_X2APIC:         return 16;
	default:                  return 2;
	}
}

/* The entry at off, checked against the table and its type's length; NULL
 * with the message in err when it does not fit. */
static const uint8_t *madt_entry(const struct sdt *t, uint32_t off, char *err, size_t errlen)
{
	const uint8_t *e = t->p + off;
	if (t->len - off < 2) {
		tbl_say(err, errlen, "ACPI: MADT entry at offset %u runs past the table end", off);
		return NULL;
	}
	uint8_t type = e[0], elen = e[1];
	if (elen == 0) {
		tbl_say(err, errlen, "ACPI: MADT entry at offset %u has length 0", off);
		return NULL;
	}
	if (elen > t->len - off) {
		tbl_say(err, errlen, "ACPI: MADT entry at offset %u runs past the table end", off);
		return NULL;
	}
	if (elen < madt_min_len(type)) {
		tbl_say(err, errlen, "ACPI: MADT entry at offset %u (type %u) too short (length %u < %u)",
		        off, type, elen, madt_min_len(type));
		return NULL;
	}
	return e;
}

/* The enabled CPU entry's APIC ID (type 0 or 9), or -1 for any other entry
 * and for disabled or invalid ones (warned of when warn). */
static int64_t madt_cpu_id(const uint8_t *e, uint32_t off, bool warn)
{
	if (e[0] == MADT_LAPIC) {
		if (!(rd32(e + 4) & MADT_ENABLED))
			return -1;
		if (e[3] == 0xff) {
			if (warn)
				pr_warn("ACPI: MADT LAPIC entry at offset %u has APIC ID 0xff; ignored\n", off);
			return -1;
		}
		return e[3];
	}
	if (e[0] == MADT_X2APIC) {
		if (!(rd32(e + 8) & MADT_ENABLED))
			return -1;
		uint32_t id = rd32(e + 4);
		if (id == 0xffffffffu) {
			if (warn)
				pr_warn("ACPI: MADT x2APIC entry at offset %u has APIC ID 0xffffffff; ignored\n", off);
			return -1;
		}
		return id;
	}
	return -1;
}

/* First pass: every entry checked, the enabled CPUs (before deduplication)
 * and IOAPICs counted; then room from acpi_alloc. */
static int madt_room(const struct sdt *t, struct acpi_info *out, char *err, size_t errlen)
{
	uint64_t cpus = ACPI_CPU_SPARE, ioapics = 0;
	for (uint32_t off = MADT_FIXED_LEN; off < t->len; off += t->p[off + 1]) {
		const uint8_t *e = madt_entry(t, off, err, errlen);
		if (!e)
			return -1;
		cpus += madt_cpu_id(e, off, false) >= 0;
		ioapics += e[0] == MADT_IOAPIC;
	}
	size_t cbytes = ALIGN_UP(cpus * sizeof(struct acpi_cpu), 8);
	size_t bytes = cbytes + ioapics * sizeof(struct acpi_ioapic);
	uint8_t *room = acpi_alloc ? acpi_alloc(bytes) : NULL;
	if (!room)
		return 0;               /* everything dropped, named by parse_madt */
	out->cpu = (struct acpi_cpu *)room;
	out->cpu_room = (uint32_t)cpus;
	out->ioapic = (struct acpi_ioapic *)(room + cbytes);
	out->ioapic_room = (uint32_t)ioapics;
	return 0;
}

static int parse_madt(const struct sdt *t, struct acpi_info *out, char *err, size_t errlen)
{
	uint32_t dropped_cpus = 0, dropped_ioapics = 0;

	out->lapic_addr = rd32(t->p + SDT_HDR_LEN);
	if (madt_room(t, out, err, errlen))
		return -1;
	for (uint32_t off = MADT_FIXED_LEN; off < t->len;) {
		const uint8_t *e = t->p + off;
		int64_t id = madt_cpu_id(e, off, true);
		if (id >= 0)
			add_cpu(out, (uint32_t)id, e[0] == MADT_X2APIC ? rd32(e + 12) : e[2], e[0] == MADT_X2APIC,
				&dropped_cpus);
		switch (e[0]) {
		case MADT_IOAPIC:
			if (out->nioapics >= out->ioapic_room) {
				dropped_ioapics++;
				break;
			}
			out->ioapic[out->nioapics].id = e[2];
			out->ioapic[out->nioapics].addr = rd32(e + 4);
			out->ioapic[out->nioapics].gsi_base = rd32(e + 8);
			out->nioapics++;
			break;
		case MADT_LAPIC_OVERRIDE: {
			uint64_t a = rd64(e + 4);
			if (a > 0xffffffffull)
				pr_warn("ACPI: MADT LAPIC address override 0x%llx above 4 GiB; ignored\n",
					(unsigned long long)a);
			else
				out->lapic_addr = (uint32_t)a;
			break;
		}
		default:
			break;
		}
		off += e[1];
	}

	if (dropped_cpus || dropped_ioapics)
		pr_warn("ACPI: no memory for the MADT's lists: %u enabled CPUs and %u IOAPICs ignored\n",
			dropped_cpus, dropped_ioapics);
	if (!out->ncpus)
		return fail(err, errlen, "ACPI: MADT lists no enabled CPUs");
	return 0;
}

/* ---- DSDT: \_S5_ ---- */

/* One AML integer data object at p[*pos], bounded by end. */
static bool aml_int(const uint8_t *p, uint32_t end, uint32_t *pos, uint64_t *v)
{
	uint32_t i = *pos, n = 0;
	if (i >= end)
		return false;
	uint8_t op = p[i++];
	switch (op) {
	case AML_ZERO:  *v = 0; break;
	case AML_ONE:   *v = 1; break;
	case AML_ONES:  *v = ~0ull; break;
	case AML_BYTE:  n = 1; break;
	case AML_WORD:  n = 2; break;
	case AML_DWORD: n = 4; break;
	case AML_QWORD: n = 8; break;
	default:
		/* Some old firmware stores small values as raw bytes. */
		if (op > 7)
			return false;
		*v = op;
		break;
	}
	if (n) {
		if (end - i < n)
			return false;
		*v = 0;
		for (uint32_t k = 0; k < n; k++)
			*v |= (uint64_t)p[i + k] << (8 * k);
		i += n;
	}
	*pos = i;
	return true;
}

/* Tries to decode "NameOp _S5_ PackageOp PkgLength NumElements a b ..." with
 * the name at offset i.  false when the bytes there are not that. */
static bool s5_at(const uint8_t *p, uint32_t len, uint32_t i, uint8_t *a, uint8_t *b)
{
	uint32_t j = i;
	if (j > SDT_HDR_LEN && p[j - 1] == AML_ROOT_CHAR)
		j--;
	if (j <= SDT_HDR_LEN || p[j - 1] != AML_NAME)
		return false;
	uint32_t k = i + 4;
	if (k >= len || p[k] != AML_PACKAGE)
		return false;
	uint32_t pkg = ++k;             /* PkgLength counts from its own lead byte */
	if (k >= len)
		return false;
	uint8_t lead = p[k];
	uint32_t extra = lead >> 6;
	if (len - k < 1 + extra)
		return false;
	uint32_t plen = extra ? (lead & 0x0fu) : (lead & 0x3fu);
	for (uint32_t n = 0; n < extra; n++)
		plen |= (uint32_t)p[k + 1 + n] << (4 + 8 * n);
	k += 1 + extra;
	if (plen > len - pkg)
		return false;
	uint32_t end = pkg + plen;
	if (k >= end)
		return false;
	uint8_t count = p[k++];
	uint64_t v0, v1;
	if (!count || !aml_int(p, end, &k, &v0))
		return false;
	if (count >= 2) {
		if (!aml_int(p, end, &k, &v1))
			return false;
	} else {
		/* One-element form: SLP_TYPa in bits 7:0, SLP_TYPb in 15:8. */
		v1 = v0 >> 8;
		v0 &= 0xff;
	}
	*a = (uint8_t)v0;
	*b = (uint8_t)v1;
	return true;
}

static void parse_dsdt(paddr_t pa, struct acpi_info *out)
{
	struct sdt t;
	char msg[96];
	bool seen = false;

	if (load_sdt(pa, "DSDT", "DSDT", SDT_HDR_LEN, &t, msg, sizeof msg)) {
		pr_warn("%s; power-off unavailable\n", msg);
		return;
	}
	for (uint32_t i = SDT_HDR_LEN; i + 4 <= t.len; i++) {
		if (memcmp(t.p + i, "_S5_", 4) != 0)
			continue;
		seen = true;
		if (s5_at(t.p, t.len, i, &out->slp_typa, &out->slp_typb)) {
			out->s5_valid = true;
			return;
		}
	}
	if (seen)
		pr_warn("ACPI: DSDT \\_S5_ not a package of integers; power-off unavailable\n");
	else
		pr_warn("ACPI: no \\_S5_ in DSDT; power-off unavailable\n");
}

/* ---- FADT ---- */

/* An I/O port from the FADT: the X_ GAS at xoff when the table is long
 * enough and it is a nonzero I/O-space address, else the legacy field. */
static uint32_t fadt_port(const struct sdt *t, uint32_t xoff, uint32_t loff)
{
	const uint8_t *f = t->p;
	if (t->len >= xoff + GAS_LEN && f[xoff] == ACPI_SPACE_IO) {
		uint64_t a = rd64(f + xoff + 4);
		if (a && a <= 0xffff)
			return (uint32_t)a;
	}
	uint32_t port = rd32(f + loff);
	return port <= 0xffff ? port : 0;
}

static void parse_fadt(const struct sdt *t, struct acpi_info *out)
{
	const uint8_t *f = t->p;
	uint32_t flags = rd32(f + FADT_FLAGS);

	out->pm1a_cnt = fadt_port(t, FADT_X_PM1A_CNT, FADT_PM1A_CNT);
	out->pm1b_cnt = fadt_port(t, FADT_X_PM1B_CNT, FADT_PM1B_CNT);
	out->pm_tmr_port = fadt_port(t, FADT_X_PM_TMR, FADT_PM_TMR_BLK);
	out->pm_tmr_32bit = (flags & FADT_F_TMR_VAL_EXT) != 0;

	if (t->len >= FADT_RESET_VALUE + 1 && (flags & FADT_F_RESET_REG_SUP)) {
		uint8_t space = f[FADT_RESET_REG];
		uint64_t addr = rd64(f + FADT_RESET_REG + 4);
		if (addr && space <= ACPI_SPACE_PCI) {
			out->reset_space = space;
			out->reset_addr = addr;
			out->reset_value = f[FADT_RESET_VALUE];
			out->reset_valid = true;
		}
	}

	uint64_t dsdt = 0;
	if (t->len >= FADT_X_DSDT + 8)
		dsdt = rd64(f + FADT_X_DSDT);
	if (!dsdt)
		dsdt = rd32(f + FADT_DSDT);
	out->dsdt = dsdt;
}

/* ---- HPET ---- */

/* IA-PC HPET Specification 1.0a, "The ACPI 2.0 HPET Description Table":
 * after the header, the event timer block ID (4 bytes), the base address
 * (a GAS, in system memory), the HPET number (1), the main counter's
 * minimum tick (2) and page protection (1): 56 bytes. The first block
 * kept; a bad table only warns (the PM timer or the PIT stay). */
#define HPET_LEN      56
#define HPET_BASE_GAS 40
#define HPET_NUMBER   52
static void parse_hpet(struct acpi_info *out)
{
	struct sdt t;
	char e[128];
	if (load_sdt(out->hpet, "HPET", "HPET", HPET_LEN, &t, e, sizeof e)) {
		pr_warn("%s: ignored\n", e);
		return;
	}
	uint64_t base = rd64(t.p + HPET_BASE_GAS + 4);
	if (t.p[HPET_BASE_GAS] != ACPI_SPACE_MEMORY || !base || base & 0x7) {
		pr_warn("ACPI: HPET base in address space %u at 0x%llx: not a register block in memory; ignored\n",
			t.p[HPET_BASE_GAS], (unsigned long long)base);
		return;
	}
	out->hpet_base = base;
	out->hpet_number = t.p[HPET_NUMBER];
}

/* ---- RSDP and root table ---- */

int acpi_parse(paddr_t rsdp, struct acpi_info *out, char *err, size_t errlen)
{
	struct sdt root, madt, fadt;

	memset(out, 0, sizeof *out);
	if (err && errlen)
		err[0] = 0;
	if (!rsdp)
		return fail(err, errlen, "ACPI: RSDP address is 0");

	if (!readable(rsdp, RSDP_V2_LEN))
		return fail(err, errlen, "ACPI: RSDP at 0x%llx lies outside memory", (unsigned long long)rsdp);
	const uint8_t *r = phys(rsdp);
	if (memcmp(r, "RSD PTR ", 8) != 0)
		return fail(err, errlen, "ACPI: RSDP signature bad");
	uint8_t s = sum8(r, RSDP_V1_LEN);
	if (s)
		return fail(err, errlen, "ACPI: RSDP checksum bad (sum 0x%x)", s);
	out->rsdp = rsdp;
	out->rsdp_revision = r[15];

	paddr_t root_pa = rd32(r + 16);
	if (out->rsdp_revision >= 2) {
		uint32_t len = rd32(r + 20);
		if (len < RSDP_V2_LEN || len > RSDP_MAX_LEN)
			return fail(err, errlen, "ACPI: RSDP length %u bad (revision %u needs >= %u)",
				    len, out->rsdp_revision, RSDP_V2_LEN);
		s = sum8(r, len);
		if (s)
			return fail(err, errlen, "ACPI: RSDP extended checksum bad (sum 0x%x)", s);
		uint64_t x = rd64(r + 24);
		if (x) {
			root_pa = x;
			out->xsdt = true;
		}
	}
	const char *rname = out->xsdt ? "XSDT" : "RSDT";
	if (!root_pa)
		return fail(err, errlen, "ACPI: RSDP has no RSDT or XSDT address");
	if (load_sdt(root_pa, rname, rname, SDT_HDR_LEN, &root, err, errlen))
		return -1;
	out->root = root_pa;

	uint32_t esz = out->xsdt ? 8 : 4;
	uint32_t n = (root.len - SDT_HDR_LEN) / esz;
	if ((root.len - SDT_HDR_LEN) % esz)
		pr_warn("ACPI: %s length %u is not a whole number of entries\n", rname, root.len);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = root.p + SDT_HDR_LEN + i * esz;
		paddr_t pa = out->xsdt ? rd64(e) : rd32(e);
		if (!pa)
			continue;
		if (!readable(pa, SDT_HDR_LEN)) {
			pr_warn("ACPI: %s entry %u points at 0x%llx, outside memory: skipped\n", rname, i,
				(unsigned long long)pa);
			continue;
		}
		const uint8_t *sig = phys(pa);
		if (!out->madt && memcmp(sig, "APIC", 4) == 0)
			out->madt = pa;
		else if (!out->fadt && memcmp(sig, "FACP", 4) == 0)
			out->fadt = pa;
		else if (!out->dmar && memcmp(sig, "DMAR", 4) == 0)
			out->dmar = pa;
		else if (!out->hpet && memcmp(sig, "HPET", 4) == 0)
			out->hpet = pa;
		else if (!out->srat && memcmp(sig, "SRAT", 4) == 0)
			out->srat = pa;
		else if (!out->mcfg && memcmp(sig, "MCFG", 4) == 0)
			out->mcfg = pa;
		else if (!out->spcr && memcmp(sig, "SPCR", 4) == 0)
			out->spcr = pa;
	}
	struct sdt sp;
	char e[96];
	if (out->spcr && (load_sdt(out->spcr, "SPCR", "SPCR", SPCR_MIN_LEN, &sp, e, sizeof e) ||
			  spcr_decode(sp.p, sp.len, &out->spcr_uart, e, sizeof e)))
		pr_warn("%s: the console stays where it is\n", e);
	else if (out->spcr)
		out->spcr_ok = true;
	if (out->mcfg)
		parse_mcfg(out);
	if (out->hpet)
		parse_hpet(out);

	if (!out->madt)
		return fail(err, errlen, "ACPI: no MADT in %s", rname);
	if (load_sdt(out->madt, "APIC", "MADT", MADT_FIXED_LEN, &madt, err, errlen))
		return -1;
	if (parse_madt(&madt, out, err, errlen))
		return -1;

	if (!out->fadt) {
		pr_warn("ACPI: no FADT in %s; power-off and PM timer unavailable\n", rname);
		return 0;
	}
	if (load_sdt(out->fadt, "FACP", "FADT", FADT_MIN_LEN, &fadt, err, errlen))
		return -1;
	parse_fadt(&fadt, out);
	if (out->dsdt)
		parse_dsdt(out->dsdt, out);
	else
		pr_warn("ACPI: FADT has no DSDT address; power-off unavailable\n");
	return 0;
}

#ifndef HV_HOST_TEST
/* A pointer to low physical memory, hidden from the optimizer so that small
 * constant addresses do not trip its null-page and bounds diagnostics. */
static const uint8_t *lowmem(paddr_t pa)
{
	uintptr_t v = (uintptr_t)pa;
	__asm__("" : "+r"(v));
	return (const uint8_t *)v;
}


static paddr_t scan_rsdp(paddr_t start, paddr_t end)
{
	for (paddr_t pa = start; pa + RSDP_V1_LEN <= end; pa += 16) {
		const uint8_t *p = lowmem(pa);
		if (memcmp(p, "RSD PTR ", 8) != 0 || sum8(p, RSDP_V1_LEN) != 0)
			continue;
		if (p[15] >= 2) {
			uint32_t len = rd32(p + 20);
			if (len < RSDP_V2_LEN || len > RSDP_MAX_LEN || sum8(p, len))
				continue;
		}
		return pa;
	}
	return 0;
}

paddr_t acpi_find_rsdp_legacy(void)
{
	paddr_t ebda = (paddr_t)rd16(lowmem(0x40e)) << 4;
	if (ebda >= 0x1000 && ebda + 1024 <= 0xa0000) {
		paddr_t r = scan_rsdp(ebda, ebda + 1024);
		if (r)
			return r;
	}
	return scan_rsdp(0xe0000, 0x100000);
}
#endif
