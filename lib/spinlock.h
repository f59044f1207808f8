/* A ticket-free test-and-set spinlock; enough for a few cores at boot and in reports. */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H
#include "types.h"

typedef struct {
	volatile uint32_t locked;
#ifdef HV_HOST_TEST
	const void *volatile owner;      /* the host thread holding it (unit tests) */
#endif
} spinlock_t;

#ifdef HV_HOST_TEST
/* Host unit tests check every use (test/unit/lockcheck.c): taking a lock
 * this thread holds already (a deadlock on a CPU) and releasing one it
 * does not hold fail the running test, naming the call's file and line. */
void spin_lock_at(spinlock_t *l, const char *file, int line);
bool spin_trylock_at(spinlock_t *l, const char *file, int line);
void spin_unlock_at(spinlock_t *l, const char *file, int line);
#define spin_lock(l)    spin_lock_at((l), __FILE__, __LINE__)
#define spin_trylock(l) spin_trylock_at((l), __FILE__, __LINE__)
#define spin_unlock(l)  spin_unlock_at((l), __FILE__, __LINE__)
#else
static inline void spin_lock(spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			__asm__ volatile("pause");
}
static inline bool spin_trylock(spinlock_t *l) { return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE); }
static inline void spin_unlock(spinlock_t *l) { __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE); }
#endif
#endif
