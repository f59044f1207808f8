/* Tier choice for the IPI, EOI and timer paths (DESIGN.md, "The interrupt
 * tiers"). Each tier has a rule that names what is missing, so the same text
 * explains an automatic step down and refuses an override.
 *
 * Requirements (Intel SDM Vol. 3C, "Checks on VMX Controls" and "APIC
 * Virtualization and Virtual Interrupts"):
 *  - "virtualize x2APIC mode", "APIC-register virtualization",
 *    "virtual-interrupt delivery" and "IPI virtualization" must be 0 when
 *    "use TPR shadow" is 0.
 *  - "virtual-interrupt delivery" needs "external-interrupt exiting".
 *  - "process posted interrupts" needs "virtual-interrupt delivery" and the
 *    "acknowledge interrupt on exit" VM-exit control.
 *  - x2APIC MSR accesses (EOI 0x80b, ICR 0x830, TSC_DEADLINE 0x6e0) are only
 *    virtualized when the MSR bitmap lets them through: without "use MSR
 *    bitmaps" every RDMSR/WRMSR exits, so each no-exit tier needs it.
 *  - IPI virtualization (tertiary bit 4) virtualizes x2APIC ICR writes by
 *    posting into the target's PID found through the PID-pointer table, so
 *    it needs APIC-register virtualization, VID and posted interrupts (as
 *    KVM requires full APICv for it).
 *  - APIC-timer virtualization (tertiary bit 8, see vmx_defs.h) delivers the
 *    virtual timer vector through virtual-interrupt delivery.
 *
 * Tier rules, best first:
 *  ipi:   ipiv  = tertiary IPIv && APIC-register virt && posted (below)
 *         fast  = posted = posted-intr && ack-on-exit && vid (below)
 *         pv, trap = always (VMCALL and MSR-write exits need nothing)
 *  eoi:   vid   = vid && TPR shadow && ext-int exiting && virtualize x2APIC
 *                 mode && MSR bitmaps
 *         pv, trap = always
 *  timer: apicv = tertiary APIC-timer virt && vid (VID not turned off)
 *         deadline = posted && no housekeeping= (the guest's IA32_TSC_DEADLINE
 *                 passed through to the vCPU's own LAPIC timer: arming never
 *                 exits, each expiry exits once and is posted; the CPUs
 *                 that ship with IPIv but without APIC-timer virtualization)
 *         posted = posted (housekeeping= names its service CPU)
 *         preempt = VMX-preemption timer
 *         trap  = always */
#include "tiers.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

/* Stock Bochs 3.0 delivers a pending virtual interrupt with RFLAGS.IF = 0
 * whenever a host interrupt comes too (defect G): inside the guest's
 * locked sections, interrupts off, so Linux deadlocks on its own locks
 * (a hrtimer base, a run queue, the 8250 port lock). No entry-time rule of
 * the hypervisor closes it: a notification processed at IF = 0 and the
 * guest's own EOI raise RVI in the CPU. The software x2APIC injects only
 * at IF = 1. */
#define STOCK_BOCHS_WHY \
	"auto: an emulator without hlt=guest, taken for stock Bochs 3.0, whose virtual-interrupt delivery ignores RFLAGS.IF (defect G): the software x2APIC injects at IF = 1"

struct ctx {
	const struct vmx_caps *c;
	bool vid_off;	/* eoi=pv: VID stays off although the CPU has it */
	bool housekeeping;	/* housekeeping= names a timer-service CPU */
};

typedef const char *(*why_not_fn)(const struct ctx *x);

/* NULL when virtual-interrupt delivery (with what it needs) can be used. */
static const char *vid_why_not(const struct vmx_caps *c)
{
	if (!c->secondary)
		return "no virtual-interrupt delivery: secondary controls not available";
	if (!c->vid)
		return "no virtual-interrupt delivery: not allowed by IA32_VMX_PROCBASED_CTLS2";
	if (!c->tpr_shadow)
		return "no virtual-interrupt delivery: it needs \"use TPR shadow\", not allowed by IA32_VMX_PROCBASED_CTLS";
	if (!c->ext_int_exiting)
		return "no virtual-interrupt delivery: it needs external-interrupt exiting, not allowed by IA32_VMX_PINBASED_CTLS";
	if (!c->virt_x2apic)
		return "no x2APIC virtualization: \"virtualize x2APIC mode\" not allowed by IA32_VMX_PROCBASED_CTLS2";
	if (!c->msr_bitmaps)
		return "no MSR bitmaps: every x2APIC access would exit";
	return NULL;
}

static const char *vid_on_why_not(const struct ctx *x)
{
	const char *why = vid_why_not(x->c);
	if (why)
		return why;
	if (x->vid_off)
		return "virtual-interrupt delivery off: eoi=pv and VID exclude each other";
	return NULL;
}

static const char *posted_why_not(const struct ctx *x)
{
	if (!x->c->posted_intr)
		return "no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS";
	if (!x->c->ack_intr_on_exit)
		return "no posted interrupts: they need acknowledge-interrupt-on-exit, not allowed by IA32_VMX_EXIT_CTLS";
	return vid_on_why_not(x);
}

