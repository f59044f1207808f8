/* VM exits: a const table indexed by the basic exit reason. Every handler
 * that emulates an instruction advances RIP itself; an exit without a
 * handler dumps the guest and stops the machine. */
#include "vcpu.h"
#include "vmcs_ops.h"
#include "report.h"
#include "virq.h"
#include "forced.h"
#include "exit_io.h"
#include "tsc.h"
#include "../guest/gwalk.h"
#include "../guest/mmio_width.h"
#include "ept.h"
#include "ept_live.h"
#include "exit_ept.h"
#include "ept_sync.h"
#include "vioapic_trap.h"
#include "msi_trap.h"
#include "vmx_defs.h"
#include "../apic/lapic.h"
#include "../lib/spinlock.h"
#include "../lib/printk.h"
#include "../lib/cpu.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/power.h"
#include "../lib/string.h"
#include "../lib/serial.h"
#include "../lib/tsc.h"
#include "../lib/msr.h"
#include "../guest/cpuid.h"
#include "../guest/msr.h"
#include "../guest/io.h"
#include "../guest/hypercall.h"

struct vmx_env vmx_env;
struct vcpu *vcpus[MAX_CPUS];

static const char *const reason_names[EXIT_REASON_MAX] = {
	[EXIT_REASON_EXCEPTION_NMI] = "EXCEPTION_NMI", [EXIT_REASON_EXTERNAL_INTR] = "EXTERNAL_INTERRUPT",
	[EXIT_REASON_TRIPLE_FAULT] = "TRIPLE_FAULT", [EXIT_REASON_INIT] = "INIT", [EXIT_REASON_SIPI] = "SIPI",
	[EXIT_REASON_INTR_WINDOW] = "INTERRUPT_WINDOW", [EXIT_REASON_NMI_WINDOW] = "NMI_WINDOW",
	[EXIT_REASON_TASK_SWITCH] = "TASK_SWITCH", [EXIT_REASON_CPUID] = "CPUID", [EXIT_REASON_GETSEC] = "GETSEC",
	[EXIT_REASON_HLT] = "HLT", [EXIT_REASON_INVD] = "INVD", [EXIT_REASON_INVLPG] = "INVLPG",
	[EXIT_REASON_RDPMC] = "RDPMC", [EXIT_REASON_RDTSC] = "RDTSC", [EXIT_REASON_VMCALL] = "VMCALL",
	[EXIT_REASON_VMCLEAR] = "VMCLEAR", [EXIT_REASON_VMLAUNCH] = "VMLAUNCH", [EXIT_REASON_VMPTRLD] = "VMPTRLD",
	[EXIT_REASON_VMPTRST] = "VMPTRST", [EXIT_REASON_VMREAD] = "VMREAD", [EXIT_REASON_VMRESUME] = "VMRESUME",
	[EXIT_REASON_VMWRITE] = "VMWRITE", [EXIT_REASON_VMXOFF] = "VMXOFF", [EXIT_REASON_VMXON] = "VMXON",
	[EXIT_REASON_CR_ACCESS] = "CR_ACCESS", [EXIT_REASON_DR_ACCESS] = "DR_ACCESS", [EXIT_REASON_IO] = "IO",
	[EXIT_REASON_RDMSR] = "RDMSR", [EXIT_REASON_WRMSR] = "WRMSR",
	[EXIT_REASON_INVALID_GUEST_STATE] = "INVALID_GUEST_STATE", [EXIT_REASON_MSR_LOADING] = "MSR_LOADING",
	[EXIT_REASON_MWAIT] = "MWAIT", [EXIT_REASON_MTF] = "MONITOR_TRAP_FLAG", [EXIT_REASON_MONITOR] = "MONITOR",
	[EXIT_REASON_PAUSE] = "PAUSE", [EXIT_REASON_MCE_DURING_ENTRY] = "MCE_DURING_ENTRY",
	[EXIT_REASON_TPR_BELOW_THRESHOLD] = "TPR_BELOW_THRESHOLD", [EXIT_REASON_APIC_ACCESS] = "APIC_ACCESS",
	[EXIT_REASON_VIRTUALIZED_EOI] = "VIRTUALIZED_EOI", [EXIT_REASON_GDTR_IDTR] = "GDTR_IDTR",
	[EXIT_REASON_LDTR_TR] = "LDTR_TR", [EXIT_REASON_EPT_VIOLATION] = "EPT_VIOLATION",
	[EXIT_REASON_EPT_MISCONFIG] = "EPT_MISCONFIG", [EXIT_REASON_INVEPT] = "INVEPT",
	[EXIT_REASON_RDTSCP] = "RDTSCP", [EXIT_REASON_PREEMPTION_TIMER] = "PREEMPTION_TIMER",
	[EXIT_REASON_INVVPID] = "INVVPID", [EXIT_REASON_WBINVD] = "WBINVD", [EXIT_REASON_XSETBV] = "XSETBV",
	[EXIT_REASON_APIC_WRITE] = "APIC_WRITE", [EXIT_REASON_RDRAND] = "RDRAND", [EXIT_REASON_INVPCID] = "INVPCID",
	[EXIT_REASON_VMFUNC] = "VMFUNC", [EXIT_REASON_ENCLS] = "ENCLS", [EXIT_REASON_RDSEED] = "RDSEED",
	[EXIT_REASON_PML_FULL] = "PML_FULL", [EXIT_REASON_XSAVES] = "XSAVES", [EXIT_REASON_XRSTORS] = "XRSTORS",
};

