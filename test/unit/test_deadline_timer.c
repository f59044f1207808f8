/* timer=deadline at run time (vmx/virq_timer.c) on the CPU of hw_fake.h,
 * which has no APIC-timer virtualization: while the guest's LVT is in
 * TSC-deadline mode, unmasked, with the APIC enabled, its IA32_TSC_DEADLINE
 * is not intercepted and reaches the core's own LAPIC timer; the expiry is
 * the host's timer vector, which exits, and the guest's LVT vector is
 * posted. Every other state is served by the hypervisor as timer=posted.
 *
 * The guest's timer by the SDM (Vol. 3A, "APIC Timer", "TSC-Deadline
 * Mode"), written out here: LVT timer MSR 0x832 (vector 7:0, mask 16, mode
 * 18:17, 10b TSC-deadline); a masked LVT delivers nothing; SVR MSR 0x80F
 * bit 8 enables the APIC, a software disable sets the LVT mask; writing
 * IA32_TSC_DEADLINE (0x6E0) in TSC-deadline mode arms the timer at that
 * TSC (0 disarms; a value already past fires at once); "the timer ...
 * generates an interrupt ... when the TSC reaches the value", and the MSR
 * then reads 0; "transitioning between TSC-deadline mode and other timer
 * modes also disarms the timer"; INIT masks the LVT.
 * The hypervisor's promise on top: arming and reading never exit while the
 * LAPIC serves; each expiry costs exactly one exit and is delivered once. */
#include "test.h"
#include "hw_fake.h"
#include "sdm_vmcs.h"
#include "vmcs_record.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../guest/msr.h"

#define D_MASK (1u << 16)
#define D_DL(vec) ((vec) | (2u << 17))
#define D_ONESHOT(vec) (vec)
#define D_EXIT_INIT 3

static const uint8_t *bitmap(void) { return (const uint8_t *)(uintptr_t)vmcs_record_get(SDM_MSR_BITMAP); }
static bool bit8(void) { return vmcs_record_get(SDM_TERTIARY_CONTROLS) & SDM_PROC3_APIC_TIMER_VIRT; }
/* The LAPIC serves: IA32_TSC_DEADLINE passed through both ways, no bit 8. */
static bool lapic_serves(void)
{
	const uint8_t *bm = bitmap();
	return !bit8() && bm && !msr_bitmap_intercepts(bm, 0x6e0, false) && !msr_bitmap_intercepts(bm, 0x6e0, true);
}
static bool host_serves(void)
{
	const uint8_t *bm = bitmap();
	return !bit8() && bm && msr_bitmap_intercepts(bm, 0x6e0, false) && msr_bitmap_intercepts(bm, 0x6e0, true);
}
/* Delivered to the guest: its vCPU's own posts go straight into the
 * virtual IRR (vmx/virq.c), others into the descriptor's PIR. */
static bool posted(struct vcpu *v, unsigned vec)
{
	uint32_t w;
	memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
	return ((w >> (vec % 32)) & 1) || ((v->pid->pir[vec / 64] >> (vec % 64)) & 1);
}
static void take(struct vcpu *v, unsigned vec)   /* the guest took it */
{
	uint32_t w;
	memcpy(&w, v->vapic + 0x200 + 0x10 * (vec / 32), 4);
	w &= ~(1u << (vec % 32));
	memcpy(v->vapic + 0x200 + 0x10 * (vec / 32), &w, 4);
	v->pid->pir[vec / 64] &= ~(1ull << (vec % 64));
}
static uint64_t rd(struct vcpu *v, uint32_t msr)
{
	uint64_t val = ~0ull;
	CHECK_EQ(hw_guest_rdmsr(v, msr, &val), 0);
	return val;
}
static void wr(struct vcpu *v, uint32_t msr, uint64_t val) { CHECK_EQ(hw_guest_wrmsr(v, msr, val), 0); }
static uint64_t timer_exits(struct vcpu *v) { return v->timer_exits_arm + v->timer_exits_fire; }

