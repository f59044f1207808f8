/* The virtual IOAPIC (apic/vioapic.c) against a model of the 82093AA's
 * register interface written out here from its data sheet ("I/O APIC
 * Registers", "I/O Redirection Table Registers") and the ICH/PCH data
 * sheets (the EOI register at 0x40 from version 0x20; RTE bits 55:48, the
 * extended destination ID, read/write):
 *   IOREGSEL +0x00: bits 7:0 read/write.  IOWIN +0x10: the selected register.
 *   0x00 ID: 27:24 read/write, the rest 0.  0x01 VER, 0x02 ARB: read-only.
 *   0x10 + 2n / 0x11 + 2n: entry n, low and high half. Read-only: 12
 *   (delivery status), 14 (remote IRR). Bits 47:17 reserved (read 0).
 *   Remote IRR: set when a level interrupt is accepted, cleared by an EOI
 *   (broadcast or the EOI register) of the entry's vector. A masked entry
 *   delivers nothing.
 * The hypervisor's rule on top (docs/interrupts.md): an entry it refuses
 * (SMI, INIT, ExtINT, reserved modes, NMI not to exactly one vCPU, vector
 * below 16 or of the hypervisor for fixed/lowest priority, fixed to several
 * vCPUs, no vCPU named) delivers nothing, as if masked.
 * The physical IOAPIC behind the virtual one is a second instance of the
 * same model: what the guest reads must be what the model says, and the
 * physical entry must name the vCPU's host APIC ID. */
#include "test.h"
#include "../../apic/vioapic.h"

#define M_PINS 24
struct m_ioapic {
	uint32_t sel, id, ver, arb;
	uint64_t rte[M_PINS];
	uint32_t writes[M_PINS];        /* physical writes per pin (the physical instance) */
	uint32_t other_writes;
};
#define M_RW   (0xffff000000000000ull | 0xffffull | (1ull << 16))
#define M_RIRR (1ull << 14)
#define M_MASK (1ull << 16)
#define M_LVL  (1ull << 15)

static void m_init(struct m_ioapic *m, uint32_t ver)
{
	memset(m, 0, sizeof *m);
	m->ver = ver | (M_PINS - 1) << 16;
	m->arb = 0x0e000000;
	m->id = 0x02000000;
	for (int i = 0; i < M_PINS; i++)
		m->rte[i] = M_MASK | (0x30ull + (uint64_t)i);
}

static uint32_t m_reg_read(struct m_ioapic *m, uint32_t reg)
{
	if (reg == 0) return m->id;
	if (reg == 1) return m->ver;
	if (reg == 2) return m->arb;
	if (reg >= 0x10 && reg < 0x10 + 2 * M_PINS)
		return (uint32_t)(m->rte[(reg - 0x10) / 2] >> (reg & 1 ? 32 : 0));
	return 0;
}

static void m_reg_write(struct m_ioapic *m, uint32_t reg, uint32_t val)
{
	if (reg == 0) {
		m->id = val & 0x0f000000;
		m->other_writes++;
	} else if (reg >= 0x10 && reg < 0x10 + 2 * M_PINS) {
		uint64_t *r = &m->rte[(reg - 0x10) / 2];
		uint64_t w = reg & 1 ? ((uint64_t)val << 32) | (uint32_t)*r : (*r & ~0xffffffffull) | val;
		*r = (w & M_RW & ~(M_RIRR | (1ull << 12))) | (*r & M_RIRR);
		m->writes[(reg - 0x10) / 2]++;
	} else {
		m->other_writes++;
	}
}

static void m_eoi(struct m_ioapic *m, uint8_t vec)
{
	for (int i = 0; i < M_PINS; i++)
		if ((uint8_t)m->rte[i] == vec && (m->rte[i] & M_LVL))
			m->rte[i] &= ~M_RIRR;
}

/* The guest's vCPUs: guest APIC IDs and the host APIC IDs they run on
 * (different here, so that a missing translation shows). */
static const uint32_t gid[] = { 0, 1, 2, 3 };
static const uint32_t hid[] = { 10, 11, 12, 13 };
#define NV 4

/* The hypervisor's rule, written out: which vCPUs the entry names and
 * whether it is delivered at all. */
