/* The in-image test aids dispatched (aids.h): a build with the aids. */
#include "aids.h"
#include "../lib/power.h"
#include "../apic/lapic.h"
#include "../testaid/irtest.h"
#include "../testaid/edutest.h"
#include "../testaid/preon.h"
#include "../testaid/msi_edutest.h"
#include "../testaid/msi_sriovtest.h"
#include "../testaid/bochstest.h"

const bool aids_built = true;

bool aids_before_iommu(const struct hv_options *o, struct acpi_info *acpi, char *err, size_t len)
{
	return !(o->iommu_preon && iommu_preon(acpi, err, len));
}

void aids_after_iommu(const struct hv_options *o, const struct acpi_info *acpi, const struct memmap *mem)
{
	if (o->probe)
		return;
	if (o->iommu_test) {
		/* The trapped MSI first: compatibility format, before the
		 * interrupt-remapping checks turn remapping on. */
		bool msi_ok = msi_edutest(acpi, mem, lapic_requested, lapic_id());
		hv_exit(iommu_edu_test(mem, lapic_requested, lapic_id()) && msi_ok);
	}
	if (o->iommu_ioapic_test) {
		bool ok = ioapic_ir_test(acpi, mem, lapic_requested, lapic_id());
		hv_exit(msi_edutest_ir(acpi, lapic_requested, lapic_id()) && ok);
	}
	if (o->iommu_sriov_test)
		hv_exit(msi_sriovtest(acpi, mem, lapic_requested, lapic_id()));
}

const struct vmx_exit_aid *aids_exit_hooks(const struct hv_options *o)
{
	return o->bochs_test ? &bochs_test_aid : NULL;
}
