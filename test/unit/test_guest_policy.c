/* Host tests for the guest's view of the machine: the CPUID policy
 * (guest/cpuid.c), the MSR bitmap and intercepted MSRs (guest/msr.c), and the
 * I/O bitmaps with the ports that end the machine (guest/io.c). */
#include "test.h"
#include "../../guest/cpuid.h"
#include "../../guest/msr.h"
#include "../../guest/io.h"
#include "sdm_x2apic.h"

/* ---- CPUID ---- */

struct regs { uint32_t a, b, c, d; };

static struct regs filt(const struct cpuid_policy *p, uint32_t leaf, uint32_t sub, struct regs in)
{
	cpuid_filter(p, leaf, sub, &in.a, &in.b, &in.c, &in.d);
	return in;
}

#define ALL 0xffffffffu
static const struct regs ones = { ALL, ALL, ALL, ALL };

/* VMX (ECX 5), SMX (ECX 6) and the debug store (EDX 21 DS, ECX 2 DTES64,
 * ECX 4 DS-CPL) are hidden. */
TEST(cpuid_leaf1_hides_vmx_smx_shows_hypervisor_x2apic)
{
	struct cpuid_policy p = { 0 };
	struct regs r = filt(&p, 1, 0, ones);
	CHECK_EQ(r.c, ALL & ~(BIT(5) | BIT(6) | BIT(2) | BIT(4)));
	CHECK_EQ(r.a, ALL);
	CHECK_EQ(r.b, ALL);
	CHECK_EQ(r.d, ALL & ~BIT(21));
	/* A host without x2APIC or the hypervisor bit: both are shown anyway. */
	r = filt(&p, 1, 0, (struct regs){ 0x806c1, 0x800, BIT(5) | BIT(6) | BIT(0), 0x178bfbff });
	CHECK_EQ(r.c, BIT(0) | BIT(21) | BIT(31));
	CHECK_EQ(r.a, 0x806c1);
	CHECK_EQ(r.b, 0x800);
	CHECK_EQ(r.d, 0x178bfbff & ~BIT(21));
	/* hlt=exit: MONITOR/MWAIT (ECX 3) hidden, so the guest idles in HLT. */
	p.hide_mwait = true;
	r = filt(&p, 1, 0, ones);
	CHECK_EQ(r.c, ALL & ~(BIT(5) | BIT(6) | BIT(2) | BIT(4) | BIT(3)));
}

TEST(cpuid_leaf7_hides_unvirtualized_features)
{
	struct cpuid_policy p = { 0 };
	struct regs r = filt(&p, 7, 0, ones);
	CHECK_EQ(r.a, ALL);                                     /* max subleaf untouched */
	CHECK_EQ(r.b, ALL & ~(BIT(2) | BIT(10) | BIT(25)));     /* SGX, INVPCID, PT */
	CHECK_EQ(r.c & (BIT(16) | BIT(5)), 0);                  /* LA57, WAITPKG */
	CHECK_EQ(r.c & BIT(30), 0);                             /* SGX launch control */
	CHECK_EQ(r.c | BIT(16) | BIT(5) | BIT(30), ALL);        /* nothing else */
	CHECK_EQ(r.d, ALL & ~(BIT(4) | BIT(22) | BIT(24) | BIT(25)));   /* FSRM, AMX */

	/* Allowed by the policy: INVPCID and WAITPKG pass through... */
	p.invpcid = p.waitpkg = true;
	r = filt(&p, 7, 0, ones);
	CHECK(r.b & BIT(10));
	CHECK(r.c & BIT(5));
	CHECK_EQ(r.b, ALL & ~(BIT(2) | BIT(25)));
	/* ...but are never invented when the host lacks them. */
	r = filt(&p, 7, 0, (struct regs){ 0, 0, 0, 0 });
	CHECK_EQ(r.b | r.c | r.d, 0);

	/* Other subleaves of 7 are not touched. */
	p.invpcid = p.waitpkg = false;
	r = filt(&p, 7, 1, ones);
	CHECK_EQ(r.a & r.b & r.c & r.d, ALL);
}

TEST(cpuid_leaf_d_xsave_state)
{
	struct cpuid_policy p = { 0 };
	struct regs r = filt(&p, 0xd, 0, (struct regs){ 0x602e7, 0x2b00, 0x2b00, 0 });
	CHECK_EQ(r.a, 0x602e7 & ~(BIT(17) | BIT(18)));          /* XTILECFG, XTILEDATA */
	CHECK_EQ(r.b, 0x2b00);
	CHECK_EQ(r.c, 0x2b00);
	CHECK_EQ(r.d, 0);

	r = filt(&p, 0xd, 1, (struct regs){ 0x1f, 0x100, 0x1900, 0 });
	CHECK_EQ(r.a, 0x1f & ~(BIT(3) | BIT(4)));               /* no XSAVES, no XFD without AMX */
	CHECK_EQ(r.c, 0x1900);
	p.xsaves = true;
	r = filt(&p, 0xd, 1, (struct regs){ 0x1f, 0x100, 0x1900, 0 });
	CHECK_EQ(r.a, 0x1f & ~BIT(4));

	/* The AMX state components' own subleaves are empty. */
	r = filt(&p, 0xd, 17, ones);
	CHECK_EQ(r.a | r.b | r.c | r.d, 0);
	r = filt(&p, 0xd, 18, ones);
	CHECK_EQ(r.a | r.b | r.c | r.d, 0);
	r = filt(&p, 0xd, 2, (struct regs){ 0x100, 0x240, 0, 0 });     /* AVX state */
	CHECK_EQ(r.a, 0x100);
	CHECK_EQ(r.b, 0x240);
}

