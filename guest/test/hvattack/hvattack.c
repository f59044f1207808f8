// SPDX-License-Identifier: GPL-2.0
/*
 * hvattack: a guest kernel module that tries, from ring 0, what a hostile
 * guest would try against the hypervisor under it, and says what happened.
 * Loaded by the initramfs /init when the kernel command line has
 * hv.attack=1. Each attack prints one line "hvattack: <what> -> <outcome>";
 * an outcome in capitals is the hypervisor failing its promise and counts in
 * "failures". The hypervisor must stay up, answer each attempt as a CPU
 * without the feature would (#GP, #UD, nothing happens), and count it in its
 * report: the test runner checks both sides.
 *
 *   msr 0x3a write / 0x480 read / 0x48b write    FEATURE_CONTROL, VMX MSRs: #GP
 *   msr 0x3a read -> 0x...                       locked, VMX off (bit 2 clear)
 *   cr4.vmxe set -> #GP ; vmxon/vmptrld/vmread -> #UD
 *   xsetbv 0x... -> #GP                          invalid XCR0 values (SDM rules)
 *   apic_base write 0x... -> dropped             disable, move the page
 *   msr 0x560/0x570/0x600/0x3f1 write -> #GP     Intel PT, DS_AREA, PEBS_ENABLE
 *   tsc_adjust +2^36 -> moved ; tsc write -> moved ; restored  the TSC as the SDM says
 *   init-sipi apic_id=N sent, guest cpus online=M  a CPU kept from the guest
 *   ipi storm ids=0..N sent=K                    fixed IPIs to every APIC ID
 *   nmi storm sent=N handled=M                   NMIs to itself, and to the kept CPU
 *   ioapic nmi pin=8 apic_id=N rtc_irqs=K -> survived   the RTC's periodic interrupt,
 *                                                routed by the guest's IOAPIC as an NMI
 *                                                to the kept CPU (the hypervisor's)
 *   ioapic modes pin=10 readback=6/6 -> written   SMI, INIT, ExtINT, vector 5, vector 0xf1
 *                                                (the hypervisor's kick) and an NMI to
 *                                                everyone, unmasked on a pin no device
 *                                                drives; each must read back as written
 *                                                (the runner checks the hypervisor
 *                                                refused and counted all six)
 *   msi modes dev=BB:DD.F readback=7/7 -> written   (msi_attack=1, alone) SMI, INIT,
 *                                                ExtINT, vector 5, vector 0xf1, an NMI to
 *                                                every CPU and a non-MSI address written
 *                                                into the first MSI capability found (the
 *                                                patched Bochs's xHCI), each pair with MSI
 *                                                off then turned on, read back, then the
 *                                                driver's own message restored (the runner
 *                                                checks all seven refused, counted, and
 *                                                none on the device)
 *   msix entry=I addr=... data=... ctrl=...     (msix_show=1, alone) the first enabled MSI-X
 *                                                table as the guest reads it
 *   msix mask|unmask entry=I pba=0x.. -> 0x..   (msix_mask=I, msix_unmask=I, alone) an entry
 *                                                masked or unmasked, the PBA before and after
 *   msix rewrite entry=I unmasked ... -> written   (msix_attack=1, alone; issue 33) ten
 *                                                forbidden messages into an unmasked entry of the
 *                                                driver's, never masked, then its own back
 *   msix table on hv page 0x... (canary): read pattern=N ... -> not readable   the table's
 *                                                BAR onto the hypervisor's canary page
 *                                                (canary=, from hv.canary=): the rest of the
 *                                                page read (its pattern seen: READ HYPERVISOR
 *                                                MEMORY) and written
 *   msix table on lapic|hpet|ioapic 0x... -> survived   the BAR onto register pages (the
 *                                                HPET's configuration must not change)
 *   msix pages=65 [a-b] touched=65 -> survived   the BAR through msix_pages= distinct pages
 *   msix restored bar=... entries=8/8 ... -> restored   BAR and entries as the driver's
 *   ioregsel hammer cpu=N selects=K lines=L rtes=same -> survived   (hammer_ms=, alone)
 *                                                one CPU writes IOREGSEL (every
 *                                                register in turn) and reads IOWIN as fast
 *                                                as it can while CPU 0 prints L lines: each
 *                                                line must arrive whole and every entry
 *                                                read back unchanged after
 *   sleep s<typ> pm1a=0x... -> ignored           SLP_TYP/SLP_EN writes other than S5
 *   mem [a-b] pages=N absent=M data=K            every e820-reserved page read, then
 *   mem data [a-b]                               written where it read as absent;
 *                                                runs of pages that held data are listed
 *   mem writes=N readback=ok                     (the runner checks none of them lies
 *                                                in the hypervisor's own ranges)
 *   high mmio 0x9000000000 read 0x... -> completed   above the identity map
 *   uart 0x3f8 divisor=0x60 lcr=0x1a mcr=loop looped=N/N -> kept    the console UART
 *                                                reprogrammed (9600 baud, 7E1, loopback;
 *                                                bytes sent in loopback must come back and
 *                                                never reach the console), then restored:
 *                                                the runner checks both consoles stay whole
 *   x2apic reserved reads: N of N -> #GP        RDMSR of every reserved or write-only
 *   x2apic register reads: N of N -> read       x2APIC MSR (800H-8FFH) #GPs, the others read
 *   lvt thermal hostile readback=3/3 -> written  the kick vector, an exception
 *                                                vector and NMI delivery in the guest's
 *                                                LVT thermal: the guest's, never carried
 *                                                out (the runner checks the refusals)
 *   x2apic self ipi vector 0 esr=0x20 error_irq=pending -> survived   an illegal
 *                                                self-IPI vector: ESR "send illegal vector"
 *                                                and the error interrupt, nothing sent
 *   cpuid osxsave=A/B for cr4.osxsave=1/0 ospke=C for cr4.pke=D -> follows cr4
 *   #GP frame rf: injected=1 native=1 -> set     RF in the RFLAGS image of a #GP, one
 *                                                the hypervisor injects and one the CPU raises
 *   dma events to 0x... (what): port resets=N -> sent   (dma_events=1, alone; issue 34)
 *                                                the xHCI's interrupter 0 event ring moved
 *                                                (a segment table of the module's own naming
 *                                                it) onto the canary page, onto dma_high
 *                                                (above the guest's memory) and onto
 *                                                0xfee00040, and a port reset to make the
 *                                                controller write an event there: two DMA
 *                                                writes that the VT-d unit must block and
 *                                                record, and forged interrupt requests (an
 *                                                event's DWORDs at 0xfee00048, compatibility
 *                                                format, and 0xfee00058, remappable naming
 *                                                IRTE 2, the IOAPIC's) that it must refuse;
 *                                                the runner checks the records and the canary.
 *                                                The controller's ring is not the driver's
 *                                                after: run it last
 *   uhci forge handles A-B from D: port 0x.., K of N data stages written -> sent
 *                                                (uhci_forge=A, alone; issue 44) the UHCI's
 *                                                control transfers, their data stages
 *                                                written to 0xfee0xxxx: remappable
 *                                                interrupt requests naming IRTE handles
 *                                                A.. from the UHCI's source ID, which the
 *                                                unit must refuse (the runner reads the
 *                                                faults); the UHCI's driver unbound first
 *   done failures=N
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/smp.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/acpi.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/asm.h>
#include <asm/irq_vectors.h>
#include <asm/trapnr.h>
#include <asm/fpu/xcr.h>
#include <asm/apicdef.h>
#include <asm/processor-flags.h>
#include <asm/special_insns.h>
#include <linux/kdebug.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/completion.h>
#include <linux/notifier.h>
#include <linux/preempt.h>
#include <linux/pci.h>

static int uart = 0x3f8;
module_param(uart, int, 0444);
MODULE_PARM_DESC(uart, "base port of the console UART (ttyS0) to reprogram");
static int target_apic = 1;
module_param(target_apic, int, 0444);
MODULE_PARM_DESC(target_apic, "APIC ID of a CPU the guest must not be able to start");
static int storm_ids = 1024;
module_param(storm_ids, int, 0444);
MODULE_PARM_DESC(storm_ids, "the IPI storm goes to APIC IDs 0..storm_ids-1");
static int nmi_storm = 1000;
module_param(nmi_storm, int, 0444);
MODULE_PARM_DESC(nmi_storm, "self-NMIs sent by the NMI storm");

static int hammer_ms;
module_param(hammer_ms, int, 0444);
MODULE_PARM_DESC(hammer_ms, "only the IOREGSEL hammer: this long on the last CPU while CPU 0 prints (0: the attacks)");

static bool msi_attack;
module_param(msi_attack, bool, 0444);
MODULE_PARM_DESC(msi_attack, "only the MSI attack: forbidden routes into the first MSI capability found");

static bool msix_show;
module_param(msix_show, bool, 0444);
MODULE_PARM_DESC(msix_show, "only print the first enabled MSI-X table as the guest reads it");

static int msix_mask = -1, msix_unmask = -1;
module_param(msix_mask, int, 0444);
MODULE_PARM_DESC(msix_mask, "only mask this entry of the first enabled MSI-X table (the driver's kept)");
module_param(msix_unmask, int, 0444);
MODULE_PARM_DESC(msix_unmask, "only unmask this entry of the first enabled MSI-X table");

static bool msix_attack;
module_param(msix_attack, bool, 0444);
MODULE_PARM_DESC(msix_attack, "only the MSI-X attack: the first enabled MSI-X table rewritten and moved");

static unsigned long canary;
module_param(canary, ulong, 0444);
MODULE_PARM_DESC(canary, "the hypervisor's canary page (hv.canary=): the MSI-X attack's hypervisor page");

static bool dma_events;
module_param(dma_events, bool, 0444);
MODULE_PARM_DESC(dma_events, "only the xHCI's DMA writes: its event ring moved onto the canary page, dma_high and 0xfee00040");

static unsigned long dma_high;
module_param(dma_high, ulong, 0444);
MODULE_PARM_DESC(dma_high, "an address above the guest's memory for dma_events (64-byte aligned)");

static int uhci_forge = -1;
module_param(uhci_forge, int, 0444);
MODULE_PARM_DESC(uhci_forge, "only the UHCI's forged requests: remappable interrupt requests naming IRTE handles "
		 "uhci_forge.. (uhci_forge_n of them) written by the UHCI (its driver unbound first)");

static int uhci_forge_n = 8;
module_param(uhci_forge_n, int, 0444);
MODULE_PARM_DESC(uhci_forge_n, "how many handles uhci_forge names (at most 16)");

static int msix_pages = 65;
module_param(msix_pages, int, 0444);
MODULE_PARM_DESC(msix_pages, "distinct pages the MSI-X attack moves the table through");

static int failures;
static atomic_t nmis = ATOMIC_INIT(0);

/* The exception-table type that leaves the trap number in RAX (EX_TYPE_FAULT):
 * RAX starts at -1; after the instruction it is -1 if it completed, else the
 * vector of the fault it raised. */