static const char *ipiv_why_not(const struct ctx *x)
{
	if (!x->c->tertiary)
		return "no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available";
	if (!x->c->ipiv)
		return "IPI virtualization not allowed by IA32_VMX_PROCBASED_CTLS3";
	if (!x->c->apic_reg_virt)
		return "IPI virtualization needs APIC-register virtualization, not allowed by IA32_VMX_PROCBASED_CTLS2";
	return posted_why_not(x);
}

static const char *eoi_vid_why_not(const struct ctx *x)
{
	return vid_why_not(x->c);
}

static const char *apicv_timer_why_not(const struct ctx *x)
{
	if (!x->c->tertiary)
		return "no APIC-timer virtualization: IA32_VMX_PROCBASED_CTLS3 not available";
	if (!x->c->apic_timer_virt)
		return "APIC-timer virtualization not allowed by IA32_VMX_PROCBASED_CTLS3";
	return vid_on_why_not(x);
}

static const char *deadline_why_not(const struct ctx *x)
{
	if (x->housekeeping)
		return "housekeeping= gives the timer to a service CPU (timer=posted)";
	return posted_why_not(x);
}

static const char *preempt_why_not(const struct ctx *x)
{
	if (!x->c->preemption_timer)
		return "no VMX-preemption timer: not allowed by IA32_VMX_PINBASED_CTLS";
	return NULL;
}

struct tier_rule {
	int tier;
	why_not_fn why_not;	/* NULL: always possible */
	const char *because;	/* reason printed when it is the best tier and chosen */
};

static const struct tier_rule ipi_rules[] = {
	{ IPI_IPIV, ipiv_why_not,
	  "tertiary bit 4 IPI virtualization allowed, with APIC-register virtualization, VID and posted interrupts" },
	{ IPI_FAST, posted_why_not, NULL },
	{ IPI_PV, NULL, NULL },
	{ IPI_TRAP, NULL, NULL },
};

static const struct tier_rule eoi_rules[] = {
	{ EOI_VID, eoi_vid_why_not, "virtual-interrupt delivery" },
	{ EOI_PV, NULL, NULL },
	{ EOI_TRAP, NULL, NULL },
};

static const struct tier_rule timer_rules[] = {
	{ TIMER_APICV, apicv_timer_why_not,
	  "tertiary bit 8 APIC-timer virtualization allowed, with virtual-interrupt delivery" },
	{ TIMER_DEADLINE, deadline_why_not,
	  "IA32_TSC_DEADLINE passed through to the vCPU's own LAPIC timer: arming exits never, an expiry once" },
	{ TIMER_POSTED, posted_why_not, NULL },
	{ TIMER_PREEMPT, preempt_why_not, NULL },
	{ TIMER_TRAP, NULL, NULL },
};

struct path {
	const char *name;
	const char *const *names;	/* tier names from lib/options.c */
	int ntiers;			/* valid values are 0 (auto) .. ntiers - 1 */
	const struct tier_rule *rules;
	size_t nrules;
};

static const struct path paths[] = {
	{ "ipi", ipi_tier_names, IPI_TRAP + 1, ipi_rules, ARRAY_SIZE(ipi_rules) },
	{ "eoi", eoi_tier_names, EOI_TRAP + 1, eoi_rules, ARRAY_SIZE(eoi_rules) },
	{ "timer", timer_tier_names, TIMER_TRAP + 1, timer_rules, ARRAY_SIZE(timer_rules) },
};
enum { PATH_IPI, PATH_EOI, PATH_TIMER, NPATHS };

static void append(char *buf, size_t n, const char *s)
{
	size_t len = strlen(buf);
	if (len < n)
		snprintf(buf + len, n - len, "%s%s", len ? "; " : "", s);
}

/* Chooses one path's tier into *tier with its reason; -1 with err if refused. */
static int choose(const struct path *p, int want, const struct ctx *x, int *tier,
		  char *reason, size_t rlen, char *err, size_t errlen)
{
	reason[0] = 0;
	if (want < 0 || want >= p->ntiers) {
		snprintf(err, errlen, "%s: bad tier value %d", p->name, want);
		return -1;
	}
	if (want != 0) {	/* an override: honour it or refuse it */
		for (size_t i = 0; i < p->nrules; i++) {
			if (p->rules[i].tier != want)
				continue;
			const char *why = p->rules[i].why_not ? p->rules[i].why_not(x) : NULL;
			if (why) {
				snprintf(err, errlen, "%s=%s refused: %s", p->name, p->names[want], why);
				return -1;
			}
			*tier = want;
			append(reason, rlen, "override");
			return 0;
		}
		snprintf(err, errlen, "%s: bad tier value %d", p->name, want);
		return -1;
	}
	const char *last = NULL;
	for (size_t i = 0; i < p->nrules; i++) {
		const char *why = p->rules[i].why_not ? p->rules[i].why_not(x) : NULL;
		if (!why) {
			*tier = p->rules[i].tier;
			if (i == 0 || p->rules[i].because)   /* what a lower tier with a reason of its own gives */
				append(reason, rlen, p->rules[i].because ? p->rules[i].because : "best tier");
			return 0;
		}
		if (why != last)	/* two tiers failing for the same reason: say it once */
			append(reason, rlen, why);
		last = why;
	}
	/* The last rule of every path is the always-possible baseline. */
	snprintf(err, errlen, "%s: no tier possible", p->name);
	return -1;
}

