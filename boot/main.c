/* hv_main: what both boot entries hand over to. Brings up the platform
 * (serial, memory, ACPI, TSC, CPUs), probes VMX on every CPU, chooses the
 * interrupt tiers and reports. */
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
#include "../lib/mtrr.h"
#include "../lib/cpu.h"
#include "../lib/string.h"
#include "../apic/lapic.h"
#include "../vmx/caps.h"
#include "../vmx/tiers.h"
#include "../vmx/vmxon.h"
#include "../vmx/vmcs.h"
#include "../vmx/vmx_defs.h"
#include "../vmx/ept.h"
#include "../vmx/vcpu_launch.h"
#include "../vmx/report.h"
#include "../apic/pi.h"
#include "../apic/ioapic.h"
#include "../guest/boot.h"
#include "../guest/cpuid.h"
#include "../guest/msr.h"
#include "../guest/io.h"
#include "../guest/acpi.h"
#include "../vmx/vcpu.h"
#include "../vmx/virq.h"
#include "../timer/service.h"

#define HV_HEAP_SIZE MIB(48)

static struct hv_options opts;
static struct acpi_info acpi;
static struct vmx_caps caps;
static struct hv_tiers tiers;

static void fail(const char *why)
{
	pr_err("hv: %s\n", why);
	hv_exit(false);
}

/* The housekeeping CPU's work: the timer service, forever. */
static void housekeeping_main(void)
{
	timer_service_run(virq_timer_service);
}

/* timer=posted with housekeeping=: the kept CPU serves every vCPU's timer;
 * without it each vCPU's own host timer does (one exit per delivery). */
static void timer_service_setup(bool virt, const struct hv_tiers *tiers)
{
	char err[160];
	if (!smp_housekeeper) {
		if (virt && tiers->timer == TIMER_POSTED)
			pr_info("timer: posted from each vCPU's own host timer: one external-interrupt exit per delivery (housekeeping=APICID gives the service a CPU of its own)\n");
		return;
	}
	if (!virt || tiers->timer != TIMER_POSTED) {
		snprintf(err, sizeof err, "housekeeping=%u: the timer service needs the virtual model and timer=posted (here %s, timer=%s)",
			 smp_housekeeper->apic_id, virt ? "virtual" : "partition", timer_tier_names[tiers->timer]);
		fail(err);
	}
	virq_timer_service_init(smp_housekeeper->apic_id);
	smp_housekeeper_start(housekeeping_main, KICK_VECTOR);
	pr_info("timer: posted by the housekeeping CPU (APIC ID %u): a vCPU's arming exits once, its delivery costs it no exit\n",
		smp_housekeeper->apic_id);
}

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

/* The guest: memory, EPT, bitmaps, descriptors, VMCS configuration, then
 * every CPU launches its vCPU (the APs first, the boot CPU last). */
