/* The virtual IOAPIC's router with owned interrupt remapping (issue 27,
 * parts 3 and 4): guest entries written through IOREGSEL/IOWIN as the
 * trap does, the physical pin and the IRTEs the router writes fed to the
 * remapping unit model (irte_model.c, from the VT-d specification alone),
 * and what the unit delivers compared with what the guest asked for:
 *   - the guest's vector, trigger mode and delivery mode (fixed, lowest
 *     priority, NMI), in physical destination mode to the host APIC ID of
 *     the CPU the named vCPU runs on, 32 bits with EIM;
 *   - the request verified against the IOAPIC's source ID (SVT=1, SQ=0:
 *     any other requester faults, reason 0x26);
 *   - the remappable RTE keeps the guest's vector, polarity, trigger and
 *     mask (VT-d "Interrupt Remapping": the IOAPIC matches EOIs by the
 *     vector), carries the index (63:49, 11) and has 10:8 zero;
 *   - SMI, INIT, ExtINT, reserved modes, vectors below 16 (SDM Vol. 3A,
 *     "Error Handling": illegal) stay refused: the pin masked;
 *   - a host APIC ID above 255: delivered with EIM, refused without
 *     remapping or without EIM;
 *   - KVM's MSI_EXT_DEST_ID (Linux io_apic.c: RTE 55:49 = destination bits
 *     14:8, physical mode, bit 48 clear): honoured only where offered.
 * The rules are written out here, not taken from apic/vioapic.h. */
#include "test.h"
#include "irte_model.h"
#include "../../apic/vioapic.h"

#define T_PINS 24
#define T_SID  0xf0f8               /* the IOAPIC's requester ID (QEMU's: bus 0xf0, 31.0) */
#define T_SRC  (T_SID | 1u << 18)  /* its IRTE source fields 83:64: SVT 01b (83:82), SQ 00b, SID */
static uint32_t t_sel;
static uint64_t t_rte[T_PINS];       /* the physical IOAPIC's entries */
static uint64_t t_irt[2 * 65536];    /* the remapping table, 2^16 entries */
static unsigned t_irte_writes;
static bool t_masked_at_irte_write = true;   /* every IRTE write found its pin masked or never live */
static int t_live_pin = -1;

static uint32_t t_read(void *ctx, uint32_t reg)
{
	(void)ctx;
	if (reg == 1)
		return 0x20 | (T_PINS - 1) << 16;
	if (reg >= 0x10 && reg < 0x10 + 2 * T_PINS)
		return (uint32_t)(t_rte[(reg - 0x10) / 2] >> (reg & 1 ? 32 : 0));
	return 0;
}

static void t_write(void *ctx, uint32_t reg, uint32_t val)
{
	(void)ctx;
	t_sel = reg;
	if (reg < 0x10 || reg >= 0x10 + 2 * T_PINS)
		return;
	uint64_t *r = &t_rte[(reg - 0x10) / 2];
	*r = reg & 1 ? (uint64_t)val << 32 | (uint32_t)*r : (*r & ~0xffffffffull) | val;
}

static void t_eoi(void *ctx, uint8_t v) { (void)ctx; (void)v; }

static void t_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	(void)ctx;
	/* A live pin (unmasked, remappable, pointing here) must not see the
	 * entry change under it. */
	if (t_live_pin >= 0) {
		uint64_t r = t_rte[t_live_pin];
		uint32_t idx = (uint32_t)((r >> 49) & 0x7fff) | (uint32_t)((r >> 11) & 1) << 15;
		if (!(r & (1ull << 16)) && (r >> 48 & 1) && idx == index)
			t_masked_at_irte_write = false;
	}
	t_irt[2 * index] = e->lo;
	t_irt[2 * index + 1] = e->hi;
	t_irte_writes++;
}

static const struct vioapic_hw t_hw = { t_read, t_write, t_eoi, NULL, t_irte };

/* Guest APIC IDs and the host APIC IDs the vCPUs run on: 300 and 70000
 * need 32-bit destinations. */
static const uint32_t g_id[] = { 0, 1, 2, 3 };
static const uint32_t h_id[] = { 10, 300, 12, 70000 };

static struct vioapic_dom t_dom(bool remap, bool eim, bool ext)
{
	struct vioapic_dom d = { .apic_id = g_id, .host_apic_id = h_id, .n = 4, .guest_x2apic = true,
				 .host_vectors = { 0, 0, 0, 0x7fff000000000000ull }, .remap = remap, .eim = eim,
				 .ext_dest = ext };
	return d;
}

static struct vioapic t_a;

