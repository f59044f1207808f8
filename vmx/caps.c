/* VMX capability decoding (Intel SDM Vol. 3D, Appendix A "VMX Capability
 * Reporting Facility"), the control-word adjuster and the vmxcap report. */
#include "caps.h"
#include "vmx_defs.h"
#include "../lib/printk.h"
#include "../lib/string.h"

/* ---- bit names ---- */

struct bit_name { uint64_t mask; const char *name; };

static const struct bit_name pin_names[] = {
	{ VMX_PIN_EXT_INT_EXITING, "external-interrupt exiting" },
	{ VMX_PIN_NMI_EXITING, "NMI exiting" },
	{ VMX_PIN_VIRTUAL_NMIS, "virtual NMIs" },
	{ VMX_PIN_PREEMPTION_TIMER, "VMX-preemption timer" },
	{ VMX_PIN_POSTED_INTR, "process posted interrupts" },
};

static const struct bit_name proc_names[] = {
	{ VMX_PROC_INT_WINDOW_EXITING, "interrupt-window exiting" },
	{ VMX_PROC_TSC_OFFSETTING, "use TSC offsetting" },
	{ VMX_PROC_HLT_EXITING, "HLT exiting" },
	{ VMX_PROC_INVLPG_EXITING, "INVLPG exiting" },
	{ VMX_PROC_MWAIT_EXITING, "MWAIT exiting" },
	{ VMX_PROC_RDPMC_EXITING, "RDPMC exiting" },
	{ VMX_PROC_RDTSC_EXITING, "RDTSC exiting" },
	{ VMX_PROC_CR3_LOAD_EXITING, "CR3-load exiting" },
	{ VMX_PROC_CR3_STORE_EXITING, "CR3-store exiting" },
	{ VMX_PROC_ACTIVATE_TERTIARY, "activate tertiary controls" },
	{ VMX_PROC_CR8_LOAD_EXITING, "CR8-load exiting" },
	{ VMX_PROC_CR8_STORE_EXITING, "CR8-store exiting" },
	{ VMX_PROC_USE_TPR_SHADOW, "use TPR shadow" },
	{ VMX_PROC_NMI_WINDOW_EXITING, "NMI-window exiting" },
	{ VMX_PROC_MOV_DR_EXITING, "MOV-DR exiting" },
	{ VMX_PROC_UNCOND_IO_EXITING, "unconditional I/O exiting" },
	{ VMX_PROC_USE_IO_BITMAPS, "use I/O bitmaps" },
	{ VMX_PROC_MONITOR_TRAP_FLAG, "monitor trap flag" },
	{ VMX_PROC_USE_MSR_BITMAPS, "use MSR bitmaps" },
	{ VMX_PROC_MONITOR_EXITING, "MONITOR exiting" },
	{ VMX_PROC_PAUSE_EXITING, "PAUSE exiting" },
	{ VMX_PROC_ACTIVATE_SECONDARY, "activate secondary controls" },
};