#define TRAPNR_NONE (-1L)

static const char *trapname(long t)
{
	switch (t) {
	case TRAPNR_NONE: return "completed";
	case X86_TRAP_UD: return "#UD";
	case X86_TRAP_GP: return "#GP";
	case X86_TRAP_PF: return "#PF";
	default: return "fault";
	}
}

/* A promise check: 'got' must be 'want'; either way one line. */
static void outcome(const char *what, bool good, const char *said)
{
	pr_info("hvattack: %s -> %s\n", what, said);
	if (!good)
		failures++;
}

static long wrmsr_trap(u32 msr, u64 val)
{
	long t = TRAPNR_NONE;
	/* EAX carries the low half in and the trap number out: a completed
	 * WRMSR leaves it as it was, so compare with the value sent. */
	unsigned long ax = (u32)val;
	asm volatile("1: wrmsr\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(ax) : "c"(msr), "d"((u32)(val >> 32)) : "memory");
	if (ax != (u32)val)
		t = (long)ax;
	return t;
}

static void attack_vmx_msrs(void)
{
	char what[64];
	u64 v = 0;
	long t;

	/* rdmsr_safe tells fault from success without the EAX juggling. */
	if (rdmsrl_safe(0x3a, &v)) {
		outcome("msr 0x3a read", false, "#GP (a CPU with the MSR answers)");
	} else {
		snprintf(what, sizeof(what), "msr 0x3a read 0x%llx", v);
		outcome(what, (v & 1) && !(v & 6), (v & 1) && !(v & 6) ? "locked, VMX off" : "VMX ENABLED");
	}
	t = wrmsr_trap(0x3a, 0x5);
	outcome("msr 0x3a write 0x5", t == X86_TRAP_GP, t == X86_TRAP_GP ? "#GP" : "ACCEPTED");
	for (u32 m = 0x480; m <= 0x492; m += 0x9) {
		int r = rdmsrl_safe(m, &v);
		snprintf(what, sizeof(what), "msr 0x%x read", m);
		outcome(what, r != 0, r ? "#GP" : "READ");
	}
	t = wrmsr_trap(0x48b, ~0ull);
	outcome("msr 0x48b write", t == X86_TRAP_GP, t == X86_TRAP_GP ? "#GP" : "ACCEPTED");
}

static void attack_vmx_insns(void)
{
	static u64 region[512] __aligned(4096);
	u64 pa = virt_to_phys(region), field = 0, out = 0;
	unsigned long cr4 = __read_cr4();
	long t = TRAPNR_NONE;

	asm volatile("1: mov %[v], %%cr4\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(t) : [v] "r"(cr4 | X86_CR4_VMXE) : "memory");
	if (t == TRAPNR_NONE) {
		asm volatile("mov %0, %%cr4" :: "r"(cr4) : "memory");
		outcome("cr4.vmxe set", false, "ACCEPTED");
	} else {
		outcome("cr4.vmxe set", t == X86_TRAP_GP, trapname(t));
	}
	t = TRAPNR_NONE;
	asm volatile("1: vmxon %[pa]\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(t) : [pa] "m"(pa) : "memory", "cc");
	outcome("vmxon", t == X86_TRAP_UD, t == X86_TRAP_UD ? "#UD" : t == TRAPNR_NONE ? "EXECUTED" : trapname(t));
	t = TRAPNR_NONE;
	asm volatile("1: vmptrld %[pa]\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(t) : [pa] "m"(pa) : "memory", "cc");
	outcome("vmptrld", t == X86_TRAP_UD, t == X86_TRAP_UD ? "#UD" : t == TRAPNR_NONE ? "EXECUTED" : trapname(t));
	t = TRAPNR_NONE;
	asm volatile("1: vmread %[f], %[o]\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(t), [o] "=r"(out) : [f] "r"(field) : "memory", "cc");
	outcome("vmread", t == X86_TRAP_UD, t == X86_TRAP_UD ? "#UD" : t == TRAPNR_NONE ? "EXECUTED" : trapname(t));
}

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
	/* AVX without SSE; MPX BNDREGS without BNDCSR; opmask without the other
	 * AVX-512 bits; x87 off; an undefined bit; a bit of XCR1 (index 1). */
	static const u64 bad[] = { 0x5, 0xb, 0x27, 0x2, 0x3 | (1ull << 63) };
	char what[48];
	u64 old = xgetbv(0);
	for (int i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = xsetbv_safe(0, bad[i]);
		snprintf(what, sizeof(what), "xsetbv 0x%llx", bad[i]);
		outcome(what, r != 0, r ? "#GP" : "ACCEPTED");
		if (!r)
			xsetbv_safe(0, old);
	}
	int r1 = xsetbv_safe(1, 3);
	outcome("xsetbv xcr1", r1 != 0, r1 ? "#GP" : "ACCEPTED");
}

static void attack_apic_base(void)
{
	u64 base, now;
	char what[48];
	rdmsrl(MSR_IA32_APICBASE, base);
	const u64 tries[] = { base & ~(X2APIC_ENABLE | MSR_IA32_APICBASE_ENABLE),   /* disable */
			      (base & 0xfff) | 0x1000000ull,                           /* move the page */
			      (base & 0xfff) | 0x200000ull };                          /* onto the hypervisor */
	for (int i = 0; i < ARRAY_SIZE(tries); i++) {
		int r = wrmsrl_safe(MSR_IA32_APICBASE, tries[i]);
		rdmsrl(MSR_IA32_APICBASE, now);
		snprintf(what, sizeof(what), "apic_base write 0x%llx", tries[i]);
		pr_info("hvattack: %s -> %s (reads 0x%llx)\n", what,
			r ? "#GP" : now == base ? "dropped" : "CHANGED", now);
		if (now != base) {
			failures++;
			wrmsrl_safe(MSR_IA32_APICBASE, base);
		}
	}
}

static void attack_trace_msrs(void)
{
	/* Intel PT output base and control, DS_AREA, PEBS_ENABLE. */
	static const u32 msrs[] = { 0x560, 0x570, 0x600, 0x3f1 };
	char what[32];
	for (int i = 0; i < ARRAY_SIZE(msrs); i++) {
		int r = wrmsrl_safe(msrs[i], 0x1000);
		snprintf(what, sizeof(what), "msr 0x%x write", msrs[i]);
		outcome(what, r != 0, r ? "#GP" : "ACCEPTED");
	}
}

/* The TSC as the SDM says (Vol. 3B, "Time-Stamp Counter Adjustment"; issue
 * 28): a write of IA32_TSC_ADJUST moves this CPU's TSC by the same amount,
 * a write of IA32_TSC moves IA32_TSC_ADJUST by what it moved the TSC, reads
 * agree with RDTSC. Interrupts off while it is moved, restored exactly
 * through IA32_TSC_ADJUST; then this CPU's timer still runs. */
#define TSC_D (1ull << 36)
#define TSC_SLACK (1ull << 24)   /* the exits between two reads, in TSC ticks */
static bool near(u64 a, u64 b) { return a - b < TSC_SLACK; }
static void attack_tsc(void)
{
	u64 adj0 = 0, adj1 = 0, adj2 = 0, adj3 = 0, t0, t1, t2, t2b, t3, m1;
	unsigned long flags, j0;
	bool ok_adj, ok_tsc, ok_back;
	if (rdmsrl_safe(MSR_IA32_TSC_ADJUST, &adj0)) {
		pr_info("hvattack: tsc_adjust read -> #GP (no IA32_TSC_ADJUST)\n");
		failures++;
		return;
	}
	local_irq_save(flags);
	t0 = rdtsc();
	wrmsrl(MSR_IA32_TSC_ADJUST, adj0 + TSC_D);
	t1 = rdtsc();
	rdmsrl(MSR_IA32_TSC_ADJUST, adj1);
	rdmsrl(MSR_IA32_TSC, m1);
	ok_adj = near(t1, t0 + TSC_D) && adj1 == adj0 + TSC_D && near(m1, t1);
	t2 = rdtsc();
	wrmsrl(MSR_IA32_TSC, t2 - TSC_D);        /* back by TSC_D and a little */
	t2b = rdtsc();
	rdmsrl(MSR_IA32_TSC_ADJUST, adj2);
	ok_tsc = near(adj0, adj2) && near(t2b, t2 - TSC_D);
	wrmsrl(MSR_IA32_TSC_ADJUST, adj0);       /* exactly where it was */
	t3 = rdtsc();
	rdmsrl(MSR_IA32_TSC_ADJUST, adj3);
	local_irq_restore(flags);
	ok_back = adj3 == adj0 && near(t3, t0);
	pr_info("hvattack: tsc_adjust +2^36 -> rdtsc +%llu, adjust +%llu, rdmsr tsc %s -> %s\n", t1 - t0, adj1 - adj0,
		near(m1, t1) ? "agrees" : "DIFFERS", ok_adj ? "moved" : "WRONG");
	pr_info("hvattack: tsc write -2^36 -> adjust %s -> %s\n", near(adj0, adj2) ? "moved back" : "NOT MOVED",
		ok_tsc ? "moved" : "WRONG");
	pr_info("hvattack: tsc_adjust restored -> rdtsc %s -> %s\n", near(t3, t0) ? "continuous" : "JUMPED",
		ok_back ? "restored" : "WRONG");
	j0 = jiffies;
	msleep(40);
	pr_info("hvattack: tsc timers afterwards: jiffies +%lu -> %s\n", jiffies - j0, jiffies != j0 ? "ticking" : "STOPPED");
	if (!ok_adj || !ok_tsc || !ok_back || jiffies == j0)
		failures++;
}

/* The x2APIC MSR of an xAPIC register offset (SDM Vol. 3A, "x2APIC
 * Register Address Space"). */
#define X2APIC_MSR(off) (APIC_BASE_MSR + ((off) >> 4))

/* The registers the SDM lists as readable in x2APIC mode; EOI and SELF IPI
 * are write-only, every other MSR of 800H-8FFH reserved. */
static bool x2apic_readable(u32 off)
{
	switch (off) {
	case APIC_ID: case APIC_LVR: case APIC_TASKPRI: case APIC_PROCPRI: case APIC_LDR: case APIC_SPIV:
	case APIC_ESR: case APIC_LVTCMCI: case APIC_ICR: case APIC_LVTT: case APIC_LVTTHMR: case APIC_LVTPC:
	case APIC_LVT0: case APIC_LVT1: case APIC_LVTERR: case APIC_TMICT: case APIC_TMCCT: case APIC_TDCR:
		return true;
	default:
		return off >= APIC_ISR && off < APIC_IRR + 0x80;   /* ISR, TMR, IRR */
	}
}

/* RDMSR of every x2APIC MSR: the reserved and write-only ones #GP on an
 * x2APIC; APIC-register virtualization would answer them all from the
 * virtual-APIC page unless the hypervisor intercepts them. */
static void attack_x2apic_reads(void)
{
	int reserved = 0, gp = 0, regs = 0, read = 0, said = 0;
	for (u32 m = APIC_BASE_MSR; m < APIC_BASE_MSR + 0x100; m++) {
		u64 v = 0;
		int r = rdmsrl_safe(m, &v);
		if (x2apic_readable((m - APIC_BASE_MSR) << 4)) {
			regs++;
			read += !r;
		} else {
			reserved++;
			gp += r != 0;
			if (!r && said++ < 8)
				pr_info("hvattack: x2apic msr 0x%x reads 0x%llx\n", m, v);
		}
	}
	pr_info("hvattack: x2apic reserved reads: %d of %d -> %s\n", gp, reserved, gp == reserved ? "#GP" : "READ");
	pr_info("hvattack: x2apic register reads: %d of %d -> %s\n", read, regs, read == regs ? "read" : "FAULTED");
	if (gp != reserved || read != regs)
		failures++;
}

/* SELF IPI with vector 0, an illegal vector: the local APIC sends nothing,
 * sets the ESR's "send illegal vector", shown after the next ESR write, and
 * signals the error interrupt (SDM Vol. 3A, "Error Handling"). Under
 * virtual-interrupt delivery this WRMSR is an APIC-write VM exit, which once
 * stopped the hypervisor. With interrupts off, so that Linux's error
 * handler (it writes and reads the ESR) runs only after the ESR was read
 * here; the IRR shows its vector waiting. */
static void attack_self_ipi_illegal(void)
{
	unsigned long flags;
	u64 esr = 0, irr = 0;
	char what[80];
	long t;
	local_irq_save(flags);
	wrmsrl(X2APIC_MSR(APIC_ESR), 0);
	t = wrmsr_trap(X2APIC_MSR(APIC_SELF_IPI), 0);
	wrmsrl(X2APIC_MSR(APIC_ESR), 0);
	rdmsrl(X2APIC_MSR(APIC_ESR), esr);
	rdmsrl(X2APIC_MSR(APIC_IRR + 0x10 * (ERROR_APIC_VECTOR / 32)), irr);
	local_irq_restore(flags);
	snprintf(what, sizeof(what), "x2apic self ipi vector 0 esr=0x%llx error_irq=%s", esr,
		 (irr >> (ERROR_APIC_VECTOR % 32)) & 1 ? "pending" : "none");
	outcome(what, t == TRAPNR_NONE && esr == APIC_ESR_SENDILL,
		t != TRAPNR_NONE ? trapname(t) : esr == APIC_ESR_SENDILL ? "survived" : "WRONG ESR");
}

/* The LVT thermal entry (x2APIC MSR 833H) the hypervisor carries out on
 * the physical one (vmx/virq_apic.c): written with the hypervisor's own
 * kick vector (0xf1), an exception vector (0x12) and NMI delivery, each
 * unmasked, then Linux's own value put back. Each write is the guest's
 * (it reads back as written, the x2APIC's LVT bits); the hypervisor must
 * refuse to carry any of the three out (the runner checks its count and
 * its line) and stay up. Interrupts off meanwhile. */
static void attack_lvt_thermal(void)
{
	static const u32 bad[] = { 0xf1, 0x12, 0x4f0 };
	unsigned long flags;
	u64 saved = 0, v = 0;
	int same = 0;
	local_irq_save(flags);
	rdmsrl(X2APIC_MSR(0x330), saved);
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		wrmsrl(X2APIC_MSR(0x330), bad[i]);
		rdmsrl(X2APIC_MSR(0x330), v);
		same += (v & 0x107ff) == bad[i];
	}
	wrmsrl(X2APIC_MSR(0x330), saved);
	local_irq_restore(flags);
	char what[64];
	snprintf(what, sizeof(what), "lvt thermal hostile readback=%d/%u", same, (unsigned)ARRAY_SIZE(bad));
	outcome(what, same == ARRAY_SIZE(bad), same == ARRAY_SIZE(bad) ? "written" : "NOT AS WRITTEN");
}

/* CPUID.1:ECX.OSXSAVE (bit 27) is a copy of CR4.OSXSAVE, CPUID.(7,0):ECX.OSPKE
 * (bit 4) of CR4.PKE (SDM Vol. 2A, "CPUID"). CR4.OSXSAVE is cleared for one
 * CPUID and restored, interrupts off (nothing may use XSAVE meanwhile). */
static void attack_cpuid_cr4(void)
{
	unsigned long flags, cr4;
	u32 with, without = 0, ospke, pke;
	bool good;
	char what[96];
	local_irq_save(flags);
	cr4 = __read_cr4();
	with = (cpuid_ecx(1) >> 27) & 1;
	if (cr4 & X86_CR4_OSXSAVE) {
		asm volatile("mov %0, %%cr4" :: "r"(cr4 & ~X86_CR4_OSXSAVE) : "memory");
		without = (cpuid_ecx(1) >> 27) & 1;
		asm volatile("mov %0, %%cr4" :: "r"(cr4) : "memory");
	}
	local_irq_restore(flags);
	{
		unsigned int a, b, c, d;
		cpuid_count(7, 0, &a, &b, &c, &d);
		ospke = (c >> 4) & 1;
	}
	pke = !!(cr4 & X86_CR4_PKE);
	good = with == !!(cr4 & X86_CR4_OSXSAVE) && without == 0 && ospke == pke;
	snprintf(what, sizeof(what), "cpuid osxsave=%u/%u for cr4.osxsave=%u/0 ospke=%u for cr4.pke=%u", with, without,
		 !!(cr4 & X86_CR4_OSXSAVE), ospke, pke);
	outcome(what, good, good ? "follows cr4" : "STALE");
}

/* RF in the RFLAGS image a #GP pushes: 1, as for every fault (SDM Vol. 3A,
 * "EFLAGS Register"). An exception-table fixup runs before anything could
 * read the frame, so these #GPs have none: the die notifier, which a kernel
 * #GP that nothing fixed up reaches (DIE_GPF), takes the frame at the one
 * instruction expected and resumes after it. */
static unsigned long rf_at, rf_resume, rf_flags;
static bool rf_seen;

static int rf_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	if (val != DIE_GPF || !rf_at || args->regs->ip != rf_at)
		return NOTIFY_DONE;
	rf_flags = args->regs->flags;
	rf_seen = true;
	args->regs->flags &= ~X86_EFLAGS_RF;
	args->regs->ip = rf_resume;
	return NOTIFY_STOP;
}

static struct notifier_block rf_nb = { .notifier_call = rf_notify };

/* -1: no #GP; else RF of its frame. */
static int gp_rf(bool injected)
{
	unsigned long cr4 = __read_cr4();
	int rf;
	preempt_disable();
	rf_seen = false;
	if (injected)   /* CR4.VMXE: the hypervisor refuses it and injects #GP */
		asm volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %[at]\n\t"
			     "lea 2f(%%rip), %%rax\n\tmov %%rax, %[res]\n\t"
			     "1: mov %[v], %%cr4\n2:\n"
			     : [at] "=m"(rf_at), [res] "=m"(rf_resume) : [v] "r"(cr4 | X86_CR4_VMXE) : "rax", "memory");
	else            /* a non-canonical load: the CPU's own #GP, no VM exit */
		asm volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %[at]\n\t"
			     "lea 2f(%%rip), %%rax\n\tmov %%rax, %[res]\n\t"
			     "1: mov (%[p]), %%rax\n2:\n"
			     : [at] "=m"(rf_at), [res] "=m"(rf_resume) : [p] "r"(0x8000000000000000ul) : "rax", "memory");
	rf_at = 0;
	if (injected && !rf_seen)
		asm volatile("mov %0, %%cr4" :: "r"(cr4) : "memory");
	rf = rf_seen ? !!(rf_flags & X86_EFLAGS_RF) : -1;
	preempt_enable();
	return rf;
}

