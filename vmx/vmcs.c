/* Building the VMCS: control words once, then per CPU area by area
 * (SDM Vol. 3C, "Virtual Machine Control Structures"). */
#include "vmcs.h"
#include "vectors.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/cpu.h"


#define PAT_DEFAULT 0x0007040600070406ull
#define EFER_LME_LMA ((1ull << 8) | (1ull << 10))

static int need(bool ok, const char *what, char *err, size_t errlen)
{
	if (!ok)
		snprintf(err, errlen, "vmcs: the CPU does not allow %s, which this hypervisor needs", what);
	return ok ? 0 : -1;
}

int vmcs_irq_model_choose(const struct vmx_caps *c, const struct hv_tiers *t, int opt, bool x2apic,
			  bool tsc_deadline, char *why, size_t n)
{
	/* eoi=pv: the software x2APIC (apic/swapic.c), which injects events
	 * itself: it needs external-interrupt exiting and acknowledge-on-exit,
	 * not VID or posted-interrupt processing. */
	bool sw = t->eoi == EOI_PV;
	const char *missing = sw ? (!c->ext_int_exiting || !c->ack_intr_on_exit ?
				    "no external-interrupt exiting with acknowledge-on-exit (software x2APIC)" : NULL)
			    : !tiers_vid_on(c, t) ? "no virtual-interrupt delivery"
			    : !c->posted_intr ? "no posted interrupts" : NULL;
	missing = missing ? missing
			    : !x2apic ? "no x2APIC"
			    : !tsc_deadline ? "no TSC-deadline timer on the host" : NULL;
	if (opt == IRQ_OPT_PARTITION) {
		snprintf(why, n, "irq=partition: partition (asked for)");
		return IRQ_PARTITION;
	}
	if (!missing) {
		snprintf(why, n, sw ? "irq=%s: virtual with the software x2APIC (eoi=pv: event injection, no VID)"
				 : "irq=%s: virtual (VID, posted interrupts, x2APIC and TSC deadline available)",
			 opt == IRQ_OPT_VIRTUAL ? "virtual" : "auto");
		return IRQ_VIRTUAL;
	}
	if (opt == IRQ_OPT_VIRTUAL) {
		snprintf(why, n, "irq=virtual refused: %s", missing);
		return -1;
	}
	snprintf(why, n, "irq=auto: partition (%s)", missing);
	return IRQ_PARTITION;
}

