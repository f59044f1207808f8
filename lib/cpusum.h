/* Boot lines about every CPU, summarised past a number of CPUs: on a small
 * machine one line a CPU, as always; on a large one (more CPUs than
 * reportcpus= details, as the end report) one line for each outcome with
 * its count and the CPUs it holds by name, ranges of IDs, and the lines of
 * the first few CPUs of each warning or error class. 448 CPUs at 115200
 * baud: a dozen lines instead of some 2,000. */
#ifndef LIB_CPUSUM_H
#define LIB_CPUSUM_H
#include "types.h"

#define CPUSUM_CLASSES 8         /* outcomes told apart; more are counted as "other" */
#define CPUSUM_RANGES 8          /* ID ranges named per outcome; more are counted */
#define CPUSUM_EXCEPTION_LINES 4 /* a warning or error outcome's own lines, in the summary too */
#define CPUSUM_CLASS_LEN 112

struct cpusum_class {
	char name[CPUSUM_CLASS_LEN];
	int level;                       /* the printk level of its lines */
	uint32_t count;
	uint32_t nranges;                /* ranges in all (the first CPUSUM_RANGES kept) */
	uint32_t lo[CPUSUM_RANGES], hi[CPUSUM_RANGES];
	uint32_t last;                   /* the last ID: a next one extends its range */
};

struct cpusum {
	const char *prefix;              /* "smp: " */
	const char *id_name;             /* what the IDs are: "APIC ID", "cpu" */
	bool detail;                     /* one line a CPU */
	uint32_t nclass, other;          /* outcomes; CPUs in outcomes beyond CPUSUM_CLASSES */
	struct cpusum_class c[CPUSUM_CLASSES];
};

/* How many CPUs are detailed one by one (reportcpus=: REPORT_CPUS_AUTO is
 * REPORT_CPUS_AUTO_MAX, REPORT_CPUS_ALL every one). */
void cpusum_set_limit(uint32_t report_cpus);
/* Whether a step about total CPUs says each one (within the limit). */
bool cpusum_detailed(uint32_t total);
/* total: how many CPUs this step reports; detail when within the limit. */
void cpusum_begin(struct cpusum *s, const char *prefix, const char *id_name, uint32_t total);
/* One CPU's outcome: cls names it (shared by every CPU it fits), the
 * line (after the prefix) says it for this CPU. In detail printed now;
 * else counted under cls, and printed as well for the first
 * CPUSUM_EXCEPTION_LINES CPUs of a warning or error outcome. */
void cpusum_add(struct cpusum *s, int level, uint32_t id, const char *cls, const char *fmt, ...) __printf(5, 6);
/* In summary: one line an outcome, "<prefix><cls>: N CPUs, <id_name>s 1-143,256-399". */
void cpusum_end(struct cpusum *s);
#endif