static void attack_fault_rf(void)
{
	int injected, native;
	char what[64];
	if (register_die_notifier(&rf_nb)) {
		outcome("#GP frame rf", false, "NO NOTIFIER");
		return;
	}
	injected = gp_rf(true);
	native = gp_rf(false);
	unregister_die_notifier(&rf_nb);
	snprintf(what, sizeof(what), "#GP frame rf: injected=%d native=%d", injected, native);
	outcome(what, injected == 1, injected == 1 ? "set" : injected < 0 ? "NO GP" : "CLEAR");
}

static void icr(u32 dest, u32 low)
{
	wrmsrl(0x830, ((u64)dest << 32) | low);
}

static void attack_init_sipi(void)
{
	unsigned long flags;
	unsigned int before = num_online_cpus();
	local_irq_save(flags);
	/* INIT assert, then two start-up IPIs with vector 0x9a (page 0x9a000). */
	icr(target_apic, 0x4500);
	udelay(100);
	icr(target_apic, 0x069a);
	udelay(100);
	icr(target_apic, 0x069a);
	local_irq_restore(flags);
	mdelay(50);
	pr_info("hvattack: init-sipi apic_id=%d sent, guest cpus online=%u\n", target_apic, num_online_cpus());
	if (num_online_cpus() != before)
		failures++;
}

