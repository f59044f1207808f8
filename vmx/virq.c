/* The virtual interrupt model at run time (see virq.h): the vCPU's
 * interrupt state from its start to each VM entry, the exits that bring
 * interrupts in (external interrupts, NMIs, the 8259's ExtINT), HLT. The
 * tiers' own run time is beside: virq_apic.c (EOIs, level-triggered
 * vectors, the x2APIC registers), virq_ipi.c, virq_timer.c. */
#include "virq.h"
#include "virq_int.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../apic/lapic.h"
#include "../apic/vapic.h"
#include "../apic/swapic.h"
#include "../apic/wake.h"
#include "../apic/pi.h"
#include "../guest/startup.h"
#include "../ipi/ipi.h"
#include "../timer/vtimer.h"
#include "../iommu/iommu.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"

#define APIC_VERSION_EOI_BCAST_SUPPRESS BIT(24)

/* RVI (the guest interrupt status's low byte) up to vec, if below it. */
void virq_rvi_raise(uint8_t vec)
{
	uint16_t status = (uint16_t)vmcs_read(VMCS_GUEST_INTR_STATUS);
	if (vec > (status & 0xff))
		vmcs_write(VMCS_GUEST_INTR_STATUS, (status & 0xff00) | vec);
}

/* A vector for the vCPU running here, in root mode: straight into its
 * virtual IRR, RVI raised; the CPU evaluates it at the VM entry. Measured
 * under Bochs 3.0: a self-notification sent in root mode (interrupts off)
 * stayed pending in the physical IRR after the entry, unrecognized for tens
 * of milliseconds, and with the notification vector pending every lower
 * device vector (the guest's timer, 0x30) was refused by the local APIC:
 * the boot CPU lost its ticks and hung. The virtual-APIC page belongs to
 * this CPU while it is in root mode, so no notification is needed. */
void virq_virr_set(struct vcpu *v, uint8_t vec)
{
	swapic_request(v->vapic, vec);
	if (!vmx_env.cfg.sw_apic)   /* the software x2APIC injects it before the entry */
		virq_rvi_raise(vec);
}

void virq_test_virr(struct vcpu *v, uint8_t vec)
{
	virq_virr_set(v, vec);
}

void virq_post_self(struct vcpu *v, uint8_t vec)
{
	ipi_post(&virq_domain, v->index, v->apic_id, vec);
}

void virq_init(uint64_t *pid_table, uint32_t last_index)
{
	virq_ipi_init(pid_table, last_index);
}

static uint32_t guest_apic_version(void)
{
	/* The physical version, without EOI-broadcast suppression: the guest's
	 * EOIs of level-triggered vectors are forwarded as broadcast EOIs. */
	return (uint32_t)rdmsr(0x803) & ~APIC_VERSION_EOI_BCAST_SUPPRESS;
}

void virq_vcpu_init(struct vcpu *v)
{
	vapic_reset(v->vapic, v->apic_id, guest_apic_version());
	virq_timer_init(v);
	if (vmx_env.cfg.sw_apic) {
		swapic_update_ppr(v->vapic);
		v->pv_eoi_msr = 0;
		v->pv_eoi_armed = false;
	} else {
		vmcs_write(VMCS_GUEST_INTR_STATUS, 0);
	}
}

static void eoi_exit_default(struct vcpu *v)
{
	/* eoi=trap: every EOI exits (an all-ones EOI-exit bitmap). */
	memset(v->eoi_exit, vmx_env.cfg.eoi_trap ? 0xff : 0, sizeof v->eoi_exit);
	virq_write_eoi_exit(v);
}

/* INIT (SDM Vol. 3A, "Local APIC State After an INIT Reset"): the vCPU's
 * whole interrupt state goes, not only its virtual APIC: the level vectors
 * it holds in the physical ISR are EOId there (else they block their class
 * for good), pending NMIs and 8259 vectors, the posted vectors and the
 * notification, the EOI-exit bitmap, RVI/SVI, the CPU's APIC timer (its
 * fields, tertiary bit 8, IA32_TSC_DEADLINE intercepted) and anything
 * queued for injection; nothing is injected in wait-for-SIPI. */
