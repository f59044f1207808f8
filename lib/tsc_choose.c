/* Which TSC rate to believe. The rule, per kind of machine:
 *
 *  - Hardware with an exact CPUID 0x15 (ECX, the crystal, non-zero): the
 *    rate is ECX x EBX / EAX (SDM Vol. 2A, CPUID, "Time Stamp Counter and
 *    Nominal Core Crystal Clock Information Leaf": "TSC frequency" = "core
 *    crystal clock frequency" * EBX/EAX; Vol. 3B, "Determining the Processor
 *    Base Frequency"). The HPET or PM timer (else the PIT) only
 *    cross-checks it: beyond TSC_AGREE_BP it is said, never taken.
 *  - Hardware without the crystal (Skylake-SP and its successors up to
 *    Ice Lake-SP report ECX = 0): the HPET, else the ACPI PM timer, measures
 *    (lib/tsc_ref.c: every reference read bracketed by TSC reads, a window
 *    whose brackets an SMI widened measured again, longer); CPUID 0x16 EAX
 *    (the base frequency in MHz, at which the invariant TSC runs) and the
 *    PIT cross-check. Servers may gate the 8254 off, and its polled window
 *    has no such bracket. All windows disturbed: the least disturbed is
 *    taken, loudly, with its uncertainty; never a guess where a reference
 *    counts. With neither reference: the PIT measures and CPUID 0x16 checks;
 *    a PIT that disagrees is refused and the base frequency taken.
 *  - An emulator (Bochs: its TSC counts instructions at `ips`, 50 MHz in the
 *    tests, while its CPUID 0x15/0x16 are the modelled CPU's 2.2-4.2 GHz):
 *    the PIT is the truth. It is taken for one only on positive evidence, not
 *    for being slow: the PIT counted normally (OUT low at the first read of
 *    every window), the windows agree with each other, and a port read cost
 *    fewer than TSC_EMU_MAX_TICKS_PER_READ ticks, which only a TSC that
 *    counts instructions shows. A slow rate without that evidence is refused
 *    (a PIT that reads done at once, or early, on a real server would
 *    otherwise make it look like Bochs and shrink every timeout). A
 *    reference's slow rate is judged the same way.
 *  - QEMU TCG (no leaf 0x15 or 0x16; its TSC is the host's, its HPET and PM
 *    timer wall-clock): the HPET. Its PIT swings with the host's load (the
 *    288-CPU QEMU 10 boot of issue 35: "did not count"; 20 GHz).
 *  - A hypervisor's guest (CPUID.1:ECX[31]): the rate the hypervisor
 *    advertises for the TSC it gives, its timing leaf 0x40000010 (EAX, kHz)
 *    where its highest leaf reaches it, else KVM's pvclock (the rate KVM
 *    converts the guest's TSC to nanoseconds with). KVM hides 0x15/0x16, and
 *    its guest's TSC is the host's, whatever its speed: under KVM inside
 *    Bochs, L1's 50 MHz. A clean reference checks it; its reads are VM exits,
 *    so its windows are often disturbed there, and the PIT's reads too dear
 *    for an emulator's. Without an advertised rate a reference measures, and
 *    a slow rate is believed in a guest (no emulator's evidence asked: the
 *    hypervisor's bit is the evidence that the TSC is its host's).
 *  - Nothing believable: 1 GHz assumed, loudly; never below TSC_EMULATED_KHZ,
 *    so never taken for an emulator.
 *
 * Every choice also bounds the rate from above (ceil_khz): the clean
 * windows' slack, a few percent where two sources agree, the fastest TSC
 * where nothing bounds it. Timeouts and delays are counted at that bound
 * (lib/tsc.h tsc_from_us), so a wrong rate lengthens them and never
 * shrinks them below what an AP or a device needs. */
#include "tsc_choose.h"
#include "printk.h"
#include "string.h"

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

