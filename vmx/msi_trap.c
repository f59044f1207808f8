/* Trapped MSI and MSI-X at run time (msi_trap.h). */
#include "msi_trap.h"
#include "msi_trap_int.h"
#include "vioapic_trap.h"
#include "vcpu.h"
#include "vmcs_ops.h"
#include "virq.h"
#include "ept.h"
#include "ept_sync.h"
#include "ept_live.h"
#include "../pci/vmsi.h"
#include "../apic/vhpet.h"
#include "../pci/alias.h"
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

bool msi_trap_on;
spinlock_t msi_lock;                      /* the virtual state and the physical CONFIG_ADDRESS */
static uint64_t trap_eptp;
static struct vioapic_dom dom;
struct msi_trap_counts msi_counts;


struct msi_seg msi_segs[ACPI_MAX_MCFG + 1];     /* segment 0 without an entry, and every entry */
uint32_t msi_nsegs;

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
	if (!ept_live_unmap(trap_eptp, pa, len, msi_trap_on))
		return false;
	if (msi_trap_on) {
		msi_counts.late_pages++;
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
	msi_counts.gone_pages++;
}

/* The physical configuration space through a segment's ECAM (any offset,
 * any width); a bus outside its window reads all ones, a write there is
 * dropped. */
/* The MCFG: one ECAM base per bus range of a segment (acpi_mcfg_base). */
static const struct acpi_info *mcfg;
static uint32_t mcfg_reached;                /* bit k: mcfg_entry[k]'s window is mapped */

static uint64_t ecam_base(const struct msi_seg *g, uint16_t bdf)
{
	unsigned bus = bdf >> 8;
	int k = g->ecam && bus >= g->bus0 && bus <= g->bus1 ? acpi_mcfg_entry(mcfg, g->s.seg, (uint8_t)bus) : -1;
	return k >= 0 && (mcfg_reached >> k & 1) ? mcfg->mcfg_entry[k].base : 0;
}

static volatile uint8_t *ecam_at(const struct msi_seg *g, uint16_t bdf, uint16_t off)
{
	uint64_t base = ecam_base(g, bdf);
	return base ? (volatile uint8_t *)(uintptr_t)(base + ((uint64_t)bdf << 12) + (off & 0xfff)) : NULL;
}

static uint32_t ecam_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	volatile uint8_t *a = ecam_at(ctx, bdf, off);
	if (!a)
		return 0xffffffffu >> (32 - 8 * size);
	return size == 1 ? *a : size == 2 ? *(volatile uint16_t *)a : *(volatile uint32_t *)a;
}

static void ecam_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	volatile uint8_t *a = ecam_at(ctx, bdf, off);
	if (!a)
		return;
	if (size == 1)
		*a = (uint8_t)val;
	else if (size == 2)
		*(volatile uint16_t *)a = (uint16_t)val;
	else
		*(volatile uint32_t *)a = val;
}

/* The trap's arrays: the hypervisor's pages (zeroed; page_alloc stops the
 * boot when none is left). */
static void *hw_alloc(void *ctx, size_t bytes)
{
	(void)ctx;
	return page_alloc(ALIGN_UP(bytes ? bytes : 1, PAGE_SIZE) / PAGE_SIZE);
}

/* Where a table may lie: pci/vmsi.h's wall over the memory map and the
 * ranges the hypervisor claims (msi_trap_setup). */
static struct vmsi_claims claims;

