/* The SRAT parser. Layout from the ACPI specification, "System Resource
 * Affinity Table (SRAT)": a 36-byte header, 4 bytes reserved (1), 8 bytes
 * reserved, then structures of (type, length, ...). */
#include "srat.h"
#include "string.h"
#include "printk.h"
#include "tblread.h"

#define SRAT_HDR_LEN     36
#define SRAT_FIXED_LEN   48
#define SRAT_MAX_LEN     (16u << 20)

#define SRAT_LAPIC       0           /* Processor Local APIC/SAPIC Affinity, 16 bytes */
#define SRAT_MEM         1           /* Memory Affinity, 40 bytes */
#define SRAT_X2APIC      2           /* Processor Local x2APIC Affinity, 24 bytes */
#define SRAT_ENABLED     BIT(0)      /* flags bit 0 in all three */
#define SRAT_MEM_HOTPLUG BIT(1)
#define SRAT_MEM_NV      BIT(2)

static uint32_t min_len(uint8_t type)
{
	switch (type) {
	case SRAT_LAPIC:  return 16;
	case SRAT_MEM:    return 40;
	case SRAT_X2APIC: return 24;
	default:          return 2;
	}
}

static uint32_t flags_of(const uint8_t *e)
{
	switch (e[0]) {
	case SRAT_LAPIC:  return rd32(e + 4);
	case SRAT_MEM:    return rd32(e + 28);
	case SRAT_X2APIC: return rd32(e + 12);
	default:          return 0;
	}
}

/* The table checked: its length into *len. */
static int check(const uint8_t *t, uint64_t avail, uint32_t *len, char *err, size_t errlen)
{
	if (!t || avail < SRAT_HDR_LEN)
		return fail(err, errlen, "SRAT: header outside memory");
	if (memcmp(t, "SRAT", 4) != 0)
		return fail(err, errlen, "SRAT: signature bad");
	uint32_t l = rd32(t + 4);
	if (l < SRAT_FIXED_LEN)
		return fail(err, errlen, "SRAT: truncated (length %u < %u)", l, SRAT_FIXED_LEN);
	if (l > SRAT_MAX_LEN || l > avail)
		return fail(err, errlen, "SRAT: length %u runs outside memory", l);
	uint8_t s = 0;
	for (uint32_t i = 0; i < l; i++)
		s = (uint8_t)(s + t[i]);
	if (s)
		return fail(err, errlen, "SRAT: checksum bad (sum 0x%x)", s);
	for (uint32_t off = SRAT_FIXED_LEN; off < l;) {
		if (l - off < 2)
			return fail(err, errlen, "SRAT: structure at offset 0x%x runs past the table end", off);
		uint8_t type = t[off], elen = t[off + 1];
		if (elen < 2 || elen > l - off)
			return fail(err, errlen, "SRAT: structure at offset 0x%x (type %u) has length %u", off, type, elen);
		if (elen < min_len(type))
			return fail(err, errlen, "SRAT: structure at offset 0x%x (type %u) too short (length %u < %u)",
				    off, type, elen, min_len(type));
		off += elen;
	}
	*len = l;
	return 0;
}

int srat_count(const uint8_t *t, uint64_t avail, struct srat_counts *c, char *err, size_t errlen)
{
	uint32_t len;
	memset(c, 0, sizeof *c);
	if (check(t, avail, &len, err, errlen))
		return -1;
	for (uint32_t off = SRAT_FIXED_LEN; off < len; off += t[off + 1]) {
		const uint8_t *e = t + off;
		if (e[0] > SRAT_X2APIC || !(flags_of(e) & SRAT_ENABLED))
			continue;
		if (e[0] == SRAT_MEM)
			c->nmem++;
		else
			c->ncpus++;
	}
	return 0;
}

size_t srat_bytes(const struct srat_counts *c)
{
	return ALIGN_UP((size_t)c->ncpus * sizeof(struct srat_cpu), 8) +
	       ALIGN_UP((size_t)c->nmem * sizeof(struct srat_mem), 8) +
	       ((size_t)c->ncpus + c->nmem) * sizeof(struct srat_node);
}

void srat_place(struct srat_info *s, const struct srat_counts *c, void *buf)
{
	uint8_t *p = buf;
	memset(s, 0, sizeof *s);
	s->room = *c;
	s->cpu = (struct srat_cpu *)p;
	p += ALIGN_UP((size_t)c->ncpus * sizeof(struct srat_cpu), 8);
	s->mem = (struct srat_mem *)p;
	p += ALIGN_UP((size_t)c->nmem * sizeof(struct srat_mem), 8);
	s->node = (struct srat_node *)p;
}

/* The node's entry, made (in id order) when new. */
static struct srat_node *node_get(struct srat_info *s, uint32_t id)
{
	uint32_t i = 0;
	while (i < s->nnodes && s->node[i].id < id)
		i++;
	if (i < s->nnodes && s->node[i].id == id)
		return &s->node[i];
	memmove(&s->node[i + 1], &s->node[i], (s->nnodes - i) * sizeof *s->node);
	s->nnodes++;
	memset(&s->node[i], 0, sizeof *s->node);
	s->node[i].id = id;
	return &s->node[i];
}

