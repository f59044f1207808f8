/* Exits that only a CPU forcing an exiting control on can produce: the
 * hypervisor asks for none of them (vmx/vmcs.c), but the adjusted controls
 * may carry them, so each is emulated as the instruction would run
 * natively (SDM Vol. 3C, "Exit Qualification for MOV DR", "VM-Exit
 * Instruction-Information Field" for RDRAND/RDSEED). Those the hypervisor
 * cannot emulate are refused when the VMCS configuration is built. */
#include "forced.h"
#include "vmcs_ops.h"
#include "../lib/cpu.h"

/* MOV to or from DR0-DR7. DR0-3 and DR6 are the CPU's own (VMX switches
 * only DR7, which lives in the VMCS); DR4/DR5 alias DR6/DR7 unless CR4.DE,
 * when they are #UD; a 1 in bits 63:32 of DR6/DR7 is #GP. */
void exit_dr_access(struct vcpu *v)
{
	unsigned dr = v->qual & 7, reg = (v->qual >> 8) & 15;
	bool from = v->qual & BIT(4);
	if (dr == 4 || dr == 5) {
		if (vmcs_read(VMCS_CR4_SHADOW) & BIT(3)) {   /* CR4.DE */
			vcpu_inject_ud(v);
			return;
		}
		dr += 2;
	}
	if (from) {
		uint64_t val = 0;
		switch (dr) {
		case 0: __asm__ volatile("mov %%dr0, %0" : "=r"(val)); break;
		case 1: __asm__ volatile("mov %%dr1, %0" : "=r"(val)); break;
		case 2: __asm__ volatile("mov %%dr2, %0" : "=r"(val)); break;
		case 3: __asm__ volatile("mov %%dr3, %0" : "=r"(val)); break;
		case 6: __asm__ volatile("mov %%dr6, %0" : "=r"(val)); break;
		default: val = vmcs_read(VMCS_GUEST_DR7); break;
		}
		vcpu_set_reg(v, reg, val);
	} else {
		uint64_t val = vcpu_reg(v, reg);
		if (dr >= 6 && (val >> 32)) {
			vcpu_inject_gp(v);
			return;
		}
		switch (dr) {
		case 0: __asm__ volatile("mov %0, %%dr0" :: "r"(val)); break;
		case 1: __asm__ volatile("mov %0, %%dr1" :: "r"(val)); break;
		case 2: __asm__ volatile("mov %0, %%dr2" :: "r"(val)); break;
		case 3: __asm__ volatile("mov %0, %%dr3" :: "r"(val)); break;
		case 6: __asm__ volatile("mov %0, %%dr6" :: "r"(val)); break;
		default: vmcs_write(VMCS_GUEST_DR7, val); break;
		}
	}
	vcpu_skip_insn(v);
}

/* RDPMC of a counter the CPU has (CPUID leaf 0xA: general counters in EAX
 * 15:8, fixed ones in EDX 4:0, selected by ECX bit 30); any other is #GP,
 * as it would be natively, instead of faulting in the hypervisor. */
void exit_rdpmc(struct vcpu *v)
{
	uint32_t a, b, c, d, ecx = (uint32_t)v->regs.rcx, idx = ecx & 0x3fffffff;
	cpuid_count(0, 0, &a, &b, &c, &d);
	uint32_t gp = 0, fixed = 0;
	if (a >= 0xa) {
		cpuid_count(0xa, 0, &a, &b, &c, &d);
		gp = (a >> 8) & 0xff;
		fixed = d & 0x1f;
	}
	if ((ecx & ~(BIT(30) | 0x3fffffffu)) || idx >= ((ecx & BIT(30)) ? fixed : gp)) {
		vcpu_inject_gp(v);
		return;
	}
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(ecx));
	v->regs.rax = lo;
	v->regs.rdx = hi;
	vcpu_skip_insn(v);
}

/* RDRAND and RDSEED: run on the host into the guest's register; CF says
 * whether a value came, OF SF ZF AF PF are cleared (SDM, RDRAND). The
 * instruction information has the register in bits 6:3 and the operand
 * size in 12:11 (0 16-bit, 1 32-bit, 2 64-bit). */
static void exit_random(struct vcpu *v, bool seed)
{
	uint32_t info = (uint32_t)vmcs_read(VMCS_EXIT_INSTRUCTION_INFO);
	unsigned reg = (info >> 3) & 15, size = (info >> 11) & 3;
	uint64_t val = 0;
	uint8_t ok;
	if (seed)
		__asm__ volatile("rdseed %0; setc %1" : "=r"(val), "=qm"(ok) :: "cc");
	else
		__asm__ volatile("rdrand %0; setc %1" : "=r"(val), "=qm"(ok) :: "cc");
	uint64_t old = vcpu_reg(v, reg);
	if (size == 0)
		val = (old & ~0xffffull) | (val & 0xffff);
	else if (size == 1)
		val &= 0xffffffffull;                 /* a 32-bit destination zero-extends */
	vcpu_set_reg(v, reg, ok ? val : (size == 0 ? old & ~0xffffull : 0));
	uint64_t fl = vmcs_read(VMCS_GUEST_RFLAGS) & ~(uint64_t)(BIT(0) | BIT(2) | BIT(4) | BIT(6) | BIT(7) | BIT(11));
	vmcs_write(VMCS_GUEST_RFLAGS, fl | (ok ? BIT(0) : 0));
	vcpu_skip_insn(v);
}

void exit_rdrand(struct vcpu *v) { exit_random(v, false); }
void exit_rdseed(struct vcpu *v) { exit_random(v, true); }

/* MONITOR arms nothing the guest could wait on (MWAIT is hidden, or exits),
 * and PAUSE is a hint: both complete as no-ops. */
void exit_skip(struct vcpu *v)
{
	vcpu_skip_insn(v);
}

/* The monitor trap flag: a trap-like exit after an instruction retired;
 * nothing to emulate, the guest goes on. */
void exit_mtf(struct vcpu *v)
{
	(void)v;
}
