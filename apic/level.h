/* Level-triggered vectors between the physical APIC and the guest.
 *
 * A level vector taken by the host keeps its physical in-service bit until
 * the guest EOIs it (the EOI-exit bitmap tells the hypervisor), so the
 * IOAPIC does not sample the line again before the device is serviced. A
 * physical EOI retires the *highest* in-service vector (SDM Vol. 3A, "EOI
 * Register"), not a chosen one, and the local APIC only accepts a vector of
 * a higher priority class than the one in service: the in-flight vectors
 * are a stack ordered by priority. The guest may EOI them in another order
 * (Linux's handlers can be re-entered by a higher-class vector and finish
 * after it): an EOI of a vector that is not on top is remembered, and the
 * physical EOIs follow the stack's order, each popping the top once its
 * guest EOI has been seen. Pure logic: the caller sends the EOIs. */
#ifndef APIC_LEVEL_H
#define APIC_LEVEL_H
#include "../lib/types.h"

struct level_stack {
	uint64_t inflight[4];   /* vectors holding a physical ISR bit for the guest */
	uint64_t done[4];       /* of those, the ones the guest has EOId already */
};

/* The physical APIC accepted level vector 'vec' and it stays in service. */
void level_accept(struct level_stack *s, uint8_t vec);
bool level_inflight(const struct level_stack *s, uint8_t vec);
/* The guest's EOI of 'vec' (-1: none). Returns how many physical EOIs to
 * send now, each retiring the top of the stack; 0 when 'vec' is not in
 * flight or a higher in-flight vector still waits for its guest EOI. */
unsigned level_guest_eoi(struct level_stack *s, int vec);
/* INIT or reset: every in-flight vector ends. Returns the physical EOIs to
 * send (one per in-flight vector) and empties the stack. */
unsigned level_reset(struct level_stack *s);
/* Highest in-flight vector, or -1. */
int level_top(const struct level_stack *s);
#endif