void virq_posted_drop(struct vcpu *v)
{
	for (unsigned w = 0; w < 4; w++)
		__atomic_store_n(&v->pid->pir[w], 0, __ATOMIC_SEQ_CST);
	__atomic_fetch_and(&v->pid->control, (uint16_t)~PI_ON, __ATOMIC_SEQ_CST);
}

void virq_vcpu_reset(struct vcpu *v)
{
	__atomic_store_n(&v->nmi_pending, 0, __ATOMIC_SEQ_CST);
	memset(v->pic_pending, 0, sizeof v->pic_pending);
	memset(&v->events, 0, sizeof v->events);
	vmcs_write(VMCS_ENTRY_INTR_INFO, 0);
	vmcs_write(VMCS_PROC_CONTROLS, vmcs_read(VMCS_PROC_CONTROLS) &
		   ~(uint64_t)(VMX_PROC_NMI_WINDOW_EXITING | VMX_PROC_INT_WINDOW_EXITING));
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	for (unsigned n = level_reset(&v->level); n; n--)
		lapic_eoi();
	virq_posted_drop(v);
	eoi_exit_default(v);
	v->hlt_wanted = false;
	v->esr_pending = 0;   /* the ESR after INIT is 0, with nothing collected */
	virq_vcpu_init(v);   /* the APIC-timer fields too (virq_timer_init) */
}

void virq_vcpu_start(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	virq_vcpu_init(v);
	eoi_exit_default(v);
	/* LINT0 masked: the firmware leaves it in ExtINT (virtual-wire) mode, so
	 * the 8259's interrupts would arrive as ordinary vectors, be delivered
	 * through the virtual APIC into its ISR, and never be EOId by a guest
	 * that acknowledges them at the 8259: measured, the PIT's vector 0x30
	 * stayed in service and blocked every lower vector (the serial port's
	 * among them). The guest's LINT0 is the virtual one; its devices go
	 * through the IOAPIC. */
	wrmsr(0x835, APIC_LVT_MASKED);
	/* The host's own timer, in TSC-deadline mode, serves the guest's
	 * (timer=posted without a housekeeping CPU, timer=trap). */
	wrmsr(0x832, HOST_TIMER_VECTOR | (VTIMER_TSC_DEADLINE << 17));
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	v->host_deadline = 0;
	if (vmx_env.cfg.pin & VMX_PIN_PREEMPTION_TIMER)
		virq_preempt_write(v, 0xffffffffull);
}