/* XSETBV's #GP rules, bit positions from the SDM (Vol. 1, "XSAVE-Supported
 * Features and State-Component Bitmaps"): 0 x87, 1 SSE, 2 AVX, 3 BNDREGS,
 * 4 BNDCSR, 5 opmask, 6 ZMM_Hi256, 7 Hi16_ZMM, 9 PKRU, 17 TILECFG, 18 TILEDATA. */
TEST(xsetbv_rules)
{
	const uint64_t all = 0x602ff;                 /* a host with everything up to AMX */
	CHECK(xsetbv_valid(0, 0x1, all));
	CHECK(xsetbv_valid(0, 0x3, all));
	CHECK(xsetbv_valid(0, 0x7, all));
	CHECK(xsetbv_valid(0, 0xe7, all));            /* AVX-512 with AVX and SSE */
	CHECK(xsetbv_valid(0, 0x1f, all));            /* MPX pair */
	CHECK(xsetbv_valid(0, 0x60007, all));         /* AMX pair */
	CHECK(!xsetbv_valid(1, 0x7, all));            /* XCR1 */
	CHECK(!xsetbv_valid(0, 0x6, all));            /* x87 off */
	CHECK(!xsetbv_valid(0, 0x5, all));            /* AVX without SSE */
	CHECK(!xsetbv_valid(0, 0xf, all));            /* BNDREGS alone */
	CHECK(!xsetbv_valid(0, 0x17, all));           /* BNDCSR alone */
	CHECK(!xsetbv_valid(0, 0x27, all));           /* opmask alone */
	CHECK(!xsetbv_valid(0, 0x67, all));           /* two of the three AVX-512 bits */
	CHECK(!xsetbv_valid(0, 0xe3, all));           /* AVX-512 without AVX */
	CHECK(!xsetbv_valid(0, 0x20007, all));        /* TILECFG alone */
	CHECK(!xsetbv_valid(0, 0x7 | BIT(8), all));   /* not supported by the host */
	CHECK(!xsetbv_valid(0, 0xe7, 0x7));           /* AVX-512 the host lacks */
	CHECK(!xsetbv_valid(0, 1ull << 63, ~0ull));
}

TEST(cpuid_xcr0_mask_drops_amx_unless_passed)
{
	CHECK_EQ(cpuid_guest_xcr0_mask(0x602e7, false), 0x2e7);
	CHECK_EQ(cpuid_guest_xcr0_mask(0x7, false), 0x7);
	CHECK_EQ(cpuid_guest_xcr0_mask(~0ull, false), ~0ull & ~(BIT(17) | BIT(18)));
	CHECK_EQ(cpuid_guest_xcr0_mask(0, false), 0);
}

TEST(cpuid_sgx_pt_amx_leaves_zeroed)
{
	struct cpuid_policy p = { .invpcid = true, .rdtscp = true, .waitpkg = true, .xsaves = true };
	static const uint32_t leaves[] = { 0x12, 0x14, 0x1d, 0x1e };
	for (size_t i = 0; i < ARRAY_SIZE(leaves); i++)
		for (uint32_t sub = 0; sub < 3; sub++) {
			struct regs r = filt(&p, leaves[i], sub, ones);
			CHECK_EQ(r.a | r.b | r.c | r.d, 0);
		}
}

