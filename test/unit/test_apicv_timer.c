/* timer=apicv at run time (vmx/virq_timer.c) on the CPU of hw_fake.h, whose
 * APIC-timer virtualization follows Intel's ISE ("APIC-Timer
 * Virtualization"): tertiary control bit 8; the guest deadline (0x2830),
 * its shadow (0x204E) and the virtual timer vector (0x000A); a WRMSR of
 * IA32_TSC_DEADLINE that the MSR bitmap lets through writes the fields; at
 * the deadline the CPU delivers the vector, whatever the guest's LVT says.
 * The guest's timer by the SDM (Vol. 3A, "APIC Timer", "TSC-Deadline Mode"):
 * LVT timer MSR 0x832 (vector 7:0, mask 16, mode 18:17, 10b TSC-deadline);
 * a masked LVT delivers nothing; SVR MSR 0x80F bit 8 enables the APIC, and
 * a software disable sets every LVT mask bit, which stays set when it is
 * enabled again; "transitioning between TSC-deadline mode and other timer
 * modes also disarms the timer"; INIT resets the LVT to masked.
 * So the CPU may serve the timer only in TSC-deadline mode, unmasked, with
 * the APIC enabled (vtimer_cpu_serves); in every other state the host
 * serves it: bit 8 off and IA32_TSC_DEADLINE intercepted, or the guest's
 * WRMSR would reach the host's own timer. */
#include "test.h"
#include "hw_fake.h"
#include "sdm_vmcs.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../guest/msr.h"

#define A_MASK (1u << 16)
#define A_DL(vec) ((vec) | (2u << 17))
#define A_ONESHOT(vec) (vec)
#define A_EXIT_INIT 3

static const uint8_t *bitmap(void) { return (const uint8_t *)(uintptr_t)vmcs_record_get(SDM_MSR_BITMAP); }
static bool bit8(void) { return vmcs_record_get(SDM_TERTIARY_CONTROLS) & SDM_PROC3_APIC_TIMER_VIRT; }
/* The CPU serves the guest's timer: bit 8 on, IA32_TSC_DEADLINE passed through both ways. */
static bool cpu_serves(void)
{
	const uint8_t *bm = bitmap();
	return bit8() && bm && !msr_bitmap_intercepts(bm, 0x6e0, false) && !msr_bitmap_intercepts(bm, 0x6e0, true);
}
/* The host serves it: bit 8 off, IA32_TSC_DEADLINE intercepted both ways,
 * the CPU's deadline fields clear. */
static bool host_serves(void)
{
	const uint8_t *bm = bitmap();
	return !bit8() && bm && msr_bitmap_intercepts(bm, 0x6e0, false) && msr_bitmap_intercepts(bm, 0x6e0, true) &&
	       vmcs_record_get(SDM_GUEST_DEADLINE) == 0 && vmcs_record_get(SDM_GUEST_DEADLINE_SHADOW) == 0;
}
static bool virr(struct vcpu *v, unsigned vec)
{
	uint32_t w;
	memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
	return (w >> (vec % 32)) & 1;
}
static void virr_clear(struct vcpu *v, unsigned vec)   /* the guest took it */
{
	uint32_t w;
	memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
	w &= ~(1u << (vec % 32));
	memcpy(v->vapic + 0x200 + 0x10 * (vec / 32), &w, 4);
}
static uint64_t rd(struct vcpu *v, uint32_t msr)
{
	uint64_t val = ~0ull;
	CHECK_EQ(hw_guest_rdmsr(v, msr, &val), 0);
	return val;
}
static void wr(struct vcpu *v, uint32_t msr, uint64_t val) { CHECK_EQ(hw_guest_wrmsr(v, msr, val), 0); }

/* Linux's lapic_timer_shutdown masks the LVT and leaves the mode: a deadline
 * the CPU held must not be delivered, and the guest's next writes must not
 * reach the host's timer. Unmasked again, the CPU takes the deadline back. */
