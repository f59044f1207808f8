/* Trapped MSI and MSI-X at run time (msi_trap.h). */
#include "msi_trap.h"
#include "vioapic_trap.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "virq.h"
#include "ept.h"
#include "ept_sync.h"
#include "ept_live.h"
#include "../apic/vmsi.h"
#include "../lib/dmar.h"
#include "../guest/gwalk.h"
#include "../guest/io.h"
#include "../guest/mmio_width.h"
#include "../iommu/iommu.h"
#include "../lib/acpi.h"
#include "../lib/cpu.h"
#include "../lib/memmap.h"
#include "../lib/paging.h"
#include "../lib/percpu.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"

static struct vmsi vs;
static bool on;
static spinlock_t lock;                      /* the virtual state and the physical CONFIG_ADDRESS */
static uint64_t trap_eptp;
static struct vioapic_dom dom;
static uint64_t bad_insns, unaligned, late_pages, gone_pages, ecam_accesses;
/* ECAM (MCFG, segment 0): each trapped function's 4 KiB page, out of the
 * EPT (PCI Express Base Specification, "Enhanced Configuration Access
 * Mechanism": bus 27:20, device 19:15, function 14:12 above the base). */
static uint64_t ecam_base;
static uint8_t ecam_bus0, ecam_bus1;
static uint32_t necam;
static uint64_t ecam_page[VMSI_MAX_FNS];
static uint16_t ecam_bdf[VMSI_MAX_FNS];

/* Mechanism #1 on the real ports: CONFIG_ADDRESS, then the data port's
 * byte lane for the access. */
static uint32_t hw_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	outl(PCI_CFG_ADDR, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	return port_in((uint16_t)(PCI_CFG_DATA + (off & 3)), size);
}

static void hw_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx;
	outl(PCI_CFG_ADDR, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	port_out((uint16_t)(PCI_CFG_DATA + (off & 3)), size, val);
}

static uint32_t hw_io_read(void *ctx, uint16_t port, unsigned size)
{
	(void)ctx;
	return port_in(port, size);
}

static void hw_io_write(void *ctx, uint16_t port, unsigned size, uint32_t val)
{
	(void)ctx;
	port_out(port, size, val);
}

static uint32_t hw_mem_read(void *ctx, uint64_t pa)
{
	(void)ctx;
	return *(volatile uint32_t *)(uintptr_t)pa;
}

static void hw_mem_write(void *ctx, uint64_t pa, uint32_t val)
{
	(void)ctx;
	*(volatile uint32_t *)(uintptr_t)pa = val;
}

/* A table's pages out of the EPT, all or none (within the run-time
 * budget of vmx/ept_live.h). At setup, before the guest runs; later (the
 * guest moved the BAR or enabled MSI-X) every CPU's EPT translations are
 * invalidated before this vCPU resumes (vmx/ept_sync.c): other vCPUs in
 * the guest are kicked out and waited for, under the trap's lock (a vCPU
 * waiting for the lock is in root mode: not waited for). */
static bool hw_table_at(void *ctx, uint64_t pa, uint32_t len)
{
	(void)ctx;
	/* Above the identity map (a 64-bit BAR in the high MMIO window): the
	 * table's pages mapped uncached in the hypervisor's own tables first,
	 * for the entries it writes and the rest of the page it passes. */
	if (!paging_map_mmio(pa, len))
		return false;
	if (!trap_eptp)
		return true;
	/* Beyond the EPT's identity map: the table's GiB mapped first, as the
	 * guest's first touch of it would (else a touch elsewhere in that GiB
	 * would map the table's pages back); a GiB that reads as absent
	 * memory (the shared sink) cannot hold a trapped page: no room. */
	for (uint64_t g = pa & ~(GIB(1) - 1); g < pa + len; g += GIB(1)) {
		bool absent = false;
		if (g >= vmx_env.ept_end && (g >= vmx_env.gpa_limit || memmap_type_at(vmx_env.mem, g) == MEM_HV))
			return false;
		if (g >= vmx_env.ept_end)
			ept_live_late(trap_eptp, vmx_env.mem, vmx_env.mtrr, vmx_env.caps, g, &absent);
		if (absent)
			return false;
	}
	if (!ept_live_unmap(trap_eptp, pa, len, on))
		return false;
	if (on) {
		late_pages++;
		ept_shootdown();
	}
	return true;
}