static void t_setup(uint32_t base)
{
	memset(t_rte, 0, sizeof t_rte);
	for (int p = 0; p < T_PINS; p++)
		t_rte[p] = 1ull << 16;
	memset(t_irt, 0, sizeof t_irt);
	t_irte_writes = 0;
	vioapic_init(&t_a, &t_hw);
	t_a.irte_base = base;
	t_a.sid = T_SID;
}

/* The guest's trapped writes: high half, then low (as Linux does). */
static void g_write(const struct vioapic_dom *d, uint32_t pin, uint64_t rte)
{
	vioapic_write(&t_a, d, &t_hw, VIOAPIC_REGSEL, 0x11 + 2 * pin);
	vioapic_write(&t_a, d, &t_hw, VIOAPIC_WIN, (uint32_t)(rte >> 32));
	vioapic_write(&t_a, d, &t_hw, VIOAPIC_REGSEL, 0x10 + 2 * pin);
	vioapic_write(&t_a, d, &t_hw, VIOAPIC_WIN, (uint32_t)rte);
}

static uint64_t g_rte(unsigned dlm, unsigned vec, bool logical, uint32_t dest)
{
	return (uint64_t)vec | (uint64_t)dlm << 8 | (logical ? 1ull << 11 : 0) | (uint64_t)dest << 56;
}

/* What the unit delivers for the pin's physical entry: the fault reason or 0. */
static int unit(uint32_t pin, bool eim, uint16_t sid, struct irm_out *o)
{
	struct irm_unit u = { t_irt, 15, eim, false };
	return irm_ioapic(&u, sid, t_rte[pin], o);
}

TEST(vioapic_ir_every_mode_through_the_remapping_model)
{
	struct vioapic_dom d = t_dom(true, true, false);
	t_setup(40);
	static const unsigned vecs[] = { 0x00, 0x0f, 0x10, 0x41, 0xef, 0xf1, 0xff };
	for (unsigned dlm = 0; dlm < 8; dlm++)
		for (unsigned vi = 0; vi < sizeof vecs / sizeof vecs[0]; vi++)
			for (unsigned lg = 0; lg < 2; lg++)
				for (unsigned lvl = 0; lvl < 2; lvl++) {
					uint32_t pin = (dlm * 7 + vi * 2 + lg) % T_PINS, vec = vecs[vi];
					/* vCPU 1 (host APIC 300): physical ID 1, logical cluster 0 bit 1. */
					uint64_t r = g_rte(dlm, vec, lg, lg ? 0x2 : 1) | (lvl ? 1ull << 15 : 0) | 1ull << 13;
					g_write(&d, pin, r);
					/* The rule: fixed, lowest priority and NMI to one vCPU; a
					 * fixed/lowest vector 16..0xef (0xf0-0xfe are this test's
					 * hypervisor vectors, 0xff in their priority class). */
					bool ok = dlm == 4 || ((dlm == 0 || dlm == 1) && vec >= 16 && vec < 0xf0);
					struct irm_out o = { 0 };
					int f = unit(pin, true, T_SID, &o);
					if (!ok) {
						CHECK(t_rte[pin] & (1ull << 16));   /* masked: nothing reaches a CPU */
						CHECK(vioapic_rte(&t_a, pin) == r); /* the guest reads back what it wrote */
						continue;
					}
					CHECK_EQ(f, 0);
					CHECK_EQ(o.posted, 0);
					CHECK_EQ(o.dest, 300);
					CHECK_EQ(o.dm, 0);
					CHECK_EQ(o.rh, 0);
					CHECK_EQ(o.dlm, dlm);
					CHECK_EQ(o.tm, lvl);
					CHECK_EQ(o.index, 40 + pin);
					if (dlm != 4)
						CHECK_EQ(o.vector, vec);
					/* The RTE: vector, polarity, trigger, mask as the guest's. */
					CHECK_EQ(t_rte[pin] & 0xff, vec);
					CHECK_EQ(t_rte[pin] >> 13 & 1, 1);
					CHECK_EQ(t_rte[pin] >> 15 & 1, lvl);
					CHECK_EQ(t_rte[pin] >> 16 & 1, 0);
					/* Another requester is refused by source-ID verification. */
					CHECK_EQ(unit(pin, true, T_SID ^ 1, &o), 0x26);
					g_write(&d, pin, r | 1ull << 16);          /* the guest masks: so does the pin */
					CHECK(t_rte[pin] & (1ull << 16));
				}
	CHECK(t_masked_at_irte_write);
}

