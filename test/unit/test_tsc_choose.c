/* The TSC rate's source (lib/tsc_choose.c) against fake CPUID 0x15/0x16
 * answers and fake PIT windows. Each case says what the old calibration
 * (the PIT's best window always, CPUID 0x15 only when the PIT did not count,
 * else 1 GHz) took there.
 *
 * CPUID: leaf 0x15 EAX/EBX the TSC/crystal ratio, ECX the crystal in Hz,
 * "TSC frequency" = ECX * EBX / EAX; leaf 0x16 EAX[15:0] the base frequency
 * in MHz (SDM Vol. 2A, CPUID). The Bochs answers are Bochs 3.0's
 * (cpu/cpudb/intel/sapphire_rapids.cc: 0x15 = 2, 0xb0, 0x017d7840, i.e.
 * 25 MHz x 88 = 2.2 GHz; corei7_skylake-x.cc: 0x15 = 2, 0x124, 0 and 0x16
 * EAX = 0xdac, 3500 MHz), as the project's Bochs runs print them
 * ("CPUID 0x15 says 2200000 kHz"), while their TSC runs at ips = 50 MHz. */
#include "test.h"
#include "../../lib/tsc_choose.h"

#define COUNT 11932                       /* 10 ms, as lib/tsc.c */

static char why[400];

static struct tsc_inputs cpu(uint32_t max, uint32_t a15, uint32_t b15, uint32_t c15, uint32_t a16)
{
	return (struct tsc_inputs){ .cpuid_max = max, .l15_eax = a15, .l15_ebx = b15, .l15_ecx = c15,
				    .l16_eax = a16, .pit_count = COUNT };
}

/* Three windows of a TSC at khz, each port read costing ticks_per_read,
 * the windows 'jitter' ticks apart. */
static void pit(struct tsc_inputs *in, uint64_t khz, uint64_t ticks_per_read, uint64_t jitter)
{
	uint64_t t = (khz * 1000 * COUNT + TSC_PIT_HZ - 1) / TSC_PIT_HZ;   /* rounded up: reads back as khz */
	in->pit_end = TSC_PIT_COUNTED;
	in->pit_windows = TSC_PIT_WINDOWS;
	for (int i = 0; i < TSC_PIT_WINDOWS; i++) {
		in->pit_ticks[i] = t + (uint64_t)i * jitter;
		in->pit_reads[i] = (uint32_t)(in->pit_ticks[i] / ticks_per_read);
	}
}

/* A PIT whose OUT reads high at the first read: one read, a few ticks. */
static void pit_at_once(struct tsc_inputs *in, uint64_t ticks_per_read)
{
	in->pit_end = TSC_PIT_AT_ONCE;
	in->pit_windows = 0;
	in->pit_ticks[0] = ticks_per_read;
	in->pit_reads[0] = 1;
}

#define HW_READ 2000                      /* a port read on hardware: about 1 us at 2 GHz */
#define BOCHS_READ 10                     /* a turn of the polling loop in Bochs, one CPU */
#define BOCHS8_READ 45                    /* the same with 8 CPUs, 7 of them waiting for SIPI (lib/tsc_choose.h) */

static struct tsc_choice choose(const struct tsc_inputs *in)
{
	return tsc_choose(in, why, sizeof why);
}

/* A Sapphire Rapids server: leaf 0x15 exact, 25 MHz x 168/2 = 2.1 GHz. */
#define SPR cpu(0x20, 2, 168, 25000000, 2100)

TEST(tsc_exact_leaf15_taken_pit_agrees)
{
	struct tsc_inputs in = SPR;
	pit(&in, 2098512, HW_READ, 3000);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2100000);
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "2100000 kHz from CPUID 0x15 (crystal 25000000 Hz x 168/2); PIT says 20985");
	CHECK_CONTAINS(why, "(-0.0");
	/* Old: the PIT's 2098512 kHz (0.07 % off), and the guest told it was exact. */
}

TEST(tsc_exact_leaf15_pit_done_at_once_refused_not_an_emulator)
{
	struct tsc_inputs in = SPR;
	pit_at_once(&in, HW_READ);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK(c.khz >= TSC_EMULATED_KHZ);
	CHECK_CONTAINS(why, "PIT refused: it read done at once");
	/* Old: 2000 ticks for a 10 ms window = 200 kHz: taken for stock Bochs
	 * (hlt=exit, eoi=pv) and every timeout 10,000 times too short. */
}

