/* The MSI/MSI-X trap's wall (issue 43, "An invariant, not another list"):
 * a stateful, model-based fuzz target. The trap (pci/) is driven
 * as vmx/msi_trap.c drives it (segment 0 with ECAM: the scan and the
 * guest's ECAM accesses through an ECAM vmsi_hw reaching offsets up to
 * FFFh, the guest's 0xCF8/0xCFC accesses through a mechanism #1 vmsi_hw
 * reaching FFh; table_at/table_gone edit the real EPT (vmx/ept.c through
 * wall_ept.c: ept_build's identity map, GiBs mapped late, ept_unmap_page
 * within ept_live's budget, ept_restore_page), fn_seen and fn_moved a set
 * of trapped ECAM pages; place is vmsi_place_judge over a memory map and
 * claimed ranges) against a device model written from the specifications
 * (PCI Local Bus 3.0, PCI-to-PCI Bridge 1.2, PCIe Base 4.0 with its
 * SR-IOV, ARI and Resizable BAR chapters). No constant of the project's
 * headers is used by the model: only the API it drives.
 *
 * The machine: bus 0 holds endpoint A (00:00.0: MSI 64-bit with
 * per-vector masking, MSI-X of 8 entries in a 64-bit prefetchable BAR0
 * that Resizable BAR sizes from 1 MiB to 64 GiB), a root port (00:01.0,
 * secondary 1, subordinate 2, a 32-bit and a 64-bit prefetchable window)
 * and a hot-pluggable endpoint C (00:03.0: MSI, MSI-X of 2 entries in a
 * 32-bit BAR0; hot-added it answers Vendor ID 0001h, Configuration Request
 * Retry Status, for a while). Below the port: an SR-IOV physical function
 * PF (sec:00.0, MSI-X of 4 entries in BAR0; ARI; SR-IOV at 160h with 4
 * VFs, each with MSI-X of 4 entries in VF BAR0, a 64-bit BAR whose
 * per-VF size is the larger of 16 KiB and System Page Size). VF routing
 * IDs follow First VF Offset and VF Stride, which change with ARI Capable
 * Hierarchy and NumVFs (with ARI the VFs cross onto the next bus). The
 * memory map has RAM and hypervisor ranges below and above 4 GiB; the
 * claims are the IOAPIC, HPET, VT-d, LAPIC/MSI and ECAM ranges.
 *
 * Input: one byte of boot configuration (bit 7: no 1 GiB EPT pages), then
 * 8-byte operations (op, selector, offset, flags, value32): configuration
 * reads and writes through the ports and through ECAM at any width and
 * offset, BAR sizing and moves, Resizable BAR control, bridge windows
 * and bus numbers, SR-IOV VF Enable/VF MSE/ARI, NumVFs, System Page Size,
 * MSI and MSI-X registers, MSI-X table and PBA accesses at the device's
 * table, at the trap's, or anywhere (through the EPT, as a vCPU makes
 * them: an EPT violation taken as vmx/exit_ept.c takes it), hot-add and
 * removal of C, and a vCPU's EPT violation on a page the trap's list
 * does not show (trapped_at runs without the trap's lock): taken inside
 * the trap's next table_at after the unmap (before the listing) or its
 * next table_gone before the restore, or on a page taken out or given
 * back whose trapped_at ran in that window and the rest of the exit now,
 * or on any page now. Not modelled: INVEPT and the TLBs, the other
 * traps' pages (virtual IOAPIC, HPET, ECAM: mapped; see wall_ept.c).
 *
 * The wall's contract, checked after EVERY operation (abort on breach):
 *  (a) every hw->mem_read/mem_write the trap makes for the guest lands in
 *      MMIO a device decodes at that moment per the model (BAR assigned,
 *      memory decoding on (a VF: VF Enable and VF MSE), forwarded by the
 *      bridge's windows), and never in a hypervisor range (a memory-map
 *      range or a claimed one); checked at the access itself;
 *  (b) every MSI and MSI-X vector the model's device would send (enabled,
 *      not masked: MSI-X enable and function mask, the entry's mask bit)
 *      holds a message the hypervisor wrote as that function's (not the
 *      guest's, not passed through, not another function's) and, with
 *      remapping not owned, one the router allows (0xFEExxxxx, a host
 *      APIC ID of a vCPU, fixed/lowest-priority/NMI, no hypervisor
 *      vector);
 *  (c) every page that decodes an MSI-X table the device has physically
 *      enabled is out of the real EPT, and every page the trap lists as
 *      trapped is;
 *  (d) struct vmsi's counters stay within their rooms (nfn, pool_used,
 *      npages, nbridge, irte_used; the claims' n);
 *  (e) nothing crashes or hangs (ASan/UBSan catch the rest);
 *  (f) a function the trap follows (found at its BDF, seen) is the
 *      model's function answering at that routing ID, not another one;
 *  (g) the EPT (the real tables): every page the trap took out is out
 *      (not present, its own address kept) and listed by the trap (else
 *      a vCPU's access there runs again forever), every page it gave back
 *      is present again at its own address, RWX; the exit path's sink
 *      maps no page but the hypervisor's own (MEM_HV), never a device's,
 *      a trap's or a given-back one (issue 43 item 9: fault 9 planted
 *      back, the sink over a page in the window, is caught; see
 *      docs/testing.md);
 *  (h) with nx_huge (boot bit 4, which also sets the VF count's low bit):
 *      a page a vCPU's fetch mended is executable and 4 KiB (a large leaf
 *      only by the counted fallback of a short heap), unless the trap took
 *      it out since or the sink maps it (a hypervisor page); a page the
 *      trap gave back stays RWX (g); no large leaf ever executable
 *      otherwise: the guest cannot get a large executable translation.
 *
 * Known faults that the operations reach are held back by
 * WALL_KNOWN_FAULT_N (1: the fault is known, and its trigger is not
 * generated or the breach it causes is tolerated, counted in 'tolerated';
 * 0: checked). Fixed, and so 0 by default: 1, 2, 4, 7 (issue 43's items)
 * and the four this fuzzer found: VFMSE, BRIDGE, REMOVE and CRS (a
 * function removed and re-added in Retry Status whose ID the guest never
 * read again had the old one's MSI programmed into it; now every write
 * for a function first reads its IDs again, vmsi_still_taken). Each, with
 * the fault it names planted back, is caught again (-DWALL_KNOWN_FAULT_N=0
 * on the fixed code; see docs/testing.md):
 *  1       ReBAR sizes of 4 GiB and more (place() takes a 32-bit length);
 *  2       System Page Size and NumVFs changed (a VF's geometry taken once;
 *          ARI changes too, as they move the VFs);
 *  4       a VF's configuration through the ports (the trap reads the PF's
 *          SR-IOV registers through mechanism #1, the offset cut to 8 bits);
 *  7       the bridge's bus numbers written while ARI puts VFs beyond the
 *          PF's bus (the trap takes every function below a bridge as on
 *          its secondary bus);
 *  CRS     C hot-added answering Retry Status (the first-access probe reads
 *          all ones and takes C as a function without MSI or MSI-X);
 *  VFMSE   VF table entries written while the trap holds VF MSE off
 *          (vmsi_sriov_write's "quiet"): made as if after VF MSE is back;
 *  BRIDGE  accesses a bridge no longer forwards (its windows and Memory
 *          Space Enable are not followed): made as if forwarded;
 *  REMOVE  accesses to a removed function's table (removal not followed).
 * And a fifth, found by make test's 10 s run on 2026-12-03 (seed
 * corpus/wall/replug-same-ids): C removed and a C of the same IDs added
 * ready at once (its BAR as firmware left it, decoding off); the guest's
 * write to the old table's entry was made on the device, where nothing
 * decoded it (invariant (a)): vmsi_still_taken matches by IDs only; now
 * vmsi_table_decoded asks the BAR and decoding before any access is made.
 * WALL_TRACE in the environment says each operation and each of the
 * hypervisor's configuration and table writes (for reading a crash). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../pci/vmsi.h"
#include "wall_ept.h"

#ifndef WALL_KNOWN_FAULT_1              /* a table BAR >= 4 GiB judged as zero bytes */
#define WALL_KNOWN_FAULT_1 0
#endif
#ifndef WALL_KNOWN_FAULT_2              /* a VF's geometry taken once (page size, NumVFs, ARI) */
#define WALL_KNOWN_FAULT_2 0
#endif
#ifndef WALL_KNOWN_FAULT_4              /* SR-IOV registers read through mechanism #1, offset cut */
#define WALL_KNOWN_FAULT_4 0
#endif
#ifndef WALL_KNOWN_FAULT_CRS            /* a function answering CRS at first access taken as one without MSI/MSI-X */
#define WALL_KNOWN_FAULT_CRS 0
#endif
#ifndef WALL_KNOWN_FAULT_VFMSE          /* VF tables written while VF MSE is held off (vmsi_sriov_write's quiet) */
#define WALL_KNOWN_FAULT_VFMSE 0
#endif
#ifndef WALL_KNOWN_FAULT_BRIDGE         /* a bridge's windows and Memory Space Enable not followed */
#define WALL_KNOWN_FAULT_BRIDGE 0
#endif
#ifndef WALL_KNOWN_FAULT_REMOVE         /* a function removed: its table still placed, written */
#define WALL_KNOWN_FAULT_REMOVE 0
#endif
#ifndef WALL_KNOWN_FAULT_7              /* renumbering moves VFs onto the bridge's secondary bus */
#define WALL_KNOWN_FAULT_7 0
#endif

