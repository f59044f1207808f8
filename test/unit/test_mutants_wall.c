/* Issue 43, "Tests that catch what they guard": lines a mutation check
 * found unguarded (each one changed, the suite ran green), each with a
 * test here that fails when its line is changed.
 *
 * The HPET part against a fake HPET written from the IA-PC HPET
 * Specification 1.0a ("Register Set", "Timer N Configuration and
 * Capability Register"): timer N's configuration at 0x100 + 0x20 N, bit 14
 * Tn_FSB_EN_CNF (writable only where bit 15 is set), bit 15
 * Tn_FSB_INT_DEL_CAP (read-only), bit 2 Tn_INT_ENB_CNF and 13:9
 * Tn_INT_ROUTE_CNF writable; timer N's FSB route at 0x110 + 0x20 N. Unlike
 * test_vhpet.c's, every timer here is FSB-capable, timer 0 included.
 *
 * The MSI-X part against the PCI function model (pci_fn_model.h, from the
 * PCI Local Bus Specification 3.0, the PCI-to-PCI Bridge Architecture
 * Specification and the PCI Express Base Specification): the wall around
 * a table (pci/place.c), the functions that move (pci/bridge_write.c),
 * and the order in which the device is told to decode memory against the
 * trap of its table's pages (pci/), checked on a log of every
 * callback, not on the end state alone. No constant from the project's
 * headers but the refusal names, which are its interface. */
#include "test.h"
#include <stdarg.h>
#include "pci_fn_model.h"
#include "../../apic/vhpet.h"
#include "../../pci/vmsi.h"

/* ---- HPET: timer 0's configuration is filtered as the others' are ---- */

#define HP_TIMERS    2
#define HP_CFG(n)    (0x100u + 0x20u * (n))
#define HP_ROUTE(n)  (0x110u + 0x20u * (n))
#define HP_FSB_EN    (1ull << 14)
#define HP_FSB_CAP   (1ull << 15)
#define HP_CFG_RW    ((1ull << 1) | (1ull << 2) | (1ull << 3) | (1ull << 6) | (1ull << 8) | (0x1full << 9))

static uint64_t hp_reg[0x400 / 8];
static unsigned hp_writes;

static uint64_t hp_read(void *ctx, uint32_t off, unsigned size)
{
	(void)ctx;
	uint64_t q = hp_reg[off / 8];
	return size == 8 ? q : (uint32_t)(q >> (off & 4) * 8);
}

static void hp_write(void *ctx, uint32_t off, unsigned size, uint64_t val)
{
	(void)ctx;
	hp_writes++;
	uint64_t *q = &hp_reg[off / 8], v = val;
	if (size == 4) {
		unsigned sh = (off & 4) * 8;
		v = (*q & ~(0xffffffffull << sh)) | (uint64_t)(uint32_t)val << sh;
	}
	uint32_t r = off & ~7u;
	if (r == 0)
		return;                              /* capabilities: read-only */
	if (r >= 0x100 && r < HP_CFG(HP_TIMERS) && (r - 0x100) % 0x20 == 0) {
		uint64_t rw = HP_CFG_RW | ((*q & HP_FSB_CAP) ? HP_FSB_EN : 0);
		v = (*q & ~rw) | (v & rw);
	}
	*q = v;
}

static const struct vhpet_hw hp_hw = { hp_read, hp_write, NULL };

