/* Thin wrappers over privileged x86 instructions. */
#ifndef LIB_CPU_H
#define LIB_CPU_H
#include "types.h"

#ifdef HV_HOST_TEST
/* Host unit tests answer CPUID as the CPU they model, not the build
 * machine (test/unit/cpu_fake.c). */
void cpuid_count(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d);
#else
static inline void cpuid_count(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}
#endif
#ifdef HV_HOST_TEST
/* Host unit tests stand in for these (test/unit/hw_fake.c). */
uint64_t rdmsr(uint32_t msr);
void wrmsr(uint32_t msr, uint64_t v);
uint64_t rdtsc(void);
#else
static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}
#endif
/* rdmsr that survives #GP: the exception handler skips the instruction and
 * sets the per-CPU fault flag. Returns false when the MSR does not exist. */
bool rdmsr_safe(uint32_t msr, uint64_t *v);
#ifndef HV_HOST_TEST
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#endif
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }
/* A port access of 1, 2 or 4 bytes (any other size: 4). */
static inline uint32_t port_in(uint16_t port, unsigned size)
{
	return size == 1 ? inb(port) : size == 2 ? inw(port) : inl(port);
}
static inline void port_out(uint16_t port, unsigned size, uint32_t v)
{
	if (size == 1)
		outb(port, (uint8_t)v);
	else if (size == 2)
		outw(port, (uint16_t)v);
	else
		outl(port, v);
}
static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
static inline uint64_t read_cr0(void) { uint64_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr4(void) { uint64_t v; __asm__ volatile("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr0(uint64_t v) { __asm__ volatile("mov %0, %%cr0" :: "r"(v) : "memory"); }
static inline void write_cr3(uint64_t v) { __asm__ volatile("mov %0, %%cr3" :: "r"(v) : "memory"); }
static inline void write_cr4(uint64_t v) { __asm__ volatile("mov %0, %%cr4" :: "r"(v) : "memory"); }
static inline uint64_t read_rflags(void) { uint64_t v; __asm__ volatile("pushfq; pop %0" : "=r"(v)); return v; }
/* One turn of a root-mode wait loop: interrupts on for one HLT, so that the
 * next interrupt (a sender's kick after its store) ends it, one pending
 * already ends it at once (STI's shadow covers the HLT); the root-mode
 * handler acknowledges it (lib/trap.c). Host tests stand in for it (what
 * other CPUs do meanwhile). */
#ifdef HV_HOST_TEST
void cpu_wait_turn(void);
#else
static inline void cpu_wait_turn(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }
#endif
#ifdef HV_HOST_TEST
__noreturn void cpu_halt_forever(void);
#else
static inline __noreturn void cpu_halt_forever(void) { for (;;) { cli(); hlt(); } }
#endif

#define X86_CR0_PE BIT(0)
#define X86_CR0_NE BIT(5)
#define X86_CR0_NW BIT(29)
#define X86_CR0_CD BIT(30)
#define X86_CR0_PG BIT(31)
#define X86_CR4_PAE BIT(5)
#define X86_CR4_PCIDE  BIT(17)
#define X86_CR4_PGE BIT(7)
#define X86_CR4_VMXE BIT(13)
#define X86_CR4_OSXSAVE BIT(18)
#define X86_CR4_PKE BIT(22)
#define X86_RFLAGS_IF BIT(9)
#define X86_RFLAGS_CF BIT(0)
#define X86_RFLAGS_ZF BIT(6)
#endif
