/* INIT and SIPI at run time (vmx/virq_startup.c) where a mutation check
 * found it unguarded (issue 36, faults 16-18). From the SDM:
 *  - Vol. 3A, "MP Initialization Protocol" and the SIPI's definition: a
 *    SIPI with vector VV starts the CPU in real mode at CS selector
 *    VV << 8, CS base VV << 12, RIP 0; any vector, 0x00 included;
 *  - Vol. 3A, "Processor State After Reset/INIT": EDX holds the processor
 *    signature (CPUID.1:EAX);
 *  - Vol. 3C, "Activity State": a CPU in wait-for-SIPI takes nothing but
 *    its SIPI (interrupts sent meanwhile are not delivered);
 *  - Vol. 3C, "INIT Signals": an INIT to a CPU in wait-for-SIPI is held
 *    and exits right after its SIPI, before the first instruction (RIP 0 at
 *    the SIPI's CS base); an INIT after the CPU has run is a new INIT. */
#include "virq_test.h"
#include "cpu_fake.h"
#include "../../vmx/vmcs_ops.h"

static void init_exit(struct vcpu *v)
{
	hw_set_cpu(v->index, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);
}

/* Fault 16: SIPI vector 0 starts the vCPU at 0000:0000. */
TEST(mutant_startup_sipi_vector_0_starts_the_vcpu)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	vmcs_write(SDM_GUEST_RIP, 0x4321);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	icr(0, M_ICR(1, M_DM_STARTUP | 0x00));
	hw_set_cpu(1, true);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK(!v->parked);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0);
	CHECK_EQ(v->regs.rdx, 0x000806f8);                /* the modelled CPU's signature */
	/* Again on a CPU with another signature, at vector 0x10. */
	cpu_fake_cpuid(1, 0, 0x000506e3, 0, 0, 0);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	icr(0, M_ICR(1, M_DM_STARTUP | 0x10));
	hw_set_cpu(1, true);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0x10000);
	CHECK_EQ(v->regs.rdx, 0x000506e3);
}

/* Fault 17: a vector sent to a vCPU while it waits for SIPI is not
 * delivered after the SIPI, and leaves no outstanding notification (ON)
 * that would hold back the next one. */
static unsigned turn;
static void post_then_sipi(void)
{
	if (turn++ == 0)
		icr(0, M_ICR(1, 0x45));                    /* a fixed IPI, vector 0x45 */
	else
		icr(0, M_ICR(1, M_DM_STARTUP | 0x9e));
	hw_set_cpu(1, true);
}
TEST(mutant_startup_vector_sent_while_waiting_is_dropped)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	turn = 0;
	hw_wait_hook = post_then_sipi;
	virq_startup_wait(v);
	CHECK_EQ(turn, 2);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9e00);
	CHECK(!pir_bit(v, 0x45));
	CHECK(!pid_on(v));
	virq_before_entry(v);
	CHECK(!vpage_bit(v, M_IRR, 0x45));
	CHECK(!pir_bit(v, 0x45));
	/* The next vector sent is delivered. */
	icr(0, M_ICR(1, 0x46));
	hw_set_cpu(1, true);
	virq_before_entry(v);
	CHECK(vpage_bit(v, M_IRR, 0x46) || (pir_bit(v, 0x46) && pid_on(v)));
	hw_wait_hook = NULL;
}

/* Fault 18, the partition model (the guest's INITs and SIPIs reach the
 * CPU): an INIT exit with the vCPU at the SIPI's CS base but past RIP 0
 * (it has run: Linux retries a stuck AP with INIT, SIPI) is a new INIT:
 * the vCPU waits for SIPI. At RIP 0 it is the INIT held since the SIPI,
 * taken already: the vCPU runs on. */
TEST(mutant_startup_partition_init_after_the_ap_ran_parks_it)
{
	hw_reset(2);
	vmx_env.cfg.irq_model = IRQ_PARTITION;
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_ACTIVE);
	v->sipi_base = 0x9a000;
	vmcs_write(SDM_GUEST_CS_BASE, 0x9a000);
	vmcs_write(SDM_GUEST_RIP, 0);                     /* the held INIT */
	init_exit(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK(!v->parked);
	v->sipi_base = 0x9a000;                           /* started again by a SIPI at 0x9a */
	vmcs_write(SDM_GUEST_CS_BASE, 0x9a000);
	vmcs_write(SDM_GUEST_RIP, 0x1f4);                 /* it ran */
	init_exit(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	CHECK(v->parked);
	CHECK_EQ(v->sipi_base, 0);
}
