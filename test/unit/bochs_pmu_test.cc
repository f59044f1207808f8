// The patched Bochs's architectural PMU (tools/bochs-patch/pmu.cc, the same
// file Bochs links) against the SDM: Vol. 3B, "Performance Monitoring"
// ("Architectural Performance Monitoring Version 1" and "... Version 2"),
// Vol. 3A "Local Vector Table" for the PMI's LVT entry, Vol. 4
// "Architectural MSRs" for the addresses. Every constant and expected value
// below is written here from the SDM, not taken from pmu.h: only the unit's
// interface (bx_pmu_c's methods) comes from there. Prints one
// "PASS|FAIL unit/bochs_pmu_NAME" line per case (test/run-tests.sh, level unit).
#include "../../tools/bochs-patch/pmu.h"
#include "../../tools/bochs-patch/pmu.cc"
#include <stdio.h>
#include "host_cxx.h"

// SDM Vol. 4, "Architectural MSRs"
#define IA32_PMC(n)              (0xC1u + (n))
#define IA32_PERFEVTSEL(n)       (0x186u + (n))
#define IA32_FIXED_CTR(n)        (0x309u + (n))
#define IA32_FIXED_CTR_CTRL      0x38Du
#define IA32_PERF_GLOBAL_STATUS  0x38Eu
#define IA32_PERF_GLOBAL_CTRL    0x38Fu
#define IA32_PERF_GLOBAL_OVF_CTRL 0x390u
// IA32_PERFEVTSELx fields (SDM 3B, "Architectural Performance Monitoring Version 1")
#define SEL_USR  (1ull << 16)
#define SEL_OS   (1ull << 17)
#define SEL_E    (1ull << 18)
#define SEL_INT  (1ull << 20)
#define SEL_EN   (1ull << 22)
#define SEL_INV  (1ull << 23)
// the architectural events (SDM 3B, "Pre-defined Architectural Performance Events")
#define EV_INST_RETIRED   0x00C0ull   // umask 00H, event C0H
#define EV_CORE_CYCLES    0x003Cull   // umask 00H, event 3CH
#define EV_REF_CYCLES     0x013Cull   // umask 01H, event 3CH
#define W48 ((1ull << 48) - 1)

// The local APIC's side of a PMI: an LVTPC register and what reached the core.
struct apic { uint32_t lvtpc; unsigned delivered; uint32_t last; };
static void pmi(void *ctx)
{
  apic *a = (apic *) ctx;
  uint32_t old = a->lvtpc;
  if (bx_pmu_c::lvtpc_fire(&a->lvtpc)) { a->delivered++; a->last = old; }
}
static apic lapic;
static bx_pmu_c *fresh(uint32_t lvtpc = 0x400 /* NMI, unmasked */)
{
  static bx_pmu_c *p;
  delete p;
  lapic = apic();
  lapic.lvtpc = lvtpc;
  p = new bx_pmu_c(pmi, &lapic);
  return p;
}
static uint64_t rd(bx_pmu_c *p, uint32_t msr)
{
  uint64_t v = 0xdeadbeef;
  int r = p->rdmsr(msr, &v);
  if (r != 1) { case_failures++; printf("    rdmsr 0x%x: %d\n", msr, r); }
  return v;
}
static void wr(bx_pmu_c *p, uint32_t msr, uint64_t v)
{
  int r = p->wrmsr(msr, v);
  if (r != 1) { case_failures++; printf("    wrmsr 0x%x 0x%llx: %d\n", msr, (unsigned long long) v, r); }
}

static void cpuid_0a_is_version_2()
{
  uint32_t a = 0, b = ~0u, c = ~0u, d = 0;
  bx_pmu_c::cpuid_leaf_a(&a, &b, &c, &d);
  CHECK_EQ(a & 0xFF, 2);                // version ID
  CHECK_EQ((a >> 8) & 0xFF, 4);         // general-purpose counters per logical processor
  CHECK_EQ((a >> 16) & 0xFF, 48);       // their bit width
  CHECK((a >> 24) >= 3);                // EBX vector long enough to name the three events
  CHECK_EQ(b & 1, 0);                   // core cycles available
  CHECK_EQ(b & 2, 0);                   // instructions retired available
  CHECK_EQ(b & 4, 0);                   // reference cycles available
  CHECK_EQ(d & 0x1F, 3);                // fixed-function counters
  CHECK_EQ((d >> 5) & 0xFF, 48);        // their bit width
  CHECK_EQ(c, 0);
}

