/* Four deviations from the architecture that an architectural test suite
 * found with this hypervisor under it (issue 28), each against a model of
 * what the SDM says, written out here:
 *  - a WRMSR to SELF IPI (83FH) with a vector below 16 and virtual-interrupt
 *    delivery on is an APIC-write VM exit (SDM Vol. 3C, "Virtualizing
 *    MSR-Based APIC Accesses": WRMSR 83FH stores EDX:EAX at offset 3F0H of
 *    the virtual-APIC page, then self-IPI virtualization if EAX[7:4] is not
 *    0, else "an APIC-write VM exit as if there had been a write access to
 *    page offset 3F0H"; "APIC-Write VM Exits": trap-like, qualification =
 *    the page offset; basic exit reason 56, Vol. 3D, Appendix C); the local
 *    APIC sends nothing and sets the ESR's "Send Illegal Vector" (bit 5),
 *    seen after the next ESR write, with an error interrupt through LVT
 *    Error unless it is masked (Vol. 3A, "Error Handling");
 *  - RDMSR of a reserved or write-only x2APIC MSR #GPs (Vol. 3A, "x2APIC
 *    Register Address Space", sdm_x2apic.h), while APIC-register
 *    virtualization would answer every 800H-8FFH from the virtual-APIC page
 *    ("Virtualizing MSR-Based APIC Accesses");
 *  - CPUID.1:ECX.OSXSAVE (bit 27) is CR4.OSXSAVE (bit 18) and
 *    CPUID.(7,0):ECX.OSPKE (bit 4) is CR4.PKE (bit 22) (Vol. 2A, "CPUID");
 *  - the RFLAGS image pushed by a fault-class exception has RF = 1, except
 *    for an instruction-breakpoint #DB (Vol. 3A, "EFLAGS Register"; the class
 *    of each vector: Table "Protected-Mode Exceptions and Interrupts"). */
#include "test.h"
#include "hw_fake.h"
#include "sdm_vmcs.h"
#include "sdm_x2apic.h"
#include "vmcs_record.h"
#include "../../vmx/vmcs_ops.h"
#include "../../vmx/vcpu.h"
#include "../../vmx/virq.h"
#include "../../vmx/event.h"
#include "../../guest/cpuid.h"
#include "../../guest/msr.h"

#define M_EXIT_APIC_WRITE 56
#define M_MSR_SVR 0x80f
#define M_MSR_ESR 0x828
#define M_MSR_LVT_ERROR 0x837
#define M_MSR_SELF_IPI 0x83f
#define M_OFF_ESR 0x280
#define M_OFF_IRR 0x200
#define M_OFF_SELF_IPI 0x3f0
#define M_ESR_SEND_ILLEGAL (1u << 5)
#define M_ESR_RECV_ILLEGAL (1u << 6)
#define M_LVT_MASKED (1u << 16)
#define M_ERROR_VECTOR 0xfe

static uint32_t page32(struct vcpu *v, unsigned off)
{
	uint32_t w;
	memcpy(&w, v->vapic + off, 4);
	return w;
}
static bool virr(struct vcpu *v, unsigned vec) { return (page32(v, M_OFF_IRR + 0x10 * (vec / 32)) >> (vec % 32)) & 1; }
static unsigned rvi(void) { return (unsigned)(vmcs_record_get(SDM_GUEST_INTR_STATUS) & 0xff); }
static void virr_clear(struct vcpu *v)
{
	memset(v->vapic + M_OFF_IRR, 0, 0x80);
	vmcs_write(SDM_GUEST_INTR_STATUS, 0);
}

static void apic_write_exit(void *arg) { exit_apic_write(arg); }

/* The guest's WRMSR 83FH on the CPU of the model above (with VID and the
 * bitmap letting it through; an intercepted one exits as WRMSR). Returns -1
 * for #GP, 0 when the CPU virtualized it, 1 when it was an APIC-write exit
 * (*panicked: its handler stopped the machine). */
