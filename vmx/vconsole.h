/* The guest's console UART, a virtual 16550A at the ports of the
 * hypervisor's own (docs/console.md). */
#ifndef VMX_VCONSOLE_H
#define VMX_VCONSOLE_H
#include "../lib/types.h"
#include "../lib/acpi.h"

struct vcpu;

struct vconsole_stats {
	uint64_t exits;                  /* I/O exits at the UART's ports */
	uint64_t lines, pieces;          /* lines forwarded whole; pieces of longer or partial ones */
	uint64_t tx_bytes, rx_bytes;
	uint64_t rx_irqs;                /* the real UART's receive interrupts taken */
	uint64_t breaks, partials;       /* breaks received; partial lines sent as the guest stopped sending */
	uint64_t irq_sent, irq_masked, irq_refused, irq_lost;
	uint64_t irq_deferred;           /* if0_defer: raised at the guest's interrupt window instead */
	uint64_t last_rte;               /* the guest's entry at the last interrupt */
};

/* Before the guest starts: the virtual UART at 'port' (0: no console). */
void vconsole_init(uint16_t port, int32_t gsi, const struct acpi_info *acpi);
bool vconsole_owns(uint16_t port);
/* An IN or OUT of 'size' bytes at one of its ports, by vCPU v. */
uint32_t vconsole_in(struct vcpu *v, uint16_t port, unsigned size);
void vconsole_out(struct vcpu *v, uint16_t port, uint32_t val, unsigned size);
/* After the virtual IOAPIC's setup: the UART's ISA IRQ taken by the
 * hypervisor (its physical pin an edge to CONSOLE_VECTOR on host_apic_id)
 * and the real UART's receive interrupt on, so that typed bytes reach the
 * guest as they arrive; where it cannot (no virtual IOAPIC: the guest owns
 * the pins), input is taken at the guest's console accesses, said. */
void vconsole_start_rx(uint32_t host_apic_id);
/* CONSOLE_VECTOR taken on vCPU v's CPU: the received bytes moved in, the
 * guest's interrupt raised as the data sheet says. */
void vconsole_rx_interrupt(struct vcpu *v);
/* Before the machine resets: the real UART's interrupts off and the
 * hypervisor's IOAPIC pin masked, as the firmware expects them (INIT, which
 * a soft reset is, resets neither). */
void vconsole_quiesce(void);
/* Writes out a partial line (the guest's power-off, before the report). */
void vconsole_flush(void);
void vconsole_stats(struct vconsole_stats *out);
/* The hvstat: console lines of the report: the count line; with 'detail'
 * (the shutdown report) also the virtual and the real UART's registers and
 * the interrupts. */
void vconsole_report(bool detail);
#endif