static void inject_nmi(struct vcpu *v)
{
	uint32_t intr = (uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY);
	bool busy = vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID;
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	if (!busy && !(intr & (INTR_BLOCK_NMI | INTR_BLOCK_STI_MOVSS))) {
		__atomic_fetch_sub(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
		vmcs_write(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_NMI | 2);
		v->nmis_injected++;
		proc &= ~VMX_PROC_NMI_WINDOW_EXITING;
	} else if (vmx_env.cfg.pin & VMX_PIN_VIRTUAL_NMIS) {
		proc |= VMX_PROC_NMI_WINDOW_EXITING;   /* exits as soon as the guest can take it */
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

void virq_pic_queue(struct vcpu *v, uint8_t vec)
{
	v->pic_pending[vec / 64] |= BIT(vec % 64);
}

bool virq_pic_pending(const struct vcpu *v)
{
	return (v->pic_pending[0] | v->pic_pending[1] | v->pic_pending[2] | v->pic_pending[3]) != 0;
}

bool virq_window_wanted(const struct vcpu *v)
{
	return virq_pic_pending(v) || v->at_window;
}

bool virq_guest_interruptible(void)
{
	return (vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)) &&
	       !((uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY) & INTR_BLOCK_STI_MOVSS);
}

/* if0_defer: an interrupt held back while the guest had IF = 0 (the
 * console's, vmx/vconsole.c) is raised at its interrupt window. */
static void run_at_window(struct vcpu *v)
{
	void (*fn)(struct vcpu *) = v->at_window;
	v->at_window = NULL;
	fn(v);
}

static void window_work(struct vcpu *v)
{
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	if (virq_guest_interruptible()) {
		run_at_window(v);
		if (!virq_window_wanted(v))
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
	} else {
		proc |= VMX_PROC_INT_WINDOW_EXITING;
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

/* The next 8259 vector: the lowest, the 8259's highest priority (IRQ 0 first). */
static int pic_next(const struct vcpu *v)
{
	for (unsigned w = 0; w < 4; w++)
		if (v->pic_pending[w])
			return (int)(w * 64 + (unsigned)__builtin_ctzll(v->pic_pending[w]));
	return -1;
}

/* An 8259 vector waits until the guest can take an interrupt (interrupt-
 * window exiting meanwhile); one per entry, each once. */
static void inject_pic(struct vcpu *v)
{
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	bool busy = vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID;
	if (!busy && virq_guest_interruptible()) {
		int vec = pic_next(v);
		vmcs_write(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | (uint32_t)vec);
		v->pic_pending[vec / 64] &= ~BIT(vec % 64);
		if (!virq_window_wanted(v))
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
		else
			proc |= VMX_PROC_INT_WINDOW_EXITING;   /* the next one after this */
		if (vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	} else {
		proc |= VMX_PROC_INT_WINDOW_EXITING;
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

void exit_intr_window(struct vcpu *v)
{
	(void)v;   /* virq_before_entry injects the 8259 vector, raises a deferred interrupt (at_window) */
}

/* The guest asked to halt (exit_hlt): it halts unless something that ends
 * the HLT state is pending now, the last thing decided before the entry
 * (after the timer check, which may have posted its vector). True when it
 * halts. */
static bool hlt_finish(struct vcpu *v)
{
	v->hlt_wanted = false;
	bool deliverable;
	if (vmx_env.cfg.sw_apic) {
		deliverable = virq_sw_pending(v) >= 0;
	} else {
		uint32_t rvi = (uint32_t)vmcs_read(VMCS_GUEST_INTR_STATUS) & 0xff;
		uint32_t ppr = vapic_get(v->vapic, APIC_PPR) & 0xff;
		deliverable = (rvi >> 4) > (ppr >> 4);
	}
	uint32_t intr = (uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY);
	struct hlt_view h = {
		.if_set = vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9),
		.nmi_pending = __atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST) != 0,
		.nmi_blocked = intr & INTR_BLOCK_NMI,
		.vector_pending = deliverable || virq_pic_pending(v) ||
				  (__atomic_load_n(&v->pid->control, __ATOMIC_SEQ_CST) & PI_ON),
	};
	/* An event injected at this entry (an NMI, an exception) runs at once. */
	if (hlt_ends(&h) || (vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID)) {
		v->hlt_skipped++;
		return false;
	}
	/* (TF = 1 in the HLT state needs BS pending, a VM-entry check:
	 * exit_hlt's vcpu_skip_insn set it when the HLT retired.) */
	vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
	return true;
}

/* A guest that died without a word: every vCPU halted with interrupts off
 * (RFLAGS.IF = 0) and nothing to deliver at its entry, or waiting for a
 * SIPI. Only an NMI, an INIT or a SIPI ends such a HLT, and no vCPU is left
 * to send one (Linux halts so on the CPUs a panic stops, and on the last
 * when it cannot reboot; a guest's CLI; HLT everywhere). Each vCPU says so
 * at its entries into the HLT state, where the activity state is read
 * anyway: with hlt=exit at its HLT's exit; with hlt=guest at the halted
 * vCPU's next exit (its timer, or the hang check's VMX-preemption timer
 * within hangcheck= seconds). The vCPU that makes the set whole says so
 * (v->died), and its exit handler ends the run (vmx/exit.c,
 * vmx_guest_died). Virtual model only. */
static bool halted_off_now(struct vcpu *v)
{
	return !(vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)) && !v->bochs_test_wake &&   /* bochstest's HLT is woken */
	       !__atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST) && !virq_startup_due(v) &&
	       !(vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID);
}

bool virq_all_halted_off(void)
{
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *o = vcpus[i];
		if (!o)
			continue;
		if (__atomic_load_n(&o->nmi_pending, __ATOMIC_SEQ_CST) || virq_startup_due(o))
			return false;     /* something is on its way to wake it */
		if (!__atomic_load_n(&o->halted_off, __ATOMIC_SEQ_CST) && !__atomic_load_n(&o->parked, __ATOMIC_SEQ_CST))
			return false;
	}
	return true;
}

static void halted_off_note(struct vcpu *v, bool off)
{
	if (off == v->halted_off)
		return;
	__atomic_store_n(&v->halted_off, off, __ATOMIC_SEQ_CST);   /* before the look at the others */
	if (off && virq_all_halted_off())
		v->died = "every vCPU halted with interrupts off (RFLAGS.IF = 0): none is left to wake another";
}

void virq_before_entry(struct vcpu *v)
{
	bool virt = vmx_env.cfg.irq_model == IRQ_VIRTUAL, off = false;
	if (virt && virq_startup_due(v))
		virq_startup_step(v);
	if (vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_WAIT_SIPI) {
		/* Nothing is injected in wait-for-SIPI (VM entry would fail):
		 * NMIs and 8259 vectors for a vCPU that waits are dropped. */
		if (__atomic_exchange_n(&v->nmi_pending, 0, __ATOMIC_SEQ_CST))
			v->nmis_dropped++;
		memset(v->pic_pending, 0, sizeof v->pic_pending);
		v->hlt_wanted = false;
		if (v->halted_off)
			__atomic_store_n(&v->halted_off, false, __ATOMIC_SEQ_CST);   /* it waits: parked says so */
		if (v->at_window)   /* the UART's: another vCPU may take it */
			run_at_window(v);
		return;
	}
	if (__atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST))
		inject_nmi(v);
	if (v->at_window)
		window_work(v);
	if (virq_pic_pending(v))
		inject_pic(v);
	if (virt) {
		virq_timer_check(v);
		virq_host_timer_program(v);
		/* A vCPU that exited from the HLT state resumes active, as after
		 * any wake-up, so the interrupt that made it exit, now posted, is
		 * taken at once: Bochs 3.0 re-enters the HLT state and does not
		 * wake it for a notification already pending at entry. A wake-up
		 * the guest did not need costs it one pass of its idle loop. With
		 * IF = 0 no interrupt would end its HLT: it stays halted. */
		if (!v->hlt_wanted && vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT) {
			if (vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)) {
				vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
				v->hlt_resumes++;
			} else {
				off = halted_off_now(v);
			}
		}
		/* Posted vectors need nothing here: whoever set ON sent the
		 * notification, this vCPU's own posts included, and the CPU
		 * processes it right after the entry (SDM Vol. 3C, "Posted-
		 * Interrupt Processing"). Taking the PIR in software instead races
		 * with a notification in flight, which then finds it empty: Bochs
		 * 3.0 turns that into RVI = 0xff, delivers vector 0xff, and the
		 * guest, which never EOIs its spurious vector, blocks every
		 * interrupt after it. The software x2APIC has no such processing:
		 * it takes them here. */
		if (vmx_env.cfg.sw_apic)
			virq_sw_before_entry(v);
	}
	if (v->hlt_wanted && hlt_finish(v) && virt)
		off = halted_off_now(v);
	if (virt)
		halted_off_note(v, off);
}

