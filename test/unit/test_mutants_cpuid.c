/* CPUID-driven decisions on a CPU that is not the build machine's (issue
 * 36, fault 12 and the CPUID seam, cpu_fake.h). From the SDM:
 *  - Vol. 2A, CPUID: CPUID.(EAX=07H,ECX=0):EBX[bit 1] "IA32_TSC_ADJUST
 *    MSR is supported if 1"; leaf 0x80000008 EAX[7:0] is MAXPHYADDR, 36
 *    where the leaf does not exist (Vol. 3A, "Physical Address Space");
 *    CPUID.1:EAX is the processor signature;
 *  - Vol. 4: IA32_TSC_ADJUST is MSR 0x3B; IA32_APIC_BASE MSR 0x1B, base
 *    in 12 to MAXPHYADDR-1, the bits above reserved (a write setting one:
 *    #GP), bit 11 enable, bit 10 x2APIC.
 * A CPU may answer an MSR that CPUID does not list (emulators do): only
 * CPUID says whether the guest has it. */
#include "test.h"
#include "cpu_fake.h"
#include "hw_fake.h"
#include "../../vmx/tsc.h"
#include "../../vmx/vcpu.h"
#include "../../guest/msr.h"
#include "../../lib/cpu.h"

#define C_TSC_ADJUST 0x3b
#define C_APIC_BASE  0x1b

TEST(mutant_tsc_adjust_exists_only_where_cpuid_lists_it)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	uint64_t val = 7;
	/* CPUID.7:EBX[1] clear, the MSR readable all the same. */
	cpu_fake_msr(C_TSC_ADJUST, true, 0x1234);
	cpu_fake_cpuid(7, 0, 0, 0, 0, 0);
	vcpu_tsc_init(v, 0);
	CHECK(!v->tsc_adjust_exists);
	CHECK_EQ(v->tsc.adjust, 0);
	CHECK_EQ(vcpu_tsc_rdmsr(v, C_TSC_ADJUST, &val), -1);   /* #GP, as on that CPU */
	CHECK_EQ(vcpu_tsc_wrmsr(v, C_TSC_ADJUST, 5), -1);
	/* Listed and readable: the guest's starts at the CPU's value. */
	cpu_fake_cpuid(7, 0, 0, 1u << 1, 0, 0);
	vcpu_tsc_init(v, 0);
	CHECK(v->tsc_adjust_exists);
	CHECK_EQ(v->tsc.adjust, 0x1234);
	CHECK_EQ(v->tsc.offset, 0);
	CHECK_EQ(vcpu_tsc_rdmsr(v, C_TSC_ADJUST, &val), 0);
	CHECK_EQ(val, 0x1234);
	/* Listed, but the read faults: not there. */
	cpu_fake_msr(C_TSC_ADJUST, false, 0);
	vcpu_tsc_init(v, 0);
	CHECK(!v->tsc_adjust_exists);
	/* A CPU whose highest basic leaf is 5: leaf 7 answers leaf 5's data
	 * (SDM), whose EBX bit 1 means nothing here; the MSR faults. */
	cpu_fake_cpuid(0, 0, 5, 0, 0, 0);
	cpu_fake_cpuid(5, 0, 0x40, 0x40 | 2, 3, 0);
	uint32_t a, b, c, d;
	cpuid_count(7, 0, &a, &b, &c, &d);
	CHECK_EQ(b, 0x42);
	vcpu_tsc_init(v, 0);
	CHECK(!v->tsc_adjust_exists);
}

/* The seam itself: the reference CPU unless a test says otherwise. */
TEST(cpuid_seam_answers_the_modelled_cpu)
{
	uint32_t a, b, c, d;
	cpuid_count(1, 0, &a, &b, &c, &d);
	CHECK_EQ(a, 0x000806f8);
	cpuid_count(0x80000008, 0, &a, &b, &c, &d);
	CHECK_EQ(a & 0xff, 46);
	cpu_fake_cpuid(1, 0, 0x000306c3, 0, 0, 0);        /* a Haswell */
	cpuid_count(1, 0, &a, &b, &c, &d);
	CHECK_EQ(a, 0x000306c3);
	cpuid_count(0x40000000, 0, &a, &b, &c, &d);        /* no hypervisor leaf: the highest basic one's */
	uint32_t m[4];
	cpuid_count(0x1f, 0, &m[0], &m[1], &m[2], &m[3]);
	CHECK(a == m[0] && b == m[1] && c == m[2] && d == m[3]);
}

/* MAXPHYADDR (guest/msr.c) from CPUID: the same IA32_APIC_BASE write is a
 * base move (refused, dropped) with 46 bits and a reserved bit (#GP) with
 * 39, or with 36 where leaf 0x80000008 does not exist. */
TEST(cpuid_maxphyaddr_decides_apic_base_reserved_bits)
{
	hw_reset(1);
	uint64_t cur = 0xfee00000u | 1u << 11 | 1u << 10 | 1u << 8;
	wrmsr(C_APIC_BASE, cur);
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur | 1ull << 38), MSR_WRITE_DROPPED);   /* 46 bits: a base */
	cpu_fake_cpuid(0x80000008, 0, 0x3027, 0, 0, 0);                             /* 39 bits */
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur | 1ull << 38), MSR_WRITE_DROPPED);
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur | 1ull << 39), -1);
	cpu_fake_cpuid(0x80000000, 0, 0x80000004, 0, 0, 0);                         /* no leaf 0x80000008: 36 */
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur | 1ull << 35), MSR_WRITE_DROPPED);
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur | 1ull << 36), -1);
	CHECK_EQ(guest_wrmsr(C_APIC_BASE, cur), 0);
}
