/* The source check of a trapped function's IRTEs (issue 35 item 5): the
 * requester ID its MSIs carry depends on the bridges above it, and the
 * IRTE the hypervisor writes must let exactly those through. The machine
 * is the PCI function model (pci_fn_model.h); the IRTE is judged by the
 * remapping unit's model (irte_model.h). The requester IDs below come from
 * the specifications, written out here, never from the project's headers:
 *  - PCI Express to PCI/PCI-X Bridge Specification 1.0, "Requester ID"
 *    (sec. 2.3): a PCIe-to-PCI bridge (PCIe capability Device/Port Type
 *    0111b) forwards a request from a conventional PCI device with its
 *    secondary bus number and device/function 0; from PCI-X, the
 *    originator's own ID, i.e. any device/function on that side;
 *  - a conventional PCI-to-PCI bridge (no PCIe capability) has no
 *    requester ID of its own to carry: upstream of it the request is the
 *    bridge's (what Linux's pci_for_each_dma_alias and the VT-d
 *    specification, "Identifying Origination of Interrupt Requests", assume);
 *  - PCIe root and switch ports (0100b, 0101b, 0110b) pass the ID unchanged;
 *  - VT-d, "Interrupt Remapping Table Entry (IRTE)": SID 79:64, SQ 81:80,
 *    SVT 83:82; SVT 01b the whole requester ID (SQ 00b), SVT 10b the bus:
 *    SID 15:8 the start bus, 7:0 the end bus, the requester's bus must be
 *    within;
 *  - Linux's DMA-alias quirks (drivers/pci/quirks.c; facts, the IDs):
 *    Marvell 1b4b:9123 issues its requests as function 1 of its device,
 *    Ricoh 1180:e832 as function 0, Adaptec 9005:0285 with subsystem
 *    9005:02bb as 01.0 of its bus; ASMedia 1b21:1080 is a PCIe-to-PCI
 *    bridge without a PCI Express capability (below a PCIe port that is
 *    not itself a PCIe-to-PCI bridge). Linux's MSI source check
 *    (drivers/iommu/intel/irq_remapping.c, set_msi_sid): a device with
 *    such aliases, all on its own bus and no bridge re-tagging above it,
 *    is checked by its bus (SVT 10b, start = end = its bus); a bridge's
 *    re-tag above it wins as for any device. */
#include "test.h"
#include "pci_fn_model.h"
#include "irte_model.h"
#include "../../pci/vmsi.h"
#include "../../pci/alias.h"

/* PCI Express Base Specification, "PCI Express Capabilities Register":
 * Device/Port Type. */
#define T_ENDPOINT      0x0
#define T_ROOT_PORT     0x4
#define T_PCIE_TO_PCI   0x7
#define T_PCI_TO_PCIE   0x8

#define BDF(b, d, f) ((uint16_t)((b) << 8 | (d) << 3 | (f)))
#define IRTE_BASE 100

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };
static struct pfm M;
static struct vmsi_hw H;
static struct vmsi S;

static struct vioapic_dom dom(void)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = hids, .n = 2, .guest_x2apic = true,
				 .remap = true, .eim = true };
	d.host_vectors[3] = 0x7fffull << 48;
	return d;
}

static void start(void)
{
	pfm_init(&M, &H);
	memset(&S, 0, sizeof S);
	S.irte_base = IRTE_BASE;
	S.irte_count = 900;
}

/* The device at bdf: a 64-bit MSI at 0x50 (after a PCIe capability at
 * 0x40 when pcie_type >= 0). */
static void device(uint16_t bdf, int pcie_type)
{
	struct pfm_fn *f = pfm_add(&M, bdf, 0, 0xfe000000u + ((uint32_t)M.n << 16), false);
	if (pcie_type >= 0)
		pfm_pcie(f, 0x40, (unsigned)pcie_type);
	pfm_msi(f, 0x50, 0, true, false);
}

static struct pfm_fn *bridge(uint16_t bdf, uint8_t sec, uint8_t sub, int pcie_type)
{
	struct pfm_fn *f = pfm_bridge_fixed(&M, bdf, sec, sub);
	if (pcie_type >= 0)
		pfm_pcie(f, 0x40, (unsigned)pcie_type);
	return f;
}

