/* See tsc_sync.h. "If an execution of WRMSR to the IA32_TSC_ADJUST MSR
 * adds (or subtracts) value X from that MSR, the logical processor also
 * adds (or subtracts) value X from the TSC" (SDM Vol. 3B, "Time-Stamp
 * Counter Adjustment"). Within a package the TSCs start together: a CPU
 * whose IA32_TSC_ADJUST differs from its package's was moved alone, and
 * setting it back takes that away (Linux does the same natively). Between
 * packages nothing is known until measured: a socket reset apart starts
 * its TSCs apart, and firmware may have made up for it in this very MSR. */
#include "tsc_sync.h"
#include "cpu.h"

void tsc_pkgs_init(struct tsc_pkgs *t, uint32_t boot_pkg, int64_t boot_adjust)
{
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++)
		t->p[i] = (struct tsc_pkg){ .state = TSC_PKG_FREE };
	t->p[0] = (struct tsc_pkg){ .state = TSC_PKG_READY, .id = boot_pkg, .adjust = boot_adjust, .cpus = 1 };
	t->npkgs = 1;
	t->untracked = 0;
}

/* The package's slot, claimed for it when it has none (first is then set). */
static struct tsc_pkg *slot_of(struct tsc_pkgs *t, uint32_t pkg, int64_t own, bool *first)
{
	*first = false;
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++) {
		struct tsc_pkg *s = &t->p[i];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (st == TSC_PKG_FREE) {
			uint32_t want = TSC_PKG_FREE;
			if (__atomic_compare_exchange_n(&s->state, &want, TSC_PKG_CLAIMED, false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				s->id = pkg;
				s->adjust = own;
				__atomic_fetch_add(&t->npkgs, 1, __ATOMIC_RELAXED);
				__atomic_store_n(&s->state, TSC_PKG_READY, __ATOMIC_RELEASE);
				*first = true;
				return s;
			}
			st = want;
		}
		/* Claimed by another package's first CPU a moment ago: its
		 * ID follows at once. */
		while (st == TSC_PKG_CLAIMED) {
			cpu_relax();
			st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		}
		if (s->id == pkg)
			return s;
	}
	return NULL;
}

int64_t tsc_pkgs_adjust(struct tsc_pkgs *t, uint32_t pkg, int64_t own)
{
	bool first;
	struct tsc_pkg *s = slot_of(t, pkg, own, &first);
	if (!s) {
		__atomic_fetch_add(&t->untracked, 1, __ATOMIC_RELAXED);
		return own;
	}
	__atomic_fetch_add(&s->cpus, 1, __ATOMIC_RELAXED);
	if (first || own == s->adjust)
		return own;
	uint64_t diff = own > s->adjust ? (uint64_t)own - (uint64_t)s->adjust : (uint64_t)s->adjust - (uint64_t)own;
	uint64_t seen = __atomic_load_n(&s->max_diff, __ATOMIC_RELAXED);
	while (diff > seen && !__atomic_compare_exchange_n(&s->max_diff, &seen, diff, false, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED))
		;
	__atomic_fetch_add(&s->set, 1, __ATOMIC_RELAXED);
	return s->adjust;
}

const struct tsc_pkg *tsc_pkgs_find(const struct tsc_pkgs *t, uint32_t pkg)
{
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++)
		if (t->p[i].state == TSC_PKG_READY && t->p[i].id == pkg)
			return &t->p[i];
	return NULL;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

uint32_t tsc_pkgs_compensate(struct tsc_pkgs *t, uint32_t boot_pkg, const struct tsc_cpu_skew *s, uint32_t n)
{
	uint32_t made = 0;
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++)
		t->p[i].measured = 0, t->p[i].offset = 0, t->p[i].bound = 0, t->p[i].comp = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct tsc_pkg *p = (struct tsc_pkg *)tsc_pkgs_find(t, s[k].pkg);
		if (!p || !s[k].ok)
			continue;
		if (!p->measured++ || s[k].bound < p->bound) {
			p->offset = s[k].offset;
			p->bound = s[k].bound;
		}
	}
	for (uint32_t i = 0; i < TSC_PKG_MAX; i++) {
		struct tsc_pkg *p = &t->p[i];
		/* The boot CPU's own package is its timeline: nothing to make up. */
		if (p->state != TSC_PKG_READY || p->id == boot_pkg || !p->measured || mag(p->offset) <= p->bound)
			continue;
		p->comp = -p->offset;
		made++;
	}
	return made;
}

int64_t tsc_pkgs_comp(const struct tsc_pkgs *t, uint32_t pkg)
{
	const struct tsc_pkg *p = tsc_pkgs_find(t, pkg);
	return p ? p->comp : 0;
}
