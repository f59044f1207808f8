/* What the fuzz targets link instead of the hypervisor's console and panic:
 * output is dropped, and a panic is a finding (abort, so libFuzzer keeps
 * the input). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "../../lib/spinlock.h"

int log_level = 3;
volatile bool hv_panicking;

void printk_write(const char *s, size_t n) { (void)s; (void)n; }

void printk_level(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);   /* the format is still exercised */
	va_end(ap);
}

void panic(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

bool rdmsr_safe(uint32_t msr, uint64_t *v) { (void)msr; *v = 0; return false; }

/* The privileged instructions (lib/cpu.h under HV_HOST_TEST): no MSRs, a TSC at 0. */
uint64_t rdmsr(uint32_t msr) { (void)msr; return 0; }
void wrmsr(uint32_t msr, uint64_t v) { (void)msr; (void)v; }
uint64_t rdtsc(void) { return 0; }
/* CPUID (lib/cpu.h declares it under HV_HOST_TEST): the build machine's. */
void cpuid_count(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

/* The host build's checked spinlocks (lib/spinlock.h): the fuzz targets
 * are single-threaded, so plain test-and-set without the checks of
 * test/unit/lockcheck.c. */
void spin_lock_at(spinlock_t *l, const char *file, int line)
{
	(void)file, (void)line;
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		;
}
bool spin_trylock_at(spinlock_t *l, const char *file, int line)
{
	(void)file, (void)line;
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}
void spin_unlock_at(spinlock_t *l, const char *file, int line)
{
	(void)file, (void)line;
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
