/* Host GDT, TSS and IDT, and the exception handlers. */
#ifndef LIB_DESC_H
#define LIB_DESC_H
#include "types.h"

#define GDT_CODE64 0x08
#define GDT_DATA   0x10
#define GDT_TSS    0x18

struct tss64 {
	uint32_t rsvd0;
	uint64_t rsp[3];
	uint64_t rsvd1;
	uint64_t ist[7];
	uint64_t rsvd2;
	uint16_t rsvd3;
	uint16_t iomap_base;
} __packed;

struct gdt_tss {
	uint64_t gdt[5];                 /* null, code64, data, tss (2 slots) */
	struct tss64 tss;
};

/* Saved by the exception stubs, in push order reversed. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

#define IST_NMI 1
#define IST_DF  2

void gdt_tss_init(struct gdt_tss *g, uint64_t nmi_stack_top, uint64_t df_stack_top);
void gdt_tss_load(struct gdt_tss *g);
void idt_init(void);
void idt_load(void);
void trap_handler(struct trap_frame *f);
/* Set by the interrupt model: takes an NMI that arrived in root mode for
 * the guest (returns true), else the NMI is a fault. */
extern bool (*nmi_root_hook)(void);
extern uint64_t host_irqs;   /* interrupts taken through the host IDT */
#endif
