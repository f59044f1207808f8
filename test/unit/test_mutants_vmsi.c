/* pci/ where a mutation check found it unguarded (issue 36, faults
 * 1-6), against the PCI function model (pci_fn_model.h, from the PCI
 * Local Bus Specification 3.0) and the MSI formats of SDM Vol. 3A,
 * "Message Signalled Interrupts" (address 31:20 0xFEE, destination 19:12;
 * data vector 7:0, delivery mode 10:8) and VT-d's "Remappable Format"
 * (address 4 = 1, 3 SHV, handle 15 in 2, 14:0 in 19:5). The machine: two
 * vCPUs, APIC IDs 0 and 1, on host APIC IDs 4 and 9; the hypervisor owns
 * vectors 0xEB and 0xF0-0xFE. */
#include "test.h"
#include "pci_fn_model.h"
#include "../../pci/vmsi.h"

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };

static struct vioapic_dom dom(bool remap)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = hids, .n = 2, .guest_x2apic = true,
				 .remap = remap, .eim = remap };
	d.host_vectors[3] = 0x7fffull << 48 | 1ull << (0xd5 - 0xc0);   /* 0xf0-0xfe and 0xd5: classes 0xD and up refused */
	return d;
}

static struct pfm M;
static struct vmsi_hw H;
static struct vmsi S;
static bool remap;

/* The functions, on buses in scan order:
 *  A 00:03.0  MSI, 64-bit, per-vector masking, 4 vectors capable (cap 0x40);
 *  C 01:00.0  MSI-X, 8 entries at 0x2000 of its 64-bit BAR2 (0xfebf0000),
 *             the PBA right after the table, at 0x2080 (same page);
 *  D 02:00.0  MSI-X, 4 entries at 0 of its 32-bit BAR0 (0xfea00000), PBA at 0x1000;
 *  E 03:00.0  MSI-X, 2 entries in BAR0, which is not assigned (0). */
#define A 0x0018
#define C 0x0100
#define D 0x0200
#define E 0x0300
#define C_TABLE 0xfebf2000ull
#define D_TABLE 0xfea00000ull

static void setup(bool owned)
{
	remap = owned;
	pfm_init(&M, &H);
	if (!owned)
		H.irte = NULL;
	pfm_msi(pfm_add(&M, A, 0, 0xfe000000u, false), 0x40, 2, true, true);
	pfm_msix(pfm_add(&M, C, 2, 0xfebf0000u, true), 0x70, 8, 0x2000, 0x2080);
	pfm_msix(pfm_add(&M, D, 0, D_TABLE, false), 0x50, 4, 0, 0x1000);
	pfm_msix(pfm_add(&M, E, 0, 0, false), 0x50, 2, 0, 0x800);
	memset(&S, 0, sizeof S);
	if (owned) {
		S.irte_base = 100;
		S.irte_count = 900;
	}
	vmsi_scan(&S, &H);
	pfm_clear_log(&M);
}

static struct vmsi_fn *fn(uint16_t bdf)
{
	for (uint32_t i = 0; i < S.nfn; i++)
		if (S.fn[i].bdf == bdf)
			return &S.fn[i];
	test_bail(__FILE__, __LINE__, "function not trapped");
}

static void g_wr(uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	struct vioapic_dom d = dom(remap);
	vmsi_cfg_write(&S, &d, &H, bdf, off, size, val);
}
static uint32_t t_rd(uint64_t pa) { return vmsi_mem_read(&S, &H, pa); }
static void t_wr(uint64_t pa, uint32_t val)
{
	struct vioapic_dom d = dom(remap);
	vmsi_mem_write(&S, &d, &H, pa, val);
}
static uint32_t dev_cfg(uint16_t bdf, unsigned off, unsigned size)
{
	for (unsigned i = 0; i < M.n; i++)
		if (M.f[i].bdf == bdf)
			return pfm_cfg(&M.f[i], off, size);
	return ~0u;
}
/* The guest programs MSI-X entry i of the table at t and unmasks it. */
static void g_entry(uint64_t t, unsigned i, uint32_t addr, uint32_t data)
{
	t_wr(t + 16 * i, addr);
	t_wr(t + 16 * i + 4, 0);
	t_wr(t + 16 * i + 8, data);
	t_wr(t + 16 * i + 12, 0);
}

