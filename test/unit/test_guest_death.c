/* A guest that died without a word (vmx/virq.c): every vCPU halted with
 * RFLAGS.IF = 0, or waiting for a SIPI, and nothing on its way to wake one,
 * ends the run: the vCPU that makes the set whole gets v->died (its exit
 * handler, vmx/exit.c, then calls vmx_guest_died). By the SDM (Vol. 2A,
 * "HLT"; Vol. 3A, "Interrupt Handling"; Vol. 3C, "Activity State"): a
 * maskable interrupt ends the HLT state only with IF = 1; an NMI ends it
 * unless NMIs are blocked; INIT parks the CPU in wait-for-SIPI, which only a
 * SIPI ends. So a vCPU halted with IF = 0 waits for an NMI, an INIT or a
 * SIPI, which another running vCPU (or a device's NMI) would have to send. */
#include "virq_test.h"
#include "../../vmx/vmcs_ops.h"
#include "../../lib/percpu.h"

/* How many vCPUs say the guest died, and the last one's why. */
static const char *death_why;
static unsigned deaths(void)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		if (hw_vcpu(i)->died) {
			n++;
			death_why = hw_vcpu(i)->died;
		}
	return n;
}

/* vCPU i executes HLT with the given IF, hlt=exit: its exit and the entry after. */
static void hlt_exit(unsigned i, bool if_set)
{
	struct vcpu *v = hw_vcpu(i);
	hw_set_cpu(i, true);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_ACTIVE);
	vmcs_write(SDM_ENTRY_INTR_INFO, 0);
	vmcs_write(SDM_GUEST_INTERRUPTIBILITY, 0);
	vmcs_write(SDM_GUEST_RFLAGS, (if_set ? M_RFLAGS_IF : 0) | 2);
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
}

/* vCPU i, halted in the guest (hlt=guest: its HLT made no exit), exits for
 * something else from the HLT state, and is entered again. */
static void exit_from_hlt(unsigned i, bool if_set)
{
	struct vcpu *v = hw_vcpu(i);
	hw_set_cpu(i, true);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_HLT);
	vmcs_write(SDM_ENTRY_INTR_INFO, 0);
	vmcs_write(SDM_GUEST_INTERRUPTIBILITY, 0);
	vmcs_write(SDM_GUEST_RFLAGS, (if_set ? M_RFLAGS_IF : 0) | 2);
	v->reason = 52;                         /* the VMX-preemption timer (the hang check's) */
	virq_before_entry(v);
}

TEST(guest_death_when_every_vcpu_halts_with_if_clear)
{
	hw_reset(2);
	hlt_exit(0, false);                     /* Linux's stop_this_cpu on vCPU 0 */
	CHECK_EQ(act(), M_ACT_HLT);
	CHECK(hw_vcpu(0)->halted_off);
	CHECK_EQ(deaths(), 0);                 /* vCPU 1 runs: it may still send an NMI or INIT */
	hlt_exit(1, true);                      /* an idle HLT: an interrupt wakes it */
	CHECK(!hw_vcpu(1)->halted_off);
	CHECK_EQ(deaths(), 0);
	hlt_exit(1, false);
	CHECK_EQ(deaths(), 1);
	CHECK(hw_vcpu(1)->died != NULL);
	CHECK_CONTAINS(death_why, "every vCPU halted with interrupts off");
	/* Said once: the next entries of a vCPU still halted do not say it again. */
	hw_vcpu(1)->died = NULL;
	exit_from_hlt(1, false);
	exit_from_hlt(0, false);
	CHECK_EQ(deaths(), 0);
}

/* hlt=guest: the HLT makes no exit; the vCPU says it is halted at its next
 * exit from the HLT state (its timer, the hang check's preemption timer). */
TEST(guest_death_seen_at_an_exit_from_the_hlt_state)
{
	hw_reset(2);
	exit_from_hlt(0, false);
	CHECK(hw_vcpu(0)->halted_off);
	exit_from_hlt(1, true);                 /* resumed: an interrupt may be pending */
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(deaths(), 0);
	exit_from_hlt(1, false);
	CHECK_EQ(act(), M_ACT_HLT);
	CHECK_EQ(deaths(), 1);
}

/* Nothing is said while something is on its way to wake a vCPU. */
TEST(guest_death_not_while_an_nmi_or_a_start_is_on_its_way)
{
	hw_reset(2);
	hlt_exit(0, false);
	__atomic_store_n(&hw_vcpu(0)->nmi_pending, 1, __ATOMIC_SEQ_CST);   /* sent, its exit to come */
	hlt_exit(1, false);
	CHECK(hw_vcpu(1)->halted_off);
	CHECK_EQ(deaths(), 0);
	/* vCPU 0 takes it: injected at its entry, it is no longer halted. */
	exit_from_hlt(0, false);
	CHECK(injected() & M_INFO_VALID);
	CHECK(!hw_vcpu(0)->halted_off);
	CHECK_EQ(deaths(), 0);

	/* An NMI for the halting vCPU itself ends its HLT at once. */
	hw_reset(2);
	hlt_exit(0, false);
	__atomic_store_n(&hw_vcpu(1)->nmi_pending, 1, __ATOMIC_SEQ_CST);
	hlt_exit(1, false);
	CHECK(injected() & M_INFO_VALID);
	CHECK(!hw_vcpu(1)->halted_off);
	CHECK_EQ(deaths(), 0);

	/* An INIT that vCPU 1 sent vCPU 0 before halting: 0 will wait for a SIPI
	 * that nobody sends, but until its exit takes the INIT, it is on its way. */
	hw_reset(2);
	hlt_exit(0, false);
	icr(1, M_ICR(0, M_DM_INIT | M_LEVEL_ASSERT));
	hlt_exit(1, false);
	CHECK_EQ(deaths(), 0);
}

/* A vCPU that waits for a SIPI counts as halted: the boot vCPU halted with
 * IF = 0 and every AP never started is a dead guest. One with a SIPI
 * recorded is about to start. */
TEST(guest_death_counts_vcpus_waiting_for_a_sipi)
{
	hw_reset(2);
	hw_vcpu(1)->parked = true;              /* as vmx/vcpu_launch.c leaves an AP */
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));  /* the SIPI recorded */
	hlt_exit(0, false);
	CHECK_EQ(deaths(), 0);

	hw_reset(2);
	hw_vcpu(1)->parked = true;
	hlt_exit(0, false);
	CHECK_EQ(deaths(), 1);
}

/* A vCPU halted with IF = 0 that an INIT then parks is no longer "halted":
 * after its SIPI it runs. */
TEST(guest_death_flag_cleared_by_init)
{
	hw_reset(2);
	hlt_exit(1, false);
	CHECK(hw_vcpu(1)->halted_off);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	CHECK(!v->halted_off);
	CHECK(v->parked);
	CHECK_EQ(deaths(), 0);
}

/* bochstest's HC_BT_HLT_PENDING enters the HLT state with IF = 0 on
 * purpose: the hypervisor wakes it (testaid/bochstest.c). */
TEST(guest_death_not_for_bochstest_hlt)
{
	hw_reset(1);
	hw_vcpu(0)->bochs_test_wake = true;
	exit_from_hlt(0, false);
	CHECK(!hw_vcpu(0)->halted_off);
	CHECK_EQ(deaths(), 0);
}

/* The partition model's guest owns its local APIC (and its NMIs): no verdict there. */
TEST(guest_death_virtual_model_only)
{
	hw_reset(1);
	vmx_env.cfg.irq_model = IRQ_PARTITION;
	hlt_exit(0, false);
	CHECK_EQ(deaths(), 0);
}
