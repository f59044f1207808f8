/* hvcall report: asks the hypervisor for its exit report (VMCALL with
 * RAX = 0x48560001, allowed from user mode). Without a hypervisor VMCALL
 * raises #UD, which this program reports instead of crashing.
 * hvcall tsc: prints the TSC (the boot benchmark's "ticks to init"). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>

#define HC_HV_REPORT 0x48560001ul

static sigjmp_buf jb;

static void on_sigill(int sig)
{
	(void)sig;
	siglongjmp(jb, 1);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "tsc")) {
		uint32_t lo, hi;
		__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
		printf("guest: tsc=%llu\n", ((unsigned long long)hi << 32) | lo);
		return 0;
	}
	if (argc != 2 || strcmp(argv[1], "report")) {
		fprintf(stderr, "usage: hvcall report|tsc\n");
		return 2;
	}
	signal(SIGILL, on_sigill);
	if (sigsetjmp(jb, 1)) {
		printf("guest: hvcall report: no hypervisor (VMCALL raised #UD)\n");
		return 1;
	}
	uint64_t rax = HC_HV_REPORT;
	__asm__ volatile("vmcall" : "+a"(rax) :: "memory");
	printf("guest: hvcall report rc=%ld\n", (long)rax);
	return rax == 0 ? 0 : 1;
}