/* A page no table covers any more: the guest's again (not present to
 * present: no shootdown). */
static void hw_table_gone(void *ctx, uint64_t pg)
{
	(void)ctx;
	if (trap_eptp)
		ept_live_restore(trap_eptp, pg);
	gone_pages++;
}

/* The physical configuration space through ECAM (any offset, any width). */
static uint32_t ecam_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	uintptr_t a = (uintptr_t)(ecam_base + ((uint64_t)((bdf >> 8) - ecam_bus0) << 20) + ((uint64_t)(bdf & 0xff) << 12) + off);
	return size == 1 ? *(volatile uint8_t *)a : size == 2 ? *(volatile uint16_t *)a : *(volatile uint32_t *)a;
}

static void ecam_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx;
	uintptr_t a = (uintptr_t)(ecam_base + ((uint64_t)((bdf >> 8) - ecam_bus0) << 20) + ((uint64_t)(bdf & 0xff) << 12) + off);
	if (size == 1)
		*(volatile uint8_t *)a = (uint8_t)val;
	else if (size == 2)
		*(volatile uint16_t *)a = (uint16_t)val;
	else
		*(volatile uint32_t *)a = val;
}

/* Where a table may lie: apic/vmsi.h's wall over the memory map and the
 * ranges the hypervisor claims (msi_trap_setup). */
static struct vmsi_claims claims;

static unsigned hw_place(void *ctx, uint64_t pa, uint32_t len)
{
	(void)ctx;
	return vmsi_place_judge(&claims, pa, len);
}

/* The claimed ranges: the local APICs' page and the whole 0xFEExxxxx
 * interrupt-message range, every IOAPIC, ECAM, the HPET, each VT-d unit's
 * registers. */
static void claims_fill(const struct acpi_info *a, const struct memmap *mem)
{
	claims.mem = mem;
	claims.n = 0;
	vmsi_claims_reach(&claims, paging_phys_bits(), PAGING_MMIO_REACH);
	bool room = vmsi_claim(&claims, 0xfee00000u, MIB(1));
	if (a && a->lapic_addr)
		room &= vmsi_claim(&claims, a->lapic_addr & ~0xfffull, PAGE_SIZE);
	for (uint32_t k = 0; a && k < a->nioapics; k++)
		room &= vmsi_claim(&claims, a->ioapic[k].addr & ~0xfffull, PAGE_SIZE);
	if (a && a->mcfg_base)
		room &= vmsi_claim(&claims, a->mcfg_base, (uint64_t)(a->mcfg_bus_end + 1u - a->mcfg_bus_start) << 20);
	if (a && a->hpet_base)
		room &= vmsi_claim(&claims, a->hpet_base & ~0xfffull,    /* its 1 KiB block may cross a page */
				   ALIGN_UP(a->hpet_base + 0x400, PAGE_SIZE) - (a->hpet_base & ~0xfffull));
	uint64_t base, len;
	for (uint32_t i = 0; iommu_regs_range(i, &base, &len); i++)
		room &= vmsi_claim(&claims, base, len);
	if (!room)
		pr_warn("msi: more claimed ranges than %u: the rest not checked against MSI-X tables\n", VMSI_MAX_CLAIMS);
}

/* Owned remapping: the IRTE written, the interrupt entry cache invalidated. */
static void hw_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	(void)ctx;
	iommu_irte_write(index, e->lo, e->hi);
}

static const struct vmsi_hw ecam_hw = { ecam_cfg_read, ecam_cfg_write, hw_io_read, hw_io_write, hw_mem_read, hw_mem_write,
					hw_table_at, hw_place, NULL, hw_irte, hw_table_gone };

static const struct vmsi_hw hw = { hw_cfg_read, hw_cfg_write, hw_io_read, hw_io_write, hw_mem_read, hw_mem_write,
				   hw_table_at, hw_place, NULL, hw_irte, hw_table_gone };

const struct vmsi_hw *msi_trap_hw(void)
{
	return &hw;
}

void msi_trap_scan(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem)
{
	claims_fill(acpi, mem);
	claims.boot = true;
	vmsi_scan(s, &hw);
	claims.boot = false;
}

