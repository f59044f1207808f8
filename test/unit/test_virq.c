/* The interrupt run time (vmx/virq*.c) on the machine of hw_fake.c. */
#include "test.h"
#include "hw_fake.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"

TEST(virq_edge_device_vector_posted_and_eoid)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(0);
	CHECK(hw_lapic_accept(0x41, false));
	hw_exit_external(v, 0x41);
	CHECK(!hw_lapic_isr(0x41));          /* EOId at once */
	CHECK_EQ(v->extint[0x41], 1);
}
