/* The IRTE encoder, the guest's interrupt decoders and the posting policy
 * (see irte.h). Bit positions from the VT-d specification: "Interrupt
 * Remapping Table Entry (IRTE) for Remapped Interrupts" and "... for Posted
 * Interrupts", "Interrupt Requests in Compatibility Format" and "Interrupt
 * Requests in Remappable Format" (MSI and I/OxAPIC). */
#include "irte.h"
#include "../lib/printk.h"

/* IRTE, low quadword (both formats): P 0, FPD 1, IM 15 (1: posted), vector
 * 23:16. Remapped: DM 2, RH 3, TM 4, DLM 7:5, destination 63:32 (xAPIC: the
 * APIC ID in 47:40). Posted: URG 14, descriptor address 31:6 in 63:38. */
#define IRTE_P              BIT(0)
#define IRTE_FPD            BIT(1)
#define IRTE_DM             BIT(2)
#define IRTE_RH             BIT(3)
#define IRTE_TM             BIT(4)
#define IRTE_DLM_SHIFT      5
#define IRTE_URG            BIT(14)
#define IRTE_IM_POSTED      BIT(15)
#define IRTE_VECTOR_SHIFT   16
#define IRTE_DST_SHIFT      32
#define IRTE_XAPIC_DST_SHIFT 40
#define IRTE_PDAL_SHIFT     38            /* address bit 6 lands at bit 38 */
/* High quadword: SID 79:64, SQ 81:80, SVT 83:82; posted: descriptor
 * address 63:32 in 127:96. */
#define IRTE_SQ_SHIFT       16
#define IRTE_SVT_SHIFT      18
#define IRTE_PDAH_SHIFT     32

/* Compatibility-format MSI address: 31:20 0xFEE, 19:12 destination, 11:5
 * reserved, 4 format (0), 3 RH, 2 DM. Data: 7:0 vector, 10:8 delivery
 * mode, 13:11 reserved, 14 level (assert), 15 trigger mode, 31:16 reserved. */
#define MSI_WINDOW          0xfee00000u
#define MSI_WINDOW_MASK     0xfff00000u
#define MSI_DEST_SHIFT      12
#define MSI_ADDR_RSVD       0x00000fe0u
#define MSI_ADDR_IF         BIT(4)
#define MSI_ADDR_RH         BIT(3)
#define MSI_ADDR_DM         BIT(2)
#define MSI_DATA_RSVD       0xffff3800u
#define MSI_DATA_TM         BIT(15)
/* Remappable: 19:5 index 14:0, 4 format (1), 3 SHV, 2 index 15. */
#define MSI_IDX_SHIFT       5
#define MSI_IDX15           BIT(2)

/* IOAPIC RTE: 7:0 vector, 10:8 delivery mode, 11 DM, 12 delivery status
 * (RO), 13 polarity, 14 remote IRR (RO), 15 TM, 16 mask, 55:17 reserved,
 * 63:56 destination. Remappable: 11 index 15, 48 format, 63:49 index 14:0,
 * 10:8 zero. */
#define RTE_DM              BIT(11)
#define RTE_POLARITY_LOW    BIT(13)
#define RTE_TM              BIT(15)
#define RTE_MASK            BIT(16)
#define RTE_RSVD            0x00fffffffffe0000ull
#define RTE_IF              BIT(48)
#define RTE_DEST_SHIFT      56
#define RTE_IDX_SHIFT       49
#define RTE_IDX15           BIT(11)

static bool dlm_reserved(unsigned dlm) { return dlm == 3 || dlm == 6 || dlm > 7; }

static uint64_t source_bits(const struct irte_source *s)
{
	return s->sid | (uint64_t)s->sq << IRTE_SQ_SHIFT | (uint64_t)s->svt << IRTE_SVT_SHIFT;
}

static int check_source(const struct irte_source *s, char *err, size_t errlen)
{
	if (s->sq > 3 || s->svt > IRTE_SVT_BUS) {
		snprintf(err, errlen, "irte: SQ %u or SVT %u reserved", s->sq, s->svt);
		return -1;
	}
	return 0;
}

int irte_encode_remapped(const struct irte_remapped *r, struct irte *out, char *err, size_t errlen)
{
	if (check_source(&r->src, err, errlen))
		return -1;
	if (dlm_reserved(r->dlm)) {
		snprintf(err, errlen, "irte: delivery mode %u reserved", r->dlm);
		return -1;
	}
	if (!r->x2apic && r->dest > 0xff) {
		snprintf(err, errlen, "irte: destination 0x%x needs x2APIC mode (IRTA.EIME)", r->dest);
		return -1;
	}
	uint64_t lo = IRTE_P | (uint64_t)r->dlm << IRTE_DLM_SHIFT | (uint64_t)r->vector << IRTE_VECTOR_SHIFT;
	lo |= r->fpd ? IRTE_FPD : 0;
	lo |= r->logical ? IRTE_DM : 0;
	lo |= r->redir_hint ? IRTE_RH : 0;
	lo |= r->level ? IRTE_TM : 0;
	lo |= (uint64_t)r->dest << (r->x2apic ? IRTE_DST_SHIFT : IRTE_XAPIC_DST_SHIFT);
	out->lo = lo;
	out->hi = source_bits(&r->src);
	return 0;
}

