/* The bochstest guest's hypercall (HC_HV_BOCHSTEST) and the entries it asks for. */
#include "bochstest.h"
#include "../vmx/virq.h"
#include "../vmx/vcpu.h"
#include "../vmx/vmcs_ops.h"
#include "../vmx/vmx_defs.h"
#include "../apic/lapic.h"
#include "../apic/pi.h"
#include "../lib/percpu.h"
#include "../guest/hypercall.h"
#include "../lib/printk.h"

#define BT_NP_VECTOR 0x70
#define BT_NP_EXCEPTION 11              /* #NP */

/* bochstest=1: the VM entries that show Bochs 3.0's VMX defects
 * (docs/bochs.md, its table). Each makes an interrupt pending in this CPU's
 * local APIC while root mode runs with IF = 0, so the entry finds it there;
 * the guest (test/bochstest/) saw what followed. On a CPU the SDM describes:
 * HC_BT_ENTRY_PENDING and HC_BT_HLT_PENDING exit at once for the kick
 * (external-interrupt exiting: guest RFLAGS.IF does not block it, SDM Vol.
 * 3C, "Pin-Based VM-Execution Controls"), from the active or the HLT state; HC_BT_PIR_EMPTY is
 * posted-interrupt processing with an empty PIR, which leaves RVI as it
 * was (SDM Vol. 3C, "Posted-Interrupt Processing"), so no virtual interrupt follows;
 * HC_BT_VIRQ_CLI: the guest's CLI under blocking by STI comes before the
 * pending virtual interrupt, which then waits for IF = 1 ("Virtual-Interrupt
 * Delivery"), while the kick exits; HC_BT_EXC_KICK: the guest's UD2 under
 * blocking by STI raises #UD first, and the kick's exit comes at the #UD
 * handler's first instruction, which is the RIP it saves (SDM Vol. 3C,
 * "Saving RIP, RSP, and RFLAGS": the return pointer an interrupt delivered
 * there would push); HC_BT_VIRQ_HLT: the pending virtual interrupt wakes the
 * HLT state ("Virtual-Interrupt Delivery"); HC_BT_WINDOW_HLT: so does the
 * interrupt-window exit once the guest's STI; HLT has IF = 1 ("Other Causes
 * of VM Exits"). */
static int64_t bochs_test_call(void *ctx, uint64_t what)
{
	struct vcpu *v = ctx;
	uint32_t self = this_cpu()->apic_id;
	switch (what) {
	case HC_BT_ENTRY_PENDING:
		lapic_send(self, APIC_DM_FIXED | KICK_VECTOR);
		return 0;
	case HC_BT_HLT_PENDING:
		v->bochs_test_wake = true;
		vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
		lapic_send(self, APIC_DM_FIXED | KICK_VECTOR);
		return 0;
	case HC_BT_VIRQ_CLI:
		if (!(vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)))
			return -1;           /* blocking by STI needs IF = 1 (a VM-entry check) */
		v->bochs_test_sti = true;
		virq_test_virr(v, 0x40);
		lapic_send(self, APIC_DM_FIXED | KICK_VECTOR);
		return 0;
	case HC_BT_EXC_KICK:
		if (!(vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9)))
			return -1;           /* blocking by STI needs IF = 1 (a VM-entry check) */
		v->bochs_test_sti = true;
		lapic_send(self, APIC_DM_FIXED | KICK_VECTOR);
		return 0;
	case HC_BT_VIRQ_HLT:
		if (!virq_guest_interruptible())
			return -1;           /* the HLT state is woken by the vector only with IF = 1 */
		virq_test_virr(v, 0x50);
		v->bochs_test_hlt = true;
		return 0;
	case HC_BT_WINDOW_HLT:
		if (vmcs_read(VMCS_GUEST_RFLAGS) & BIT(9))
			return -1;           /* the window must open at the guest's STI */
		v->bochs_test_window = true;
		return 0;
	case HC_BT_VIRQ_NP:
		if (!virq_guest_interruptible())
			return -1;           /* the vector must be delivered at the entry */
		virq_test_virr(v, BT_NP_VECTOR);
		vmcs_write(VMCS_EXCEPTION_BITMAP, vmcs_read(VMCS_EXCEPTION_BITMAP) | BIT(BT_NP_EXCEPTION));
		v->bochs_test_np = true;
		return 0;
	case HC_BT_PIR_EMPTY:
		if (v->pid->pir[0] | v->pid->pir[1] | v->pid->pir[2] | v->pid->pir[3])
			return -1;
		lapic_send(self, APIC_DM_FIXED | vmx_env.cfg.posted_intr_nv);
		return 0;
	default:
		return -1;
	}
}

