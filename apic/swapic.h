/* The software virtual x2APIC (eoi=pv, and CPUs without virtual-interrupt
 * delivery): the hypervisor keeps IRR, ISR, TPR and PPR in the same 4 KiB
 * virtual-APIC page layout and delivers by event injection (SDM Vol. 3A,
 * "Interrupt, Task, and Processor Priority" and "Handling Interrupts":
 * priority class = vector[7:4]; PPR = TPR if TPR[7:4] >= ISRV[7:4], else
 * ISRV & 0xf0; an IRR vector is deliverable when its class is above PPR's;
 * EOI clears the highest ISR bit). Pure functions over the page. */
#ifndef APIC_SWAPIC_H
#define APIC_SWAPIC_H
#include "../lib/types.h"

/* Recomputes PPR from TPR and the highest in-service vector, stores it in
 * the page and returns it. */
uint32_t swapic_update_ppr(uint8_t *page);
/* The highest IRR vector whose class is above PPR's, or -1. */
int swapic_deliverable(const uint8_t *page);
/* Accepts vec for delivery: IRR bit to ISR, PPR updated. */
void swapic_accept(uint8_t *page, uint8_t vec);
/* EOI: clears the highest ISR bit, updates PPR; returns that vector or -1. */
int swapic_eoi(uint8_t *page);
/* Sets vec in the IRR (an interrupt for the guest). */
void swapic_request(uint8_t *page, uint8_t vec);

/* KVM's PV EOI (Documentation/virt/kvm/x86/msr.rst, MSR_KVM_PV_EOI_EN):
 * bit 0 of a 4-byte word in guest RAM. The host sets it when it injects an
 * interrupt whose EOI the guest may skip; the guest then clears the bit
 * instead of writing the EOI register, and the host does the EOI later. */
#define SWAPIC_PV_EOI_BIT 1u
/* After injecting vec: arms the flag when no other vector is requested and
 * vec is edge-triggered (KVM's rule: otherwise the EOI must exit so the
 * next interrupt or the level EOI is not delayed). Returns whether armed. */
bool swapic_pv_eoi_arm(const uint8_t *page, volatile uint32_t *flag, bool level);
/* At the next exit, when the flag was armed: cleared by the guest means its
 * EOI is done here (returns the vector, or -1 when none was in service);
 * still set means no EOI yet: the flag is cleared, so the guest writes the
 * EOI register itself (returns -1). 'armed' becomes false. */
int swapic_pv_eoi_sync(uint8_t *page, volatile uint32_t *flag, bool *armed);
#endif
