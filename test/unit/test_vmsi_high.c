/* MSI-X tables in the high MMIO window (issue 35, item 1): a 64-bit
 * prefetchable BAR that firmware put above 4 GiB and above all RAM (a
 * two-socket server's E810 BAR3, ConnectX BAR0) holds a table the trap
 * must take, through the same wall as any other; a place beyond the CPU's
 * physical-address width (CPUID 0x80000008 EAX 7:0) is refused by name.
 * The machine: RAM 0-128 GiB (a memory-map hole below 4 GiB not modelled),
 * MAXPHYADDR 46; the function (PCI function model, pci_fn_model.h) has
 * MSI-X with 4 entries at 0x2000 of its 64-bit BAR2 at 0x38_0000_0000. */
#include "test.h"
#include "pci_fn_model.h"
#include "../../pci/vmsi.h"
#include "../../lib/memmap.h"

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };
static struct pfm M;
static struct vmsi_hw H;
static struct vmsi S;
static struct memmap mem;
static struct vmsi_claims wall;

#define F     0x4100                            /* 41:00.0, a NIC on the second socket's root port */
#define BAR   0x3800000000ull
#define TABLE (BAR + 0x2000)

static struct vioapic_dom dom(void)
{
	return (struct vioapic_dom){ .apic_id = gids, .host_apic_id = hids, .n = 2, .guest_x2apic = true };
}

static unsigned judge(void *ctx, uint64_t pa, uint64_t len)
{
	(void)ctx;
	return vmsi_place_judge(&wall, pa, len);
}

/* The wall as vmx/msi_trap.c builds it. */
static void wall_as_the_trap_builds_it(void)
{
	memset(&wall, 0, sizeof wall);
	wall.mem = &mem;
	vmsi_claims_reach(&wall, 46, 1ull << 47);   /* MAXPHYADDR, lib/paging.h's PAGING_MMIO_REACH */
	vmsi_claim(&wall, 0xfee00000u, 0x100000);
}

static void setup(void)
{
	memset(&mem, 0, sizeof mem);
	mem.count = 1;
	mem.r[0] = (struct mem_range){ 0, 128ull << 30, MEM_USABLE };
	wall_as_the_trap_builds_it();
	pfm_init(&M, &H);
	H.irte = NULL;
	H.place = judge;
	pfm_msix(pfm_add(&M, F, 2, BAR, true), 0x70, 4, 0x2000, 0x3000);
	memset(&S, 0, sizeof S);
	wall.boot = true;
	vmsi_scan(&S, &H);
	wall.boot = false;
	pfm_clear_log(&M);
}

static void g_wr(uint16_t off, unsigned size, uint32_t val)
{
	struct vioapic_dom d = dom();
	vmsi_cfg_write(&S, &d, &H, F, off, size, val);
}
static void t_wr(uint64_t pa, uint32_t val)
{
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, pa, val);
}

TEST(vmsi_high_table_above_ram_trapped_and_routed)
{
	setup();
	CHECK_EQ(S.nfn, 1);
	const char *why = vmsi_refusal_name(S.fn[0].last_refusal);
	if (S.fn[0].table_pa != TABLE)
		printf("  table at 0x%llx refused at boot: %s\n", (unsigned long long)TABLE, why);
	CHECK_EQ(S.fn[0].table_pa, TABLE);
	CHECK(vmsi_trapped(&S, TABLE));
	CHECK_EQ(M.table_at_pa, TABLE);
	/* The guest enables MSI-X and programs entry 1 for vCPU 1, vector 0x41. */
	g_wr(0x72, 2, 0x8000);
	t_wr(TABLE + 16, 0xfee01000u);
	t_wr(TABLE + 20, 0);
	t_wr(TABLE + 24, 0x41);
	t_wr(TABLE + 28, 0);
	CHECK_EQ(S.fn[0].routes, 1);
	CHECK_EQ(pfm_mem(&M, TABLE + 16), 0xfee09000u);    /* host APIC ID 9 */
	CHECK_EQ(pfm_mem(&M, TABLE + 24), 0x41);
	CHECK_EQ(pfm_mem(&M, TABLE + 28) & 1, 0);          /* unmasked in the device */
	CHECK_EQ(pfm_cfg(&M.f[0], 0x72, 2) & 0x8000, 0x8000);
	/* The rest of the page (the PBA) passes to the device. */
	CHECK_EQ(vmsi_mem_read(&S, &H, BAR + 0x3000) & 0xff, 0xa5);
}