/* HC_BT_VIRQ_NP (defect Q): the guest's gate 0x70 is not present, so the
 * delivery of the virtual interrupt raises #NP, intercepted for this entry.
 * The exit is one "during event delivery": its IDT-vectoring information
 * names the interrupt, valid, type 0 (external interrupt), vector 0x70,
 * 0x80000070 (SDM Vol. 3C, "Information for VM Exits During Event Delivery";
 * "Virtual-Interrupt Delivery" delivers the vector "through the IDT" as an
 * interrupt). Said as it came and not delivered again (the guest's EOI
 * retires the vector from SVI); the bitmap bit off again. */
static bool bochs_test_exit(struct vcpu *v, uint32_t basic)
{
	if (!v->bochs_test_np || basic != EXIT_REASON_EXCEPTION_NMI)
		return false;
	uint32_t info = (uint32_t)vmcs_read(VMCS_EXIT_INTR_INFO);
	if ((info & 0xff) != BT_NP_EXCEPTION)
		return false;
	uint32_t idt = (uint32_t)vmcs_read(VMCS_IDT_VECTORING_INFO);
	v->bochs_test_np = false;
	vmcs_write(VMCS_EXCEPTION_BITMAP, vmcs_read(VMCS_EXCEPTION_BITMAP) & ~BIT(BT_NP_EXCEPTION));
	pr_info("bochstest: virq-np: #NP exit (interruption info 0x%08x, error 0x%llx), IDT-vectoring information 0x%08x\n",
		info, (unsigned long long)vmcs_read(VMCS_EXIT_INTR_ERROR), idt);
	v->events.now.info = 0;
	return true;
}

/* bochstest=1: what HC_BT_VIRQ_HLT and HC_BT_WINDOW_HLT ask of the entry,
 * after the hypervisor's own rules (which end the HLT state themselves when
 * a vector is deliverable: defect D worked around). */
static void bochs_test_before_entry(struct vcpu *v, uint32_t basic)
{
	if (v->bochs_test_hlt) {
		v->bochs_test_hlt = false;
		vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
	}
	if (v->bochs_test_window) {
		uint32_t proc = (uint32_t)vmcs_read(VMCS_PROC_CONTROLS);
		if (basic == EXIT_REASON_INTR_WINDOW) {
			v->bochs_test_window = false;
			proc &= ~VMX_PROC_INT_WINDOW_EXITING;
		} else {
			proc |= VMX_PROC_INT_WINDOW_EXITING;
		}
		vmcs_write(VMCS_PROC_CONTROLS, proc);
	}
}

/* After the exit's handler: HC_BT_VIRQ_CLI and HC_BT_EXC_KICK enter under
 * blocking by STI; HC_BT_HLT_PENDING's exit ends the HLT state it asked for. */
static void bochs_test_after_exit(struct vcpu *v, uint32_t basic)
{
	if (v->bochs_test_sti) {
		v->bochs_test_sti = false;    /* after the VMCALL's skip, which ends blocking */
		vmcs_write(VMCS_GUEST_INTERRUPTIBILITY, vmcs_read(VMCS_GUEST_INTERRUPTIBILITY) | 1);
	}
	if (v->bochs_test_wake && basic == EXIT_REASON_EXTERNAL_INTR &&
	    vmcs_read(VMCS_GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT) {
		v->bochs_test_wake = false;   /* HC_BT_HLT_PENDING's exit came: the guest goes on */
		vmcs_write(VMCS_GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	}
}

const struct vmx_exit_aid bochs_test_aid = {
	.call = bochs_test_call, .on_exit = bochs_test_exit, .after_exit = bochs_test_after_exit, .before_entry = bochs_test_before_entry,
};
