/* Exceptions and interrupts taken in the hypervisor. */
#ifndef LIB_TRAP_H
#define LIB_TRAP_H
#include "types.h"

/* Saved by the exception stubs, in push order reversed. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

void trap_handler(struct trap_frame *f);
/* Set by the interrupt model: takes an NMI that arrived in root mode for
 * the guest (returns true), else the NMI is a fault. */
extern bool (*nmi_root_hook)(void);
/* Set by the platform once the local APIC is up (lapic_eoi): ends an
 * interrupt taken through the host IDT. */
extern void (*host_irq_eoi)(void);
/* Called with each interrupt met in a STI window, after its EOI (iommu/:
 * the fault event). */
extern void (*host_irq_hook)(uint8_t vector);
extern uint64_t host_irqs;   /* interrupts taken through the host IDT */
#endif
