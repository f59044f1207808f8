/* The MCFG's ECAM windows by segment and bus (lib/acpi.h, issue 43 item 8):
 * PCI Firmware Specification, "MCFG Table Description": each entry a base
 * address (bus 0's), a segment and a start and end bus. */
#include "acpi.h"

int acpi_mcfg_entry(const struct acpi_info *a, uint16_t seg, uint8_t bus)
{
	for (uint32_t k = 0; a && k < a->nmcfg && k < ACPI_MAX_MCFG; k++) {
		const struct acpi_mcfg *m = &a->mcfg_entry[k];
		if (m->seg == seg && bus >= m->bus0 && bus <= m->bus1)
			return (int)k;
	}
	return -1;
}

uint64_t acpi_mcfg_base(const struct acpi_info *a, uint16_t seg, uint8_t bus)
{
	int k = acpi_mcfg_entry(a, seg, bus);
	return k < 0 ? 0 : a->mcfg_entry[k].base;
}

bool acpi_mcfg_bdf(const struct acpi_info *a, uint16_t seg, uint64_t pa, uint16_t *bdf)
{
	for (uint32_t k = 0; a && k < a->nmcfg && k < ACPI_MAX_MCFG; k++) {
		const struct acpi_mcfg *m = &a->mcfg_entry[k];
		if (m->seg != seg || pa < m->base + ((uint64_t)m->bus0 << 20) || pa >= m->base + (((uint64_t)m->bus1 + 1) << 20))
			continue;
		uint16_t b = (uint16_t)((pa - m->base) >> 12);
		if (acpi_mcfg_base(a, seg, (uint8_t)(b >> 8)) != m->base)
			continue;                    /* an earlier entry covers that bus: its window, not this one */
		*bdf = b;
		return true;
	}
	return false;
}
