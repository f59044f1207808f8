/* The TSC measured against a reference counter: the HPET's main counter or
 * the ACPI PM timer. Pure (the reads come through tsc_ref_ops): lib/tsc.c
 * gives it the hardware, the unit tests a model with SMIs in it. */
#ifndef LIB_TSC_REF_H
#define LIB_TSC_REF_H
#include "types.h"

/* The ACPI PM timer's rate: "a 24-bit or 32-bit fixed rate free running
 * count-up timer that runs off a 3.579545 MHz clock" (ACPI 6.5,
 * "Power Management Timer"). */
#define TSC_PMTMR_HZ 3579545ull
/* No CPU's TSC is faster: a window that says more is not a measurement
 * (the PIT's, lib/tsc_choose.h, and a reference's), and what timeouts are
 * counted in where nothing bounds the rate. */
#define TSC_MAX_KHZ 10000000ull
/* The fastest reference believed: an HPET period of 1 ns (the HPET
 * specification asks at most 100 ns of it, i.e. at least 10 MHz). */
#define TSC_REF_MAX_HZ 1000000000ull
#define TSC_REF_WINDOWS 3          /* clean windows wanted */
#define TSC_REF_TRIES 8            /* windows measured at most */
#define TSC_REF_READS 3            /* reads at each end of a window: the tightest kept */
#define TSC_REF_WINDOW_MS 10       /* the first window; each disturbed one doubles the next, */
#define TSC_REF_WINDOW_MAX_MS 80   /* up to this */
/* A window is disturbed when the TSC reads around its two reference reads
 * span more than this share of it (basis points): an SMI, a preempted
 * emulator thread, a contended chipset. Hardware reads take about a
 * microsecond: 1 bp of a 10 ms window. */
#define TSC_REF_SLACK_BP 10

enum tsc_ref_kind { TSC_REF_NONE, TSC_REF_HPET, TSC_REF_PMTMR };

struct tsc_ref_ops {
	uint64_t (*tsc)(void *ctx);     /* the TSC, ordered with the reads around it */
	uint64_t (*read)(void *ctx);    /* the counter; bits above its width ignored */
	void *ctx;
};

/* One window: the TSC ticks between its two ends, known to +-slack (the
 * reads' own time: each reference read lies somewhere between the TSC
 * reads around it), and the reference's counts between them. */
struct tsc_ref_window { uint64_t ticks, slack, counts; };

struct tsc_ref_meas {
	enum tsc_ref_kind kind;
	uint64_t hz;                          /* the reference's rate */
	unsigned bits;                        /* its width: 24, 32 or 64 */
	bool stuck;                           /* it did not count a window within TSC_MAX_KHZ's worth of ticks */
	unsigned windows;                     /* clean windows in w[] */
	unsigned tries;                       /* windows measured, disturbed ones included */
	struct tsc_ref_window w[TSC_REF_WINDOWS]; /* the clean ones; none clean: w[0] the least disturbed */
	uint64_t read_ticks;                  /* the tightest pair of TSC reads around one reference read */
};

/* Measures up to TSC_REF_TRIES windows until TSC_REF_WINDOWS are clean;
 * a disturbed window is measured again, longer. Bounded by the TSC. */
void tsc_ref_measure(const struct tsc_ref_ops *ops, enum tsc_ref_kind kind, uint64_t hz, unsigned bits,
		     struct tsc_ref_meas *m);
/* The rate a window gives, and the highest the window allows (its ticks
 * plus its slack): 0 when it does not make one. */
uint64_t tsc_ref_khz(const struct tsc_ref_meas *m, const struct tsc_ref_window *w);
uint64_t tsc_ref_khz_max(const struct tsc_ref_meas *m, const struct tsc_ref_window *w);
/* "the HPET", "the PM timer", "no reference". */
const char *tsc_ref_name(enum tsc_ref_kind k);
#endif
