/* The guest's virtual x2APIC at run time (apic/ decides): the register
 * writes that exit, its EOIs and the level-triggered vectors behind them,
 * and the software x2APIC (eoi=pv) with KVM's PV EOI. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../apic/lapic.h"
#include "../apic/vapic.h"
#include "../apic/swapic.h"
#include "../apic/level.h"
#include "../iommu/iommu.h"
#include "../lib/memmap.h"
#include "../lib/msr.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"

void virq_write_eoi_exit(struct vcpu *v)
{
	if (vmx_env.cfg.sw_apic)
		return;   /* no VID: every EOI reaches the hypervisor anyway */
	vmcs_write(VMCS_EOI_EXIT_BITMAP0, v->eoi_exit[0]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP1, v->eoi_exit[1]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP2, v->eoi_exit[2]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP3, v->eoi_exit[3]);
}

static void vtmr(struct vcpu *v, uint8_t vec, bool level)
{
	uint32_t off = APIC_TMR + 0x10 * (vec / 32), w = vapic_get(v->vapic, off);
	vapic_set(v->vapic, off, level ? w | BIT(vec % 32) : w & ~BIT(vec % 32));
}

/* A level-triggered device vector keeps its physical in-service bit until
 * the guest's EOI (EOI-exit bitmap), so the line is not sampled again
 * before the device is serviced: no storm, nothing lost. The in-flight
 * vectors are the stack the physical ISR is (apic/level.h). The guest's
 * TMR shows it as level, as the local APIC's would (SDM Vol. 3A, "Trigger
 * Mode Register": set on acceptance of a level-triggered interrupt, cleared
 * on acceptance of an edge-triggered one); Linux's IOAPIC code reads it. */
void virq_level_accept(struct vcpu *v, uint8_t vec)
{
	level_accept(&v->level, vec);
	vtmr(v, vec, true);
	if (!(v->eoi_exit[vec / 64] & BIT(vec % 64))) {
		v->eoi_exit[vec / 64] |= BIT(vec % 64);
		virq_write_eoi_exit(v);
	}
}

void virq_edge_accept(struct vcpu *v, uint8_t vec)
{
	vtmr(v, vec, false);
}

/* The guest's EOI of vec (an EOI-exit, an EOI write or its PV EOI on the
 * software x2APIC): a level-triggered vector also ends at the physical
 * APIC, once every higher in-flight one has (a physical EOI retires the
 * highest in-service vector). */
void virq_level_eoi_done(struct vcpu *v, int vec)
{
	for (unsigned n = level_guest_eoi(&v->level, vec); n; n--)
		lapic_eoi();
}

/* The guest's EOI of a vector in the EOI-exit bitmap (SDM Vol. 3C, "EOI
 * Virtualization": the exit is trap-like, the virtual EOI is done). */
void exit_virtualized_eoi(struct vcpu *v)
{
	virq_level_eoi_done(v, (uint8_t)v->qual);
}

/* An error this vCPU's APIC detected: collected for its next ESR write,
 * and the error interrupt LVT Error asks for. */
static void apic_error(struct vcpu *v, uint32_t esr_bits)
{
	v->apic_errors++;
	int vec = vapic_error(v->vapic, &v->esr_pending, esr_bits);
	if (vec >= 0)
		virq_virr_set(v, (uint8_t)vec);
}

/* SDM Vol. 3A, "Error Handling": a write to SELF IPI with an illegal vector
 * sets "Send Illegal Vector"; the interrupt is not sent (no IRR bit below 16). */
void virq_self_ipi(struct vcpu *v, uint8_t vec)
{
	if (vec < APIC_FIRST_LEGAL_VECTOR)
		apic_error(v, APIC_ESR_SEND_ILLEGAL_VECTOR);
	else
		virq_virr_set(v, vec);
}

/* The guest's PV EOI word, if it lies in guest RAM (checked at the MSR
 * write; identity EPT: the host reaches it at the same address). */
static volatile uint32_t *pv_eoi_word(struct vcpu *v)
{
	return v->pv_eoi_msr & 1 ? (volatile uint32_t *)(uintptr_t)(v->pv_eoi_msr & ~3ull) : NULL;
}

