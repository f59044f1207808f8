/* Issue 35 item 4: functions the boot's scan never saw. SR-IOV VFs, which
 * answer only once the guest sets VF Enable in their PF's capability, and
 * a hot-added function: each found and trapped at the guest's first
 * configuration access, before it can program an MSI or MSI-X of its own;
 * a VF's MSI-X table placed in its PF's VF BAR; the VFs dropped when VF
 * Enable is cleared.
 *
 * The model, written from the specifications alone (no constant from the
 * project's headers):
 *  - PCI Express Base Specification, "Enhanced Configuration Access
 *    Mechanism": 4 KiB of configuration space per function; a function that
 *    is not there reads all ones;
 *  - "Extended Capabilities": from 100h, a header dword with the ID in
 *    15:0 and the next offset in 31:20;
 *  - "Single Root I/O Virtualization and Sharing": the SR-IOV capability
 *    (ID 0010h): SR-IOV Control at +08h (bit 0 VF Enable, bit 3 VF MSE),
 *    InitialVFs +0Ch, TotalVFs +0Eh, NumVFs +10h, First VF Offset +14h, VF
 *    Stride +16h, VF BAR0 +24h. VF n (1..NumVFs) answers at the PF's
 *    routing ID + First VF Offset + (n - 1) * VF Stride once VF Enable is
 *    set; its Vendor ID and Device ID read FFFFh (the VF Device ID is
 *    the PF's capability's, +1Ah), so that only the PF tells a VF is
 *    there; its own BARs read 0 (the "VF BAR" is the PF's, each VF
 *    decoding the n-th slice of the VF BAR's size while VF MSE is set);
 *  - PCI 3.0, "MSI-X Capability and Table Structure" (ID 11h; message
 *    control 10:0 table size - 1, 15 enable; +4 table offset/BIR) and "MSI
 *    Capability Structure" (ID 05h; control, address +4, data +8), status
 *    bit 4 and the pointer at 34h. */
#include "test.h"
#include "../../pci/vmsi.h"

#define PF      0x0018u              /* 00:03.0 */
#define HOT     0x0028u              /* 00:05.0, hot-added */
#define SRIOV   0x160u
#define FIRST   0x80u                /* First VF Offset: VF 1 at 00:13.0 */
#define STRIDE  1u
#define VF(n)   (PF + FIRST + ((n) - 1) * STRIDE)
#define VF_SIZE 0x4000u              /* each VF's slice of VF BAR0 */
#define VF_BAR  0xe0100000u
#define NENT    4u
#define TOFF    0x2000u              /* MSI-X table offset in the BAR */

struct fn {
	uint16_t bdf;
	bool vf, present;
	uint8_t cfg[4096], wmask[4096];
};
static struct {
	struct fn f[8];
	unsigned n;
	uint8_t vfmem[4][VF_SIZE];       /* what VF n decodes */
	unsigned seen_calls, table_gone;
	unsigned lost;                   /* memory writes no VF decodes (VF MSE off, outside the VF BAR) */
	bool vf_unready;                 /* VFs enabled but not answering yet (before the 100 ms the specification allows) */
	const struct vmsi_fn *seen_last;
} M;

static void put(struct fn *f, unsigned off, unsigned size, uint32_t v, uint32_t wmask)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wmask[off + i] = (uint8_t)(wmask >> 8 * i);
	}
}
static uint32_t get(const struct fn *f, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)f->cfg[off + i] << 8 * i;
	return v;
}

static struct fn *fn_add(uint16_t bdf, bool vf)
{
	struct fn *f = &M.f[M.n++];
	memset(f, 0, sizeof *f);
	f->bdf = bdf;
	f->vf = vf;
	f->present = !vf;
	put(f, 0x00, 4, vf ? 0xffffffffu : 0x10ed8086u, 0);   /* a VF's Vendor and Device ID read FFFFh */
	put(f, 0x06, 2, 0x0010, 0);          /* capabilities list */
	put(f, 0x34, 1, 0x40, 0);
	return f;
}

