/* PCI functions as pci/ sees them through struct vmsi_hw, written
 * from the PCI Local Bus Specification 3.0 alone (no constant from the
 * project's headers):
 *  - configuration space, 256 bytes, each byte with its writable bits; a
 *    function that is not there reads all ones ("Configuration Mechanism
 *    #1"); status bit 4 says a capabilities list starts at 0x34;
 *  - memory BARs ("Base Address Registers"): bit 0 = 0 memory, 2:1 type
 *    (00b 32-bit, 10b 64-bit, the next BAR the upper dword), bit 3
 *    prefetchable, writable from the size up (a 16 KiB BAR: 31:14); the
 *    function decodes its memory at what the BAR holds now;
 *  - the MSI capability ("MSI Capability Structure"): ID 05h; message
 *    control bit 0 enable and 6:4 multiple message enable writable, 3:1
 *    multiple message capable, 7 64-bit address capable, 8 per-vector
 *    masking capable read-only; address 1:0 read 0; data 15:0; the mask
 *    bits of the vectors capable writable, pending bits read-only;
 *  - the MSI-X capability ("MSI-X Capability and Table Structure"): ID
 *    11h; message control 15 enable, 14 function mask writable, 10:0 table
 *    size - 1 read-only; table offset/BIR and PBA offset/BIR dwords (BIR in
 *    2:0, offset 8-byte aligned); table entries of 16 bytes (address,
 *    upper address, data, vector control with bit 0 the mask, set at
 *    reset, 31:1 reserved, reading 0); the PBA read-only;
 *  - PCI-to-PCI bridges (PCI-to-PCI Bridge Architecture 1.2, "Type 1
 *    Configuration Space Header"): header type 01h at 0Eh, primary,
 *    secondary and subordinate bus numbers at 18h, 19h, 1Ah;
 *  - the PCI Express capability (PCI Express Base Specification, "PCI
 *    Express Capability Structure"): ID 10h, the PCI Express Capabilities
 *    register at +2 with the Device/Port Type in 7:4;
 *  - bridges (PCI-to-PCI Bridge Architecture Specification): a type 1
 *    header with writable Primary, Secondary and Subordinate Bus Number
 *    registers (0x18-0x1A) and a memory window (0x20); a function below a
 *    bridge answers at the bridge's secondary bus, and only while every
 *    bridge above it forwards that bus (secondary <= bus <= subordinate;
 *    a secondary of 0 or not above the bridge's own bus forwards none);
 *    it decodes memory only while every bridge above it forwards the
 *    address (Memory Space Enable set, the address in its memory or
 *    prefetchable window);
 *  - extended configuration space to 0xFFF (PCI Express Base
 *    Specification, reached through ECAM) with the Resizable BAR
 *    capability ("Resizable BAR Extended Capability", ID 0015h): the
 *    capability register (+4) lists the sizes (bit n + 4: 2^(n + 20)
 *    bytes), the control register (+8) has the BAR index in 2:0, the
 *    number of resizable BARs in 7:5 and the size n in 13:8, writable; a
 *    write sets the BAR's size: its writable bits from the size up, the
 *    address bits below cleared. A BAR larger than the function's memory
 *    decodes that memory repeated.
 * Everything the hypervisor does to the functions is logged. */
#ifndef TEST_UNIT_PCI_FN_MODEL_H
#define TEST_UNIT_PCI_FN_MODEL_H
#include <stdint.h>
#include <stdbool.h>
#include "../../pci/vmsi.h"

#define PFM_FNS     8
#define PFM_MEM     0x4000          /* each function's one memory BAR: 16 KiB */
#define PFM_LOG     4096

struct pfm_fn {
	uint16_t bdf;                   /* below a bridge: device and function alone, the bus is the bridge's */
	uint8_t cfg[4096], wmask[4096];
	unsigned bar;                   /* the BAR (0-5) that decodes mem[] */
	uint64_t bar_size;              /* PFM_MEM unless resized */
	unsigned up;                    /* the bridge above: index + 1 in pfm.f, 0: on a root bus */
	uint16_t rebar;                 /* the Resizable BAR capability's offset, 0: none */
	uint8_t mem[PFM_MEM] __attribute__((aligned(16)));
	uint32_t mem_ro_from, mem_ro_to;   /* [from, to) of mem[] read-only (the PBA) */
	unsigned msix_nent;
	uint32_t msix_table_off;        /* in mem[] */
};

