/* hv_main: what both boot entries hand over to. Brings up the platform
 * (serial, memory, ACPI, TSC, CPUs), probes VMX on every CPU, chooses the
 * interrupt tiers and reports; then one call starts the guest
 * (vmx/setup.c), or, without VMX, hands the machine to it (guest/setup.c). */
#include "main.h"
#include "smp.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/options.h"
#include "../lib/memmap.h"
#include "../lib/percpu.h"
#include "../lib/desc.h"
#include "../lib/trap.h"
#include "../lib/paging.h"
#include "../lib/acpi.h"
#include "../lib/tsc.h"
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
#include "../guest/setup.h"
#include "../iommu/iommu.h"
#include "../iommu/edutest.h"
#include "../vmx/msi_edutest.h"

#define HV_HEAP_SIZE MIB(48)

static struct hv_options opts;
static struct acpi_info acpi;
static struct vmx_caps caps;
static struct hv_tiers tiers;

/* panic() on one CPU stops the others with an NMI. */
static void nmi_other_cpus(void)
{
	lapic_send(0, APIC_DM_NMI | APIC_DEST_ALL_BUT_SELF);
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
	pr_info("vmx: cpu%u %s%s\n", c->index, c->vmxon_msg, c->vmxon_status ? "" : ", VMXOFF ok");
}

__noreturn void hv_main(struct boot_info *bi)
{
	char err[256];
	int bad_opts;
	uint32_t a, b, c, d;

	serial_init(options_serial_port(bi->cmdline));
	options_defaults(&opts);
	bad_opts = options_parse(bi->cmdline, &opts, err, sizeof err);
	log_level = opts.loglevel;
	power_init(opts.exit_mode, NULL);
	pr_info("\nhv: thin hypervisor for Intel VT-x, loader=%s\n", bi->loader);
	pr_info("hv: command line \"%s\"\n", bi->cmdline);
	if (bad_opts)
		hv_fail(err);
	if (bi->boot_error[0])
		hv_fail(bi->boot_error);

	/* Memory: what the hypervisor owns never goes to the guest. */
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

	/* ACPI */
	if (!bi->rsdp)
		bi->rsdp = acpi_find_rsdp_legacy();
	if (!bi->rsdp) {
		pr_err("acpi: no RSDP found; only the boot CPU runs\n");
	} else {
		pr_info("acpi: RSDP at 0x%llx\n", (unsigned long long)bi->rsdp);
		if (acpi_parse(bi->rsdp, &acpi, err, sizeof err)) {
			pr_err("%s; only the boot CPU runs\n", err);
			memset(&acpi, 0, sizeof acpi);
		} else {
			acpi_print(&acpi);
		}
	}
	power_init(opts.exit_mode, &acpi);

	tsc_calibrate();

	/* DMA isolation: decided here, turned on just before the guest runs. */
	if (iommu_init(&acpi, opts.iommu, opts.iommu_qi, &bi->mem, err, sizeof err))
		hv_fail(err);
	if (opts.iommu_test) {
		/* The trapped MSI first: compatibility format, before the
		 * interrupt-remapping checks turn remapping on. */
		bool msi_ok = msi_edutest(lapic_requested, lapic_id());
		hv_exit(iommu_edu_test(&bi->mem, lapic_requested, lapic_id()) && msi_ok);
	}

	/* No VMX on the boot CPU: hand the machine to the kernel, before any AP
	 * is started (Linux starts them itself), or stop (novmx=stop). */
	cpuid_count(1, 0, &a, &b, &c, &d);
	if (!(c & BIT(5)) && opts.novmx == NOVMX_LINUX && bi->kernel.addr && !opts.vmx_smoke_only)
		guest_start_native(bi, &acpi, "not supported by this CPU (CPUID.1:ECX.VMX=0)");

	/* The APs. phantomcpu= adds an APIC ID that no CPU answers to, so the
	 * tests can show that a silent CPU is named and left out. */
	if (opts.phantom_cpu >= 0 && acpi.ncpus < ACPI_MAX_CPUS) {
		acpi.cpu[acpi.ncpus++] = (struct acpi_cpu){ .apic_id = (uint32_t)opts.phantom_cpu };
		pr_info("smp: phantomcpu=%lld: also starting APIC ID %lld, which should not answer\n",
			(long long)opts.phantom_cpu, (long long)opts.phantom_cpu);
	}
	uint32_t online = smp_start_aps(&acpi, bi->trampoline, cr3, opts.max_cpus, opts.ap_timeout_us,
				       opts.housekeeping);
	if (opts.housekeeping >= 0 && !smp_housekeeper) {
		snprintf(err, sizeof err, "housekeeping=%lld: no CPU with that APIC ID answered (the boot CPU, APIC ID %u, runs vCPU 0 and cannot be kept)",
			 (long long)opts.housekeeping, lapic_id());
		hv_fail(err);
	}
	pr_info("smp: %u of %u CPUs online for the guest%s\n", online, acpi.ncpus ? acpi.ncpus : 1,
		nparked ? ", the others parked" : "");

	/* VMX, on every CPU */
	vmx_probe_this_cpu();
	smp_run_on_aps(vmx_probe_this_cpu, 1000000);
	vmx_caps_decode(vmx_raw_caps_of(0), &caps);
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
	if (tiers_choose(&caps, &opts, &tiers, err, sizeof err))
		hv_fail(err);

	for (uint32_t i = 0; i < ncpus; i++)
		cpus[i]->vmxon_region = page_alloc(1);
	cpu_vmx_smoke();
	smp_run_on_aps(cpu_vmx_smoke, 1000000);
	uint32_t vmx_ok = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		vmx_ok += cpus[i]->vmxon_status == 0;
	pr_info("vmx: VMXON succeeded on %u of %u CPUs\n", vmx_ok, ncpus);
	if (vmx_ok != ncpus)
		hv_fail("VMXON failed on some CPU");
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
		.housekeeper = smp_housekeeper, .housekeeper_start = smp_housekeeper_start,
	};
	vmx_start_guest(&start);
}
