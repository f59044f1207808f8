/* The virtual x2APIC page and its register writes (see vapic.h). */
#include "vapic.h"
#include "../lib/string.h"

void vapic_reset(uint8_t *page, uint32_t apic_id, uint32_t version)
{
	memset(page, 0, PAGE_SIZE);
	vapic_set(page, APIC_ID, apic_id);
	vapic_set(page, APIC_VERSION, version);
	vapic_set(page, APIC_LDR, x2apic_ldr(apic_id));
	vapic_set(page, APIC_SVR, 0xff);
	static const uint32_t lvts[] = { APIC_LVT_CMCI, APIC_LVT_TIMER, APIC_LVT_THERM, APIC_LVT_PMC,
					 APIC_LVT_LINT0, APIC_LVT_LINT1, APIC_LVT_ERROR };
	for (size_t i = 0; i < ARRAY_SIZE(lvts); i++)
		vapic_set(page, lvts[i], APIC_LVT_MASKED);
}

int vapic_take_posted(uint8_t *page, struct pi_desc *pid)
{
	uint64_t pir[4];
	int top = -1;
	if (!(__atomic_load_n(&pid->control, __ATOMIC_SEQ_CST) & PI_ON))
		return -1;
	pi_take(pid, pir);
	for (int w = 0; w < 8; w++) {
		uint32_t bits = (uint32_t)(pir[w / 2] >> (32 * (w % 2)));
		if (!bits)
			continue;
		__atomic_fetch_or((uint32_t *)(page + APIC_IRR + 16 * w), bits, __ATOMIC_SEQ_CST);
		top = w * 32 + 31 - __builtin_clz(bits);
	}
	return top;
}

int vapic_highest_irr(const uint8_t *page)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t bits = vapic_get(page, APIC_IRR + 16 * w);
		if (bits)
			return w * 32 + 31 - __builtin_clz(bits);
	}
	return -1;
}

/* Writable bits of each LVT (SDM Vol. 3A, "Local Vector Table"). */
static uint32_t lvt_mask(uint32_t off)
{
	switch (off) {
	case APIC_LVT_LINT0:
	case APIC_LVT_LINT1:
		return 0x1a7ff;   /* vector, delivery mode, polarity, trigger, mask */
	case APIC_LVT_ERROR:
		return 0x100ff;
	default:
		return 0x107ff;   /* CMCI, thermal, PMC: vector, delivery mode, mask */
	}
}

int vapic_write(uint8_t *page, uint32_t msr, uint64_t val)
{
	uint32_t off = APIC_OFF(msr);
	if (val >> 32)
		return -1;       /* x2APIC registers other than ICR are 32 bits */
	switch (off) {
	case APIC_TPR:
		/* The software x2APIC's (with VID the write never exits): bits
		 * 31:8 reserved (SDM Vol. 3A, x2APIC register address map); the
		 * caller recomputes PPR. */
		if (val & ~0xffull)
			return -1;
		vapic_set(page, APIC_TPR, (uint32_t)val);
		return 0;
	case APIC_SVR:
		vapic_set(page, APIC_SVR, (uint32_t)val & 0x11ff);
		if (!(val & APIC_SVR_ENABLED)) {   /* software disable masks every LVT, CMCI too */
			vapic_set(page, APIC_LVT_CMCI, vapic_get(page, APIC_LVT_CMCI) | APIC_LVT_MASKED);
			for (uint32_t o = APIC_LVT_TIMER; o <= APIC_LVT_ERROR; o += 0x10)
				vapic_set(page, o, vapic_get(page, o) | APIC_LVT_MASKED);
		}
		return 0;
	case APIC_LVT_CMCI:
	case APIC_LVT_THERM:
	case APIC_LVT_PMC:
	case APIC_LVT_LINT0:
	case APIC_LVT_LINT1:
	case APIC_LVT_ERROR: {
		uint32_t v = (uint32_t)val & lvt_mask(off);
		if (!(vapic_get(page, APIC_SVR) & APIC_SVR_ENABLED))
			v |= APIC_LVT_MASKED;
		vapic_set(page, off, v);
		return 0;
	}
	default:
		return -1;       /* read-only (ID, version, LDR, PPR, ISR, TMR, IRR, TMCCT) or reserved */
	}
}

int vapic_error(const uint8_t *page, uint32_t *pending, uint32_t esr_bits)
{
	uint32_t lvt = vapic_get(page, APIC_LVT_ERROR);
	*pending |= esr_bits;
	if (lvt & APIC_LVT_MASKED)
		return -1;
	if ((lvt & APIC_VECTOR_MASK) < APIC_FIRST_LEGAL_VECTOR) {
		*pending |= APIC_ESR_RECV_ILLEGAL_VECTOR;
		return -1;
	}
	return (int)(lvt & APIC_VECTOR_MASK);
}

int vapic_esr_write(uint8_t *page, uint32_t *pending, uint64_t val)
{
	if (val)
		return -1;
	vapic_set(page, APIC_ESR, *pending);
	*pending = 0;
	return 0;
}

bool vapic_readable(uint32_t msr)
{
	uint32_t off = APIC_OFF(msr);
	if (msr < 0x800 || msr > 0x8ff)
		return false;
	switch (off) {
	case APIC_ID: case APIC_VERSION: case APIC_TPR: case APIC_PPR: case APIC_LDR: case APIC_SVR:
	case APIC_ESR: case APIC_LVT_CMCI: case APIC_ICR: case APIC_LVT_TIMER: case APIC_LVT_THERM:
	case APIC_LVT_PMC: case APIC_LVT_LINT0: case APIC_LVT_LINT1: case APIC_LVT_ERROR:
	case APIC_TMICT: case APIC_TMCCT: case APIC_TDCR:
		return true;
	default:
		return off >= APIC_ISR && off < APIC_IRR + 0x80;
	}
}

uint32_t vapic_lvt_fixed_physical(uint32_t guest_lvt, const uint64_t host_vectors[4], bool *refused)
{
	uint32_t vec = guest_lvt & APIC_VECTOR_MASK;
	bool masked = guest_lvt & APIC_LVT_MASKED;
	bool ok = !(guest_lvt & (7u << 8)) && vec >= 32 && !(host_vectors[vec / 64] >> (vec % 64) & 1);
	*refused = !ok && !masked;
	return ok ? vec | (masked ? APIC_LVT_MASKED : 0) : APIC_LVT_MASKED;
}

uint32_t vapic_lvtpc_physical(uint32_t guest_lvtpc, bool *refused)
{
	uint32_t mode = guest_lvtpc & (7u << 8);
	*refused = mode != (4u << 8) && !(guest_lvtpc & APIC_LVT_MASKED);   /* masked: off, whatever its mode */
	if (mode != (4u << 8))
		return (4u << 8) | APIC_LVT_MASKED;
	return (4u << 8) | (guest_lvtpc & APIC_LVT_MASKED);
}
