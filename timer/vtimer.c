/* The virtual x2APIC timer (see vtimer.h). */
#include "vtimer.h"
#include "../lib/string.h"

#define LVT_MASKED BIT(16)
#define LVT_WRITABLE 0x700ffu   /* vector, mask, mode (bits 18:17) */

/* INIT resets the registers; the counts go on (an armed timer is dropped). */
void vtimer_reset(struct vtimer *t)
{
	if (t->deadline)
		t->replaced++;
	t->lvt = LVT_MASKED;
	t->tdcr = t->tmict = 0;
	t->start = t->deadline = t->period = t->tsc_deadline = 0;
}

/* TDCR bits 3 and 1:0: 000 = /2 ... 110 = /128, 111 = /1. */
unsigned vtimer_div_shift(uint32_t tdcr)
{
	unsigned v = (tdcr & 3) | ((tdcr >> 1) & 4);
	return v == 7 ? 0 : v + 1;
}

static void disarm(struct vtimer *t)
{
	if (t->deadline)
		t->replaced++;
	t->deadline = 0;
	t->period = 0;
	t->tmict = 0;
	t->tsc_deadline = 0;
}

void vtimer_write_lvt(struct vtimer *t, uint32_t val, uint64_t now)
{
	(void)now;
	val &= LVT_WRITABLE;
	/* "Transitioning between TSC-deadline mode and other timer modes also
	 * disarms the timer" ("TSC-Deadline Mode"). Between one-shot and
	 * periodic the count runs on and the new mode decides what happens at
	 * zero (the SDM's older "any mode change disarms" was withdrawn in
	 * 2019; KVM's apic_update_lvtt does the same). */
	bool was_deadline = LVT_TIMER_MODE(t->lvt) == VTIMER_TSC_DEADLINE;
	if (was_deadline != (LVT_TIMER_MODE(val) == VTIMER_TSC_DEADLINE))
		disarm(t);
	t->lvt = val;
}

void vtimer_write_tdcr(struct vtimer *t, uint32_t val)
{
	t->tdcr = val & 0xb;
}

void vtimer_write_tmict(struct vtimer *t, uint32_t val, uint64_t now)
{
	unsigned mode = LVT_TIMER_MODE(t->lvt);
	if (mode == VTIMER_TSC_DEADLINE)
		return;          /* TMICT is ignored in TSC-deadline mode */
	disarm(t);
	t->tmict = val;
	if (!val)
		return;
	uint64_t ticks = (uint64_t)val << vtimer_div_shift(t->tdcr);
	t->start = now;
	t->deadline = now + ticks;
	t->armed++;
	t->period = ticks;   /* the reload, should the mode become periodic */
}

void vtimer_write_tsc_deadline_at(struct vtimer *t, uint64_t val, uint64_t host_deadline)
{
	if (LVT_TIMER_MODE(t->lvt) != VTIMER_TSC_DEADLINE)
		return;          /* writes are ignored outside TSC-deadline mode */
	if (t->deadline)
		t->replaced++;
	t->tsc_deadline = val;
	t->deadline = val ? host_deadline : 0;
	if (val)
		t->armed++;
}

void vtimer_write_tsc_deadline(struct vtimer *t, uint64_t val)
{
	vtimer_write_tsc_deadline_at(t, val, val);
}

/* The timer fires once the guest's TSC (host + offset) reaches its
 * deadline, compared as unsigned 64-bit values ("TSC-Deadline Mode": "when
 * the TSC is greater than or equal to the target value"). The host TSC at
 * which that holds is val - offset wherever that difference keeps the
 * order; else the nearest value that does: 1 for a deadline already passed,
 * the largest for one beyond the host's range. */
uint64_t vtimer_host_deadline(uint64_t val, uint64_t offset, uint64_t host_now)
{
	if (!val)
		return 0;
	uint64_t guest_now = host_now + offset, d = val - offset;
	if (val > guest_now) {
		uint64_t ahead = val - guest_now;
		return host_now + ahead < host_now ? ~0ull : host_now + ahead;
	}
	return guest_now - val > host_now || !d ? 1 : d;
}

void vtimer_rebase(struct vtimer *t, uint64_t offset, uint64_t host_now)
{
	if (LVT_TIMER_MODE(t->lvt) == VTIMER_TSC_DEADLINE && t->deadline)
		t->deadline = vtimer_host_deadline(t->tsc_deadline, offset, host_now);
}

uint32_t vtimer_read_tmcct(const struct vtimer *t, uint64_t now)
{
	if (LVT_TIMER_MODE(t->lvt) == VTIMER_TSC_DEADLINE || !t->deadline || now >= t->deadline)
		return 0;
	return (uint32_t)((t->deadline - now) >> vtimer_div_shift(t->tdcr));
}

unsigned vtimer_late_bucket(uint64_t late)
{
	unsigned b = 0;
	while (b < VTIMER_LATE_BUCKETS - 1 && (late + 1) >> (b + 1))
		b++;
	return b;
}

int vtimer_expire(struct vtimer *t, uint64_t now)
{
	if (!t->deadline || now < t->deadline)
		return -1;
	uint64_t late = now - t->deadline;
	t->fired++;
	t->late_log2[vtimer_late_bucket(late)]++;
	if (late > t->late_max)
		t->late_max = late;
	if (t->lvt & LVT_MASKED)
		t->masked++;
	if (LVT_TIMER_MODE(t->lvt) == VTIMER_PERIODIC && t->period) {
		/* The count reloads at zero: the next period starts at this
		 * deadline, however late it is noticed. Periods missed whole
		 * collapse into this one expiry, in phase. */
		t->deadline += t->period;
		if (t->deadline <= now)
			t->deadline += (now - t->deadline) / t->period * t->period + t->period;
		t->armed++;
	} else {
		t->deadline = 0;
		t->tsc_deadline = 0;         /* the MSR reads 0 once the timer fired */
	}
	return (t->lvt & LVT_MASKED) ? -1 : (int)(t->lvt & 0xff);
}

/* The CPU's timer has one TSC deadline and at it delivers its virtual timer
 * vector whatever the guest's LVT says (Intel ISE, "APIC-Timer
 * Virtualization"; Intel's KVM series: "the hardware supports only the TSC
 * deadline timer", "doesn't respect the emulated LVTT and always generates
 * an interrupt on timeout"). So it serves only where the APIC would deliver
 * the LVT's vector at the deadline: TSC-deadline mode, not masked, the APIC
 * software-enabled (disabled, every LVT is masked), and a legal vector
 * (0-15 are illegal and never delivered: SDM Vol. 3A, "Error Handling";
 * virtual-interrupt delivery would hold them in VIRR for good). */
bool vtimer_cpu_serves(uint32_t lvt, bool svr_enabled)
{
	return svr_enabled && !(lvt & LVT_MASKED) && LVT_TIMER_MODE(lvt) == VTIMER_TSC_DEADLINE && (lvt & 0xff) >= 16;
}

uint64_t vtimer_hand_over(struct vtimer *t)
{
	uint64_t d = t->deadline;
	if (d)
		t->replaced++;
	t->deadline = 0;
	t->tsc_deadline = 0;
	return d;
}
