/* Trapped functions that move (issue 35, item 4), against the PCI
 * function model (pci_fn_model.h) and the remapping-unit model
 * (irte_model.h, from the VT-d specification):
 *  - the guest renumbers a bridge's secondary bus (PCI-to-PCI Bridge
 *    Architecture Specification, bus number registers at 0x18-0x1A): the
 *    function below answers at a new BDF; the trap follows it there (its
 *    MSI emulated at the new BDF, not at the old one) and its IRTEs take
 *    the new requester ID as source ID;
 *  - the guest resizes the MSI-X table's BAR through the Resizable BAR
 *    capability (PCI Express Base Specification): the wall judges the
 *    table against the BAR's new size. */
#include "test.h"
#include "pci_fn_model.h"
#include "irte_model.h"
#include "../../pci/vmsi.h"

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };
static struct pfm M;
static struct vmsi_hw H;
static struct vmsi S;

static struct vioapic_dom dom(void)
{
	return (struct vioapic_dom){ .apic_id = gids, .host_apic_id = hids, .n = 2, .guest_x2apic = true,
				     .remap = true, .eim = true, .ext_dest = true };
}

static void g_wr(uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	struct vioapic_dom d = dom();
	vmsi_cfg_write(&S, &d, &H, bdf, off, size, val);
}
static uint32_t g_rd(uint16_t bdf, uint16_t off, unsigned size) { return vmsi_cfg_read(&S, &H, bdf, off, size); }

/* What the device's message delivers, sent with requester ID sid: 0, or
 * the unit's fault reason (0x26: source-ID check failed). */
static int deliver(uint16_t sid, const struct pfm_fn *f, struct irm_out *o)
{
	const struct irm_unit u = { M.irt, 9, true, false };     /* 2^10 entries, EIME */
	return irm_msi(&u, sid, pfm_cfg(f, 0x54, 4), pfm_cfg(f, 0x58, 2), o);
}

/* The scan with owned remapping (64 IRTEs from 0), the log cleared. */
static void scan_owned(void)
{
	memset(&S, 0, sizeof S);
	S.irte_base = 0;
	S.irte_count = 64;
	vmsi_scan(&S, &H);
	pfm_clear_log(&M);
}

#define RP    0x00e0                  /* 00:1c.0, a root port */
#define WIN   0xe0000000u

/* A root port with secondary bus 2 (subordinate sub) and the function
 * (MSI at 0x50, 32-bit) at dev/fn 'fn' below it, or below a switch port
 * at 02:00.0 with secondary bus 3; scanned with owned remapping. */
static struct pfm_fn *setup(uint8_t sub, bool sw, uint16_t fn)
{
	pfm_init(&M, &H);
	struct pfm_fn *rp = pfm_bridge(&M, RP, NULL, 2, sub, WIN, WIN + 0x0fffffffu);
	struct pfm_fn *up = sw ? pfm_bridge(&M, 0x0000, rp, 3, 3, WIN, WIN + 0x00ffffffu) : rp;
	/* PCI Express ports and endpoint (Device/Port Type: 0100b root port,
	 * 0110b downstream switch port, 0000b endpoint): no bridge here
	 * re-tags the requester ID, the function's own is checked. */
	pfm_pcie(rp, 0x40, 0x4);
	if (sw)
		pfm_pcie(up, 0x40, 0x6);
	struct pfm_fn *f = pfm_add(&M, fn, 0, WIN, false);
	pfm_below(&M, f, up);
	pfm_msi(f, 0x50, 0, false, false);
	pfm_pcie(f, 0x60, 0x0);
	scan_owned();
	return f;
}

/* The guest's MSI: vCPU 1 (host APIC ID 9), vector v, enabled. */
static void msi_on(uint16_t bdf, uint8_t v)
{
	g_wr(bdf, 0x54, 4, 0xfee01000u);
	g_wr(bdf, 0x58, 2, v);
	g_wr(bdf, 0x52, 2, 0x0001);
}

