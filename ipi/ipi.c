/* ICR decoding and delivery over the PID-pointer table (see ipi.h). */
#include "ipi.h"
#include "../apic/vapic.h"

static void count_post(const struct ipi_domain *d, uint32_t vcpu, uint8_t vector, bool notified)
{
	struct ipi_target_stats *t = &d->tstats[vcpu];
	__atomic_fetch_add(&t->posts, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->vec_posts[vector], 1, __ATOMIC_RELAXED);
	if (notified)
		__atomic_fetch_add(&t->notifies, 1, __ATOMIC_RELAXED);
}

static uint32_t vcpu_of(const struct ipi_domain *d, uint32_t apic_id)
{
	return apic_id <= d->last_index ? d->vcpu_of_apic[apic_id] : IPI_NO_VCPU;
}

bool ipi_post(const struct ipi_domain *d, uint32_t self, uint32_t dest, uint8_t vector)
{
	struct pi_desc *pid = pid_table_lookup(d->pid_table, d->last_index, dest);
	uint32_t target = vcpu_of(d, dest);
	if (!pid || target == IPI_NO_VCPU)
		return false;
	/* ON newly set: the target must be told, the sender itself included
	 * (its own notification waits, interrupts off, until its VM entry,
	 * where the CPU processes it). Only the CPU ever takes the PIR: a
	 * notification never finds it empty because software took it first. */
	if (target == self && d->ops.self) {
		d->ops.self(d->ops.ctx, vector);
		count_post(d, target, vector, false);
		return true;
	}
	bool notify = pi_post(pid, vector);
	if (notify)
		d->ops.notify(d->ops.ctx, pid->ndst, pid->nv);
	count_post(d, target, vector, notify);
	return true;
}

enum ipi_result ipi_fast(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st)
{
	/* The conditions under which the CPU virtualizes an ICR write
	 * (SDM Vol. 3C, "IPI Virtualization"): anything else is an APIC-write
	 * VM exit, here the slow path. The CPU also exits for bit 12, whose
	 * handler then ignores it; here it is ignored at once. */
	if ((icr & ICR_X2APIC_RESERVED) || ICR_MODE(icr) != ICR_FIXED || (icr & ICR_LOGICAL) ||
	    ICR_SHORTHAND(icr) != ICR_SH_NONE || ICR_VECTOR(icr) < 16)
		return IPI_SLOW;
	uint32_t dest = ICR_DEST(icr);
	if (!pid_table_lookup(d->pid_table, d->last_index, dest))
		return IPI_SLOW;
	if (!ipi_post(d, self, dest, ICR_VECTOR(icr)))
		return IPI_SLOW;
	st->fast++;
	return IPI_DONE;
}

enum ipi_result ipi_fast_logical(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st)
{
	if ((icr & ICR_X2APIC_RESERVED) || ICR_MODE(icr) != ICR_FIXED || !(icr & ICR_LOGICAL) ||
	    ICR_SHORTHAND(icr) != ICR_SH_NONE || ICR_VECTOR(icr) < 16)
		return IPI_SLOW;
	uint32_t dest = ICR_DEST(icr), base = (dest >> 16) << 4, mask = dest & 0xffff;
	if (dest == ICR_BROADCAST || !mask || (dest >> 16) > 0xfffffffu >> 4)
		return IPI_SLOW;
	for (uint32_t m = mask; m; m &= m - 1)
		if (!pid_table_lookup(d->pid_table, d->last_index, base | (uint32_t)__builtin_ctz(m)))
			return IPI_SLOW;
	for (uint32_t m = mask; m; m &= m - 1)
		ipi_post(d, self, base | (uint32_t)__builtin_ctz(m), ICR_VECTOR(icr));
	st->fast_logical++;
	return IPI_DONE;
}

/* Does vCPU i match the destination of the ICR (no shorthand)? */
static bool dest_match(const struct ipi_domain *d, uint32_t i, uint64_t icr)
{
	uint32_t dest = ICR_DEST(icr);
	if (dest == ICR_BROADCAST)
		return true;
	if (!(icr & ICR_LOGICAL))
		return d->apic_id[i] == dest;
	uint32_t ldr = x2apic_ldr(d->apic_id[i]);
	return (ldr >> 16) == (dest >> 16) && (ldr & dest & 0xffff);
}