static void msix_cap(struct fn *f, unsigned at)
{
	put(f, at, 2, 0x11, 0);
	put(f, at + 2, 2, NENT - 1, 0xc000);
	put(f, at + 4, 4, TOFF | 0, 0);      /* BIR 0 */
}

/* The PF: MSI-X in its own BAR0, and SR-IOV with 4 VFs possible. */
static void model_init(void)
{
	memset(&M, 0, sizeof M);
	struct fn *pf = fn_add(PF, false);
	put(pf, 0x04, 2, 0x0002, 0x0006);    /* memory decoding on */
	put(pf, 0x10, 4, 0xfe000000u, 0xffffc000u);
	msix_cap(pf, 0x40);
	put(pf, 0x100, 4, 0x00010000u | SRIOV << 20, 0);     /* a first capability (AER), then SR-IOV */
	put(pf, SRIOV, 4, 0x00010010u, 0);
	put(pf, SRIOV + 0x08, 2, 0, 0x0009);                  /* VF Enable, VF MSE */
	put(pf, SRIOV + 0x0c, 2, 4, 0);
	put(pf, SRIOV + 0x0e, 2, 4, 0);
	put(pf, SRIOV + 0x10, 2, 0, 0xffff);
	put(pf, SRIOV + 0x14, 2, FIRST, 0);
	put(pf, SRIOV + 0x16, 2, STRIDE, 0);
	put(pf, SRIOV + 0x1c, 4, 0x553, 0);                   /* Supported Page Sizes: 4K, 8K, 64K, 256K, 1M, 4M */
	put(pf, SRIOV + 0x20, 4, 1, 0xffffffffu);             /* System Page Size: 4 KiB */
	put(pf, SRIOV + 0x24, 4, 0, 0xffffc000u);            /* VF BAR0: 32-bit, 16 KiB per VF */
	for (unsigned n = 1; n <= 4; n++)
		msix_cap(fn_add((uint16_t)VF(n), true), 0x40);
}

static struct fn *at(uint16_t bdf)
{
	for (unsigned i = 0; i < M.n; i++)
		if (M.f[i].bdf == bdf) {
			struct fn *f = &M.f[i];
			if (!f->vf)
				return f->present ? f : NULL;
			const struct fn *pf = &M.f[0];
			unsigned n = (bdf - PF - FIRST) / STRIDE + 1;
			return (get(pf, SRIOV + 0x08, 2) & 1) && n <= get(pf, SRIOV + 0x10, 2) && !M.vf_unready ? f : NULL;
		}
	return NULL;
}

static uint64_t vf_slice(void);
/* VF BAR0's writable bits from the slice up (sized in multiples of the
 * System Page Size). */
static void vf_bar0_follow_page_size(void)
{
	struct fn *pf = &M.f[0];
	uint32_t w = (uint32_t)~(vf_slice() - 1) & ~0xfu;
	put(pf, SRIOV + 0x24, 4, get(pf, SRIOV + 0x24, 4) & (w | 0xf), w);
}
static uint32_t m_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	const struct fn *f = at(bdf);
	return f ? get(f, off & 0xfff, size) : 0xffffffffu >> (32 - 8 * size);
}
static void m_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx;
	struct fn *f = at(bdf);
	for (unsigned i = 0; f && i < size; i++) {
		unsigned o = (off + i) & 0xfff;
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wmask[o]) | ((val >> 8 * i) & f->wmask[o]));
	}
	if (f == &M.f[0] && off < SRIOV + 0x24 && off + size > SRIOV + 0x20)
		vf_bar0_follow_page_size();
}
/* Each VF's slice of VF BAR0: its size, at least the System Page Size
 * (SR-IOV: +20h, 4 KiB << n for bit n; VF BARs are aligned to it). */
static uint64_t vf_slice(void)
{
	uint32_t sps = get(&M.f[0], SRIOV + 0x20, 4);
	uint64_t page = sps ? 4096ull << __builtin_ctz(sps) : 4096;
	return page > VF_SIZE ? page : VF_SIZE;
}
/* VF n decodes [VF BAR0 + (n - 1) * slice, + slice) while VF Enable and
 * VF MSE (its registers in the first VF_SIZE bytes). */
