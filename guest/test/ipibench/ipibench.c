// SPDX-License-Identifier: GPL-2.0
/*
 * ipibench: the IPI benchmarks of the two IPI seeds, written for this
 * project, as a guest kernel module. Built by tools/build-ipigen.sh
 * (HV_MODULE=ipibench) against Debian's linux-headers for the guest kernel;
 * loaded by the initramfs /init when the kernel command line has
 * hv.ipibench=COUNT:
 *
 *   insmod /lib/ipibench.ko count=COUNT [hv=0|1]
 *
 * Everything runs on CPU 0 (work_on_cpu); CPU 1 is the target. The lines:
 *
 *   ipibench: start count=N cpus=C apic=x2apic|xapic hv=0|1
 *   ipibench: needs 2 CPUs
 *   ipibench: roundtrip count=N tsc min=.. median=.. p90=.. p99=.. max=.. exits=+X exits_per_op=X/N
 *       The figure of kvm-unit-tests' "vmexit ipi" case (measured its own
 *       way here): TSC cycles (rdtsc_ordered) of one synchronous IPI round
 *       trip, smp_call_function_single(1, ..., wait=1), while a kthread on
 *       CPU 1 spins with interrupts on (the target polls: it is running, so
 *       every call goes out as an IPI and nothing waits for a wakeup from
 *       HLT). X: the VM exits of both vCPUs over the test (HC_HV_EXITS).
 *   ipibench: micro test=T count=N total_ns=NS ns_per_op=.. exits=+X exits_per_op=X/N
 *       The send-IPI seed's microbenchmark, each test N operations, timed
 *       with ktime_get_ns over the whole loop, X the exits of all vCPUs:
 *         dry        the callback called directly (the loop's own cost)
 *         self       a self-IPI: irq_work_queue() on this CPU (the
 *                    IRQ_WORK_VECTOR through the local APIC) and its run
 *         normal     smp_call_function_single(1, cb, NULL, 1), CPU 1 idle
 *         broadcast  smp_call_function(cb, NULL, 1): every other CPU
 *         bcastlock  the same, the callback taking one shared spinlock
 *   ipibench: done
 *
 * exits=none when there is no hypervisor to ask (hv=0, or no KVMKVMKVM
 * CPUID signature: bare metal), so the same module runs bare and under hv.
 *
 * Hypercall (VMCALL, KVM's register ABI): HC_HV_EXITS 0x48560003,
 * RBX = x2APIC ID -> RAX = that vCPU's VM exits so far (the call that
 * reads the caller's own count is counted in it).
 */
#include "hvguest.h"
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/kthread.h>
#include <linux/irq_work.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/workqueue.h>
#include <asm/msr.h>
#include <asm/apic.h>

#define HC_HV_EXITS 0x48560003ul
#define SENDER_CPU 0
#define TARGET_CPU 1

static int count = 2000;
module_param(count, int, 0444);
MODULE_PARM_DESC(count, "operations per test");

static int hv = 1;
module_param(hv, int, 0444);
MODULE_PARM_DESC(hv, "ask the hypervisor for exit counts (1) or not (0)");

static u32 *samples;
static atomic_t calls;
static DEFINE_SPINLOCK(shared_lock);
static unsigned long shared_count;
static bool spin_stop, spinning;

/* The exits of every online vCPU but this one; -1 on an error. */
static long others_exits(void)
{
	long sum = 0, e;
	int cpu;

	for_each_online_cpu(cpu) {
		if (cpu == smp_processor_id())
			continue;
		e = hv_call(HC_HV_EXITS, cpu_physical_id(cpu), 0);
		if (e < 0)
			return -1;
		sum += e;
	}
	return sum;
}

/* The sum of every online vCPU's exits, the caller's own read last before
 * and first after (less that call's own exit): the reading calls fall outside. */
static long exits_before(void)
{
	long o, e;

	if (!hv)
		return -1;
	o = others_exits();
	e = hv_call(HC_HV_EXITS, cpu_physical_id(smp_processor_id()), 0);
	return o < 0 || e < 0 ? -1 : o + e;
}

static long exits_after(void)
{
	long o, e;

	if (!hv)
		return -1;
	e = hv_call(HC_HV_EXITS, cpu_physical_id(smp_processor_id()), 0) - 1;
	o = others_exits();
	return o < 0 || e < 0 ? -1 : o + e;
}

/* "exits=+X exits_per_op=X/N" or "exits=none". */
static void exits_str(char *buf, size_t len, long before, long after, int n)
{
	unsigned long x;

	if (before < 0 || after < 0) {
		snprintf(buf, len, "exits=none");
		return;
	}
	x = after - before;
	snprintf(buf, len, "exits=+%lu exits_per_op=%lu.%02lu", x, x / n, x * 100 / n % 100);
}

