// SPDX-License-Identifier: GPL-2.0
/*
 * ipivtab: a table of x2APIC ICR values, each written once from CPU 0 with
 * interrupts off, and what became of each write (hv.ipivtab=1 in the
 * project's initramfs). With the hypervisor's ipi=ipiv on the project's
 * patched Bochs, the CPU (the emulator) decides: virtualized (posted, no
 * exit), APIC-write VM exit, or #GP. The test runner feeds the same ICR
 * values to the unit tests' model (build/ipiv-verdict) and compares.
 *
 * Output (KERN_INFO):
 *   ipivtab: start max_apic_id=M rows=N
 *   ipivtab: row=K icr=0x<16 hex> verdict=virt|exit|gp name=<what it tests>
 *   ipivtab: done rows=N
 * verdict: exit when the hypervisor counted an APIC-write exit (reason 56)
 * on this vCPU during the WRMSR (it may then also inject #GP, its policy for
 * bits the CPU leaves to it); else gp when the WRMSR faulted; else virt.
 *
 * Every row is harmless to the running guest: fixed IPIs use the reschedule
 * vector, NMIs go to this CPU (an unknown NMI is logged), INIT only to an
 * APIC ID that names no vCPU or as the level de-assert the hypervisor
 * ignores, SIPI only to a running CPU (ignored). The rows past the highest
 * APIC ID (max+1 absent, max+2 reserved bit, max+3 the spare descriptor with
 * SN set, max+4 past the last index) need the hypervisor's ipivtest=1.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/irqflags.h>
#include <asm/msr.h>
#include <asm/smp.h>
#include <asm/irq_vectors.h>

#define HC_HV_EXITS_OF 0x48560005ul
#define EXIT_APIC_WRITE 56
#define MSR_ICR 0x830u

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("x2APIC ICR table for the IPI-virtualization agreement test");

static long hv_call(unsigned long nr, unsigned long b, unsigned long c)
{
	unsigned long ax = nr;

	asm volatile("vmcall" : "+a"(ax), "+b"(b), "+c"(c) : : "memory");
	return (long)ax;
}

/* ICR low-dword fields (SDM Vol. 3A, "Interrupt Command Register"). */
#define FIXED   (0u << 8)
#define LOWEST  (1u << 8)
#define SMI     (2u << 8)
#define MODE3   (3u << 8)
#define NMI     (4u << 8)
#define INIT    (5u << 8)
#define SIPI    (6u << 8)
#define EXTINT  (7u << 8)
#define LOGICAL (1u << 11)
#define DSTAT   (1u << 12)
#define ASSERT  (1u << 14)
#define LEVEL   (1u << 15)
#define SH_SELF (1u << 18)
#define SH_ALL  (2u << 18)
#define SH_OTH  (3u << 18)
#define V       RESCHEDULE_VECTOR

enum dst { D_OTHER, D_SELF, D_MAX, D_PLUS1, D_PLUS2, D_PLUS3, D_PLUS4, D_7E, D_BCAST, D_LOGICAL1 };

struct row {
	const char *name;
	u32 lo;
	enum dst dst;
};

