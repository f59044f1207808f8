/* hv_main: what both boot entries hand over to. Brings up the platform
 * (serial, memory, ACPI, TSC, CPUs), probes VMX on every CPU, chooses the
 * interrupt tiers and reports; then one call starts the guest
 * (vmx/setup.c), or, without VMX, hands the machine to it (guest/setup.c). */
#include "main.h"
#include "smp.h"
#include "aids.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/options.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/desc.h"
#include "../lib/trap.h"
#include "../lib/paging.h"
#include "../lib/acpi.h"
#include "../lib/acpi_print.h"
#include "../lib/srat.h"
#include "../lib/nodemem.h"
#include "../lib/tsc.h"
#include "../lib/cpusum.h"
#include "../lib/power.h"
#include "../lib/cpu.h"
#include "../lib/string.h"
#include "../apic/lapic.h"
#include "../vmx/caps.h"
#include "../vmx/tiers.h"
#include "../vmx/vmxon.h"
#include "../vmx/report.h"
#include "../vmx/setup.h"
#include "../vmx/virq.h"
#include "../vmx/vcpu_launch.h"
#include "../vmx/caps.h"
#include "../guest/setup.h"
#include "../iommu/iommu.h"
#include "../vmx/msi_trap.h"
#include "probe.h"

#define HV_HEAP_SIZE MIB(48)

static struct hv_options opts;
static struct acpi_info acpi;
static struct srat_info srat;
static struct vmx_caps caps;
static struct hv_tiers tiers;

/* panic() on one CPU stops the others with an NMI. */
static void nmi_other_cpus(void)
{
	lapic_send(0, APIC_DM_NMI | APIC_DEST_ALL_BUT_SELF);
}

/* acpi_parse's room: heap pages, or NULL when the heap has too few left. */
static void *acpi_heap_alloc(size_t bytes)
{
	uint64_t pages = ALIGN_UP(bytes ? bytes : 1, PAGE_SIZE) / PAGE_SIZE;
	return pages <= page_alloc_free() / PAGE_SIZE ? page_alloc(pages) : NULL;
}

/* Heap pages per CPU: the per-CPU area, its stack and VMXON region, and
 * (a vCPU's) what vcpu_create and the timer take; parked CPUs only the first three. */
#define CPU_HEAP_PAGES    (PERCPU_PAGES + CPU_STACK_PAGES + 1)
#define PER_CPU_PAGES     (CPU_HEAP_PAGES + VCPU_HEAP_PAGES)
/* Heap kept for everything else (page tables, EPT, IOMMU tables) before the
 * per-CPU structures get a pool of their own. */
#define HEAP_OTHER        MIB(16)

/* The arrays sized by MAX_CPUS and MAX_PARKED, in the image (static):
 * cpus[] and vcpus[] (lib/percpu.c, vmx/exit.c), raw_caps[] (vmx/vmxon.c),
 * the report's five (vmx/report.c), apic_ids[] (vmx/virq_ipi.c), ids[]
 * (guest/setup.c), parked[] (boot/smp.c). */
static uint64_t static_percpu_bytes(void)
{
	return (uint64_t)MAX_CPUS * (2 * sizeof(void *) + sizeof(struct vmx_raw_caps) +
				     2 * sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(bool) +
				     2 * sizeof(uint32_t)) + (uint64_t)MAX_PARKED * sizeof(void *);
}

/* The SRAT, when there is one: counted, room from the heap, parsed,
 * printed; then a pool of per-CPU memory in each node that has CPUs. The
 * CPUs left without one (no SRAT, a node without usable RAM) get a pool for
 * any CPU when the heap would be too small for them. */
