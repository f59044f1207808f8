/* The x2APIC's MSRs as the SDM lists them, for the test models only:
 * written out here, never taken from apic/ (SDM Vol. 3A, "x2APIC Register
 * Address Space", Table "Local APIC Register Address Map Supported by
 * x2APIC": the MSR, its MMIO offset and "MSR R/W Semantics"). Addresses in
 * 800H-BFFH the table does not list are reserved: RDMSR and WRMSR of them
 * #GP, as do a RDMSR of a write-only one and a WRMSR of a read-only one. */
#ifndef TEST_UNIT_SDM_X2APIC_H
#define TEST_UNIT_SDM_X2APIC_H
#include <stdbool.h>
#include <stdint.h>

static const struct sdm_x2apic_reg {
	uint32_t first, last;
	bool read, write;
	const char *name;
} sdm_x2apic_regs[] = {
	{ 0x802, 0x802, true, false, "local APIC ID" },
	{ 0x803, 0x803, true, false, "local APIC version" },
	{ 0x808, 0x808, true, true, "TPR" },
	{ 0x80a, 0x80a, true, false, "PPR" },
	{ 0x80b, 0x80b, false, true, "EOI (write-only)" },
	{ 0x80d, 0x80d, true, false, "LDR" },
	{ 0x80f, 0x80f, true, true, "SVR" },
	{ 0x810, 0x817, true, false, "ISR" },
	{ 0x818, 0x81f, true, false, "TMR" },
	{ 0x820, 0x827, true, false, "IRR" },
	{ 0x828, 0x828, true, true, "ESR" },
	{ 0x82f, 0x82f, true, true, "LVT CMCI" },
	{ 0x830, 0x830, true, true, "ICR" },
	{ 0x832, 0x832, true, true, "LVT timer" },
	{ 0x833, 0x833, true, true, "LVT thermal sensor" },
	{ 0x834, 0x834, true, true, "LVT performance monitoring" },
	{ 0x835, 0x835, true, true, "LVT LINT0" },
	{ 0x836, 0x836, true, true, "LVT LINT1" },
	{ 0x837, 0x837, true, true, "LVT error" },
	{ 0x838, 0x838, true, true, "initial count" },
	{ 0x839, 0x839, true, false, "current count" },
	{ 0x83e, 0x83e, true, true, "divide configuration" },
	{ 0x83f, 0x83f, false, true, "SELF IPI (write-only)" },
};

static inline bool sdm_x2apic_readable(uint32_t msr)
{
	for (unsigned i = 0; i < sizeof sdm_x2apic_regs / sizeof sdm_x2apic_regs[0]; i++)
		if (msr >= sdm_x2apic_regs[i].first && msr <= sdm_x2apic_regs[i].last)
			return sdm_x2apic_regs[i].read;
	return false;
}
#endif
