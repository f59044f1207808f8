/* The probe's verdicts (see probe_verdict.h). Each rule cites where its
 * bits come from. */
#include "probe_verdict.h"
#include "../lib/string.h"
#include "../lib/printk.h"
#include "../iommu/vtd_defs.h"

#define ROW(r, it, v, ...) do { \
	snprintf((r)->item, sizeof (r)->item, "%s", it); \
	(r)->verdict = v; \
	(r)->why[0] = 0; \
	snprintf((r)->value, sizeof (r)->value, __VA_ARGS__); \
} while (0)
#define WHY(r, ...) snprintf((r)->why, sizeof (r)->why, __VA_ARGS__)

const char *probe_verdict_name(enum probe_verdict v)
{
	return v == PROBE_OK ? "ok" : v == PROBE_DEGRADED ? "degraded" : "missing";
}

/* CPUID leaves 0x1F and 0xB (SDM Vol. 2A, CPUID, "V2 Extended Topology
 * Enumeration Leaf" and "Extended Topology Enumeration Leaf"): subleaf n
 * has the level type in ECX[15:8] (0: invalid, which ends the list; EBX
 * then reads 0) and in EAX[4:0] the shift of the x2APIC ID to the next
 * level's ID; the last valid level's shift gives the package ID. */
int probe_pkg_shift(const uint32_t *eax, const uint32_t *ebx, const uint32_t *ecx, unsigned n)
{
	int shift = -1;
	for (unsigned i = 0; i < n; i++) {
		if (!((ecx[i] >> 8) & 0xff) || !(ebx[i] & 0xffff))
			break;
		shift = (int)(eax[i] & 0x1f);
	}
	return shift;
}

/* CPUID.1:EBX[23:16], "maximum number of addressable IDs for logical
 * processors in this physical package", valid when CPUID.1:EDX.HTT[28]. */
unsigned probe_shift_from_count(bool htt, unsigned ids)
{
	unsigned s = 0;
	if (!htt)
		return 0;
	while (s < 8 && (1u << s) < ids)
		s++;
	return s;
}

struct probe_layout probe_apic_layout(const uint32_t *ids, uint32_t n, unsigned shift)
{
	struct probe_layout l = { 0, 0, 0 };
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pkg = shift >= 32 ? 0 : ids[i] >> shift;
		bool seen = false;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = (shift >= 32 ? 0 : ids[j] >> shift) == pkg;
		l.packages += !seen;
		l.above_255 += ids[i] > 255;
		if (ids[i] > l.highest)
			l.highest = ids[i];
	}
	return l;
}

/* CPUID leaf 5 (SDM Vol. 2A, "MONITOR/MWAIT Leaf"): ECX[0] says the MWAIT
 * extensions are enumerated; EDX[4n+3:4n] the sub-states of C-state n
 * (C0..C7). CPUID.1:ECX[3] is MONITOR/MWAIT. CPUID leaf 6 EAX[2] is ARAT,
 * "APIC-Timer-always-running": without it the LAPIC timer stops in deep
 * C-states. */
void probe_cstates_rows(bool monitor, uint32_t ecx5, uint32_t edx5, bool have6, uint32_t eax6,
			struct probe_row *cst, struct probe_row *arat)
{
	int deepest = -1;
	if (!monitor) {
		ROW(cst, "c-states (MWAIT)", PROBE_MISSING, "no MONITOR/MWAIT (CPUID.1:ECX[3] = 0)");
		WHY(cst, "the CPUs idle in HLT (C1) only");
	} else if (!(ecx5 & 1)) {
		ROW(cst, "c-states (MWAIT)", PROBE_OK, "MWAIT, sub-states not enumerated (CPUID.5:ECX[0] = 0)");
	} else {
		char list[96] = "";
		size_t len = 0;
		for (int c = 0; c < 8; c++) {
			unsigned subs = (edx5 >> (4 * c)) & 0xf;
			if (!subs)
				continue;
			deepest = c;
			len += snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%sC%d:%u", len ? " " : "", c, subs);
		}
		if (len)
			ROW(cst, "c-states (MWAIT)", PROBE_OK, "sub-states %s; deepest C%d", list, deepest);
		else
			ROW(cst, "c-states (MWAIT)", PROBE_OK, "MWAIT, no sub-states enumerated (CPUID.5:EDX = 0)");
	}
	bool has_arat = have6 && (eax6 & BIT(2));
	if (has_arat) {
		ROW(arat, "arat", PROBE_OK, "yes (CPUID.6:EAX[2]): the LAPIC timer runs in every C-state");
	} else if (deepest > 1) {
		ROW(arat, "arat", PROBE_DEGRADED, "no (CPUID.6:EAX[2] = 0)");
		WHY(arat, "the LAPIC timer stops in C-states deeper than C1 (C%d here)", deepest);
	} else {
		ROW(arat, "arat", PROBE_MISSING, "no (CPUID.6:EAX[2] = 0%s)", have6 ? "" : ", no leaf 6");
		WHY(arat, "no C-state deeper than C1 enumerated: nothing stops the timer");
	}
}