const char *exit_reason_name(uint32_t r)
{
	return r < EXIT_REASON_MAX && reason_names[r] ? reason_names[r] : "UNKNOWN";
}

void vcpu_skip_insn(struct vcpu *v)
{
	vcpu_skip_insn_len(v, vmcs_read(VMCS_EXIT_INSTRUCTION_LEN));
}

void vcpu_skip_insn_len(struct vcpu *v, uint64_t len)
{
	(void)v;
	vmcs_write(VMCS_GUEST_RIP, vmcs_read(VMCS_GUEST_RIP) + len);
	/* The emulated instruction retires: blocking by STI or MOV SS ends. */
	uint64_t intr = vmcs_read(VMCS_GUEST_INTERRUPTIBILITY);
	if (intr & 3)
		vmcs_write(VMCS_GUEST_INTERRUPTIBILITY, intr & ~3ull);
	vmcs_sync_pending_bs();   /* with RFLAGS.TF set it ends in a single-step trap */
}

static void exit_triple_fault(struct vcpu *v);

/* Exceptions go through the vCPU's event queue (vmx/event.c): over an event
 * whose delivery the exit interrupted they become #DF, a shutdown, or wait
 * their turn as the SDM says; the queue is written once, before the entry. */
void vcpu_inject_exception(struct vcpu *v, uint8_t vector, bool has_error, uint32_t error)
{
	(void)has_error;   /* the vector decides (event_has_error_code) */
	if (event_queue_exception(&v->events, vector, error) == EVENT_SHUTDOWN) {
		pr_err("vmx: cpu%u: exception %u while delivering #DF: the guest shuts down (triple fault)\n",
		       v->index, vector);
		exit_triple_fault(v);
	}
}

