/* Posted-interrupt descriptors and the PID-pointer table. */
#include "pi.h"
#include "../lib/string.h"

void pi_desc_init(struct pi_desc *d, uint8_t nv, uint32_t apic_id)
{
	memset(d, 0, sizeof *d);
	d->nv = nv;
	d->ndst = apic_id;
}

/* As the CPU does for a virtualized IPI: ON is set only together with a
 * notification, so with SN set the vector waits in PIR and ON stays clear
 * (whoever clears SN checks PIR). */
bool pi_post(struct pi_desc *d, uint8_t vector)
{
	__atomic_fetch_or(&d->pir[vector / 64], BIT(vector % 64), __ATOMIC_SEQ_CST);
	uint16_t old = __atomic_load_n(&d->control, __ATOMIC_SEQ_CST);
	do {
		if (old & (PI_ON | PI_SN))
			return false;
	} while (!__atomic_compare_exchange_n(&d->control, &old, old | PI_ON, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	return true;
}

void pi_take(struct pi_desc *d, uint64_t out[4])
{
	__atomic_fetch_and(&d->control, (uint16_t)~PI_ON, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 4; i++)
		out[i] = __atomic_exchange_n(&d->pir[i], 0, __ATOMIC_SEQ_CST);
}

void pid_table_set(uint64_t *table, uint32_t apic_id, paddr_t desc_pa)
{
	table[apic_id] = (desc_pa & ~0x3full) | PID_ENTRY_VALID;
}

struct pi_desc *pid_table_lookup(const uint64_t *table, uint32_t last, uint32_t apic_id)
{
	if (apic_id > last || !(table[apic_id] & PID_ENTRY_VALID))
		return NULL;
	return (struct pi_desc *)(uintptr_t)(table[apic_id] & ~0x3full);
}

struct pi_desc *pid_test_spare;

void pid_table_add_test_entries(uint64_t *table, uint32_t max, struct pi_desc *spare, uint8_t nv)
{
	pi_desc_init(spare, nv, 0);
	spare->control = PI_SN;
	paddr_t pa = (paddr_t)(uintptr_t)spare;
	table[max + 1] = 0;
	table[max + 2] = (pa & ~0x3full) | PID_ENTRY_VALID | BIT(1);
	table[max + 3] = (pa & ~0x3full) | PID_ENTRY_VALID;
	pid_test_spare = spare;
}

uint64_t pid_table_bytes(uint32_t max_apic_id)
{
	return ALIGN_UP(((uint64_t)max_apic_id + 1) * 8, PAGE_SIZE);
}
