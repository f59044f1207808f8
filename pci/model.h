/* The PCI model's state (pci/, docs/layout.md): the functions the trap
 * follows, the bridges above them, the hardware vtable through which alone
 * the model reaches the physical configuration space, ports and memory
 * (struct vmsi_hw, given by vmx/msi_trap.c), and the configuration-space
 * registers it reads. Each access the guest makes is filtered (pci/cfg.c),
 * each function's MSI and MSI-X capability emulated against a virtual
 * state, the MSI-X table entries emulated, and the device's real
 * address/data written by the hypervisor alone, routed as the virtual
 * IOAPIC routes an entry (apic/vioapic.c: one router). Pure logic: the
 * caller serialises (one lock).
 *
 * Sources: PCI Local Bus Specification 3.0, "Configuration Mechanism #1"
 * (CONFIG_ADDRESS at 0xCF8: bit 31 enable, 23:16 bus, 15:11 device, 10:8
 * function, 7:2 register; 30:24 and 1:0 read 0; only a dword access to
 * 0xCF8 is CONFIG_ADDRESS), "Capabilities List" (status bit 4, pointer at
 * 0x34), "MSI Capability Structure" and "MSI-X Capability and Table
 * Structure"; SDM Vol. 3A, "Message Signalled Interrupts" (address 31:20
 * 0xFEE, 19:12 destination, 3 RH, 2 DM; data 7:0 vector, 10:8 delivery
 * mode, 14 level, 15 trigger mode). */
#ifndef PCI_MODEL_H
#define PCI_MODEL_H
#include "../lib/types.h"
#include "../apic/vioapic.h"
#include "../lib/memmap.h"



/* Sizes come from the scan (vmsi_count): the functions with an MSI or
 * MSI-X capability, their MSI-X entries and table pages as found, room for
 * the virtual functions their SR-IOV capabilities can enable (TotalVFs,
 * each counted as its physical function) and for hot-added functions. */
#define VMSI_ROOM_FNS     32             /* hot-added functions */
#define VMSI_ROOM_ENTRIES 2048           /* their MSI-X entries (one function's most) */
#define VMSI_ROOM_PAGES   64             /* table pages beyond the boot's: BARs moved, tables hot-added */
#define VMSI_ROOM_IRTES   (VMSI_ROOM_ENTRIES + 32u * VMSI_ROOM_FNS)
#define PCI_CFG_ADDR     0xcf8
#define PCI_CFG_DATA     0xcfc
/* PCI Express Base Specification, "Configuration Request Retry Status":
 * with CRS Software Visibility on, a read of the Vendor ID of a function
 * still initialising completes with 0001h (no vendor has that ID). */
#define VMSI_VENDOR_CRS  0x0001
#define PCI_CAP_ID_MSI   0x05
#define PCI_CAP_ID_MSIX  0x11

/* The refusals: the router's (enum vioapic_refusal) and one of its own. */
enum {
	VM_BAD_ADDR = VR_COUNT,          /* address not 0xFEExxxxx (or above 4 GiB) */
	VM_NO_IRTE,                      /* owned remapping: no IRTE left for this function */
	VM_NO_TABLE,                     /* MSI-X enabled, its table not emulated (unassigned BAR, memory
	                                    decoding off, or a place refused below): the device's MSI-X left off */
	/* The table's place refused (the trap's wall, docs/isolation.md): the
	 * hypervisor never reads or writes there for the guest. */
	VM_TABLE_OUTSIDE_BAR,            /* the table does not fit in its BAR as sized at boot */
	VM_TABLE_OUTSIDE_WINDOW,         /* the BAR is outside its parent bridge's memory windows */
	VM_TABLE_OVER_MEMORY,            /* over a memory-map range (RAM, ACPI, reserved, the hypervisor's) */
	VM_TABLE_OVER_CLAIMED,           /* over a range the hypervisor claims (VT-d, IOAPIC, LAPIC, ECAM, HPET) */
	VM_TABLE_OVER_TABLE,             /* over another function's table pages */
	VM_TABLE_BEYOND_MAP,             /* beyond the hypervisor's reach (2^47: its page tables map there at
	                                    the physical address, 4-level paging) */
	VM_TABLE_NO_ROOM,                /* no trap page or EPT table left (VMSI_MAX_PAGES, the EPT budget) */
	VM_TABLE_BEYOND_PHYS,            /* beyond the CPU's physical-address width (MAXPHYADDR) */
	VM_PARKED,                       /* not a refusal: address 0, no message (Linux's teardown writes
	                                    an all-zero message while enabled); the device sends nothing,
	                                    nothing counted in refused_by */
	VM_COUNT
};

