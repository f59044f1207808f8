/* The TSC rate: CPUID 0x15/0x16 and the 8254 PIT gathered here, weighed by
 * tsc_choose() (lib/tsc_choose.c, which states the rule). */
#include "tsc.h"
#include "cpu.h"
#include "msr.h"
#include "printk.h"

uint64_t tsc_khz;
enum tsc_source tsc_source;

#define PIT_CH2 0x42
#define PIT_CMD 0x43
#define PIT_GATE 0x61                   /* NMI status and control: speaker gate, OUT2 */
#define PIT_GATE_CH2 0x01
#define PIT_GATE_SPEAKER 0x02
#define PIT_GATE_OUT2 0x20
#define PIT_CMD_CH2_LOHI_MODE0 0xb0    /* channel 2, lobyte/hibyte, mode 0, binary */
#define PIT_WINDOW_COUNT 11932          /* 10 ms of TSC_PIT_HZ */

/* One window of PIT channel 2 in mode 0: OUT goes low when the mode is
 * written and high when the count reaches 0. Bounded by the TSC, not by port
 * reads (each can take a microsecond): a window longer than the fastest TSC
 * could make it is a PIT that does not count (channel 2 gated off, or none).
 * Counts the reads, which tell an emulator's instruction clock apart. */
static enum tsc_pit_end pit_window(uint16_t count, uint64_t *ticks, uint32_t *reads)
{
	const uint64_t max = TSC_MAX_KHZ * 1000 * count / TSC_PIT_HZ;
	uint8_t gate = inb(PIT_GATE);
	uint32_t n = 0;

	outb(PIT_GATE, (gate & ~PIT_GATE_SPEAKER) | PIT_GATE_CH2);
	outb(PIT_CMD, PIT_CMD_CH2_LOHI_MODE0);
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	uint64_t t0 = rdtsc();
	for (;;) {
		bool out = inb(PIT_GATE) & PIT_GATE_OUT2;
		n++;
		if (out)
			break;
		if (rdtsc() - t0 > max)
			return TSC_PIT_STUCK;
	}
	*ticks = rdtsc() - t0;
	*reads = n;
	return n == 1 ? TSC_PIT_AT_ONCE : TSC_PIT_COUNTED;
}

void tsc_calibrate(void)
{
	struct tsc_inputs in = { .pit_count = PIT_WINDOW_COUNT };
	uint32_t b, c, d;
	char why[400];

	in.pit_end = TSC_PIT_COUNTED;
	for (int i = 0; i < TSC_PIT_WINDOWS && in.pit_end == TSC_PIT_COUNTED; i++) {
		in.pit_end = pit_window(in.pit_count, &in.pit_ticks[i], &in.pit_reads[i]);
		if (in.pit_end == TSC_PIT_COUNTED)
			in.pit_windows++;
	}
	cpuid_count(0, 0, &in.cpuid_max, &b, &c, &d);
	if (in.cpuid_max >= 0x15)
		cpuid_count(0x15, 0, &in.l15_eax, &in.l15_ebx, &in.l15_ecx, &d);
	if (in.cpuid_max >= 0x16)
		cpuid_count(0x16, 0, &in.l16_eax, &b, &c, &d);

	struct tsc_choice ch = tsc_choose(&in, why, sizeof why);
	tsc_khz = ch.khz;
	tsc_source = ch.source;
	if (ch.warn)
		pr_warn("tsc: %s\n", why);
	else
		pr_info("tsc: %s\n", why);
}

/* CPUID.(EAX=07H,ECX=0):EBX[1]: "IA32_TSC_ADJUST MSR is supported if 1"
 * (SDM Vol. 2A, CPUID). */
#define CPUID7_EBX_TSC_ADJUST BIT(1)

static bool adjust_have;
static int64_t adjust_boot;
static uint32_t adjust_seen, adjust_set;
static uint64_t adjust_max_diff;

void tsc_adjust_record(void)
{
	uint32_t a, b, c, d, max;
	uint64_t v;

	cpuid_count(0, 0, &max, &b, &c, &d);
	if (max < 7)
		return;
	cpuid_count(7, 0, &a, &b, &c, &d);
	if (!(b & CPUID7_EBX_TSC_ADJUST) || !rdmsr_safe(MSR_IA32_TSC_ADJUST, &v))
		return;
	adjust_boot = (int64_t)v;
	adjust_have = true;
}

/* "If an execution of WRMSR to the IA32_TSC_ADJUST MSR adds (or subtracts)
 * value X from that MSR, the logical processor also adds (or subtracts)
 * value X from the TSC" (SDM Vol. 3B, "Time-Stamp Counter Adjustment"). The
 * TSCs start together at reset; what firmware added on one socket and not
 * the other shows here, and setting every CPU's equal to the boot CPU's
 * takes it away, as Linux does natively (its tsc_sync.c). */
void tsc_adjust_align(void)
{
	uint64_t v, diff, seen;

	if (!adjust_have || !rdmsr_safe(MSR_IA32_TSC_ADJUST, &v))
		return;
	__atomic_fetch_add(&adjust_seen, 1, __ATOMIC_RELAXED);
	if ((int64_t)v == adjust_boot)
		return;
	wrmsr(MSR_IA32_TSC_ADJUST, (uint64_t)adjust_boot);
	diff = (int64_t)v > adjust_boot ? v - (uint64_t)adjust_boot : (uint64_t)adjust_boot - v;
	__atomic_fetch_add(&adjust_set, 1, __ATOMIC_RELAXED);
	seen = __atomic_load_n(&adjust_max_diff, __ATOMIC_RELAXED);
	while (diff > seen && !__atomic_compare_exchange_n(&adjust_max_diff, &seen, diff, false,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void tsc_adjust_report(void)
{
	if (!adjust_have) {
		pr_info("tsc: no IA32_TSC_ADJUST (CPUID.7.0:EBX[1] = 0): each CPU's TSC as firmware left it\n");
		return;
	}
	if (adjust_set)
		pr_warn("tsc: IA32_TSC_ADJUST: %u of %u other CPUs differed from the boot CPU's %lld, by up to %llu ticks: set equal\n",
			adjust_set, adjust_seen, (long long)adjust_boot, (unsigned long long)adjust_max_diff);
	else
		pr_info("tsc: IA32_TSC_ADJUST %lld on the boot CPU and the %u others\n", (long long)adjust_boot, adjust_seen);
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + tsc_from_us(us);
	while (rdtsc() < end)
		cpu_relax();
}
