/* Exceptions and interrupts taken in the hypervisor (lib/isr.asm calls
 * trap_handler), and rdmsr_safe, which a #GP ends. */
#include "trap.h"
#include "percpu.h"
#include "printk.h"
#include "cpu.h"

bool (*nmi_root_hook)(void);
void (*host_irq_eoi)(void);
void (*host_irq_hook)(uint8_t vector);
uint64_t host_irqs;

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow", "#BR bound",
	"#UD invalid opcode", "#NM no FPU", "#DF double fault", "coprocessor overrun",
	"#TS invalid TSS", "#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved 15", "#MF x87 error", "#AC alignment check", "#MC machine check",
	"#XM SIMD error", "#VE virtualization exception", "#CP control protection",
};

bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
	struct percpu *c = this_cpu();
	uint32_t lo = 0, hi = 0;
	c->msr_faulted = 0;
	c->msr_probe = 1;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	c->msr_probe = 0;
	*v = ((uint64_t)hi << 32) | lo;
	return !c->msr_faulted;
}

void trap_handler(struct trap_frame *f)
{
	struct percpu *c = this_cpu();
	if (f->vector == 13 && c && c->msr_probe) {
		/* rdmsr_safe: skip the two-byte RDMSR and report the fault. */
		c->msr_faulted = 1;
		c->msr_probe = 0;
		f->rip += 2;
		return;
	}
	if (f->vector == 2 && hv_panicking)
		cpu_stop();                   /* another CPU panicked, or ends the run, and stopped us */
	if (f->vector == 2 && c && nmi_root_hook && nmi_root_hook()) /* the guest's NMI, met in root mode */
		return;
	if (f->vector >= 32) {
		/* The host runs with IF=0; only a STI window (none today) lets an
		 * interrupt in here. Acknowledge it and count it. */
		host_irqs++;
		if (host_irq_eoi)
			host_irq_eoi();
		if (host_irq_hook)
			host_irq_hook((uint8_t)f->vector);
		return;
	}
	uint64_t cr2;
	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	pr_err("EXCEPTION %s (vector %llu, error 0x%llx) on cpu%u\n",
	       exc_names[f->vector & 31] ? exc_names[f->vector & 31] : "reserved",
	       (unsigned long long)f->vector, (unsigned long long)f->error, c ? c->index : 0);
	pr_err("  rip=%016llx cs=%04llx rflags=%016llx rsp=%016llx ss=%04llx cr2=%016llx\n",
	       (unsigned long long)f->rip, (unsigned long long)f->cs, (unsigned long long)f->rflags,
	       (unsigned long long)f->rsp, (unsigned long long)f->ss, (unsigned long long)cr2);
	pr_err("  rax=%016llx rbx=%016llx rcx=%016llx rdx=%016llx\n", (unsigned long long)f->rax,
	       (unsigned long long)f->rbx, (unsigned long long)f->rcx, (unsigned long long)f->rdx);
	pr_err("  rsi=%016llx rdi=%016llx rbp=%016llx r8=%016llx\n", (unsigned long long)f->rsi,
	       (unsigned long long)f->rdi, (unsigned long long)f->rbp, (unsigned long long)f->r8);
	pr_err("  r9=%016llx r10=%016llx r11=%016llx r12=%016llx\n", (unsigned long long)f->r9,
	       (unsigned long long)f->r10, (unsigned long long)f->r11, (unsigned long long)f->r12);
	pr_err("  r13=%016llx r14=%016llx r15=%016llx cr3=%016llx\n", (unsigned long long)f->r13,
	       (unsigned long long)f->r14, (unsigned long long)f->r15, (unsigned long long)read_cr3());
	panic("unhandled exception %llu in the hypervisor\n", (unsigned long long)f->vector);
}
