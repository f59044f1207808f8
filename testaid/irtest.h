/* iommutest=ioapic (test aid, QEMU q35 + intel-iommu,intremap=on,eim=on;
 * TCG, no VMX, no guest): the hypervisor's owned interrupt remapping
 * end to end through the virtual IOAPIC. */
#ifndef BOOT_IRTEST_H
#define BOOT_IRTEST_H
#include "../lib/types.h"
#include "../lib/acpi.h"
#include "../lib/memmap.h"

/* Turns DMA and interrupt remapping on (owned, as intremap=on), puts a
 * virtual IOAPIC over the first IOAPIC and programs the RTC's pin (8)
 * through vioapic_write() as the guest's trapped writes would: to this
 * CPU (the vector must reach its IRR), as ExtINT (refused: nothing may
 * arrive), and, where a CPU has an APIC ID above 255, to that CPU through
 * MSI_EXT_DEST_ID's 15-bit destination (nothing may reach this CPU; QEMU's
 * trace shows the remapped destination). Whether every check passed. */
bool ioapic_ir_test(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector),
		    uint32_t apic_id);
#endif