static void msrs_read_back_and_others_are_not_the_pmus()
{
  bx_pmu_c *p = fresh();
  for (unsigned n = 0; n < 4; n++) {
    CHECK_EQ(rd(p, IA32_PMC(n)), 0);
    wr(p, IA32_PERFEVTSEL(n), EV_INST_RETIRED | SEL_OS | (n << 24));
    CHECK_EQ(rd(p, IA32_PERFEVTSEL(n)), EV_INST_RETIRED | SEL_OS | (n << 24));
  }
  wr(p, IA32_FIXED_CTR_CTRL, 0xBBB);
  CHECK_EQ(rd(p, IA32_FIXED_CTR_CTRL), 0xBBB);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x70000000Full);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_CTRL), 0x70000000Full);
  wr(p, IA32_FIXED_CTR(2), W48);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(2)), W48);
  uint64_t v;
  // a fifth counter, a fourth fixed one, PERF_CAPABILITIES: not this unit's
  CHECK_EQ(p->rdmsr(IA32_PMC(4), &v), -1);
  CHECK_EQ(p->rdmsr(IA32_PERFEVTSEL(4), &v), -1);
  CHECK_EQ(p->rdmsr(IA32_FIXED_CTR(3), &v), -1);
  CHECK_EQ(p->rdmsr(0x345, &v), -1);
  CHECK_EQ(p->wrmsr(0x10, 0), -1);
}

// SDM 3B, "Full-Width Writes to Performance Counter Registers": "the value
// written into IA32_PMCx by WRMSR is the signed extended 64-bit value of
// the EAX[31:0] input of WRMSR"; the counter keeps its 48 bits.
static void pmc_writes_sign_extend_from_bit_31()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PMC(0), 0x80000000ull);
  CHECK_EQ(rd(p, IA32_PMC(0)), 0xFFFF80000000ull);
  wr(p, IA32_PMC(1), 0x7FFFFFFFull);
  CHECK_EQ(rd(p, IA32_PMC(1)), 0x7FFFFFFFull);
  wr(p, IA32_PMC(2), 0x1234000000000005ull);   // EDX is not written
  CHECK_EQ(rd(p, IA32_PMC(2)), 5);
  wr(p, IA32_PMC(3), 0xFFFFFFFDull);            // -3
  CHECK_EQ(rd(p, IA32_PMC(3)), (1ull << 48) - 3);
}

static void reserved_bits_gp()
{
  bx_pmu_c *p = fresh();
  CHECK_EQ(p->wrmsr(IA32_PERFEVTSEL(0), 1ull << 32), 0);      // 63:32 reserved
  CHECK_EQ(p->wrmsr(IA32_PERFEVTSEL(1), 1ull << 21), 0);      // AnyThread: version 3's
  CHECK_EQ(p->wrmsr(IA32_FIXED_CTR_CTRL, 1ull << 2), 0);      // AnyThread of fixed counter 0
  CHECK_EQ(p->wrmsr(IA32_FIXED_CTR_CTRL, 1ull << 12), 0);     // a fourth counter's nibble
  CHECK_EQ(p->wrmsr(IA32_PERF_GLOBAL_CTRL, 1ull << 4), 0);    // a fifth GP counter
  CHECK_EQ(p->wrmsr(IA32_PERF_GLOBAL_CTRL, 1ull << 35), 0);   // a fourth fixed counter
  CHECK_EQ(p->wrmsr(IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 4), 0);
  CHECK_EQ(p->wrmsr(IA32_PERF_GLOBAL_STATUS, 0), 0);          // read-only
  CHECK_EQ(p->wrmsr(IA32_FIXED_CTR(0), 1ull << 48), 0);       // beyond the width
  // none of them changed anything
  CHECK_EQ(rd(p, IA32_PERFEVTSEL(0)), 0);
  CHECK_EQ(rd(p, IA32_PERFEVTSEL(1)), 0);
  CHECK_EQ(rd(p, IA32_FIXED_CTR_CTRL), 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_CTRL), 0);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(0)), 0);
  CHECK(bx_pmu_c::global_ctrl_valid(0x70000000Full));
  CHECK(!bx_pmu_c::global_ctrl_valid(0x10));
  CHECK(!bx_pmu_c::global_ctrl_valid(1ull << 35));
  // OvfBuffer (62) and CondChgd (63) are OVF_CTRL's to write
  CHECK_EQ(p->wrmsr(IA32_PERF_GLOBAL_OVF_CTRL, (1ull << 62) | (1ull << 63) | 0x70000000Full), 1);
}