TEST(tsc_exact_leaf15_pit_done_early_refused)
{
	/* OUT high after a few hardware-priced reads: 20 reads = 4 MHz,
	 * below what a CPU with VMX runs at, without an emulator's cheap reads. */
	struct tsc_inputs in = SPR;
	pit(&in, 0, HW_READ, 0);
	for (int i = 0; i < TSC_PIT_WINDOWS; i++) {
		in.pit_reads[i] = 20;
		in.pit_ticks[i] = 20 * HW_READ;
	}
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "slower than any CPU with VMX, yet a port read took 2000 ticks");
	/* Old: 4000 kHz, an emulator. */
}

TEST(tsc_exact_leaf15_slow_pit_refused)
{
	/* Reads that take long (an SMI, a trapping platform): the windows end
	 * late, 2.6 GHz measured. */
	struct tsc_inputs in = SPR;
	pit(&in, 2600000, HW_READ, 0);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "PIT says 2600000 kHz (+23.80 %): refused, more than a few percent off");
	/* Old: 2600000 kHz, every timeout 24 % long, the guest told it exactly. */
	/* Just inside "a few percent": taken from CPUID, no warning. */
	pit(&in, 2100000 + 2100000 * TSC_AGREE_BP / 10000 - 100, HW_READ, 0);
	c = choose(&in);
	CHECK(!c.warn);
	CHECK_EQ(c.khz, 2100000);
}

TEST(tsc_exact_leaf15_pit_stuck_or_absurd)
{
	struct tsc_inputs in = SPR;
	in.pit_end = TSC_PIT_STUCK;
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "PIT refused: it did not count");
	/* Old: the same (CPUID 0x15 when the PIT did not count). */
	pit(&in, 40000000, HW_READ, 0);              /* 40 GHz */
	c = choose(&in);
	CHECK_EQ(c.khz, 2100000);
	CHECK_CONTAINS(why, "faster than any CPU");
	/* Old: (could not happen: the window bound ends at 10 GHz.) */
}

/* Bochs 3.0 sapphire_rapids at ips = 50 MHz: the PIT is the truth, CPUID
 * the modelled CPU's. */
TEST(tsc_bochs_spr_emulator_taken_from_the_pit)
{
	struct tsc_inputs in = cpu(0x20, 2, 0xb0, 0x017d7840, 0x898);
	pit(&in, 50000, BOCHS_READ, 1);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_EMULATOR);
	CHECK(c.khz >= 49999 && c.khz <= 50001);
	CHECK(c.khz < TSC_EMULATED_KHZ);          /* hlt=auto, eoi=auto: stock Bochs */
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "kHz from the PIT: an emulator (a port read costs 10 TSC ticks");
	CHECK_CONTAINS(why, "CPUID 0x15 (crystal 25000000 Hz x 176/2) says 2200000 kHz, the modelled CPU's");
	/* Old: the same 50000 kHz. */
}

TEST(tsc_bochs_skx_emulator_taken_from_the_pit)
{
	struct tsc_inputs in = cpu(0x16, 2, 0x124, 0, 0xdac);
	pit(&in, 50000, BOCHS8_READ, 2);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_EMULATOR);
	CHECK(c.khz < TSC_EMULATED_KHZ);
	CHECK_CONTAINS(why, "CPUID 0x16 (base 3500 MHz) says 3500000 kHz");
	/* Old: the same 50000 kHz. */
}

TEST(tsc_slow_pit_without_emulator_evidence_refused)
{
	/* 50 MHz with cheap reads but windows 10 % apart: not one emulator's
	 * steady instruction clock. */
	struct tsc_inputs in = cpu(0x20, 2, 0xb0, 0x017d7840, 0x898);
	pit(&in, 50000, BOCHS_READ, 50000);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2200000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "its windows differ by");
	/* Old: 50000 kHz. */
}

/* A Skylake-SP server: leaf 0x15 without the crystal, 0x16 base 2.1 GHz. */
#define SKX cpu(0x16, 2, 168, 0, 2100)

TEST(tsc_no_crystal_pit_checked_by_leaf16)
{
	struct tsc_inputs in = SKX;
	pit(&in, 2099100, HW_READ, 500);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_PIT);
	CHECK(c.khz >= 2099000 && c.khz <= 2099200);
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "kHz from the PIT; CPUID 0x16 (base 2100 MHz) says 2100000 kHz (-0.0");
	/* Old: the same PIT value. */
	pit(&in, 2600000, HW_READ, 0);
	c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID16);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "2100000 kHz from CPUID 0x16 (base 2100 MHz); PIT says 2600000 kHz (+23.80 %): refused");
	/* Old: 2600000 kHz. */
	pit_at_once(&in, HW_READ);
	c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_CPUID16);
	CHECK_EQ(c.khz, 2100000);
	CHECK_CONTAINS(why, "PIT refused: it read done at once");
	/* Old: 200 kHz, an emulator. */
}