static const struct pfm_fn *mfn(uint16_t bdf)
{
	for (unsigned i = 0; i < M.n; i++)
		if (M.f[i].bdf == bdf)
			return &M.f[i];
	test_bail(__FILE__, __LINE__, "no such function in the model");
}

/* Scans, programs the device's MSI as Linux does (address, upper, data,
 * then enable): vector 0x41 to APIC ID 0 (vCPU 0, host APIC ID 4). */
static void program(uint16_t bdf)
{
	vmsi_scan(&S, &H);
	struct vioapic_dom d = dom();
	vmsi_cfg_write(&S, &d, &H, bdf, 0x54, 4, 0xfee00000u);
	vmsi_cfg_write(&S, &d, &H, bdf, 0x58, 4, 0);
	vmsi_cfg_write(&S, &d, &H, bdf, 0x5c, 2, 0x0041);
	vmsi_cfg_write(&S, &d, &H, bdf, 0x52, 2, 0x0001);
}

/* The device's message as the unit receives it from requester rid:
 * 0 delivered (to host APIC ID 4, vector 0x41), else the fault reason. */
static int from(uint16_t dev, uint16_t rid)
{
	const struct pfm_fn *f = mfn(dev);
	const struct irm_unit u = { M.irt, 9, true, false };   /* 2^10 entries, EIME */
	struct irm_out o;
	int r = irm_msi(&u, rid, pfm_cfg(f, 0x54, 4), pfm_cfg(f, 0x5c, 2), &o);
	if (r == 0 && (o.vector != 0x41 || o.dest != 4 || o.index != IRTE_BASE))
		return -1;
	return r;
}

/* The IRTE's source fields as written (IRTE_BASE: the only function). */
static unsigned svt(void) { return (unsigned)(M.irt[2 * IRTE_BASE + 1] >> (82 - 64)) & 3; }
static unsigned sq(void) { return (unsigned)(M.irt[2 * IRTE_BASE + 1] >> (80 - 64)) & 3; }
static unsigned sid(void) { return (unsigned)(M.irt[2 * IRTE_BASE + 1] >> (64 - 64)) & 0xffff; }

TEST(vmsi_alias_device_on_the_root_bus_exact_id)
{
	start();
	device(BDF(0, 3, 0), -1);
	program(BDF(0, 3, 0));
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sq(), 0);
	CHECK_EQ(sid(), BDF(0, 3, 0));
	CHECK_EQ(from(BDF(0, 3, 0), BDF(0, 3, 0)), 0);
	CHECK_EQ(from(BDF(0, 3, 0), BDF(0, 3, 1)), 0x26);   /* another function of the same device */
	CHECK_EQ(from(BDF(0, 3, 0), BDF(0, 0, 0)), 0x26);
}

TEST(vmsi_alias_behind_a_pcie_root_port_exact_id)
{
	start();
	bridge(BDF(0, 0x1c, 0), 1, 1, T_ROOT_PORT);
	device(BDF(1, 0, 0), T_ENDPOINT);
	program(BDF(1, 0, 0));
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sq(), 0);
	CHECK_EQ(sid(), BDF(1, 0, 0));
	CHECK_EQ(from(BDF(1, 0, 0), BDF(1, 0, 0)), 0);
	CHECK_EQ(from(BDF(1, 0, 0), BDF(1, 0, 1)), 0x26);
	CHECK_EQ(from(BDF(1, 0, 0), BDF(0, 0x1c, 0)), 0x26);  /* the port's own ID: not the device's */
}

/* A conventional device on the secondary bus (2) of a PCIe-to-PCI bridge:
 * its requests arrive as 02:00.0 (PCI) or with any device/function of bus
 * 2 (PCI-X): bus verification, start bus 2, end bus 2. */
TEST(vmsi_alias_behind_a_pcie_to_pci_bridge_bus_range)
{
	start();
	bridge(BDF(0, 0x1c, 0), 1, 2, T_ROOT_PORT);
	bridge(BDF(1, 0, 0), 2, 2, T_PCIE_TO_PCI);
	device(BDF(2, 5, 0), -1);
	program(BDF(2, 5, 0));
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 2u << 8 | 2u);
	CHECK_EQ(from(BDF(2, 5, 0), BDF(2, 0, 0)), 0);      /* the bridge's alias: before the fix 0x26 */
	CHECK_EQ(from(BDF(2, 5, 0), BDF(2, 5, 0)), 0);      /* PCI-X: the originator's ID */
	CHECK_EQ(from(BDF(2, 5, 0), BDF(1, 0, 0)), 0x26);   /* the bridge's own ID: another bus */
	CHECK_EQ(from(BDF(2, 5, 0), BDF(3, 0, 0)), 0x26);
}

