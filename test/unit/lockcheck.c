/* The host build's spinlock (lib/spinlock.h under HV_HOST_TEST): the lock
 * itself, plus the owner, so that every test that runs locking code checks
 * it. On a CPU, taking a lock it holds already spins for good, and a
 * release of a lock it does not hold lets another CPU in while the holder
 * is still inside; here both fail the running test with the call's place.
 * The owner is the host thread: the unit tests play every CPU on one
 * thread, and a two-thread test gives each CPU its own. */
#include "test.h"
#include "../../lib/spinlock.h"

static __thread char this_thread;   /* its address names the thread */
unsigned lockcheck_expected;        /* misuses a test provokes on purpose: counted, not failed */

static void misuse(const spinlock_t *l, const char *file, int line, const char *what)
{
	char m[200];
	if (lockcheck_expected) {
		lockcheck_expected--;
		return;
	}
	snprintf(m, sizeof m, "%s (lock %p)", what, (const void *)l);
	test_fail(file, line, m);
}

void spin_lock_at(spinlock_t *l, const char *file, int line)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &this_thread) {
		misuse(l, file, line, "spin_lock of a lock this CPU holds already: it would spin for good");
		return;   /* held already: go on as if taken */
	}
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
	__atomic_store_n(&l->owner, &this_thread, __ATOMIC_RELAXED);
}

bool spin_trylock_at(spinlock_t *l, const char *file, int line)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &this_thread) {
		misuse(l, file, line, "spin_trylock of a lock this CPU holds already");
		return false;
	}
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&l->owner, &this_thread, __ATOMIC_RELAXED);
	return true;
}

void spin_unlock_at(spinlock_t *l, const char *file, int line)
{
	const void *o = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
	if (o != &this_thread) {
		misuse(l, file, line, o ? "spin_unlock of a lock another CPU holds" : "spin_unlock of a lock nobody holds");
		return;   /* the holder, if any, keeps it */
	}
	__atomic_store_n(&l->owner, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