void msi_trap_setup(const struct acpi_info *acpi, uint64_t eptp, uint8_t *io_a, uint8_t *io_b)
{
	/* The virtual IOAPIC's view of the vCPUs. With owned remapping
	 * (intremap=auto or on) each function takes IRTEs from the hypervisor's table
	 * and the device gets the remappable format; else compatibility
	 * format, where a destination above 255 is refused, counted. */
	vioapic_dom_fill(&dom);
	if (dom.remap) {
		vs.irte_base = iommu_msi_irte_base();
		vs.irte_count = IOMMU_MSI_IRTES;
	}
	trap_eptp = eptp;
	claims_fill(acpi, vmx_env.mem);
	claims.boot = true;                  /* a reserved range holding a boot table is an MMIO window */
	vmsi_scan(&vs, &hw);
	claims.boot = false;
	/* Each function's IRTEs: the unit that remaps it (the DMAR's scopes,
	 * walked down the bridges the scan saw) invalidates them alone. */
	for (uint32_t i = 0; dom.remap && i < vs.nfn; i++) {
		const struct vmsi_fn *f = &vs.fn[i];
		uint8_t bus, path[DMAR_MAX_PATH][2];
		uint32_t n = vmsi_scope_path(&vs, f->bdf, &bus, path, DMAR_MAX_PATH);
		if (f->irte != VMSI_NO_IRTE)
			iommu_irte_owner(f->irte, (f->msi ? VMSI_MSI_IRTES : 0) + (f->msix ? f->nent : 0u),
					 n ? iommu_unit_of_path(bus, (const uint8_t(*)[2])path, n) : -1);
	}
	for (uint16_t p = PCI_CFG_ADDR; p < PCI_CFG_DATA + 4; p++)
		io_bitmap_set(io_a, io_b, p);
	on = true;
	ept_sync_enable();   /* before any vCPU runs: a table may move later */
	if (acpi && acpi->mcfg_base) {
		ecam_base = acpi->mcfg_base;
		ecam_bus0 = acpi->mcfg_bus_start;
		ecam_bus1 = acpi->mcfg_bus_end;
		struct ept_stats es = { 0 };
		for (uint32_t i = 0; i < vs.nfn; i++) {
			uint16_t bdf = vs.fn[i].bdf;
			if ((bdf >> 8) < ecam_bus0 || (bdf >> 8) > ecam_bus1)
				continue;
			uint64_t pg = ecam_base + ((uint64_t)((bdf >> 8) - ecam_bus0) << 20) + ((uint64_t)(bdf & 0xff) << 12);
			ept_unmap_page(eptp, pg, &es);
			ecam_bdf[necam] = bdf;
			ecam_page[necam++] = pg;
		}
		pr_info("msi: ECAM at 0x%llx (buses %u-%u): the %u trapped functions' pages out of the EPT, the rest passes\n",
			(unsigned long long)ecam_base, ecam_bus0, ecam_bus1, necam);
	}
	for (uint32_t i = 0; i < vs.nfn; i++) {
		const struct vmsi_fn *f = &vs.fn[i];
		pr_info("msi: %02x:%02x.%u: MSI at 0x%02x, MSI-X at 0x%02x (%u entries, table 0x%llx%s): trapped\n",
			f->bdf >> 8, (f->bdf >> 3) & 31, f->bdf & 7, f->msi, f->msix, f->msix ? f->nent : 0,
			(unsigned long long)f->table_pa, f->msix && !f->ent ? ", no room: entries not emulated" :
			f->msix && !f->table_pa ? ", not placed" : "");
	}
	pr_info("msi: trap on: ports 0xcf8-0xcff filtered, %u function%s with MSI or MSI-X, %u table page%s out of the EPT\n",
		vs.nfn, vs.nfn == 1 ? "" : "s", vs.npages, vs.npages == 1 ? "" : "s");
	/* What the trap does not cover, the guest programs itself; with
	 * remapping owned those compatibility-format messages are blocked. */
	const char *owned = dom.remap ? "; with remapping owned their messages are blocked (intremap=off keeps them working)" : "";
	if (vs.untrapped)
		pr_warn("msi: %u more function%s with MSI or MSI-X past the %u trapped (VMSI_MAX_FNS): the guest programs them itself%s\n",
			vs.untrapped, vs.untrapped == 1 ? "" : "s", VMSI_MAX_FNS, owned);
	if (acpi && acpi->mcfg_other_segments)
		pr_warn("msi: %u PCI segment%s other than 0 in the MCFG: not scanned, the guest programs their functions' MSIs itself%s\n",
			acpi->mcfg_other_segments, acpi->mcfg_other_segments == 1 ? "" : "s", owned);
}

