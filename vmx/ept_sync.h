/* Every CPU's EPT translations invalidated when a page leaves the guest's
 * EPT while the guest runs (an MSI-X table whose BAR the guest moved): the
 * SDM's "Caching Translation Information" lets each CPU keep translations
 * (guest-physical and combined mappings) until an INVEPT on that CPU, so a
 * vCPU that had touched the page could go on writing the device's table
 * directly. The shootdown: a new generation, the caller's INVEPT, a kick
 * (KICK_VECTOR) to each vCPU running guest code that has not caught up,
 * and a wait until each exited or caught up; each vCPU catches up (INVEPT)
 * right before its next VM entry. Off until enabled: nothing on the exit
 * path then. */
#ifndef VMX_EPT_SYNC_H
#define VMX_EPT_SYNC_H
#include "../lib/types.h"

struct vcpu;

struct ept_sync_stats {
	uint64_t shootdowns, kicks, timeouts;
};

/* From now on the vCPUs say when they run guest code (before any page
 * leaves the EPT at run time). */
void ept_sync_enable(void);
/* The exit handler's first and last steps. */
void ept_sync_exit(struct vcpu *v);
void ept_sync_entry(struct vcpu *v);
/* From any exit handler, locks held or not (the vCPUs waited for are in
 * guest mode: none of them holds a lock); returns once every vCPU has
 * caught up, exited or (after 100 ms, counted and said once) not answered. */
void ept_shootdown(void);
struct ept_sync_stats ept_sync_stats(void);
#endif