TEST(vmsi_high_table_beyond_physical_width_refused_by_name)
{
	setup();
	CHECK_EQ(S.fn[0].table_pa, TABLE);
	g_wr(0x72, 2, 0x8000);
	/* The guest moves BAR2 to 0x4000_0000_0000 (2^46, past MAXPHYADDR 46). */
	g_wr(0x18, 4, 0);
	g_wr(0x1c, 4, 0x4000);
	CHECK_EQ(S.fn[0].table_pa, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "msix_table_beyond_phys_width");
	CHECK(!vmsi_trapped(&S, 0x400000002000ull));
	CHECK_EQ(pfm_cfg(&M.f[0], 0x72, 2) & 0x8000, 0);   /* the device's MSI-X off */
	/* Back below the width, in the high window: taken again. */
	g_wr(0x1c, 4, 0x39);
	CHECK_EQ(S.fn[0].table_pa, 0x3900002000ull);
	CHECK(vmsi_trapped(&S, 0x3900002000ull));
}

/* Issue 43, item 1: a table BAR of 4 GiB or more is judged over its whole
 * span (PCI 3.0, "Base Address Registers": a 64-bit BAR of 8 GiB reads 0
 * in address bits 32:4 and its writable bits from 33 up). Moved by the
 * guest onto the start of the hypervisor's memory (here 0x10_0000_0000,
 * RAM around it), the table is refused; judged at 32 bits the span was 0
 * bytes, which overlaps no range that starts at its base, and passed. */
TEST(vmsi_high_bar_of_8gib_over_ram_refused)
{
	memset(&mem, 0, sizeof mem);
	mem.count = 3;
	mem.r[0] = (struct mem_range){ 0, 64ull << 30, MEM_USABLE };
	mem.r[1] = (struct mem_range){ 64ull << 30, 16ull << 20, MEM_HV };
	mem.r[2] = (struct mem_range){ (64ull << 30) + (16ull << 20), (64ull << 30) - (16ull << 20), MEM_USABLE };
	wall_as_the_trap_builds_it();
	pfm_init(&M, &H);
	H.irte = NULL;
	H.place = judge;
	struct pfm_fn *f = pfm_add(&M, F, 2, BAR, true);
	pfm_msix(f, 0x70, 4, 0x2000, 0x3000);
	f->bar_size = 8ull << 30;
	for (unsigned i = 0; i < 4; i++) {
		f->wmask[0x18 + i] = 0;                          /* 8 GiB: address bits 31:4 read 0 */
		f->wmask[0x1c + i] = (uint8_t)(0xfffffffeu >> 8 * i);
	}
	memset(&S, 0, sizeof S);
	wall.boot = true;
	vmsi_scan(&S, &H);
	wall.boot = false;
	CHECK_EQ(S.fn[0].bar_size, 8ull << 30);
	CHECK_EQ(S.fn[0].table_pa, TABLE);
	g_wr(0x72, 2, 0x8000);
	g_wr(0x1c, 4, 0x10);                                   /* BAR2 at 64 GiB: the hypervisor's */
	CHECK_EQ(S.fn[0].table_pa, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "msix_table_over_memory");
	CHECK(!vmsi_trapped(&S, 0x1000002000ull));
	t_wr(0x1000002000ull + 16, 0xfee01000u);               /* no store for the guest there */
	CHECK_EQ(pfm_writes_in(&M, 0x1000000000ull, 8ull << 30), 0);
	CHECK_EQ(pfm_cfg(f, 0x72, 2) & 0x8000, 0);
}
