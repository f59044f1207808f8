/* Host tests for iommu/irte.c: the IRTEs it encodes are read back by a
 * model of an interrupt-remapping unit written from the VT-d
 * specification's formats (irte_model.c); IRTE values Linux printed from
 * real remapping units are encoded bit for bit; the guest's MSIs and RTEs
 * go through the decoders, the policy and the remappable format into the
 * model, which must deliver what the guest asked for (posted to the right
 * descriptor, or remapped, or blocked as not present) or fault. */
#include "test.h"
#include "irte_model.h"
#include "../../iommu/irte.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return test_xorshift(&rng); }
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }

/* IRTEs from Linux's ir_translation_struct debugfs file (the patch adding
 * it shows them, read from real units): remapped with an x2APIC
 * destination, remapped with an xAPIC one, posted. */
TEST(irte_matches_real_units)
{
	char err[128];
	struct irte e;
	struct irte_remapped x2 = { .dest = 1, .x2apic = true, .logical = true, .redir_hint = true, .vector = 0x24,
				    .dlm = IRQ_DLM_FIXED, .src = { .sid = 0x0100, .svt = IRTE_SVT_SID } };
	CHECK_EQ(irte_encode_remapped(&x2, &e, err, sizeof err), 0);
	CHECK_EQ(e.lo, 0x000000010024000dull);
	CHECK_EQ(e.hi, 0x0000000000040100ull);
	struct irte_remapped xa = { .dest = 6, .redir_hint = true, .vector = 0x2c,
				    .src = { .sid = 0x3a00, .svt = IRTE_SVT_SID } };
	CHECK_EQ(irte_encode_remapped(&xa, &e, err, sizeof err), 0);
	CHECK_EQ(e.lo, 0x00000600002c0009ull);
	CHECK_EQ(e.hi, 0x0000000000043a00ull);
	struct irte_posted p = { .pda = 0x0000000fff765980ull, .vector = 0x41,
				 .src = { .sid = 0x4300, .svt = IRTE_SVT_SID } };
	CHECK_EQ(irte_encode_posted(&p, &e, err, sizeof err), 0);
	CHECK_EQ(e.lo, 0xff76598000418001ull);
	CHECK_EQ(e.hi, 0x0000000f00044300ull);
}

static struct irte_source rnd_source(void)
{
	return (struct irte_source){ .sid = (uint16_t)rnd(), .sq = (uint8_t)pick(4), .svt = (uint8_t)pick(3) };
}

/* A requester ID that the source fields accept (the model checks). */
static uint16_t good_requester(const struct irte_source *s)
{
	if (s->svt == IRTE_SVT_BUS) {
		unsigned lo = s->sid >> 8, hi = s->sid & 0xff;
		if (lo > hi)
			return 0xffff;   /* an empty range: nothing passes */
		return (uint16_t)((lo + pick(hi - lo + 1)) << 8 | pick(256));
	}
	static const uint16_t ignore[4] = { 0, 4, 6, 7 };
	return s->svt == IRTE_SVT_SID ? (uint16_t)(s->sid ^ (rnd() & ignore[s->sq])) : (uint16_t)rnd();
}

/* Random entries of both formats, each put in a table and read by the
 * model through a remappable MSI that names its index. */
