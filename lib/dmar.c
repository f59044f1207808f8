/* The DMAR parser (see dmar.h).  Every length is checked before the bytes
 * it covers are read; multi-byte fields are read with memcpy (ACPI makes no
 * alignment promises).  Layout: Intel VT-d specification, chapter "BIOS
 * Considerations": a 48-byte header (host address width at 36, flags at
 * 37), then remapping structures, each with a 16-bit type and length.
 * One walker serves both passes: counting (no arrays: each record is built
 * in a local and dropped) and filling (the caller's arrays). */
#include "dmar.h"
#include "string.h"
#include "printk.h"
#include "tblread.h"

#define DMAR_HDR_LEN    48
#define DMAR_HAW        36
#define DMAR_FLAGS      37
#define DMAR_MAX_LEN    (1u << 20)
#define STRUCT_HDR_LEN  4
#define SCOPE_HDR_LEN   6
#define PATH_ENTRY_LEN  2
#define PCI_MAX_DEV     31
#define PCI_MAX_FN      7
#define PAGE_MASK_4K    0xfffull
#define HAW_MIN         32
#define HAW_MAX         64
#define SIZE_MASK       0xf            /* DRHD byte 5: bits 3:0 */
#define UNKNOWN_TOP     63             /* unknown_types' last bit: this type and later */

/* Fixed parts (VT-d specification, "BIOS Considerations"). */
#define DRHD_FIXED      16
#define RMRR_FIXED      24
#define ATSR_FIXED      8
#define RHSA_LEN        20
#define ANDD_FIXED      8
#define SATC_FIXED      8

static const char *const type_names[] = { "DRHD", "RMRR", "ATSR", "RHSA", "ANDD", "SATC" };

static const char *type_name(uint16_t type) { return type < ARRAY_SIZE(type_names) ? type_names[type] : "unknown"; }

/* The minimum length of each known structure (its fixed part). */
static uint32_t struct_min_len(uint16_t type)
{
	switch (type) {
	case DMAR_DRHD: return DRHD_FIXED;
	case DMAR_RMRR: return RMRR_FIXED;
	case DMAR_ATSR: return ATSR_FIXED;
	case DMAR_RHSA: return RHSA_LEN;
	case DMAR_ANDD: return ANDD_FIXED;
	case DMAR_SATC: return SATC_FIXED;
	default:        return STRUCT_HDR_LEN;
	}
}

struct walk {
	const uint8_t *t;
	struct dmar_info *out;
	bool fill;                   /* the second pass: into out's arrays */
	uint32_t first_all;          /* offset of the first INCLUDE_PCI_ALL DRHD, 0: none yet */
	char *err;
	size_t errlen;
};

/* Where the next record of a kind goes: the caller's array, or (counting)
 * the local scratch; NULL when the room is short. */
static void *slot(const struct walk *w, void *arr, uint32_t n, uint32_t room, void *scratch, size_t size)
{
	if (!w->fill)
		return scratch;
	return n < room ? (uint8_t *)arr + (size_t)n * size : NULL;
}

static int no_room(const struct walk *w, const char *what, uint32_t room)
{
	return fail(w->err, w->errlen, "DMAR: more %s than the room given (%u): count first (dmar_count)", what, room);
}