/* Fault 3 (isolation): a 64-bit table BAR moved by its upper dword alone
 * (a 4-byte write at BAR + 4, or one byte of it). The function decodes its
 * table at the new place at once; unless that page is trapped there, the
 * guest writes the device's real MSI-X table. */
TEST(mutant_vmsi_table_moved_by_the_upper_dword_is_trapped)
{
	setup(false);
	CHECK_EQ(fn(C)->table_pa, C_TABLE);
	g_wr(C, 0x1c, 4, 0x1);                             /* BAR2's upper dword: 0x1_febf0000 */
	CHECK_EQ(pfm_bar_base(&M.f[1]), 0x1febf0000ull);   /* the device decodes there now */
	CHECK_EQ(fn(C)->table_pa, 0x1febf2000ull);
	CHECK(vmsi_trapped(&S, 0x1febf2000ull));
	CHECK_EQ(M.n_table_at, 1);
	CHECK_EQ(M.table_at_pa, 0x1febf2000ull);
	/* The guest's write there is emulated: an SMI stays off the device,
	 * whose entry stays masked (as the scan left it). */
	g_entry(0x1febf2000ull, 0, 0xfee00000u, 0x0200);
	CHECK_EQ(pfm_mem(&M, 0x1febf2000ull + 12) & 1, 1);
	CHECK_EQ(pfm_mem(&M, 0x1febf2000ull + 8), 0x30);   /* what firmware left, not the guest's SMI */
	CHECK_EQ(S.refused_by[VR_SMI], 1);
	/* One byte of the upper dword (BAR + 5, bits 47:40) moves it as well. */
	g_wr(C, 0x1d, 1, 0x02);
	CHECK_EQ(pfm_bar_base(&M.f[1]), 0x0201febf0000ull);
	CHECK_EQ(fn(C)->table_pa, 0x0201febf2000ull);
	CHECK(vmsi_trapped(&S, 0x0201febf2000ull));
	CHECK_EQ(M.n_table_at, 2);
}

/* Fault 6 (isolation): the guest masks a routed MSI-X entry; the device's
 * entry must be masked too, or the device goes on sending. */
TEST(mutant_vmsi_guest_mask_of_a_routed_entry_reaches_the_device)
{
	setup(false);
	g_wr(C, 0x72, 2, 0x8000);                          /* MSI-X enable */
	g_entry(C_TABLE, 2, 0xfee01000u, 0x0041);          /* vCPU 1, vector 0x41 */
	CHECK_EQ(pfm_mem(&M, C_TABLE + 32), 0xfee09000u);  /* host APIC ID 9 */
	CHECK_EQ(pfm_mem(&M, C_TABLE + 40), 0x41);
	CHECK_EQ(pfm_mem(&M, C_TABLE + 44) & 1, 0);
	t_wr(C_TABLE + 44, 1);                             /* the guest masks it */
	CHECK_EQ(t_rd(C_TABLE + 44), 1);
	CHECK_EQ(pfm_mem(&M, C_TABLE + 44) & 1, 1);
	/* Masked, a new message is kept, not sent to the device ... */
	pfm_clear_log(&M);
	t_wr(C_TABLE + 40, 0x0042);
	CHECK_EQ(pfm_writes_in(&M, C_TABLE + 32, 16) <= 1, 1);   /* at most the mask again */
	CHECK_EQ(pfm_mem(&M, C_TABLE + 44) & 1, 1);
	/* ... until unmasked. */
	t_wr(C_TABLE + 44, 0);
	CHECK_EQ(pfm_mem(&M, C_TABLE + 40), 0x42);
	CHECK_EQ(pfm_mem(&M, C_TABLE + 44) & 1, 0);
}