TEST(mutant_wall_hpet_timer0_config_filtered)
{
	struct vhpet h;
	memset(hp_reg, 0, sizeof hp_reg);
	hp_reg[0] = 0x0429b17f00000000ull | 0x80868001ull | (uint64_t)(HP_TIMERS - 1) << 8;
	for (unsigned n = 0; n < HP_TIMERS; n++)
		hp_reg[HP_CFG(n) / 8] = (0x00f00000ull << 32) | HP_FSB_CAP | (1ull << 4) | (1ull << 5);
	vhpet_init(&h, &hp_hw);
	CHECK_EQ(h.ntimers, HP_TIMERS);
	CHECK_EQ(h.fsb_capable, 3);
	/* The guest reads timer 0's configuration without the capability,
	 * 32 and 64 bits at a time. */
	CHECK_EQ(vhpet_read(&h, &hp_hw, HP_CFG(0), 4) & (HP_FSB_CAP | HP_FSB_EN), 0);
	CHECK_EQ(vhpet_read(&h, &hp_hw, HP_CFG(0), 8) & (HP_FSB_CAP | HP_FSB_EN), 0);
	CHECK_EQ(h.cap_hidden, 2);
	/* The guest's FSB enable never reaches timer 0, the rest does. */
	uint64_t want = (1ull << 2) | (20ull << 9);              /* enabled, IOAPIC pin 20 */
	vhpet_write(&h, &hp_hw, HP_CFG(0), 4, (uint32_t)(want | HP_FSB_EN));
	CHECK_EQ(hp_reg[HP_CFG(0) / 8] & HP_FSB_EN, 0);
	CHECK_EQ(hp_reg[HP_CFG(0) / 8] & HP_CFG_RW, want);
	vhpet_write(&h, &hp_hw, HP_CFG(0), 8, want | HP_FSB_EN);
	CHECK_EQ(hp_reg[HP_CFG(0) / 8] & HP_FSB_EN, 0);
	CHECK_EQ(h.fsb_en_dropped, 2);
	/* Timer 0's FSB route is dropped (its first register's offset is
	 * timer 0's + 0x10). */
	unsigned w = hp_writes;
	vhpet_write(&h, &hp_hw, HP_ROUTE(0), 8, 0xfee00000000000f1ull);
	CHECK_EQ(hp_writes, w);
	CHECK_EQ(hp_reg[HP_ROUTE(0) / 8], 0);
	/* Timer 1 alike; the reserved dword below timer 0 passes. */
	vhpet_write(&h, &hp_hw, HP_CFG(1), 4, (uint32_t)(want | HP_FSB_EN));
	CHECK_EQ(hp_reg[HP_CFG(1) / 8] & HP_FSB_EN, 0);
	CHECK_EQ(vhpet_read(&h, &hp_hw, HP_CFG(1), 4) & (HP_FSB_CAP | HP_FSB_EN), 0);
	vhpet_write(&h, &hp_hw, 0xf8, 4, 0x5a5a);
	CHECK_EQ(hp_reg[0xf8 / 8], 0x5a5a);
}

/* ---- MSI-X: the model, a log of the callbacks ---- */

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };
static struct pfm M;
static struct vmsi_hw H;
static struct vmsi S;
static void (*pfm_cfg_write)(void *, uint16_t, uint16_t, unsigned, uint32_t);
static bool (*pfm_table_at)(void *, uint64_t, uint32_t);

/* The pages trapped (table_at less table_gone), the log, the first
 * moment a function decoded its table where no page was trapped. */
#define NTP 64
static uint64_t tp[NTP];
static unsigned ntp, nev, gone_calls;
static char lg[16384];
static size_t lglen;
static char viol[512];
static bool watching;
static int tat_ev, dec_ev;           /* the first table_at's event, the first event after which a table is decoded */

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

static bool tp_has(uint64_t pg)
{
	for (unsigned i = 0; i < ntp; i++)
		if (tp[i] == pg)
			return true;
	return false;
}

static unsigned msix_cap_of(const struct pfm_fn *f)
{
	if (!(f->cfg[0x06] & 0x10))
		return 0;
	for (unsigned p = f->cfg[0x34], n = 0; p >= 0x40 && n < 48; p = f->cfg[p + 1], n++)
		if (f->cfg[p] == 0x11)
			return p;
	return 0;
}

/* Every function that decodes memory now: each page of its MSI-X table
 * (where its BAR and the capability put it) trapped. */
static void invariant(void)
{
	if (!watching || viol[0])
		return;
	for (unsigned i = 0; i < M.n; i++) {
		const struct pfm_fn *f = &M.f[i];
		unsigned cap = msix_cap_of(f);
		int bdf = pfm_bdf_now(&M, f);
		uint64_t base = pfm_bar_base(f);
		if (f->cfg[0x0e] != 0 || !cap || bdf < 0 || !(f->cfg[0x04] & 2) || !base)
			continue;
		uint64_t pa = base + (pfm_cfg(f, cap + 4, 4) & ~7u);
		if (dec_ev < 0)
			dec_ev = (int)nev - 1;
		for (uint64_t pg = pa & ~0xfffull; pg < pa + 16ull * f->msix_nent; pg += 0x1000)
			if (!tp_has(pg)) {
				snprintf(viol, sizeof viol, "after event #%u %02x:%02x.%u decodes its table at 0x%llx, page 0x%llx not trapped",
					 nev - 1, bdf >> 8, bdf >> 3 & 31, bdf & 7, (unsigned long long)pa, (unsigned long long)pg);
				return;
			}
	}
}

