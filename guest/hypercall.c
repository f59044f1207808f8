/* Hypercalls. Unknown numbers return -KVM_ENOSYS, as KVM does. */
#include "hypercall.h"
#include "../vmx/vcpu.h"
#include "../vmx/report.h"
#include "../lib/printk.h"

void hypercall(struct vcpu *v)
{
	uint64_t nr = v->regs.rax;
	switch (nr) {
	case HC_HV_REPORT:
		pr_info("hv: exit report requested by the guest on cpu%u\n", v->index);
		report_print("hypercall");
		v->regs.rax = 0;
		break;
	default:
		v->regs.rax = (uint64_t)-KVM_ENOSYS;
		break;
	}
}
