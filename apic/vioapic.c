/* The virtual IOAPIC (vioapic.h): the 82093AA register interface over
 * per-pin virtual entries, and the router that turns an entry into the
 * physical pin's compatibility-format entry. */
#include "vioapic.h"

#define REG_ID   0x00
#define REG_VER  0x01
#define REG_ARB  0x02
#define REG_RTE0 0x10
#define ID_RW    0x0f000000u             /* 82093AA IOAPICID: bits 27:24 */
/* The bits of the guest's entry the physical entry keeps as they are. */
#define RTE_KEEP (0xffull | 7ull << 8 | VIOAPIC_ACTIVE_LOW | VIOAPIC_LEVEL | VIOAPIC_MASKED)

enum { DLM_FIXED = 0, DLM_LOWEST = 1, DLM_SMI = 2, DLM_NMI = 4, DLM_INIT = 5, DLM_EXTINT = 7 };

const char *const vioapic_refusal_names[VR_COUNT] = {
	[VR_NONE] = "routed", [VR_SMI] = "smi", [VR_INIT] = "init", [VR_EXTINT] = "extint",
	[VR_RESERVED_MODE] = "reserved_mode", [VR_NMI_NOT_ONE] = "nmi_not_one_vcpu",
	[VR_VECTOR_LOW] = "vector_below_16", [VR_VECTOR_HOST] = "vector_of_hypervisor",
	[VR_NO_VCPU] = "no_vcpu", [VR_MULTICAST] = "fixed_multicast", [VR_XAPIC_LOGICAL] = "xapic_logical",
	[VR_DEST_ABOVE_255] = "apic_id_above_255", [VR_EXT_DEST] = "ext_dest_or_remappable",
	[VR_VECTOR_HOST_CLASS] = "vector_in_hypervisor_class",
};

/* The guest's destination: 8 bits (63:56), or 15 with MSI_EXT_DEST_ID
 * (55:49 are bits 14:8; physical mode only). */
static uint32_t dest_of(const struct vioapic_dom *d, uint64_t vrte)
{
	uint32_t dest = VIOAPIC_DEST(vrte);
	if (d->ext_dest && !(vrte & VIOAPIC_LOGICAL))
		dest |= VIOAPIC_EXT_DEST(vrte) << 8;
	return dest;
}

/* With KVM's MSI_EXT_DEST_ID a physical destination has 15 bits, and
 * 0xFF is APIC ID 255 where a vCPU has it (KVM without its x2APIC
 * broadcast quirk does the same); x2APIC broadcast is 0xFFFFFFFF, which 15
 * bits cannot say. */
static bool has_id_255(const struct vioapic_dom *d)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (d->apic_id[i] == 0xff)
			return true;
	return false;
}

/* The lowest priority class (vector 7:4) of a hypervisor vector; 16: none.
 * SDM Vol. 3A, "Task and Processor Priorities": a vector in service raises
 * the processor priority to its class, and the local APIC then holds every
 * interrupt of that class and below. */
static unsigned host_class(const struct vioapic_dom *d)
{
	for (unsigned v = 0; v < 256; v++)
		if (d->host_vectors[v / 64] >> (v % 64) & 1)
			return v >> 4;
	return 16;
}

/* Does the guest's destination name vCPU i? Physical: its APIC ID, or
 * 0xFF for all. Logical, x2APIC cluster mode: the 8 bits zero-extended to
 * 32 are cluster 0 with members 7:0, the x2APIC IDs 0-7 (SDM Vol. 3A,
 * "Logical Destination Mode in x2APIC Mode": LDR = cluster 31:16, bit
 * (ID & 15) in 15:0), 0xFF all. */
static bool names(const struct vioapic_dom *d, uint32_t i, uint64_t vrte)
{
	uint32_t dest = dest_of(d, vrte);
	if (dest == 0xff && !(d->ext_dest && !(vrte & VIOAPIC_LOGICAL) && has_id_255(d)))
		return true;                   /* broadcast, unless 15-bit destinations name APIC ID 255 */
	if (!(vrte & VIOAPIC_LOGICAL))
		return d->apic_id[i] == dest;
	return d->apic_id[i] < 8 && (dest >> d->apic_id[i] & 1);
}