static bool m_refused(uint64_t r, uint32_t *target)
{
	unsigned dlm = (r >> 8) & 7, vec = (uint8_t)r, dest = (uint8_t)(r >> 56);
	if (r & 0x00ff000000000000ull)
		return true;
	if (dlm == 2 || dlm == 3 || dlm == 5 || dlm == 6 || dlm == 7)
		return true;
	uint32_t n = 0, first = 0;
	for (uint32_t i = 0; i < NV; i++) {
		bool hit = dest == 0xff || (r & (1ull << 11) ? (gid[i] < 8 && (dest >> gid[i] & 1)) : gid[i] == dest);
		if (hit && n++ == 0)
			first = i;
	}
	if (n == 0 || (dlm == 4 && n != 1))
		return true;
	/* 0xf0-0xfe: the test's hypervisor vectors, and with them their
	 * priority class (SDM Vol. 3A, "Task and Processor Priorities": a
	 * vector in service holds its class and those below): 0xf0-0xff. */
	if (dlm != 4 && (vec < 16 || vec >= 0xf0))
		return true;
	if (dlm == 0 && n > 1)
		return true;
	*target = first;
	if (dlm == 1 && n > 1) {
		uint32_t k = vec % n;
		for (uint32_t i = 0; i < NV; i++)
			if ((dest == 0xff || (r & (1ull << 11) ? (gid[i] < 8 && (dest >> gid[i] & 1)) : gid[i] == dest)) &&
			    k-- == 0) {
				*target = i;
				break;
			}
	}
	return false;
}

/* An interrupt on pin p: the guest's model accepts it as the rule says. */
static void m_raise(struct m_ioapic *m, int p, bool refused)
{
	if ((m->rte[p] & M_MASK) || refused)
		return;
	if ((m->rte[p] & M_LVL) && !(m->rte[p] & M_RIRR))
		m->rte[p] |= M_RIRR;
}

static struct m_ioapic phys;
static uint32_t hw_read(void *ctx, uint32_t reg) { return m_reg_read(ctx, reg); }
static void hw_write(void *ctx, uint32_t reg, uint32_t val) { m_reg_write(ctx, reg, val); }
static unsigned eoi_reg_writes;
static void hw_eoi(void *ctx, uint8_t vec) { eoi_reg_writes++; m_eoi(ctx, vec); }
static const struct vioapic_hw hw = { hw_read, hw_write, hw_eoi, &phys, NULL };

