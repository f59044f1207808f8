/* The guest's console UART: a virtual 16550A (guest/vuart.c) at the ports of
 * the hypervisor's own UART (docs/console.md). Its output goes to the real
 * UART a whole line at a time under the console lock; the real UART's
 * received bytes are moved into it at each guest access; its interrupt is
 * delivered as the guest's IOAPIC entry for the UART's ISA IRQ says. */
#include "vconsole.h"
#include "vcpu.h"
#include "virq.h"
#include "vioapic_trap.h"
#include "../apic/ioapic.h"
#include "../apic/lapic.h"
#include "../guest/io.h"
#include "../iommu/iommu.h"
#include "../guest/vuart.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/spinlock.h"

#define RTE_VECTOR(r)   ((uint8_t)(r))
#define RTE_MODE(r)     (((r) >> 8) & 7)     /* 0 fixed, 1 lowest priority */
#define RTE_LOGICAL     (1ull << 11)
#define RTE_LEVEL       (1ull << 15)
#define RTE_MASKED      (1ull << 16)
/* Physical destination 63:56; with MSI_EXT_DEST_ID offered (owned
 * remapping) bits 55:49 are its bits 14:8 (Linux io_apic.c). */
#define RTE_DEST(r)     ((uint32_t)((r) >> 56) | (iommu_ir_owned() ? (uint32_t)((r) >> 49 & 0x7f) << 8 : 0))

static struct vuart vu;
static spinlock_t vu_lock;
static uint16_t vc_port;
static int32_t vc_gsi = -1;          /* the UART's ISA IRQ as a GSI; -1: none known */
static const struct acpi_info *vc_acpi;
static struct vconsole_stats st;
static bool rx_irq;                   /* the real UART's receive interrupt is the hypervisor's */
static void route_irq(struct vcpu *v, uint64_t rte);
static void after_access(struct vcpu *v);

static void emit(void *ctx, const char *s, size_t n, bool whole)
{
	(void)ctx, (void)whole;
	printk_guest_line(s, n, false);   /* a part leaves the row open (lib/printk.c) */
}

void vconsole_init(uint16_t port, int32_t gsi, const struct acpi_info *acpi)
{
	vc_port = port;
	vc_acpi = acpi;
	vuart_init(&vu, emit, NULL);
	/* The SPCR's GSI, else the PC's ISA wiring (lib/spcr.c: COM1 and COM3
	 * on IRQ 4, COM2 and COM4 on IRQ 3, taken as GSIs 4 and 3: ISA IRQs 3
	 * and 4 keep their numbers, the MADT's overrides move IRQ 0 and the SCI). */
	vc_gsi = gsi;
	if (port)
		pr_info("console: the guest's UART at 0x%x is a virtual 16550A (IRQ %d); its lines are forwarded whole\n",
			port, vc_gsi);
}

bool vconsole_owns(uint16_t port)
{
	return io_is_console(vc_port, port);
}

/* The guest's IOAPIC entry for the UART's GSI, as an edge would deliver
 * it (82093AA: vector 7:0, delivery mode 10:8, destination mode 11, trigger
 * mode 15, mask 16, physical destination 63:56): the virtual IOAPIC's entry
 * (ioapic=virtual), else the live physical one, peeked. */
static void raise_irq(struct vcpu *v)
{
	if (vioapic_trap_on()) {
		int64_t r = vc_gsi < 0 ? -1 : vioapic_trap_gsi_rte((uint32_t)vc_gsi);
		if (r < 0) {
			st.irq_lost++;
			return;
		}
		route_irq(v, (uint64_t)r);
		return;
	}
	const struct acpi_ioapic *io = NULL;
	for (uint32_t i = 0; vc_acpi && i < vc_acpi->nioapics; i++)
		if (vc_acpi->ioapic[i].gsi_base <= (uint32_t)vc_gsi &&
		    (!io || vc_acpi->ioapic[i].gsi_base > io->gsi_base))
			io = &vc_acpi->ioapic[i];
	if (vc_gsi < 0 || !io) {
		st.irq_lost++;
		return;
	}
	route_irq(v, ioapic_rte_peek(io->addr, (uint32_t)vc_gsi - io->gsi_base));
}

static void route_irq(struct vcpu *v, uint64_t rte)
{
	st.last_rte = rte;
	if (rte & RTE_MASKED) {
		st.irq_masked++;
		return;
	}
	if (RTE_MODE(rte) > 1 || (rte & (RTE_LOGICAL | RTE_LEVEL)) || RTE_VECTOR(rte) < 16) {
		st.irq_refused++;             /* NMI/SMI/INIT/ExtINT, logical, level: not a UART's */
		return;
	}
	bool ok;
	if (vmx_env.cfg.irq_model == IRQ_VIRTUAL) {
		ok = ipi_post(&virq_domain, v->index, RTE_DEST(rte), RTE_VECTOR(rte));
	} else {
		lapic_send(RTE_DEST(rte), RTE_VECTOR(rte));   /* the guest owns the x2APIC: as the IOAPIC sends it */
		ok = true;
	}
	if (ok)
		st.irq_sent++;
	else
		st.irq_lost++;
}

/* Moves the real UART's received bytes into the receive FIFO, each with
 * its line-status error bits (a break: the guest's sysrq). */