/* The checks both formats share: VR_NONE and the vCPU that takes the
 * interrupt, or a refusal. */
static enum vioapic_refusal pick(const struct vioapic_dom *d, uint64_t vrte, uint32_t *vcpu)
{
	/* 55:48 hold the PCH's extended destination ID and the remappable
	 * format bit: refused, except KVM's 55:49 where offered (not with
	 * logical destinations, which stay 8 bits). */
	uint64_t ext = vrte & 0x00ff000000000000ull;
	if (ext && !(d->ext_dest && !(vrte & VIOAPIC_FORMAT) && !(vrte & VIOAPIC_LOGICAL)))
		return VR_EXT_DEST;
	unsigned dlm = VIOAPIC_DLM(vrte);
	uint8_t vec = VIOAPIC_VECTOR(vrte);
	switch (dlm) {
	case DLM_SMI:    return VR_SMI;
	case DLM_INIT:   return VR_INIT;
	case DLM_EXTINT: return VR_EXTINT;
	case DLM_FIXED: case DLM_LOWEST: case DLM_NMI: break;
	default:         return VR_RESERVED_MODE;
	}
	if ((vrte & VIOAPIC_LOGICAL) && !d->guest_x2apic)
		return VR_XAPIC_LOGICAL;
	uint32_t count = 0, first = 0;
	for (uint32_t i = 0; i < d->n; i++)
		if (names(d, i, vrte) && count++ == 0)
			first = i;
	if (!count)
		return VR_NO_VCPU;
	if (dlm == DLM_NMI && count != 1)
		return VR_NMI_NOT_ONE;             /* a broadcast NMI would reach parked CPUs too */
	if (dlm != DLM_NMI) {
		/* SDM Vol. 3A, "Error Handling": vectors 0-15 are illegal to a
		 * local APIC (receive illegal vector). */
		if (vec < 16)
			return VR_VECTOR_LOW;
		if (d->host_vectors[vec / 64] >> (vec % 64) & 1)
			return VR_VECTOR_HOST;
		/* A level-triggered vector stays in the CPU's ISR until the
		 * guest's EOI (an edge one until the hypervisor's): in the class
		 * of a hypervisor vector it would hold the timer, kick and
		 * notification vectors on that CPU meanwhile. */
		if ((unsigned)(vec >> 4) >= host_class(d))
			return VR_VECTOR_HOST_CLASS;
		if (dlm == DLM_FIXED && count > 1)
			return VR_MULTICAST;       /* one physical destination cannot name them all */
	}
	*vcpu = first;
	if (dlm == DLM_LOWEST && count > 1) {
		/* Lowest priority among several: the (vector mod count)-th, as
		 * iommu/irte.c's irq_plan chooses (KVM's vector hashing). */
		uint32_t k = vec % count;
		for (uint32_t i = first; i < d->n; i++)
			if (names(d, i, vrte) && k-- == 0) {
				*vcpu = i;
				break;
			}
	}
	return VR_NONE;
}

/* Refused: masked, with the guest's vector and trigger mode still, so that
 * an EOI of that vector clears a remote IRR the pin holds. */
static uint64_t refused_rte(uint64_t vrte)
{
	return (vrte & (0xffull | VIOAPIC_ACTIVE_LOW | VIOAPIC_LEVEL)) | VIOAPIC_MASKED;
}

enum vioapic_refusal vioapic_route(const struct vioapic_dom *d, uint64_t vrte, uint64_t *prte)
{
	*prte = refused_rte(vrte);
	uint32_t v = 0;
	enum vioapic_refusal r = pick(d, vrte, &v);
	if (r != VR_NONE)
		return r;
	uint32_t host = d->host_apic_id[v];
	if (host > 255)
		return VR_DEST_ABOVE_255;          /* compatibility format: 8 bits */
	*prte = (vrte & RTE_KEEP) | (uint64_t)host << 56;   /* physical destination mode */
	return VR_NONE;
}