int vmcs_config_build(struct vmcs_config *cfg, const struct vmx_caps *c, const struct hv_tiers *t,
		      int irq_model, const struct vmcs_resources *res, char *err, size_t errlen)
{
	uint32_t dropped;
	memset(cfg, 0, sizeof *cfg);
	cfg->irq_model = irq_model;

	/* Refuse instead of limping (NOVA's habit): these are not optional. */
	if (need(c->secondary, "secondary controls", err, errlen) ||
	    need(c->ept && c->ept_wb && c->ept_4level, "EPT with 4-level walks and write-back", err, errlen) ||
	    need(c->unrestricted, "unrestricted guest (APs start in real mode)", err, errlen) ||
	    need(c->msr_bitmaps, "MSR bitmaps", err, errlen) ||
	    need(c->wait_for_sipi, "the wait-for-SIPI activity state", err, errlen) ||
	    need(c->hlt_exiting_optional, "HLT without exiting", err, errlen))
		return -1;

	bool virt = irq_model == IRQ_VIRTUAL;
	bool vid = virt && tiers_vid_on(c, t);
	/* Every tier of the virtual model delivers through the descriptors:
	 * the CPU processes them with VID; the software x2APIC (eoi=pv) takes
	 * them itself on the notification's exit and injects events. */
	bool posted = vid && c->posted_intr;
	cfg->sw_apic = virt && !vid;

	/* NMIs exit and reach the guest as virtual NMIs (vmx/virq.c), so that
	 * panic's stop NMI never lands in the guest's IDT. */
	uint32_t pin = VMX_PIN_NMI_EXITING | VMX_PIN_VIRTUAL_NMIS;
	if (virt)
		pin |= VMX_PIN_EXT_INT_EXITING;
	if (posted)
		pin |= VMX_PIN_POSTED_INTR;
	/* timer=preempt: the guest's timer is served by the VMX-preemption
	 * timer on its own core (armed before every entry, vmx/virq.c). */
	if (virt && t->timer == TIMER_PREEMPT)
		pin |= VMX_PIN_PREEMPTION_TIMER;

	/* HLT, MWAIT, PAUSE, CR3 and CR8 accesses, RDTSC: none of them exit.
	 * The TSC offset carries what the guest moved its TSC by (vmx/tsc.c). */
	uint32_t proc = VMX_PROC_USE_MSR_BITMAPS | VMX_PROC_USE_IO_BITMAPS | VMX_PROC_ACTIVATE_SECONDARY |
			VMX_PROC_TSC_OFFSETTING;
	if (c->tertiary)
		proc |= VMX_PROC_ACTIVATE_TERTIARY;
	if (vid)
		proc |= VMX_PROC_USE_TPR_SHADOW;

	uint32_t proc2 = VMX_PROC2_EPT | VMX_PROC2_UNRESTRICTED_GUEST | VMX_PROC2_RDTSCP | VMX_PROC2_INVPCID |
			 VMX_PROC2_XSAVES;
	if (c->vpid)
		proc2 |= VMX_PROC2_VPID;
	/* TPAUSE, UMONITOR, UMWAIT run in the guest (WAITPKG, guest/cpuid.c);
	 * with RDTSC exiting they would exit (SDM Vol. 3C, "Instructions That
	 * Cause VM Exits Conditionally"), which nothing handles: not then. */
	if (!(c->proc.allowed0 & VMX_PROC_RDTSC_EXITING))
		proc2 |= VMX_PROC2_USER_WAIT_PAUSE;
	if (vid)
		proc2 |= VMX_PROC2_VIRT_X2APIC_MODE | VMX_PROC2_APIC_REG_VIRT | VMX_PROC2_VIRT_INTR_DELIVERY;
	/* The adjust helper reports every dropped bit; EPT and unrestricted guest may not drop. */
	proc2 = vmx_adjust_ctl("proc2", &c->proc2, proc2, &dropped);
	if (need(!(dropped & (VMX_PROC2_EPT | VMX_PROC2_UNRESTRICTED_GUEST)), "EPT and unrestricted guest", err, errlen))
		return -1;

	uint32_t exit = VMX_EXIT_HOST_ADDR_SPACE_SIZE | VMX_EXIT_SAVE_EFER | VMX_EXIT_LOAD_EFER |
			VMX_EXIT_SAVE_PAT | VMX_EXIT_LOAD_PAT | VMX_EXIT_SAVE_DEBUG_CTLS;
	if (virt)
		exit |= VMX_EXIT_ACK_INTR_ON_EXIT;
	uint32_t entry = VMX_ENTRY_LOAD_EFER | VMX_ENTRY_LOAD_PAT | VMX_ENTRY_LOAD_DEBUG_CTLS;
	/* The guest's counters stop in VMX root (SDM Vol. 3C, "VM-Exit
	 * Controls", "VM-Entry Controls"): IA32_PERF_GLOBAL_CTRL loaded from
	 * the guest's field at entry, saved into it at exit (the guest writes
	 * the MSR through the bitmap) and 0 loaded at exit. All three or none:
	 * without the save the guest's writes would be lost at the next entry. */
	uint32_t perf_exit = VMX_EXIT_LOAD_PERF_GLOBAL_CTRL | VMX_EXIT_SAVE_PERF_GLOBAL_CTL;
	bool perf_allowed = (c->exit.allowed1 & perf_exit) == perf_exit && (c->entry.allowed1 & VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL);
	if (res->pmu_global && perf_allowed) {
		exit |= perf_exit;
		entry |= VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL;
	}

	cfg->pin = vmx_adjust_ctl("pin", &c->pin, pin, &dropped);
	if (dropped & VMX_PIN_NMI_EXITING)      /* virtual NMIs need NMI exiting */
		cfg->pin &= ~VMX_PIN_VIRTUAL_NMIS;
	cfg->eoi_trap = vid && t->eoi == EOI_TRAP;
	cfg->timer = virt ? t->timer : TIMER_TRAP;
	/* timer=deadline: the guest's IA32_TSC_DEADLINE reaches this core's own
	 * LAPIC timer (host vector, TSC-deadline mode) while its LVT is in
	 * TSC-deadline mode, unmasked (vmx/virq_timer.c). */
	cfg->deadline_pass = virt && t->timer == TIMER_DEADLINE;
	cfg->preempt_rate = (uint8_t)(c->misc & VMX_MISC_PREEMPT_RATE_MASK);
	if (virt && t->timer == TIMER_PREEMPT && need(!(dropped & VMX_PIN_PREEMPTION_TIMER) &&
						       (cfg->pin & VMX_PIN_PREEMPTION_TIMER), "the VMX-preemption timer (timer=preempt)", err, errlen))
		return -1;
	if (posted && need(!(dropped & VMX_PIN_POSTED_INTR), "posted interrupts", err, errlen))
		return -1;
	cfg->proc = vmx_adjust_ctl("proc", &c->proc, proc, &dropped);
	if (need(!(cfg->proc & (VMX_PROC_HLT_EXITING | VMX_PROC_MWAIT_EXITING | VMX_PROC_PAUSE_EXITING)),
		 "HLT, MWAIT and PAUSE without exiting", err, errlen))
		return -1;
	/* A CPU that forces on an exiting control makes its exits happen: each
	 * has a handler in vmx/exit.c, except these, which the hypervisor cannot
	 * emulate and so refuses to run under, by name. */
	uint32_t unhandled2 = VMX_PROC2_DESC_TABLE_EXITING | VMX_PROC2_ENCLS_EXITING | VMX_PROC2_PML |
			      VMX_PROC2_ENCLV_EXITING | VMX_PROC2_BUS_LOCK_DETECTION |
			      VMX_PROC2_INSTRUCTION_TIMEOUT | VMX_PROC2_EPT_VIOLATION_VE | VMX_PROC2_VMCS_SHADOWING;
	if (cfg->proc & VMX_PROC_RDTSC_EXITING)      /* TPAUSE and UMWAIT would exit */
		unhandled2 |= VMX_PROC2_USER_WAIT_PAUSE;
	if (need(!(proc2 & unhandled2 & c->proc2.allowed0), "no forced-on descriptor-table, ENCLS, ENCLV, PML, "
		 "UMWAIT/TPAUSE, bus-lock, instruction-timeout, #VE or VMCS-shadowing control (their exits have no handler)",
		 err, errlen))
		return -1;
	cfg->proc2 = proc2;
	cfg->exit = vmx_adjust_ctl("exit", &c->exit, exit, &dropped);
	if (need(!(dropped & (VMX_EXIT_HOST_ADDR_SPACE_SIZE | VMX_EXIT_LOAD_EFER | VMX_EXIT_SAVE_EFER)),
		 "64-bit host and EFER switching on exit", err, errlen))
		return -1;
	cfg->entry = vmx_adjust_ctl("entry", &c->entry, entry, &dropped) & ~VMX_ENTRY_IA32E_MODE_GUEST;
	if (need(!(dropped & VMX_ENTRY_LOAD_EFER), "loading EFER on entry", err, errlen))
		return -1;
	cfg->perf_hide = (cfg->exit & perf_exit) == perf_exit && (cfg->entry & VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL);
	if (!cfg->perf_hide) {
		cfg->exit &= ~perf_exit;
		cfg->entry &= ~VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL;
	}
	snprintf(cfg->perf_note, sizeof cfg->perf_note, "%s",
		 cfg->perf_hide ? "hidden: IA32_PERF_GLOBAL_CTRL the guest's at entry, saved and 0 at exit" :
		 !res->pmu_global ? "no IA32_PERF_GLOBAL_CTRL (CPUID 0AH: version below 2)" :
		 "counted: the CPU lacks a VMX control to load or save IA32_PERF_GLOBAL_CTRL (exit 12, 30; entry 13)");

	/* Tertiary controls and IPI virtualization (SDM Vol. 3C, "IPI Virtualization"):
	 * IPIv needs virtualize-x2APIC-mode, APIC-register virtualization, VID and
	 * posted interrupts; the PID-pointer table is indexed by the destination's
	 * APIC ID and bounded by LAST_PID_POINTER_INDEX. */
	cfg->proc3_active = cfg->proc & VMX_PROC_ACTIVATE_TERTIARY;
	cfg->pid_table = res->pid_table;
	cfg->last_pid_index = (uint16_t)(res->max_apic_id > 0xffff ? 0xffff : res->max_apic_id);
	if (t->ipi != IPI_IPIV) {
		snprintf(cfg->ipiv_note, sizeof cfg->ipiv_note, "off: ipi tier is %s", ipi_tier_names[t->ipi]);
	} else if (!virt) {
		snprintf(cfg->ipiv_note, sizeof cfg->ipiv_note,
			 "off: the partition interrupt model (guest owns the x2APIC) has no VID or posted interrupts");
	} else if (res->max_apic_id > 0xffff) {
		snprintf(cfg->ipiv_note, sizeof cfg->ipiv_note,
			 "off: APIC ID %u does not fit the 16-bit LAST_PID_POINTER_INDEX", res->max_apic_id);
	} else if (!posted || !(cfg->proc2 & VMX_PROC2_VIRT_INTR_DELIVERY) || !cfg->proc3_active) {
		snprintf(cfg->ipiv_note, sizeof cfg->ipiv_note, "off: a prerequisite (VID, posted interrupts, tertiary) is missing");
	} else {
		cfg->proc3 |= vmx_adjust_ctl3(c->proc3_allowed1, VMX_PROC3_IPI_VIRT, NULL);
		cfg->ipiv = cfg->proc3 & VMX_PROC3_IPI_VIRT;
		snprintf(cfg->ipiv_note, sizeof cfg->ipiv_note, "%s: PID-pointer table at 0x%llx, last index %u",
			 cfg->ipiv ? "on" : "off", (unsigned long long)cfg->pid_table, cfg->last_pid_index);
	}

	/* timer=apicv (Intel's ISE, "APIC-Timer Virtualization"): tertiary
	 * bit 8; the guest's IA32_TSC_DEADLINE passes through (the MSR bitmap)
	 * into the guest deadline (0x2830, with its shadow 0x204e), and at the
	 * deadline the CPU delivers the guest timer vector (0x000a) through
	 * virtual-interrupt delivery: neither arming nor delivery exits. It
	 * needs VID and RDTSC exiting 0 (VM-entry checks); bit 8 is in proc3
	 * here as allowed, and is on per vCPU only while its LVT lets the CPU
	 * serve the timer (vmx/virq_timer.c). */
	if (virt && t->timer == TIMER_APICV && cfg->proc3_active && (cfg->proc2 & VMX_PROC2_VIRT_INTR_DELIVERY) &&
	    !(cfg->proc & VMX_PROC_RDTSC_EXITING)) {
		cfg->proc3 |= vmx_adjust_ctl3(c->proc3_allowed1, VMX_PROC3_APIC_TIMER_VIRT, NULL);
		cfg->apic_timer_virt = cfg->proc3 & VMX_PROC3_APIC_TIMER_VIRT;
	}
	if (virt && t->timer == TIMER_APICV &&
	    need(cfg->apic_timer_virt, "APIC-timer virtualization with VID and without RDTSC exiting (timer=apicv)", err, errlen))
		return -1;

	cfg->eptp = res->eptp;
	cfg->msr_bitmap = res->msr_bitmap;
	cfg->io_bitmap_a = res->io_bitmap_a;
	cfg->io_bitmap_b = res->io_bitmap_b;
	cfg->posted_intr_nv = POSTED_INTR_VECTOR;
	cfg->cr0_fixed0 = c->cr0_fixed0;
	cfg->cr0_fixed1 = c->cr0_fixed1;
	cfg->cr4_fixed0 = c->cr4_fixed0;
	cfg->cr4_fixed1 = c->cr4_fixed1;
	/* Unrestricted guest lets the guest own PE and PG; every other fixed bit
	 * (NE; VMXE in CR4) is forced on and hidden behind the read shadow. */
	cfg->cr0_mask = (c->cr0_fixed0 | ~c->cr0_fixed1) & ~(X86_CR0_PE | X86_CR0_PG);
	cfg->cr4_mask = c->cr4_fixed0 | ~c->cr4_fixed1;
	return 0;
}

