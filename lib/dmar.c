/* The DMAR parser (see dmar.h).  Every length is checked before the bytes
 * it covers are read; multi-byte fields are read with memcpy (ACPI makes no
 * alignment promises).  Layout: Intel VT-d specification, chapter "BIOS
 * Considerations": a 48-byte header (host address width at 36, flags at
 * 37), then remapping structures, each with a 16-bit type and length. */
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

static const char *const type_names[] = { "DRHD", "RMRR", "ATSR", "RHSA", "ANDD" };



/* The minimum length of each known structure (its fixed part). */
static uint32_t struct_min_len(uint16_t type)
{
	switch (type) {
	case DMAR_DRHD: return 16;
	case DMAR_RMRR: return 24;
	case DMAR_ATSR: return 8;
	case DMAR_RHSA: return 20;
	case DMAR_ANDD: return 8;
	default:        return STRUCT_HDR_LEN;
	}
}

/* The device scopes in [p, p + len) of structure 'idx' into out->scope. */
static int parse_scopes(const uint8_t *p, uint32_t len, uint32_t idx, const char *tname, uint32_t off,
			struct dmar_info *out, uint16_t *first, uint16_t *n, char *err, size_t errlen)
{
	*first = (uint16_t)out->nscopes;
	*n = 0;
	for (uint32_t at = 0; at < len;) {
		if (len - at < SCOPE_HDR_LEN)
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x truncated (%u bytes left)",
				    idx, tname, off, at, len - at);
		const uint8_t *s = p + at;
		uint8_t type = s[0], slen = s[1];
		if (slen < SCOPE_HDR_LEN + 2 || (slen - SCOPE_HDR_LEN) % 2)
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x has length %u (want 6 + 2 per path entry, at least one)",
				    idx, tname, off, at, slen);
		if (slen > len - at)
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x (length %u) runs past the structure",
				    idx, tname, off, at, slen);
		if (type < DMAR_SCOPE_ENDPOINT || type > DMAR_SCOPE_ACPI)
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x has type %u (known: 1-5)",
				    idx, tname, off, at, type);
		if (out->nscopes >= DMAR_MAX_SCOPES)
			return fail(err, errlen, "DMAR: more than %u device scopes", DMAR_MAX_SCOPES);
		struct dmar_scope *sc = &out->scope[out->nscopes++];
		uint32_t npath = (slen - SCOPE_HDR_LEN) / 2;
		sc->type = type;
		sc->enum_id = s[4];
		sc->bus = s[5];
		sc->npath = (uint8_t)(npath < DMAR_MAX_PATH ? npath : DMAR_MAX_PATH);
		for (uint32_t i = 0; i < npath; i++) {
			uint8_t dev = s[SCOPE_HDR_LEN + 2 * i], fn = s[SCOPE_HDR_LEN + 2 * i + 1];
			if (dev > 31 || fn > 7)
				return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x: device scope at +0x%x path entry %u is %u.%u (device <= 31, function <= 7)",
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

static int parse_struct(const uint8_t *s, uint16_t type, uint32_t len, uint32_t idx, uint32_t off,
			struct dmar_info *out, char *err, size_t errlen)
{
	const char *tname = type < ARRAY_SIZE(type_names) ? type_names[type] : "unknown";
	switch (type) {
	case DMAR_DRHD: {
		if (out->ndrhd >= DMAR_MAX_DRHD)
			return fail(err, errlen, "DMAR: more than %u DRHDs", DMAR_MAX_DRHD);
		struct dmar_drhd *d = &out->drhd[out->ndrhd];
		d->flags = s[4];
		d->size = s[5] & 0xf;
		d->segment = rd16(s + 6);
		d->base = rd64(s + 8);
		if (!d->base || (d->base & 0xfff))
			return fail(err, errlen, "DMAR: structure %u (DRHD) at offset 0x%x: register base 0x%llx is %s",
				    idx, off, (unsigned long long)d->base, d->base ? "not 4 KiB aligned" : "0");
		for (uint32_t i = 0; i < out->ndrhd; i++)
			if (out->drhd[i].segment == d->segment && (out->drhd[i].flags & DMAR_DRHD_INCLUDE_PCI_ALL))
				return fail(err, errlen, "DMAR: structure %u (DRHD) at offset 0x%x follows the INCLUDE_PCI_ALL DRHD of segment %u (it must be the last)",
					    idx, off, d->segment);
		if (parse_scopes(s + 16, len - 16, idx, tname, off, out, &d->first, &d->n, err, errlen))
			return -1;
		out->ndrhd++;
		return 0;
	}
	case DMAR_RMRR: {
		if (out->nrmrr >= DMAR_MAX_RMRR)
			return fail(err, errlen, "DMAR: more than %u RMRRs", DMAR_MAX_RMRR);
		struct dmar_rmrr *r = &out->rmrr[out->nrmrr];
		r->segment = rd16(s + 6);
		r->base = rd64(s + 8);
		r->limit = rd64(s + 16);
		if (r->limit < r->base)
			return fail(err, errlen, "DMAR: structure %u (RMRR) at offset 0x%x: limit 0x%llx below base 0x%llx",
				    idx, off, (unsigned long long)r->limit, (unsigned long long)r->base);
		if ((r->base & 0xfff) || ((r->limit + 1) & 0xfff))
			return fail(err, errlen, "DMAR: structure %u (RMRR) at offset 0x%x: [0x%llx, 0x%llx] is not whole 4 KiB pages",
				    idx, off, (unsigned long long)r->base, (unsigned long long)r->limit);
		if (parse_scopes(s + 24, len - 24, idx, tname, off, out, &r->first, &r->n, err, errlen))
			return -1;
		if (!r->n)
			return fail(err, errlen, "DMAR: structure %u (RMRR) at offset 0x%x: no device scope", idx, off);
		out->nrmrr++;
		return 0;
	}
	case DMAR_ATSR: {
		if (out->natsr >= DMAR_MAX_ATSR)
			return fail(err, errlen, "DMAR: more than %u ATSRs", DMAR_MAX_ATSR);
		struct dmar_atsr *a = &out->atsr[out->natsr];
		a->flags = s[4];
		a->segment = rd16(s + 6);
		if (parse_scopes(s + 8, len - 8, idx, tname, off, out, &a->first, &a->n, err, errlen))
			return -1;
		out->natsr++;
		return 0;
	}
	case DMAR_RHSA:
		if (rd64(s + 8) & 0xfff)
			return fail(err, errlen, "DMAR: structure %u (RHSA) at offset 0x%x: register base 0x%llx not 4 KiB aligned",
				    idx, off, (unsigned long long)rd64(s + 8));
		out->nrhsa++;
		return 0;
	case DMAR_ANDD:
		out->nandd++;
		return 0;
	default:
		out->nunknown++;        /* later types (SATC, SIDP, ...): skipped, as the specification asks */
		return 0;
	}
}

int dmar_parse(const uint8_t *t, uint64_t avail, struct dmar_info *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (err && errlen)
		err[0] = 0;
	if (avail < DMAR_HDR_LEN)
		return fail(err, errlen, "DMAR: only %llu bytes readable, the header needs %u", (unsigned long long)avail, DMAR_HDR_LEN);
	if (memcmp(t, "DMAR", 4) != 0)
		return fail(err, errlen, "DMAR: signature bad");
	uint32_t len = rd32(t + 4);
	if (len < DMAR_HDR_LEN)
		return fail(err, errlen, "DMAR: truncated (length %u < %u)", len, DMAR_HDR_LEN);
	if (len > DMAR_MAX_LEN || len > avail)
		return fail(err, errlen, "DMAR: length %u runs outside memory or is implausible", len);
	uint8_t sum = 0;
	for (uint32_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + t[i]);
	if (sum)
		return fail(err, errlen, "DMAR: checksum bad (sum 0x%x)", sum);
	out->revision = t[8];
	out->haw = (uint8_t)(t[DMAR_HAW] + 1);
	out->flags = t[DMAR_FLAGS];
	if (out->haw < 32 || out->haw > 64)
		return fail(err, errlen, "DMAR: host address width %u bits implausible (field %u)", out->haw, t[DMAR_HAW]);

	uint32_t idx = 0;
	for (uint32_t off = DMAR_HDR_LEN; off < len; idx++) {
		if (len - off < STRUCT_HDR_LEN)
			return fail(err, errlen, "DMAR: structure %u at offset 0x%x truncated (%u bytes left)", idx, off, len - off);
		const uint8_t *s = t + off;
		uint16_t type = rd16(s), slen = rd16(s + 2);
		const char *tname = type < ARRAY_SIZE(type_names) ? type_names[type] : "unknown";
		if (slen < struct_min_len(type))
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x has length %u (at least %u)",
				    idx, tname, off, slen, struct_min_len(type));
		if (slen > len - off)
			return fail(err, errlen, "DMAR: structure %u (%s) at offset 0x%x (length %u) runs past the table (length %u)",
				    idx, tname, off, slen, len);
		if (parse_struct(s, type, slen, idx, off, out, err, errlen))
			return -1;
		off += slen;
	}
	if (!out->ndrhd)
		return fail(err, errlen, "DMAR: no DRHD (no remapping hardware unit)");
	return 0;
}

