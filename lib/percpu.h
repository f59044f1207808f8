/* One struct per CPU, page-aligned, reached through GS base (gs:0 = self). */
#ifndef LIB_PERCPU_H
#define LIB_PERCPU_H
#include "types.h"
#include "desc.h"

#define MAX_CPUS 1024         /* vCPUs; CPUs kept out by smp= are parked beyond this count */
#define MAX_PARKED 1024
#define PARKED_INDEX 0x10000  /* index of the first parked CPU (never a vCPU index) */
#define UNPLACED_INDEX 0xffffffffu /* started, index not yet given (percpu_place) */
#define CPU_STACK_PAGES 4
#define PERCPU_PAGES (ALIGN_UP(sizeof(struct percpu), PAGE_SIZE) / PAGE_SIZE)

enum cpu_state { CPU_ABSENT = 0, CPU_STARTING, CPU_ONLINE, CPU_FAILED };

struct percpu {
	struct percpu *self;             /* gs:0 */
	uint32_t index;                  /* 0 = boot CPU */
	uint32_t apic_id;
	int32_t node;                    /* NUMA node (SRAT proximity domain), -1 unknown */
	volatile uint32_t state;         /* enum cpu_state */
	volatile uint32_t msr_probe;     /* rdmsr_safe in progress */
	volatile uint32_t msr_faulted;   /* set by the #GP handler */
	void (*volatile work)(void);     /* AP mailbox: run, then cleared */
	volatile uint32_t launched;      /* about to VMLAUNCH its vCPU */
	volatile bool id_mismatch;       /* an AP whose APIC ID register said id_seen, not apic_id */
	volatile uint32_t id_seen;
	int64_t tsc_comp;                /* what its vCPU's TSC offset makes up for between packages (boot/smp.c) */
	uint64_t stack_top;
	int vmxon_status;                /* 0 ok, <0 failed, 1 not tried */
	char vmxon_msg[96];
	void *vmxon_region;
	struct gdt_tss gdt;              /* this CPU's GDT and TSS */
	uint8_t nmi_stack[1024] __aligned(16);
	uint8_t df_stack[1024] __aligned(16);
} __aligned(4096);

extern struct percpu *cpus[MAX_CPUS];
extern uint32_t ncpus;

#ifdef HV_HOST_TEST
struct percpu *this_cpu(void);   /* test/unit/hw_fake.c */
#else
static inline struct percpu *this_cpu(void)
{
	struct percpu *p;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}
#endif

/* Allocates and sets up CPU 'index' (stack, GDT, TSS) from its node's
 * memory where the SRAT names its node (lib/nodemem.h); does not load it.
 * An index >= MAX_CPUS (a parked CPU) is not entered in cpus[]. */
struct percpu *percpu_alloc(uint32_t index, uint32_t apic_id);
/* Gives an allocated CPU its index (and its cpus[] entry when a vCPU). */
void percpu_place(struct percpu *p, uint32_t index);
/* Loads GDT, TSS, IDT and GS base on the calling CPU. */
void percpu_load(struct percpu *p);
#endif
