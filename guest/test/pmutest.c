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
 * with the errno of the event that could not be opened.
 *
 * "pmutest sample": perf record's way (a sampling event, its ring buffer
 * read by mmap): user-mode instructions retired sampled every 10007, the
 * instruction pointer recorded, around two loops of known length in two
 * functions of their own: spin_a runs 2,000,000 instructions, spin_b
 * 1,000,000. Each sample is a counter overflow, a PMI through the LVTPC
 * (an NMI, as Linux programs it) and perf's handler writing the record.
 * Prints one line:
 *   pmutest: samples=N in_a=N in_b=N other=N lost=N
 * (other: samples outside both functions; lost: records perf dropped).
 *
 * "pmutest spin": the two loops alone, for Debian's perf to time and sample
 * from outside (tools/deb-check-init: perf stat, perf record). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

/* spin_a and spin_b: RDI iterations of DEC and JNZ (two instructions
 * each), their extents marked by the *_end labels. */
extern void spin_a(uint64_t n), spin_b(uint64_t n);
extern const char spin_a_end[], spin_b_end[];
__asm__(".text\n"
	".globl spin_a\n.type spin_a,@function\nspin_a:\n mov %rdi, %rcx\n1: dec %rcx\n jnz 1b\n ret\n"
	".globl spin_a_end\nspin_a_end:\n"
	".globl spin_b\n.type spin_b,@function\nspin_b:\n mov %rdi, %rcx\n1: dec %rcx\n jnz 1b\n ret\n"
	".globl spin_b_end\nspin_b_end:\n");

static int sample(void)
{
	enum { DATA_PAGES = 16 };
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.sample_period = 10007;
	a.sample_type = PERF_SAMPLE_IP;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("pmutest: open sample: errno %d (%s)\n", errno, strerror(errno));
		return 1;
	}
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pg * (1 + DATA_PAGES);
	struct perf_event_mmap_page *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		printf("pmutest: mmap sample: errno %d (%s)\n", errno, strerror(errno));
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	spin_a(1000000);
	spin_b(500000);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	const unsigned char *data = (const unsigned char *)m + pg;
	uint64_t size = (uint64_t)pg * DATA_PAGES, pos = m->data_tail;
	unsigned samples = 0, in_a = 0, in_b = 0, other = 0, lost = 0;
	if (head - pos > size) {
		printf("pmutest: the ring buffer wrapped (%llu bytes)\n", (unsigned long long)(head - pos));
		return 1;
	}
	while (pos < head) {
		struct perf_event_header h;
		unsigned char rec[64];
		for (size_t i = 0; i < sizeof h; i++)
			((unsigned char *)&h)[i] = data[(pos + i) % size];
		if (h.size < sizeof h || h.size > sizeof rec || pos + h.size > head) {
			printf("pmutest: a bad record (type %u, size %u) at %llu\n", h.type, h.size, (unsigned long long)pos);
			return 1;
		}
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(pos + i) % size];
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 8) {
			uint64_t ip;
			memcpy(&ip, rec + sizeof h, 8);
			samples++;
			if (ip >= (uint64_t)(uintptr_t)spin_a && ip < (uint64_t)(uintptr_t)spin_a_end) in_a++;
			else if (ip >= (uint64_t)(uintptr_t)spin_b && ip < (uint64_t)(uintptr_t)spin_b_end) in_b++;
			else other++;
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
			uint64_t n;
			memcpy(&n, rec + sizeof h + 8, 8);
			lost += (unsigned)n;
		}
		pos += h.size;
	}
	printf("pmutest: samples=%u in_a=%u in_b=%u other=%u lost=%u\n", samples, in_a, in_b, other, lost);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "sample") == 0)
		return sample();
	if (argc > 1 && strcmp(argv[1], "spin") == 0) {
		spin_a(1000000);
		spin_b(500000);
		return 0;
	}
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