/* The software x2APIC's pending work: the descriptor's PIR into the IRR
 * (posted-interrupt processing is off), PPR recomputed; returns the vector
 * to deliver, or -1. */
int virq_sw_pending(struct vcpu *v)
{
	vapic_take_posted(v->vapic, v->pid);
	swapic_update_ppr(v->vapic);
	return swapic_deliverable(v->vapic);
}

/* The software x2APIC before each entry: the guest's PV EOI (if it took
 * the flag), the descriptor's PIR into the IRR (posted-interrupt processing
 * is off), then the highest deliverable vector injected as an external
 * interrupt when the guest can take one, else interrupt-window exiting.
 * After an injection with nothing else requested, the PV EOI flag is armed
 * (KVM's rule). */
void virq_sw_before_entry(struct vcpu *v)
{
	volatile uint32_t *word = pv_eoi_word(v);
	if (word && v->pv_eoi_armed) {
		int vec = swapic_pv_eoi_sync(v->vapic, word, &v->pv_eoi_armed);
		if (vec >= 0) {
			v->sw_pv_eois++;
			virq_level_eoi_done(v, vec);
		}
	}
	int vec = virq_sw_pending(v);
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	bool busy = vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID;
	if (vec < 0) {
		if (!virq_window_wanted(v))
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
	} else if (!busy && virq_guest_interruptible()) {
		swapic_accept(v->vapic, (uint8_t)vec);
		vmcs_write(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | (uint32_t)vec);
		if (vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
		v->sw_injected++;
		if (!virq_window_wanted(v))
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
		if (word && swapic_pv_eoi_arm(v->vapic, word, level_inflight(&v->level, (uint8_t)vec))) {
			v->pv_eoi_armed = true;
			v->sw_pv_armed++;
		}
	} else {
		proc |= VMX_PROC_INT_WINDOW_EXITING;   /* exits as soon as the guest can take it */
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

/* KVM's MSR_KVM_PV_EOI_EN (Documentation/virt/kvm/x86/msr.rst): bit 0
 * enables, bit 1 is reserved, bits 63:2 the 4-byte aligned guest-physical
 * address of the word; it must be guest RAM. Only on the software x2APIC,
 * where CPUID advertises it. */
#define MSR_KVM_PV_EOI_EN 0x4b564d04u

static int pv_eoi_msr_write(struct vcpu *v, uint64_t val)
{
	if (val & BIT(1))
		return -1;
	uint64_t gpa = val & ~3ull;
	if ((val & 1) && memmap_type_at(vmx_env.mem, gpa) != MEM_USABLE)
		return -1;
	v->pv_eoi_msr = val;
	v->pv_eoi_armed = false;
	return 0;
}

/* The guest's LVTPC carried out on the physical one of its vCPU's CPU (this
 * exit runs there): its PMU's overflow then raises the NMI it asked for. */
static void lvtpc_carry(struct vcpu *v)
{
	bool refused;
	uint32_t phys = vapic_lvtpc_physical(vapic_get(v->vapic, APIC_LVT_PMC), &refused);
	if (refused && !v->lvtpc_refused++)
		pr_warn("virq: cpu%u: the guest's LVTPC asks delivery mode %u: only NMI is carried out, the physical entry stays masked\n",
			v->index, (vapic_get(v->vapic, APIC_LVT_PMC) >> 8) & 7);
	lapic_write_lvtpc(phys);
	v->lvtpc_phys = phys;
	v->lvtpc_writes++;
}

/* The guest's LVT CMCI or thermal entry carried out on its CPU's (where
 * the local APIC has it): a corrected machine-check or thermal event then
 * interrupts with the guest's vector, which the external-interrupt exit
 * re-posts to the guest as any device vector; the hypervisor's own vectors,
 * those below 32 and other delivery modes are refused (vapic.h). */
static void lvt_fixed_carry(struct vcpu *v, uint32_t off)
{
	unsigned k = off == APIC_LVT_CMCI ? 0 : 1;
	if (lapic_max_lvt() < (k ? 5u : 6u))
		return;                           /* no such entry on this CPU */
	uint64_t host[4] = { 0 };
	const uint8_t own[] = { HOST_TIMER_VECTOR, KICK_VECTOR, CONSOLE_VECTOR, (uint8_t)vmx_env.cfg.posted_intr_nv,
				IOMMU_FAULT_VECTOR, 0xff };
	for (unsigned i = 0; i < sizeof own; i++)
		host[own[i] / 64] |= 1ull << (own[i] % 64);
	bool refused;
	uint32_t g = vapic_get(v->vapic, off), phys = vapic_lvt_fixed_physical(g, host, &refused);
	if (refused && !v->lvt_refused[k]++)
		pr_warn("virq: cpu%u: the guest's LVT %s 0x%x is not carried out (fixed delivery of a vector from 0x20 the hypervisor does not own): the physical entry stays masked\n",
			v->index, k ? "thermal" : "CMCI", g);
	lapic_write_lvt(off, phys);
	v->lvt_phys[k] = phys;
	v->lvt_writes[k]++;
}

int virq_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	if (msr == MSR_KVM_PV_EOI_EN)
		return vmx_env.cfg.sw_apic ? pv_eoi_msr_write(v, val) : -1;
	int r = virq_timer_wrmsr(v, msr, val);
	if (r <= 0)
		return r;
	if (msr < 0x800 || msr > 0x8ff)
		return 1;
	uint32_t off = APIC_OFF(msr);
	if (off == APIC_ICR)
		return virq_icr_write(v, val);
	if (val >> 32)
		return -1;
	switch (off) {
	case APIC_EOI:
		/* The software x2APIC's EOI (with VID the write never exits). */
		if (val)
			return -1;
		if (vmx_env.cfg.sw_apic) {
			v->sw_eoi_exits++;
			int vec = swapic_eoi(v->vapic);
			if (vec < 0)
				v->sw_eoi_empty++;   /* nothing in service: an 8259 vector's EOI, or a stray one */
			virq_level_eoi_done(v, vec);
		}
		return 0;
	case APIC_SELF_IPI:
		/* The software x2APIC's (with VID the write exits only for an
		 * illegal vector: exit_apic_write). */
		if (val & ~(uint64_t)APIC_VECTOR_MASK)
			return -1;
		virq_self_ipi(v, (uint8_t)val);
		return 0;
	case APIC_ESR:
		return vapic_esr_write(v->vapic, &v->esr_pending, val);
	default:
		if (vapic_write(v->vapic, msr, val))
			return -1;
		if (off == APIC_SVR) { /* a software disable masked the LVTs: the timer's too, and the CPU's */
			spin_lock(&v->timer_lock);
			v->timer.lvt = vapic_get(v->vapic, APIC_LVT_TIMER);
			spin_unlock(&v->timer_lock);
			virq_timer_svr_written(v);
		}
		if (off == APIC_TPR && vmx_env.cfg.sw_apic)
			swapic_update_ppr(v->vapic);
		if (off == APIC_LVT_PMC || off == APIC_SVR)
			lvtpc_carry(v);
		if (off == APIC_LVT_CMCI || off == APIC_SVR)
			lvt_fixed_carry(v, APIC_LVT_CMCI);
		if (off == APIC_LVT_THERM || off == APIC_SVR)
			lvt_fixed_carry(v, APIC_LVT_THERM);
		return 0;
	}
}

int virq_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	if (msr == MSR_KVM_PV_EOI_EN) {
		if (!vmx_env.cfg.sw_apic)
			return -1;
		*val = v->pv_eoi_msr;
		return 0;
	}
	if (msr == MSR_IA32_TSC_DEADLINE) {
		*val = __atomic_load_n(&v->timer.tsc_deadline, __ATOMIC_SEQ_CST);
		return 0;
	}
	if (msr < 0x800 || msr > 0x8ff)
		return 1;
	if (!vapic_readable(msr))
		return -1;
	uint32_t off = APIC_OFF(msr);
	if (off == APIC_TMCCT) {
		spin_lock(&v->timer_lock);
		*val = vtimer_read_tmcct(&v->timer, rdtsc());
		spin_unlock(&v->timer_lock);
	}
	else if (off == APIC_ICR)
		*val = *(volatile uint64_t *)(v->vapic + APIC_ICR);
	else
		*val = vapic_get(v->vapic, off);
	return 0;
}