static uint8_t *vf_mem(uint64_t pa)
{
	const struct fn *pf = &M.f[0];
	uint32_t ctl = get(pf, SRIOV + 0x08, 2), base = get(pf, SRIOV + 0x24, 4) & ~0xfu;
	uint64_t sl = vf_slice();
	if ((ctl & 9) != 9 || !base || pa < base || pa >= base + 4ull * sl || (pa - base) % sl >= VF_SIZE)
		return NULL;
	unsigned n = (unsigned)((pa - base) / sl);
	return n < get(pf, SRIOV + 0x10, 2) ? &M.vfmem[n][(pa - base) % sl] : NULL;
}
static uint32_t m_mem_read(void *ctx, uint64_t pa)
{
	(void)ctx;
	uint8_t *p = vf_mem(pa);
	uint32_t v = 0xffffffffu;
	if (p)
		memcpy(&v, p, 4);
	return v;
}
static void m_mem_write(void *ctx, uint64_t pa, uint32_t val)
{
	(void)ctx;
	uint8_t *p = vf_mem(pa);
	if (p)
		memcpy(p, &val, 4);
	M.lost += !p;
}
static uint32_t m_io_read(void *ctx, uint16_t port, unsigned size) { (void)ctx, (void)port, (void)size; return ~0u; }
static void m_io_write(void *ctx, uint16_t port, unsigned size, uint32_t val) { (void)ctx, (void)port, (void)size, (void)val; }
static bool m_table_at(void *ctx, uint64_t pa, uint32_t len) { (void)ctx, (void)pa, (void)len; return true; }
static void m_table_gone(void *ctx, uint64_t pg) { (void)ctx, (void)pg; M.table_gone++; }
static void m_seen(void *ctx, uint16_t bdf, const struct vmsi_fn *f)
{
	(void)ctx, (void)bdf;
	M.seen_calls++;
	M.seen_last = f;
}

static struct vmsi S;
static struct vmsi_hw H = { m_cfg_read, m_cfg_write, m_io_read, m_io_write, m_mem_read, m_mem_write, m_table_at, NULL, NULL,
			    NULL, m_table_gone, test_alloc, true, m_seen, NULL };
static uint32_t gids[1] = { 0 }, hids[1] = { 0 };

static struct vioapic_dom dom(void)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = hids, .n = 1, .guest_x2apic = true };
	d.host_vectors[3] = 0xffffull << 48;
	return d;
}
static uint32_t g_rd(uint16_t bdf, unsigned off, unsigned size) { return vmsi_cfg_read(&S, &H, bdf, (uint16_t)off, size); }
static void g_wr(uint16_t bdf, unsigned off, unsigned size, uint32_t v)
{
	struct vioapic_dom d = dom();
	vmsi_cfg_write(&S, &d, &H, bdf, (uint16_t)off, size, v);
}

static void setup(void)
{
	model_init();
	memset(&S, 0, sizeof S);
	CHECK(vmsi_scan(&S, &H));
}

/* A hot-added function at HOT with an MSI capability (32-bit, one vector)
 * at 0x40: control's enable and multiple message enable writable. */
static struct fn *hot_msi_fn(void)
{
	struct fn *h = fn_add(HOT, false);
	put(h, 0x40, 4, 0x05, 0);
	put(h, 0x42, 2, 0x0000, 0x0071);
	put(h, 0x44, 4, 0, 0xfffffffcu);
	put(h, 0x48, 2, 0, 0xffff);
	return h;
}

/* The scan counts the VFs SR-IOV can enable and sizes for them; the PF's
 * VF BAR is sized at boot. */
