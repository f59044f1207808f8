/* Boot lines about every CPU (lib/cpusum.c, issue 35 item 9): one a CPU
 * up to reportcpus=auto's 16, else one an outcome with its count and its
 * CPUs by name, the first lines of each warning or error outcome kept. The
 * shape of the QEMU 10 run of the issue: 2 sockets x 72 cores x 2 threads,
 * APIC IDs 0-143 and 256-399, the boot CPU at 0; 501bce7 printed one
 * "smp: cpuN apic_id=M online" line for each of the 287 others. */
#include "test.h"
#include "../../lib/cpusum.h"
#include "../../lib/options.h"
#include "../../lib/printk.h"

static unsigned lines_with(const char *log, const char *needle)
{
	unsigned n = 0;
	for (const char *p = log; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static unsigned count_lines(const char *log)
{
	unsigned n = 0;
	for (; *log; log++)
		n += *log == '\n';
	return n;
}

/* The sum of the N in ": N CPU" over the lines that start with prefix
 * (the summary lines; a CPU's own line has no such count). */
static unsigned accounted(const char *log, const char *prefix)
{
	unsigned sum = 0;
	for (const char *line = log; *line;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			break;
		if (!strncmp(line, prefix, strlen(prefix)))
			for (const char *q = line; q + 2 < eol; q++) {
				unsigned n = 0;
				const char *d = q + 2;
				if (q[0] != ':' || q[1] != ' ' || *d < '0' || *d > '9')
					continue;
				while (*d >= '0' && *d <= '9')
					n = n * 10 + (unsigned)(*d++ - '0');
				if (!strncmp(d, " CPU", 4))
					sum += n;
			}
		line = eol + 1;
	}
	return sum;
}

/* The APs of the shape, in MADT order, as boot/smp.c place_cpus says them. */
static void shape_288(struct cpusum *s, bool faults)
{
	uint32_t cpu = 1;
	cpusum_begin(s, "smp: ", "APIC ID", 287);
	for (uint32_t id = 1; id < 400; id++) {
		if (id > 143 && id < 256)
			continue;
		if (faults && id == 9) {
			cpusum_add(s, LOG_ERR, id, "did not answer within 200000 us; left out",
				   "cpu%u (APIC ID %u) did not answer within 200000 us; left out", cpu, id);
			continue;
		}
		if (faults && id == 300) {
			cpusum_add(s, LOG_ERR, id, "answered with another APIC ID register (CPUID and the MADT disagree); left out",
				   "APIC ID %u answered with APIC ID register %u (CPUID and the MADT disagree); left out", id, 17);
			continue;
		}
		if (faults && id >= 398) {
			cpusum_add(s, LOG_INFO, id, "kept from the guest (limit 285 CPUs): parked",
				   "APIC ID %u kept from the guest (limit 285 CPUs): parked", id);
			continue;
		}
		cpusum_add(s, LOG_INFO, id, "online for the guest", "cpu%u apic_id=%u online", cpu, id);
		cpu++;
	}
	cpusum_end(s);
}

static struct cpusum sum;

TEST(cpusum_288_cpus_in_a_few_lines_every_one_accounted_for)
{
	cpusum_set_limit(REPORT_CPUS_AUTO);
	test_log_clear();
	shape_288(&sum, false);
	CHECK_STR(test_log(), "smp: online for the guest: 287 CPUs, APIC IDs 1-143,256-399\n");
	/* 501bce7: 287 lines "smp: cpuN apic_id=M online". */

	test_log_clear();
	shape_288(&sum, true);
	const char *log = test_log();
	CHECK(count_lines(log) <= 12);
	CHECK_EQ(accounted(log, "smp: "), 287);
	CHECK_CONTAINS(log, "smp: online for the guest: 283 CPUs, APIC IDs 1-8,10-143,256-299,301-397\n");
	/* The exceptions by name: their own lines and their outcome's. */
	CHECK_CONTAINS(log, "smp: cpu9 (APIC ID 9) did not answer within 200000 us; left out\n");
	CHECK_CONTAINS(log, "smp: did not answer within 200000 us; left out: 1 CPU, APIC ID 9\n");
	CHECK_CONTAINS(log, "smp: APIC ID 300 answered with APIC ID register 17");
	CHECK_CONTAINS(log, "; left out: 1 CPU, APIC ID 300\n");
	CHECK_CONTAINS(log, "smp: kept from the guest (limit 285 CPUs): parked: 2 CPUs, APIC IDs 398-399\n");
	CHECK_EQ(lines_with(log, "apic_id="), 0);
}

TEST(cpusum_small_machines_and_reportcpus_all_keep_every_line)
{
	cpusum_set_limit(REPORT_CPUS_AUTO);
	test_log_clear();
	cpusum_begin(&sum, "smp: ", "APIC ID", 3);
	for (uint32_t id = 1; id < 4; id++)
		cpusum_add(&sum, LOG_INFO, id, "online for the guest", "cpu%u apic_id=%u online", id, id);
	cpusum_end(&sum);
	CHECK_STR(test_log(), "smp: cpu1 apic_id=1 online\nsmp: cpu2 apic_id=2 online\nsmp: cpu3 apic_id=3 online\n");
	/* reportcpus=2 details two vCPUs in the end report, never fewer than
	 * 16 CPUs' lines at boot (an 8-CPU run keeps its lines). */
	cpusum_set_limit(2);
	CHECK(cpusum_detailed(16));
	CHECK(!cpusum_detailed(17));
	cpusum_set_limit(300);
	CHECK(cpusum_detailed(288));
	cpusum_set_limit(REPORT_CPUS_ALL);
	test_log_clear();
	shape_288(&sum, true);
	CHECK_EQ(lines_with(test_log(), "smp: cpu"), 284);
	CHECK_EQ(count_lines(test_log()), 287);
	cpusum_set_limit(REPORT_CPUS_AUTO);
}

TEST(cpusum_many_ranges_and_outcomes_bounded)
{
	cpusum_set_limit(REPORT_CPUS_AUTO);
	test_log_clear();
	/* Every other APIC ID: 100 ranges, the first CPUSUM_RANGES named. */
	cpusum_begin(&sum, "vmx: ", "cpu", 100);
	for (uint32_t i = 0; i < 100; i++)
		cpusum_add(&sum, LOG_INFO, 2 * i, "VMXON ok, VMXOFF ok", "cpu%u VMXON ok", 2 * i);
	cpusum_end(&sum);
	CHECK_STR(test_log(), "vmx: VMXON ok, VMXOFF ok: 100 CPUs, cpus 0,2,4,6,8,10,12,14 and 92 more ranges\n");
	/* More outcomes than CPUSUM_CLASSES: the rest each said, then counted. */
	test_log_clear();
	cpusum_begin(&sum, "vmx: ", "cpu", 40);
	for (uint32_t i = 0; i < 40; i++) {
		char cls[32];
		snprintf(cls, sizeof cls, "outcome %u", i % 10);
		cpusum_add(&sum, LOG_ERR, i, cls, "cpu%u %s", i, cls);
	}
	cpusum_end(&sum);
	const char *log = test_log();
	CHECK_CONTAINS(log, "vmx: outcome 0: 4 CPUs, cpus 0,10,20,30\n");
	CHECK_CONTAINS(log, "vmx: cpu39 outcome 9\n");
	CHECK_CONTAINS(log, "vmx: 8 CPUs with yet other outcomes, each said above\n");
	CHECK_EQ(accounted(log, "vmx: outcome") + 8, 40);
	/* An error outcome's first CPUSUM_EXCEPTION_LINES lines, no more. */
	CHECK_EQ(lines_with(log, "vmx: cpu") - 8, CPUSUM_EXCEPTION_LINES * CPUSUM_CLASSES);
}