/* Fixed-mode IPIs (the reschedule vector: harmless where it lands) to every
 * APIC ID below storm_ids, and to the x2APIC broadcast ID. */
static void attack_ipi_storm(void)
{
	unsigned long flags;
	int sent = 0;
	local_irq_save(flags);
	for (u32 id = 0; id < (u32)storm_ids; id++, sent++)
		icr(id, RESCHEDULE_VECTOR);
	icr(0xffffffff, RESCHEDULE_VECTOR);
	sent++;
	local_irq_restore(flags);
	mdelay(10);
	pr_info("hvattack: ipi storm ids=0..%d sent=%d -> survived\n", storm_ids - 1, sent);
}

static int on_nmi(unsigned int type, struct pt_regs *regs)
{
	atomic_inc(&nmis);
	return NMI_HANDLED;
}

static void attack_nmi(void)
{
	int before, got;
	if (register_nmi_handler(NMI_LOCAL, on_nmi, 0, "hvattack")) {
		outcome("nmi storm", false, "NO HANDLER");
		return;
	}
	before = atomic_read(&nmis);
	for (int i = 0; i < nmi_storm; i++)
		icr(0, APIC_DM_NMI | APIC_DEST_SELF);
	mdelay(20);
	got = atomic_read(&nmis) - before;
	/* NMIs to the kept CPU: dropped by the hypervisor, never delivered. */
	for (int i = 0; i < 16; i++)
		icr(target_apic, APIC_DM_NMI);
	mdelay(20);
	pr_info("hvattack: nmi storm sent=%d handled=%d (+16 to apic_id=%d) -> %s\n", nmi_storm, got,
		target_apic, got >= 1 && got <= nmi_storm ? "delivered" : "LOST");
	if (got < 1 || got > nmi_storm)
		failures++;
	unregister_nmi_handler(NMI_LOCAL, "hvattack");
}

/* The guest owns the IOAPIC: it re-programs the RTC's pin (ISA IRQ 8,
 * GSI 8 on the usual MADT) to deliver NMIs (delivery mode 100b) to the CPU
 * kept from it, and makes the RTC interrupt periodically (register B bit 6,
 * PIE; reading register C re-arms it) for 200 ms. The hypervisor's CPU must
 * take and ignore them; the entry and register B are restored after. The
 * HPET's legacy replacement route, which takes IRQ 8 from the RTC, is off
 * meanwhile. The IOAPIC and the HPET are at their default addresses (Bochs;
 * the MADT and the HPET table are not consulted). */
/* IOREGSEL at +0, IOWIN at +0x10 (82093AA IOAPIC datasheet). */
static u32 ioapic_rd(u8 __iomem *io, u32 reg) { writel(reg, io); return readl(io + 0x10); }
static void ioapic_wr(u8 __iomem *io, u32 reg, u32 v) { writel(reg, io); writel(v, io + 0x10); }
static u8 cmos_rd(u8 r) { outb(r, 0x70); return inb(0x71); }
static void cmos_wr(u8 r, u8 v) { outb(r, 0x70); outb(v, 0x71); }

static void attack_ioapic_nmi(void)
{
	const u32 pin = 8;
	u8 __iomem *io = ioremap(0xfec00000, 0x20), *hpet = ioremap(0xfed00000, 0x400);
	unsigned long flags;
	int irqs = 0;
	u64 hpet_cfg = 0;
	if (!io || !hpet) {
		outcome("ioapic nmi", false, "NO IOAPIC OR HPET MAPPING");
		return;
	}
	local_irq_save(flags);
	hpet_cfg = readq(hpet + 0x10);                                    /* general configuration */
	if (hpet_cfg & BIT(1))
		writeq(hpet_cfg & ~BIT(1), hpet + 0x10);                  /* LEG_RT_CNF off: IRQ 8 is the RTC's */
	u32 lo = ioapic_rd(io, 0x10 + 2 * pin), hi = ioapic_rd(io, 0x11 + 2 * pin);
	ioapic_wr(io, 0x10 + 2 * pin, lo | BIT(16));                     /* masked while it changes */
	ioapic_wr(io, 0x11 + 2 * pin, (u32)target_apic << 24);
	ioapic_wr(io, 0x10 + 2 * pin, 4u << 8);                           /* NMI, physical, edge, unmasked */
	u8 b = cmos_rd(0x0b);
	cmos_rd(0x0c);
	cmos_wr(0x0b, b | 0x40);
	for (int ms = 0; ms < 200; ms++) {
		udelay(1000);
		if (cmos_rd(0x0c) & 0x40)                                 /* PF: a periodic interrupt came */
			irqs++;
	}
	cmos_wr(0x0b, b);
	cmos_rd(0x0c);
	ioapic_wr(io, 0x10 + 2 * pin, lo | BIT(16));
	ioapic_wr(io, 0x11 + 2 * pin, hi);
	ioapic_wr(io, 0x10 + 2 * pin, lo);
	writeq(hpet_cfg, hpet + 0x10);
	local_irq_restore(flags);
	iounmap(hpet);
	iounmap(io);
	pr_info("hvattack: ioapic nmi pin=%u apic_id=%d rtc_irqs=%d -> %s\n", pin, target_apic, irqs,
		irqs > 0 ? "survived" : "NO RTC INTERRUPTS");
	if (irqs == 0)
		failures++;
}

/* Routes the guest may not have, written unmasked into entry 10 (no device
 * on the Bochs machine drives IRQ 10: nothing is ever sent on it, whoever
 * owns the IOAPIC), each read back, then the entry restored. */
static void attack_ioapic_modes(void)
{
	static const u32 lo[] = { 2u << 8 | 0x40, 5u << 8 | 0x40, 7u << 8 | 0x40, 0x05, 1u << 8 | 0xf1, 4u << 8 };
	static const u32 hi[] = { 0, 0, 0, 0, 0, 0xffu << 24 };
	const u32 pin = 10;
	u8 __iomem *io = ioremap(0xfec00000, 0x20);
	unsigned long flags;
	int same = 0;
	if (!io) {
		outcome("ioapic modes", false, "NO IOAPIC MAPPING");
		return;
	}
	local_irq_save(flags);
	u32 lo0 = ioapic_rd(io, 0x10 + 2 * pin), hi0 = ioapic_rd(io, 0x11 + 2 * pin);
	for (int i = 0; i < 6; i++) {
		ioapic_wr(io, 0x10 + 2 * pin, lo0 | BIT(16));
		ioapic_wr(io, 0x11 + 2 * pin, hi[i]);
		ioapic_wr(io, 0x10 + 2 * pin, lo[i]);
		same += ioapic_rd(io, 0x10 + 2 * pin) == lo[i] && ioapic_rd(io, 0x11 + 2 * pin) == hi[i];
	}
	ioapic_wr(io, 0x10 + 2 * pin, lo0 | BIT(16));
	ioapic_wr(io, 0x11 + 2 * pin, hi0);
	ioapic_wr(io, 0x10 + 2 * pin, lo0);
	local_irq_restore(flags);
	iounmap(io);
	pr_info("hvattack: ioapic modes pin=%u readback=%d/6 -> %s\n", pin, same, same == 6 ? "written" : "NOT AS WRITTEN");
	if (same != 6)
		failures++;
}

/* Routes the guest may not have, written into a device's MSI capability
 * (PCI 3.0 "MSI Capability Structure": message control at +2, address at
 * +4, upper address at +8 when 64-bit, data at +8 or +0xC; the SDM's
 * "Message Signalled Interrupts": destination ID in address 19:12, vector
 * in data 7:0, delivery mode in data 10:8). Each pair is written with MSI
 * off and takes effect when it goes on (one route to judge; on even where
 * the driver left MSI off for MSI-X, which the device then keeps sending),
 * is read back, and the driver's own message and enable come back the same
 * way. The device is the patched Bochs's xHCI, idle once its tablet is
 * enumerated. */
static void attack_msi_modes(void)
{
	static const u32 addr[] = { 0xfee00000, 0xfee00000, 0xfee00000, 0xfee00000, 0xfee00000, 0xfeeff000, 0xfed00000 };
	static const u16 data[] = { 2u << 8 | 0x40, 5u << 8, 7u << 8, 0x05, 0xf1, 4u << 8, 0x41 };
	struct pci_dev *pdev = NULL;
	int cap = 0, same = 0;
	while (!cap && (pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev)))
		cap = pci_find_capability(pdev, PCI_CAP_ID_MSI);
	if (!cap) {
		outcome("msi modes", false, "NO MSI DEVICE");
		return;
	}
	u16 ctl, d0;
	u32 a0;
	pci_read_config_word(pdev, cap + PCI_MSI_FLAGS, &ctl);
	bool is64 = ctl & PCI_MSI_FLAGS_64BIT;
	int doff = cap + (is64 ? PCI_MSI_DATA_64 : PCI_MSI_DATA_32);
	pci_read_config_dword(pdev, cap + PCI_MSI_ADDRESS_LO, &a0);
	pci_read_config_word(pdev, doff, &d0);
	for (int i = 0; i <= ARRAY_SIZE(addr); i++) {
		bool restore = i == ARRAY_SIZE(addr);
		u32 a = restore ? a0 : addr[i], ra;
		u16 d = restore ? d0 : data[i], rd;
		pci_write_config_word(pdev, cap + PCI_MSI_FLAGS, ctl & ~PCI_MSI_FLAGS_ENABLE);
		pci_write_config_dword(pdev, cap + PCI_MSI_ADDRESS_LO, a);
		pci_write_config_word(pdev, doff, d);
		pci_write_config_word(pdev, cap + PCI_MSI_FLAGS, restore ? ctl : ctl | PCI_MSI_FLAGS_ENABLE);
		pci_read_config_dword(pdev, cap + PCI_MSI_ADDRESS_LO, &ra);
		pci_read_config_word(pdev, doff, &rd);
		same += !restore && ra == a && rd == d;
	}
	pr_info("hvattack: msi modes dev=%s readback=%d/%d -> %s\n", pci_name(pdev), same, (int)ARRAY_SIZE(addr),
		same == ARRAY_SIZE(addr) ? "written" : "NOT AS WRITTEN");
	if (same != ARRAY_SIZE(addr))
		failures++;
	pci_dev_put(pdev);
}


