/* Which TSC rate to believe: a hypervisor's word (its timing leaf CPUID
 * 0x40000010, KVM's pvclock), the CPU's CPUID leaves 0x15/0x16, a
 * measurement against the HPET or the ACPI PM timer, or one against the
 * PIT. Pure (tests give it fake CPUID answers, reference windows and PIT
 * windows); lib/tsc.c gathers the inputs from the hardware. */
#ifndef LIB_TSC_CHOOSE_H
#define LIB_TSC_CHOOSE_H
#include "types.h"
#include "tsc_ref.h"

/* The 8254's input clock on the PC: 14.31818 MHz / 12. */
#define TSC_PIT_HZ 1193182ull
#define TSC_PIT_WINDOWS 3
/* A TSC below this is an emulator's (Bochs's counts instructions, at its
 * `ips`) or a hypervisor's that runs on one; no CPU with VMX runs its TSC
 * this slowly. hlt=auto and eoi=auto test tsc_choice's emulator, not this. */
#define TSC_EMULATED_KHZ 500000ull
/* Below this not even an emulator's TSC is usable for timeouts. */
#define TSC_MIN_KHZ 1000ull
/* "A few percent", in basis points: how far a PIT measurement may be from
 * the CPU's own word, and the windows from each other. */
#define TSC_AGREE_BP 300
/* A port read that costs fewer TSC ticks than this did not go to a chipset
 * (on hardware a legacy I/O read takes about a microsecond: 500 ticks at
 * the slowest TSC_EMULATED_KHZ, thousands at real rates); it was an
 * emulated instruction on a TSC that counts them. Bochs 3.0 advances its
 * clock by the instructions run, and with more than one CPU by the average
 * over CPUs of each one's trace, a halted CPU counting as its quantum (16):
 * a turn of the polling loop (a few traces of a few instructions) costs
 * about 10 ticks with one CPU, at most about 45 with eight. */
#define TSC_EMU_MAX_TICKS_PER_READ 256

enum tsc_source {
	TSC_FROM_CPUID15,        /* exact: crystal Hz x EBX/EAX */
	TSC_FROM_PIT,            /* measured, CPUID agreeing or silent */
	TSC_FROM_EMULATOR,       /* measured: an emulator's instruction-counting TSC */
	TSC_FROM_CPUID16,        /* the nominal base frequency: no reference, the PIT refused */
	TSC_FROM_GUESS,          /* nothing believable: 1 GHz, never an emulator's */
	TSC_FROM_HPET,           /* measured against the HPET's main counter */
	TSC_FROM_PMTMR,          /* measured against the ACPI PM timer */
	TSC_FROM_HYPERVISOR,     /* a hypervisor's guest: the rate it advertises */
};

/* CPUID.1:ECX[31], "Not Used: Always returns 0" on a CPU (SDM Vol. 2A,
 * CPUID), set by hypervisors for their guests; their leaves start at
 * 0x40000000 (EAX: the highest). The timing leaf 0x40000010 (EAX: the
 * TSC in kHz, EBX: the bus in kHz) is read only when that EAX reaches it. */
#define TSC_HV_LEAF_BASE 0x40000000u
#define TSC_HV_LEAF_TIMING 0x40000010u
/* KVM's pvclock (Documentation/virt/kvm/x86/msr.rst, MSR_KVM_SYSTEM_TIME_NEW):
 * ns = ((tsc - tsc_timestamp) << tsc_shift (>> -tsc_shift when negative))
 * * tsc_to_system_mul >> 32, so the TSC runs at 10^9 * 2^32 / mul / 2^shift Hz. */
struct tsc_pvclock {
	bool valid;                          /* the MSR took the page and KVM wrote it */
	uint32_t mul;                        /* tsc_to_system_mul */
	int8_t shift;                        /* tsc_shift */
};

/* How the PIT's windows ended. */
enum tsc_pit_end {
	TSC_PIT_COUNTED,         /* every window: OUT low at the first read, high later */
	TSC_PIT_AT_ONCE,         /* OUT already high at a window's first read */
	TSC_PIT_STUCK,           /* a window did not end within TSC_MAX_KHZ's worth of ticks */
};

struct tsc_inputs {
	uint32_t cpuid_max;                  /* CPUID.0:EAX */
	uint32_t l15_eax, l15_ebx, l15_ecx;  /* ratio denominator, numerator, crystal Hz */
	uint32_t l16_eax;                    /* bits 15:0: base frequency, MHz */
	uint16_t pit_count;                  /* each window, in PIT input clocks */
	enum tsc_pit_end pit_end;
	unsigned pit_windows;                /* windows that counted (when COUNTED) */
	uint64_t pit_ticks[TSC_PIT_WINDOWS]; /* TSC ticks per window */
	uint32_t pit_reads[TSC_PIT_WINDOWS]; /* reads of the OUT bit per window */
	struct tsc_ref_meas ref;             /* the HPET or the PM timer (kind NONE: neither) */
	bool hypervisor;                     /* CPUID.1:ECX[31] */
	uint32_t hv_max;                     /* CPUID.0x40000000:EAX */
	uint32_t hv_timing_khz;              /* CPUID.0x40000010:EAX (read when hv_max reaches it) */
	struct tsc_pvclock pvclock;          /* KVM's (KVM_FEATURE_CLOCKSOURCE2) */
};

struct tsc_choice {
	uint64_t khz;
	enum tsc_source source;
	bool warn;               /* a source was refused or disagrees: say it loudly */
	/* The fastest the TSC can be on this evidence: what timeouts and
	 * delays are counted in, so that a wrong rate only lengthens them
	 * (TSC_MAX_KHZ where nothing bounds it: a guess, the PIT alone). */
	uint64_t ceil_khz;
	/* An emulator's instruction-counting TSC, on its evidence (a port or
	 * reference read cheaper than TSC_EMU_MAX_TICKS_PER_READ): what
	 * hlt=auto and eoi=auto take for stock Bochs. Never for the rate
	 * alone: a hypervisor's guest on an emulator has a slow TSC too. */
	bool emulator;
};

/* The rate KVM's pvclock gives, in kHz: 0 when it gives none. */
uint64_t tsc_pvclock_khz(const struct tsc_pvclock *pv);
/* Decides and writes the boot line's text (after "tsc: ") into why. */
struct tsc_choice tsc_choose(const struct tsc_inputs *in, char *why, size_t n);
#endif
