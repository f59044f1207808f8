/* The guest's x2APIC timer, fully virtual (SDM Vol. 3A, "APIC Timer"): one-
 * shot, periodic and TSC-deadline modes, divide configuration, the current
 * count, LVT masking. Pure arithmetic on TSC values: the caller serves the
 * deadline with a host timer and posts the vector when vtimer_expire says so.
 * The timer counts at the TSC rate before division: the hypervisor's CPUID
 * 0x15 shows a core crystal equal to the TSC, and Linux takes its APIC timer
 * rate from that crystal. */
#ifndef TIMER_VTIMER_H
#define TIMER_VTIMER_H
#include "../lib/types.h"

#define LVT_TIMER_MODE(lvt)  (((lvt) >> 17) & 3)
enum { VTIMER_ONESHOT = 0, VTIMER_PERIODIC = 1, VTIMER_TSC_DEADLINE = 2 };

#define VTIMER_LATE_BUCKETS 32

struct vtimer {
	uint32_t lvt;          /* LVT timer register */
	uint32_t tdcr;         /* divide configuration */
	uint32_t tmict;        /* initial count */
	uint64_t start;        /* TSC when the count was loaded */
	uint64_t deadline;     /* host TSC of the next expiry; 0 = disarmed */
	uint64_t period;       /* TSC ticks of the initial count (the periodic reload) */
	uint64_t tsc_deadline; /* IA32_TSC_DEADLINE as the guest reads it (guest TSC) */
	/* Accounting: every arming ends replaced (a new count or deadline, a
	 * zero, a change to or from TSC-deadline mode, a deadline handed to the
	 * CPU's APIC-timer virtualization) or fired, so armed == replaced +
	 * fired + (1 if armed now); a lost expiry breaks the equation. A
	 * deadline taken back from the CPU is armed again here. */
	uint64_t armed;        /* deadlines set (a periodic timer's every period) */
	uint64_t replaced;     /* armed deadlines dropped before they came */
	uint64_t fired;        /* expiries so far, masked ones included */
	uint64_t masked;       /* expiries with the LVT masked (no interrupt) */
	uint64_t late_max;     /* TSC ticks from a deadline to its expiry, the most */
	uint32_t late_log2[VTIMER_LATE_BUCKETS];  /* bucket b: lateness in [2^b - 1, 2^(b+1) - 1) ticks */
};

void vtimer_reset(struct vtimer *t);
void vtimer_write_lvt(struct vtimer *t, uint32_t val, uint64_t now);
void vtimer_write_tdcr(struct vtimer *t, uint32_t val);
void vtimer_write_tmict(struct vtimer *t, uint32_t val, uint64_t now);
void vtimer_write_tsc_deadline(struct vtimer *t, uint64_t val);
/* The same for a vCPU whose TSC runs at an offset from the host's: 'val'
 * is what the guest wrote (and reads back), 'host_deadline' when it fires
 * in host TSC (vtimer_host_deadline). */
void vtimer_write_tsc_deadline_at(struct vtimer *t, uint64_t val, uint64_t host_deadline);
/* The host TSC at which a guest deadline 'val' (0: none) comes, the guest's
 * TSC being the host's plus 'offset', at host TSC 'host_now'. */
uint64_t vtimer_host_deadline(uint64_t val, uint64_t offset, uint64_t host_now);
/* The guest's TSC offset became 'offset': an armed TSC deadline keeps its
 * guest value and comes when the guest's TSC reaches it. */
void vtimer_rebase(struct vtimer *t, uint64_t offset, uint64_t host_now);
uint32_t vtimer_read_tmcct(const struct vtimer *t, uint64_t now);
/* At or after the deadline: counts the expiry, re-arms a periodic timer,
 * and returns the vector to post, or -1 (not due, or masked). */
int vtimer_expire(struct vtimer *t, uint64_t now);
/* The lateness bucket of 'late' ticks: floor(log2(late + 1)), at most 31. */
unsigned vtimer_late_bucket(uint64_t late);
/* Divisor shift of a TDCR value: 1 << shift TSC ticks per count. */
unsigned vtimer_div_shift(uint32_t tdcr);
/* Whether the CPU's APIC-timer virtualization (Intel ISE) may serve the
 * timer: only TSC-deadline mode, unmasked, a legal vector (16-255), the
 * APIC software-enabled (SVR bit 8). */
bool vtimer_cpu_serves(uint32_t lvt, bool svr_enabled);
/* The CPU takes the TSC-deadline timer over: returns its deadline (0 none),
 * which leaves these accounts as replaced. Taking it back is
 * vtimer_write_tsc_deadline (TSC-deadline mode). */
uint64_t vtimer_hand_over(struct vtimer *t);
#endif