/* With acknowledge-interrupt-on-exit the vector is in the exit information
 * and the physical APIC holds it in service. */
void (*virq_console_rx)(struct vcpu *v);

void exit_external_intr(struct vcpu *v)
{
	uint32_t info = (uint32_t)vmcs_read(VMCS_EXIT_INTR_INFO);
	uint8_t vec = (uint8_t)info;
	if (!(info & INTR_INFO_VALID))
		return;
	switch (vec) {
	case HOST_TIMER_VECTOR:
		v->timer_exits_fire++;
		lapic_eoi();
		v->host_deadline = 0;        /* the MSR cleared itself when it fired */
		virq_timer_host_interrupt(v);
		return;
	case KICK_VECTOR:
		lapic_eoi();                 /* virq_before_entry does the work */
		return;
	case CONSOLE_VECTOR:
		lapic_eoi();
		if (virq_console_rx)
			virq_console_rx(v);
		return;
	case IOMMU_FAULT_VECTOR:
		lapic_eoi();
		iommu_fault_interrupt();
		return;
	case 0xff:
		/* The spurious vector sets no ISR bit and takes no EOI (SDM Vol.
		 * 3A, "Spurious Interrupt"); a device's vector 0xff does, and goes
		 * on as any device vector (issue 27). */
		if (!lapic_in_service(0xff))
			return;
		break;
	default:
		if (vec == vmx_env.cfg.posted_intr_nv) {
			/* Only without posted-interrupt processing: move it by hand. */
			lapic_eoi();
			v->notify_in_root++;
			int top = vapic_take_posted(v->vapic, v->pid);
			if (top >= 0 && !vmx_env.cfg.sw_apic)
				virq_rvi_raise((uint8_t)top);
			return;
		}
		break;
	}
	/* The 8259's interrupts arrive through ExtINT (Bochs wires the 8259 to
	 * the CPU directly): no local APIC ISR bit, and a guest that takes them
	 * through its 8259 driver never EOIs them at the APIC. Posted, they
	 * would stay in the virtual ISR and block every lower vector; they are
	 * injected as external interrupts instead, as the CPU would deliver them. */
	if (!lapic_in_service(vec)) {
		v->extint[vec]++;
		/* Below 32: the firmware's mapping of the 8259, left from before the
		 * guest programmed it; as an interrupt it would hit an exception
		 * vector. Dropped. */
		if (vec >= 32) {
			virq_pic_queue(v, vec);
			v->pic_injected++;
		}
		return;
	}
	/* A device interrupt, re-posted to the guest. */
	v->extint[vec]++;
	if (lapic_level(vec)) {
		virq_level_accept(v, vec);
	} else {
		lapic_eoi();
		virq_edge_accept(v, vec);
	}
	virq_post_self(v, vec);
}

