/* pci/place.c: see there. */
#ifndef PCI_PLACE_H
#define PCI_PLACE_H
#include "model.h"

/* Where an MSI-X table lies (pci/place.c). Its place from the BAR as the function decodes it, judged by the
 * wall above and checks of its own (inside the BAR as sized at boot,
 * inside the parent bridge's windows, over no other table); only the
 * placed tables' pages trapped, each given back when no table covers it
 * any more. PCI 3.0, "Command Register" (bit 1 memory space), "Base
 * Address Registers" (sizing); PCI-to-PCI Bridge Architecture, memory
 * base/limit registers. */
/* The trap's wall: where no MSI-X table may lie. */
#define VMSI_MAX_CLAIMS 64
struct vmsi_claims {
	const struct memmap *mem;           /* every range of it, but a reserved one that held a table at boot */
	uint64_t window_ranges;             /* bit i: memory-map range i held a table at boot (an MMIO window) */
	bool boot;                          /* judging the boot's tables: reserved ranges become windows */
	uint64_t reach_end;                 /* the hypervisor reaches MMIO below this (0: nowhere) */
	uint64_t phys_end;                  /* 2^MAXPHYADDR (0: not known, reach_end alone) */
	uint32_t n;
	struct { uint64_t base, len; } r[VMSI_MAX_CLAIMS];   /* claimed: VT-d, IOAPIC, LAPIC, ECAM, HPET */
};
/* Adds a claimed range (false: no room). */
bool vmsi_claim(struct vmsi_claims *c, uint64_t base, uint64_t len);
/* The reach: a table anywhere below 2^phys_bits (CPUID 0x80000008) and
 * below where the hypervisor can map MMIO at its own address ('map_end',
 * vmx/msi_trap.c: lib/paging.h's PAGING_MMIO_REACH); pages above the
 * identity map are mapped on demand as the table is placed. */
void vmsi_claims_reach(struct vmsi_claims *c, unsigned phys_bits, uint64_t map_end);
/* May a table lie at [pa, pa + len)? VR_NONE, VM_TABLE_BEYOND_PHYS,
 * VM_TABLE_BEYOND_MAP, VM_TABLE_OVER_MEMORY or VM_TABLE_OVER_CLAIMED. */
unsigned vmsi_place_judge(struct vmsi_claims *c, uint64_t pa, uint64_t len);

/* Places f's table where its BAR puts it now (decode: memory decoding on,
 * as the function has it or is about to): new pages trapped first, then
 * those no table covers given back. VR_NONE, or why the place was refused
 * (the table is then not placed). */
unsigned vmsi_table_place(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f, bool decode);
/* A gone function's table, unplaced, placed where its BAR was last read
 * (its registers out of reach: its device may decode there once forwarded),
 * dark: out of every vCPU's view, nothing written there. */
void vmsi_table_place_dark(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f);
/* Whether the function decodes memory now (a VF: its PF's VF Enable and
 * VF MSE). */
bool vmsi_decoding(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f);
/* f's placed table still decoded where it was placed (a dark one: true). */
bool vmsi_table_decoded(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f);
/* The function whose table is placed and whose BAR holds pa (NULL: none). */
struct vmsi_fn *vmsi_placed_bar_of(struct vmsi *s, uint64_t pa);
/* Do the bridges above f forward memory to it (Memory Space Enable, each,
 * but s->held_bridge's)? */
bool vmsi_forwarded(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f);
/* Does memory reach f's placed table's BAR (forwarded, in every window on
 * the way)? */
bool vmsi_reaches(const struct vmsi *s, const struct vmsi_hw *hw, const struct vmsi_fn *f);
#endif
