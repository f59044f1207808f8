/* See service.h. */
#include "service.h"
#ifndef HV_HOST_TEST
#include "../lib/cpu.h"
#include "../lib/msr.h"
#endif

static int64_t skew_of(const struct timer_service *s, uint32_t i) { return s->skew ? s->skew[i] : 0; }

uint64_t timer_service_scan(struct timer_service *s, uint64_t now)
{
	uint64_t next = 0;
	s->scans++;
	for (uint32_t i = 0; i < s->n; i++) {
		struct vtimer *t = s->timers[i];
		int64_t k = skew_of(s, i);
		spin_lock(s->locks[i]);
		int vec = vtimer_expire(t, now - (uint64_t)k);     /* its CPU's TSC now */
		uint64_t d = t->deadline ? t->deadline + (uint64_t)k : 0;
		spin_unlock(s->locks[i]);
		if (vec >= 0) {
			s->posts++;
			s->post(s->ctx, i, (uint8_t)vec);
		}
		if (d && (!next || d < next))
			next = d;
	}
	return next;
}

void timer_service_armed(struct timer_service *s, uint32_t i, uint64_t deadline, void (*kick)(uint32_t apic_id, uint8_t vec))
{
	uint64_t next = __atomic_load_n(&s->next, __ATOMIC_SEQ_CST);
	deadline = deadline ? deadline + (uint64_t)skew_of(s, i) : 0;
	if (deadline && (next == 0 || deadline < next)) {
		__atomic_fetch_add(&s->kicks, 1, __ATOMIC_RELAXED);
		kick(s->apic_id, s->kick_vector);
	}
}

#ifndef HV_HOST_TEST
__noreturn void timer_service_run(struct timer_service *s)
{
	/* Its own x2APIC timer in TSC-deadline mode (SDM Vol. 3A, "TSC-Deadline Mode"). */
	wrmsr(0x832, s->timer_vector | (VTIMER_TSC_DEADLINE << 17));
	for (;;) {
		__atomic_store_n(&s->next, 0, __ATOMIC_SEQ_CST);    /* scanning: every arming kicks */
		uint64_t next = timer_service_scan(s, rdtsc());
		__atomic_store_n(&s->next, next ? next : ~0ull, __ATOMIC_SEQ_CST);
		/* A deadline armed since the scan kicked us (its IPI waits in the
		 * IRR and ends the HLT at once); one already due: scan again. */
		if (next && next <= rdtsc())
			continue;
		wrmsr(MSR_IA32_TSC_DEADLINE, next);                  /* 0 disarms */
		__asm__ volatile("sti; hlt; cli" ::: "memory");     /* the handler EOIs */
	}
}
#endif
