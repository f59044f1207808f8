// SPDX-License-Identifier: GPL-2.0
/*
 * ifmask: a guest kernel module that asks whether a maskable interrupt ever
 * reaches a vCPU whose RFLAGS.IF is 0 (Bochs 3.0 defect 3, docs/bochs.md).
 * A thread on CPU 1 turns interrupts off and spins; one on CPU 0 queues a function
 * call to it (vector 0xfb), then writes a raw fixed IPI of a lower vector
 * (IRQ_WORK_VECTOR) to it, so that a second physical interrupt (the
 * posted-interrupt notification) arrives while the first one waits in the
 * virtual IRR. SDM Vol. 3C "Virtual-Interrupt Delivery": a virtual
 * interrupt is delivered only when RFLAGS.IF = 1, so the call must run only
 * after the thread turns interrupts on again. Loaded by /init with
 * hv.ifmask=ROUNDS:
 *
 *   insmod /lib/ifmask.ko rounds=R spin_ms=S
 *
 * Lines:
 *   ifmask: start rounds=R spin_ms=S cpu=1 from=0
 *   ifmask: done rounds=R early=E late=L verdict=ok|IF0-DELIVERY|LOST
 *       E: calls that ran on CPU 1 while its thread still had IF=0 (each an
 *       interrupt delivered against the mask); L: calls that ran after it
 *       turned interrupts on; ok when E = 0 and L = R; LOST when E + L < R.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/smp.h>
#include <linux/delay.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/irq_vectors.h>

#define TARGET 1
#define SENDER 0
#define MSR_X2APIC_ICR 0x830u

static int rounds = 20;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "rounds, one masked window each (default 20)");
static int spin_ms = 20;
module_param(spin_ms, int, 0444);
MODULE_PARM_DESC(spin_ms, "milliseconds CPU 1 spins with interrupts off in each round (default 20)");

static atomic_t masked;        /* the thread on CPU 1 has IF=0 */
static atomic_t sent;          /* CPU 0 has sent this round's two IPIs */
static atomic_t ran;           /* calls that ran in this round */
static int early, late;
static DECLARE_COMPLETION(round_done);
static DECLARE_COMPLETION(all_sent);

static void on_target(void *unused)
{
	if (atomic_read(&masked))
		early++;       /* only CPU 1 runs this, and only CPU 1's thread sets masked */
	else
		late++;
	atomic_inc(&ran);
}

static int spinner(void *unused)
{
	for (int k = 0; k < rounds; k++) {
		unsigned long flags;
		local_irq_save(flags);
		atomic_set(&masked, 1);
		while (!atomic_read(&sent))
			cpu_relax();
		mdelay(spin_ms);
		atomic_set(&masked, 0);
		local_irq_restore(flags);
		complete(&round_done);
		while (atomic_read(&sent))
			cpu_relax();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* On CPU 0: each round, a function call and then a raw IPI of a lower
 * vector to CPU 1 while it spins with IF=0. */
static int sender(void *unused)
{
	static call_single_data_t csd;
	INIT_CSD(&csd, on_target, NULL);
	for (int k = 0; k < rounds; k++) {
		unsigned long flags;
		while (!atomic_read(&masked))
			cpu_relax();
		atomic_set(&ran, 0);
		smp_call_function_single_async(TARGET, &csd);
		mdelay(1);
		local_irq_save(flags);
		wrmsrl(MSR_X2APIC_ICR, ((u64)cpu_physical_id(TARGET) << 32) | APIC_DM_FIXED | IRQ_WORK_VECTOR);
		local_irq_restore(flags);
		atomic_set(&sent, 1);
		wait_for_completion(&round_done);
		for (int w = 0; w < 1000 && !atomic_read(&ran); w++)
			mdelay(1);        /* the call runs once CPU 1 has interrupts on */
		atomic_set(&sent, 0);
	}
	complete(&all_sent);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/* Both threads bound (the module's init may itself run on CPU 1). */
static int __init ifmask_init(void)
{
	struct task_struct *t, *s;
	if (num_online_cpus() < 2 || !cpu_online(TARGET) || !cpu_online(SENDER) || !x2apic_enabled()) {
		pr_info("ifmask: needs CPUs 0 and 1 online and x2APIC mode\n");
		return 0;
	}
	pr_info("ifmask: start rounds=%d spin_ms=%d cpu=%d from=%d\n", rounds, spin_ms, TARGET, SENDER);
	t = kthread_create(spinner, NULL, "ifmask-spin");
	s = kthread_create(sender, NULL, "ifmask-send");
	if (IS_ERR(t) || IS_ERR(s)) {
		pr_info("ifmask: no thread\n");
		return 0;
	}
	kthread_bind(t, TARGET);
	kthread_bind(s, SENDER);
	wake_up_process(t);
	wake_up_process(s);
	wait_for_completion(&all_sent);
	kthread_stop(s);
	kthread_stop(t);
	pr_info("ifmask: done rounds=%d early=%d late=%d verdict=%s\n", rounds, early, late,
		early ? "IF0-DELIVERY" : early + late < rounds ? "LOST" : "ok");
	return 0;
}

static void __exit ifmask_exit(void)
{
}

module_init(ifmask_init);
module_exit(ifmask_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Is a maskable interrupt ever delivered to a vCPU with IF=0? (hv hypervisor tests)");