/* Two conventional PCI-to-PCI bridges (buses 3 and 4) below the
 * PCIe-to-PCI bridge's secondary bus 2: the request is re-issued by each
 * bridge and finally by the PCIe-to-PCI bridge as 02:00.0; bus
 * verification from bus 2 to the device's bus 4. */
TEST(vmsi_alias_two_pci_bridges_below_a_pcie_to_pci_bridge)
{
	start();
	bridge(BDF(0, 0x1c, 0), 1, 4, T_ROOT_PORT);
	bridge(BDF(1, 0, 0), 2, 4, T_PCIE_TO_PCI);
	bridge(BDF(2, 1, 0), 3, 4, -1);
	bridge(BDF(3, 2, 0), 4, 4, -1);
	device(BDF(4, 3, 0), -1);
	program(BDF(4, 3, 0));
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 2u << 8 | 4u);
	CHECK_EQ(from(BDF(4, 3, 0), BDF(2, 0, 0)), 0);
	CHECK_EQ(from(BDF(4, 3, 0), BDF(3, 0x10, 0)), 0);   /* within 2-4 */
	CHECK_EQ(from(BDF(4, 3, 0), BDF(1, 0, 0)), 0x26);
	CHECK_EQ(from(BDF(4, 3, 0), BDF(5, 0, 0)), 0x26);
}

/* A conventional PCI-to-PCI bridge on the root bus, no PCIe anywhere: the
 * bridge's own ID, exactly. */
TEST(vmsi_alias_behind_a_conventional_bridge_the_bridges_id)
{
	start();
	bridge(BDF(0, 0x1e, 0), 1, 1, -1);
	device(BDF(1, 4, 0), -1);
	program(BDF(1, 4, 0));
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sq(), 0);
	CHECK_EQ(sid(), BDF(0, 0x1e, 0));
	CHECK_EQ(from(BDF(1, 4, 0), BDF(0, 0x1e, 0)), 0);
	CHECK_EQ(from(BDF(1, 4, 0), BDF(1, 4, 0)), 0x26);
}

/* The model function at bdf answers with vendor/device 'id' (vendor 15:0)
 * and subsystem 'sub' (PCI 3.0: offsets 00h and 2Ch). */
static void ids(uint16_t bdf, uint32_t id, uint32_t sub)
{
	for (unsigned i = 0; i < M.n; i++)
		if (M.f[i].bdf == bdf)
			for (unsigned k = 0; k < 4; k++) {
				M.f[i].cfg[0x00 + k] = (uint8_t)(id >> 8 * k);
				M.f[i].cfg[0x2c + k] = (uint8_t)(sub >> 8 * k);
			}
}

/* A device with ID 'id' and subsystem 'sub' at bdf, behind a root port
 * (port) or on the root bus, its MSI programmed. */
static void quirky(uint16_t bdf, bool port, uint32_t id, uint32_t sub)
{
	start();
	if (port)
		bridge(BDF(0, 0x1c, 0), (uint8_t)(bdf >> 8), (uint8_t)(bdf >> 8), T_ROOT_PORT);
	device(bdf, port ? T_ENDPOINT : -1);
	ids(bdf, id, sub);
	program(bdf);
}

/* Marvell 88SE9123 at function 0 behind a root port: its requests carry
 * function 1's ID; bus verification of its own bus lets both through.
 * (Before: SVT 1 with its own ID, and 'from(..., 01:00.1) == 0 (0x26 !=
 * 0x0)': its MSIs blocked.) */
TEST(vmsi_alias_quirk_function_1_bus_verified)
{
	quirky(BDF(1, 0, 0), true, 0x9123u << 16 | 0x1b4bu, 0);
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 1u << 8 | 1u);
	CHECK_EQ(from(BDF(1, 0, 0), BDF(1, 0, 1)), 0);      /* the alias */
	CHECK_EQ(from(BDF(1, 0, 0), BDF(1, 0, 0)), 0);
	CHECK_EQ(from(BDF(1, 0, 0), BDF(2, 0, 1)), 0x26);   /* another bus */
	CHECK_EQ(from(BDF(1, 0, 0), BDF(0, 0x1c, 0)), 0x26);
}