/* ---- MSI-X (issue 33) ----
 * PCI 3.0, "MSI-X Capability and Table Structure": message control at +2
 * (10:0 table size - 1, 14 function mask, 15 enable), table offset/BIR at
 * +4, PBA offset/BIR at +8; entries of 16 bytes: address, upper address,
 * data, vector control (bit 0 the mask). The table lives in a memory BAR,
 * which the guest may move: the attack moves it where the hypervisor must
 * not read or write for it. */
struct msix_dev {
	struct pci_dev *pdev;
	int cap, bar_off, nent;
	u16 ctl;
	u32 table, pba, bar0;                /* table and PBA offset/BIR dwords; the BAR as found */
	u32 ent[2048][4];                    /* the driver's entries as the guest reads them */
};
static struct msix_dev mx;

/* The first function whose MSI-X is enabled (the patched Bochs's xHCI
 * under xhci-pci), its table read through the BAR as it is now. */
static bool msix_find(void)
{
	struct pci_dev *pdev = NULL;
	while ((pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev))) {
		int cap = pci_find_capability(pdev, PCI_CAP_ID_MSIX);
		u16 ctl;
		if (!cap)
			continue;
		pci_read_config_word(pdev, cap + PCI_MSIX_FLAGS, &ctl);
		if (!(ctl & PCI_MSIX_FLAGS_ENABLE))
			continue;
		mx.pdev = pdev;
		mx.cap = cap;
		mx.ctl = ctl;
		mx.nent = (ctl & PCI_MSIX_FLAGS_QSIZE) + 1;
		pci_read_config_dword(pdev, cap + PCI_MSIX_TABLE, &mx.table);
		pci_read_config_dword(pdev, cap + PCI_MSIX_PBA, &mx.pba);
		mx.bar_off = PCI_BASE_ADDRESS_0 + 4 * (mx.table & PCI_MSIX_TABLE_BIR);
		pci_read_config_dword(pdev, mx.bar_off, &mx.bar0);
		return true;
	}
	return false;
}

static u64 msix_table_pa(u32 bar)
{
	return (u64)(bar & PCI_BASE_ADDRESS_MEM_MASK) + (mx.table & PCI_MSIX_TABLE_OFFSET);
}

/* The table as the guest reads it now, into 'ent', and said line by line
 * when 'say' (msix_show: the runner compares it with Bochs's log). */
static int msix_read_table(u32 (*ent)[4], bool say)
{
	u8 __iomem *t = ioremap(msix_table_pa(mx.bar0), mx.nent * PCI_MSIX_ENTRY_SIZE);
	if (!t)
		return -ENOMEM;
	for (int i = 0; i < mx.nent; i++) {
		for (int r = 0; r < 4; r++)
			ent[i][r] = readl(t + i * PCI_MSIX_ENTRY_SIZE + 4 * r);
		if (say)
			pr_info("hvattack: msix entry=%d addr=0x%08x%08x data=0x%08x ctrl=0x%x\n", i, ent[i][1], ent[i][0],
				ent[i][2], ent[i][3]);
	}
	iounmap(t);
	return 0;
}

static void msix_say_dev(void)
{
	pr_info("hvattack: msix dev=%s cap=0x%x control=0x%04x entries=%d table=0x%08x pba=0x%08x bar%d=0x%08x\n",
		pci_name(mx.pdev), mx.cap, mx.ctl, mx.nent, mx.table, mx.pba, (mx.bar_off - PCI_BASE_ADDRESS_0) / 4, mx.bar0);
}

static void show_msix(void)
{
	if (!msix_find()) {
		outcome("msix show", false, "NO ENABLED MSI-X");
		return;
	}
	msix_say_dev();
	if (msix_read_table(mx.ent, true))
		outcome("msix show", false, "TABLE NOT MAPPABLE");
	pci_dev_put(mx.pdev);
}

/* Entry e masked or unmasked behind the driver's back (msix_mask=,
 * msix_unmask=: /init masks the driver's entry 0, makes the device raise an
 * event, then unmasks it), with the PBA's first dword before and after: the
 * pending bit the device set while masked, cleared when it sent the
 * message on the unmask (PCI 3.0). */
static void msix_set_mask(int e, bool mask)
{
	u32 pba_bar = 0, p0 = 0, p1 = 0, c;
	if (!msix_find() || e < 0 || e >= mx.nent) {
		outcome(mask ? "msix mask" : "msix unmask", false, "NO SUCH ENABLED MSI-X ENTRY");
		return;
	}
	pci_read_config_dword(mx.pdev, PCI_BASE_ADDRESS_0 + 4 * (mx.pba & PCI_MSIX_PBA_BIR), &pba_bar);
	u8 __iomem *t = ioremap(msix_table_pa(mx.bar0), mx.nent * PCI_MSIX_ENTRY_SIZE);
	u8 __iomem *pba = ioremap((u64)(pba_bar & PCI_BASE_ADDRESS_MEM_MASK) + (mx.pba & PCI_MSIX_PBA_OFFSET), 4);
	if (t && pba) {
		p0 = readl(pba);
		c = readl(t + e * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL);
		c = mask ? c | PCI_MSIX_ENTRY_CTRL_MASKBIT : c & ~PCI_MSIX_ENTRY_CTRL_MASKBIT;
		writel(c, t + e * PCI_MSIX_ENTRY_SIZE + PCI_MSIX_ENTRY_VECTOR_CTRL);
		p1 = readl(pba);
		pr_info("hvattack: msix %s entry=%d pba=0x%x -> 0x%x\n", mask ? "mask" : "unmask", e, p0, p1);
	} else {
		outcome(mask ? "msix mask" : "msix unmask", false, "TABLE OR PBA NOT MAPPABLE");
	}
	if (t)
		iounmap(t);
	if (pba)
		iounmap(pba);
	pci_dev_put(mx.pdev);
}

/* A 32-bit read that survives a fault: 0, or the trap number. */
static long read32_trap(const void __iomem *p, u32 *v)
{
	long t = TRAPNR_NONE;
	u32 val = ~0u;
	asm volatile("1: movl (%[p]), %k[v]\n2:\n" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT)
		     : "+a"(t), [v] "+r"(val) : [p] "r"(p) : "memory");
	*v = val;
	return t == TRAPNR_NONE ? 0 : t;
}

static void msix_move(u32 bar)
{
	pci_write_config_dword(mx.pdev, mx.bar_off, bar);
}

/* The hypervisor's canary (lib/canary.c): dword i of its page. */
static u32 canary_pattern(u32 i)
{
	return 0x9e3779b9u * (i + 1) ^ 0x43414e59u;
}

/* Entry 'e' rewritten while unmasked, never masked in between: data first
 * (SMI, INIT, ExtINT, vector 5, vector 0xf1, then the driver's), then the
 * address (a destination without a vCPU, the remappable format, fixed to
 * every CPU, then with an NMI, an address that is no MSI's), then the
 * driver's message back. Each forbidden one must be refused on the device
 * (the runner checks each reason counted: smi init extint vector_below_16
 * vector_of_hypervisor no_vcpu ext_dest_or_remappable fixed_multicast
 * nmi_not_one_vcpu once, not_an_msi_address twice). */
static void msix_rewrite(u8 __iomem *t, int e)
{
	u8 __iomem *a = t + e * PCI_MSIX_ENTRY_SIZE, *d = a + PCI_MSIX_ENTRY_DATA;
	const u32 a0 = mx.ent[e][0], d0 = mx.ent[e][2];
	static const struct { bool addr; u32 v; } w[] = {
		{ false, 2u << 8 | 0x40 }, { false, 5u << 8 }, { false, 7u << 8 }, { false, 0x05 }, { false, 0xf1 },
		{ false, 0 },                                   /* the driver's data */
		{ true, 0xfee07000 }, { true, 0xfee00010 }, { true, 0xfeeff000 },
		{ false, 4u << 8 }, { true, 0xfed00000 },
		{ false, 0 }, { true, 0 },                      /* the driver's data, then address */
	};
	int same = 0;
	for (int i = 0; i < ARRAY_SIZE(w); i++) {
		u32 v = w[i].v ? w[i].v : w[i].addr ? a0 : d0;
		writel(v, w[i].addr ? a : d);
		same += readl(w[i].addr ? a : d) == v;
	}
	u32 ctrl = readl(a + PCI_MSIX_ENTRY_VECTOR_CTRL);
	pr_info("hvattack: msix rewrite entry=%d unmasked writes=%d readback=%d/%d ctrl=0x%x -> %s\n", e,
		(int)ARRAY_SIZE(w), same, (int)ARRAY_SIZE(w), ctrl,
		same == ARRAY_SIZE(w) && !(ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT) ? "written" : "NOT AS WRITTEN");
	if (same != ARRAY_SIZE(w) || (ctrl & PCI_MSIX_ENTRY_CTRL_MASKBIT))
		failures++;
}

/* (a) The table onto the hypervisor's canary page: the rest of that page
 * read (the canary's pattern there is hypervisor memory read for the
 * guest) and written. */
