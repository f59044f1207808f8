/* hvcall report: asks the hypervisor for its exit report (VMCALL with
 * RAX = 0x48560001, allowed from user mode). Without a hypervisor VMCALL
 * raises #UD, which this program reports instead of crashing.
 * hvcall tsc: prints the TSC (the boot benchmark's "ticks to init").
 * hvcall exits ID...: prints "ID:N" per x2APIC ID, N the VM exits of that
 * vCPU so far (RAX = 0x48560003, RBX = ID; -22 for an ID that is no vCPU).
 * hvcall verdict pass|fail: tells the hypervisor how the guest's checks
 * went (RAX = 0x48560004, RBX = 1 or 0), before the power-off.
 * hvcall idle SECONDS ID...: the exits of each vCPU while this one process
 * sleeps SECONDS (no exec inside the window: a static program's start costs
 * dozens of CPUID exits); prints "guest: idle seconds=T apicID=+E (R/s) ...".
 * The window holds this process's own second round of VMCALLs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>

#define HC_HV_REPORT 0x48560001ul
#define HC_HV_EXITS  0x48560003ul
#define HC_HV_VERDICT 0x48560004ul

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
	if (argc == 3 && !strcmp(argv[1], "verdict") && (!strcmp(argv[2], "pass") || !strcmp(argv[2], "fail"))) {
		signal(SIGILL, on_sigill);
		if (sigsetjmp(jb, 1)) {
			printf("guest: hvcall verdict: no hypervisor (VMCALL raised #UD)\n");
			return 1;
		}
		uint64_t rax = HC_HV_VERDICT, rbx = !strcmp(argv[2], "pass");
		__asm__ volatile("vmcall" : "+a"(rax), "+b"(rbx) :: "memory");
		printf("guest: hvcall verdict %s rc=%ld\n", argv[2], (long)rax);
		return rax == 0 ? 0 : 1;
	}
	if (argc >= 4 && !strcmp(argv[1], "idle")) {
		enum { MAXIDS = 64 };
		long long e0[MAXIDS], e1[MAXIDS];
		int n = argc - 3 < MAXIDS ? argc - 3 : MAXIDS;
		double secs = strtod(argv[2], NULL);
		struct timespec t0, t1, d = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
		signal(SIGILL, on_sigill);
		if (sigsetjmp(jb, 1)) {
			printf("guest: idle: no hypervisor (VMCALL raised #UD)\n");
			return 1;
		}
		for (int pass = 0; pass < 2; pass++) {
			if (pass)
				nanosleep(&d, NULL);
			clock_gettime(CLOCK_MONOTONIC, pass ? &t1 : &t0);
			for (int i = 0; i < n; i++) {
				uint64_t rax = HC_HV_EXITS, rbx = strtoull(argv[3 + i], NULL, 0);
				__asm__ volatile("vmcall" : "+a"(rax), "+b"(rbx) :: "memory");
				(pass ? e1 : e0)[i] = (long long)rax;
			}
		}
		double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		printf("guest: idle seconds=%.3f", s);
		for (int i = 0; i < n; i++)
			printf(" apic%s=+%lld (%.1f/s)", argv[3 + i], e1[i] - e0[i], s > 0 ? (double)(e1[i] - e0[i]) / s : 0.0);
		printf("\n");
		return 0;
	}
	if (argc < 2 || (strcmp(argv[1], "report") && strcmp(argv[1], "exits")) ||
	    (!strcmp(argv[1], "report") && argc != 2)) {
		fprintf(stderr, "usage: hvcall report|tsc|exits APICID...|idle SECONDS APICID...|verdict pass|fail\n");
		return 2;
	}
	signal(SIGILL, on_sigill);
	if (!strcmp(argv[1], "exits")) {
		if (sigsetjmp(jb, 1)) {
			printf("no-hypervisor\n");
			return 1;
		}
		for (int i = 2; i < argc; i++) {
			uint64_t rax = HC_HV_EXITS, rbx = strtoull(argv[i], NULL, 0);
			__asm__ volatile("vmcall" : "+a"(rax), "+b"(rbx) :: "memory");
			if ((int64_t)rax < 0) {
				fprintf(stderr, "hvcall exits %s: error %lld\n", argv[i], (long long)rax);
				return 1;
			}
			printf("%s%s:%lld", i > 2 ? " " : "", argv[i], (long long)rax);
		}
		printf("\n");
		return 0;
	}
	if (sigsetjmp(jb, 1)) {
		printf("guest: hvcall report: no hypervisor (VMCALL raised #UD)\n");
		return 1;
	}
	uint64_t rax = HC_HV_REPORT;
	__asm__ volatile("vmcall" : "+a"(rax) :: "memory");
	printf("guest: hvcall report rc=%ld\n", (long)rax);
	return rax == 0 ? 0 : 1;
}