/* Fault 5: the dword just past the table (here the PBA, in the same page)
 * is not an entry: a read gives the device's, a write goes to the device
 * (which ignores it: the PBA is read-only), and neither touches the entry
 * pool, where the next function's entries follow. */
TEST(mutant_vmsi_dword_past_the_table_is_the_devices)
{
	setup(false);
	CHECK(vmsi_trapped(&S, C_TABLE + 16 * 8));
	unsigned r0 = M.n_mem_r;
	CHECK_EQ(t_rd(C_TABLE + 16 * 8), 0xa5);            /* the PBA's first byte */
	CHECK_EQ(M.n_mem_r, r0 + 1);
	CHECK_EQ(t_rd(C_TABLE + 16 * 8 + 12), 0);
	uint64_t acc = S.table_accesses;
	t_wr(C_TABLE + 16 * 8, 0xfee01000u);
	t_wr(C_TABLE + 16 * 8 + 12, 0);
	CHECK_EQ(pfm_writes_in(&M, C_TABLE + 16 * 8, 16), 2);   /* passed to the device */
	CHECK_EQ(S.table_accesses, acc);
	/* D's entries (the pool's next) are as the scan left them. */
	CHECK_EQ(t_rd(D_TABLE), 0);
	CHECK_EQ(t_rd(D_TABLE + 12), 1);
	/* The table's last dword is still an entry's. */
	t_wr(C_TABLE + 16 * 7 + 8, 0x77);
	CHECK_EQ(t_rd(C_TABLE + 16 * 7 + 8), 0x77);
	CHECK_EQ(pfm_writes_in(&M, C_TABLE + 16 * 7, 16), 0);   /* masked: kept, not sent */
}

/* Fault 4: a message-control write that keeps MSI-X enabled (the function
 * mask toggled) neither relocates the table nor rewrites the device's
 * entries, nor counts a table-less function's refusal again. */
TEST(mutant_vmsi_function_mask_toggle_leaves_the_table_alone)
{
	setup(false);
	g_wr(C, 0x72, 2, 0x8000);
	g_entry(C_TABLE, 0, 0xfee00000u, 0x0033);
	g_wr(E, 0x52, 2, 0x8000);                          /* E: no table to trap */
	CHECK_STR(vmsi_refusal_name(fn(E)->last_refusal), "msix_table_not_emulated");
	CHECK_EQ(fn(E)->refusals, 1);
	CHECK_EQ(dev_cfg(E, 0x52, 2) & 0x8000, 0);         /* the device's MSI-X left off */
	pfm_clear_log(&M);
	g_wr(C, 0x72, 2, 0xc000);                          /* function mask on */
	CHECK_EQ(dev_cfg(C, 0x72, 2) & 0xc000, 0xc000);
	g_wr(C, 0x72, 2, 0x8000);                          /* and off */
	CHECK_EQ(dev_cfg(C, 0x72, 2) & 0xc000, 0x8000);
	CHECK_EQ(pfm_writes_in(&M, C_TABLE, 16 * 8), 0);
	CHECK_EQ(M.n_table_at, 0);
	g_wr(E, 0x52, 2, 0xc000);
	g_wr(E, 0x52, 2, 0x8000);
	CHECK_EQ(fn(E)->refusals, 1);
	CHECK_EQ(S.refused_by[VM_NO_TABLE], 1);
	CHECK_EQ(M.n_mem_w, 0);
}

/* Fault 1: multiple-message MSI without remapping. The device puts its
 * message number in the data's low bits, so 32 vectors from 0xC0 send
 * 0xC0-0xDF; those from 0xD0 are in the class of the hypervisor's 0xD5
 * (issue 33, item 6): the whole route refused, though its first vector is
 * the guest's. Pure, then through the function. */
