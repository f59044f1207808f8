/* iommutest=1's trapped-MSI check (msi_edutest.h). */
#include "msi_edutest.h"
#include "../vmx/msi_trap.h"
#include "../apic/lapic.h"
#include "../pci/vmsi.h"
#include "../pci/alias.h"
#include "edutest.h"
#include "../iommu/iommu.h"
#include "../lib/acpi.h"
#include "../lib/cpu.h"
#include "../lib/paging.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define WAIT_US 100000

static struct vmsi vs;
static struct vioapic_dom dom;
static uint32_t gid[2], hid[2];

/* The guest's side: mechanism #1, CONFIG_ADDRESS then the data port's
 * lane, as Linux's pci_conf1_read/write do it. */
static void g_wr(uint16_t bdf, unsigned off, unsigned size, uint32_t v)
{
	const struct vmsi_hw *hw = msi_trap_hw();
	vmsi_port_write(&vs, &dom, hw, PCI_CFG_ADDR, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	vmsi_port_write(&vs, &dom, hw, (uint16_t)(PCI_CFG_DATA + (off & 3)), size, v);
}
static uint32_t g_rd(uint16_t bdf, unsigned off, unsigned size)
{
	const struct vmsi_hw *hw = msi_trap_hw();
	vmsi_port_write(&vs, &dom, hw, PCI_CFG_ADDR, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	return vmsi_port_read(&vs, hw, (uint16_t)(PCI_CFG_DATA + (off & 3)), size);
}
static uint32_t real(uint16_t bdf, unsigned off, unsigned size)
{
	const struct vmsi_hw *hw = msi_trap_hw();
	return hw->cfg_read(hw->ctx, bdf, (uint16_t)off, size);
}

/* Linux's MSI programming (__pci_write_msi_msg, then the enable): address,
 * upper address, data with MSI disabled, then message control. */
static void guest_program(uint16_t bdf, unsigned cap, uint32_t addr, uint16_t data)
{
	uint16_t ctl = (uint16_t)g_rd(bdf, cap + 2, 2);
	g_wr(bdf, cap + 2, 2, ctl & ~1u);
	g_wr(bdf, cap + 4, 4, addr);
	g_wr(bdf, cap + 8, 4, 0);
	g_wr(bdf, cap + 12, 2, data);
	g_wr(bdf, cap + 2, 2, (ctl & ~0x70u) | 1);
}

static bool one(const char *what, bool (*requested)(uint8_t), uint16_t bdf, unsigned cap, uint32_t gaddr, uint16_t gdata,
		const char *want_route, uint32_t want_paddr, bool want_arrival)
{
	guest_program(bdf, cap, gaddr, gdata);
	const struct vmsi_fn *f = vmsi_find(&vs, bdf);
	const char *route = f ? vmsi_refusal_name(f->last_refusal) : "?";
	uint32_t ra = real(bdf, cap + 4, 4), rd = real(bdf, cap + 12, 2), rc = real(bdf, cap + 2, 2);
	uint32_t ga = g_rd(bdf, cap + 4, 4), gc = g_rd(bdf, cap + 2, 2);
	bool regs = want_paddr ? (ra == want_paddr && rd == gdata && (rc & 1)) : !(rc & 1);
	iommu_edu_raise();
	bool got = iommu_vector_arrives(requested, (uint8_t)gdata, WAIT_US);
	bool ok = !strcmp(route, want_route) && regs && ga == gaddr && (gc & 1) && got == want_arrival;
	pr_info("iommutest: msi-trap %s: guest 0x%x/0x%04x -> %s, device 0x%x/0x%04x control 0x%04x (guest reads 0x%x control 0x%04x); vector 0x%02x %s (want %s): %s\n",
		what, gaddr, gdata, route, ra, rd, rc, ga, gc, gdata & 0xff, got ? "arrived" : "did not arrive",
		want_arrival ? "arrival" : "none", ok ? "ok" : "FAIL");
	return ok;
}

/* The tables the scan found above the identity map: placed (trapped), the
 * device's entries read through lib/paging.c's uncached mapping (the scan
 * left each masked: vector control bit 0 set), the rest of the page passed
 * to the device. True when every such table was placed. */
static bool msix_high(void)
{
	const struct vmsi_hw *hw = msi_trap_hw();
	bool ok = true;
	unsigned seen = 0;
	for (uint32_t i = 0; i < vs.nfn; i++) {
		const struct vmsi_fn *f = &vs.fn[i];
		uint64_t bar = 0;
		unsigned bir = f->msix_table & 7;
		if (!f->msix || bir > 5)
			continue;
		uint32_t lo = hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(0x10 + 4 * bir), 4);
		bar = lo & ~0xfull;
		if ((lo & 7) == 4 && bir < 5)
			bar |= (uint64_t)hw->cfg_read(hw->ctx, f->bdf, (uint16_t)(0x14 + 4 * bir), 4) << 32;
		uint64_t want = bar + (f->msix_table & ~7u);
		if (!bar || want < paging_identity_end)
			continue;
		seen++;
		bool placed = f->table_pa == want && vmsi_trapped(&vs, want);
		uint32_t ctrl = placed ? hw->mem_read(hw->ctx, want + 12) : 0;
		bool one_ok = placed && (ctrl & 1) && f->ent;
		ok &= one_ok;
		if (placed)
			pr_info("iommutest: msix-high: %02x:%02x.%u MSI-X table 0x%llx (BAR%u 0x%llx, %u entries) above the identity map's end 0x%llx: placed, trapped, entry 0 vector control 0x%x through the uncached mapping: %s\n",
				f->bdf >> 8, (f->bdf >> 3) & 31, f->bdf & 7, (unsigned long long)want, bir, (unsigned long long)bar,
				f->nent, (unsigned long long)paging_identity_end, ctrl, one_ok ? "ok" : "FAIL");
		else
			pr_info("iommutest: msix-high: %02x:%02x.%u MSI-X table 0x%llx (BAR%u 0x%llx, %u entries) above the identity map's end 0x%llx: refused (%s), the device's MSI-X off: FAIL\n",
				f->bdf >> 8, (f->bdf >> 3) & 31, f->bdf & 7, (unsigned long long)want, bir, (unsigned long long)bar,
				f->nent, (unsigned long long)paging_identity_end, vmsi_refusal_name(f->last_refusal));
	}
	if (!seen)
		pr_info("iommutest: msix-high: no MSI-X table above the identity map's end 0x%llx\n",
			(unsigned long long)paging_identity_end);
	return ok;
}

bool msi_edutest(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id)
{
	uint16_t bdf;
	if (!iommu_edu_locate(&bdf))
		return false;
	/* One vCPU whose guest APIC ID (5) is not this CPU's: the route must
	 * translate. The hypervisor's vectors 0xf0-0xfe. */
	gid[0] = 5;
	hid[0] = apic_id;
	dom = (struct vioapic_dom){ .apic_id = gid, .host_apic_id = hid, .n = 1, .guest_x2apic = true };
	dom.host_vectors[3] = 0x7fffull << 48;
	msi_trap_scan(&vs, acpi, mem);
	bool high_ok = msix_high();
	const struct vmsi_fn *edu = vmsi_find(&vs, bdf);
	unsigned cap = edu ? edu->msi : 0;
	pr_info("iommutest: msi-trap: %u functions with MSI or MSI-X found by the scan; edu's MSI at 0x%x\n", vs.nfn, cap);
	if (!cap || apic_id > 255) {
		pr_err("iommutest: msi-trap: edu's MSI capability not found (or APIC ID %u above 255): FAIL\n", apic_id);
		return false;
	}
	/* The pass-through: every offset and width of edu's space outside its
	 * MSI registers (message control to data, 64-bit capable: +2..+0xF),
	 * and of a function that does not exist, reads through the filter as
	 * the device answers it directly. */
	uint32_t diffs = 0, reads = 0;
	for (unsigned k = 0; k < 2; k++) {
		uint16_t b = k ? (uint16_t)0xfef8 : bdf;           /* bus 0xfe device 31: nothing there */
		for (unsigned off = 0; off < 256; off++)
			for (unsigned size = 1; size <= 4; size *= 2) {
				if ((off & 3) + size > 4 || (!k && off + size > cap + 2 && off < cap + 0x10))
					continue;
				reads++;
				diffs += g_rd(b, off, size) != real(b, off, size);
			}
	}
	bool ok = diffs == 0 && g_rd(0xfef8, 0, 4) == 0xffffffffu;
	pr_info("iommutest: msi-trap pass-through: %u reads of edu and of an absent function, every offset and width: %u differ: %s\n",
		reads, diffs, ok ? "ok" : "FAIL");
	uint32_t want = 0xfee00000u | apic_id << 12;
	ok &= one("routed (guest APIC ID 5 -> this CPU)", requested, bdf, cap, 0xfee05000u, 0x006a, "routed", want, true);
	ok &= one("vector 0xef (a device's)", requested, bdf, cap, 0xfee05000u, 0x00ef, "routed", want, true);
	ok &= one("refused SMI (left disabled)", requested, bdf, cap, 0xfee05000u, 0x026b, "smi", 0, false);
	ok &= one("refused vector 0xf1 (the hypervisor's)", requested, bdf, cap, 0xfee05000u, 0x00f1, "vector_of_hypervisor", 0, false);
	ok &= one("refused vector 0xff (in the hypervisor's class)", requested, bdf, cap, 0xfee05000u, 0x00ff,
		  "vector_in_hypervisor_class", 0, false);
	ok &= one("refused: no vCPU has APIC ID 6", requested, bdf, cap, 0xfee06000u, 0x006c, "no_vcpu", 0, false);
	guest_program(bdf, cap, 0xfee05000u, 0x006d);
	g_wr(bdf, cap + 2, 2, g_rd(bdf, cap + 2, 2) & ~1u);   /* the guest disables it: the device must too */
	ok &= !(real(bdf, cap + 2, 2) & 1);
	ok &= high_ok;
	pr_info("iommutest: msi-trap: %s (refusals: smi=%u vector_of_hypervisor=%u vector_in_hypervisor_class=%u no_vcpu=%u)\n",
		ok ? "all ok" : "FAIL", vs.refused_by[VR_SMI], vs.refused_by[VR_VECTOR_HOST], vs.refused_by[VR_VECTOR_HOST_CLASS],
		vs.refused_by[VR_NO_VCPU]);
	return ok;
}

/* One remapped check: the guest's programming, the device's remappable
 * address (handle = the function's first IRTE, data 0), the IRTE's
 * destination, and whether the vector arrives here. */
static bool one_ir(const char *what, bool (*requested)(uint8_t), uint16_t bdf, unsigned cap, uint32_t gaddr,
		   uint16_t gdata, const char *want_route, uint32_t want_dest, bool want_arrival)
{
	guest_program(bdf, cap, gaddr, gdata);
	const struct vmsi_fn *f = vmsi_find(&vs, bdf);
	const char *route = vmsi_refusal_name(f->last_refusal);
	uint32_t ra = real(bdf, cap + 4, 4), rd = real(bdf, cap + 12, 2), rc = real(bdf, cap + 2, 2);
	uint32_t handle = f->irte;
	uint32_t want_addr = 0xfee00000u | (handle & 0x7fff) << 5 | BIT(4) | ((handle & 0x8000) ? BIT(2) : 0);
	bool routed = !strcmp(want_route, "routed");
	bool regs = routed ? (ra == want_addr && rd == 0 && (rc & 1)) : !(rc & 1);
	uint32_t dest = iommu_irte_dest(0, handle);
	bool irte_ok = routed ? dest == want_dest : !iommu_irte_present(0, handle);
	iommu_edu_raise();
	bool got = iommu_vector_arrives(requested, (uint8_t)gdata, WAIT_US);
	bool ok = !strcmp(route, want_route) && regs && irte_ok && got == want_arrival;
	pr_info("iommutest: msi-ir %s: guest 0x%x/0x%04x -> %s, device 0x%x/0x%04x control 0x%04x, IRTE %u %s dest 0x%x; vector 0x%02x %s (want %s): %s\n",
		what, gaddr, gdata, route, ra, rd, rc, handle, iommu_irte_present(0, handle) ? "present" : "not present", dest,
		gdata & 0xff, got ? "arrived" : "did not arrive", want_arrival ? "arrival" : "none", ok ? "ok" : "FAIL");
	return ok;
}

bool msi_edutest_ir(const struct acpi_info *acpi, bool (*requested)(uint8_t vector), uint32_t apic_id)
{
	uint16_t bdf;
	if (!iommu_edu_locate(&bdf) || !iommu_ir_owned()) {
		pr_err("iommutest: msi-ir: %s: FAIL\n", iommu_ir_owned() ? "no edu device" : "interrupt remapping not owned");
		return false;
	}
	uint32_t far = 0;
	for (uint32_t i = 0; i < acpi->ncpus && !far; i++)
		if (acpi->cpu[i].apic_id > 255)
			far = acpi->cpu[i].apic_id;
	/* vCPU 0: guest APIC ID 5 on this CPU; vCPU 1: guest APIC ID 0x100
	 * (written through MSI_EXT_DEST_ID) on the far CPU. */
	gid[0] = 5;
	hid[0] = apic_id;
	gid[1] = 0x100;
	hid[1] = far;
	dom = (struct vioapic_dom){ .apic_id = gid, .host_apic_id = hid, .n = far ? 2 : 1, .guest_x2apic = true,
				    .remap = true, .eim = iommu_ir_eim(), .ext_dest = true };
	dom.host_vectors[3] = 0x7fffull << 48;
	memset(&vs, 0, sizeof vs);
	vs.irte_base = iommu_msi_irte_base();
	vs.irte_count = iommu_msi_irte_count(0);
	vmsi_scan(&vs, msi_trap_hw());
	const struct vmsi_fn *f = vmsi_find(&vs, bdf);
	if (!f || !f->msi || f->irte == VMSI_NO_IRTE) {
		pr_err("iommutest: msi-ir: edu's MSI capability or its IRTEs not found: FAIL\n");
		return false;
	}
	char sid[24];
	vmsi_alias_str(f->src, bdf, sid, sizeof sid);
	pr_info("iommutest: msi-ir: edu %02x:%02x.%u, MSI at 0x%x, IRTEs from %u, source check %s; vCPU 0 on APIC ID %u%s\n",
		bdf >> 8, (bdf >> 3) & 31, bdf & 7, f->msi, f->irte, sid[0] ? sid : "its own ID", apic_id,
		far ? "" : " (no CPU above APIC ID 255)");
	bool ok = one_ir("to-this-cpu", requested, bdf, f->msi, 0xfee05000u, 0x006e, "routed", apic_id, true);
	uint64_t hi = iommu_irte_hi(0, f->irte);   /* VT-d "Interrupt Remapping Table Entry (IRTE)": 83:82, 81:80, 79:64 */
	pr_info("iommutest: msi-ir: IRTE %u as written: SVT %u SQ %u SID 0x%04x\n", f->irte, (unsigned)(hi >> 18 & 3),
		(unsigned)(hi >> 16 & 3), (unsigned)(hi & 0xffff));
	if (far)
		ok &= one_ir("above-255 (MSI_EXT_DEST_ID)", requested, bdf, f->msi, 0xfee00000u | 1u << 5, 0x006f, "routed",
			     far, false);
	ok &= one_ir("refused SMI", requested, bdf, f->msi, 0xfee05000u, 0x0270, "smi", 0, false);
	g_wr(bdf, f->msi + 2, 2, g_rd(bdf, f->msi + 2, 2) & ~1u);
	pr_info("iommutest: msi-ir: %s\n", ok ? "all ok" : "FAIL");
	return ok;
}

bool iommutest_own_remapping(const struct acpi_info *acpi, const struct memmap *mem, const char *aid, bool *need_eim,
			     uint32_t *far)
{
	char err[200];
	if (!iommu_available() || !acpi->nioapics) {
		pr_err("iommutest: %s: no remapping unit or no IOAPIC (QEMU: -M q35 -device intel-iommu,intremap=on): %s\n",
		       aid, iommu_state_name());
		return false;
	}
	if (iommu_enable(mem, err, sizeof err)) {
		pr_err("%s\n", err);
		return false;
	}
	*need_eim = lapic_x2apic;
	*far = 0;
	for (uint32_t i = 0; i < acpi->ncpus; i++) {
		*need_eim |= acpi->cpu[i].apic_id > 255;
		if (acpi->cpu[i].apic_id > 255 && !*far)
			*far = acpi->cpu[i].apic_id;
	}
	uint32_t irtes = msi_trap_count(acpi, err, sizeof err);
	if (!iommu_ir_own(acpi, *need_eim, true, irtes))
		return false;
	__asm__ volatile("cli");
	return true;
}