TEST(cpuid_leaf15_advertises_the_measured_tsc)
{
	/* Measured (the PIT; an emulator's TSC as under Bochs, where Linux
	 * must keep reading 50 MHz): crystal = TSC, ratio 1/1. */
	struct cpuid_policy p = { .tsc_hz = 50000000ull };
	struct regs r = filt(&p, 0x15, 0, (struct regs){ 2, 176, 25000000, 0 });
	CHECK_EQ(r.a, 1);
	CHECK_EQ(r.b, 1);
	CHECK_EQ(r.c, 50000000u);
	CHECK_EQ(r.d, 0);
	p.tsc_hz = 2100000000ull;
	r = filt(&p, 0x15, 0, (struct regs){ 2, 168, 0, 0 });
	CHECK_EQ((uint64_t)r.c * r.b / r.a, 2100000000ull);
	/* Not calibrated: the host's answer stands. */
	p.tsc_hz = 0;
	r = filt(&p, 0x15, 0, (struct regs){ 2, 168, 38400000, 0 });
	CHECK_EQ(r.a, 2);
	CHECK_EQ(r.b, 168);
	CHECK_EQ(r.c, 38400000);
	/* Taken from the CPU's own leaf 0x15: shown as the CPU says, crystal
	 * included (it is also the APIC timer's). */
	p = (struct cpuid_policy){ .tsc_hz = 2100000000ull, .tsc_host_leaf = true };
	r = filt(&p, 0x15, 0, (struct regs){ 2, 168, 25000000, 0 });
	CHECK_EQ(r.a, 2);
	CHECK_EQ(r.b, 168);
	CHECK_EQ(r.c, 25000000);
	/* Too fast for 32 bits: a ratio, never a clamp (the old code said
	 * 0xffffffff Hz for 5 GHz, 14 % slow). */
	p = (struct cpuid_policy){ .tsc_hz = 5000000000ull };
	r = filt(&p, 0x15, 0, ones);
	CHECK_EQ(r.a, 1);
	CHECK_EQ(r.b, 2);
	CHECK_EQ((uint64_t)r.c * r.b / r.a, 5000000000ull);
	p.tsc_hz = 10000000000ull;
	r = filt(&p, 0x15, 0, ones);
	CHECK_EQ(r.b, 4);
	CHECK_EQ((uint64_t)r.c * r.b / r.a, 10000000000ull);
}

TEST(cpuid_kvm_signature_and_features)
{
	struct cpuid_policy p = { .kvm_features = BIT(KVM_FEATURE_PV_EOI) | BIT(KVM_FEATURE_PV_SEND_IPI) };
	struct regs r = filt(&p, 0x40000000, 0, ones);
	CHECK_EQ(r.a, 0x40000001);
	char sig[13] = { 0 };
	memcpy(sig, &r.b, 4);
	memcpy(sig + 4, &r.c, 4);
	memcpy(sig + 8, &r.d, 4);
	CHECK(memcmp(sig, "KVMKVMKVM\0\0\0", 12) == 0);
	CHECK_STR(sig, "KVMKVMKVM");

	r = filt(&p, 0x40000001, 0, ones);
	CHECK_EQ(r.a, BIT(6) | BIT(11));
	CHECK_EQ(r.b | r.c | r.d, 0);
	p.kvm_features = 0;
	r = filt(&p, 0x40000001, 0, ones);
	CHECK_EQ(r.a | r.b | r.c | r.d, 0);

	/* The rest of the hypervisor range is empty (whatever the host said). */
	static const uint32_t empty[] = { 0x40000002, 0x40000003, 0x40000010, 0x40000100, 0x4000ffff };
	for (size_t i = 0; i < ARRAY_SIZE(empty); i++) {
		r = filt(&p, empty[i], 0, ones);
		CHECK_EQ(r.a | r.b | r.c | r.d, 0);
	}
}

/* KVM's CPUID 0x40000001 EAX bits (Linux's uapi kvm_para.h): PV_EOI 6,
 * PV_SEND_IPI 11, MSI_EXT_DEST_ID 15. MSI_EXT_DEST_ID only where the
 * hypervisor owns interrupt remapping: without it, hardware would take
 * the low 8 bits of a 15-bit destination and hit the wrong CPU. */
TEST(cpuid_msi_ext_dest_id_only_with_owned_remapping)
{
	for (unsigned k = 0; k < 8; k++) {
		bool ipi = k & 1, eoi = k & 2, ir = k & 4;
		uint32_t f = cpuid_kvm_features(ipi, eoi, ir);
		CHECK_EQ(f, (ipi ? 1u << 11 : 0) | (eoi ? 1u << 6 : 0) | (ir ? 1u << 15 : 0));
		struct cpuid_policy p = { .kvm_features = f };
		CHECK_EQ(filt(&p, 0x40000001, 0, ones).a >> 15 & 1, ir);
	}
}

TEST(cpuid_ext_leaf_hides_rdtscp_unless_allowed)
{
	struct cpuid_policy p = { 0 };
	struct regs r = filt(&p, 0x80000001, 0, ones);
	CHECK_EQ(r.d, ALL & ~BIT(27));
	CHECK_EQ(r.a & r.b & r.c, ALL);
	p.rdtscp = true;
	r = filt(&p, 0x80000001, 0, ones);
	CHECK_EQ(r.d, ALL);
}

TEST(cpuid_other_leaves_unchanged)
{
	struct cpuid_policy p = { .tsc_hz = 1000000000ull, .kvm_features = 0x41 };
	static const uint32_t leaves[] = { 0, 2, 4, 6, 0xa, 0xb, 0x16, 0x1f, 0x3fffffff,
					   0x40010000, 0x80000000, 0x80000007, 0x80000008 };
	static const struct regs in = { 0x12345678, 0x9abcdef0, 0x0f1e2d3c, 0x4b5a6978 };
	for (size_t i = 0; i < ARRAY_SIZE(leaves); i++)
		for (uint32_t sub = 0; sub < 2; sub++) {
			struct regs r = filt(&p, leaves[i], sub, in);
			if (memcmp(&r, &in, sizeof r)) {
				char msg[80];
				snprintf(msg, sizeof msg, "leaf 0x%x.%u changed", leaves[i], sub);
				test_fail(__FILE__, __LINE__, msg);
			}
		}
}