TEST(apicv_timer_masked_lvt_falls_back_to_host)
{
	hw_reset_apicv(1);
	struct vcpu *v = hw_vcpu(0);
	CHECK(host_serves());                            /* INIT's LVT: masked */
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, A_DL(0xec));
	CHECK(cpu_serves());
	CHECK_EQ(vmcs_record_get(SDM_VIRTUAL_TIMER_VECTOR), 0xec);
	unsigned ex = hw_msr_exits();
	wr(v, 0x6e0, 5000);
	CHECK_EQ(hw_msr_exits(), ex);                    /* arming exits not */
	CHECK_EQ(vmcs_record_get(SDM_GUEST_DEADLINE), 5000);
	wr(v, 0x832, A_DL(0xec) | A_MASK);
	CHECK(host_serves());
	CHECK_EQ(rd(v, 0x6e0), 5000);                    /* kept, now by the hypervisor */
	CHECK_EQ(hw_msr(0x6e0), 5000);                   /* the host's timer serves it */
	hw_run_to(v, 6000);
	CHECK_EQ(hw_vtimer_fires(0xec) + hw_vtimer_fires(0), 0);
	CHECK(!virr(v, 0xec));                           /* masked: nothing delivered */
	CHECK_EQ(v->timer.fired, 1);
	CHECK_EQ(v->timer.masked, 1);
	CHECK(virq_timer_balanced(v));
	ex = hw_msr_exits();
	wr(v, 0x6e0, 9000);                              /* armed while masked: exits */
	CHECK_EQ(hw_msr_exits(), ex + 1);
	wr(v, 0x832, A_DL(0xec));                        /* unmasked: the CPU takes the deadline */
	CHECK(cpu_serves());
	CHECK_EQ(vmcs_record_get(SDM_GUEST_DEADLINE), 9000);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_DEADLINE_SHADOW), 9000);
	CHECK_EQ(v->timer.deadline, 0);
	wr(v, 0x832, A_DL(0xd0));                        /* a new vector while it serves */
	CHECK(cpu_serves());
	CHECK_EQ(vmcs_record_get(SDM_VIRTUAL_TIMER_VECTOR), 0xd0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_DEADLINE), 9000);
	hw_run_to(v, 9500);
	CHECK_EQ(hw_vtimer_fires(0xd0), 1);
	CHECK(virr(v, 0xd0));
	CHECK(virq_timer_balanced(v));
	CHECK_EQ(hw_guest_host_msr_writes(), 0);
}

/* A software disable (SVR bit 8 = 0) masks the LVTs; the CPU must stop
 * serving too. Enabled again, the LVT stays masked until the guest writes it. */
TEST(apicv_timer_svr_disable_reaches_the_cpu)
{
	hw_reset_apicv(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, A_DL(0xec));
	wr(v, 0x6e0, 5000);
	CHECK(cpu_serves());
	wr(v, 0x80f, 0xff);                              /* software-disabled */
	CHECK(host_serves());
	CHECK(rd(v, 0x832) & A_MASK);
	CHECK_EQ(rd(v, 0x6e0), 5000);
	hw_run_to(v, 6000);
	CHECK_EQ(hw_vtimer_fires(0xec), 0);
	CHECK(!virr(v, 0xec));
	CHECK_EQ(v->timer.masked, 1);
	wr(v, 0x80f, 0x1ff);                             /* enabled: the LVT is still masked */
	CHECK(host_serves());
	wr(v, 0x832, A_DL(0xec));
	CHECK(cpu_serves());
	CHECK(virq_timer_balanced(v));
	CHECK_EQ(hw_guest_host_msr_writes(), 0);
}

/* TSC-deadline to one-shot disarms the deadline the CPU holds (fields
 * cleared, nothing fires); the one-shot count is the host's; back to
 * TSC-deadline disarms the count and the CPU serves again, unarmed. */
TEST(apicv_timer_mode_change_clears_the_deadline_fields)
{
	hw_reset_apicv(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, A_DL(0xec));
	wr(v, 0x6e0, 5000);
	wr(v, 0x832, A_ONESHOT(0xec));
	CHECK(host_serves());
	CHECK_EQ(rd(v, 0x6e0), 0);
	hw_run_to(v, 6000);
	CHECK_EQ(hw_vtimer_fires(0xec) + hw_vtimer_fires(0), 0);
	CHECK_EQ(v->timer.fired, 0);
	wr(v, 0x838, 1000);                              /* one-shot: 2000 TSC ticks at /2 */
	CHECK(host_serves());
	CHECK_EQ(hw_msr(0x6e0), 8000);
	wr(v, 0x832, A_DL(0xec));
	CHECK(cpu_serves());
	CHECK_EQ(vmcs_record_get(SDM_GUEST_DEADLINE), 0);
	CHECK_EQ(v->timer.deadline, 0);
	hw_run_to(v, 20000);
	CHECK_EQ(hw_vtimer_fires(0xec), 0);
	CHECK_EQ(v->timer.fired, 0);
	CHECK(!virr(v, 0xec));
	CHECK(virq_timer_balanced(v));
	CHECK_EQ(hw_guest_host_msr_writes(), 0);
}

/* INIT: the LVT is masked again, so the host serves, and the CPU's deadline
 * (both fields) and vector are gone. */
