/* The TSC rate without a PIT (issue 35, item 10): lib/tsc_ref.c measuring
 * against a model of the HPET and the ACPI PM timer, lib/tsc_choose.c
 * weighing it against a PIT that does not count, CPUID and a guess.
 *
 * The reference clocks, from their documents, not the project's headers:
 *  - ACPI PM timer: "a 24-bit or 32-bit fixed rate free running count-up
 *    timer that runs off a 3.579545 MHz clock" (ACPI 6.5, "Power Management
 *    Timer"); 32 bits when the FADT flag TMR_VAL_EXT is set;
 *  - HPET: the main counter counts up at 10^15 / COUNTER_CLK_PERIOD Hz (the
 *    period in femtoseconds, General Capabilities bits 63:32, at most
 *    10^8 fs); 32 or 64 bits (COUNT_SIZE_CAP) (IA-PC HPET Specification 1.0a).
 *
 * The model: one clock in picoseconds. The TSC reads it at a rate in kHz,
 * the reference at its own rate; every read costs time, and an SMI (or a
 * preempted emulator thread) is time that passes inside one reference read,
 * between the TSC reads around it. */
#include "test.h"
#include "../../lib/tsc_choose.h"
#include "../../lib/tsc_ref.h"

#define M_PMTMR_HZ 3579545ull
#define M_HPET_PERIOD_FS 69841279ull              /* 14.31818 MHz, the PC's: 10^15 / this = 14318179 Hz */
#define M_FS 1000000000000000ull

struct model {
	uint64_t ps;                 /* now */
	uint64_t tsc_khz;
	uint64_t ref_hz;
	uint64_t ref_start;          /* the counter's value at ps 0 */
	uint64_t tsc_cost_ps, ref_cost_ps;
	/* SMIs: a reference read that starts within [storm_from, storm_to)
	 * takes smi_ps longer (time passes between the TSC reads around it). */
	uint64_t storm_from, storm_to, smi_ps;
	bool stuck;                  /* the counter does not count */
	unsigned smis;
	/* A preemption: the first reference read at or after pause_at takes
	 * its value, then pause_ps pass before the reader runs again. */
	uint64_t pause_at, pause_ps;
	bool paused;
};

/* ps * rate / 10^12 without overflow for the spans here (seconds). */
static uint64_t at_rate(uint64_t ps, uint64_t hz)
{
	return (uint64_t)((unsigned __int128)ps * hz / 1000000000000ull);
}

static uint64_t m_tsc(void *ctx)
{
	struct model *m = ctx;
	m->ps += m->tsc_cost_ps;
	return at_rate(m->ps, m->tsc_khz * 1000);
}

static uint64_t m_read(void *ctx)
{
	struct model *m = ctx;
	bool smi = m->ps >= m->storm_from && m->ps < m->storm_to;
	m->ps += m->ref_cost_ps / 2;
	if (smi) {
		m->ps += m->smi_ps;
		m->smis++;
	}
	uint64_t v = m->stuck ? m->ref_start : m->ref_start + at_rate(m->ps, m->ref_hz);
	m->ps += m->ref_cost_ps - m->ref_cost_ps / 2;
	if (m->pause_ps && !m->paused && m->ps >= m->pause_at) {
		m->ps += m->pause_ps;
		m->paused = true;
	}
	return v;
}

static char why[640];

#define MS 1000000000ull                 /* a millisecond in ps */
#define US 1000000ull

/* A server: 2.6 GHz TSC, a microsecond a chipset read. */
static struct model server(uint64_t ref_hz)
{
	return (struct model){ .ps = 1000 * MS, .tsc_khz = 2600000, .ref_hz = ref_hz, .tsc_cost_ps = 10000,
			       .ref_cost_ps = US };
}

static void measure(struct model *m, enum tsc_ref_kind kind, unsigned bits, struct tsc_ref_meas *out)
{
	struct tsc_ref_ops o = { m_tsc, m_read, m };
	tsc_ref_measure(&o, kind, m->ref_hz, bits, out);
}

/* Skylake-SP: CPUID 0x15 without the crystal, no 0x16 (as QEMU and some
 * firmware leave it), and a PIT whose channel 2 never ends its window:
 * gated off in the firmware, or no 8254 at all. */