/* The HPET's or the PM timer's windows (lib/tsc_ref.c): the clean window
 * with the least slack gives the rate, every clean one bounds it. */
struct ref_verdict {
	bool present, ok, emulator, disturbed;
	uint64_t khz, khz_max;
	char said[160];                  /* "the HPET (14318180 Hz, 3 clean windows, +-0.01 %)" */
	char refused[200];               /* why not, when present && !ok */
};

static uint64_t window_bp(const struct tsc_ref_window *w)
{
	return !w->ticks || w->slack > ~0ull / BP ? BP : w->slack * BP / w->ticks;
}

static void ref_judge(const struct tsc_ref_meas *m, bool guest, struct ref_verdict *v)
{
	const char *name = tsc_ref_name(m->kind);
	const struct tsc_ref_window *w = &m->w[0];
	uint64_t lo = ~0ull, hi = 0;

	*v = (struct ref_verdict){ .present = m->kind != TSC_REF_NONE };
	if (!v->present)
		return;
	if (m->stuck || !m->tries) {
		snprintf(v->refused, sizeof v->refused, "%s refused: it did not count (%llu Hz claimed)", name,
			 (unsigned long long)m->hz);
		return;
	}
	for (unsigned i = 0; i < m->windows && i < TSC_REF_WINDOWS; i++) {
		uint64_t k = tsc_ref_khz(m, &m->w[i]), km = tsc_ref_khz_max(m, &m->w[i]);
		if (window_bp(&m->w[i]) < window_bp(w))
			w = &m->w[i];
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
		v->khz_max = km > v->khz_max ? km : v->khz_max;
	}
	v->disturbed = !m->windows;
	v->khz = tsc_ref_khz(m, w);
	if (v->disturbed)
		v->khz_max = tsc_ref_khz_max(m, w);
	uint64_t bp = window_bp(w);
	if (v->disturbed)
		snprintf(v->said, sizeof v->said, "%s (%llu Hz; all %u windows disturbed, the least +-%llu.%02llu %%)", name,
			 (unsigned long long)m->hz, m->tries, (unsigned long long)(bp / 100), (unsigned long long)(bp % 100));
	else
		snprintf(v->said, sizeof v->said, "%s (%llu Hz, %u clean window%s of %u, +-%llu.%02llu %%)", name,
			 (unsigned long long)m->hz, m->windows, m->windows == 1 ? "" : "s", m->tries,
			 (unsigned long long)(bp / 100), (unsigned long long)(bp % 100));
	if (!v->khz || !v->khz_max || v->khz > TSC_MAX_KHZ || v->khz < TSC_MIN_KHZ) {
		snprintf(v->refused, sizeof v->refused, "%s refused: it says %llu kHz, %s", name, (unsigned long long)v->khz,
			 v->khz > TSC_MAX_KHZ ? "faster than any CPU" : "slower than any usable TSC");
		return;
	}
	/* Clean windows that differ beyond their slack by "a few percent":
	 * the two clocks do not run together. */
	uint64_t spread_bp = m->windows > 1 && lo && hi - lo <= ~0ull / BP ? (hi - lo) * BP / lo : 0;
	if (spread_bp > TSC_AGREE_BP) {
		snprintf(v->refused, sizeof v->refused, "%s refused: its windows differ by %llu.%02llu %%", name,
			 (unsigned long long)(spread_bp / 100), (unsigned long long)(spread_bp % 100));
		return;
	}
	if (v->khz >= TSC_EMULATED_KHZ || guest) {
		v->ok = true;
		return;
	}
	/* Slow: an emulator's TSC only with the evidence of one (as the PIT). */
	if (v->disturbed || m->read_ticks >= TSC_EMU_MAX_TICKS_PER_READ) {
		snprintf(v->refused, sizeof v->refused,
			 "%s refused: it says %llu kHz, slower than any CPU with VMX, yet a read took %llu ticks (not an emulator's instruction clock)",
			 name, (unsigned long long)v->khz, (unsigned long long)m->read_ticks);
		return;
	}
	v->ok = v->emulator = true;
}

