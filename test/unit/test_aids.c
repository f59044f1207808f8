/* Host tests for boot/aids_none.c: a build without the in-image test aids
 * (make TEST_AIDS=0) refuses each option that asks for one, by name, before
 * anything is enabled for it, and lets every other boot through. */
#include "test.h"
#include "../../boot/aids.h"
#include "../../lib/string.h"

static void refused(struct hv_options *o, const char *name)
{
	char err[160] = "";
	CHECK(!aids_before_iommu(o, NULL, err, sizeof err));
	CHECK_CONTAINS(err, name);
	CHECK_CONTAINS(err, "a test aid, not in this build");
	CHECK(aids_exit_hooks(o) == NULL);
}

TEST(aids_none_refuses_each_aid_by_name)
{
	CHECK(!aids_built);
	struct hv_options o;
	memset(&o, 0, sizeof o);
	o.iommu_test = true;
	refused(&o, "iommutest=1:");
	memset(&o, 0, sizeof o);
	o.iommu_ioapic_test = true;
	refused(&o, "iommutest=ioapic:");
	memset(&o, 0, sizeof o);
	o.iommu_sriov_test = true;
	refused(&o, "iommutest=sriov:");
	memset(&o, 0, sizeof o);
	o.iommu_preon = true;
	refused(&o, "iommutest=preon:");
	memset(&o, 0, sizeof o);
	o.bochs_test = true;
	refused(&o, "bochstest=1:");
}

TEST(aids_none_lets_a_boot_without_aids_through)
{
	struct hv_options o;
	memset(&o, 0, sizeof o);
	char err[160] = "untouched";
	CHECK(aids_before_iommu(&o, NULL, err, sizeof err));
	CHECK_STR(err, "untouched");
	aids_after_iommu(&o, NULL, NULL);    /* returns: no aid asked for */
	CHECK(aids_exit_hooks(&o) == NULL);
}
