/* See cpu_fake.h. CPUID by the SDM (Vol. 2A, "CPUID"): leaf 0 EAX is the
 * highest basic leaf, 0x80000000 EAX the highest extended one; "if a value
 * entered for CPUID.EAX is higher than the maximum input value for basic
 * or extended function for that processor then the data for the highest
 * basic information leaf is returned"; a leaf without subleaves ignores
 * ECX; a subleaf past the last reads 0 here.
 * The reference CPU (a Sapphire Rapids server, from Intel's public data:
 * family 6, model 0x8F, stepping 8; 46 physical address bits):
 *   0:          EAX 0x1F, "GenuineIntel";
 *   1:          EAX 0x000806F8 (the signature), ECX VMX (5), x2APIC (21),
 *               TSC-deadline (24); EDX TSC (4), MSR (5), APIC (9), MTRR (12);
 *   7.0:        EBX IA32_TSC_ADJUST (1);
 *   0x80000000: EAX 0x80000008;
 *   0x80000008: EAX 46 physical, 57 linear address bits (0x392E).
 * No MSR is found by rdmsr_safe until a test places it. */
#include "test.h"
#include "cpu_fake.h"

#define LEAVES 64
static struct { uint32_t leaf, sub, r[4]; } cpuid_tab[LEAVES];
static unsigned ncpuid;
#define MSRS 16
static struct { uint32_t msr; uint64_t val; } msr_tab[MSRS];
static unsigned nmsr;

/* Leaves whose answer depends on ECX (the SDM's "sub-leaf" leaves). */
static bool has_subleaves(uint32_t leaf)
{
	switch (leaf) {
	case 4: case 7: case 0xb: case 0xd: case 0xf: case 0x10: case 0x12: case 0x14: case 0x17: case 0x18:
	case 0x1d: case 0x1e: case 0x1f: case 0x20: case 0x23: case 0x24:
		return true;
	default:
		return false;
	}
}

void cpu_fake_cpuid(uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	if (!has_subleaves(leaf))
		sub = 0;
	for (unsigned i = 0; i < ncpuid; i++)
		if (cpuid_tab[i].leaf == leaf && cpuid_tab[i].sub == sub) {
			cpuid_tab[i].r[0] = a, cpuid_tab[i].r[1] = b, cpuid_tab[i].r[2] = c, cpuid_tab[i].r[3] = d;
			return;
		}
	if (ncpuid == LEAVES) {
		fprintf(stderr, "cpu_fake: more than %d CPUID leaves\n", LEAVES);
		abort();
	}
	cpuid_tab[ncpuid++] = (typeof(cpuid_tab[0])){ leaf, sub, { a, b, c, d } };
}

void cpu_fake_msr(uint32_t msr, bool present, uint64_t val)
{
	for (unsigned i = 0; i < nmsr; i++)
		if (msr_tab[i].msr == msr) {
			if (present) {
				msr_tab[i].val = val;
			} else {
				msr_tab[i] = msr_tab[--nmsr];
			}
			return;
		}
	if (present && nmsr < MSRS)
		msr_tab[nmsr++] = (typeof(msr_tab[0])){ msr, val };
}

void cpu_fake_reset(void)
{
	ncpuid = nmsr = 0;
	cpu_fake_cpuid(0, 0, 0x1f, 0x756e6547, 0x6c65746e, 0x49656e69);   /* "Genu" "ntel" "ineI" */
	cpu_fake_cpuid(1, 0, 0x000806f8, 0, 1u << 5 | 1u << 21 | 1u << 24, 1u << 4 | 1u << 5 | 1u << 9 | 1u << 12);
	cpu_fake_cpuid(7, 0, 0, 1u << 1, 0, 0);
	cpu_fake_cpuid(0x80000000, 0, 0x80000008, 0, 0, 0);
	cpu_fake_cpuid(0x80000008, 0, 0x392e, 0, 0, 0);
}

static bool lookup(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	for (unsigned i = 0; i < ncpuid; i++)
		if (cpuid_tab[i].leaf == leaf && cpuid_tab[i].sub == (has_subleaves(leaf) ? sub : 0)) {
			memcpy(r, cpuid_tab[i].r, sizeof cpuid_tab[i].r);
			return true;
		}
	return false;
}

void cpuid_count(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	uint32_t r[4] = { 0, 0, 0, 0 }, max[4] = { 0, 0, 0, 0 }, ext[4] = { 0, 0, 0, 0 };
	lookup(0, 0, max);
	lookup(0x80000000, 0, ext);
	bool basic = leaf <= max[0], extended = leaf >= 0x80000000 && leaf <= ext[0];
	if (!basic && !extended)
		leaf = max[0];                   /* the highest basic leaf's data */
	lookup(leaf, sub, r);
	*a = r[0], *b = r[1], *c = r[2], *d = r[3];
}

bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
	for (unsigned i = 0; i < nmsr; i++)
		if (msr_tab[i].msr == msr) {
			*v = msr_tab[i].val;
			return true;
		}
	*v = 0;
	return false;
}