static struct vioapic_dom dom(void)
{
	struct vioapic_dom d = { .apic_id = gid, .host_apic_id = hid, .n = NV, .guest_x2apic = true,
				 .host_vectors = { 0, 0, 0, 0x7fff000000000000ull } };   /* 0xf0-0xfe */
	return d;
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t pick(uint32_t n) { return (uint32_t)(test_xorshift(&rng) % n); }

static uint32_t random_half(bool high)
{
	if (high) {
		uint32_t dest = pick(4) ? pick(5) : pick(3) ? 0xff : pick(256);
		return dest << 24 | (pick(8) ? 0 : pick(256) << 16) | (pick(8) ? 0 : pick(0x10000));
	}
	uint32_t modes[] = { 0, 0, 0, 1, 1, 4, 2, 5, 7, 3, 6 };
	uint32_t v = (pick(10) ? 0x20 + pick(0xe0) : pick(256)) | modes[pick(11)] << 8;
	v |= pick(4) ? 0 : 1u << 11;
	v |= pick(2) ? 1u << 15 : 0;
	v |= pick(3) ? 0 : 1u << 16;
	v |= pick(4) ? 0 : 1u << 13;
	v |= pick(6) ? 0 : (1u << 12) | (1u << 14) | (pick(0x8000) << 17);   /* read-only and reserved bits */
	return v;
}

TEST(vioapic_against_the_82093aa_model)
{
	for (int round = 0; round < 2; round++) {
		uint32_t ver = round ? 0x20 : 0x11;
		static struct m_ioapic model;
		static struct vioapic a;
		m_init(&model, ver);
		m_init(&phys, ver);
		eoi_reg_writes = 0;
		vioapic_init(&a, &hw);
		struct vioapic_dom d = dom();
		CHECK_EQ(a.npins, M_PINS);
		unsigned reads = 0, raises = 0, routed_raises = 0;
		for (int it = 0; it < 40000; it++) {
			uint32_t op = pick(100);
			if (op < 20) {
				uint32_t sel = pick(8) ? 0x10 + pick(2 * M_PINS) : pick(4) ? pick(3) : pick(256);
				model.sel = sel & 0xff;
				vioapic_write(&a, &d, &hw, VIOAPIC_REGSEL, sel | (pick(4) ? 0 : pick(0x100) << 8));
			} else if (op < 45) {
				uint32_t val = model.sel >= 0x10 ? random_half(model.sel & 1) : pick(0xffffffffu);
				uint32_t pin = (model.sel - 0x10) / 2;
				uint32_t before[M_PINS];
				memcpy(before, phys.writes, sizeof before);
				uint32_t other = phys.other_writes;
				if (model.sel != 1 && model.sel != 2)
					m_reg_write(&model, model.sel, val);
				vioapic_write(&a, &d, &hw, VIOAPIC_WIN, val);
				/* No physical pin is written but the one the guest named. */
				for (uint32_t p = 0; p < M_PINS; p++)
					if (phys.writes[p] != before[p] && !(model.sel >= 0x10 && p == pin && model.sel < 0x10 + 2 * M_PINS)) {
						test_fail(__FILE__, __LINE__, "a physical pin the guest did not name was written");
						return;
					}
				CHECK_EQ(phys.other_writes, other);   /* the physical ID, VER, ARB never */
			} else if (op < 75) {
				bool regsel = pick(5) == 0;
				uint32_t want = regsel ? model.sel : m_reg_read(&model, model.sel);
				uint32_t got = vioapic_read(&a, &hw, regsel ? VIOAPIC_REGSEL : VIOAPIC_WIN);
				reads++;
				if (got != want) {
					char m[160];
					snprintf(m, sizeof m, "it %d: read of %s (sel 0x%x): 0x%08x, the model says 0x%08x", it,
						 regsel ? "IOREGSEL" : "IOWIN", model.sel, got, want);
					test_fail(__FILE__, __LINE__, m);
					return;
				}
			} else if (op < 90) {
				int p = (int)pick(M_PINS);
				uint32_t t = 0;
				bool refused = m_refused(model.rte[p], &t);
				m_raise(&model, p, refused);
				/* The physical pin, programmed by vioapic, receives it. */
				m_raise(&phys, p, false);
				raises++;
				if (!refused && !(model.rte[p] & M_MASK)) {
					routed_raises++;
					uint64_t pr = phys.rte[p];
					CHECK_EQ((uint8_t)(pr >> 56), hid[t]);
					CHECK_EQ(pr & (1ull << 11), 0);             /* physical destination mode */
					CHECK_EQ((uint8_t)pr, (uint8_t)model.rte[p]);
					CHECK_EQ(pr & (7ull << 8), model.rte[p] & (7ull << 8));
				} else if (!(phys.rte[p] & M_MASK)) {
					char m[200];
					snprintf(m, sizeof m, "it %d: pin %d: guest 0x%016llx (refused by the rule: %d), physical 0x%016llx unmasked",
						 it, p, (unsigned long long)model.rte[p], refused, (unsigned long long)phys.rte[p]);
					test_fail(__FILE__, __LINE__, m);
					return;
				}
			} else if (op < 98) {
				uint8_t vec = (uint8_t)(pick(2) ? model.rte[pick(M_PINS)] : pick(256));
				m_eoi(&model, vec);
				m_eoi(&phys, vec);                               /* the EOI broadcast */
			} else {
				uint8_t vec = (uint8_t)model.rte[pick(M_PINS)];
				if (ver >= 0x20)
					m_eoi(&model, vec);                      /* the EOI register */
				vioapic_write(&a, &d, &hw, VIOAPIC_EOI, vec);
			}
		}
		CHECK(reads > 10000);
		CHECK(routed_raises > 500);
		CHECK(raises > routed_raises);
		if (ver < 0x20)
			CHECK_EQ(eoi_reg_writes, 0);
		else
			CHECK(eoi_reg_writes > 100);
	}
}

static uint64_t rte(unsigned dlm, unsigned vec, bool logical, uint8_t dest)
{
	return (uint64_t)dest << 56 | (logical ? 1ull << 11 : 0) | (uint64_t)dlm << 8 | vec;
}

TEST(vioapic_refused_modes_and_vectors)
{
	struct vioapic_dom d = dom();
	uint64_t p;
	CHECK_EQ(vioapic_route(&d, rte(2, 0x40, false, 1) | 1ull << 15, &p), VR_SMI);
	CHECK_EQ(p, 0x40 | 1ull << 15 | VIOAPIC_MASKED);    /* vector and trigger kept for the EOI */
	CHECK_EQ(vioapic_route(&d, rte(5, 0x40, false, 1), &p), VR_INIT);
	CHECK_EQ(vioapic_route(&d, rte(7, 0x40, false, 1), &p), VR_EXTINT);
	CHECK_EQ(vioapic_route(&d, rte(3, 0x40, false, 1), &p), VR_RESERVED_MODE);
	CHECK_EQ(vioapic_route(&d, rte(6, 0x40, false, 1), &p), VR_RESERVED_MODE);
	CHECK_EQ(vioapic_route(&d, rte(4, 0, false, 0xff), &p), VR_NMI_NOT_ONE);   /* would reach parked CPUs */
	CHECK_EQ(vioapic_route(&d, rte(4, 0, false, 7), &p), VR_NO_VCPU);          /* a parked CPU's ID */
	CHECK_EQ(vioapic_route(&d, rte(4, 0, false, 2), &p), VR_NONE);
	CHECK_EQ(p, rte(4, 0, false, 12));
	for (unsigned v = 0; v < 16; v++) {
		CHECK_EQ(vioapic_route(&d, rte(0, v, false, 1), &p), VR_VECTOR_LOW);
		CHECK_EQ(vioapic_route(&d, rte(1, v, false, 1), &p), VR_VECTOR_LOW);
	}
	CHECK_EQ(vioapic_route(&d, rte(0, 16, false, 1), &p), VR_NONE);
	CHECK_EQ(vioapic_route(&d, rte(0, 0xf1, false, 1), &p), VR_VECTOR_HOST);
	/* 0xff is a legal vector (SDM: only 0-15 are illegal) and not the
	 * hypervisor's, but in the class of its vectors: held in service (a
	 * level pin until the guest's EOI) it would mask them (issue 33, item
	 * 6: 501bce7 routed it, VR_NONE). A class below is the guest's. */
	CHECK_EQ(vioapic_route(&d, rte(0, 0xff, false, 1), &p), VR_VECTOR_HOST_CLASS);
	CHECK_EQ(vioapic_route(&d, rte(0, 0xf3, false, 1) | 1ull << 15, &p), VR_VECTOR_HOST);
	CHECK_EQ(vioapic_route(&d, rte(0, 0xef, false, 1) | 1ull << 15, &p), VR_NONE);
	CHECK_EQ(p, rte(0, 0xef, false, 11) | 1ull << 15);
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 0xff), &p), VR_MULTICAST);
	CHECK_EQ(vioapic_route(&d, rte(1, 0x41, false, 0xff), &p), VR_NONE);       /* 0x41 % 4 = 1: vCPU 1 */
	CHECK_EQ(p, rte(1, 0x41, false, 11));
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, true, 0x4), &p), VR_NONE);         /* cluster 0, member 2 */
	CHECK_EQ(p, rte(0, 0x40, false, 12));
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, true, 0x30), &p), VR_NO_VCPU);
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 1) | 1ull << 48, &p), VR_EXT_DEST);
	d.guest_x2apic = false;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, true, 0x4), &p), VR_XAPIC_LOGICAL);
	uint32_t big[] = { 10, 300, 12, 13 };
	d.host_apic_id = big;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 1), &p), VR_DEST_ABOVE_255);
	CHECK_EQ(p, 0x40 | VIOAPIC_MASKED);
	/* The mask and trigger mode follow the guest's entry. */
	d.host_apic_id = hid;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 3) | 1ull << 16 | 1ull << 15 | 1ull << 13, &p), VR_NONE);
	CHECK_EQ(p, rte(0, 0x40, false, 13) | 1ull << 16 | 1ull << 15 | 1ull << 13);
}