static const struct bit_name proc2_names[] = {
	{ VMX_PROC2_VIRT_APIC_ACCESSES, "virtualize APIC accesses" },
	{ VMX_PROC2_EPT, "enable EPT" },
	{ VMX_PROC2_DESC_TABLE_EXITING, "descriptor-table exiting" },
	{ VMX_PROC2_RDTSCP, "enable RDTSCP" },
	{ VMX_PROC2_VIRT_X2APIC_MODE, "virtualize x2APIC mode" },
	{ VMX_PROC2_VPID, "enable VPID" },
	{ VMX_PROC2_WBINVD_EXITING, "WBINVD exiting" },
	{ VMX_PROC2_UNRESTRICTED_GUEST, "unrestricted guest" },
	{ VMX_PROC2_APIC_REG_VIRT, "APIC-register virtualization" },
	{ VMX_PROC2_VIRT_INTR_DELIVERY, "virtual-interrupt delivery" },
	{ VMX_PROC2_PAUSE_LOOP_EXITING, "PAUSE-loop exiting" },
	{ VMX_PROC2_RDRAND_EXITING, "RDRAND exiting" },
	{ VMX_PROC2_INVPCID, "enable INVPCID" },
	{ VMX_PROC2_VMFUNC, "enable VM functions" },
	{ VMX_PROC2_VMCS_SHADOWING, "VMCS shadowing" },
	{ VMX_PROC2_ENCLS_EXITING, "enable ENCLS exiting" },
	{ VMX_PROC2_RDSEED_EXITING, "RDSEED exiting" },
	{ VMX_PROC2_PML, "enable PML" },
	{ VMX_PROC2_EPT_VIOLATION_VE, "EPT-violation #VE" },
	{ VMX_PROC2_CONCEAL_VMX_FROM_PT, "conceal VMX from PT" },
	{ VMX_PROC2_XSAVES, "enable XSAVES/XRSTORS" },
	{ VMX_PROC2_MODE_BASED_EPT_EXEC, "mode-based execute control for EPT" },
	{ VMX_PROC2_SUBPAGE_WRITE_PERM, "sub-page write permissions for EPT" },
	{ VMX_PROC2_PT_USES_GPA, "Intel PT uses guest-physical addresses" },
	{ VMX_PROC2_TSC_SCALING, "use TSC scaling" },
	{ VMX_PROC2_USER_WAIT_PAUSE, "enable user wait and pause" },
	{ VMX_PROC2_PCONFIG, "enable PCONFIG" },
	{ VMX_PROC2_ENCLV_EXITING, "enable ENCLV exiting" },
	{ VMX_PROC2_BUS_LOCK_DETECTION, "VMM bus-lock detection" },
	{ VMX_PROC2_INSTRUCTION_TIMEOUT, "instruction timeout" },
};

static const struct bit_name proc3_names[] = {
	{ VMX_PROC3_LOADIWKEY_EXITING, "LOADIWKEY exiting" },
	{ VMX_PROC3_HLAT, "enable HLAT" },
	{ VMX_PROC3_EPT_PAGING_WRITE, "EPT paging-write control" },
	{ VMX_PROC3_GUEST_PAGING_VERIFY, "guest-paging verification" },
	{ VMX_PROC3_IPI_VIRT, "IPI virtualization" },
	{ VMX_PROC3_MSRLIST, "enable MSR-list instructions" },
	{ VMX_PROC3_VIRT_SPEC_CTRL, "virtualize IA32_SPEC_CTRL" },
	{ VMX_PROC3_APIC_TIMER_VIRT, "APIC-timer virtualization" },
};

static const struct bit_name exit_names[] = {
	{ VMX_EXIT_SAVE_DEBUG_CTLS, "save debug controls" },
	{ VMX_EXIT_HOST_ADDR_SPACE_SIZE, "host address-space size" },
	{ VMX_EXIT_LOAD_PERF_GLOBAL_CTRL, "load IA32_PERF_GLOBAL_CTRL" },
	{ VMX_EXIT_ACK_INTR_ON_EXIT, "acknowledge interrupt on exit" },
	{ VMX_EXIT_SAVE_PAT, "save IA32_PAT" },
	{ VMX_EXIT_LOAD_PAT, "load IA32_PAT" },
	{ VMX_EXIT_SAVE_EFER, "save IA32_EFER" },
	{ VMX_EXIT_LOAD_EFER, "load IA32_EFER" },
	{ VMX_EXIT_SAVE_PREEMPTION_TIMER, "save VMX-preemption timer value" },
	{ VMX_EXIT_CLEAR_BNDCFGS, "clear IA32_BNDCFGS" },
	{ VMX_EXIT_CONCEAL_VMX_FROM_PT, "conceal VMX from PT" },
	{ VMX_EXIT_CLEAR_RTIT_CTL, "clear IA32_RTIT_CTL" },
	{ VMX_EXIT_CLEAR_LBR_CTL, "clear IA32_LBR_CTL" },
	{ VMX_EXIT_CLEAR_UINV, "clear UINV" },
	{ VMX_EXIT_LOAD_CET_STATE, "load CET state" },
	{ VMX_EXIT_LOAD_PKRS, "load PKRS" },
	{ VMX_EXIT_SAVE_PERF_GLOBAL_CTL, "save IA32_PERF_GLOBAL_CTL" },
	{ VMX_EXIT_ACTIVATE_SECONDARY, "activate secondary controls" },
};