TEST(vmsi_moves_bridge_secondary_bus_renumbered)
{
	struct pfm_fn *f = setup(2, false, 0x0000);
	CHECK_EQ(S.nfn, 1);
	CHECK_EQ(S.fn[0].bdf, 0x0200);
	msi_on(0x0200, 0x41);
	struct irm_out o;
	CHECK_EQ(deliver(0x0200, f, &o), 0);
	CHECK_EQ(o.vector, 0x41);
	/* The guest renumbers: secondary and subordinate 2 -> 5 (one dword,
	 * as Linux's pci=assign-busses writes them). */
	g_wr(RP, 0x18, 4, 0x00050500u);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0500);
	CHECK_EQ(S.moves, 1);
	CHECK_EQ(M.n_moved, 1);
	CHECK_EQ(M.moved_from, 0x0200);
	CHECK_EQ(M.moved_to, 0x0500);
	CHECK(vmsi_find(&S, 0x0200) == NULL);
	CHECK(vmsi_find(&S, 0x0500) != NULL);
	/* At the new BDF the guest reads its own MSI, not the device's
	 * remappable one; the old BDF is nobody's. */
	CHECK_EQ(g_rd(0x0500, 0x54, 4), 0xfee01000u);
	CHECK_EQ(pfm_cfg(f, 0x54, 4) & 0x10, 0x10);
	CHECK_EQ(g_rd(0x0200, 0x54, 4), 0xffffffffu);
	/* The IRTE's source ID is the new requester ID: the device's message
	 * from 05:00.0 delivers, one still from 02:00.0 is refused. */
	CHECK_EQ(M.irt[1] & 0xffff, 0x0500);
	CHECK_EQ(deliver(0x0500, f, &o), 0);
	CHECK_EQ(o.vector, 0x41);
	CHECK_EQ(o.dest, 9);
	CHECK_EQ(deliver(0x0200, f, &o), 0x26);
	/* A write at the new BDF is emulated: routed, never the device's raw. */
	g_wr(0x0500, 0x58, 2, 0x0042);
	CHECK_EQ(pfm_cfg(f, 0x58, 2), 0);
	CHECK_EQ(deliver(0x0500, f, &o), 0);
	CHECK_EQ(o.vector, 0x42);
	CHECK_EQ(S.bridge_of[5], RP + 1);
	CHECK_EQ(S.bridge_of[2], 0);
}

/* Forwarding turned off first (Linux's first pass writes 0 to the bus
 * numbers), then a new number: the function is not followed while no
 * bridge reaches it, then follows to its new BDF. */
TEST(vmsi_moves_forwarding_off_then_renumbered)
{
	struct pfm_fn *f = setup(2, false, 0x0008);
	msi_on(0x0208, 0x41);
	g_wr(RP, 0x18, 4, 0);
	CHECK_EQ(pfm_bdf_now(&M, f), -1);
	CHECK_EQ(S.lost, 1);
	CHECK(S.fn[0].gone);
	CHECK(vmsi_find(&S, 0x0208) == NULL);
	g_wr(RP, 0x18, 4, 0x00070700u);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0708);
	CHECK(!S.fn[0].gone);
	CHECK_EQ(S.fn[0].bdf, 0x0708);
	CHECK_EQ(M.irt[1] & 0xffff, 0x0708);
	struct irm_out o;
	CHECK_EQ(deliver(0x0708, f, &o), 0);
	CHECK_EQ(o.vector, 0x41);
	CHECK_EQ(g_rd(0x0708, 0x54, 4), 0xfee01000u);
}

/* Below a switch port the bus is the switch port's: renumbering the root
 * port moves the switch port alone and leaves the function unreached;
 * renumbering the switch port (at its new BDF) then moves the function. */