/* Linux's tsc-deadline clockevent: the LVT once, then only WRMSRs. */
TEST(deadline_arming_exits_never_expiry_once)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	CHECK(host_serves());                            /* INIT's LVT: masked */
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	CHECK(lapic_serves());
	CHECK_EQ(hw_msr(0x6e0), 0);
	unsigned ex = hw_msr_exits();
	uint64_t tex = timer_exits(v);
	wr(v, 0x6e0, 5000);
	CHECK_EQ(rd(v, 0x6e0), 5000);                    /* read back: the LAPIC's own */
	wr(v, 0x6e0, 4000);                              /* replaced: only the new one fires */
	CHECK_EQ(hw_msr_exits(), ex);
	CHECK_EQ(timer_exits(v), tex);
	hw_run_to(v, 4500);
	CHECK_EQ(timer_exits(v), tex + 1);               /* the expiry: one exit */
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	CHECK_EQ(rd(v, 0x6e0), 0);                       /* fired: reads 0 */
	take(v, 0xec);
	hw_run_to(v, 6000);                              /* 5000 was replaced: nothing */
	CHECK(!posted(v, 0xec));
	wr(v, 0x6e0, 7000);
	wr(v, 0x6e0, 0);                                 /* disarmed */
	hw_run_to(v, 8000);
	CHECK(!posted(v, 0xec));
	wr(v, 0x6e0, 100);                               /* in the past: fires at once */
	CHECK_EQ(rd(v, 0x6e0), 0);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 2);
	CHECK_EQ(timer_exits(v), tex + 2);
	CHECK_EQ(hw_msr_exits(), ex);
	CHECK_EQ(v->pass_fired, 2);
	CHECK(virq_timer_balanced(v));
}

/* Masking (Linux's lapic_timer_shutdown) and mode changes take the timer
 * back: the armed deadline is kept under a masked LVT (fires, delivers
 * nothing), dropped by a change to one-shot; unmasked, the LAPIC takes it. */
TEST(deadline_mask_and_mode_change_take_it_back)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	wr(v, 0x6e0, 5000);
	wr(v, 0x832, D_DL(0xec) | D_MASK);
	CHECK(host_serves());
	CHECK_EQ(rd(v, 0x6e0), 5000);                    /* kept, now by the hypervisor */
	CHECK_EQ(v->timer.deadline, 5000);
	hw_run_to(v, 6000);
	CHECK(!posted(v, 0xec));
	CHECK_EQ(v->timer.masked, 1);
	unsigned ex = hw_msr_exits();
	wr(v, 0x6e0, 9000);                              /* armed while masked: exits */
	CHECK_EQ(hw_msr_exits(), ex + 1);
	wr(v, 0x832, D_DL(0xd0));                        /* unmasked: the LAPIC takes 9000 */
	CHECK(lapic_serves());
	CHECK_EQ(hw_msr(0x6e0), 9000);
	CHECK_EQ(v->timer.deadline, 0);
	CHECK_EQ(rd(v, 0x6e0), 9000);
	hw_run_to(v, 9500);
	CHECK(posted(v, 0xd0));
	CHECK(!posted(v, 0xec));
	take(v, 0xd0);
	wr(v, 0x6e0, 12000);
	wr(v, 0x832, D_ONESHOT(0xd0));                   /* to one-shot: disarmed */
	CHECK(host_serves());
	CHECK_EQ(rd(v, 0x6e0), 0);
	hw_run_to(v, 13000);
	CHECK(!posted(v, 0xd0));
	wr(v, 0x80f, 0xff);                              /* SVR disable: masked, the host serves */
	CHECK(host_serves());
	CHECK(virq_timer_balanced(v));
	CHECK_EQ(v->pass_fired, 1);
	CHECK_EQ(v->timer_posts, 1);
}

/* The guest's deadline comes in root mode while an LVT write that masks it
 * is handled: the guest masked the LVT with that instruction, before the
 * deadline came, so the LAPIC would not deliver it (SDM Vol. 3A, "LVT":
 * a masked LVT entry inhibits its interrupt). Nothing is posted; the
 * interrupt it left requested exits later and finds nothing due. */
TEST(deadline_expiry_in_root_after_a_masking_write_is_not_delivered)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	wr(v, 0x6e0, 5000);
	CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x832, D_DL(0xec) | D_MASK, 5500), 0);
	CHECK(host_serves());
	CHECK(!posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 0);
	CHECK_EQ(v->pass_undelivered, 1);
	hw_run_to(v, 20000);                             /* the requested interrupt exits now */
	CHECK(!posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 0);
	CHECK(virq_timer_balanced(v));
}

/* The same expiry in root mode while the guest moves its TSC: its LVT is
 * unchanged and delivers it, once. */
TEST(deadline_expiry_in_root_at_a_tsc_write_is_delivered_once)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	wr(v, 0x6e0, 5000);
	CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x3b, 100, 5500), 0);
	CHECK(host_serves());
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	take(v, 0xec);
	hw_run_to(v, 20000);
	CHECK(!posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	CHECK(virq_timer_balanced(v));
}

/* The hypervisor's own deadline (served, masked LVT) comes in root mode
 * after the write that unmasks it: the LVT delivers it then, once; the
 * host's interrupt and the LAPIC's for the same deadline are one. */
