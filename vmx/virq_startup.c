/* INIT and SIPI at run time: the guest's own (sent through ipi/, recorded
 * in guest/startup.c) and the physical ones VMX turns into exits. */
#include "virq_int.h"
#include "vmcs_ops.h"
#include "../guest/startup.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"

/* The guest's INIT parks the vCPU in wait-for-SIPI (SDM Vol. 3C, "INIT Signals").
 * "If a logical processor is in the wait-for-SIPI state, INIT signals are
 * blocked": the INIT that Linux sends before its SIPI stays pending while the
 * vCPU waits, and exits right after the SIPI, before the first instruction.
 * That stale INIT is recognized by RIP 0 at the SIPI's CS base, and dropped. */
void exit_init(struct vcpu *v)
{
	struct vmcs_guest g;
	if (v->sipi_base && vmcs_read(VMCS_GUEST_RIP) == 0 && vmcs_read(VMCS_GUEST_CS_BASE) == v->sipi_base) {
		v->sipi_base = 0;
		return;
	}
	v->sipi_base = 0;
	/* Said, not silent: an INIT parks this vCPU until a SIPI, the boot
	 * vCPU included (a guest resetting its boot CPU has stopped it). */
	if (v->inits_taken++ < 4 || v->index == 0)
		pr_warn("vmx: cpu%u: INIT from the guest: the vCPU waits for a SIPI%s\n", v->index,
			v->index == 0 ? " (the guest's boot CPU: it stays stopped unless another vCPU sends one)" : "");
	guest_state_wait_sipi(&g);
	vmcs_write_guest(&vmx_env.cfg, &g);
	memset(&v->regs, 0, sizeof v->regs);
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL)
		virq_vcpu_init(v);
}

void exit_sipi(struct vcpu *v)
{
	struct vmcs_guest g;
	uint32_t a, b, c, d;
	guest_state_wait_sipi(&g);
	guest_state_sipi(&g, (uint8_t)v->qual);
	vmcs_write_guest(&vmx_env.cfg, &g);
	memset(&v->regs, 0, sizeof v->regs);
	cpuid_count(1, 0, &a, &b, &c, &d);
	v->regs.rdx = a;          /* the processor signature, as after RESET/INIT */
	v->sipi_base = g.cs.base;
	pr_info("vmx: cpu%u started by the guest's SIPI, vector 0x%02llx\n", v->index, (unsigned long long)v->qual & 0xff);
}

