/* The IPI tiers at run time: the domain of all vCPUs over the PID-pointer
 * table (ipi/ipi.c decides), the physical signals it sends, the ICR writes
 * that exit, the PV send-IPI hypercall. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "../apic/lapic.h"
#include "../apic/vapic.h"
#include "../ipi/ipi.h"
#include "../guest/startup.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"

struct ipi_domain virq_domain;
static uint32_t apic_ids[MAX_CPUS];
static struct ipi_target_stats *tstats;
static uint16_t *vcpu_of_apic;

static void op_self(void *ctx, uint8_t vec)
{
	(void)ctx;
	virq_virr_set(vcpus[this_cpu()->index], vec);
}

static void op_notify(void *ctx, uint32_t ndst, uint8_t nv)
{
	(void)ctx;
	lapic_send(ndst, APIC_DM_FIXED | nv);
}

/* A virtual NMI for vCPU i: pending until its next VM entry; a remote vCPU
 * is made to exit by the kick vector. */
static void op_nmi(void *ctx, uint32_t i)
{
	(void)ctx;
	__atomic_fetch_add(&vcpus[i]->nmi_pending, 1, __ATOMIC_SEQ_CST);
	if (i != this_cpu()->index)
		lapic_send(apic_ids[i], APIC_DM_FIXED | KICK_VECTOR);
}

/* INIT and SIPI are recorded for the target (guest/startup.h), which
 * applies them before its next entry. The INIT is sent as well, so that a
 * running vCPU exits at once (VMX turns it into an INIT exit,
 * vmx/virq_startup.c). The SIPI is not (a CPU outside wait-for-SIPI
 * discards it): its target waits for it halted in root mode
 * (virq_startup_wait), and the kick after the record wakes it; a kick that
 * finds it running the guest is an exit that finds nothing to do. */
static void op_init(void *ctx, uint32_t i)
{
	(void)ctx;
	startup_send_init(&vcpus[i]->startup);
	lapic_send(apic_ids[i], APIC_DM_INIT | APIC_LEVEL_ASSERT);
}

static void op_sipi(void *ctx, uint32_t i, uint8_t vector)
{
	(void)ctx;
	startup_send_sipi(&vcpus[i]->startup, vector);
	lapic_send(apic_ids[i], APIC_DM_FIXED | KICK_VECTOR);
}

void virq_ipi_init(uint64_t *pid_table, uint32_t last_index)
{
	vcpu_of_apic = page_alloc(ALIGN_UP((last_index + 1) * sizeof(uint16_t), PAGE_SIZE) / PAGE_SIZE);
	memset(vcpu_of_apic, 0xff, (last_index + 1) * sizeof(uint16_t));
	tstats = page_alloc(ALIGN_UP(ncpus * sizeof *tstats, PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < ncpus; i++) {
		apic_ids[i] = vcpus[i]->apic_id;
		if (apic_ids[i] <= last_index)
			vcpu_of_apic[apic_ids[i]] = (uint16_t)i;
	}
	virq_domain = (struct ipi_domain){
		.pid_table = pid_table, .last_index = last_index, .vcpu_of_apic = vcpu_of_apic,
		.nvcpus = ncpus, .apic_id = apic_ids, .tstats = tstats,
		.ops = { .notify = op_notify, .nmi = op_nmi, .init = op_init, .sipi = op_sipi, .self = op_self },
	};
}

/* An APIC-write exit's qualification "is the page offset of the write
 * access that led to the VM exit" (SDM Vol. 3C, "APIC-Write VM Exits"). */
#define APIC_WRITE_QUAL_OFFSET 0xfffu

/* The trap-like APIC-write exit (SDM Vol. 3C, "APIC-Write VM Exits"): the
 * write is in the virtual-APIC page and its instruction has completed, so
 * no #GP can be injected for it any more. This hypervisor virtualizes the
 * x2APIC mode only (no APIC-access page, vmx/vmcs.c), where two WRMSRs can
 * cause one ("Virtualizing MSR-Based APIC Accesses"): the ICR under IPI
 * virtualization when the CPU did not virtualize the IPI, and SELF IPI with
 * virtual-interrupt delivery when EAX[7:4] is 0 (vectors 0-15, which the CPU
 * leaves to the VMM). The other offsets of "APIC-Write Emulation" come from
 * writes to an APIC-access page, which no vCPU has: counted and ignored. */
void exit_apic_write(struct vcpu *v)
{
	uint32_t off = (uint32_t)v->qual & APIC_WRITE_QUAL_OFFSET;
	if (off == APIC_SELF_IPI) {
		virq_self_ipi(v, (uint8_t)(vapic_get(v->vapic, APIC_SELF_IPI) & APIC_VECTOR_MASK));
		return;
	}
	if (off != APIC_ICR) {
		if (v->apic_write_ignored++ < 4)
			pr_warn("hv: cpu%u: APIC-write exit at offset 0x%x, which no x2APIC write causes: ignored\n",
				v->index, off);
		return;
	}
	/* The CPU already faulted on the ICR's reserved bits (31:20, 17:16,
	 * 13); bit 12 (the xAPIC's read-only delivery status) only kept the
	 * write from being virtualized: ignored, as KVM does. */
	uint64_t icr = *(volatile uint64_t *)(v->vapic + APIC_ICR) & ~(uint64_t)BIT(12);
	if (ipi_fast_logical(&virq_domain, v->index, icr, &v->ipi) == IPI_DONE)
		return;   /* x2APIC cluster mode's unicast: over the PID-pointer table all the same */
	(void)ipi_icr_write(&virq_domain, v->index, icr, &v->ipi);   /* reserved bits (a CPU that did
								       not fault): refused and counted */
}

int virq_icr_write(struct vcpu *v, uint64_t icr)
{
	enum ipi_result r = IPI_SLOW;
	if (vmx_env.tiers_ipi == IPI_FAST) {
		r = ipi_fast(&virq_domain, v->index, icr, &v->ipi);
		if (r == IPI_SLOW)
			r = ipi_fast_logical(&virq_domain, v->index, icr, &v->ipi);
	}
	if (r == IPI_SLOW)
		r = ipi_icr_write(&virq_domain, v->index, icr, &v->ipi);
	if (r == IPI_GP)
		return -1;
	*(volatile uint64_t *)(v->vapic + APIC_ICR) = icr;   /* what a read of the ICR returns */
	return 0;
}

int64_t virq_pv_send_ipi(struct vcpu *v, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr)
{
	return ipi_pv_send(&virq_domain, v->index, lo, hi, min, icr, &v->ipi);
}

int64_t virq_vec_posts(uint32_t apic_id, uint32_t vector)
{
	if (vector > 255 || apic_id > virq_domain.last_index || vcpu_of_apic[apic_id] == IPI_NO_VCPU)
		return -1;
	return (int64_t)__atomic_load_n(&tstats[vcpu_of_apic[apic_id]].vec_posts[vector], __ATOMIC_RELAXED);
}

void virq_served(struct vcpu *v, struct virq_served *out)
{
	const struct ipi_target_stats *t = tstats ? &tstats[v->index] : NULL;
	out->posts = t ? __atomic_load_n(&t->posts, __ATOMIC_RELAXED) : 0;
	out->notifies = t ? __atomic_load_n(&t->notifies, __ATOMIC_RELAXED) : 0;
	out->timer_posts = __atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED);
	out->pv_eois = __atomic_load_n(&v->sw_pv_eois, __ATOMIC_RELAXED);
}

