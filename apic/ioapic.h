/* The IOAPICs, as far as the hypervisor touches them outside the virtual
 * IOAPIC (apic/vioapic.c): once, before the guest starts, in the virtual
 * interrupt model; and, with ioapic=pass, the console UART's entry, read
 * when the virtual UART raises its interrupt (vmx/vconsole.c). */
#ifndef APIC_IOAPIC_H
#define APIC_IOAPIC_H
#include "../lib/types.h"

/* Masks every redirection entry of the IOAPIC at MMIO address 'base' and
 * returns how many there are. The firmware may leave pin 0 in ExtINT mode
 * (virtual wire through the IOAPIC): the 8259's interrupts would then reach
 * the guest's virtual APIC as ordinary vectors that its 8259 driver never
 * EOIs there. The guest (ioapic=pass) or the virtual IOAPIC programs every
 * entry in use. */
uint32_t ioapic_mask_all(paddr_t base);
/* Redirection entry 'pin' of the IOAPIC at 'base' (ioapic=pass: the guest
 * programs it), the index register restored. A guest on another CPU that selected a
 * register and has not yet used the window can meet this read: the window
 * is a few MMIO accesses wide (docs/console.md). */
uint64_t ioapic_rte_peek(paddr_t base, uint32_t pin);
#endif