static int wrmsr_self_ipi(struct vcpu *v, uint64_t val, bool *panicked)
{
	*panicked = false;
	const uint8_t *bm = (const uint8_t *)(uintptr_t)vmcs_record_get(SDM_MSR_BITMAP);
	if (bm && msr_bitmap_intercepts(bm, M_MSR_SELF_IPI, true))
		return hw_guest_wrmsr(v, M_MSR_SELF_IPI, val);
	if (val >> 8)
		return -1;
	memcpy(v->vapic + M_OFF_SELF_IPI, &val, 8);
	unsigned vec = (unsigned)val & 0xff;
	if (vec >> 4) {                        /* self-IPI virtualization: VIRR[vec], RVI */
		uint32_t w = page32(v, M_OFF_IRR + 0x10 * (vec / 32)) | 1u << (vec % 32);
		memcpy(v->vapic + M_OFF_IRR + 0x10 * (vec / 32), &w, 4);
		if (vec > rvi())
			vmcs_write(SDM_GUEST_INTR_STATUS, (vmcs_record_get(SDM_GUEST_INTR_STATUS) & 0xff00) | vec);
		return 0;
	}
	v->reason = M_EXIT_APIC_WRITE;
	v->qual = M_OFF_SELF_IPI;
	*panicked = test_expect_panic(apic_write_exit, v);
	if (!*panicked)
		virq_before_entry(v);
	return 1;
}

/* What the guest reads from ESR after writing it (the write is intercepted,
 * the read comes from the virtual-APIC page). */
static uint32_t esr_after_write(struct vcpu *v)
{
	uint64_t esr = 0xdead;
	CHECK_EQ(hw_guest_wrmsr(v, M_MSR_ESR, 0), 0);
	CHECK_EQ(hw_guest_rdmsr(v, M_MSR_ESR, &esr), 0);
	return (uint32_t)esr;
}

