/* The guest's IA32_APIC_BASE writes (guest/msr.c, guest_apic_base_write)
 * against a model of the SDM's rules, written out here:
 *
 * SDM Vol. 3A, "Local APIC Status and Location" (IA32_APIC_BASE, MSR 1BH):
 * bit 8 BSP flag, bit 10 EXTD (x2APIC enable, "Extended XAPIC Mode"), bit 11
 * EN (APIC global enable), bits 12 to MAXPHYADDR-1 the APIC base; bits 7:0,
 * bit 9 and bits 63:MAXPHYADDR are reserved. MAXPHYADDR is CPUID
 * 80000008H:EAX[7:0]. WRMSR (Vol. 2B) raises #GP(0) when the value sets
 * reserved bits.
 *
 * SDM Vol. 3A, "x2APIC State Transitions": the states are disabled (EN 0,
 * EXTD 0), xAPIC (1, 0), x2APIC (1, 1) and invalid (0, 1). "An execution of
 * WRMSR to the IA32_APIC_BASE_MSR that attempts a transition from a valid
 * state to this invalid state causes a general-protection exception." From
 * xAPIC mode: to x2APIC or to disabled. From x2APIC mode "the only valid
 * x2APIC transition using IA32_APIC_BASE is to the state where the x2APIC is
 * disabled"; "A transition from the x2APIC mode to xAPIC mode is not valid,
 * and the corresponding WRMSR ... causes a general-protection exception."
 * From disabled "the only valid x2APIC transition ... is to the xAPIC mode"
 * (the figure marks disabled to x2APIC an illegal transition; KVM's
 * kvm_set_apic_base answers it with #GP, as for the others).
 *
 * The hypervisor's design on top: a write of the value the register holds
 * is done; every other valid write is refused (the host owns the APIC:
 * the guest may neither disable it, change its mode, nor move its page). */
#include "test.h"
#include "../../guest/msr.h"

#define AB_BSP   (1ull << 8)
#define AB_EXTD  (1ull << 10)
#define AB_EN    (1ull << 11)

enum ab_state { AB_DISABLED, AB_XAPIC, AB_X2APIC, AB_INVALID };

static enum ab_state ab_state(uint64_t v)
{
	bool en = v & AB_EN, extd = v & AB_EXTD;
	return en ? (extd ? AB_X2APIC : AB_XAPIC) : (extd ? AB_INVALID : AB_DISABLED);
}

/* The valid transitions by IA32_APIC_BASE, [from][to]. */
static const bool ab_valid[3][4] = {
	[AB_DISABLED] = { [AB_DISABLED] = true, [AB_XAPIC] = true },
	[AB_XAPIC]    = { [AB_DISABLED] = true, [AB_XAPIC] = true, [AB_X2APIC] = true },
	[AB_X2APIC]   = { [AB_DISABLED] = true, [AB_X2APIC] = true },
};

static uint64_t ab_reserved(unsigned maxphyaddr)
{
	uint64_t r = 0xffull | (1ull << 9);
	for (unsigned b = maxphyaddr; b < 64; b++)
		r |= 1ull << b;
	return r;
}

static enum apic_base_verdict ab_model(uint64_t cur, uint64_t val, unsigned maxphyaddr)
{
	if (val & ab_reserved(maxphyaddr))
		return APIC_BASE_GP;
	if (!ab_valid[ab_state(cur)][ab_state(val)])
		return APIC_BASE_GP;
	return val == cur ? APIC_BASE_OK : APIC_BASE_REFUSED;
}

static const char *ab_name(enum apic_base_verdict v)
{
	return v == APIC_BASE_OK ? "OK" : v == APIC_BASE_GP ? "GP" : v == APIC_BASE_REFUSED ? "REFUSED" : "?";
}

static int ab_check(uint64_t cur, uint64_t val, unsigned maxphyaddr)
{
	enum apic_base_verdict got = guest_apic_base_write(cur, val, maxphyaddr), want = ab_model(cur, val, maxphyaddr);
	if (got != want) {
		char m[160];
		snprintf(m, sizeof m, "holds 0x%llx, write 0x%llx, MAXPHYADDR %u: %s, the SDM says %s",
			 (unsigned long long)cur, (unsigned long long)val, maxphyaddr, ab_name(got), ab_name(want));
		test_fail(__FILE__, __LINE__, m);
		return 1;
	}
	return 0;
}

/* The cases the issue names, each from the x2APIC state the guest sees
 * (the host runs its APIC in x2APIC mode at 0xfee00000). */
