/* The virtual interrupt model at run time (see virq.h). */
#include "virq.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmx_defs.h"
#include "../apic/lapic.h"
#include "../apic/vapic.h"
#include "../apic/swapic.h"
#include "../ipi/ipi.h"
#include "../timer/vtimer.h"
#include "../timer/service.h"
#include "../lib/cpu.h"
#include "../lib/msr.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/tsc.h"
#include "../lib/string.h"

#define INTR_BLOCK_STI_MOVSS 3u
#define INTR_BLOCK_NMI 8u
#define APIC_VERSION_EOI_BCAST_SUPPRESS BIT(24)

struct ipi_domain virq_domain;
static uint32_t apic_ids[MAX_CPUS];
static struct ipi_target_stats *tstats;
static uint16_t *vcpu_of_apic;

/* A vector for the vCPU running here, in root mode: straight into its
 * virtual IRR, RVI raised; the CPU evaluates it at the VM entry. Measured
 * under Bochs 3.0: a self-notification sent in root mode (interrupts off)
 * stayed pending in the physical IRR after the entry, unrecognized for tens
 * of milliseconds, and with the notification vector pending every lower
 * device vector (the guest's timer, 0x30) was refused by the local APIC:
 * the boot CPU lost its ticks and hung. The virtual-APIC page belongs to
 * this CPU while it is in root mode, so no notification is needed. */
/* RVI (the guest interrupt status's low byte) up to vec, if below it. */
static void rvi_raise(uint8_t vec)
{
	uint16_t status = (uint16_t)vmcs_read(VMCS_GUEST_INTR_STATUS);
	if (vec > (status & 0xff))
		vmcs_write(VMCS_GUEST_INTR_STATUS, (status & 0xff00) | vec);
}

static void virr_set(struct vcpu *v, uint8_t vec)
{
	swapic_request(v->vapic, vec);
	if (!vmx_env.cfg.sw_apic)   /* the software x2APIC injects it before the entry */
		rvi_raise(vec);
}

