/* A vCPU's general-purpose registers and the bytes of its current
 * instruction (creating and launching it: vmx/vcpu_launch.c). */
#include "vcpu.h"
#include "vmcs_ops.h"
#include "../guest/gwalk.h"
#include "../lib/memmap.h"

/* General-purpose register n as instruction encodings number them (0 RAX ..
 * 15 R15); RSP (4) lives in the VMCS, not in the saved registers. */
static uint64_t *reg_slot(struct vcpu *v, unsigned n)
{
	uint64_t *r[16] = { &v->regs.rax, &v->regs.rcx, &v->regs.rdx, &v->regs.rbx, NULL, &v->regs.rbp,
			    &v->regs.rsi, &v->regs.rdi, &v->regs.r8, &v->regs.r9, &v->regs.r10, &v->regs.r11,
			    &v->regs.r12, &v->regs.r13, &v->regs.r14, &v->regs.r15 };
	return r[n & 15];
}

uint64_t vcpu_reg(struct vcpu *v, unsigned n)
{
	uint64_t *r = reg_slot(v, n);
	return r ? *r : vmcs_read(VMCS_GUEST_RSP);
}

void vcpu_set_reg(struct vcpu *v, unsigned n, uint64_t val)
{
	uint64_t *r = reg_slot(v, n);
	if (r)
		*r = val;
	else
		vmcs_write(VMCS_GUEST_RSP, val);
}

unsigned vcpu_fetch_insn(uint8_t *b, unsigned max)
{
	struct gwalk_regs r = { vmcs_read(VMCS_GUEST_CR0), vmcs_read(VMCS_GUEST_CR3), vmcs_read(VMCS_GUEST_CR4),
				vmcs_read(VMCS_GUEST_EFER) };
	uint64_t la = vmcs_read(VMCS_GUEST_CS_BASE) + vmcs_read(VMCS_GUEST_RIP), gpa = 0;
	unsigned n = 0;
	for (; n < max; n++, la++) {
		/* A new page: walked again; none of the hypervisor's is read. */
		if ((n == 0 || (la & 0xfff) == 0) &&
		    (gwalk(&r, la, false, &gpa) || memmap_type_at(vmx_env.mem, gpa) == MEM_HV))
			break;
		if (!gwalk_readable(gpa, 1))
			break;
		b[n] = *(volatile uint8_t *)(uintptr_t)gpa;
		gpa++;
	}
	return n;
}
