/* The probe's verdicts (boot/probe_verdict.c) against register values
 * written out here from the documents, not from the project's headers:
 *  - CPUID 0xB / 0x1F (SDM Vol. 2A, CPUID): subleaf n has EAX[4:0] the
 *    x2APIC ID shift to the next level, EBX[15:0] the logical processors at
 *    this level, ECX[15:8] the level type (0 invalid, 1 SMT, 2 core, 3
 *    module, 4 tile, 5 die); the last valid level's shift gives the package.
 *  - CPUID.1:EBX[23:16] addressable IDs per package, valid with EDX.HTT.
 *  - CPUID 5 EDX: 4 bits of MWAIT sub-states per C-state, C0 in 3:0;
 *    ECX[0] the extensions enumerated. CPUID 6 EAX[2]: ARAT.
 *  - VT-d specification, "Register Descriptions": CAP PLMR 5, PHMR 6,
 *    PI 59; ECAP QI 1, IR 3, EIM 4, SMTS 43, SLTS 46; GSTS TES 31, QIES 26,
 *    IRES 25; PMEN PRS 0; RTADDR TTM 11:10 (00b legacy, 01b scalable).
 *  - MSR_SMI_COUNT (0x34), bits 31:0 (SDM Vol. 4).
 * The two-socket shape is a Sapphire Rapids server's: 56 cores of 2
 * threads a socket, the cores' IDs 7 bits wide (socket 1 starts at 128). */
#include "test.h"
#include "../../boot/probe_verdict.h"
#include "../../vmx/caps.h"
#include "../../vmx/tiers.h"
#include "fixture.h"

#define B(n) (1ull << (n))
#define CAP_PLMR B(5)
#define CAP_PHMR B(6)
#define CAP_PI   B(59)
#define ECAP_QI   B(1)
#define ECAP_IR   B(3)
#define ECAP_EIM  B(4)
#define ECAP_SMTS B(43)
#define ECAP_SLTS B(46)
#define GSTS_TES  B(31)
#define GSTS_QIES B(26)
#define GSTS_IRES B(25)
#define PMEN_PRS  B(0)
#define TTM_SCALABLE (1ull << 10)
#define LEVEL(type) ((uint32_t)(type) << 8)

TEST(probe_pkg_shift_leaf_b_spr)
{
	/* SMT: shift 1, 2 threads; core: shift 7, 112 threads; then invalid. */
	uint32_t a[4] = { 1, 7, 0, 0 }, b[4] = { 2, 112, 0, 0 }, c[4] = { LEVEL(1) | 0, LEVEL(2) | 1, 2, 3 };
	CHECK_EQ(probe_pkg_shift(a, b, c, 4), 7);
}

TEST(probe_pkg_shift_leaf_1f_die)
{
	/* SMT 1, core 6, die 7: the package is above the die. */
	uint32_t a[4] = { 1, 6, 7, 0 }, b[4] = { 2, 64, 128, 0 }, c[4] = { LEVEL(1), LEVEL(2) | 1, LEVEL(5) | 2, 3 };
	CHECK_EQ(probe_pkg_shift(a, b, c, 4), 7);
	/* Subleaf 0 invalid: the leaf says nothing. */
	uint32_t z[2] = { 0, 0 };
	CHECK_EQ(probe_pkg_shift(z, z, z, 2), -1);
}

TEST(probe_shift_from_count_htt)
{
	CHECK_EQ(probe_shift_from_count(false, 16), 0);
	CHECK_EQ(probe_shift_from_count(true, 1), 0);
	CHECK_EQ(probe_shift_from_count(true, 2), 1);
	CHECK_EQ(probe_shift_from_count(true, 12), 4);
	CHECK_EQ(probe_shift_from_count(true, 16), 4);
	CHECK_EQ(probe_shift_from_count(true, 128), 7);
}