/* VT-d "Interrupt Remapping Table Entry (IRTE) for Remapped Interrupts". */
#define IRTE_P         BIT(0)
#define IRTE_TM        BIT(4)
#define IRTE_DLM(m)    ((uint64_t)(m) << 5)
#define IRTE_VEC(v)    ((uint64_t)(v) << 16)
#define IRTE_DST32(d)  ((uint64_t)(d) << 32)      /* x2APIC mode (IRTA.EIME) */
#define IRTE_DST8(d)   ((uint64_t)(d) << 40)      /* xAPIC mode: 47:40 */
#define IRTE_SRC(s)    ((uint64_t)((s) & 0xfffff)) /* SID 79:64, SQ 81:80, SVT 83:82 (VIOAPIC_SRC_*) */
#define IRTE_IM        BIT(15)                    /* posted format */
#define IRTE_PDA_LO(a) ((a) & 0xffffffc0ull) << 32 /* descriptor address 31:6 in 63:38 */
#define IRTE_PDA_HI(a) ((a) >> 32 << 32)          /* 63:32 in 127:96 */
/* VT-d "Interrupt Remapping": an I/OxAPIC RTE in remappable format: 63:49
 * interrupt index 14:0, 48 format = 1, 11 index 15, 10:8 zero; vector
 * (7:0, the IOAPIC matches EOIs by it), polarity, trigger and mask kept. */
#define RTE_IDX(i)     ((uint64_t)((i) & 0x7fff) << 49 | ((i) & 0x8000 ? BIT(11) : 0))

const char *const vioapic_mode_names[VMODE_COUNT] = { "direct", "remapped", "posted" };

struct vioapic_reach vioapic_reach(const struct vioapic_dom *d, uint32_t dest, const struct vioapic_irte *e)
{
	struct vioapic_reach r = { VMODE_DIRECT, -1, dest };
	if (d->remap && (e->lo & IRTE_IM)) {
		/* The descriptor's address: 31:6 from 63:38, 63:32 from 127:96. */
		uint64_t pid = (e->lo >> 32 & 0xffffffc0ull) | (e->hi >> 32 << 32);
		r.mode = VMODE_POSTED;
		r.host_id = 0xffffffffu;
		for (uint32_t i = 0; d->pid && i < d->n; i++)
			if (d->pid[i] == pid) {
				r.vcpu = (int32_t)i;
				r.host_id = d->host_apic_id[i];
			}
		return r;
	}
	if (d->remap) {
		r.mode = VMODE_REMAPPED;
		r.host_id = (uint32_t)(d->eim ? e->lo >> 32 : (e->lo >> 40) & 0xff);
	}
	for (uint32_t i = 0; i < d->n; i++)
		if (d->host_apic_id[i] == r.host_id)
			r.vcpu = (int32_t)i;
	return r;
}

enum vioapic_refusal vioapic_route_ir(const struct vioapic_dom *d, uint64_t vrte, uint32_t index, uint32_t src,
				      uint64_t *prte, struct vioapic_irte *irte)
{
	*prte = refused_rte(vrte);
	*irte = (struct vioapic_irte){ 0, 0 };
	uint32_t v = 0;
	enum vioapic_refusal r = pick(d, vrte, &v);
	if (r != VR_NONE)
		return r;
	uint32_t host = d->host_apic_id[v];
	unsigned dlm = VIOAPIC_DLM(vrte);
	if (d->post && d->pid && (dlm == 0 || dlm == 1) && !(vrte & VIOAPIC_LEVEL)) {
		/* Posted to the vCPU's own descriptor (URG clear): its NV and
		 * NDST say which CPU is notified, so no destination here. */
		irte->lo = IRTE_P | IRTE_IM | IRTE_VEC(VIOAPIC_VECTOR(vrte)) | IRTE_PDA_LO(d->pid[v]);
		irte->hi = IRTE_SRC(src) | IRTE_PDA_HI(d->pid[v]);
		*prte = (vrte & (0xffull | VIOAPIC_ACTIVE_LOW | VIOAPIC_LEVEL | VIOAPIC_MASKED)) | VIOAPIC_FORMAT |
			RTE_IDX(index);
		return VR_NONE;
	}
	if (host > 255 && !d->eim)
		return VR_DEST_ABOVE_255;          /* an 8-bit IRTE destination */
	/* Physical destination mode (DM 0), no redirection hint; NMI's vector
	 * is ignored by the APIC but kept. */
	irte->lo = IRTE_P | (vrte & VIOAPIC_LEVEL ? IRTE_TM : 0) | IRTE_DLM(VIOAPIC_DLM(vrte)) |
		   IRTE_VEC(VIOAPIC_VECTOR(vrte)) | (d->eim ? IRTE_DST32(host) : IRTE_DST8(host));
	irte->hi = IRTE_SRC(src);
	*prte = (vrte & (0xffull | VIOAPIC_ACTIVE_LOW | VIOAPIC_LEVEL | VIOAPIC_MASKED)) | VIOAPIC_FORMAT |
		RTE_IDX(index);
	return VR_NONE;
}