static void pull_input(void)
{
	int c;
	uint8_t lsr;
	while (vuart_rx_room(&vu) && (c = serial_getc_lsr(&lsr)) >= 0)
		vuart_rx_err(&vu, (uint8_t)c, lsr);
}

void vconsole_start_rx(uint32_t host_apic_id)
{
	if (!vc_port || vc_gsi < 0 || !vioapic_trap_on() || !vioapic_trap_own_gsi((uint32_t)vc_gsi, CONSOLE_VECTOR, host_apic_id)) {
		if (vc_port)
			pr_info("console: input is taken at the guest's console accesses (no IOAPIC pin of the hypervisor's for IRQ %d)\n",
				vc_gsi);
		return;
	}
	rx_irq = true;
	virq_console_rx = vconsole_rx_interrupt;
	serial_rx_irq(true);
	pr_info("console: input is taken as it arrives (the UART's IRQ %d, the hypervisor's, on APIC %u)\n", vc_gsi,
		host_apic_id);
}

void vconsole_quiesce(void)
{
	if (!rx_irq)
		return;
	serial_rx_irq(false);
	vioapic_trap_release_gsi((uint32_t)vc_gsi);
	rx_irq = false;
}

void vconsole_rx_interrupt(struct vcpu *v)
{
	spin_lock(&vu_lock);
	st.rx_irqs++;
	pull_input();
	after_access(v);
	spin_unlock(&vu_lock);
}

static void raise_deferred(struct vcpu *v)
{
	spin_lock(&vu_lock);
	raise_irq(v);
	spin_unlock(&vu_lock);
}

static void after_access(struct vcpu *v)
{
	if (!vuart_irq_edge(&vu))
		return;
	if (vmx_env.cfg.if0_defer && !virq_guest_interruptible()) {
		st.irq_deferred++;       /* raised by virq_before_entry at the guest's interrupt window */
		v->at_window = raise_deferred;
		return;
	}
	raise_irq(v);
}

uint32_t vconsole_in(struct vcpu *v, uint16_t port, unsigned size)
{
	uint32_t val = 0;
	spin_lock(&vu_lock);
	st.exits++;
	pull_input();
	for (unsigned i = 0; i < size; i++)
		val |= (uint32_t)(vconsole_owns((uint16_t)(port + i)) ? vuart_read(&vu, port + i - vc_port) : 0xff)
		       << (8 * i);
	after_access(v);
	spin_unlock(&vu_lock);
	return val;
}

void vconsole_out(struct vcpu *v, uint16_t port, uint32_t val, unsigned size)
{
	spin_lock(&vu_lock);
	st.exits++;
	for (unsigned i = 0; i < size; i++)
		if (vconsole_owns((uint16_t)(port + i)))
			vuart_write(&vu, port + i - vc_port, (uint8_t)(val >> (8 * i)));
	after_access(v);
	spin_unlock(&vu_lock);
}

void vconsole_flush(void)
{
	spin_lock(&vu_lock);
	vuart_flush(&vu);
	spin_unlock(&vu_lock);
}

void vconsole_stats(struct vconsole_stats *out)
{
	spin_lock(&vu_lock);
	*out = st;
	out->lines = vu.lines;
	out->pieces = vu.pieces;
	out->tx_bytes = vu.tx_bytes;
	out->rx_bytes = vu.rx_bytes;
	out->breaks = vu.breaks;
	out->partials = vu.partials;
	spin_unlock(&vu_lock);
}

void vconsole_report(bool detail)
{
	struct vconsole_stats s;
	if (!vc_port)
		return;
	vconsole_stats(&s);
	/* Exits per forwarded line, to two decimals. */
	uint64_t per100 = s.lines ? s.exits * 100 / s.lines : 0;
	pr_info("hvstat: console lines=%llu exits=%llu per_line=%llu.%02llu bytes=%llu pieces=%llu rx=%llu rx_irqs=%llu breaks=%llu partials=%llu\n",
		(unsigned long long)s.lines, (unsigned long long)s.exits, (unsigned long long)(per100 / 100),
		(unsigned long long)(per100 % 100), (unsigned long long)s.tx_bytes, (unsigned long long)s.pieces,
		(unsigned long long)s.rx_bytes, (unsigned long long)s.rx_irqs, (unsigned long long)s.breaks,
		(unsigned long long)s.partials);
	if (!detail)
		return;
	spin_lock(&vu_lock);
	uint8_t ier = vu.ier, iir = vuart_iir(&vu), mcr = vu.mcr, lcr = vu.lcr;
	bool line = vu.irq_line;
	spin_unlock(&vu_lock);
	pr_info("hvstat: console uart ier=0x%x iir=0x%x lcr=0x%x mcr=0x%x line=%u\n", ier, iir, lcr, mcr, line);
	uint8_t hlcr, hier, hmcr;
	uint16_t hdiv;
	printk_serial_config(&hlcr, &hier, &hmcr, &hdiv);
	pr_info("hvstat: console hw lcr=0x%x ier=0x%x mcr=0x%x divisor=%u\n", hlcr, hier, hmcr, hdiv);
	pr_info("hvstat: console irq sent=%llu masked=%llu refused=%llu lost=%llu deferred=%llu rte=0x%llx\n",
		(unsigned long long)s.irq_sent, (unsigned long long)s.irq_masked, (unsigned long long)s.irq_refused,
		(unsigned long long)s.irq_lost, (unsigned long long)s.irq_deferred, (unsigned long long)s.last_rte);
}