TEST(probe_apic_layout_two_sockets)
{
	static uint32_t ids[224];
	unsigned n = 0;
	for (unsigned s = 0; s < 2; s++)
		for (unsigned t = 0; t < 112; t++)
			ids[n++] = s * 128 + t;
	struct probe_layout l = probe_apic_layout(ids, n, 7);
	CHECK_EQ(l.packages, 2);
	CHECK_EQ(l.above_255, 0);
	CHECK_EQ(l.highest, 239);
	/* Four sockets: socket 2 and 3 are above 255. */
	uint32_t four[6] = { 0, 1, 128, 256, 257, 384 + 5 };
	l = probe_apic_layout(four, 6, 7);
	CHECK_EQ(l.packages, 4);
	CHECK_EQ(l.above_255, 3);
	CHECK_EQ(l.highest, 389);
}

TEST(probe_cstates_and_arat)
{
	struct probe_row c, a;
	/* C0 0, C1 2, C2 1, C3 0, C4..C6: C6 2 sub-states; no ARAT. */
	uint32_t edx = 2u << 4 | 1u << 8 | 2u << 24;
	probe_cstates_rows(true, 1, edx, true, 0, &c, &a);
	CHECK_EQ(c.verdict, PROBE_OK);
	CHECK_CONTAINS(c.value, "C1:2 C2:1 C6:2");
	CHECK_CONTAINS(c.value, "deepest C6");
	CHECK_EQ(a.verdict, PROBE_DEGRADED);
	CHECK_CONTAINS(a.why, "C6");
	probe_cstates_rows(true, 1, edx, true, 1u << 2, &c, &a);
	CHECK_EQ(a.verdict, PROBE_OK);
	/* No MONITOR/MWAIT: missing; ARAT absent but nothing deep: missing. */
	probe_cstates_rows(false, 0, 0, true, 0, &c, &a);
	CHECK_EQ(c.verdict, PROBE_MISSING);
	CHECK_EQ(a.verdict, PROBE_MISSING);
	/* Only ARAT's bit: bit 1 (DTS) alone is not it. */
	probe_cstates_rows(true, 1, edx, true, 1u << 1, &c, &a);
	CHECK_EQ(a.verdict, PROBE_DEGRADED);
}