TEST(apic_write_self_ipi_illegal_vector_sets_esr)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	bool panicked;
	CHECK_EQ(hw_guest_wrmsr(v, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(hw_guest_wrmsr(v, M_MSR_LVT_ERROR, M_ERROR_VECTOR), 0);
	CHECK_EQ(esr_after_write(v), 0);
	for (unsigned vec = 0; vec < 16; vec += 15) {
		virr_clear(v);
		test_log_clear();
		int r = wrmsr_self_ipi(v, vec, &panicked);
		CHECK_EQ(r, 1);
		if (panicked)
			printf("    WRMSR 0x83f <- %u: %s", vec, test_log());
		CHECK(!panicked);
		CHECK_EQ(page32(v, M_OFF_ESR), 0);             /* shown only after the next ESR write */
		CHECK(!virr(v, vec));                           /* nothing below 16 is requested */
		CHECK(virr(v, M_ERROR_VECTOR));                 /* the error interrupt */
		CHECK_EQ(rvi(), M_ERROR_VECTOR);
		CHECK_EQ(esr_after_write(v), M_ESR_SEND_ILLEGAL);
		CHECK_EQ(esr_after_write(v), 0);                /* collected anew after each write */
	}
	/* LVT Error masked: collected all the same, no interrupt. */
	CHECK_EQ(hw_guest_wrmsr(v, M_MSR_LVT_ERROR, M_LVT_MASKED | M_ERROR_VECTOR), 0);
	virr_clear(v);
	CHECK_EQ(wrmsr_self_ipi(v, 7, &panicked), 1);
	CHECK(!panicked);
	CHECK(!virr(v, M_ERROR_VECTOR));
	CHECK_EQ(esr_after_write(v), M_ESR_SEND_ILLEGAL);
	/* LVT Error with an illegal vector itself: receive illegal vector too. */
	CHECK_EQ(hw_guest_wrmsr(v, M_MSR_LVT_ERROR, 3), 0);
	virr_clear(v);
	CHECK_EQ(wrmsr_self_ipi(v, 0, &panicked), 1);
	CHECK(!panicked);
	CHECK_EQ(esr_after_write(v), M_ESR_SEND_ILLEGAL | M_ESR_RECV_ILLEGAL);
	CHECK_EQ(rvi(), 0);
	/* A legal vector is the CPU's; reserved bits its #GP. */
	virr_clear(v);
	CHECK_EQ(wrmsr_self_ipi(v, 0x10, &panicked), 0);
	CHECK(virr(v, 0x10));
	CHECK_EQ(wrmsr_self_ipi(v, 0x100, &panicked), -1);
	CHECK_EQ(esr_after_write(v), 0);
}

/* The offsets only an APIC-access page can give (no vCPU has one): never
 * fatal, counted. */
TEST(apic_write_other_offsets_not_fatal)
{
	static const unsigned offs[] = { 0x020, 0x0b0, 0x0d0, 0x0e0, 0x0f0, 0x280, 0x320, 0x370, 0x380, 0x3e0, 0xff0 };
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	for (size_t i = 0; i < ARRAY_SIZE(offs); i++) {
		v->reason = M_EXIT_APIC_WRITE;
		v->qual = offs[i];
		test_log_clear();
		bool panicked = test_expect_panic(apic_write_exit, v);
		if (panicked)
			printf("    offset 0x%x: %s", offs[i], test_log());
		CHECK(!panicked);
	}
	CHECK_EQ(v->apic_write_ignored, ARRAY_SIZE(offs));
}

/* The software x2APIC (eoi=pv) emulates the same WRMSR itself. */
TEST(sw_x2apic_self_ipi_illegal_vector_sets_esr)
{
	hw_reset(1);
	vmx_env.cfg.sw_apic = true;
	struct vcpu *v = hw_vcpu(0);
	CHECK_EQ(virq_wrmsr(v, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v, M_MSR_LVT_ERROR, M_ERROR_VECTOR), 0);
	CHECK_EQ(virq_wrmsr(v, M_MSR_ESR, 0), 0);
	CHECK_EQ(virq_wrmsr(v, M_MSR_SELF_IPI, 0), 0);
	CHECK(!virr(v, 0));
	CHECK(virr(v, M_ERROR_VECTOR));
	CHECK_EQ(virq_wrmsr(v, M_MSR_ESR, 0), 0);
	CHECK_EQ(page32(v, M_OFF_ESR), M_ESR_SEND_ILLEGAL);
	CHECK_EQ(virq_wrmsr(v, M_MSR_ESR, 1), -1);       /* x2APIC: only 0 may be written */
}

/* Every MSR in 800H-8FFH read by the guest on the CPU of hw_fake.h (the
 * bitmap, then APIC-register virtualization): the SDM's readable registers
 * read, everything else #GPs. */
TEST(x2apic_reserved_and_write_only_reads_gp)
{
	hw_reset_deadline(1);
	struct vcpu *v = hw_vcpu(0);
	unsigned wrong = 0, gp = 0, want_gp = 0;
	for (uint32_t m = 0x800; m <= 0x8ff; m++) {
		uint64_t val = 0;
		bool readable = sdm_x2apic_readable(m);
		int r = hw_guest_rdmsr(v, m, &val);
		want_gp += !readable;
		gp += r != 0;
		if ((r == 0) != readable && wrong++ < 24)
			printf("    RDMSR 0x%x: %s\n", m, r ? "#GP, the SDM lists it readable" : "read without #GP");
	}
	printf("    %u of %u reserved or write-only x2APIC MSRs #GP\n", gp, want_gp);
	CHECK_EQ(wrong, 0);
}

/* CPUID's copies of CR4 bits, for each CR4 and host answer. */
TEST(cpuid_osxsave_ospke_follow_guest_cr4)
{
	static const uint32_t host_c[] = { 0, 0xffffffffu, 1u << 27, 1u << 4, 0x12345678u };
	static const uint64_t cr4s[] = { 0, 1ull << 18, 1ull << 22, (1ull << 18) | (1ull << 22), ~0ull };
	unsigned wrong = 0;
	for (size_t i = 0; i < ARRAY_SIZE(host_c); i++)
		for (size_t j = 0; j < ARRAY_SIZE(cr4s); j++) {
			uint64_t cr4 = cr4s[j];
			uint32_t c1 = host_c[i], c7 = host_c[i], c7s1 = host_c[i], cd = host_c[i];
			cpuid_guest_cr4(1, 0, cr4, &c1);
			cpuid_guest_cr4(7, 0, cr4, &c7);
			cpuid_guest_cr4(7, 1, cr4, &c7s1);
			cpuid_guest_cr4(0xd, 0, cr4, &cd);
			uint32_t w1 = (host_c[i] & ~(1u << 27)) | (uint32_t)((cr4 >> 18) & 1) << 27;
			uint32_t w7 = (host_c[i] & ~(1u << 4)) | (uint32_t)((cr4 >> 22) & 1) << 4;
			if (c1 != w1 && wrong++ < 4)
				printf("    CPUID.1:ECX 0x%x with CR4 0x%llx: got 0x%x, want 0x%x\n", host_c[i],
				       (unsigned long long)cr4, c1, w1);
			if (c7 != w7 && wrong++ < 4)
				printf("    CPUID.7.0:ECX 0x%x with CR4 0x%llx: got 0x%x, want 0x%x\n", host_c[i],
				       (unsigned long long)cr4, c7, w7);
			CHECK_EQ(c1, w1);
			CHECK_EQ(c7, w7);
			CHECK_EQ(c7s1, host_c[i]);
			CHECK_EQ(cd, host_c[i]);
		}
}

/* The SDM's class of each exception vector. */
enum m_class { M_FAULT, M_TRAP, M_FAULT_OR_TRAP, M_ABORT, M_INTERRUPT, M_RESERVED };
static enum m_class m_class_of(unsigned v)
{
	switch (v) {
	case 0: return M_FAULT;          /* #DE */
	case 1: return M_FAULT_OR_TRAP;  /* #DB: an instruction breakpoint is a fault, without RF */
	case 2: return M_INTERRUPT;      /* NMI */
	case 3: case 4: return M_TRAP;   /* #BP, #OF */
	case 5: case 6: case 7: return M_FAULT;   /* #BR, #UD, #NM */
	case 8: return M_ABORT;          /* #DF */
	case 9: return M_FAULT;          /* coprocessor segment overrun */
	case 10: case 11: case 12: case 13: case 14: return M_FAULT;   /* #TS #NP #SS #GP #PF */
	case 16: case 17: return M_FAULT;         /* #MF, #AC */
	case 18: return M_ABORT;         /* #MC */
	case 19: case 20: case 21: return M_FAULT;   /* #XM, #VE, #CP */
	default: return M_RESERVED;
	}
}

/* The RFLAGS an entry that delivers each event enters with: RF set for a
 * hardware exception (type 3) of the fault class, every other bit kept. */
TEST(event_injected_fault_pushes_rf)
{
	static const uint64_t flags[] = { 0x2, 0x202, 0x246 | (1u << 8), 0x10202 };
	unsigned wrong = 0;
	for (unsigned type = 0; type < 8; type++) {
		if (type == 1 || type == 7)
			continue;
		for (unsigned vec = 0; vec < 32; vec++)
			for (size_t f = 0; f < ARRAY_SIZE(flags); f++) {
				struct vmx_event e = { (1u << 31) | (type << 8) | vec, 0, 0 };
				uint64_t want = flags[f] | (type == 3 && m_class_of(vec) == M_FAULT ? 1u << 16 : 0);
				uint64_t got = event_entry_rflags(&e, flags[f]);
				if (got != want && wrong++ < 6)
					printf("    type %u vector %u, RFLAGS 0x%llx: entered with 0x%llx, want 0x%llx\n", type,
					       vec, (unsigned long long)flags[f], (unsigned long long)got,
					       (unsigned long long)want);
				CHECK_EQ(got, want);
			}
	}
	/* No event: RFLAGS as it is. */
	struct vmx_event none = { 0, 0, 0 };
	CHECK_EQ(event_entry_rflags(&none, 0x202), 0x202);
	/* A refused MOV to CR4 (#GP), queued as the exit handler queues it. */
	struct event_queue q = { 0 };
	CHECK_EQ(event_queue_exception(&q, 13, 0), EVENT_QUEUED);
	CHECK_EQ(event_entry_rflags(&q.now, 0x246), 0x246 | (1u << 16));
}

/* The guest owns its core's PMU (issue 45): its LVT performance-counter
 * entry (x2APIC MSR 834H; SDM Vol. 3A, "Local Vector Table": delivery
 * mode 10:8, 100b NMI, mask bit 16) is carried out on the physical one of
 * the CPU its vCPU runs on, so that a counter overflow raises the NMI it
 * asked for; Linux's perf writes NMI unmasked at start and again after
 * each PMI (which sets the mask bit). A fixed-vector entry is not carried
 * out (the physical one stays masked), and says so. */
TEST(guest_lvtpc_reaches_the_physical_one)
{
	const uint32_t NMI = 4u << 8, MASK = 1u << 16, MSR_LVTPC = 0x834;
	hw_reset(2);
	hw_lvtpc_clear();
	struct vcpu *v1 = hw_vcpu(1);
	hw_set_cpu(1, true);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v1, MSR_LVTPC, MASK), 0);         /* Linux's first write: masked, fixed: off */
	CHECK_EQ(hw_lvtpc(1), NMI | MASK);
	CHECK(strstr(test_log(), "only NMI is carried out") == NULL);
	CHECK_EQ(virq_wrmsr(v1, MSR_LVTPC, NMI), 0);
	CHECK_EQ(hw_lvtpc(1), NMI);
	CHECK_EQ(hw_lvtpc(0), 0xffffffffu);                  /* the other CPU's untouched */
	CHECK_EQ(virq_wrmsr(v1, MSR_LVTPC, NMI | MASK), 0);
	CHECK_EQ(hw_lvtpc(1), NMI | MASK);
	CHECK_EQ(virq_wrmsr(v1, MSR_LVTPC, NMI), 0);         /* unmasked again, as after a PMI */
	CHECK_EQ(hw_lvtpc(1), NMI);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x0ff), 0);        /* a software disable masks it: the physical too */
	CHECK_EQ(hw_lvtpc(1), NMI | MASK);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v1, MSR_LVTPC, 0xee), 0);        /* fixed vector 0xee: not carried out */
	CHECK_EQ(hw_lvtpc(1), NMI | MASK);
	CHECK(strstr(test_log(), "only NMI is carried out") != NULL);
}