TEST(irte_random_entries_read_back_by_the_model)
{
	enum { ENTRIES = 256, ROUNDS = 20000 };
	static uint64_t irt[2 * ENTRIES];
	char err[128];
	for (int i = 0; i < ROUNDS; i++) {
		struct irte e;
		uint16_t index = (uint16_t)pick(ENTRIES);
		struct irm_unit u = { .irt = irt, .size_field = 7, .eime = pick(2), .posting = true };
		struct irm_out o;
		memset(&o, 0, sizeof o);
		bool posted = pick(2);
		struct irte_remapped r = { 0 };
		struct irte_posted p = { 0 };
		struct irte_source src = rnd_source();
		if (posted) {
			p = (struct irte_posted){ .pda = rnd() & ~63ull, .vector = (uint8_t)rnd(), .urgent = pick(2),
						  .fpd = pick(2), .src = src };
			if (!p.pda)
				p.pda = 64;
			CHECK_EQ(irte_encode_posted(&p, &e, err, sizeof err), 0);
		} else {
			static const uint8_t dlms[] = { 0, 1, 2, 4, 5, 7 };
			r = (struct irte_remapped){ .dest = u.eime ? (uint32_t)rnd() : (uint32_t)pick(256), .x2apic = u.eime,
						    .logical = pick(2), .redir_hint = pick(2), .level = pick(2),
						    .dlm = dlms[pick(6)], .vector = (uint8_t)rnd(), .fpd = pick(2), .src = src };
			CHECK_EQ(irte_encode_remapped(&r, &e, err, sizeof err), 0);
		}
		irt[2 * index] = e.lo;
		irt[2 * index + 1] = e.hi;
		uint16_t sid = good_requester(&src);
		int rc = irm_msi(&u, sid, irte_msi_addr(index), 0, &o);
		if (src.svt == IRTE_SVT_BUS && (src.sid >> 8) > (src.sid & 0xff)) {
			CHECK_EQ(rc, 0x26);
			continue;
		}
		CHECK_EQ(rc, 0);
		CHECK_EQ(o.index, index);
		CHECK_EQ(o.posted, posted);
		if (posted) {
			CHECK_EQ(o.pda, p.pda);
			CHECK_EQ(o.vector, p.vector);
			CHECK_EQ(o.urgent, p.urgent);
		} else {
			CHECK_EQ(o.dest, r.dest);
			CHECK_EQ(o.vector, r.vector);
			CHECK_EQ(o.dm, r.logical);
			CHECK_EQ(o.rh, r.redir_hint);
			CHECK_EQ(o.tm, r.level);
			CHECK_EQ(o.dlm, r.dlm);
		}
		/* A requester the entry does not name: one bit outside what SQ
		 * ignores (SVT 01), or a bus outside the range (SVT 10). */
		if (src.svt == IRTE_SVT_SID) {
			CHECK_EQ(irm_msi(&u, (uint16_t)(src.sid ^ 0x100), irte_msi_addr(index), 0, &o), 0x26);
		} else if (src.svt == IRTE_SVT_BUS && (src.sid & 0xff) < 255) {
			CHECK_EQ(irm_msi(&u, (uint16_t)(((src.sid & 0xff) + 1) << 8), irte_msi_addr(index), 0, &o), 0x26);
		}
		/* Posting not offered (CAP.PI clear): a posted entry is reserved. */
		u.posting = false;
		if (posted)
			CHECK_EQ(irm_msi(&u, sid, irte_msi_addr(index), 0, &o), 0x24);
	}
}

/* Interrupt indexes at the edges: 0, 0x7fff, 0x8000 (bit 15: address bit 2,
 * RTE bit 11), 0xffff; beyond the table's size faults. */
TEST(irte_index_edges)
{
	uint64_t *irt = calloc(2 * 65536, sizeof *irt);
	char err[128];
	static const uint16_t idx[] = { 0, 1, 0x7fff, 0x8000, 0x8001, 0xffff };
	for (size_t k = 0; k < ARRAY_SIZE(idx); k++) {
		struct irte e;
		struct irte_posted p = { .pda = 0x1000 + 64 * k, .vector = (uint8_t)(0x30 + k) };
		CHECK_EQ(irte_encode_posted(&p, &e, err, sizeof err), 0);
		irt[2 * idx[k]] = e.lo;
		irt[2 * idx[k] + 1] = e.hi;
		struct irm_unit u = { .irt = irt, .size_field = 15, .posting = true };
		struct irm_out o;
		CHECK_EQ(irm_msi(&u, 0, irte_msi_addr(idx[k]), 0, &o), 0);
		CHECK_EQ(o.index, idx[k]);
		CHECK_EQ(o.pda, p.pda);
		struct irq_req r = { .vector = p.vector };
		CHECK_EQ(irm_ioapic(&u, 0, irte_ioapic_rte(idx[k], &r), &o), 0);
		CHECK_EQ(o.index, idx[k]);
		CHECK_EQ(o.vector, p.vector);
		u.size_field = 7;   /* 256 entries */
		CHECK_EQ(irm_msi(&u, 0, irte_msi_addr(idx[k]), 0, &o), idx[k] < 256 ? 0 : 0x21);
	}
	free(irt);
}

