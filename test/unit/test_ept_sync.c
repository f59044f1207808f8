/* The EPT shootdown (vmx/ept_sync.c). The rules, from the SDM (Vol. 3C,
 * "Caching Translation Information" and "INVEPT"): a CPU may keep EPT-
 * derived translations until it executes INVEPT itself, in root mode;
 * a translation is used only in guest mode. So a page that leaves the EPT
 * is out of a guest's reach once every CPU that could be in guest mode
 * has executed INVEPT since, or is out of guest mode and will execute it
 * before it enters again. A CPU in wait-for-SIPI executes nothing of the
 * guest (Vol. 3C, "Activity State"): its SIPI exits first. The kick is a
 * fixed interrupt with the hypervisor's vector 0xF1 (external-interrupt
 * exiting: it exits). The machine: hw_fake's CPUs, each vCPU on its own. */
#include "test.h"
#include "hw_fake.h"
#include "../../vmx/ept_sync.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/vmcs_ops.h"

#define M_KICK 0xf1u
#define M_ACTIVE 0
#define M_WAIT_SIPI 3

/* A vCPU enters the guest on its own CPU (the exit handler's last step);
 * in wait-for-SIPI it is parked (vmx/vcpu.h). */
static void m_enter(unsigned i, unsigned activity)
{
	hw_set_cpu(i, true);
	vmcs_write(VMCS_GUEST_ACTIVITY_STATE, activity);
	hw_vcpu(i)->parked = activity == M_WAIT_SIPI;
	ept_sync_entry(hw_vcpu(i));
}

/* The other CPUs while the shooter waits: each one kicked exits (the
 * handler's first step), unless it is 'silent'. */
static int m_silent = -1;
static unsigned m_turns;
static void m_others(void)
{
	m_turns++;
	for (unsigned n = 0; n < hw_sent(); n++)
		if ((hw_sent_icr(n) & 0x7ff) == M_KICK && (int)hw_sent_dest(n) != m_silent)
			ept_sync_exit(hw_vcpu(hw_sent_dest(n)));
	if (m_silent >= 0)
		hw_tsc += 10 * 1000000ull;       /* 10 ms at hw_fake's 1 GHz */
}

TEST(ept_shootdown_kicks_and_waits_for_the_vcpus_in_the_guest)
{
	hw_reset(5);
	ept_sync_enable();
	m_silent = -1;
	m_turns = 0;
	m_enter(1, M_ACTIVE);
	m_enter(2, M_WAIT_SIPI);
	m_enter(3, M_ACTIVE);
	m_enter(4, M_ACTIVE);
	hw_set_cpu(4, true);
	ept_sync_exit(hw_vcpu(4));               /* 4 is in root mode (an exit of its own) */
	unsigned inv[5];
	for (unsigned i = 0; i < 5; i++)
		inv[i] = hw_invepts(i);
	hw_set_cpu(0, true);                     /* the shooter: vCPU 0, in an exit */
	ept_sync_exit(hw_vcpu(0));
	hw_wait_hook = m_others;
	struct ept_sync_stats s0 = ept_sync_stats();
	unsigned sent0 = hw_sent();
	ept_shootdown();
	/* Its own INVEPT; kicks to 1 and 3 only (2 waits for SIPI, 4 is in
	 * root mode, 0 is the shooter); both exited before it returned. */
	CHECK_EQ(hw_invepts(0), inv[0] + 1);
	CHECK_EQ(hw_sent() - sent0, 2);
	CHECK_EQ(hw_sent_dest(sent0), 1);
	CHECK_EQ(hw_sent_dest(sent0 + 1), 3);
	CHECK_EQ(hw_sent_icr(sent0) & 0x7ff, M_KICK);
	CHECK(!hw_vcpu(1)->in_guest && !hw_vcpu(3)->in_guest);
	CHECK(m_turns >= 1);
	struct ept_sync_stats s1 = ept_sync_stats();
	CHECK_EQ(s1.shootdowns - s0.shootdowns, 1);
	CHECK_EQ(s1.kicks - s0.kicks, 2);
	CHECK_EQ(s1.timeouts, s0.timeouts);
	/* Nobody else executed INVEPT yet; each does before its next entry,
	 * once: 1, 3, 4, and 2 after its SIPI. */
	for (unsigned i = 1; i < 5; i++)
		CHECK_EQ(hw_invepts(i), inv[i]);
	for (unsigned i = 1; i < 5; i++) {
		m_enter(i, M_ACTIVE);
		CHECK_EQ(hw_invepts(i), inv[i] + 1);
		m_enter(i, M_ACTIVE);
		CHECK_EQ(hw_invepts(i), inv[i] + 1);
	}
	hw_wait_hook = NULL;
}

/* A CPU that never answers costs 100 ms, counted, not a hang. */
TEST(ept_shootdown_gives_up_on_a_silent_cpu)
{
	hw_reset(3);
	ept_sync_enable();
	m_enter(0, M_ACTIVE);
	m_enter(1, M_ACTIVE);
	m_enter(2, M_ACTIVE);
	/* vCPU 0 shoots from an exit; vCPU 2 never answers. */
	hw_set_cpu(0, true);
	ept_sync_exit(hw_vcpu(0));
	hw_wait_hook = m_others;
	m_silent = 2;
	m_turns = 0;
	struct ept_sync_stats s0 = ept_sync_stats();
	uint64_t t0 = hw_tsc;
	ept_shootdown();
	struct ept_sync_stats s1 = ept_sync_stats();
	CHECK_EQ(s1.timeouts - s0.timeouts, 1);
	CHECK(hw_vcpu(2)->in_guest);             /* still in, not answered */
	CHECK(hw_tsc - t0 >= 100 * 1000000ull);
	CHECK(hw_tsc - t0 <= 120 * 1000000ull);  /* given up at 100 ms, not later */
	/* The shooter is at the new generation, the silent vCPU behind; vCPU
	 * 1 catches up at its entry. */
	m_enter(1, M_ACTIVE);
	CHECK_EQ(hw_vcpu(0)->ept_seen, hw_vcpu(1)->ept_seen);
	CHECK(hw_vcpu(0)->ept_seen > hw_vcpu(2)->ept_seen);
	m_silent = -1;
	hw_wait_hook = NULL;
}
