/* The VMCS: control words computed once from the capabilities and the
 * tiers (vmcs_config_build), then written per CPU area by area. Pure
 * computation plus vmcs_write(), so host tests can check the result
 * against a model of the SDM's VM-entry checks. */
#ifndef VMX_VMCS_H
#define VMX_VMCS_H
#include "../lib/types.h"
#include "caps.h"
#include "tiers.h"

/* How interrupts reach the guest. */
enum irq_model {
	IRQ_PARTITION,   /* the guest owns the physical x2APIC; INIT and SIPI exit */
	IRQ_VIRTUAL,     /* APICv: posted interrupts, VID, and IPIv where the tier says so */
};

struct vmcs_config {
	int irq_model;
	uint32_t pin, proc, proc2, exit, entry;   /* entry without "IA-32e mode guest" */
	uint64_t proc3;
	bool proc3_active;                        /* "activate tertiary controls" set */
	bool ipiv;                                /* tertiary bit 4 on */
	bool sw_apic;                             /* virtual model without VID: the software x2APIC (eoi=pv) */
	bool apic_timer_virt;                     /* tertiary bit 8 on (timer=apicv) */
	bool deadline_pass;                       /* timer=deadline: IA32_TSC_DEADLINE passed to the LAPIC */
	uint32_t watchdog_ticks;                  /* hangcheck=: the VMX-preemption timer's value at every entry
						   * (a vCPU that makes no exit for that long exits), 0: none */
	bool if0_defer;                           /* stock Bochs 3.0 (defect G): the hypervisor's own device
						   * interrupts wait for the guest's IF = 1 (vmx/vconsole.c) */
	bool eoi_trap;                            /* all-ones EOI-exit bitmap (eoi=trap with VID) */
	int timer;                                /* the timer tier (enum timer_tier) in the virtual model */
	uint8_t preempt_rate;                     /* timer=preempt: the timer ticks every 2^rate TSC ticks */
	char ipiv_note[160];                      /* why IPIv is on or off */
	bool perf_hide;                           /* IA32_PERF_GLOBAL_CTRL loaded at entry (the guest's,
						   * saved at exit) and 0 at exit: the guest's counters
						   * stop in VMX root (vmcs_config_build) */
	char perf_note[128];                      /* why, or why not */
	uint64_t eptp;
	paddr_t msr_bitmap, io_bitmap_a, io_bitmap_b;
	paddr_t pid_table;                        /* PID-pointer table (8 bytes per APIC ID) */
	uint16_t last_pid_index;                  /* highest APIC ID */
	uint8_t posted_intr_nv;                   /* notification vector */
	uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;
	uint64_t cr0_mask, cr4_mask;              /* bits the guest may not own */
};

/* Inputs that come from memory the caller allocated. */
struct vmcs_resources {
	uint64_t eptp;
	paddr_t msr_bitmap, io_bitmap_a, io_bitmap_b, pid_table;
	uint32_t max_apic_id;
	bool pmu_global;             /* CPUID.0AH:EAX[7:0] >= 2: IA32_PERF_GLOBAL_CTRL exists */
};

/* The interrupt model for irq=auto|virtual|partition (enum irq_opt): virtual
 * needs VID and posted interrupts (the chosen tiers keep VID on), x2APIC and
 * a TSC-deadline timer on the host (the host's timer serves the guest's).
 * auto falls back to partition; an explicit virtual the CPU cannot honour is
 * refused (-1). 'why' says what was chosen and why. */
int vmcs_irq_model_choose(const struct vmx_caps *c, const struct hv_tiers *t, int opt, bool x2apic,
			  bool tsc_deadline, char *why, size_t n);

/* Returns 0, or -1 with err naming a control the hypervisor cannot run without. */
int vmcs_config_build(struct vmcs_config *cfg, const struct vmx_caps *c, const struct hv_tiers *t,
		      int irq_model, const struct vmcs_resources *res, char *err, size_t errlen);
void vmcs_config_print(const struct vmcs_config *cfg);

/* The host state of one CPU. */
struct vmcs_host {
	uint64_t cr0, cr3, cr4, efer, pat;
	uint64_t gs_base, tr_base, gdtr_base, idtr_base;
	uint64_t rsp, rip;
	uint16_t cs, ds, tr;
};

/* Per-vCPU addresses. */
struct vmcs_vcpu {
	uint16_t vpid;
	paddr_t pid;                 /* this vCPU's posted-interrupt descriptor */
	paddr_t virtual_apic;        /* 4 KiB virtual-APIC page (IRQ_VIRTUAL) */
	paddr_t msr_bitmap;          /* its own MSR bitmap (timer=apicv), or 0: the config's */
	uint64_t perf_global_ctrl;   /* the guest's first IA32_PERF_GLOBAL_CTRL (perf_hide): its CPU's as found */
};

/* A guest register snapshot for the state areas. */
struct vmcs_seg { uint16_t sel; uint64_t base; uint32_t limit, ar; };
struct vmcs_guest {
	uint64_t cr0, cr3, cr4, efer, pat, dr7, rsp, rip, rflags;
	struct vmcs_seg es, cs, ss, ds, fs, gs, ldtr, tr;
	uint64_t gdtr_base, idtr_base;
	uint32_t gdtr_limit, idtr_limit;
	uint32_t activity;
	bool long_mode;              /* sets "IA-32e mode guest" */
};

/* Areas, in the order vmcs_setup() writes them. */
void vmcs_write_controls(const struct vmcs_config *cfg, const struct vmcs_vcpu *v);
void vmcs_write_host(const struct vmcs_host *h);
void vmcs_write_guest(const struct vmcs_config *cfg, const struct vmcs_guest *g);

/* Guest states the boot protocol and the SDM define. */
void guest_state_linux64(struct vmcs_guest *g, uint64_t entry, uint64_t cr3, uint64_t gdt, uint32_t gdt_limit);
void guest_state_wait_sipi(struct vmcs_guest *g);
/* Applies a SIPI with vector 'vec' to a wait-for-SIPI state. */
void guest_state_sipi(struct vmcs_guest *g, uint8_t vec);
/* Guest CR0/CR4 as loaded: the value the guest asked for with the VMX fixed bits forced. */
uint64_t vmcs_guest_cr0(const struct vmcs_config *cfg, uint64_t want);
uint64_t vmcs_guest_cr4(const struct vmcs_config *cfg, uint64_t want);

/* Guest segment access rights. */
#define AR_UNUSABLE   (1u << 16)
#define AR_CODE64     0xa09b   /* L, P, S, execute/read accessed */
#define AR_DATA       0xc093   /* G, D/B, P, S, read/write accessed */
#define AR_CODE16     0x009b
#define AR_DATA16     0x0093
#define AR_TSS64_BUSY 0x008b
#define AR_LDT        0x0082
#endif