static unsigned hw_place(void *ctx, uint64_t pa, uint64_t len)
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
	for (uint32_t k = 0; a && k < a->nmcfg; k++) {
		const struct acpi_mcfg *m = &a->mcfg_entry[k];
		room &= vmsi_claim(&claims, m->base + ((uint64_t)m->bus0 << 20), (uint64_t)(m->bus1 + 1u - m->bus0) << 20);
	}
	uint64_t hb[VHPET_HPTC_BLOCKS];
	for (unsigned k = 0, n = a && a->hpet_base ? vhpet_blocks(a->hpet_base, hb) : 0; k < n; k++)
		room &= vmsi_claim(&claims, hb[k] & ~0xfffull,    /* each 1 KiB block the HPTC can select; it may cross a page */
				   ALIGN_UP(hb[k] + VHPET_REGS, PAGE_SIZE) - (hb[k] & ~0xfffull));
	uint64_t base, len;
	for (uint32_t i = 0; iommu_regs_range(i, &base, &len); i++)
		room &= vmsi_claim(&claims, base, len);
	if (!room)
		pr_warn("msi: more claimed ranges than %u: the rest not checked against MSI-X tables\n", VMSI_MAX_CLAIMS);
}

/* Owned remapping: the IRTE written in the table of the function's
 * segment, the interrupt entry cache invalidated. */
static void hw_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	const struct msi_seg *g = ctx;
	iommu_irte_write(g->s.seg, index, e->lo, e->hi);
}

void msi_say_fn(char *b, size_t n, uint16_t seg, uint16_t bdf)
{
	if (seg)
		snprintf(b, n, "%04x:%02x:%02x.%u", seg, bdf >> 8, (bdf >> 3) & 31, bdf & 7u);
	else
		snprintf(b, n, "%02x:%02x.%u", bdf >> 8, (bdf >> 3) & 31, bdf & 7u);
}

/* The DRHD that remaps function f of segment g (-1: not known). */
static int unit_of_fn(struct msi_seg *g, const struct vmsi_fn *f)
{
	uint8_t bus, path[DMAR_MAX_PATH][2];
	uint32_t n = vmsi_fn_scope_path(&g->s, f, &bus, path, DMAR_MAX_PATH);
	return n ? iommu_unit_of_path(g->s.seg, bus, (const uint8_t(*)[2])path, n) : -1;
}

static void own_irtes(struct msi_seg *g, const struct vmsi_fn *f)
{
	if (g->dom.remap && f->irte != VMSI_NO_IRTE)
		iommu_irte_owner(g->s.seg, f->irte, (f->msi ? VMSI_MSI_IRTES : 0) + (f->msix ? f->nent : 0u), unit_of_fn(g, f));
}

static bool ecam_in(const struct msi_seg *g, uint16_t bdf)
{
	return ecam_base(g, bdf) != 0;
}
static uint64_t ecam_page_of(const struct msi_seg *g, uint16_t bdf) { return ecam_base(g, bdf) + ((uint64_t)bdf << 12); }

/* A function the scan did not see answered the guest (vmsi_seen, under
 * the lock): its IRTEs owned by its unit; its configuration page kept out
 * when trapped, else given back (present to present: no shootdown). */
static void hw_fn_seen(void *ctx, uint16_t bdf, const struct vmsi_fn *f)
{
	struct msi_seg *g = ctx;
	char name[24];
	msi_say_fn(name, sizeof name, g->s.seg, bdf);
	if (f) {
		own_irtes(g, f);
		pr_info("msi: %s: %s at the guest's first access: MSI at 0x%02x, MSI-X at 0x%02x (%u entries): trapped\n", name,
			f->pf ? "a VF found" : "a function hot-added", f->msi, f->msix, f->msix ? f->nent : 0);
		return;
	}
	if (g->s.untrapped > g->untrapped_said) {
		/* MSI or MSI-X, but the arrays sized at boot are full: not lost
		 * silently (hvstat: msi ... untrapped=). */
		g->untrapped_said = g->s.untrapped;
		pr_warn("msi: %s: MSI or MSI-X at the guest's first access, but the trap's room (%u functions, sized at boot) is full: not trapped, the guest programs it itself%s\n",
			name, g->s.fn_room, g->dom.remap ? "; with remapping owned its messages are blocked" : "");
	}
	if (ecam_in(g, bdf) && g->ecam_out && (g->ecam_out[bdf >> 3] & (1u << (bdf & 7)))) {
		g->ecam_out[bdf >> 3] &= (uint8_t)~(1u << (bdf & 7));
		if (trap_eptp)
			ept_live_restore(trap_eptp, ecam_page_of(g, bdf));
		g->ecam_given_back++;
	}
}

