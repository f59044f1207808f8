/* Starting the guest (see setup.h). */
#include "setup.h"
#include "vmcs.h"
#include "vmx_defs.h"
#include "ept.h"
#include "vcpu.h"
#include "vcpu_launch.h"
#include "virq.h"
#include "vconsole.h"
#include "tiers.h"
#include "../lib/cpu.h"
#include "../lib/memmap.h"
#include "../lib/mtrr.h"
#include "../lib/percpu.h"
#include "../lib/power.h"
#include "../lib/printk.h"
#include "../lib/serial.h"
#include "../lib/trap.h"
#include "../lib/tsc.h"
#include "../apic/ioapic.h"
#include "vioapic_trap.h"
#include "msi_trap.h"
#include "hpet_trap.h"
#include "../apic/lapic.h"
#include "../apic/pi.h"
#include "../guest/setup.h"
#include "../guest/cpuid.h"
#include "../iommu/iommu.h"
#include "../lib/paging.h"
#include "../guest/gwalk.h"
#include "../guest/msr.h"
#include "../lib/msr.h"
#include "../guest/io.h"
#include "../timer/service.h"

/* The housekeeping CPU's work: the timer service, forever. */
static void housekeeping_main(void)
{
	timer_service_run(virq_timer_service);
}

/* timer=posted with housekeeping=: the kept CPU serves every vCPU's timer;
 * without it each vCPU's own host timer does (one exit per delivery). */
static void timer_service_setup(const struct vmx_start *s, bool virt)
{
	char err[160];
	if (!s->housekeeper) {
		if (virt && s->tiers->timer == TIMER_POSTED)
			pr_info("timer: posted from each vCPU's own host timer: one external-interrupt exit per delivery (housekeeping=APICID gives the service a CPU of its own)\n");
		return;
	}
	if (!virt || s->tiers->timer != TIMER_POSTED) {
		snprintf(err, sizeof err, "housekeeping=%u: the timer service needs the virtual model and timer=posted (here %s, timer=%s)",
			 s->housekeeper->apic_id, virt ? "virtual" : "partition", timer_tier_names[s->tiers->timer]);
		hv_fail(err);
	}
	virq_timer_service_init(s->housekeeper->apic_id, s->housekeeper->tsc_comp);
	s->housekeeper_start(housekeeping_main, KICK_VECTOR);
	pr_info("timer: posted by the housekeeping CPU (APIC ID %u): a vCPU's arming exits once, its delivery costs it no exit\n",
		s->housekeeper->apic_id);
}

/* EPT: the identity map of [0, *end) with the memory types of the memory
 * map and the MTRRs, the hypervisor's own memory left out. */
static uint64_t ept_setup(const struct memmap *mem, const struct vmx_caps *caps, const struct mtrr_state *mtrr,
			  int nxhuge, uint64_t *end_out)
{
	struct ept_stats st = { 0 };
	/* The iTLB-multihit erratum (vmx/ept.h): the vendor, then
	 * IA32_ARCH_CAPABILITIES where CPUID.(EAX=7,ECX=0):EDX[29] enumerates it. */
	uint32_t max, vb, vc, vd, a, b, c, d7 = 0;
	uint64_t arch_cap = 0;
	cpuid_count(0, 0, &max, &vb, &vc, &vd);
	bool intel = vb == 0x756e6547 && vd == 0x49656e69 && vc == 0x6c65746e;   /* "GenuineIntel" */
	if (max >= 7)
		cpuid_count(7, 0, &a, &b, &c, &d7);
	bool has_arch_cap = (d7 & BIT(29)) && rdmsr_safe(0x10a, &arch_cap);
	bool nx = ept_nx_huge_wanted(nxhuge, intel, has_arch_cap, arch_cap);
	ept_set_nx_huge(nx);
	if (nx)
		pr_info("ept: large pages not executable, a guest fetch splits its page into executable 4 KiB pages (nxhuge=%s%s)\n",
			nxhuge_opt_names[nxhuge], nxhuge != NXHUGE_AUTO ? "" : !intel ? "" : has_arch_cap ?
			": IA32_ARCH_CAPABILITIES.IF_PSCHANGE_MC_NO clear, the CPU has the iTLB-multihit erratum" :
			": no IA32_ARCH_CAPABILITIES, the CPU is taken to have the iTLB-multihit erratum");
	else
		pr_info("ept: large pages executable (nxhuge=%s%s)\n", nxhuge_opt_names[nxhuge],
			nxhuge != NXHUGE_AUTO ? "" : intel ? ": IA32_ARCH_CAPABILITIES.IF_PSCHANGE_MC_NO, no iTLB-multihit erratum" :
			": not an Intel CPU");
	uint64_t end = memmap_end(mem);
	end = end < GIB(4) ? GIB(4) : end;
	if (caps->ept_1g && end < GIB(512))
		end = GIB(512);              /* one PDPT of 1 GiB pages covers MMIO far above RAM */
	uint64_t eptp = ept_build(mem, mtrr, caps, end, &st);
	pr_info("ept: identity map 0-%llu GiB: %llu x 1G, %llu x 2M, %llu x 4K pages, %llu 4K hypervisor pages left out, %llu tables\n",
		(unsigned long long)(end >> 30), (unsigned long long)st.pages_1g, (unsigned long long)st.pages_2m,
		(unsigned long long)st.pages_4k, (unsigned long long)st.holes_4k, (unsigned long long)st.tables);
	*end_out = end;
	return eptp;
}