TEST(vmsi_sriov_counted_and_vf_bar_sized)
{
	setup();
	CHECK_EQ(S.need.fns, 1);
	CHECK_EQ(S.need.vfs, 4);
	CHECK_EQ(S.need.vf_entries, 4 * NENT);
	CHECK(S.fn_room >= 1 + 4);
	CHECK(S.pool_room >= 5 * NENT);
	CHECK_EQ(S.nfn, 1);
	CHECK_EQ(S.fn[0].sriov, SRIOV);
	CHECK_EQ(S.fn[0].vf_bar_size[0], VF_SIZE);
	CHECK_EQ(get(&M.f[0], SRIOV + 0x24, 4), 0);          /* the VF BAR as it was */
}

/* VF BARs as 82576-like PFs have them (QEMU 10's igb): VF BAR0 and VF
 * BAR3 64-bit (PCI 3.0, "Base Address Registers": type 10b in bits 2:1,
 * the next register the upper half), VF BAR2 and VF BAR5 not
 * implemented (read 0, writes ignored). Each 64-bit pair is one BAR,
 * sized once, its upper half no BAR of its own; an unimplemented BAR has
 * no size. (Before: [1] 0x10, the upper half sized as a 32-bit BAR, and
 * [2] 4 GiB, the unimplemented one's zero mask read as a 32-bit BAR's
 * upper bits.) */
TEST(vmsi_sriov_64bit_vf_bars_sized_as_pairs)
{
	model_init();
	struct fn *pf = &M.f[0];
	put(pf, SRIOV + 0x24, 4, 0x4, 0xffffc000u);           /* VF BAR0: 64-bit, 16 KiB a VF */
	put(pf, SRIOV + 0x28, 4, 0, 0xffffffffu);
	put(pf, SRIOV + 0x30, 4, 0xc, 0xffff0000u);           /* VF BAR3: 64-bit prefetchable, 64 KiB a VF */
	put(pf, SRIOV + 0x34, 4, 0, 0xffffffffu);
	memset(&S, 0, sizeof S);
	CHECK(vmsi_scan(&S, &H));
	CHECK_EQ(S.fn[0].vf_bar_size[0], VF_SIZE);
	CHECK_EQ(S.fn[0].vf_bar_size[1], 0);
	CHECK_EQ(S.fn[0].vf_bar_size[2], 0);
	CHECK_EQ(S.fn[0].vf_bar_size[3], 0x10000);
	CHECK_EQ(S.fn[0].vf_bar_size[4], 0);
	CHECK_EQ(S.fn[0].vf_bar_size[5], 0);
	CHECK_EQ(get(pf, SRIOV + 0x28, 4), 0);                 /* every register as it was */
	CHECK_EQ(get(pf, SRIOV + 0x30, 4), 0xc);
	CHECK_EQ(get(pf, SRIOV + 0x34, 4), 0);
}

/* A VF touched before it answers (the PCIe specification gives a VF 100 ms
 * after VF Enable; a guest need not wait): everything reads all ones, the
 * Status register too. It must not be taken as a VF without MSI-X and
 * never probed again, or the guest could program its MSI-X itself once it
 * answers. (Before: 'M.seen_calls == 0 (0x1 != 0x0)', then 'S.nfn == 2
 * (0x1 != 0x2)' at the access once it answers.) */
TEST(vmsi_sriov_vf_touched_before_it_answers_found_later)
{
	setup();
	g_wr(PF, SRIOV + 0x10, 2, 1);
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	M.vf_unready = true;
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(1), 0x06, 2), 0xffff);
	CHECK_EQ(S.nfn, 1);
	CHECK_EQ(M.seen_calls, 0);
	M.vf_unready = false;
	CHECK_EQ(g_rd((uint16_t)VF(1), 0x34, 1), 0x40);
	CHECK_EQ(S.nfn, 2);
	CHECK_EQ(S.vfs_found, 1);
	const struct vmsi_fn *v = vmsi_find(&S, (uint16_t)VF(1));
	CHECK(v != NULL && v->msix == 0x40 && v->table_pa == VF_BAR + TOFF);
}

/* A VF found when the trap's arrays (sized at boot with room) are full:
 * not trapped, counted as untrapped, and the hook told with no trap
 * (vmx/msi_trap.c says it and reports hvstat: msi ... untrapped=). */