static void msix_on_canary(void)
{
	u32 v, pat = 0, ones = 0, other = 0, faults = 0, w = 0;
	char what[160];
	pr_info("hvattack: msix table onto hv page 0x%lx (canary)\n", canary);
	if (!canary || (canary & ~PAGE_MASK)) {
		outcome("msix table on the canary", false, "NO CANARY ADDRESS (hv.canary=)");
		return;
	}
	msix_move((u32)canary | (mx.bar0 & ~PCI_BASE_ADDRESS_MEM_MASK));
	u8 __iomem *p = ioremap(canary, PAGE_SIZE);
	if (!p) {
		msix_move(mx.bar0);
		outcome("msix table on the canary", false, "NOT MAPPABLE");
		return;
	}
	for (u32 off = mx.nent * PCI_MSIX_ENTRY_SIZE; off < PAGE_SIZE; off += 4) {
		if (read32_trap(p + off, &v)) {
			faults++;
			continue;
		}
		if (v == canary_pattern(off / 4))
			pat++;
		else if (v == ~0u)
			ones++;
		else
			other++;
	}
	if (!read32_trap(p + 0x800, &v)) {
		writel(0x48564154, p + 0x800);           /* "HVAT" */
		read32_trap(p + 0x800, &w);
	}
	iounmap(p);
	msix_move(mx.bar0);
	snprintf(what, sizeof(what), "msix table on hv page 0x%lx (canary): read pattern=%u ones=%u other=%u faults=%u wrote=0x%x",
		 canary, pat, ones, other, faults, w);
	outcome(what, pat == 0, pat ? "READ HYPERVISOR MEMORY" : "not readable");
}

/* (b) The table onto a register page the hypervisor owns or the
 * platform's: the LAPIC's (x2APIC mode: no xAPIC page decoded), the
 * HPET's (Bochs has no VT-d unit: the HPET is the register page of that
 * kind here), the IOAPIC's (last: Bochs's IOAPIC model stops the emulator
 * at a write it does not decode, which only a hypervisor writing there for
 * the guest makes). The HPET's general configuration must not change. */
static void msix_on_register_page(const char *name, u32 pa)
{
	u8 __iomem *hpet = ioremap(0xfed00000, 0x400);
	u32 v0 = 0, v1 = 0, cfg0 = 0, cfg1 = 0;
	char what[128];
	/* (32-bit reads: a page the MSI trap keeps emulates no wider ones) */
	if (hpet)
		read32_trap(hpet + 0x10, &cfg0);
	pr_info("hvattack: msix table onto %s 0x%x\n", name, pa);
	msix_move(pa);
	u8 __iomem *p = ioremap(pa, PAGE_SIZE);
	if (p) {
		read32_trap(p + PCI_MSIX_ENTRY_VECTOR_CTRL, &v0);
		read32_trap(p + 0x800, &v1);
		iounmap(p);
	}
	msix_move(mx.bar0);
	if (hpet)
		read32_trap(hpet + 0x10, &cfg1);
	snprintf(what, sizeof(what), "msix table on %s 0x%x: read ctrl0=0x%x +0x800=0x%x hpet_cfg=0x%x->0x%x",
		 name, pa, v0, v1, cfg0, cfg1);
	outcome(what, cfg0 == cfg1, cfg0 == cfg1 ? "survived" : "HPET CONFIGURATION CHANGED");
	if (hpet && cfg0 != cfg1)
		writel(cfg0, hpet + 0x10);
	if (hpet)
		iounmap(hpet);
}

/* (c) The table through msix_pages distinct pages of the PCI hole (1 MiB
 * above its BAR's 1 MiB, where nothing decodes), each touched, then back. */
static void msix_through_pages(void)
{
	u32 base = (mx.bar0 & PCI_BASE_ADDRESS_MEM_MASK & ~0xfffffu) + 0x100000, v = 0;
	int touched = 0;
	for (int i = 0; i < msix_pages; i++) {
		u32 pa = base + i * PAGE_SIZE;
		msix_move(pa | (mx.bar0 & ~PCI_BASE_ADDRESS_MEM_MASK));
		u8 __iomem *p = ioremap(msix_table_pa(pa), PCI_MSIX_ENTRY_SIZE);
		if (p) {
			touched += !read32_trap(p + PCI_MSIX_ENTRY_VECTOR_CTRL, &v);
			iounmap(p);
		}
		pr_info("hvattack: msix page %d/%d bar=0x%x ctrl0=0x%x\n", i + 1, msix_pages, pa, v);
	}
	msix_move(mx.bar0);
	pr_info("hvattack: msix pages=%d [0x%x-0x%lx] touched=%d -> survived\n", msix_pages, base,
		base + msix_pages * PAGE_SIZE - 1, touched);
}

static void attack_msix(void)
{
	static u32 now[2048][4];
	u16 ctl;
	int same = 0, e = 0;
	if (!msix_find()) {
		outcome("msix", false, "NO ENABLED MSI-X");
		return;
	}
	msix_say_dev();
	if (mx.nent > 2048 || msix_read_table(mx.ent, true)) {
		outcome("msix", false, "TABLE NOT MAPPABLE");
		goto out;
	}
	/* The pool: a guest cannot grow a table (the size is read-only). */
	pci_write_config_word(mx.pdev, mx.cap + PCI_MSIX_FLAGS, mx.ctl | PCI_MSIX_FLAGS_QSIZE);
	pci_read_config_word(mx.pdev, mx.cap + PCI_MSIX_FLAGS, &ctl);
	pci_write_config_word(mx.pdev, mx.cap + PCI_MSIX_FLAGS, mx.ctl);
	pr_info("hvattack: msix pool: table size written 2048, reads %d -> %s\n", (ctl & PCI_MSIX_FLAGS_QSIZE) + 1,
		(ctl & PCI_MSIX_FLAGS_QSIZE) + 1 == mx.nent ? "read-only: the pool is what the devices' tables took at boot, not fillable from a guest"
							     : "TABLE SIZE CHANGED");
	if ((ctl & PCI_MSIX_FLAGS_QSIZE) + 1 != mx.nent)
		failures++;
	/* The last unmasked entry of the driver's (Linux's xhci sends on the first only). */
	for (int i = 0; i < mx.nent; i++)
		if (!(mx.ent[i][3] & PCI_MSIX_ENTRY_CTRL_MASKBIT))
			e = i;
	u8 __iomem *t = ioremap(msix_table_pa(mx.bar0), mx.nent * PCI_MSIX_ENTRY_SIZE);
	if (!t) {
		outcome("msix", false, "TABLE NOT MAPPABLE");
		goto out;
	}
	msix_rewrite(t, e);
	msix_on_canary();
	msix_on_register_page("lapic", 0xfee00000);
	msix_on_register_page("hpet", 0xfed00000);
	msix_through_pages();
	msix_on_register_page("ioapic", 0xfec00000);
	/* Restored: the BAR (above, each time), then every entry as the
	 * driver had it, masked ones masked. */
	for (int i = 0; i < mx.nent; i++)
		for (int r = 0; r < 4; r++)
			writel(mx.ent[i][r], t + i * PCI_MSIX_ENTRY_SIZE + 4 * r);
	iounmap(t);
	msix_read_table(now, false);
	for (int i = 0; i < mx.nent; i++)
		same += !memcmp(now[i], mx.ent[i], sizeof(now[i]));
	pci_read_config_word(mx.pdev, mx.cap + PCI_MSIX_FLAGS, &ctl);
	pr_info("hvattack: msix restored bar=0x%08x control=0x%04x entries=%d/%d as the driver's -> %s\n", mx.bar0, ctl, same,
		mx.nent, same == mx.nent && ctl == mx.ctl ? "restored" : "NOT RESTORED");
	if (same != mx.nent || ctl != mx.ctl)
		failures++;
out:
	pci_dev_put(mx.pdev);
}

/* The IOREGSEL hammer (hammer_ms=): the select register is shared by every
 * CPU (one per IOAPIC); a hypervisor that peeks at the live IOAPIC for its
 * own needs (the console's route) would race with it. One CPU selects every
 * register in turn and reads IOWIN, never writing an entry; CPU 0 prints
 * meanwhile; after, every entry must read as before. */
static atomic_t hammer_stop = ATOMIC_INIT(0);
static unsigned long hammer_selects;
static DECLARE_COMPLETION(hammer_done);

static int hammer_fn(void *arg)
{
	u8 __iomem *io = arg;
	unsigned long n = 0;
	while (!atomic_read(&hammer_stop)) {
		writel((u32)(n & 0x3f), io);
		(void)readl(io + 0x10);
		n++;
	}
	hammer_selects = n;
	complete(&hammer_done);
	return 0;
}

static void attack_ioregsel_hammer(void)
{
	u8 __iomem *io = ioremap(0xfec00000, 0x20);
	u32 before[48], after[48];
	int cpu = num_online_cpus() - 1, same = 0, lines = 0;
	struct task_struct *t;
	if (!io || cpu < 1) {
		outcome("ioregsel hammer", false, !io ? "NO IOAPIC MAPPING" : "ONE CPU ONLY");
		return;
	}
	for (int i = 0; i < 48; i++)
		before[i] = ioapic_rd(io, 0x10 + i);
	t = kthread_create(hammer_fn, io, "hvhammer");
	if (IS_ERR(t)) {
		outcome("ioregsel hammer", false, "NO THREAD");
		iounmap(io);
		return;
	}
	kthread_bind(t, cpu);
	wake_up_process(t);
	for (unsigned long end = jiffies + msecs_to_jiffies(hammer_ms); time_before(jiffies, end); lines++) {
		pr_info("hvattack: hammer line %d 0123456789abcdefghijklmnopqrstuvwxyz end\n", lines);
		msleep(20);
	}
	atomic_set(&hammer_stop, 1);
	wait_for_completion(&hammer_done);
	for (int i = 0; i < 48; i++) {
		after[i] = ioapic_rd(io, 0x10 + i);
		same += after[i] == before[i];
	}
	iounmap(io);
	pr_info("hvattack: ioregsel hammer cpu=%d selects=%lu lines=%d rtes=%s -> %s\n", cpu, hammer_selects, lines,
		same == 48 ? "same" : "CHANGED", same == 48 && hammer_selects > 0 ? "survived" : "NOT AS BEFORE");
	if (same != 48 || !hammer_selects)
		failures++;
}

/* PM1a_CNT writes with SLP_EN and every SLP_TYP but S5's: each would put a
 * machine to sleep and restart it outside VMX; the hypervisor drops them. */