// A counter counts only when enabled both in its own control and in
// IA32_PERF_GLOBAL_CTRL (SDM 3B, "Architectural Performance Monitoring Version 2").
static void global_ctrl_gates_every_counter()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PERFEVTSEL(0), EV_INST_RETIRED | SEL_OS | SEL_USR | SEL_EN);
  wr(p, IA32_PERFEVTSEL(1), EV_INST_RETIRED | SEL_OS | SEL_USR);   // EN clear
  wr(p, IA32_FIXED_CTR_CTRL, 0x3);                                  // fixed 0 at CPL 0 and 1-3
  p->count(BX_PMU_INSTRUCTIONS, 10, 0);
  CHECK_EQ(rd(p, IA32_PMC(0)), 0);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(0)), 0);
  CHECK(!p->counting());
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x3 | (1ull << 32));
  p->count(BX_PMU_INSTRUCTIONS, 10, 0);
  p->count(BX_PMU_INSTRUCTIONS, 4, 3);
  CHECK_EQ(rd(p, IA32_PMC(0)), 14);
  CHECK_EQ(rd(p, IA32_PMC(1)), 0);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(0)), 14);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x1);   // fixed counter 0 off
  p->count(BX_PMU_INSTRUCTIONS, 1, 0);
  CHECK_EQ(rd(p, IA32_PMC(0)), 15);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(0)), 14);
}

// USR (bit 16): CPL 1, 2, 3; OS (bit 17): CPL 0. Fixed: bit 0 OS, bit 1 USR.
static void usr_and_os_filter_by_cpl()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PERFEVTSEL(0), EV_INST_RETIRED | SEL_OS | SEL_EN);
  wr(p, IA32_PERFEVTSEL(1), EV_INST_RETIRED | SEL_USR | SEL_EN);
  wr(p, IA32_PERFEVTSEL(2), EV_CORE_CYCLES | SEL_USR | SEL_OS | SEL_EN);
  wr(p, IA32_PERFEVTSEL(3), EV_REF_CYCLES | SEL_USR | SEL_EN);
  wr(p, IA32_FIXED_CTR_CTRL, 0x1 | (0x2 << 4) | (0x3 << 8));
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x70000000Full);
  for (unsigned cpl = 0; cpl < 4; cpl++) {
    p->count(BX_PMU_INSTRUCTIONS, 1 + cpl, cpl);   // 1 at CPL 0, 2+3+4 above
    p->count(BX_PMU_CORE_CYCLES, 10, cpl);
    p->count(BX_PMU_REF_CYCLES, 100, cpl);
  }
  CHECK_EQ(rd(p, IA32_PMC(0)), 1);
  CHECK_EQ(rd(p, IA32_PMC(1)), 9);
  CHECK_EQ(rd(p, IA32_PMC(2)), 40);
  CHECK_EQ(rd(p, IA32_PMC(3)), 300);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(0)), 1);     // instructions at CPL 0
  CHECK_EQ(rd(p, IA32_FIXED_CTR(1)), 30);    // core cycles at CPL 1-3
  CHECK_EQ(rd(p, IA32_FIXED_CTR(2)), 400);   // reference cycles everywhere
  // an event this unit does not have (LLC misses, 2EH/41H) counts nothing
  wr(p, IA32_PERFEVTSEL(0), 0x412E | SEL_OS | SEL_USR | SEL_EN);
  wr(p, IA32_PMC(0), 0);
  for (unsigned ev = 0; ev < 3; ev++) p->count(ev, 5, 0);
  CHECK_EQ(rd(p, IA32_PMC(0)), 0);
}