unsigned vmx_guest_features(const struct vmx_caps *caps, struct cpufeat *out)
{
	struct cpufeat_host h = { 0 };
	uint32_t max, a, b;
	cpuid_count(0, 0, &max, &a, &b, &b);
	cpuid_count(1, 0, &a, &b, &h.l1c, &h.l1d);
	if (max >= 7)
		cpuid_count(7, 0, &a, &h.l7b, &h.l7c, &h.l7d);
	if (max >= 0xd) {
		uint32_t d;
		cpuid_count(0xd, 0, &a, &b, &b, &d);
		h.xcr0 = ((uint64_t)d << 32) | a;
		cpuid_count(0xd, 1, &h.d1a, &a, &b, &b);
	}
	cpuid_count(0x80000000, 0, &max, &a, &b, &b);
	if (max >= 0x80000001)
		cpuid_count(0x80000001, 0, &a, &b, &b, &h.x1d);
	h.misc_enable_ok = rdmsr_safe(MSR_IA32_MISC_ENABLE, &h.misc_enable);
	if (caps && caps->vmx && caps->secondary)
		h.proc2_allowed1 = caps->proc2.allowed1;
	h.rdtsc_exiting_forced = caps && (caps->proc.allowed0 & VMX_PROC_RDTSC_EXITING);
	return cpuid_features_decide(&h, &cpuid_policy, out);
}

/* What CPUID shows the guest follows what the VMCS lets it run. */
static void cpuid_policy_setup(const struct vmcs_config *cfg, const struct hv_tiers *tiers, bool virt)
{
	cpuid_policy.tsc_hz = tsc_khz * 1000;
	cpuid_policy.tsc_host_leaf = tsc_source == TSC_FROM_CPUID15;
	cpuid_policy.xsaves = cfg->proc2 & VMX_PROC2_XSAVES;
	cpuid_policy.invpcid = cfg->proc2 & VMX_PROC2_INVPCID;
	cpuid_policy.rdtscp = cfg->proc2 & VMX_PROC2_RDTSCP;
	cpuid_policy.hide_mwait = tiers_hide_mwait(tiers, virt, cfg->proc & VMX_PROC_HLT_EXITING);
	if (cpuid_policy.hide_mwait && !(cfg->proc & VMX_PROC_HLT_EXITING))
		pr_info("timer: preempt: MONITOR/MWAIT hidden from the guest (the VMX-preemption timer stops in C-states deeper than C2)\n");
	else if (cpuid_policy.hide_mwait)
		pr_info("idle: hlt=exit: MONITOR/MWAIT hidden from the guest (it idles in HLT, which exits; intel_idle has no C-states to take)\n");
	/* PV send-IPI only where its tier runs; PV EOI only on the software
	 * x2APIC (as KVM never arms it with APICv); MSI_EXT_DEST_ID only where
	 * the hypervisor owns interrupt remapping (intremap=auto or on). */
	cpuid_policy.kvm_features = cpuid_kvm_features(virt && tiers->ipi == IPI_PV, cfg->sw_apic, iommu_ir_owned());
	/* Said once: each feature this CPU has that the guest may not get. */
	struct cpufeat f[CPUFEAT_MAX];
	unsigned n = vmx_guest_features(vmx_env.caps, f);
	cpuid_policy.waitpkg = cpuid_policy.waitpkg && (cfg->proc2 & VMX_PROC2_USER_WAIT_PAUSE);
	/* The XCR0 bits the guest may set follow the decision (AMX's). */
	uint32_t a, b, c, d;
	cpuid_count(0xd, 0, &a, &b, &c, &d);
	vmx_env.xcr0_mask = cpuid_guest_xcr0_mask(((uint64_t)d << 32) | a, cpuid_policy.amx);
	for (unsigned i = 0; i < n; i++)
		pr_info("cpu: guest feature %s: %s%s%s\n", f[i].name, f[i].given ? "passed" : "hidden",
			f[i].why ? ": " : "", f[i].why ? f[i].why : "");
}

