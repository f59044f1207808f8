/* When the CPU's APIC-timer virtualization may serve the guest's timer
 * (vtimer_cpu_serves), against a model of what the guest's local APIC
 * would do and what the CPU does, both written out here; nothing is taken
 * from the project's headers but the function under test.
 *
 * The guest's x2APIC timer (SDM Vol. 3A, "APIC Timer", "TSC-Deadline Mode",
 * "Local Vector Table", "Spurious-Interrupt Vector Register", "Error
 * Handling"):
 * - LVT timer: vector 7:0, delivery status 12 (read-only), mask 16, mode
 *   18:17: 00b one-shot, 01b periodic, 10b TSC-deadline, 11b reserved;
 * - only in TSC-deadline mode does IA32_TSC_DEADLINE arm the timer;
 * - "the mask flag ... can be used to mask the timer interrupt": masked, the
 *   deadline passes without an interrupt;
 * - with the APIC software-disabled (SVR bit 8 = 0) "the local APIC will
 *   respond normally to INIT, NMI, SMI and start-up messages" only: the LVT
 *   mask bits are set and cannot be cleared, no timer interrupt;
 * - vectors 0-15 are illegal: "Send Illegal Vector" / "Receive Illegal
 *   Vector" errors, the interrupt is not delivered.
 * The CPU (Intel ISE, "APIC-Timer Virtualization"; Intel's KVM series "KVM:
 * VMX APIC timer virtualization support": "the hardware supports only the
 * TSC deadline timer" and "doesn't respect the emulated LVTT and always
 * generates an interrupt on timeout"): with tertiary control bit 8 it has
 * one TSC deadline (the guest deadline field) and at it delivers the
 * virtual timer vector, whatever the guest's LVT and SVR say, through
 * virtual-interrupt delivery (which would deliver 0-15 as exceptions).
 * So the CPU may serve the timer exactly where the two agree on every
 * deadline: an armable deadline that delivers the LVT's vector. */
#include "test.h"
#include "../../timer/vtimer.h"

#define C_MASK     (1u << 16)
#define C_DEADLINE 2u
#define C_MODE(lvt) (((lvt) >> 17) & 3)

/* The guest's APIC: does a deadline arm, and what does its expiry deliver
 * (-1 nothing)? */
static bool c_apic_arms_deadline(uint32_t lvt) { return C_MODE(lvt) == C_DEADLINE; }
static int c_apic_delivers(uint32_t lvt, bool svr_enabled)
{
	if (!c_apic_arms_deadline(lvt) || !svr_enabled || (lvt & C_MASK) || (lvt & 0xff) < 16)
		return -1;
	return (int)(lvt & 0xff);
}
/* The CPU serving it with the virtual timer vector = the LVT's vector:
 * it always arms, and delivers the vector. */
static int c_cpu_delivers(uint32_t lvt) { return (int)(lvt & 0xff); }

static bool c_model(uint32_t lvt, bool svr_enabled)
{
	return c_apic_arms_deadline(lvt) && c_apic_delivers(lvt, svr_enabled) == c_cpu_delivers(lvt);
}

TEST(vtimer_cpu_serves_against_model)
{
	static const uint32_t vecs[] = { 0x00, 0x01, 0x0f, 0x10, 0x20, 0xec, 0xff };
	static const uint32_t other[] = { 0, 1u << 12, 1u << 19, 0x700 };   /* delivery status, reserved bits */
	unsigned rows = 0, serve = 0;
	for (uint32_t mode = 0; mode < 4; mode++)
		for (int masked = 0; masked < 2; masked++)
			for (size_t v = 0; v < ARRAY_SIZE(vecs); v++)
				for (size_t o = 0; o < ARRAY_SIZE(other); o++)
					for (int svr = 0; svr < 2; svr++) {
						uint32_t lvt = vecs[v] | (mode << 17) | (masked ? C_MASK : 0) | other[o];
						bool want = c_model(lvt, svr), got = vtimer_cpu_serves(lvt, svr);
						rows++;
						serve += want;
						if (want != got) {
							char m[160];
							snprintf(m, sizeof m, "lvt 0x%x svr %s: vtimer_cpu_serves %d, model %d", lvt,
								 svr ? "enabled" : "disabled", got, want);
							test_fail(__FILE__, __LINE__, m);
						}
					}
	CHECK_EQ(rows, 4 * 2 * 7 * 4 * 2);
	CHECK_EQ(serve, 4 * 4);   /* TSC-deadline, unmasked, SVR on: the four legal vectors, each with 4 other-bit sets */
}

/* The states a Linux guest passes through (arch/x86/kernel/apic/apic.c):
 * INIT's masked LVT, lapic_timer_set_oneshot in TSC-deadline mode,
 * lapic_timer_shutdown (masked, mode kept), and disable_local_APIC (SVR off). */
TEST(vtimer_cpu_serves_linux_states)
{
	CHECK(!vtimer_cpu_serves(C_MASK, true));                              /* after INIT */
	CHECK(vtimer_cpu_serves(0xec | (C_DEADLINE << 17), true));            /* oneshot via TSC deadline */
	CHECK(!vtimer_cpu_serves(0xec | (C_DEADLINE << 17) | C_MASK, true));  /* shutdown */
	CHECK(!vtimer_cpu_serves(0xec | (C_DEADLINE << 17), false));          /* software-disabled */
	CHECK(!vtimer_cpu_serves(0xec, true));                                /* one-shot, counted */
	CHECK(!vtimer_cpu_serves(0xec | (1u << 17), true));                   /* periodic */
}