struct vmsi_fn;
/* The physical side. cfg_*: one access of 1, 2 or 4 bytes at (bdf, off);
 * io_*: a port access as the guest made it; mem_*: 32 bits of MMIO. */
struct vmsi_hw {
	uint32_t (*cfg_read)(void *ctx, uint16_t bdf, uint16_t off, unsigned size);
	void (*cfg_write)(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val);
	uint32_t (*io_read)(void *ctx, uint16_t port, unsigned size);
	void (*io_write)(void *ctx, uint16_t port, unsigned size, uint32_t val);
	uint32_t (*mem_read)(void *ctx, uint64_t pa);
	void (*mem_write)(void *ctx, uint64_t pa, uint32_t val);
	/* An MSI-X table now at [pa, pa + len): its pages must leave the
	 * guest's view, all or none; false: no room (may be NULL: done). */
	bool (*table_at)(void *ctx, uint64_t pa, uint32_t len);
	/* Whether a table may lie at [pa, pa + len): VR_NONE, or the refusal
	 * (VM_TABLE_OVER_MEMORY, _OVER_CLAIMED, _BEYOND_MAP; may be NULL: any). */
	unsigned (*place)(void *ctx, uint64_t pa, uint64_t len);
	void *ctx;
	/* Owned remapping: IRTE 'index' written and its IEC entry invalidated
	 * (NULL without remapping). */
	void (*irte)(void *ctx, uint32_t index, const struct vioapic_irte *e);
	/* The page at pg holds no table any more: back in the guest's view
	 * (may be NULL). */
	void (*table_gone)(void *ctx, uint64_t pg);
	/* bytes of zeroed memory that stays (the hypervisor's pages, never the
	 * guest's), NULL: none; vmsi_scan sizes its arrays with it. */
	void *(*alloc)(void *ctx, size_t bytes);
	/* cfg_* reach the extended configuration space (ECAM: offsets up to
	 * 0xFFF, where SR-IOV's capability lies); mechanism #1 reaches 0xFF. */
	bool ext_cfg;
	/* A function the scan did not see answered the guest's first access
	 * to it (hot-added, or a VF after VF Enable): f its trap, NULL when
	 * it has neither MSI nor MSI-X (may be NULL). */
	void (*fn_seen)(void *ctx, uint16_t bdf, const struct vmsi_fn *f);
	/* A function the trap follows (a trapped one or a bridge) answers at
	 * new_bdf now, no longer at old_bdf (the guest renumbered a bus): its
	 * trapped configuration page moves (may be NULL). */
	void (*fn_moved)(void *ctx, uint16_t old_bdf, uint16_t new_bdf);
};

struct vmsi_entry {                      /* one MSI-X table entry as the guest wrote it */
	uint32_t addr_lo, addr_hi, data, ctrl;
};

#define VMSI_NO_IRTE  0xffffffffu
#define VMSI_NO_PARENT 0xffffu
#define VMSI_MSI_IRTES 32                /* MSI's most vectors (multiple message capable 101b) */