static void cb(void *unused)
{
	atomic_inc(&calls);
}

static void cb_lock(void *unused)
{
	spin_lock(&shared_lock);
	shared_count++;
	spin_unlock(&shared_lock);
	atomic_inc(&calls);
}

static void work_fn(struct irq_work *w)
{
	atomic_inc(&calls);
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The target of the round trip: running, interrupts on, until told. */
static int spinner(void *unused)
{
	WRITE_ONCE(spinning, true);
	while (!READ_ONCE(spin_stop) && !kthread_should_stop()) {
		cpu_relax();
		cond_resched();
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static void roundtrip(void)
{
	struct task_struct *t;
	long b, a;
	char ex[64];
	int i, n = count;

	spin_stop = false;
	spinning = false;
	t = kthread_create_on_cpu(spinner, NULL, TARGET_CPU, "ipibench/%u");
	if (IS_ERR(t)) {
		pr_info("ipibench: roundtrip: no kthread on cpu%d (%ld)\n", TARGET_CPU, PTR_ERR(t));
		return;
	}
	wake_up_process(t);
	while (!READ_ONCE(spinning))   /* until the spinner runs on the target */
		cpu_relax();
	atomic_set(&calls, 0);
	b = exits_before();
	for (i = 0; i < n; i++) {
		u64 t0 = rdtsc_ordered();

		smp_call_function_single(TARGET_CPU, cb, NULL, 1);
		samples[i] = (u32)min_t(u64, rdtsc_ordered() - t0, U32_MAX);
	}
	a = exits_after();
	WRITE_ONCE(spin_stop, true);
	kthread_stop(t);
	sort(samples, n, sizeof(*samples), cmp_u32, NULL);
	exits_str(ex, sizeof(ex), b, a, n);
	pr_info("ipibench: roundtrip count=%d tsc min=%u median=%u p90=%u p99=%u max=%u calls=%d %s\n", n,
		samples[0], samples[n / 2], samples[n * 9 / 10], samples[n * 99 / 100], samples[n - 1],
		atomic_read(&calls), ex);
}

/* One microbenchmark: N operations of op, timed as a whole. */
static void micro(const char *name, void (*op)(void))
{
	long b, a;
	u64 t0, ns;
	char ex[64];
	int i, n = count;

	atomic_set(&calls, 0);
	b = exits_before();
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		op();
	ns = ktime_get_ns() - t0;
	a = exits_after();
	exits_str(ex, sizeof(ex), b, a, n);
	pr_info("ipibench: micro test=%s count=%d total_ns=%llu ns_per_op=%llu calls=%d %s\n", name, n, ns,
		div_u64(ns, n), atomic_read(&calls), ex);
}

static void op_dry(void)
{
	cb(NULL);
}

static struct irq_work self_work;

static void op_self(void)
{
	irq_work_queue(&self_work);
	irq_work_sync(&self_work);
}

static void op_normal(void)
{
	smp_call_function_single(TARGET_CPU, cb, NULL, 1);
}

static void op_broadcast(void)
{
	smp_call_function(cb, NULL, 1);
}

static void op_bcastlock(void)
{
	smp_call_function(cb_lock, NULL, 1);
}

static long run(void *unused)
{
	roundtrip();
	micro("dry", op_dry);
	micro("self", op_self);
	micro("normal", op_normal);
	micro("broadcast", op_broadcast);
	micro("bcastlock", op_bcastlock);
	return 0;
}

static int __init ipibench_init(void)
{
	if (count < 10)
		count = 10;
	if (hv && !hv_present())
		hv = 0;
	init_irq_work(&self_work, work_fn);
	pr_info("ipibench: start count=%d cpus=%u apic=%s hv=%d\n", count, num_online_cpus(),
		x2apic_enabled() ? "x2apic" : "xapic", hv);
	samples = kvmalloc_array(count, sizeof(*samples), GFP_KERNEL);
	if (!samples) {
		pr_info("ipibench: no memory for %d samples\n", count);
		return 0;
	}
	cpus_read_lock();
	if (num_online_cpus() < 2 || !cpu_online(SENDER_CPU) || !cpu_online(TARGET_CPU))
		pr_info("ipibench: needs 2 CPUs\n");
	else
		work_on_cpu(SENDER_CPU, run, NULL);
	cpus_read_unlock();
	kvfree(samples);
	pr_info("ipibench: done\n");
	return 0;
}

static void __exit ipibench_exit(void)
{
}

module_init(ipibench_init);
module_exit(ipibench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("IPI benchmarks (round trip, send-IPI microbenchmark) for the hv hypervisor");