TEST(vmsi_sriov_vf_past_the_room_counted)
{
	setup();
	S.fn_room = S.nfn;                                     /* full */
	g_wr(PF, SRIOV + 0x10, 2, 1);
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(1), 0x34, 1), 0x40);
	CHECK_EQ(S.untrapped, 1);
	CHECK_EQ(S.vfs_found, 0);
	CHECK_EQ(M.seen_calls, 1);
	CHECK(M.seen_last == NULL);
	CHECK(vmsi_find(&S, (uint16_t)VF(1)) == NULL);
}

/* VF Enable: each VF found at the guest's first access, trapped, its
 * table in its slice of the PF's VF BAR; its MSI-X routed through the
 * trap; VF Enable cleared: the VFs dropped, their pages given back. */
TEST(vmsi_sriov_vfs_found_at_first_access)
{
	setup();
	CHECK_EQ(g_rd((uint16_t)VF(1), 0x34, 1), 0xff);      /* not enabled: nothing there */
	CHECK_EQ(S.nfn, 1);
	g_wr(PF, SRIOV + 0x10, 2, 2);                          /* NumVFs */
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	g_wr(PF, SRIOV + 0x08, 2, 9);                          /* VF Enable, VF MSE */
	CHECK_EQ(get(&M.f[0], SRIOV + 0x08, 2), 9);
	/* The guest's first access: the VF's Vendor ID, FFFFh as for an absent
	 * function; only its PF tells that it is there. */
	CHECK_EQ(g_rd((uint16_t)VF(2), 0, 2), 0xffff);
	CHECK_EQ(S.nfn, 2);
	CHECK_EQ(S.vfs_found, 1);
	CHECK_EQ(M.seen_calls, 1);
	const struct vmsi_fn *v2 = vmsi_find(&S, (uint16_t)VF(2));
	CHECK(v2 != NULL);
	if (!v2)
		return;
	CHECK(M.seen_last == v2);
	CHECK_EQ(v2->pf, 1);
	CHECK_EQ(v2->vf, 2);
	CHECK_EQ(v2->table_pa, VF_BAR + VF_SIZE + TOFF);      /* VF 2's slice */
	CHECK_EQ(v2->bar_size, VF_SIZE);
	CHECK(vmsi_trapped(&S, v2->table_pa));
	/* The guest's MSI-X on VF 2: entry 0, then enabled. */
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, v2->table_pa, 0xfee00000u);
	vmsi_mem_write(&S, &d, &H, v2->table_pa + 8, 0x0041);
	vmsi_mem_write(&S, &d, &H, v2->table_pa + 12, 0);
	g_wr((uint16_t)VF(2), 0x42, 2, 0x8000);
	CHECK_EQ(v2->routes, 1);
	uint32_t data;
	memcpy(&data, &M.vfmem[1][TOFF + 8], 4);
	CHECK_EQ(data, 0x0041);                                /* written by the hypervisor into VF 2's table */
	CHECK_EQ(g_rd((uint16_t)VF(1), 0x34, 1), 0x40);
	CHECK_EQ(S.vfs_found, 2);
	/* VF Enable cleared. */
	unsigned gone = M.table_gone;
	g_wr(PF, SRIOV + 0x08, 2, 0);
	CHECK_EQ(S.vfs_gone, 2);
	CHECK_EQ(v2->table_pa, 0);
	CHECK(M.table_gone > gone);
	CHECK(!vmsi_trapped(&S, VF_BAR + VF_SIZE + TOFF));
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0xff);
	/* Enabled again: found again, in the same slot. */
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0x40);
	CHECK(vmsi_find(&S, (uint16_t)VF(2)) == v2);
	CHECK_EQ(S.nfn, 3);
	CHECK_EQ(v2->table_pa, VF_BAR + VF_SIZE + TOFF);
}

/* A function that answers after the scan (hot-added) is trapped at the
 * guest's first access: the MSI it then programs is the trap's (the guest
 * reads back its own address, the device holds the hypervisor's). */