static struct tsc_inputs no_pit(void)
{
	return (struct tsc_inputs){ .cpuid_max = 0x15, .l15_eax = 2, .l15_ebx = 168, .pit_count = 11932,
				    .pit_end = TSC_PIT_STUCK };
}

static bool within_bp(uint64_t got, uint64_t want, uint64_t bp)
{
	uint64_t d = got > want ? got - want : want - got;
	return d * 10000 <= want * bp;
}

TEST(tsc_ref_pm_timer_measures_where_the_pit_does_not_count)
{
	struct model m = server(M_PMTMR_HZ);
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK(!in.ref.stuck);
	CHECK_EQ(in.ref.windows, TSC_REF_WINDOWS);
	CHECK_EQ(in.ref.tries, TSC_REF_WINDOWS);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(within_bp(c.khz, 2600000, 2));      /* a microsecond's read in 10 ms windows */
	CHECK(!c.warn);
	CHECK(c.ceil_khz >= 2600000 && within_bp(c.ceil_khz, 2600000, 5));
	CHECK_CONTAINS(why, "kHz from the PM timer (3579545 Hz, 3 clean windows of 3, +-0.0");
	CHECK_CONTAINS(why, "PIT refused: it did not count");
	/* 501bce7: "1000000 kHz assumed ...; PIT refused: it did not count":
	 * every timeout 2.6 times too short. */
}

TEST(tsc_ref_hpet_measures_where_the_pit_does_not_count)
{
	struct model m = server(M_FS / M_HPET_PERIOD_FS);
	struct tsc_inputs in = no_pit();
	in.cpuid_max = 0x16;
	in.l16_eax = 2600;                        /* and CPUID 0x16 agrees */
	measure(&m, TSC_REF_HPET, 64, &in.ref);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HPET);
	CHECK(within_bp(c.khz, 2600000, 2));
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "kHz from the HPET (14318179 Hz, 3 clean windows of 3");
	CHECK_CONTAINS(why, "CPUID 0x16 (base 2600 MHz) says 2600000 kHz (");
	/* 501bce7: 2600000 kHz from CPUID 0x16, nominal, with a warning. */
}

TEST(tsc_ref_counter_wraps_within_a_window)
{
	/* A 24-bit counter 1000 counts before its wrap, a 32-bit one likewise. */
	struct model m = server(M_PMTMR_HZ);
	m.ref_start = (1u << 24) - 1000 - at_rate(m.ps, M_PMTMR_HZ);
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(within_bp(c.khz, 2600000, 2));
	m = server(M_PMTMR_HZ);
	m.ref_start = 0xffffffffull - 1000 - at_rate(m.ps, M_PMTMR_HZ);
	measure(&m, TSC_REF_PMTMR, 32, &in.ref);
	c = tsc_choose(&in, why, sizeof why);
	CHECK(within_bp(c.khz, 2600000, 2));
}

TEST(tsc_ref_one_smi_in_one_read_passes_by)
{
	/* A 200 us SMI in one read at the end of the first window: the
	 * tightest of that end's three reads escapes it. */
	struct model m = server(M_PMTMR_HZ);
	m.storm_from = m.ps + 10 * MS;
	m.storm_to = m.storm_from + 1500000;      /* 1.5 us: one read starts in it (the next after the SMI) */
	m.smi_ps = 200 * US;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK_EQ(m.smis, 1);
	CHECK_EQ(in.ref.windows, TSC_REF_WINDOWS);
	CHECK_EQ(in.ref.tries, TSC_REF_WINDOWS);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK(within_bp(c.khz, 2600000, 2));
}

TEST(tsc_ref_disturbed_window_measured_again)
{
	/* SMIs of 100 us in every read for 0.6 ms about the end of the first
	 * window: each of its end's reads is hit, the window is disturbed
	 * and measured again; the rate comes from clean windows only. Taken
	 * as it came, the first window would be 2 % off. */
	struct model m = server(M_PMTMR_HZ);
	m.storm_from = m.ps + 10 * MS - 100 * US;
	m.storm_to = m.storm_from + 600 * US;
	m.smi_ps = 100 * US;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK(m.smis >= 3);
	CHECK_EQ(in.ref.windows, TSC_REF_WINDOWS);
	CHECK(in.ref.tries > TSC_REF_WINDOWS);
	for (unsigned i = 0; i < in.ref.windows; i++)
		CHECK(in.ref.w[i].slack * 10000 <= in.ref.w[i].ticks * TSC_REF_SLACK_BP);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(!c.warn);
	CHECK(within_bp(c.khz, 2600000, 2));
	CHECK_CONTAINS(why, "3 clean windows of ");
}

