/* A build without the in-image test aids (make TEST_AIDS=0, for a real
 * machine): an option that asks for one is refused by name, the boot
 * stopped before anything is enabled for it. */
#include "aids.h"
#include "../lib/power.h"
#include "../lib/printk.h"
#include "../lib/string.h"

const bool aids_built = false;

static const char *asked(const struct hv_options *o)
{
	return o->iommu_preon ? "iommutest=preon" : o->iommu_test ? "iommutest=1" : o->iommu_ioapic_test ? "iommutest=ioapic" :
	       o->iommu_sriov_test ? "iommutest=sriov" : o->bochs_test ? "bochstest=1" : NULL;
}

bool aids_before_iommu(const struct hv_options *o, struct acpi_info *acpi, char *err, size_t len)
{
	(void)acpi;
	const char *a = asked(o);
	if (!a)
		return true;
	snprintf(err, len, "%s: a test aid, not in this build (built with TEST_AIDS=0; make TEST_AIDS=1 has it)", a);
	return false;
}

void aids_after_iommu(const struct hv_options *o, const struct acpi_info *acpi, const struct memmap *mem)
{
	(void)o, (void)acpi, (void)mem;
}

const struct vmx_exit_aid *aids_exit_hooks(const struct hv_options *o)
{
	(void)o;
	return NULL;
}