static void w_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	pfm_cfg_write(ctx, bdf, off, size, val);
	ev("cfg_write %04x +%03x/%u = %x\n", bdf, off, size, val);
	invariant();
}

static bool w_table_at(void *ctx, uint64_t pa, uint32_t len)
{
	ev("table_at %llx +%x\n", (unsigned long long)pa, len);
	if (tat_ev < 0)
		tat_ev = (int)nev - 1;
	for (uint64_t pg = pa & ~0xfffull; pg < pa + len; pg += 0x1000)
		if (!tp_has(pg) && ntp < NTP)
			tp[ntp++] = pg;
	return pfm_table_at(ctx, pa, len);
}

static void w_table_gone(void *ctx, uint64_t pg)
{
	(void)ctx;
	ev("table_gone %llx\n", (unsigned long long)pg);
	gone_calls++;
	for (unsigned i = 0; i < ntp; i++)
		if (tp[i] == pg) {
			tp[i] = tp[--ntp];
			break;
		}
	invariant();
}

static void model(bool ext)
{
	pfm_init(&M, &H);
	H.ext_cfg = ext;
	pfm_cfg_write = H.cfg_write;
	pfm_table_at = H.table_at;
	H.cfg_write = w_cfg_write;
	H.table_at = w_table_at;
	H.table_gone = w_table_gone;
	ntp = nev = gone_calls = 0;
	lglen = 0;
	lg[0] = viol[0] = 0;
	watching = false;
	tat_ev = dec_ev = -1;
}

static void scan(void)
{
	memset(&S, 0, sizeof S);
	vmsi_scan(&S, &H);
	pfm_clear_log(&M);
}

static struct vioapic_dom dom(void)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = hids, .n = 2, .guest_x2apic = true };
	d.host_vectors[3] = 0x7fffull << 48;
	return d;
}

static void g_wr(uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	struct vioapic_dom d = dom();
	ev("guest %04x +%03x/%u = %x\n", bdf, off, size, val);
	vmsi_cfg_write(&S, &d, &H, bdf, off, size, val);
}

/* The trapped function now at bdf, or the one the scan took there (gone or not). */
static struct vmsi_fn *taken(uint16_t bdf)
{
	for (uint32_t i = 0; i < S.nfn; i++)
		if (S.fn[i].bdf == bdf)
			return &S.fn[i];
	test_bail(__FILE__, __LINE__, "function not trapped");
}

static void put(struct pfm_fn *f, unsigned off, unsigned size, uint32_t v, uint32_t wmask)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wmask[off + i] = (uint8_t)(wmask >> 8 * i);
	}
}

/* ---- pci/place.c: the wall ---- */

/* A table over two pages whose second page holds another function's
 * table: refused, though its first page is free. X (00:03.0): 32 entries
 * at 0x1F00 of its 16 KiB BAR0, pages +0x1000 and +0x2000; Y (00:04.0):
 * 4 entries at 0x2000 of its BAR0. X's BAR moved onto Y's. */
TEST(mutant_wall_table_second_page_over_another_table)
{
	model(false);
	pfm_msix(pfm_add(&M, 0x0018, 0, 0xfe000000u, false), 0x70, 32, 0x1f00, 0x3000);
	pfm_msix(pfm_add(&M, 0x0020, 0, 0xfe100000u, false), 0x70, 4, 0x2000, 0x3000);
	scan();
	CHECK_EQ(taken(0x0018)->table_pa, 0xfe001f00u);
	CHECK_EQ(taken(0x0020)->table_pa, 0xfe102000u);
	g_wr(0x0018, 0x10, 4, 0xfe100000u);
	CHECK_EQ(taken(0x0018)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0018)->last_refusal), "msix_table_over_another_table");
	CHECK(!vmsi_trapped(&S, 0xfe101000u));
	CHECK(vmsi_trapped(&S, 0xfe102000u));              /* Y's, still */
	CHECK_EQ(taken(0x0020)->table_pa, 0xfe102000u);
	CHECK_EQ(M.n_table_at, 0);
}