/* ---- The specifications' registers (the model's own names) ---- */
/* PCI 3.0, "Configuration Space Header" (type 0 and 1). */
#define H_ID       0x00
#define H_CMD      0x04
#define H_CMD_MEM  0x0002u                 /* Memory Space */
#define H_CMD_BM   0x0004u                 /* Bus Master */
#define H_STS      0x06
#define H_STS_CAP  0x0010u                 /* Capabilities List */
#define H_HDR      0x0e
#define H_BAR0     0x10
#define H_CAPP     0x34
/* PCI-to-PCI Bridge 1.2: bus numbers, memory and prefetchable windows. */
#define B_PRI      0x18
#define B_SEC      0x19
#define B_SUB      0x1a
#define B_MEM      0x20
#define B_PMEM     0x24
#define B_PBASE_HI 0x28
#define B_PLIM_HI  0x2c
/* Capability IDs: MSI, PCI Express, MSI-X; extended: ARI, SR-IOV, ReBAR. */
#define C_MSI      0x05
#define C_EXP      0x10
#define C_MSIX     0x11
#define X_ARI      0x000e
#define X_SRIOV    0x0010
#define X_REBAR    0x0015
/* SR-IOV capability (PCIe 4.0 9.3.3) at IOV in the PF. */
#define IOV        0x160
#define IOV_CTL    (IOV + 0x08)
#define IOV_VFE    0x0001u
#define IOV_MSE    0x0008u
#define IOV_ARI    0x0010u
#define IOV_TOTAL  (IOV + 0x0e)
#define IOV_NUM    (IOV + 0x10)
#define IOV_FIRST  (IOV + 0x14)
#define IOV_STRIDE (IOV + 0x16)
#define IOV_PGSUP  (IOV + 0x1c)
#define IOV_PGSZ   (IOV + 0x20)
#define IOV_BAR0   (IOV + 0x24)
#define NVF        4
/* Resizable BAR (PCIe 4.0 7.8.6) at RB in A. */
#define RB         0x100
#define RB_CAP     (RB + 4)
#define RB_CTL     (RB + 8)

/* ---- The model ---- */
enum { F_A, F_BR, F_PF, F_C, F_VF1, NF = F_VF1 + NVF };
static const char *const fname[NF] = { "A", "bridge", "PF", "C", "VF1", "VF2", "VF3", "VF4" };

struct mfn {
	uint8_t cfg[4096], wm[4096];       /* the registers and their writable bits */
	bool present;                      /* (VFs: see m_present) */
	unsigned crs;                      /* accesses still answered with Retry Status */
	uint16_t msi, msix;                /* capability offsets, 0: none */
	uint32_t msi_len;                  /* bytes from msi + 2 that hold message state */
	unsigned nent;
	uint32_t tab_off, pba_off;         /* in BAR0 */
	uint64_t bar_size;                 /* BAR0 (a VF: its share of VF BAR0) */
	uint32_t tab[8][4];                /* the MSI-X table */
	uint8_t tdirty[8];                 /* dword j of entry i: not the hypervisor's own write for this function */
	uint32_t cdirty;                   /* byte msi + 2 + k (MSI) / bit 31: MSI-X control, likewise */
};
static struct mfn m[NF];

static uint32_t rd(const struct mfn *f, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)f->cfg[(off + i) & 0xfff] << 8 * i;
	return v;
}
static void put(struct mfn *f, unsigned off, unsigned size, uint32_t v, uint32_t w)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wm[off + i] = (uint8_t)(w >> 8 * i);
	}
}
static void put_bar64(struct mfn *f, unsigned off, uint64_t base, uint64_t size, unsigned type)
{
	uint64_t mask = ~(size - 1) & ~0xfull;
	put(f, off, 4, (uint32_t)(base & mask) | type, (uint32_t)mask);
	put(f, off + 4, 4, (uint32_t)((base & mask) >> 32), (uint32_t)(mask >> 32));
}
static uint64_t bar_of(const struct mfn *f, unsigned off)
{
	uint32_t lo = rd(f, off, 4);
	if (lo & 1)
		return 0;
	return (lo & ~0xfull) | ((lo & 6) == 4 ? (uint64_t)rd(f, off + 4, 4) << 32 : 0);
}

static uint16_t num_vfs(void) { uint16_t n = (uint16_t)rd(&m[F_PF], IOV_NUM, 2); return n > NVF ? NVF : n; }
static bool vfs_on(void) { return rd(&m[F_PF], IOV_CTL, 2) & IOV_VFE; }
static uint64_t vf_size(void)
{
	uint32_t ps = rd(&m[F_PF], IOV_PGSZ, 4) & rd(&m[F_PF], IOV_PGSUP, 4);
	uint64_t page = ps ? 4096ull << __builtin_ctz(ps) : 4096;
	return page > 0x4000 ? page : 0x4000;
}
/* First VF Offset and VF Stride as this device sets them (SR-IOV lets
 * both change with ARI Capable Hierarchy and NumVFs). */
static void iov_geometry(void)
{
	struct mfn *p = &m[F_PF];
	uint16_t first = (rd(p, IOV_CTL, 2) & IOV_ARI) ? 0xfe : num_vfs() > 2 ? 0x09 : 0x08;
	put(p, IOV_FIRST, 2, first, 0);
	put(p, IOV_STRIDE, 2, 1, 0);
	uint64_t sz = vf_size(), b = bar_of(p, IOV_BAR0);
	put_bar64(p, IOV_BAR0, b, sz, 0xc);
	for (unsigned k = 0; k < NVF; k++)
		m[F_VF1 + k].bar_size = sz;
}

static void msix_reset(struct mfn *f)
{
	memset(f->tab, 0, sizeof f->tab);
	for (unsigned i = 0; i < 8; i++)
		f->tab[i][3] = 1;          /* "Mask bit ... reset to 1" */
	memset(f->tdirty, 0, sizeof f->tdirty);
	f->cdirty = 0;
}
static void common(struct mfn *f, uint32_t id, uint16_t cmd, uint8_t hdr)
{
	memset(f, 0, sizeof *f);
	put(f, H_ID, 4, id, 0);
	put(f, H_CMD, 2, cmd, H_CMD_MEM | H_CMD_BM);
	put(f, H_STS, 2, H_STS_CAP, 0);
	put(f, H_HDR, 1, hdr, 0);
	put(f, H_CAPP, 1, 0x40, 0);
	f->present = true;
}
static void cap_msix(struct mfn *f, unsigned at, unsigned next, unsigned nent, uint32_t tab, uint32_t pba)
{
	put(f, at, 2, C_MSIX | next << 8, 0);
	put(f, at + 2, 2, nent - 1, 0xc000);   /* Table Size RO; Function Mask, MSI-X Enable */
	put(f, at + 4, 4, tab, 0);
	put(f, at + 8, 4, pba, 0);
	f->msix = (uint16_t)at, f->nent = nent, f->tab_off = tab & ~7u, f->pba_off = pba & ~7u;
	msix_reset(f);
}
static void cap_exp(struct mfn *f, unsigned at, unsigned type)
{
	put(f, at, 2, C_EXP, 0);
	put(f, at + 2, 2, 2 | type << 4, 0);
}