static const struct bit_name entry_names[] = {
	{ VMX_ENTRY_LOAD_DEBUG_CTLS, "load debug controls" },
	{ VMX_ENTRY_IA32E_MODE_GUEST, "IA-32e mode guest" },
	{ VMX_ENTRY_TO_SMM, "entry to SMM" },
	{ VMX_ENTRY_DEACT_DUAL_MONITOR, "deactivate dual-monitor treatment" },
	{ VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL, "load IA32_PERF_GLOBAL_CTRL" },
	{ VMX_ENTRY_LOAD_PAT, "load IA32_PAT" },
	{ VMX_ENTRY_LOAD_EFER, "load IA32_EFER" },
	{ VMX_ENTRY_LOAD_BNDCFGS, "load IA32_BNDCFGS" },
	{ VMX_ENTRY_CONCEAL_VMX_FROM_PT, "conceal VMX from PT" },
	{ VMX_ENTRY_LOAD_RTIT_CTL, "load IA32_RTIT_CTL" },
	{ VMX_ENTRY_LOAD_UINV, "load UINV" },
	{ VMX_ENTRY_LOAD_CET_STATE, "load CET state" },
	{ VMX_ENTRY_LOAD_LBR_CTL, "load guest IA32_LBR_CTL" },
	{ VMX_ENTRY_LOAD_PKRS, "load PKRS" },
};

static const struct bit_name ept_names[] = {
	{ VMX_EPT_CAP_EXEC_ONLY, "execute-only pages" },
	{ VMX_EPT_CAP_PWL4, "page-walk length 4" },
	{ VMX_EPT_CAP_PWL5, "page-walk length 5" },
	{ VMX_EPT_CAP_MEMTYPE_UC, "EPT memory type UC" },
	{ VMX_EPT_CAP_MEMTYPE_WB, "EPT memory type WB" },
	{ VMX_EPT_CAP_PDE_2MB, "2-MByte pages" },
	{ VMX_EPT_CAP_PDPTE_1GB, "1-GByte pages" },
	{ VMX_EPT_CAP_INVEPT, "INVEPT" },
	{ VMX_EPT_CAP_AD_FLAGS, "accessed and dirty flags" },
	{ VMX_EPT_CAP_ADV_EXIT_INFO, "advanced EPT-violation exit info" },
	{ VMX_EPT_CAP_SSS_CONTROL, "supervisor shadow-stack control" },
	{ VMX_EPT_CAP_INVEPT_SINGLE, "single-context INVEPT" },
	{ VMX_EPT_CAP_INVEPT_ALL, "all-context INVEPT" },
	{ VMX_EPT_CAP_INVVPID, "INVVPID" },
	{ VMX_EPT_CAP_INVVPID_ADDR, "individual-address INVVPID" },
	{ VMX_EPT_CAP_INVVPID_SINGLE, "single-context INVVPID" },
	{ VMX_EPT_CAP_INVVPID_ALL, "all-context INVVPID" },
	{ VMX_EPT_CAP_INVVPID_SINGLE_NOGLOBAL, "single-context-retaining-globals INVVPID" },
};

struct word_names { const char *word, *title; const struct bit_name *names; size_t n; unsigned width; };

static const struct word_names words[] = {
	{ "pin", "pin-based VM-execution controls", pin_names, ARRAY_SIZE(pin_names), 32 },
	{ "proc", "primary processor-based VM-execution controls", proc_names, ARRAY_SIZE(proc_names), 32 },
	{ "proc2", "secondary processor-based VM-execution controls", proc2_names, ARRAY_SIZE(proc2_names), 32 },
	{ "proc3", "tertiary processor-based VM-execution controls", proc3_names, ARRAY_SIZE(proc3_names), 64 },
	{ "exit", "VM-exit controls", exit_names, ARRAY_SIZE(exit_names), 32 },
	{ "entry", "VM-entry controls", entry_names, ARRAY_SIZE(entry_names), 32 },
};

static const struct word_names *find_word(const char *word)
{
	if (!word)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcmp(words[i].word, word))
			return &words[i];
	return NULL;
}