/* How this vCPU's IPIs were served, and what it was posted. */
void virq_ipi_report(struct vcpu *v)
{
	struct ipi_src_stats *s = &v->ipi;
	struct ipi_target_stats *t = &tstats[v->index];
	uint32_t i = v->index;
	pr_info("hvstat: cpu=%u ipi fast=%llu fixed=%llu lowest=%llu nmi=%llu init=%llu sipi=%llu self=%llu all=%llu others=%llu logical=%llu refused=%llu init_deassert=%llu\n",
		i, (unsigned long long)s->fast, (unsigned long long)s->slow_mode[ICR_FIXED],
		(unsigned long long)s->slow_mode[ICR_LOWEST], (unsigned long long)s->slow_mode[ICR_NMI],
		(unsigned long long)s->slow_mode[ICR_INIT], (unsigned long long)s->slow_mode[ICR_SIPI],
		(unsigned long long)s->slow_shorthand[ICR_SH_SELF], (unsigned long long)s->slow_shorthand[ICR_SH_ALL],
		(unsigned long long)s->slow_shorthand[ICR_SH_OTHERS], (unsigned long long)s->slow_logical,
		(unsigned long long)s->refused, (unsigned long long)s->init_deassert);
	pr_info("hvstat: cpu=%u ipi_dropped=%llu\n", i, (unsigned long long)s->dropped);
	if (v->apic_errors || v->apic_write_ignored)
		pr_info("hvstat: cpu=%u apic errors=%llu apic_write_ignored=%llu\n", i,
			(unsigned long long)v->apic_errors, (unsigned long long)v->apic_write_ignored);
	if (s->fast_logical)
		pr_info("hvstat: cpu=%u ipi fast_logical=%llu\n", i, (unsigned long long)s->fast_logical);
	if (vmx_env.cfg.sw_apic)
		pr_info("hvstat: cpu=%u swapic injected=%llu eoi_exits=%llu pv_eois=%llu pv_armed=%llu pv_eoi=%s\n", i,
			(unsigned long long)v->sw_injected, (unsigned long long)v->sw_eoi_exits,
			(unsigned long long)v->sw_pv_eois, (unsigned long long)v->sw_pv_armed, v->pv_eoi_msr & 1 ? "on" : "off");
	if (vmx_env.cfg.sw_apic && v->sw_eoi_empty)
		pr_info("hvstat: cpu=%u swapic eoi_empty=%llu\n", i, (unsigned long long)v->sw_eoi_empty);
	if (s->pv_calls)
		pr_info("hvstat: cpu=%u pv_ipi calls=%llu targets=%llu errors=%llu\n", i, (unsigned long long)s->pv_calls,
			(unsigned long long)s->pv_targets, (unsigned long long)s->pv_errors);
	pr_info("hvstat: cpu=%u posted=%llu notified=%llu notify_exits=%llu timer_posts=%llu hlt_resumes=%llu hlt_skipped=%llu\n", i,
		(unsigned long long)t->posts, (unsigned long long)t->notifies, (unsigned long long)v->notify_in_root,
		(unsigned long long)v->timer_posts, (unsigned long long)v->hlt_resumes, (unsigned long long)v->hlt_skipped);
}