TEST(vmsi_moves_deeper_bus_follows_its_own_bridge)
{
	struct pfm_fn *f = setup(3, true, 0x0000);
	CHECK_EQ(S.fn[0].bdf, 0x0300);
	msi_on(0x0300, 0x41);
	g_wr(RP, 0x18, 4, 0x00060500u);                  /* secondary 5, subordinate 6 */
	CHECK_EQ(pfm_bdf_now(&M, f), -1);                 /* the switch port still says bus 3 */
	CHECK(S.fn[0].gone);
	CHECK_EQ(M.moved_from, 0x0200);                    /* the switch port's page follows it */
	CHECK_EQ(M.moved_to, 0x0500);
	g_wr(0x0500, 0x18, 4, 0x00060605u);
	CHECK_EQ(pfm_bdf_now(&M, f), 0x0600);
	CHECK_EQ(S.fn[0].bdf, 0x0600);
	CHECK(!S.fn[0].gone);
	CHECK_EQ(S.moves, 1);
	CHECK_EQ(M.irt[1] & 0xffff, 0x0600);
	CHECK_EQ(S.bridge_of[6], 0x0500 + 1);
	CHECK_EQ(g_rd(0x0600, 0x54, 4), 0xfee01000u);
}

/* Resizable BAR: BAR2 (64-bit) at 0xD000_0000, 1 MiB at boot, sizes 1-16
 * MiB listed; MSI-X (4 entries) at 8 MiB into it, the PBA after. */
#define RF      0x0010                /* 00:02.0 */
#define RBAR    0xd0000000ull

static struct pfm_fn *rebar_setup(void)
{
	pfm_init(&M, &H);
	H.ext_cfg = true;
	struct pfm_fn *f = pfm_add(&M, RF, 2, RBAR, true);
	pfm_msix(f, 0x70, 4, 0x800000, 0x801000);
	pfm_rebar(f, 0x100, 0x1f0, 0);
	memset(&S, 0, sizeof S);
	vmsi_scan(&S, &H);
	pfm_clear_log(&M);
	return f;
}

TEST(vmsi_moves_resizable_bar_grows_and_shrinks)
{
	struct pfm_fn *f = rebar_setup();
	CHECK_EQ(S.fn[0].rebar, 0x100);
	CHECK_EQ(S.fn[0].bar_size, 0x100000);
	CHECK_EQ(S.fn[0].table_pa, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "msix_table_outside_bar");
	g_wr(RF, 0x72, 2, 0x8000);                        /* MSI-X on: no table, the device's stays off */
	CHECK_EQ(pfm_cfg(f, 0x72, 2) & 0x8000, 0);
	/* 16 MiB (n = 4): the table inside, placed, the device's MSI-X on. */
	g_wr(RF, 0x108, 4, 4u << 8);
	CHECK_EQ(f->bar_size, 16u << 20);
	CHECK_EQ(S.fn[0].bar_size, 16u << 20);
	CHECK_EQ(S.fn[0].table_pa, RBAR + 0x800000);
	CHECK(vmsi_trapped(&S, RBAR + 0x800000));
	CHECK_EQ(pfm_cfg(f, 0x72, 2) & 0x8000, 0x8000);
	CHECK_EQ(pfm_cfg(f, 0x04, 2) & 2, 2);             /* decoding back on */
	/* Back to 1 MiB: refused again, its page given back. */
	g_wr(RF, 0x108, 4, 0);
	CHECK_EQ(S.fn[0].bar_size, 0x100000);
	CHECK_EQ(S.fn[0].table_pa, 0);
	CHECK(!vmsi_trapped(&S, RBAR + 0x800000));
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "msix_table_outside_bar");
	CHECK_EQ(pfm_cfg(f, 0x72, 2) & 0x8000, 0);
	CHECK_EQ(S.resizes, 2);
}

/* A size the capability does not list (1 GiB): what the device decodes is
 * not known, no table placed; a listed one again: placed. */
TEST(vmsi_moves_resizable_bar_unlisted_size_refused)
{
	rebar_setup();
	g_wr(RF, 0x108, 4, 4u << 8);
	CHECK_EQ(S.fn[0].table_pa, RBAR + 0x800000);
	g_wr(RF, 0x108, 4, 10u << 8);
	CHECK_EQ(S.fn[0].table_pa, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "msix_table_outside_bar");
	/* 1 GiB cleared the BAR's address bits below it (0xC000_0000 now). */
	g_wr(RF, 0x108, 4, 3u << 8);                       /* 8 MiB: the table just past its end */
	CHECK_EQ(S.fn[0].table_pa, 0);
	g_wr(RF, 0x108, 4, 4u << 8);
	CHECK_EQ(S.fn[0].table_pa, 0xc0800000u);
	g_wr(RF, 0x18, 4, (uint32_t)RBAR | 4u);            /* the guest puts the BAR back */
	CHECK_EQ(S.fn[0].table_pa, RBAR + 0x800000);
	CHECK(!vmsi_trapped(&S, 0xc0800000u));
}