/* VT-d specification, "Register Descriptions": VER 7:4 major, 3:0 minor;
 * CAP PLMR (5), PHMR (6), PI (59); ECAP QI (1), IR (3), EIM (4), SMTS
 * (43), SLTS (46); GSTS TES (31), QIES (26), IRES (25); PMEN PRS (0);
 * RTADDR TTM (11:10, 00b legacy). */
void probe_vtd_row(uint32_t ver, uint64_t cap, uint64_t ecap, uint32_t gsts, uint32_t pmen, uint64_t rtaddr,
		   bool eim_needed, struct probe_row *r)
{
	if (!cap || cap == ~0ull || ver == 0xffffffffu) {
		ROW(r, "vt-d unit", PROBE_MISSING, "no answer (CAP 0x%llx)", (unsigned long long)cap);
		WHY(r, "nothing at the DRHD's registers");
		return;
	}
	bool pl = cap & VTD_CAP_PLMR, ph = cap & VTD_CAP_PHMR;
	unsigned ttm = (unsigned)VTD_RTADDR_TTM(rtaddr);
	bool te = gsts & VTD_GSTS_TES;
	char tes[24];
	snprintf(tes, sizeof tes, te ? "on (TTM %u%ub)" : "off", ttm >> 1, ttm & 1);
	ROW(r, "vt-d unit", PROBE_OK,
	    "v%u.%u; modes: legacy, scalable %s, SLTS %u; PI %u; PMR %s; IR %u EIM %u QI %u; firmware left TE %s, IR %s, QIE %s, PMRs %s",
	    (ver >> 4) & 0xf, ver & 0xf, (ecap & VTD_ECAP_SMTS) ? "yes" : "no", !!(ecap & VTD_ECAP_SLTS),
	    !!(cap & VTD_CAP_PI), pl && ph ? "low+high" : pl ? "low" : ph ? "high" : "none",
	    !!(ecap & VTD_ECAP_IR), !!(ecap & VTD_ECAP_EIM), !!(ecap & VTD_ECAP_QI), tes,
	    (gsts & VTD_GSTS_IRES) ? "on" : "off", (gsts & VTD_GSTS_QIES) ? "on" : "off",
	    (pmen & VTD_PMEN_PRS) ? "on" : "off");
	if (te && ttm != VTD_TTM_LEGACY) {
		r->verdict = PROBE_DEGRADED;
		WHY(r, "translation left on in %s mode: the hypervisor builds legacy tables and will not switch with translation on (iommu=auto: DMA isolation off)",
		    ttm == 1 ? "scalable" : "a reserved");
	} else if (eim_needed && !((ecap & VTD_ECAP_IR) && (ecap & VTD_ECAP_EIM))) {
		r->verdict = PROBE_DEGRADED;
		WHY(r, "APIC IDs above 255 need interrupt remapping with EIM (ECAP.IR and ECAP.EIM)");
	}
}

