/* iommutest=sriov (msi_sriovtest.h). The guest's side is pci/'s
 * entry for an emulated ECAM access (vmsi_cfg_read/write, as msi_trap_exit
 * calls it), offsets below 256 of a function's MSI-X set-up through the
 * ports as Linux takes them (vmsi_port_read/write over msi_trap_port_hw,
 * as msi_trap_in/out do) and for a trapped table access (vmsi_mem_read/write); "real"
 * reads go to the device directly.
 *
 * Facts used (PCI Express Base Specification, "Single Root I/O
 * Virtualization and Sharing"): the SR-IOV extended capability's control
 * at +08h (VF Enable bit 0, VF MSE bit 3), TotalVFs +0Eh, NumVFs +10h,
 * First VF Offset +14h and VF Stride +16h (both valid once NumVFs is
 * written), VF BAR0-5 from +24h; VF n (1-based) answers at the PF's
 * routing ID + First VF Offset + (n - 1) * VF Stride, and its BAR i is the
 * PF's VF BAR i + (n - 1) * that BAR's size; a VF's configuration space
 * may be read 100 ms after VF Enable. The VF's own interrupt (82576
 * datasheet, virtual function registers): VTEIMS at 0x1524 and VTEICS at
 * 0x1520 of the VF's BAR0, the PF's EIMS and EICS at the same offsets of
 * its BAR0, MSI-X vector 0 for bit 0, with the PF's GPIE (0x1514) bit 4,
 * Multiple MSI-X, set. */
#include "msi_sriovtest.h"
#include "../vmx/msi_trap.h"
#include "../pci/vmsi.h"
#include "msi_edutest.h"
#include "edutest.h"
#include "../iommu/iommu.h"
#include "../lib/acpi.h"
#include "../lib/cpu.h"
#include "../lib/paging.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define WAIT_US        100000
#define VF_READY_US    100000          /* after VF Enable, before the VF's configuration space */
#define NUM_VFS        2
#define VECTOR         0x71            /* VF 2's */
#define PF_VECTOR      0x72
#define PF_GPIE        0x1514
#define GPIE_MULTI_MSIX BIT(4)
#define REG_EICS       0x1520          /* the PF's EICS, a VF's VTEICS */
#define REG_EIMS       0x1524          /* the PF's EIMS, a VF's VTEIMS */

static struct vmsi vs;
static struct vioapic_dom dom;
static uint32_t gid[1], hid[1];
static const struct vmsi_hw *hw;
static uint32_t pass, total;

static uint32_t gr(uint16_t bdf, unsigned off, unsigned size) { return vmsi_cfg_read(&vs, hw, bdf, (uint16_t)off, size); }
static void gw(uint16_t bdf, unsigned off, unsigned size, uint32_t v) { vmsi_cfg_write(&vs, &dom, hw, bdf, (uint16_t)off, size, v); }
/* Offsets below 256 as Linux's raw_pci_read/write take them on segment 0:
 * through 0xCF8/0xCFC (mechanism #1), the trap's port entry. */
static void cf8_at(uint16_t bdf, unsigned off)
{
	vmsi_port_write(&vs, &dom, msi_trap_port_hw(), PCI_CFG_ADDR, 4, BIT(31) | (uint32_t)bdf << 8 | (off & 0xfc));
}
static uint32_t pr(uint16_t bdf, unsigned off, unsigned size)
{
	cf8_at(bdf, off);
	return vmsi_port_read(&vs, msi_trap_port_hw(), (uint16_t)(PCI_CFG_DATA + (off & 3)), size);
}
static void pw(uint16_t bdf, unsigned off, unsigned size, uint32_t v)
{
	cf8_at(bdf, off);
	vmsi_port_write(&vs, &dom, msi_trap_port_hw(), (uint16_t)(PCI_CFG_DATA + (off & 3)), size, v);
}
static uint32_t real(uint16_t bdf, unsigned off, unsigned size) { return hw->cfg_read(hw->ctx, bdf, (uint16_t)off, size); }

static bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool check(bool ok, const char *fmt, ...)
{
	char b[320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	pr_info("iommutest: sriov: %s: %s\n", b, ok ? "ok" : "FAIL");
	pass += ok;
	total++;
	return ok;
}

/* The PF's VF BAR i as the PF holds it (64-bit: two registers). */
static uint64_t vf_bar(const struct vmsi_fn *pf, unsigned i, bool *is64)
{
	uint32_t lo = real(pf->bdf, pf->sriov + SRIOV_VF_BAR0 + 4 * i, 4);
	*is64 = (lo & 6) == 4;
	uint64_t a = lo & ~0xfull;
	if (*is64 && i < 5)
		a |= (uint64_t)real(pf->bdf, pf->sriov + SRIOV_VF_BAR0 + 4 * i + 4, 4) << 32;
	return a;
}

/* The end of the highest memory BAR below 4 GiB of any function of the
 * segment (its size read as a BAR is sized), where the VF BARs can go. */
static uint64_t bars_end32(void)
{
	uint16_t top = 0;
	unsigned top_bar = 0;
	uint64_t top_at = 0;
	for (uint32_t b = 0; b < 65536; b++) {
		if (real((uint16_t)b, 0, 2) == 0xffff || (real((uint16_t)b, 0x0e, 1) & 0x7f) != 0)
			continue;
		for (unsigned i = 0; i < 6; i++) {
			uint32_t lo = real((uint16_t)b, 0x10 + 4 * i, 4);
			bool wide = (lo & 7) == 4;
			uint32_t hi = wide && i < 5 ? real((uint16_t)b, 0x14 + 4 * i, 4) : 0;
			if (!(lo & 1) && !hi && (lo & ~0xfu) > top_at) {
				top_at = lo & ~0xfu;
				top = (uint16_t)b;
				top_bar = i;
			}
			i += wide;
		}
	}
	return top_at ? top_at + vmsi_bar_size(hw, top, top_bar) : 0;
}

/* The PF's VF BARs placed by the guest, as Linux's pci_iov_resource
 * assignment would: each window (TotalVFs slices) aligned to its slice,
 * below 4 GiB above every other BAR (QEMU 10.0.2 maps a VF's BAR at the
 * low 32 bits of a 64-bit VF BAR: OVMF's 0xe0_0002_0000 became 0x2_0000,
 * guest memory), before VF Enable. False: no room below the IOAPIC. */
static bool vf_bars_place(const struct vmsi_fn *pf, uint16_t total_vfs)
{
	uint64_t next = bars_end32();
	for (unsigned i = 0; i < 6; i++) {
		bool is64;
		uint64_t sz = pf->vf_bar_size[i];
		(void)vf_bar(pf, i, &is64);
		unsigned k = i;
		i += is64;
		if (!sz)
			continue;
		next = (next + sz - 1) & ~(sz - 1);
		if (!next || next + sz * total_vfs > 0xfec00000ull)
			return false;
		gw(pf->bdf, pf->sriov + SRIOV_VF_BAR0 + 4 * k, 4, (uint32_t)next);
		if (is64)
			gw(pf->bdf, pf->sriov + SRIOV_VF_BAR0 + 4 * k + 4, 4, 0);
		pr_info("iommutest: sriov: VF BAR%u placed by the guest at 0x%llx (%u x 0x%llx)\n", k, (unsigned long long)next,
			total_vfs, (unsigned long long)sz);
		next += sz * total_vfs;
	}
	return true;
}

static volatile uint32_t *mmio32(uint64_t pa)
{
	if (pa + 4 > paging_identity_end && !paging_map_mmio(pa & ~0xfffull, 4096))
		return NULL;
	return (volatile uint32_t *)(uintptr_t)pa;
}

/* The function's register BAR (BAR0; a VF's: its slice of the PF's VF
 * BAR0) as the device decodes it. */
static uint64_t regs_bar(const struct vmsi_fn *pf, const struct vmsi_fn *f)
{
	bool is64;
	if (f->pf)
		return pf->vf_bar_size[0] ? vf_bar(pf, 0, &is64) + (uint64_t)(f->vf - 1) * pf->vf_bar_size[0] : 0;
	uint32_t lo = real(f->bdf, 0x10, 4);
	uint64_t a = lo & ~0xfull;
	if ((lo & 6) == 4)
		a |= (uint64_t)real(f->bdf, 0x14, 4) << 32;
	return a;
}

/* Function f's MSI-X entry 0 programmed as Linux's MSI-X setup does it
 * (memory and bus mastering on, MSI-X enabled with the function masked,
 * the entry written through the trapped table, then unmasked): the
 * device's entry must hold the remappable address of f's first MSI-X
 * IRTE, that IRTE f's own source ID (SVT 01b) and this CPU; then the
 * device raises its vector 0 (82576: EIMS then EICS bit 0, the PF in
 * multiple-MSI-X mode), which must arrive through the IRTE. */
static void entry0(const char *who, const struct vmsi_fn *pf, const struct vmsi_fn *f, uint8_t vector, uint32_t apic_id,
		   bool (*requested)(uint8_t))
{
	uint64_t t = f->table_pa;
	pw(f->bdf, 4, 2, (pr(f->bdf, 4, 2) & 0xffff) | 0x6);
	pw(f->bdf, f->msix + 2, 2, 0xc000);
	vmsi_mem_write(&vs, &dom, hw, t + 0, 0xfee05000u);
	vmsi_mem_write(&vs, &dom, hw, t + 4, 0);
	vmsi_mem_write(&vs, &dom, hw, t + 8, vector);
	vmsi_mem_write(&vs, &dom, hw, t + 12, 0);
	pw(f->bdf, f->msix + 2, 2, 0x8000);
	uint32_t mc = pr(f->bdf, f->msix + 2, 2), rmc = real(f->bdf, f->msix + 2, 2);
	check((mc & 0x8000) && (rmc & 0x8000) && f->table_pa == t,
	      "%s's MSI-X enabled through 0xCF8 as Linux does (offset 0x%02x below 256): guest reads 0x%04x, device 0x%04x, table %s",
	      who, f->msix + 2, mc, rmc, f->table_pa == t ? "kept" : "dropped");
	uint32_t irte = f->irte + (f->msi ? VMSI_MSI_IRTES : 0);
	uint32_t want_addr = 0xfee00000u | (irte & 0x7fff) << 5 | BIT(4) | ((irte & 0x8000) ? BIT(2) : 0);
	uint32_t ra = hw->mem_read(hw->ctx, t), rd = hw->mem_read(hw->ctx, t + 8), rv = hw->mem_read(hw->ctx, t + 12);
	uint32_t ga = vmsi_mem_read(&vs, hw, t), gd = vmsi_mem_read(&vs, hw, t + 8);
	uint64_t hi = iommu_irte_hi(0, irte);   /* VT-d IRTE: SVT 83:82, SQ 81:80, SID 79:64 */
	uint32_t dest = iommu_irte_dest(0, irte);
	bool present = iommu_irte_present(0, irte);
	check(ra == want_addr && rd == 0 && !(rv & 1) && ga == 0xfee05000u && gd == vector && present && dest == apic_id &&
		      (hi >> 18 & 3) == 1 && (hi & 0xffff) == f->bdf,
	      "%s's entry 0: guest 0xfee05000/0x%02x (reads back 0x%x/0x%x), device 0x%x/0x%x vector control 0x%x, IRTE %u %s dest 0x%x SVT %u SID 0x%04x",
	      who, vector, ga, gd, ra, rd, rv, irte, present ? "present" : "not present", dest, (unsigned)(hi >> 18 & 3),
	      (unsigned)(hi & 0xffff));
	uint64_t pf0 = regs_bar(pf, pf), regs = regs_bar(pf, f);
	volatile uint32_t *gpie = pf0 ? mmio32(pf0 + PF_GPIE) : NULL;
	volatile uint32_t *ims = regs ? mmio32(regs + REG_EIMS) : NULL, *ics = regs ? mmio32(regs + REG_EICS) : NULL;
	bool got = false;
	if (gpie && ims && ics) {
		*gpie |= GPIE_MULTI_MSIX;
		*ims = 1;
		*ics = 1;
		got = iommu_vector_arrives(requested, vector, WAIT_US);
	}
	check(got, "%s's vector 0 raised by the device (EICS at 0x%llx): vector 0x%02x %s through IRTE %u", who,
	      (unsigned long long)regs + REG_EICS, vector, got ? "arrived" : "did not arrive", irte);
}

bool msi_sriovtest(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id)
{
	bool need_eim;
	uint32_t far;
	if (!iommutest_own_remapping(acpi, mem, "sriov", &need_eim, &far))
		return false;
	/* One vCPU whose guest APIC ID (5) is not this CPU's; the
	 * hypervisor's vectors 0xf0-0xfe. */
	gid[0] = 5;
	hid[0] = apic_id;
	dom = (struct vioapic_dom){ .apic_id = gid, .host_apic_id = hid, .n = 1, .guest_x2apic = true,
				    .remap = true, .eim = iommu_ir_eim(), .ext_dest = true };
	dom.host_vectors[3] = 0x7fffull << 48;
	memset(&vs, 0, sizeof vs);
	vs.irte_base = iommu_msi_irte_base();
	vs.irte_count = iommu_msi_irte_count(0);
	hw = msi_trap_scan_seg0(&vs, acpi, mem);
	const struct vmsi_fn *pf = NULL;
	for (uint32_t i = 0; i < vs.nfn && !pf; i++)
		if (vs.fn[i].sriov && !vs.fn[i].pf)
			pf = &vs.fn[i];
	if (!hw->ext_cfg || !pf) {
		pr_err("iommutest: sriov: %s: FAIL\n", !hw->ext_cfg ? "no ECAM (MCFG) to reach extended configuration space"
								     : "no function with an SR-IOV capability (QEMU 10: -device igb)");
		return false;
	}
	uint16_t p = pf->bdf, cap = pf->sriov;
	uint16_t total_vfs = (uint16_t)real(p, cap + 0x0e, 2);
	pr_info("iommutest: sriov: PF %02x:%02x.%u, SR-IOV at 0x%03x, TotalVFs %u, VF BAR sizes 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx; scan: SR-IOV can add %u VFs\n",
		p >> 8, (p >> 3) & 31, p & 7, cap, total_vfs, (unsigned long long)pf->vf_bar_size[0],
		(unsigned long long)pf->vf_bar_size[1], (unsigned long long)pf->vf_bar_size[2],
		(unsigned long long)pf->vf_bar_size[3], (unsigned long long)pf->vf_bar_size[4],
		(unsigned long long)pf->vf_bar_size[5], vs.need.vfs);
	check(total_vfs >= NUM_VFS && vs.need.vfs >= total_vfs, "TotalVFs %u counted by the scan (%u)", total_vfs, vs.need.vfs);
	/* The PF's own MSI-X: its table in a 64-bit BAR above RAM, where OVMF
	 * puts it (issue 35 item 1), mapped uncached and trapped. */
	check(pf->msix && pf->table_pa >= paging_identity_end && vmsi_trapped(&vs, pf->table_pa) && pf->ent,
	      "the PF's MSI-X table at 0x%llx, above the identity map's end 0x%llx: %s", (unsigned long long)pf->table_pa,
	      (unsigned long long)paging_identity_end, vmsi_trapped(&vs, pf->table_pa) ? "trapped" : "not trapped");
	if (pf->msix && pf->table_pa && pf->ent)
		entry0("the PF", pf, pf, PF_VECTOR, apic_id, requested);

	/* Linux's order (sriov_enable): NumVFs, the VF BARs, then VF Enable and
	 * VF MSE together; 100 ms; then the VFs' configuration space. */
	gw(p, cap + SRIOV_NUM_VFS, 2, NUM_VFS);
	uint16_t off = (uint16_t)real(p, cap + SRIOV_OFFSET, 2), stride = (uint16_t)real(p, cap + SRIOV_STRIDE, 2);
	uint16_t vf = (uint16_t)(p + off + (NUM_VFS - 1) * stride);
	check(gr(vf, 0, 4) == 0xffffffffu && !vmsi_find(&vs, vf),
	      "VF %u at %02x:%02x.%u (First VF Offset %u, VF Stride %u) absent before VF Enable", NUM_VFS, vf >> 8,
	      (vf >> 3) & 31, vf & 7, off, stride);
	if (!vf_bars_place(pf, total_vfs)) {
		check(false, "no room below 4 GiB for the VF BARs");
		return false;
	}
	gw(p, cap + SRIOV_CTRL, 2, (gr(p, cap + SRIOV_CTRL, 2) & 0xffff) | SRIOV_VFE | SRIOV_MSE);
	udelay(VF_READY_US);
	uint32_t found0 = vs.vfs_found;
	/* The guest's first access: the VF's Vendor and Device ID, which read
	 * FFFFh as an absent function's (the VF Device ID is the PF's, +1Ah). */
	uint32_t id = gr(vf, 0, 4);
	const struct vmsi_fn *f = vmsi_find(&vs, vf);
	check(id == 0xffffffffu && f && f->msix && f->pf == (uint16_t)(pf - vs.fn + 1) && f->vf == NUM_VFS &&
		      vs.vfs_found == found0 + 1,
	      "VF %u (VF Device ID %04x; its own IDs read 0x%08x) found at the guest's first access: %s, MSI-X at 0x%02x, %u entries, VF %u of the PF",
	      NUM_VFS, real(p, cap + 0x1a, 2), id, f ? "trapped" : "not trapped", f ? f->msix : 0, f ? f->nent : 0, f ? f->vf : 0);
	if (!f || !f->msix)
		goto out;
	unsigned bir = f->msix_table & 7;
	bool is64;
	uint64_t win = bir < 6 ? vf_bar(pf, bir, &is64) : 0;
	uint64_t want = win + (uint64_t)(NUM_VFS - 1) * pf->vf_bar_size[bir] + (f->msix_table & ~7u);
	check(win && f->table_pa == want && vmsi_trapped(&vs, want) && f->ent,
	      "VF %u's MSI-X table in the PF's VF BAR%u at 0x%llx (slice %u): placed at 0x%llx, trapped %s", NUM_VFS, bir,
	      (unsigned long long)win, NUM_VFS, (unsigned long long)f->table_pa, vmsi_trapped(&vs, want) ? "yes" : "no");
	if (!f->table_pa || !f->ent)
		goto out;

	entry0("VF 2", pf, f, VECTOR, apic_id, requested);

out:;
	/* VF Enable cleared: the VFs gone, their tables' pages given back. */
	uint32_t gone0 = vs.vfs_gone;
	uint64_t pg = f ? f->table_pa & ~0xfffull : 0;
	gw(p, cap + SRIOV_CTRL, 2, gr(p, cap + SRIOV_CTRL, 2) & ~(uint32_t)(SRIOV_VFE | SRIOV_MSE));
	check(vs.vfs_gone == gone0 + (f && f->msix ? 1 : 0) && (!pg || !vmsi_trapped(&vs, pg)) && gr(vf, 0, 4) == 0xffffffffu,
	      "VF Enable cleared: %u VF gone, its table page %s, VF %u absent again", vs.vfs_gone - gone0,
	      pg && vmsi_trapped(&vs, pg) ? "still trapped" : "given back", NUM_VFS);
	pr_info("iommutest: sriov: %u of %u checks passed\n", pass, total);
	return pass == total;
}