TEST(probe_vtd_unit_rows)
{
	struct probe_row r;
	/* A server unit: PI, both PMRs, scalable with SLTS, IR/EIM/QI; the
	 * firmware left TE on (legacy), IR and QI on, the PMRs on. */
	uint64_t cap = CAP_PI | CAP_PLMR | CAP_PHMR | 0x2000ull << 8;
	uint64_t ecap = ECAP_QI | ECAP_IR | ECAP_EIM | ECAP_SMTS | ECAP_SLTS;
	probe_vtd_row(0x60, cap, ecap, (uint32_t)(GSTS_TES | GSTS_QIES | GSTS_IRES), (uint32_t)PMEN_PRS, 0, true, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "v6.0");
	CHECK_CONTAINS(r.value, "scalable yes, SLTS 1; PI 1; PMR low+high; IR 1 EIM 1 QI 1");
	CHECK_CONTAINS(r.value, "firmware left TE on (TTM 00b), IR on, QIE on, PMRs on");
	/* The same left in scalable mode: the hand-over cannot keep it. */
	probe_vtd_row(0x60, cap, ecap, (uint32_t)GSTS_TES, 0, TTM_SCALABLE, false, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	CHECK_CONTAINS(r.value, "TE on (TTM 01b)");
	CHECK_CONTAINS(r.why, "scalable");
	/* Scalable offered but TE off: fine. */
	probe_vtd_row(0x60, cap, ecap, 0, 0, TTM_SCALABLE, false, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	/* A client unit: no PI, no PMR, IR without EIM: degraded only where
	 * APIC IDs above 255 need EIM. */
	probe_vtd_row(0x10, 0x2000ull << 8, ECAP_QI | ECAP_IR, 0, 0, 0, false, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "v1.0; modes: legacy, scalable no, SLTS 0; PI 0; PMR none; IR 1 EIM 0 QI 1");
	probe_vtd_row(0x10, 0x2000ull << 8, ECAP_QI | ECAP_IR, 0, 0, 0, true, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	CHECK_CONTAINS(r.why, "EIM");
	/* Nothing there. */
	probe_vtd_row(0xffffffffu, ~0ull, ~0ull, 0, 0, 0, false, &r);
	CHECK_EQ(r.verdict, PROBE_MISSING);
}

TEST(probe_tsc_and_skew_rows)
{
	struct probe_row r;
	probe_tsc_row(2100000, TSC_FROM_CPUID15, false, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "2100000 kHz from CPUID 0x15");
	probe_tsc_row(50000, TSC_FROM_EMULATOR, true, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	probe_tsc_row(1000000, TSC_FROM_GUESS, false, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	probe_skew_row(0, 0, 0, 0, 0, 2000000, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "one CPU");
	/* 2 GHz: 4000 ticks are 2000 ns; within +-5000 is no evidence. */
	probe_skew_row(-4000, 5000, 130, 223, 223, 2000000, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "largest -4000 ticks (-2000 ns) at APIC ID 130, known to +-5000; 223 of 223");
	probe_skew_row(-4000, 300, 130, 223, 223, 2000000, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	probe_skew_row(10, 300, 1, 3, 4, 2000000, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	probe_skew_row(0, 0, 0, 0, 4, 2000000, &r);
	CHECK_EQ(r.verdict, PROBE_MISSING);
}

TEST(probe_smi_count_row)
{
	struct probe_row r;
	probe_smi_row(false, 0, 0, 1000, &r);
	CHECK_EQ(r.verdict, PROBE_MISSING);
	CHECK_CONTAINS(r.value, "0x34");
	probe_smi_row(true, 41, 41, 250000, &r);
	CHECK_EQ(r.verdict, PROBE_OK);
	CHECK_CONTAINS(r.value, "0 SMIs in 250 ms");
	/* 0 at both ends: no hardware's count (firmware takes SMIs at boot). */
	probe_smi_row(true, 0, 0, 250000, &r);
	CHECK_EQ(r.verdict, PROBE_MISSING);
	CHECK_CONTAINS(r.why, "emulator");
	/* The counter is 32 bits wide: it wraps. */
	probe_smi_row(true, 0xfffffffeull, 1, 250000, &r);
	CHECK_EQ(r.verdict, PROBE_DEGRADED);
	CHECK_CONTAINS(r.value, "3 SMIs");
}

/* The tier rows' reasons (vmx/tiers.c tiers_why_not_best) on the profiles
 * test_caps.c uses: why each path did not get its best tier. */

TEST(probe_tier_reasons)
{
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	CHECK(fixture_spr_ipiv(&raw));
	vmx_caps_decode(&raw, &c);
	CHECK_EQ(tiers_choose(&c, NULL, &t, err, sizeof err), 0);
	for (int p = 0; p < 3; p++)
		CHECK(tiers_why_not_best(&c, &t, p) == NULL);
	struct hv_options o;
	options_defaults(&o);
	o.eoi = EOI_PV;
	CHECK_EQ(tiers_choose(&c, &o, &t, err, sizeof err), 0);
	CHECK_CONTAINS(tiers_why_not_best(&c, &t, 0), "eoi=pv and VID exclude each other");
	CHECK_CONTAINS(tiers_why_not_best(&c, &t, 1), "override");
	/* Stock Bochs 3.0 skylake_x: no tertiary controls; VID kept off for defect G. */
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	vmx_caps_decode(&raw, &c);
	c.vid_ignores_if = true;
	CHECK_EQ(tiers_choose(&c, NULL, &t, err, sizeof err), 0);
	CHECK_CONTAINS(tiers_why_not_best(&c, &t, 0), "no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available");
	CHECK_CONTAINS(tiers_why_not_best(&c, &t, 1), "defect G");
	CHECK_CONTAINS(tiers_why_not_best(&c, &t, 2), "no APIC-timer virtualization");
}
