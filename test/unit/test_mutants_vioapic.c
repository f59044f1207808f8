/* apic/vioapic.c where a mutation check found it unguarded (issue 36,
 * faults 8-10). The rules, from the documents:
 *  - 82093AA data sheet, "I/O Redirection Table Registers": IOREGSEL at
 *    +0x00, IOWIN at +0x10, RTE n at registers 0x10 + 2n (low) and
 *    0x11 + 2n (high); vector 7:0, delivery mode 10:8, mask bit 16,
 *    destination 63:56 (8 bits, physical mode: an APIC ID);
 *  - so a compatibility-format entry cannot name a host APIC ID above 255;
 *  - an entry is written one dword at a time: while an unmasked pin's
 *    destination changes, its low dword must be masked first, or the pin
 *    may fire with the new vector and the old destination (or the other
 *    way round) between the two writes;
 *  - VT-d, "Interrupt Remapping Table Entry (IRTE) for Posted Interrupts":
 *    the descriptor's address 31:6 in IRTE bits 63:38 and 63:32 in bits
 *    127:96; an IRTE changed under a live pin is rewritten (and its
 *    interrupt-entry-cache entry invalidated, "Interrupt Entry Cache
 *    Invalidate") while the pin is masked. */
#include "test.h"
#include "irte_model.h"
#include "../../apic/vioapic.h"

#define V_PINS 24

struct vwrite { uint32_t reg, val; };
static struct vwrite v_log[256];
static unsigned v_nlog;
static uint64_t v_rte[V_PINS];
static uint64_t v_irt[2 * 64];
static unsigned v_irte_writes;

static uint32_t v_read(void *ctx, uint32_t reg)
{
	(void)ctx;
	if (reg == 1)
		return 0x20 | (V_PINS - 1) << 16;  /* version 0x20, 24 entries */
	if (reg >= 0x10 && reg < 0x10 + 2 * V_PINS)
		return (uint32_t)(v_rte[(reg - 0x10) / 2] >> (reg & 1 ? 32 : 0));
	return 0;
}
static void v_write(void *ctx, uint32_t reg, uint32_t val)
{
	(void)ctx;
	if (v_nlog < 256)
		v_log[v_nlog++] = (struct vwrite){ reg, val };
	if (reg < 0x10 || reg >= 0x10 + 2 * V_PINS)
		return;
	uint64_t *r = &v_rte[(reg - 0x10) / 2];
	*r = reg & 1 ? (uint64_t)val << 32 | (uint32_t)*r : (*r & ~0xffffffffull) | val;
}
static void v_eoi(void *ctx, uint8_t vec) { (void)ctx, (void)vec; }
static void v_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	(void)ctx;
	if (index < 64) {
		v_irt[2 * index] = e->lo;
		v_irt[2 * index + 1] = e->hi;
	}
	v_irte_writes++;
}
static const struct vioapic_hw v_hw = { v_read, v_write, v_eoi, NULL, v_irte };
static struct vioapic v_a;

static void v_setup(void)
{
	for (unsigned p = 0; p < V_PINS; p++)
		v_rte[p] = 1ull << 16;
	memset(v_irt, 0, sizeof v_irt);
	v_irte_writes = 0;
	vioapic_init(&v_a, &v_hw);
	v_a.irte_base = 0;
	v_a.sid = 0xf0f8;
	v_nlog = 0;
}

static void g_reg(const struct vioapic_dom *d, uint32_t reg, uint32_t val)
{
	vioapic_write(&v_a, d, &v_hw, 0x00, reg);
	vioapic_write(&v_a, d, &v_hw, 0x10, val);
}

/* Fault 8: a host APIC ID of 256 (or more) does not fit in 8 bits: it
 * would reach APIC ID 0 (256 & 0xff). Refused; 254 is not. */