/* Issue 43, item 7: a VF moves with its PF, by its routing ID's offset
 * from the PF (SR-IOV: First VF Offset + (n - 1) * VF Stride, which may
 * carry it onto the next bus), not as a function directly below the
 * bridge: PF 02:00.0 with VF 1 at 03:00.0 (offset 0x100); the root port's
 * secondary bus renumbered 2 -> 5 puts the PF at 05:00.0 and the VF at
 * 06:00.0. Before, the VF was renamed onto 05:00.0, its PF's BDF, and its
 * MSI-X state would have been written into the PF's configuration space. */
TEST(vmsi_moves_a_vf_with_its_pf)
{
	setup(7, false, 0x0000);
	CHECK_EQ(S.nfn, 1);
	CHECK(S.nfn < S.fn_room);
	struct vmsi_fn *pf = &S.fn[0];
	CHECK_EQ(pf->bdf, 0x0200);
	S.fn[S.nfn++] = (struct vmsi_fn){ .bdf = 0x0300, .irte = VMSI_NO_IRTE, .parent = pf->parent, .pf = 1, .vf = 1 };
	g_wr(RP, 0x18, 4, 0x00070500);                 /* primary 0, secondary 5, subordinate 7 */
	CHECK_EQ(S.fn[0].bdf, 0x0500);
	CHECK_EQ(S.fn[1].bdf, 0x0600);
	CHECK(!S.fn[1].gone);
	CHECK(vmsi_find(&S, 0x0500) == &S.fn[0]);
	CHECK(vmsi_find(&S, 0x0600) == &S.fn[1]);
}

/* Issue 43, the wall fuzzer's BRIDGE: what a bridge forwards is the
 * guest's to change (Memory Space Enable, its windows: PCI-to-PCI Bridge
 * Architecture), and the model's function decodes memory only where every
 * bridge above it forwards. The trap follows: a table no bridge forwards
 * to is unplaced (no refusal: as with its own decoding off), one outside
 * a window refused, and the hypervisor writes nothing where the device
 * does not decode (n_mem_lost); forwarding back, the table is placed and
 * its entries written, after the bridge forwards again. */
static struct pfm_fn *setup_x(struct pfm_fn **rp)
{
	pfm_init(&M, &H);
	*rp = pfm_bridge(&M, RP, NULL, 2, 2, WIN, WIN + 0x0fffffffu);
	pfm_pcie(*rp, 0x40, 0x4);
	struct pfm_fn *f = pfm_add(&M, 0x0000, 0, WIN, false);
	pfm_below(&M, f, *rp);
	pfm_msix(f, 0x70, 4, 0x1000, 0x2000);
	pfm_pcie(f, 0x60, 0x0);
	scan_owned();
	return f;
}

