// SPDX-License-Identifier: GPL-2.0
/*
 * hotplug: a guest kernel module that takes CPU 1 offline and online again,
 * again and again, and after each start counts function-call IPIs to it
 * exactly, on the kernel's side and (by hypercall) on the hypervisor's: a
 * CPU the guest restarts (INIT, SIPI, SIPI through the hypervisor) must be
 * whole again. Then, with CPU 1 offline, it sends it two NMIs and an INIT
 * back to back (an NMI may still be pending when the INIT comes) and starts
 * it once more. Loaded by /init with hv.hotplug=CYCLES:
 *
 *   insmod /lib/hotplug.ko cycles=C rounds=R
 *
 * Lines:
 *   hotplug: start cycles=C rounds=R cpu=1 apic_id=A hv=1|0
 *   hotplug: cycle=K from=F calls=+D received=N posted=+P|none elided=E verdict=ok|MISMATCH|LOCAL|OFFLINE-FAILED|ONLINE-FAILED
 *       F: the CPU the calls were made from; N: callbacks that ran on CPU 1
 *       out of R synchronous calls; D: the delta of its kernel count of
 *       function-call interrupts; P: the hypervisor's posts of vectors 0xfb
 *       and 0xfc into it (none: hv=0, or a hypervisor that does not post
 *       them); E = R - D, calls that needed no interrupt (CPU 1 polling in
 *       its idle loop); ok when N = R, D <= R, P = D where counted, and F
 *       is not 1.
 *       The module runs on CPU 0 only: insmod's task, free to move, was once
 *       moved onto the freshly started CPU 1, where smp_call_function_single
 *       to itself runs the callback in place, no interrupt at all (a CI run:
 *       cycle=17 calls=+0 received=20 posted=+0); LOCAL says it happened.
 *   hotplug: nmi-init apic_id=A -> online|STAYED-OFFLINE
 *   hotplug: done cycles=C ok=K
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/cpu.h>
#include <linux/smp.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <asm/apic.h>
#include <asm/hardirq.h>
#include <asm/msr.h>
#include <asm/irq_vectors.h>
#include "hvguest.h"

#define HC_HV_IPI_POSTS 0x48560002ul
#define TARGET 1
#define MSR_X2APIC_ICR 0x830u

static int cycles = 50;
module_param(cycles, int, 0444);
MODULE_PARM_DESC(cycles, "offline/online cycles of CPU 1 (default 50)");
static int rounds = 20;
module_param(rounds, int, 0444);
MODULE_PARM_DESC(rounds, "synchronous function calls to CPU 1 after each start (default 20)");

static bool pin = true;
module_param(pin, bool, 0444);
MODULE_PARM_DESC(pin, "make the calls from CPU 0 only (default 1; 0 shows why: LOCAL cycles)");

static atomic_t received;
static int hv;

static void on_target(void *unused)
{
	atomic_inc(&received);
}

static long posts(void)
{
	long a, b;
	u32 id = cpu_physical_id(TARGET);
	if (!hv)
		return -1;
	a = hv_call(HC_HV_IPI_POSTS, id, CALL_FUNCTION_SINGLE_VECTOR);
	b = hv_call(HC_HV_IPI_POSTS, id, CALL_FUNCTION_VECTOR);
	return a < 0 || b < 0 ? -1 : a + b;
}

static unsigned int kcalls(void)
{
	return READ_ONCE(per_cpu(irq_stat, TARGET).irq_call_count);
}

/* One cycle: offline, online, then R synchronous calls counted. */
static bool cycle(int k)
{
	unsigned int c0, c1;
	long p0, p1;
	int n, from;
	if (remove_cpu(TARGET)) {
		pr_info("hotplug: cycle=%d verdict=OFFLINE-FAILED\n", k);
		return false;
	}
	if (add_cpu(TARGET) || !cpu_online(TARGET)) {
		pr_info("hotplug: cycle=%d verdict=ONLINE-FAILED\n", k);
		return false;
	}
	atomic_set(&received, 0);
	c0 = kcalls();
	p0 = posts();
	from = get_cpu();
	for (int i = 0; i < rounds; i++)
		smp_call_function_single(TARGET, on_target, NULL, 1);
	put_cpu();
	/* A callback can run before its interrupt is taken: CPU 1 leaving its
	 * idle loop flushes the call queue with interrupts off
	 * (flush_smp_call_function_queue), this CPU's wait ends, and the IPI,
	 * posted already, is taken at CPU 1's local_irq_restore. So the count
	 * is read once it has caught up with the hypervisor's posts (without
	 * them, with the rounds), or after 100 ms (a lost interrupt still
	 * shows: seen once, cycle 2 of a CI run, calls=+19 received=20
	 * posted=+20, read too early).
	 * And a call may need no interrupt at all: Linux sends none to a CPU
	 * whose idle task is polling its need-resched flag (TIF_POLLING_NRFLAG,
	 * set between its idle loop's start and its HLT); it sets the flag and
	 * that CPU runs the call from its idle loop (a CI run: cycle=3
	 * calls=+13 received=20 posted=+13). So the rule: every call ran, every
	 * interrupt the hypervisor posted was taken, none taken that was not
	 * posted; elided = rounds - calls. */
	for (int w = 0; w < 1000; w++) {
		long p = posts();
		unsigned int want = p >= 0 && p0 >= 0 ? (unsigned int)(p - p0) : (unsigned int)rounds;
		if (kcalls() - c0 >= want)
			break;
		udelay(100);
	}
	c1 = kcalls();
	p1 = posts();
	n = atomic_read(&received);
	bool counted = hv && p0 >= 0 && p1 >= 0;   /* the partition model does not post: none */
	bool ok = n == rounds && c1 - c0 <= (unsigned int)rounds && (!counted || p1 - p0 == (long)(c1 - c0));
	const char *verdict = from == TARGET ? "LOCAL" : ok ? "ok" : "MISMATCH";
	int elided = rounds - (int)(c1 - c0);
	if (counted)
		pr_info("hotplug: cycle=%d from=%d calls=+%u received=%d posted=+%ld elided=%d verdict=%s\n", k, from,
			c1 - c0, n, p1 - p0, elided, verdict);
	else
		pr_info("hotplug: cycle=%d from=%d calls=+%u received=%d posted=none elided=%d verdict=%s\n", k, from,
			c1 - c0, n, elided, verdict);
	return ok && from != TARGET;
}

