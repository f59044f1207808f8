/* Host tests for boot/aids_none.c: a build without the in-image test aids
 * (make TEST_AIDS=0) refuses each option that asks for one, by name, before
 * anything is enabled for it, and lets every other boot through. */
#include <stddef.h>
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
	static const struct { size_t field; const char *name; } aids[] = {
		{ offsetof(struct hv_options, iommu_test), "iommutest=1:" },
		{ offsetof(struct hv_options, iommu_ioapic_test), "iommutest=ioapic:" },
		{ offsetof(struct hv_options, iommu_sriov_test), "iommutest=sriov:" },
		{ offsetof(struct hv_options, iommu_preon), "iommutest=preon:" },
		{ offsetof(struct hv_options, bochs_test), "bochstest=1:" },
	};
	CHECK(!aids_built);
	for (size_t i = 0; i < sizeof aids / sizeof aids[0]; i++) {
		struct hv_options o;
		memset(&o, 0, sizeof o);
		*(bool *)((char *)&o + aids[i].field) = true;
		refused(&o, aids[i].name);
	}
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
