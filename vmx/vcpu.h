/* One vCPU per physical CPU, forever. */
#ifndef VMX_VCPU_H
#define VMX_VCPU_H
#include "../lib/hist.h"
#include "../lib/types.h"
#include "../apic/pi.h"
#include "../ipi/ipi.h"
#include "../timer/vtimer.h"
#include "../apic/level.h"
#include "../guest/startup.h"
#include "../guest/msr.h"
#include "../lib/spinlock.h"
#include "vmcs.h"
#include "vmcs_fields.h"
#include "event.h"
#include "hang.h"

/* Saved by vmx/entry.asm; its offsets are pinned below. */
struct guest_regs {
	uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
};

#define VCPU_ACCESS_STATS 48

/* Counts of intercepted accesses by key (an MSR number or an I/O port). */
struct access_stats {
	uint32_t n;
	struct { uint32_t key, reads, writes; } e[VCPU_ACCESS_STATS];
};

/* Counts of what the guest tried and was refused, for the report. */
struct vcpu_denied {
	uint64_t msr;                    /* MSR accesses answered with #GP */
	uint64_t vmx_insn;               /* VMX instructions answered with #UD */
	uint64_t cr4;                    /* CR4 writes answered with #GP (VMXE, reserved bits) */
	uint64_t apic_base;              /* IA32_APIC_BASE changes dropped */
	uint64_t xsetbv;                 /* invalid XSETBVs answered with #GP */
	uint64_t sleep;                  /* S1-S4 requests dropped */
	uint64_t ept_hv_pages;           /* hypervisor pages touched, mapped to the sink */
	uint64_t ept_unowned;            /* EPT violations no trap owned (not hypervisor memory): the sink */
};

