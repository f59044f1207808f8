/* A ticket-free test-and-set spinlock; enough for a few cores at boot and in reports. */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H
#include "types.h"

typedef struct { volatile uint32_t locked; } spinlock_t;

static inline void spin_lock(spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			__asm__ volatile("pause");
}
static inline bool spin_trylock(spinlock_t *l) { return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE); }
static inline void spin_unlock(spinlock_t *l) { __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE); }
#endif
