/* Variable-range MTRR decoding. */
#include "mtrr.h"
#include "printk.h"

#define MSR_MTRRCAP       0x0fe
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MSR_MTRR_PHYSBASE(n) (0x200 + 2 * (n))
#define MSR_MTRR_PHYSMASK(n) (0x201 + 2 * (n))
#define MTRRCAP_VCNT 0xff
#define DEF_TYPE_E   BIT(11)
#define PHYSMASK_V   BIT(11)
#define ADDR_MASK    0x000ffffffffff000ull

#ifndef HV_HOST_TEST
#include "cpu.h"

void mtrr_read(struct mtrr_state *s)
{
	uint32_t a, b, c, d;
	s->enabled = false;
	s->nvar = 0;
	cpuid_count(1, 0, &a, &b, &c, &d);
	if (!(d & BIT(12)))           /* CPUID.1:EDX.MTRR */
		return;
	uint64_t def = rdmsr(MSR_MTRR_DEF_TYPE);
	s->enabled = def & DEF_TYPE_E;
	s->def_type = def & 0xff;
	uint32_t vcnt = rdmsr(MSR_MTRRCAP) & MTRRCAP_VCNT;
	for (uint32_t i = 0; i < vcnt && s->nvar < MTRR_MAX_VAR; i++) {
		uint64_t mask = rdmsr(MSR_MTRR_PHYSMASK(i));
		if (!(mask & PHYSMASK_V))
			continue;
		uint64_t base = rdmsr(MSR_MTRR_PHYSBASE(i));
		s->var[s->nvar].base = base & ADDR_MASK;
		s->var[s->nvar].mask = mask & ADDR_MASK;
		s->var[s->nvar].type = base & 0xff;
		s->nvar++;
	}
}
#endif

static int combine(int t, int u)
{
	if (t < 0)
		return u;
	if (t == u)
		return t;
	if (t == MTRR_UC || u == MTRR_UC)
		return MTRR_UC;
	if ((t == MTRR_WT && u == MTRR_WB) || (t == MTRR_WB && u == MTRR_WT))
		return MTRR_WT;
	return MTRR_UC;               /* undefined by the SDM: take the safe one */
}

int mtrr_region_type(const struct mtrr_state *s, uint64_t a, uint64_t size)
{
	int t = -2;                   /* no range matched yet */
	for (uint32_t i = 0; i < s->nvar; i++) {
		uint64_t m = s->var[i].mask;
		/* A range matches addr when (addr & m) == (base & m). Over an
		 * aligned power-of-two region the bits below 'size' vary: if the
		 * mask looks at any of them, the range covers only part of it. */
		uint64_t hi = m & ~(size - 1);
		if ((a & hi) != (s->var[i].base & hi))
			continue;             /* no address of the region matches */
		if (m & (size - 1))
			return MTRR_MIXED;
		t = combine(t == -2 ? -1 : t, s->var[i].type);
	}
	return t == -2 ? s->def_type : t;
}

void mtrr_print(const struct mtrr_state *s)
{
	if (!s->enabled) {
		pr_info("mtrr: disabled or absent; memory types from the firmware map only\n");
		return;
	}
	pr_info("mtrr: default type %u, %u variable ranges\n", s->def_type, s->nvar);
	for (uint32_t i = 0; i < s->nvar; i++)
		pr_info("mtrr:   base 0x%llx mask 0x%llx type %u\n", (unsigned long long)s->var[i].base,
			(unsigned long long)s->var[i].mask, s->var[i].type);
}