TEST(mutant_vioapic_host_apic_id_256_is_refused)
{
	static const uint32_t gid[3] = { 0, 1, 2 }, hid[3] = { 256, 254, 0x1ff };
	struct vioapic_dom d = { .apic_id = gid, .host_apic_id = hid, .n = 3, .guest_x2apic = true };
	uint64_t p = 0;
	CHECK_STR(vioapic_refusal_names[vioapic_route(&d, 0x31ull | 0ull << 56, &p)], "apic_id_above_255");
	CHECK(p & (1ull << 16));                          /* the physical entry masked */
	CHECK_EQ(vioapic_route(&d, 0x31ull | 1ull << 56, &p), VR_NONE);
	CHECK_EQ(p >> 56, 254);
	CHECK_STR(vioapic_refusal_names[vioapic_route(&d, 0x31ull | 2ull << 56, &p)], "apic_id_above_255");
	/* Through the registers: pin 3 aimed at vCPU 0 stays masked. */
	v_setup();
	g_reg(&d, 0x17, 0);
	g_reg(&d, 0x16, 0x31);
	CHECK(v_rte[3] & (1ull << 16));
	CHECK_EQ(v_a.refused_by[VR_DEST_ABOVE_255], 1);
}

/* Fault 9: an unmasked pin moved to another vCPU: the physical writes are
 * the low dword masked, the high dword (the destination), the low dword. */
TEST(mutant_vioapic_destination_change_masks_the_pin_first)
{
	static const uint32_t gid[2] = { 0, 1 }, hid[2] = { 4, 9 };
	struct vioapic_dom d = { .apic_id = gid, .host_apic_id = hid, .n = 2, .guest_x2apic = true };
	v_setup();
	g_reg(&d, 0x15, 0);                               /* pin 2: vCPU 0 */
	g_reg(&d, 0x14, 0x41);                            /* unmasked, vector 0x41 */
	CHECK_EQ(v_rte[2], 4ull << 56 | 0x41);
	v_nlog = 0;
	g_reg(&d, 0x15, 1u << 24);                        /* to vCPU 1 (host 9) */
	CHECK_EQ(v_nlog, 3);
	CHECK_EQ(v_log[0].reg, 0x14);
	CHECK_EQ(v_log[0].val, 0x41 | 1u << 16);          /* masked first */
	CHECK_EQ(v_log[1].reg, 0x15);
	CHECK_EQ(v_log[1].val, 9u << 24);
	CHECK_EQ(v_log[2].reg, 0x14);
	CHECK_EQ(v_log[2].val, 0x41);
	CHECK_EQ(v_rte[2], 9ull << 56 | 0x41);
	/* A masked pin needs no masking first: the high dword, then the low. */
	g_reg(&d, 0x14, 0x41 | 1u << 16);
	v_nlog = 0;
	g_reg(&d, 0x15, 0);
	CHECK_EQ(v_nlog, 2);
	CHECK_EQ(v_log[0].reg, 0x15);
	CHECK_EQ(v_log[1].val, 0x41 | 1u << 16);
}

/* Fault 10: a posted pin moved between two vCPUs whose descriptors differ
 * only above bit 31 (so only the IRTE's high qword changes): the IRTE is
 * rewritten (IEC invalidated with it), and the unit then posts into the
 * new vCPU's descriptor. */
TEST(mutant_vioapic_posted_irte_rewritten_when_only_its_high_half_changes)
{
	static const uint32_t gid[2] = { 0, 1 }, hid[2] = { 4, 9 };
	static const uint64_t pid[2] = { 0x100001000ull, 0x200001000ull };
	struct vioapic_dom d = { .apic_id = gid, .host_apic_id = hid, .n = 2, .guest_x2apic = true,
				 .remap = true, .eim = true, .post = true, .pid = pid };
	v_setup();
	g_reg(&d, 0x13, 0);                               /* pin 1: vCPU 0 */
	g_reg(&d, 0x12, 0x52);
	CHECK_EQ(v_irte_writes, 1);
	struct irm_unit u = { v_irt, 5, true, true };     /* 2^6 entries, EIME, posting */
	struct irm_out o;
	CHECK_EQ(irm_ioapic(&u, 0xf0f8, v_rte[1], &o), 0);
	CHECK(o.posted);
	CHECK_EQ(o.pda, pid[0]);
	g_reg(&d, 0x13, 1u << 24);                        /* to vCPU 1 */
	CHECK_EQ(v_irte_writes, 2);
	CHECK_EQ(v_irt[2 * 1] >> 38 << 6, pid[1] & 0xffffffc0ull);
	CHECK_EQ(v_irt[2 * 1 + 1] >> 32, pid[1] >> 32);
	CHECK_EQ(irm_ioapic(&u, 0xf0f8, v_rte[1], &o), 0);
	CHECK(o.posted);
	CHECK_EQ(o.pda, pid[1]);
	CHECK_EQ(o.vector, 0x52);
}