void vmcs_config_print(const struct vmcs_config *cfg)
{
	pr_info("vmcs: pin=0x%08x proc=0x%08x proc2=0x%08x proc3=0x%016llx%s exit=0x%08x entry=0x%08x\n",
		cfg->pin, cfg->proc, cfg->proc2, (unsigned long long)cfg->proc3,
		cfg->proc3_active ? " (tertiary active)" : "", cfg->exit, cfg->entry);
	pr_info("vmcs: interrupt model %s; IPI virtualization %s\n",
		cfg->irq_model == IRQ_VIRTUAL ? "virtual (the host owns the x2APIC; posted interrupts, VID, virtual x2APIC)" :
		"partition (guest owns the x2APIC: IPIs, EOIs, timers exit-free; INIT/SIPI exit; no tiers)",
		cfg->ipiv_note);
	pr_info("vmcs: the hypervisor's time in the guest's performance counters: %s\n", cfg->perf_note);
}

uint64_t vmcs_guest_cr0(const struct vmcs_config *cfg, uint64_t want)
{
	return (want | (cfg->cr0_fixed0 & ~(X86_CR0_PE | X86_CR0_PG))) & cfg->cr0_fixed1;
}

uint64_t vmcs_guest_cr4(const struct vmcs_config *cfg, uint64_t want)
{
	return (want | cfg->cr4_fixed0) & cfg->cr4_fixed1;
}

