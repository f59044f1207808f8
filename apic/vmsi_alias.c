/* A trapped function's requester ID and its IRTE source check (see
 * vmsi_alias.h). */
#include "vmsi_alias.h"
#include "vmsi.h"
#include "../lib/printk.h"

uint32_t vmsi_alias_source(const struct vmsi_hop *hop, uint32_t n)
{
	uint16_t dev = hop[0].bdf, alias = dev;
	uint8_t by_bus = (uint8_t)(dev >> 8);   /* the bus of whoever made the alias */
	for (uint32_t i = 1; i < n; i++) {
		switch (hop[i].link) {
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
	hop[n++] = (struct vmsi_hop){ bdf, VMSI_LINK_PCIE, 0 };
	/* Up the bridges the scan saw, as vmsi_scope_path: bus 0 is a root. */
	for (uint16_t cur = bdf; n < 256;) {
		uint16_t br = s->bridge_of[cur >> 8];
		if (!br || !(cur >> 8))
			break;
		uint16_t b = (uint16_t)(br - 1u);
		hop[n++] = (struct vmsi_hop){ b, (uint8_t)vmsi_alias_link(pcie_type(hw, b)), (uint8_t)(cur >> 8) };
		cur = b;
	}
	return vmsi_alias_source(hop, n);
}
