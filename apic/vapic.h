/* The guest's virtual x2APIC (virtual model): the 4 KiB virtual-APIC page
 * that APIC-register virtualization reads from and virtual-interrupt
 * delivery works in (SDM Vol. 3C, "APIC Virtualization and Virtual
 * Interrupts"), and the emulation of the register writes that exit. */
#ifndef APIC_VAPIC_H
#define APIC_VAPIC_H
#include "../lib/types.h"
#include "pi.h"

/* x2APIC MSR 0x800 + n is the register at page offset n << 4. */
#define X2APIC_MSR(off)   (0x800u + ((off) >> 4))
#define APIC_OFF(msr)     (((msr) - 0x800u) << 4)

#define APIC_ID       0x020
#define APIC_VERSION  0x030
#define APIC_TPR      0x080
#define APIC_PPR      0x0a0
#define APIC_EOI      0x0b0
#define APIC_LDR      0x0d0
#define APIC_SVR      0x0f0
#define APIC_ISR      0x100
#define APIC_TMR      0x180
#define APIC_IRR      0x200
#define APIC_ESR      0x280
#define APIC_LVT_CMCI 0x2f0
#define APIC_ICR      0x300
#define APIC_ICR_HI   0x310
#define APIC_LVT_TIMER 0x320
#define APIC_LVT_THERM 0x330
#define APIC_LVT_PMC  0x340
#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_LVT_ERROR 0x370
#define APIC_TMICT    0x380
#define APIC_TMCCT    0x390
#define APIC_TDCR     0x3e0
#define APIC_SELF_IPI 0x3f0

#define APIC_LVT_MASKED BIT(16)
#define APIC_SVR_ENABLED BIT(8)
#define APIC_VECTOR_MASK 0xffu
/* Vectors 0-15 are illegal in an interrupt message (SDM Vol. 3A, "Valid
 * Interrupt Vectors"). */
#define APIC_FIRST_LEGAL_VECTOR 16
/* ESR bits (SDM Vol. 3A, "Error Handling", Figure "Error Status Register"). */
#define APIC_ESR_SEND_ILLEGAL_VECTOR BIT(5)
#define APIC_ESR_RECV_ILLEGAL_VECTOR BIT(6)

/* x2APIC logical ID (LDR) of an x2APIC ID: cluster in 31:16, one bit of 15:0
 * (SDM Vol. 3A, "Logical Destination Mode in x2APIC Mode"). */
static inline uint32_t x2apic_ldr(uint32_t apic_id)
{
	return ((apic_id >> 4) << 16) | (1u << (apic_id & 0xf));
}

static inline uint32_t vapic_get(const uint8_t *page, uint32_t off)
{
	return *(const volatile uint32_t *)(page + off);
}
static inline void vapic_set(uint8_t *page, uint32_t off, uint32_t val)
{
	*(volatile uint32_t *)(page + off) = val;
}

/* The state after RESET or INIT (SDM Vol. 3A, "Local APIC State After
 * Power-Up or Reset"), in x2APIC mode: ID and LDR from the x2APIC ID, LVTs
 * masked, SVR 0xff. 'version' is the version register to show. */
void vapic_reset(uint8_t *page, uint32_t apic_id, uint32_t version);

/* Software posted-interrupt processing: moves the descriptor's PIR into the
 * page's IRR (clearing ON) and returns the highest vector moved, or -1. */
int vapic_take_posted(uint8_t *page, struct pi_desc *pid);

/* Highest vector set in the IRR, or -1. */
int vapic_highest_irr(const uint8_t *page);

/* An intercepted WRMSR to an x2APIC register other than ICR, TMICT, TDCR
 * and the LVT timer (those belong to ipi/ and timer/) and ESR (below). TPR
 * is stored as written; the caller recomputes PPR (swapic_update_ppr).
 * Returns 0, or -1 for #GP (read-only or reserved register, reserved bits). */
int vapic_write(uint8_t *page, uint32_t msr, uint64_t val);

/* Errors the local APIC detects (SDM Vol. 3A, "Error Handling"): they are
 * collected whatever LVT Error says, and the ESR shows them only after the
 * next write to it ("This write clears any previously logged errors and
 * updates the ESR with any errors detected since the last write to the
 * ESR"); the collection is '*pending'. vapic_error records 'esr_bits' and
 * returns the vector of the error interrupt LVT Error signals, or -1 when it
 * is masked (an illegal vector there is itself a receive-illegal-vector
 * error, with no interrupt). */
int vapic_error(const uint8_t *page, uint32_t *pending, uint32_t esr_bits);
/* The ESR write: in x2APIC mode only 0 (else -1, #GP; "x2APIC Differences
 * in Error Handling"); the collected errors become the ESR. */
int vapic_esr_write(uint8_t *page, uint32_t *pending, uint64_t val);
/* Is 'msr' an x2APIC register that exists (readable)? */
bool vapic_readable(uint32_t msr);
/* The physical LVT performance-counter entry that carries out the guest's
 * (issue 45: the guest owns its core's PMU, its counters pass through).
 * NMI delivery is taken as asked, masked or not (a PMI sets the physical
 * mask bit; the guest's handler unmasks by writing its LVTPC again, which
 * exits and comes here); the NMI it raises exits and is the guest's
 * virtual NMI (exit_exception_nmi). Any other delivery mode would need a
 * host vector of the guest's choosing: the physical entry stays masked
 * (NMI mode) and *refused is set, unless the guest's is masked too (off:
 * Linux writes 0x10000 at start). */
uint32_t vapic_lvtpc_physical(uint32_t guest_lvtpc, bool *refused);
/* The physical value for the guest's LVT CMCI or thermal entry, whose
 * interrupt comes back to the guest as a device vector does (re-posted at
 * the external-interrupt exit): fixed delivery (10:8 = 000b) of a vector
 * from 32 that is not the hypervisor's (host_vectors, a 256-bit set),
 * with the guest's mask (bit 16); anything else is refused (*refused,
 * unless masked) and the physical entry masked. */
uint32_t vapic_lvt_fixed_physical(uint32_t guest_lvt, const uint64_t host_vectors[4], bool *refused);
#endif