static void init_A(bool decode)
{
	struct mfn *f = &m[F_A];
	common(f, 0x00011af4, decode ? H_CMD_MEM : 0, 0);
	f->bar_size = 16ull << 20;
	put_bar64(f, H_BAR0, 0x2000000000ull, f->bar_size, 0xc);
	/* MSI: 64-bit, per-vector masking, 4 vectors capable. */
	put(f, 0x40, 2, C_MSI | 0x60 << 8, 0);
	put(f, 0x42, 2, 0x0184, 0x0071);
	put(f, 0x44, 4, 0, 0xfffffffc);
	put(f, 0x48, 4, 0, 0xffffffff);
	put(f, 0x4c, 2, 0, 0xffff);
	put(f, 0x50, 4, 0, 0xf);
	f->msi = 0x40, f->msi_len = 0x50 + 4 - 0x42;
	cap_msix(f, 0x60, 0x70, 8, 0x0, 0x8000);
	cap_exp(f, 0x70, 0);
	put(f, RB, 4, X_REBAR | 1u << 16, 0);
	put(f, RB_CAP, 4, 0x1ffffu << 4, 0);        /* 1 MiB (bit 4) to 64 GiB (bit 20) */
	put(f, RB_CTL, 4, 1u << 5 | 4u << 8, 0x3f00); /* BAR 0, one resizable BAR, 16 MiB */
}
static void init_BR(void)
{
	struct mfn *f = &m[F_BR];
	common(f, 0x00021af4, H_CMD_MEM, 1);
	put(f, B_PRI, 3, 0x020100, 0xffffff);
	put(f, B_MEM, 4, 0xc0f0c000u, 0xfff0fff0u);   /* C0000000-C0FFFFFF */
	put(f, B_PMEM, 4, 0xfff10001u, 0xfff0fff0u);  /* 64-bit: 10_0000_0000-1F_FFFF_FFFF */
	put(f, B_PBASE_HI, 4, 0x10, 0xffffffff);
	put(f, B_PLIM_HI, 4, 0x1f, 0xffffffff);
	cap_exp(f, 0x40, 4);                          /* root port */
}
static void init_VF(unsigned k)
{
	struct mfn *f = &m[F_VF1 + k];
	common(f, 0xffffffffu, 0, 0);                 /* a VF's Vendor/Device ID read FFFFh */
	put(f, H_CMD, 2, 0, H_CMD_BM);                /* Memory Space: RO 0 in a VF */
	cap_msix(f, 0x40, 0x50, 4, 0x0, 0x800);
	cap_exp(f, 0x50, 0);
	f->bar_size = vf_size();
}
static void init_PF(uint8_t boot)
{
	struct mfn *f = &m[F_PF];
	common(f, 0x00031af4, H_CMD_MEM, 0);
	f->bar_size = 0x4000;
	put(f, H_BAR0, 4, 0xc0000000u, 0xffffc000u);
	cap_msix(f, 0x40, 0x50, 4, 0x0, 0x2000);
	cap_exp(f, 0x50, 0);
	for (unsigned o = 0x60; o < 0x100; o++)
		put(f, o, 1, 0, 0xff);                    /* device-specific registers */
	put(f, 0x100, 4, X_ARI | 1u << 16 | (uint32_t)IOV << 20, 0);
	put(f, IOV, 4, X_SRIOV | 1u << 16, 0);
	put(f, IOV_CTL, 2, boot & 4 ? IOV_VFE | IOV_MSE : 0, IOV_VFE | IOV_MSE | IOV_ARI);
	put(f, IOV + 0x0c, 2, NVF, 0);
	put(f, IOV_TOTAL, 2, NVF, 0);
	put(f, IOV_NUM, 2, WALL_KNOWN_FAULT_2 ? NVF : boot >> 4 & 7, 0xffff);
	put(f, IOV + 0x1a, 2, 0x0004, 0);
	put(f, IOV_PGSUP, 4, 0x553, 0);               /* 4K 8K 64K 256K 1M 4M */
	put(f, IOV_PGSZ, 4, 1, 0xffffffff);
	put_bar64(f, IOV_BAR0, 0x1000000000ull, 0x4000, 0xc);
	if (boot & 8)
		f->cfg[IOV_CTL] |= IOV_ARI;
	for (unsigned k = 0; k < NVF; k++)
		init_VF(k);
	iov_geometry();
}
static void init_C(bool present, unsigned crs)
{
	struct mfn *f = &m[F_C];
	common(f, 0x00051af4, 0, 0);
	f->bar_size = 0x1000;
	put(f, H_BAR0, 4, present && !crs ? 0xd0000000u : 0, 0xfffff000u);
	put(f, 0x40, 2, C_MSI | 0x50 << 8, 0);
	put(f, 0x42, 2, 0, 0x0001);                   /* 32-bit, 1 vector */
	put(f, 0x44, 4, 0, 0xfffffffc);
	put(f, 0x48, 2, 0, 0xffff);
	f->msi = 0x40, f->msi_len = 0x48 + 2 - 0x42;
	cap_msix(f, 0x50, 0, 2, 0x0, 0x800);
	f->present = present;
	f->crs = crs;
}

static bool m_present(int fi)
{
	if (fi < F_VF1)
		return m[fi].present;
	return vfs_on() && (unsigned)(fi - F_VF1) < num_vfs();
}

/* The function answering routing ID rid now: bus 0 directly, the buses
 * the bridge forwards (secondary..subordinate) below it; -1: none. */
static int rid_fn(uint32_t rid)
{
	unsigned bus = rid >> 8 & 0xff, dfn = rid & 0xff;
	if (bus == 0)
		return dfn == 0 ? F_A : dfn == 8 ? F_BR : dfn == 0x18 && m[F_C].present ? F_C : -1;
	unsigned sec = m[F_BR].cfg[B_SEC], sub = m[F_BR].cfg[B_SUB];
	if (!sec || bus < sec || bus > sub)
		return -1;
	uint32_t pf = sec << 8;
	if (rid == pf)
		return F_PF;
	uint32_t first = rd(&m[F_PF], IOV_FIRST, 2), stride = rd(&m[F_PF], IOV_STRIDE, 2);
	for (unsigned k = 0; vfs_on() && k < num_vfs(); k++)
		if (pf + first + k * stride == rid)
			return F_VF1 + (int)k;
	return -1;
}
static uint32_t rid_of(int fi)
{
	uint32_t pf = (uint32_t)m[F_BR].cfg[B_SEC] << 8;
	switch (fi) {
	case F_A: return 0;
	case F_BR: return 8;
	case F_C: return 0x18;
	case F_PF: return pf;
	default: return (pf + rd(&m[F_PF], IOV_FIRST, 2) + (uint32_t)(fi - F_VF1) * rd(&m[F_PF], IOV_STRIDE, 2)) & 0xffff;
	}
}

/* ---- The hypervisor's view: what the wall is checked against ---- */
static unsigned op_no;
static int trace;                           /* WALL_TRACE set: the operations and the writes said */
static uint64_t execs;
static struct vmsi s;
static struct vioapic_dom dom;
static struct vmsi_claims claims;
static struct memmap mem;
static uint8_t ecam_out[65536 / 8];         /* trapped ECAM pages */
static int8_t who[256];                     /* s.fn[i] is the model's function who[i] (-1: unknown) */
static void *allocs[8];
static size_t alloc_len[8];
static unsigned nallocs;

static __attribute__((noreturn, format(printf, 2, 3))) void breach(const char *inv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "wall: invariant %s broken at operation %u (exec %llu): ", inv, op_no, (unsigned long long)execs);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) { return a < b + blen && b < a + alen; }
static bool hv_range(uint64_t pa, uint64_t len)
{
	for (uint32_t i = 0; i < mem.count; i++)
		if (overlaps(pa, len, mem.r[i].base, mem.r[i].len))
			return true;
	for (uint32_t i = 0; i < claims.n; i++)
		if (overlaps(pa, len, claims.r[i].base, claims.r[i].len))
			return true;
	return false;
}

/* A known fault's access let through as the fixed code would make it:
 * with VF MSE on, or forwarded by the bridge (WALL_KNOWN_FAULT_VFMSE,
 * _BRIDGE). */
static bool force_mse, force_win;

/* BAR0's range as function fi decodes it now; false: not decoding. */
static bool m_bar(int fi, uint64_t *base, uint64_t *len)
{
	if (fi == F_BR || !m_present(fi))
		return false;
	uint64_t b;
	if (fi >= F_VF1) {
		if (!(rd(&m[F_PF], IOV_CTL, 2) & IOV_MSE) && !force_mse)
			return false;
		b = bar_of(&m[F_PF], IOV_BAR0);
		if (b)
			b += (uint64_t)(fi - F_VF1) * vf_size();
	} else {
		if (!(rd(&m[fi], H_CMD, 2) & H_CMD_MEM))
			return false;
		b = bar_of(&m[fi], H_BAR0);
	}
	*base = b, *len = m[fi].bar_size;
	return b != 0;
}
static bool forwarded(uint64_t pa)
{
	const struct mfn *b = &m[F_BR];
	if (!(rd(b, H_CMD, 2) & H_CMD_MEM))
		return false;
	uint32_t w = rd(b, B_MEM, 4), p = rd(b, B_PMEM, 4);
	uint64_t lo = (uint64_t)(w & 0xfff0) << 16, hi = ((uint64_t)(w >> 16 & 0xfff0) << 16) | 0xfffff;
	uint64_t plo = (uint64_t)(p & 0xfff0) << 16 | (uint64_t)rd(b, B_PBASE_HI, 4) << 32;
	uint64_t phi = ((uint64_t)(p >> 16 & 0xfff0) << 16 | 0xfffff) | (uint64_t)rd(b, B_PLIM_HI, 4) << 32;
	return (pa >= lo && pa <= hi) || (pa >= plo && pa <= phi);
}
/* The function decoding memory address pa now; -1: none. (any_window:
 * as if the bridge forwarded every address.) */
static int decoder_fwd(uint64_t pa, uint64_t *off, bool any_window)
{
	for (int fi = 0; fi < NF; fi++) {
		uint64_t b, l;
		if (m_bar(fi, &b, &l) && pa >= b && pa - b < l && (fi < F_PF || fi == F_C || any_window || force_win || forwarded(pa))) {
			*off = pa - b;
			return fi;
		}
	}
	return -1;
}
static int decoder(uint64_t pa, uint64_t *off) { return decoder_fwd(pa, off, false); }