static bool ecam_is_out(const struct msi_seg *g, uint16_t bdf)
{
	return g->ecam_out && (g->ecam_out[bdf >> 3] & (1u << (bdf & 7)));
}

/* A function the trap follows answers at 'to' now (the guest renumbered a
 * bus, pci/bridge_write.c): its ECAM page is taken out of every CPU's view.
 * The old one stays out: whatever answers there later is found at its
 * first access (vmsi_seen), as a page without a function at boot is.
 * Through the ports nothing is trapped by page. */
static void hw_fn_moved(void *ctx, uint16_t from, uint16_t to)
{
	struct msi_seg *g = ctx;
	(void)from;
	if (!ecam_in(g, to) || !g->ecam_out || ecam_is_out(g, to))
		return;
	if (!trap_eptp || ept_live_unmap(trap_eptp, ecam_page_of(g, to), PAGE_SIZE, msi_trap_on)) {
		if (trap_eptp && msi_trap_on)
			ept_shootdown();
		g->ecam_out[to >> 3] |= (uint8_t)(1u << (to & 7));
		g->ecam_moved++;
	} else if (g->ecam_unfollowed++ == 0) {
		pr_warn("msi: segment %u: no room to trap %02x:%02x.%u's ECAM page: its accesses there not emulated (counted)\n",
			g->s.seg, to >> 8, (to >> 3) & 31, to & 7u);
	}
}

/* Segment 0 through the ports (the guest's mechanism #1 accesses). */
static const struct vmsi_hw hw = { hw_cfg_read, hw_cfg_write, hw_io_read, hw_io_write, hw_mem_read, hw_mem_write,
				   hw_table_at, hw_place, &msi_segs[0], hw_irte, hw_table_gone, hw_alloc, false, hw_fn_seen, NULL };

const struct vmsi_hw *msi_trap_hw(void)
{
	return &hw;
}

/* Segment 0's accesses through 0xCF8/0xCFC reach the same functions as
 * its ECAM (Linux's raw_pci_read/write take offsets below 256 of segment
 * 0 through mechanism #1 even where an MCFG names ECAM): the trap works on
 * them through the segment's own side, ECAM where there is one, so that a
 * PF's SR-IOV registers (0x100 and up) are read whole, a function first
 * met there is probed with its extended capabilities and a renumbering
 * moves ECAM pages (issue 43 item 4). */
const struct vmsi_hw *msi_trap_port_hw(void)
{
	return msi_nsegs ? &msi_segs[0].hw : &hw;
}

/* The segments from the MCFG: segment 0 first (its window, or the ports),
 * then each other entry. A window above the identity map is mapped
 * (uncached) in the hypervisor's own tables; one it cannot map is not
 * reached: its functions are not scanned, said. */
