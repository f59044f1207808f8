// SPDX-License-Identifier: GPL-2.0
/*
 * hvlockup: a planted hard lockup for the NMI watchdog to catch (issue 45,
 * test/run-tests.sh bochs_pmu). Loading it spins the loading CPU with
 * interrupts off for spin_ms milliseconds (default 4000); rmmod it before
 * loading it again. (Its init succeeds: busybox's insmod loads a module
 * again by init_module when finit_module fails, which would spin twice.)
 * While it spins no timer interrupt reaches that CPU, its hrtimer count
 * stands still, and the watchdog's perf counter (unhalted cycles) overflows
 * into an NMI whose handler finds the count unchanged: "Watchdog detected
 * hard LOCKUP on cpu N". Lines: "hvlockup: spinning N ms with interrupts
 * off on cpu C" and "hvlockup: done, interrupts on again".
 */
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/smp.h>

static unsigned int spin_ms = 4000;
module_param(spin_ms, uint, 0444);
MODULE_PARM_DESC(spin_ms, "milliseconds to spin with interrupts off (at most 60000)");

static int __init hvlockup_init(void)
{
	unsigned long flags;
	unsigned int ms = spin_ms > 60000 ? 60000 : spin_ms;

	local_irq_save(flags);
	pr_info("hvlockup: spinning %u ms with interrupts off on cpu %d\n", ms, smp_processor_id());
	while (ms--)
		mdelay(1);
	local_irq_restore(flags);
	pr_info("hvlockup: done, interrupts on again\n");
	return 0;
}

static void __exit hvlockup_exit(void)
{
}

module_init(hvlockup_init);
module_exit(hvlockup_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("a planted hard lockup for the NMI watchdog test");