TEST(vmsi_hot_added_function_trapped_at_first_access)
{
	setup();
	struct fn *h = hot_msi_fn();
	CHECK_EQ(g_rd(HOT, 0, 2), 0x8086);
	CHECK_EQ(S.hot_added, 1);
	CHECK_EQ(S.nfn, 2);
	CHECK(vmsi_find(&S, HOT) != NULL);
	if (!vmsi_find(&S, HOT))
		return;
	g_wr(HOT, 0x44, 4, 0xfee00000u);
	g_wr(HOT, 0x48, 2, 0x0051);
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK_EQ(g_rd(HOT, 0x44, 4), 0xfee00000u);
	CHECK_EQ(get(h, 0x42, 2) & 1, 1);
	CHECK_EQ(vmsi_find(&S, HOT)->routes, 1);
	/* An empty slot asked again and again: nothing taken, asked each time. */
	CHECK_EQ(g_rd(0x0030, 0, 2), 0xffff);
	CHECK_EQ(g_rd(0x0030, 0, 2), 0xffff);
	CHECK_EQ(S.nfn, 2);
}

/* Issue 43, item 6: a function still initialising answers a
 * configuration read with Configuration Request Retry Status; with CRS
 * Software Visibility on (Linux turns it on at root ports) the root
 * complex completes a read of the Vendor ID with 0001h (PCI Express Base
 * Specification, "Configuration Request Retry Status"), and any other
 * bytes all ones. That is "not yet", never a device: nothing is taken or
 * marked seen, and once the function answers it is found and trapped. */
TEST(vmsi_crs_vendor_0001_is_not_yet_a_device)
{
	setup();
	struct fn *h = fn_add(HOT, false);
	uint8_t real[0x50];
	put(h, 0x40, 4, 0x05, 0);
	put(h, 0x42, 2, 0x0000, 0x0071);
	put(h, 0x44, 4, 0, 0xfffffffcu);
	put(h, 0x48, 2, 0, 0xffff);
	memcpy(real, h->cfg, sizeof real);
	memset(h->cfg, 0xff, sizeof real);
	put(h, 0x00, 2, 0x0001, 0);                       /* retry: Vendor ID 0001h */
	CHECK_EQ(g_rd(HOT, 0, 2), 0x0001);
	CHECK_EQ(S.nfn, 1);
	CHECK_EQ(M.seen_calls, 0);
	CHECK_EQ(g_rd(HOT, 0, 4), 0xffff0001u);
	CHECK_EQ(S.nfn, 1);
	/* A write meanwhile (the root complex would retry it until the
	 * function takes it, its MSI then the guest's): dropped. */
	h->cfg[0x42] = 0;
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK_EQ(h->cfg[0x42], 0);
	CHECK_EQ(S.not_ready_writes, 1);
	memcpy(h->cfg, real, sizeof real);                /* ready */
	CHECK_EQ(g_rd(HOT, 0, 2), 0x8086);
	CHECK_EQ(S.hot_added, 1);
	CHECK(vmsi_find(&S, HOT) != NULL);
	g_wr(HOT, 0x44, 4, 0xfee00000u);
	g_wr(HOT, 0x48, 2, 0x0051);
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK(vmsi_find(&S, HOT) && vmsi_find(&S, HOT)->routes == 1);
}

/* Issue 43, item 2: a VF's table geometry follows what the guest set
 * before VF Enable: with System Page Size 64 KiB each VF's slice of VF
 * BAR0 is 64 KiB (SR-IOV: VF BARs sized in multiples of it), so VF 2's
 * table is at VF BAR0 + 64 KiB + its offset; enabled again after a change
 * back to 4 KiB, each VF is found afresh and its table placed by the new
 * geometry, in the same slot (its IRTEs its own: PF and VF number). */