static void segments_fill(const struct acpi_info *a)
{
	if (msi_nsegs)
		return;
	msi_nsegs = 1;
	msi_segs[0].hw = hw;
	msi_segs[0].reached = true;
	mcfg = a;
	for (uint32_t k = 0; a && k < a->nmcfg; k++) {
		const struct acpi_mcfg *m = &a->mcfg_entry[k];
		/* One trap per segment (issue 43 item 8): a segment's later
		 * entries widen its bus range, each bus at the base of the first
		 * entry that covers it. */
		struct msi_seg *g = NULL;
		for (uint32_t j = 0; j < msi_nsegs && !g; j++)
			if (msi_segs[j].s.seg == m->seg && (msi_segs[j].ecam || (j == 0 && !msi_segs[0].ecam)))
				g = &msi_segs[j];
		bool again = g && g->ecam;
		if (!g)
			g = &msi_segs[msi_nsegs++];
		uint64_t lo = m->base + ((uint64_t)m->bus0 << 20), len = (uint64_t)(m->bus1 + 1u - m->bus0) << 20;
		bool reached = lo + len <= paging_identity_end || paging_map_mmio(lo, len);
		mcfg_reached |= reached ? 1u << k : 0;
		if (again) {
			if (!reached) {
				pr_warn("msi: segment %u: ECAM at 0x%llx (buses %u-%u) beyond the hypervisor's reach: those buses not scanned\n",
					m->seg, (unsigned long long)m->base, m->bus0, m->bus1);
				continue;
			}
			g->bus0 = m->bus0 < g->bus0 ? m->bus0 : g->bus0;
			g->bus1 = m->bus1 > g->bus1 ? m->bus1 : g->bus1;
			continue;
		}
		bool first0 = g == &msi_segs[0];
		g->s.seg = m->seg;
		g->ecam = m->base;
		g->bus0 = m->bus0;
		g->bus1 = m->bus1;
		g->reached = reached;
		if (!g->reached && first0) {
			g->ecam = 0;             /* segment 0 keeps the ports */
			g->reached = true;
			continue;
		}
		g->hw = (struct vmsi_hw){ ecam_cfg_read, ecam_cfg_write, hw_io_read, hw_io_write, hw_mem_read, hw_mem_write,
					  hw_table_at, hw_place, g, hw_irte, hw_table_gone, hw_alloc, true, hw_fn_seen, hw_fn_moved };
	}
}


uint32_t msi_trap_count(const struct acpi_info *acpi, char *why, size_t whylen)
{
	segments_fill(acpi);
	why[0] = 0;
	uint32_t most = 0;
	for (uint32_t k = 0; k < msi_nsegs; k++) {
		struct msi_seg *g = &msi_segs[k];
		if (!g->reached) {
			snprintf(why, whylen, "segment %u's ECAM at 0x%llx is beyond the hypervisor's reach: its functions not scanned",
				 g->s.seg, (unsigned long long)g->ecam);
			continue;
		}
		vmsi_count(&g->hw, &g->s.need);
		g->s.need_counted = true;       /* seg_setup's scan does not walk the buses again to count */
		uint32_t w = vmsi_irtes_wanted(&g->s.need);
		most = w > most ? w : most;
		pr_info("msi: segment %u (%s): %u function%s with MSI or MSI-X, %u MSI-X entries, %u table page%s; SR-IOV can add %u VF%s; %u IRTEs wanted with room\n",
			g->s.seg, g->ecam ? "ECAM" : "ports", g->s.need.fns, g->s.need.fns == 1 ? "" : "s", g->s.need.entries,
			g->s.need.pages, g->s.need.pages == 1 ? "" : "s", g->s.need.vfs, g->s.need.vfs == 1 ? "" : "s", w);
		/* The functions found must fit one table (2^16 entries, the
		 * IOAPICs' first); VFs past it are refused when enabled, said. */
		uint64_t found = g->s.need.irtes + (acpi ? acpi->nioapics * 256ull : 0);
		if (found > 65536 && !why[0])
			snprintf(why, whylen, "segment %u's functions want %llu IRTEs with the IOAPICs', a table holds 65536", g->s.seg,
				 (unsigned long long)found);
	}
	if (acpi && acpi->nmcfg_dropped && !why[0])
		snprintf(why, whylen, "%u MCFG entries past the %u kept: their functions not scanned", acpi->nmcfg_dropped, (unsigned)ACPI_MAX_MCFG);
	return most;
}

static const struct vmsi_hw *aid_scan(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem,
				      const struct vmsi_hw *h)
{
	claims_fill(acpi, mem);
	claims.boot = true;
	vmsi_scan(s, h);
	claims.boot = false;
	return h;
}

void msi_trap_scan(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem)
{
	aid_scan(s, acpi, mem, &hw);
}

const struct vmsi_hw *msi_trap_scan_seg0(struct vmsi *s, const struct acpi_info *acpi, const struct memmap *mem)
{
	segments_fill(acpi);
	return aid_scan(s, acpi, mem, &msi_segs[0].hw);
}