void vmcs_write_controls(const struct vmcs_config *cfg, const struct vmcs_vcpu *v)
{
	vmcs_write(VMCS_PIN_CONTROLS, cfg->pin);
	vmcs_write(VMCS_PROC_CONTROLS, cfg->proc);
	vmcs_write(VMCS_PROC2_CONTROLS, cfg->proc2);
	/* APIC-timer virtualization starts off: INIT's LVT is masked, and the
	 * run time turns it on while the guest's LVT lets the CPU serve the
	 * timer (vmx/virq_timer.c). */
	if (cfg->proc3_active)
		vmcs_write(VMCS_TERTIARY_CONTROLS, cfg->proc3 & ~VMX_PROC3_APIC_TIMER_VIRT);
	vmcs_write(VMCS_EXIT_CONTROLS, cfg->exit);
	vmcs_write(VMCS_ENTRY_CONTROLS, cfg->entry);
	vmcs_write(VMCS_EXCEPTION_BITMAP, 0);
	vmcs_write(VMCS_PF_ERROR_MASK, 0);
	vmcs_write(VMCS_PF_ERROR_MATCH, 0);
	vmcs_write(VMCS_CR3_TARGET_COUNT, 0);
	vmcs_write(VMCS_EXIT_MSR_STORE_COUNT, 0);
	vmcs_write(VMCS_EXIT_MSR_LOAD_COUNT, 0);
	vmcs_write(VMCS_ENTRY_MSR_LOAD_COUNT, 0);
	vmcs_write(VMCS_ENTRY_INTR_INFO, 0);
	if (cfg->perf_hide) {
		vmcs_write(VMCS_HOST_PERF_GLOBAL_CTRL, 0);
		vmcs_write(VMCS_GUEST_PERF_GLOBAL_CTRL, v->perf_global_ctrl);
	}
	vmcs_write(VMCS_MSR_BITMAP, v->msr_bitmap ? v->msr_bitmap : cfg->msr_bitmap);
	vmcs_write(VMCS_IO_BITMAP_A, cfg->io_bitmap_a);
	vmcs_write(VMCS_IO_BITMAP_B, cfg->io_bitmap_b);
	vmcs_write(VMCS_EPT_POINTER, cfg->eptp);
	vmcs_write(VMCS_TSC_OFFSET, 0);
	if (cfg->proc2 & VMX_PROC2_VPID)
		vmcs_write(VMCS_VPID, v->vpid);
	if (cfg->proc2 & VMX_PROC2_XSAVES)
		vmcs_write(VMCS_XSS_EXIT_BITMAP, 0);
	vmcs_write(VMCS_CR0_MASK, cfg->cr0_mask);
	vmcs_write(VMCS_CR4_MASK, cfg->cr4_mask);
	if (cfg->proc & VMX_PROC_USE_TPR_SHADOW) {
		vmcs_write(VMCS_VIRTUAL_APIC_PAGE_ADDR, v->virtual_apic);
		vmcs_write(VMCS_TPR_THRESHOLD, 0);
	}
	if (cfg->proc2 & VMX_PROC2_VIRT_INTR_DELIVERY) {
		vmcs_write(VMCS_EOI_EXIT_BITMAP0, 0);
		vmcs_write(VMCS_EOI_EXIT_BITMAP1, 0);
		vmcs_write(VMCS_EOI_EXIT_BITMAP2, 0);
		vmcs_write(VMCS_EOI_EXIT_BITMAP3, 0);
		vmcs_write(VMCS_GUEST_INTR_STATUS, 0);
	}
	if (cfg->pin & VMX_PIN_POSTED_INTR) {
		vmcs_write(VMCS_POSTED_INTR_NV, cfg->posted_intr_nv);
		vmcs_write(VMCS_POSTED_INTR_DESC_ADDR, v->pid);
	}
	if (cfg->ipiv) {
		vmcs_write(VMCS_PID_POINTER_TABLE, cfg->pid_table);
		vmcs_write(VMCS_LAST_PID_POINTER_INDEX, cfg->last_pid_index);
	}
	if (cfg->apic_timer_virt) {
		/* Disarmed until the guest programs its timer. */
		vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR, 0);
		vmcs_write(VMCS_GUEST_DEADLINE, 0);
		vmcs_write(VMCS_GUEST_DEADLINE_SHADOW, 0);
	}
}