TEST(vmsi_sriov_vf_geometry_follows_system_page_size)
{
	setup();
	g_wr(PF, SRIOV + 0x20, 4, 0x10);                       /* 64 KiB pages */
	g_wr(PF, SRIOV + 0x10, 2, 2);
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0x40);
	const struct vmsi_fn *v2 = vmsi_find(&S, (uint16_t)VF(2));
	CHECK(v2 != NULL);
	if (!v2)
		return;
	CHECK_EQ(v2->bar_size, 0x10000);
	CHECK_EQ(v2->table_pa, VF_BAR + 0x10000 + TOFF);
	uint32_t irte = v2->irte;
	/* Off, 4 KiB pages again, on: the 16 KiB slices. */
	g_wr(PF, SRIOV + 0x08, 2, 0);
	g_wr(PF, SRIOV + 0x20, 4, 0x1);
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(v2->table_pa, 0);                             /* held no more: found afresh */
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0x40);
	CHECK(vmsi_find(&S, (uint16_t)VF(2)) == v2);           /* the same slot */
	CHECK_EQ(v2->bar_size, VF_SIZE);
	CHECK_EQ(v2->table_pa, VF_BAR + VF_SIZE + TOFF);
	CHECK_EQ(v2->irte, irte);
	CHECK_EQ(S.nfn, 2);
}

/* Issue 43, item 6, second part: a function's Vendor and Device ID are
 * recorded when it is taken and checked at each guest read of them; a
 * change (a hot-swapped drive of another model) or all ones (pulled)
 * retires the function: its state dropped, its slot and IRTEs for the
 * next, and the one now there found afresh (its MSI the trap's again). */
TEST(vmsi_hot_swapped_function_found_afresh)
{
	setup();
	struct fn *h = hot_msi_fn();
	CHECK_EQ(g_rd(HOT, 0, 4), 0x10ed8086u);
	struct vmsi_fn *f = vmsi_find(&S, HOT);
	CHECK(f != NULL);
	if (!f)
		return;
	g_wr(HOT, 0x44, 4, 0xfee00000u);
	g_wr(HOT, 0x48, 2, 0x0051);
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK_EQ(f->routes, 1);
	uint32_t nfn = S.nfn;
	/* Pulled: all ones. */
	uint8_t keep[0x50];
	memcpy(keep, h->cfg, sizeof keep);
	memset(h->cfg, 0xff, sizeof keep);
	CHECK_EQ(g_rd(HOT, 0, 4), 0xffffffffu);
	CHECK(vmsi_find(&S, HOT) == NULL);
	CHECK_EQ(S.swapped, 1);
	/* Another model in the slot, its MSI as after reset, enabled by
	 * nobody: found afresh in the same slot, the guest's MSI off. */
	memcpy(h->cfg, keep, sizeof keep);
	put(h, 0x00, 4, 0x0a541c5cu, 0);
	put(h, 0x42, 2, 0x0000, 0x0071);
	CHECK_EQ(g_rd(HOT, 0, 4), 0x0a541c5cu);
	CHECK(vmsi_find(&S, HOT) == f);
	CHECK_EQ(S.nfn, nfn);
	CHECK_EQ(f->routes, 0);
	CHECK_EQ(g_rd(HOT, 0x42, 2) & 1, 0);
	/* Swapped while the guest looks away: the next ID read tells. */
	put(h, 0x00, 4, 0x0a551c5cu, 0);
	CHECK_EQ(g_rd(HOT, 0, 2), 0x1c5c);
	CHECK_EQ(S.swapped, 2);
	CHECK(vmsi_find(&S, HOT) == f);
	g_wr(HOT, 0x44, 4, 0xfee00000u);
	g_wr(HOT, 0x48, 2, 0x0052);
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK_EQ(f->routes, 1);
}

/* Issue 43, the wall fuzzer's VFMSE: VF MSE turned on, the trap holds it
 * off until the VFs' tables are out of every vCPU's view; the entries it
 * then writes reach the VFs only once VF MSE is back on (SR-IOV: with VF
 * MSE clear no VF decodes memory). Written while it was held off they
 * went nowhere and the VF kept what it held. */