/* Segment g scanned and trapped: its functions' IRTEs owned by the unit
 * that remaps each, their configuration pages out of the EPT. */
static void seg_setup(struct msi_seg *g, uint64_t eptp)
{
	uint16_t seg = g->s.seg;
	g->dom = dom;
	if (dom.remap && iommu_msi_irte_count(seg)) {
		g->s.irte_base = iommu_msi_irte_base();
		g->s.irte_count = iommu_msi_irte_count(seg);
	} else if (dom.remap) {
		g->dom.remap = false;                /* no unit in this segment: nothing remaps its messages */
		pr_warn("msi: segment %u has no VT-d unit: its functions' MSIs in compatibility format, unremapped\n", seg);
	}
	claims.boot = true;                  /* a reserved range holding a boot table is an MMIO window */
	if (!vmsi_scan(&g->s, &g->hw))
		pr_warn("msi: segment %u: no memory for the trap's arrays\n", seg);
	claims.boot = false;
	g->untrapped_said = g->s.untrapped;  /* the boot's: said by msi_trap_setup */
	/* Each function's IRTEs: the unit that remaps it (the DMAR's scopes,
	 * walked down the bridges the scan saw) invalidates them alone. */
	for (uint32_t i = 0; i < g->s.nfn; i++)
		own_irtes(g, &g->s.fn[i]);
	if (!g->ecam)
		return;
	g->ecam_out = hw_alloc(NULL, 65536 / 8);
	struct ept_stats es = { 0 };
	for (uint32_t bdf = (uint32_t)g->bus0 << 8; bdf < ((uint32_t)g->bus1 + 1) << 8; bdf++) {
		if (!ecam_in(g, (uint16_t)bdf))
			continue;                /* a bus no MCFG entry of the segment covers (or one not reached) */
		bool absent = !g->s.seen || !(g->s.seen[bdf >> 3] & (1u << (bdf & 7)));
		if (!absent && !vmsi_find(&g->s, (uint16_t)bdf) && !vmsi_bridge_named(&g->s, (uint16_t)bdf, true))
			continue;
		ept_unmap_page(eptp, ecam_page_of(g, (uint16_t)bdf), &es);
		g->ecam_out[bdf >> 3] |= (uint8_t)(1u << (bdf & 7));
		if (absent)
			g->ecam_absent++;
		else
			g->necam++;
	}
	pr_info("msi: segment %u: ECAM at 0x%llx (buses %u-%u): the %u trapped functions' and bridges' pages and the %u without a function out of the EPT, the rest passes\n",
		seg, (unsigned long long)g->ecam, g->bus0, g->bus1, g->necam, g->ecam_absent);
}

