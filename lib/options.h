/* The hypervisor's command line: "key=value" words separated by spaces.
 * Unknown keys and bad values are errors that name the word. */
#ifndef LIB_OPTIONS_H
#define LIB_OPTIONS_H
#include "types.h"
#include "spcr.h"

enum ipi_tier   { IPI_AUTO = 0, IPI_IPIV, IPI_FAST, IPI_PV, IPI_TRAP };
enum eoi_tier   { EOI_AUTO = 0, EOI_VID, EOI_PV, EOI_TRAP };
enum timer_tier { TIMER_AUTO = 0, TIMER_APICV, TIMER_DEADLINE, TIMER_POSTED, TIMER_PREEMPT, TIMER_TRAP };
enum irq_opt    { IRQ_OPT_AUTO = 0, IRQ_OPT_VIRTUAL, IRQ_OPT_PARTITION };
enum hlt_opt    { HLT_OPT_AUTO = 0, HLT_OPT_GUEST, HLT_OPT_EXIT };
enum nxhuge_opt { NXHUGE_AUTO = 0, NXHUGE_ON, NXHUGE_OFF };
enum novmx_opt  { NOVMX_LINUX = 0, NOVMX_STOP };
enum exit_mode  { EXIT_NONE = 0, EXIT_AUTO, EXIT_S5, EXIT_QEMU, EXIT_BOCHS };
enum iommu_opt  { IOMMU_OPT_AUTO = 0, IOMMU_OPT_REQUIRE, IOMMU_OPT_OFF };
enum iommu_qi   { IOMMU_QI_AUTO = 0, IOMMU_QI_OFF };
enum ioapic_opt { IOAPIC_OPT_VIRTUAL = 0, IOAPIC_OPT_PASS };
enum msi_opt    { MSI_OPT_TRAP = 0, MSI_OPT_PASS };
enum hpet_opt   { HPET_OPT_AUTO = 0, HPET_OPT_TRAP, HPET_OPT_PASS };
enum intremap_opt { INTREMAP_AUTO = 0, INTREMAP_OFF, INTREMAP_ON };
/* What a guest's reboot (a reset it asks for, a triple fault) and its
 * power-off do: on_reboot=reset (the machine reset after the report, every
 * CPU out of VMX first), halt (the report, then the machine halts), report
 * (a death: the report, result=fail, exit= ends the run); auto: report
 * where exit= ends the run by itself (a test), else reset.
 * on_poweroff=off (the S5 request carried out after the report) or halt. */
enum reboot_opt { REBOOT_AUTO = 0, REBOOT_RESET, REBOOT_HALT, REBOOT_REPORT };
enum poweroff_opt { POWEROFF_OFF = 0, POWEROFF_HALT };

extern const char *const ipi_tier_names[];    /* indexed by enum ipi_tier */
extern const char *const eoi_tier_names[];
extern const char *const timer_tier_names[];
extern const char *const exit_mode_names[];
extern const char *const irq_opt_names[];
extern const char *const hlt_opt_names[];
extern const char *const nxhuge_opt_names[];
extern const char *const novmx_opt_names[];
extern const char *const iommu_opt_names[];
extern const char *const iommu_qi_names[];
extern const char *const ioapic_opt_names[];
extern const char *const msi_opt_names[];
extern const char *const hpet_opt_names[];
extern const char *const intremap_opt_names[];
extern const char *const reboot_opt_names[];
extern const char *const poweroff_opt_names[];

