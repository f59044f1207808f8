/* The TSC rate of a hypervisor's guest (lib/tsc_choose.c): the rate the
 * hypervisor advertises, else a reference that measures. Each case says
 * what the rule before it (a slow rate believed only with an emulator's
 * cheap reads) took there.
 *
 * The inputs are the hypervisor's own under KVM inside the patched Bochs
 * (the nested level, tools/run-nested.sh), as its boot line printed them:
 * "PIT refused: it says 51010 kHz, ..., yet a port read took 12145 ticks",
 * "the HPET refused: it says 50000 kHz, ..., yet a read took 14167 ticks",
 * no CPUID 0x15 crystal, no 0x16 base frequency.
 *
 * Constants from the documents: CPUID.1:ECX[31] is set by hypervisors for
 * their guests (SDM Vol. 2A, CPUID: "Not Used"); the hypervisor leaves
 * start at 0x40000000, whose EAX is the highest, the timing leaf 0x40000010
 * gives the TSC in kHz in EAX; KVM's pvclock (Documentation/virt/kvm/x86/
 * msr.rst, MSR_KVM_SYSTEM_TIME_NEW) converts with
 * ns = (delta << tsc_shift) * tsc_to_system_mul >> 32, i.e. a TSC of
 * 10^9 * 2^32 / mul / 2^shift Hz. QEMU's HPET counts at 100 MHz. */
#include "test.h"
#include "../../lib/tsc_choose.h"

#define COUNT 11932                       /* the PIT window of lib/tsc.c: 10 ms */
#define PIT_HZ 1193182ull
#define HPET_HZ 100000000ull              /* QEMU's HPET: a period of 10 ns */
#define HV_BASE 0x40000000u
#define HV_TIMING 0x40000010u

static char why[640];

/* The hypervisor's inputs under KVM in Bochs: CPUID to 0x1f without
 * leaves 0x15/0x16, a PIT whose reads are VM exits, an HPET at 100 MHz
 * whose every window a VM exit per read disturbed. */
static struct tsc_inputs kvm_in_bochs(void)
{
	struct tsc_inputs in = { .cpuid_max = 0x1f, .pit_count = COUNT, .pit_end = TSC_PIT_COUNTED,
				 .pit_windows = 3, .hypervisor = true, .hv_max = HV_BASE + 1 };
	uint64_t t = 51010ull * 1000 * COUNT / PIT_HZ + 1;
	for (int i = 0; i < 3; i++) {
		in.pit_ticks[i] = t;
		in.pit_reads[i] = (uint32_t)(t / 12145);
	}
	/* 80 ms, 30000 ticks of slack (7.5 %: each read a VM exit). */
	in.ref = (struct tsc_ref_meas){ .kind = TSC_REF_HPET, .hz = HPET_HZ, .bits = 64, .windows = 0,
					.tries = 8, .read_ticks = 14167 };
	in.ref.w[0] = (struct tsc_ref_window){ 4000000, 30000, 8000000 };
	return in;
}

/* KVM's mul and shift for a rate in kHz, from msr.rst's formula: the
 * smallest shift in [-8, 31] whose mul fits 32 bits with its top bit set. */
static struct tsc_pvclock pvclock_for(uint64_t khz)
{
	for (int s = -8; s <= 31; s++) {
		/* mul = 10^6 * 2^32 / (khz * 2^s) */
		unsigned __int128 num = (unsigned __int128)1000000 << 32, den = (unsigned __int128)khz;
		if (s < 0)
			num <<= -s;
		else
			den <<= s;
		unsigned __int128 mul = num / den;
		if (mul < (1ull << 32))
			return (struct tsc_pvclock){ true, (uint32_t)mul, (int8_t)s };
	}
	return (struct tsc_pvclock){ 0 };
}

TEST(tsc_guest_pvclock_math)
{
	struct tsc_pvclock pv = { true, 0xa0000000u, 5 };   /* 20 ns a tick: 50 MHz */
	CHECK_EQ(tsc_pvclock_khz(&pv), 50000);
	pv = pvclock_for(2100000);
	CHECK(pv.shift < 0);
	CHECK_EQ(tsc_pvclock_khz(&pv), 2100000);
	pv = pvclock_for(3187654);
	CHECK(tsc_pvclock_khz(&pv) >= 3187653 && tsc_pvclock_khz(&pv) <= 3187655);
	pv = pvclock_for(1000);
	CHECK_EQ(tsc_pvclock_khz(&pv), 1000);
	/* Not written, no multiplier, a shift beyond 64-bit arithmetic: none. */
	pv.valid = false;
	CHECK_EQ(tsc_pvclock_khz(&pv), 0);
	pv = (struct tsc_pvclock){ true, 0, 0 };
	CHECK_EQ(tsc_pvclock_khz(&pv), 0);
	pv = (struct tsc_pvclock){ true, 0x80000000u, -40 };
	CHECK_EQ(tsc_pvclock_khz(&pv), 0);
	pv = (struct tsc_pvclock){ true, 0x80000000u, 40 };
	CHECK_EQ(tsc_pvclock_khz(&pv), 0);
}