/* ---- MSRs ---- */

static uint8_t *msr_map(void)
{
	static uint8_t bm[4096];
	memset(bm, 0xa5, sizeof bm);                   /* build must clear everything */
	msr_bitmap_build(bm, false, false);
	return bm;
}

TEST(msr_bitmap_intercepts_vmx_msrs)
{
	uint8_t *bm = msr_map();
	CHECK(msr_bitmap_intercepts(bm, 0x3a, false));
	CHECK(msr_bitmap_intercepts(bm, 0x3a, true));
	for (uint32_t m = 0x480; m <= 0x493; m++) {
		CHECK(msr_bitmap_intercepts(bm, m, false));
		CHECK(msr_bitmap_intercepts(bm, m, true));
	}
	/* The neighbours pass through. */
	CHECK(!msr_bitmap_intercepts(bm, 0x39, false));
	CHECK(!msr_bitmap_intercepts(bm, 0x3c, false));
	CHECK(!msr_bitmap_intercepts(bm, 0x47f, false));
	CHECK(!msr_bitmap_intercepts(bm, 0x494, true));

	/* The layout is the SDM's: read-low at 0, write-low at 2048. */
	CHECK_EQ(bm[0x3a / 8], BIT(0x3a % 8) | BIT(0x3b % 8));          /* IA32_TSC_ADJUST (0x3b) too */
	CHECK_EQ(bm[2048 + 0x3a / 8], BIT(0x3a % 8) | BIT(0x3b % 8));
	CHECK_EQ(bm[0x480 / 8], 0xff);
	CHECK_EQ(bm[2048 + 0x490 / 8], 0x0f);
	/* IA32_APIC_BASE (0x1b) is the host's in both interrupt models. */
	CHECK(msr_bitmap_intercepts(bm, 0x1b, false));
	CHECK(msr_bitmap_intercepts(bm, 0x1b, true));
	/* Intel PT (0x560-0x561, 0x570-0x572, 0x580-0x587), DS_AREA (0x600) and
	 * PEBS_ENABLE (0x3f1) are refused; IA32_MISC_ENABLE (0x1a0) reads exit. */
	static const uint32_t both[] = { 0x560, 0x561, 0x570, 0x571, 0x572, 0x580, 0x587, 0x600, 0x3f1 };
	for (size_t i = 0; i < ARRAY_SIZE(both); i++) {
		CHECK(msr_bitmap_intercepts(bm, both[i], false));
		CHECK(msr_bitmap_intercepts(bm, both[i], true));
	}
	CHECK(msr_bitmap_intercepts(bm, 0x1a0, false));
	CHECK(!msr_bitmap_intercepts(bm, 0x1a0, true));
	/* IA32_BIOS_SIGN_ID (0x8b), the microcode revision, both ways. */
	CHECK(msr_bitmap_intercepts(bm, 0x8b, false));
	CHECK(msr_bitmap_intercepts(bm, 0x8b, true));
	/* IA32_TSC (0x10): writes exit, reads pass (the CPU adds the TSC
	 * offset); IA32_TSC_ADJUST (0x3b): both (the vCPU's own value). */
	CHECK(msr_bitmap_intercepts(bm, 0x10, true) && !msr_bitmap_intercepts(bm, 0x10, false));
	CHECK(msr_bitmap_intercepts(bm, 0x3b, true) && msr_bitmap_intercepts(bm, 0x3b, false));
	/* Exactly those MSRs: 22 + 2 + 3 + 8 + 1 + 1 + 1 + 1 read and write, 1
	 * read only, 1 write only. */
	int bits = 0;
	for (int i = 0; i < 4096; i++)
		bits += __builtin_popcount(bm[i]);
	CHECK_EQ(bits, 2 * (22 + 2 + 3 + 8 + 1 + 1 + 1 + 1) + 1 + 1);
	for (int i = 1024; i < 2048; i++)
		CHECK_EQ(bm[i] | bm[i + 2048], 0);
}

TEST(msr_bitmap_passes_through_guest_msrs)
{
	uint8_t *bm = msr_map();
	for (uint32_t m = 0x800; m <= 0x8ff; m++) {           /* x2APIC: the partition model */
		CHECK(!msr_bitmap_intercepts(bm, m, false));
		CHECK(!msr_bitmap_intercepts(bm, m, true));
	}
	CHECK(!msr_bitmap_intercepts(bm, 0x10, false));     /* TSC reads (writes: guest_tsc_writes_*) */
	static const uint32_t pass[] = { 0x6e0 /* TSC_DEADLINE */,
					 0xc0000080 /* EFER */, 0xc0000082 /* LSTAR */, 0xc0000100 /* FS_BASE */,
					 0xc0000102 /* KERNEL_GS_BASE */, 0x1fff, 0xc0001fff };
	for (size_t i = 0; i < ARRAY_SIZE(pass); i++) {
		CHECK(!msr_bitmap_intercepts(bm, pass[i], false));
		CHECK(!msr_bitmap_intercepts(bm, pass[i], true));
	}
}

