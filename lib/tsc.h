/* TSC frequency and delays. */
#ifndef LIB_TSC_H
#define LIB_TSC_H
#include "types.h"
#include "tsc_choose.h"
#include "tsc_sync.h"
extern uint64_t tsc_khz;
/* The fastest the TSC can be on the calibration's evidence (tsc_choice's
 * ceil_khz): every wait and timeout is counted in it, so a wrong rate can
 * only lengthen them. */
extern uint64_t tsc_ceil_khz;
extern enum tsc_source tsc_source;   /* where tsc_khz came from */
struct acpi_info;
/* Takes the rate from CPUID 0x15/0x16, the HPET or the PM timer the ACPI
 * tables name, and the PIT (channel 2), by the rule of lib/tsc_choose.c,
 * and prints one line naming the source. */
void tsc_calibrate(const struct acpi_info *acpi);
void udelay(uint64_t us);
/* IA32_TSC_ADJUST made equal within each package before any CPU compares
 * TSCs (lib/tsc_sync.h): the boot CPU records its own and its package,
 * each AP takes its package's value first thing, and the report says how
 * many differed and which packages hold another value than the boot CPU's. */
void tsc_adjust_record(uint32_t boot_pkg);
void tsc_adjust_align(uint32_t pkg);
void tsc_adjust_report(void);
extern struct tsc_pkgs tsc_pkgs;
/* An emulator's instruction-counting TSC, on the calibration's evidence
 * (tsc_choice's emulator: Bochs's runs at its IPS setting), never for a
 * slow rate alone (a hypervisor's guest on an emulator). */
extern bool tsc_emulator;
static inline bool tsc_emulated(void) { return tsc_emulator; }
/* The hypervisor runs as KVM's guest (CPUID.1:ECX[31] and "KVMKVMKVM\0\0\0"
 * at 0x40000000, read with the calibration's leaves): its guests are then
 * KVM's nested guests (vmx/setup.c, hlt=auto). */
extern bool tsc_under_kvm;
/* A wait of at least us: at the ceiling rate. */
static inline uint64_t tsc_from_us(uint64_t us) { return us * tsc_ceil_khz / 1000; }
static inline uint64_t tsc_to_us(uint64_t t) { return tsc_khz ? t / tsc_khz * 1000 + t % tsc_khz * 1000 / tsc_khz : 0; }
#endif
