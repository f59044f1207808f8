/* Which TSC rate to believe. The rule, per kind of machine:
 *
 *  - Hardware with an exact CPUID 0x15 (ECX, the crystal, non-zero): the
 *    rate is ECX x EBX / EAX (SDM Vol. 2A, CPUID, "Time Stamp Counter and
 *    Nominal Core Crystal Clock Information Leaf": "TSC frequency" = "core
 *    crystal clock frequency" * EBX/EAX; Vol. 3B, "Determining the Processor
 *    Base Frequency"). The PIT only cross-checks it: beyond TSC_AGREE_BP it
 *    is refused by name, never taken.
 *  - Hardware without the crystal (Skylake-SP and its successors up to
 *    Ice Lake-SP report ECX = 0): the PIT measures, CPUID 0x16 EAX (the base
 *    frequency in MHz, at which the invariant TSC runs) cross-checks; a PIT
 *    that disagrees is refused and the base frequency taken.
 *  - An emulator (Bochs: its TSC counts instructions at `ips`, 50 MHz in the
 *    tests, while its CPUID 0x15/0x16 are the modelled CPU's 2.2-4.2 GHz):
 *    the PIT is the truth. It is taken for one only on positive evidence, not
 *    for being slow: the PIT counted normally (OUT low at the first read of
 *    every window), the windows agree with each other, and a port read cost
 *    fewer than TSC_EMU_MAX_TICKS_PER_READ ticks, which only a TSC that
 *    counts instructions shows. A slow rate without that evidence is refused
 *    (a PIT that reads done at once, or early, on a real server would
 *    otherwise make it look like Bochs and shrink every timeout).
 *  - QEMU TCG (qemu64: no leaf 0x15 or 0x16; its TSC is the host's, its PIT
 *    wall-clock): the PIT alone, as before, within what a CPU can be.
 *  - Nothing believable: 1 GHz assumed, loudly; never below TSC_EMULATED_KHZ,
 *    so never taken for an emulator. */
#include "tsc_choose.h"
#include "printk.h"

#define CPUID_LEAF_TSC  0x15
#define CPUID_LEAF_FREQ 0x16
#define CPUID16_EAX_BASE_MHZ 0xffffu
#define TSC_GUESS_KHZ 1000000ull
#define BP 10000                         /* basis points in a whole */

struct pit_verdict {
	bool ok;                         /* a measurement to weigh */
	bool emulator;                   /* with an emulator's evidence */
	uint64_t khz;
	uint64_t ticks_per_read;
	char refused[160];               /* why not, when !ok */
};

static bool in_cpu_range(uint64_t khz)
{
	return khz >= TSC_EMULATED_KHZ && khz <= TSC_MAX_KHZ;
}

/* Whether leaf 0x15 enumerates the rate: "If ECX is 0, the nominal core
 * crystal clock frequency is not enumerated", "If EBX[31:0] is 0, the
 * TSC/"core crystal clock" ratio is not enumerated" (SDM Vol. 2A, CPUID). */
static bool cpuid15_exact(const struct tsc_inputs *in)
{
	return in->cpuid_max >= CPUID_LEAF_TSC && in->l15_eax && in->l15_ebx && in->l15_ecx;
}

static uint64_t cpuid15_khz(const struct tsc_inputs *in)
{
	/* Both factors are 32-bit: the product fits in 64. */
	return (uint64_t)in->l15_ecx * in->l15_ebx / in->l15_eax / 1000;
}

static bool cpuid16_base(const struct tsc_inputs *in)
{
	return in->cpuid_max >= CPUID_LEAF_FREQ && (in->l16_eax & CPUID16_EAX_BASE_MHZ);
}

static void pit_judge(const struct tsc_inputs *in, struct pit_verdict *v)
{
	uint64_t best = ~0ull, worst = 0;
	uint32_t reads = 0;

	v->ok = v->emulator = false;
	v->khz = v->ticks_per_read = 0;
	if (in->pit_end == TSC_PIT_AT_ONCE) {
		snprintf(v->refused, sizeof v->refused, "it read done at once (OUT high before it counted)");
		return;
	}
	if (in->pit_end == TSC_PIT_STUCK || !in->pit_windows || !in->pit_count) {
		snprintf(v->refused, sizeof v->refused, "it did not count (no PIT, or channel 2 gated off)");
		return;
	}
	for (unsigned i = 0; i < in->pit_windows && i < TSC_PIT_WINDOWS; i++) {
		if (in->pit_ticks[i] < best) {
			best = in->pit_ticks[i];
			reads = in->pit_reads[i];
		}
		if (in->pit_ticks[i] > worst)
			worst = in->pit_ticks[i];
	}
	if (best > ~0ull / TSC_PIT_HZ) {
		snprintf(v->refused, sizeof v->refused, "a window of %llu ticks is faster than any CPU",
			 (unsigned long long)best);
		return;
	}
	v->khz = best * TSC_PIT_HZ / in->pit_count / 1000;
	v->ticks_per_read = reads ? best / reads : best;
	if (v->khz > TSC_MAX_KHZ || v->khz < TSC_MIN_KHZ) {
		snprintf(v->refused, sizeof v->refused, "it says %llu kHz, %s",
			 (unsigned long long)v->khz, v->khz > TSC_MAX_KHZ ? "faster than any CPU" : "slower than any usable TSC");
		return;
	}
	if (v->khz >= TSC_EMULATED_KHZ) {
		v->ok = true;
		return;
	}
	/* Slow: an emulator's TSC only with the evidence of one. */
	uint64_t spread = worst - best;
	uint64_t spread_bp = !best || spread > ~0ull / BP ? BP : spread * BP / best;
	if (v->ticks_per_read >= TSC_EMU_MAX_TICKS_PER_READ) {
		snprintf(v->refused, sizeof v->refused,
			 "it says %llu kHz, slower than any CPU with VMX, yet a port read took %llu ticks (not an emulator's instruction clock)",
			 (unsigned long long)v->khz, (unsigned long long)v->ticks_per_read);
		return;
	}
	if (spread_bp > TSC_AGREE_BP) {
		snprintf(v->refused, sizeof v->refused, "it says %llu kHz, slower than any CPU with VMX, and its windows differ by %llu.%02llu %%",
			 (unsigned long long)v->khz, (unsigned long long)(spread_bp / 100), (unsigned long long)(spread_bp % 100));
		return;
	}
	v->ok = v->emulator = true;
}