static void numa_setup(struct boot_info *bi)
{
	char why[160];
	uint64_t per_cpu = PER_CPU_PAGES * PAGE_SIZE;
	if (acpi.srat) {
		const uint8_t *t = (const uint8_t *)(uintptr_t)acpi.srat;
		uint64_t avail = acpi.srat < acpi_readable_hi ? acpi_readable_hi - acpi.srat : 0;
		struct srat_counts c;
		void *room = NULL;
		if (!srat_count(t, avail, &c, why, sizeof why)) {
			if (!(room = acpi_heap_alloc(srat_bytes(&c))))
				snprintf(why, sizeof why, "SRAT: no room for %u CPUs and %u memory ranges", c.ncpus, c.nmem);
		}
		if (room) {
			srat_place(&srat, &c, room);
			if (!srat_parse(t, avail, &srat, why, sizeof why)) {
				srat_print(&srat);
				nodemem_srat = &srat;
				nodemem_init(&bi->mem, &srat, per_cpu);
			}
		}
		if (!nodemem_srat)
			pr_warn("numa: %s: per-CPU structures from the heap\n", why);
	}
	/* The CPUs without a node pool: from the heap, or a pool for any CPU. */
	uint64_t need = 0;
	for (uint32_t i = 0; i < acpi.ncpus; i++)
		need += nodemem_has_pool(nodemem_node_of(acpi.cpu[i].apic_id)) ? 0 : per_cpu;
	if (need + HEAP_OTHER > page_alloc_free() && !nodemem_add_any(&bi->mem, need, GIB(4)))
		pr_warn("mem: no room below 4 GiB for %llu KiB of per-CPU structures: the heap may run out\n",
			(unsigned long long)(need >> 10));
	this_cpu()->node = (int32_t)nodemem_node_of(this_cpu()->apic_id);
}

/* One line: what a CPU costs, what they cost in all, the heap. */
static void mem_print(uint64_t heap)
{
	uint64_t cpu_kib = PER_CPU_PAGES * 4, all = ((uint64_t)ncpus * PER_CPU_PAGES + (uint64_t)nparked * CPU_HEAP_PAGES) * 4;
	pr_info("mem: per CPU %llu KiB (percpu %llu, stack %u, VMXON 4, vCPU %llu, VMCS 4, PID 4, vAPIC 4, exit stack %u, MSR bitmap 4; parked CPUs %llu), "
		"%u CPUs + %u parked %llu KiB, heap %llu MiB (%llu KiB used), pools %llu KiB used so far, static per-CPU tables %llu KiB (MAX_CPUS %u, MAX_PARKED %u)\n",
		(unsigned long long)cpu_kib, (unsigned long long)PERCPU_PAGES * 4, CPU_STACK_PAGES * 4,
		(unsigned long long)VCPU_PAGES * 4, EXIT_STACK_PAGES * 4, (unsigned long long)CPU_HEAP_PAGES * 4, ncpus, nparked,
		(unsigned long long)all, (unsigned long long)(heap >> 20), (unsigned long long)(page_alloc_used() >> 10),
		(unsigned long long)(nodemem_pool_used() >> 10), (unsigned long long)(static_percpu_bytes() >> 10), MAX_CPUS,
		MAX_PARKED);
	nodemem_print();
}

static void claim_or_die(struct boot_info *bi, uint64_t base, uint64_t len, const char *what)
{
	if (!len)
		return;
	if (!memmap_claim(&bi->mem, base, len))
		panic("memmap: table full while claiming %s\n", what);
	pr_info("memmap: hypervisor owns [%016llx-%016llx] %s\n", (unsigned long long)base,
		(unsigned long long)(base + len - 1), what);
}

/* A usable 4 KiB page below 1 MiB (and above the real-mode IVT/BDA) for the AP trampoline. */
static paddr_t find_trampoline_page(const struct memmap *m)
{
	for (paddr_t pa = 0x8000; pa < 0x9f000; pa += PAGE_SIZE)
		if (memmap_type_at(m, pa) == MEM_USABLE && memmap_type_at(m, pa + PAGE_SIZE - 1) == MEM_USABLE)
			return pa;
	return 0;
}

static void cpu_vmx_smoke(void)
{
	struct percpu *c = this_cpu();
	c->vmxon_status = vmx_on(&caps, c->vmxon_region, c->vmxon_msg, sizeof c->vmxon_msg);
	if (!c->vmxon_status)
		vmx_off();
}