/* QEMU TCG, qemu64: CPUID stops at leaf 0xd; the TSC is the host's. */
TEST(tsc_qemu_tcg_pit_alone)
{
	struct tsc_inputs in = cpu(0xd, 0, 0, 0, 0);
	pit(&in, 2596159, 3000, 400000);             /* windows swing; the best is taken */
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_PIT);
	CHECK(c.khz >= 2596150 && c.khz <= 2596160);
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "kHz from the PIT (no CPUID 0x15 crystal, no 0x16 base frequency)");
	/* Old: the same. A leaf 0x15 the CPU does not have is not read. */
	in.l15_eax = 2; in.l15_ebx = 168; in.l15_ecx = 25000000;
	c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_PIT);
}

TEST(tsc_nothing_believable_is_one_ghz_never_an_emulator)
{
	struct tsc_inputs in = cpu(0xd, 0, 0, 0, 0);
	pit_at_once(&in, HW_READ);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_GUESS);
	CHECK_EQ(c.khz, 1000000);
	CHECK(c.khz >= TSC_EMULATED_KHZ);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "1000000 kHz assumed (no CPUID 0x15 crystal, no 0x16 base frequency); PIT refused: it read done at once");
	/* Old: 200 kHz, an emulator. */
	/* A starved TCG vCPU whose PIT says 200 MHz with costly reads. */
	pit(&in, 200000, 5000, 0);
	c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_GUESS);
	CHECK_CONTAINS(why, "slower than any CPU with VMX, yet a port read took 5000 ticks");
	/* Old: 200000 kHz, an emulator. */
}

TEST(tsc_cpuid_naming_no_cpus_rate_ignored)
{
	/* A crystal of 1 Hz: 84 Hz, no CPU's. The PIT (accurate) is taken. */
	struct tsc_inputs in = cpu(0x15, 2, 168, 1, 0);
	pit(&in, 2100000, HW_READ, 0);
	struct tsc_choice c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_PIT);
	CHECK_EQ(c.khz, 2100000);
	CHECK_CONTAINS(why, "CPUID 0x15's rate is no CPU's: ignored");
	/* A leaf 0x15 with a zero denominator is no ratio. */
	in = cpu(0x15, 0, 168, 25000000, 0);
	pit(&in, 2100000, HW_READ, 0);
	c = choose(&in);
	CHECK_EQ(c.source, TSC_FROM_PIT);
}

/* ---- the skew between two CPUs (lib/tsc_skew.c) ---- */
#include "../../lib/tsc_skew.h"

TEST(tsc_skew_from_the_shortest_round_trip)
{
	/* Aligned TSCs: the other CPU reads between t0 and t1. */
	struct tsc_sample s[3] = { { 1000, 1050, 1100 } };
	struct tsc_skew k = tsc_skew_estimate(s, 1);
	CHECK(k.ok);
	CHECK_EQ(k.offset, 0);
	CHECK_EQ(k.bound, 50);
	/* A CPU 10^6 ticks ahead (a socket whose firmware moved its TSC): a
	 * long round trip first, then a short one, which decides. */
	s[0] = (struct tsc_sample){ 5000, 5000 + 1000000 + 4000, 13000 };
	s[1] = (struct tsc_sample){ 20000, 20040 + 1000000, 20080 };
	s[2] = (struct tsc_sample){ 30000, 0, 29000 };          /* t1 < t0: no round trip */
	k = tsc_skew_estimate(s, 3);
	CHECK(k.ok);
	CHECK_EQ(k.offset, 1000000);
	CHECK_EQ(k.bound, 40);
	/* Behind. */
	s[0] = (struct tsc_sample){ 1000000, 400000, 1000100 };
	k = tsc_skew_estimate(s, 1);
	CHECK_EQ(k.offset, (uint64_t)(int64_t)-600050);
	/* Nothing answered. */
	k = tsc_skew_estimate(s, 0);
	CHECK(!k.ok);
	k = tsc_skew_estimate(&s[2], 1);
	CHECK(!k.ok);
}