/* Is the hypervisor's write to model fi's entry i, dword j, at pa its own
 * for that function: a trap function that is fi places entry i there? */
static bool own_entry(int fi, uint64_t pa, unsigned i, unsigned j)
{
	for (uint32_t k = 0; k < s.nfn; k++)
		if (who[k] == fi && !s.fn[k].gone && s.fn[k].table_pa && s.fn[k].table_pa + 16ull * i + 4 * j == pa)
			return true;
	return false;
}
static uint32_t dev_mem(uint64_t pa, bool write, uint32_t v, bool hyp)
{
	uint64_t off;
	int fi = decoder(pa, &off);
	if (fi < 0)
		return 0xffffffffu;
	struct mfn *f = &m[fi];
	if (f->msix && off >= f->tab_off && off - f->tab_off < 16ull * f->nent) {
		unsigned i = (unsigned)((off - f->tab_off) / 16), j = (unsigned)(off & 0xc) / 4;
		if (!write)
			return f->tab[i][j];
		f->tab[i][j] = j == 3 ? v & 1 : v;
		if (hyp && own_entry(fi, pa, i, j))
			f->tdirty[i] &= (uint8_t)~(1u << j);
		else
			f->tdirty[i] |= (uint8_t)(1u << j);
		return 0;
	}
	return 0;                                  /* the PBA and the rest: no effect here */
}

/* Is a hypervisor configuration write to fi at off its own for that
 * function (a trap function that is fi, at fi's routing ID, with the
 * capability there)? */
static bool own_cfg(int fi, uint16_t rid, unsigned off)
{
	for (uint32_t k = 0; k < s.nfn; k++) {
		const struct vmsi_fn *g = &s.fn[k];
		if (who[k] != fi || g->gone || g->bdf != rid)
			continue;
		if (off >= m[fi].msi + 2u && off < m[fi].msi + 2u + m[fi].msi_len && g->msi == m[fi].msi)
			return true;
		if (off >= m[fi].msix + 2u && off < m[fi].msix + 4u && g->msix == m[fi].msix)
			return true;
	}
	return false;
}

static void reset_vfs(void)
{
	for (unsigned k = 0; k < NVF; k++)
		init_VF(k);
	iov_geometry();
}

static uint32_t ones(unsigned size) { return size >= 4 ? 0xffffffffu : (1u << 8 * size) - 1; }

static uint32_t m_cfg_read(uint16_t rid, uint16_t off, unsigned size)
{
	int fi = rid_fn(rid);
	if (fi < 0 || off + size > 4096)
		return ones(size);
	if (m[fi].crs) {
		m[fi].crs--;
		return off == 0 ? 0xffff0001u & ones(size) : ones(size);   /* CRS Software Visibility */
	}
	return rd(&m[fi], off, size);
}

static void m_cfg_write(uint16_t rid, uint16_t off, unsigned size, uint32_t v, bool hyp)
{
	int fi = rid_fn(rid);
	if (fi < 0 || off + size > 4096)
		return;
	struct mfn *f = &m[fi];
	if (trace)
		fprintf(stderr, "  %s cfg write %s %04x+%03x/%u 0x%x\n", hyp ? "hv" : "guest", fname[fi], rid, off, size, v);
	if (f->crs) {
		f->crs--;
		return;
	}
	uint16_t ctl = (uint16_t)rd(f, IOV_CTL, 2);
	for (unsigned i = 0; i < size; i++) {
		unsigned o = off + i;
		if (fi == F_PF && (ctl & IOV_VFE) && (o == IOV_NUM || o == IOV_NUM + 1u || (o >= IOV_PGSZ && o < IOV_PGSZ + 4u)))
			continue;                     /* NumVFs, System Page Size: not while VF Enable is set */
		if (fi == F_PF && (ctl & IOV_VFE) && o == IOV_CTL)
			v = (v & ~(IOV_ARI << 8 * i)) | (uint32_t)(ctl & IOV_ARI) << 8 * i;   /* nor ARI Capable Hierarchy */
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wm[o]) | ((v >> 8 * i) & f->wm[o]));
		bool msi = f->msi && o >= f->msi + 2u && o < f->msi + 2u + f->msi_len;
		bool msix = f->msix && o >= f->msix + 2u && o < f->msix + 4u;
		uint32_t bit = msi ? 1u << (o - f->msi - 2) : msix ? 1u << 31 : 0;
		if (bit && hyp && own_cfg(fi, rid, o))
			f->cdirty &= ~bit;
		else if (bit)
			f->cdirty |= bit;
	}
	if (fi == F_A && overlaps(off, size, RB_CTL, 4)) {
		unsigned n = f->cfg[RB_CTL + 1] & 0x3f;
		if (n <= 27 && (rd(f, RB_CAP, 4) >> (n + 4) & 1)) {
			f->bar_size = 1ull << (n + 20);
			put_bar64(f, H_BAR0, bar_of(f, H_BAR0), f->bar_size, 0xc);
		}
	}
	if (fi == F_PF && overlaps(off, size, IOV, 0x40)) {
		uint16_t now = (uint16_t)rd(f, IOV_CTL, 2);
		if (!(ctl & IOV_VFE) && (now & IOV_VFE))
			reset_vfs();                          /* VFs come up as after reset */
		iov_geometry();
	}
}