int irte_encode_posted(const struct irte_posted *p, struct irte *out, char *err, size_t errlen)
{
	if (check_source(&p->src, err, errlen))
		return -1;
	if (!p->pda || (p->pda & 63)) {
		snprintf(err, errlen, "irte: posted descriptor 0x%llx must be 64-byte aligned", (unsigned long long)p->pda);
		return -1;
	}
	uint64_t lo = IRTE_P | IRTE_IM_POSTED | (uint64_t)p->vector << IRTE_VECTOR_SHIFT;
	lo |= p->fpd ? IRTE_FPD : 0;
	lo |= p->urgent ? IRTE_URG : 0;
	lo |= (p->pda & 0xffffffc0ull) << (IRTE_PDAL_SHIFT - 6);
	out->lo = lo;
	out->hi = source_bits(&p->src) | (p->pda >> 32) << IRTE_PDAH_SHIFT;
	return 0;
}

int irq_from_msi(uint64_t addr, uint32_t data, struct irq_req *out, char *err, size_t errlen)
{
	uint32_t lo = (uint32_t)addr;
	if ((addr >> 32) || (lo & MSI_WINDOW_MASK) != MSI_WINDOW) {
		snprintf(err, errlen, "msi: address 0x%llx must be in the interrupt window 0xfeexxxxx",
			 (unsigned long long)addr);
		return -1;
	}
	if (lo & MSI_ADDR_IF) {
		snprintf(err, errlen, "msi: address 0x%x in remappable format must not come from the guest", lo);
		return -1;
	}
	if (lo & MSI_ADDR_RSVD) {
		snprintf(err, errlen, "msi: address 0x%x: reserved bits 11:5 must be 0", lo);
		return -1;
	}
	if (data & MSI_DATA_RSVD) {
		snprintf(err, errlen, "msi: data 0x%x: reserved bits 13:11 and 31:16 must be 0", data);
		return -1;
	}
	unsigned dlm = (data >> 8) & 7;
	if (dlm_reserved(dlm)) {
		snprintf(err, errlen, "msi: data 0x%x: delivery mode %u reserved", data, dlm);
		return -1;
	}
	*out = (struct irq_req){
		.vector = (uint8_t)data,
		.dlm = (uint8_t)dlm,
		.logical = lo & MSI_ADDR_DM,
		.level = data & MSI_DATA_TM,
		.redir_hint = lo & MSI_ADDR_RH,
		.dest = (lo >> MSI_DEST_SHIFT) & 0xff,
	};
	return 0;
}

int irq_from_ioapic_rte(uint64_t rte, struct irq_req *out, char *err, size_t errlen)
{
	if (rte & RTE_IF) {
		snprintf(err, errlen, "ioapic: RTE 0x%llx in remappable format must not come from the guest",
			 (unsigned long long)rte);
		return -1;
	}
	if (rte & RTE_RSVD) {
		snprintf(err, errlen, "ioapic: RTE 0x%llx: reserved bits 55:17 must be 0", (unsigned long long)rte);
		return -1;
	}
	unsigned dlm = (rte >> 8) & 7;
	if (dlm_reserved(dlm)) {
		snprintf(err, errlen, "ioapic: RTE 0x%llx: delivery mode %u reserved", (unsigned long long)rte, dlm);
		return -1;
	}
	*out = (struct irq_req){
		.vector = (uint8_t)rte,
		.dlm = (uint8_t)dlm,
		.logical = rte & RTE_DM,
		.level = rte & RTE_TM,
		.active_low = rte & RTE_POLARITY_LOW,
		.masked = rte & RTE_MASK,
		.dest = (uint32_t)(rte >> RTE_DEST_SHIFT),
	};
	return 0;
}

/* The vCPUs an 8-bit compatibility-format destination names: physical, an
 * APIC ID or 0xFF (all); logical (xAPIC only), flat: a bit mask against
 * LDR; cluster: 7:4 the cluster (0xF all), 3:0 a mask within it. */
