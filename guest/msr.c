/* MSR interception. Everything in the bitmap's ranges passes through except
 * the MSRs listed in 'intercepted', each with its reason. In the partition
 * interrupt model the x2APIC MSRs (0x800-0x8ff) belong to the guest. */
#include "msr.h"
#include "../lib/msr.h"
#include "../lib/string.h"
#include "../vmx/vmx_defs.h"

#define FC_LOCKED BIT(0)

static const struct {
	uint32_t first, last;
	bool read, write;
	const char *why;
} intercepted[] = {
	{ MSR_IA32_FEATURE_CONTROL, MSR_IA32_FEATURE_CONTROL, true, true,
	  "VMX is the hypervisor's: reads show a locked register with VMX off, writes #GP" },
	{ MSR_IA32_VMX_BASIC, MSR_IA32_VMX_EXIT_CTLS2, true, true,
	  "VMX capability MSRs: CPUID hides VMX, so they #GP as on a CPU without it" },
};

void msr_bitmap_build(uint8_t *bitmap)
{
	memset(bitmap, 0, PAGE_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(intercepted); i++)
		for (uint32_t m = intercepted[i].first; m <= intercepted[i].last; m++) {
			/* read-low at 0, read-high at 1024, write-low at 2048, write-high at 3072 */
			uint32_t base = m >= 0xc0000000 ? 1024 : 0, bit = m & 0x1fff;
			if (intercepted[i].read)
				bitmap[base + bit / 8] |= 1 << (bit % 8);
			if (intercepted[i].write)
				bitmap[2048 + base + bit / 8] |= 1 << (bit % 8);
		}
}

bool msr_bitmap_intercepts(const uint8_t *bitmap, uint32_t msr, bool write)
{
	uint32_t base;
	if (msr <= 0x1fff)
		base = 0;
	else if (msr >= 0xc0000000 && msr <= 0xc0001fff)
		base = 1024;
	else
		return true;
	uint32_t bit = msr & 0x1fff;
	return bitmap[(write ? 2048 : 0) + base + bit / 8] & (1 << (bit % 8));
}

int guest_rdmsr(uint32_t msr, uint64_t *value)
{
	if (msr == MSR_IA32_FEATURE_CONTROL) {
		*value = FC_LOCKED;
		return 0;
	}
	return -1;   /* VMX capability MSRs, and anything outside the bitmap ranges */
}

int guest_wrmsr(uint32_t msr, uint64_t value)
{
	(void)msr;
	(void)value;
	return -1;
}