static __noreturn void start_guest(struct boot_info *bi)
{
	static struct guest_boot gb;
	char err[256];
	uint32_t a, b, c, d;

	/* The probe address for the test guest: the hypervisor image, which lies
	 * below the top of guest RAM, so Linux's /dev/mem lets the read reach EPT
	 * (the heap at the top of RAM is refused by Linux itself, past high_memory). */
	paddr_t rsdp = acpi.rsdp ? acpi.rsdp : bi->rsdp;
	if (acpi.madt) {
		/* The guest's MADT lists only its vCPUs: a copy, in its start-up area. */
		static uint32_t ids[MAX_CPUS];
		uint32_t disabled;
		for (paddr_t pa = GUEST_ACPI; pa < GUEST_ACPI + GUEST_ACPI_SIZE; pa += PAGE_SIZE)
			if (memmap_type_at(&bi->mem, pa) != MEM_USABLE)
				fail("guest: the page for the guest's ACPI copies is not usable RAM");
		for (uint32_t i = 0; i < ncpus; i++)
			ids[i] = cpus[i]->apic_id;
		if (acpi_guest_copy(&acpi, ids, ncpus, (uint8_t *)(uintptr_t)GUEST_ACPI, GUEST_ACPI_SIZE, GUEST_ACPI,
				    &rsdp, &disabled, err, sizeof err))
			fail(err);
		pr_info("acpi: the guest's RSDP, root tables and MADT are copies at 0x%llx: %u vCPUs, %u processor entries disabled\n",
			(unsigned long long)rsdp, ncpus, disabled);
	}
	pr_info("acpi: sleep states S1-S4 hidden from the guest (%u DSDT objects renamed); only S5 ends the machine\n",
		acpi_hide_sleep_states(acpi.dsdt));
	if (guest_prepare(bi, rsdp, bi->image_start, &gb, err, sizeof err))
		fail(err);

	static struct mtrr_state mtrr;
	mtrr_read(&mtrr);
	mtrr_print(&mtrr);
	struct ept_stats st = { 0 };
	uint64_t end = memmap_end(&bi->mem);
	end = end < GIB(4) ? GIB(4) : end;
	if (caps.ept_1g && end < GIB(512))
		end = GIB(512);              /* one PDPT of 1 GiB pages covers MMIO far above RAM */
	struct vmcs_resources res = { .eptp = ept_build(&bi->mem, &mtrr, &caps, end, &st) };
	pr_info("ept: identity map 0-%llu GiB: %llu x 1G, %llu x 2M, %llu x 4K pages, %llu 4K hypervisor pages left out, %llu tables\n",
		(unsigned long long)(end >> 30), (unsigned long long)st.pages_1g, (unsigned long long)st.pages_2m,
		(unsigned long long)st.pages_4k, (unsigned long long)st.holes_4k, (unsigned long long)st.tables);

	cpuid_count(1, 0, &a, &b, &c, &d);
	int model = vmcs_irq_model_choose(&caps, &tiers, opts.irq, lapic_x2apic, c & BIT(24), err, sizeof err);
	if (model < 0)
		fail(err);
	pr_info("irq: %s\n", err);
	bool virt = model == IRQ_VIRTUAL;
	if (virt)
		for (uint32_t i = 0; i < acpi.nioapics; i++)
			pr_info("irq: IOAPIC %u at 0x%x: %u entries masked until the guest programs them\n", acpi.ioapic[i].id,
				acpi.ioapic[i].addr, ioapic_mask_all(acpi.ioapic[i].addr));

	uint8_t *msr_bitmap = page_alloc(1), *io_a = page_alloc(1), *io_b = page_alloc(1);
	msr_bitmap_build(msr_bitmap, virt, virt && tiers.ipi == IPI_IPIV, virt && tiers.timer == TIMER_APICV);
	io_bitmaps_build(io_a, io_b, &acpi);
	res.msr_bitmap = (paddr_t)(uintptr_t)msr_bitmap;
	res.io_bitmap_a = (paddr_t)(uintptr_t)io_a;
	res.io_bitmap_b = (paddr_t)(uintptr_t)io_b;

	/* One posted-interrupt descriptor per CPU; the PID-pointer table is
	 * indexed by APIC ID up to the highest one in the MADT. */
	uint32_t max_id = acpi.max_apic_id;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i]->apic_id > max_id)
			max_id = cpus[i]->apic_id;
	uint32_t extra = virt && opts.ipiv_test ? PID_TEST_ENTRIES : 0;
	uint64_t *pid_table = page_alloc(pid_table_bytes(max_id + extra) / PAGE_SIZE);
	res.pid_table = (paddr_t)(uintptr_t)pid_table;
	res.max_apic_id = max_id + extra;   /* LAST_PID_POINTER_INDEX */
	if (vmcs_config_build(&vmx_env.cfg, &caps, &tiers, model, &res, err, sizeof err))
		fail(err);
	if (vmx_env.cfg.sw_apic)
		msr_bitmap_all_apic(msr_bitmap);
	/* HLT: the guest's (no exit) is the design. Bochs 3.0 does not wake a
	 * halted CPU for a virtual interrupt that became pending while the
	 * guest had interrupts off (before its STI; HLT): there the HLT exits
	 * and is completed by the hypervisor (vmx/virq.c, exit_hlt). auto
	 * takes a TSC below 500 MHz for an emulator. */
	bool hlt_exit = virt && (opts.hlt == HLT_OPT_EXIT || (opts.hlt == HLT_OPT_AUTO && tsc_khz < 500000));
	if (hlt_exit)
		vmx_env.cfg.proc |= VMX_PROC_HLT_EXITING;
	pr_info("idle: hlt=%s (%s)\n", hlt_exit ? "exit" : "guest",
		!virt ? "partition model: the guest owns the APIC" :
		opts.hlt != HLT_OPT_AUTO ? "asked for" :
		hlt_exit ? "auto: a TSC below 500 MHz is an emulator; Bochs 3.0 does not wake HLT for a pending virtual interrupt" :
		"auto: HLT never exits");
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *v = vcpu_create(cpus[i], vmx_env.cfg.posted_intr_nv);
		pid_table_set(pid_table, cpus[i]->apic_id, (paddr_t)(uintptr_t)v->pid);
	}
	if (extra) {
		pid_table_add_test_entries(pid_table, max_id, page_alloc(1), (uint8_t)vmx_env.cfg.posted_intr_nv);
		pr_info("pi: ipivtest: PID-pointer entries %u absent, %u with a reserved bit, %u a spare descriptor with SN set\n",
			max_id + 1, max_id + 2, max_id + 3);
	}
	pr_info("pi: %u posted-interrupt descriptors, PID-pointer table at 0x%llx with last index %u\n", ncpus,
		(unsigned long long)res.pid_table, max_id + extra);
	virq_init(pid_table, max_id);
	nmi_root_hook = virq_nmi_in_root;
	timer_service_setup(virt, &tiers);
	vmcs_config_print(&vmx_env.cfg);

	cpuid_policy.tsc_hz = tsc_khz * 1000;
	cpuid_policy.xsaves = vmx_env.cfg.proc2 & VMX_PROC2_XSAVES;
	cpuid_policy.invpcid = vmx_env.cfg.proc2 & VMX_PROC2_INVPCID;
	cpuid_policy.rdtscp = vmx_env.cfg.proc2 & VMX_PROC2_RDTSCP;
	cpuid_policy.waitpkg = false;
	cpuid_policy.hide_mwait = vmx_env.cfg.proc & VMX_PROC_HLT_EXITING;
	/* PV send-IPI only where its tier runs. */
	cpuid_policy.kvm_features = virt && tiers.ipi == IPI_PV ? BIT(KVM_FEATURE_PV_SEND_IPI) : 0;
	/* PV EOI only on the software x2APIC (as KVM never arms it with APICv). */
	if (vmx_env.cfg.sw_apic)
		cpuid_policy.kvm_features |= BIT(KVM_FEATURE_PV_EOI);
	vmx_env.tiers_ipi = tiers.ipi;
	vmx_env.mtrr = &mtrr;
	vmx_env.ept_end = ALIGN_UP(end, GIB(1));
	cpuid_count(0x80000000, 0, &a, &b, &c, &d);
	if (a >= 0x80000008) {
		cpuid_count(0x80000008, 0, &a, &b, &c, &d);
		vmx_env.gpa_limit = 1ull << (a & 0xff);
	} else {
		vmx_env.gpa_limit = GIB(64);  /* 36 bits: the architectural default */
	}
	cpuid_count(0xd, 0, &a, &b, &c, &d);
	vmx_env.xcr0_mask = cpuid_guest_xcr0_mask(((uint64_t)d << 32) | a);
	vmx_env.caps = &caps;
	vmx_env.mem = &bi->mem;
	vmx_env.acpi = &acpi;

	struct vmcs_guest g;
	guest_state_linux64(&g, gb.entry, gb.cr3, gb.gdt, GUEST_GDT_LIMIT);
	vcpu_set_bsp_guest(&g, gb.zero_page);
	for (uint32_t i = 1; i < ncpus; i++) {
		cpus[i]->work = vcpu_launch_this_cpu;
		uint64_t until = rdtsc() + tsc_from_us(2000000);
		while (!cpus[i]->launched && rdtsc() < until)
			cpu_relax();
		if (!cpus[i]->launched)
			fail("an AP did not launch its vCPU");
	}
	vcpu_launch_this_cpu();
}