TEST(tsc_ref_slow_reads_measured_again_longer)
{
	/* Every reference read takes 50 us more (a trapping platform, a
	 * starved emulator thread): 10, 20 and 40 ms windows are disturbed,
	 * 80 ms ones are clean within TSC_REF_SLACK_BP. */
	struct model m = server(M_PMTMR_HZ);
	m.storm_from = 0;
	m.storm_to = ~0ull;
	m.smi_ps = 50 * US;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK_EQ(in.ref.windows, TSC_REF_WINDOWS);
	CHECK_EQ(in.ref.tries, 6);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(!c.warn);
	CHECK(within_bp(c.khz, 2600000, 10));
	CHECK(c.ceil_khz >= 2600000);
	CHECK_CONTAINS(why, "3 clean windows of 6");
}

TEST(tsc_ref_every_window_disturbed_taken_with_its_uncertainty)
{
	/* 400 us more a read: no clean window in TSC_REF_TRIES; the least
	 * disturbed (the longest) is taken, loudly, never a guess, and the
	 * ceiling for timeouts covers the truth. */
	struct model m = server(M_PMTMR_HZ);
	m.storm_from = 0;
	m.storm_to = ~0ull;
	m.smi_ps = 400 * US;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK_EQ(in.ref.windows, 0);
	CHECK_EQ(in.ref.tries, TSC_REF_TRIES);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(c.warn);
	CHECK(within_bp(c.khz, 2600000, 100));
	CHECK(c.ceil_khz >= 2600000);
	CHECK_CONTAINS(why, "all 8 windows disturbed, the least +-");
	CHECK_CONTAINS(why, "taken with its uncertainty");
}

TEST(tsc_ref_that_does_not_count_refused)
{
	/* A PM timer port that reads the same forever (HW-reduced firmware
	 * leaving the field, a dead chipset): refused by name within the
	 * fastest TSC's worth of a window; CPUID 0x16 then, else the guess. */
	struct model m = server(M_PMTMR_HZ);
	m.stuck = true;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 24, &in.ref);
	CHECK(in.ref.stuck);
	CHECK(m.ps - 1000 * MS <= TSC_MAX_KHZ * 10 * 1000000000ull / 2600000 + MS);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_GUESS);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "the PM timer refused: it did not count");
	/* The guess's timeouts are counted at the fastest TSC: never shorter
	 * than asked, whatever the real rate. */
	CHECK_EQ(c.ceil_khz, TSC_MAX_KHZ);
	CHECK_CONTAINS(why, "timeouts counted at 10000000 kHz");
}

/* The reader preempted for 200 ms right after a counter read, before its
 * TSC read (an emulator's vCPU thread on a loaded host; the qemu_288 run
 * under load printed "tsc: the HPET at 0xfed00000 did not count: the PM
 * timer instead"): the TSC is past the window's deadline, yet the counter
 * ran all along. A counter that counts is never refused for that: the
 * verdict "did not count" needs a read taken after the deadline. (Before:
 * "CHECK failed: !in.ref.stuck".) */
TEST(tsc_ref_preempted_reader_is_no_stuck_counter)
{
	struct model m = server(M_FS / M_HPET_PERIOD_FS);
	m.pause_at = m.ps + 2 * MS;
	m.pause_ps = 200 * MS;
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_HPET, 64, &in.ref);
	CHECK(m.paused);
	CHECK(!in.ref.stuck);
	CHECK(in.ref.windows >= 1);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HPET);
	CHECK(within_bp(c.khz, 2600000, 2));
}

/* Bochs at ips = 50 MHz has a PM timer (its PIIX4 ACPI) on emulated time:
 * a slow rate is an emulator's only with an emulator's cheap reads, as
 * for the PIT (lib/tsc_choose.h). */
