/* Host descriptor tables and exception reporting. */
#include "desc.h"
#include "percpu.h"
#include "printk.h"
#include "cpu.h"
#include "string.h"
#include "../apic/lapic.h"

bool (*nmi_root_hook)(void);
uint64_t host_irqs;

struct idt_entry {
	uint16_t off0, sel;
	uint8_t ist, type;
	uint16_t off1;
	uint32_t off2, rsvd;
} __packed;

static struct idt_entry idt[256] __aligned(16);
extern const uint64_t isr_stubs[256];   /* lib/isr.asm */

struct desc_ptr { uint16_t limit; uint64_t base; } __packed;

void gdt_tss_init(struct gdt_tss *g, uint64_t nmi_stack_top, uint64_t df_stack_top)
{
	uint64_t base = (uint64_t)(uintptr_t)&g->tss;
	uint64_t limit = sizeof g->tss - 1;

	memset(g, 0, sizeof *g);
	g->gdt[1] = 0x00af9a000000ffffull;   /* 64-bit code, DPL 0 */
	g->gdt[2] = 0x00cf92000000ffffull;   /* data, DPL 0 */
	g->gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
		    (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	g->gdt[4] = base >> 32;
	g->tss.ist[IST_NMI - 1] = nmi_stack_top;
	g->tss.ist[IST_DF - 1] = df_stack_top;
	g->tss.iomap_base = sizeof g->tss;
}

void gdt_tss_load(struct gdt_tss *g)
{
	struct desc_ptr p = { sizeof g->gdt - 1, (uint64_t)(uintptr_t)g->gdt };
	__asm__ volatile(
		"lgdt %0\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"mov %2, %%ax\n\t"
		"mov %%ax, %%ds\n\t"
		"mov %%ax, %%es\n\t"
		"mov %%ax, %%ss\n\t"
		"xor %%eax, %%eax\n\t"
		"mov %%ax, %%fs\n\t"
		"mov %%ax, %%gs\n\t"
		:: "m"(p), "i"(GDT_CODE64), "i"(GDT_DATA) : "rax", "memory");
	g->gdt[3] &= ~(0x2ull << 40);        /* clear busy before ltr */
	__asm__ volatile("ltr %w0" :: "r"((uint16_t)GDT_TSS));
}

void idt_init(void)
{
	for (int v = 0; v < 256; v++) {
		uint64_t h = isr_stubs[v];
		idt[v] = (struct idt_entry){
			.off0 = h & 0xffff, .sel = GDT_CODE64,
			.ist = v == 2 ? IST_NMI : v == 8 ? IST_DF : 0,
			.type = 0x8e, .off1 = (h >> 16) & 0xffff, .off2 = h >> 32,
		};
	}
}

void idt_load(void)
{
	struct desc_ptr p = { sizeof idt - 1, (uint64_t)(uintptr_t)idt };
	__asm__ volatile("lidt %0" :: "m"(p));
}

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
		cpu_halt_forever();           /* another CPU panicked and stopped us */
	if (f->vector == 2 && c && nmi_root_hook && nmi_root_hook()) /* the guest's NMI, met in root mode */
		return;
	if (f->vector >= 32) {
		/* The host runs with IF=0; only a STI window (none today) lets an
		 * interrupt in here. Acknowledge it and count it. */
		host_irqs++;
		lapic_eoi();
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