TEST(irte_encoder_refuses)
{
	char err[128];
	struct irte e;
	struct irte_remapped r = { .dest = 0x100, .vector = 0x40 };
	CATALOG("IRTE: xAPIC destination 0x100", irte_encode_remapped(&r, &e, err, sizeof err), err,
		"needs x2APIC mode");
	r.dest = 1;
	r.dlm = 3;
	CATALOG("IRTE: delivery mode 3", irte_encode_remapped(&r, &e, err, sizeof err), err, "delivery mode 3 reserved");
	r.dlm = 6;
	CATALOG("IRTE: delivery mode 6", irte_encode_remapped(&r, &e, err, sizeof err), err, "delivery mode 6 reserved");
	r.dlm = 0;
	r.src.svt = 3;
	CATALOG("IRTE: SVT 11b", irte_encode_remapped(&r, &e, err, sizeof err), err, "SQ 0 or SVT 3 reserved");
	struct irte_posted p = { .pda = 0x1020, .vector = 0x40 };
	CATALOG("IRTE: posted descriptor not 64-byte aligned", irte_encode_posted(&p, &e, err, sizeof err), err,
		"must be 64-byte aligned");
	p.pda = 0;
	CATALOG("IRTE: posted descriptor at 0", irte_encode_posted(&p, &e, err, sizeof err), err,
		"must be 64-byte aligned");
	p.pda = 0x1000;
	p.src.sq = 4;
	CATALOG("IRTE: SQ 4", irte_encode_posted(&p, &e, err, sizeof err), err, "SQ 4 or SVT 0 reserved");
}

TEST(irq_decoders_refuse)
{
	char err[160];
	struct irq_req r;
	CATALOG("MSI address outside 0xFEExxxxx", irq_from_msi(0xfed00000, 0x41, &r, err, sizeof err), err,
		"must be in the interrupt window");
	CATALOG("MSI address above 4 GiB", irq_from_msi(0x1fee00000ull, 0x41, &r, err, sizeof err), err,
		"must be in the interrupt window");
	CATALOG("MSI in remappable format from the guest", irq_from_msi(0xfee00010, 0x41, &r, err, sizeof err), err,
		"must not come from the guest");
	CATALOG("MSI address with extended destination bits 11:5",
		irq_from_msi(0xfee00020, 0x41, &r, err, sizeof err), err, "reserved bits 11:5 must be 0");
	CATALOG("MSI data with bit 16", irq_from_msi(0xfee00000, 0x10041, &r, err, sizeof err), err,
		"reserved bits 13:11 and 31:16 must be 0");
	CATALOG("MSI data with bit 11", irq_from_msi(0xfee00000, 0x841, &r, err, sizeof err), err,
		"reserved bits 13:11 and 31:16 must be 0");
	CATALOG("MSI delivery mode 3", irq_from_msi(0xfee00000, 0x341, &r, err, sizeof err), err,
		"delivery mode 3 reserved");
	CATALOG("MSI delivery mode 6", irq_from_msi(0xfee00000, 0x641, &r, err, sizeof err), err,
		"delivery mode 6 reserved");
	CATALOG("IOAPIC RTE in remappable format from the guest",
		irq_from_ioapic_rte(1ull << 48 | 0x41, &r, err, sizeof err), err, "must not come from the guest");
	CATALOG("IOAPIC RTE with reserved bit 17", irq_from_ioapic_rte(1ull << 17 | 0x41, &r, err, sizeof err), err,
		"reserved bits 55:17 must be 0");
	CATALOG("IOAPIC RTE with reserved bit 55", irq_from_ioapic_rte(1ull << 55 | 0x41, &r, err, sizeof err), err,
		"reserved bits 55:17 must be 0");
	CATALOG("IOAPIC RTE delivery mode 3", irq_from_ioapic_rte(0x341, &r, err, sizeof err), err,
		"delivery mode 3 reserved");
	/* The read-only bits are not the guest's to set, and not refused. */
	CHECK_EQ(irq_from_ioapic_rte(1u << 12 | 1u << 14 | 0x41, &r, err, sizeof err), 0);
}

