/* Hypercalls. Unknown numbers return -KVM_ENOSYS, as KVM does. */
#include "hypercall.h"
#include "../vmx/vcpu.h"
#include "../vmx/virq.h"
#include "../vmx/vmcs_ops.h"
#include "../vmx/report.h"
#include "../lib/printk.h"
#include "../lib/percpu.h"

static bool user_mode(void)
{
	return (vmcs_read(VMCS_GUEST_SS_AR) >> 5 & 3) != 0;
}

static struct vcpu *vcpu_by_apic_id(uint64_t id)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i] && vcpus[i]->apic_id == id)
			return vcpus[i];
	return NULL;
}

void hypercall(struct vcpu *v)
{
	uint64_t nr = v->regs.rax;
	bool virt = vmx_env.cfg.irq_model == IRQ_VIRTUAL;
	struct vcpu *t;
	switch (nr) {
	case HC_HV_REPORT:
		pr_info("hv: exit report requested by the guest on cpu%u\n", v->index);
		report_print("hypercall");
		v->regs.rax = 0;
		break;
	case KVM_HC_SEND_IPI_NR:
		/* Only where advertised (ipi=pv), only from the kernel, as KVM. */
		if (!virt || vmx_env.tiers_ipi != IPI_PV)
			v->regs.rax = (uint64_t)-KVM_ENOSYS;
		else if (user_mode())
			v->regs.rax = (uint64_t)-KVM_EPERM;
		else
			v->regs.rax = (uint64_t)virq_pv_send_ipi(v, v->regs.rbx, v->regs.rcx, v->regs.rdx, v->regs.rsi);
		break;
	case HC_HV_IPI_POSTS: {
		int64_t n = virt ? virq_vec_posts((uint32_t)v->regs.rbx, (uint32_t)v->regs.rcx) : -KVM_ENOSYS;
		if (v->regs.rbx > 0xffffffffull || v->regs.rcx > 255)
			n = -KVM_EINVAL;
		v->regs.rax = (uint64_t)(n == -1 ? -KVM_EINVAL : n);
		break;
	}
	case HC_HV_EXITS:
		t = vcpu_by_apic_id(v->regs.rbx);
		v->regs.rax = t ? __atomic_load_n(&t->exits_total, __ATOMIC_RELAXED) : (uint64_t)-KVM_EINVAL;
		break;
	default:
		v->regs.rax = (uint64_t)-KVM_ENOSYS;
		break;
	}
}
