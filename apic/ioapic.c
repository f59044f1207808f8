/* IOAPIC redirection entries (82093AA datasheet: IOREGSEL at +0, IOWIN at
 * +0x10; register 1 = version, bits 23:16 = highest entry; entry n at
 * 0x10 + 2n, bit 16 = mask). */
#include "ioapic.h"

#define IOREGSEL 0x00
#define IOWIN    0x10
#define IOAPIC_VER 0x01
#define IOAPIC_RTE(n) (0x10 + 2 * (n))
#define RTE_MASKED (1u << 16)

static uint32_t rd(paddr_t base, uint32_t reg)
{
	*(volatile uint32_t *)(uintptr_t)(base + IOREGSEL) = reg;
	return *(volatile uint32_t *)(uintptr_t)(base + IOWIN);
}

static void wr(paddr_t base, uint32_t reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(base + IOREGSEL) = reg;
	*(volatile uint32_t *)(uintptr_t)(base + IOWIN) = val;
}

uint32_t ioapic_mask_all(paddr_t base)
{
	uint32_t n = ((rd(base, IOAPIC_VER) >> 16) & 0xff) + 1;
	for (uint32_t i = 0; i < n; i++)
		wr(base, IOAPIC_RTE(i), rd(base, IOAPIC_RTE(i)) | RTE_MASKED);
	return n;
}

/* IOREGSEL is the guest's: read it first, put it back last, so that a guest
 * on this CPU finds its selection as it left it. */
uint64_t ioapic_rte_peek(paddr_t base, uint32_t pin)
{
	volatile uint32_t *sel = (volatile uint32_t *)(uintptr_t)(base + IOREGSEL);
	uint32_t saved = *sel;
	uint64_t rte = rd(base, IOAPIC_RTE(pin)) | (uint64_t)rd(base, IOAPIC_RTE(pin) + 1) << 32;
	*sel = saved;
	return rte;
}