static uint64_t destinations(const struct irq_guest *g, const struct irq_req *r)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < g->n && i < 64; i++) {
		const struct irq_vcpu *v = &g->vcpu[i];
		bool hit;
		if (!r->logical)
			hit = r->dest == 0xff || v->apic_id == r->dest;
		else if (!g->cluster)
			hit = (v->ldr & r->dest) != 0;
		else
			hit = ((r->dest >> 4) == 0xf || (r->dest >> 4) == (v->ldr >> 4u)) && (r->dest & v->ldr & 0xf);
		if (hit)
			m |= 1ull << i;
	}
	return m;
}

static uint32_t bit_count(uint64_t m)
{
	uint32_t n = 0;
	for (; m; m &= m - 1)
		n++;
	return n;
}

static uint32_t nth_bit(uint64_t m, uint32_t n)
{
	for (uint32_t i = 0; i < 64; i++)
		if ((m >> i & 1) && n-- == 0)
			return i;
	return 0;
}

static void blocked(struct irq_plan *p, const char *why)
{
	p->route = IRQ_BLOCKED;
	p->irte = (struct irte){ 0, 0 };
	p->why = why;
}

void irq_plan(const struct irq_guest *g, const struct irq_req *r, uint16_t sid, struct irq_plan *out)
{
	char err[96];
	struct irte_source src = { .sid = sid, .sq = 0, .svt = IRTE_SVT_SID };
	*out = (struct irq_plan){ .route = IRQ_BLOCKED };
	switch (r->dlm) {
	case IRQ_DLM_SMI:    blocked(out, "SMI from a device: the guest owns no SMM"); return;
	case IRQ_DLM_INIT:   blocked(out, "INIT from a device would reset a CPU"); return;
	case IRQ_DLM_EXTINT: blocked(out, "ExtINT: the 8259 is not routed through the IOAPIC"); return;
	default: break;
	}
	if (g->x2apic && r->logical) {
		blocked(out, "logical destination of an x2APIC guest (needs interrupt remapping it does not see)");
		return;
	}
	out->targets = destinations(g, r);
	uint32_t count = bit_count(out->targets);
	if (!count) {
		blocked(out, "no vCPU at the destination");
		return;
	}
	if (r->dlm != IRQ_DLM_NMI && r->vector < 16) {
		blocked(out, "vector below 16 (an illegal vector to a local APIC)");
		return;
	}
	bool ok;
	if (r->dlm == IRQ_DLM_NMI) {
		if (count > 1) {
			blocked(out, "NMI to several vCPUs");
			return;
		}
		out->vcpu = nth_bit(out->targets, 0);
		struct irte_remapped rm = { .dest = g->vcpu[out->vcpu].host_apic_id, .x2apic = g->host_x2apic,
					    .dlm = IRQ_DLM_NMI, .src = src };
		ok = !irte_encode_remapped(&rm, &out->irte, err, sizeof err);
		out->route = IRQ_REMAPPED;
		out->why = "NMI: an NMI exit on the vCPU's CPU, injected";
	} else if (r->dlm == IRQ_DLM_FIXED && count > 1) {
		out->vcpu = nth_bit(out->targets, 0);
		struct irte_remapped rm = { .dest = g->vcpu[out->vcpu].host_apic_id, .x2apic = g->host_x2apic,
					    .level = r->level, .dlm = IRQ_DLM_FIXED, .vector = r->vector, .src = src };
		ok = !irte_encode_remapped(&rm, &out->irte, err, sizeof err);
		out->route = IRQ_REMAPPED;
		out->why = "fixed to several vCPUs: one exit, posted to each by the hypervisor";
	} else {
		out->vcpu = nth_bit(out->targets, r->dlm == IRQ_DLM_LOWPRI ? r->vector % count : 0);
		struct irte_posted pp = { .pda = g->vcpu[out->vcpu].pid, .vector = r->vector, .src = src };
		ok = !irte_encode_posted(&pp, &out->irte, err, sizeof err);
		out->route = IRQ_POSTED;
		out->why = NULL;
	}
	if (!ok)
		blocked(out, "the vCPU's descriptor or CPU cannot be encoded");
}

uint32_t irte_msi_addr(uint16_t index)
{
	return MSI_WINDOW | (uint32_t)(index & 0x7fff) << MSI_IDX_SHIFT | MSI_ADDR_IF |
	       ((index & 0x8000) ? MSI_IDX15 : 0);
}

uint64_t irte_ioapic_rte(uint16_t index, const struct irq_req *r)
{
	uint64_t v = (uint64_t)(index & 0x7fff) << RTE_IDX_SHIFT | RTE_IF | r->vector;
	v |= (index & 0x8000) ? RTE_IDX15 : 0;
	v |= r->masked ? RTE_MASK : 0;
	v |= r->level ? RTE_TM : 0;
	v |= r->active_low ? RTE_POLARITY_LOW : 0;
	return v;
}