/* CPU 1 offline (in its play-dead loop), two NMIs and an INIT back to back,
 * then started again by the kernel (INIT, SIPI, SIPI). */
static void nmi_init(void)
{
	u64 dest = (u64)cpu_physical_id(TARGET) << 32;
	if (remove_cpu(TARGET)) {
		pr_info("hotplug: nmi-init -> OFFLINE-FAILED\n");
		return;
	}
	wrmsrl(MSR_X2APIC_ICR, dest | APIC_DM_NMI);
	wrmsrl(MSR_X2APIC_ICR, dest | APIC_DM_NMI);
	wrmsrl(MSR_X2APIC_ICR, dest | APIC_DM_INIT | APIC_INT_ASSERT);
	mdelay(10);
	bool up = !add_cpu(TARGET) && cpu_online(TARGET);
	pr_info("hotplug: nmi-init apic_id=%u -> %s\n", cpu_physical_id(TARGET), up ? "online" : "STAYED-OFFLINE");
}

static int __init hotplug_init(void)
{
	int ok = 0;
	hv = hv_present();
	if (num_online_cpus() < 2 || !cpu_online(TARGET) || !x2apic_enabled()) {
		pr_info("hotplug: needs CPU 1 online and x2APIC mode\n");
		return 0;
	}
	if (pin && set_cpus_allowed_ptr(current, cpumask_of(0)))
		pr_info("hotplug: could not keep the module on CPU 0\n");
	pr_info("hotplug: start cycles=%d rounds=%d cpu=%d apic_id=%u hv=%d\n", cycles, rounds, TARGET,
		cpu_physical_id(TARGET), hv);
	for (int k = 1; k <= cycles; k++)
		ok += cycle(k);
	nmi_init();
	pr_info("hotplug: done cycles=%d ok=%d\n", cycles, ok);
	return 0;
}

static void __exit hotplug_exit(void)
{
}

module_init(hotplug_init);
module_exit(hotplug_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("CPU offline/online cycles with exact IPI counts for the hv hypervisor's tests");
