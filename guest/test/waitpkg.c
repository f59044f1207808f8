/* waitpkg [ROUNDS [TICKS]]: TPAUSE and UMONITOR/UMWAIT in user mode, as
 * the guest's own CPU runs them (issue 45). Pinned to one CPU, it times
 * ROUNDS TPAUSEs (C0.1) and ROUNDS UMWAITs, each to a deadline TICKS TSC
 * ticks ahead, and counts this vCPU's VM exits over each window (VMCALL
 * 0x48560003, as hvcall; without a hypervisor VMCALL raises #UD and the
 * count says "bare"), and over a spin of the same length for comparison:
 * an instruction that exited would add ROUNDS exits. Prints
 *   guest: waitpkg cpu=N tpause n=R waited=W avg=A cf=C exits=+E umwait n=R waited=W avg=A exits=+E spin exits=+S
 * where W counts the waits that lasted at least half their TICKS. Exit 0
 * when both waited every round (a wait ended early by an interrupt is
 * allowed: W >= R/2), 2 when CPUID.(7,0):ECX.WAITPKG is clear, 1 else. */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cpuid.h>
#include <x86intrin.h>

#define HC_HV_EXITS 0x48560003ul

static sigjmp_buf jb;
static void on_sigill(int sig) { (void)sig; siglongjmp(jb, 1); }

static long long exits_of(uint32_t apic_id)
{
	if (sigsetjmp(jb, 1))
		return -1;
	uint64_t rax = HC_HV_EXITS, rbx = apic_id;
	__asm__ volatile("vmcall" : "+a"(rax), "+b"(rbx) :: "memory");
	return (long long)rax;
}

static volatile uint64_t line[8] __attribute__((aligned(64)));

__attribute__((target("waitpkg"))) static unsigned tpause_to(uint64_t deadline)
{
	return _tpause(1, deadline);          /* C0.1; CF: the OS time limit ended it */
}

__attribute__((target("waitpkg"))) static unsigned umwait_to(uint64_t deadline)
{
	_umonitor((void *)line);
	return _umwait(1, deadline);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	uint64_t ticks = argc > 2 ? strtoull(argv[2], NULL, 0) : 20000;
	unsigned a, b, c, d;
	__cpuid_count(7, 0, a, b, c, d);
	if (!(c & (1u << 5))) {
		printf("guest: waitpkg absent (CPUID.(7,0):ECX[5] = 0)\n");
		return 2;
	}
	int cpu = sched_getcpu();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
	__cpuid_count(0xb, 0, a, b, c, d);
	uint32_t id = d;                      /* this CPU's x2APIC ID */
	signal(SIGILL, on_sigill);

	int waited[2] = { 0, 0 }, cf = 0;
	uint64_t total[2] = { 0, 0 };
	long long ex[3];
	for (int k = 0; k < 3; k++) {
		long long e0 = exits_of(id);
		for (int i = 0; i < rounds; i++) {
			uint64_t t0 = __rdtsc(), t1;
			if (k == 0)
				cf += tpause_to(t0 + ticks);
			else if (k == 1)
				umwait_to(t0 + ticks);
			else
				while (__rdtsc() < t0 + ticks)
					;
			t1 = __rdtsc();
			if (k < 2) {
				total[k] += t1 - t0;
				waited[k] += t1 - t0 >= ticks / 2;
			}
		}
		long long e1 = exits_of(id);
		ex[k] = e0 < 0 || e1 < 0 ? -1 : e1 - e0;
	}
	char e[3][24];
	for (int k = 0; k < 3; k++)
		snprintf(e[k], sizeof e[k], ex[k] < 0 ? "bare" : "+%lld", ex[k]);
	printf("guest: waitpkg cpu=%d tpause n=%d waited=%d avg=%llu cf=%d exits=%s umwait n=%d waited=%d avg=%llu exits=%s spin exits=%s\n",
	       cpu, rounds, waited[0], (unsigned long long)(total[0] / rounds), cf, e[0], rounds, waited[1],
	       (unsigned long long)(total[1] / rounds), e[1], e[2]);
	return waited[0] >= rounds / 2 && waited[1] >= rounds / 2 ? 0 : 1;
}
