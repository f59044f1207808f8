// The project's architectural PMU for Bochs (see pmu.h): architectural
// performance monitoring version 2, SDM Vol. 3B, "Performance Monitoring";
// MSR addresses from SDM Vol. 4, "Architectural MSRs". Written for this
// project; no Bochs header is included, so that the host test links it too.
#include "pmu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool bx_pmu_enabled = false;

bool bx_pmu_parse_option(const char *context, int num_params, char *params[])
{
  for (int i = 1; i < num_params; i++) {
    if (!strncmp(params[i], "enabled=", 8)) bx_pmu_enabled = atoi(params[i] + 8) != 0;
    else {
      fprintf(stderr, "%s: pmu: unknown option %s\n", context, params[i]);
      return false;
    }
  }
  return true;
}

// SDM Vol. 4, "Architectural MSRs"
enum {
  MSR_PMC0 = 0xC1,                 // IA32_PMC0..3, C1H..C4H
  MSR_PERFEVTSEL0 = 0x186,         // IA32_PERFEVTSEL0..3, 186H..189H
  MSR_FIXED_CTR0 = 0x309,          // IA32_FIXED_CTR0..2, 309H..30BH
  MSR_FIXED_CTR_CTRL = 0x38D,
  MSR_PERF_GLOBAL_STATUS = 0x38E,  // read-only
  MSR_PERF_GLOBAL_CTRL = 0x38F,
  MSR_PERF_GLOBAL_OVF_CTRL = 0x390
};

static const uint64_t CTR_MASK = (1ull << bx_pmu_c::WIDTH) - 1;
// IA32_PERFEVTSELx: event select 7:0, umask 15:8, USR 16, OS 17, E 18,
// PC 19, INT 20, EN 22, INV 23, CMASK 31:24; bit 21 (AnyThread) is
// version 3's, reserved here like bits 63:32.
static const uint64_t EVTSEL_VALID = 0xFFDFFFFFull;
enum { EVTSEL_USR = 1 << 16, EVTSEL_OS = 1 << 17, EVTSEL_E = 1 << 18, EVTSEL_INT = 1 << 20,
       EVTSEL_EN = 1 << 22, EVTSEL_INV = 1 << 23 };
// IA32_FIXED_CTR_CTRL: a nibble per fixed counter, bit 0 OS, bit 1 USR,
// bit 3 PMI (bit 2, AnyThread, is version 3's).
static const uint64_t FIXED_CTRL_VALID = 0xBBB;
static const uint64_t GLOBAL_COUNTERS = 0xFull | (0x7ull << 32);
// IA32_PERF_GLOBAL_OVF_CTRL: the counters' bits, OvfBuffer (62), CondChgd (63).
static const uint64_t OVF_CTRL_VALID = GLOBAL_COUNTERS | (1ull << 62) | (1ull << 63);

bx_pmu_c::bx_pmu_c(pmi_fn fn, void *ctx): pmi(fn), pmi_ctx(ctx)
{
  reset();
  last_icount = last_not_retired = 0;
  last_cpl = 0;
  primed = false;
}

void bx_pmu_c::reset(void)
{
  memset(pmc, 0, sizeof(pmc));
  memset(evtsel, 0, sizeof(evtsel));
  memset(fixed, 0, sizeof(fixed));
  fixed_ctrl = global_status = global_ctrl = 0;
  update();
}

void bx_pmu_c::cpuid_leaf_a(uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
  // EAX: version 2 (7:0), 4 general-purpose counters (15:8), 48 bits wide
  // (23:16), EBX's vector 7 events long (31:24).
  *eax = 2 | (GP << 8) | (WIDTH << 16) | (7u << 24);
  // EBX (1 = not available): core cycles (0), instructions retired (1) and
  // reference cycles (2) are; LLC references (3), LLC misses (4), branch
  // instructions retired (5) and branch mispredicts retired (6) are not.
  *ebx = 0x78;
  *ecx = 0;
  // EDX: 3 fixed-function counters (4:0), 48 bits wide (12:5).
  *edx = FIXED | (WIDTH << 5);
}

// The LVTPC is masked by each PMI it delivers. SDM Vol. 3A, figure "Local
// Vector Table (LVT)", on the performance monitoring counters entry: "When
// a performance monitoring counters interrupt is generated, the mask bit
// for its associated LVT entry is set"; Vol. 3B, on the PMI's service
// routine: "The ISR must clear the mask bit in the performance counter LVT
// entry." (Linux's handler writes the LVTPC unmasked again: it relies on it.)
bool bx_pmu_c::lvtpc_fire(uint32_t *lvtpc)
{
  if (*lvtpc & (1u << 16)) return false;
  *lvtpc |= 1u << 16;
  return true;
}

bool bx_pmu_c::global_ctrl_valid(uint64_t val)
{
  return (val & ~GLOBAL_COUNTERS) == 0;
}

// The event kind a GP counter's event select and umask name, or -1.
static int gp_event(uint64_t sel)
{
  unsigned event = sel & 0xFF, umask = (sel >> 8) & 0xFF;
  if (event == 0xC0 && umask == 0x00) return BX_PMU_INSTRUCTIONS;
  if (event == 0x3C && umask == 0x00) return BX_PMU_CORE_CYCLES;
  if (event == 0x3C && umask == 0x01) return BX_PMU_REF_CYCLES;
  return -1;
}