/* A bridge's memory window holds a BAR up to its limit, not one byte
 * further. The bridge 00:1c.0 forwards bus 1 and [0xD0000000, 0xD00FFFFF]
 * (PCI-to-PCI Bridge Architecture: the limit's 19:0 read as all ones);
 * W at 01:00.0 with a 16 KiB BAR. */
TEST(mutant_wall_bar_just_past_the_window_limit)
{
	model(false);
	struct pfm_fn *br = pfm_bridge(&M, 0x00e0, NULL, 1, 1, 0xd0000000u, 0xd0000000u);
	struct pfm_fn *w = pfm_add(&M, 0x0000, 0, 0xd00fc000u, false);      /* the window's last 16 KiB */
	pfm_below(&M, w, br);
	pfm_msix(w, 0x70, 4, 0, 0x1000);
	scan();
	CHECK_EQ(taken(0x0100)->table_pa, 0xd00fc000u);
	g_wr(0x0100, 0x10, 4, 0xd0100000u);               /* the first byte past the limit */
	CHECK_EQ(pfm_bar_base(w), 0xd0100000u);
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0100)->last_refusal), "msix_table_outside_bridge_window");
	CHECK(!vmsi_trapped(&S, 0xd0100000u));
	g_wr(0x0100, 0x10, 4, 0xd00fc000u);
	CHECK_EQ(taken(0x0100)->table_pa, 0xd00fc000u);
	/* The 64-bit prefetchable window [0x4_0000_0000, 0x4_000F_FFFF] alike
	 * (the memory window turned off: base above limit). */
	put(br, 0x20, 4, 0x0000fff0u, 0xfff0fff0u);
	put(br, 0x24, 4, 0x00010001u, 0);
	put(br, 0x28, 4, 4, 0);
	put(br, 0x2c, 4, 4, 0);
	g_wr(0x0100, 0x10, 4, 0xd00f8000u);
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0100)->last_refusal), "msix_table_outside_bridge_window");
	put(w, 0x10, 4, 0x4, 0xffffc000u);                 /* W's BAR 64 bits */
	put(w, 0x14, 4, 4, 0xffffffffu);
	w->cfg[0x04] = 0;                                  /* decoding off meanwhile */
	g_wr(0x0100, 0x10, 4, 0x000fc004u);
	g_wr(0x0100, 0x04, 2, 0x0002);
	CHECK_EQ(pfm_bar_base(w), 0x4000fc000ull);
	CHECK_EQ(taken(0x0100)->table_pa, 0x4000fc000ull);
	g_wr(0x0100, 0x10, 4, 0x00100004u);               /* 0x4_0010_0000: just past */
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0100)->last_refusal), "msix_table_outside_bridge_window");
}

/* A BAR larger than the window it starts in: W's 2 MiB (Resizable BAR)
 * from the window's base, the window 1 MiB. Placed once it is resized to
 * the window's 1 MiB. */
