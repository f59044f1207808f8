/* The dispatcher of the in-image test aids (testaid/): iommutest=1,
 * iommutest=ioapic, iommutest=sriov, iommutest=preon and bochstest=1. The
 * one place that includes testaid/; a build with TEST_AIDS=0 links
 * boot/aids_none.c instead, which refuses those options by name. */
#ifndef BOOT_AIDS_H
#define BOOT_AIDS_H
#include "../lib/types.h"
#include "../lib/options.h"
#include "../lib/acpi.h"
#include "../lib/memmap.h"
#include "../vmx/vcpu.h"

/* Whether the image holds the aids. */
extern const bool aids_built;
/* Before the units are read: iommutest=preon leaves them on as firmware
 * would (false with err: the aid failed). */
bool aids_before_iommu(const struct hv_options *o, struct acpi_info *acpi, char *err, size_t len);
/* After iommu_init: an iommutest= run ends the boot here (hv_exit), its
 * verdict the aid's; without one, returns. */
void aids_after_iommu(const struct hv_options *o, const struct acpi_info *acpi, const struct memmap *mem);
/* bochstest=1: its exit hooks, NULL: none. */
const struct vmx_exit_aid *aids_exit_hooks(const struct hv_options *o);
#endif