struct hv_options {
	struct uart_desc console; /* console=com1..com4|PORT|io,PORT|mmio,ADDR|mmio32,ADDR[,BAUD|keep][,stride=N] */
	bool console_set;       /* console= given: the firmware's SPCR is not followed */
	int loglevel;           /* loglevel=0..3 (default 2, info) */
	int ipi;                /* ipi=auto|ipiv|fast|pv|trap */
	int eoi;                /* eoi=auto|vid|pv|trap */
	int timer;              /* timer=auto|apicv|posted|preempt|trap */
	int irq;                /* irq=auto|virtual|partition: who owns the x2APIC */
	int ioapic;             /* ioapic=virtual|pass: the IOAPICs emulated for the guest, the hypervisor
	                           alone programming them (virtual interrupt model), or the guest's own */
	int msi;                /* msi=trap|pass (trap by default): the guest's PCI configuration space filtered, its MSI and
	                           MSI-X programming trapped and routed by the hypervisor (virtual model) */
	int hpet;               /* hpet=auto|trap|pass: the HPET's page out of the EPT, its FSB (MSI) delivery hidden
	                           (vmx/hpet_trap.c); auto: where a timer is FSB-capable (virtual model) */
	int hlt;                /* hlt=auto|guest|exit: whether the guest's HLT exits (virtual model) */
	int nxhuge;             /* nxhuge=auto|on|off: the EPT's large pages not executable, a fetch splitting
	                           its page into executable 4 KiB ones (iTLB multihit: vmx/ept.h); auto: where
	                           the CPU has the erratum */
	int novmx;              /* novmx=linux|stop: without VMX, boot the kernel natively or stop */
	int exit_mode;          /* exit=none|auto|s5|qemu|bochs: what to do at the end */
	int on_reboot;          /* on_reboot=auto|reset|halt|report (enum reboot_opt) */
	int on_poweroff;        /* on_poweroff=off|halt */
	uint32_t max_cpus;      /* smp=N: start at most N CPUs (default all) */
	bool vmx_smoke_only;    /* guest=none: stop after VMXON/VMXOFF (no guest) */
	uint64_t ap_timeout_us; /* aptimeout=N microseconds per AP (default 200000) */
	int64_t housekeeping;   /* housekeeping=APICID: the CPU kept from the guest to serve its timers (-1: none) */
	int64_t phantom_cpu;    /* phantomcpu=ID: test aid, also start a CPU that does not exist (-1: none) */
	uint32_t report_s;      /* report=SECONDS: an interval report every SECONDS (0, the default: none) */
	uint32_t report_cpus;   /* reportcpus=auto|all|N: the vCPUs the end report details one by one
	                           (REPORT_CPUS_AUTO: all up to REPORT_CPUS_AUTO_MAX vCPUs, else a summary
	                           and the REPORT_CPUS_AUTO_WORST with the most exits; REPORT_CPUS_ALL) */
	uint32_t hangcheck_s;   /* hangcheck=SECONDS: a vCPU with an interrupt pending and no exit for this
	                           long is diagnosed (vmx/hang.c; default 10, 0: off) */
	bool ipiv_test;         /* ipivtest=1: test aid, three PID-pointer entries past the last vCPU
	                           (absent, reserved bits set, a spare descriptor with SN=1) */
	int iommu;              /* iommu=auto|require|off: DMA isolation with VT-d */
	int iommu_qi;           /* iommuqi=auto|off: queued invalidation where a unit offers it, or
	                           the registers (test aid) */
	int intremap;           /* intremap=auto|off|on: the hypervisor owns VT-d interrupt remapping
	                           (IOAPIC pins and MSIs through IRTEs, CPUs above APIC ID 255 to the
	                           guest); auto: where the units can, with the virtual IOAPIC and
	                           not irq=partition or a test aid (docs/iommu.md) */
	bool iommu_test;        /* iommutest=1: test aid, DMA remapping as for a guest, then the edu
	                           device's DMA engine against it; no guest */
	bool iommu_ioapic_test; /* iommutest=ioapic: test aid, owned interrupt remapping, a virtual IOAPIC
	                           over the real one, the RTC's pin routed through it (testaid/irtest.c); no guest */
	bool iommu_sriov_test;  /* iommutest=sriov: test aid, owned interrupt remapping, an SR-IOV PF's VFs
	                           enabled through the trap and a VF's MSI-X trapped (testaid/msi_sriovtest.c); no guest */
	bool iommu_preon;       /* iommutest=preon: iommutest=1 with every unit first left on as by
	                           pre-boot DMA protection (TE, QI, IR on), for the hand-over */
	bool vuart;             /* vuart=1 (default): the guest's console UART is virtual (docs/console.md);
	                           vuart=0: the guest drives the hypervisor's UART itself, as before */
	bool probe;             /* probe (a bare word): check the machine, print one verdict table
	                           (boot/probe.c) and stop; no guest, no translation turned on */
	bool bochs_test;        /* bochstest=1: test aid, the HC_HV_BOCHSTEST hypercall that sets up
	                           the VM entries that show Bochs 3.0's defects (docs/bochs.md) */
};

#define REPORT_CPUS_AUTO 0u
#define REPORT_CPUS_ALL  0xffffffffu
#define REPORT_CPUS_AUTO_MAX 16u
#define REPORT_CPUS_AUTO_WORST 4u

void options_defaults(struct hv_options *o);
/* Returns 0, or -1 with a message naming the bad word in err. */
int options_parse(const char *cmdline, struct hv_options *o, char *err, size_t errlen);
/* The last valid console= of the line into *d; false when none. */
bool options_console(const char *cmdline, struct uart_desc *d);
#endif