const struct srat_node *srat_node(const struct srat_info *s, uint32_t id)
{
	for (uint32_t i = 0; i < s->nnodes; i++)
		if (s->node[i].id == id)
			return &s->node[i];
	return NULL;
}

int64_t srat_node_of_apic(const struct srat_info *s, uint32_t apic_id)
{
	for (uint32_t i = 0; s && i < s->ncpus; i++)
		if (s->cpu[i].apic_id == apic_id)
			return s->cpu[i].node;
	return -1;
}

static void add_cpu(struct srat_info *s, uint32_t apic_id, uint32_t node, bool x2)
{
	if (srat_node_of_apic(s, apic_id) >= 0) {
		s->ndup++;
		return;
	}
	struct srat_cpu *c = &s->cpu[s->ncpus++];
	c->apic_id = apic_id;
	c->node = node;
	c->x2apic_entry = x2;
	node_get(s, node)->ncpus++;
}

int srat_parse(const uint8_t *t, uint64_t avail, struct srat_info *out, char *err, size_t errlen)
{
	struct srat_counts c;
	if (srat_count(t, avail, &c, err, errlen))
		return -1;
	if (c.ncpus > out->room.ncpus || c.nmem > out->room.nmem)
		return fail(err, errlen, "SRAT: room for %u CPUs and %u ranges, the table has %u and %u",
			    out->room.ncpus, out->room.nmem, c.ncpus, c.nmem);
	uint32_t len = rd32(t + 4);
	out->revision = t[8];
	out->ncpus = out->nmem = out->nnodes = out->ndisabled = out->nother = out->ndup = 0;
	for (uint32_t off = SRAT_FIXED_LEN; off < len; off += t[off + 1]) {
		const uint8_t *e = t + off;
		if (e[0] > SRAT_X2APIC) {
			out->nother++;
			continue;
		}
		if (!(flags_of(e) & SRAT_ENABLED)) {
			out->ndisabled++;
			continue;
		}
		if (e[0] == SRAT_LAPIC) {
			/* Domain bits 31:8 at 9-11 count from table revision 2 on. */
			uint32_t node = e[2];
			if (out->revision >= 2)
				node |= (uint32_t)e[9] << 8 | (uint32_t)e[10] << 16 | (uint32_t)e[11] << 24;
			add_cpu(out, e[3], node, false);
		} else if (e[0] == SRAT_X2APIC) {
			add_cpu(out, rd32(e + 8), rd32(e + 4), true);
		} else {
			struct srat_mem *m = &out->mem[out->nmem];
			uint32_t f = rd32(e + 28);
			m->base = rd64(e + 8);
			m->len = rd64(e + 16);
			m->node = rd32(e + 2);
			m->hotplug = (f & SRAT_MEM_HOTPLUG) != 0;
			m->nonvolatile = (f & SRAT_MEM_NV) != 0;
			if (!m->len || m->base + m->len < m->base)
				continue;
			out->nmem++;
			struct srat_node *n = node_get(out, m->node);
			if (m->hotplug)
				n->hotplug += m->len;
			else
				n->mem += m->len;
		}
	}
	if (out->ndup)
		pr_warn("SRAT: %u CPUs listed twice: the first entry of each kept\n", out->ndup);
	return 0;
}

/* "12 GiB" or "640 MiB". */
static int size_str(char *b, size_t n, uint64_t bytes)
{
	if (bytes >= GIB(1) && !(bytes & (GIB(1) - 1)))
		return snprintf(b, n, "%llu GiB", (unsigned long long)(bytes >> 30));
	return snprintf(b, n, "%llu MiB", (unsigned long long)(bytes >> 20));
}

void srat_print(const struct srat_info *s)
{
	char line[480], sz[32];
	size_t len = (size_t)snprintf(line, sizeof line, "SRAT: %u nodes, %u CPUs, %u memory ranges",
				      s->nnodes, s->ncpus, s->nmem);
	for (uint32_t i = 0; i < s->nnodes && len < sizeof line; i++) {
		const struct srat_node *n = &s->node[i];
		size_str(sz, sizeof sz, n->mem);
		len += (size_t)snprintf(line + len, sizeof line - len, "%s node %u: %u CPUs %s", i ? ";" : ":",
					n->id, n->ncpus, sz);
		if (n->hotplug && len < sizeof line) {
			size_str(sz, sizeof sz, n->hotplug);
			len += (size_t)snprintf(line + len, sizeof line - len, " (+%s hot-plug)", sz);
		}
	}
	if (len >= sizeof line)
		memcpy(line + sizeof line - 5, "...", 4);
	pr_info("%s\n", line);
	if (s->ndisabled || s->nother)
		pr_info("SRAT: %u disabled entries dropped, %u structures of other types skipped\n", s->ndisabled,
			s->nother);
}
