/* The HPET with FSB delivery hidden (vhpet.h). */
#include "vhpet.h"

/* Which timer's register off is, and where in its 0x20 bytes; false for
 * the general registers and the reserved space past the last timer. */
static bool timer_reg(const struct vhpet *h, uint32_t off, uint32_t *n, uint32_t *sub)
{
	if (off < VHPET_TIMER0)
		return false;
	*n = (off - VHPET_TIMER0) / VHPET_TIMER_STRIDE;
	*sub = (off - VHPET_TIMER0) % VHPET_TIMER_STRIDE;
	return *n < h->ntimers;
}

void vhpet_init(struct vhpet *h, const struct vhpet_hw *hw)
{
	*h = (struct vhpet){ 0 };
	h->cap_id = hw->read(hw->ctx, VHPET_CAP_ID, 8);
	h->ntimers = VHPET_NUM_TIMERS(h->cap_id);
	for (uint32_t n = 0; n < h->ntimers; n++) {
		uint32_t off = VHPET_TIMER0 + n * VHPET_TIMER_STRIDE + VHPET_TN_CFG;
		uint32_t c = (uint32_t)hw->read(hw->ctx, off, 4);
		if (c & VHPET_TN_FSB_CAP)
			h->fsb_capable |= 1u << n;
		if (c & VHPET_TN_FSB_EN) {
			/* Firmware's FSB route is not the guest's: back to the
			 * timer's IOAPIC route before the guest runs. */
			h->fsb_was_on |= 1u << n;
			hw->write(hw->ctx, off, 4, c & ~(uint32_t)VHPET_TN_FSB_EN);
		}
	}
}

bool vhpet_access_ok(uint32_t off, unsigned size)
{
	return (size == 4 || size == 8) && !(off & (size - 1)) && off + size <= VHPET_REGS;
}

unsigned vhpet_blocks(uint64_t acpi_base, uint64_t blk[VHPET_HPTC_BLOCKS])
{
	if ((acpi_base & ~0x3000ull) != VHPET_HPTC_BASE) {
		blk[0] = acpi_base;
		return 1;
	}
	for (unsigned k = 0; k < VHPET_HPTC_BLOCKS; k++)
		blk[k] = VHPET_HPTC_BASE + 0x1000ull * k;
	return VHPET_HPTC_BLOCKS;
}

uint64_t vhpet_read(struct vhpet *h, const struct vhpet_hw *hw, uint32_t off, unsigned size)
{
	uint32_t n, sub;
	uint64_t v = hw->read(hw->ctx, off, size);
	uint64_t ones = size == 8 ? ~0ull : 0xffffffffull;
	h->reads++;
	if (v != ones &&                 /* nothing decodes there (HPTC put the HPET elsewhere): nothing to hide */
	    timer_reg(h, off, &n, &sub) && sub == VHPET_TN_CFG && (v & (VHPET_TN_FSB_CAP | VHPET_TN_FSB_EN))) {
		v &= ~(VHPET_TN_FSB_CAP | VHPET_TN_FSB_EN);
		h->cap_hidden++;
	}
	return v;
}

void vhpet_write(struct vhpet *h, const struct vhpet_hw *hw, uint32_t off, unsigned size, uint64_t val)
{
	uint32_t n, sub;
	h->writes++;
	if (timer_reg(h, off, &n, &sub)) {
		if (sub == VHPET_TN_FSB || sub == VHPET_TN_FSB + 4) {
			h->route_dropped++;      /* the address/data of a message never sent */
			return;
		}
		if (sub == VHPET_TN_CFG && (val & VHPET_TN_FSB_EN)) {
			h->fsb_en_dropped++;     /* the timer keeps its IOAPIC (or legacy) route */
			val &= ~VHPET_TN_FSB_EN;
		}
	}
	hw->write(hw->ctx, off, size, val);
}
