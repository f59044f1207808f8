/* Issue 43: SR-IOV lines a mutation check found unguarded (pci/scan.c's
 * VF range, pci/'s VF MSE and VF BAR writes), against a model of
 * two SR-IOV physical functions written from the PCI Express Base
 * Specification, "Single Root I/O Virtualization and Sharing", alone (no
 * constant from the project's headers):
 *  - the SR-IOV Extended Capability (ID 0010h, at 100h here): SR-IOV
 *    Control +08h (bit 0 VF Enable, bit 3 VF MSE), TotalVFs +0Eh, NumVFs
 *    +10h, First VF Offset +14h, VF Stride +16h, VF BAR0 +24h (32-bit,
 *    16 KiB per VF: each VF decodes its slice, VF n the n-th, while VF
 *    Enable and VF MSE are set);
 *  - VF n (1..NumVFs) answers at the PF's routing ID + First VF Offset +
 *    (n - 1) * VF Stride once VF Enable is set; its Vendor ID reads FFFFh,
 *    its BARs read 0; nothing answers at the next routing ID unless some
 *    other function has it. The two PFs, 00:03.0 and 00:03.1 of one
 *    device, pack their VFs one after the other: PF 0's at 00:13.0 and
 *    00:13.1, PF 1's from 00:13.2 (its First VF Offset 81h);
 *  - each PF and VF has MSI-X (PCI 3.0, "MSI-X Capability and Table
 *    Structure": ID 11h, message control 10:0 table size - 1, +4 table
 *    offset/BIR) at 40h: 4 entries at 2000h of BAR0.
 * Every configuration write, table_at and table_gone is logged; after
 * each the model checks that every VF the guest has touched whose memory
 * is decoded has its table's page trapped: the order of the device's
 * writes against table_at, not the end state alone. */
#include "test.h"
#include <stdarg.h>
#include "../../pci/vmsi.h"

#define SR      0x100u
#define SLICE   0x4000u
#define TOFF    0x2000u
#define NPF     2

struct sfn {
	uint16_t bdf;
	int pf;                              /* -1: a PF; else its PF's index */
	unsigned n;                          /* VF number */
	uint8_t cfg[4096], wmask[4096];
};
static struct {
	struct sfn f[NPF + 2 * NPF];
	unsigned n;
	bool touched[NPF][3];
} M;

#define NTP 64
static uint64_t tp[NTP];
static unsigned ntp, nev;
static char lg[16384];
static size_t lglen;
static char viol[512];
static int tat_ev, dec_ev;

static void ev(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(lg + lglen, sizeof lg - lglen, "#%u ", nev++);
	if (n > 0 && (size_t)n < sizeof lg - lglen)
		lglen += (size_t)n;
	n = vsnprintf(lg + lglen, sizeof lg - lglen, fmt, ap);
	if (n > 0 && (size_t)n < sizeof lg - lglen)
		lglen += (size_t)n;
	va_end(ap);
}

static void put(struct sfn *f, unsigned off, unsigned size, uint32_t v, uint32_t wmask)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wmask[off + i] = (uint8_t)(wmask >> 8 * i);
	}
}
static uint32_t get(const struct sfn *f, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)f->cfg[off + i] << 8 * i;
	return v;
}

static struct sfn *add(uint16_t bdf, int pf, unsigned n)
{
	struct sfn *f = &M.f[M.n++];
	memset(f, 0, sizeof *f);
	f->bdf = bdf;
	f->pf = pf;
	f->n = n;
	put(f, 0x00, 4, pf < 0 ? 0x15728086u : 0xffffffffu, 0);
	put(f, 0x06, 2, 0x0010, 0);
	put(f, 0x34, 1, 0x40, 0);
	put(f, 0x40, 2, 0x11, 0);
	put(f, 0x42, 2, 3, 0xc000);
	put(f, 0x44, 4, TOFF | 0, 0);
	return f;
}

static void model(void)
{
	memset(&M, 0, sizeof M);
	static const uint16_t first[NPF] = { 0x80, 0x81 };
	for (unsigned p = 0; p < NPF; p++) {
		struct sfn *f = add((uint16_t)(0x0018 + p), -1, 0);
		put(f, 0x04, 2, 0x0002, 0x0006);
		put(f, 0x0e, 1, p ? 0x00 : 0x80, 0);                 /* multi-function */
		put(f, 0x10, 4, 0xfe000000u + 0x10000u * p, 0xffffc000u);
		put(f, SR, 4, 0x00010010u, 0);
		put(f, SR + 0x08, 2, 0, 0x0009);
		put(f, SR + 0x0c, 2, 2, 0);
		put(f, SR + 0x0e, 2, 2, 0);
		put(f, SR + 0x10, 2, 0, 0xffff);
		put(f, SR + 0x14, 2, first[p], 0);
		put(f, SR + 0x16, 2, 1, 0);
		put(f, SR + 0x24, 4, 0xe0000000u + 0x100000u * p, 0xffffc000u);
	}
	for (unsigned p = 0; p < NPF; p++)
		for (unsigned n = 1; n <= 2; n++)
			add((uint16_t)(M.f[p].bdf + get(&M.f[p], SR + 0x14, 2) + (n - 1) * get(&M.f[p], SR + 0x16, 2)), (int)p, n);
	ntp = nev = 0;
	lglen = 0;
	lg[0] = viol[0] = 0;
	tat_ev = dec_ev = -1;
}