/* ---- vmsi_hw as vmx/msi_trap.c gives it ---- */
static uint32_t phys_cf8;
static uint32_t h_ecam_read(void *c, uint16_t bdf, uint16_t off, unsigned size) { (void)c; return m_cfg_read(bdf, off & 0xfff, size); }
static void h_ecam_write(void *c, uint16_t bdf, uint16_t off, unsigned size, uint32_t v) { (void)c; m_cfg_write(bdf, off & 0xfff, size, v, true); }
static uint32_t h_io_read(void *c, uint16_t port, unsigned size)
{
	(void)c;
	if (port == 0xcf8 && size == 4)
		return phys_cf8;
	if (port >= 0xcfc && (phys_cf8 >> 31))
		return m_cfg_read((uint16_t)(phys_cf8 >> 8), (uint16_t)((phys_cf8 & 0xfc) | (port & 3)), size);
	return ones(size);
}
static void h_io_write(void *c, uint16_t port, unsigned size, uint32_t v)
{
	(void)c;
	if (port == 0xcf8 && size == 4)
		phys_cf8 = v & 0x80fffffcu;
	else if (port >= 0xcfc && (phys_cf8 >> 31))
		m_cfg_write((uint16_t)(phys_cf8 >> 8), (uint16_t)((phys_cf8 & 0xfc) | (port & 3)), size, v, true);
}
/* Mechanism #1 on the physical ports: CONFIG_ADDRESS holds 8 bits of offset. */
static uint32_t h_port_cfg_read(void *c, uint16_t bdf, uint16_t off, unsigned size)
{
	h_io_write(c, 0xcf8, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	return h_io_read(c, (uint16_t)(0xcfc + (off & 3)), size);
}
static void h_port_cfg_write(void *c, uint16_t bdf, uint16_t off, unsigned size, uint32_t v)
{
	h_io_write(c, 0xcf8, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	h_io_write(c, (uint16_t)(0xcfc + (off & 3)), size, v);
}
static bool c_removed;                       /* C was removed in this input */
static bool in_iov_write;                    /* a guest write to the PF's SR-IOV registers through the trap */
static uint64_t tolerated;
/* (a) at the access; false: a known fault's access, dropped. */
static bool wall_mem(uint64_t pa, const char *what)
{
	uint64_t off;
	if (hv_range(pa, 4))
		breach("(a)", "hypervisor %s at 0x%llx, inside a hypervisor range", what, (unsigned long long)pa);
	if (decoder(pa, &off) >= 0)
		return true;
	for (uint32_t k = 0; WALL_KNOWN_FAULT_REMOVE && c_removed && k < s.nfn; k++)
		if (who[k] == F_C && s.fn[k].table_pa && (pa & ~0xfffull) == (s.fn[k].table_pa & ~0xfffull)) {
			tolerated++;                        /* C's table as the trap took it before C was removed */
			return false;
		}
	/* An access a VF would decode with VF MSE on, during the trap's own
	 * write of the SR-IOV registers; one the function would decode if its
	 * bridge forwarded it: made as the fixed code would. */
	force_mse = WALL_KNOWN_FAULT_VFMSE && in_iov_write;
	force_win = WALL_KNOWN_FAULT_BRIDGE;
	if ((force_mse || force_win) && decoder(pa, &off) >= 0) {
		tolerated++;
		return true;
	}
	force_mse = force_win = false;
	breach("(a)", "hypervisor %s at 0x%llx, which no device decodes now", what, (unsigned long long)pa);
}
static uint32_t h_mem_read(void *c, uint64_t pa)
{
	(void)c;
	uint32_t v = wall_mem(pa, "read") ? dev_mem(pa, false, 0, true) : 0xffffffffu;
	force_mse = force_win = false;
	return v;
}
static void h_mem_write(void *c, uint64_t pa, uint32_t v)
{
	(void)c;
	if (trace)
		fprintf(stderr, "  hv mem write 0x%llx 0x%x\n", (unsigned long long)pa, v);
	if (wall_mem(pa, "write"))
		dev_mem(pa, true, v, true);
	force_mse = force_win = false;
}
/* ---- A vCPU's EPT violation (vmx/exit_ept.c), racing the trap ----
 * msi_trap_exit's trapped_at reads the trap's list of pages without the
 * trap's lock: a vCPU may fault on a page between its unmap (table_at)
 * and its listing (vmsi_table_place lists it after), or between its
 * delisting and its ept_restore_page (table_gone), and then meet
 * ept_map_sink (issue 43 item 9). Armed by operation 13, each fires once:
 * race_at inside the trap's next table_at, after the real unmap, on a page
 * of that table; race_gone inside the next table_gone, before the real
 * restore. */
static struct race { bool armed, write, known; uint8_t idx; } race_at, race_gone;
/* The exit for gpa once the virtual IOAPIC declined it (not modelled: its
 * page stays mapped here): the MSI trap's trapped_at (look; false: it ran
 * earlier, in a window, and found nothing), then wept_exit. -1: the
 * trap's page, emulated under its lock (the MMIO itself: guest_mem). */
static int vcpu_exit(uint64_t gpa, bool write, bool known, bool look)
{
	if (look && vmsi_trapped(&s, gpa))
		return -1;
	int x = wept_exit(gpa, write, known);
	if (trace)
		fprintf(stderr, "  vcpu %s at 0x%llx: EPT violation, %s (now %s)\n", write ? "write" : "read",
			(unsigned long long)gpa, wept_exit_name[x], wept_say(gpa & ~0xfffull));
	return x;
}
static void race(struct race *r, uint64_t pg)
{
	r->armed = false;
	if (wept_access(pg, r->write) != WA_FAULT)
		return;                             /* no violation */
	if (trace)
		fprintf(stderr, "  vcpu faults on 0x%llx in the trap's window\n", (unsigned long long)pg);
	vcpu_exit(pg, r->write, r->known, true);
}

/* vmx/msi_trap.c's hw_table_at and hw_table_gone on the real EPT. */
static bool h_table_at(void *c, uint64_t pa, uint32_t len)
{
	(void)c;
	bool ok = wept_table_at(pa, len);
	if (trace)
		fprintf(stderr, "  hv table at 0x%llx: %s\n", (unsigned long long)pa, ok ? "out of the EPT" : "refused");
	if (ok && race_at.armed) {
		uint64_t first = pa & ~0xfffull, n = (((pa + len + 0xfff) & ~0xfffull) - first) >> 12;
		race(&race_at, first + (race_at.idx % n) * 0x1000);
	}
	return ok;
}
static void h_table_gone(void *c, uint64_t pg)
{
	(void)c;
	if (trace)
		fprintf(stderr, "  hv table page 0x%llx given back\n", (unsigned long long)pg);
	if (race_gone.armed)
		race(&race_gone, pg);
	wept_table_gone(pg);
}
static unsigned h_place(void *c, uint64_t pa, uint64_t len) { (void)c; return vmsi_place_judge(&claims, pa, len); }
static void *h_alloc(void *c, size_t bytes)
{
	(void)c;
	if (nallocs >= sizeof allocs / sizeof allocs[0])
		return NULL;
	alloc_len[nallocs] = bytes ? bytes : 1;
	return allocs[nallocs++] = calloc(1, bytes ? bytes : 1);
}
static bool ecam_is_out(uint16_t bdf) { return ecam_out[bdf >> 3] >> (bdf & 7) & 1; }
static void h_fn_seen(void *c, uint16_t bdf, const struct vmsi_fn *f)
{
	(void)c;
	if (f && f - s.fn < 256)
		who[f - s.fn] = (int8_t)rid_fn(bdf);
	else
		ecam_out[bdf >> 3] &= (uint8_t)~(1u << (bdf & 7));   /* its ECAM page given back */
}
static void h_fn_moved(void *c, uint16_t from, uint16_t to)
{
	(void)c, (void)from;
	ecam_out[to >> 3] |= (uint8_t)(1u << (to & 7));
}

static const struct vmsi_hw hw_ecam = { h_ecam_read, h_ecam_write, h_io_read, h_io_write, h_mem_read, h_mem_write,
					h_table_at, h_place, NULL, NULL, h_table_gone, h_alloc, true, h_fn_seen, h_fn_moved };
static const struct vmsi_hw hw_port = { h_port_cfg_read, h_port_cfg_write, h_io_read, h_io_write, h_mem_read, h_mem_write,
					h_table_at, h_place, NULL, NULL, h_table_gone, h_alloc, false, h_fn_seen, NULL };

/* ---- The guest's accesses ---- */
/* The ports as vmx/msi_trap.c carries them out (msi_trap_port_hw): through
 * the segment's ECAM side where there is one (fault 4's fix); with fault 4
 * known, through mechanism #1 as before it. */
static const struct vmsi_hw *port_hw(void) { return WALL_KNOWN_FAULT_4 ? &hw_port : &hw_ecam; }
static uint32_t guest_port(uint16_t port, unsigned size, bool write, uint32_t v)
{
	if (write) {
		vmsi_port_write(&s, &dom, port_hw(), port, size, v);
		return 0;
	}
	return vmsi_port_read(&s, port_hw(), port, size);
}
/* Mechanism #1 as Linux uses it (offset < 256). */
/* A write the known faults hold back: the bridge's bus numbers while
 * VFs may lie beyond the PF's bus (fault 7). */
static bool held_back(uint16_t rid, unsigned off, unsigned size, bool write)
{
	return WALL_KNOWN_FAULT_7 && write && rid_fn(rid) == F_BR && off <= B_SUB && off + size > B_SEC &&
	       (rd(&m[F_PF], IOV_CTL, 2) & IOV_ARI);
}
static uint32_t cfg_ecam(uint16_t rid, unsigned off, unsigned size, bool write, uint32_t v);
static uint32_t cfg_port(uint16_t rid, unsigned off, unsigned size, bool write, uint32_t v)
{
	off &= 0xff & ~(size - 1);
	if (held_back(rid, off, size, write))
		return 0;
#if WALL_KNOWN_FAULT_4
	if (rid_fn(rid) >= F_VF1)
		return cfg_ecam(rid, off, size, write, v);   /* a VF's through ECAM alone */
#endif
	guest_port(0xcf8, 4, true, 0x80000000u | (uint32_t)rid << 8 | (off & 0xfc));
	return guest_port((uint16_t)(0xcfc + (off & 3)), size, write, v);
}
/* ECAM: the trapped pages through the trap, the others to the device. */
static uint32_t cfg_ecam(uint16_t rid, unsigned off, unsigned size, bool write, uint32_t v)
{
	off &= 0xfff & ~(size - 1);
	if (held_back(rid, off, size, write))
		return 0;
	if (ecam_is_out(rid)) {
		if (!write)
			return vmsi_cfg_read(&s, &hw_ecam, rid, (uint16_t)off, size);
		in_iov_write = rid_fn(rid) == F_PF && off >= IOV;
		vmsi_cfg_write(&s, &dom, &hw_ecam, rid, (uint16_t)off, size, v);
		in_iov_write = false;
		return 0;
	}
	if (write)
		m_cfg_write(rid, (uint16_t)off, size, v, false);
	return write ? 0 : m_cfg_read(rid, (uint16_t)off, size);
}
static uint32_t cfg(bool ports, uint16_t rid, unsigned off, unsigned size, bool write, uint32_t v)
{
	return ports && off < 0x100 ? cfg_port(rid, off, size, write, v) : cfg_ecam(rid, off, size, write, v);
}
/* A guest MMIO dword, through the real EPT (wall_ept.c): a present leaf
 * to its page (its own: the device, or RAM, the guest's; a sink: all
 * ones, a store to nobody); an EPT violation to the trap where it lists
 * the page, else to vmx/exit_ept.c's path (the sink, the store dropped
 * when known_store, #PF), and the access again. The hypervisor's devices'
 * ranges (the claims) are not modelled: nothing there. Beyond the
 * physical-address width no guest access is made: the model's, as
 * before the EPT was. */
static uint32_t guest_mem(uint64_t pa, bool write, uint32_t v, bool known)
{
	pa &= ~3ull;
	if (pa >= wept_gpa_limit())
		return hv_range(pa, 4) ? 0 : dev_mem(pa, write, v, false);
	for (uint32_t k = 0; k < claims.n; k++)
		if (overlaps(pa, 4, claims.r[k].base, claims.r[k].len))
			return 0;
	for (int tries = 0; tries < 3; tries++) {
		switch (wept_access(pa, write)) {
		case WA_IDENTITY:
			return hv_range(pa, 4) ? 0 : dev_mem(pa, write, v, false);
		case WA_FAULT:
			break;
		case WA_OTHER:
			breach("(g)", "guest %s at 0x%llx: the EPT maps it elsewhere: %s", write ? "write" : "read",
			       (unsigned long long)pa, wept_say(pa & ~0xfffull));
		default:
			return write ? 0 : 0xffffffffu;   /* a sink: absent memory */
		}
		if (vmsi_trapped(&s, pa)) {
			if (write)
				vmsi_mem_write(&s, &dom, &hw_ecam, pa, v);
			return write ? 0 : vmsi_mem_read(&s, &hw_ecam, pa);
		}
		int x = vcpu_exit(pa, write, known, false);
		if (x == WX_DROPPED || x == WX_PF)
			return 0;
	}
	breach("(e)", "guest %s at 0x%llx runs again forever: %s, the trap does not list it", write ? "write" : "read",
	       (unsigned long long)pa, wept_say(pa & ~0xfffull));
}

/* ---- The checks ---- */
static const uint32_t gid[3] = { 0, 1, 2 }, hid[3] = { 8, 9, 300 };

static void allowed(const char *what, int fi, uint64_t addr, uint32_t data, unsigned nvec)
{
	uint32_t dest = (uint32_t)(addr >> 12) & 0xff;
	if ((addr >> 32) || (addr & 0xfff00fffu) != 0xfee00000u || (dest != 8 && dest != 9))
		breach("(b)", "%s %s sends address 0x%llx", fname[fi], what, (unsigned long long)addr);
	unsigned dlm = data >> 8 & 7;
	if (dlm != 0 && dlm != 1 && dlm != 4)
		breach("(b)", "%s %s sends data 0x%x (delivery mode %u)", fname[fi], what, data, dlm);
	for (unsigned i = 0; dlm != 4 && i < nvec; i++) {
		unsigned vec = ((data & 0xff) & ~(nvec - 1)) | i;
		if (vec < 16 || (vec >= 0xf0 && vec != 0xff))
			breach("(b)", "%s %s sends vector 0x%x", fname[fi], what, vec);
	}
}

static void check(void)
{
	/* (d) */
	if (s.nfn > s.fn_room || s.pool_used > s.pool_room || s.npages > s.page_room || s.nbridge > VMSI_MAX_BRIDGES ||
	    (s.irte_count && s.irte_used > s.irte_count) || claims.n > VMSI_MAX_CLAIMS)
		breach("(d)", "nfn %u/%u pool %u/%u pages %u/%u bridges %u", s.nfn, s.fn_room, s.pool_used, s.pool_room, s.npages,
		       s.page_room, s.nbridge);
	for (int fi = 0; fi < NF; fi++) {
		struct mfn *f = &m[fi];
		if (!m_present(fi))
			continue;
		/* (b) MSI */
		uint16_t ctl = f->msi ? (uint16_t)rd(f, f->msi + 2, 2) : 0;
		if (ctl & 1) {
			unsigned mmc = ctl >> 1 & 7, mme = ctl >> 4 & 7, n = 1u << (mme < mmc ? mme : mmc);
			bool wide = ctl & 0x80, pvm = ctl & 0x100;
			unsigned data = f->msi + (wide ? 0xc : 8);
			uint32_t mask = pvm ? rd(f, data + 4, 4) : 0;
			if ((mask & ((1u << n) - 1)) != (1u << n) - 1) {
				uint32_t used = (1u << (data + 2 - f->msi - 2)) - 1;   /* control, address, data */
				if (f->cdirty & used)
					breach("(b)", "%s's MSI is enabled with registers the hypervisor did not write (0x%x)", fname[fi],
					       f->cdirty & used);
				uint64_t a = rd(f, f->msi + 4, 4) | (wide ? (uint64_t)rd(f, f->msi + 8, 4) << 32 : 0);
				allowed("MSI", fi, a, rd(f, data, 2), n);
			}
		}
		/* (b) and (c) MSI-X */
		uint16_t xc = f->msix ? (uint16_t)rd(f, f->msix + 2, 2) : 0;
		if (!(xc & 0x8000))
			continue;
		for (unsigned i = 0; !(xc & 0x4000) && i < f->nent; i++) {
			if (f->tab[i][3] & 1)
				continue;
			if (f->tdirty[i])
				breach("(b)", "%s's MSI-X entry %u unmasked with dwords the hypervisor did not write as its own (0x%x)",
				       fname[fi], i, f->tdirty[i]);
			allowed("MSI-X entry", fi, f->tab[i][0] | (uint64_t)f->tab[i][1] << 32, f->tab[i][2], 1);
		}
		uint64_t b, l;
		if (!m_bar(fi, &b, &l) || ((fi == F_PF || fi >= F_VF1) && !forwarded(b + f->tab_off)))
			continue;
		uint64_t t = b + f->tab_off;
		for (uint64_t pg = t & ~0xfffull; pg < t + 16ull * f->nent; pg += 0x1000)
			if (!wept_out(pg))
				breach("(c)", "%s's MSI-X is enabled, its table's page 0x%llx is in the guest's view (%s)", fname[fi],
				       (unsigned long long)pg, wept_say(pg));
	}
	for (uint32_t i = 0; i < s.npages; i++)
		if (!wept_out(s.page[i]))
			breach("(c)", "the trap lists page 0x%llx, which is not out of the EPT (%s)", (unsigned long long)s.page[i],
			       wept_say(s.page[i]));
	/* (g) */
	for (uint32_t i = 0; i < wept_taken.n; i++) {
		uint64_t pg = wept_taken.pg[i];
		if (!wept_out(pg))
			breach("(g)", "page 0x%llx the trap took out is not out of the EPT: %s", (unsigned long long)pg, wept_say(pg));
		if (!vmsi_trapped(&s, pg))
			breach("(g)", "page 0x%llx is out of the EPT and the trap does not list it: a vCPU's access runs again forever",
			       (unsigned long long)pg);
	}
	for (uint32_t i = 0; i < wept_fetched.n; i++) {
		uint64_t pg = wept_fetched.pg[i];
		bool large;
		if (!wept_out(pg) && !wept_sink(pg) && !wept_exec_ok(pg, &large))
			breach("(h)", "page 0x%llx a fetch mended is not an executable 4 KiB page now: %s", (unsigned long long)pg,
			       wept_say(pg));
	}
	for (uint32_t i = 0; i < wept_given.n; i++)
		if (!wept_back(wept_given.pg[i]))
			breach("(g)", "page 0x%llx the trap gave back is not the guest's again: %s", (unsigned long long)wept_given.pg[i],
			       wept_say(wept_given.pg[i]));
	for (uint32_t i = 0; i < wept_sunk.n; i++) {
		uint64_t pg = wept_sunk.pg[i], off;
		int fi = decoder(pg, &off);
		if (wept_sink(pg) && memmap_type_at(&mem, pg) != MEM_HV)
			breach("(g)", "the sink maps page 0x%llx, which is no hypervisor page (%s decodes it now): %s",
			       (unsigned long long)pg, fi >= 0 ? fname[fi] : "no device", wept_say(pg));
	}
	/* (f) */
	for (uint32_t k = 0; k < s.nfn; k++) {
		const struct vmsi_fn *g = &s.fn[k];
		if (g->gone || vmsi_find(&s, g->bdf) != g || !s.seen || !(s.seen[g->bdf >> 3] >> (g->bdf & 7) & 1))
			continue;
		int fi = rid_fn(g->bdf);
		if (fi >= 0 && fi != who[k])
			breach("(f)", "the trap emulates %s at %04x, where %s answers", who[k] >= 0 ? fname[who[k]] : "?", g->bdf,
			       fname[fi]);
	}
}

/* ---- Operations ---- */
static uint64_t pick_addr(uint8_t sel, uint32_t v)
{
	static const uint64_t where[] = {
		0xc0000000ull, 0xc0004000ull, 0xc0800000ull, 0xc1000000ull, 0xd0000000ull, 0xd0001000ull,
		0x10000000ull, 0x20000000ull, 0xe0000000ull, 0xfec00000ull, 0xfed00000ull, 0xfee00000ull,
		0x100000000ull, 0x200000000ull, 0x300000000ull, 0x400000000ull, 0x1000000000ull, 0x1000004000ull,
		0x1800000000ull, 0x2000000000ull, 0x3000000000ull, 0x4000000000ull, 1ull << 46, 0xfffffff000000000ull,
	};
	uint64_t a = where[sel % (sizeof where / sizeof where[0])];
	return sel & 0x80 ? a + ((uint64_t)(v & 0xffff) << 12) : a;
}
static uint32_t good_addr(uint8_t r) { return 0xfee00000u | gid[r % 3] << 12; }

/* The BAR registers the operations move: (function, offset, 64-bit). */
static const struct { uint8_t fi; uint16_t off; bool wide; } bars[] = {
	{ F_A, H_BAR0, true }, { F_PF, H_BAR0, false }, { F_PF, IOV_BAR0, true }, { F_C, H_BAR0, false },
};

static void op(const uint8_t *r)
{
	uint8_t r4 = r[4];
	uint32_t v = (uint32_t)r[4] | (uint32_t)r[5] << 8 | (uint32_t)r[6] << 16 | (uint32_t)r[7] << 24;
	unsigned size = 1u << (r[3] >> 1 & 3) % 3;
	bool write = r[3] & 1, ports = r[3] & 0x40;
	int fi = r[1] % NF;
	uint16_t rid = (uint16_t)(r[1] & 0x80 ? v >> 16 : rid_of(fi));
	switch (r[0] % 14) {
	case 0:       /* any configuration access through the ports */
		cfg_port(rid, r[2], size, write, v);
		break;
	case 1:       /* any configuration access through ECAM */
		cfg_ecam(rid, r[2] | (r[3] & 0xf0u) << 4, size, write, v);
		break;
	case 2:       /* any access to 0xCF8-0xCFF */
#if WALL_KNOWN_FAULT_4
		if (rid_fn(s.cf8 >> 8 & 0xffff) >= F_VF1)
			break;
#endif
		if ((r[2] & 7) >= 4 && (s.cf8 >> 31) &&
		    held_back((uint16_t)(s.cf8 >> 8), (s.cf8 & 0xfc) | (r[2] & 3), size, write))
			break;
		guest_port((uint16_t)(0xcf8 + (r[2] & 7)), size, write, v);
		break;
	case 3: {     /* a BAR sized as Linux does: decoding off, all ones, read, restored */
		unsigned b = r[1] % (sizeof bars / sizeof bars[0]);
		int f = bars[b].fi;
		uint16_t at = (uint16_t)rid_of(f), ctl = f == F_PF && bars[b].off == IOV_BAR0 ? IOV_CTL : H_CMD;
		uint32_t c = cfg(ports, at, ctl, 2, false, 0), lo = cfg(ports, at, bars[b].off, 4, false, 0);
		uint32_t hi = bars[b].wide ? cfg(ports, at, bars[b].off + 4u, 4, false, 0) : 0;
		if (r[3] & 8)
			cfg(ports, at, ctl, 2, true, c & ~(ctl == H_CMD ? H_CMD_MEM : IOV_MSE));
		cfg(ports, at, bars[b].off, 4, true, 0xffffffffu);
		(void)cfg(ports, at, bars[b].off, 4, false, 0);
		if (bars[b].wide) {
			cfg(ports, at, bars[b].off + 4u, 4, true, 0xffffffffu);
			(void)cfg(ports, at, bars[b].off + 4u, 4, false, 0);
			cfg(ports, at, bars[b].off + 4u, 4, true, hi);
		}
		cfg(ports, at, bars[b].off, 4, true, lo);
		if (r[3] & 8)
			cfg(ports, at, ctl, 2, true, c);
		break;
	}
	case 4: {     /* a BAR moved */
		unsigned b = r[1] % (sizeof bars / sizeof bars[0]);
		uint64_t a = pick_addr(r[2], v);
		uint16_t at = (uint16_t)rid_of(bars[b].fi);
		if (bars[b].wide && (r[3] & 8))
			cfg(ports, at, bars[b].off + 4u, 4, true, (uint32_t)(a >> 32));
		cfg(ports, at, bars[b].off, 4, true, (uint32_t)a);
		if (bars[b].wide && !(r[3] & 8))
			cfg(ports, at, bars[b].off + 4u, 4, true, (uint32_t)(a >> 32));
		break;
	}
	case 5: {     /* A's Resizable BAR control: 2^(n+20) bytes */
		unsigned n = r[2] & 0x3f;
#if WALL_KNOWN_FAULT_1
		n %= 12;                               /* below 4 GiB */
#endif
		if (r[3] & 8)
			cfg(false, 0, H_CMD, 2, true, 0);
		cfg_ecam(0, RB_CTL, size < 2 ? 2 : size, true, 1u << 5 | n << 8);
		if (r[3] & 8)
			cfg(ports, 0, H_CMD, 2, true, H_CMD_MEM);
		break;
	}
	case 6:       /* the bridge: bus numbers, windows, command */
		switch (r[2] & 3) {
		case 0: {
			uint8_t sec = (uint8_t)(1 + (v & 7)), sub = (uint8_t)(sec + (v >> 8 & 3));
			if (r[3] & 0x20)
				cfg(ports, 8, B_SEC, 1, true, sec);
			else
				cfg(ports, 8, B_PRI, 4, true, (uint32_t)sub << 16 | (uint32_t)sec << 8);
			break;
		}
		case 1: {
			uint64_t a = pick_addr(r[4], 0) & 0xfff00000u, z = a + ((uint64_t)(r[5] & 0x1f) << 20);
			cfg(ports, 8, B_MEM, 4, true, (uint32_t)(z >> 16 & 0xfff0) << 16 | (uint32_t)(a >> 16 & 0xfff0));
			break;
		}
		case 2: {
			uint64_t a = pick_addr(r[4], 0) & ~0xfffffull, z = a + ((uint64_t)r[5] << 30) - 1;
			cfg(ports, 8, B_PBASE_HI, 4, true, (uint32_t)(a >> 32));
			cfg(ports, 8, B_PLIM_HI, 4, true, (uint32_t)(z >> 32));
			cfg(ports, 8, B_PMEM, 4, true, (uint32_t)(z >> 16 & 0xfff0) << 16 | (uint32_t)(a >> 16 & 0xfff0));
			break;
		}
		default:
			cfg(ports, 8, H_CMD, 2, true, v & 6);
		}
		break;
	case 7: {     /* SR-IOV */
		uint16_t pf = (uint16_t)rid_of(F_PF);
		switch (r[2] & 3) {
		case 0:
#if WALL_KNOWN_FAULT_2
			v &= ~IOV_ARI, v |= rd(&m[F_PF], IOV_CTL, 2) & IOV_ARI;
#endif
			cfg_ecam(pf, IOV_CTL, 2, true, v & 0x1f);
			break;
		case 1:
#if WALL_KNOWN_FAULT_2
			if (r[4] % 6 != 4)
				break;                         /* NumVFs kept at TotalVFs */
#endif
			cfg_ecam(pf, IOV_NUM, 2, true, r[4] % 6);
			break;
		case 2:
#if WALL_KNOWN_FAULT_2
			break;                                 /* System Page Size kept */
#endif
			cfg_ecam(pf, IOV_PGSZ, 4, true, 1u << (r[4] % 12));
			break;
		default:     /* the PF's device-specific registers through the ports */
#if WALL_KNOWN_FAULT_4
			break;
#endif
			cfg_port(pf, 0x60 + r[4] % 0xa0, size, true, v);
		}
		break;
	}
	case 8: {     /* MSI registers of A or C */
		int f = r[1] & 1 ? F_C : F_A;
		const struct mfn *x = &m[f];
		bool wide = rd(x, x->msi + 2, 2) & 0x80;
		unsigned reg = r[2] % 5, off = x->msi + (reg == 0 ? 2 : reg == 1 ? 4 : reg == 2 ? 8 : reg == 3 ? (wide ? 0xc : 8) : 0x10);
		uint32_t val = r[3] & 0x10 ? v : reg == 0 ? (v & 0x71) : reg == 1 ? good_addr(r[4]) : reg == 2 ? 0 :
			       reg == 3 ? 0x20u + (r[5] & 0xc0) + (r[4] & 0x1f) : v & 0xf;
		if (reg == 2 && !wide)
			break;
		cfg(ports, (uint16_t)rid_of(f), off, reg == 0 || reg == 3 ? 2 : 4, true, val);
		break;
	}
	case 9: {     /* MSI-X message control */
		static const uint8_t xf[] = { F_A, F_PF, F_C, F_VF1, F_VF1 + 1, F_VF1 + 2, F_VF1 + 3 };
		int f = xf[r[1] % sizeof xf];
		cfg(ports, (uint16_t)rid_of(f), m[f].msix + 2u, 2, true, v & 0xc000);
		break;
	}
	case 10: {    /* an MSI-X table or PBA dword */
		static const uint8_t xf[] = { F_A, F_PF, F_C, F_VF1, F_VF1 + 1, F_VF1 + 2, F_VF1 + 3 };
		int f = xf[r[1] % sizeof xf];
		unsigned i = r[2] % m[f].nent, j = r[2] >> 4 & 3;
		uint64_t b = 0, l, pa;
		const struct vmsi_fn *g = vmsi_find(&s, (uint16_t)rid_of(f));
		switch (r[3] >> 4 & 3) {
		case 0: pa = m_bar(f, &b, &l) ? b + m[f].tab_off + 16 * i + 4 * j : pick_addr(r[5], v); break;
		case 1: pa = g && g->table_pa ? g->table_pa + 16 * i + 4 * j : pick_addr(r[5], v); break;
		case 2: pa = m_bar(f, &b, &l) ? b + m[f].pba_off + 4 * j : pick_addr(r[5], v); break;
		default: pa = pick_addr(r[5], v) + 4 * j;
		}
		uint32_t val = r[3] & 0x80 ? v : j == 0 ? good_addr(r[4]) : j == 1 ? 0 : j == 2 ? 0x20u + r[4] % 0xd0 : v & 1;
		guest_mem(pa, write, val, !(r[3] & 8));
		break;
	}
	case 11:      /* C hot-added (answering CRS a while) or removed */
		if (r[2] & 1) {
#if WALL_KNOWN_FAULT_CRS
			r4 = 0;                                /* ready at once */
#endif
			if (!m[F_C].present)
				init_C(true, r4 % 4);
		} else {
			c_removed |= m[F_C].present;
			m[F_C].present = false;
		}
		break;
	case 13: {    /* a vCPU's EPT violation on a page the trap's list does not (yet, or any more) show */
		bool wr = r[3] & 1, known = !(r[3] & 8);
		switch (r[2] & 3) {
		case 0:       /* in the window of the trap's next unmap: after it, before the listing */
			race_at = (struct race){ true, wr, known, r[4] };
			break;
		case 1:       /* in the window of the trap's next give-back: after the delisting, before the restore */
			race_gone = (struct race){ true, wr, known, r[4] };
			break;
		case 2: {     /* a page taken out (or given back): trapped_at ran in its window, found nothing; the rest now */
			const struct wept_pages *p = r[3] & 0x20 ? &wept_given : &wept_taken;
			if (p->n)
				vcpu_exit(p->pg[r[4] % p->n] | (v & 0xffc), wr, known, false);
			break;
		}
		default: {    /* any page now: the whole exit, where the access faults */
			uint64_t pa = pick_addr(r[5], v) | (v & 0xffc);
			if ((r[3] & 0x40) && wept_nx_on() && pa < wept_gpa_limit()) {
				/* an instruction fetch: nx_huge's split first (vmx/exit_ept.c) */
				bool large;
				int x = wept_fetch(pa);
				if (trace)
					fprintf(stderr, "  vcpu fetch at 0x%llx: %d (now %s)\n", (unsigned long long)pa, x,
						wept_say(pa & ~0xfffull));
				if (x < 0 && wept_access(pa, false) == WA_FAULT)
					vcpu_exit(pa, false, known, true);
				else if (x >= 0 && !wept_exec_ok(pa & ~0xfffull, &large))
					breach("(h)", "fetch at 0x%llx: mended (%d) and still not executable 4 KiB: %s",
					       (unsigned long long)pa, x, wept_say(pa & ~0xfffull));
			} else if (pa < wept_gpa_limit() && wept_access(pa, wr) == WA_FAULT)
				vcpu_exit(pa, wr, known, true);
		}
		}
		break;
	}
	default: {    /* a command register */
		static const uint8_t cf[] = { F_A, F_BR, F_PF, F_C };
		int f = cf[r[1] % sizeof cf];
		cfg(ports, (uint16_t)rid_of(f), H_CMD, r[3] & 8 ? 1 : 2, true, v & 6);
	}
	}
}

static void boot(uint8_t b)
{
	init_A(!(b & 2));
	init_BR();
	init_PF(b);
	init_C(b & 1, 0);
	phys_cf8 = 0;
	memset(&s, 0, sizeof s);
	memset(who, -1, sizeof who);
	memset(ecam_out, 0, sizeof ecam_out);
	mem.count = 0;
	static const struct mem_range map[] = {
		{ 0x0, 0x10000000ull, MEM_USABLE }, { 0x10000000ull, 0x400000ull, MEM_HV },
		{ 0x10400000ull, 0x6fc00000ull, MEM_USABLE }, { 0xe0000000ull, 0x10000000ull, MEM_RESERVED },
		{ 0x100000000ull, 0x200000000ull, MEM_USABLE }, { 0x300000000ull, 0x100000ull, MEM_HV },
		{ 0x300100000ull, 0xfff00000ull, MEM_USABLE },
	};
	for (unsigned i = 0; i < sizeof map / sizeof map[0]; i++)
		mem.r[mem.count++] = map[i];
	memset(&claims, 0, sizeof claims);
	claims.mem = &mem;
	vmsi_claims_reach(&claims, 46, 1ull << 46);
	vmsi_claim(&claims, 0xfee00000u, 1u << 20);
	vmsi_claim(&claims, 0xfec00000u, 0x1000);
	vmsi_claim(&claims, 0xfed00000u, 0x1000);
	vmsi_claim(&claims, 0xfed90000u, 0x1000);
	vmsi_claim(&claims, 0xe0000000u, 256u << 20);
	wept_boot(&mem, !(b & 0x80), b & 0x10);  /* bit 7: a CPU without 1 GiB EPT pages; bit 4: nx_huge */
	dom = (struct vioapic_dom){ .apic_id = gid, .host_apic_id = hid, .n = 3, .guest_x2apic = true };
	dom.host_vectors[3] = 0x7fffull << 48;
	claims.boot = true;
	vmsi_scan(&s, &hw_ecam);
	claims.boot = false;
	wept_run();                               /* msi_trap_on: the trap's unmaps from now on are run-time ones */
	for (uint32_t k = 0; k < s.nfn && k < 256; k++)
		who[k] = (int8_t)rid_fn(s.fn[k].bdf);
	/* vmx/msi_trap.c's seg_setup: the pages of the trapped functions, of
	 * the bridges and of the absent functions out of the EPT. */
	memset(ecam_out, 0xff, sizeof ecam_out);
	for (uint32_t i = 0; s.seen && i < sizeof ecam_out; i++)
		for (uint32_t k = 0; s.seen[i] && k < 8; k++) {
			uint16_t bdf = (uint16_t)(i << 3 | k);
			if ((s.seen[i] >> k & 1) && !vmsi_find(&s, bdf) && !vmsi_bridge_named(&s, bdf, true))
				ecam_out[i] &= (uint8_t)~(1u << k);
		}
}

/* The boot (two bus walks) once per boot configuration: a snapshot of
 * the model and of the trap, restored for each input. */
static struct snap {
	bool done;
	struct mfn m[NF];
	struct vmsi s;
	struct vmsi_claims claims;
	void *arr[8];
	size_t len[8];
	unsigned n;
	uint8_t ecam_out[sizeof ecam_out];
	struct wept_snap *ept;
	int8_t who[256];
} *snaps[256];

static void *moved(const struct snap *p, const void *q)
{
	for (unsigned i = 0; q && i < p->n; i++)
		if (p->arr[i] == q)
			return allocs[i];
	return NULL;
}

static void restore(uint8_t b)
{
	struct snap *p = snaps[b];
	if (!p) {
		boot(b);
		p = snaps[b] = calloc(1, sizeof *p);
		memcpy(p->m, m, sizeof m);
		p->s = s, p->claims = claims, p->n = nallocs, p->ept = wept_save();
		for (unsigned i = 0; i < nallocs; i++) {
			p->arr[i] = allocs[i], p->len[i] = alloc_len[i];
			allocs[i] = NULL;
		}
		memcpy(p->ecam_out, ecam_out, sizeof ecam_out);
		memcpy(p->who, who, sizeof who);
		nallocs = 0;
	}
	memcpy(m, p->m, sizeof m);
	s = p->s, claims = p->claims;
	wept_load(p->ept);
	for (unsigned i = 0; i < p->n; i++) {
		allocs[i] = malloc(p->len[i]), alloc_len[i] = p->len[i];
		memcpy(allocs[i], p->arr[i], p->len[i]);
	}
	nallocs = p->n;
	s.fn = moved(p, p->s.fn), s.pool = moved(p, p->s.pool), s.page = moved(p, p->s.page), s.seen = moved(p, p->s.seen);
	for (uint32_t i = 0; s.fn && i < s.nfn; i++)
		if (s.fn[i].ent)
			s.fn[i].ent = s.pool + (s.fn[i].ent - p->s.pool);
	memcpy(ecam_out, p->ecam_out, sizeof ecam_out);
	memcpy(who, p->who, sizeof who);
	phys_cf8 = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	execs++;
	op_no = 0;
	trace = getenv("WALL_TRACE") != NULL;
	race_at.armed = race_gone.armed = false;
	restore(n ? d[0] : 0);
	c_removed = false;
	check();
	for (size_t i = 1; i + 8 <= n; i += 8) {
		op_no++;
		if (trace)
			fprintf(stderr, "op %u: %02x %02x %02x %02x %08x\n", op_no, d[i], d[i + 1], d[i + 2], d[i + 3],
				(uint32_t)d[i + 4] | (uint32_t)d[i + 5] << 8 | (uint32_t)d[i + 6] << 16 | (uint32_t)d[i + 7] << 24);
		op(d + i);
		if (s.nfn > 256)
			breach("(d)", "nfn %u", s.nfn);
		check();
	}
	for (unsigned i = 0; i < nallocs; i++)
		free(allocs[i]);
	nallocs = 0;
	return 0;
}
