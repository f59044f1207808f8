// The project's architectural performance-monitoring unit for Bochs
// (cpu/pmu.cc, tools/bochs-patch/pmu.patch): architectural performance
// monitoring version 2 (SDM Vol. 3B, "Performance Monitoring":
// "Architectural Performance Monitoring Version 1" and "... Version 2"; MSR
// addresses from SDM Vol. 4, "Architectural MSRs"). Off unless the bochsrc
// has "pmu: enabled=1"; then each CPU has one bx_pmu_c.
//
// This file and pmu.cc include nothing of Bochs: the same pmu.cc is linked
// into Bochs and into the host test (test/unit/bochs_pmu_test.cc). Bochs
// tells the unit what happened ("n events of kind k at CPL c"), forwards
// the PMU MSRs, RDPMC and CPUID leaf 0AH to it, and gives it the callback
// that raises the PMI through the local APIC's LVT performance-counter entry.
#ifndef BX_CPU_PMU_H
#define BX_CPU_PMU_H

#include <stdint.h>

// "pmu: enabled=1" (config.cc); false on a bad option.
bool bx_pmu_parse_option(const char *context, int num_params, char *params[]);
extern bool bx_pmu_enabled;

enum bx_pmu_event {
  BX_PMU_INSTRUCTIONS = 0,   // INST_RETIRED.ANY: event C0H, umask 00H; fixed counter 0
  BX_PMU_CORE_CYCLES  = 1,   // CPU_CLK_UNHALTED.CORE: event 3CH, umask 00H; fixed counter 1
  BX_PMU_REF_CYCLES   = 2,   // CPU_CLK_UNHALTED.REF: event 3CH, umask 01H; fixed counter 2
  BX_PMU_EVENTS
};

class bx_pmu_c {
public:
  enum { GP = 4, FIXED = 3, WIDTH = 48 };
  typedef void (*pmi_fn)(void *ctx);   // raise the PMI through the LVTPC

  bx_pmu_c(pmi_fn pmi, void *ctx);
  void reset(void);   // power-up and RESET: every PMU MSR 0

  // CPUID.0AH as this unit defines it (leaf 0AH's EAX, EBX, ECX, EDX).
  static void cpuid_leaf_a(uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx);
  // 1: done; 0: #GP (reserved bits, a read-only MSR); -1: not a PMU MSR.
  int rdmsr(uint32_t msr, uint64_t *val) const;
  int wrmsr(uint32_t msr, uint64_t val);
  // RDPMC with this ECX: false for #GP (ECX[30] selects the fixed counters).
  bool rdpmc(uint32_t ecx, uint64_t *val) const;

  // n events of kind ev happened at privilege level cpl.
  void count(unsigned ev, uint64_t n, unsigned cpl);
  // Whether any counter counts at all (its own enable and GLOBAL_CTRL's):
  // Bochs skips its accounting when none does.
  bool counting(void) const { return active != 0; }

  // The local APIC's part of a PMI (cpu/apic.cc), given its LVT
  // performance-counter entry (APIC offset 340H): false when the entry is
  // masked (bit 16: no interrupt); else the entry is masked, as the SDM
  // says the APIC does on each PMI, and the caller delivers the interrupt
  // the entry's old value names (vector 7:0, delivery mode 10:8).
  static bool lvtpc_fire(uint32_t *lvtpc);

  // IA32_PERF_GLOBAL_CTRL's reserved bits (a VM entry's or VM exit's value
  // is checked against them) and a load that is not a WRMSR.
  static bool global_ctrl_valid(uint64_t val);
  void load_global_ctrl(uint64_t val) { global_ctrl = val; update(); }
  uint64_t get_global_ctrl(void) const { return global_ctrl; }

  // Bochs's accounting (cpu/cpu.cc): at the start of each trace the
  // instruction count and the ticks since the last call are counted at the
  // CPL of the last call (a trace runs at one CPL: a CPL changes only at a
  // far transfer, an interrupt or an exception, each of which ends a trace).
  void account(uint64_t icount, uint64_t not_retired, unsigned cpl) {
    uint64_t ticks = icount - last_icount, ins = ticks - (not_retired - last_not_retired);
    if (active && ticks && primed) {
      count(BX_PMU_INSTRUCTIONS, ins, last_cpl);
      count(BX_PMU_CORE_CYCLES, ticks, last_cpl);
      count(BX_PMU_REF_CYCLES, ticks, last_cpl);
    }
    last_icount = icount; last_not_retired = not_retired; last_cpl = cpl;
    primed = true;   // the first call only starts the count: what came before is no one's
  }

private:
  void update(void);          // recompute `active`
  void add(unsigned idx, uint64_t n);   // idx 0..3 GP, 32..34 fixed

  pmi_fn pmi; void *pmi_ctx;
  uint64_t pmc[GP], evtsel[GP], fixed[FIXED];
  uint64_t fixed_ctrl, global_status, global_ctrl;
  // per event kind, for CPL 0 and CPL 1-3: the counters (bit n GP, bit 32+n fixed) that count it
  uint64_t counts[BX_PMU_EVENTS][2];
  uint64_t active;
  uint64_t last_icount, last_not_retired;
  unsigned last_cpl;
  bool primed;
};

#endif