// A counter written to 2^48 - 3 overflows on the third event: its bit of
// IA32_PERF_GLOBAL_STATUS (GP counter n: bit n), the counter wraps, no PMI
// without INT.
static void overflow_sets_status_without_int_no_pmi()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PMC(2), 0xFFFFFFFDull);
  wr(p, IA32_PERFEVTSEL(2), EV_INST_RETIRED | SEL_OS | SEL_EN);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x4);
  p->count(BX_PMU_INSTRUCTIONS, 2, 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 0);
  CHECK_EQ(rd(p, IA32_PMC(2)), (1ull << 48) - 1);
  p->count(BX_PMU_INSTRUCTIONS, 1, 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 1ull << 2);
  CHECK_EQ(rd(p, IA32_PMC(2)), 0);
  p->count(BX_PMU_INSTRUCTIONS, 5, 0);
  CHECK_EQ(rd(p, IA32_PMC(2)), 5);
  CHECK_EQ(lapic.delivered, 0);
}

// With INT the overflow raises the PMI through the LVTPC, which is masked
// after delivery: a second overflow before the handler unmasks it raises
// none; GLOBAL_OVF_CTRL clears the status bits.
static void overflow_with_int_raises_one_pmi_and_masks_lvtpc()
{
  bx_pmu_c *p = fresh(0x400);   // delivery mode NMI (100B), unmasked
  wr(p, IA32_PMC(0), 0xFFFFFFFDull);
  wr(p, IA32_PERFEVTSEL(0), EV_CORE_CYCLES | SEL_OS | SEL_USR | SEL_INT | SEL_EN);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x1);
  p->count(BX_PMU_CORE_CYCLES, 2, 3);
  CHECK_EQ(lapic.delivered, 0);
  p->count(BX_PMU_CORE_CYCLES, 1, 3);
  CHECK_EQ(lapic.delivered, 1);
  CHECK_EQ(lapic.last, 0x400);                // the NMI the entry named
  CHECK_EQ(lapic.lvtpc, 0x400 | (1u << 16));  // now masked
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 1);
  wr(p, IA32_PMC(0), 0xFFFFFFFFull);          // -1: overflows on the next event
  p->count(BX_PMU_CORE_CYCLES, 1, 0);
  CHECK_EQ(lapic.delivered, 1);               // masked: nothing
  wr(p, IA32_PERF_GLOBAL_OVF_CTRL, 1);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 0);
  lapic.lvtpc = 0x000000ef;                   // the handler unmasks it, fixed vector EFH
  wr(p, IA32_PMC(0), 0xFFFFFFFFull);
  p->count(BX_PMU_CORE_CYCLES, 1, 0);
  CHECK_EQ(lapic.delivered, 2);
  CHECK_EQ(lapic.last, 0xef);
  CHECK_EQ(lapic.lvtpc, 0xef | (1u << 16));
  // an LVTPC masked from the start takes no PMI at all, the status still set
  p = fresh(0x10400);
  wr(p, IA32_PMC(0), 0xFFFFFFFFull);
  wr(p, IA32_PERFEVTSEL(0), EV_CORE_CYCLES | SEL_OS | SEL_INT | SEL_EN);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x1);
  p->count(BX_PMU_CORE_CYCLES, 1, 0);
  CHECK_EQ(lapic.delivered, 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 1);
}