struct vmsi_fn {
	uint16_t bdf;
	/* Owned remapping: its IRTEs from here, MSI's 32 first, then one per
	 * MSI-X entry; VMSI_NO_IRTE: none. */
	uint32_t irte;
	uint8_t msi, msix;                  /* capability offsets, 0: none */
	/* MSI: the guest's registers; ctl keeps the read-only bits as read. */
	uint16_t msi_ctl;
	uint32_t msi_addr, msi_addr_hi, msi_data, msi_mask;
	/* MSI-X: the guest's message control; the table's place. */
	uint16_t msix_ctl;
	uint32_t msix_table;                /* the capability's table offset/BIR dword */
	uint16_t nent;                      /* table size */
	struct vmsi_entry *ent;             /* nent entries, from the pool; NULL: none left */
	uint64_t table_pa;                  /* 0: not placed (BAR unassigned, decoding off, place refused) */
	uint64_t bar_size;                  /* the table's BAR, sized at boot; 0: unknown */
	uint16_t parent;                    /* the bridge above (bus > 0), VMSI_NO_PARENT: none seen */
	/* SR-IOV (PCIe Base Specification, "Single Root I/O Virtualization"):
	 * a PF's capability offset and its VF BARs' sizes (sized at boot); a
	 * VF's PF (its index in fn[] + 1) and number (1..NumVFs): a VF's BARs
	 * read 0, its table lies in the PF's VF BAR, VF n's slice. */
	uint16_t sriov;
	uint16_t pf, vf;
	uint64_t vf_bar_size[6];
	/* Its IRTEs' source check (pci/alias.h: VMSI_SRC_*), from the
	 * bridges above it: its own ID, or the ID or buses a bridge gives it. */
	uint32_t src;
	uint16_t rebar;                     /* Resizable BAR extended capability's offset (MSI-X only), 0: none */
	bool gone;                          /* its bus not forwarded now (bridges renumbered): vmsi_find skips it */
	/* A VF whose VF Enable went 0 -> 1 again: held no more (its geometry
	 * may have changed: NumVFs, ARI, System Page Size, a VF Resizable
	 * BAR), vmsi_find skips it; found afresh at first access, it takes this
	 * slot, its IRTEs and entries again (one slot per PF and VF number). */
	bool retired;
	bool moving;                        /* renamed by a renumbering not yet routed again (vmsi_bus_write) */
	/* Placed while the hypervisor holds decoding off above it (VF MSE, a
	 * bridge's Memory Space Enable): its entries are written once decoding
	 * is back (vmsi_release), held: 1 + the place's refusal, and where the
	 * table was (written while held off they would reach nothing). */
	uint8_t held;                       /* VMSI_HELD_ENTRIES: a dark one's entries alone */
	uint64_t held_from;
	/* Gone (its bus not forwarded: its registers out of reach) when a
	 * bridge above stopped forwarding its table's BAR: its pages stay out
	 * of view, the hypervisor writes nothing there until a bridge write
	 * or a renumbering reaches it again. */
	bool dark;
	uint64_t last_pa;                   /* the table's place as its BAR last read, decoding or not (0: unknown) */
	bool blind;                         /* placed there, dark, by vmsi_table_place_dark: whether it decodes is not
	                                       known (its registers out of reach): dark until it is reached again */
	uint32_t id;                        /* Vendor and Device ID when taken (0: a VF, whose read FFFFh) */
	/* Report. */
	uint32_t writes, routes, refusals, parks;
	uint8_t last_refusal;
	uint64_t vaddr, paddr;              /* the last route: the guest's and the device's */
	uint32_t vdata, pdata;
	struct vioapic_reach reach;         /* and whom it reached, how (its first vector) */
};

/* What a scan finds (vmsi_count), before anything is taken. */
struct vmsi_need {
	uint32_t fns, entries, pages;       /* functions with MSI or MSI-X, their MSI-X entries, table pages */
	uint32_t irtes;                     /* owned remapping: 32 per MSI, one per MSI-X entry */
	uint32_t vfs, vf_entries, vf_irtes, vf_pages; /* the VFs SR-IOV can enable (TotalVFs; each as its PF) */
};

/* A bridge the scan saw (type 1 header): followed when the guest rewrites
 * its bus numbers. */
#define VMSI_MAX_BRIDGES 256
struct vmsi_bridge {
	uint16_t bdf, parent;               /* parent: the bridge above, VMSI_NO_PARENT: on a root bus */
	uint8_t sec, sub;                   /* secondary and subordinate bus numbers as last written */
	bool gone;                          /* its bus not forwarded now */
};