TEST(mutant_vmsi_multiple_message_checks_every_vector)
{
	struct vioapic_dom d = dom(false);
	uint64_t pa;
	uint32_t pd;
	CHECK_STR(vmsi_refusal_name(vmsi_route(&d, 0xfee00000u, 0x00c0, 32, 0, 0, NULL, &pa, &pd)), "vector_in_hypervisor_class");
	CHECK_EQ(pa, 0);
	CHECK_STR(vmsi_refusal_name(vmsi_route(&d, 0xfee00000u, 0x00c0, 16, 0, 0, NULL, &pa, &pd)), "routed");  /* 0xc0-0xcf */
	CHECK_STR(vmsi_refusal_name(vmsi_route(&d, 0xfee00000u, 0x00c4, 4, 0, 0, NULL, &pa, &pd)), "routed");   /* 0xc4-0xc7 */
	d.host_vectors[0] = 1ull << 0x30;                                               /* 0x30: the 17th vector of 0x20-0x3f */
	CHECK_STR(vmsi_refusal_name(vmsi_route(&d, 0xfee00000u, 0x0020, 32, 0, 0, NULL, &pa, &pd)), "vector_of_hypervisor");
	/* Function A (per-vector masking), through its registers. */
	setup(false);
	g_wr(A, 0x44, 4, 0xfee00000u);
	g_wr(A, 0x48, 4, 0);
	g_wr(A, 0x4c, 2, 0x00d5);                          /* the base is 0xD4: the hypervisor's class */
	g_wr(A, 0x42, 2, 0x0021);                          /* MME 2, enable */
	CHECK_STR(vmsi_refusal_name(fn(A)->last_refusal), "vector_in_hypervisor_class");
	CHECK_EQ(dev_cfg(A, 0x50, 4), 0xf);                /* every vector masked on the device */
	g_wr(A, 0x4c, 2, 0x00c4);                          /* 0xc4-0xc7 */
	CHECK_EQ(fn(A)->last_refusal, VR_NONE);
	CHECK_EQ(dev_cfg(A, 0x50, 4), 0);
	CHECK_EQ(dev_cfg(A, 0x44, 4), 0xfee04000u);
}

/* Fault 2: MSI sends min(MME, MMC) vectors' worth (a device sends no more
 * than it can). Under owned remapping that is the number of IRTEs written,
 * and SHV in the device's address only with more than one. */
TEST(mutant_vmsi_msi_vector_count_is_the_smaller_of_enable_and_capable)
{
	setup(true);
	CHECK_EQ(fn(A)->irte, 100);
	g_wr(A, 0x44, 4, 0xfee01000u);
	g_wr(A, 0x48, 4, 0);
	g_wr(A, 0x4c, 2, 0x0040);
	g_wr(A, 0x42, 2, 0x0001);                          /* MME 0: one vector of the 4 capable */
	CHECK_EQ(fn(A)->last_refusal, VR_NONE);
	CHECK_EQ(M.n_irte, 1);
	CHECK_EQ(M.irte_first, 100);
	uint32_t pa = dev_cfg(A, 0x44, 4);
	CHECK_EQ(pa & 0xfff00010u, 0xfee00010u);           /* remappable format */
	CHECK_EQ(pa & 8, 0);                               /* one vector: no SHV */
	CHECK_EQ((pa >> 5) & 0x7fff, 100);
	/* MME 3 (8) on a device capable of 4: 4 IRTEs, 100-103, SHV. */
	pfm_clear_log(&M);
	g_wr(A, 0x42, 2, 0x0031);
	CHECK_EQ(fn(A)->last_refusal, VR_NONE);
	CHECK_EQ(M.n_irte, 4);
	CHECK_EQ(M.irte_first, 100);
	CHECK_EQ(M.irte_last, 103);
	CHECK_EQ(M.irt[2 * 104], 0);
	CHECK_EQ(dev_cfg(A, 0x44, 4) & 8, 8);
	/* Vectors 0x40-0x43, each IRTE its own (VT-d: vector 23:16). */
	for (unsigned i = 0; i < 4; i++)
		CHECK_EQ((M.irt[2 * (100 + i)] >> 16) & 0xff, 0x40 + i);
}