static void events_commit(struct vcpu *v)
{
	struct event_queue *q = &v->events;
	if (!(q->now.info & INTR_INFO_VALID) && (q->deferred.info & INTR_INFO_VALID)) {
		/* The interrupted interrupt or NMI, now that the exception went:
		 * through the windows the guest opens for them. */
		if ((q->deferred.info & (7u << 8)) == INTR_TYPE_NMI) {
			__atomic_fetch_add(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
			q->deferred.info = 0;
		} else {
			virq_pic_queue(v, (uint8_t)q->deferred.info);
			q->deferred.info = 0;
		}
	}
	if (!(q->now.info & INTR_INFO_VALID))
		return;
	uint32_t info = event_entry_info(&q->now, vmcs_read(VMCS_GUEST_CR0) & X86_CR0_PE);
	vmcs_write(VMCS_ENTRY_INTR_INFO, info);
	if (info & INTR_INFO_DELIVER_CODE)
		vmcs_write(VMCS_ENTRY_EXCEPTION_ERROR, q->now.error);
	vmcs_write(VMCS_ENTRY_INSTRUCTION_LEN, q->now.insn_len);
	uint64_t rflags = vmcs_read(VMCS_GUEST_RFLAGS), pushed = event_entry_rflags(&q->now, rflags);
	if (pushed != rflags)
		vmcs_write(VMCS_GUEST_RFLAGS, pushed);
	q->now.info = 0;
}

void access_count(struct access_stats *s, uint32_t key, bool write)
{
	uint32_t i;
	for (i = 0; i < s->n && s->e[i].key != key; i++)
		;
	if (i == s->n) {
		if (i == VCPU_ACCESS_STATS)
			return;
		s->e[s->n++].key = key;
	}
	if (write)
		s->e[i].writes++;
	else
		s->e[i].reads++;
}

void vcpu_dump(struct vcpu *v)
{
	struct guest_regs *r = &v->regs;
	pr_err("vcpu%u: exit reason %u (%s) qualification 0x%llx\n", v->index, v->reason & 0xffff,
	       exit_reason_name(v->reason & 0xffff), (unsigned long long)v->qual);
	pr_err("  rip=%016llx rsp=%016llx rflags=%016llx cs=%04llx ss=%04llx activity=%llu intr=%llx\n",
	       (unsigned long long)vmcs_read(VMCS_GUEST_RIP), (unsigned long long)vmcs_read(VMCS_GUEST_RSP),
	       (unsigned long long)vmcs_read(VMCS_GUEST_RFLAGS), (unsigned long long)vmcs_read(VMCS_GUEST_CS_SEL),
	       (unsigned long long)vmcs_read(VMCS_GUEST_SS_SEL), (unsigned long long)vmcs_read(VMCS_GUEST_ACTIVITY_STATE),
	       (unsigned long long)vmcs_read(VMCS_GUEST_INTERRUPTIBILITY));
	pr_err("  cr0=%016llx cr3=%016llx cr4=%016llx efer=%016llx cs.base=%llx cs.ar=%llx\n",
	       (unsigned long long)vmcs_read(VMCS_GUEST_CR0), (unsigned long long)vmcs_read(VMCS_GUEST_CR3),
	       (unsigned long long)vmcs_read(VMCS_GUEST_CR4), (unsigned long long)vmcs_read(VMCS_GUEST_EFER),
	       (unsigned long long)vmcs_read(VMCS_GUEST_CS_BASE), (unsigned long long)vmcs_read(VMCS_GUEST_CS_AR));
	pr_err("  rax=%016llx rbx=%016llx rcx=%016llx rdx=%016llx rsi=%016llx rdi=%016llx\n",
	       (unsigned long long)r->rax, (unsigned long long)r->rbx, (unsigned long long)r->rcx,
	       (unsigned long long)r->rdx, (unsigned long long)r->rsi, (unsigned long long)r->rdi);
	pr_err("  idt_vectoring=%llx entry_intr=%llx exit_intr=%llx gpa=%llx gla=%llx\n",
	       (unsigned long long)vmcs_read(VMCS_IDT_VECTORING_INFO), (unsigned long long)vmcs_read(VMCS_ENTRY_INTR_INFO),
	       (unsigned long long)vmcs_read(VMCS_EXIT_INTR_INFO), (unsigned long long)vmcs_read(VMCS_GUEST_PHYSICAL_ADDRESS),
	       (unsigned long long)vmcs_read(VMCS_GUEST_LINEAR_ADDRESS));
}

static void exit_unhandled(struct vcpu *v)
{
	vcpu_dump(v);
	panic("unhandled VM exit %u (%s) on cpu%u\n", v->reason & 0xffff, exit_reason_name(v->reason & 0xffff), v->index);
}

/* The guest's shutdown (an exception it could not deliver; Linux's last
 * way to reboot, after the reset ports): it died. */
static void exit_triple_fault(struct vcpu *v)
{
	vcpu_dump(v);
	vmx_guest_reboots(v, "triple fault (the guest's shutdown)", 0, 0);
}

/* CR4 as the guest reads it: its own bits, and the read shadow for those
 * the guest/host mask gives the hypervisor (SDM Vol. 3C, "Guest/Host Masks
 * and Read Shadows for CR0 and CR4"). */
static uint64_t guest_cr4(void)
{
	uint64_t mask = vmcs_read(VMCS_CR4_MASK);
	return (vmcs_read(VMCS_GUEST_CR4) & ~mask) | (vmcs_read(VMCS_CR4_SHADOW) & mask);
}

static void exit_cpuid(struct vcpu *v)
{
	uint32_t leaf = (uint32_t)v->regs.rax, sub = (uint32_t)v->regs.rcx, a, b, c, d;
	cpuid_count(leaf, sub, &a, &b, &c, &d);
	cpuid_filter(&cpuid_policy, leaf, sub, &a, &b, &c, &d);
	cpuid_guest_cr4(leaf, sub, guest_cr4(), &c);
	v->regs.rax = a;
	v->regs.rbx = b;
	v->regs.rcx = c;
	v->regs.rdx = d;
	vcpu_skip_insn(v);
}

static void exit_rdmsr(struct vcpu *v)
{
	uint32_t msr = (uint32_t)v->regs.rcx;
	uint64_t val;
	access_count(&v->msr_stats, msr, false);
	int r = msr == MSR_IA32_TSC_ADJUST ? vcpu_tsc_rdmsr(v, msr, &val) : 1;
	if (r > 0)
		r = vmx_env.cfg.irq_model == IRQ_VIRTUAL ? virq_rdmsr(v, msr, &val) : 1;
	if (r > 0)
		r = guest_rdmsr(msr, &val);
	if (r) {
		v->denied.msr++;
		vcpu_inject_gp(v);
		return;
	}
	v->regs.rax = (uint32_t)val;
	v->regs.rdx = val >> 32;
	vcpu_skip_insn(v);
}

static void exit_wrmsr(struct vcpu *v)
{
	uint32_t msr = (uint32_t)v->regs.rcx;
	uint64_t val = (v->regs.rdx << 32) | (uint32_t)v->regs.rax;
	access_count(&v->msr_stats, msr, true);
	int r = msr == MSR_IA32_TSC || msr == MSR_IA32_TSC_ADJUST ? vcpu_tsc_wrmsr(v, msr, val) : 1;
	if (r > 0)
		r = vmx_env.cfg.irq_model == IRQ_VIRTUAL ? virq_wrmsr(v, msr, val) : 1;
	if (r > 0)
		r = guest_wrmsr(msr, val);
	if (r == MSR_WRITE_DROPPED) {
		v->denied.apic_base++;
	} else if (r) {
		v->denied.msr++;
		vcpu_inject_gp(v);
		return;
	}
	vcpu_skip_insn(v);
}

/* INVVPID (SDM Vol. 3C, "INVVPID"): type 0 one address, 1 one VPID. */
static void invvpid(unsigned type, uint16_t vpid, uint64_t la)
{
	struct { uint64_t vpid, la; } desc = { vpid, la };
	__asm__ volatile("invvpid %0, %1" :: "m"(desc), "r"((uint64_t)type) : "cc", "memory");
}

/* The guest's TLB flush of a MOV to CR3 or an INVLPG, when the CPU forced
 * their exiting on: with VPIDs, the guest's own translations go; without,
 * every VM entry flushes them anyway. */
static void guest_tlb_flush(struct vcpu *v, bool one, uint64_t la)
{
	if (!(vmx_env.cfg.proc2 & VMX_PROC2_VPID))
		return;
	invvpid(one ? 0 : 1, (uint16_t)(v->index + 1), la);
}

/* CR3 and CR8 accesses exit only on a CPU that forces their exiting on
 * (the adjusted controls ask for none): emulate them. */
static void cr_forced(struct vcpu *v, unsigned cr, unsigned type)
{
	unsigned reg = (v->qual >> 8) & 15;
	if (type > 1 || reg == 4)
		exit_unhandled(v);              /* CLTS/LMSW do not touch CR3/CR8; RSP is never used */
	uint64_t val = vcpu_reg(v, reg);
	if (cr == 3 && type == 1) {
		vcpu_set_reg(v, reg, vmcs_read(VMCS_GUEST_CR3));
	} else if (cr == 3) {
		bool keep = (vmcs_read(VMCS_CR4_SHADOW) & X86_CR4_PCIDE) && (val & BIT(63));
		vmcs_write(VMCS_GUEST_CR3, val & ~BIT(63));
		if (!keep)
			guest_tlb_flush(v, false, 0);
	} else if (type == 1) {
		uint64_t tpr;
		__asm__ volatile("mov %%cr8, %0" : "=r"(tpr));
		vcpu_set_reg(v, reg, tpr);
	} else {
		if (val & ~0xfull) {
			vcpu_inject_gp(v);
			return;
		}
		__asm__ volatile("mov %0, %%cr8" :: "r"(val));   /* partition model: the guest's APIC */
	}
	vcpu_skip_insn(v);
}

static void exit_invlpg(struct vcpu *v)
{
	guest_tlb_flush(v, true, v->qual);
	vcpu_skip_insn(v);
}

static void exit_rdtsc(struct vcpu *v)
{
	uint64_t t = rdtsc() + vmcs_read(VMCS_TSC_OFFSET);
	v->regs.rax = (uint32_t)t;
	v->regs.rdx = t >> 32;
	if ((v->reason & 0xffff) == EXIT_REASON_RDTSCP)
		v->regs.rcx = (uint32_t)rdmsr(MSR_IA32_TSC_AUX);   /* not switched: the guest's */
	vcpu_skip_insn(v);
}

/* MOV to CR0/CR4 exits only for bits the guest does not own (the VMX fixed
 * bits): the guest sees its value through the read shadow. */
static void exit_cr_access(struct vcpu *v)
{
	unsigned cr = v->qual & 15, type = (v->qual >> 4) & 3;
	const struct vmcs_config *cfg = &vmx_env.cfg;
	if (cr == 3 || cr == 8) {
		cr_forced(v, cr, type);
		return;
	}
	if (type != 0 || (cr != 0 && cr != 4))
		exit_unhandled(v);
	uint64_t val = vcpu_reg(v, (v->qual >> 8) & 15);
	if (cr == 0) {
		uint64_t old = vmcs_read(VMCS_GUEST_CR0);
		if ((val & X86_CR0_PG) && !(val & X86_CR0_PE)) {
			vcpu_inject_gp(v);
			return;
		}
		vmcs_write(VMCS_GUEST_CR0, vmcs_guest_cr0(cfg, val));
		vmcs_write(VMCS_CR0_SHADOW, val);
		/* Paging switched with EFER.LME set: the CPU would flip EFER.LMA. */
		uint64_t efer = vmcs_read(VMCS_GUEST_EFER);
		if ((old ^ val) & X86_CR0_PG && (efer & BIT(8))) {
			uint64_t entry = vmcs_read(VMCS_ENTRY_CONTROLS);
			if (val & X86_CR0_PG) {
				efer |= BIT(10);
				entry |= BIT(9);
			} else {
				efer &= ~BIT(10);
				entry &= ~BIT(9);
			}
			vmcs_write(VMCS_GUEST_EFER, efer);
			vmcs_write(VMCS_ENTRY_CONTROLS, entry);
		}
	} else {
		/* VMXE stays hidden; any bit the CPU does not allow is #GP. */
		if (val & ~(cfg->cr4_fixed1 & ~X86_CR4_VMXE)) {
			v->denied.cr4++;
			vcpu_inject_gp(v);
			return;
		}
		vmcs_write(VMCS_GUEST_CR4, vmcs_guest_cr4(cfg, val));
		vmcs_write(VMCS_CR4_SHADOW, val);
	}
	vcpu_skip_insn(v);
}

static void exit_xsetbv(struct vcpu *v)
{
	uint64_t val = (v->regs.rdx << 32) | (uint32_t)v->regs.rax;
	if (!xsetbv_valid((uint32_t)v->regs.rcx, val, vmx_env.xcr0_mask)) {
		v->denied.xsetbv++;
		vcpu_inject_gp(v);
		return;
	}
	__asm__ volatile("xsetbv" :: "c"(0), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)));
	vcpu_skip_insn(v);
}