/* The device scopes in [p, p + len) of structure 'idx'. */
static int parse_scopes(struct walk *w, const uint8_t *p, uint32_t len, uint32_t idx, uint16_t type, uint32_t off,
			uint32_t *first, uint32_t *n)
{
	struct dmar_info *out = w->out;
	const char *tname = type_name(type);
	*first = out->nscopes;
	*n = 0;
	for (uint32_t at = 0; at < len;) {
		if (len - at < SCOPE_HDR_LEN)
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x truncated (%u bytes left)",
				    idx, tname, off, at, len - at);
		const uint8_t *s = p + at;
		uint8_t stype = s[0], slen = s[1];
		if (slen < SCOPE_HDR_LEN + PATH_ENTRY_LEN || (slen - SCOPE_HDR_LEN) % PATH_ENTRY_LEN)
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x has length %u (want 6 + 2 per path entry, at least one)",
				    idx, tname, off, at, slen);
		if (slen > len - at)
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x (length %u) runs past the structure",
				    idx, tname, off, at, slen);
		if (stype < DMAR_SCOPE_ENDPOINT || stype > DMAR_SCOPE_ACPI)
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x has type %u (known: 1-5)",
				    idx, tname, off, at, stype);
		struct dmar_scope scratch;
		struct dmar_scope *sc = slot(w, out->scope, out->nscopes, out->room.nscopes, &scratch, sizeof scratch);
		if (!sc)
			return no_room(w, "device scopes", out->room.nscopes);
		out->nscopes++;
		memset(sc, 0, sizeof *sc);
		uint32_t npath = (slen - SCOPE_HDR_LEN) / PATH_ENTRY_LEN;
		sc->type = stype;
		sc->enum_id = s[4];
		sc->bus = s[5];
		sc->npath = (uint8_t)(npath < DMAR_MAX_PATH ? npath : DMAR_MAX_PATH);
		sc->cut = npath > DMAR_MAX_PATH;
		out->ncut += sc->cut;
		for (uint32_t i = 0; i < npath; i++) {
			uint8_t dev = s[SCOPE_HDR_LEN + PATH_ENTRY_LEN * i], fn = s[SCOPE_HDR_LEN + PATH_ENTRY_LEN * i + 1];
			if (dev > PCI_MAX_DEV || fn > PCI_MAX_FN)
				return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x path entry %u is %u.%u (device <= 31, function <= 7)",
					    idx, tname, off, at, i, dev, fn);
			if (i < DMAR_MAX_PATH) {
				sc->path[i][0] = dev;
				sc->path[i][1] = fn;
			}
		}
		(*n)++;
		at += slen;
	}
	return 0;
}

/* Whether a DRHD in [from, end) has INCLUDE_PCI_ALL for seg (the structures
 * before 'end' were checked already). Firmware puts those DRHDs after the
 * others, so the scan from the first of them is short. */
static bool pci_all_before(const uint8_t *t, uint32_t from, uint32_t end, uint16_t seg)
{
	for (uint32_t off = from; from && off < end; off += rd16(t + off + 2))
		if (rd16(t + off) == DMAR_DRHD && (t[off + 4] & DMAR_DRHD_INCLUDE_PCI_ALL) && rd16(t + off + 6) == seg)
			return true;
	return false;
}

static int parse_drhd(struct walk *w, const uint8_t *s, uint32_t len, uint32_t idx, uint32_t off)
{
	struct dmar_info *out = w->out;
	struct dmar_drhd scratch, *d = slot(w, out->drhd, out->ndrhd, out->room.ndrhd, &scratch, sizeof scratch);
	if (!d)
		return no_room(w, "DRHDs", out->room.ndrhd);
	d->flags = s[4];
	d->size = s[5] & SIZE_MASK;
	d->segment = rd16(s + 6);
	d->base = rd64(s + 8);
	if (!d->base || (d->base & PAGE_MASK_4K))
		return fail(w->err, w->errlen, "DMAR: structure %u (DRHD) at offset 0x%x: register base 0x%llx is %s",
			    idx, off, (unsigned long long)d->base, d->base ? "not 4 KiB aligned" : "0");
	if (pci_all_before(w->t, w->first_all, off, d->segment))
		return fail(w->err, w->errlen, "DMAR: structure %u (DRHD) at offset 0x%x follows the INCLUDE_PCI_ALL DRHD of segment %u (it must be the last)",
			    idx, off, d->segment);
	if ((d->flags & DMAR_DRHD_INCLUDE_PCI_ALL) && !w->first_all)
		w->first_all = off;
	if (parse_scopes(w, s + DRHD_FIXED, len - DRHD_FIXED, idx, DMAR_DRHD, off, &d->first, &d->n))
		return -1;
	out->ndrhd++;
	return 0;
}