static const char *table_name(const struct bit_name *t, size_t n, unsigned bit)
{
	if (bit >= 64)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (t[i].mask == BIT(bit))
			return t[i].name;
	return NULL;
}

const char *vmx_ctl_bit_name(const char *word, unsigned bit)
{
	const struct word_names *w = find_word(word);
	if (!w || bit >= w->width)
		return NULL;
	return table_name(w->names, w->n, bit);
}

/* ---- decoding ---- */

static struct vmx_ctl ctl_from_msr(uint64_t msr)
{
	struct vmx_ctl c = { VMX_CTL_ALLOWED0(msr), VMX_CTL_ALLOWED1(msr) };
	return c;
}

void vmx_caps_decode(const struct vmx_raw_caps *raw, struct vmx_caps *c)
{
	memset(c, 0, sizeof(*c));
	c->vmx = raw->cpuid1_ecx & CPUID1_ECX_VMX;
	if (!c->vmx)
		return;	/* the capability MSRs #GP without VMX: nothing else is real */

	/* Locked without "VMX outside SMX" means VMXON will #GP; unlocked,
	 * the boot code may set the bit and lock it. */
	uint64_t fc = raw->feature_control;
	c->feature_control_ok = !(fc & FEATURE_CONTROL_LOCK) || (fc & FEATURE_CONTROL_VMX_OUTSIDE_SMX);

	c->revision = (uint32_t)(raw->basic & VMX_BASIC_REVISION_MASK);
	c->vmcs_size = (uint32_t)((raw->basic >> VMX_BASIC_VMCS_SIZE_SHIFT) & VMX_BASIC_VMCS_SIZE_MASK);

	/* A.2: with bit 55 set the TRUE_* MSRs say which default1 controls may
	 * be 0; the plain MSRs then still report them as must-be-1. */
	if ((raw->basic & VMX_BASIC_TRUE_CTLS) && !raw->has_true)
		pr_warn("vmx: IA32_VMX_BASIC bit 55 set but the TRUE_* control MSRs were not read; using the plain ones\n");
	c->true_ctls = (raw->basic & VMX_BASIC_TRUE_CTLS) && raw->has_true;
	c->pin = ctl_from_msr(c->true_ctls ? raw->true_pin : raw->pin);
	c->proc = ctl_from_msr(c->true_ctls ? raw->true_proc : raw->proc);
	c->exit = ctl_from_msr(c->true_ctls ? raw->true_exit : raw->exit);
	c->entry = ctl_from_msr(c->true_ctls ? raw->true_entry : raw->entry);

	/* A.3.3: IA32_VMX_PROCBASED_CTLS2 exists only if "activate secondary
	 * controls" may be 1. */
	if (c->proc.allowed1 & VMX_PROC_ACTIVATE_SECONDARY) {
		if (raw->has_proc2) {
			c->secondary = true;
			c->proc2 = ctl_from_msr(raw->proc2);
		} else {
			pr_warn("vmx: secondary controls allowed but IA32_VMX_PROCBASED_CTLS2 was not read\n");
		}
	}
	/* A.10: EPT_VPID_CAP exists only if EPT or VPID may be enabled. */
	if ((c->proc2.allowed1 & (VMX_PROC2_EPT | VMX_PROC2_VPID)) && raw->has_ept_vpid)
		c->ept_vpid = raw->ept_vpid;
	/* A.11: VMFUNC exists only if "enable VM functions" may be 1. */
	if ((c->proc2.allowed1 & VMX_PROC2_VMFUNC) && raw->has_vmfunc)
		c->vmfunc = raw->vmfunc;
	/* A.3.4: IA32_VMX_PROCBASED_CTLS3 exists only if "activate tertiary
	 * controls" may be 1; it has allowed-1 bits only (any bit may be 0). */
	if (c->proc.allowed1 & VMX_PROC_ACTIVATE_TERTIARY) {
		if (raw->has_proc3) {
			c->tertiary = true;
			c->proc3_allowed1 = raw->proc3;
		} else {
			pr_warn("vmx: tertiary controls allowed but IA32_VMX_PROCBASED_CTLS3 was not read\n");
		}
	}

	c->misc = raw->misc;
	c->cr0_fixed0 = raw->cr0_fixed0;
	c->cr0_fixed1 = raw->cr0_fixed1;
	c->cr4_fixed0 = raw->cr4_fixed0;
	c->cr4_fixed1 = raw->cr4_fixed1;

	uint32_t pin1 = c->pin.allowed1, proc1 = c->proc.allowed1, proc2_1 = c->proc2.allowed1;
	c->ext_int_exiting = pin1 & VMX_PIN_EXT_INT_EXITING;
	c->preemption_timer = pin1 & VMX_PIN_PREEMPTION_TIMER;
	c->posted_intr = pin1 & VMX_PIN_POSTED_INTR;
	c->tpr_shadow = proc1 & VMX_PROC_USE_TPR_SHADOW;
	c->msr_bitmaps = proc1 & VMX_PROC_USE_MSR_BITMAPS;
	c->hlt_exiting_optional = !(c->proc.allowed0 & VMX_PROC_HLT_EXITING);
	c->ack_intr_on_exit = c->exit.allowed1 & VMX_EXIT_ACK_INTR_ON_EXIT;

	c->ept = proc2_1 & VMX_PROC2_EPT;
	c->vpid = proc2_1 & VMX_PROC2_VPID;
	/* 26.2.1.1: "unrestricted guest" needs "enable EPT". */
	c->unrestricted = c->ept && (proc2_1 & VMX_PROC2_UNRESTRICTED_GUEST);
	c->virt_x2apic = proc2_1 & VMX_PROC2_VIRT_X2APIC_MODE;
	c->apic_reg_virt = proc2_1 & VMX_PROC2_APIC_REG_VIRT;
	c->vid = proc2_1 & VMX_PROC2_VIRT_INTR_DELIVERY;
	if (c->ept) {
		c->ept_4level = c->ept_vpid & VMX_EPT_CAP_PWL4;
		c->ept_wb = c->ept_vpid & VMX_EPT_CAP_MEMTYPE_WB;
		c->ept_2m = c->ept_vpid & VMX_EPT_CAP_PDE_2MB;
		c->ept_1g = c->ept_vpid & VMX_EPT_CAP_PDPTE_1GB;
	}

	c->ipiv = c->proc3_allowed1 & VMX_PROC3_IPI_VIRT;
	c->apic_timer_virt = c->proc3_allowed1 & VMX_PROC3_APIC_TIMER_VIRT;
	c->wait_for_sipi = c->misc & VMX_MISC_ACT_WAIT_SIPI;
}