/* The nested level: KVM's pvclock says 50 MHz, which the HPET measured. */
TEST(tsc_guest_kvm_pvclock_taken)
{
	struct tsc_inputs in = kvm_in_bochs();
	in.pvclock = pvclock_for(50000);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HYPERVISOR);
	CHECK_EQ(c.khz, 50000);
	CHECK_EQ(c.ceil_khz, 50000);
	CHECK(!c.emulator);                      /* KVM's guest: not stock Bochs (hlt=auto, eoi=auto) */
	CHECK(!c.warn);
	CHECK_CONTAINS(why, "50000 kHz from KVM's pvclock (mul 0xa0000000, shift 5): a hypervisor's guest");
	CHECK_CONTAINS(why, "the HPET (100000000 Hz; all 8 windows disturbed");
	CHECK_CONTAINS(why, "too disturbed to check it");
	CHECK_CONTAINS(why, "PIT refused: it says 51010 kHz");
	/* Before: "1000000 kHz assumed (no CPUID 0x15 crystal, no 0x16 base
	 * frequency); PIT refused: ...; the HPET refused: it says 50000 kHz,
	 * slower than any CPU with VMX, yet a read took 14167 ticks", 20 times
	 * the truth, timeouts counted at 10 GHz. */
}

/* The timing leaf where the highest leaf reaches it; pvclock said beside. */
TEST(tsc_guest_timing_leaf_taken)
{
	struct tsc_inputs in = kvm_in_bochs();
	in.hv_max = HV_TIMING;
	in.hv_timing_khz = 50000;
	in.pvclock = pvclock_for(50000);
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HYPERVISOR);
	CHECK_EQ(c.khz, 50000);
	CHECK_CONTAINS(why, "50000 kHz from the hypervisor's timing leaf (CPUID 0x40000010): a hypervisor's guest; KVM's pvclock says 50000 kHz");
	/* A highest leaf below 0x40000010: the leaf is not there, whatever
	 * it reads (pvclock then). */
	in.hv_max = HV_BASE + 1;
	in.hv_timing_khz = 2100000;
	c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.khz, 50000);
	CHECK_CONTAINS(why, "from KVM's pvclock");
	/* A rate no TSC has: ignored, said. */
	in.hv_max = HV_TIMING;
	in.hv_timing_khz = 5;
	in.pvclock.valid = false;
	c = tsc_choose(&in, why, sizeof why);
	CHECK(c.source != TSC_FROM_HYPERVISOR);
	CHECK_CONTAINS(why, "the hypervisor's advertised rate is no TSC's: ignored");
}

/* A clean reference that disagrees: said loudly, the advertised rate kept. */
TEST(tsc_guest_clean_reference_checks_the_advertised_rate)
{
	struct tsc_inputs in = kvm_in_bochs();
	in.pvclock = pvclock_for(2100000);
	in.ref.windows = 3;
	for (int i = 0; i < 3; i++)
		in.ref.w[i] = (struct tsc_ref_window){ 26000000, 1000, 1000000 };   /* 2.6 GHz */
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HYPERVISOR);
	CHECK_EQ(c.khz, 2100000);
	CHECK(c.warn);
	CHECK_CONTAINS(why, "says 2600000 kHz (+23.80 %): more than a few percent off");
	for (int i = 0; i < 3; i++)
		in.ref.w[i] = (struct tsc_ref_window){ 21000000, 1000, 1000000 };
	c = tsc_choose(&in, why, sizeof why);
	CHECK(!c.warn);
}

/* No advertised rate (a hypervisor without the leaf, KVM without
 * kvmclock): the reference measures, a slow rate believed in a guest. */
TEST(tsc_guest_without_advertised_rate_measured)
{
	struct tsc_inputs in = kvm_in_bochs();
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_HPET);
	CHECK(c.khz >= 49900 && c.khz <= 50100);
	CHECK(!c.emulator);
	CHECK(c.ceil_khz >= c.khz && c.ceil_khz < 60000);
	CHECK_CONTAINS(why, "a hypervisor's guest, which advertises no rate (its TSC is its host's)");
	/* Before: 1000000 kHz assumed, as above. */
}

/* The same inputs without the hypervisor's bit: the bare-metal rule,
 * which refuses a slow rate without an emulator's evidence; a pvclock
 * there (no hypervisor says it) is not read. */
TEST(tsc_guest_bit_clear_keeps_the_bare_rule)
{
	struct tsc_inputs in = kvm_in_bochs();
	in.hypervisor = false;
	in.pvclock = pvclock_for(50000);
	in.hv_max = HV_TIMING;
	in.hv_timing_khz = 50000;
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_GUESS);
	CHECK_EQ(c.khz, 1000000);
	CHECK(!c.emulator);
	CHECK_CONTAINS(why, "the HPET refused: it says 50000 kHz, slower than any CPU with VMX, yet a read took 14167 ticks");
}

/* Bochs: the emulator comes from the evidence, as before. */
TEST(tsc_guest_emulator_from_its_evidence)
{
	struct tsc_inputs in = { .cpuid_max = 0x20, .l15_eax = 2, .l15_ebx = 0xb0, .l15_ecx = 0x017d7840,
				 .l16_eax = 0x898, .pit_count = COUNT, .pit_end = TSC_PIT_COUNTED, .pit_windows = 3 };
	uint64_t t = 50000ull * 1000 * COUNT / PIT_HZ + 1;
	for (int i = 0; i < 3; i++) {
		in.pit_ticks[i] = t + (uint64_t)i;
		in.pit_reads[i] = (uint32_t)(t / 10);
	}
	struct tsc_choice c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_EMULATOR);
	CHECK(c.emulator);
	/* A fast machine is none. */
	in = (struct tsc_inputs){ .cpuid_max = 0x20, .l15_eax = 2, .l15_ebx = 168, .l15_ecx = 25000000 };
	c = tsc_choose(&in, why, sizeof why);
	CHECK_EQ(c.source, TSC_FROM_CPUID15);
	CHECK(!c.emulator);
}
