/* The edges of the interrupt run time (vmx/virq*.c, apic/level.c,
 * guest/startup.c) on the machine of hw_fake.c: vector boundaries, the
 * orderings of INIT and SIPI, what an INIT leaves behind. Facts used here,
 * from the documents (layouts as in test_virq.c):
 *  - vectors 0-31 are the architecture's exceptions, 32-255 user-defined
 *    interrupts (SDM Vol. 3A, "Exception and Interrupt Vectors"); the local
 *    APIC takes 16-255 and reports 0-15 as illegal (Vol. 3A, "Valid
 *    Interrupt Vectors");
 *  - an INIT clears the local APIC's IRR and ISR (Vol. 3A, "Local APIC State
 *    After an INIT Reset": as after power-up but the APIC ID); the CPU then
 *    waits for a SIPI, which starts it at CS = vector << 8, base vector <<
 *    12, RIP 0 (Vol. 3A, "MP Initialization Protocol"); a SIPI exit reports
 *    the vector in bits 7:0 of its exit qualification (Vol. 3C, "Exit
 *    Qualification for SIPI");
 *  - posted-interrupt descriptor: PIR bits 255:0, ON bit 256; a sender that
 *    finds ON already set sends no notification (Vol. 3C, "Posted-Interrupt
 *    Processing": ON says one is outstanding);
 *  - the 8259A in fully nested mode: IR0 has the highest priority, IR7 the
 *    lowest, and the vector it gives is the ICW2 base + IR number (Intel
 *    8259A data sheet, "Fully Nested Mode", "Interrupt Sequence");
 *  - KVM's PV EOI (Documentation/virt/kvm/x86/msr.rst, MSR 0x4b564d04):
 *    bit 0 of the guest's word, when set, lets the guest skip its EOI
 *    write; KVM sets it only for a vector whose EOI need not reach the
 *    IOAPIC (an edge one). */
#include "virq_test.h"
#include "../../vmx/vmcs_ops.h"
#include "../../lib/memmap.h"

#define M_EXIT_PREEMPT 52
#define M_PREEMPTION_TIMER_VALUE 0x482e   /* SDM Vol. 3C, Appendix B, 32-bit guest-state fields */

static bool virr(struct vcpu *v, unsigned vec) { return vpage_bit(v, M_IRR, vec); }
static void init_exit(struct vcpu *v)
{
	hw_set_cpu(v->index, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
}

/* A vector posted to a running vCPU, not yet processed (PIR and ON set),
 * then an INIT: the IRR the PIR stands for is cleared, ON with it, so the
 * first vector posted after the restart sends its notification. */
TEST(virq_init_clears_a_pending_notification)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	icr(0, M_ICR(1, 0x41));                          /* fixed, vector 0x41 */
	CHECK(pir_bit(v, 0x41) && pid_on(v));
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	CHECK(!pir_bit(v, 0x41));
	CHECK(!pid_on(v));
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));
	hw_set_cpu(1, true);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	unsigned n = hw_sent();
	icr(0, M_ICR(1, 0x42));
	CHECK(pir_bit(v, 0x42) && pid_on(v));
	CHECK_EQ(hw_sent(), n + 1);                      /* the notification */
	CHECK_EQ(hw_sent_icr(n) & 0xff, 0xf2);           /* its vector (hw_reset's NV) */
}

/* Level vectors in flight in each quarter of the vector space (one per
 * 64-bit word), the highest 0xe1, then an INIT: the guest will never EOI
 * them (its ISR is gone), so every one is EOId at the physical APIC. */
TEST(virq_init_eois_level_vectors_of_every_word)
{
	static const uint8_t vecs[] = { 0x31, 0x71, 0xb1, 0xe1 };
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	for (unsigned i = 0; i < sizeof vecs; i++) {
		CHECK(hw_lapic_accept(vecs[i], true));
		hw_exit_external(v, vecs[i]);
	}
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	for (unsigned i = 0; i < sizeof vecs; i++) {
		if (hw_lapic_isr(vecs[i]))
			printf("    0x%x still in service after the INIT\n", vecs[i]);
		CHECK(!hw_lapic_isr(vecs[i]));
	}
}

/* INIT, SIPI, INIT, all recorded before the target takes any: the last
 * INIT leaves it waiting for a SIPI; the SIPI before it is stale. */
TEST(virq_init_sipi_init_leaves_the_vcpu_waiting)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	init_exit(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	CHECK_EQ(v->sipis_stale, 1);
}

/* INIT and SIPI both recorded while the target still runs the guest; its
 * INIT exit takes both: parked, then started at the SIPI's vector. */
TEST(virq_init_and_sipi_to_a_running_vcpu_start_it)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_ACTIVE);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));
	init_exit(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9a00);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0x9a000);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0);
	CHECK_EQ(v->sipis_stale, 0);
}

/* A SIPI exit with vector 0 (CS 0, base 0, RIP 0: a legal start-up
 * address) starts the vCPU like any other, nothing recorded beside it. */
TEST(virq_sipi_exit_with_vector_0_starts_the_vcpu)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_WAIT_SIPI);
	vmcs_write(SDM_GUEST_CS_SEL, 0x9a00);
	vmcs_write(SDM_GUEST_CS_BASE, 0x9a000);
	hw_set_cpu(1, true);
	v->reason = M_EXIT_SIPI;
	v->qual = 0x00;
	exit_sipi(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0);
}

/* An 8259 (ExtINT) vector: 32, the first user-defined one, is injected;
 * 31, an exception's, is dropped. */