// Fixed counter n overflows into bit 32 + n; its PMI bit is bit 3 of its nibble.
static void fixed_counter_overflow_bit_32_plus_n()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_FIXED_CTR(1), (1ull << 48) - 3);
  wr(p, IA32_FIXED_CTR(2), (1ull << 48) - 1);
  wr(p, IA32_FIXED_CTR_CTRL, (0x3 << 4) | (0x3 << 8));   // no PMI bits
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x6ull << 32);
  p->count(BX_PMU_REF_CYCLES, 1, 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 1ull << 34);
  p->count(BX_PMU_CORE_CYCLES, 3, 0);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), (1ull << 34) | (1ull << 33));
  CHECK_EQ(lapic.delivered, 0);
  wr(p, IA32_PERF_GLOBAL_OVF_CTRL, 1ull << 34);
  CHECK_EQ(rd(p, IA32_PERF_GLOBAL_STATUS), 1ull << 33);
  wr(p, IA32_FIXED_CTR_CTRL, (0xB << 4) | (0x3 << 8));   // PMI for fixed counter 1
  wr(p, IA32_FIXED_CTR(1), W48);
  p->count(BX_PMU_CORE_CYCLES, 1, 0);
  CHECK_EQ(lapic.delivered, 1);
  CHECK_EQ(rd(p, IA32_FIXED_CTR(1)), 0);
}

// RDPMC: ECX[30] selects the fixed-function counters.
static void rdpmc_reads_gp_and_fixed()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PMC(3), 1234);
  wr(p, IA32_FIXED_CTR(1), 0xABCDEF012345ull);
  uint64_t v = 0;
  CHECK(p->rdpmc(3, &v)); CHECK_EQ(v, 1234);
  CHECK(p->rdpmc((1u << 30) | 1, &v)); CHECK_EQ(v, 0xABCDEF012345ull);
  CHECK(!p->rdpmc(4, &v));
  CHECK(!p->rdpmc((1u << 30) | 3, &v));
}

// Bochs's accounting: icount steps since the last call, less those that
// retired nothing, are instructions; all of them are cycles; both at the
// CPL of the last call.
static void account_counts_at_the_previous_cpl()
{
  bx_pmu_c *p = fresh();
  wr(p, IA32_PERFEVTSEL(0), EV_INST_RETIRED | SEL_USR | SEL_EN);
  wr(p, IA32_PERFEVTSEL(1), EV_CORE_CYCLES | SEL_USR | SEL_EN);
  wr(p, IA32_PERFEVTSEL(2), EV_INST_RETIRED | SEL_OS | SEL_EN);
  wr(p, IA32_PERF_GLOBAL_CTRL, 0x7);
  p->account(1000, 50, 3);           // a start: nothing counted
  p->account(1100, 60, 0);           // 100 steps at CPL 3, 10 of them repeat iterations
  p->account(1130, 60, 0);           // 30 at CPL 0
  CHECK_EQ(rd(p, IA32_PMC(0)), 90);
  CHECK_EQ(rd(p, IA32_PMC(1)), 100);
  CHECK_EQ(rd(p, IA32_PMC(2)), 30);
}

int main()
{
  static const host_case cases[] = {
    { "cpuid_0a_is_version_2", cpuid_0a_is_version_2 },
    { "msrs_read_back_and_others_are_not_the_pmus", msrs_read_back_and_others_are_not_the_pmus },
    { "pmc_writes_sign_extend_from_bit_31", pmc_writes_sign_extend_from_bit_31 },
    { "reserved_bits_gp", reserved_bits_gp },
    { "global_ctrl_gates_every_counter", global_ctrl_gates_every_counter },
    { "usr_and_os_filter_by_cpl", usr_and_os_filter_by_cpl },
    { "overflow_sets_status_without_int_no_pmi", overflow_sets_status_without_int_no_pmi },
    { "overflow_with_int_raises_one_pmi_and_masks_lvtpc", overflow_with_int_raises_one_pmi_and_masks_lvtpc },
    { "fixed_counter_overflow_bit_32_plus_n", fixed_counter_overflow_bit_32_plus_n },
    { "rdpmc_reads_gp_and_fixed", rdpmc_reads_gp_and_fixed },
    { "account_counts_at_the_previous_cpl", account_counts_at_the_previous_cpl },
  };
  return run_cases("bochs_pmu", "bochs-pmu", cases, sizeof cases / sizeof cases[0]) ? 1 : 0;
}
