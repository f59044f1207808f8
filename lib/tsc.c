/* TSC calibration against the 8254 PIT. */
#include "tsc.h"
#include "cpu.h"
#include "printk.h"

uint64_t tsc_khz;

#define PIT_HZ 1193182ull
#define PIT_CH2 0x42
#define PIT_CMD 0x43
#define PIT_GATE 0x61
#define PIT_WINDOW_MAX_TSC 100000000ull

/* One window of PIT channel 2 in mode 0 (counts down, then OUT goes high). */
static uint64_t pit_window_tsc(uint16_t count)
{
	uint8_t gate = inb(PIT_GATE);
	outb(PIT_GATE, (gate & ~0x02) | 0x01);  /* speaker off, gate on */
	outb(PIT_CMD, 0xb0);                    /* channel 2, lobyte/hibyte, mode 0 */
	outb(PIT_CH2, count & 0xff);
	outb(PIT_CH2, count >> 8);
	uint64_t t0 = rdtsc();
	/* Bounded by the TSC, not by port reads (each of which can take a
	 * microsecond): a window of 10 ms that has not ended after 10^8 ticks
	 * (10 ms at 10 GHz, 2 s on a 50 MHz emulated TSC) is a PIT that does
	 * not count (channel 2 gated off, or no PIT). */
	while (!(inb(PIT_GATE) & 0x20))
		if (rdtsc() - t0 > PIT_WINDOW_MAX_TSC)
			return 0;
	return rdtsc() - t0;
}

void tsc_calibrate(void)
{
	uint32_t a, b, c, d, max;
	uint64_t cpuid_khz = 0;
	const uint16_t count = 11932;           /* 10 ms */
	uint64_t best = ~0ull;

	for (int i = 0; i < 3; i++) {
		uint64_t t = pit_window_tsc(count);
		if (!t)
			break;             /* a PIT that did not count once will not: no more waiting */
		if (t < best)
			best = t;
	}
	cpuid_count(0, 0, &max, &b, &c, &d);
	if (max >= 0x15) {
		cpuid_count(0x15, 0, &a, &b, &c, &d);
		if (a && b && c)
			cpuid_khz = (uint64_t)c * b / a / 1000;
	}
	if (best != ~0ull) {
		tsc_khz = best * PIT_HZ / count / 1000;
		pr_info("tsc: %llu kHz (calibrated against the PIT; CPUID 0x15 says %llu kHz)\n",
			(unsigned long long)tsc_khz, (unsigned long long)cpuid_khz);
	} else if (cpuid_khz) {
		tsc_khz = cpuid_khz;
		pr_warn("tsc: PIT did not count; using CPUID 0x15: %llu kHz\n", (unsigned long long)tsc_khz);
	} else {
		tsc_khz = 1000000;
		pr_warn("tsc: no PIT and no CPUID 0x15; assuming 1 GHz\n");
	}
}

void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + tsc_from_us(us);
	while (rdtsc() < end)
		cpu_relax();
}