static bool present(const struct sfn *f)
{
	if (f->pf < 0)
		return true;
	const struct sfn *pf = &M.f[f->pf];
	return (get(pf, SR + 0x08, 2) & 1) && f->n <= get(pf, SR + 0x10, 2);
}

static struct sfn *at(uint16_t bdf)
{
	for (unsigned i = 0; i < M.n; i++)
		if (M.f[i].bdf == bdf && present(&M.f[i]))
			return &M.f[i];
	return NULL;
}

static bool tp_has(uint64_t pg)
{
	for (unsigned i = 0; i < ntp; i++)
		if (tp[i] == pg)
			return true;
	return false;
}

static void invariant(void)
{
	for (unsigned p = 0; p < NPF && !viol[0]; p++) {
		const struct sfn *pf = &M.f[p];
		uint32_t ctl = get(pf, SR + 0x08, 2), bar = get(pf, SR + 0x24, 4) & ~0xfu;
		if (!(ctl & 1) || !(ctl & 8) || !bar)
			continue;
		for (unsigned n = 1; n <= 2 && n <= get(pf, SR + 0x10, 2); n++) {
			if (!M.touched[p][n])
				continue;
			uint64_t pa = bar + (n - 1) * SLICE + TOFF;
			if (dec_ev < 0)
				dec_ev = (int)nev - 1;
			if (!tp_has(pa & ~0xfffull)) {
				snprintf(viol, sizeof viol, "after event #%u PF %u's VF %u decodes its table at 0x%llx, not trapped",
					 nev - 1, p, n, (unsigned long long)pa);
				return;
			}
		}
	}
}

static uint32_t m_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	const struct sfn *f = at(bdf);
	return f ? get(f, off & 0xfff, size) : 0xffffffffu >> (32 - 8 * size);
}
static void m_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx;
	struct sfn *f = at(bdf);
	for (unsigned i = 0; f && i < size; i++) {
		unsigned o = (off + i) & 0xfff;
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wmask[o]) | ((val >> 8 * i) & f->wmask[o]));
	}
	ev("cfg_write %04x +%03x/%u = %x\n", bdf, off, size, val);
	invariant();
}
static uint32_t m_mem_read(void *ctx, uint64_t pa) { (void)ctx, (void)pa; return 0; }
static void m_mem_write(void *ctx, uint64_t pa, uint32_t val) { (void)ctx, (void)pa, (void)val; }
static uint32_t m_io_read(void *ctx, uint16_t port, unsigned size) { (void)ctx, (void)port, (void)size; return ~0u; }
static void m_io_write(void *ctx, uint16_t port, unsigned size, uint32_t val) { (void)ctx, (void)port, (void)size, (void)val; }
static bool m_table_at(void *ctx, uint64_t pa, uint32_t len)
{
	(void)ctx;
	ev("table_at %llx +%x\n", (unsigned long long)pa, len);
	if (tat_ev < 0)
		tat_ev = (int)nev - 1;
	for (uint64_t pg = pa & ~0xfffull; pg < pa + len; pg += 0x1000)
		if (!tp_has(pg) && ntp < NTP)
			tp[ntp++] = pg;
	return true;
}
static void m_table_gone(void *ctx, uint64_t pg)
{
	(void)ctx;
	ev("table_gone %llx\n", (unsigned long long)pg);
	for (unsigned i = 0; i < ntp; i++)
		if (tp[i] == pg) {
			tp[i] = tp[--ntp];
			break;
		}
	invariant();
}

static struct vmsi S;
static struct vmsi_hw H = { .cfg_read = m_cfg_read, .cfg_write = m_cfg_write, .io_read = m_io_read, .io_write = m_io_write,
			    .mem_read = m_mem_read, .mem_write = m_mem_write, .table_at = m_table_at, .table_gone = m_table_gone,
			    .alloc = test_alloc, .ext_cfg = true };
static const uint32_t gids[1] = { 0 }, hids[1] = { 0 };

static void g_wr(uint16_t bdf, unsigned off, unsigned size, uint32_t v)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = hids, .n = 1, .guest_x2apic = true };
	ev("guest %04x +%03x/%u = %x\n", bdf, off, size, v);
	vmsi_cfg_write(&S, &d, &H, bdf, (uint16_t)off, size, v);
}
static uint32_t g_rd(uint16_t bdf, unsigned off, unsigned size) { return vmsi_cfg_read(&S, &H, bdf, (uint16_t)off, size); }