/* Appends to why. */
static void add(char *why, size_t n, const char *fmt, ...) __printf(3, 4);
static void add(char *why, size_t n, const char *fmt, ...)
{
	size_t at = strlen(why);
	va_list ap;
	if (at >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(why + at, n - at, fmt, ap);
	va_end(ap);
}

static uint64_t plus_agree(uint64_t khz)
{
	return khz + (khz * TSC_AGREE_BP + BP - 1) / BP;
}

/* The PIT's slowest window as a rate: the fastest the TSC was. */
static uint64_t pit_khz_max(const struct tsc_inputs *in)
{
	uint64_t worst = 0;
	for (unsigned i = 0; i < in->pit_windows && i < TSC_PIT_WINDOWS; i++)
		worst = in->pit_ticks[i] > worst ? in->pit_ticks[i] : worst;
	if (!in->pit_count || worst > ~0ull / TSC_PIT_HZ)
		return TSC_MAX_KHZ;
	return (worst * TSC_PIT_HZ + (uint64_t)in->pit_count * 1000 - 1) / in->pit_count / 1000;
}

uint64_t tsc_pvclock_khz(const struct tsc_pvclock *pv)
{
	/* kHz = 10^6 * 2^32 / (mul * 2^shift), rounded. */
	const uint64_t num = 1000000ull << 32;
	if (!pv->valid || !pv->mul || pv->shift > 31 || pv->shift < -12)
		return 0;
	if (pv->shift < 0) {
		uint64_t wide = num << -pv->shift;
		return (wide + pv->mul / 2) / pv->mul;
	}
	uint64_t den = (uint64_t)pv->mul << pv->shift;
	return (num + den / 2) / den;
}

/* A hypervisor's word on the TSC it gives (said names it), 0 when none. */
static uint64_t hv_advertised(const struct tsc_inputs *in, char *said, size_t n, const char **bogus, bool *leaf)
{
	uint64_t pv = tsc_pvclock_khz(&in->pvclock), k = 0;

	said[0] = 0;
	*leaf = false;
	if (!in->hypervisor)
		return 0;
	if (in->hv_max >= TSC_HV_LEAF_TIMING && in->hv_max < TSC_HV_LEAF_BASE + 0x10000 && in->hv_timing_khz) {
		k = in->hv_timing_khz;
		*leaf = true;
		snprintf(said, n, "the hypervisor's timing leaf (CPUID 0x40000010)");
	} else if (pv) {
		k = pv;
		snprintf(said, n, "KVM's pvclock (mul 0x%08x, shift %d)", in->pvclock.mul, in->pvclock.shift);
	}
	if (k && (k < TSC_MIN_KHZ || k > TSC_MAX_KHZ)) {
		if (!**bogus)
			*bogus = " (the hypervisor's advertised rate is no TSC's: ignored)";
		return 0;
	}
	return k;
}

static struct tsc_choice decide(const struct tsc_inputs *in, char *why, size_t n)
{
	struct tsc_choice ch = { 0 };
	struct pit_verdict pit;
	struct ref_verdict rv;
	char cpu[96] = "", p[32], hv[80];
	uint64_t k15 = 0, k16 = 0, ref, adv;
	const char *bogus = "";
	bool leaf;

	why[0] = 0;
	pit_judge(in, &pit);
	ref_judge(&in->ref, in->hypervisor, &rv);
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
	adv = hv_advertised(in, hv, sizeof hv, &bogus, &leaf);

	/* A hypervisor's guest: its advertised rate, exact as leaf 0x15 is
	 * (timeouts at it); a clean reference checks it, a disturbed one (its
	 * reads are VM exits) and the PIT are only said. */
	if (adv) {
		ch = (struct tsc_choice){ adv, TSC_FROM_HYPERVISOR, false, adv, false };
		add(why, n, "%llu kHz from %s: a hypervisor's guest", (unsigned long long)adv, hv);
		if (leaf && tsc_pvclock_khz(&in->pvclock))
			add(why, n, "; KVM's pvclock says %llu kHz", (unsigned long long)tsc_pvclock_khz(&in->pvclock));
		if (rv.ok) {
			bool ok = rv.disturbed || agrees(rv.khz, adv);
			pct(p, sizeof p, rv.khz, adv);
			ch.warn = !ok;
			add(why, n, "; %s says %llu kHz (%s)%s", rv.said, (unsigned long long)rv.khz, p,
			    rv.disturbed ? ", too disturbed to check it" : ok ? "" : ": more than a few percent off");
		} else if (rv.present) {
			add(why, n, "; %s", rv.refused);
		}
		if (pit.ok) {
			pct(p, sizeof p, pit.khz, adv);
			add(why, n, "; PIT says %llu kHz (%s)", (unsigned long long)pit.khz, p);
		} else {
			add(why, n, "; PIT refused: %s", pit.refused);
		}
		if (ref)
			add(why, n, "; %s says %llu kHz, the host CPU's", cpu, (unsigned long long)ref);
		add(why, n, "%s", bogus);
		return ch;
	}
	if (pit.emulator) {
		ch = (struct tsc_choice){ pit.khz, TSC_FROM_EMULATOR, false, pit_khz_max(in), true };
		if (ref)
			add(why, n, "%llu kHz from the PIT: an emulator (a port read costs %llu TSC ticks: the TSC counts instructions); %s says %llu kHz, the modelled CPU's%s",
			    (unsigned long long)pit.khz, (unsigned long long)pit.ticks_per_read, cpu, (unsigned long long)ref, bogus);
		else
			add(why, n, "%llu kHz from the PIT: an emulator (a port read costs %llu TSC ticks: the TSC counts instructions)%s",
			    (unsigned long long)pit.khz, (unsigned long long)pit.ticks_per_read, bogus);
		if (rv.ok)
			add(why, n, "; %s says %llu kHz", tsc_ref_name(in->ref.kind), (unsigned long long)rv.khz);
		else if (rv.present)
			add(why, n, "; %s", rv.refused);
		return ch;
	}
	/* An exact CPUID 0x15: taken; a reference (else the PIT) checks it. */
	if (k15 && rv.ok) {
		bool ok = agrees(rv.khz, k15);
		pct(p, sizeof p, rv.khz, k15);
		ch = (struct tsc_choice){ k15, TSC_FROM_CPUID15, !ok, k15, false };
		add(why, n, "%llu kHz from %s; %s says %llu kHz (%s)%s%s", (unsigned long long)k15, cpu, rv.said,
		    (unsigned long long)rv.khz, p, ok ? "" : ": more than a few percent off", bogus);
		return ch;
	}
	/* No crystal: the reference measures (an emulator's slow TSC too,
	 * with the evidence of one); CPUID 0x16 and the PIT only check it. */
	if (rv.ok) {
		bool ok16 = !k16 || agrees(rv.khz, k16);
		ch = (struct tsc_choice){ rv.khz, in->ref.kind == TSC_REF_HPET ? TSC_FROM_HPET : TSC_FROM_PMTMR,
					  rv.disturbed || (!ok16 && !rv.emulator), rv.khz_max, rv.emulator };
		add(why, n, "%llu kHz from %s", (unsigned long long)rv.khz, rv.said);
		if (rv.emulator)
			add(why, n, ": an emulator (a read costs %llu TSC ticks: the TSC counts instructions)",
			    (unsigned long long)in->ref.read_ticks);
		else if (in->hypervisor && rv.khz < TSC_EMULATED_KHZ)
			add(why, n, ": a hypervisor's guest, which advertises no rate (its TSC is its host's)");
		if (rv.disturbed)
			add(why, n, ": taken with its uncertainty");
		if (k16) {
			pct(p, sizeof p, rv.khz, k16);
			add(why, n, "; %s says %llu kHz (%s)%s", cpu, (unsigned long long)k16, p,
			    rv.emulator ? ", the modelled CPU's" : ok16 ? "" : ": more than a few percent off");
		} else {
			add(why, n, " (no CPUID 0x15 crystal%s)", k16 ? "" : ", no 0x16 base frequency");
		}
		if (pit.ok) {
			pct(p, sizeof p, pit.khz, rv.khz);
			add(why, n, "; PIT says %llu kHz (%s)", (unsigned long long)pit.khz, p);
		} else {
			add(why, n, "; PIT refused: %s", pit.refused);
		}
		add(why, n, "%s", bogus);
		return ch;
	}
	if (pit.ok && !ref) {
		ch = (struct tsc_choice){ pit.khz, TSC_FROM_PIT, false, TSC_MAX_KHZ, false };
		add(why, n, "%llu kHz from the PIT (no CPUID 0x15 crystal, no 0x16 base frequency)%s",
		    (unsigned long long)pit.khz, bogus);
	} else if (pit.ok) {
		bool ok = agrees(pit.khz, ref);
		pct(p, sizeof p, pit.khz, ref);
		if (!k15 && ok) {
			ch = (struct tsc_choice){ pit.khz, TSC_FROM_PIT, false, plus_agree(pit.khz > ref ? pit.khz : ref), false };
			add(why, n, "%llu kHz from the PIT; %s says %llu kHz (%s)",
			    (unsigned long long)pit.khz, cpu, (unsigned long long)ref, p);
		} else {
			ch = (struct tsc_choice){ ref, k15 ? TSC_FROM_CPUID15 : TSC_FROM_CPUID16, !ok, k15 ? k15 : plus_agree(ref), false };
			add(why, n, "%llu kHz from %s; PIT says %llu kHz (%s)%s%s",
			    (unsigned long long)ref, cpu, (unsigned long long)pit.khz, p,
			    ok ? "" : ": refused, more than a few percent off", bogus);
		}
	} else if (ref) {
		ch = (struct tsc_choice){ ref, k15 ? TSC_FROM_CPUID15 : TSC_FROM_CPUID16, true, k15 ? k15 : plus_agree(ref), false };
		add(why, n, "%llu kHz from %s; PIT refused: %s%s",
		    (unsigned long long)ref, cpu, pit.refused, bogus);
	} else {
		ch = (struct tsc_choice){ TSC_GUESS_KHZ, TSC_FROM_GUESS, true, TSC_MAX_KHZ, false };
		add(why, n, "%llu kHz assumed (no CPUID 0x15 crystal, no 0x16 base frequency); PIT refused: %s%s",
		    TSC_GUESS_KHZ, pit.refused, bogus);
	}
	if (rv.present)
		add(why, n, "; %s", rv.refused);
	else if (!k15)
		add(why, n, "; no HPET, no PM timer");
	return ch;
}

struct tsc_choice tsc_choose(const struct tsc_inputs *in, char *why, size_t n)
{
	struct tsc_choice ch = decide(in, why, n);
	/* Timeouts are counted at the ceiling: never below the rate taken,
	 * never above the fastest CPU's (nothing waits longer than needed
	 * on a machine with no evidence at all). */
	if (ch.ceil_khz < ch.khz)
		ch.ceil_khz = ch.khz;
	if (ch.ceil_khz > TSC_MAX_KHZ)
		ch.ceil_khz = ch.khz > TSC_MAX_KHZ ? ch.khz : TSC_MAX_KHZ;
	if (ch.source == TSC_FROM_GUESS || (ch.source == TSC_FROM_PIT && ch.ceil_khz == TSC_MAX_KHZ))
		add(why, n, "; timeouts counted at %llu kHz, the fastest TSC", (unsigned long long)ch.ceil_khz);
	return ch;
}