TEST(vioapic_refusals_counted_and_pin_stays_masked)
{
	static struct vioapic a;
	m_init(&phys, 0x11);
	vioapic_init(&a, &hw);
	struct vioapic_dom d = dom();
	vioapic_write(&a, &d, &hw, VIOAPIC_REGSEL, 0x10 + 2 * 5);
	vioapic_write(&a, &d, &hw, VIOAPIC_WIN, (uint32_t)rte(5, 0x40, false, 0));   /* INIT, unmasked */
	CHECK_EQ(a.pin[5].refused, VR_INIT);
	CHECK_EQ(a.pin[5].refusals, 1);
	CHECK_EQ(a.refused_by[VR_INIT], 1);
	vioapic_write(&a, &d, &hw, VIOAPIC_WIN, (uint32_t)rte(5, 0x40, false, 0) | 1u << 16);   /* masked: not counted */
	CHECK_EQ(a.pin[5].refusals, 1);
	vioapic_write(&a, &d, &hw, VIOAPIC_WIN, (uint32_t)rte(0, 5, false, 0));
	CHECK_EQ(a.refused_by[VR_VECTOR_LOW], 1);
	CHECK_EQ(a.pin[5].refusals, 2);
	vioapic_write(&a, &d, &hw, VIOAPIC_WIN, (uint32_t)rte(5, 0x40, false, 0));
	CHECK(phys.rte[5] & M_MASK);
	CHECK_EQ(vioapic_read(&a, &hw, VIOAPIC_WIN), (uint32_t)rte(5, 0x40, false, 0));   /* reads as written */
	vioapic_write(&a, &d, &hw, VIOAPIC_WIN, (uint32_t)rte(0, 0x40, false, 0));
	CHECK_EQ(a.pin[5].refused, VR_NONE);
	CHECK(!(phys.rte[5] & M_MASK));
	CHECK_EQ(phys.rte[5], rte(0, 0x40, false, 10));
	CHECK_EQ(a.pin[5].routes, 1);
	CHECK_EQ(a.pin[5].last_vector, 0x40);
	CHECK_EQ(a.pin[5].reach.host_id, 10);
	CHECK_EQ(a.pin[5].reach.mode, VMODE_DIRECT);
	CHECK_EQ(vioapic_rte(&a, 5), rte(0, 0x40, false, 0));
	CHECK_EQ(vioapic_rte(&a, 99), 0);
}

