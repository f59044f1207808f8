/* A trapped function's requester ID and its IRTE source check (see
 * alias.h). */
#include "alias.h"
#include "../lib/printk.h"

/* Linux's DMA-alias quirks (drivers/pci/quirks.c), by vendor and device
 * ID: what a device's requests carry besides its own ID, or a bridge that
 * re-tags as a PCIe-to-PCI bridge without saying so. */
enum quirk {
	Q_FN0 = 1,                      /* function 0 of its device (for its other functions) */
	Q_FN1,                          /* function 1 of its device (for its other functions) */
	Q_SUBSYS,                       /* a fixed devfn, for the subsystem given */
	Q_SEVERAL,                      /* several devfns of its bus (NTBs' proxy IDs, MIC, VCA) */
	Q_PCIE_BRIDGE,                  /* a PCIe-to-PCI bridge without a PCI Express capability */
};
static const struct { uint16_t vendor, device; uint8_t kind; uint32_t subsys; } quirks[] = {
	{ 0x1180, 0xe832, Q_FN0, 0 }, { 0x1180, 0xe476, Q_FN0, 0 },                 /* Ricoh */
	{ 0x1b4b, 0x9120, Q_FN1, 0 }, { 0x1b4b, 0x9123, Q_FN1, 0 }, { 0x1b4b, 0x9125, Q_FN1, 0 },   /* Marvell */
	{ 0x1b4b, 0x9128, Q_FN1, 0 }, { 0x1b4b, 0x9130, Q_FN1, 0 }, { 0x1b4b, 0x9172, Q_FN1, 0 },
	{ 0x1b4b, 0x917a, Q_FN1, 0 }, { 0x1b4b, 0x9182, Q_FN1, 0 }, { 0x1b4b, 0x9183, Q_FN1, 0 },
	{ 0x1b4b, 0x91a0, Q_FN1, 0 }, { 0x1b4b, 0x9215, Q_FN1, 0 }, { 0x1b4b, 0x9220, Q_FN1, 0 },
	{ 0x1b4b, 0x9230, Q_FN1, 0 }, { 0x1b4b, 0x9235, Q_FN1, 0 },
	{ 0x1103, 0x0642, Q_FN1, 0 }, { 0x1103, 0x0645, Q_FN1, 0 },                 /* HighPoint (TTI) */
	{ 0x197b, 0x2392, Q_FN1, 0 },                                               /* JMicron JMB388 */
	{ 0x1c28, 0x0122, Q_FN1, 0 },                                               /* Lite-On (Marvell 88SS9183) */
	{ 0x9005, 0x0285, Q_SUBSYS, 0x02bb9005 }, { 0x9005, 0x0285, Q_SUBSYS, 0x02bc9005 },   /* Adaptec 3405, 3805: 01.0 */
	{ 0x8086, 0x2260, Q_SEVERAL, 0 }, { 0x8086, 0x2264, Q_SEVERAL, 0 },         /* Intel MIC x200 */
	{ 0x8086, 0x2954, Q_SEVERAL, 0 }, { 0x8086, 0x2955, Q_SEVERAL, 0 }, { 0x8086, 0x2956, Q_SEVERAL, 0 },   /* PEX VCA */
	{ 0x8086, 0x2958, Q_SEVERAL, 0 }, { 0x8086, 0x2959, Q_SEVERAL, 0 }, { 0x8086, 0x295a, Q_SEVERAL, 0 },
	{ 0x10b5, 0x87b0, Q_SEVERAL, 0 }, { 0x10b5, 0x87b1, Q_SEVERAL, 0 },         /* PLX NTB */
	{ 0x1b21, 0x1080, Q_PCIE_BRIDGE, 0 }, { 0x10e3, 0x8113, Q_PCIE_BRIDGE, 0 }, /* ASMedia, Tundra */
	{ 0x1283, 0x8892, Q_PCIE_BRIDGE, 0 }, { 0x1283, 0x8893, Q_PCIE_BRIDGE, 0 }, /* ITE */
	{ 0x8086, 0x244e, Q_PCIE_BRIDGE, 0 },                                       /* Intel 82801 */
};

static unsigned quirk_of(const struct vmsi_hop *h)
{
	for (size_t i = 0; h->id && i < sizeof quirks / sizeof quirks[0]; i++)
		if (quirks[i].vendor == (uint16_t)h->id && quirks[i].device == h->id >> 16 &&
		    (quirks[i].kind != Q_SUBSYS || quirks[i].subsys == h->subsys))
			return quirks[i].kind;
	return 0;
}

/* Whether function h's requests carry other IDs of its bus too. */
static bool aliases_on_its_bus(const struct vmsi_hop *h)
{
	switch (quirk_of(h)) {
	case Q_FN0:
		return (h->bdf & 7) != 0;
	case Q_FN1:
		return (h->bdf & 7) != 1;
	case Q_SUBSYS:
	case Q_SEVERAL:
		return true;
	default:
		return false;
	}
}