static int parse_rmrr(struct walk *w, const uint8_t *s, uint32_t len, uint32_t idx, uint32_t off)
{
	struct dmar_info *out = w->out;
	struct dmar_rmrr scratch, *r = slot(w, out->rmrr, out->nrmrr, out->room.nrmrr, &scratch, sizeof scratch);
	if (!r)
		return no_room(w, "RMRRs", out->room.nrmrr);
	r->segment = rd16(s + 6);
	r->base = rd64(s + 8);
	r->limit = rd64(s + 16);
	if (r->limit < r->base)
		return fail(w->err, w->errlen, "DMAR: structure %u (RMRR) at offset 0x%x: limit 0x%llx below base 0x%llx",
			    idx, off, (unsigned long long)r->limit, (unsigned long long)r->base);
	if ((r->base & PAGE_MASK_4K) || ((r->limit + 1) & PAGE_MASK_4K))
		return fail(w->err, w->errlen, "DMAR: structure %u (RMRR) at offset 0x%x: [0x%llx, 0x%llx] is not whole 4 KiB pages",
			    idx, off, (unsigned long long)r->base, (unsigned long long)r->limit);
	if (parse_scopes(w, s + RMRR_FIXED, len - RMRR_FIXED, idx, DMAR_RMRR, off, &r->first, &r->n))
		return -1;
	if (!r->n)
		return fail(w->err, w->errlen, "DMAR: structure %u (RMRR) at offset 0x%x: no device scope", idx, off);
	out->nrmrr++;
	return 0;
}

/* ATSR and SATC share a layout: flags at 4, segment at 6, scopes at 8. */
static int parse_atsr_satc(struct walk *w, const uint8_t *s, uint16_t type, uint32_t len, uint32_t idx, uint32_t off)
{
	struct dmar_info *out = w->out;
	uint8_t flags = s[4];
	uint16_t seg = rd16(s + 6);
	if (type == DMAR_ATSR) {
		struct dmar_atsr scratch, *a = slot(w, out->atsr, out->natsr, out->room.natsr, &scratch, sizeof scratch);
		if (!a)
			return no_room(w, "ATSRs", out->room.natsr);
		a->flags = flags;
		a->segment = seg;
		if (parse_scopes(w, s + ATSR_FIXED, len - ATSR_FIXED, idx, type, off, &a->first, &a->n))
			return -1;
		out->natsr++;
		return 0;
	}
	struct dmar_satc scratch, *a = slot(w, out->satc, out->nsatc, out->room.nsatc, &scratch, sizeof scratch);
	if (!a)
		return no_room(w, "SATCs", out->room.nsatc);
	a->flags = flags;
	a->segment = seg;
	if (parse_scopes(w, s + SATC_FIXED, len - SATC_FIXED, idx, type, off, &a->first, &a->n))
		return -1;
	out->nsatc++;
	return 0;
}

static int parse_struct(struct walk *w, const uint8_t *s, uint16_t type, uint32_t len, uint32_t idx, uint32_t off)
{
	struct dmar_info *out = w->out;
	switch (type) {
	case DMAR_DRHD:
		return parse_drhd(w, s, len, idx, off);
	case DMAR_RMRR:
		return parse_rmrr(w, s, len, idx, off);
	case DMAR_ATSR:
	case DMAR_SATC:
		return parse_atsr_satc(w, s, type, len, idx, off);
	case DMAR_RHSA: {
		struct dmar_rhsa scratch, *h = slot(w, out->rhsa, out->nrhsa, out->room.nrhsa, &scratch, sizeof scratch);
		if (!h)
			return no_room(w, "RHSAs", out->room.nrhsa);
		h->base = rd64(s + 8);
		h->node = rd32(s + 16);
		if (h->base & PAGE_MASK_4K)
			return fail(w->err, w->errlen, "DMAR: structure %u (RHSA) at offset 0x%x: register base 0x%llx not 4 KiB aligned",
				    idx, off, (unsigned long long)h->base);
		out->nrhsa++;
		return 0;
	}
	case DMAR_ANDD:
		out->nandd++;
		return 0;
	default:
		out->nunknown++;        /* later types (SIDP, ...): skipped, as the specification asks */
		out->unknown_types |= 1ull << (type < UNKNOWN_TOP ? type : UNKNOWN_TOP);
		return 0;
	}
}