static void op_self(void *ctx, uint8_t vec)
{
	(void)ctx;
	virr_set(vcpus[this_cpu()->index], vec);
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

/* INIT and SIPI go to the vCPU's core as physical signals: VMX turns them
 * into INIT and SIPI exits there (vmx/exit.c). */
static void op_init(void *ctx, uint32_t i)
{
	(void)ctx;
	lapic_send(apic_ids[i], APIC_DM_INIT | APIC_LEVEL_ASSERT);
}

static void op_sipi(void *ctx, uint32_t i, uint8_t vector)
{
	(void)ctx;
	lapic_send(apic_ids[i], APIC_DM_STARTUP | vector);
}

void virq_init(uint64_t *pid_table, uint32_t last_index)
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

static uint32_t guest_apic_version(void)
{
	/* The physical version, without EOI-broadcast suppression: the guest's
	 * EOIs of level-triggered vectors are forwarded as broadcast EOIs. */
	return (uint32_t)rdmsr(0x803) & ~APIC_VERSION_EOI_BCAST_SUPPRESS;
}

void virq_vcpu_init(struct vcpu *v)
{
	vapic_reset(v->vapic, v->apic_id, guest_apic_version());
	spin_lock(&v->timer_lock);
	vtimer_reset(&v->timer);
	spin_unlock(&v->timer_lock);
	if (vmx_env.cfg.sw_apic) {
		swapic_update_ppr(v->vapic);
		v->pv_eoi_msr = 0;
		v->pv_eoi_armed = false;
	} else {
		vmcs_write(VMCS_GUEST_INTR_STATUS, 0);
	}
}

static void write_eoi_exit(struct vcpu *v)
{
	if (vmx_env.cfg.sw_apic)
		return;   /* no VID: every EOI reaches the hypervisor anyway */
	vmcs_write(VMCS_EOI_EXIT_BITMAP0, v->eoi_exit[0]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP1, v->eoi_exit[1]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP2, v->eoi_exit[2]);
	vmcs_write(VMCS_EOI_EXIT_BITMAP3, v->eoi_exit[3]);
}

void virq_vcpu_start(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	virq_vcpu_init(v);
	/* eoi=trap: every EOI exits (an all-ones EOI-exit bitmap). */
	memset(v->eoi_exit, vmx_env.cfg.eoi_trap ? 0xff : 0, sizeof v->eoi_exit);
	write_eoi_exit(v);
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
	if (vmx_env.cfg.timer == TIMER_PREEMPT)
		vmcs_write(VMCS_PREEMPTION_TIMER_VALUE, 0xffffffffull);
}

/* Posts a vector into the vCPU's own descriptor (processed before entry). */
static void post_self(struct vcpu *v, uint8_t vector)
{
	ipi_post(&virq_domain, v->index, v->apic_id, vector);
}

/* The timer tiers (docs/interrupts.md): who notices the guest's deadline,
 * and how its vector gets in.
 *  posted, with a housekeeping CPU: its service (timer/service.c) expires
 *     the timer and posts the vector with a notification: no exit here;
 *  posted, without one: this CPU's TSC-deadline timer exits (external
 *     interrupt) and the vector is posted into the vCPU's own descriptor;
 *  preempt: the VMX-preemption timer exits, the vector is posted;
 *  trap: the host timer exits and the vector is put into the virtual IRR
 *     by hand (RVI raised), no descriptor. */
struct timer_service *virq_timer_service;
static struct timer_service service;

static void service_post(void *ctx, uint32_t i, uint8_t vec)
{
	(void)ctx;
	__atomic_fetch_add(&vcpus[i]->timer_posts, 1, __ATOMIC_RELAXED);
	ipi_post(&virq_domain, IPI_NO_VCPU, vcpus[i]->apic_id, vec);
}

void virq_timer_service_init(uint32_t apic_id)
{
	service.n = ncpus;
	service.timers = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	service.locks = page_alloc(ALIGN_UP(ncpus * sizeof(void *), PAGE_SIZE) / PAGE_SIZE);
	for (uint32_t i = 0; i < ncpus; i++) {
		service.timers[i] = &vcpus[i]->timer;
		service.locks[i] = &vcpus[i]->timer_lock;
	}
	service.post = service_post;
	service.apic_id = apic_id;
	service.timer_vector = HOST_TIMER_VECTOR;
	service.kick_vector = KICK_VECTOR;
	service.next = ~0ull;
	__atomic_store_n(&virq_timer_service, &service, __ATOMIC_RELEASE);
}

static void timer_deliver(struct vcpu *v, uint8_t vec)
{
	__atomic_fetch_add(&v->timer_posts, 1, __ATOMIC_RELAXED);
	if (vmx_env.cfg.timer == TIMER_TRAP) {
		virr_set(v, vec);      /* by hand, not counted as a post */
		return;
	}
	post_self(v, vec);
}

static bool timer_by_service(void)
{
	return virq_timer_service != NULL;
}

static void timer_check(struct vcpu *v)
{
	if (timer_by_service())
		return;
	uint64_t now = rdtsc();
	spin_lock(&v->timer_lock);
	uint64_t deadline = v->timer.deadline;
	int vec = vtimer_expire(&v->timer, now);
	spin_unlock(&v->timer_lock);
	if (vec >= 16)
		timer_deliver(v, (uint8_t)vec);
	/* Said once per vCPU: an expiry noticed more than 10 ms late. */
	if (vec >= 0 && now - deadline > tsc_khz * 10 && !v->timer_late_said) {
		v->timer_late_said = true;
		pr_warn("hv: timer: cpu%u noticed its deadline 0x%llx %llu us late (rip 0x%llx, activity %llu, exit %u)\n",
			v->index, (unsigned long long)deadline, (unsigned long long)((now - deadline) / (tsc_khz / 1000 ? tsc_khz / 1000 : 1)),
			(unsigned long long)vmcs_read(VMCS_GUEST_RIP), (unsigned long long)vmcs_read(VMCS_GUEST_ACTIVITY_STATE),
			v->reason & 0xffff);
	}
}

static void kick(uint32_t apic_id, uint8_t vec)
{
	lapic_send(apic_id, APIC_DM_FIXED | vec);
}

/* After the guest changed its timer: the one serving it learns of it. */
static void timer_changed(struct vcpu *v)
{
	v->timer_exits_arm++;
	if (timer_by_service())
		timer_service_armed(virq_timer_service, __atomic_load_n(&v->timer.deadline, __ATOMIC_SEQ_CST), kick);
	else
		timer_check(v);
}

static void host_timer_program(struct vcpu *v)
{
	if (timer_by_service())
		return;
	if (vmx_env.cfg.timer == TIMER_PREEMPT) {
		/* The preemption timer counts down at TSC >> rate; 0 exits at once. */
		uint64_t d = v->timer.deadline, now = rdtsc(), ticks = 0xffffffffull;
		if (d)
			ticks = d <= now ? 0 : (d - now) >> vmx_env.cfg.preempt_rate;
		vmcs_write(VMCS_PREEMPTION_TIMER_VALUE, ticks > 0xffffffffull ? 0xffffffffull : ticks);
		return;
	}
	if (v->timer.deadline != v->host_deadline) {
		v->host_deadline = v->timer.deadline;
		wrmsr(MSR_IA32_TSC_DEADLINE, v->host_deadline);
	}
}

void exit_preemption_timer(struct vcpu *v)
{
	v->timer_exits_fire++;
	timer_check(v);      /* virq_before_entry re-arms it */
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

/* An 8259 vector waits until the guest can take an interrupt (interrupt-
 * window exiting meanwhile). */
static void inject_pic(struct vcpu *v)
{
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	bool busy = vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID;
	if (!busy && (vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)) &&
	    !((uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY) & INTR_BLOCK_STI_MOVSS)) {
		vmcs_write(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | v->pic_pending);
		v->pic_pending = 0;
		proc &= ~VMX_PROC_INT_WINDOW_EXITING;
		if (vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	} else {
		proc |= VMX_PROC_INT_WINDOW_EXITING;
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

void exit_intr_window(struct vcpu *v)
{
	(void)v;   /* virq_before_entry injects the 8259 vector */
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
static int sw_pending(struct vcpu *v)
{
	vapic_take_posted(v->vapic, v->pid);
	swapic_update_ppr(v->vapic);
	return swapic_deliverable(v->vapic);
}

/* The guest's EOI of vec (an EOI-exit, an EOI write or its PV EOI on the
 * software x2APIC): a level-triggered vector also ends at the physical APIC. */
static void level_eoi_done(struct vcpu *v, int vec)
{
	if (vec >= 0 && (v->level_inflight[vec / 64] & BIT(vec % 64))) {
		v->level_inflight[vec / 64] &= ~BIT(vec % 64);
		lapic_eoi();
	}
}

/* The software x2APIC before each entry: the guest's PV EOI (if it took
 * the flag), the descriptor's PIR into the IRR (posted-interrupt processing
 * is off), then the highest deliverable vector injected as an external
 * interrupt when the guest can take one, else interrupt-window exiting.
 * After an injection with nothing else requested, the PV EOI flag is armed
 * (KVM's rule). */
static void sw_before_entry(struct vcpu *v)
{
	volatile uint32_t *word = pv_eoi_word(v);
	if (word && v->pv_eoi_armed) {
		int vec = swapic_pv_eoi_sync(v->vapic, word, &v->pv_eoi_armed);
		if (vec >= 0) {
			v->sw_pv_eois++;
			level_eoi_done(v, vec);
		}
	}
	int vec = sw_pending(v);
	uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
	bool busy = vmcs_read(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID;
	if (vec < 0) {
		if (!v->pic_pending)
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
	} else if (!busy && (vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)) &&
		   !((uint32_t)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY) & INTR_BLOCK_STI_MOVSS)) {
		swapic_accept(v->vapic, (uint8_t)vec);
		vmcs_write(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | (uint32_t)vec);
		if (vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
		v->sw_injected++;
		if (!v->pic_pending)
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
		if (word && swapic_pv_eoi_arm(v->vapic, word, (v->level_inflight[vec / 64] & BIT(vec % 64)) != 0)) {
			v->pv_eoi_armed = true;
			v->sw_pv_armed++;
		}
	} else {
		proc |= VMX_PROC_INT_WINDOW_EXITING;   /* exits as soon as the guest can take it */
	}
	vmcs_write(VMCS_PROC_CONTROLS, proc);
}

void virq_before_entry(struct vcpu *v)
{
	if (__atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST))
		inject_nmi(v);
	if (v->pic_pending)
		inject_pic(v);
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	timer_check(v);
	host_timer_program(v);
	/* A vCPU that exited from HLT (its RIP is past the HLT) resumes
	 * active, as after any wake-up, so the interrupt that made it exit,
	 * now posted, is taken at once: Bochs 3.0 re-enters the HLT state and
	 * does not wake it for a notification already pending at entry. A
	 * wake-up the guest did not need costs it one pass of its idle loop. */
	if ((v->reason & 0xffff) != EXIT_REASON_HLT && vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT) {
		vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
		v->hlt_resumes++;
	}
	/* Posted vectors need nothing here: whoever set ON sent the
	 * notification, this vCPU's own posts included, and the CPU processes
	 * it right after the entry (SDM Vol. 3C, "Posted-Interrupt
	 * Processing"). Taking the PIR in software instead races with a
	 * notification in flight, which then finds it empty: Bochs 3.0 turns
	 * that into RVI = 0xff, delivers vector 0xff, and the guest, which
	 * never EOIs its spurious vector, blocks every interrupt after it.
	 * The software x2APIC has no such processing: it takes them here. */
	if (vmx_env.cfg.sw_apic)
		sw_before_entry(v);
}

/* With acknowledge-interrupt-on-exit the vector is in the exit information
 * and the physical APIC holds it in service. */
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
		timer_check(v);
		return;
	case KICK_VECTOR:
		lapic_eoi();                 /* virq_before_entry does the work */
		return;
	case 0xff:
		return;                      /* spurious: no EOI */
	default:
		if (vec == vmx_env.cfg.posted_intr_nv) {
			/* Only without posted-interrupt processing: move it by hand. */
			lapic_eoi();
			v->notify_in_root++;
			int top = vapic_take_posted(v->vapic, v->pid);
			if (top >= 0 && !vmx_env.cfg.sw_apic)
				rvi_raise((uint8_t)top);
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
			v->pic_pending = vec;
			v->pic_injected++;
		}
		return;
	}
	/* A device interrupt, re-posted to the guest. A level-triggered one
	 * keeps its physical in-service bit until the guest's EOI (EOI-exit
	 * bitmap), so the line is not sampled again before the device is
	 * serviced: no storm, nothing lost. */
	v->extint[vec]++;
	if (lapic_level(vec)) {
		v->level_inflight[vec / 64] |= BIT(vec % 64);
		if (!(v->eoi_exit[vec / 64] & BIT(vec % 64))) {
			v->eoi_exit[vec / 64] |= BIT(vec % 64);
			write_eoi_exit(v);
		}
	} else {
		lapic_eoi();
	}
	post_self(v, vec);
}

/* The guest's EOI of a vector in the EOI-exit bitmap (SDM Vol. 3C, "EOI
 * Virtualization": the exit is trap-like, the virtual EOI is done). */
void exit_virtualized_eoi(struct vcpu *v)
{
	level_eoi_done(v, (uint8_t)v->qual);
}

/* HLT, where it exits (hlt=exit): completed here. With a virtual interrupt
 * deliverable, an NMI or a notification pending, the vCPU resumes past its
 * HLT and takes it; else it enters the HLT state, which a physical
 * interrupt (a notification included) ends. */
void exit_hlt(struct vcpu *v)
{
	vcpu_skip_insn(v);
	bool deliverable;
	if (vmx_env.cfg.sw_apic) {
		deliverable = sw_pending(v) >= 0;
	} else {
		uint32_t rvi = (uint32_t)vmcs_read(VMCS_GUEST_INTR_STATUS) & 0xff;
		uint32_t ppr = vapic_get(v->vapic, APIC_PPR) & 0xff;
		deliverable = (rvi >> 4) > (ppr >> 4);
	}
	if (deliverable || __atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST) || v->pic_pending ||
	    (__atomic_load_n(&v->pid->control, __ATOMIC_SEQ_CST) & PI_ON)) {
		v->hlt_skipped++;
		return;
	}
	vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
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
		cpu_halt_forever();
	v->nmis_host++;
	__atomic_fetch_add(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
}

/* IPI virtualization's trap-like APIC-write exit: the ICR write the CPU did
 * not virtualize, already in the virtual-APIC page. */
void exit_apic_write(struct vcpu *v)
{
	uint32_t off = (uint32_t)v->qual & 0xfff;
	if (off != APIC_ICR) {
		vcpu_dump(v);
		panic("APIC-write exit at offset 0x%x\n", off);
	}
	/* The exit is trap-like: the WRMSR has completed, so no #GP can be
	 * injected for it any more. The CPU already faulted on the reserved bits
	 * (31:20, 17:16, 13); bit 12 (the xAPIC's read-only delivery status)
	 * only kept the write from being virtualized: ignored, as KVM does. */
	uint64_t icr = *(volatile uint64_t *)(v->vapic + APIC_ICR) & ~(uint64_t)BIT(12);
	(void)ipi_icr_write(&virq_domain, v->index, icr, &v->ipi);   /* reserved bits (a CPU that did
								       not fault): refused and counted */
}

static int icr_write(struct vcpu *v, uint64_t icr)
{
	enum ipi_result r = IPI_SLOW;
	if (vmx_env.tiers_ipi == IPI_FAST)
		r = ipi_fast(&virq_domain, v->index, icr, &v->ipi);
	if (r == IPI_SLOW)
		r = ipi_icr_write(&virq_domain, v->index, icr, &v->ipi);
	if (r == IPI_GP)
		return -1;
	*(volatile uint64_t *)(v->vapic + APIC_ICR) = icr;   /* what a read of the ICR returns */
	return 0;
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

int virq_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	uint64_t now = rdtsc();
	if (msr == MSR_KVM_PV_EOI_EN)
		return vmx_env.cfg.sw_apic ? pv_eoi_msr_write(v, val) : -1;
	if (msr == MSR_IA32_TSC_DEADLINE) {
		spin_lock(&v->timer_lock);
		vtimer_write_tsc_deadline(&v->timer, val);
		spin_unlock(&v->timer_lock);
		timer_changed(v);
		return 0;
	}
	if (msr < 0x800 || msr > 0x8ff)
		return 1;
	uint32_t off = APIC_OFF(msr);
	if (off == APIC_ICR)
		return icr_write(v, val);
	if (val >> 32)
		return -1;
	switch (off) {
	case APIC_LVT_TIMER:
		if (!(vapic_get(v->vapic, APIC_SVR) & APIC_SVR_ENABLED))
			val |= APIC_LVT_MASKED;
		spin_lock(&v->timer_lock);
		vtimer_write_lvt(&v->timer, (uint32_t)val, now);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_LVT_TIMER, v->timer.lvt);
		if (vmx_env.cfg.apic_timer_virt)   /* the vector the CPU delivers at the guest deadline */
			vmcs_write(VMCS_VIRTUAL_TIMER_VECTOR,
				   (v->timer.lvt & APIC_LVT_MASKED) || LVT_TIMER_MODE(v->timer.lvt) != VTIMER_TSC_DEADLINE ? 0 : v->timer.lvt & 0xff);
		timer_changed(v);
		return 0;
	case APIC_TMICT:
		spin_lock(&v->timer_lock);
		vtimer_write_tmict(&v->timer, (uint32_t)val, now);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_TMICT, v->timer.tmict);
		timer_changed(v);
		return 0;
	case APIC_TDCR:
		spin_lock(&v->timer_lock);
		vtimer_write_tdcr(&v->timer, (uint32_t)val);
		spin_unlock(&v->timer_lock);
		vapic_set(v->vapic, APIC_TDCR, v->timer.tdcr);
		return 0;
	case APIC_EOI:
		/* The software x2APIC's EOI (with VID the write never exits). */
		if (val)
			return -1;
		if (vmx_env.cfg.sw_apic) {
			v->sw_eoi_exits++;
			level_eoi_done(v, swapic_eoi(v->vapic));
		}
		return 0;
	case APIC_SELF_IPI:
		if (val >> 8)
			return -1;
		if ((uint8_t)val >= 16)   /* an illegal vector is dropped */
			virr_set(v, (uint8_t)val);
		return 0;
	default:
		if (vapic_write(v->vapic, msr, val))
			return -1;
		if (off == APIC_SVR) { /* a software disable masked the LVTs */
			spin_lock(&v->timer_lock);
			v->timer.lvt = vapic_get(v->vapic, APIC_LVT_TIMER);
			spin_unlock(&v->timer_lock);
		}
		if (off == APIC_TPR && vmx_env.cfg.sw_apic)
			swapic_update_ppr(v->vapic);
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

bool virq_timer_balanced(struct vcpu *v)
{
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return true;   /* the guest owns its timer */
	spin_lock(&v->timer_lock);
	struct vtimer t = v->timer;
	spin_unlock(&v->timer_lock);
	uint64_t posts = __atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED);
	return t.armed == t.replaced + t.fired + (t.deadline ? 1 : 0) && t.fired - t.masked == posts;
}

/* The timer's accounting: armed = replaced + fired + pending, and each
 * unmasked expiry delivered; the exits it cost; lateness as log2 buckets. */
static void timer_report(struct vcpu *v)
{
	struct vtimer t;
	spin_lock(&v->timer_lock);
	t = v->timer;
	spin_unlock(&v->timer_lock);
	uint32_t i = v->index;
	pr_info("hvstat: cpu=%u timer tier=%s armed=%llu replaced=%llu fired=%llu masked=%llu delivered=%llu pending=%u exits_arm=%llu exits_fire=%llu late_max=%llu\n",
		i, timer_tier_names[vmx_env.cfg.timer], (unsigned long long)t.armed, (unsigned long long)t.replaced,
		(unsigned long long)t.fired, (unsigned long long)t.masked,
		(unsigned long long)__atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED), t.deadline ? 1u : 0u,
		(unsigned long long)v->timer_exits_arm, (unsigned long long)v->timer_exits_fire,
		(unsigned long long)t.late_max);
	char buf[400];
	size_t n = 0;
	for (unsigned b = 0; b < VTIMER_LATE_BUCKETS && n < sizeof buf - 32; b++)
		if (t.late_log2[b])
			n += (size_t)snprintf(buf + n, sizeof buf - n, " <%llu:%u", (unsigned long long)(2ull << b) - 1,
					      t.late_log2[b]);
	if (n)
		pr_info("hvstat: cpu=%u timer_late_tsc%s\n", i, buf);
	if (i == 0 && virq_timer_service)
		pr_info("hvstat: timer_service apic_id=%u scans=%llu posts=%llu kicks=%llu\n", virq_timer_service->apic_id,
			(unsigned long long)virq_timer_service->scans, (unsigned long long)virq_timer_service->posts,
			(unsigned long long)virq_timer_service->kicks);
}