static void exit_invd(struct vcpu *v)
{
	/* INVD would drop dirty lines the hypervisor owns too: write them back instead. */
	__asm__ volatile("wbinvd" ::: "memory");
	vcpu_skip_insn(v);
}

static void exit_vmx_insn(struct vcpu *v)
{
	v->denied.vmx_insn++;
	vcpu_inject_ud(v);   /* VMX is hidden from the guest */
}


static uint64_t hc_report(uint32_t cpu)
{
	pr_info("hv: exit report requested by the guest on cpu%u\n", cpu);
	report_print("hypercall");
	return tsc_to_us(rdtsc());
}

static int64_t hc_pv_send_ipi(void *ctx, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr)
{
	return virq_pv_send_ipi(ctx, lo, hi, min, icr);
}

static int64_t hc_exits(uint32_t apic_id)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i] && vcpus[i]->apic_id == apic_id)
			return (int64_t)__atomic_load_n(&vcpus[i]->exits_total, __ATOMIC_RELAXED);
	return -1;
}

static int64_t hc_exits_of(uint32_t apic_id, uint32_t reason)
{
	if (reason >= EXIT_REASON_MAX)
		return -1;
	for (uint32_t i = 0; i < ncpus; i++)
		if (vcpus[i] && vcpus[i]->apic_id == apic_id)
			return (int64_t)__atomic_load_n(&vcpus[i]->exits[reason], __ATOMIC_RELAXED);
	return -1;
}

