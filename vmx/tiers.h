/* The interrupt tiers (DESIGN.md): for the IPI, EOI and timer paths, pick the
 * best tier the decoded VMX capabilities allow, or honour a command-line
 * override, and say why. Reads only struct vmx_caps. */
#ifndef VMX_TIERS_H
#define VMX_TIERS_H
#include "../lib/types.h"
#include "../lib/options.h"
#include "caps.h"

struct hv_tiers { int ipi, eoi, timer; };   /* enum values from lib/options.h, never *_AUTO after choosing */

/* Chooses each path's best tier that the capabilities allow (DESIGN.md tier
 * table), or honours opt->ipi/eoi/timer (*_AUTO = choose; opt may be NULL =
 * all auto). Prints one "tier: <path>=<tier> (<reason>)" line per path.
 * An override the CPU can't honour is refused, never silently changed:
 * returns -1 with err like "ipi=ipiv refused: IPI virtualization not allowed
 * by IA32_VMX_PROCBASED_CTLS3", prints nothing and leaves *out untouched.
 *
 * Consequences for the VMCS and CPUID code:
 *  - VID (virtual-interrupt delivery) is on unless eoi=pv or the CPU lacks
 *    it: KVM PV EOI and VID exclude each other, so eoi=pv turns VID off and
 *    with it every tier that needs VID (ipi=ipiv/fast, timer=apicv/fast).
 *  - eoi=trap with VID on means an all-ones EOI-exit bitmap (every EOI is an
 *    EOI-induced exit); with VID off, the x2APIC EOI MSR write exits.
 *  - Advertise KVM PV_EOI only for eoi=pv and PV_SEND_IPI only for ipi=pv. */
int tiers_choose(const struct vmx_caps *c, const struct hv_options *opt, struct hv_tiers *out,
		 char *err, size_t errlen);

/* "ipi=fast eoi=vid timer=fast" into buf; returns buf. */
const char *tiers_summary(const struct hv_tiers *t, char *buf, size_t n);

/* Why path (0 ipi, 1 eoi, 2 timer) did not get its best tier (ipiv, vid,
 * apicv) with these capabilities and chosen tiers; NULL when it did. For
 * the probe's verdicts (boot/probe.c). */
const char *tiers_why_not_best(const struct vmx_caps *c, const struct hv_tiers *t, int path);

/* Whether the chosen tiers keep virtual-interrupt delivery on. */
bool tiers_vid_on(const struct vmx_caps *c, const struct hv_tiers *t);
/* Whether CPUID hides MONITOR/MWAIT from the guest: where HLT exits (the
 * guest idles in HLT), and with timer=preempt in the virtual model ("the
 * VMX-preemption timer does not decrement in C-states deeper than C2", SDM
 * Vol. 3C, "VMX-Preemption Timer": MWAIT C6 would stop the guest's timer). */
bool tiers_hide_mwait(const struct hv_tiers *t, bool virt, bool hlt_exiting);
/* Whether this is taken for stock Bochs 3.0: an emulator's TSC (the test
 * of hlt=auto) without hlt=guest, which names the project's patched build.
 * Sets vmx_caps.vid_ignores_if and the console's if0_defer quirk. */
bool tiers_stock_bochs(int hlt_opt);
#endif