struct pfm_write {
	uint64_t pa;
	uint32_t val;
};

struct pfm {
	struct pfm_fn f[PFM_FNS];
	unsigned n;
	uint64_t reach;                 /* mem_ok: below this */
	/* The log. */
	struct pfm_write mem_w[PFM_LOG];
	unsigned n_mem_w, n_mem_r, n_cfg_w;
	unsigned n_mem_lost;            /* memory writes no function decodes (its bridges forward none there) */
	unsigned n_table_at;
	uint64_t table_at_pa;
	uint32_t table_at_len;
	uint64_t irt[2 * 1024];         /* IRTEs the hypervisor wrote (owned remapping) */
	unsigned n_irte;                /* IRTE writes (each with its IEC entry invalidated) */
	uint32_t irte_first, irte_last; /* the indexes of the first and last since the log was cleared */
	unsigned n_moved;               /* fn_moved calls, the last one's BDFs */
	uint16_t moved_from, moved_to;
};

/* The model at 'm' with no function; hw filled to reach it. */
void pfm_init(struct pfm *m, struct vmsi_hw *hw);
/* A function at bdf with a 16 KiB memory BAR 'bar' at 'base' (64-bit:
 * bars bar and bar + 1). */
struct pfm_fn *pfm_add(struct pfm *m, uint16_t bdf, unsigned bar, uint64_t base, bool bar64);
/* A bridge at bdf (no BAR) whose secondary bus is sec, subordinate sub;
 * the functions added at bus sec answer there whatever it holds later (its
 * routing is pfm_bridge's). */
struct pfm_fn *pfm_bridge_fixed(struct pfm *m, uint16_t bdf, uint8_t sec, uint8_t sub);
/* Capabilities, linked in the order added. PCI Express: Device/Port Type
 * 'type' (0000b endpoint, 0100b root port, 0111b PCI Express to PCI/PCI-X
 * bridge, 1000b PCI/PCI-X to PCI Express bridge, ...). */
void pfm_pcie(struct pfm_fn *f, uint8_t off, unsigned type);
void pfm_msi(struct pfm_fn *f, uint8_t off, unsigned mmc, bool addr64, bool pvm);
/* MSI-X: nent entries at table_off of the function's BAR, the PBA at
 * pba_off (same BAR, 8 bytes of pending bits, read-only, 0xa5 in the
 * first byte); the entries as firmware may leave them: unmasked, aimed at
 * 0xFEE00000 with vector 0x30 + i. */
void pfm_msix(struct pfm_fn *f, uint8_t off, unsigned nent, uint32_t table_off, uint32_t pba_off);
/* A bridge at bdf (below up, NULL: on a root bus) with secondary and
 * subordinate bus numbers and a memory window [lo, hi] (1 MiB grains). */
struct pfm_fn *pfm_bridge(struct pfm *m, uint16_t bdf, struct pfm_fn *up, uint8_t sec, uint8_t sub, uint32_t lo, uint32_t hi);
/* f below bridge br (f's bdf: device and function). */
void pfm_below(struct pfm *m, struct pfm_fn *f, struct pfm_fn *br);
/* Where f answers now: its BDF, or -1 where no bridge forwards to it. */
int pfm_bdf_now(const struct pfm *m, const struct pfm_fn *f);
/* Resizable BAR at off (0x100: the first extended capability) for f's
 * BAR: sizes as in the capability register, the size n now. */
void pfm_rebar(struct pfm_fn *f, uint16_t off, uint32_t sizes, unsigned n);
/* The function's BAR as decoded now (0: not assigned). */
uint64_t pfm_bar_base(const struct pfm_fn *f);
/* Configuration and memory as the device holds them (no log). */
uint32_t pfm_cfg(const struct pfm_fn *f, unsigned off, unsigned size);
uint32_t pfm_mem(const struct pfm *m, uint64_t pa);
void pfm_clear_log(struct pfm *m);
/* Memory writes to [pa, pa + len) since the log was cleared. */
unsigned pfm_writes_in(const struct pfm *m, uint64_t pa, uint64_t len);
#endif