void vmcs_write_host(const struct vmcs_host *h)
{
	vmcs_write(VMCS_HOST_CR0, h->cr0);
	vmcs_write(VMCS_HOST_CR3, h->cr3);
	vmcs_write(VMCS_HOST_CR4, h->cr4);
	vmcs_write(VMCS_HOST_CS_SEL, h->cs);
	vmcs_write(VMCS_HOST_SS_SEL, h->ds);
	vmcs_write(VMCS_HOST_DS_SEL, h->ds);
	vmcs_write(VMCS_HOST_ES_SEL, h->ds);
	vmcs_write(VMCS_HOST_FS_SEL, 0);
	vmcs_write(VMCS_HOST_GS_SEL, 0);
	vmcs_write(VMCS_HOST_TR_SEL, h->tr);
	vmcs_write(VMCS_HOST_FS_BASE, 0);
	vmcs_write(VMCS_HOST_GS_BASE, h->gs_base);
	vmcs_write(VMCS_HOST_TR_BASE, h->tr_base);
	vmcs_write(VMCS_HOST_GDTR_BASE, h->gdtr_base);
	vmcs_write(VMCS_HOST_IDTR_BASE, h->idtr_base);
	vmcs_write(VMCS_HOST_SYSENTER_CS, 0);
	vmcs_write(VMCS_HOST_SYSENTER_ESP, 0);
	vmcs_write(VMCS_HOST_SYSENTER_EIP, 0);
	vmcs_write(VMCS_HOST_EFER, h->efer);
	vmcs_write(VMCS_HOST_PAT, h->pat);
	vmcs_write(VMCS_HOST_RSP, h->rsp);
	vmcs_write(VMCS_HOST_RIP, h->rip);
}