TEST(deadline_host_expiry_at_hand_over_is_delivered_once)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec) | D_MASK);
	wr(v, 0x6e0, 5000);                              /* served: exits */
	CHECK_EQ(hw_msr(0x6e0), 5000);
	CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x832, D_DL(0xec), 5500), 0);
	CHECK(lapic_serves());
	hw_run_to(v, 6000);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	take(v, 0xec);
	wr(v, 0x6e0, 7000);                              /* the guest's own: delivered */
	hw_run_to(v, 8000);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 2);
	CHECK(virq_timer_balanced(v));
}

/* The hand-over's other window: the host served the guest's one-shot timer;
 * the guest switches to TSC-deadline mode (which disarms it) and the host's
 * deadline, already due, is latched by the LAPIC at some moment of the
 * handler. Wherever it lands (n = 0, 1, 2, ... MSR accesses into the
 * handler), its interrupt is not the guest's: no expiry the LAPIC would not
 * deliver. */
TEST(deadline_host_fire_anywhere_in_the_hand_over_is_not_the_guests)
{
	for (int n = 0; n < 12; n++) {
		hw_reset_deadline(1);
		struct vcpu *v = hw_vcpu(0);
		wr(v, 0x80f, 0x1ff);
		wr(v, 0x838 - 0x6, 0);                   /* TDCR (0x83e): divide by 2 */
		wr(v, 0x832, D_ONESHOT(0xec));
		wr(v, 0x838, 2000);                      /* TMICT: 4000 ticks, served */
		uint64_t h = hw_msr(0x6e0);
		CHECK(h != 0);
		hw_root_fire_after = n;
		CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x832, D_DL(0xec), h + 10), 0);
		hw_root_fire_after = -1;
		CHECK(lapic_serves());
		hw_run_to(v, h + 5000);
		if (v->timer_posts != 0) {
			char msg[120];
			snprintf(msg, sizeof msg, "host deadline latched at MSR access %d: %llu posts of a disarmed one-shot", n,
				 (unsigned long long)v->timer_posts);
			test_fail(__FILE__, __LINE__, msg);
		}
		CHECK(virq_timer_balanced(v));
	}
}

/* A deadline armed in the served state that comes while the LAPIC takes
 * over (handed over already past) is delivered once. */
TEST(deadline_handed_over_past_fires_once)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec) | D_MASK);
	wr(v, 0x6e0, 5000);
	wr(v, 0x832, D_DL(0xec));                        /* handed over before it came */
	CHECK(lapic_serves());
	hw_run_to(v, 5001);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	hw_run_to(v, 9000);
	CHECK_EQ(v->timer_posts, 1);
	CHECK(virq_timer_balanced(v));
}

/* An expiry that exits late, after the guest armed its next deadline (an
 * emulator's late recognition: Bochs 3.0 defect 2), is still the guest's:
 * dropped, it would stop Linux's clockevent for good. */
TEST(deadline_expiry_recognized_late_is_delivered)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	wr(v, 0x6e0, 5000);
	hw_irq_late = true;
	hw_run_to(v, 5500);                              /* fired, not yet recognized */
	wr(v, 0x6e0, 8000);                              /* the guest re-arms meanwhile */
	hw_irq_late = false;
	hw_run_to(v, 5600);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 1);
	take(v, 0xec);
	hw_run_to(v, 8500);
	CHECK(posted(v, 0xec));
	CHECK_EQ(v->timer_posts, 2);
	CHECK(virq_timer_balanced(v));
}

/* INIT: the LVT is masked again; the guest's deadline in the LAPIC goes. */
TEST(deadline_init_clears_the_lapic_deadline)
{
	hw_reset_deadline(2);                            /* the VMCS record is vCPU 1's */
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	wr(v, 0x80f, 0x1ff);
	wr(v, 0x832, D_DL(0xec));
	wr(v, 0x6e0, 5000);
	CHECK(lapic_serves());
	hw_set_cpu(0, true);
	CHECK_EQ(virq_wrmsr(hw_vcpu(0), 0x830, (1ull << 32) | (5u << 8) | (1u << 14)), 0);   /* INIT to vCPU 1 */
	hw_set_cpu(1, true);
	v->reason = D_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
	CHECK(host_serves());
	CHECK_EQ(hw_msr(0x6e0), 0);
	hw_run_to(v, 6000);
	CHECK(!posted(v, 0xec));
	CHECK(virq_timer_balanced(v));
}