TEST(mutant_wall_bar_ending_past_the_window_limit)
{
	model(true);
	struct pfm_fn *br = pfm_bridge(&M, 0x00e0, NULL, 1, 1, 0xd0000000u, 0xd0000000u);
	struct pfm_fn *w = pfm_add(&M, 0x0000, 0, 0xd0000000u, false);
	pfm_below(&M, w, br);
	pfm_msix(w, 0x70, 4, 0x4000, 0x5000);
	pfm_rebar(w, 0x100, 0x30, 1);                      /* 1 MiB and 2 MiB; 2 MiB now */
	scan();
	CHECK_EQ(taken(0x0100)->bar_size, 0x200000u);
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0100)->last_refusal), "msix_table_outside_bridge_window");
	g_wr(0x0100, 0x108, 4, 0x00000020u);               /* 1 MiB */
	CHECK_EQ(taken(0x0100)->bar_size, 0x100000u);
	CHECK_EQ(taken(0x0100)->table_pa, 0xd0004000u);
	/* The same against the 64-bit prefetchable window [0x4_0000_0000,
	 * 0x4_000F_FFFF], the memory window off (base above limit): W's BAR,
	 * 64-bit now, 2 MiB from the window's base. */
	g_wr(0x0100, 0x108, 4, 0x00000120u);               /* 2 MiB again */
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	put(br, 0x20, 4, 0x0000fff0u, 0xfff0fff0u);
	put(br, 0x24, 4, 0x00010001u, 0);
	put(br, 0x28, 4, 4, 0);
	put(br, 0x2c, 4, 4, 0);
	w->cfg[0x04] = 0;                                  /* decoding off meanwhile */
	put(w, 0x10, 4, 0x4, 0xffe00000u);
	put(w, 0x14, 4, 4, 0xffffffffu);
	g_wr(0x0100, 0x04, 2, 0x0002);
	CHECK_EQ(pfm_bar_base(w), 0x400000000ull);
	CHECK_EQ(taken(0x0100)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0100)->last_refusal), "msix_table_outside_bridge_window");
	g_wr(0x0100, 0x108, 4, 0x00000020u);               /* 1 MiB: the window's */
	CHECK_EQ(taken(0x0100)->table_pa, 0x400004000ull);
}

/* A table that ends past its BAR: T's 32 entries (512 bytes) at 0x3F00 of
 * a 16 KiB BAR end 256 bytes past it; U's at 0x3E00 end at its end. */
TEST(mutant_wall_table_ending_past_its_bar)
{
	model(false);
	struct pfm_fn *t = pfm_add(&M, 0x0030, 0, 0xfe200000u, false);
	pfm_msix(t, 0x70, 32, 0x3000, 0x3800);
	put(t, 0x74, 4, 0x3f00 | 0, 0);                    /* the table offset: 0x3F00, BIR 0 */
	pfm_msix(pfm_add(&M, 0x0038, 0, 0xfe300000u, false), 0x70, 32, 0x3e00, 0x3000);
	scan();
	CHECK_EQ(taken(0x0030)->bar_size, 0x4000u);
	CHECK_EQ(taken(0x0030)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0030)->last_refusal), "msix_table_outside_bar");
	CHECK(!vmsi_trapped(&S, 0xfe203000u));
	CHECK_EQ(taken(0x0038)->table_pa, 0xfe303e00u);
	CHECK(vmsi_trapped(&S, 0xfe303000u));
}

/* A page given back only once no table covers it: G's BAR is 2 KiB (PCI
 * 3.0 lets a memory BAR be as small as 16 bytes), its table of 16 entries
 * at 0; G's BAR moved by 2 KiB leaves its table on the same page, which
 * stays trapped and is never given back. */
TEST(mutant_wall_page_still_in_use_not_given_back)
{
	model(false);
	struct pfm_fn *g = pfm_add(&M, 0x0038, 0, 0xfe300000u, false);
	put(g, 0x10, 4, 0xfe300000u, 0xfffff800u);
	g->bar_size = 0x800;
	pfm_msix(g, 0x70, 16, 0, 0x400);
	scan();
	CHECK_EQ(taken(0x0038)->bar_size, 0x800u);
	CHECK_EQ(taken(0x0038)->table_pa, 0xfe300000u);
	CHECK(tp_has(0xfe300000u));
	g_wr(0x0038, 0x10, 4, 0xfe300800u);
	CHECK_EQ(pfm_bar_base(g), 0xfe300800u);
	CHECK_EQ(taken(0x0038)->table_pa, 0xfe300800u);
	CHECK(vmsi_trapped(&S, 0xfe300800u));
	CHECK_EQ(gone_calls, 0);
	CHECK(tp_has(0xfe300000u));
	/* The guest's entries at the new place are the trap's. */
	CHECK_EQ(vmsi_mem_read(&S, &H, 0xfe300800u + 12), 1);
	CHECK_EQ(S.table_accesses, 1);
	/* Moved off the page: given back once. */
	g_wr(0x0038, 0x10, 4, 0xfe310000u);
	CHECK_EQ(gone_calls, 1);
	CHECK(!vmsi_trapped(&S, 0xfe300000u));
	CHECK(vmsi_trapped(&S, 0xfe310000u));
}

/* ---- pci/bridge_write.c: the functions that move ---- */