void vioapic_init(struct vioapic *a, const struct vioapic_hw *hw)
{
	a->id = hw->read(hw->ctx, REG_ID) & ID_RW;
	a->ver = hw->read(hw->ctx, REG_VER);
	a->arb = hw->read(hw->ctx, REG_ARB);
	a->npins = ((a->ver >> 16) & 0xff) + 1;
	a->regsel = 0;
	a->eois = 0;
	for (unsigned r = 0; r < VR_COUNT; r++)
		a->refused_by[r] = 0;
	for (uint32_t p = 0; p < a->npins; p++) {
		uint64_t r = hw->read(hw->ctx, REG_RTE0 + 2 * p) | (uint64_t)hw->read(hw->ctx, REG_RTE0 + 2 * p + 1) << 32;
		a->pin[p] = (struct vioapic_pin){ .vrte = (r & VIOAPIC_RTE_RW) | VIOAPIC_MASKED,
						  .prte = (r & ~VIOAPIC_RO) | VIOAPIC_MASKED };
	}
}

uint64_t vioapic_rte(const struct vioapic *a, uint32_t pin)
{
	return pin < a->npins ? a->pin[pin].vrte : 0;
}

/* Unimplemented registers and offsets read 0 and take no writes (the data
 * sheet leaves them undefined; 0 is this implementation's choice). */
uint32_t vioapic_read(struct vioapic *a, const struct vioapic_hw *hw, uint32_t off)
{
	if (off == VIOAPIC_REGSEL)
		return a->regsel;
	if (off != VIOAPIC_WIN)
		return 0;                          /* the EOI register is write-only */
	uint32_t reg = a->regsel;
	if (reg == REG_ID)
		return a->id;
	if (reg == REG_VER)
		return a->ver;
	if (reg == REG_ARB)
		return a->arb;
	if (reg < REG_RTE0 || reg >= REG_RTE0 + 2 * a->npins)
		return 0;
	struct vioapic_pin *p = &a->pin[(reg - REG_RTE0) / 2];
	if ((reg & 1) || p->host)
		return (uint32_t)(p->vrte >> ((reg & 1) * 32));
	/* Delivery status and remote IRR are the physical pin's: it has the
	 * guest's vector and trigger mode, and the guest's EOIs reach it. A
	 * refused pin is masked there and shows neither. */
	return (uint32_t)p->vrte | (hw->read(hw->ctx, reg) & (uint32_t)VIOAPIC_RO);
}

/* The physical entry, masked first while the destination changes. */
static void program(const struct vioapic_hw *hw, uint32_t pin, struct vioapic_pin *p, uint64_t prte)
{
	if (prte == p->prte)
		return;
	uint32_t lo = REG_RTE0 + 2 * pin;
	if ((uint32_t)(p->prte >> 32) != (uint32_t)(prte >> 32)) {
		if (!(p->prte & VIOAPIC_MASKED))
			hw->write(hw->ctx, lo, (uint32_t)p->prte | (uint32_t)VIOAPIC_MASKED);
		hw->write(hw->ctx, lo + 1, (uint32_t)(prte >> 32));
	}
	hw->write(hw->ctx, lo, (uint32_t)prte);
	p->prte = prte;
}

/* With remapping: the pin masked while its IRTE changes under it (an
 * unchanged IRTE is not rewritten), the IRTE written and its IEC entry
 * invalidated by the callback, then the entry. A refused pin keeps its
 * last IRTE: its entry is masked and names it no longer matters. */
