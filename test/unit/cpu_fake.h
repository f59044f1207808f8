/* The CPU the host tests run the hypervisor's code on, for what it asks of
 * the processor itself (lib/cpu.h under HV_HOST_TEST): CPUID and the MSRs
 * rdmsr_safe finds. Not the build machine's: the tests choose its answers.
 * Reset before every test to the reference CPU (cpu_fake.c says which). */
#ifndef TEST_UNIT_CPU_FAKE_H
#define TEST_UNIT_CPU_FAKE_H
#include <stdint.h>
#include <stdbool.h>

void cpu_fake_reset(void);
/* CPUID leaf 'leaf', subleaf 'sub' answers a, b, c, d from now on. */
void cpu_fake_cpuid(uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t d);
/* rdmsr_safe(msr) reads 'val' (present) or faults (not present, the default). */
void cpu_fake_msr(uint32_t msr, bool present, uint64_t val);
#endif
