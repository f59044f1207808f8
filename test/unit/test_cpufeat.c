/* Host tests for cpuid_features_decide (guest/cpuid.c): which of the CPU's
 * features the guest gets, decided from what the boot probed, and that each
 * one it does not get comes with its reason. */
#include "test.h"
#include "../../guest/cpuid.h"

/* A Sapphire Rapids as Bochs's model answers (CPUID.7.0: FSRM EDX 4, AMX
 * EDX 22/24/25, WAITPKG ECX 5, LA57 ECX 16), with VMX allowing "enable user
 * wait and pause" (IA32_VMX_PROCBASED_CTLS2 bit 26) and fast strings on. */
static struct cpufeat_host spr(void)
{
	return (struct cpufeat_host){
		.l1c = BIT(5), .l7b = BIT(10), .l7c = BIT(5) | BIT(16), .l7d = BIT(4) | BIT(22) | BIT(24) | BIT(25),
		.x1d = BIT(27), .d1a = BIT(3), .misc_enable_ok = true, .misc_enable = 0x1801,
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

/* AMX: hidden either way; the reason names a CPU without XFD. */
TEST(cpufeat_amx_reason_names_missing_xfd)
{
	struct cpufeat f[CPUFEAT_MAX];
	struct cpuid_policy p = { 0 };
	struct cpufeat_host h = spr();
	unsigned n = cpuid_features_decide(&h, &p, f);
	const struct cpufeat *x = find(f, n, "AMX-TILE");
	CHECK(x && !x->given && strstr(x->why, "without XFD"));
	h.d1a |= BIT(4);
	n = cpuid_features_decide(&h, &p, f);
	x = find(f, n, "AMX-TILE");
	CHECK(x && !x->given && strstr(x->why, "not passed to the guest yet"));
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