/* Each CPU's VMXON, said by the boot CPU once all are done: one line a CPU,
 * or one an outcome on a large machine (lib/cpusum.h). */
static void vmx_smoke_lines(void)
{
	static struct cpusum sum;
	cpusum_begin(&sum, "vmx: ", "cpu", ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		const struct percpu *c = cpus[i];
		cpusum_add(&sum, c->vmxon_status ? LOG_ERR : LOG_INFO, i, c->vmxon_status ? c->vmxon_msg : "VMXON ok, VMXOFF ok",
			   "cpu%u %s%s", c->index, c->vmxon_msg, c->vmxon_status ? "" : ", VMXOFF ok");
	}
	cpusum_end(&sum);
}

/* With no console=, the port the firmware's SPCR names (as Linux's earlycon
 * reads it), said on the old port and on the new one. */
static void console_follow_spcr(void)
{
	char was[80], now[80];
	uart_desc_str(serial_desc(), was, sizeof was);
	if (!acpi.spcr_ok) {
		pr_info("console: %s (%s)\n", was, opts.console_set ? "console=" : acpi.spcr ? "the SPCR's port not taken" : "no SPCR: COM1");
		return;
	}
	uart_desc_str(&acpi.spcr_uart, now, sizeof now);
	if (opts.console_set) {
		pr_info("console: %s (console=; the firmware's SPCR names %s)\n", was, now);
		return;
	}
	pr_info("console: moving to %s, the port the firmware's SPCR names\n", now);
	opts.console = acpi.spcr_uart;
	serial_flush();
	serial_init_desc(&opts.console);
	pr_info("console: %s, named by the firmware's SPCR (the boot's first lines went to %s)\n", now, was);
}