TEST(vioapic_ir_lowest_priority_nmi_and_index_bit_15)
{
	struct vioapic_dom d = t_dom(true, true, false);
	t_setup(0x8000 - 4);                 /* pins 4.. use indices with bit 15 set (RTE bit 11) */
	struct irm_out o = { 0 };
	g_write(&d, 6, g_rte(1, 0x43, false, 0xff));           /* 0x43 % 4 = 3: vCPU 3, host 70000 */
	CHECK_EQ(unit(6, true, T_SID, &o), 0);
	CHECK_EQ(o.index, 0x8002);
	CHECK_EQ(o.dest, 70000);
	CHECK_EQ(o.dlm, 1);
	CHECK_EQ(t_rte[6] >> 11 & 1, 1);
	CHECK_EQ(t_rte[6] >> 8 & 7, 0);                         /* 10:8 zero in remappable format */
	g_write(&d, 7, g_rte(4, 0, false, 0xff));              /* NMI to all: still refused */
	CHECK(t_rte[7] & (1ull << 16));
	CHECK_EQ(t_a.pin[7].refused, VR_NMI_NOT_ONE);
	g_write(&d, 7, g_rte(4, 0, false, 2));
	CHECK_EQ(unit(7, true, T_SID, &o), 0);
	CHECK_EQ(o.dlm, 4);
	CHECK_EQ(o.dest, 12);
	g_write(&d, 8, g_rte(0, 0x40, false, 0xff));           /* fixed to several: refused as before */
	CHECK_EQ(t_a.pin[8].refused, VR_MULTICAST);
	/* The destination moves while the pin is live: masked around the IRTE write. */
	t_live_pin = 7;
	g_write(&d, 7, g_rte(4, 0, false, 0));
	t_live_pin = -1;
	CHECK(t_masked_at_irte_write);
	CHECK_EQ(unit(7, true, T_SID, &o), 0);
	CHECK_EQ(o.dest, 10);
	CHECK_EQ(t_a.pin[7].reach.host_id, 10);
	CHECK_EQ(t_a.pin[7].reach.mode, VMODE_REMAPPED);
	/* Rewriting the same entry writes no IRTE. */
	unsigned w = t_irte_writes;
	g_write(&d, 7, g_rte(4, 0, false, 0) | 1ull << 16);
	g_write(&d, 7, g_rte(4, 0, false, 0));
	CHECK_EQ(t_irte_writes, w);
}

TEST(vioapic_ir_host_apic_id_above_255)
{
	uint64_t p;
	struct vioapic_irte e;
	struct vioapic_dom d = t_dom(false, false, false);
	CHECK_EQ(vioapic_route(&d, g_rte(0, 0x40, false, 1), &p), VR_DEST_ABOVE_255);   /* no remapping */
	d = t_dom(true, false, false);
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 1), 5, T_SRC, &p, &e), VR_DEST_ABOVE_255);  /* no EIM */
	CHECK_EQ(e.lo, 0);
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 2), 5, T_SRC, &p, &e), VR_NONE);  /* 8-bit: 47:40 */
	CHECK_EQ(e.lo >> 40 & 0xff, 12);
	CHECK_EQ(e.lo >> 32 & 0xff, 0);
	d = t_dom(true, true, false);
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 1), 5, T_SRC, &p, &e), VR_NONE);
	CHECK_EQ(e.lo >> 32, 300);
	CHECK_EQ(e.hi, (uint64_t)T_SID | 1ull << 18);           /* SID 79:64, SQ 0, SVT 01 */
	/* Without EIM the model takes 8 bits: the router must not have used 32. */
	t_setup(0);
	d = t_dom(true, false, false);
	g_write(&d, 2, g_rte(0, 0x50, false, 2));
	struct irm_out o = { 0 };
	CHECK_EQ(unit(2, false, T_SID, &o), 0);
	CHECK_EQ(o.dest, 12);
}