static const struct row rows[] = {
	{ "fixed-phys-other", FIXED | V, D_OTHER },
	{ "fixed-phys-self", FIXED | V, D_SELF },
	{ "fixed-phys-last-vcpu", FIXED | V, D_MAX },
	{ "fixed-level-assert-bit", FIXED | ASSERT | V, D_OTHER },
	{ "fixed-vector-15", FIXED | 15, D_OTHER },
	{ "fixed-vector-0", FIXED | 0, D_OTHER },
	{ "lowest-priority", LOWEST | V, D_OTHER },
	{ "smi", SMI, D_OTHER },
	{ "mode-3", MODE3 | V, D_OTHER },
	{ "nmi-self", NMI, D_SELF },
	{ "init-absent-id", INIT | ASSERT, D_7E },
	{ "init-deassert", INIT | LEVEL, D_OTHER },
	{ "sipi-running-cpu", SIPI | 0x9a, D_OTHER },
	{ "extint", EXTINT, D_OTHER },
	{ "logical", FIXED | LOGICAL | V, D_LOGICAL1 },
	{ "level-triggered", FIXED | LEVEL | ASSERT | V, D_OTHER },
	{ "delivery-status-bit", FIXED | DSTAT | V, D_OTHER },
	{ "shorthand-self", FIXED | SH_SELF | V, D_SELF },
	{ "shorthand-all", FIXED | SH_ALL | V, D_SELF },
	{ "shorthand-others", FIXED | SH_OTH | V, D_SELF },
	{ "reserved-13", FIXED | (1u << 13) | V, D_OTHER },
	{ "reserved-16", FIXED | (1u << 16) | V, D_OTHER },
	{ "reserved-17", FIXED | (1u << 17) | V, D_OTHER },
	{ "reserved-20", FIXED | (1u << 20) | V, D_OTHER },
	{ "reserved-31", FIXED | (1u << 31) | V, D_OTHER },
	{ "dest-absent-7e", FIXED | V, D_7E },
	{ "dest-broadcast", FIXED | V, D_BCAST },
	{ "dest-max+1-absent-entry", FIXED | V, D_PLUS1 },
	{ "dest-max+2-reserved-entry-bit", FIXED | V, D_PLUS2 },
	{ "dest-max+3-sn-set", FIXED | 0xe1, D_PLUS3 },
	{ "dest-max+3-sn-set-again", FIXED | 0xe2, D_PLUS3 },
	{ "dest-max+4-past-last-index", FIXED | V, D_PLUS4 },
	{ "lowest-vector-15", LOWEST | 15, D_OTHER },
	{ "fixed-logical-shorthand-all", FIXED | LOGICAL | SH_ALL | V, D_SELF },
};

static u32 dest_of(enum dst d, u32 self, u32 other, u32 max)
{
	switch (d) {
	case D_OTHER: return other;
	case D_SELF: return self;
	case D_MAX: return max;
	case D_PLUS1: return max + 1;
	case D_PLUS2: return max + 2;
	case D_PLUS3: return max + 3;
	case D_PLUS4: return max + 4;
	case D_7E: return 0x7e;
	case D_BCAST: return 0xffffffffu;
	case D_LOGICAL1: return (other >> 4) << 16 | 1u << (other & 15);   /* x2APIC logical ID */
	}
	return self;
}

static int __init ipivtab_init(void)
{
	u32 self, other = 0, max = 0;
	int cpu, me, k;

	if (num_online_cpus() < 2) {
		pr_info("ipivtab: needs 2 CPUs\n");
		return 0;
	}
	me = get_cpu();
	self = cpu_physical_id(me);
	for_each_online_cpu(cpu) {
		if (cpu_physical_id(cpu) > max)
			max = cpu_physical_id(cpu);
		if (cpu != me && !other)
			other = cpu_physical_id(cpu);
	}
	pr_info("ipivtab: start max_apic_id=%u rows=%zu\n", max, ARRAY_SIZE(rows));
	for (k = 0; k < ARRAY_SIZE(rows); k++) {
		u32 dest = dest_of(rows[k].dst, self, other, max);
		u64 icr = (u64)dest << 32 | rows[k].lo;
		unsigned long flags;
		long before, after;
		int fault;

		local_irq_save(flags);
		before = hv_call(HC_HV_EXITS_OF, self, EXIT_APIC_WRITE);
		fault = wrmsr_safe(MSR_ICR, (u32)icr, (u32)(icr >> 32));
		after = hv_call(HC_HV_EXITS_OF, self, EXIT_APIC_WRITE);
		local_irq_restore(flags);
		if (before < 0 || after < 0) {
			pr_info("ipivtab: row=%d exit count hypercall failed (%ld, %ld)\n", k, before, after);
			break;
		}
		pr_info("ipivtab: row=%d icr=0x%016llx verdict=%s name=%s\n", k, icr,
			after > before ? "exit" : fault ? "gp" : "virt", rows[k].name);
	}
	put_cpu();
	pr_info("ipivtab: done rows=%d\n", k);
	return 0;
}

static void __exit ipivtab_exit(void)
{
}

module_init(ipivtab_init);
module_exit(ipivtab_exit);