TEST(vmsi_sriov_vf_entries_written_once_vf_mse_is_back)
{
	setup();
	g_wr(PF, SRIOV + 0x10, 2, 2);
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0x40);
	struct vmsi_fn *v2 = vmsi_find(&S, (uint16_t)VF(2));
	CHECK(v2 != NULL);
	if (!v2)
		return;
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, v2->table_pa, 0xfee00000u);
	vmsi_mem_write(&S, &d, &H, v2->table_pa + 8, 0x0041);
	vmsi_mem_write(&S, &d, &H, v2->table_pa + 12, 0);
	g_wr((uint16_t)VF(2), 0x42, 2, 0x8000);
	g_wr(PF, SRIOV + 0x08, 2, 1);                          /* VF MSE off: the table unplaced */
	CHECK_EQ(v2->table_pa, 0);
	memset(&M.vfmem[1][TOFF], 0, 16);                      /* what the VF holds meanwhile (its reset state, say) */
	M.lost = 0;
	g_wr(PF, SRIOV + 0x08, 2, 9);                          /* on again: placed, every entry written */
	CHECK_EQ(v2->table_pa, VF_BAR + VF_SIZE + TOFF);
	CHECK_EQ(M.lost, 0);
	uint32_t e[4];
	memcpy(e, &M.vfmem[1][TOFF], 16);
	CHECK_EQ(e[2], 0x0041);
	CHECK_EQ(e[3], 0);                                     /* unmasked: routed */
	CHECK_EQ(get(&M.f[0], SRIOV + 0x08, 2), 9);
}

/* Issue 43, the wall fuzzer's REMOVE and CRS: a function pulled (all ones)
 * or replaced by one still in Retry Status, which the guest writes before
 * reading its IDs again, is let go of at that write: the hypervisor writes
 * nothing of the old function's into the slot (its MSI at the old
 * function's capability offset). */
TEST(vmsi_pulled_function_let_go_at_the_next_write)
{
	setup();
	struct fn *h = hot_msi_fn();
	CHECK_EQ(g_rd(HOT, 0, 4), 0x10ed8086u);
	g_wr(HOT, 0x44, 4, 0xfee00000u);
	g_wr(HOT, 0x48, 2, 0x0051);
	g_wr(HOT, 0x42, 2, 0x0001);
	CHECK_EQ(vmsi_find(&S, HOT)->routes, 1);
	/* Replaced by a function in Retry Status: its Vendor ID reads 0001h,
	 * the rest all ones; what the old one's MSI was is another's now. */
	memset(h->cfg, 0, 0x50);
	put(h, 0x00, 4, 0xffff0001u, 0);
	put(h, 0x44, 4, 0x12345678u, 0xffffffffu);
	g_wr(HOT, 0x48, 2, 0x0052);
	CHECK_EQ(S.swapped, 1);
	CHECK(vmsi_find(&S, HOT) == NULL);
	CHECK_EQ(get(h, 0x44, 4), 0x12345678u);                /* nothing written there */
	CHECK_EQ(S.not_ready_writes, 1);
}

/* The wall fuzzer's: VF MSE left set while VF Enable is clear (it decodes
 * nothing then) and System Page Size changed: at VF Enable 0 -> 1 the VF
 * BARs are sized again all the same, and VF 2 is placed in its 64 KiB
 * slice, not in the 16 KiB one of the old page size. */
TEST(vmsi_sriov_vf_geometry_follows_page_size_with_vf_mse_left_on)
{
	setup();
	g_wr(PF, SRIOV + 0x10, 2, 2);
	g_wr(PF, SRIOV + 0x24, 4, VF_BAR);
	g_wr(PF, SRIOV + 0x08, 2, 8);                          /* VF MSE alone */
	g_wr(PF, SRIOV + 0x20, 4, 0x10);                       /* 64 KiB pages */
	g_wr(PF, SRIOV + 0x08, 2, 9);
	CHECK_EQ(g_rd((uint16_t)VF(2), 0x34, 1), 0x40);
	const struct vmsi_fn *v2 = vmsi_find(&S, (uint16_t)VF(2));
	CHECK(v2 != NULL);
	if (!v2)
		return;
	CHECK_EQ(v2->bar_size, 0x10000);
	CHECK_EQ(v2->table_pa, VF_BAR + 0x10000 + TOFF);
}