bool msi_trap_owns(uint16_t port)
{
	return on && port >= PCI_CFG_ADDR && port < PCI_CFG_DATA + 4;
}

uint32_t msi_trap_in(uint16_t port, unsigned size)
{
	spin_lock(&lock);
	uint32_t v = vmsi_port_read(&vs, &hw, port, size);
	spin_unlock(&lock);
	return v;
}

/* The function a data-port access reaches (the guest's CONFIG_ADDRESS). */
static const struct vmsi_fn *cf8_fn(uint16_t port)
{
	if (port < PCI_CFG_DATA || !(vs.cf8 & BIT(31)))
		return NULL;
	for (uint32_t i = 0; i < vs.nfn; i++)
		if (vs.fn[i].bdf == (uint16_t)(vs.cf8 >> 8))
			return &vs.fn[i];
	return NULL;
}

/* Each route the device gets, and each refusal, said as it happens (the
 * first 32): what the hypervisor itself wrote into the device. */
static void say_route(const struct vmsi_fn *f, uint32_t routes, uint32_t refusals)
{
	static uint32_t said;
	if ((f->routes == routes && f->refusals == refusals) || said++ >= 32)
		return;
	if (f->refusals != refusals)
		pr_info("msi: %02x:%02x.%u: refused the guest's 0x%llx/0x%04x: %s\n", f->bdf >> 8, (f->bdf >> 3) & 31,
			f->bdf & 7, (unsigned long long)f->vaddr, f->vdata, vmsi_refusal_name(f->last_refusal));
	else
		pr_info("msi: %02x:%02x.%u: device programmed by the hypervisor: 0x%llx/0x%04x (vector 0x%02x to APIC ID %u) for the guest's 0x%llx/0x%04x\n",
			f->bdf >> 8, (f->bdf >> 3) & 31, f->bdf & 7, (unsigned long long)f->paddr, f->pdata, f->pdata & 0xff,
			(unsigned)(f->paddr >> 12) & 0xff, (unsigned long long)f->vaddr, f->vdata);
}

void msi_trap_out(uint16_t port, unsigned size, uint32_t val)
{
	spin_lock(&lock);
	const struct vmsi_fn *f = cf8_fn(port);
	uint32_t routes = f ? f->routes : 0, refusals = f ? f->refusals : 0;
	vmsi_port_write(&vs, &dom, &hw, port, size, val);
	if (f)
		say_route(f, routes, refusals);
	spin_unlock(&lock);
}

static int ecam_index(uint64_t gpa)
{
	for (uint32_t i = 0; i < necam; i++)
		if (ecam_page[i] == (gpa & ~0xfffull))
			return (int)i;
	return -1;
}

bool msi_trap_exit(struct vcpu *v, uint64_t gpa)
{
	if (!on)
		return false;
	int e = ecam_index(gpa);
	if (e < 0 && !vmsi_trapped(&vs, gpa))
		return false;
	uint8_t b[MMIO_INSN_MAX];
	struct mmio_access a;
	const char *why = "not in 64-bit mode";
	bool long_mode = vmcs_read(VMCS_GUEST_CS_AR) & BIT(13);
	if (!long_mode || mmio_decode_width(b, vcpu_fetch_insn(b, MMIO_INSN_MAX), &a, &why) || (e < 0 && a.size != 4 && (why = "MSI-X table: not 32 bits"))) {
		if (__atomic_fetch_add(&bad_insns, 1, __ATOMIC_RELAXED) == 0)
			pr_warn("msi: guest access at GPA 0x%llx (rip 0x%llx, cpu%u) not emulated: %s; #GP injected (counted, said once)\n",
				(unsigned long long)gpa, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index, why);
		vcpu_inject_exception(v, 13, true, 0);
		return true;
	}
	const struct mmio_insn *in = &a.in;
	uint32_t val = in->write ? (in->has_imm ? in->imm : mmio_extract(vcpu_reg(v, in->reg), &a)) : 0;
	uint16_t off = (uint16_t)(gpa & 0xfff);
	spin_lock(&lock);
	if (e >= 0 && (off & (a.size - 1))) {
		unaligned++;                     /* ECAM: naturally aligned accesses only; dropped, reads all ones */
		val = 0xffffffffu;
	} else if (e >= 0) {
		ecam_accesses++;
		if (in->write)
			vmsi_cfg_write(&vs, &dom, &ecam_hw, ecam_bdf[e], off, a.size, val);
		else
			val = vmsi_cfg_read(&vs, &ecam_hw, ecam_bdf[e], off, a.size);
	} else if (gpa & 3) {
		unaligned++;                     /* MSI-X: dword-aligned accesses only; dropped, reads 0 */
		val = 0;
	} else if (in->write) {
		vmsi_mem_write(&vs, &dom, &hw, gpa, val);
	} else {
		val = vmsi_mem_read(&vs, &hw, gpa);
	}
	spin_unlock(&lock);
	if (!in->write)
		vcpu_set_reg(v, in->reg, mmio_merge(vcpu_reg(v, in->reg), &a, val));
	vmcs_write(VMCS_GUEST_RIP, vmcs_read(VMCS_GUEST_RIP) + in->len);
	uint64_t intr = vmcs_read(VMCS_GUEST_INTERRUPTIBILITY);
	if (intr & 3)
		vmcs_write(VMCS_GUEST_INTERRUPTIBILITY, intr & ~3ull);
	vmcs_sync_pending_bs();
	return true;
}