__noreturn void hv_main(struct boot_info *bi)
{
	char err[256];
	int bad_opts;
	uint32_t a, b, c, d;

	options_defaults(&opts);
	bad_opts = options_parse(bi->cmdline, &opts, err, sizeof err);
	serial_init_desc(&opts.console);
	log_level = opts.loglevel;
	cpusum_set_limit(opts.report_cpus);
	power_init(opts.exit_mode, NULL);
	pr_info("\nhv: thin hypervisor for Intel VT-x, loader=%s\n", bi->loader);
	pr_info("hv: command line \"%s\"\n", bi->cmdline);
	if (bad_opts)
		hv_fail(err);
	if (bi->boot_error[0])
		hv_fail(bi->boot_error);

	/* Memory: what the hypervisor owns never goes to the guest. Every
	 * phase says its name before it starts: a hang names its phase. */
	pr_info("hv: phase memory: the firmware's map (%u ranges), the image, the heap and the AP trampoline claimed\n",
		bi->mem.count);
	memmap_normalize(&bi->mem);
	claim_or_die(bi, bi->image_start, bi->image_end - bi->image_start, "image");
	if (!bi->heap_start) {
		bi->heap_start = memmap_find_free(&bi->mem, HV_HEAP_SIZE, GIB(4));
		if (!bi->heap_start)
			hv_fail("memmap: no room below 4 GiB for the hypervisor's heap");
		bi->heap_end = bi->heap_start + HV_HEAP_SIZE;
	}
	claim_or_die(bi, bi->heap_start, bi->heap_end - bi->heap_start, "heap");
	if (!bi->trampoline)
		bi->trampoline = find_trampoline_page(&bi->mem);
	if (bi->trampoline)
		claim_or_die(bi, bi->trampoline, PAGE_SIZE, "AP trampoline");
	else
		pr_err("smp: no free 4 KiB page of usable RAM in 0x8000-0x9efff for the AP trampoline: only the boot CPU will run\n");
	page_alloc_init(bi->heap_start, bi->heap_end - bi->heap_start);
	memmap_print(&bi->mem, "after the hypervisor's claims");
	if (bi->kernel.size)
		pr_info("boot: guest kernel at 0x%llx (%llu bytes), initrd at 0x%llx (%llu bytes), cmdline \"%s\"\n",
			(unsigned long long)bi->kernel.addr, (unsigned long long)bi->kernel.size,
			(unsigned long long)bi->initrd.addr, (unsigned long long)bi->initrd.size, bi->guest_cmdline);

	/* This CPU's descriptors and page tables. */
	pr_info("hv: phase cpu: descriptors, identity page tables, the boot CPU's LAPIC\n");
	idt_init();
	struct percpu *bsp = percpu_alloc(0, 0);
	ncpus = 1;
	percpu_load(bsp);
	uint64_t cr3 = paging_build_identity(memmap_end(&bi->mem));
	/* The identity map covers max(RAM, 4 GiB): ACPI pointers beyond are refused, not read. */
	acpi_readable_hi = ALIGN_UP(memmap_end(&bi->mem) < GIB(4) ? GIB(4) : memmap_end(&bi->mem), GIB(1));
	write_cr3(cr3);
	lapic_enable();
	host_irq_eoi = lapic_eoi;
	panic_stop_others = nmi_other_cpus;
	bsp->apic_id = lapic_id();
	bsp->state = CPU_ONLINE;
	pr_info("cpu: boot CPU apic_id=%u, %s mode\n", bsp->apic_id, lapic_x2apic ? "x2APIC" : "xAPIC");

	if (opts.probe)
		probe_begin();

	/* ACPI */
	pr_info("hv: phase acpi: %s 0x%llx\n", bi->rsdp ? "parsing from the loader's RSDP at" : "searching for the RSDP below",
		(unsigned long long)(bi->rsdp ? bi->rsdp : 0x100000));
	if (!bi->rsdp)
		bi->rsdp = acpi_find_rsdp_legacy();
	if (!bi->rsdp) {
		pr_err("acpi: no RSDP found; only the boot CPU runs\n");
	} else {
		pr_info("acpi: RSDP at 0x%llx\n", (unsigned long long)bi->rsdp);
		acpi_alloc = acpi_heap_alloc;
		if (acpi_parse(bi->rsdp, &acpi, err, sizeof err)) {
			pr_err("%s; only the boot CPU runs\n", err);
			memset(&acpi, 0, sizeof acpi);
		} else {
			acpi_print(&acpi);
		}
	}
	console_follow_spcr();
	power_init(opts.exit_mode, &acpi);
	power_policy(opts.on_reboot, opts.on_poweroff);
	numa_setup(bi);

	pr_info("hv: phase tsc: calibrating (CPUID 0x15/0x16, the HPET or the PM timer, PIT channel 2)\n");
	tsc_calibrate(&acpi);

	/* DMA isolation: decided here, turned on once the boot path is past
	 * the native hand-over (below).
	 * iommutest=preon first leaves the units on as firmware would.
	 * The probe reports what is missing, never fails for it: require is
	 * taken as auto there. */
	if (!aids_before_iommu(&opts, &acpi, err, sizeof err))
		hv_fail(err);
	pr_info("hv: phase iommu: %s\n", acpi.dmar ? "reading the DMAR and each VT-d unit's registers" : "no DMAR");
	int iommu_opt = opts.probe && opts.iommu == IOMMU_OPT_REQUIRE ? IOMMU_OPT_AUTO : opts.iommu;
	if (iommu_init(&acpi, iommu_opt, opts.iommu_qi, &bi->mem, err, sizeof err))
		hv_fail(err);
	aids_after_iommu(&opts, &acpi, &bi->mem);   /* an iommutest= run ends here */

	/* No VMX on the boot CPU: hand the machine to the kernel, before any AP
	 * is started (Linux starts them itself), or stop (novmx=stop). */
	cpuid_count(1, 0, &a, &b, &c, &d);
	if (!(c & BIT(5)) && opts.novmx == NOVMX_LINUX && bi->kernel.addr && !opts.vmx_smoke_only && !opts.probe)
		guest_start_native(bi, &acpi, "not supported by this CPU (CPUID.1:ECX.VMX=0)");

	/* DMA isolation on now, before the APs start and long before the
	 * guest: a device the firmware left running (or its pre-boot DMA
	 * protection) meets the hypervisor's tables from here on. The memory
	 * map is final (numa_setup claimed the node pools). The probe only
	 * looks; the native hand-over (above) leaves the units to Linux. */
	if (!opts.probe) {
		pr_info("hv: phase iommu enable: %s\n", iommu_available() ? "tables, then translation on in each unit" : "nothing to enable");
		if (iommu_enable(&bi->mem, err, sizeof err))
			hv_fail(err);
		/* Each unit's fault event to this CPU (a vector of the hypervisor's):
		 * its records read as faults come, not only at the reports. */
		iommu_fault_events_to(lapic_id());
		/* intremap=auto|on: the hypervisor's interrupt-remapping table,
		 * before the APs start (whether CPUs above APIC ID 255 join the
		 * guest follows from it). EIM where an APIC ID is above 255 or
		 * the host is in x2APIC mode. Only with the virtual IOAPIC: IR on
		 * blocks every compatibility-format interrupt. auto leaves it to
		 * irq=partition (the guest programs the IOAPIC itself) and to the
		 * test aids (iommutest=ioapic owns it itself). */
		bool aid = opts.iommu_test || opts.iommu_preon || opts.iommu_ioapic_test || opts.iommu_sriov_test;
		bool ir = opts.intremap == INTREMAP_ON ||
			  (opts.intremap == INTREMAP_AUTO && opts.irq != IRQ_OPT_PARTITION && !aid);
		if (ir && opts.ioapic != IOAPIC_OPT_VIRTUAL)
			pr_warn("iommu: intremap=%s ignored with ioapic=pass (the guest's compatibility-format entries would be blocked)\n",
				intremap_opt_names[opts.intremap]);
		else if (ir) {
			bool need_eim = lapic_x2apic;
			for (uint32_t i = 0; i < acpi.ncpus; i++)
				need_eim |= acpi.cpu[i].apic_id > 255;
			/* The MSI trap's scan first: the table is sized from what it
			 * finds, and auto owns remapping only where the trap covers
			 * every function (a function it misses would be blocked). */
			char why[200];
			uint32_t irtes = msi_trap_count(&acpi, why, sizeof why);
			if (why[0] && opts.intremap == INTREMAP_AUTO)
				pr_info("iommu: intremap=auto: interrupt remapping not owned: %s; IOAPIC pins and MSIs in compatibility format, CPUs above APIC ID 255 parked\n",
					why);
			else {
				if (why[0])
					pr_warn("iommu: intremap=on: %s; their compatibility-format MSIs will be blocked\n", why);
				iommu_ir_own(&acpi, need_eim, opts.intremap == INTREMAP_ON, irtes);
			}
		}
	}

	/* The APs. phantomcpu= adds an APIC ID that no CPU answers to, so the
	 * tests can show that a silent CPU is named and left out. */
	if (opts.phantom_cpu >= 0 && acpi.ncpus < acpi.cpu_room) {
		acpi.cpu[acpi.ncpus++] = (struct acpi_cpu){ .apic_id = (uint32_t)opts.phantom_cpu };
		pr_info("smp: phantomcpu=%lld: also starting APIC ID %lld, which should not answer\n",
			(long long)opts.phantom_cpu, (long long)opts.phantom_cpu);
	}
	pr_info("hv: phase ap start: %u CPUs in the MADT, INIT-SIPI-SIPI to all at once, %llu us for each next answer\n", acpi.ncpus,
		(unsigned long long)opts.ap_timeout_us);
	uint32_t online = smp_start_aps(&acpi, bi->trampoline, cr3, opts.max_cpus, opts.ap_timeout_us,
				       opts.housekeeping);
	if (opts.housekeeping >= 0 && !smp_housekeeper) {
		snprintf(err, sizeof err, "housekeeping=%lld: no CPU with that APIC ID answered (the boot CPU, APIC ID %u, runs vCPU 0 and cannot be kept)",
			 (long long)opts.housekeeping, lapic_id());
		hv_fail(err);
	}
	pr_info("smp: %u of %u CPUs online for the guest%s\n", online, acpi.ncpus ? acpi.ncpus : 1,
		nparked ? ", the others parked" : "");
	mem_print(bi->heap_end - bi->heap_start);

	/* VMX, on every CPU */
	pr_info("hv: phase vmx probe: the VMX capability MSRs on %u CPUs\n", ncpus);
	vmx_probe_this_cpu();
	smp_run_on_aps(vmx_probe_this_cpu, 1000000);
	vmx_caps_decode(vmx_raw_caps_of(0), &caps);
	if (!caps.vmx && opts.probe)
		probe_finish(&(struct probe_in){ .acpi = &acpi, .caps = &caps });
	if (!caps.vmx) {
		pr_info("vmx: not supported by this CPU (CPUID.1:ECX.VMX=0): nothing to virtualize, stopping\n");
		hv_exit(true);
	}
	vmx_caps_print(&caps);
	int differ = 0;
	for (uint32_t i = 1; i < ncpus; i++)
		differ += vmx_caps_compare(0, vmx_raw_caps_of(0), i, vmx_raw_caps_of(i)) ? 1 : 0;
	pr_info("vmx: %u CPUs probed, %d differ from cpu0\n", ncpus, differ);
	caps.vid_ignores_if = tiers_stock_bochs(opts.hlt);
	struct hv_options tier_opts = opts;
	if (opts.probe)   /* the probe shows what auto takes */
		tier_opts.ipi = IPI_AUTO, tier_opts.eoi = EOI_AUTO, tier_opts.timer = TIMER_AUTO;
	if (tiers_choose(&caps, &tier_opts, &tiers, err, sizeof err))
		hv_fail(err);

	pr_info("hv: phase vmxon: VMXON and VMXOFF on %u CPUs\n", ncpus);
	for (uint32_t i = 0; i < ncpus; i++)
		cpus[i]->vmxon_region = page_alloc_node(cpus[i]->node, 1);
	cpu_vmx_smoke();
	smp_run_on_aps(cpu_vmx_smoke, 1000000);
	vmx_smoke_lines();
	uint32_t vmx_ok = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		vmx_ok += cpus[i]->vmxon_status == 0;
	pr_info("vmx: VMXON succeeded on %u of %u CPUs\n", vmx_ok, ncpus);
	if (opts.probe)
		probe_finish(&(struct probe_in){ .acpi = &acpi, .caps = &caps, .tiers = &tiers, .vmxon_ok = vmx_ok });
	if (vmx_ok != ncpus)
		hv_fail("VMXON failed on some CPU");
	if (nparked)
		pr_info("hv: phase park: %u CPUs kept from the guest into VMX root operation\n", nparked);
	smp_park(&caps);

	report_periodic_init(opts.report_s);
	report_cpus_set(opts.report_cpus);
	virq_hang_init(opts.hangcheck_s);
	tiers_summary(&tiers, err, sizeof err);
	pr_info("hv: platform report: loader=%s cpus=%u vmx=yes %s dma_isolation=%s heap_used=%llu KiB\n", bi->loader, ncpus,
		err, iommu_available() ? "on" : "off", (unsigned long long)(page_alloc_used() >> 10));
	if (opts.vmx_smoke_only) {
		pr_info("hv: guest=none: stopping after the VMX smoke test\n");
		hv_exit(true);
	}
	if (!bi->kernel.addr) {
		pr_info("hv: no guest kernel given: stopping after the VMX smoke test\n");
		hv_exit(true);
	}
	struct vmx_start start = {
		.bi = bi, .acpi = &acpi, .opts = &opts, .caps = &caps, .tiers = &tiers,
		.housekeeper = smp_housekeeper, .housekeeper_start = smp_housekeeper_start, .post_work = smp_post_work,
		.aid = aids_exit_hooks(&opts),
	};
	vmx_start_guest(&start);
}