struct vmsi {
	uint16_t seg;                       /* the PCI segment (MCFG) */
	uint32_t cf8;                       /* the guest's CONFIG_ADDRESS (segment 0) */
	struct vmsi_need need;              /* what the scan counted */
	bool need_counted;                  /* need holds hw's count already (msi_trap_count): not walked again */
	uint32_t nfn, fn_room;
	uint32_t not_ready_writes;          /* writes to a function not answering yet (absent, CRS): dropped */
	uint32_t swapped;                   /* functions retired: their IDs changed or read all ones (hot-swap) */
	uint32_t untrapped;                 /* functions with MSI or MSI-X past fn_room: not trapped, said */
	struct vmsi_fn *fn;                 /* fn_room of them, from hw->alloc (or the caller's) */
	uint32_t pool_used, pool_room;
	struct vmsi_entry *pool;
	uint32_t npages, page_room;
	uint64_t *page;                     /* trapped pages: those of the placed tables, no other */
	uint16_t bridge_of[256];            /* the bridge whose secondary bus this is (+1; 0: none seen) */
	uint32_t nbridge;
	struct vmsi_bridge bridge[VMSI_MAX_BRIDGES];
	uint32_t moves, lost;               /* functions moved to another bus; left where no bridge forwards */
	/* The bridge whose Memory Space Enable the hypervisor holds off (+1;
	 * 0: none): taken as forwarding while the tables below are placed. */
	uint16_t held_bridge;
	uint32_t resizes;                   /* a table's BAR resized (Resizable BAR) */
	uint32_t refused_by[VM_COUNT];
	/* Owned remapping (d->remap): the IRTEs the functions take, set before
	 * vmsi_scan; count 0: none. */
	uint32_t irte_base, irte_count, irte_used;
	uint64_t cfg_emulated, cfg_passed, table_accesses;
	uint64_t stray;                     /* accesses to a trapped page outside every placed table's BAR: dropped */
	/* The functions that answered (bit bdf): the scan's, then each found at
	 * the guest's first access to it (hot-added, VFs). 8 KiB, hw->alloc. */
	uint8_t *seen;
	uint32_t hot_added, vfs_found, vfs_gone;
};
/* PCIe Base Specification, "SR-IOV Extended Capability": control at +08h
 * (VF Enable bit 0, VF MSE bit 3), NumVFs +10h, First VF Offset +14h, VF
 * Stride +16h, VF BAR0-5 from +24h. */
#define SRIOV_CTRL     0x08
#define SRIOV_VFE      BIT(0)
#define SRIOV_MSE      BIT(3)
#define SRIOV_NUM_VFS  0x10
#define SRIOV_OFFSET   0x14
#define SRIOV_STRIDE   0x16
#define SRIOV_VF_BAR0  0x24
/* MSI capability (PCI 3.0, "MSI Capability Structure"): message control
 * at +2; address at +4; 64-bit: upper address +8, data +0xC; else data
 * +8; with per-vector masking the mask and pending dwords follow data's. */
#define MSI_EN        BIT(0)
#define MSI_MMC(c)    (((c) >> 1) & 7)    /* multiple message capable, read-only */
#define MSI_MME(c)    (((c) >> 4) & 7)    /* multiple message enable */
#define MSI_64        BIT(7)              /* 64-bit address capable, read-only */
#define MSI_PVM       BIT(8)              /* per-vector masking capable, read-only */
#define MSI_CTL_RW    (MSI_EN | 7u << 4)
/* MSI-X capability ("MSI-X Capability and Table Structure"): message
 * control 10:0 table size - 1 (read-only), 14 function mask, 15 enable;
 * +4 table offset/BIR, +8 PBA offset/BIR (read-only). Entries of 16
 * bytes: address, upper address, data, vector control (bit 0 mask). */
#define MSIX_FMASK    BIT(14)
#define MSIX_EN       BIT(15)
#define MSIX_CTL_RW   (MSIX_FMASK | MSIX_EN)
#define MSIX_ENT_MASK BIT(0)
#define CFG_STATUS    0x06
#define CFG_CAP_LIST  BIT(4)
#define CFG_CAP_PTR   0x34
#define CFG_HDR_TYPE  0x0e
#define CFG_SEC_BUS   0x19                /* a bridge's secondary bus number */
#define CFG_BAR0      0x10
#define CFG_COMMAND   0x04
#define CMD_MEM       BIT(1)              /* memory space decoding */

/* A bridge's bus numbers and memory windows (PCI-to-PCI Bridge Architecture). */
#define CFG_PRI_BUS   0x18                /* primary, secondary (0x19), subordinate (0x1A) bus numbers */
#define CFG_SUB_BUS   0x1a
#define CFG_WINDOWS     0x20
#define CFG_WINDOWS_END 0x30
/* Does a write of size bytes at off touch [reg, reg + len)? */
static inline bool vmsi_touches(uint16_t off, unsigned size, unsigned reg, unsigned len)
{
	return off + size > reg && off < reg + len;
}
#endif