/* The virtual model (SDM Vol. 3C, "Virtualizing MSR-Based APIC Accesses"):
 * reads of the x2APIC's readable registers pass except the current count
 * (the rest exit for their #GP: test_arch_deviations.c); writes exit except
 * TPR (0x808), EOI (0x80b), SELF IPI (0x83f), and the ICR (0x830) only with
 * IPIv. */
TEST(msr_bitmap_virtual_model)
{
	static uint8_t bm[4096];
	for (int ipiv = 0; ipiv < 2; ipiv++) {
		msr_bitmap_build(bm, true, ipiv);
		for (uint32_t m = 0x800; m <= 0x8ff; m++) {
			CHECK_EQ(msr_bitmap_intercepts(bm, m, false), m == 0x839 || !sdm_x2apic_readable(m));
			bool pass = m == 0x808 || m == 0x80b || m == 0x83f || (m == 0x830 && ipiv);
			CHECK_EQ(msr_bitmap_intercepts(bm, m, true), !pass);
		}
		CHECK(msr_bitmap_intercepts(bm, 0x6e0, false));
		CHECK(msr_bitmap_intercepts(bm, 0x6e0, true));
		CHECK(msr_bitmap_intercepts(bm, 0x1b, true));
		CHECK(msr_bitmap_intercepts(bm, 0x10, true));
	}
}

/* timer=apicv toggles IA32_TSC_DEADLINE (0x6E0) in a vCPU's own bitmap: its
 * read bit (byte 0x6E0 / 8 of the read-low quarter) and its write bit (the
 * same bit 2048 bytes on), nothing else. */
TEST(msr_bitmap_pass_toggles_one_msr)
{
	static uint8_t bm[4096], ref[4096];
	msr_bitmap_build(bm, true, false);
	memcpy(ref, bm, sizeof bm);
	msr_bitmap_pass(bm, 0x6e0, true);
	CHECK(!msr_bitmap_intercepts(bm, 0x6e0, false) && !msr_bitmap_intercepts(bm, 0x6e0, true));
	unsigned diff = 0;
	for (size_t i = 0; i < sizeof bm; i++)
		diff += (unsigned)__builtin_popcount(bm[i] ^ ref[i]);
	CHECK_EQ(diff, 2);
	CHECK_EQ(bm[0x6e0 / 8] ^ ref[0x6e0 / 8], 1u << (0x6e0 % 8));
	CHECK_EQ(bm[2048 + 0x6e0 / 8] ^ ref[2048 + 0x6e0 / 8], 1u << (0x6e0 % 8));
	msr_bitmap_pass(bm, 0x6e0, false);
	CHECK(!memcmp(bm, ref, sizeof bm));
}

TEST(msr_outside_bitmap_ranges_always_exit)
{
	static uint8_t zero[4096];                         /* even an empty bitmap */
	uint8_t *bm = msr_map();
	static const uint32_t out[] = { 0x2000, 0x40000000, 0x4b564d00, 0xbfffffff, 0xc0002000, 0xffffffff };
	for (size_t i = 0; i < ARRAY_SIZE(out); i++) {
		CHECK(msr_bitmap_intercepts(bm, out[i], false));
		CHECK(msr_bitmap_intercepts(bm, out[i], true));
		CHECK(msr_bitmap_intercepts(zero, out[i], false));
		CHECK(msr_bitmap_intercepts(zero, out[i], true));
	}
}

/* The bitmap's four 1 KiB parts at their range edges (SDM Vol. 3C,
 * "MSR-Bitmap Address"): read bitmap for low MSRs at byte 0 (MSRs
 * 00000000H-00001FFFH, one bit each, MSR n at byte n / 8 bit n % 8), for
 * high MSRs at 1024 (C0000000H-C0001FFFH, MSR n at bit n - C0000000H), the
 * write bitmaps for the same ranges at 2048 and 3072; an MSR in neither
 * range always exits. Each edge MSR alone, in a bitmap the test writes: a
 * bitmap with only its bit set intercepts it in that half only, and a
 * bitmap with every bit but that one lets it through in that half only. */