/* ---- adjusting control words ---- */

static void report_bits(int level, const char *word, uint64_t mask, const char *what)
{
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(mask & BIT(bit)))
			continue;
		const char *name = vmx_ctl_bit_name(word, bit);
		printk_level(level, "vmx: %s control %s (bit %u) %s\n", word, name ? name : "unnamed", bit, what);
	}
}

uint32_t vmx_adjust_ctl(const char *word, const struct vmx_ctl *ctl, uint32_t wanted, uint32_t *dropped)
{
	uint32_t result = (wanted | ctl->allowed0) & ctl->allowed1;
	uint32_t drop = wanted & ~result;
	uint32_t forced = result & ~wanted;
	uint32_t broken = ctl->allowed0 & ~ctl->allowed1;	/* must be 1 and must be 0 */

	report_bits(LOG_WARN, word, drop, "not allowed by the CPU, dropped");
	report_bits(LOG_DEBUG, word, forced, "forced on by the CPU");
	report_bits(LOG_WARN, word, broken, "must be both 0 and 1 (inconsistent capability MSR)");
	if (dropped)
		*dropped = drop;
	return result;
}

uint64_t vmx_adjust_ctl3(uint64_t allowed1, uint64_t wanted, uint64_t *dropped)
{
	uint64_t result = wanted & allowed1;
	report_bits(LOG_WARN, "proc3", wanted & ~result, "not allowed by the CPU, dropped");
	if (dropped)
		*dropped = wanted & ~result;
	return result;
}

/* ---- the vmxcap report ---- */

static const char *yes_no(bool b) { return b ? "yes" : "no"; }

