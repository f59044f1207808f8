/* The hypervisor's canary page (canary.h). */
#include "canary.h"
#include "printk.h"

#define DWORDS 1024u
static uint32_t page[DWORDS] __attribute__((aligned(4096)));
_Static_assert(sizeof page == PAGE_SIZE, "one page");
static bool filled;

/* Dword i's value: no run of zeros or ones, unlike anything a stray
 * MSI-X entry write (a mask bit, an 0xFEExxxxx address, a vector) or the
 * sink's all-ones would leave. */
static uint32_t pattern(uint32_t i)
{
	return 0x9e3779b9u * (i + 1) ^ 0x43414e59u;
}

paddr_t canary_pa(void)
{
	if (!filled) {
		for (uint32_t i = 0; i < DWORDS; i++)
			page[i] = pattern(i);
		filled = true;
	}
	return (paddr_t)(uintptr_t)page;
}

bool canary_check(void)
{
	if (!filled)
		return true;
	uint32_t differ = 0, first = 0, was = 0;
	for (uint32_t i = 0; i < DWORDS; i++) {
		uint32_t v = ((volatile uint32_t *)page)[i];
		if (v != pattern(i) && !differ++) {
			first = i;
			was = v;
		}
	}
	if (!differ) {
		pr_info("hv: canary intact (page 0x%llx, %u bytes as written at boot)\n", (unsigned long long)(uintptr_t)page,
			4 * DWORDS);
		return true;
	}
	pr_err("hv: canary CHANGED (page 0x%llx): %u of %u dwords differ, the first at +0x%x: 0x%08x, written 0x%08x\n",
	       (unsigned long long)(uintptr_t)page, differ, DWORDS, first * 4, was, pattern(first));
	return false;
}