TEST(virq_extint_vector_32_injected_31_dropped)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
	hw_exit_external(v, 31);                         /* no local APIC ISR bit: ExtINT */
	CHECK(!(injected() & M_INFO_VALID));
	hw_exit_external(v, 32);
	CHECK(injected() & M_INFO_VALID);
	CHECK_EQ(injected() & 0x7ff, 32);                /* type 0 (external interrupt), vector 32 */
}

/* Two 8259 vectors pending, base 0x30: IR0 (0x30) first, whatever the
 * order they came in. */
TEST(virq_8259_lowest_irq_injected_first)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, 2);                 /* IF = 0: both wait */
	hw_exit_external(v, 0x33);
	hw_exit_external(v, 0x30);
	CHECK(!(injected() & M_INFO_VALID));
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
	static const uint8_t want[] = { 0x30, 0x33 };
	for (unsigned i = 0; i < sizeof want; i++) {
		v->reason = M_EXIT_INTR_WINDOW;
		exit_intr_window(v);
		virq_before_entry(v);
		CHECK(injected() & M_INFO_VALID);
		CHECK_EQ(injected() & 0xff, want[i]);
		vmcs_write(SDM_ENTRY_INTR_INFO, 0);          /* the entry delivered it */
	}
}

/* SELF IPI (x2APIC MSR 0x83F, vector in bits 7:0): 16, the lowest legal
 * vector, is requested; 15 is not. */
TEST(virq_self_ipi_vector_16_requested_15_dropped)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	CHECK_EQ(virq_wrmsr(v, 0x83f, 15), 0);
	CHECK(!virr(v, 15));
	CHECK_EQ(virq_wrmsr(v, 0x83f, 16), 0);
	CHECK(virr(v, 16));
}

/* The guest's TSC-deadline timer (LVT timer MSR 0x832, mode 10b in 18:17)
 * with vector 16, the lowest legal one: delivered when it expires. */
TEST(virq_timer_vector_16_delivered)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	hw_tsc = 1000;
	CHECK_EQ(virq_wrmsr(v, 0x80f, 0x1ff), 0);                 /* SVR: enabled */
	CHECK_EQ(virq_wrmsr(v, 0x832, 0x10 | (2u << 17)), 0);
	CHECK_EQ(virq_wrmsr(v, 0x6e0, 2000), 0);
	hw_tsc = 2000;
	v->reason = M_EXIT_PREEMPT;
	virq_before_entry(v);
	CHECK(virr(v, 0x10) || pir_bit(v, 0x10));
	CHECK_EQ(v->timer_posts, 1);
}

/* timer=preempt with the hang check: the VMX-preemption timer counts down
 * from the value the entry loads and exits at 0 (SDM Vol. 3C, "VMX-
 * Preemption Timer"). A guest timer due exactly the hang check's period
 * away: that exit is the hang check's (else a guest timer of that period
 * would hide a stuck vCPU for good); the guest's timer is served at the
 * entry after it all the same. */
TEST(virq_preempt_tie_with_the_watchdog_is_the_watchdogs)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmx_env.cfg.timer = TIMER_PREEMPT;
	vmx_env.cfg.pin |= SDM_PIN_PREEMPTION_TIMER;
	vmx_env.cfg.preempt_rate = 0;
	vmx_env.cfg.watchdog_ticks = 1000;
	hw_tsc = 5000;
	CHECK_EQ(virq_wrmsr(v, 0x80f, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v, 0x832, 0xec | (2u << 17)), 0);
	CHECK_EQ(virq_wrmsr(v, 0x6e0, 6000), 0);                  /* 1000 ticks away */
	virq_before_entry(v);
	CHECK_EQ(vmcs_record_get(M_PREEMPTION_TIMER_VALUE), 1000);
	uint64_t w0 = v->watchdog_exits;
	hw_tsc = 6000;
	v->reason = M_EXIT_PREEMPT;
	exit_preemption_timer(v);
	CHECK_EQ(v->watchdog_exits, w0 + 1);
	virq_before_entry(v);
	CHECK(virr(v, 0xec) || pir_bit(v, 0xec));
	vmx_env.cfg.watchdog_ticks = 0;
}

/* eoi=pv (the software x2APIC, no VID): the PV EOI flag is armed for an
 * edge vector and never for a level one, whose EOI must reach the host at
 * once (the physical EOI and the IOAPIC's EOI behind it). */
TEST(virq_pv_eoi_flag_not_armed_for_a_level_vector)
{
	static volatile uint32_t word __attribute__((aligned(4)));
	static struct memmap mem;
	memset(&mem, 0, sizeof mem);
	memmap_add(&mem, (uintptr_t)&word & ~0xfffull, 4096, MEM_USABLE);
	for (int level = 0; level < 2; level++) {
		hw_reset(1);
		vmx_env.cfg.sw_apic = true;
		vmx_env.mem = &mem;
		struct vcpu *v = hw_vcpu(0);
		virq_vcpu_start(v);
		word = 0;
		CHECK_EQ(virq_wrmsr(v, 0x4b564d04, (uintptr_t)&word | 1), 0);
		vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
		CHECK(hw_lapic_accept(0x51, level));
		hw_exit_external(v, 0x51);
		CHECK_EQ(injected() & 0xff, 0x51);
		CHECK(injected() & M_INFO_VALID);
		unsigned want_flag = level ? 0 : 1;
		if ((word & 1) != want_flag)
			printf("    %s vector: PV EOI flag %u\n", level ? "level" : "edge", word & 1);
		CHECK_EQ(word & 1, want_flag);
	}
	vmx_env.mem = NULL;
}
