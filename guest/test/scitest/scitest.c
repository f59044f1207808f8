// SPDX-License-Identifier: GPL-2.0
/*
 * scitest: makes the platform raise one level-triggered interrupt, the ACPI
 * SCI, and checks that the guest's local APIC shows it as level-triggered
 * (its TMR bit), which Linux's IOAPIC code reads to take its level path.
 * How: a handler for the PM timer's overflow event (ACPI, "Power Management
 * Timer": the fixed event TMR_STS/TMR_EN) is installed through ACPICA,
 * which enables the event; at the next overflow (24-bit timer at 3.579545
 * MHz: within 4.7 s) the chipset raises the SCI, a level-triggered
 * interrupt (IRQ 9 on the PC), and ACPICA calls the handler. It is removed
 * (the event disabled) at the first call. The TMR (x2APIC MSRs 0x818 to
 * 0x81f, 32 vectors each) is read on every CPU after it: the bit of the
 * SCI's vector (the kernel's irq_cfg of the SCI) must be set on a CPU.
 * Loaded by /init with hv.sci=1.
 *
 *   scitest: sci irq=N vector=0xVV
 *   scitest: sci events=E tmr vector=0xVV cpu=C      (or "tmr NONE")
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/smp.h>
#include <linux/acpi.h>
#include <linux/irq.h>
#include <asm/msr.h>
#include <asm/hw_irq.h>

static u32 tmr[NR_CPUS][8];

static void read_tmr(void *unused)
{
	int cpu = smp_processor_id();
	for (int i = 0; i < 8; i++) {
		u64 v = 0;
		tmr[cpu][i] = rdmsrl_safe(0x818 + i, &v) ? 0 : (u32)v;
	}
}

static void snap(u32 out[NR_CPUS][8])
{
	memset(tmr, 0, sizeof(tmr));
	on_each_cpu(read_tmr, NULL, 1);
	memcpy(out, tmr, sizeof(tmr));
}

static u32 after[NR_CPUS][8];

static atomic_t events;

static u32 on_pm_timer(void *ctx)
{
	atomic_inc(&events);
	return ACPI_INTERRUPT_HANDLED;
}

static int __init scitest_init(void)
{
	unsigned int irq = acpi_gbl_FADT.sci_interrupt, vec = 0;
	struct irq_data *d = irq_get_irq_data(irq);
	struct irq_cfg *cfg = d ? irqd_cfg(d) : NULL;
	int cpu, found = 0;
	if (cfg)
		vec = cfg->vector;
	pr_info("scitest: sci irq=%u vector=0x%02x\n", irq, vec);
	if (ACPI_FAILURE(acpi_install_fixed_event_handler(ACPI_EVENT_PMTIMER, on_pm_timer, NULL))) {
		pr_info("scitest: sci events=0 tmr NONE (no PM timer event)\n");
		return 0;
	}
	for (int ms = 0; ms < 6000 && !atomic_read(&events); ms += 10)
		msleep(10);
	acpi_remove_fixed_event_handler(ACPI_EVENT_PMTIMER, on_pm_timer);
	snap(after);
	for_each_online_cpu(cpu)
		if (vec && !found && (after[cpu][vec / 32] >> (vec % 32) & 1)) {
			pr_info("scitest: sci events=%d tmr vector=0x%02x cpu=%d\n", atomic_read(&events), vec, cpu);
			found = 1;
		}
	if (!found)
		pr_info("scitest: sci events=%d tmr NONE\n", atomic_read(&events));
	return 0;
}

static void __exit scitest_exit(void)
{
}

module_init(scitest_init);
module_exit(scitest_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("One ACPI SCI (a level-triggered interrupt) and the guest's TMR for the hv hypervisor's tests");