/* The guest's LVT CMCI and thermal entries (x2APIC MSRs 82FH and 833H;
 * SDM Vol. 3A, "Local Vector Table": vector 7:0, delivery mode 10:8,
 * 000b fixed, mask bit 16; "Local APIC Version Register": Max LVT Entry
 * 23:16, the thermal entry from 5, CMCI from 6) are carried out on the
 * physical ones of the vCPU's CPU, so that a corrected machine check or a
 * thermal event interrupts with the guest's vector; a vector the guest
 * names is hostile: below 32, the hypervisor's own (the kick, 0xf1) or
 * another delivery mode (NMI, SMI) is refused and the physical entry
 * stays masked, said once; a software disable masks them; a CPU whose
 * APIC has no such entry is never written. */
TEST(guest_lvt_cmci_and_thermal_reach_the_physical_ones)
{
	const uint32_t MASK = 1u << 16, NMI = 4u << 8, SMI = 2u << 8, MSR_CMCI = 0x82f, MSR_THERM = 0x833;
	hw_reset(2);
	hw_lvt_fixed_clear(6);
	struct vcpu *v1 = hw_vcpu(1);
	hw_set_cpu(1, true);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v1, MSR_CMCI, 0xf9), 0);                 /* Linux's THRESHOLD_APIC_VECTOR, fixed */
	CHECK_EQ(hw_lvt_fixed(1, 0), 0xf9);
	CHECK_EQ(virq_wrmsr(v1, MSR_THERM, 0xfa | MASK), 0);
	CHECK_EQ(hw_lvt_fixed(1, 1), 0xfa | MASK);
	CHECK_EQ(virq_wrmsr(v1, MSR_THERM, 0xfa), 0);
	CHECK_EQ(hw_lvt_fixed(1, 1), 0xfa);
	CHECK_EQ(hw_lvt_fixed(0, 0), 0xffffffffu);                   /* the other CPU's untouched */
	CHECK(strstr(test_log(), "is not carried out") == NULL);
	static const uint32_t hostile[] = { 0xf1, 0x12, 0x40 | NMI, 0x40 | SMI, 0xf0, 0xf2 };
	for (unsigned i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
		CHECK_EQ(virq_wrmsr(v1, MSR_CMCI, hostile[i]), 0);
		CHECK_EQ(hw_lvt_fixed(1, 0), MASK);
	}
	CHECK(strstr(test_log(), "the guest's LVT CMCI 0xf1 is not carried out") != NULL);
	CHECK_EQ(v1->lvt_refused[0], sizeof hostile / sizeof hostile[0]);
	CHECK_EQ(virq_wrmsr(v1, MSR_CMCI, 0x41 | NMI | MASK), 0);   /* masked: off, whatever its mode, not refused */
	CHECK_EQ(hw_lvt_fixed(1, 0), MASK);
	CHECK_EQ(v1->lvt_refused[0], sizeof hostile / sizeof hostile[0]);
	CHECK_EQ(virq_wrmsr(v1, MSR_CMCI, 0xf9), 0);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x0ff), 0);                /* a software disable masks both */
	CHECK_EQ(hw_lvt_fixed(1, 0), 0xf9 | MASK);
	CHECK_EQ(hw_lvt_fixed(1, 1), 0xfa | MASK);
	/* An APIC with 5 LVT entries has the thermal one, no CMCI. */
	hw_lvt_fixed_clear(5);
	CHECK_EQ(virq_wrmsr(v1, M_MSR_SVR, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v1, MSR_CMCI, 0xf9), 0);
	CHECK_EQ(hw_lvt_fixed(1, 0), 0xffffffffu);
	CHECK_EQ(virq_wrmsr(v1, MSR_THERM, 0xfa), 0);
	CHECK_EQ(hw_lvt_fixed(1, 1), 0xfa);
	hw_lvt_fixed_clear(6);
}
