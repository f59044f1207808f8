/* The requester ID a trapped function's interrupt requests carry, and the
 * source check its IRTEs get from it (issue 35 item 5).
 *
 * A request is tagged with a requester ID by the device, and bridges on
 * the way re-tag it (PCI Express to PCI/PCI-X Bridge Specification 1.0,
 * sec. 2.3 "Requester ID"; VT-d, "Identifying Origination of DMA
 * Requests" and "... of Interrupt Requests"): a PCIe-to-PCI/PCI-X bridge
 * (PCI Express capability, Device/Port Type 0111b) forwards a conventional
 * PCI request as (its secondary bus, device 0, function 0), a PCI-X one
 * with the originator's ID, so any device/function of the buses below it; a
 * conventional PCI-to-PCI bridge (no PCI Express capability) and a
 * PCI/PCI-X to PCIe bridge (1000b) with their own ID; PCIe root and switch
 * ports pass the ID unchanged. The ID the unit sees is the last re-tag on
 * the way up (Linux walks the same way: pci_for_each_dma_alias, the last
 * alias taken by the VT-d driver's set_msi_sid).
 *
 * The check (VT-d, "Interrupt Remapping Table Entry (IRTE)", fields SVT,
 * SQ, SID): an alias that a PCIe-to-PCI bridge made, i.e. on another bus
 * than the bridge that made it, can only be checked by bus: SVT 10b,
 * SID 15:8 the start bus (the alias's), 7:0 the end bus (the device's);
 * otherwise the whole ID, SVT 01b, SQ 00b, SID the alias (the device's
 * own ID without bridges that re-tag).
 *
 * Some devices issue requests as another device/function of their own bus
 * (Linux's DMA-alias quirks, drivers/pci/quirks.c: Ricoh card readers as
 * function 0, many Marvell SATA and HighPoint controllers as function 1,
 * an Adaptec RAID as 01.0, Intel MIC x200 and PEX VCA and PLX NTBs as
 * several), and some PCIe-to-PCI bridges show no PCI Express capability
 * (ASMedia 1080, Tundra 8113, ITE 8892/8893, Intel 82801 244e). The table
 * of vmsi_alias.c knows them by vendor and device ID (and subsystem where
 * Linux asks it): such a bridge below a PCIe port that is not itself a
 * PCIe-to-PCI bridge re-tags as one; such a device with no bridge
 * re-tagging above it is checked by its own bus (SVT 10b, start = end),
 * as Linux's set_msi_sid does when every alias is on one bus. DMA needs
 * nothing more: the context entries cover every devfn of every bus (one
 * domain). The functions declared here are pure. */
#ifndef PCI_ALIAS_H
#define PCI_ALIAS_H
#include "model.h"

/* An IRTE's source fields as bits 19:0 of its upper quadword: SID 15:0,
 * SQ 17:16, SVT 19:18 (IRTE bits 79:64, 81:80, 83:82). */
#define VMSI_SRC_ID(sid)          VIOAPIC_SRC_ID(sid)                              /* SVT 01b, SQ 00b */
#define VMSI_SRC_BUS(start, end)  ((uint32_t)(uint8_t)(start) << 8 | (uint8_t)(end) | 2u << 18)   /* SVT 10b */
#define VMSI_SRC_SVT(src)         ((src) >> 18 & 3)
#define VMSI_SRC_SID(src)         ((uint16_t)(src))

/* How a hop re-tags what passes it upstream. */
enum vmsi_link {
	VMSI_LINK_PCIE,                 /* PCIe port (or any other PCIe type): passes the ID */
	VMSI_LINK_PCIE_TO_PCI,          /* PCIe-to-PCI/PCI-X bridge: (secondary bus, 00.0) */
	VMSI_LINK_PCI_TO_PCIE,          /* PCI/PCI-X to PCIe bridge: its own ID */
	VMSI_LINK_PCI,                  /* conventional PCI-to-PCI bridge: its own ID */
};

struct vmsi_hop {
	uint16_t bdf;
	uint8_t link;                   /* enum vmsi_link (unused for hop 0, the function) */
	uint8_t secondary;              /* a bridge's secondary bus */
	uint32_t id;                    /* vendor ID 15:0, device ID 31:16 (0: no quirk looked up) */
	uint32_t subsys;                /* subsystem vendor 15:0, subsystem ID 31:16 (hop 0) */
};

/* hop[0]: the function; hop[1..n-1]: the bridges above it, nearest first,
 * up to the root bus. The IRTE source fields (VMSI_SRC_*). */
uint32_t vmsi_alias_source(const struct vmsi_hop *hop, uint32_t n);

/* PCI Express Base Specification, "PCI Express Capability Structure": ID
 * 10h, "PCI Express Capabilities Register" (+2) Device/Port Type 7:4. */
#define PCI_CAP_ID_EXP        0x10
#define PCIE_TYPE_PCIE_TO_PCI 0x7
#define PCIE_TYPE_PCI_TO_PCIE 0x8
/* A bridge's link from its PCI Express capability: its Device/Port Type,
 * or -1 without one. */
enum vmsi_link vmsi_alias_link(int pcie_type);

/* "sid=bus SS-EE" or "sid=BB:DD.F" for a check that is not function
 * bdf's own ID; "" for its own ID. */
void vmsi_alias_str(uint32_t src, uint16_t bdf, char *buf, size_t len);
/* Function bdf's source check (VMSI_SRC_*) from the bridges the scan saw
 * above it and their PCI Express capabilities . */
uint32_t vmsi_alias_of(const struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf);
#endif