void msi_trap_setup(const struct acpi_info *acpi, uint64_t eptp, uint8_t *io_a, uint8_t *io_b)
{
	/* The virtual IOAPIC's view of the vCPUs. With owned remapping
	 * (intremap=auto or on) each function takes IRTEs from its segment's
	 * table and the device gets the remappable format; else compatibility
	 * format, where a destination above 255 is refused, counted. */
	vioapic_dom_fill(&dom);
	trap_eptp = eptp;
	segments_fill(acpi);
	claims_fill(acpi, vmx_env.mem);
	for (uint32_t k = 0; k < msi_nsegs; k++)
		if (msi_segs[k].reached)
			seg_setup(&msi_segs[k], eptp);
	for (uint16_t p = PCI_CFG_ADDR; p < PCI_CFG_DATA + 4; p++)
		io_bitmap_set(io_a, io_b, p);
	msi_trap_on = true;
	ept_sync_enable();   /* before any vCPU runs: a table may move later */
	uint32_t nfn = 0, npages = 0, untrapped = 0;
	for (uint32_t k = 0; k < msi_nsegs; k++) {
		const struct msi_seg *g = &msi_segs[k];
		nfn += g->s.nfn, npages += g->s.npages, untrapped += g->s.untrapped;
		for (uint32_t i = 0; i < g->s.nfn; i++) {
			const struct vmsi_fn *f = &g->s.fn[i];
			char name[24], sid[24];
			msi_say_fn(name, sizeof name, g->s.seg, f->bdf);
			vmsi_alias_str(f->src, f->bdf, sid, sizeof sid);   /* a bridge's ID or buses: said */
			pr_info("msi: %s: MSI at 0x%02x, MSI-X at 0x%02x (%u entries, table 0x%llx%s): trapped%s%s\n", name, f->msi,
				f->msix, f->msix ? f->nent : 0, (unsigned long long)f->table_pa,
				f->msix && !f->ent ? ", no room: entries not emulated" : f->msix && !f->table_pa ? ", not placed" : "",
				sid[0] ? ", " : "", sid);
		}
	}
	pr_info("msi: trap on: ports 0xcf8-0xcff filtered, %u function%s with MSI or MSI-X in %u segment%s, %u table page%s out of the EPT\n",
		nfn, nfn == 1 ? "" : "s", msi_nsegs, msi_nsegs == 1 ? "" : "s", npages, npages == 1 ? "" : "s");
	/* What the trap does not cover, the guest programs itself; with
	 * remapping owned those compatibility-format messages are blocked. */
	const char *owned = dom.remap ? "; with remapping owned their messages are blocked (intremap=off keeps them working)" : "";
	if (untrapped)
		pr_warn("msi: %u more function%s with MSI or MSI-X past the room the scan sized: the guest programs them itself%s\n",
			untrapped, untrapped == 1 ? "" : "s", owned);
	for (uint32_t k = 0; k < msi_nsegs; k++)
		if (!msi_segs[k].reached)
			pr_warn("msi: segment %u: ECAM at 0x%llx beyond the hypervisor's reach: not scanned, the guest programs its functions' MSIs itself%s\n",
				msi_segs[k].s.seg, (unsigned long long)msi_segs[k].ecam, owned);
}

bool msi_trap_owns(uint16_t port)
{
	return msi_trap_on && port >= PCI_CFG_ADDR && port < PCI_CFG_DATA + 4;
}

uint32_t msi_trap_in(uint16_t port, unsigned size)
{
	spin_lock(&msi_lock);
	uint32_t v = vmsi_port_read(&msi_segs[0].s, msi_trap_port_hw(), port, size);
	spin_unlock(&msi_lock);
	return v;
}

/* The function a data-port access reaches (the guest's CONFIG_ADDRESS). */
static const struct vmsi_fn *cf8_fn(uint16_t port)
{
	struct vmsi *s = &msi_segs[0].s;
	if (port < PCI_CFG_DATA || !(s->cf8 & BIT(31)))
		return NULL;
	return vmsi_find(s, (uint16_t)(s->cf8 >> 8));   /* not a function moved away from that BDF */
}

/* Each route the device gets, and each refusal, said as it happens (the
 * first 32): what the hypervisor itself wrote into the device. */
static void say_route(uint16_t seg, const struct vmsi_fn *f, uint32_t routes, uint32_t refusals)
{
	static uint32_t said;
	if ((f->routes == routes && f->refusals == refusals) || said++ >= 32)
		return;
	char name[24];
	msi_say_fn(name, sizeof name, seg, f->bdf);
	if (f->refusals != refusals)
		pr_info("msi: %s: refused the guest's 0x%llx/0x%04x: %s\n", name, (unsigned long long)f->vaddr, f->vdata,
			vmsi_refusal_name(f->last_refusal));
	else
		pr_info("msi: %s: device programmed by the hypervisor: 0x%llx/0x%04x (vector 0x%02x to APIC ID %u) for the guest's 0x%llx/0x%04x\n",
			name, (unsigned long long)f->paddr, f->pdata, f->pdata & 0xff, (unsigned)(f->paddr >> 12) & 0xff,
			(unsigned long long)f->vaddr, f->vdata);
}