static void exit_vmcall(struct vcpu *v)
{
	bool virt = vmx_env.cfg.irq_model == IRQ_VIRTUAL;
	const struct hc_ops ops = {
		.report = hc_report,
		.pv_send_ipi = virt && vmx_env.tiers_ipi == IPI_PV ? hc_pv_send_ipi : NULL,
		/* Under IPI virtualization the CPU posts the guest's unicast
		 * IPIs: the hypervisor's count would miss them. */
		.vec_posts = virt && !vmx_env.cfg.ipiv ? virq_vec_posts : NULL,
		.posts_by_cpu = virt && vmx_env.cfg.ipiv,
		.exits = hc_exits,
		.exits_of = hc_exits_of,
		.verdict = hc_verdict,
		.bochs_test = vmx_env.aid ? vmx_env.aid->call : NULL,
	};
	const struct hc_call c = { .nr = v->regs.rax, .a0 = v->regs.rbx, .a1 = v->regs.rcx, .a2 = v->regs.rdx,
				   .a3 = v->regs.rsi, .user = (vmcs_read(VMCS_GUEST_SS_AR) >> 5 & 3) != 0,
				   .now_us = tsc_to_us(rdtsc()) };
	v->regs.rax = hypercall(&ops, v, v->index, &c);
	vcpu_skip_insn(v);
}

