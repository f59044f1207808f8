/* The physical local APIC: x2APIC when the CPU has it, else xAPIC MMIO. */
#ifndef APIC_LAPIC_H
#define APIC_LAPIC_H
#include "../lib/types.h"

#define APIC_DM_FIXED    (0u << 8)
#define APIC_DM_NMI      (4u << 8)
#define APIC_DM_INIT     (5u << 8)
#define APIC_DM_STARTUP  (6u << 8)
#define APIC_LEVEL_ASSERT (1u << 14)
#define APIC_TRIGGER_LEVEL (1u << 15)
#define APIC_DEST_SELF       (1u << 18)
#define APIC_DEST_ALL        (2u << 18)
#define APIC_DEST_ALL_BUT_SELF (3u << 18)

extern bool lapic_x2apic;
/* Enables the local APIC of the calling CPU (x2APIC mode when available). */
void lapic_enable(void);
uint32_t lapic_id(void);
/* Sends an IPI; 'icr_low' holds vector, delivery mode, level and shorthand. */
void lapic_send(uint32_t apic_id, uint32_t icr_low);
/* End of interrupt on the physical APIC. */
void lapic_eoi(void);
/* The physical x2APIC's ISR bit for 'vector': the local APIC accepted it (an
 * 8259 interrupt taken through ExtINT leaves no ISR bit). */
bool lapic_in_service(uint8_t vector);
/* The physical x2APIC's IRR bit for 'vector': requested, not yet accepted
 * (with interrupts off in root mode, a host timer that fired since the exit). */
bool lapic_requested(uint8_t vector);
/* The physical x2APIC's TMR bit for 'vector': the interrupt was level-triggered. */
bool lapic_level(uint8_t vector);
/* Writes the physical LVT performance-counter entry (offset 0x340). */
void lapic_write_lvtpc(uint32_t v);
/* The version register's Max LVT Entry (bits 23:16; SDM Vol. 3A, "Local
 * APIC Version Register"): the thermal entry (offset 0x330) exists from 5,
 * the CMCI entry (0x2f0) from 6. */
uint32_t lapic_max_lvt(void);
/* Writes the physical LVT entry at offset 'off' (0x2f0 CMCI, 0x330 thermal). */
void lapic_write_lvt(uint32_t off, uint32_t v);
#endif