static const char *scope_name(uint8_t type)
{
	static const char *const n[] = { "?", "endpoint", "bridge", "ioapic", "hpet", "acpi" };
	return type < ARRAY_SIZE(n) ? n[type] : "?";
}

static void print_scopes(const struct dmar_info *d, uint16_t first, uint16_t n)
{
	for (uint16_t i = first; i < first + n && i < d->nscopes; i++) {
		const struct dmar_scope *s = &d->scope[i];
		pr_info("DMAR:     scope %s id %u bus %u path %u.%u%s\n", scope_name(s->type), s->enum_id, s->bus,
			s->npath ? s->path[0][0] : 0, s->npath ? s->path[0][1] : 0, s->npath > 1 ? " ..." : "");
	}
}

void dmar_print(const struct dmar_info *d)
{
	pr_info("DMAR: host address width %u, flags 0x%x%s, %u DRHD, %u RMRR, %u ATSR, %u RHSA, %u ANDD, %u other\n",
		d->haw, d->flags, (d->flags & DMAR_F_INTR_REMAP) ? " (interrupt remapping)" : "", d->ndrhd, d->nrmrr,
		d->natsr, d->nrhsa, d->nandd, d->nunknown);
	for (uint32_t i = 0; i < d->ndrhd; i++) {
		pr_info("DMAR:   DRHD %u: registers at 0x%llx, segment %u%s, %u scopes\n", i,
			(unsigned long long)d->drhd[i].base, d->drhd[i].segment,
			(d->drhd[i].flags & DMAR_DRHD_INCLUDE_PCI_ALL) ? ", INCLUDE_PCI_ALL" : "", d->drhd[i].n);
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
}