/* The guest: up to 8 vCPUs, APIC IDs with gaps, host APIC IDs another
 * permutation, descriptors 64 bytes apart. */
struct guest_fix {
	struct irq_vcpu v[8];
	struct irq_guest g;
};
static void rnd_guest(struct guest_fix *f)
{
	static const uint32_t ids[8] = { 0, 1, 2, 4, 6, 9, 16, 33 };
	memset(f, 0, sizeof *f);
	f->g.vcpu = f->v;
	f->g.n = 1 + pick(8);
	f->g.x2apic = pick(3) == 0;
	f->g.cluster = !f->g.x2apic && pick(2);
	f->g.host_x2apic = pick(2);
	for (uint32_t i = 0; i < f->g.n; i++) {
		f->v[i].apic_id = ids[i];
		/* Flat: one bit each; cluster: clusters 0 and 1, four each. */
		f->v[i].ldr = f->g.cluster ? (uint8_t)((i / 4) << 4 | 1u << (i % 4)) : (uint8_t)(1u << i);
		f->v[i].pid = 0x7f000000ull + 0x1000ull * i + 64 * pick(64);
		f->v[i].host_apic_id = f->g.host_x2apic ? 0x100 + 2 * i : 2 * i + 1;
	}
}

/* The model's own reading of who a compatibility-format request names
 * (SDM "Message Address Register Format", xAPIC "Logical Destination
 * Mode": flat, a mask against LDR 31:24; cluster, 7:4 the cluster, 0xF all,
 * 3:0 a mask); 0xFF physical is everyone. */
static uint64_t who(const struct guest_fix *f, const struct irm_compat *c)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < f->g.n; i++) {
		bool hit;
		if (!c->dm)
			hit = c->dest == 0xff || f->v[i].apic_id == c->dest;
		else if (!f->g.cluster)
			hit = f->v[i].ldr & c->dest;
		else
			hit = ((c->dest >> 4) == 0xf || (c->dest >> 4) == (f->v[i].ldr >> 4)) && (c->dest & f->v[i].ldr & 0xf);
		m |= (uint64_t)hit << i;
	}
	return m;
}

static uint32_t nth(uint64_t m, unsigned n)
{
	for (uint32_t i = 0; i < 64; i++)
		if ((m >> i & 1) && n-- == 0)
			return i;
	return 99;
}

static int counts[3];

/* One request of the guest through the whole path: decoded, planned,
 * written at an index, the device or IOAPIC reprogrammed in remappable
 * format; the model takes the request and must deliver what the design
 * says for what the guest meant. */