void probe_tsc_row(uint64_t khz, enum tsc_source src, bool emulator, struct probe_row *r)
{
	static const char *const names[] = {
		[TSC_FROM_CPUID15] = "CPUID 0x15 (exact)",
		[TSC_FROM_PIT] = "the PIT, CPUID agreeing or silent",
		[TSC_FROM_EMULATOR] = "the PIT, an emulator's instruction-counting TSC",
		[TSC_FROM_CPUID16] = "CPUID 0x16's base frequency (no HPET or PM timer, the PIT refused)",
		[TSC_FROM_GUESS] = "a guess (nothing believable)",
		[TSC_FROM_HPET] = "the HPET",
		[TSC_FROM_PMTMR] = "the ACPI PM timer",
		[TSC_FROM_HYPERVISOR] = "the hypervisor's advertised rate (CPUID 0x40000010 or KVM's pvclock)",
	};
	const char *n = (unsigned)src < ARRAY_SIZE(names) && names[src] ? names[src] : "?";
	ROW(r, "tsc rate", PROBE_OK, "%llu kHz from %s", (unsigned long long)khz, n);
	if (emulator)
		r->verdict = PROBE_DEGRADED, WHY(r, "an emulator: its time is instructions, not seconds");
	else if (src == TSC_FROM_CPUID16)
		r->verdict = PROBE_DEGRADED, WHY(r, "nominal, not measured: the guest's clock may drift");
	else if (src == TSC_FROM_GUESS)
		r->verdict = PROBE_DEGRADED, WHY(r, "no source agreed: timeouts and the guest's clock are wrong");
}

void probe_skew_row(int64_t offset, uint64_t bound, uint32_t apic_id, uint32_t measured, uint32_t others,
		    uint64_t khz, struct probe_row *r)
{
	if (!others) {
		ROW(r, "tsc skew", PROBE_OK, "one CPU: nothing to compare");
		return;
	}
	if (!measured) {
		ROW(r, "tsc skew", PROBE_MISSING, "0 of %u other CPUs measured", others);
		WHY(r, "no CPU answered the ping-pong in time");
		return;
	}
	int64_t k = (int64_t)(khz ? khz : 1);
	int64_t ns = offset / k * 1000000 + offset % k * 1000000 / k;
	uint64_t mag = offset < 0 ? -(uint64_t)offset : (uint64_t)offset;
	ROW(r, "tsc skew", PROBE_OK, "largest %lld ticks (%lld ns) at APIC ID %u, known to +-%llu; %u of %u other CPUs measured",
	    (long long)offset, (long long)ns, apic_id, (unsigned long long)bound, measured, others);
	if (mag > bound)
		r->verdict = PROBE_DEGRADED, WHY(r, "beyond the bound: the TSCs differ after IA32_TSC_ADJUST was made equal; Linux may mark the TSC unstable");
	else if (measured < others)
		r->verdict = PROBE_DEGRADED, WHY(r, "%u CPUs not measured", others - measured);
}

/* MSR_SMI_COUNT (0x34): "SMI Counter" (SDM Vol. 4, the MSRs of processors
 * since Nehalem), bits 31:0. */
void probe_smi_row(bool have, uint64_t before, uint64_t after, uint64_t us, struct probe_row *r)
{
	if (!have) {
		ROW(r, "smi count", PROBE_MISSING, "MSR 0x34 (MSR_SMI_COUNT) not readable");
		WHY(r, "an emulator, or a CPU without the counter: SMIs cannot be counted");
		return;
	}
	uint64_t n = (uint32_t)((uint32_t)after - (uint32_t)before);
	ROW(r, "smi count", n ? PROBE_DEGRADED : PROBE_OK, "%llu SMIs in %llu ms of probe (MSR 0x34 %llu -> %llu)",
	    (unsigned long long)n, (unsigned long long)(us / 1000), (unsigned long long)before,
	    (unsigned long long)after);
	if (!before && !after) {
		/* Firmware on hardware takes SMIs while it boots: a counter still
		 * 0 is an emulator's stand-in (QEMU's and Bochs's read 0). */
		r->verdict = PROBE_MISSING;
		WHY(r, "reads 0 since reset: an emulator's stand-in, not a count (firmware on hardware takes SMIs while booting)");
	} else if (n)
		WHY(r, "the firmware took the machine %llu times: each SMI stops every CPU (latency the guest cannot see)",
		    (unsigned long long)n);
}