TEST(vioapic_ir_msi_ext_dest_id)
{
	static const uint32_t gid_big[] = { 0, 1, 2, 300 };     /* a guest APIC ID above 255 */
	uint64_t p, ext300 = (300ull & 0xff) << 56 | (300ull >> 8) << 49;
	struct vioapic_irte e;
	struct vioapic_dom d = t_dom(true, true, false);
	d.apic_id = gid_big;
	/* Not offered: 55:49 refused as before. */
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 0) | ext300, 1, T_SRC, &p, &e), VR_EXT_DEST);
	CHECK_EQ(vioapic_route(&d, g_rte(0, 0x40, false, 0) | ext300, &p), VR_EXT_DEST);
	d.ext_dest = true;
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 0) | ext300, 1, T_SRC, &p, &e), VR_NONE);
	CHECK_EQ(e.lo >> 32, 70000);                             /* guest 300 is vCPU 3 */
	/* 15 bits: 0x1ff is APIC ID 511 (no vCPU), not the broadcast 0xff. */
	CHECK_EQ(vioapic_route_ir(&d, g_rte(1, 0x40, false, 0xff) | 1ull << 49, 1, T_SRC, &p, &e), VR_NO_VCPU);
	/* The remappable-format bit and logical destinations with 55:49 stay refused. */
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, false, 0) | 1ull << 48, 1, T_SRC, &p, &e), VR_EXT_DEST);
	CHECK_EQ(vioapic_route_ir(&d, g_rte(0, 0x40, true, 1) | 1ull << 49, 1, T_SRC, &p, &e), VR_EXT_DEST);
	/* Through the trap and the model: delivered to vCPU 3's host. */
	t_setup(100);
	g_write(&d, 9, g_rte(0, 0x61, false, 0) | ext300 | 1ull << 15);
	struct irm_out o = { 0 };
	CHECK_EQ(unit(9, true, T_SID, &o), 0);
	CHECK_EQ(o.dest, 70000);
	CHECK_EQ(o.vector, 0x61);
	CHECK_EQ(o.tm, 1);
	CHECK_EQ(vioapic_rte(&t_a, 9), g_rte(0, 0x61, false, 0) | ext300 | 1ull << 15);   /* read back */
}

/* VT-d posting (every unit with CAP.PI, the vCPUs processing posted
 * interrupts): an edge fixed or lowest-priority route is a posted IRTE on
 * the chosen vCPU's own descriptor with the guest's vector (VT-d "IRTE for
 * Posted Interrupts"); an NMI and a level-triggered route stay remapped to
 * the vCPU's CPU. Judged by the model with CAP.PI. */
TEST(vioapic_ir_posted_on_the_vcpus_own_descriptor)
{
	static const uint64_t pid[] = { 0x1234000, 0x7fff5000, 0x123456789000ull, 0x40 };
	struct vioapic_dom d = t_dom(true, true, false);
	d.post = true;
	d.pid = pid;
	t_setup(0x8000);                    /* index bit 15 on every pin */
	struct irm_unit u = { t_irt, 15, true, true };
	struct irm_out o;
	for (uint32_t v = 0; v < 4; v++) {
		g_write(&d, v, g_rte(0, 0x41 + v, false, v));
		memset(&o, 0, sizeof o);
		CHECK_EQ(irm_ioapic(&u, T_SID, t_rte[v], &o), 0);
		CHECK(o.posted);
		CHECK_EQ(o.pda, pid[v]);
		CHECK_EQ(o.vector, 0x41 + v);
		CHECK(!o.urgent);
		CHECK_EQ(o.index, 0x8000 + v);
		CHECK_EQ(irm_ioapic(&u, T_SID + 1, t_rte[v], &o), 0x26);   /* another requester */
		/* The report's reading of the IRTE: posted, to that vCPU. */
		CHECK_EQ(t_a.pin[v].reach.mode, VMODE_POSTED);
		CHECK_EQ(t_a.pin[v].reach.vcpu, (int32_t)v);
	}
	/* Lowest priority to vCPUs 1-3 (x2APIC cluster 0, bits 1-3): posted to
	 * one of them, the (vector mod 3)-th. */
	g_write(&d, 5, g_rte(1, 0x52, true, 0xe));
	CHECK_EQ(irm_ioapic(&u, T_SID, t_rte[5], &o), 0);
	CHECK(o.posted);
	CHECK_EQ(o.pda, pid[1 + 0x52 % 3]);
	CHECK_EQ(t_a.pin[5].reach.vcpu, 1 + 0x52 % 3);
	/* NMI: remapped to the vCPU's CPU. Level: remapped (its EOI must
	 * reach the IOAPIC). */
	g_write(&d, 6, g_rte(4, 0x00, false, 1));
	CHECK_EQ(irm_ioapic(&u, T_SID, t_rte[6], &o), 0);
	CHECK(!o.posted);
	CHECK_EQ(o.dlm, 4);
	CHECK_EQ(o.dest, 300);
	CHECK_EQ(t_a.pin[6].reach.mode, VMODE_REMAPPED);
	CHECK_EQ(t_a.pin[6].reach.host_id, 300);
	CHECK_EQ(t_a.pin[6].reach.vcpu, 1);
	g_write(&d, 7, g_rte(0, 0x61, false, 3) | 1ull << 15);
	CHECK_EQ(irm_ioapic(&u, T_SID, t_rte[7], &o), 0);
	CHECK(!o.posted);
	CHECK(o.tm);
	CHECK_EQ(o.dest, 70000);
	/* Without CAP.PI in the model the posted entry is a reserved-field fault. */
	struct irm_unit nopi = { t_irt, 15, true, false };
	CHECK_EQ(irm_ioapic(&nopi, T_SID, t_rte[0], &o), 0x24);
}