TEST(msr_bitmap_range_edges)
{
	static const struct { uint32_t msr; unsigned part; } in[] = {
		{ 0x00000000, 0 }, { 0x00000001, 0 }, { 0x00001fff, 0 }, { 0xc0000000, 1024 }, { 0xc0000001, 1024 },
		{ 0xc0001fff, 1024 },
	};
	static const uint32_t out[] = { 0x2000, 0xbfffffff, 0xc0002000, 0x3fff, 0xc0003fff };
	static uint8_t bm[4096];
	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		for (int write = 0; write < 2; write++) {
			uint32_t m = in[i].msr, n = m & 0x1fff;
			size_t byte = in[i].part + (write ? 2048 : 0) + n / 8;
			uint8_t bit = (uint8_t)(1u << (n % 8));
			memset(bm, 0, sizeof bm);
			bm[byte] = bit;
			bool ok = msr_bitmap_intercepts(bm, m, write) && !msr_bitmap_intercepts(bm, m, !write);
			memset(bm, 0xff, sizeof bm);
			bm[byte] = (uint8_t)~bit;
			ok &= !msr_bitmap_intercepts(bm, m, write) && msr_bitmap_intercepts(bm, m, !write);
			if (!ok)
				printf("    MSR 0x%x %s: not decoded from byte %zu bit %u\n", m, write ? "write" : "read", byte,
				       (unsigned)__builtin_ctz(bit));
			CHECK(ok);
		}
	/* Outside both ranges: an exit whatever the bitmap holds (all 0, all 1). */
	for (int fill = 0; fill <= 0xff; fill += 0xff) {
		memset(bm, fill, sizeof bm);
		for (size_t i = 0; i < ARRAY_SIZE(out); i++) {
			CHECK(msr_bitmap_intercepts(bm, out[i], false));
			CHECK(msr_bitmap_intercepts(bm, out[i], true));
		}
	}
	/* The built bitmap (either interrupt model) intercepts no high MSR, and
	 * MSR 0 and C0000000H pass. */
	for (int virt = 0; virt < 2; virt++) {
		msr_bitmap_build(bm, virt, false);
		for (int b = 1024; b < 2048; b++)
			CHECK_EQ(bm[b] | bm[b + 2048], 0);
		CHECK(!msr_bitmap_intercepts(bm, 0xc0000000, false) && !msr_bitmap_intercepts(bm, 0xc0000000, true));
		CHECK(!msr_bitmap_intercepts(bm, 0x0, false) && !msr_bitmap_intercepts(bm, 0x0, true));
	}
}

TEST(msr_intercepted_accesses)
{
	uint64_t v = 0xdead;
	CHECK_EQ(guest_rdmsr(0x3a, &v), 0);
	CHECK(v & BIT(0));                                  /* locked */
	CHECK_EQ(v & (BIT(1) | BIT(2)), 0);                 /* VMX off inside and outside SMX */
	CHECK_EQ(v & (0x7f00 | BIT(17) | BIT(18)), 0);      /* no SENTER, no SGX */
	for (uint32_t m = 0x480; m <= 0x493; m++) {
		v = 0x1234;
		CHECK_EQ(guest_rdmsr(m, &v), -1);
	}
	CHECK_EQ(guest_wrmsr(0x3a, 0), -1);
	CHECK_EQ(guest_wrmsr(0x3a, BIT(0) | BIT(2)), -1);
	CHECK_EQ(guest_wrmsr(0x480, 0), -1);
	CHECK_EQ(guest_rdmsr(0x4b564d00, &v), -1);
}

/* Where the CPU reports microcode revision 0 (an emulator; the host stub's
 * MSR reads fault, which counts as 0), the guest reads a revision in bits
 * 63:32 that passes Linux's TSC-deadline errata check (Skylake-X stepping 4
 * needs at least 0x02000014); writes are accepted. */
TEST(msr_microcode_revision_for_the_deadline_errata_check)
{
	uint64_t v = 0;
	CHECK_EQ(guest_rdmsr(0x8b, &v), 0);
	CHECK_EQ(v & 0xffffffffull, 0);
	CHECK((v >> 32) >= 0x02000014);
	CHECK_EQ(guest_wrmsr(0x8b, 0), 0);
}

/* ---- port I/O ---- */

static uint8_t io_a[4096], io_b[4096];

static struct acpi_info *pm1(uint32_t a, uint32_t b)
{
	static struct acpi_info acpi;
	memset(&acpi, 0, sizeof acpi);
	acpi.pm1a_cnt = a;
	acpi.pm1b_cnt = b;
	return &acpi;
}

static int io_bits(void)
{
	int n = 0;
	for (int i = 0; i < 4096; i++)
		n += __builtin_popcount(io_a[i]) + __builtin_popcount(io_b[i]);
	return n;
}

#define IO(port) io_bitmap_intercepts(io_a, io_b, port)

