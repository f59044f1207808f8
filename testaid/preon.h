/* iommutest=preon, a test aid for QEMU's intel-iommu: before the
 * hypervisor's own DMA remapping, each unit is left as firmware with
 * pre-boot DMA protection would leave it (translation on through a root
 * table with no present entry, queued invalidation on, interrupt remapping
 * on through a table with no present entry), so that the hand-over of
 * iommu/vtd.c runs against a unit that is already on. Not on the
 * hypervisor's normal path: boot/main.c calls it only for the option. */
#ifndef IOMMU_PREON_H
#define IOMMU_PREON_H
#include "../lib/types.h"
#include "../lib/acpi.h"

/* Reads the DMAR of acpi and turns every unit it names on as above,
 * printing one "iommutest: preon:" line per unit. Returns 0, or -1 with err. */
int iommu_preon(const struct acpi_info *acpi, char *err, size_t errlen);
#endif