static void one_request(struct guest_fix *f, uint64_t *irt, bool msi)
{
	char err[160];
	uint64_t addr = 0xfee00000u | (uint64_t)pick(256) << 12 | (uint64_t)pick(2) << 3 | (uint64_t)pick(2) << 2;
	static const unsigned dlms[] = { 0, 0, 0, 1, 1, 2, 4, 4, 5, 7 };
	unsigned dlm = dlms[pick(ARRAY_SIZE(dlms))];
	uint8_t vector = pick(10) ? (uint8_t)(16 + pick(240)) : (uint8_t)pick(16);
	uint32_t data = vector | dlm << 8 | (uint32_t)pick(2) << 14 | (uint32_t)pick(2) << 15;
	uint64_t rte = vector | (uint64_t)dlm << 8 | (uint64_t)pick(2) << 11 | (uint64_t)pick(2) << 13 |
		       (uint64_t)pick(2) << 15 | (uint64_t)pick(2) << 16 | (uint64_t)pick(256) << 56;
	/* Destinations that name vCPUs more often than not. */
	if (pick(2)) {
		uint8_t d = pick(3) ? (uint8_t)f->v[pick(f->g.n)].apic_id : 0xff;
		addr = (addr & ~0xff000ull) | (uint64_t)d << 12;
		rte = (rte & ~(0xffull << 56)) | (uint64_t)d << 56;
	}
	struct irm_compat c;
	struct irq_req r;
	uint16_t sid = (uint16_t)rnd();
	int dec = msi ? irq_from_msi(addr, data, &r, err, sizeof err) : irq_from_ioapic_rte(rte, &r, err, sizeof err);
	CHECK_EQ(msi ? irm_compat_msi(addr, data, &c) : irm_compat_rte(rte, &c), 0);
	CHECK_EQ(dec, 0);
	if (dec)
		return;
	struct irq_plan p;
	irq_plan(&f->g, &r, sid, &p);
	uint16_t index = (uint16_t)pick(256);
	irt[2 * index] = p.irte.lo;
	irt[2 * index + 1] = p.irte.hi;
	struct irm_unit u = { .irt = irt, .size_field = 7, .eime = f->g.host_x2apic, .posting = true };
	struct irm_out o;
	memset(&o, 0, sizeof o);
	int rc = msi ? irm_msi(&u, sid, irte_msi_addr(index), 0, &o) : irm_ioapic(&u, sid, irte_ioapic_rte(index, &r), &o);
	/* The guest's own request, in compatibility format, is blocked. */
	CHECK_EQ(msi ? irm_msi(&u, sid, addr, data, &o) : irm_ioapic(&u, sid, rte, &o), 0x25);
	if (!msi) {
		/* The remappable RTE keeps what the IOAPIC itself uses. */
		uint64_t re = irte_ioapic_rte(index, &r);
		CHECK_EQ(re & 0x1a0ffull, rte & 0x1a0ffull);
	}
	/* What the design says, from the model's reading of the request. */
	uint64_t m = who(f, &c);
	unsigned n = (unsigned)__builtin_popcountll(m);
	bool block = c.dlm == 2 || c.dlm == 5 || c.dlm == 7 || (f->g.x2apic && c.dm) || !n ||
		     (c.dlm != 4 && c.vector < 16) || (c.dlm == 4 && n > 1);
	if (block) {
		CHECK_EQ(p.route, IRQ_BLOCKED);
		CHECK_EQ(rc, 0x22);
		counts[IRQ_BLOCKED]++;
		return;
	}
	CHECK_EQ(p.targets, m);
	CHECK_EQ(rc, 0);
	if (rc)
		return;
	if (c.dlm == 4 || (c.dlm == 0 && n > 1)) {
		uint32_t first = nth(m, 0);
		CHECK_EQ(p.route, IRQ_REMAPPED);
		CHECK(!o.posted);
		CHECK_EQ(o.dest, f->v[first].host_apic_id);
		CHECK_EQ(o.dlm, c.dlm);
		CHECK(!o.dm);
		if (c.dlm == 0) {
			CHECK_EQ(o.vector, c.vector);
			CHECK_EQ(o.tm, c.tm);
		}
		counts[IRQ_REMAPPED]++;
		return;
	}
	uint32_t target = nth(m, c.dlm == 1 ? c.vector % n : 0);
	CHECK_EQ(p.route, IRQ_POSTED);
	CHECK(o.posted);
	CHECK_EQ(o.pda, f->v[target].pid);
	CHECK_EQ(o.vector, c.vector);
	CHECK(!o.urgent);
	counts[IRQ_POSTED]++;
	/* Another requester than the device (or IOAPIC) is refused. */
	CHECK_EQ(msi ? irm_msi(&u, (uint16_t)(sid ^ 1), irte_msi_addr(index), 0, &o)
		     : irm_ioapic(&u, (uint16_t)(sid ^ 1), irte_ioapic_rte(index, &r), &o), 0x26);
}