/* Loads the GDT and page tables the Linux 64-bit boot protocol asks for
 * (guest/boot.c built them: __BOOT_CS 0x10, __BOOT_DS 0x18, 0-4 GiB identity
 * mapped) and enters the kernel with RSI = boot_params, interrupts off. The
 * caller's stack and code lie below 4 GiB, so they stay mapped meanwhile. */
static __noreturn void native_jump(uint64_t entry, uint64_t zero_page, uint64_t cr3, uint64_t gdt, uint16_t limit)
{
	struct __attribute__((packed)) { uint16_t limit; uint64_t base; } gdtr = { limit, gdt };
	__asm__ volatile("cli\n\t"
			 "lgdt %0\n\t"
			 "mov %1, %%cr3\n\t"
			 "mov $0x18, %%eax\n\t"
			 "mov %%eax, %%ds\n\t"
			 "mov %%eax, %%es\n\t"
			 "mov %%eax, %%ss\n\t"
			 "mov %%eax, %%fs\n\t"
			 "mov %%eax, %%gs\n\t"
			 "pushq $0x10\n\t"
			 "pushq %2\n\t"
			 "mov %3, %%rsi\n\t"
			 "lretq"
			 : : "m"(gdtr), "r"(cr3), "r"(entry), "r"(zero_page) : "rax", "memory");
	__builtin_unreachable();
}