void msi_trap_out(uint16_t port, unsigned size, uint32_t val)
{
	spin_lock(&msi_lock);
	const struct vmsi_fn *f = cf8_fn(port);
	uint32_t routes = f ? f->routes : 0, refusals = f ? f->refusals : 0;
	vmsi_port_write(&msi_segs[0].s, &msi_segs[0].dom, msi_trap_port_hw(), port, size, val);
	if (f)
		say_route(0, f, routes, refusals);
	spin_unlock(&msi_lock);
}

/* The segment whose trapped configuration page (then *bdf, its function,
 * and *cfg true) or MSI-X table page gpa lies in; NULL: none. */
static struct msi_seg *trapped_at(uint64_t gpa, uint16_t *bdf, bool *cfg)
{
	for (uint32_t k = 0; k < msi_nsegs; k++) {
		struct msi_seg *g = &msi_segs[k];
		if (g->ecam_out && acpi_mcfg_bdf(mcfg, g->s.seg, gpa, bdf) && ecam_in(g, *bdf)) {
			*cfg = true;
			if (g->ecam_out[*bdf >> 3] & (1u << (*bdf & 7)))
				return g;
		}
		*cfg = false;
		if (vmsi_trapped(&g->s, gpa))
			return g;
	}
	return NULL;
}

bool msi_trap_exit(struct vcpu *v, uint64_t gpa)
{
	if (!msi_trap_on)
		return false;
	uint16_t bdf = 0;
	bool cfg = false;
	struct msi_seg *g = trapped_at(gpa, &bdf, &cfg);
	if (!g)
		return false;
	uint8_t b[MMIO_INSN_MAX];
	struct mmio_access a;
	const char *why = "not in 64-bit mode";
	bool long_mode = vmcs_read(VMCS_GUEST_CS_AR) & BIT(13);
	if (!long_mode || mmio_decode_width(b, vcpu_fetch_insn(b, MMIO_INSN_MAX), &a, &why) || (!cfg && a.size != 4 && (why = "MSI-X table: not 32 bits"))) {
		if (__atomic_fetch_add(&msi_counts.bad_insns, 1, __ATOMIC_RELAXED) == 0)
			pr_warn("msi: guest access at GPA 0x%llx (rip 0x%llx, cpu%u) not emulated: %s; #GP injected (counted, said once)\n",
				(unsigned long long)gpa, (unsigned long long)vmcs_read(VMCS_GUEST_RIP), v->index, why);
		vcpu_inject_exception(v, 13, true, 0);
		return true;
	}
	const struct mmio_insn *in = &a.in;
	uint32_t val = in->write ? (in->has_imm ? in->imm : mmio_extract(vcpu_reg(v, in->reg), &a)) : 0;
	uint16_t off = (uint16_t)(gpa & 0xfff);
	spin_lock(&msi_lock);
	if (cfg && (off & (a.size - 1))) {
		msi_counts.unaligned++;                     /* ECAM: naturally aligned accesses only; dropped, reads all ones */
		val = 0xffffffffu;
	} else if (cfg) {
		msi_counts.ecam_accesses++;
		const struct vmsi_fn *f = vmsi_find(&g->s, bdf);
		uint32_t routes = f ? f->routes : 0, refusals = f ? f->refusals : 0;
		if (in->write)
			vmsi_cfg_write(&g->s, &g->dom, &g->hw, bdf, off, a.size, val);
		else
			val = vmsi_cfg_read(&g->s, &g->hw, bdf, off, a.size);
		if (f)
			say_route(g->s.seg, f, routes, refusals);
	} else if (gpa & 3) {
		msi_counts.unaligned++;                     /* MSI-X: dword-aligned accesses only; dropped, reads 0 */
		val = 0;
	} else if (in->write) {
		vmsi_mem_write(&g->s, &g->dom, &g->hw, gpa, val);
	} else {
		val = vmsi_mem_read(&g->s, &g->hw, gpa);
	}
	spin_unlock(&msi_lock);
	if (!in->write)
		vcpu_set_reg(v, in->reg, mmio_merge(vcpu_reg(v, in->reg), &a, val));
	vcpu_skip_insn_len(v, in->len);
	return true;
}