/* (a - b) / b as "+1.23 %". */
static void pct(char *buf, size_t n, uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;
	uint64_t bp = b ? d * BP / b : 0;
	snprintf(buf, n, "%c%llu.%02llu %%", a >= b ? '+' : '-', (unsigned long long)(bp / 100), (unsigned long long)(bp % 100));
}

static bool agrees(uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a;
	return d * BP <= b * TSC_AGREE_BP;
}

struct tsc_choice tsc_choose(const struct tsc_inputs *in, char *why, size_t n)
{
	struct tsc_choice ch = { 0 };
	struct pit_verdict pit;
	char cpu[96] = "", p[32];
	uint64_t k15 = 0, k16 = 0, ref;
	const char *bogus = "";

	pit_judge(in, &pit);
	/* The CPU's own word, unless it names a rate no CPU has. */
	if (cpuid15_exact(in)) {
		k15 = cpuid15_khz(in);
		if (!in_cpu_range(k15)) {
			bogus = " (CPUID 0x15's rate is no CPU's: ignored)";
			k15 = 0;
		}
	}
	if (cpuid16_base(in)) {
		k16 = (uint64_t)(in->l16_eax & CPUID16_EAX_BASE_MHZ) * 1000;
		if (!in_cpu_range(k16)) {
			if (!*bogus)
				bogus = " (CPUID 0x16's base frequency is no CPU's: ignored)";
			k16 = 0;
		}
	}
	if (k15)
		snprintf(cpu, sizeof cpu, "CPUID 0x15 (crystal %u Hz x %u/%u)", in->l15_ecx, in->l15_ebx, in->l15_eax);
	else if (k16)
		snprintf(cpu, sizeof cpu, "CPUID 0x16 (base %u MHz)", in->l16_eax & CPUID16_EAX_BASE_MHZ);
	ref = k15 ? k15 : k16;

	if (pit.emulator) {
		ch = (struct tsc_choice){ pit.khz, TSC_FROM_EMULATOR, false };
		if (ref)
			snprintf(why, n, "%llu kHz from the PIT: an emulator (a port read costs %llu TSC ticks: the TSC counts instructions); %s says %llu kHz, the modelled CPU's%s",
				 (unsigned long long)pit.khz, (unsigned long long)pit.ticks_per_read, cpu, (unsigned long long)ref, bogus);
		else
			snprintf(why, n, "%llu kHz from the PIT: an emulator (a port read costs %llu TSC ticks: the TSC counts instructions)%s",
				 (unsigned long long)pit.khz, (unsigned long long)pit.ticks_per_read, bogus);
		return ch;
	}
	if (pit.ok && !ref) {
		ch = (struct tsc_choice){ pit.khz, TSC_FROM_PIT, false };
		snprintf(why, n, "%llu kHz from the PIT (no CPUID 0x15 crystal, no 0x16 base frequency)%s",
			 (unsigned long long)pit.khz, bogus);
		return ch;
	}
	if (pit.ok) {
		bool ok = agrees(pit.khz, ref);
		pct(p, sizeof p, pit.khz, ref);
		if (!k15 && ok) {
			ch = (struct tsc_choice){ pit.khz, TSC_FROM_PIT, false };
			snprintf(why, n, "%llu kHz from the PIT; %s says %llu kHz (%s)",
				 (unsigned long long)pit.khz, cpu, (unsigned long long)ref, p);
			return ch;
		}
		ch = (struct tsc_choice){ ref, k15 ? TSC_FROM_CPUID15 : TSC_FROM_CPUID16, !ok };
		snprintf(why, n, "%llu kHz from %s; PIT says %llu kHz (%s)%s%s",
			 (unsigned long long)ref, cpu, (unsigned long long)pit.khz, p,
			 ok ? "" : ": refused, more than a few percent off", bogus);
		return ch;
	}
	if (ref) {
		ch = (struct tsc_choice){ ref, k15 ? TSC_FROM_CPUID15 : TSC_FROM_CPUID16, true };
		snprintf(why, n, "%llu kHz from %s; PIT refused: %s%s",
			 (unsigned long long)ref, cpu, pit.refused, bogus);
		return ch;
	}
	ch = (struct tsc_choice){ TSC_GUESS_KHZ, TSC_FROM_GUESS, true };
	snprintf(why, n, "%llu kHz assumed (no CPUID 0x15 crystal, no 0x16 base frequency); PIT refused: %s%s",
		 TSC_GUESS_KHZ, pit.refused, bogus);
	return ch;
}