int tiers_choose(const struct vmx_caps *c, const struct hv_options *opt, struct hv_tiers *out,
		 char *err, size_t errlen)
{
	int want[NPATHS] = { IPI_AUTO, EOI_AUTO, TIMER_AUTO };
	int got[NPATHS] = { IPI_TRAP, EOI_TRAP, TIMER_TRAP };
	char reason[NPATHS][320];
	struct ctx x = { c, false, opt && opt->housekeeping >= 0 };

	if (err && errlen)
		err[0] = 0;
	if (!err || !errlen) {	/* keep the messages somewhere */
		static char scratch[160];
		err = scratch;
		errlen = sizeof(scratch);
	}
	if (opt) {
		want[PATH_IPI] = opt->ipi;
		want[PATH_EOI] = opt->eoi;
		want[PATH_TIMER] = opt->timer;
	}
	/* EOI first: eoi=pv turns VID off, which the other paths depend on. */
	if (choose(&paths[PATH_EOI], want[PATH_EOI], &x, &got[PATH_EOI], reason[PATH_EOI],
		   sizeof(reason[0]), err, errlen))
		return -1;
	/* Stock Bochs: VID off unless another override needs it. */
	bool vid_asked = want[PATH_IPI] == IPI_IPIV || want[PATH_IPI] == IPI_FAST ||
			 want[PATH_TIMER] == TIMER_APICV || want[PATH_TIMER] == TIMER_DEADLINE ||
			 want[PATH_TIMER] == TIMER_POSTED;
	if (want[PATH_EOI] == EOI_AUTO && got[PATH_EOI] == EOI_VID && c->vid_ignores_if && !vid_asked) {
		got[PATH_EOI] = EOI_PV;
		snprintf(reason[PATH_EOI], sizeof(reason[0]), "%s", STOCK_BOCHS_WHY);
	}
	x.vid_off = got[PATH_EOI] == EOI_PV;
	if (choose(&paths[PATH_IPI], want[PATH_IPI], &x, &got[PATH_IPI], reason[PATH_IPI],
		   sizeof(reason[0]), err, errlen))
		return -1;
	if (choose(&paths[PATH_TIMER], want[PATH_TIMER], &x, &got[PATH_TIMER], reason[PATH_TIMER],
		   sizeof(reason[0]), err, errlen))
		return -1;

	for (int i = 0; i < NPATHS; i++)
		pr_info("tier: %s=%s (%s)\n", paths[i].name, paths[i].names[got[i]], reason[i]);
	out->ipi = got[PATH_IPI];
	out->eoi = got[PATH_EOI];
	out->timer = got[PATH_TIMER];
	return 0;
}

bool tiers_stock_bochs(int hlt_opt)
{
	return tsc_emulated() && hlt_opt != HLT_OPT_GUEST;
}

static const char *tier_name(const struct path *p, int t)
{
	return t >= 0 && t < p->ntiers ? p->names[t] : "?";
}

const char *tiers_summary(const struct hv_tiers *t, char *buf, size_t n)
{
	snprintf(buf, n, "ipi=%s eoi=%s timer=%s", tier_name(&paths[PATH_IPI], t->ipi),
		 tier_name(&paths[PATH_EOI], t->eoi), tier_name(&paths[PATH_TIMER], t->timer));
	return buf;
}

const char *tiers_why_not_best(const struct vmx_caps *c, const struct hv_tiers *t, int path)
{
	static struct ctx x;   /* boot CPU only; static: the rules return literals, which cppcheck cannot see */
	int got[NPATHS] = { t->ipi, t->eoi, t->timer };
	x = (struct ctx){ c, false, false };
	if (path < 0 || path >= NPATHS)
		return "no such path";
	const struct path *p = &paths[path];
	if (got[path] == p->rules[0].tier)
		return NULL;
	const char *why = p->rules[0].why_not(&x);   /* what the CPU lacks, first */
	if (why)
		return why;
	x.vid_off = t->eoi == EOI_PV;
	if (x.vid_off && c->vid_ignores_if)
		return STOCK_BOCHS_WHY;
	why = p->rules[0].why_not(&x);
	return why ? why : "an override chose another";
}

bool tiers_vid_on(const struct vmx_caps *c, const struct hv_tiers *t)
{
	return !vid_why_not(c) && t->eoi != EOI_PV;
}

bool tiers_hide_mwait(const struct hv_tiers *t, bool virt, bool hlt_exiting)
{
	return hlt_exiting || (virt && t->timer == TIMER_PREEMPT);
}
