/* Host tests for cpuid_features_decide (guest/cpuid.c): which of the CPU's
 * features the guest gets, decided from what the boot probed, and that each
 * one it does not get comes with its reason. */
#include "test.h"
#include "../../guest/cpuid.h"
#include "../../guest/msr.h"

/* A Sapphire Rapids as Bochs 3.0's model answers (CPUID.7.0: FSRM EDX 4, AMX
 * EDX 22/24/25, WAITPKG ECX 5, LA57 ECX 16; XCR0 x87, SSE, AVX, AVX-512,
 * PKRU, TILECFG, TILEDATA; no XFD), with VMX allowing "enable user
 * wait and pause" (IA32_VMX_PROCBASED_CTLS2 bit 26) and fast strings on. */
static struct cpufeat_host spr(void)
{
	return (struct cpufeat_host){
		.l1c = BIT(5), .l7b = BIT(10), .l7c = BIT(5) | BIT(16), .l7d = BIT(4) | BIT(22) | BIT(24) | BIT(25),
		.x1d = BIT(27), .d1a = BIT(3), .xcr0 = 0x602e7, .misc_enable_ok = true, .misc_enable = 0x1801,
		.proc2_allowed1 = BIT(3) | BIT(12) | BIT(20) | BIT(26),
	};
}

static const struct cpufeat *find(const struct cpufeat *f, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return &f[i];
	return NULL;
}

TEST(cpufeat_fsrm_follows_fast_strings)
{
	struct cpufeat f[CPUFEAT_MAX];
	struct cpuid_policy p = { 0 };
	struct cpufeat_host h = spr();
	unsigned n = cpuid_features_decide(&h, &p, f);
	const struct cpufeat *x = find(f, n, "FSRM");
	CHECK(x && x->given);
	CHECK(p.fsrm);
	/* Fast strings off: Linux drops ERMS and would keep FSRM. */
	h.misc_enable = 0x1800;
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "FSRM");
	CHECK(x && !x->given && strstr(x->why, "fast strings off"));
	CHECK(!p.fsrm);
	/* The MSR faults (a CPU without it; stock Bochs 3.0 reads its unknown
	 * MSRs as 0, the case above): hidden, said so. */
	h.misc_enable_ok = false;
	h.misc_enable = 0x1801;
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "FSRM");
	CHECK(x && !x->given && strstr(x->why, "IA32_MISC_ENABLE faults"));
	CHECK(!p.fsrm);
	/* Never invented. */
	h = spr();
	h.l7d = 0;
	n = cpuid_features_decide(&h, &p, f);
	CHECK(!find(f, n, "FSRM"));
	CHECK(!p.fsrm);
	struct regs { uint32_t a, b, c, d; } r = { ~0u, ~0u, ~0u, ~0u };
	p.fsrm = true;
	cpuid_filter(&p, 7, 0, &r.a, &r.b, &r.c, &r.d);
	CHECK(r.d & BIT(4));
	p.fsrm = false;
	cpuid_filter(&p, 7, 0, &r.a, &r.b, &r.c, &r.d);
	CHECK(!(r.d & BIT(4)));
}

TEST(cpufeat_waitpkg_needs_user_wait_and_no_rdtsc_exiting)
{
	struct cpufeat f[CPUFEAT_MAX];
	struct cpuid_policy p = { 0 };
	struct cpufeat_host h = spr();
	unsigned n = cpuid_features_decide(&h, &p, f);
	const struct cpufeat *x = find(f, n, "WAITPKG");
	CHECK(x && x->given && strstr(x->why, "enable user wait and pause"));
	CHECK(p.waitpkg);
	h.proc2_allowed1 &= ~BIT(26);
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "WAITPKG");
	CHECK(x && !x->given && strstr(x->why, "does not allow"));
	CHECK(!p.waitpkg);
	h = spr();
	h.rdtsc_exiting_forced = true;
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "WAITPKG");
	CHECK(x && !x->given && strstr(x->why, "RDTSC exiting"));
	CHECK(!p.waitpkg);
}

/* AMX: passed where the CPU has XFD (CPUID.(0DH,1):EAX[4]) and XCR0's
 * tile bits (CPUID.(0DH,0):EAX 17-18); else hidden, the reason naming
 * what is missing. */
TEST(cpufeat_amx_passed_with_xfd)
{
	struct cpufeat f[CPUFEAT_MAX];
	struct cpuid_policy p = { 0 };
	struct cpufeat_host h = spr();
	unsigned n = cpuid_features_decide(&h, &p, f);
	const struct cpufeat *x = find(f, n, "AMX-TILE");
	CHECK(x && !x->given && strstr(x->why, "without XFD"));
	CHECK(!p.amx);
	h.d1a |= BIT(4);
	n = cpuid_features_decide(&h, &p, f);
	CHECK(p.amx);
	static const char *const amx[] = { "AMX-TILE", "AMX-INT8", "AMX-BF16" };
	for (size_t i = 0; i < ARRAY_SIZE(amx); i++) {
		x = find(f, n, amx[i]);
		CHECK(x && x->given && strstr(x->why, "never touches"));
	}
	h.xcr0 &= ~BIT(18);
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "AMX-TILE");
	CHECK(x && !x->given && strstr(x->why, "without XCR0 bits 17-18"));
	CHECK(!p.amx);
	/* No AMX-TILE: never passed, whatever else the CPU says. */
	h = spr();
	h.d1a |= BIT(4);
	h.l7d &= ~BIT(24);
	n = cpuid_features_decide(&h, &p, f);
	CHECK(!p.amx);
	x = find(f, n, "AMX-INT8");
	CHECK(x && !x->given);
}

