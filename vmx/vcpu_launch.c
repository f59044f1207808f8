/* Creating and launching the vCPUs: VMXON, VMCS area by area, VMLAUNCH. */
#include "vcpu_launch.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "vmxon.h"
#include "ept.h"
#include "ept_sync.h"
#include "virq.h"
#include "tsc.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/memmap.h"
#include "../lib/nodemem.h"
#include "../lib/msr.h"
#include "../lib/cpu.h"
#include "../lib/string.h"
#include "../lib/cpusum.h"


static struct vmcs_guest bsp_guest;
static uint64_t bsp_rsi;

struct vcpu *vcpu_create(struct percpu *p, uint8_t nv)
{
	/* Everything per vCPU from its CPU's node (lib/nodemem.h). */
	struct vcpu *v = page_alloc_node(p->node, VCPU_PAGES);
	v->index = p->index;
	v->apic_id = p->apic_id;
	v->node = p->node;
	v->vmcs = page_alloc_node(p->node, 1);
	/* Bochs 3.0 refuses a descriptor that is not 4 KiB aligned (the SDM asks
	 * for 64 bytes; TESTING.md, defect 1): each gets its own page. */
	v->pid = page_alloc_node(p->node, 1);
	pi_desc_init(v->pid, nv, p->apic_id);
	v->vapic = page_alloc_node(p->node, 1);
	v->exit_stack = page_alloc_node(p->node, EXIT_STACK_PAGES);
	vcpus[p->index] = v;
	return v;
}

void vcpu_set_bsp_guest(const struct vmcs_guest *g, uint64_t rsi)
{
	bsp_guest = *g;
	bsp_rsi = rsi;
}

static void host_state(struct vmcs_host *h, struct percpu *p, struct vcpu *v)
{
	struct { uint16_t limit; uint64_t base; } __packed idtr;
	__asm__ volatile("sidt %0" : "=m"(idtr));
	memset(h, 0, sizeof *h);
	h->cr0 = read_cr0();
	h->cr3 = read_cr3();
	h->cr4 = read_cr4();
	h->efer = rdmsr(MSR_IA32_EFER);
	h->pat = rdmsr(MSR_IA32_PAT);
	h->gs_base = (uint64_t)(uintptr_t)p;
	h->tr_base = (uint64_t)(uintptr_t)&p->gdt.tss;
	h->gdtr_base = (uint64_t)(uintptr_t)p->gdt.gdt;
	h->idtr_base = idtr.base;
	h->cs = GDT_CODE64;
	h->ds = GDT_DATA;
	h->tr = GDT_TSS;
	/* The exit stub finds &regs at [HOST_RSP]. */
	uint64_t top = (uint64_t)(uintptr_t)(v->exit_stack + EXIT_STACK_PAGES * PAGE_SIZE) - 16;
	*(uint64_t *)(uintptr_t)top = (uint64_t)(uintptr_t)&v->regs;
	h->rsp = top;
	h->rip = (uint64_t)(uintptr_t)vmx_exit_stub;
}

/* Runs on every CPU: the boot CPU enters Linux, the others wait for SIPI. */
__noreturn void vcpu_launch_this_cpu(void)
{
	struct percpu *p = this_cpu();
	struct vcpu *v = vcpus[p->index];
	struct vmcs_host h;
	struct vmcs_vcpu vv = { .vpid = (uint16_t)(p->index + 1), .pid = (paddr_t)(uintptr_t)v->pid,
				.virtual_apic = (paddr_t)(uintptr_t)v->vapic,
				.msr_bitmap = (paddr_t)(uintptr_t)v->msr_bitmap };
	if (vmx_env.cfg.perf_hide && !rdmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, &vv.perf_global_ctrl))
		vv.perf_global_ctrl = 0;   /* (an emulator's CPUID may promise the MSR and fault its read) */
	struct vmcs_guest g;
	char msg[128];
	int rc;

	/* The host executes XSETBV for the guest, which needs CR4.OSXSAVE. */
	uint32_t a, b, c, d;
	cpuid_count(1, 0, &a, &b, &c, &d);
	if (c & BIT(26))
		write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	if (vmx_on(vmx_env.caps, p->vmxon_region, msg, sizeof msg))
		panic("cpu%u: %s\n", p->index, msg);
	*(uint32_t *)v->vmcs = vmx_env.caps->revision;
	if (vmclear((paddr_t)(uintptr_t)v->vmcs) || vmptrld((paddr_t)(uintptr_t)v->vmcs))
		panic("cpu%u: VMCLEAR/VMPTRLD of the VMCS at %p failed\n", p->index, v->vmcs);
	ept_invalidate(vmx_env.cfg.eptp, vmx_env.caps);

	vmcs_write_controls(&vmx_env.cfg, &vv);
	virq_vcpu_start(v);
	host_state(&h, p, v);
	vmcs_write_host(&h);
	if (p->index == 0) {
		g = bsp_guest;
		v->regs.rsi = bsp_rsi;
	} else {
		guest_state_wait_sipi(&g);
		v->parked = true;
	}
	vmcs_write_guest(&vmx_env.cfg, &g);
	/* One line a CPU on a small machine; on a large one the boot CPU's and
	 * the last AP's, which says how many came before it (each AP is
	 * launched in turn, boot CPU last: vmx/setup.c). */
	if (cpusum_detailed(ncpus) || !p->index || p->index == ncpus - 1)
		pr_info("vmx: cpu%u VMLAUNCH: %s%s\n", p->index,
			!p->index ? "vCPU enters the Linux kernel" :
			vmx_env.cfg.irq_model == IRQ_VIRTUAL ? "vCPU waits for SIPI (in root mode, then launched)" : "vCPU waits for SIPI",
			p->index && !cpusum_detailed(ncpus) ? " (the last AP: so did the ones before it)" : "");
	__atomic_store_n(&p->launched, 1, __ATOMIC_RELEASE);
	v->launch_tsc = rdtsc();
	vcpu_tsc_init(v, p->tsc_comp);
	virq_startup_wait(v);
	ept_sync_entry(v);
	rc = vmx_launch(&v->regs);
	/* Only a VMfail returns here; a failed entry comes back as an exit. */
	if (rc == 1)
		panic("cpu%u: VMLAUNCH failed: VMfailInvalid (no current VMCS)\n", p->index);
	uint32_t err = (uint32_t)vmcs_read(VMCS_VM_INSTRUCTION_ERROR);
	panic("cpu%u: VMLAUNCH failed: %s (VM-instruction error %u)\n", p->index, vmx_insn_error_name(err), err);
}

