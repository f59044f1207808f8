/* The host's GDT, TSS and IDT (the handlers behind the IDT: trap.h). */
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

#define IST_NMI 1
#define IST_DF  2

void gdt_tss_init(struct gdt_tss *g, uint64_t nmi_stack_top, uint64_t df_stack_top);
void gdt_tss_load(struct gdt_tss *g);
void idt_init(void);
void idt_load(void);
#endif