#define VF(p, n) ((uint16_t)(0x0018 + (p) + 0x80 + (p) + ((n) - 1)))

/* Both PFs' VFs enabled (two each, VF MSE off), every VF touched by the
 * guest (its first access: taken into the trap). */
static void setup(void)
{
	model();
	memset(&S, 0, sizeof S);
	CHECK(vmsi_scan(&S, &H));
	CHECK_EQ(S.nfn, 2);
	for (unsigned p = 0; p < NPF; p++) {
		g_wr((uint16_t)(0x0018 + p), SR + 0x10, 2, 2);
		g_wr((uint16_t)(0x0018 + p), SR + 0x08, 2, 0x0001);
	}
	CHECK_EQ(VF(0, 2) + 1, VF(1, 1));                  /* packed: PF 1's first VF right after PF 0's last */
	for (unsigned p = 0; p < NPF; p++)
		for (unsigned n = 1; n <= 2; n++) {
			M.touched[p][n] = true;
			CHECK_EQ(g_rd(VF(p, n), 0x42, 2) & 0x7ff, 3);
		}
}

static struct vmsi_fn *vf(unsigned p, unsigned n)
{
	struct vmsi_fn *f = vmsi_find(&S, VF(p, n));
	if (!f)
		test_bail(__FILE__, __LINE__, "VF not trapped");
	return f;
}

/* The routing ID just past PF 0's last VF (First VF Offset + (NumVFs - 1)
 * * Stride + Stride) is PF 1's first VF, not PF 0's third. */
TEST(mutant_wall_sriov_id_past_the_last_vf_is_not_its_vf)
{
	setup();
	CHECK_EQ(S.vfs_found, 4);
	CHECK_EQ(vf(0, 1)->pf, 1);
	CHECK_EQ(vf(0, 1)->vf, 1);
	CHECK_EQ(vf(0, 2)->pf, 1);
	CHECK_EQ(vf(0, 2)->vf, 2);
	CHECK_EQ(vf(1, 1)->pf, 2);                         /* PF 1 (index 1) + 1 */
	CHECK_EQ(vf(1, 1)->vf, 1);
	CHECK_EQ(vf(1, 2)->pf, 2);
	CHECK_EQ(vf(1, 2)->vf, 2);
	/* VF MSE on PF 1: its first VF's table in PF 1's VF BAR, slice 1. */
	g_wr(0x0019, SR + 0x08, 2, 0x0009);
	CHECK_EQ(vf(1, 1)->table_pa, 0xe0100000u + TOFF);
	CHECK_EQ(vf(1, 2)->table_pa, 0xe0100000u + SLICE + TOFF);
	CHECK(!vmsi_trapped(&S, 0xe0000000u + 2 * SLICE + TOFF));
	CHECK_STR(viol, "");
}

/* VF MSE set: each VF's table trapped before the VFs decode memory. */
TEST(mutant_wall_sriov_vf_mse_after_tables_trapped)
{
	setup();
	g_wr(0x0018, SR + 0x08, 2, 0x0009);
	CHECK_STR(viol, "");
	CHECK_EQ(get(&M.f[0], SR + 0x08, 2), 0x0009);
	CHECK(tat_ev >= 0);
	CHECK(dec_ev >= 0);
	CHECK(tat_ev < dec_ev);
	CHECK_EQ(vf(0, 1)->table_pa, 0xe0000000u + TOFF);
	CHECK_EQ(vf(0, 2)->table_pa, 0xe0000000u + SLICE + TOFF);
	/* Off, then on by a byte write. */
	g_wr(0x0018, SR + 0x08, 1, 0x01);
	CHECK_EQ(vf(0, 1)->table_pa, 0);
	g_wr(0x0018, SR + 0x08, 1, 0x09);
	CHECK_STR(viol, "");
	CHECK_EQ(vf(0, 2)->table_pa, 0xe0000000u + SLICE + TOFF);
	if (viol[0])
		printf("%s", lg);
}

/* VF BAR0 written while VF MSE is set: the VFs decode the new place only
 * once their tables are trapped there. */
TEST(mutant_wall_sriov_vf_bar_written_under_vf_mse)
{
	setup();
	g_wr(0x0018, SR + 0x08, 2, 0x0009);
	CHECK_STR(viol, "");
	g_wr(0x0018, SR + 0x24, 4, 0xe0400000u);
	CHECK_STR(viol, "");
	CHECK_EQ(get(&M.f[0], SR + 0x24, 4), 0xe0400000u);
	CHECK_EQ(get(&M.f[0], SR + 0x08, 2), 0x0009);
	CHECK_EQ(vf(0, 1)->table_pa, 0xe0400000u + TOFF);
	CHECK_EQ(vf(0, 2)->table_pa, 0xe0400000u + SLICE + TOFF);
	CHECK(!vmsi_trapped(&S, 0xe0000000u + TOFF));
	if (viol[0])
		printf("%s", lg);
}