static void write_seg(uint32_t sel_f, const struct vmcs_seg *s)
{
	/* Selector, limit, access rights and base fields share one index
	 * pattern: ES at 0x0800/0x4800/0x4814/0x6806, each next segment +2. */
	uint32_t i = sel_f - VMCS_GUEST_ES_SEL;
	vmcs_write(sel_f, s->sel);
	vmcs_write(VMCS_GUEST_ES_LIMIT + i, s->limit);
	vmcs_write(VMCS_GUEST_ES_AR + i, s->ar);
	vmcs_write(VMCS_GUEST_ES_BASE + i, s->base);
}

void vmcs_write_guest(const struct vmcs_config *cfg, const struct vmcs_guest *g)
{
	write_seg(VMCS_GUEST_ES_SEL, &g->es);
	write_seg(VMCS_GUEST_CS_SEL, &g->cs);
	write_seg(VMCS_GUEST_SS_SEL, &g->ss);
	write_seg(VMCS_GUEST_DS_SEL, &g->ds);
	write_seg(VMCS_GUEST_FS_SEL, &g->fs);
	write_seg(VMCS_GUEST_GS_SEL, &g->gs);
	write_seg(VMCS_GUEST_LDTR_SEL, &g->ldtr);
	write_seg(VMCS_GUEST_TR_SEL, &g->tr);
	vmcs_write(VMCS_GUEST_GDTR_BASE, g->gdtr_base);
	vmcs_write(VMCS_GUEST_GDTR_LIMIT, g->gdtr_limit);
	vmcs_write(VMCS_GUEST_IDTR_BASE, g->idtr_base);
	vmcs_write(VMCS_GUEST_IDTR_LIMIT, g->idtr_limit);
	vmcs_write(VMCS_GUEST_CR0, vmcs_guest_cr0(cfg, g->cr0));
	vmcs_write(VMCS_CR0_SHADOW, g->cr0);
	vmcs_write(VMCS_GUEST_CR3, g->cr3);
	vmcs_write(VMCS_GUEST_CR4, vmcs_guest_cr4(cfg, g->cr4));
	vmcs_write(VMCS_CR4_SHADOW, g->cr4);
	vmcs_write(VMCS_GUEST_EFER, g->efer);
	vmcs_write(VMCS_GUEST_PAT, g->pat);
	vmcs_write(VMCS_GUEST_DEBUGCTL, 0);
	vmcs_write(VMCS_GUEST_DR7, g->dr7);
	vmcs_write(VMCS_GUEST_RSP, g->rsp);
	vmcs_write(VMCS_GUEST_RIP, g->rip);
	vmcs_write(VMCS_GUEST_RFLAGS, g->rflags);
	vmcs_write(VMCS_GUEST_PENDING_DBG, 0);
	vmcs_write(VMCS_GUEST_SYSENTER_CS, 0);
	vmcs_write(VMCS_GUEST_SYSENTER_ESP, 0);
	vmcs_write(VMCS_GUEST_SYSENTER_EIP, 0);
	vmcs_write(VMCS_GUEST_INTERRUPTIBILITY, 0);
	vmcs_write(VMCS_GUEST_ACTIVITY_STATE, g->activity);
	vmcs_write(VMCS_LINK_POINTER, ~0ull);
	vmcs_write(VMCS_ENTRY_CONTROLS, cfg->entry | (g->long_mode ? VMX_ENTRY_IA32E_MODE_GUEST : 0));
}