TEST(tsc_ref_slow_rate_an_emulator_only_with_its_evidence)
{
	struct model m = server(M_PMTMR_HZ);
	m.tsc_khz = 50000;
	m.tsc_cost_ps = 20000;                        /* one instruction at 50 MHz */
	m.ref_cost_ps = 200000;                       /* ten */
	struct tsc_inputs in = no_pit();
	measure(&m, TSC_REF_PMTMR, 32, &in.ref);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_PMTMR);
	CHECK(c.khz < TSC_EMULATED_KHZ);
	CHECK(within_bp(c.khz, 50000, 10));
	CHECK_CONTAINS(why, "an emulator (a read costs");
	/* The same slow rate on a 2.6 GHz CPU whose "PM timer" runs 52 times
	 * faster than 3.579545 MHz: reads that cost 2600 ticks, no emulator. */
	m = server(M_PMTMR_HZ * 52);
	struct tsc_ref_ops o = { m_tsc, m_read, &m };
	tsc_ref_measure(&o, TSC_REF_PMTMR, M_PMTMR_HZ, 32, &in.ref);
	c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_GUESS);
	CHECK_CONTAINS(why, "the PM timer refused: it says ");
	CHECK_CONTAINS(why, "kHz, slower than any CPU with VMX, yet a read took");
}

TEST(tsc_ref_exact_leaf15_checked_by_the_reference)
{
	/* Sapphire Rapids: CPUID 0x15 is the rate; the HPET checks it and a
	 * disagreement is said, never taken. */
	struct model m = server(M_FS / M_HPET_PERIOD_FS);
	m.tsc_khz = 2100000;
	struct tsc_inputs in = no_pit();
	in.cpuid_max = 0x20; in.l15_ecx = 25000000;
	measure(&m, TSC_REF_HPET, 64, &in.ref);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK_EQ(c.khz, 2100000);
	CHECK_EQ(c.ceil_khz, 2100000);
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "2100000 kHz from CPUID 0x15 (crystal 25000000 Hz x 168/2); the HPET (14318179 Hz");
	m = server(M_FS / M_HPET_PERIOD_FS);          /* the TSC at 2.6 GHz after all */
	measure(&m, TSC_REF_HPET, 64, &in.ref);
	c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, ": more than a few percent off");
}

/* Item 10's last clause: AP and work timeouts are counted at the ceiling,
 * which no source's error can put below the real rate. The QEMU 10 boot
 * of issue 35: 288 CPUs, the PIT "did not count", no CPUID rate: 1 GHz
 * assumed for a TSC three times faster, a 200 ms AP timeout became 67 ms. */
TEST(tsc_timeouts_never_shrink_below_the_real_rate)
{
	static const uint64_t real[] = { 50000, 1000000, 2600000, 3000000, 5000000 };
	for (unsigned i = 0; i < sizeof real / sizeof real[0]; i++) {
		/* Nothing at all: the guess. */
		struct tsc_inputs in = no_pit();
		struct tsc_choice c = tsc_choose(&in, why, sizeof why);
		CHECK_EQ(c.source, TSC_FROM_GUESS);
		CHECK(c.ceil_khz >= real[i]);
		/* A PIT alone that says 1 GHz (a starved emulator thread's swing). */
		in.pit_end = TSC_PIT_COUNTED;
		in.pit_windows = 1;
		in.pit_ticks[0] = 1000000ull * 1000 * 11932 / 1193182;
		in.pit_reads[0] = 5000;
		c = tsc_choose(&in, why, sizeof why);
		CHECK_EQ(c.source, TSC_FROM_PIT);
		CHECK(c.khz <= 1000001);
		CHECK(c.ceil_khz >= real[i]);
		/* A reference: measured, the ceiling just above. */
		if (real[i] >= TSC_EMULATED_KHZ) {
			struct model m = server(M_PMTMR_HZ);
			m.tsc_khz = real[i];
			measure(&m, TSC_REF_PMTMR, 24, &in.ref);
			c = tsc_choose(&in, why, sizeof why);
			CHECK(c.ceil_khz >= real[i]);
			CHECK(within_bp(c.ceil_khz, real[i], 5));
		}
	}
}