static void (*const exit_handlers[EXIT_REASON_MAX])(struct vcpu *) = {
	[EXIT_REASON_EXCEPTION_NMI] = exit_exception_nmi,
	[EXIT_REASON_EXTERNAL_INTR] = exit_external_intr,
	[EXIT_REASON_NMI_WINDOW] = exit_nmi_window,
	[EXIT_REASON_VIRTUALIZED_EOI] = exit_virtualized_eoi,
	[EXIT_REASON_APIC_WRITE] = exit_apic_write,
	[EXIT_REASON_TRIPLE_FAULT] = exit_triple_fault,
	[EXIT_REASON_INIT] = exit_init,
	[EXIT_REASON_SIPI] = exit_sipi,
	[EXIT_REASON_CPUID] = exit_cpuid,
	[EXIT_REASON_GETSEC] = exit_vmx_insn,
	[EXIT_REASON_INVD] = exit_invd,
	[EXIT_REASON_WBINVD] = exit_invd,
	[EXIT_REASON_VMCALL] = exit_vmcall,
	[EXIT_REASON_VMCLEAR] = exit_vmx_insn,
	[EXIT_REASON_VMLAUNCH] = exit_vmx_insn,
	[EXIT_REASON_VMPTRLD] = exit_vmx_insn,
	[EXIT_REASON_VMPTRST] = exit_vmx_insn,
	[EXIT_REASON_VMREAD] = exit_vmx_insn,
	[EXIT_REASON_VMRESUME] = exit_vmx_insn,
	[EXIT_REASON_VMWRITE] = exit_vmx_insn,
	[EXIT_REASON_VMXOFF] = exit_vmx_insn,
	[EXIT_REASON_VMXON] = exit_vmx_insn,
	[EXIT_REASON_INVEPT] = exit_vmx_insn,
	[EXIT_REASON_INVVPID] = exit_vmx_insn,
	[EXIT_REASON_VMFUNC] = exit_vmx_insn,
	[EXIT_REASON_CR_ACCESS] = exit_cr_access,
	[EXIT_REASON_HLT] = exit_hlt,
	[EXIT_REASON_INTR_WINDOW] = exit_intr_window,
	/* Exits the adjusted controls ask for none of; a CPU may force them on. */
	[EXIT_REASON_INVLPG] = exit_invlpg,
	[EXIT_REASON_RDTSC] = exit_rdtsc,
	[EXIT_REASON_RDTSCP] = exit_rdtsc,
	[EXIT_REASON_IO] = exit_io,
	[EXIT_REASON_RDMSR] = exit_rdmsr,
	[EXIT_REASON_WRMSR] = exit_wrmsr,
	[EXIT_REASON_EPT_VIOLATION] = exit_ept_violation,
	[EXIT_REASON_EPT_MISCONFIG] = exit_ept_misconfig,
	[EXIT_REASON_PREEMPTION_TIMER] = exit_preemption_timer,
	/* only if the CPU forces their exiting controls on (vmx/forced.c) */
	[EXIT_REASON_DR_ACCESS] = exit_dr_access,
	[EXIT_REASON_RDPMC] = exit_rdpmc,
	[EXIT_REASON_RDRAND] = exit_rdrand,
	[EXIT_REASON_RDSEED] = exit_rdseed,
	[EXIT_REASON_MONITOR] = exit_skip,
	[EXIT_REASON_PAUSE] = exit_skip,
	[EXIT_REASON_MTF] = exit_mtf,
	[EXIT_REASON_XSETBV] = exit_xsetbv,
};