void bx_pmu_c::update(void)
{
  memset(counts, 0, sizeof(counts));
  for (unsigned n = 0; n < GP; n++) {
    uint64_t sel = evtsel[n];
    int ev = gp_event(sel);
    // EN and the counter's bit of IA32_PERF_GLOBAL_CTRL; a counter mask,
    // INV or edge detection (not modelled) stops it counting.
    if (!(sel & EVTSEL_EN) || !(global_ctrl & (1ull << n)) || ev < 0) continue;
    if ((sel >> 24) || (sel & (EVTSEL_INV | EVTSEL_E))) continue;
    if (sel & EVTSEL_OS)  counts[ev][0] |= 1ull << n;
    if (sel & EVTSEL_USR) counts[ev][1] |= 1ull << n;
  }
  for (unsigned n = 0; n < FIXED; n++) {
    unsigned ctl = (fixed_ctrl >> (4 * n)) & 0xF;
    if (!(global_ctrl & (1ull << (32 + n)))) continue;
    if (ctl & 1) counts[n][0] |= 1ull << (32 + n);   // fixed counter n counts event kind n
    if (ctl & 2) counts[n][1] |= 1ull << (32 + n);
  }
  active = 0;
  for (unsigned ev = 0; ev < BX_PMU_EVENTS; ev++) active |= counts[ev][0] | counts[ev][1];
}

void bx_pmu_c::add(unsigned idx, uint64_t n)
{
  uint64_t *ctr = idx < 32 ? &pmc[idx] : &fixed[idx - 32];
  uint64_t sum = *ctr + n;
  *ctr = sum & CTR_MASK;
  if (sum <= CTR_MASK) return;
  // Overflow: the counter's bit of IA32_PERF_GLOBAL_STATUS, and the PMI
  // when the counter's INT (GP) or PMI (fixed) bit is set.
  global_status |= 1ull << idx;
  bool intr = idx < 32 ? (evtsel[idx] & EVTSEL_INT) != 0 : ((fixed_ctrl >> (4 * (idx - 32))) & 8) != 0;
  if (intr && pmi) pmi(pmi_ctx);
}

void bx_pmu_c::count(unsigned ev, uint64_t n, unsigned cpl)
{
  if (ev >= BX_PMU_EVENTS || n == 0) return;
  uint64_t m = counts[ev][cpl != 0];
  while (m) {
    unsigned idx = __builtin_ctzll(m);
    m &= m - 1;
    add(idx, n);
  }
}

int bx_pmu_c::rdmsr(uint32_t msr, uint64_t *val) const
{
  if (msr >= MSR_PMC0 && msr < MSR_PMC0 + GP) *val = pmc[msr - MSR_PMC0];
  else if (msr >= MSR_PERFEVTSEL0 && msr < MSR_PERFEVTSEL0 + GP) *val = evtsel[msr - MSR_PERFEVTSEL0];
  else if (msr >= MSR_FIXED_CTR0 && msr < MSR_FIXED_CTR0 + FIXED) *val = fixed[msr - MSR_FIXED_CTR0];
  else if (msr == MSR_FIXED_CTR_CTRL) *val = fixed_ctrl;
  else if (msr == MSR_PERF_GLOBAL_STATUS) *val = global_status;
  else if (msr == MSR_PERF_GLOBAL_CTRL) *val = global_ctrl;
  else if (msr == MSR_PERF_GLOBAL_OVF_CTRL) *val = 0;   // its writes clear; it reads 0
  else return -1;
  return 1;
}

int bx_pmu_c::wrmsr(uint32_t msr, uint64_t val)
{
  if (msr >= MSR_PMC0 && msr < MSR_PMC0 + GP) {
    // SDM 3B, "Full-Width Writes to Performance Counter Registers": the
    // value written to IA32_PMCx is EAX[31:0] sign-extended (EDX ignored).
    pmc[msr - MSR_PMC0] = (uint64_t) (int64_t) (int32_t) (uint32_t) val & CTR_MASK;
  } else if (msr >= MSR_PERFEVTSEL0 && msr < MSR_PERFEVTSEL0 + GP) {
    if (val & ~EVTSEL_VALID) return 0;
    evtsel[msr - MSR_PERFEVTSEL0] = val;
  } else if (msr >= MSR_FIXED_CTR0 && msr < MSR_FIXED_CTR0 + FIXED) {
    if (val & ~CTR_MASK) return 0;   // bits beyond the counter's width
    fixed[msr - MSR_FIXED_CTR0] = val;
  } else if (msr == MSR_FIXED_CTR_CTRL) {
    if (val & ~FIXED_CTRL_VALID) return 0;
    fixed_ctrl = val;
  } else if (msr == MSR_PERF_GLOBAL_STATUS) {
    return 0;   // read-only
  } else if (msr == MSR_PERF_GLOBAL_CTRL) {
    if (!global_ctrl_valid(val)) return 0;
    global_ctrl = val;
  } else if (msr == MSR_PERF_GLOBAL_OVF_CTRL) {
    if (val & ~OVF_CTRL_VALID) return 0;
    global_status &= ~val;   // a 1 clears the status bit
  } else {
    return -1;
  }
  update();
  return 1;
}

bool bx_pmu_c::rdpmc(uint32_t ecx, uint64_t *val) const
{
  if (ecx & (1u << 30)) {   // the fixed-function counters
    uint32_t n = ecx & ~(1u << 30);
    if (n >= FIXED) return false;
    *val = fixed[n];
  } else {
    if (ecx >= GP) return false;
    *val = pmc[ecx];
  }
  return true;
}