/* Hop i's link: a quirk bridge re-tags as a PCIe-to-PCI bridge where a
 * PCIe port (not itself a PCIe-to-PCI bridge) is above it. */
static unsigned link_of(const struct vmsi_hop *hop, uint32_t i, uint32_t n)
{
	if (hop[i].link == VMSI_LINK_PCI && quirk_of(&hop[i]) == Q_PCIE_BRIDGE && i + 1 < n &&
	    (hop[i + 1].link == VMSI_LINK_PCIE || hop[i + 1].link == VMSI_LINK_PCI_TO_PCIE))
		return VMSI_LINK_PCIE_TO_PCI;
	return hop[i].link;
}

uint32_t vmsi_alias_source(const struct vmsi_hop *hop, uint32_t n)
{
	uint16_t dev = hop[0].bdf, alias = dev;
	uint8_t by_bus = (uint8_t)(dev >> 8);   /* the bus of whoever made the alias */
	for (uint32_t i = 1; i < n; i++) {
		switch (link_of(hop, i, n)) {
		case VMSI_LINK_PCIE_TO_PCI:
			alias = (uint16_t)(hop[i].secondary << 8);
			by_bus = (uint8_t)(hop[i].bdf >> 8);
			break;
		case VMSI_LINK_PCI_TO_PCIE:
		case VMSI_LINK_PCI:
			alias = hop[i].bdf;
			by_bus = (uint8_t)(hop[i].bdf >> 8);
			break;
		default:
			break;                   /* a PCIe port passes the ID unchanged */
		}
	}
	/* An alias on another bus than its maker: a PCIe-to-PCI bridge's
	 * secondary-bus ID, behind which PCI-X keeps the originators' IDs. */
	if ((uint8_t)(alias >> 8) != by_bus)
		return VMSI_SRC_BUS(alias >> 8, dev >> 8);
	/* No bridge re-tags: a device that requests as other functions of its
	 * bus too is checked by that bus. */
	if (alias == dev && aliases_on_its_bus(&hop[0]))
		return VMSI_SRC_BUS(dev >> 8, dev >> 8);
	return VMSI_SRC_ID(alias);
}

enum vmsi_link vmsi_alias_link(int pcie_type)
{
	if (pcie_type < 0)
		return VMSI_LINK_PCI;
	if (pcie_type == PCIE_TYPE_PCIE_TO_PCI)
		return VMSI_LINK_PCIE_TO_PCI;
	if (pcie_type == PCIE_TYPE_PCI_TO_PCIE)
		return VMSI_LINK_PCI_TO_PCIE;
	return VMSI_LINK_PCIE;
}

void vmsi_alias_str(uint32_t src, uint16_t bdf, char *buf, size_t len)
{
	uint16_t sid = VMSI_SRC_SID(src);
	if (VMSI_SRC_SVT(src) == 2)
		snprintf(buf, len, "sid=bus %02x-%02x", sid >> 8, sid & 0xff);
	else if (sid != bdf)
		snprintf(buf, len, "sid=%02x:%02x.%u", sid >> 8, (sid >> 3) & 31u, sid & 7u);
	else if (len)
		buf[0] = 0;
}

/* The Device/Port Type of bdf's PCI Express capability, -1 without one
 * (PCI 3.0, "Capabilities List"). */
static int pcie_type(const struct vmsi_hw *hw, uint16_t bdf)
{
	if (!(hw->cfg_read(hw->ctx, bdf, 0x06, 2) & BIT(4)))
		return -1;
	uint32_t p = hw->cfg_read(hw->ctx, bdf, 0x34, 1) & 0xfc;
	for (unsigned k = 0; p >= 0x40 && k < 48; k++) {   /* 48: a loop cannot be longer */
		uint32_t h = hw->cfg_read(hw->ctx, bdf, (uint16_t)p, 4);
		if ((h & 0xff) == PCI_CAP_ID_EXP)
			return (int)(h >> 20 & 0xf);    /* capabilities register 7:4 at +2 */
		p = (h >> 8) & 0xfc;
	}
	return -1;
}

uint32_t vmsi_alias_of(const struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf)
{
	struct vmsi_hop hop[256];
	uint32_t n = 0;
	hop[n++] = (struct vmsi_hop){ bdf, VMSI_LINK_PCIE, 0, hw->cfg_read(hw->ctx, bdf, 0x00, 4),
				      hw->cfg_read(hw->ctx, bdf, 0x2c, 4) };
	/* Up the bridges the scan saw, as vmsi_scope_path: bus 0 is a root. */
	for (uint16_t cur = bdf; n < 256;) {
		uint16_t br = s->bridge_of[cur >> 8];
		if (!br || !(cur >> 8))
			break;
		uint16_t b = (uint16_t)(br - 1u);
		hop[n++] = (struct vmsi_hop){ b, (uint8_t)vmsi_alias_link(pcie_type(hw, b)), (uint8_t)(cur >> 8),
					      hw->cfg_read(hw->ctx, b, 0x00, 4), 0 };
		cur = b;
	}
	return vmsi_alias_source(hop, n);
}
