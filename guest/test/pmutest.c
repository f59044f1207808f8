/* The patched Bochs's PMU as Linux's perf uses it (test/run-tests.sh,
 * bochs_pmu; docs/bochs.md): one perf group around a loop of exactly
 * 2,000,000 user-mode instructions (DEC and JNZ, 1,000,000 times), read
 * after it. Instructions retired in user mode twice (the generic event,
 * which Linux puts on fixed counter 0, and raw event C0H/00H on a GP
 * counter), instructions retired in kernel mode (raw C0H, OS only), unhalted
 * core cycles in user mode (raw 3CH/00H) and reference cycles in user mode
 * (the generic event: fixed counter 2). Prints one line:
 *   pmutest: ins_u=N raw_ins_u=N ins_k=N cyc_u=N ref_u=N running=0|1
 * (running: every event counted the whole window), or "pmutest: open ..."
 * with the errno of the event that could not be opened. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(uint32_t type, uint64_t config, int exclude_kernel, int exclude_user, int group)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = type;
	a.config = config;
	a.disabled = group < 0;
	a.exclude_kernel = exclude_kernel;
	a.exclude_user = exclude_user;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

int main(void)
{
	static const char *const names[] = { "ins_u", "raw_ins_u", "ins_k", "cyc_u", "ref_u" };
	int fd[5];
	fd[0] = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, 0, -1);
	fd[1] = open_event(PERF_TYPE_RAW, 0x00c0, 1, 0, fd[0]);
	fd[2] = open_event(PERF_TYPE_RAW, 0x00c0, 0, 1, fd[0]);
	fd[3] = open_event(PERF_TYPE_RAW, 0x003c, 1, 0, fd[0]);
	fd[4] = open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 1, 0, fd[0]);
	for (int i = 0; i < 5; i++)
		if (fd[i] < 0) {
			printf("pmutest: open %s: errno %d (%s)\n", names[i], errno, strerror(errno));
			return 1;
		}
	ioctl(fd[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	__asm__ volatile("mov $1000000, %%rcx\n1: dec %%rcx\n jnz 1b" ::: "rcx", "cc");
	ioctl(fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	unsigned long long v[5];
	int running = 1;
	for (int i = 0; i < 5; i++) {
		uint64_t r[3] = { 0, 0, 0 };   /* value, time enabled, time running */
		if (read(fd[i], r, sizeof r) != (ssize_t)sizeof r) {
			printf("pmutest: read %s: errno %d\n", names[i], errno);
			return 1;
		}
		v[i] = r[0];
		if (r[2] != r[1]) running = 0;
	}
	printf("pmutest: ins_u=%llu raw_ins_u=%llu ins_k=%llu cyc_u=%llu ref_u=%llu running=%d\n",
	       v[0], v[1], v[2], v[3], v[4], running);
	return 0;
}