void vmx_exit_handler(struct guest_regs *r)
{
	struct vcpu *v = (struct vcpu *)r;
	uint64_t t0 = rdtsc();
	ept_sync_exit(v);
	v->exit_tsc = t0;
	v->reason = (uint32_t)vmcs_read(VMCS_EXIT_REASON);
	v->qual = vmcs_read(VMCS_EXIT_QUALIFICATION);
	uint32_t basic = v->reason & 0xffff;
	v->exits_total++;
	if (basic < EXIT_REASON_MAX)
		v->exits[basic]++;
	virq_hang_exit(v, t0);
	if (v->reason & EXIT_REASON_FAILED_ENTRY) {
		vcpu_dump(v);
		panic("VM entry failed on cpu%u: exit reason %u (%s), qualification 0x%llx\n", v->index, basic,
		      exit_reason_name(basic), (unsigned long long)v->qual);
	}
	/* An exit in the middle of delivering an event: deliver it again,
	 * unless a handler queues an exception over it. */
	uint32_t idt = (uint32_t)vmcs_read(VMCS_IDT_VECTORING_INFO);
	if (idt & INTR_INFO_VALID) {
		v->events.now.info = idt & ~BIT(12);
		v->events.now.error = idt & INTR_INFO_DELIVER_CODE ? (uint32_t)vmcs_read(VMCS_IDT_VECTORING_ERROR) : 0;
		v->events.now.insn_len = (uint32_t)vmcs_read(VMCS_EXIT_INSTRUCTION_LEN);
	}
	void (*h)(struct vcpu *) = basic < EXIT_REASON_MAX ? exit_handlers[basic] : NULL;
	if (!h)
		exit_unhandled(v);
	if (!vmx_env.aid || !vmx_env.aid->on_exit(v, basic))
		h(v);
	if (vmx_env.aid)
		vmx_env.aid->after_exit(v, basic);
	events_commit(v);
	virq_before_entry(v);
	if (v->died)
		vmx_guest_died(v, v->died);
	if (vmx_env.aid)
		vmx_env.aid->before_entry(v, basic);
	if (basic < EXIT_REASON_MAX)
		hist_add(&v->exit_time[basic], rdtsc() - t0);
	report_tick(v);
	if (v->parked)
		virq_startup_wait(v);   /* a SIPI recorded up to here starts it */
	ept_sync_entry(v);              /* last: an EPT shootdown sees it in the guest from here */
}

__noreturn void vmx_resume_failed(struct guest_regs *r)
{
	struct vcpu *v = (struct vcpu *)r;
	uint32_t err = (uint32_t)vmcs_read(VMCS_VM_INSTRUCTION_ERROR);
	vcpu_dump(v);
	panic("VMRESUME failed on cpu%u: %s (VM-instruction error %u)\n", v->index, vmx_insn_error_name(err), err);
}
