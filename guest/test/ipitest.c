/* ipitest: makes inter-processor interrupts flow between CPU 0 and CPU 1.
 *
 * Two threads, pinned to CPU 0 and CPU 1, hand a token back and forth through a
 * shared variable. The waiting side sleeps in futex(FUTEX_WAIT), so every
 * hand-off wakes a task on the other, idle CPU: the kernel sends a reschedule
 * or a function-call IPI for that (RES / CAL in /proc/interrupts).
 *
 *   ipitest [ROUNDS [TIMEOUT_SECONDS]]      defaults: 2000 rounds, 120 s
 *
 * Prints (for the hypervisor's tests, which grep these):
 *   guest: ipi RES before=N after=N
 *   guest: ipi CAL before=N after=N
 *   guest: ipitest rounds=N ok           or   guest: ipitest FAILED: why
 * Exit status 0 ok, 1 failed, 2 cannot run (fewer than 2 CPUs, bad args).
 * Built with gcc -static -O2 -pthread by tools/mkinitrd.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int turn;          /* whose move it is: 0 = thread on CPU 0, 1 = thread on CPU 1 */
static atomic_int stop;
static long rounds = 2000;
static double deadline;          /* CLOCK_MONOTONIC seconds */

struct worker {
	int id, cpu;
	long done;
	long wrong_cpu;              /* rounds run on a CPU other than the pinned one */
	const char *error;
	pthread_t thread;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long futex(atomic_int *addr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (e) {
		w->error = strerror(e);
		atomic_store(&stop, 1);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL);
		return NULL;
	}
	for (long i = 0; i < rounds; i++) {
		while (atomic_load(&turn) != w->id) {
			if (atomic_load(&stop))
				return NULL;
			struct timespec ts = { 0, 200 * 1000 * 1000 };
			/* Sleeps only while it is still the other side's move. */
			futex(&turn, FUTEX_WAIT_PRIVATE, 1 - w->id, &ts);
			if (now() > deadline) {
				w->error = "timed out waiting for the other CPU";
				atomic_store(&stop, 1);
				futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL);
				return NULL;
			}
		}
		if (sched_getcpu() != w->cpu)
			w->wrong_cpu++;
		w->done++;
		atomic_store(&turn, 1 - w->id);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
	return NULL;
}

/* Sum over CPUs of the /proc/interrupts line named 'name' ("RES", "CAL"); the
 * raw line goes to 'line'. Returns -1 when there is no such line. */
static long long irq_count(const char *name, char *line, size_t linesz)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char buf[4096];
	long long sum = -1;
	size_t nlen = strlen(name);
	if (line && linesz)
		line[0] = 0;
	if (!f)
		return -1;
	while (fgets(buf, sizeof buf, f)) {
		char *p = buf;
		while (*p == ' ')
			p++;
		if (strncmp(p, name, nlen) || p[nlen] != ':')
			continue;
		if (line && linesz) {
			/* squeeze runs of blanks for a compact log line */
			size_t o = 0;
			for (char *q = p; *q && *q != '\n' && o + 1 < linesz; q++)
				if (!(*q == ' ' && o && line[o - 1] == ' '))
					line[o++] = *q;
			line[o] = 0;
		}
		sum = 0;
		p += nlen + 1;
		for (;;) {
			char *end;
			long long v = strtoll(p, &end, 10);
			if (end == p)
				break;
			sum += v;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

int main(int argc, char **argv)
{
	double timeout = 120;
	if (argc > 1) {
		char *end;
		rounds = strtol(argv[1], &end, 0);
		if (*end || rounds <= 0) {
			fprintf(stderr, "usage: ipitest [ROUNDS [TIMEOUT_SECONDS]]\n");
			return 2;
		}
	}
	if (argc > 2) {
		timeout = atof(argv[2]);
		if (timeout <= 0) {
			fprintf(stderr, "usage: ipitest [ROUNDS [TIMEOUT_SECONDS]]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2) {
		printf("guest: ipitest FAILED: needs 2 online CPUs, have %ld\n", ncpu);
		return 2;
	}

	char line_before[2][512], line_after[2][512];
	long long res0 = irq_count("RES", line_before[0], sizeof line_before[0]);
	long long cal0 = irq_count("CAL", line_before[1], sizeof line_before[1]);
	printf("guest: ipitest start rounds=%ld cpus=0,1 timeout=%.0fs\n", rounds, timeout);

	double t0 = now();
	deadline = t0 + timeout;
	struct worker w[2] = { { .id = 0, .cpu = 0 }, { .id = 1, .cpu = 1 } };
	atomic_store(&turn, 0);
	for (int i = 0; i < 2; i++) {
		int e = pthread_create(&w[i].thread, NULL, run, &w[i]);
		if (e) {
			printf("guest: ipitest FAILED: pthread_create: %s\n", strerror(e));
			return 1;
		}
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	double t1 = now();

	long long res1 = irq_count("RES", line_after[0], sizeof line_after[0]);
	long long cal1 = irq_count("CAL", line_after[1], sizeof line_after[1]);
	printf("guest: interrupts before: %s\n", line_before[0]);
	printf("guest: interrupts before: %s\n", line_before[1]);
	printf("guest: interrupts after: %s\n", line_after[0]);
	printf("guest: interrupts after: %s\n", line_after[1]);
	printf("guest: ipi RES before=%lld after=%lld\n", res0, res1);
	printf("guest: ipi CAL before=%lld after=%lld\n", cal0, cal1);

	for (int i = 0; i < 2; i++) {
		if (w[i].error) {
			printf("guest: ipitest FAILED: CPU %d: %s (rounds done %ld/%ld)\n",
			       w[i].cpu, w[i].error, w[i].done, rounds);
			return 1;
		}
		if (w[i].done != rounds) {
			printf("guest: ipitest FAILED: CPU %d did %ld/%ld rounds\n", w[i].cpu, w[i].done, rounds);
			return 1;
		}
		if (w[i].wrong_cpu) {
			printf("guest: ipitest FAILED: thread pinned to CPU %d ran %ld rounds elsewhere\n",
			       w[i].cpu, w[i].wrong_cpu);
			return 1;
		}
	}
	printf("guest: ipitest time=%.3fs per_round=%.1fus\n", t1 - t0, (t1 - t0) * 1e6 / rounds);
	printf("guest: ipitest rounds=%ld ok\n", rounds);
	return 0;
}