/* The guest's physical-address width (the XCR0 bits it may set:
 * cpuid_policy_setup, with the features). */
static void guest_limits(void)
{
	uint32_t a, b, c, d;
	cpuid_count(0x80000000, 0, &a, &b, &c, &d);
	if (a >= 0x80000008) {
		cpuid_count(0x80000008, 0, &a, &b, &c, &d);
		vmx_env.gpa_limit = 1ull << (a & 0xff);
	} else {
		vmx_env.gpa_limit = GIB(64);  /* 36 bits: the architectural default */
	}
}

/* Every AP launches its vCPU (they wait for the guest's SIPI), then the
 * boot CPU, at the kernel's 64-bit entry. */
static __noreturn void launch_all(const struct guest_boot *gb, void (*post_work)(struct percpu *, void (*)(void)))
{
	struct vmcs_guest g;
	guest_state_linux64(&g, gb->entry, gb->cr3, gb->gdt, GUEST_GDT_LIMIT);
	vcpu_set_bsp_guest(&g, gb->zero_page);
	for (uint32_t i = 1; i < ncpus; i++) {
		post_work(cpus[i], vcpu_launch_this_cpu);
		uint64_t until = rdtsc() + tsc_from_us(2000000);
		while (!cpus[i]->launched && rdtsc() < until)
			cpu_relax();
		if (!cpus[i]->launched)
			hv_fail("an AP did not launch its vCPU");
	}
	vcpu_launch_this_cpu();
}

