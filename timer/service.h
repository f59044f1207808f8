/* The timer service of a housekeeping CPU (timer=posted with housekeeping=):
 * one CPU kept from the guest serves every vCPU's virtual timer. A vCPU's
 * arming exits once (the TSC-deadline or initial-count write); the service's
 * own TSC-deadline timer fires at the earliest deadline of all vCPUs, and the
 * service posts each expired timer's vector into its vCPU's descriptor with a
 * notification, so the delivery costs the vCPU no exit (KVM's "exitless
 * timer" idea, built here on the hypervisor's own descriptors). */
#ifndef TIMER_SERVICE_H
#define TIMER_SERVICE_H
#include "vtimer.h"
#include "../lib/spinlock.h"

struct timer_service {
	uint32_t n;                           /* vCPUs served */
	struct vtimer **timers;               /* timers[i]: vCPU i's timer ... */
	spinlock_t **locks;                   /* ... and the lock its own exits take too */
	/* Delivers vector 'vec' to vCPU i (posts it; called without the lock). */
	void (*post)(void *ctx, uint32_t i, uint8_t vec);
	void *ctx;
	uint32_t apic_id;                     /* the housekeeping CPU */
	uint8_t timer_vector, kick_vector;    /* its own TSC-deadline timer, and the wake-up */
	/* The deadline its timer is armed for; 0 while it scans (a vCPU that
	 * arms then kicks it, whatever the deadline), ~0 when nothing is armed. */
	uint64_t next;
	/* skew[i]: the service CPU's host TSC minus vCPU i's CPU's at one
	 * instant (their packages' TSC compensations' difference, boot/smp.c):
	 * a vCPU's deadline is in its own CPU's host TSC. NULL: all 0. */
	const int64_t *skew;
	uint64_t scans, posts, kicks;
};

/* One pass at the service's host TSC 'now': expires every due timer
 * (posting its vector) and returns the earliest deadline left in the
 * service's host TSC, 0 if none. Pure but for the post callback. */
uint64_t timer_service_scan(struct timer_service *s, uint64_t now);

/* After vCPU i's timer changed (with its lock released) to 'deadline' (its
 * own CPU's host TSC): kicks the service when the new deadline comes before
 * the one it sleeps for. 'kick' sends the wake-up IPI. */
void timer_service_armed(struct timer_service *s, uint32_t i, uint64_t deadline, void (*kick)(uint32_t apic_id, uint8_t vec));

/* The service loop, on the housekeeping CPU, forever (interrupts off but
 * for its HLT). */
__noreturn void timer_service_run(struct timer_service *s);
#endif