static void print_word(const struct word_names *w, uint64_t allowed0, uint64_t allowed1)
{
	for (size_t i = 0; i < w->n; i++) {
		uint64_t m = w->names[i].mask;
		const char *s = (allowed0 & m) ? ((allowed1 & m) ? "forced" : "forced (inconsistent)") :
			(allowed1 & m) ? "yes" : "no";
		pr_info("vmxcap:   %-40s %s\n", w->names[i].name, s);
	}
	/* Bits the CPU allows that have no name here: reserved default1 bits
	 * (forced) or controls newer than this table. */
	for (unsigned bit = 0; bit < w->width; bit++) {
		uint64_t m = BIT(bit);
		if (!((allowed0 | allowed1) & m) || table_name(w->names, w->n, bit))
			continue;
		pr_info("vmxcap:   bit %-36u %s\n", bit, (allowed0 & m) ? "forced" : "yes");
	}
}

static void print_ctl(const char *word, const struct vmx_ctl *ctl)
{
	const struct word_names *w = find_word(word);
	pr_info("vmxcap: %s: allowed0=0x%08x allowed1=0x%08x\n", w->title, ctl->allowed0, ctl->allowed1);
	print_word(w, ctl->allowed0, ctl->allowed1);
}

static void print_misc(uint64_t misc)
{
	unsigned rate = (unsigned)(misc & VMX_MISC_PREEMPT_RATE_MASK);
	unsigned cr3 = (unsigned)((misc >> VMX_MISC_CR3_TARGETS_SHIFT) & VMX_MISC_CR3_TARGETS_MASK);
	unsigned msrs = 512u * (unsigned)(((misc >> VMX_MISC_MAX_MSR_LIST_SHIFT) & VMX_MISC_MAX_MSR_LIST_MASK) + 1);
	pr_info("vmxcap: VMX_MISC 0x%016llx\n", (unsigned long long)misc);
	pr_info("vmxcap:   %-40s TSC/2^%u\n", "VMX-preemption timer rate", rate);
	pr_info("vmxcap:   %-40s %s\n", "store EFER.LMA into IA-32e guest", yes_no(misc & VMX_MISC_STORE_LMA));
	pr_info("vmxcap:   %-40s %s\n", "activity state HLT", yes_no(misc & VMX_MISC_ACT_HLT));
	pr_info("vmxcap:   %-40s %s\n", "activity state shutdown", yes_no(misc & VMX_MISC_ACT_SHUTDOWN));
	pr_info("vmxcap:   %-40s %s\n", "activity state wait-for-SIPI", yes_no(misc & VMX_MISC_ACT_WAIT_SIPI));
	pr_info("vmxcap:   %-40s %s\n", "Intel PT in VMX operation", yes_no(misc & VMX_MISC_PT_IN_VMX));
	pr_info("vmxcap:   %-40s %u\n", "CR3-target values", cr3);
	pr_info("vmxcap:   %-40s %u\n", "max MSR-list entries", msrs);
	pr_info("vmxcap:   %-40s %s\n", "VMWRITE to any field", yes_no(misc & VMX_MISC_VMWRITE_ANY));
	pr_info("vmxcap:   %-40s %s\n", "inject with zero instruction length", yes_no(misc & VMX_MISC_INJECT_ZERO_LEN));
	pr_info("vmxcap:   %-40s 0x%x\n", "MSEG revision", (unsigned)(misc >> VMX_MISC_MSEG_REV_SHIFT));
}