/* Ricoh e832 at function 3 on the root bus aliases function 0: bus 0
 * verified. The same device at function 0 has no alias: its own ID. */
TEST(vmsi_alias_quirk_function_0_only_for_other_functions)
{
	quirky(BDF(0, 5, 3), false, 0xe832u << 16 | 0x1180u, 0);
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 0u);
	CHECK_EQ(from(BDF(0, 5, 3), BDF(0, 5, 0)), 0);
	quirky(BDF(0, 5, 0), false, 0xe832u << 16 | 0x1180u, 0);
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sid(), BDF(0, 5, 0));
}

/* The Adaptec 3405 (9005:0285, subsystem 9005:02bb) aliases 01.0 of its
 * bus; the same device with another subsystem has no alias. */
TEST(vmsi_alias_quirk_fixed_devfn_by_subsystem)
{
	quirky(BDF(3, 0x0e, 0), true, 0x0285u << 16 | 0x9005u, 0x02bbu << 16 | 0x9005u);
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 3u << 8 | 3u);
	CHECK_EQ(from(BDF(3, 0x0e, 0), BDF(3, 1, 0)), 0);
	quirky(BDF(3, 0x0e, 0), true, 0x0285u << 16 | 0x9005u, 0x1234u << 16 | 0x9005u);
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sid(), BDF(3, 0x0e, 0));
}

/* An ASMedia 1080 PCIe-to-PCI bridge that shows no PCI Express capability,
 * below a root port: a conventional device behind it requests as (its
 * secondary bus, 00.0): bus verification. (Before: SVT 1 with the
 * bridge's own ID 02:00.0, 'from(..., 03:00.0) == 0 (0x26 != 0x0)'.) On
 * the root bus, with no PCIe port above it, the quirk does not apply:
 * the bridge's own ID. */
TEST(vmsi_alias_quirk_pcie_to_pci_bridge_without_the_capability)
{
	start();
	bridge(BDF(0, 0x1c, 0), 2, 3, T_ROOT_PORT);
	bridge(BDF(2, 0, 0), 3, 3, -1);
	ids(BDF(2, 0, 0), 0x1080u << 16 | 0x1b21u, 0);
	device(BDF(3, 4, 0), -1);
	program(BDF(3, 4, 0));
	CHECK_EQ(svt(), 2);
	CHECK_EQ(sid(), 3u << 8 | 3u);
	CHECK_EQ(from(BDF(3, 4, 0), BDF(3, 0, 0)), 0);
	CHECK_EQ(from(BDF(3, 4, 0), BDF(2, 0, 0)), 0x26);
	start();
	bridge(BDF(0, 0x1e, 0), 1, 1, -1);
	ids(BDF(0, 0x1e, 0), 0x1080u << 16 | 0x1b21u, 0);
	device(BDF(1, 4, 0), -1);
	program(BDF(1, 4, 0));
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sid(), BDF(0, 0x1e, 0));
}

/* A quirk device behind a conventional bridge: the bridge re-tags last,
 * its ID wins (Linux: the last alias, from another bus). */
TEST(vmsi_alias_quirk_below_a_conventional_bridge_the_bridges_id)
{
	start();
	bridge(BDF(0, 0x1e, 0), 1, 1, -1);
	device(BDF(1, 4, 0), -1);
	ids(BDF(1, 4, 0), 0x9123u << 16 | 0x1b4bu, 0);
	program(BDF(1, 4, 0));
	CHECK_EQ(svt(), 1);
	CHECK_EQ(sid(), BDF(0, 0x1e, 0));
}

/* The rule alone (pci/alias.h's pure function), hop by hop; the
 * expected fields from the IRTE's layout above: SVT 01b whole ID, 10b bus
 * range with the start bus in SID 15:8 and the end bus in 7:0. */
#define WANT_ID(sid)       ((uint32_t)(sid) | 1u << (82 - 64))
#define WANT_BUS(start, end) ((uint32_t)(start) << 8 | (end) | 2u << (82 - 64))