TEST(io_bitmaps_intercept_ending_ports_only)
{
	memset(io_a, 0xff, sizeof io_a);
	memset(io_b, 0xff, sizeof io_b);
	io_bitmaps_build(io_a, io_b, pm1(0xb004, 0), 0);
	CHECK(IO(0xb004));
	CHECK(IO(0xb005));
	CHECK(!IO(0xb003));
	CHECK(!IO(0xb006));
	CHECK(IO(0x8900));
	for (uint16_t p = 0xf4; p <= 0xf7; p++)
		CHECK(IO(p));
	CHECK(!IO(0xf3));
	CHECK(!IO(0xf8));
	for (uint16_t p = 0xcf8; p <= 0xcff; p++)          /* PCI config, incl. reset control */
		CHECK(!IO(p));
	CHECK(!IO(0x3f8));
	CHECK(!IO(0x80));
	CHECK(IO(0x64));                                    /* the keyboard controller's command port (its reset) */
	CHECK(!IO(0x60) && !IO(0x63) && !IO(0x65));
	CHECK(!IO(0));                                      /* pm1b absent: not "port 0" */
	CHECK(!IO(0xffff));
	CHECK_EQ(io_bits(), 2 + 1 + 1 + 4);
	/* Bitmap B covers 0x8000-0xffff from its bit 0. */
	CHECK_EQ(io_b[(0xb004 - 0x8000) / 8], 0x30);
	CHECK_EQ(io_b[(0x8900 - 0x8000) / 8], 0x01);
	CHECK_EQ(io_a[0xf4 / 8], 0xf0);

	io_bitmaps_build(io_a, io_b, pm1(0xb004, 0x804), 0);
	CHECK(IO(0x804));
	CHECK(IO(0x805));
	CHECK(!IO(0x806));
	CHECK(IO(0xb004));
	CHECK_EQ(io_bits(), 4 + 1 + 1 + 4);
	CHECK_EQ(io_a[0x804 / 8], 0x30);

	/* The console UART: its 8 ports, no more. */
	io_bitmaps_build(io_a, io_b, pm1(0xb004, 0), 0x3f8);
	for (uint16_t p = 0x3f8; p <= 0x3ff; p++)
		CHECK(IO(p) && io_is_console(0x3f8, p));
	CHECK(!IO(0x3f7) && !io_is_console(0x3f8, 0x3f7));
	CHECK(!IO(0x400) && !io_is_console(0x3f8, 0x400));
	CHECK(!io_is_console(0, 0));
	CHECK_EQ(io_bits(), 2 + 1 + 1 + 4 + 8);

	/* The FADT's reset register, when it is a port: intercepted, unless it
	 * is one of PCI's (0xcf9: every configuration access would exit). */
	struct acpi_info *r = pm1(0xb004, 0);
	r->reset_valid = true;
	r->reset_space = ACPI_SPACE_IO;
	r->reset_addr = 0xb2;
	io_bitmaps_build(io_a, io_b, r, 0);
	CHECK(IO(0xb2) && !IO(0xb1) && !IO(0xb3));
	CHECK_EQ(io_bits(), 2 + 1 + 1 + 1 + 4);
	r->reset_addr = 0xcf9;
	io_bitmaps_build(io_a, io_b, r, 0);
	CHECK(!IO(0xcf9) && !IO(0xcf8));
	CHECK_EQ(io_bits(), 2 + 1 + 1 + 4);
	r->reset_space = ACPI_SPACE_MEMORY;                 /* not a port: nothing */
	r->reset_addr = 0xb2;
	io_bitmaps_build(io_a, io_b, r, 0);
	CHECK(!IO(0xb2));
	r->reset_space = ACPI_SPACE_IO;
	r->reset_valid = false;                             /* no RESET_REG_SUP: nothing */
	io_bitmaps_build(io_a, io_b, r, 0);
	CHECK(!IO(0xb2));
}

/* The writes that reset the machine, each as the hardware defines it: the
 * 8042's "pulse output port" commands 0xf0-0xff pulse bits 3:0 that are 0
 * in the command, bit 0 being the reset line (Linux: outb(0xfe, 0x64));
 * the ICH/PIIX reset control register 0xcf9 resets on RST_CPU (bit 2),
 * SYS_RST (bit 1) only selecting the kind (Linux writes 0x02, then 0x06
 * or 0x0e); the FADT's reset register takes its reset value. */
TEST(io_write_resets_cases)
{
	struct acpi_info *a = pm1(0xb004, 0);
	const char *why = NULL;
	CHECK(io_write_resets(a, 0x64, 0xfe, 1, &why));
	CHECK_CONTAINS(why, "keyboard controller");
	CHECK(io_write_resets(a, 0x64, 0xf0, 1, &why));     /* pulses every line, reset included */
	CHECK(!io_write_resets(a, 0x64, 0xff, 1, &why));    /* pulses none */
	CHECK(!io_write_resets(a, 0x64, 0xf1, 1, &why));    /* bit 0 set: not the reset line */
	static const uint8_t kbc_ok[] = { 0x20, 0x60, 0xa7, 0xa8, 0xad, 0xae, 0xd1, 0xd4, 0xdd, 0xdf, 0xaa };
	for (size_t i = 0; i < ARRAY_SIZE(kbc_ok); i++)
		CHECK(!io_write_resets(a, 0x64, kbc_ok[i], 1, &why));
	CHECK(!io_write_resets(a, 0x60, 0xfe, 1, &why));    /* the data port: a byte for the keyboard */
	why = NULL;
	CHECK(!io_write_resets(a, 0xcf9, 0x02, 1, &why));   /* SYS_RST alone: the kind, no reset yet */
	CHECK(why == NULL);
	CHECK(io_write_resets(a, 0xcf9, 0x06, 1, &why));
	CHECK_CONTAINS(why, "reset control register");
	CHECK(io_write_resets(a, 0xcf9, 0x0e, 1, &why));
	CHECK(io_write_resets(a, 0xcf9, 0x04, 1, &why));
	CHECK(!io_write_resets(a, 0xcf8, 0x80000600, 4, &why));   /* a PCI address, not reset control */
	CHECK(!io_write_resets(a, 0xcfc, 0x06, 1, &why));
	/* The FADT's reset register: its value at its port, nothing else. */
	a->reset_valid = true;
	a->reset_space = ACPI_SPACE_IO;
	a->reset_addr = 0xb2;
	a->reset_value = 0x5a;
	why = NULL;
	CHECK(io_write_resets(a, 0xb2, 0x5a, 1, &why));
	CHECK_CONTAINS(why, "FADT");
	CHECK(!io_write_resets(a, 0xb2, 0x5b, 1, &why));
	CHECK(!io_write_resets(a, 0xb3, 0x5a, 1, &why));
	a->reset_space = ACPI_SPACE_MEMORY;
	CHECK(!io_write_resets(a, 0xb2, 0x5a, 1, &why));
	/* The ports that end the machine (S5, the emulators') do not reset it. */
	CHECK(!io_write_resets(a, 0xb004, BIT(13) | (5 << 10), 2, &why));
	CHECK(!io_write_resets(a, 0x8900, 'S', 1, &why));
	CHECK(!io_write_resets(a, 0xf4, 0x11, 4, &why));
}