static struct vmcs_seg seg(uint16_t sel, uint64_t base, uint32_t limit, uint32_t ar)
{
	return (struct vmcs_seg){ sel, base, limit, ar };
}

/* Linux x86 boot protocol, 64-bit entry: paging on with an identity map,
 * __BOOT_CS (0x10) and __BOOT_DS (0x18) flat, interrupts off, RSI = zero page
 * (the caller sets RSI in the register file). */
void guest_state_linux64(struct vmcs_guest *g, uint64_t entry, uint64_t cr3, uint64_t gdt, uint32_t gdt_limit)
{
	memset(g, 0, sizeof *g);
	g->cs = seg(0x10, 0, 0xffffffff, AR_CODE64);
	g->ds = g->es = g->ss = g->fs = g->gs = seg(0x18, 0, 0xffffffff, AR_DATA);
	g->ldtr = seg(0, 0, 0, AR_UNUSABLE);
	g->tr = seg(0, 0, 0x67, AR_TSS64_BUSY);
	g->gdtr_base = gdt;
	g->gdtr_limit = gdt_limit;
	g->cr0 = X86_CR0_PE | X86_CR0_NE | BIT(4) /* ET */ | X86_CR0_PG;
	g->cr3 = cr3;
	g->cr4 = X86_CR4_PAE;
	g->efer = EFER_LME_LMA;
	g->pat = PAT_DEFAULT;
	g->dr7 = 0x400;
	g->rip = entry;
	g->rflags = 0x2;
	g->activity = GUEST_ACTIVITY_ACTIVE;
	g->long_mode = true;
}

/* The state after INIT (SDM Vol. 3A, "Initialization Overview"), parked in
 * wait-for-SIPI until the guest's own SIPI arrives. */
void guest_state_wait_sipi(struct vmcs_guest *g)
{
	memset(g, 0, sizeof *g);
	g->cs = seg(0xf000, 0xffff0000, 0xffff, AR_CODE16);
	g->ds = g->es = g->ss = g->fs = g->gs = seg(0, 0, 0xffff, AR_DATA16);
	g->ldtr = seg(0, 0, 0xffff, AR_LDT);
	g->tr = seg(0, 0, 0xffff, AR_TSS64_BUSY);
	g->gdtr_limit = g->idtr_limit = 0xffff;
	g->cr0 = BIT(4) | X86_CR0_NE;       /* ET; caches on (CD, NW clear) */
	g->pat = PAT_DEFAULT;
	g->dr7 = 0x400;
	g->rip = 0xfff0;
	g->rflags = 0x2;
	g->activity = GUEST_ACTIVITY_WAIT_SIPI;
}

void guest_state_sipi(struct vmcs_guest *g, uint8_t vec)
{
	g->cs = seg((uint16_t)vec << 8, (uint64_t)vec << 12, 0xffff, AR_CODE16);
	g->rip = 0;
	g->activity = GUEST_ACTIVITY_ACTIVE;
}
