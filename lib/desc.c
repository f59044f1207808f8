/* The host's descriptor tables: GDT and TSS per CPU, one IDT. */
#include "desc.h"
#include "string.h"

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