static void program_ir(uint32_t index, const struct vioapic_hw *hw, uint32_t pin, struct vioapic_pin *p,
		       uint64_t prte, const struct vioapic_irte *e)
{
	if ((e->lo & IRTE_P) && (e->lo != p->irte.lo || e->hi != p->irte.hi)) {
		if (!(p->prte & VIOAPIC_MASKED)) {
			hw->write(hw->ctx, REG_RTE0 + 2 * pin, (uint32_t)p->prte | (uint32_t)VIOAPIC_MASKED);
			p->prte |= VIOAPIC_MASKED;
		}
		hw->irte(hw->ctx, index, e);
		p->irte = *e;
	}
	program(hw, pin, p, prte);
}

int vioapic_write(struct vioapic *a, const struct vioapic_dom *d, const struct vioapic_hw *hw, uint32_t off,
		  uint32_t val)
{
	if (off == VIOAPIC_REGSEL) {
		a->regsel = val & 0xff;
		return -1;
	}
	if (off == VIOAPIC_EOI) {
		/* ICH/PCH data sheets: version 0x20 has the EOI register; the
		 * vector is the guest's, the physical pins have it too. */
		if ((a->ver & 0xff) >= 0x20) {
			hw->eoi(hw->ctx, (uint8_t)val);
			a->eois++;
		}
		return -1;
	}
	if (off != VIOAPIC_WIN)
		return -1;
	uint32_t reg = a->regsel;
	if (reg == REG_ID) {
		a->id = val & ID_RW;               /* the guest's name for it; the physical ID stays */
		return -1;
	}
	if (reg < REG_RTE0 || reg >= REG_RTE0 + 2 * a->npins)
		return -1;                         /* VER, ARB: read-only */
	uint32_t pin = (reg - REG_RTE0) / 2;
	struct vioapic_pin *p = &a->pin[pin];
	uint64_t half = reg & 1 ? (uint64_t)val << 32 | (uint32_t)p->vrte : (p->vrte & ~0xffffffffull) | val;
	uint64_t vrte = half & VIOAPIC_RTE_RW & ~VIOAPIC_RO;
	p->writes++;
	if (vrte == p->vrte)
		return -1;
	p->vrte = vrte;
	if (p->host)
		return (int)pin;                   /* the hypervisor's pin: the guest's entry is virtual */
	uint64_t prte;
	struct vioapic_irte e = { 0, 0 };
	if (d->remap)
		p->refused = (uint8_t)vioapic_route_ir(d, vrte, a->irte_base + pin, VIOAPIC_SRC_ID(a->sid), &prte, &e);
	else
		p->refused = (uint8_t)vioapic_route(d, vrte, &prte);
	if (p->refused != VR_NONE && !(vrte & VIOAPIC_MASKED)) {
		p->refusals++;
		a->refused_by[p->refused]++;
	}
	if (d->remap)
		program_ir(a->irte_base + pin, hw, pin, p, prte, &e);
	else
		program(hw, pin, p, prte);
	if (!(prte & VIOAPIC_MASKED)) {
		p->routes++;
		p->last_vector = VIOAPIC_VECTOR(prte);
		p->reach = vioapic_reach(d, VIOAPIC_DEST(prte), &e);
	}
	return (int)pin;
}

bool vioapic_host_pin(struct vioapic *a, const struct vioapic_dom *d, const struct vioapic_hw *hw, uint32_t pin,
		      uint8_t vector, uint32_t host)
{
	if (pin >= a->npins || (host > 255 && !(d->remap && d->eim)))
		return false;
	struct vioapic_pin *p = &a->pin[pin];
	p->host = true;
	if (d->remap) {
		const struct vioapic_irte e = { IRTE_P | IRTE_VEC(vector) | (d->eim ? IRTE_DST32(host) : IRTE_DST8(host)),
						IRTE_SRC(VIOAPIC_SRC_ID(a->sid)) };
		program_ir(a->irte_base + pin, hw, pin, p, vector | VIOAPIC_FORMAT | RTE_IDX(a->irte_base + pin), &e);
	} else {
		program(hw, pin, p, vector | (uint64_t)host << 56);
	}
	return true;
}

void vioapic_host_pin_off(struct vioapic *a, const struct vioapic_hw *hw, uint32_t pin)
{
	if (pin < a->npins && a->pin[pin].host)
		program(hw, pin, &a->pin[pin], a->pin[pin].prte | VIOAPIC_MASKED);
}