static int walk(struct walk *w, uint64_t avail)
{
	const uint8_t *t = w->t;
	struct dmar_info *out = w->out;
	out->haw = out->flags = out->revision = 0;
	out->ndrhd = out->nrmrr = out->natsr = out->nrhsa = out->nsatc = out->nandd = out->nscopes = 0;
	out->nunknown = out->ncut = 0;
	out->unknown_types = 0;
	if (w->err && w->errlen)
		w->err[0] = 0;
	if (avail < DMAR_HDR_LEN)
		return fail(w->err, w->errlen, "DMAR: only %llu bytes readable, the header needs %u", (unsigned long long)avail, DMAR_HDR_LEN);
	if (memcmp(t, "DMAR", 4) != 0)
		return fail(w->err, w->errlen, "DMAR: signature bad");
	uint32_t len = rd32(t + 4);
	if (len < DMAR_HDR_LEN)
		return fail(w->err, w->errlen, "DMAR: truncated (length %u < %u)", len, DMAR_HDR_LEN);
	if (len > DMAR_MAX_LEN || len > avail)
		return fail(w->err, w->errlen, "DMAR: length %u runs outside memory or is implausible", len);
	uint8_t sum = 0;
	for (uint32_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + t[i]);
	if (sum)
		return fail(w->err, w->errlen, "DMAR: checksum bad (sum 0x%x)", sum);
	out->revision = t[8];
	out->haw = (uint8_t)(t[DMAR_HAW] + 1);
	out->flags = t[DMAR_FLAGS];
	if (out->haw < HAW_MIN || out->haw > HAW_MAX)
		return fail(w->err, w->errlen, "DMAR: host address width %u bits implausible (field %u)", out->haw, t[DMAR_HAW]);

	uint32_t idx = 0;
	for (uint32_t off = DMAR_HDR_LEN; off < len; idx++) {
		if (len - off < STRUCT_HDR_LEN)
			return fail(w->err, w->errlen, "DMAR: structure %u at offset 0x%x truncated (%u bytes left)", idx, off, len - off);
		const uint8_t *s = t + off;
		uint16_t type = rd16(s), slen = rd16(s + 2);
		if (slen < struct_min_len(type))
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x has length %u (at least %u)",
				    idx, type_name(type), off, slen, struct_min_len(type));
		if (slen > len - off)
			return fail(w->err, w->errlen, "DMAR: structure %u (%s) at offset 0x%x (length %u) runs past the table (length %u)",
				    idx, type_name(type), off, slen, len);
		if (parse_struct(w, s, type, slen, idx, off))
			return -1;
		off += slen;
	}
	if (!out->ndrhd)
		return fail(w->err, w->errlen, "DMAR: no DRHD (no remapping hardware unit)");
	return 0;
}

int dmar_count(const uint8_t *t, uint64_t avail, struct dmar_counts *c, char *err, size_t errlen)
{
	struct dmar_info d;
	memset(&d, 0, sizeof d);
	struct walk w = { .t = t, .out = &d, .fill = false, .err = err, .errlen = errlen };
	int r = walk(&w, avail);
	*c = (struct dmar_counts){ .ndrhd = d.ndrhd, .nrmrr = d.nrmrr, .natsr = d.natsr, .nrhsa = d.nrhsa,
				   .nsatc = d.nsatc, .nscopes = d.nscopes };
	return r;
}