TEST(io_write_ends_machine_cases)
{
	const struct acpi_info *acpi = pm1(0xb004, 0x804);
	const char *why = NULL;
	CHECK(io_write_ends_machine(acpi, 0xb004, BIT(13) | (5 << 10), 2, &why));
	CHECK_CONTAINS(why, "ACPI");
	why = NULL;
	CHECK(!io_write_ends_machine(acpi, 0xb004, 5 << 10, 2, &why));    /* SLP_TYP only */
	CHECK(!io_write_ends_machine(acpi, 0xb004, 1, 2, &why));          /* SCI_EN */
	CHECK(io_write_ends_machine(acpi, 0xb005, 0x20 | (5 << 2), 1, &why));  /* byte write of the high half */
	CHECK(!io_write_ends_machine(acpi, 0xb005, 5 << 2, 1, &why));
	CHECK(!io_write_ends_machine(acpi, 0xb004, 0x2000 | 0x01, 1, &why));   /* outb: AH's SLP_EN is not written */
	CHECK(io_write_ends_machine(acpi, 0x804, BIT(13), 2, &why));
	CHECK_CONTAINS(why, "ACPI");
	CHECK(!io_write_ends_machine(acpi, 0x804, 0, 2, &why));

	why = NULL;
	CHECK(io_write_ends_machine(acpi, 0x8900, 'S', 2, &why));
	CHECK(why != NULL);
	for (uint16_t p = 0xf4; p <= 0xf7; p++) {
		why = NULL;
		CHECK(io_write_ends_machine(acpi, p, 0x31, 2, &why));
		CHECK(why != NULL);
	}
	CHECK(!io_write_ends_machine(acpi, 0xcf9, 0x06, 2, &why));        /* reset control: not intercepted */
	/* Other ports never end the machine, whatever the value. */
	static const uint16_t other[] = { 0xcf8, 0xcf9, 0xcfc, 0x3f8, 0x80, 0xf3, 0xf8, 0xb006, 0x806, 0x8901 };
	for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
		CHECK(!io_write_ends_machine(acpi, other[i], 0, 2, &why));
		CHECK(!io_write_ends_machine(acpi, other[i], 0xffffffff, 2, &why));
	}

	/* With \_S5_ known (SLP_TYPa 5, SLP_TYPb 7), only S5 ends the machine;
	 * another SLP_TYP with SLP_EN is a sleep state, dropped. */
	struct acpi_info *s5 = pm1(0xb004, 0x804);
	s5->s5_valid = true;
	s5->slp_typa = 5;
	s5->slp_typb = 7;
	CHECK(io_write_ends_machine(s5, 0xb004, BIT(13) | (5 << 10), 2, &why));
	CHECK(!io_write_is_sleep(s5, 0xb004, BIT(13) | (5 << 10), 2));
	for (uint32_t typ = 0; typ < 8; typ++) {
		if (typ == 5)
			continue;
		CHECK(!io_write_ends_machine(s5, 0xb004, BIT(13) | (typ << 10), 2, &why));
		CHECK(io_write_is_sleep(s5, 0xb004, BIT(13) | (typ << 10), 2));
		CHECK(io_write_is_sleep(s5, 0xb005, 0x20 | (typ << 2), 1));
		CHECK(!io_write_is_sleep(s5, 0xb004, typ << 10, 2));       /* no SLP_EN */
	}
	CHECK(io_write_ends_machine(s5, 0x804, BIT(13) | (7 << 10), 2, &why));
	CHECK(io_write_is_sleep(s5, 0x804, BIT(13) | (5 << 10), 2));
	CHECK(!io_write_is_sleep(s5, 0x3f8, 0xffff, 2));

	/* Without a second PM1 block only PM1a counts. */
	acpi = pm1(0xb004, 0);
	CHECK(io_write_ends_machine(acpi, 0xb004, BIT(13), 2, &why));
	CHECK(!io_write_ends_machine(acpi, 0x804, BIT(13), 2, &why));
}
