/* The software virtual x2APIC (see swapic.h). */
#include "swapic.h"
#include "vapic.h"

/* Highest bit set in the 256-bit register at 'base' (IRR or ISR: eight
 * 32-bit words 16 bytes apart), or -1. */
static int highest(const uint8_t *page, uint32_t base)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t x = vapic_get(page, base + (uint32_t)w * 16);
		if (x)
			return w * 32 + 31 - __builtin_clz(x);
	}
	return -1;
}

static void bit(uint8_t *page, uint32_t base, uint8_t vec, bool on)
{
	uint32_t *word = (uint32_t *)(page + base + (vec / 32) * 16);
	if (on)
		__atomic_fetch_or(word, BIT(vec % 32), __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(word, ~(uint32_t)BIT(vec % 32), __ATOMIC_SEQ_CST);
}

uint32_t swapic_update_ppr(uint8_t *page)
{
	uint32_t tpr = vapic_get(page, APIC_TPR) & 0xff;
	int isrv = highest(page, APIC_ISR);
	uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xf0;
	uint32_t ppr = (tpr & 0xf0) >= isr_class ? tpr : isr_class;
	vapic_set(page, APIC_PPR, ppr);
	return ppr;
}

int swapic_deliverable(const uint8_t *page)
{
	int irrv = highest(page, APIC_IRR);
	if (irrv < 0)
		return -1;
	uint32_t ppr = vapic_get(page, APIC_PPR);
	return ((uint32_t)irrv & 0xf0) > (ppr & 0xf0) ? irrv : -1;
}

void swapic_accept(uint8_t *page, uint8_t vec)
{
	bit(page, APIC_IRR, vec, false);
	bit(page, APIC_ISR, vec, true);
	swapic_update_ppr(page);
}

int swapic_eoi(uint8_t *page)
{
	int isrv = highest(page, APIC_ISR);
	if (isrv >= 0)
		bit(page, APIC_ISR, (uint8_t)isrv, false);
	swapic_update_ppr(page);
	return isrv;
}

void swapic_request(uint8_t *page, uint8_t vec)
{
	bit(page, APIC_IRR, vec, true);
}

bool swapic_pv_eoi_arm(const uint8_t *page, volatile uint32_t *flag, bool level)
{
	if (level || highest(page, APIC_IRR) >= 0)
		return false;
	__atomic_fetch_or(flag, SWAPIC_PV_EOI_BIT, __ATOMIC_SEQ_CST);
	return true;
}

int swapic_pv_eoi_sync(uint8_t *page, volatile uint32_t *flag, bool *armed)
{
	if (!*armed)
		return -1;
	*armed = false;
	uint32_t old = __atomic_fetch_and(flag, ~SWAPIC_PV_EOI_BIT, __ATOMIC_SEQ_CST);
	if (old & SWAPIC_PV_EOI_BIT)
		return -1;          /* not taken: the guest will write its EOI */
	return swapic_eoi(page);
}