int dmar_parse(const uint8_t *t, uint64_t avail, struct dmar_info *out, char *err, size_t errlen)
{
	struct walk w = { .t = t, .out = out, .fill = true, .err = err, .errlen = errlen };
	return walk(&w, avail);
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

size_t dmar_bytes(const struct dmar_counts *c)
{
	return ALIGN8((size_t)c->ndrhd * sizeof(struct dmar_drhd)) + ALIGN8((size_t)c->nrmrr * sizeof(struct dmar_rmrr)) +
	       ALIGN8((size_t)c->natsr * sizeof(struct dmar_atsr)) + ALIGN8((size_t)c->nrhsa * sizeof(struct dmar_rhsa)) +
	       ALIGN8((size_t)c->nsatc * sizeof(struct dmar_satc)) + ALIGN8((size_t)c->nscopes * sizeof(struct dmar_scope));
}

void dmar_place(struct dmar_info *d, const struct dmar_counts *c, void *buf)
{
	uint8_t *p = buf;
	memset(d, 0, sizeof *d);
	d->room = *c;
	d->drhd = (void *)p;  p += ALIGN8((size_t)c->ndrhd * sizeof(struct dmar_drhd));
	d->rmrr = (void *)p;  p += ALIGN8((size_t)c->nrmrr * sizeof(struct dmar_rmrr));
	d->atsr = (void *)p;  p += ALIGN8((size_t)c->natsr * sizeof(struct dmar_atsr));
	d->rhsa = (void *)p;  p += ALIGN8((size_t)c->nrhsa * sizeof(struct dmar_rhsa));
	d->satc = (void *)p;  p += ALIGN8((size_t)c->nsatc * sizeof(struct dmar_satc));
	d->scope = (void *)p;
}

/* Whether scope u (in a DRHD) names dev or a bridge above it. */
static bool scope_covers(const struct dmar_scope *u, const struct dmar_scope *dev)
{
	if (u->cut || dev->cut)
		return false;
	if (dev->type == DMAR_SCOPE_IOAPIC || dev->type == DMAR_SCOPE_HPET || dev->type == DMAR_SCOPE_ACPI)
		return u->type == dev->type && u->enum_id == dev->enum_id;
	if (u->type != DMAR_SCOPE_ENDPOINT && u->type != DMAR_SCOPE_BRIDGE)
		return false;
	if (u->bus != dev->bus || u->npath > dev->npath)
		return false;
	if (u->type == DMAR_SCOPE_ENDPOINT && u->npath != dev->npath)
		return false;
	return memcmp(u->path, dev->path, (size_t)u->npath * PATH_ENTRY_LEN) == 0;
}

/* The unit one of whose own scopes covers dev (-1: none); *all the
 * segment's INCLUDE_PCI_ALL unit (-1: none). */
static int unit_by_scope(const struct dmar_info *d, uint16_t seg, const struct dmar_scope *dev, int *all)
{
	*all = -1;
	for (uint32_t i = 0; i < d->ndrhd; i++) {
		const struct dmar_drhd *u = &d->drhd[i];
		if (u->segment != seg)
			continue;
		if (u->flags & DMAR_DRHD_INCLUDE_PCI_ALL)
			*all = (int)i;
		for (uint32_t k = u->first; k < u->first + u->n && k < d->nscopes; k++)
			if (scope_covers(&d->scope[k], dev))
				return (int)i;
	}
	return -1;
}

int dmar_unit_of(const struct dmar_info *d, uint16_t seg, const struct dmar_scope *dev)
{
	int all, u = unit_by_scope(d, seg, dev, &all);
	if (u >= 0)
		return u;
	/* INCLUDE_PCI_ALL takes PCI devices; IOAPIC, HPET and ACPI devices it
	 * takes only when named ("BIOS Considerations"). */
	return dev->type == DMAR_SCOPE_ENDPOINT || dev->type == DMAR_SCOPE_BRIDGE ? all : -1;
}

int dmar_unit_exact(const struct dmar_info *d, uint16_t seg, const struct dmar_scope *dev)
{
	int all;
	return unit_by_scope(d, seg, dev, &all);
}

static bool seg_has_all(const struct dmar_info *d, uint16_t seg)
{
	for (uint32_t i = 0; i < d->ndrhd; i++)
		if (d->drhd[i].segment == seg && (d->drhd[i].flags & DMAR_DRHD_INCLUDE_PCI_ALL))
			return true;
	return false;
}

static const char *scope_name(uint8_t type)
{
	static const char *const n[] = { "?", "endpoint", "bridge", "ioapic", "hpet", "acpi" };
	return type < ARRAY_SIZE(n) ? n[type] : "?";
}

static uint32_t name_uncovered(const struct dmar_info *d, const char *what, uint32_t idx, uint16_t seg, uint32_t first,
			       uint32_t n)
{
	uint32_t named = 0;
	for (uint32_t k = first; k < first + n && k < d->nscopes; k++) {
		const struct dmar_scope *s = &d->scope[k];
		if (dmar_unit_of(d, seg, s) >= 0)
			continue;
		pr_warn("DMAR: %s %u names %s %04x:%02x:%02x.%u%s (id %u), which no remapping unit covers: the table does not say which unit remaps its DMA\n",
			what, idx, scope_name(s->type), seg, s->bus, s->npath ? s->path[s->npath - 1][0] : 0,
			s->npath ? s->path[s->npath - 1][1] : 0, s->npath > 1 ? " (behind bridges)" : "", s->enum_id);
		named++;
	}
	return named;
}

uint32_t dmar_check_coverage(const struct dmar_info *d)
{
	for (uint32_t i = 0; i < d->ndrhd; i++) {
		uint16_t seg = d->drhd[i].segment;
		bool first = true;
		for (uint32_t k = 0; k < i; k++)
			first = first && d->drhd[k].segment != seg;
		if (first && !seg_has_all(d, seg))
			pr_warn("DMAR: segment %u has no INCLUDE_PCI_ALL unit: only the devices in its DRHDs' scopes are known to be remapped\n",
				seg);
	}
	uint32_t named = 0;
	for (uint32_t i = 0; i < d->nrmrr; i++)
		named += name_uncovered(d, "RMRR", i, d->rmrr[i].segment, d->rmrr[i].first, d->rmrr[i].n);
	for (uint32_t i = 0; i < d->natsr; i++)
		named += name_uncovered(d, "ATSR", i, d->atsr[i].segment, d->atsr[i].first, d->atsr[i].n);
	for (uint32_t i = 0; i < d->nsatc; i++)
		named += name_uncovered(d, "SATC", i, d->satc[i].segment, d->satc[i].first, d->satc[i].n);
	return named;
}

/* Each scope on its own line in a small table; by type in a large one (a
 * four-socket server's 500 scopes would be 500 lines at 115200 baud). */
#define PRINT_EACH_SCOPE_MAX 32

static void print_scopes(const struct dmar_info *d, uint32_t first, uint32_t n)
{
	if (d->nscopes > PRINT_EACH_SCOPE_MAX) {
		uint32_t by_type[DMAR_SCOPE_ACPI + 1] = { 0 };
		for (uint32_t i = first; i < first + n && i < d->nscopes; i++)
			by_type[d->scope[i].type <= DMAR_SCOPE_ACPI ? d->scope[i].type : 0]++;
		char line[160] = "";
		size_t at = 0;
		for (uint8_t t = DMAR_SCOPE_ENDPOINT; t <= DMAR_SCOPE_ACPI && at < sizeof line; t++)
			if (by_type[t])
				at += (size_t)snprintf(line + at, sizeof line - at, "%s%u %s", at ? ", " : "", by_type[t], scope_name(t));
		if (at)
			pr_info("DMAR:     scopes: %s\n", line);
		return;
	}
	for (uint32_t i = first; i < first + n && i < d->nscopes; i++) {
		const struct dmar_scope *s = &d->scope[i];
		pr_info("DMAR:     scope %s id %u bus %u path %u.%u%s\n", scope_name(s->type), s->enum_id, s->bus,
			s->npath ? s->path[0][0] : 0, s->npath ? s->path[0][1] : 0, s->npath > 1 ? " ..." : "");
	}
}

/* The RHSA naming the unit at base, or NULL. */
static const struct dmar_rhsa *rhsa_of(const struct dmar_info *d, uint64_t base)
{
	for (uint32_t i = 0; i < d->nrhsa; i++)
		if (d->rhsa[i].base == base)
			return &d->rhsa[i];
	return NULL;
}

static void print_warnings(const struct dmar_info *d)
{
	if (d->nunknown) {
		char types[160] = "";
		size_t at = 0;
		for (unsigned t = 0; t <= UNKNOWN_TOP && at < sizeof types; t++)
			if (d->unknown_types & (1ull << t))
				at += (size_t)snprintf(types + at, sizeof types - at, "%s%u%s", at ? ", " : "", t,
						       t == UNKNOWN_TOP ? " or later" : "");
		pr_warn("DMAR: %u structure%s of types this parser does not know skipped (types %s)\n", d->nunknown,
			d->nunknown == 1 ? "" : "s", types);
	}
	if (d->ncut)
		pr_warn("DMAR: %u device scope%s with paths longer than %u entries (bridges more than %u deep): kept cut, treated as covering nothing\n",
			d->ncut, d->ncut == 1 ? "" : "s", DMAR_MAX_PATH, DMAR_MAX_PATH);
	uint32_t orphans = 0;
	for (uint32_t i = 0; i < d->nrhsa; i++) {
		bool found = false;
		for (uint32_t k = 0; k < d->ndrhd; k++)
			found = found || d->drhd[k].base == d->rhsa[i].base;
		orphans += !found;
	}
	if (orphans)
		pr_warn("DMAR: %u RHSA%s name%s no DRHD's register base: ignored\n", orphans, orphans == 1 ? "" : "s",
			orphans == 1 ? "s" : "");
}

void dmar_print(const struct dmar_info *d)
{
	pr_info("DMAR: host address width %u, flags 0x%x%s, %u DRHD, %u RMRR, %u ATSR, %u RHSA, %u SATC, %u ANDD, %u other, %u device scopes\n",
		d->haw, d->flags, (d->flags & DMAR_F_INTR_REMAP) ? " (interrupt remapping)" : "", d->ndrhd, d->nrmrr,
		d->natsr, d->nrhsa, d->nsatc, d->nandd, d->nunknown, d->nscopes);
	for (uint32_t i = 0; i < d->ndrhd; i++) {
		const struct dmar_rhsa *h = rhsa_of(d, d->drhd[i].base);
		char node[24] = "";
		if (h)
			snprintf(node, sizeof node, ", node %u", h->node);
		pr_info("DMAR:   DRHD %u: registers at 0x%llx, segment %u%s%s, %u scopes\n", i,
			(unsigned long long)d->drhd[i].base, d->drhd[i].segment,
			(d->drhd[i].flags & DMAR_DRHD_INCLUDE_PCI_ALL) ? ", INCLUDE_PCI_ALL" : "", node, d->drhd[i].n);
		print_scopes(d, d->drhd[i].first, d->drhd[i].n);
	}
	for (uint32_t i = 0; i < d->nrmrr; i++) {
		pr_info("DMAR:   RMRR %u: [0x%llx-0x%llx] segment %u, %u scopes\n", i, (unsigned long long)d->rmrr[i].base,
			(unsigned long long)d->rmrr[i].limit, d->rmrr[i].segment, d->rmrr[i].n);
		print_scopes(d, d->rmrr[i].first, d->rmrr[i].n);
	}
	for (uint32_t i = 0; i < d->natsr; i++)
		pr_info("DMAR:   ATSR %u: segment %u%s, %u scopes\n", i, d->atsr[i].segment,
			(d->atsr[i].flags & DMAR_ATSR_ALL_PORTS) ? ", all ports" : "", d->atsr[i].n);
	for (uint32_t i = 0; i < d->nsatc; i++)
		pr_info("DMAR:   SATC %u: segment %u%s, %u scopes\n", i, d->satc[i].segment,
			(d->satc[i].flags & DMAR_SATC_ATC_REQUIRED) ? ", ATC required" : "", d->satc[i].n);
	print_warnings(d);
}
