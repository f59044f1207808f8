/* VMXON and VMXOFF (SDM Vol. 3C, "Enabling and Entering VMX Operation"). */
#include "vmxon.h"
#include "vmx_defs.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/percpu.h"

#define FC_LOCK           BIT(0)
#define FC_VMX_OUTSIDE_SMX BIT(2)

static struct vmx_raw_caps raw_caps[MAX_CPUS];   /* by CPU index */

void vmx_read_raw_caps(struct vmx_raw_caps *r)
{
	uint32_t a, b, c, d;
	memset(r, 0, sizeof *r);
	cpuid_count(1, 0, &a, &b, &c, &d);
	r->cpuid1_ecx = c;
	if (!(c & BIT(5)))
		return;
	rdmsr_safe(MSR_IA32_FEATURE_CONTROL, &r->feature_control);
	if (!rdmsr_safe(MSR_IA32_VMX_BASIC, &r->basic))
		return;
	rdmsr_safe(MSR_IA32_VMX_PINBASED_CTLS, &r->pin);
	rdmsr_safe(MSR_IA32_VMX_PROCBASED_CTLS, &r->proc);
	rdmsr_safe(MSR_IA32_VMX_EXIT_CTLS, &r->exit);
	rdmsr_safe(MSR_IA32_VMX_ENTRY_CTLS, &r->entry);
	rdmsr_safe(MSR_IA32_VMX_MISC, &r->misc);
	rdmsr_safe(MSR_IA32_VMX_CR0_FIXED0, &r->cr0_fixed0);
	rdmsr_safe(MSR_IA32_VMX_CR0_FIXED1, &r->cr0_fixed1);
	rdmsr_safe(MSR_IA32_VMX_CR4_FIXED0, &r->cr4_fixed0);
	rdmsr_safe(MSR_IA32_VMX_CR4_FIXED1, &r->cr4_fixed1);
	rdmsr_safe(MSR_IA32_VMX_VMCS_ENUM, &r->vmcs_enum);
	uint64_t proc_allowed1 = r->proc >> 32;
	if (proc_allowed1 & VMX_PROC_ACTIVATE_SECONDARY) {
		r->has_proc2 = rdmsr_safe(MSR_IA32_VMX_PROCBASED_CTLS2, &r->proc2);
		uint64_t proc2_allowed1 = r->proc2 >> 32;
		if (proc2_allowed1 & (VMX_PROC2_EPT | VMX_PROC2_VPID))
			r->has_ept_vpid = rdmsr_safe(MSR_IA32_VMX_EPT_VPID_CAP, &r->ept_vpid);
		if (proc2_allowed1 & VMX_PROC2_VMFUNC)
			r->has_vmfunc = rdmsr_safe(MSR_IA32_VMX_VMFUNC, &r->vmfunc);
	}
	if (r->basic & VMX_BASIC_TRUE_CTLS) {
		r->has_true = rdmsr_safe(MSR_IA32_VMX_TRUE_PINBASED_CTLS, &r->true_pin) &&
			      rdmsr_safe(MSR_IA32_VMX_TRUE_PROCBASED_CTLS, &r->true_proc) &&
			      rdmsr_safe(MSR_IA32_VMX_TRUE_EXIT_CTLS, &r->true_exit) &&
			      rdmsr_safe(MSR_IA32_VMX_TRUE_ENTRY_CTLS, &r->true_entry);
		if (r->has_true)
			proc_allowed1 = r->true_proc >> 32;
	}
	if (proc_allowed1 & VMX_PROC_ACTIVATE_TERTIARY)
		r->has_proc3 = rdmsr_safe(MSR_IA32_VMX_PROCBASED_CTLS3, &r->proc3);
}

void vmx_probe_this_cpu(void)
{
	vmx_read_raw_caps(&raw_caps[this_cpu()->index]);
}

const struct vmx_raw_caps *vmx_raw_caps_of(uint32_t index)
{
	return &raw_caps[index];
}

int vmx_on(const struct vmx_caps *c, void *region, char *msg, size_t len)
{
	uint64_t fc = rdmsr(MSR_IA32_FEATURE_CONTROL);
	if (!(fc & FC_LOCK)) {
		wrmsr(MSR_IA32_FEATURE_CONTROL, fc | FC_LOCK | FC_VMX_OUTSIDE_SMX);
		fc = rdmsr(MSR_IA32_FEATURE_CONTROL);
	}
	if (!(fc & FC_VMX_OUTSIDE_SMX)) {
		snprintf(msg, len, "VMX disabled by firmware (IA32_FEATURE_CONTROL=0x%llx)", (unsigned long long)fc);
		return -1;
	}
	uint64_t cr0 = (read_cr0() | c->cr0_fixed0) & c->cr0_fixed1;
	uint64_t cr4 = ((read_cr4() | X86_CR4_VMXE) | c->cr4_fixed0) & c->cr4_fixed1;
	write_cr0(cr0);
	write_cr4(cr4);
	*(uint32_t *)region = c->revision;
	uint64_t pa = (uint64_t)(uintptr_t)region;
	uint8_t cf, zf;
	__asm__ volatile("vmxon %2; setc %0; setz %1" : "=r"(cf), "=r"(zf) : "m"(pa) : "cc", "memory");
	if (cf || zf) {
		write_cr4(read_cr4() & ~X86_CR4_VMXE);
		snprintf(msg, len, "VMXON failed (%s)", cf ? "VMfailInvalid" : "VMfailValid");
		return -1;
	}
	snprintf(msg, len, "VMXON ok (revision 0x%x, region 0x%llx)", c->revision, (unsigned long long)pa);
	return 0;
}

void vmx_off(void)
{
	__asm__ volatile("vmxoff" ::: "cc", "memory");
	write_cr4(read_cr4() & ~X86_CR4_VMXE);
}