TEST(vmsi_alias_rule_hop_by_hop)
{
	const struct vmsi_hop root[] = { { BDF(0, 3, 0), 0, 0, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(root, 1), WANT_ID(BDF(0, 3, 0)));
	const struct vmsi_hop port[] = { { BDF(1, 0, 0), 0, 0, 0, 0 }, { BDF(0, 0x1c, 0), VMSI_LINK_PCIE, 1, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(port, 2), WANT_ID(BDF(1, 0, 0)));
	const struct vmsi_hop p2p[] = { { BDF(2, 5, 0), 0, 0, 0, 0 }, { BDF(1, 0, 0), VMSI_LINK_PCIE_TO_PCI, 2, 0, 0 },
					{ BDF(0, 0x1c, 0), VMSI_LINK_PCIE, 1, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(p2p, 3), WANT_BUS(2, 2));
	const struct vmsi_hop deep[] = { { BDF(4, 3, 0), 0, 0, 0, 0 }, { BDF(3, 2, 0), VMSI_LINK_PCI, 4, 0, 0 },
					 { BDF(2, 1, 0), VMSI_LINK_PCI, 3, 0, 0 }, { BDF(1, 0, 0), VMSI_LINK_PCIE_TO_PCI, 2, 0, 0 },
					 { BDF(0, 0x1c, 0), VMSI_LINK_PCIE, 1, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(deep, 5), WANT_BUS(2, 4));
	/* Without the PCIe-to-PCI bridge on top: the upper PCI bridge's ID. */
	CHECK_EQ(vmsi_alias_source(deep, 3), WANT_ID(BDF(2, 1, 0)));
	CHECK_EQ(vmsi_alias_source(deep, 2), WANT_ID(BDF(3, 2, 0)));
	/* A PCI/PCI-X to PCIe bridge (1000b) tags with its own ID; under a
	 * conventional bridge, that bridge's ID wins (the last re-tag). */
	const struct vmsi_hop rev[] = { { BDF(2, 0, 0), 0, 0, 0, 0 }, { BDF(1, 1, 0), VMSI_LINK_PCI_TO_PCIE, 2, 0, 0 },
					{ BDF(0, 0x1e, 0), VMSI_LINK_PCI, 1, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(rev, 2), WANT_ID(BDF(1, 1, 0)));
	CHECK_EQ(vmsi_alias_source(rev, 3), WANT_ID(BDF(0, 0x1e, 0)));
	/* A PCIe-to-PCI bridge below a PCIe switch (upstream and downstream
	 * ports pass the ID): still the bridge's secondary bus. */
	const struct vmsi_hop sw[] = { { BDF(5, 2, 0), 0, 0, 0, 0 }, { BDF(4, 0, 0), VMSI_LINK_PCIE_TO_PCI, 5, 0, 0 },
				       { BDF(3, 1, 0), VMSI_LINK_PCIE, 4, 0, 0 }, { BDF(2, 0, 0), VMSI_LINK_PCIE, 3, 0, 0 },
				       { BDF(0, 0x1c, 0), VMSI_LINK_PCIE, 2, 0, 0 } };
	CHECK_EQ(vmsi_alias_source(sw, 5), WANT_BUS(5, 5));
}

TEST(vmsi_alias_link_from_the_device_port_type)
{
	CHECK_EQ(vmsi_alias_link(-1), VMSI_LINK_PCI);
	CHECK_EQ(vmsi_alias_link(T_PCIE_TO_PCI), VMSI_LINK_PCIE_TO_PCI);
	CHECK_EQ(vmsi_alias_link(T_PCI_TO_PCIE), VMSI_LINK_PCI_TO_PCIE);
	CHECK_EQ(vmsi_alias_link(T_ROOT_PORT), VMSI_LINK_PCIE);
	CHECK_EQ(vmsi_alias_link(0x5), VMSI_LINK_PCIE);             /* switch upstream port */
	CHECK_EQ(vmsi_alias_link(0x6), VMSI_LINK_PCIE);             /* switch downstream port */
	CHECK_EQ(vmsi_alias_link(T_ENDPOINT), VMSI_LINK_PCIE);
	char b[32];
	vmsi_alias_str(WANT_BUS(2, 4), BDF(4, 3, 0), b, sizeof b);
	CHECK_STR(b, "sid=bus 02-04");
	vmsi_alias_str(WANT_ID(BDF(0, 0x1e, 0)), BDF(1, 4, 0), b, sizeof b);
	CHECK_STR(b, "sid=00:1e.0");
	vmsi_alias_str(WANT_ID(BDF(1, 4, 0)), BDF(1, 4, 0), b, sizeof b);
	CHECK_STR(b, "");
}