/* The root port 00:1c.0 (buses 1-2), a switch port at 01:00.0 (bus 2), F
 * at 02:00.0 with MSI (at 0x50) below it. */
static struct pfm_fn *two_bridges(struct pfm_fn **rp, struct pfm_fn **sw)
{
	model(false);
	*rp = pfm_bridge(&M, 0x00e0, NULL, 1, 2, 0xe0000000u, 0xefffffffu);
	*sw = pfm_bridge(&M, 0x0000, *rp, 2, 2, 0xe0000000u, 0xe0ffffffu);
	struct pfm_fn *f = pfm_add(&M, 0x0000, 0, 0xe0000000u, false);
	pfm_below(&M, f, *sw);
	pfm_msi(f, 0x50, 0, false, false);
	scan();
	CHECK(vmsi_find(&S, 0x0200) != NULL);
	return f;
}

/* A byte write of the root port's subordinate bus number (0x1A) to 1: bus
 * 2 no longer forwarded, the switch port and F are gone; back to 2, F is
 * reached again. */
TEST(mutant_wall_subordinate_bus_byte_write_followed)
{
	struct pfm_fn *rp, *sw, *f = two_bridges(&rp, &sw);
	g_wr(0x00e0, 0x1a, 1, 1);
	CHECK_EQ(rp->cfg[0x1a], 1);
	CHECK_EQ(pfm_bdf_now(&M, f), -1);                 /* the model: nothing answers for F */
	CHECK(vmsi_find(&S, 0x0200) == NULL);
	CHECK(taken(0x0200)->gone);
	CHECK_EQ(S.lost, 1);
	CHECK(vmsi_bridge_named(&S, 0x0100, true) != NULL);   /* the switch port, on bus 1, still reached */
	g_wr(0x00e0, 0x1a, 1, 2);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0200);
	CHECK(vmsi_find(&S, 0x0200) != NULL);
	CHECK(!taken(0x0200)->gone);
}

/* The same with one dword write of the bus numbers (primary 0, secondary
 * 1, subordinate 1): bus 2, above the subordinate, is not forwarded. */
TEST(mutant_wall_bus_above_subordinate_not_forwarded)
{
	struct pfm_fn *rp, *sw, *f = two_bridges(&rp, &sw);
	g_wr(0x00e0, 0x18, 4, 0x00010100u);
	CHECK_EQ(pfm_bdf_now(&M, f), -1);
	CHECK(vmsi_find(&S, 0x0200) == NULL);
	CHECK(taken(0x0200)->gone);
	CHECK_EQ(S.lost, 1);
	/* Subordinate 3: bus 2 forwarded again. */
	g_wr(0x00e0, 0x18, 4, 0x00030100u);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0200);
	CHECK(vmsi_find(&S, 0x0200) != NULL);
}

/* The switch port (01:00.0) given its own bus as secondary: no bus below
 * it (PCI-to-PCI Bridge Architecture: the secondary bus lies below the
 * bridge), so F answers nowhere; it is not renamed 01:00.0, the bridge's
 * own BDF, whose configuration space stays the bridge's. */
TEST(mutant_wall_function_not_renamed_onto_its_bridge)
{
	struct pfm_fn *rp, *sw, *f = two_bridges(&rp, &sw);
	g_wr(0x0100, 0x19, 1, 1);
	CHECK_EQ(pfm_bdf_now(&M, f), -1);
	CHECK(vmsi_find(&S, 0x0100) == NULL);
	CHECK(vmsi_find(&S, 0x0200) == NULL);
	CHECK_EQ(S.moves, 0);
	CHECK(M.n_moved == 0 || M.moved_to != 0x0100);
	/* The bridge's 0x50 is its own (zero), not F's MSI emulated. */
	CHECK_EQ(vmsi_cfg_read(&S, &H, 0x0100, 0x50, 4), 0);
	/* Secondary 2 again: F back at 02:00.0. */
	g_wr(0x0100, 0x19, 1, 2);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0200);
	CHECK(vmsi_find(&S, 0x0200) != NULL);
}

/* A byte write of the Resizable BAR control's size field (bits 13:8: the
 * byte at +9): the BAR shrinks from 2 MiB to 1 MiB, the table at 1.5 MiB
 * is outside it now and no longer trapped there; 2 MiB again, placed. */
