/* The host build's lock check (test/unit/lockcheck.c) fails what it must:
 * a second spin_lock by the holder (on a CPU: spins for good), a release
 * by a CPU that does not hold the lock, a release of a free lock; and it
 * lets the right uses through, a lock handed between two threads too. */
#include "test.h"
#include "../../lib/spinlock.h"
#include <pthread.h>

extern unsigned lockcheck_expected;

TEST(lockcheck_fails_a_double_lock_and_a_stray_unlock)
{
	spinlock_t l = { 0 };
	spin_lock(&l);
	lockcheck_expected = 1;
	spin_lock(&l);                         /* would spin for good: reported, not hung */
	CHECK_EQ(lockcheck_expected, 0);
	lockcheck_expected = 1;
	CHECK(!spin_trylock(&l));
	CHECK_EQ(lockcheck_expected, 0);
	spin_unlock(&l);
	CHECK_EQ(l.locked, 0);
	lockcheck_expected = 1;
	spin_unlock(&l);                       /* nobody holds it */
	CHECK_EQ(lockcheck_expected, 0);
	CHECK(spin_trylock(&l));
	spin_unlock(&l);
	lockcheck_expected = 0;
}

static spinlock_t other_l;
static void *take(void *arg)
{
	(void)arg;
	spin_lock(&other_l);
	return NULL;
}
static void *give(void *arg)
{
	(void)arg;
	spin_unlock(&other_l);
	return NULL;
}

TEST(lockcheck_fails_an_unlock_of_another_threads_lock)
{
	pthread_t t;
	memset(&other_l, 0, sizeof other_l);
	CHECK_EQ(pthread_create(&t, NULL, take, NULL), 0);
	pthread_join(t, NULL);
	CHECK_EQ(other_l.locked, 1);
	lockcheck_expected = 1;
	spin_unlock(&other_l);                 /* held by the other thread */
	CHECK_EQ(lockcheck_expected, 0);
	CHECK_EQ(other_l.locked, 1);           /* its holder keeps it */
	CHECK(!spin_trylock(&other_l));
	CHECK_EQ(pthread_create(&t, NULL, give, NULL), 0);
	pthread_join(t, NULL);
	CHECK_EQ(other_l.locked, 0);
	lockcheck_expected = 0;
}