TEST(irq_plan_against_the_model)
{
	static uint64_t irt[2 * 256];
	struct guest_fix f;
	memset(counts, 0, sizeof counts);
	for (int i = 0; i < 30000; i++) {
		if (i % 100 == 0)
			rnd_guest(&f);
		one_request(&f, irt, i & 1);
	}
	/* Every route taken, often. */
	CHECK(counts[IRQ_POSTED] > 3000);
	CHECK(counts[IRQ_REMAPPED] > 1000);
	CHECK(counts[IRQ_BLOCKED] > 3000);
}

/* Worked examples a reader can check by hand. */
TEST(irq_plan_examples)
{
	struct irq_vcpu v[4] = {
		{ .apic_id = 0, .ldr = 1, .pid = 0x10000, .host_apic_id = 0 },
		{ .apic_id = 1, .ldr = 2, .pid = 0x10040, .host_apic_id = 1 },
		{ .apic_id = 2, .ldr = 4, .pid = 0x10080, .host_apic_id = 2 },
		{ .apic_id = 3, .ldr = 8, .pid = 0x100c0, .host_apic_id = 3 },
	};
	struct irq_guest g = { .vcpu = v, .n = 4, .host_x2apic = true };
	struct irq_req r;
	struct irq_plan p;
	char err[128];
	/* Linux's MSI for vector 0x22 on CPU 2, physical, fixed, edge. */
	CHECK_EQ(irq_from_msi(0xfee02000, 0x4022, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0x0010, &p);
	CHECK_EQ(p.route, IRQ_POSTED);
	CHECK_EQ(p.irte.lo, 0x0001008000228001ull);     /* PDA 0x10080: address 31:6 at 63:38 */
	CHECK_EQ(p.irte.hi, 0x0000000000040010ull);     /* SVT 01, SID 00:02.0 */
	CHECK_EQ(irte_msi_addr(5), 0xfee000b0u);        /* index 5 at 19:5, bit 4 */
	/* Lowest priority to all (flat 0x0f): vector 0x31 mod 4 = 1: vCPU 1. */
	CHECK_EQ(irq_from_msi(0xfee0f004, 0x0131, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0x0010, &p);
	CHECK_EQ(p.route, IRQ_POSTED);
	CHECK_EQ(p.vcpu, 1);
	/* Fixed to all: remapped to vCPU 0's CPU, one exit. */
	CHECK_EQ(irq_from_msi(0xfee0f004, 0x0031, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0x0010, &p);
	CHECK_EQ(p.route, IRQ_REMAPPED);
	CHECK_EQ(p.targets, 0xf);
	CHECK_EQ(p.irte.lo, 0x0000000000310001ull);
	/* IOAPIC pin: NMI to APIC 3: an NMI to CPU 3. SMI and INIT: blocked. */
	CHECK_EQ(irq_from_ioapic_rte(3ull << 56 | 0x400, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0xf0f8, &p);
	CHECK_EQ(p.route, IRQ_REMAPPED);
	CHECK_EQ(p.irte.lo, 0x0000000300000081ull);     /* DLM 100b at 7:5, destination 3 */
	CHECK_EQ(irq_from_ioapic_rte(3ull << 56 | 0x200, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0xf0f8, &p);
	CHECK_EQ(p.route, IRQ_BLOCKED);
	CHECK_EQ(p.irte.lo | p.irte.hi, 0);
	CHECK_EQ(irq_from_ioapic_rte(3ull << 56 | 0x500, &r, err, sizeof err), 0);
	irq_plan(&g, &r, 0xf0f8, &p);
	CHECK_EQ(p.route, IRQ_BLOCKED);
	/* Level-triggered, active low, masked pin 0x41 on vCPU 1, index 0x8003. */
	CHECK_EQ(irq_from_ioapic_rte(1ull << 56 | 1u << 16 | 1u << 15 | 1u << 13 | 0x41, &r, err, sizeof err), 0);
	CHECK_EQ(irte_ioapic_rte(0x8003, &r), 3ull << 49 | 1ull << 48 | 1u << 16 | 1u << 15 | 1u << 13 | 1u << 11 | 0x41);
}