void vmx_caps_print(const struct vmx_caps *c)
{
	if (!c->vmx) {
		pr_info("vmxcap: VMX not supported (CPUID.1:ECX.VMX clear)\n");
		return;
	}
	pr_info("vmxcap: IA32_FEATURE_CONTROL %s\n",
		c->feature_control_ok ? "allows VMXON" : "locked with VMX outside SMX disabled");
	pr_info("vmxcap: VMCS revision 0x%x, VMCS size %u, %s control MSRs\n",
		c->revision, c->vmcs_size, c->true_ctls ? "TRUE_*" : "plain");

	print_ctl("pin", &c->pin);
	print_ctl("proc", &c->proc);
	if (c->secondary)
		print_ctl("proc2", &c->proc2);
	else
		pr_info("vmxcap: secondary controls not available\n");
	if (c->tertiary) {
		pr_info("vmxcap: tertiary controls available, IA32_VMX_PROCBASED_CTLS3=0x%016llx\n",
			(unsigned long long)c->proc3_allowed1);
		print_word(find_word("proc3"), 0, c->proc3_allowed1);
	} else {
		pr_info("vmxcap: tertiary controls not available\n");
	}
	print_ctl("exit", &c->exit);
	print_ctl("entry", &c->entry);

	if (c->ept_vpid) {
		pr_info("vmxcap: EPT/VPID capabilities 0x%016llx\n", (unsigned long long)c->ept_vpid);
		for (size_t i = 0; i < ARRAY_SIZE(ept_names); i++)
			pr_info("vmxcap:   %-40s %s\n", ept_names[i].name, yes_no(c->ept_vpid & ept_names[i].mask));
	} else {
		pr_info("vmxcap: EPT/VPID capabilities not available\n");
	}
	if (c->vmfunc)
		pr_info("vmxcap: VM functions 0x%016llx\n", (unsigned long long)c->vmfunc);
	print_misc(c->misc);
	pr_info("vmxcap: CR0 fixed0=0x%016llx fixed1=0x%016llx\n",
		(unsigned long long)c->cr0_fixed0, (unsigned long long)c->cr0_fixed1);
	pr_info("vmxcap: CR4 fixed0=0x%016llx fixed1=0x%016llx\n",
		(unsigned long long)c->cr4_fixed0, (unsigned long long)c->cr4_fixed1);

	pr_info("vmxcap: posted interrupts: %s\n", yes_no(c->posted_intr));
	pr_info("vmxcap: virtual-interrupt delivery: %s\n", yes_no(c->vid));
	pr_info("vmxcap: IPI virtualization: %s\n", yes_no(c->ipiv));
}

/* ---- comparing CPUs ---- */

#define NO_FLAG ((size_t)-1)
static const struct raw_field {
	uint32_t msr;
	const char *name;
	size_t off, has_off;	/* has_off: the bool saying the MSR was read, or NO_FLAG */
} raw_fields[] = {
	{ MSR_IA32_FEATURE_CONTROL, "IA32_FEATURE_CONTROL", offsetof(struct vmx_raw_caps, feature_control), NO_FLAG },
	{ MSR_IA32_VMX_BASIC, "IA32_VMX_BASIC", offsetof(struct vmx_raw_caps, basic), NO_FLAG },
	{ MSR_IA32_VMX_PINBASED_CTLS, "IA32_VMX_PINBASED_CTLS", offsetof(struct vmx_raw_caps, pin), NO_FLAG },
	{ MSR_IA32_VMX_PROCBASED_CTLS, "IA32_VMX_PROCBASED_CTLS", offsetof(struct vmx_raw_caps, proc), NO_FLAG },
	{ MSR_IA32_VMX_EXIT_CTLS, "IA32_VMX_EXIT_CTLS", offsetof(struct vmx_raw_caps, exit), NO_FLAG },
	{ MSR_IA32_VMX_ENTRY_CTLS, "IA32_VMX_ENTRY_CTLS", offsetof(struct vmx_raw_caps, entry), NO_FLAG },
	{ MSR_IA32_VMX_MISC, "IA32_VMX_MISC", offsetof(struct vmx_raw_caps, misc), NO_FLAG },
	{ MSR_IA32_VMX_CR0_FIXED0, "IA32_VMX_CR0_FIXED0", offsetof(struct vmx_raw_caps, cr0_fixed0), NO_FLAG },
	{ MSR_IA32_VMX_CR0_FIXED1, "IA32_VMX_CR0_FIXED1", offsetof(struct vmx_raw_caps, cr0_fixed1), NO_FLAG },
	{ MSR_IA32_VMX_CR4_FIXED0, "IA32_VMX_CR4_FIXED0", offsetof(struct vmx_raw_caps, cr4_fixed0), NO_FLAG },
	{ MSR_IA32_VMX_CR4_FIXED1, "IA32_VMX_CR4_FIXED1", offsetof(struct vmx_raw_caps, cr4_fixed1), NO_FLAG },
	{ MSR_IA32_VMX_VMCS_ENUM, "IA32_VMX_VMCS_ENUM", offsetof(struct vmx_raw_caps, vmcs_enum), NO_FLAG },
	{ MSR_IA32_VMX_PROCBASED_CTLS2, "IA32_VMX_PROCBASED_CTLS2", offsetof(struct vmx_raw_caps, proc2),
	  offsetof(struct vmx_raw_caps, has_proc2) },
	{ MSR_IA32_VMX_EPT_VPID_CAP, "IA32_VMX_EPT_VPID_CAP", offsetof(struct vmx_raw_caps, ept_vpid),
	  offsetof(struct vmx_raw_caps, has_ept_vpid) },
	{ MSR_IA32_VMX_TRUE_PINBASED_CTLS, "IA32_VMX_TRUE_PINBASED_CTLS", offsetof(struct vmx_raw_caps, true_pin),
	  offsetof(struct vmx_raw_caps, has_true) },
	{ MSR_IA32_VMX_TRUE_PROCBASED_CTLS, "IA32_VMX_TRUE_PROCBASED_CTLS", offsetof(struct vmx_raw_caps, true_proc),
	  offsetof(struct vmx_raw_caps, has_true) },
	{ MSR_IA32_VMX_TRUE_EXIT_CTLS, "IA32_VMX_TRUE_EXIT_CTLS", offsetof(struct vmx_raw_caps, true_exit),
	  offsetof(struct vmx_raw_caps, has_true) },
	{ MSR_IA32_VMX_TRUE_ENTRY_CTLS, "IA32_VMX_TRUE_ENTRY_CTLS", offsetof(struct vmx_raw_caps, true_entry),
	  offsetof(struct vmx_raw_caps, has_true) },
	{ MSR_IA32_VMX_VMFUNC, "IA32_VMX_VMFUNC", offsetof(struct vmx_raw_caps, vmfunc),
	  offsetof(struct vmx_raw_caps, has_vmfunc) },
	{ MSR_IA32_VMX_PROCBASED_CTLS3, "IA32_VMX_PROCBASED_CTLS3", offsetof(struct vmx_raw_caps, proc3),
	  offsetof(struct vmx_raw_caps, has_proc3) },
};