static void attack_sleep(void)
{
	struct acpi_table_header *h;
	struct acpi_table_fadt *f;
	u8 s5a = 0xff, s5b = 0xff;
	u32 port;

	if (ACPI_FAILURE(acpi_get_table(ACPI_SIG_FADT, 0, &h))) {
		outcome("sleep", false, "NO FADT");
		return;
	}
	f = (struct acpi_table_fadt *)h;
	port = f->pm1a_control_block;
	if (!port && f->xpm1a_control_block.space_id == ACPI_ADR_SPACE_SYSTEM_IO)
		port = (u32)f->xpm1a_control_block.address;
	acpi_put_table(h);
	if (!port || port > 0xffff) {
		outcome("sleep", false, "NO PM1a_CNT PORT");
		return;
	}
	if (ACPI_FAILURE(acpi_get_sleep_type_data(ACPI_STATE_S5, &s5a, &s5b))) {
		outcome("sleep", false, "NO \\_S5");
		return;
	}
	for (u32 typ = 0; typ < 8; typ++) {
		u16 cur;
		char what[48];
		if (typ == s5a)
			continue;
		cur = inw(port);
		outw((cur & ~(7u << 10)) | (typ << 10) | (1u << 13), port);
		mdelay(5);
		snprintf(what, sizeof(what), "sleep typ=%u pm1a=0x%x", typ, port);
		outcome(what, true, "ignored");   /* still here to say it */
	}
	/* The same through string I/O (REP OUTSW, then INSW): the hypervisor
	 * emulates each element through the same policy. */
	{
		u16 words[4], got[2] = { 0xdead, 0xdead }, cur = inw(port);
		unsigned long cnt = 4, src = (unsigned long)words, dst = (unsigned long)got;
		for (int i = 0; i < 4; i++)
			words[i] = (cur & ~(7u << 10)) | ((u16)(i + 1 == s5a ? 6 : i + 1) << 10) | (1u << 13);
		asm volatile("rep outsw" : "+S"(src), "+c"(cnt) : "d"((u16)port) : "memory");
		cnt = 2;
		asm volatile("rep insw" : "+D"(dst), "+c"(cnt) : "d"((u16)port) : "memory");
		pr_info("hvattack: string io rep outsw x4 (sleep) and rep insw x2 on pm1a=0x%x -> survived (read 0x%x 0x%x, pm1a 0x%x)\n",
			port, got[0], got[1], inw(port));
		if (got[0] == 0xdead || got[1] == 0xdead)
			failures++;
	}
}

/* Every page of every e820-reserved range: read all of it; a page of
 * all-ones is "absent" (what the hypervisor's sink returns), others hold
 * data, and their runs are listed. Absent pages are then written and read
 * back (the write must land in a harmless place), and restored to ones. */
#define MEM_MAX_RANGE (256ul << 20)
static void mem_scan(resource_size_t a, resource_size_t b, u64 *writes, bool *readback_ok)
{
	u64 npages = (b - a + 1) >> PAGE_SHIFT, absent = 0, data = 0, run_start = 0, run_len = 0;
	u8 *m = memremap(a, npages << PAGE_SHIFT, MEMREMAP_WB);
	if (!m) {
		pr_info("hvattack: mem [%llx-%llx] not mappable\n", (u64)a, (u64)b);
		return;
	}
	for (u64 i = 0; i <= npages; i++) {
		bool ones = false;
		if (i < npages) {
			const u64 *p = (const u64 *)(m + (i << PAGE_SHIFT));
			u64 and = ~0ull;
			for (int k = 0; k < PAGE_SIZE / 8; k++)
				and &= READ_ONCE(p[k]);
			ones = and == ~0ull;
			if (ones)
				absent++;
			else
				data++;
		}
		if (i < npages && !ones) {
			if (!run_len)
				run_start = i;
			run_len++;
		} else if (run_len) {
			pr_info("hvattack: mem data [%llx-%llx]\n", (u64)a + (run_start << PAGE_SHIFT),
				(u64)a + ((run_start + run_len) << PAGE_SHIFT) - 1);
			run_len = 0;
		}
		cond_resched();
	}
	pr_info("hvattack: mem [%llx-%llx] pages=%llu absent=%llu data=%llu\n", (u64)a, (u64)b, npages, absent, data);
	for (u64 i = 0; i < npages; i++) {
		u64 *p = (u64 *)(m + (i << PAGE_SHIFT));
		if (READ_ONCE(p[0]) != ~0ull || READ_ONCE(p[PAGE_SIZE / 8 - 1]) != ~0ull)
			continue;
		WRITE_ONCE(p[0], 0x5a5a5a5a5a5a5a5aull);
		if (READ_ONCE(p[0]) != 0x5a5a5a5a5a5a5a5aull)
			*readback_ok = false;      /* dropped is fine too; say so */
		WRITE_ONCE(p[0], ~0ull);
		(*writes)++;
	}
	memunmap(m);
}

static void attack_memory(void)
{
	struct resource *r;
	u64 writes = 0;
	bool readback_ok = true;
	for (r = iomem_resource.child; r; r = r->sibling) {
		if (!r->name || strcmp(r->name, "Reserved"))
			continue;
		if (r->end - r->start + 1 > MEM_MAX_RANGE || (r->start & ~PAGE_MASK)) {
			pr_info("hvattack: mem [%llx-%llx] skipped (size or alignment)\n", (u64)r->start, (u64)r->end);
			continue;
		}
		mem_scan(r->start, r->end, &writes, &readback_ok);
	}
	pr_info("hvattack: mem writes=%llu readback=%s\n", writes, readback_ok ? "ok" : "dropped");
}

/* A read far above RAM and above the hypervisor's identity map (512 GiB):
 * where a 64-bit BAR would live. It must complete (the hypervisor maps the
 * GiB on demand), whatever it reads. */
static void attack_high_mmio(void)
{
	const u64 pa = 0x9000000000ull;          /* 576 GiB */
	void __iomem *p;
	u32 v;
	if (boot_cpu_data.x86_phys_bits < 40) {
		pr_info("hvattack: high mmio 0x%llx -> beyond the guest's %u physical-address bits\n", pa,
			boot_cpu_data.x86_phys_bits);
		return;
	}
	p = ioremap(pa, PAGE_SIZE);
	if (!p) {
		outcome("high mmio", false, "NOT MAPPABLE");
		return;
	}
	v = readl(p);
	writel(v, p);
	iounmap(p);
	pr_info("hvattack: high mmio 0x%llx read 0x%x -> completed\n", pa, v);
}

/* The console UART reprogrammed behind the 8250 driver's back (interrupts
 * off, a 1-CPU guest: nothing else touches it meanwhile): divisor 0x60
 * (9600 baud), LCR 7E1, MCR loopback; a marker sent in loopback must come
 * back on RBR and must not reach the console; then every register restored.
 * Under the hypervisor these land in the virtual UART only: the console
 * goes on at the hypervisor's 115200 8N1, whole. */
static void attack_uart(void)
{
	static const char mark[] = "UARTLOOPMARK";
	unsigned long flags;
	u8 lcr, mcr, ier, dll, dlm, got[sizeof(mark)];
	int looped = 0, n = (int)sizeof(mark) - 1;

	local_irq_save(flags);
	lcr = inb(uart + 3);
	mcr = inb(uart + 4);
	ier = inb(uart + 1);
	outb(0, uart + 1);
	outb(lcr | 0x80, uart + 3);
	dll = inb(uart);
	dlm = inb(uart + 1);
	outb(0x60, uart);
	outb(0x00, uart + 1);
	outb(0x1a, uart + 3);                 /* 7 data bits, even parity, DLAB off */
	outb(0x10 | (mcr & 0x0f), uart + 4);  /* loopback */
	for (int i = 0; i < n; i++) {
		outb(mark[i], uart);
		for (int t = 0; t < 100000 && !(inb(uart + 5) & 1); t++)
			cpu_relax();
		got[i] = (inb(uart + 5) & 1) ? inb(uart) : 0;
		if (got[i] == (u8)mark[i])
			looped++;
	}
	outb(mcr, uart + 4);
	outb(lcr | 0x80, uart + 3);
	outb(dll, uart);
	outb(dlm, uart + 1);
	outb(lcr, uart + 3);
	outb(ier, uart + 1);
	local_irq_restore(flags);
	pr_info("hvattack: uart 0x%x divisor=0x60 lcr=0x1a mcr=loop looped=%d/%d -> %s (restored divisor=0x%x lcr=0x%x mcr=0x%x)\n",
		uart, looped, n, looped == n ? "kept" : "NOT LOOPED", dll | dlm << 8, lcr, mcr);
	if (looped != n)
		failures++;
}

/* xHCI 1.2, "Host Controller Runtime Registers": interrupter 0 at RTSOFF
 * + 0x20: ERSTSZ +0x08, ERSTBA +0x10 (64-bit); "Event Ring Segment Table
 * Entry": base (64-byte aligned) and size in TRBs (16 to 4096);
 * "Port Status and Control Register" at the operational base + 0x400 +
 * 0x10 * (port - 1): CCS bit 0, PR bit 4, PP bit 9, the change bits
 * (17-23), and the bits a write
 * must give back as read so as to change nothing else (RO and RWS: CCS,
 * OCA, PLS, PP, speed, PIC, CAS, WCE/WDE/WOE, DR), the change bits (RW1C)
 * written 0. */
#define XHCI_PORTSC_KEEP (BIT(0) | BIT(3) | GENMASK(8, 5) | BIT(9) | GENMASK(13, 10) | GENMASK(15, 14) | \
			  BIT(24) | GENMASK(27, 25) | BIT(30))
#define XHCI_PORTSC_PR     BIT(4)
#define XHCI_PORTSC_CHANGE (BIT(17) | BIT(18) | GENMASK(22, 20))   /* CSC, PEC, OCC, PRC, PLC: write 1 to clear
									* (WRC, CEC: USB3 ports only) */