/* novmx=linux: no VMX here (an emulator without it, an old or locked CPU),
 * so the machine goes to the Linux guest as it is: the same loader, zero page
 * and e820 (the hypervisor's memory stays reserved), the firmware's ACPI
 * tables, every CPU for Linux to start with its own INIT-SIPI (the
 * hypervisor started none). Nothing of the hypervisor runs afterwards. */
static __noreturn void native_boot(struct boot_info *bi, const char *why)
{
	static struct guest_boot gb;
	char err[256];
	paddr_t rsdp = acpi.rsdp ? acpi.rsdp : bi->rsdp;
	pr_info("vmx: %s: handing the machine to Linux natively (novmx=linux; novmx=stop stops instead)\n", why);
	if (guest_prepare(bi, rsdp, bi->image_start, &gb, err, sizeof err))
		fail(err);
	uintptr_t sp = (uintptr_t)&gb;
	if ((uintptr_t)native_jump >= GIB(4) || (uintptr_t)__builtin_frame_address(0) >= GIB(4) || sp >= GIB(4))
		fail("native boot: the hypervisor lies above 4 GiB, outside the boot page tables");
	pr_info("hv: native boot: entering the kernel at 0x%llx, boot_params at 0x%llx, %s mode APIC; the hypervisor ends here\n",
		(unsigned long long)gb.entry, (unsigned long long)gb.zero_page, lapic_x2apic ? "x2APIC" : "xAPIC");
	native_jump(gb.entry, gb.zero_page, gb.cr3, gb.gdt, GUEST_GDT_LIMIT);
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
		fail(err);
	if (bi->boot_error[0])
		fail(bi->boot_error);

	/* Memory: what the hypervisor owns never goes to the guest. */
	memmap_normalize(&bi->mem);
	claim_or_die(bi, bi->image_start, bi->image_end - bi->image_start, "image");
	if (!bi->heap_start) {
		bi->heap_start = memmap_find_free(&bi->mem, HV_HEAP_SIZE, GIB(4));
		if (!bi->heap_start)
			fail("memmap: no room below 4 GiB for the hypervisor's heap");
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

	/* No VMX on the boot CPU: hand the machine to the kernel, before any AP
	 * is started (Linux starts them itself), or stop (novmx=stop). */
	cpuid_count(1, 0, &a, &b, &c, &d);
	if (!(c & BIT(5)) && opts.novmx == NOVMX_LINUX && bi->kernel.addr && !opts.vmx_smoke_only)
		native_boot(bi, "not supported by this CPU (CPUID.1:ECX.VMX=0)");

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
		fail(err);
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
	if (tiers_choose(&caps, &opts, &tiers, err, sizeof err))
		fail(err);

	for (uint32_t i = 0; i < ncpus; i++)
		cpus[i]->vmxon_region = page_alloc(1);
	cpu_vmx_smoke();
	smp_run_on_aps(cpu_vmx_smoke, 1000000);
	uint32_t vmx_ok = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		vmx_ok += cpus[i]->vmxon_status == 0;
	pr_info("vmx: VMXON succeeded on %u of %u CPUs\n", vmx_ok, ncpus);
	if (vmx_ok != ncpus)
		fail("VMXON failed on some CPU");
	smp_park(&caps);

	report_periodic_init(opts.report_s);
	tiers_summary(&tiers, err, sizeof err);
	pr_info("hv: platform report: loader=%s cpus=%u vmx=yes %s heap_used=%llu KiB\n", bi->loader, ncpus, err,
		(unsigned long long)(page_alloc_used() >> 10));
	if (opts.vmx_smoke_only) {
		pr_info("hv: guest=none: stopping after the VMX smoke test\n");
		hv_exit(true);
	}
	if (!bi->kernel.addr) {
		pr_info("hv: no guest kernel given: stopping after the VMX smoke test\n");
		hv_exit(true);
	}
	start_guest(bi);
}