void virq_served(struct vcpu *v, struct virq_served *out)
{
	const struct ipi_target_stats *t = tstats ? &tstats[v->index] : NULL;
	out->posts = t ? __atomic_load_n(&t->posts, __ATOMIC_RELAXED) : 0;
	out->notifies = t ? __atomic_load_n(&t->notifies, __ATOMIC_RELAXED) : 0;
	out->timer_posts = __atomic_load_n(&v->timer_posts, __ATOMIC_RELAXED);
	out->pv_eois = __atomic_load_n(&v->sw_pv_eois, __ATOMIC_RELAXED);
}

void virq_report(struct vcpu *v)
{
	struct ipi_src_stats *s = &v->ipi;
	struct ipi_target_stats *t = &tstats[v->index];
	uint32_t i = v->index;
	if (v->nmis_injected || v->nmis_host)
		pr_info("hvstat: cpu=%u nmi injected=%llu from_host=%llu\n", i, (unsigned long long)v->nmis_injected,
			(unsigned long long)v->nmis_host);
	if (vmx_env.cfg.irq_model != IRQ_VIRTUAL)
		return;
	timer_report(v);
	pr_info("hvstat: cpu=%u ipi fast=%llu fixed=%llu lowest=%llu nmi=%llu init=%llu sipi=%llu self=%llu all=%llu others=%llu logical=%llu refused=%llu init_deassert=%llu\n",
		i, (unsigned long long)s->fast, (unsigned long long)s->slow_mode[ICR_FIXED],
		(unsigned long long)s->slow_mode[ICR_LOWEST], (unsigned long long)s->slow_mode[ICR_NMI],
		(unsigned long long)s->slow_mode[ICR_INIT], (unsigned long long)s->slow_mode[ICR_SIPI],
		(unsigned long long)s->slow_shorthand[ICR_SH_SELF], (unsigned long long)s->slow_shorthand[ICR_SH_ALL],
		(unsigned long long)s->slow_shorthand[ICR_SH_OTHERS], (unsigned long long)s->slow_logical,
		(unsigned long long)s->refused, (unsigned long long)s->init_deassert);
	pr_info("hvstat: cpu=%u ipi_dropped=%llu\n", i, (unsigned long long)s->dropped);
	if (vmx_env.cfg.sw_apic)
		pr_info("hvstat: cpu=%u swapic injected=%llu eoi_exits=%llu pv_eois=%llu pv_armed=%llu pv_eoi=%s\n", i,
			(unsigned long long)v->sw_injected, (unsigned long long)v->sw_eoi_exits,
			(unsigned long long)v->sw_pv_eois, (unsigned long long)v->sw_pv_armed, v->pv_eoi_msr & 1 ? "on" : "off");
	if (s->pv_calls)
		pr_info("hvstat: cpu=%u pv_ipi calls=%llu targets=%llu errors=%llu\n", i, (unsigned long long)s->pv_calls,
			(unsigned long long)s->pv_targets, (unsigned long long)s->pv_errors);
	pr_info("hvstat: cpu=%u posted=%llu notified=%llu notify_exits=%llu timer_posts=%llu hlt_resumes=%llu hlt_skipped=%llu\n", i,
		(unsigned long long)t->posts, (unsigned long long)t->notifies, (unsigned long long)v->notify_in_root,
		(unsigned long long)v->timer_posts, (unsigned long long)v->hlt_resumes, (unsigned long long)v->hlt_skipped);
	int isr = -1;
	for (int w = 7; w >= 0 && isr < 0; w--) {
		uint32_t bits = vapic_get(v->vapic, APIC_ISR + 16 * w);
		if (bits)
			isr = w * 32 + 31 - __builtin_clz(bits);
	}
	if (v->pic_injected)
		pr_info("hvstat: cpu=%u pic_injected=%llu\n", i, (unsigned long long)v->pic_injected);
	pr_info("hvstat: cpu=%u vapic tpr=0x%02x ppr=0x%02x isr_top=%d irr_top=%d\n", i,
		vapic_get(v->vapic, APIC_TPR), vapic_get(v->vapic, APIC_PPR), isr, vapic_highest_irr(v->vapic));
	for (unsigned vec = 0; vec < 256; vec++)
		if (v->extint[vec])
			pr_info("hvstat: cpu=%u extint vector=0x%02x count=%u%s\n", i, vec, v->extint[vec],
				(v->eoi_exit[vec / 64] & BIT(vec % 64)) && !vmx_env.cfg.eoi_trap ? " level" : "");
}

bool virq_nmi_in_root(void)
{
	struct percpu *p = this_cpu();
	struct vcpu *v = p->index < ncpus ? vcpus[p->index] : NULL;
	if (!v || !p->launched)
		return false;
	v->nmis_host++;
	__atomic_fetch_add(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	return true;
}