TEST(mutant_wall_rebar_size_byte_write_followed)
{
	model(true);
	struct pfm_fn *r = pfm_add(&M, 0x0028, 0, 0xc0000000u, false);
	pfm_msix(r, 0x70, 4, 0x180000, 0x181000);
	pfm_rebar(r, 0x100, 0x30, 1);
	scan();
	CHECK_EQ(taken(0x0028)->table_pa, 0xc0180000u);
	g_wr(0x0028, 0x109, 1, 0x00);
	CHECK_EQ(r->bar_size, 0x100000u);                  /* the device: 1 MiB */
	CHECK_EQ(taken(0x0028)->bar_size, 0x100000u);
	CHECK_EQ(S.resizes, 1);
	CHECK_EQ(taken(0x0028)->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(taken(0x0028)->last_refusal), "msix_table_outside_bar");
	CHECK(!vmsi_trapped(&S, 0xc0180000u));
	g_wr(0x0028, 0x109, 1, 0x01);
	CHECK_EQ(taken(0x0028)->bar_size, 0x200000u);
	CHECK_EQ(S.resizes, 2);
	CHECK_EQ(taken(0x0028)->table_pa, 0xc0180000u);
}

/* ---- pci/: memory decoding reaches the device after the trap ---- */

/* P (00:08.0), MSI-X 4 entries at 0x2000 of BAR0, memory decoding off at
 * boot: no table placed. At every device write the invariant holds: a
 * function decoding memory has its table's page trapped (table_at called
 * before, not after, the Command write that turns decoding on). */
static struct pfm_fn *undecoded(void)
{
	model(false);
	struct pfm_fn *p = pfm_add(&M, 0x0040, 0, 0xfe400000u, false);
	pfm_msix(p, 0x70, 4, 0x2000, 0x3000);
	p->cfg[0x04] = 0;
	scan();
	CHECK_EQ(taken(0x0040)->table_pa, 0);
	watching = true;
	return p;
}

TEST(mutant_wall_memory_decoding_after_table_trapped)
{
	struct pfm_fn *p = undecoded();
	g_wr(0x0040, 0x04, 2, 0x0002);
	CHECK_STR(viol, "");
	CHECK_EQ(p->cfg[0x04] & 2, 2);
	CHECK(vmsi_trapped(&S, 0xfe402000u));
	CHECK(tat_ev >= 0);
	CHECK(dec_ev >= 0);
	CHECK(tat_ev < dec_ev);                            /* trapped, then decoded */
	CHECK_EQ(M.table_at_pa, 0xfe402000u);
	/* The same as a byte (0x04) and as a dword with Status (0x04/4). */
	g_wr(0x0040, 0x04, 1, 0x00);
	CHECK_EQ(p->cfg[0x04] & 2, 0);
	g_wr(0x0040, 0x04, 1, 0x02);
	CHECK_STR(viol, "");
	CHECK_EQ(p->cfg[0x04] & 2, 2);
	g_wr(0x0040, 0x04, 2, 0x0000);
	g_wr(0x0040, 0x04, 4, 0x00100002u);
	CHECK_STR(viol, "");
	CHECK_EQ(p->cfg[0x04] & 2, 2);
	if (viol[0] || !(p->cfg[0x04] & 2))
		printf("%s", lg);
}

/* The table's BAR written while decoding is on: the device decodes the
 * new place only once it is trapped. */
TEST(mutant_wall_bar_written_under_decoding_after_table_trapped)
{
	struct pfm_fn *p = undecoded();
	g_wr(0x0040, 0x04, 2, 0x0002);
	g_wr(0x0040, 0x10, 4, 0xfe500000u);
	CHECK_STR(viol, "");
	CHECK_EQ(pfm_bar_base(p), 0xfe500000u);
	CHECK_EQ(p->cfg[0x04] & 2, 2);
	CHECK_EQ(taken(0x0040)->table_pa, 0xfe502000u);
	CHECK(!vmsi_trapped(&S, 0xfe402000u));
	g_wr(0x0040, 0x12, 2, 0xfe60);                     /* the upper word alone */
	CHECK_STR(viol, "");
	CHECK_EQ(taken(0x0040)->table_pa, 0xfe602000u);
	if (viol[0])
		printf("%s", lg);
}