/* Random guest programs against the SDM's timer (the header): the same
 * interrupts, the LAPIC serving exactly where vtimer_cpu_serves says, no
 * exit for a WRMSR/RDMSR of IA32_TSC_DEADLINE while it does, one exit per
 * expiry it serves, the accounts balanced after every step; a fifth of the
 * LVT writes are handled with the TSC moved on in root mode. */
struct d_model { uint32_t lvt; bool svr; uint64_t deadline; unsigned delivered; };

static void d_run(struct d_model *m, uint64_t now)
{
	if (((m->lvt >> 17) & 3) == 2 && m->deadline && now >= m->deadline) {
		if (!(m->lvt & D_MASK) && m->svr)
			m->delivered++;
		m->deadline = 0;
	}
}

TEST(deadline_random_against_the_sdm)
{
	static const uint32_t lvts[] = { D_DL(0xec), D_DL(0xec) | D_MASK, D_ONESHOT(0xec) | D_MASK, D_DL(0xec) };
	uint32_t seed = 0x21212121;
	for (int run = 0; run < 60; run++) {
		hw_reset_deadline(1);
		struct vcpu *v = hw_vcpu(0);
		struct d_model m = { .lvt = D_MASK };
		unsigned seen = 0, pass_exits = 0;
		int first[5] = { -1, -1, -1, -1, -1 };
		for (int step = 0; step < 200; step++) {
			unsigned bad = 0;
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 16;
			d_run(&m, hw_tsc);
			bool was_lapic = lapic_serves();
			unsigned ex0 = hw_msr_exits();
			switch (r % 5) {
			case 0:
				m.svr = (r >> 3) & 1;
				if (!m.svr)
					m.lvt |= D_MASK;
				wr(v, 0x80f, m.svr ? 0x1ff : 0xff);
				break;
			case 1: {
				uint32_t val = lvts[(r >> 3) % ARRAY_SIZE(lvts)];
				uint64_t root = (r >> 6) % 5 == 0 ? hw_tsc + (r >> 9) % 1500 : 0;
				d_run(&m, hw_tsc);
				/* The write applies when the guest makes it, at the exit;
				 * what comes in root mode after it comes under the new LVT. */
				if (((m.lvt >> 17) & 3) != ((val >> 17) & 3) && (((m.lvt >> 17) & 3) == 2 || ((val >> 17) & 3) == 2))
					m.deadline = 0;
				m.lvt = m.svr ? val : val | D_MASK;
				if (root)
					d_run(&m, root);
				CHECK_EQ(hw_guest_wrmsr_root_at(v, 0x832, val, root), 0);
				break;
			}
			case 2: case 3: {
				uint64_t d = (r >> 3) % 8 ? hw_tsc + (r >> 5) % 3000 - 500 : 0;
				if (((m.lvt >> 17) & 3) == 2)
					m.deadline = d;
				wr(v, 0x6e0, d);
				if (was_lapic && hw_msr_exits() != ex0)
					bad |= 16;
				break;
			}
			default: {
				uint64_t before = v->timer_exits_fire;
				unsigned fired = m.delivered;
				hw_run_to(v, hw_tsc + (r >> 3) % 2000);
				d_run(&m, hw_tsc);
				if (was_lapic)
					pass_exits += (unsigned)(v->timer_exits_fire - before) - (m.delivered - fired);
				take(v, 0xec);
				break;
			}
			}
			uint32_t lvt = (uint32_t)rd(v, 0x832);
			bool svr = rd(v, 0x80f) & 0x100;
			d_run(&m, hw_tsc);
			bool want = vtimer_cpu_serves(lvt, svr);
			if (want ? !lapic_serves() : !host_serves())
				bad |= 1;
			if (want && rd(v, 0x6e0) != m.deadline)
				bad |= 2;
			if (!virq_timer_balanced(v))
				bad |= 4;
			if (m.delivered != v->timer_posts)
				bad |= 8;
			for (int b = 0; b < 5; b++)
				if ((bad >> b) & 1 && first[b] < 0)
					first[b] = step;
			seen |= bad;
		}
		if (pass_exits)
			seen |= 32;
		if (seen) {
			char msg[300];
			snprintf(msg, sizeof msg, "run %d: wrong server from step %d; MSR differs from the model from step %d; "
				 "accounts unbalanced from step %d; deliveries differ from step %d (model %u, posted %llu); "
				 "a pass-through WRMSR exited from step %d; %u timer exits without a delivery",
				 run, first[0], first[1], first[2], first[3], m.delivered, (unsigned long long)v->timer_posts,
				 first[4], pass_exits);
			test_fail(__FILE__, __LINE__, msg);
		}
	}
}
