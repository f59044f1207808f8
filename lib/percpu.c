/* Per-CPU areas. */
#include "percpu.h"
#include "memmap.h"
#include "msr.h"
#include "cpu.h"
#include "nodemem.h"

struct percpu *cpus[MAX_CPUS];
uint32_t ncpus;

struct percpu *percpu_alloc(uint32_t index, uint32_t apic_id)
{
	_Static_assert(offsetof(struct percpu, self) == 0, "gs:0 must be the self pointer");
	int64_t node = nodemem_node_of(apic_id);
	struct percpu *p = page_alloc_node(node, PERCPU_PAGES);
	uint8_t *stack = page_alloc_node(node, CPU_STACK_PAGES);
	p->self = p;
	p->node = (int32_t)node;
	p->index = index;
	p->apic_id = apic_id;
	p->vmxon_status = 1;
	p->stack_top = (uint64_t)(uintptr_t)(stack + CPU_STACK_PAGES * PAGE_SIZE);
	gdt_tss_init(&p->gdt, (uint64_t)(uintptr_t)(p->nmi_stack + sizeof p->nmi_stack),
		     (uint64_t)(uintptr_t)(p->df_stack + sizeof p->df_stack));
	if (index < MAX_CPUS)
		cpus[index] = p;
	return p;
}

void percpu_place(struct percpu *p, uint32_t index)
{
	p->index = index;
	if (index < MAX_CPUS)
		cpus[index] = p;
}

void percpu_load(struct percpu *p)
{
	gdt_tss_load(&p->gdt);
	idt_load();
	wrmsr(MSR_IA32_GS_BASE, (uint64_t)(uintptr_t)p);
}