struct vcpu {
	struct guest_regs regs;          /* first: the exit stub finds it at [HOST_RSP] */
	uint32_t index;
	uint32_t apic_id;
	int32_t node;                /* its CPU's NUMA node (-1 unknown): where its pages come from */
	void *vmcs;
	struct pi_desc *pid;             /* own 4 KiB page: Bochs 3.0 wants 4 KiB alignment */
	uint8_t *exit_stack;
	/* the exit being handled */
	uint32_t reason;
	uint64_t qual;
	struct event_queue events;       /* what the next entry delivers (vmx/event.c) */
	/* counters */
	uint64_t exits_total;
	uint64_t exits[EXIT_REASON_MAX];
	/* Time in the hypervisor per exit reason, from the handler's first
	 * instruction to its last before VM entry (TSC cycles). */
	struct log2_hist exit_time[EXIT_REASON_MAX];
	uint64_t launch_tsc;             /* first VM entry: guest time starts */
	/* The counters at the last interval report (report=SECONDS). */
	struct {
		uint64_t exits, in_hv, posts, notifies, timer_posts, pv_eois;
		uint64_t exits_by[EXIT_REASON_MAX];
	} snap;
	struct access_stats msr_stats, io_stats;
	struct vcpu_denied denied;
	uint64_t ept_late_gibs;          /* GiBs beyond the identity map mapped on demand */       /* the guest's attempts the hypervisor refused */
	uint64_t sipi_base;              /* CS base the last SIPI set, for the latched INIT (partition model) */
	uint32_t inits_taken;            /* INITs that parked this vCPU */
	uint32_t sipis_taken;            /* SIPIs that started it */
	uint32_t sipi_waits;             /* waits for a SIPI in root mode (virq_startup_wait) */
	bool in_guest;                   /* ept_sync: entered to run guest code, not exited since */
	uint64_t ept_seen;               /* ept_sync: the EPT generation it invalidated for last */
	bool parked;                     /* in the state after INIT (its VMCS says wait-for-SIPI) until a SIPI */
	struct guest_tsc tsc;            /* the guest's TSC offset and IA32_TSC_ADJUST (vmx/tsc.c) */
	bool tsc_adjust_exists;          /* the CPU has IA32_TSC_ADJUST (else the guest's accesses #GP) */
	uint64_t tsc_writes;             /* guest writes of IA32_TSC and IA32_TSC_ADJUST */
	uint64_t exit_tsc;               /* host TSC when this exit began */
	struct startup startup;          /* the guest's INITs and SIPIs to it, emulated (guest/startup.h) */
	uint64_t inits_held, sipis_stale, nmis_dropped;   /* held INIT exits ignored; SIPIs and NMIs discarded */
	/* the virtual interrupt model (vmx/virq.c) */
	uint8_t *vapic;                  /* virtual-APIC page */
	struct vtimer timer;             /* the guest's x2APIC timer ... */
	spinlock_t timer_lock;           /* ... shared with the timer service (timer=posted, housekeeping=) */
	uint64_t host_deadline;          /* what this CPU's IA32_TSC_DEADLINE holds */
	uint8_t *msr_bitmap;             /* its MSR bitmap: its own copy with timer=apicv, else the shared one */
	bool timer_by_cpu;               /* timer=apicv: the CPU serves the guest's timer now; timer=deadline:
					    the guest's IA32_TSC_DEADLINE reaches the LAPIC (vmx/virq_timer.c) */
	uint64_t timer_to_cpu, timer_to_host;   /* timer=apicv and deadline: hand-overs each way */
	/* timer=deadline: the LAPIC timer's expiries of the guest's own deadlines
	 * (each posted), host-timer interrupts left from the host's service
	 * (not the guest's: dropped), and at the last hand-over to the LAPIC
	 * whether such an interrupt was still requested, and the deadline given. */
	uint64_t pass_fired, pass_stale;
	uint64_t pass_undelivered;       /* timer=deadline: LAPIC expiries after the guest's LVT write took the timer back */
	bool pass_stale_pending;
	uint64_t pass_handed;
	uint32_t nmi_pending;            /* virtual NMIs to inject (atomic) */
	struct level_stack level;        /* level-triggered vectors awaiting the guest's EOI */
	uint64_t eoi_exit[4];            /* the EOI-exit bitmap as written */
	uint32_t esr_pending;            /* APIC errors since its last ESR write (apic/vapic.h) */
	uint64_t apic_errors;            /* errors its virtual APIC detected (illegal self-IPI vectors) */
	uint64_t apic_write_ignored;     /* APIC-write exits at an offset none of its writes can cause */
	struct ipi_src_stats ipi;        /* how this vCPU's IPIs were served */
	uint32_t extint[256];            /* device vectors taken and re-posted */
	bool timer_late_said;
	uint64_t timer_exits_arm, timer_exits_fire;   /* exits the guest's timer cost: its writes, its expiries */
	uint64_t timer_posts, nmis_injected, nmis_host, notify_in_root, hlt_resumes, hlt_skipped;
	uint64_t lvtpc_writes, lvtpc_refused;   /* the guest LVTPC writes carried to the physical one; refused modes */
	uint32_t lvtpc_phys;                    /* the last value written to the physical LVTPC */
	uint64_t lvt_writes[2], lvt_refused[2]; /* the guest's LVT CMCI [0] and thermal [1] carried out; refused */
	uint32_t lvt_phys[2];                   /* the last values written to the physical ones */
	bool hlt_wanted;                 /* its HLT exited: halt at the entry unless something ends it */
	bool halted_off;                 /* entered halted with IF = 0, nothing to deliver (atomic; vmx/virq.c) */
	const char *died;                /* virq_before_entry: the guest died, why (vmx/exit.c ends the run) */
	bool bochs_test_wake;            /* HC_BT_HLT_PENDING: its next external-interrupt exit ends the HLT state */
	bool bochs_test_sti;             /* HC_BT_VIRQ_CLI, HC_BT_EXC_KICK: this entry with blocking by STI */
	bool bochs_test_hlt;             /* HC_BT_VIRQ_HLT: this entry in the HLT state, a vector in RVI */
	bool bochs_test_window;          /* HC_BT_WINDOW_HLT: interrupt-window exiting until its exit */
	bool bochs_test_np;              /* HC_BT_VIRQ_NP: #NP intercepted until its exit */
	void (*at_window)(struct vcpu *v);  /* if0_defer: an interrupt held back (the console's), raised at IF = 1 */
	uint64_t pic_pending[4];         /* 8259 (ExtINT) vectors to inject, lowest (highest 8259 priority) first */
	uint64_t pic_injected;
	/* The software x2APIC (eoi=pv): KVM's PV EOI MSR (bit 0 on, bits 63:2
	 * the word's guest-physical address); whether its flag is armed; counts. */
	uint64_t pv_eoi_msr;
	bool pv_eoi_armed;
	uint64_t sw_injected, sw_eoi_exits, sw_pv_eois, sw_pv_armed, sw_eoi_empty;
	/* The hang check (vmx/virq_hang.c): the last exits, what another CPU
	 * saw pending, and a diagnosis asked of this vCPU at its next exit. */
	struct exit_trace { uint64_t tsc; uint32_t reason; uint32_t qual; } trace[16];
	uint32_t trace_n;
	struct hang_watch hang;
	uint32_t diag_wanted;            /* atomic */
	uint32_t diags;                  /* diagnoses printed for it */
	bool preempt_watchdog;           /* the VMX-preemption timer holds the hang check's value */
	bool watchdog_said;              /* its watchdog diagnosis printed; cleared by any other exit */
	uint64_t watchdog_exits;
};

