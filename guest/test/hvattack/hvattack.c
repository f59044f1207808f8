// SPDX-License-Identifier: GPL-2.0
/*
 * hvattack: a guest kernel module that tries, from ring 0, what a hostile
 * guest would try against the hypervisor under it, and says what happened.
 * Loaded by the initramfs /init when the kernel command line has
 * hv.attack=1. Each attack prints one line; the hypervisor must stay up,
 * answer each attempt as the SDM answers a CPU without the feature, and count
 * it in its report (the test runner checks both sides).
 *
 *   hvattack: xsetbv 0x... -> #GP | ACCEPTED
 *       invalid XCR0 values (AVX without SSE, MPX BNDREGS alone, AVX-512 opmask
 *       alone, an undefined bit): each must fault in the guest.
 *   hvattack: apic_base write 0x... -> dropped (reads 0x...) | CHANGED
 *       disabling the APIC and moving its base: the value must not change.
 *   hvattack: msr 0x... write -> #GP | ACCEPTED     (Intel PT, DS_AREA, PEBS_ENABLE)
 *   hvattack: init-sipi apic_id=N sent            (a CPU that is not a vCPU:
 *       the hypervisor drops it and counts it; the CPU is parked in VMX root)
 *   hvattack: nmi self -> handled=+N              (an NMI IPI to itself arrives
 *       once as the guest's own NMI)
 *   hvattack: done failures=N
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/asm.h>
#include <asm/fpu/xcr.h>

static int target_apic = 1;
module_param(target_apic, int, 0444);
MODULE_PARM_DESC(target_apic, "APIC ID of a CPU the guest must not be able to start");

static int failures;
static atomic_t nmis = ATOMIC_INIT(0);

/* XSETBV that survives a #GP: 0 done, -1 faulted. */
static int xsetbv_safe(u32 index, u64 value)
{
	int err = 0;
	asm volatile("1: xsetbv\n"
		     "2:\n"
		     _ASM_EXTABLE_TYPE_REG(1b, 2b, EX_TYPE_EFAULT_REG, %[err])
		     : [err] "+r"(err)
		     : "c"(index), "a"((u32)value), "d"((u32)(value >> 32))
		     : "memory");
	return err ? -1 : 0;
}

static void attack_xsetbv(void)
{
	static const u64 bad[] = { 0x5, 0xb, 0x27, 0x3 | (1ull << 8), 0x3 | (1ull << 63) };
	u64 old = xgetbv(0);
	for (int i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = xsetbv_safe(0, bad[i]);
		pr_info("hvattack: xsetbv 0x%llx -> %s\n", bad[i], r ? "#GP" : "ACCEPTED");
		if (!r) {
			failures++;
			xsetbv_safe(0, old);
		}
	}
}

static void attack_apic_base(void)
{
	u64 base, now;
	rdmsrl(MSR_IA32_APICBASE, base);
	const u64 tries[] = { base & ~(X2APIC_ENABLE | MSR_IA32_APICBASE_ENABLE),   /* disable */
			      (base & 0xfff) | 0x1000000ull };                          /* move the page */
	for (int i = 0; i < ARRAY_SIZE(tries); i++) {
		int r = wrmsrl_safe(MSR_IA32_APICBASE, tries[i]);
		rdmsrl(MSR_IA32_APICBASE, now);
		pr_info("hvattack: apic_base write 0x%llx -> %s (reads 0x%llx)\n", tries[i],
			r ? "#GP" : now == base ? "dropped" : "CHANGED", now);
		if (now != base) {
			failures++;
			wrmsrl_safe(MSR_IA32_APICBASE, base);
		}
	}
}

static void attack_msrs(void)
{
	/* Intel PT output base and control, DS_AREA, PEBS_ENABLE. */
	static const u32 msrs[] = { 0x560, 0x570, 0x600, 0x3f1 };
	for (int i = 0; i < ARRAY_SIZE(msrs); i++) {
		int r = wrmsrl_safe(msrs[i], 0x1000);
		pr_info("hvattack: msr 0x%x write -> %s\n", msrs[i], r ? "#GP" : "ACCEPTED");
		if (!r)
			failures++;
	}
}

static void attack_init_sipi(void)
{
	unsigned long flags;
	if (!x2apic_enabled()) {
		pr_info("hvattack: init-sipi skipped (no x2APIC)\n");
		return;
	}
	local_irq_save(flags);
	/* INIT assert, then two start-up IPIs with vector 0x9a (page 0x9a000). */
	wrmsrl(0x830, ((u64)target_apic << 32) | 0x4500);
	udelay(100);
	wrmsrl(0x830, ((u64)target_apic << 32) | 0x069a);
	udelay(100);
	wrmsrl(0x830, ((u64)target_apic << 32) | 0x069a);
	local_irq_restore(flags);
	mdelay(50);
	pr_info("hvattack: init-sipi apic_id=%d sent, guest cpus online=%u\n", target_apic, num_online_cpus());
}

static int on_nmi(unsigned int type, struct pt_regs *regs)
{
	atomic_inc(&nmis);
	return NMI_HANDLED;
}

static void attack_nmi(void)
{
	int before;
	if (register_nmi_handler(NMI_LOCAL, on_nmi, 0, "hvattack")) {
		pr_info("hvattack: nmi skipped (no handler)\n");
		return;
	}
	before = atomic_read(&nmis);
	apic->send_IPI_self(NMI_VECTOR);
	mdelay(20);
	pr_info("hvattack: nmi self -> handled=+%d\n", atomic_read(&nmis) - before);
	if (atomic_read(&nmis) - before < 1)
		failures++;
	unregister_nmi_handler(NMI_LOCAL, "hvattack");
}

static int __init hvattack_init(void)
{
	attack_xsetbv();
	attack_apic_base();
	attack_msrs();
	attack_init_sipi();
	attack_nmi();
	pr_info("hvattack: done failures=%d\n", failures);
	return 0;
}

static void __exit hvattack_exit(void)
{
}

module_init(hvattack_init);
module_exit(hvattack_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hostile-guest probes for the hypervisor's tests");