/* Every feature the CPU has is listed, each one hidden with a reason. */
TEST(cpufeat_every_hidden_feature_has_a_reason)
{
	struct cpufeat f[CPUFEAT_MAX];
	struct cpuid_policy p = { 0 };
	struct cpufeat_host h = { .l1c = ~0u, .l1d = ~0u, .l7b = ~0u, .l7c = ~0u, .l7d = ~0u, .x1d = ~0u, .d1a = ~0u };
	unsigned n = cpuid_features_decide(&h, &p, f);
	static const char *const names[] = { "VMX", "SMX", "DS", "DTES64", "DS-CPL", "SGX", "SGX-LC", "PT", "LA57",
					     "AMX-TILE", "AMX-INT8", "AMX-BF16", "FSRM", "WAITPKG", "INVPCID", "RDTSCP", "XSAVES" };
	CHECK_EQ(n, ARRAY_SIZE(names));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const struct cpufeat *x = find(f, n, names[i]);
		CHECK(x && !x->given && x->why && x->why[0]);
	}
	/* A CPU with none of them: nothing to say. */
	h = (struct cpufeat_host){ 0 };
	CHECK_EQ(cpuid_features_decide(&h, &p, f), 0);
}

struct regs { uint32_t a, b, c, d; };
static struct regs filt(const struct cpuid_policy *p, uint32_t leaf, uint32_t sub, struct regs in)
{
	cpuid_filter(p, leaf, sub, &in.a, &in.b, &in.c, &in.d);
	return in;
}
static const struct regs ones = { ~0u, ~0u, ~0u, ~0u };

TEST(cpuid_xcr0_mask_amx_when_passed)
{
	/* XCR0 17 (TILECFG), 18 (TILEDATA): SDM Vol. 1, 13.1 */
	CHECK_EQ(cpuid_guest_xcr0_mask(0x602e7, true), 0x602e7);
	CHECK(xsetbv_valid(0, 0x602e7, cpuid_guest_xcr0_mask(0x602e7, true)));
	CHECK(!xsetbv_valid(0, 0x602e7, cpuid_guest_xcr0_mask(0x602e7, false)));
}

/* AMX passed: CPUID.(7,0):EDX 22/24/25, leaf 0DH's XCR0 bits 17-18
 * (sub-leaf 0), XFD (sub-leaf 1 EAX[4]), the tile components (sub-leaves
 * 17, 18) and leaves 1DH/1EH as the CPU answers; SGX and PT still hidden. */
TEST(cpuid_amx_passed_as_the_cpu_answers)
{
	struct cpuid_policy p = { .xsaves = true, .amx = true };
	struct regs r = filt(&p, 7, 0, ones);
	CHECK_EQ(r.d & (BIT(22) | BIT(24) | BIT(25)), BIT(22) | BIT(24) | BIT(25));
	r = filt(&p, 0xd, 0, ones);
	CHECK_EQ(r.a & (BIT(17) | BIT(18)), BIT(17) | BIT(18));
	r = filt(&p, 0xd, 1, ones);
	CHECK(r.a & BIT(4));
	/* Sapphire Rapids's TILEDATA: 8192 bytes at 2816, aligned, XFD-capable */
	r = filt(&p, 0xd, 18, (struct regs){ 8192, 2816, 6, 0 });
	CHECK(r.a == 8192 && r.b == 2816 && r.c == 6 && r.d == 0);
	r = filt(&p, 0x1d, 1, (struct regs){ 0x04002000, 0x00080040, 16, 0 });
	CHECK(r.a == 0x04002000 && r.b == 0x00080040 && r.c == 16);
	r = filt(&p, 0x1e, 0, (struct regs){ 0, 0x4010, 0, 0 });
	CHECK_EQ(r.b, 0x4010);
	r = filt(&p, 0x12, 0, ones);
	CHECK_EQ(r.a | r.b | r.c | r.d, 0);
	/* Not passed: every one of them hidden, XFD too. */
	p.amx = false;
	r = filt(&p, 7, 0, ones);
	CHECK_EQ(r.d & (BIT(22) | BIT(24) | BIT(25)), 0);
	r = filt(&p, 0xd, 0, ones);
	CHECK_EQ(r.a & (BIT(17) | BIT(18)), 0);
	r = filt(&p, 0xd, 1, ones);
	CHECK(!(r.a & BIT(4)));
	r = filt(&p, 0xd, 18, (struct regs){ 8192, 2816, 6, 0 });
	CHECK_EQ(r.a | r.b | r.c | r.d, 0);
}

/* IA32_XFD (1C4H) and IA32_XFD_ERR (1C5H), SDM Vol. 4: the guest's own,
 * never intercepted (its #NM handler reads XFD_ERR at once). */
TEST(msr_bitmap_passes_xfd)
{
	static uint8_t bm[4096];
	memset(bm, 0xa5, sizeof bm);
	msr_bitmap_build(bm, true, false);
	for (uint32_t m = 0x1c4; m <= 0x1c5; m++) {
		CHECK(!msr_bitmap_intercepts(bm, m, false));
		CHECK(!msr_bitmap_intercepts(bm, m, true));
	}
}