_Static_assert(offsetof(struct vcpu, regs) == 0, "entry.asm: regs first");
_Static_assert(offsetof(struct guest_regs, rax) == 0 && offsetof(struct guest_regs, rbx) == 8 &&
	       offsetof(struct guest_regs, rcx) == 16 && offsetof(struct guest_regs, rdx) == 24 &&
	       offsetof(struct guest_regs, rsi) == 32 && offsetof(struct guest_regs, rdi) == 40 &&
	       offsetof(struct guest_regs, rbp) == 48 && offsetof(struct guest_regs, r8) == 56 &&
	       offsetof(struct guest_regs, r15) == 112, "entry.asm offsets");

struct memmap;
struct acpi_info;
struct mtrr_state;
/* What an in-image test aid may add to each exit: an answer to
 * HC_HV_BOCHSTEST, a step after the exit's handler, one before the entry.
 * vmx/ never includes testaid/: boot/ hands these in (struct vmx_start). */
struct vmx_exit_aid {
	int64_t (*call)(void *ctx, uint64_t what);
	/* Before the exit's handler: true when the aid handled the exit itself. */
	bool (*on_exit)(struct vcpu *v, uint32_t basic);
	void (*after_exit)(struct vcpu *v, uint32_t basic);
	void (*before_entry)(struct vcpu *v, uint32_t basic);
};
/* What the exit handlers need to know about the machine. */
struct vmx_env {
	struct vmcs_config cfg;          /* the control words every vCPU uses */
	const struct vmx_caps *caps;
	const struct memmap *mem;
	const struct mtrr_state *mtrr;   /* memory types of regions mapped late */
	uint64_t ept_end;                /* ept_build mapped [0, ept_end) */
	uint64_t gpa_limit;              /* 1 << the guest's physical-address width */
	const struct acpi_info *acpi;
	uint64_t xcr0_mask;              /* XCR0 bits the guest may set */
	int tiers_ipi;                   /* the IPI tier (enum ipi_tier) */
	/* bochstest=1: an in-image test aid's hooks into the exit loop
	 * (testaid/bochstest.c, given by boot/'s dispatcher), NULL: none. */
	const struct vmx_exit_aid *aid;
};
extern struct vmx_env vmx_env;
extern struct vcpu *vcpus[];

/* vmx/entry.asm */
int vmx_launch(struct guest_regs *r);        /* returns only on VMfail: 1 invalid, 2 valid */
void vmx_exit_stub(void);

/* vmx/exit.c */
void vmx_exit_handler(struct guest_regs *r);
__noreturn void vmx_resume_failed(struct guest_regs *r);
void vcpu_skip_insn(struct vcpu *v);
/* The same for an instruction of len bytes the hypervisor decoded itself
 * (an EPT violation's MMIO access: no exit instruction length). */
void vcpu_skip_insn_len(struct vcpu *v, uint64_t len);
void vcpu_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error);
void vcpu_dump(struct vcpu *v);
void access_count(struct access_stats *s, uint32_t key, bool write);
const char *exit_reason_name(uint32_t reason);
/* vmx/vcpu.c: general-purpose register n (0 RAX .. 15 R15, 4 RSP from the VMCS). */
uint64_t vcpu_reg(struct vcpu *v, unsigned n);
void vcpu_set_reg(struct vcpu *v, unsigned n, uint64_t val);
/* Up to max bytes at the current VMCS's guest RIP, through the guest's
 * paging (an emulated MMIO access decodes them): how many could be read. */
unsigned vcpu_fetch_insn(uint8_t *b, unsigned max);
#define vcpu_inject_gp(v) vcpu_inject_exception((v), 13, true, 0)
#define vcpu_inject_ud(v) vcpu_inject_exception((v), 6, false, 0)
#endif
