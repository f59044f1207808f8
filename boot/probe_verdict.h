/* The probe's verdicts (boot/probe.c gathers, this decides): pure, so the
 * host unit tests give it fake CPUID leaves, VT-d registers and counts. */
#ifndef BOOT_PROBE_VERDICT_H
#define BOOT_PROBE_VERDICT_H
#include "../lib/types.h"
#include "../lib/tsc_choose.h"

enum probe_verdict { PROBE_OK, PROBE_DEGRADED, PROBE_MISSING };

/* One row of the table: item, value, verdict (with why, unless ok). */
struct probe_row {
	char item[40];
	char value[256];
	enum probe_verdict verdict;
	char why[224];
};

/* "ok", "degraded", "missing". */
const char *probe_verdict_name(enum probe_verdict v);

/* The shift that takes an x2APIC ID to its package ID, from the subleaves
 * of CPUID 0x1F or 0xB (eax[i], ebx[i], ecx[i] for subleaf i < n): the
 * EAX[4:0] of the last subleaf with a valid level type. -1 when subleaf 0
 * is invalid (the leaf says nothing). */
int probe_pkg_shift(const uint32_t *eax, const uint32_t *ebx, const uint32_t *ecx, unsigned n);
/* Without those leaves: CPUID.1:EBX[23:16] addressable IDs per package
 * (when CPUID.1:EDX.HTT) rounded up to a power of two; 0 without HTT. */
unsigned probe_shift_from_count(bool htt, unsigned ids_per_package);
/* How many packages the APIC IDs span, how many IDs are above 255, the
 * highest. */
struct probe_layout { uint32_t packages, above_255, highest; };
struct probe_layout probe_apic_layout(const uint32_t *ids, uint32_t n, unsigned pkg_shift);

/* C-states from CPUID leaf 5 (EDX: four bits of MWAIT sub-states per
 * C-state, C0 in 3:0) and ARAT (CPUID.6:EAX[2]): two rows. */
void probe_cstates_rows(bool monitor, uint32_t leaf5_ecx, uint32_t leaf5_edx, bool have_leaf6, uint32_t leaf6_eax,
			struct probe_row *cst, struct probe_row *arat);

/* One VT-d unit's row from its registers as the firmware left them; eim_needed:
 * some CPU's APIC ID is above 255. */
void probe_vtd_row(uint32_t ver, uint64_t cap, uint64_t ecap, uint32_t gsts, uint32_t pmen, uint64_t rtaddr,
		   bool eim_needed, struct probe_row *r);

/* The TSC's rate and source (lib/tsc_choose.c). */
void probe_tsc_row(uint64_t khz, enum tsc_source src, bool emulator, struct probe_row *r);
/* The worst cross-CPU skew: offset and bound in ticks, measured of others. */
void probe_skew_row(int64_t offset, uint64_t bound, uint32_t apic_id, uint32_t measured, uint32_t others,
		    uint64_t khz, struct probe_row *r);
/* MSR_SMI_COUNT (0x34) at the probe's start and end, us apart; have: both
 * reads succeeded. */
void probe_smi_row(bool have, uint64_t before, uint64_t after, uint64_t us, struct probe_row *r);
#endif
