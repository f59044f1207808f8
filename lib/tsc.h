/* TSC frequency and delays. */
#ifndef LIB_TSC_H
#define LIB_TSC_H
#include "types.h"
#include "tsc_choose.h"
extern uint64_t tsc_khz;
extern enum tsc_source tsc_source;   /* where tsc_khz came from */
/* Takes the rate from CPUID 0x15/0x16 and the PIT (channel 2), by the rule
 * of lib/tsc_choose.c, and prints one line naming the source. */
void tsc_calibrate(void);
void udelay(uint64_t us);
/* IA32_TSC_ADJUST made equal on every CPU before any compares TSCs: the
 * boot CPU records its own, each AP sets its own to it first thing, and the
 * report says how many differed. */
void tsc_adjust_record(void);
void tsc_adjust_align(void);
void tsc_adjust_report(void);
/* A TSC below 500 MHz: an emulator (Bochs's runs at its IPS setting). */
static inline bool tsc_emulated(void) { return tsc_khz < TSC_EMULATED_KHZ; }
static inline uint64_t tsc_from_us(uint64_t us) { return us * tsc_khz / 1000; }
static inline uint64_t tsc_to_us(uint64_t t) { return tsc_khz ? t / tsc_khz * 1000 + t % tsc_khz * 1000 / tsc_khz : 0; }
#endif
