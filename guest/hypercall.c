/* Hypercalls. Unknown numbers return -KVM_ENOSYS, as KVM does. */
#include "hypercall.h"

#define ERR(e) ((uint64_t)-(int64_t)(e))

uint64_t hypercall(const struct hc_ops *ops, void *ctx, uint32_t cpu, const struct hc_call *c)
{
	int64_t n;
	switch (c->nr) {
	case HC_HV_REPORT:
		if (!ops->report)
			return ERR(KVM_ENOSYS);
		if (c->user) {
			static uint64_t user_done_us;
			static bool any;
			if (any && c->now_us - user_done_us < HC_USER_REPORT_INTERVAL_US)
				return ERR(KVM_EPERM);
			any = true;
			user_done_us = ops->report(cpu);
			return 0;
		}
		ops->report(cpu);
		return 0;
	case KVM_HC_SEND_IPI_NR:
		/* Only where advertised (ipi=pv), only from the kernel, as KVM. */
		if (!ops->pv_send_ipi)
			return ERR(KVM_ENOSYS);
		if (c->user)
			return ERR(KVM_EPERM);
		return (uint64_t)ops->pv_send_ipi(ctx, c->a0, c->a1, c->a2, c->a3);
	case HC_HV_IPI_POSTS:
		if (!ops->vec_posts)
			return ERR(ops->posts_by_cpu ? KVM_EOPNOTSUPP : KVM_ENOSYS);
		if (c->a0 > 0xffffffffull || c->a1 > 255)
			return ERR(KVM_EINVAL);
		n = ops->vec_posts((uint32_t)c->a0, (uint32_t)c->a1);
		return n < 0 ? ERR(KVM_EINVAL) : (uint64_t)n;
	case HC_HV_VERDICT:
		if (!ops->verdict)
			return ERR(KVM_ENOSYS);
		if (c->a0 > 1)
			return ERR(KVM_EINVAL);
		ops->verdict(cpu, c->a0 == 1);
		return 0;
	case HC_HV_EXITS_OF:
		if (!ops->exits_of)
			return ERR(KVM_ENOSYS);
		n = c->a0 > 0xffffffffull || c->a1 > 0xffff ? -1 : ops->exits_of((uint32_t)c->a0, (uint32_t)c->a1);
		return n < 0 ? ERR(KVM_EINVAL) : (uint64_t)n;
	case HC_HV_EXITS:
		if (!ops->exits)
			return ERR(KVM_ENOSYS);
		n = c->a0 > 0xffffffffull ? -1 : ops->exits((uint32_t)c->a0);
		return n < 0 ? ERR(KVM_EINVAL) : (uint64_t)n;
	case HC_HV_BOCHSTEST:
		if (!ops->bochs_test)
			return ERR(KVM_ENOSYS);
		if (c->user)
			return ERR(KVM_EPERM);
		return ops->bochs_test(ctx, c->a0) < 0 ? ERR(KVM_EINVAL) : 0;
	default:
		return ERR(KVM_ENOSYS);
	}
}