TEST(apicv_timer_init_clears_the_cpu_timer)
{
	hw_reset_apicv(2);                               /* the VMCS record is vCPU 1's */
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, A_DL(0xec));
	wr(v, 0x6e0, 5000);
	CHECK(cpu_serves());
	hw_set_cpu(0, true);
	CHECK_EQ(virq_wrmsr(hw_vcpu(0), 0x830, (1ull << 32) | (5u << 8) | (1u << 14)), 0);   /* INIT to vCPU 1 */
	hw_set_cpu(1, true);
	v->reason = A_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
	CHECK(host_serves());
	CHECK_EQ(vmcs_record_get(SDM_VIRTUAL_TIMER_VECTOR), 0);
	hw_run_to(v, 6000);
	CHECK_EQ(hw_vtimer_fires(0xec) + hw_vtimer_fires(0), 0);
	CHECK(virq_timer_balanced(v));
}

/* Random guest programs against the SDM's timer (written out in the file
 * header): the same interrupts, never a guest write to the host's timer,
 * the CPU serving exactly where vtimer_cpu_serves says, and the accounts
 * balanced after every step. */
struct a_model { uint32_t lvt; bool svr; uint64_t deadline; unsigned delivered; };

static void a_run(struct a_model *m, uint64_t now)
{
	if (((m->lvt >> 17) & 3) == 2 && m->deadline && now >= m->deadline) {
		if (!(m->lvt & A_MASK) && m->svr)
			m->delivered++;
		m->deadline = 0;
	}
}

TEST(apicv_timer_random_against_the_sdm)
{
	static const uint32_t lvts[] = { A_DL(0xec), A_DL(0xec) | A_MASK, A_ONESHOT(0xec) | A_MASK, A_DL(0xec) };
	uint32_t seed = 0x18081808;
	for (int run = 0; run < 40; run++) {
		hw_reset_apicv(1);
		struct vcpu *v = hw_vcpu(0);
		struct a_model m = { .lvt = A_MASK };
		unsigned seen = 0;
		int first[4] = { -1, -1, -1, -1 };
		for (int step = 0; step < 200; step++) {
			unsigned bad = 0;
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 16;
			a_run(&m, hw_tsc);
			switch (r % 5) {
			case 0:
				m.svr = (r >> 3) & 1;
				if (!m.svr)
					m.lvt |= A_MASK;
				wr(v, 0x80f, m.svr ? 0x1ff : 0xff);
				break;
			case 1: {
				uint32_t val = lvts[(r >> 3) % ARRAY_SIZE(lvts)];
				if (((m.lvt >> 17) & 3) == 2 && ((val >> 17) & 3) != 2)
					m.deadline = 0;
				if (((m.lvt >> 17) & 3) != 2 && ((val >> 17) & 3) == 2)
					m.deadline = 0;
				m.lvt = m.svr ? val : val | A_MASK;
				wr(v, 0x832, val);
				break;
			}
			case 2: case 3: {
				uint64_t d = (r >> 3) % 8 ? hw_tsc + (r >> 5) % 3000 : 0;
				if (((m.lvt >> 17) & 3) == 2)
					m.deadline = d;
				wr(v, 0x6e0, d);
				break;
			}
			default:
				hw_run_to(v, hw_tsc + (r >> 3) % 2000);
				a_run(&m, hw_tsc);
				virr_clear(v, 0xec);
				break;
			}
			uint32_t lvt = (uint32_t)rd(v, 0x832);    /* a guest instruction: the CPU's events due now come first */
			bool svr = rd(v, 0x80f) & 0x100;
			a_run(&m, hw_tsc);
			bool want = vtimer_cpu_serves(lvt, svr);
			if (want ? !cpu_serves() : !host_serves())
				bad |= 1;
			if (hw_guest_host_msr_writes())
				bad |= 2;
			if (!virq_timer_balanced(v))
				bad |= 4;
			if (m.delivered != hw_vtimer_fires(0xec) + v->timer_posts)
				bad |= 8;
			for (int b = 0; b < 4; b++)
				if ((bad >> b) & 1 && first[b] < 0)
					first[b] = step;
			seen |= bad;
		}
		if (seen) {
			char msg[240];
			snprintf(msg, sizeof msg, "run %d: wrong server from step %d; guest wrote the host's timer from step %d; "
				 "accounts unbalanced from step %d; deliveries differ from step %d (model %u, cpu %u + host %llu at the end)",
				 run, first[0], first[1], first[2], first[3], m.delivered, hw_vtimer_fires(0xec),
				 (unsigned long long)v->timer_posts);
			test_fail(__FILE__, __LINE__, msg);
		}
	}
}
