/* The HPET as the guest sees it (issue 35 item 8): FSB delivery hidden.
 * An HPET timer whose configuration has Tn_FSB_EN_CNF set sends its
 * interrupt as a memory write of the guest's Tn_FSB_INT_ROUTE value to
 * the guest's address: any compatibility-format message (NMI, INIT, SMI,
 * a hypervisor vector, any CPU) where remapping is not owned, and nothing
 * where it is (no IRTE for the DMAR's HPET scope). So every access to the
 * HPET's registers is carried out on the real HPET except: a timer's
 * configuration reads with Tn_FSB_INT_DEL_CAP (and Tn_FSB_EN_CNF) clear,
 * a write to it has Tn_FSB_EN_CNF forced clear, and a write to a timer's
 * FSB route register is dropped. The legacy replacement route and the
 * IOAPIC routes (Tn_INT_ROUTE_CNF) are untouched. Pure logic: the caller
 * serialises and reaches the real HPET through vhpet_hw.
 *
 * Register layout: IA-PC HPET (High Precision Event Timers) Specification
 * 1.0a, "Register Set" and "Timer N Configuration and Capability Register":
 * General Capabilities and ID at 0x000 (12:8 number of timers - 1, 63:32
 * the counter's period in fs), General Configuration 0x010, Main Counter
 * 0x0F0, timer N's configuration and capability at 0x100 + 0x20 N (bit 14
 * Tn_FSB_EN_CNF, bit 15 Tn_FSB_INT_DEL_CAP, 63:32 Tn_INT_ROUTE_CAP), its
 * comparator at 0x108 + 0x20 N, its FSB interrupt route at 0x110 + 0x20 N
 * (63:32 address, 31:0 value). Registers are read and written 32 or 64 bits
 * at a time, naturally aligned. */
#ifndef APIC_VHPET_H
#define APIC_VHPET_H
#include "../lib/types.h"

#define VHPET_REGS          0x400u       /* the register block: 1 KiB */
#define VHPET_CAP_ID        0x000u
#define VHPET_NUM_TIMERS(c) ((unsigned)(((c) >> 8) & 0x1f) + 1)
#define VHPET_GEN_CFG       0x010u
#define VHPET_COUNTER       0x0f0u
#define VHPET_TIMER0        0x100u
#define VHPET_TIMER_STRIDE  0x20u
#define VHPET_TN_CFG        0x00u        /* within a timer's 0x20 bytes */
#define VHPET_TN_CMP        0x08u
#define VHPET_TN_FSB        0x10u
#define VHPET_TN_FSB_EN     BIT(14)      /* Tn_FSB_EN_CNF */
#define VHPET_TN_FSB_CAP    BIT(15)      /* Tn_FSB_INT_DEL_CAP */
#define VHPET_MAX_TIMERS    32u

struct vhpet_hw {
	/* size 4 or 8, off aligned to it, within the register block */
	uint64_t (*read)(void *ctx, uint32_t off, unsigned size);
	void (*write)(void *ctx, uint32_t off, unsigned size, uint64_t val);
	void *ctx;
};

struct vhpet {
	uint64_t cap_id;                /* as read at init */
	uint32_t ntimers;
	uint32_t fsb_capable;           /* timers with Tn_FSB_INT_DEL_CAP (bit N: timer N) */
	uint32_t fsb_was_on;            /* timers found with Tn_FSB_EN_CNF set at init (cleared) */
	uint64_t reads, writes;
	uint64_t cap_hidden;            /* configuration reads that had bit 15 (or 14) cleared */
	uint64_t fsb_en_dropped;        /* configuration writes that asked for FSB delivery */
	uint64_t route_dropped;         /* writes to an FSB route register */
};

/* Where the guest's HPET may decode (issue 43 item 3): on Intel PCHs the
 * P2SB's HPTC (config 60h, bits 1:0, "Address Select") puts the block at
 * FED0_0000h + 1000h * n, n = 0..3, and the guest can rewrite it; an ACPI
 * base at one of those gives all four (blk[0..3]), any other base itself
 * alone. Returns the count. */
#define VHPET_HPTC_BASE     0xfed00000u
#define VHPET_HPTC_BLOCKS   4u
unsigned vhpet_blocks(uint64_t acpi_base, uint64_t blk[VHPET_HPTC_BLOCKS]);
/* Reads the capabilities and every timer's configuration; clears
 * Tn_FSB_EN_CNF where firmware left it set (before the guest runs). */
void vhpet_init(struct vhpet *h, const struct vhpet_hw *hw);
/* Whether the block's offset off may be accessed with size bytes (4 or 8,
 * naturally aligned, within VHPET_REGS); the rest the caller refuses. */
bool vhpet_access_ok(uint32_t off, unsigned size);
/* The guest's read of size bytes at off (vhpet_access_ok). */
uint64_t vhpet_read(struct vhpet *h, const struct vhpet_hw *hw, uint32_t off, unsigned size);
/* The guest's write of size bytes val at off (vhpet_access_ok). */
void vhpet_write(struct vhpet *h, const struct vhpet_hw *hw, uint32_t off, unsigned size, uint64_t val);
#endif