static uint64_t field_val(const struct vmx_raw_caps *r, size_t off)
{
	uint64_t v;
	memcpy(&v, (const char *)r + off, sizeof(v));
	return v;
}

static bool field_has(const struct vmx_raw_caps *r, size_t has_off)
{
	return has_off == NO_FLAG || *((const bool *)((const char *)r + has_off));
}

int vmx_caps_compare(int cpu_a, const struct vmx_raw_caps *a, int cpu_b, const struct vmx_raw_caps *b)
{
	int diffs = 0;
	bool vmx_a = a->cpuid1_ecx & CPUID1_ECX_VMX, vmx_b = b->cpuid1_ecx & CPUID1_ECX_VMX;
	if (vmx_a != vmx_b) {
		pr_warn("vmx: CPU %d and CPU %d differ in CPUID.1:ECX.VMX: %d vs %d\n", cpu_a, cpu_b, vmx_a, vmx_b);
		diffs++;
	}
	for (size_t i = 0; i < ARRAY_SIZE(raw_fields); i++) {
		const struct raw_field *f = &raw_fields[i];
		bool ha = field_has(a, f->has_off), hb = field_has(b, f->has_off);
		if (!ha && !hb)
			continue;
		if (ha != hb) {
			pr_warn("vmx: CPU %d and CPU %d differ in %s (MSR 0x%x): %s on CPU %d, absent on CPU %d\n",
				cpu_a, cpu_b, f->name, f->msr, "present", ha ? cpu_a : cpu_b, ha ? cpu_b : cpu_a);
			diffs++;
			continue;
		}
		uint64_t va = field_val(a, f->off), vb = field_val(b, f->off);
		if (va != vb) {
			pr_warn("vmx: CPU %d and CPU %d differ in %s (MSR 0x%x): 0x%016llx vs 0x%016llx\n",
				cpu_a, cpu_b, f->name, f->msr, (unsigned long long)va, (unsigned long long)vb);
			diffs++;
		}
	}
	return diffs;
}