/* Issue 33, item 7: with KVM's MSI_EXT_DEST_ID offered (15-bit physical
 * destinations) and a vCPU whose APIC ID is 255, destination 0xFF names
 * that vCPU (x2APIC broadcast is 0xFFFFFFFF, which 15 bits cannot say);
 * without the offer, or without such a vCPU, 0xFF is the xAPIC broadcast.
 * 501bce7 took 0xFF as broadcast always: the fixed interrupt to vCPU 2
 * was refused as fixed_multicast. */
TEST(vioapic_ext_dest_0xff_is_apic_id_255)
{
	static const uint32_t ids[3] = { 0, 1, 255 }, host[3] = { 10, 11, 12 };
	struct vioapic_dom d = { .apic_id = ids, .host_apic_id = host, .n = 3, .guest_x2apic = true, .ext_dest = true,
				 .host_vectors = { 0, 0, 0, 0x7fff000000000000ull } };
	uint64_t p;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 0xff), &p), VR_NONE);
	CHECK_EQ(p >> 56, 12);                              /* vCPU 2's CPU */
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 0xff) | 1ull << 49, &p), VR_NO_VCPU);   /* 0x1ff: nobody */
	CHECK_EQ(vioapic_route(&d, rte(4, 0, false, 0xff), &p), VR_NONE);              /* an NMI to that one vCPU */
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, true, 0xff), &p), VR_MULTICAST);       /* logical: 8 bits, all */
	d.ext_dest = false;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 0xff), &p), VR_MULTICAST);      /* broadcast */
	static const uint32_t ids2[3] = { 0, 1, 2 };
	d.apic_id = ids2;
	d.ext_dest = true;
	CHECK_EQ(vioapic_route(&d, rte(0, 0x40, false, 0xff), &p), VR_MULTICAST);      /* no APIC ID 255: broadcast */
}