TEST(vmsi_bridge_forwarding_followed)
{
	struct pfm_fn *rp, *f = setup_x(&rp);
	struct vmsi_fn *t = vmsi_find(&S, 0x0200);
	CHECK(t != NULL && t->table_pa == WIN + 0x1000);
	if (!t)
		return;
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, WIN + 0x1000, 0xfee00000u);
	vmsi_mem_write(&S, &d, &H, WIN + 0x1008, 0x0041);
	vmsi_mem_write(&S, &d, &H, WIN + 0x100c, 0);
	g_wr(0x0200, 0x72, 2, 0x8000);
	CHECK_EQ(M.n_mem_lost, 0);
	CHECK_EQ(pfm_mem(&M, WIN + 0x100c), 0);                /* routed, unmasked */
	/* The root port's Memory Space Enable cleared. */
	g_wr(RP, 0x04, 2, 0x0004);
	CHECK_EQ(t->table_pa, 0);
	CHECK(!vmsi_trapped(&S, WIN + 0x1000));
	CHECK_EQ(t->refusals, 0);
	vmsi_mem_write(&S, &d, &H, WIN + 0x100c, 1);           /* not trapped: a guest store goes nowhere itself */
	CHECK_EQ(M.n_mem_lost, 0);
	/* Set again: placed, its entries written once the bridge forwards. */
	memset(&f->mem[0x1000], 0, 16);
	g_wr(RP, 0x04, 2, 0x0006);
	CHECK_EQ(pfm_cfg(rp, 0x04, 2), 0x0006);
	CHECK_EQ(t->table_pa, WIN + 0x1000);
	CHECK_EQ(M.n_mem_lost, 0);
	CHECK_EQ(pfm_mem(&M, WIN + 0x100c), 0);
	CHECK(pfm_mem(&M, WIN + 0x1000) != 0);
	/* The window moved off the BAR: refused there, nothing written. */
	g_wr(RP, 0x20, 4, 0xd000d000u);
	CHECK_EQ(t->table_pa, 0);
	CHECK_STR(vmsi_refusal_name(t->last_refusal), "msix_table_outside_bridge_window");
	vmsi_mem_write(&S, &d, &H, WIN + 0x1008, 0x0042);
	CHECK_EQ(M.n_mem_lost, 0);
	g_wr(RP, 0x20, 4, (WIN + 0x0ff00000u) | (WIN >> 16));
	CHECK_EQ(t->table_pa, WIN + 0x1000);
	CHECK_EQ(M.n_mem_lost, 0);
}

/* Issue 43, the wall fuzzer's REMOVE: a function pulled while the guest
 * looks away (its configuration all ones, its BAR decoding nothing): the
 * guest's next store to its table page lets it go (its IDs read again),
 * and nothing is written where it was. */
TEST(vmsi_pulled_function_table_not_written)
{
	struct pfm_fn *rp, *f = setup_x(&rp);
	struct vmsi_fn *t = vmsi_find(&S, 0x0200);
	CHECK(t != NULL && t->table_pa == WIN + 0x1000);
	if (!t)
		return;
	memset(f->cfg, 0xff, 0x100);
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, WIN + 0x100c, 0);
	vmsi_mem_write(&S, &d, &H, WIN + 0x2000, 0);           /* its PBA's page, passed before */
	CHECK_EQ(M.n_mem_w, 0);
	CHECK_EQ(S.swapped, 1);
	CHECK_EQ(t->table_pa, 0);
	CHECK(!vmsi_trapped(&S, WIN + 0x1000));
}

/* The wall fuzzer's REPLUG (2026-12-03): the function pulled and one of
 * the same IDs put in while the guest looks away, its BAR where the old
 * one's was and its memory decoding off (a card as firmware left it, or a
 * function reset): its IDs match, but nothing decodes the table there, so
 * the guest's stores to the table's and the PBA's page are made nowhere
 * (before: `M.n_mem_w == w (0x2 != 0x0)`, and the read answered 0 from the device). */
TEST(vmsi_replugged_function_not_decoding_not_written)
{
	struct pfm_fn *rp, *f = setup_x(&rp);
	struct vmsi_fn *t = vmsi_find(&S, 0x0200);
	CHECK(t != NULL && t->table_pa == WIN + 0x1000);
	if (!t)
		return;
	f->cfg[0x04] = 0;                                        /* Memory Space Enable clear */
	unsigned w = M.n_mem_w;
	struct vioapic_dom d = dom();
	vmsi_mem_write(&S, &d, &H, WIN + 0x100c, 0);
	vmsi_mem_write(&S, &d, &H, WIN + 0x2000, 0);
	CHECK_EQ(M.n_mem_w, w);
	CHECK_EQ(vmsi_mem_read(&S, &H, WIN + 0x1000), 0xffffffffu);
	CHECK_EQ(S.swapped, 0);                                  /* the same function, by its IDs */
}