/* HLT, where it exits (hlt=exit): completed here; whether the vCPU halts
 * or resumes past it is decided last before the entry (hlt_finish). */
void exit_hlt(struct vcpu *v)
{
	vcpu_skip_insn(v);
	v->hlt_wanted = true;
}

void exit_nmi_window(struct vcpu *v)
{
	(void)v;   /* virq_before_entry injects the pending NMI */
}

/* An NMI exit: the host's stop request while panicking, else an NMI meant
 * for the guest (its own NMI IPIs and the platform's), delivered as a
 * virtual NMI. */
void exit_exception_nmi(struct vcpu *v)
{
	uint32_t info = (uint32_t)vmcs_read(VMCS_EXIT_INTR_INFO);
	if (((info >> 8) & 7) != 2) {
		vcpu_dump(v);
		panic("exception exit (interruption info 0x%x) with an empty exception bitmap\n", info);
	}
	if (hv_panicking)
		cpu_stop();
	v->nmis_host++;
	__atomic_fetch_add(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
}

/* An NMI in root mode. On a CPU that runs no vCPU (parked, the
 * housekeeping CPU; the guest owns the IOAPIC and MSIs and can aim one
 * there) or before its vCPU's launch: counted and ignored. On a vCPU's
 * CPU: kept for its guest, and (virtual model) a kick to itself makes the
 * vCPU exit right after its entry, so the NMI does not wait for an exit that
 * may not come (it may have come after this exit's virq_before_entry). */
uint64_t virq_nmis_ignored;

bool virq_nmi_in_root(void)
{
	struct percpu *p = this_cpu();
	struct vcpu *v = p->index < ncpus ? vcpus[p->index] : NULL;
	if (!v || !p->launched) {
		__atomic_fetch_add(&virq_nmis_ignored, 1, __ATOMIC_RELAXED);
		return true;
	}
	v->nmis_host++;
	__atomic_fetch_add(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	/* The kick vector is the host's only in the virtual model (in the
	 * partition model the guest owns the local APIC and would take it). */
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL)
		lapic_send(p->apic_id, APIC_DM_FIXED | KICK_VECTOR);
	return true;
}