__noreturn void vmx_start_guest(const struct vmx_start *s)
{
	static struct guest_boot gb;
	static struct mtrr_state mtrr;
	const struct hv_tiers *tiers = s->tiers;
	const struct acpi_info *acpi = s->acpi;
	char err[256];
	uint32_t a, b, c, d;

	pr_info("hv: phase guest setup: the kernel's boot parameters, e820 and page tables\n");
	if (guest_setup(s->bi, acpi, &gb, err, sizeof err))
		hv_fail(err);

	pr_info("hv: phase ept: the MTRRs, then the identity map\n");
	mtrr_read(&mtrr);
	mtrr_print(&mtrr);
	uint64_t end;
	struct vmcs_resources res = { .eptp = ept_setup(&s->bi->mem, s->caps, &mtrr, s->opts->nxhuge, &end) };

	pr_info("hv: phase vmcs: interrupt model, bitmaps, posted-interrupt descriptors, controls, vCPUs\n");
	cpuid_count(1, 0, &a, &b, &c, &d);
	int model = vmcs_irq_model_choose(s->caps, tiers, s->opts->irq, lapic_x2apic, c & BIT(24), err, sizeof err);
	if (model < 0)
		hv_fail(err);
	pr_info("irq: %s\n", err);
	bool virt = model == IRQ_VIRTUAL;
	if (!virt)   /* the guest programs its IOAPIC itself: compatibility format */
		iommu_ir_release("the partition model");
	if (virt)
		for (uint32_t i = 0; i < acpi->nioapics; i++)
			pr_info("irq: IOAPIC %u at 0x%x: %u entries masked until the guest programs them\n", acpi->ioapic[i].id,
				acpi->ioapic[i].addr, ioapic_mask_all(acpi->ioapic[i].addr));
	if (acpi->nioapics && (!virt || s->opts->ioapic == IOAPIC_OPT_PASS))
		pr_info("ioapic: the guest programs the physical IOAPIC itself (%s)\n",
			virt ? "ioapic=pass" : "the partition model");

	uint8_t *msr_bitmap = page_alloc(1), *io_a = page_alloc(1), *io_b = page_alloc(1);
	msr_bitmap_build(msr_bitmap, virt, virt && tiers->ipi == IPI_IPIV);
	uint16_t guest_uart = s->opts->vuart ? serial_base() : 0;   /* vuart=0: the guest shares the real one */
	io_bitmaps_build(io_a, io_b, acpi, guest_uart);
	vconsole_init(guest_uart, serial_desc()->gsi, acpi);
	if (serial_desc()->space == UART_MMIO)
		pr_warn("console: the UART is in memory: the guest drives it itself (no virtual 16550A there yet); lines may splice\n");
	else if (!guest_uart)
		pr_warn("console: vuart=0: the guest drives the hypervisor's UART itself; lines may splice\n");
	res.msr_bitmap = (paddr_t)(uintptr_t)msr_bitmap;
	res.io_bitmap_a = (paddr_t)(uintptr_t)io_a;
	res.io_bitmap_b = (paddr_t)(uintptr_t)io_b;

	/* One posted-interrupt descriptor per CPU; the PID-pointer table is
	 * indexed by APIC ID up to the highest one in the MADT. */
	uint32_t max_id = acpi->max_apic_id;
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i]->apic_id > max_id)
			max_id = cpus[i]->apic_id;
	uint32_t extra = virt && s->opts->ipiv_test ? PID_TEST_ENTRIES : 0;
	uint64_t *pid_table = page_alloc(pid_table_bytes(max_id + extra) / PAGE_SIZE);
	res.pid_table = (paddr_t)(uintptr_t)pid_table;
	res.max_apic_id = max_id + extra;   /* LAST_PID_POINTER_INDEX */
	cpuid_count(0, 0, &a, &b, &c, &d);
	if (a >= 0xa) {   /* architectural performance monitoring version 2: IA32_PERF_GLOBAL_CTRL */
		cpuid_count(0xa, 0, &a, &b, &c, &d);
		res.pmu_global = (a & 0xff) >= 2;
	}
	if (vmcs_config_build(&vmx_env.cfg, s->caps, tiers, model, &res, err, sizeof err))
		hv_fail(err);
	if (vmx_env.cfg.sw_apic)
		msr_bitmap_all_apic(msr_bitmap);
	if (guest_hlt_exits(s->opts->hlt, virt, tsc_emulated(), tsc_under_kvm))
		vmx_env.cfg.proc |= VMX_PROC_HLT_EXITING;
	/* The hang check's own timer: a vCPU that makes no exit for hangcheck=
	 * seconds exits by its VMX-preemption timer (loaded again at every
	 * entry, never saved), so a guest stuck with interrupts off on every
	 * vCPU is still diagnosed, at its own exit (vmx/virq_hang.c). */
	if (virt && s->opts->hangcheck_s && s->caps->preemption_timer) {
		uint64_t t = ((uint64_t)s->opts->hangcheck_s * tsc_khz * 1000) >> vmx_env.cfg.preempt_rate;
		vmx_env.cfg.watchdog_ticks = t > 0xffffffffull ? 0xffffffffu : t ? (uint32_t)t : 1;
		vmx_env.cfg.pin |= VMX_PIN_PREEMPTION_TIMER;
	}
	/* Stock Bochs 3.0 delivers a pending virtual interrupt with IF = 0
	 * whenever a host interrupt comes too (defect G, docs/bochs.md); auto
	 * keeps VID off there (vmx/tiers.c: the software x2APIC injects at
	 * IF = 1 only), but eoi=vid may ask for it, and the UART's interrupt
	 * raised inside the 8250 driver's locked section would then be taken
	 * there and deadlock on the port lock. The console's interrupts wait
	 * for IF = 1 instead (interrupt-window exiting); hardware never needs
	 * it. */
	vmx_env.cfg.if0_defer = virt && !vmx_env.cfg.sw_apic && tiers_stock_bochs(s->opts->hlt);
	if (vmx_env.cfg.if0_defer)
		pr_info("quirk: emulator without hlt=guest, with eoi=vid: the console's interrupts wait for the guest's IF = 1 (Bochs 3.0 defect G)\n");
	for (uint32_t i = 0; i < ncpus; i++) {
		struct vcpu *v = vcpu_create(cpus[i], vmx_env.cfg.posted_intr_nv);
		pid_table_set(pid_table, cpus[i]->apic_id, (paddr_t)(uintptr_t)v->pid);
		virq_timer_msr_bitmap(v, msr_bitmap);
	}
	if (extra) {
		pid_table_add_test_entries(pid_table, max_id, page_alloc(1), (uint8_t)vmx_env.cfg.posted_intr_nv);
		pr_info("pi: ipivtest: PID-pointer entries %u absent, %u with a reserved bit, %u a spare descriptor with SN set\n",
			max_id + 1, max_id + 2, max_id + 3);
	}
	pr_info("pi: %u posted-interrupt descriptors, PID-pointer table at 0x%llx with last index %u\n", ncpus,
		(unsigned long long)res.pid_table, max_id + extra);
	virq_init(pid_table, max_id);
	vmx_env.mem = &s->bi->mem;   /* before the traps: the MSI trap's wall judges places against it */
	/* Before the traps too: a table placed beyond the identity map has its
	 * GiB mapped late first (vmx/exit_ept.c, exit_ept_late_gib). */
	vmx_env.mtrr = &mtrr;
	vmx_env.ept_end = ALIGN_UP(end, GIB(1));
	vmx_env.caps = s->caps;
	guest_limits();
	if (virt && s->opts->ioapic == IOAPIC_OPT_VIRTUAL)
		vioapic_trap_setup(acpi, vmx_env.cfg.eptp);   /* the vCPUs and the notification vector known */
	vconsole_start_rx(cpus[0]->apic_id);                  /* the boot CPU takes the console's input */
	/* Owned remapping blocks every compatibility-format interrupt: the
	 * guest's MSIs must then go through the trap and the hypervisor's
	 * IRTEs, whatever msi= says. */
	if (virt && s->opts->msi != MSI_OPT_TRAP && iommu_ir_owned())
		pr_info("msi: trapped although msi=pass: interrupt remapping is owned, the devices' MSIs go through its IRTEs\n");
	if (virt && (s->opts->msi == MSI_OPT_TRAP || iommu_ir_owned()))
		msi_trap_setup(acpi, vmx_env.cfg.eptp, io_a, io_b);
	else
		pr_info("msi: the guest programs its devices' MSI and MSI-X itself (%s)\n",
			virt ? "msi=pass" : "the partition model");
	/* The HPET's FSB delivery would send any message the guest names
	 * (issue 35 item 8): hidden, the page trapped where a timer has it. */
	if (virt)
		hpet_trap_setup(acpi, vmx_env.cfg.eptp, s->opts->hpet);
	nmi_root_hook = virq_nmi_in_root;
	timer_service_setup(s, virt);
	vmcs_config_print(&vmx_env.cfg);

	cpuid_policy_setup(&vmx_env.cfg, tiers, virt);
	vmx_env.tiers_ipi = tiers->ipi;
	vmx_env.aid = virt ? s->aid : NULL;
	gwalk_readable_end = paging_identity_end;   /* a guest walk never reads past the identity map */
	vmx_env.acpi = acpi;

	pr_info("hv: phase launch: the APs' vCPUs wait for the guest's SIPI, then the boot CPU's first VM entry\n");
	launch_all(&gb, s->post_work);
}
