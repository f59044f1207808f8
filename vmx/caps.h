/* VMX capability decoding: raw capability MSRs in, decoded allowed settings
 * and feature flags out. Pure C; the MSR reads live elsewhere. */
#ifndef VMX_CAPS_H
#define VMX_CAPS_H
#include "../lib/types.h"

struct vmx_raw_caps {            /* as read from the MSRs on one CPU */
	uint32_t cpuid1_ecx;         /* bit 5 = VMX */
	uint64_t feature_control, basic, pin, proc, exit, entry, misc,
		 cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1, vmcs_enum, proc2, ept_vpid,
		 true_pin, true_proc, true_exit, true_entry, vmfunc, proc3;
	bool has_proc2, has_ept_vpid, has_true, has_vmfunc, has_proc3;  /* which MSRs exist / were read */
};

/* A bit set in allowed0 must be 1; a bit clear in allowed1 must be 0. */
struct vmx_ctl { uint32_t allowed0, allowed1; };

struct vmx_caps {
	bool vmx;                    /* CPUID.1:ECX.VMX */
	bool feature_control_ok;     /* locked with VMX-outside-SMX, or unlocked (we may set it) */
	uint32_t revision; uint32_t vmcs_size; bool true_ctls;
	struct vmx_ctl pin, proc, proc2, exit, entry;
	uint64_t proc3_allowed1;     /* 0 when tertiary controls are not allowed */
	uint64_t ept_vpid, misc, cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1, vmfunc;
	/* Decoded features used by the tier choice. Each flag means "this one
	 * control (or capability bit) may be set to 1", gated only by the
	 * control word it lives in being usable (secondary/tertiary activated).
	 * Dependencies between controls (VID needs TPR shadow and ext-int
	 * exiting, posted interrupts need VID and ack-on-exit, ...) are checked
	 * by the tier choice, which can then say which one is missing. */
	bool ept, vpid, unrestricted, ept_2m, ept_1g, ept_wb, ept_4level,
	     tpr_shadow, msr_bitmaps, secondary, tertiary,
	     virt_x2apic, apic_reg_virt, vid, posted_intr, ack_intr_on_exit, ext_int_exiting,
	     preemption_timer, ipiv, apic_timer_virt, wait_for_sipi, hlt_exiting_optional;
	/* Not decoded: set by the caller where the CPU is taken to be stock
	 * Bochs 3.0 (tiers_stock_bochs), whose virtual-interrupt delivery
	 * ignores RFLAGS.IF when a host interrupt comes (defect G,
	 * docs/bochs.md). auto then keeps VID off; eoi=vid still asks for it. */
	bool vid_ignores_if;
};

/* The reader rules of the SDM (Appendix A): use TRUE_* for pin/proc/exit/entry
 * when basic bit 55 is set; proc2 only when primary allowed1 has "activate
 * secondary controls"; EPT/VPID caps only when proc2 allows EPT or VPID;
 * VMFUNC only when proc2 allows "enable VM functions"; proc3 only when primary
 * allowed1 has "activate tertiary" (64-bit, allowed-1 only). With the VMX bit
 * clear in CPUID only c->vmx (false) is meaningful, everything else is 0. */
void vmx_caps_decode(const struct vmx_raw_caps *raw, struct vmx_caps *c);

/* Adjusts one control word: result = (wanted | allowed0) & allowed1. Every
 * wanted bit that had to be dropped is reported with pr_warn naming the
 * control word and the bit; every forced-on bit that was not wanted is
 * pr_debug'ed. Returns the adjusted value; *dropped (if not NULL) gets the
 * dropped mask. word is one of the names vmx_ctl_bit_name() knows. */
uint32_t vmx_adjust_ctl(const char *word, const struct vmx_ctl *ctl, uint32_t wanted, uint32_t *dropped);
/* The same for the tertiary controls (no allowed-0 half). */
uint64_t vmx_adjust_ctl3(uint64_t allowed1, uint64_t wanted, uint64_t *dropped);

/* word = "pin","proc","proc2","proc3","exit","entry"; NULL if unnamed. */
const char *vmx_ctl_bit_name(const char *word, unsigned bit);

/* A vmxcap-like table via pr_info, every line starting with "vmxcap: ". */
void vmx_caps_print(const struct vmx_caps *c);

/* Compares two CPUs' raw caps; returns the number of differing MSRs and
 * pr_warn's each difference naming both CPUs. */
int vmx_caps_compare(int cpu_a, const struct vmx_raw_caps *a, int cpu_b, const struct vmx_raw_caps *b);
#endif