void msi_trap_report(void)
{
	if (!on)
		return;
	spin_lock(&lock);
	char line[256];
	size_t n = 0;
	for (unsigned r = 1; r < VM_COUNT; r++)
		if (vs.refused_by[r] && n < sizeof line)
			n += (size_t)snprintf(line + n, sizeof line - n, " %s=%u", vmsi_refusal_name(r), vs.refused_by[r]);
	struct ept_sync_stats es = ept_sync_stats();
	pr_info("hvstat: msi functions=%u cfg_emulated=%llu cfg_passed=%llu ecam=%llu table=%llu bad_insns=%llu unaligned=%llu late_pages=%llu pages_now=%u gone_pages=%llu stray=%llu ept_tables=%llu ept_refused=%llu shootdowns=%llu kicks=%llu unanswered=%llu%s%s\n",
		vs.nfn, (unsigned long long)vs.cfg_emulated, (unsigned long long)vs.cfg_passed,
		(unsigned long long)ecam_accesses, (unsigned long long)vs.table_accesses, (unsigned long long)bad_insns, (unsigned long long)unaligned,
		(unsigned long long)late_pages, vs.npages, (unsigned long long)gone_pages, (unsigned long long)vs.stray,
		(unsigned long long)ept_live_tables(), (unsigned long long)ept_live_refused(), (unsigned long long)es.shootdowns, (unsigned long long)es.kicks,
		(unsigned long long)es.timeouts, n ? " refusals" : "", n ? line : "");
	for (uint32_t i = 0; i < vs.nfn; i++) {
		const struct vmsi_fn *f = &vs.fn[i];
		if (!f->writes)
			continue;                /* never programmed: nothing to say */
		bool x = f->msix && (f->msix_ctl & BIT(15));
		unsigned vecs = x ? f->nent : 1u << ((f->msi_ctl >> 4) & 7);
		char irte[16] = "-";
		if (f->routes && f->reach.mode != VMODE_DIRECT && f->irte != VMSI_NO_IRTE)
			snprintf(irte, sizeof irte, "%u", f->irte);
		pr_info("hvstat: msi %02x:%02x.%u cap=%s vectors=%u now=%s guest=0x%llx/0x%04x phys=0x%llx/0x%04x route=%s irte=%s vcpu=%d host=0x%x routed=%u refused=%u parked=%u vector=0x%02x\n",
			f->bdf >> 8, (f->bdf >> 3) & 31, f->bdf & 7, x ? "msix" : (f->msi_ctl & 1) ? "msi" : "off", vecs,
			vmsi_refusal_name(f->last_refusal), (unsigned long long)f->vaddr, f->vdata, (unsigned long long)f->paddr,
			f->pdata, f->routes ? vioapic_mode_names[f->reach.mode] : "none", irte, f->routes ? f->reach.vcpu : -1,
			f->reach.host_id, f->routes, f->refusals, f->parks, f->vdata & 0xff);
	}
	spin_unlock(&lock);
}
