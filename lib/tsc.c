/* The TSC rate: CPUID 0x15/0x16 and the 8254 PIT gathered here, weighed by
 * tsc_choose() (lib/tsc_choose.c, which states the rule). */
#include "tsc.h"
#include "cpu.h"
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

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + tsc_from_us(us);
	while (rdtsc() < end)
		cpu_relax();
}