TEST(apic_base_sdm_named_cases)
{
	const uint64_t x2 = 0xfee00000ull | AB_EN | AB_EXTD | AB_BSP, xa = 0xfee00000ull | AB_EN | AB_BSP;
	const struct { uint64_t cur, val; unsigned pa; enum apic_base_verdict want; const char *what; } c[] = {
		{ x2, x2, 39, APIC_BASE_OK, "the value it holds" },
		{ x2, x2 | 1, 39, APIC_BASE_GP, "reserved bit 0" },
		{ x2, x2 | 0x80, 39, APIC_BASE_GP, "reserved bit 7" },
		{ x2, x2 | (1ull << 9), 39, APIC_BASE_GP, "reserved bit 9" },
		{ x2, x2 | (1ull << 39), 39, APIC_BASE_GP, "base above MAXPHYADDR 39" },
		{ x2, x2 | (1ull << 38), 39, APIC_BASE_REFUSED, "base just below MAXPHYADDR 39" },
		{ x2, x2 | (1ull << 63), 52, APIC_BASE_GP, "bit 63" },
		{ x2, x2 & ~AB_EXTD, 39, APIC_BASE_GP, "x2APIC to xAPIC without disabling first" },
		{ x2, x2 & ~AB_EN, 39, APIC_BASE_GP, "EN cleared with EXTD set: the invalid state" },
		{ x2, x2 & ~(AB_EN | AB_EXTD), 39, APIC_BASE_REFUSED, "x2APIC to disabled: valid, refused" },
		{ x2, (x2 & 0xfff) | 0x1000000, 39, APIC_BASE_REFUSED, "the page moved" },
		{ x2, x2 & ~AB_BSP, 39, APIC_BASE_REFUSED, "the BSP flag cleared" },
		{ xa, xa | AB_EXTD, 39, APIC_BASE_REFUSED, "xAPIC to x2APIC: valid, refused" },
		{ xa, xa & ~AB_EN, 39, APIC_BASE_REFUSED, "xAPIC to disabled: valid, refused" },
		{ xa, (xa & ~AB_EN) | AB_EXTD, 39, APIC_BASE_GP, "xAPIC to the invalid state" },
		{ xa & ~AB_EN, xa | AB_EXTD, 39, APIC_BASE_GP, "disabled to x2APIC directly" },
		{ xa & ~AB_EN, (xa & ~AB_EN) | AB_EXTD, 39, APIC_BASE_GP, "x2APIC enable with the global enable clear" },
		{ xa & ~AB_EN, xa, 39, APIC_BASE_REFUSED, "disabled to xAPIC: valid, refused" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		CHECK_EQ(ab_model(c[i].cur, c[i].val, c[i].pa), c[i].want);   /* the table and the model agree */
		enum apic_base_verdict got = guest_apic_base_write(c[i].cur, c[i].val, c[i].pa);
		if (got != c[i].want)
			printf("    %s: %s, want %s\n", c[i].what, ab_name(got), ab_name(c[i].want));
		CHECK_EQ(got, c[i].want);
	}
}

/* Every valid state with two bases and the BSP flag either way, against
 * every mode, each reserved bit, bases near MAXPHYADDR, for four widths. */
TEST(apic_base_sdm_every_transition)
{
	static const unsigned widths[] = { 36, 39, 46, 52 };
	int failed = 0;
	for (size_t w = 0; w < ARRAY_SIZE(widths) && failed < 8; w++) {
		unsigned pa = widths[w];
		const uint64_t bases[] = { 0xfee00000ull, 1ull << (pa - 1), 0x200000ull };
		for (unsigned cs = 0; cs < 3; cs++)
		for (unsigned cb = 0; cb < 2; cb++)
		for (unsigned cbsp = 0; cbsp < 2; cbsp++) {
			uint64_t cur = bases[cb] | (cbsp ? AB_BSP : 0) |
				(cs != AB_DISABLED ? AB_EN : 0) | (cs == AB_X2APIC ? AB_EXTD : 0);
			for (unsigned vs = 0; vs < 4; vs++)
			for (unsigned vb = 0; vb < 3; vb++)
			for (unsigned vbsp = 0; vbsp < 2; vbsp++)
			for (int extra = -1; extra < 64; extra++) {
				uint64_t val = bases[vb] | (vbsp ? AB_BSP : 0) |
					(vs == AB_XAPIC || vs == AB_X2APIC ? AB_EN : 0) |
					(vs == AB_X2APIC || vs == AB_INVALID ? AB_EXTD : 0);
				if (extra >= 0)
					val |= 1ull << extra;
				failed += ab_check(cur, val, pa);
				if (failed >= 8)
					return;
			}
		}
	}
}