/* A write of the bridge's command register that leaves Memory Space
 * Enable as it is (INTx Disable, as Linux sets it when the port's MSI
 * comes on) is passed alone: forwarding is never held off for it, so no
 * access to the devices below fails meanwhile. */
TEST(vmsi_bridge_command_write_not_held_off)
{
	struct pfm_fn *rp;
	setup_x(&rp);
	g_wr(RP, 0x04, 2, 0x0406);
	CHECK_EQ(M.n_cfg_w, 1);
	CHECK_EQ(pfm_cfg(rp, 0x04, 2), 0x0406);
	CHECK_EQ(vmsi_find(&S, 0x0200)->table_pa, WIN + 0x1000);
}

/* The wall fuzzer's: the first-access marks follow a renumbering. W (no
 * MSI) answered at 02:00.0 and was marked; the guest moves its root
 * port's buses to 3, another root port's to 2, and a function with MSI is
 * hot-added below that one, at 02:00.0: asked afresh there, trapped, not
 * taken for W (whose mark stayed, so its MSI was the guest's). */
TEST(vmsi_first_access_marks_follow_a_renumbering)
{
	pfm_init(&M, &H);
	struct pfm_fn *rp = pfm_bridge(&M, RP, NULL, 2, 2, WIN, WIN + 0x0fffffffu);
	struct pfm_fn *rp2 = pfm_bridge(&M, 0x00e8, NULL, 5, 5, WIN + 0x10000000u, WIN + 0x1fffffffu);
	struct pfm_fn *w = pfm_add(&M, 0x0000, 0, WIN, false);
	pfm_below(&M, w, rp);
	scan_owned();
	CHECK_EQ(g_rd(0x0200, 0, 2), 0x8086);
	g_wr(RP, 0x18, 4, 0x030300);
	g_wr(0x00e8, 0x18, 4, 0x020200);
	struct pfm_fn *x = pfm_add(&M, 0x0000, 0, WIN + 0x10000000u, false);
	pfm_below(&M, x, rp2);
	pfm_msi(x, 0x50, 0, false, false);
	CHECK_EQ(pfm_bdf_now(&M, x), 0x0200);
	CHECK_EQ(g_rd(0x0200, 0x50, 1), 0x05);
	CHECK(vmsi_find(&S, 0x0200) != NULL);
	CHECK_EQ(S.hot_added, 1);
}

/* The wall fuzzer's (third 600 s run): a function unplaced while its root
 * port forwarded no memory, then out of reach of its registers (the
 * port's buses renumbered to none), decodes its table again once the port
 * forwards memory again: its table is placed where its BAR was last read
 * (its registers cannot be asked), dark: out of view and unwritten (whether
 * it decodes is not known) until a renumbering reaches it again. */
TEST(vmsi_gone_function_table_kept_out_of_view)
{
	struct pfm_fn *rp;
	setup_x(&rp);
	struct vmsi_fn *t = vmsi_find(&S, 0x0200);
	CHECK(t != NULL && t->table_pa == WIN + 0x1000);
	if (!t)
		return;
	g_wr(RP, 0x04, 2, 0x0004);                         /* no memory forwarded: unplaced */
	CHECK(!vmsi_trapped(&S, WIN + 0x1000));
	g_wr(RP, 0x18, 4, 0x010500);                       /* secondary 5, subordinate 1: no bus */
	CHECK(t->gone);
	g_wr(RP, 0x04, 2, 0x0006);                         /* memory forwarded again */
	CHECK(vmsi_trapped(&S, WIN + 0x1000));
	CHECK(t->dark);                                    /* whether it decodes cannot be asked: nothing written */
	CHECK_EQ(M.n_mem_w, 0);
	g_wr(RP, 0x18, 4, 0x020200);                       /* reached again: placed as it decodes, its entries written */
	CHECK(!t->gone);
	CHECK(!t->dark);
	CHECK_EQ(t->table_pa, WIN + 0x1000);
	CHECK(M.n_mem_w > 0);
	CHECK_EQ(M.n_mem_lost, 0);
}