static bool in_set(const struct ipi_domain *d, uint32_t self, uint32_t i, uint64_t icr)
{
	switch (ICR_SHORTHAND(icr)) {
	case ICR_SH_SELF:
		return i == self;
	case ICR_SH_ALL:
		return true;
	case ICR_SH_OTHERS:
		return i != self;
	default:
		return dest_match(d, i, icr);
	}
}

/* Delivers one IPI to vCPU i in its delivery mode. */
static void deliver(const struct ipi_domain *d, uint32_t self, uint32_t i, uint64_t icr)
{
	switch (ICR_MODE(icr)) {
	case ICR_FIXED:
	case ICR_LOWEST:
		ipi_post(d, self, d->apic_id[i], ICR_VECTOR(icr));
		break;
	case ICR_NMI:
		d->ops.nmi(d->ops.ctx, i);
		break;
	case ICR_INIT:
		d->ops.init(d->ops.ctx, i);
		break;
	case ICR_SIPI:
		d->ops.sipi(d->ops.ctx, i, ICR_VECTOR(icr));
		break;
	}
}

/* A physical destination that names no vCPU (and is no broadcast) is dropped. */
static bool names_no_vcpu(const struct ipi_domain *d, uint64_t icr)
{
	uint32_t dest = ICR_DEST(icr);
	return ICR_SHORTHAND(icr) == ICR_SH_NONE && !(icr & ICR_LOGICAL) && dest != ICR_BROADCAST &&
	       vcpu_of(d, dest) == IPI_NO_VCPU;
}

enum ipi_result ipi_icr_write(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st)
{
	unsigned mode = ICR_MODE(icr);
	if (icr & ICR_X2APIC_RESERVED) {
		st->refused++;
		return IPI_GP;
	}
	st->slow_mode[mode]++;
	st->slow_shorthand[ICR_SHORTHAND(icr)]++;
	if (icr & ICR_LOGICAL)
		st->slow_logical++;
	if (mode == ICR_SMI || mode == ICR_MODE3 || mode == ICR_MODE7 ||
	    ((mode == ICR_FIXED || mode == ICR_LOWEST) && ICR_VECTOR(icr) < 16)) {
		st->refused++;
		return IPI_DONE;
	}
	/* INIT level de-assert: an xAPIC-era signal with no effect. */
	if (mode == ICR_INIT && !(icr & ICR_LEVEL_ASSERT) && (icr & ICR_TRIGGER_LEVEL)) {
		st->init_deassert++;
		return IPI_DONE;
	}
	if (names_no_vcpu(d, icr)) {
		st->dropped++;
		return IPI_DONE;
	}
	uint32_t hits = 0;
	for (uint32_t i = 0; i < d->nvcpus; i++) {
		if (!in_set(d, self, i, icr))
			continue;
		deliver(d, self, i, icr);
		hits++;
		if (mode == ICR_LOWEST)
			break;       /* one of the set: the first is as good as any */
	}
	if (!hits)
		st->dropped++;
	return IPI_DONE;
}

int64_t ipi_pv_send(const struct ipi_domain *d, uint32_t self, uint64_t bitmap_low, uint64_t bitmap_high,
		    uint64_t min, uint64_t icr, struct ipi_src_stats *st)
{
	unsigned mode = ICR_MODE(icr);
	st->pv_calls++;
	if ((icr & ICR_LOGICAL) || ICR_SHORTHAND(icr) != ICR_SH_NONE ||
	    (mode != ICR_FIXED && mode != ICR_LOWEST && mode != ICR_NMI) ||
	    (mode != ICR_NMI && ICR_VECTOR(icr) < 16)) {
		st->pv_errors++;
		return -KVM_EINVAL;
	}
	int64_t n = 0;
	uint64_t map[2] = { bitmap_low, bitmap_high };
	for (unsigned w = 0; w < 2; w++) {
		for (uint64_t bits = map[w]; bits; bits &= bits - 1) {
			uint64_t id = min + w * 64 + (uint64_t)__builtin_ctzll(bits);
			uint32_t i = id < min || id > d->last_index ? IPI_NO_VCPU : vcpu_of(d, (uint32_t)id);
			if (i == IPI_NO_VCPU) {
				st->dropped++;
				continue;
			}
			if (mode == ICR_NMI)
				d->ops.nmi(d->ops.ctx, i);
			else
				ipi_post(d, self, (uint32_t)id, ICR_VECTOR(icr));
			n++;
		}
	}
	st->pv_targets += (uint64_t)n;
	return n;
}