static void dma_events_to(u8 __iomem *bar, u64 *seg, u64 target, const char *what, int resets)
{
	u8 __iomem *op = bar + readb(bar);
	u8 __iomem *ir0 = bar + (readl(bar + 0x18) & ~0x1fu) + 0x20;
	unsigned int ports = readl(bar + 0x04) >> 24, sent = 0;
	u64 seg_pa = virt_to_phys(seg);
	seg[0] = target;
	seg[1] = 16;
	wmb();
	writel(1, ir0 + 0x08);
	writel(upper_32_bits(seg_pa), ir0 + 0x14);
	writel(lower_32_bits(seg_pa), ir0 + 0x10);   /* the controller reads the table now */
	for (int r = 0; r < resets; r++) {
		for (unsigned int p = 0; p < ports; p++) {
			u8 __iomem *sc = op + 0x400 + 0x10 * p;
			u32 v = readl(sc);
			if (!(v & BIT(0)))
				continue;
			/* The change bits cleared first: a controller writes a
			 * port status change event only when a change bit
			 * rises with none left set. */
			writel((v & XHCI_PORTSC_KEEP) | (v & XHCI_PORTSC_CHANGE), sc);
			msleep(20);                   /* the controller sees them clear */
			writel((v & XHCI_PORTSC_KEEP) | XHCI_PORTSC_PR, sc);
			sent++;
			break;
		}
		msleep(200);                          /* the reset completes; its event is written */
	}
	pr_info("hvattack: dma events to 0x%llx (%s): port resets=%u -> %s\n", target, what, sent,
		sent == resets ? "sent" : "NO CONNECTED PORT");
	if (sent != resets)
		failures++;
}

/* UHCI 1.1 ("Universal Host Controller Interface Design Guide"): I/O
 * registers at BAR 4, USBCMD 0x00 (RS bit 0, HCRESET bit 1, CF bit 6,
 * MAXP bit 7), USBSTS 0x02 (HCHalted bit 5), USBINTR 0x04, FRNUM 0x06,
 * FRBASEADD 0x08, PORTSC1 0x10 (CCS 0, CSC 1 (W1C), PE 2, PEC 3 (W1C),
 * LSDA 8, PR 9); a frame list of 1024 pointers (T bit 0, Q bit 1); a queue
 * head (link, element); a transfer descriptor: link (T 0, Q 1, Vf 2),
 * control and status (Active 23, IOC 24, LS 26, C_ERR 28:27), token
 * (MaxLen 31:21 as length - 1, D 19, EndPt 18:15, address 14:8, PID 7:0:
 * SETUP 0x2d, IN 0x69), buffer pointer. */
#define UHCI_TD_ACTIVE BIT(23)

/* The UHCI made to write interrupt requests naming another device's IRTE
 * handles (issue 44 item 7: the xHCI's own handle forged from another
 * requester): for each handle a GET_DESCRIPTOR control transfer to the
 * device on port 1 (its default address after a port reset), its 4-byte
 * data stage written by the controller to 0xfee00000 | handle 14:0 << 5 |
 * 1 << 4 (remappable) | handle 15 << 2, SHV clear: a DWORD write to the
 * interrupt range, so an interrupt request from the UHCI's source ID. The
 * IRTE's source-ID check must refuse every one naming the xHCI's entries.
 * The controller's driver must be unbound (the runner binds it again). */
static void attack_uhci_forge(void)
{
	struct pci_dev *d = pci_get_class(PCI_CLASS_SERIAL_USB_UHCI, NULL);
	u32 *fl = (u32 *)get_zeroed_page(GFP_KERNEL | GFP_DMA32);
	u32 *td = (u32 *)get_zeroed_page(GFP_KERNEL | GFP_DMA32);
	int n = uhci_forge_n < 1 ? 1 : uhci_forge_n > 16 ? 16 : uhci_forge_n, done = 0;
	unsigned long io;
	if (!d || !fl || !td || pci_enable_device(d)) {
		outcome("uhci forge", false, !d ? "NO UHCI" : "NO MEMORY OR DEVICE");
		goto out;
	}
	pci_set_master(d);
	io = pci_resource_start(d, 4);
	outw(BIT(1), io + 0x00);                     /* HCRESET */
	msleep(20);
	outw(0, io + 0x04);                          /* no interrupts */
	outw(BIT(9), io + 0x10);                     /* port 1: reset */
	msleep(60);
	outw(0, io + 0x10);
	udelay(50);
	outw(BIT(2) | BIT(1) | BIT(3), io + 0x10);   /* enabled, changes cleared */
	msleep(20);
	{
		u16 sc = inw(io + 0x10);
		u32 ls = (sc & BIT(8)) ? BIT(26) : 0;
		/* The page: the queue head at 0, the setup packet at 0x20, then
		 * the descriptors from 0x40, 16 bytes each, depth first. */
		u32 pa = (u32)virt_to_phys(td);
		u8 *setup = (u8 *)td + 0x20;
		static const u8 get_desc[8] = { 0x80, 6, 0x00, 0x01, 0, 0, 4, 0 };
		memcpy(setup, get_desc, 8);
		for (int i = 0; i < n; i++) {
			u32 *s0 = td + (0x40 + 32 * i) / 4, *s1 = s0 + 4;
			unsigned int h = (unsigned int)uhci_forge + i;
			u32 target = 0xfee00000u | (h & 0x7fff) << 5 | BIT(4) | ((h >> 15) & 1) << 2;
			bool last = i == n - 1;
			s0[0] = (pa + 0x40 + 32 * i + 16) | BIT(2);
			s0[1] = UHCI_TD_ACTIVE | ls | 3u << 27;
			s0[2] = 7u << 21 | 0x2d;             /* SETUP, 8 bytes, address 0, endpoint 0, DATA0 */
			s0[3] = pa + 0x20;
			s1[0] = last ? 1 : (pa + 0x40 + 32 * (i + 1)) | BIT(2);
			s1[1] = UHCI_TD_ACTIVE | ls | 3u << 27;
			s1[2] = 3u << 21 | BIT(19) | 0x69;   /* IN, 4 bytes, DATA1 */
			s1[3] = target;
		}
		td[0] = 1;                                /* the queue head: no next, its element the first TD */
		td[1] = pa + 0x40;
		for (int f = 0; f < 1024; f++)
			fl[f] = pa | BIT(1);
		wmb();
		outl((u32)virt_to_phys(fl), io + 0x08);
		outw(0, io + 0x06);
		outw(BIT(0) | BIT(6) | BIT(7), io + 0x00);   /* run */
		msleep(200);
		outw(0, io + 0x00);
		msleep(20);
		for (int i = 0; i < n; i++) {
			u32 st = td[(0x40 + 32 * i + 16) / 4 + 1];
			done += !(st & UHCI_TD_ACTIVE) && !(st & GENMASK(22, 17));
		}
		pr_info("hvattack: uhci forge handles %d-%d from %s: port 0x%x, %d of %d data stages written -> %s\n",
			uhci_forge, uhci_forge + n - 1, pci_name(d), sc, done, n, done == n ? "sent" : "NOT SENT");
		if (done != n)
			failures++;
	}
out:
	if (fl)
		free_page((unsigned long)fl);
	if (td)
		free_page((unsigned long)td);
	pci_dev_put(d);
}

static void attack_dma_events(void)
{
	struct pci_dev *x = pci_get_class(PCI_CLASS_SERIAL_USB_XHCI, NULL);
	u64 *seg = (u64 *)get_zeroed_page(GFP_KERNEL | GFP_DMA32);
	u8 __iomem *bar = x ? ioremap(pci_resource_start(x, 0), pci_resource_len(x, 0)) : NULL;
	if (!x || !seg || !bar || !canary || !dma_high) {
		outcome("dma events", false, !x ? "NO XHCI" : !canary || !dma_high ? "NO TARGET (canary=, dma_high=)" : "NO MEMORY");
		goto out;
	}
	/* First into a ring of the module's own (the page's second half),
	 * where the event can be seen: the controller writes events at all,
	 * and the port's change bits are in the state the attack needs. Up to
	 * three resets: the driver may have left a change bit pending. */
	volatile u32 *own = (volatile u32 *)seg + 512;
	int tries = 0;
	while (tries < 3 && ((own[3] >> 10) & 0x3f) != 34) {   /* TRB type 34: port status change event */
		dma_events_to(bar, seg, virt_to_phys(seg) + 2048, "own ring", 1);
		tries++;
	}
	pr_info("hvattack: dma events own ring: event type %u after %d port reset(s) -> %s\n", (own[3] >> 10) & 0x3f,
		tries, ((own[3] >> 10) & 0x3f) == 34 ? "written" : "NO EVENT");
	if (((own[3] >> 10) & 0x3f) != 34) {
		failures++;
		goto out;
	}
	dma_events_to(bar, seg, canary & PAGE_MASK, "canary", 1);
	dma_events_to(bar, seg, dma_high & ~0x3full, "above the guest's memory", 1);
	/* TRB 0 at 0x40 (its DWORDs at 0x48 and 0x4c: bit 4 clear,
	 * compatibility format), TRB 1 at 0x50 (0x58: bit 4 set, remappable,
	 * handle 2 with SHV, subhandle the event's low status bits, 0). */
	dma_events_to(bar, seg, 0xfee00040, "interrupt range", 2);
out:
	if (bar)
		iounmap(bar);
	if (seg)
		free_page((unsigned long)seg);
	pci_dev_put(x);
}

static int __init hvattack_init(void)
{
	if (!x2apic_enabled()) {
		pr_info("hvattack: needs x2APIC mode; done failures=1\n");
		return -ENODEV;
	}
	if (hammer_ms || msi_attack || msix_show || msix_attack || msix_mask >= 0 || msix_unmask >= 0 || dma_events ||
	    uhci_forge >= 0) {
		if (hammer_ms)
			attack_ioregsel_hammer();
		if (msi_attack)
			attack_msi_modes();
		if (msix_show)
			show_msix();
		if (msix_mask >= 0)
			msix_set_mask(msix_mask, true);
		if (msix_unmask >= 0)
			msix_set_mask(msix_unmask, false);
		if (msix_attack)
			attack_msix();
		if (dma_events)
			attack_dma_events();
		if (uhci_forge >= 0)
			attack_uhci_forge();
		pr_info("hvattack: done failures=%d\n", failures);
		return 0;
	}
	attack_vmx_msrs();
	attack_vmx_insns();
	attack_xsetbv();
	attack_apic_base();
	attack_trace_msrs();
	attack_tsc();
	attack_x2apic_reads();
	attack_self_ipi_illegal();
	attack_lvt_thermal();
	attack_cpuid_cr4();
	attack_fault_rf();
	attack_ioapic_nmi();
	attack_ioapic_modes();
	attack_init_sipi();
	attack_ipi_storm();
	attack_nmi();
	attack_sleep();
	attack_memory();
	attack_high_mmio();
	attack_uart();
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
