/* The interrupt run time (vmx/virq*.c) on the machine of hw_fake.c, whose
 * physical local APIC follows the SDM's rules. Facts used here, from the
 * documents:
 *  - virtual-APIC page (SDM Vol. 3C, "Virtual-APIC Page"): ISR at 0x100,
 *    TMR at 0x180, IRR at 0x200; vector v in the dword at base + 0x10 *
 *    (v / 32), bit v % 32;
 *  - EOI-exit bitmap (Vol. 3C, "EOI-Exit Bitmap"): four 64-bit fields,
 *    EOI_EXIT_BITMAPn covers vectors 64n..64n+63, bit v % 64;
 *  - posted-interrupt descriptor (Vol. 3C, "Posted-Interrupt Descriptor"):
 *    PIR in bits 255:0, ON in bit 256;
 *  - activity states: 0 active, 1 HLT, 3 wait-for-SIPI; VM entry refuses
 *    event injection unless the activity state is active or HLT (Vol. 3C,
 *    "Checks on Guest Non-Register State");
 *  - interruption information: valid bit 31, type in 10:8 (0 external
 *    interrupt, 2 NMI), vector in 7:0; interruptibility bit 3 = blocking by NMI;
 *  - a SIPI sets CS selector = vector << 8, CS base = vector << 12, RIP = 0
 *    (Vol. 3A, "MP Initialization Protocol"); a SIPI that finds the CPU
 *    outside wait-for-SIPI is discarded (Vol. 3C, "Other Causes of VM Exits");
 *  - x2APIC ICR (Vol. 3A, "Interrupt Command Register"): destination in
 *    63:32, delivery mode 10:8 (000 fixed, 100 NMI, 101 INIT, 110 start-up),
 *    level 14; MSR 0x830; IA32_TSC_DEADLINE is MSR 0x6E0; LVT timer MSR
 *    0x832 (mode in 18:17, 10b TSC-deadline); SVR MSR 0x80F (bit 8 enable);
 *  - HLT (Vol. 2A, "HLT"; Vol. 3C, "Virtual-Interrupt Delivery"): a maskable
 *    or virtual interrupt ends the HLT state only with RFLAGS.IF = 1; an NMI
 *    ends it unless NMIs are blocked. */
#include "virq_test.h"
#include "../../vmx/vmcs_ops.h"
#include "../../vmx/event.h"
#include "../../vmx/tiers.h"
#include "../../lib/percpu.h"

static bool eoi_exit_bit(unsigned vec)
{
	static const uint32_t f[4] = { SDM_EOI_EXIT_BITMAP0, SDM_EOI_EXIT_BITMAP1, SDM_EOI_EXIT_BITMAP2, SDM_EOI_EXIT_BITMAP3 };
	return (vmcs_record_get(f[vec / 64]) >> (vec % 64)) & 1;
}

/* A device interrupt: the physical APIC accepts it, the CPU exits with it
 * acknowledged (acknowledge interrupt on exit). */
static void device_irq(struct vcpu *v, uint8_t vec, bool level)
{
	CHECK(hw_lapic_accept(vec, level));
	hw_exit_external(v, vec);
}
/* The guest's EOI of a vector in the EOI-exit bitmap (trap-like exit). */
static void guest_eoi(struct vcpu *v, uint8_t vec)
{
	v->reason = M_EXIT_VEOI;
	v->qual = vec;
	exit_virtualized_eoi(v);
	virq_before_entry(v);
}

TEST(virq_edge_device_vector_posted_and_eoid)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(0);
	device_irq(v, 0x41, false);
	CHECK(!hw_lapic_isr(0x41));          /* EOId at once */
	CHECK_EQ(v->extint[0x41], 1);
	CHECK(vpage_bit(v, M_IRR, 0x41) || (pir_bit(v, 0x41) && pid_on(v)));   /* posted to itself */
	CHECK(!eoi_exit_bit(0x41));
	CHECK(!vpage_bit(v, M_TMR, 0x41));
}

/* A device's vector 0xff is a legal vector (SDM Vol. 3A, "Error Handling":
 * only 0-15 are illegal) and sets its ISR bit; the spurious interrupt, also
 * 0xff on the hypervisor's APIC, sets none (SDM Vol. 3A, "Spurious
 * Interrupt"). The device's must be posted and EOId, or ISR bit 0xff blocks
 * the hypervisor's own vectors 0xf0-0xf2 on that CPU for good (issue 27). */
TEST(virq_device_vector_0xff_is_not_spurious)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	device_irq(v, 0xff, false);
	CHECK(!hw_lapic_isr(0xff));                  /* EOId */
	CHECK_EQ(v->extint[0xff], 1);
	CHECK(vpage_bit(v, M_IRR, 0xff) || (pir_bit(v, 0xff) && pid_on(v)));
	hw_reset(1);
	v = hw_vcpu(0);
	device_irq(v, 0xff, true);                   /* level: held until the guest's EOI */
	CHECK(hw_lapic_isr(0xff));
	guest_eoi(v, 0xff);
	CHECK(!hw_lapic_isr(0xff));
	CHECK_EQ(hw_eoi_broadcasts(0xff), 1);
	/* The spurious one: no ISR bit, nothing posted, no EOI. */
	hw_reset(1);
	v = hw_vcpu(0);
	hw_exit_external(v, 0xff);
	CHECK_EQ(v->extint[0xff], 0);
	CHECK(!vpage_bit(v, M_IRR, 0xff) && !pir_bit(v, 0xff));
}

TEST(virq_level_vector_held_until_guest_eoi)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	static const uint8_t vecs[] = { 0x20, 0x3f, 0x40, 0x7f, 0x80, 0xbf, 0xc0, 0xef };
	for (unsigned i = 0; i < sizeof vecs; i++) {
		hw_reset(1);
		v = hw_vcpu(0);
		device_irq(v, vecs[i], true);
		CHECK(hw_lapic_isr(vecs[i]));           /* kept in service ... */
		for (unsigned x = 0; x < 256; x++)      /* ... its EOI exits, and no other's */
			if (eoi_exit_bit(x) != (x == vecs[i])) {
				char m[80];
				snprintf(m, sizeof m, "EOI-exit bit of 0x%x after level vector 0x%x", x, vecs[i]);
				test_fail(__FILE__, __LINE__, m);
				break;
			}
		CHECK_EQ(hw_eoi_broadcasts(vecs[i]), 0);
		guest_eoi(v, vecs[i]);
		CHECK(!hw_lapic_isr(vecs[i]));
		CHECK_EQ(hw_eoi_broadcasts(vecs[i]), 1);
	}
}

/* The guest's virtual TMR shows a level vector as level (Linux's
 * ioapic_ack_level reads it to choose its level or edge path). */
TEST(virq_level_vector_sets_virtual_tmr)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	device_irq(v, 0x59, true);
	CHECK(vpage_bit(v, M_TMR, 0x59));
	guest_eoi(v, 0x59);
	device_irq(v, 0x59, false);            /* the same vector, now edge: TMR cleared on acceptance */
	CHECK(!vpage_bit(v, M_TMR, 0x59));
}

/* Two level vectors of different classes in service; the guest EOIs the
 * lower one first. The physical EOI retires the highest in-service vector,
 * so it must wait until the higher one's guest EOI. */
TEST(virq_level_eoi_out_of_order_retires_the_right_vector)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	device_irq(v, 0x41, true);
	device_irq(v, 0x61, true);
	guest_eoi(v, 0x41);
	CHECK(hw_lapic_isr(0x61));                 /* the guest has not EOId it */
	CHECK_EQ(hw_eoi_broadcasts(0x61), 0);      /* so its line is not sampled again */
	guest_eoi(v, 0x61);
	CHECK(!hw_lapic_isr(0x61));
	CHECK(!hw_lapic_isr(0x41));                /* nothing left in service */
	CHECK_EQ(hw_eoi_broadcasts(0x61), 1);
	CHECK_EQ(hw_eoi_broadcasts(0x41), 1);
}

/* Three level vectors nested, the guest's EOIs in every order: a vector's
 * line is sampled again (EOI broadcast) only after its own guest EOI, once. */
TEST(virq_level_eoi_three_nested_every_order)
{
	static const uint8_t vec[3] = { 0x41, 0x61, 0x81 };
	static const int perm[6][3] = { {0,1,2}, {0,2,1}, {1,0,2}, {1,2,0}, {2,0,1}, {2,1,0} };
	for (int p = 0; p < 6; p++) {
		hw_reset(1);
		struct vcpu *v = hw_vcpu(0);
		bool eoid[3] = { false, false, false };
		for (int i = 0; i < 3; i++)
			device_irq(v, vec[i], true);
		for (int k = 0; k < 3; k++) {
			int j = perm[p][k];
			guest_eoi(v, vec[j]);
			eoid[j] = true;
			for (int i = 0; i < 3; i++)
				if (!eoid[i] && (!hw_lapic_isr(vec[i]) || hw_eoi_broadcasts(vec[i]))) {
					char m[120];
					snprintf(m, sizeof m, "order %d: 0x%x retired before its guest EOI", p, vec[i]);
					test_fail(__FILE__, __LINE__, m);
				}
		}
		for (int i = 0; i < 3; i++) {
			CHECK(!hw_lapic_isr(vec[i]));
			CHECK_EQ(hw_eoi_broadcasts(vec[i]), 1);
		}
	}
}


/* A guest NMI-blocks a vCPU, makes an NMI pending on it, then INITs it:
 * the vCPU waits for SIPI with nothing to inject (VM entry would fail), and
 * its whole interrupt state is reset. */
TEST(virq_init_over_pending_nmi_resets_everything)
{
	hw_reset_apicv(2);                               /* timer=apicv: the CPU holds a guest timer vector */
	struct vcpu *v = hw_vcpu(1);
	hw_set_cpu(1, true);
	device_irq(v, 0x51, true);                       /* a level vector in flight */
	vmcs_write(SDM_GUEST_INTERRUPTIBILITY, 8);       /* blocking by NMI */
	__atomic_store_n(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	virq_pic_queue(v, 0x30);
	vmcs_write(SDM_VIRTUAL_TIMER_VECTOR, 0xec);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	hw_set_cpu(1, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	CHECK(!(vmcs_record_get(SDM_ENTRY_INTR_INFO) & M_INFO_VALID));
	CHECK(!hw_lapic_isr(0x51));                      /* physically EOId */
	CHECK_EQ(__atomic_load_n(&v->nmi_pending, __ATOMIC_SEQ_CST), 0);
	CHECK(!virq_pic_pending(v));
	CHECK(!pir_bit(v, 0x51) && !pid_on(v));
	CHECK(!eoi_exit_bit(0x51));
	CHECK(!vpage_bit(v, M_TMR, 0x51));
	CHECK_EQ(vmcs_record_get(SDM_VIRTUAL_TIMER_VECTOR), 0);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_INTR_STATUS), 0);
	/* An NMI sent while it waits is not injected either. */
	__atomic_store_n(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	virq_before_entry(v);
	CHECK(!(vmcs_record_get(SDM_ENTRY_INTR_INFO) & M_INFO_VALID));
}

/* Linux sends INIT and its SIPI microseconds apart; the target may still be
 * in root mode in its INIT exit, where the physical SIPI is discarded. The
 * SIPI still starts it at its next entry. */
TEST(virq_sipi_while_target_in_root_mode_is_not_lost)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	hw_set_cpu(1, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);                                    /* in root mode ... */
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));           /* ... when the SIPI comes: discarded */
	hw_set_cpu(1, true);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9a00);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0x9a000);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0);
	/* The second SIPI finds it running: discarded, it does not restart it. */
	vmcs_write(SDM_GUEST_RIP, 0x1234);
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9a));
	hw_set_cpu(1, true);
	v->reason = M_EXIT_EXTINT;
	virq_before_entry(v);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0x1234);
	CHECK_EQ(act(), M_ACT_ACTIVE);
}

/* The first start-up: the AP waits for SIPI in VMX non-root operation,
 * where the INIT is blocked (held) and the SIPI exits; the held INIT exits
 * right after the entry and must not park the started vCPU again. */
TEST(virq_sipi_exit_then_held_init_keeps_the_vcpu_running)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_WAIT_SIPI);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9b));
	hw_set_cpu(1, true);
	v->reason = M_EXIT_SIPI;
	v->qual = 0x9b;
	exit_sipi(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9b00);
	v->reason = M_EXIT_INIT;                          /* the held INIT, at RIP 0 */
	exit_init(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	/* A second SIPI (Linux sends two) finds it running: discarded. */
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9b));
	hw_set_cpu(1, true);
	vmcs_write(SDM_GUEST_RIP, 0x55);
	v->reason = M_EXIT_EXTINT;
	virq_before_entry(v);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0x55);
}

/* The guest owns the IOAPIC and MSIs: it can aim an NMI at a CPU that runs
 * no vCPU (parked, or the housekeeping CPU). Counted and ignored there. */
TEST(virq_nmi_at_a_cpu_without_a_vcpu_is_ignored)
{
	hw_reset(1);
	hw_set_cpu(PARKED_INDEX, false);
	CHECK(virq_nmi_in_root());
	hw_set_cpu(0, false);                 /* a vCPU's CPU before its launch */
	CHECK(virq_nmi_in_root());
}

/* An NMI for the guest met in root mode: pending, and the vCPU is made to
 * exit right after its entry (a kick to itself), so the NMI does not wait
 * for an exit that may not come. */
TEST(virq_nmi_in_root_mode_kicks_its_vcpu)
{
	hw_reset(2);
	hw_set_cpu(1, true);
	unsigned n = hw_sent();
	CHECK(virq_nmi_in_root());
	CHECK_EQ(__atomic_load_n(&hw_vcpu(1)->nmi_pending, __ATOMIC_SEQ_CST), 1);
	CHECK_EQ(hw_sent(), n + 1);
	CHECK_EQ(hw_sent_dest(n), 1);                    /* its own APIC ID */
	CHECK_EQ((hw_sent_icr(n) >> 8) & 7, 0);          /* a fixed interrupt */
}

TEST(virq_nmi_injected_when_unblocked_else_window)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_INTERRUPTIBILITY, 8);
	__atomic_store_n(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	v->reason = M_EXIT_EXTINT;
	virq_before_entry(v);
	CHECK(!(vmcs_record_get(SDM_ENTRY_INTR_INFO) & M_INFO_VALID));
	CHECK(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_NMI_WINDOW_EXITING);
	vmcs_write(SDM_GUEST_INTERRUPTIBILITY, 0);
	virq_before_entry(v);
	uint32_t info = (uint32_t)vmcs_record_get(SDM_ENTRY_INTR_INFO);
	CHECK((info & M_INFO_VALID) && M_TYPE(info) == 2 && (info & 0xff) == 2);
	CHECK(!(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_NMI_WINDOW_EXITING));
}

static void arm_guest_deadline_timer(struct vcpu *v, uint64_t deadline)
{
	CHECK_EQ(virq_wrmsr(v, 0x80f, 0x1ff), 0);                       /* SVR: enabled */
	CHECK_EQ(virq_wrmsr(v, 0x832, 0xec | (2u << 17)), 0);           /* LVT timer: TSC-deadline, 0xec */
	CHECK_EQ(virq_wrmsr(v, 0x6e0, deadline), 0);
}

/* HLT (hlt=exit) with nothing pending enters the HLT state ... */
TEST(virq_hlt_with_nothing_pending_halts)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_HLT);
}

/* ... but the decision is the last thing before the entry: a guest timer
 * that expires while the HLT exit is handled is posted before the entry,
 * and the vCPU must not be left halted with it pending and no host timer. */
TEST(virq_hlt_decided_after_the_timer_check)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	hw_tsc = 1000;
	arm_guest_deadline_timer(v, 2000);
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
	hw_tsc = 3000;                                   /* expired, its host timer not yet taken */
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
	CHECK(vpage_bit(v, M_IRR, 0xec) || pir_bit(v, 0xec));
	CHECK_EQ(act(), M_ACT_ACTIVE);
}

/* HLT with IF = 0 (Linux's play_dead, a CPU offline): an interrupt does not
 * end it, so it halts even with a vector pending, instead of an exit storm
 * of HLTs that resume and halt again. */
TEST(virq_hlt_with_if_clear_halts_despite_pending_vector)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, 2);
	vmcs_write(SDM_GUEST_INTR_STATUS, 0x41);         /* RVI 0x41, PPR 0: deliverable with IF = 1 */
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_HLT);
	CHECK_EQ(v->hlt_skipped, 0);
	/* An NMI ends it (not blocked). */
	__atomic_store_n(&v->nmi_pending, 1, __ATOMIC_SEQ_CST);
	v->reason = M_EXIT_HLT;
	vmcs_write(SDM_GUEST_ACTIVITY_STATE, M_ACT_ACTIVE);
	exit_hlt(v);
	virq_before_entry(v);
	uint32_t info = (uint32_t)vmcs_record_get(SDM_ENTRY_INTR_INFO);
	CHECK((info & M_INFO_VALID) && M_TYPE(info) == 2);
}

/* Two 8259 (ExtINT) vectors arrive while the guest cannot take an
 * interrupt: each is injected once, neither lost. */
TEST(virq_two_8259_vectors_both_injected)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, 2);                 /* IF = 0 */
	hw_exit_external(v, 0x30);                       /* no local APIC ISR bit: ExtINT */
	hw_exit_external(v, 0x31);
	CHECK(!(vmcs_record_get(SDM_ENTRY_INTR_INFO) & M_INFO_VALID));
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | 2);
	unsigned got[256] = { 0 };
	for (int i = 0; i < 4; i++) {
		v->reason = M_EXIT_INTR_WINDOW;
		exit_intr_window(v);
		virq_before_entry(v);
		uint32_t info = (uint32_t)vmcs_record_get(SDM_ENTRY_INTR_INFO);
		if (info & M_INFO_VALID) {
			CHECK_EQ(M_TYPE(info), 0);
			got[info & 0xff]++;
			vmcs_write(SDM_ENTRY_INTR_INFO, 0);      /* the entry delivered it */
		}
	}
	CHECK_EQ(got[0x30], 1);
	CHECK_EQ(got[0x31], 1);
}

/* VM entry in the HLT state with RFLAGS.TF = 1 and IA32_DEBUGCTL.BTF = 0
 * needs bit 14 (BS) of the pending debug exceptions (SDM Vol. 3C, "Checks
 * on Guest Non-Register State"). */
TEST(virq_hlt_with_tf_sets_pending_bs)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | (1u << 8) | 2);
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_HLT);
	CHECK(vmcs_record_get(SDM_GUEST_PENDING_DBG) & (1u << 14));
	hw_reset(1);                                     /* BTF = 1: no BS */
	v = hw_vcpu(0);
	vmcs_write(SDM_GUEST_RFLAGS, M_RFLAGS_IF | (1u << 8) | 2);
	vmcs_write(SDM_GUEST_DEBUGCTL, 2);
	v->reason = M_EXIT_HLT;
	exit_hlt(v);
	virq_before_entry(v);
	CHECK(!(vmcs_record_get(SDM_GUEST_PENDING_DBG) & (1u << 14)));
}

/* EPT violation with bit 12 "NMI unblocking due to IRET" (SDM Vol. 3C,
 * "Exit Qualification for EPT Violations"): the faulting IRET runs again,
 * so blocking by NMI (interruptibility bit 3) is set again, unless the exit
 * came during event delivery (IDT-vectoring information valid, bit 31). */
TEST(event_ept_violation_nmi_unblocking_restored)
{
	CHECK_EQ(event_ept_interruptibility(1u << 12, 0, 0, true), 8);
	CHECK_EQ(event_ept_interruptibility(1u << 12, 0, 1, true), 9);
	CHECK_EQ(event_ept_interruptibility(1u << 12, 1u << 31, 0, true), 0);
	CHECK_EQ(event_ept_interruptibility(0, 0, 0, true), 0);
	CHECK_EQ(event_ept_interruptibility(1u << 12, 0, 0, false), 0);
	CHECK_EQ(event_pending_dbg_bs(0, 1u << 8, 0), 1u << 14);
	CHECK_EQ(event_pending_dbg_bs(0, 0, 0), 0);
	CHECK_EQ(event_pending_dbg_bs(0, 1u << 8, 2), 0);
}

/* A change of the LVT timer to or from TSC-deadline mode disarms the timer
 * and clears its initial count (SDM Vol. 3A, "APIC Timer"); the guest reads
 * TMICT (page offset 0x380, MSR 0x838) from the virtual-APIC page, which
 * must show it. */
TEST(virq_lvt_mode_change_to_deadline_clears_tmict_in_the_page)
{
	hw_reset(1);
	struct vcpu *v = hw_vcpu(0);
	uint32_t tmict;
	CHECK_EQ(virq_wrmsr(v, 0x80f, 0x1ff), 0);
	CHECK_EQ(virq_wrmsr(v, 0x832, 0xec), 0);                 /* one-shot */
	CHECK_EQ(virq_wrmsr(v, 0x838, 100000), 0);
	memcpy(&tmict, v->vapic + 0x380, 4);
	CHECK_EQ(tmict, 100000);
	CHECK_EQ(virq_wrmsr(v, 0x832, 0xec | (2u << 17)), 0);    /* TSC-deadline */
	memcpy(&tmict, v->vapic + 0x380, 4);
	CHECK_EQ(tmict, 0);
}

/* timer=preempt never meets deep C-states: the VMX-preemption timer "does
 * not decrement in C-states deeper than C2" (SDM Vol. 3C, "VMX-Preemption
 * Timer"), so MWAIT is hidden from that tier's guest, which idles in HLT. */
TEST(tiers_preempt_timer_hides_mwait)
{
	struct hv_tiers t = { .ipi = IPI_FAST, .eoi = EOI_PV, .timer = TIMER_PREEMPT };
	CHECK(tiers_hide_mwait(&t, true, false));
	CHECK(tiers_hide_mwait(&t, true, true));
	t.timer = TIMER_POSTED;
	CHECK(!tiers_hide_mwait(&t, true, false));
	CHECK(tiers_hide_mwait(&t, true, true));         /* HLT exits: the guest idles in HLT anyway */
	t.timer = TIMER_APICV;
	CHECK(!tiers_hide_mwait(&t, true, false));
}

/* In the partition model the guest owns the local APIC: no kick vector
 * is sent to it (it would arrive in the guest's IDT). */
TEST(virq_nmi_in_root_mode_partition_sends_no_kick)
{
	hw_reset(2);
	vmx_env.cfg.irq_model = IRQ_PARTITION;
	hw_set_cpu(1, true);
	unsigned n = hw_sent();
	CHECK(virq_nmi_in_root());
	CHECK_EQ(__atomic_load_n(&hw_vcpu(1)->nmi_pending, __ATOMIC_SEQ_CST), 1);
	CHECK_EQ(hw_sent(), n);
}

/* The start-up of one vCPU against a model of the activity states (SDM
 * Vol. 3C, "Activity State", "Other Causes of VM Exits"): a CPU in
 * wait-for-SIPI leaves it only by a SIPI that arrives while it is there;
 * a SIPI that finds it anywhere else (root mode included) is discarded;
 * neither interrupts nor the VMX-preemption timer end the state. So a VM
 * entry into wait-for-SIPI with a SIPI recorded but unread loses that SIPI
 * for good. The guest sends INIT and a single SIPI; the SIPI lands at each
 * step of the target's way from its INIT exit to its VM entry. Every time
 * the vCPU must enter running at the SIPI's vector. */
enum sipi_step { SIPI_BEFORE_INIT_EXIT, SIPI_AFTER_INIT_EXIT, SIPI_AFTER_BEFORE_ENTRY, SIPI_DURING_WAIT, SIPI_STEPS };
static const char *const sipi_step_name[] = { "before the INIT exit", "after the INIT exit",
					      "after virq_before_entry (the report, the stub)", "while the vCPU waits" };
static void send_sipi_9c(void)
{
	icr(0, M_ICR(1, M_DM_STARTUP | 0x9c));
	hw_set_cpu(1, true);
}
TEST(virq_single_sipi_lands_at_every_step_and_starts_the_vcpu)
{
	for (int step = 0; step < SIPI_STEPS; step++) {
		hw_reset(2);
		struct vcpu *v = hw_vcpu(1);
		vmcs_write(SDM_GUEST_RIP, 0x4321);
		icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
		hw_set_cpu(1, true);
		if (step == SIPI_BEFORE_INIT_EXIT)
			send_sipi_9c();
		v->reason = M_EXIT_INIT;
		exit_init(v);
		if (step == SIPI_AFTER_INIT_EXIT)
			send_sipi_9c();
		virq_before_entry(v);
		if (step == SIPI_AFTER_BEFORE_ENTRY)
			send_sipi_9c();
		hw_wait_hook = step == SIPI_DURING_WAIT ? send_sipi_9c : NULL;
		virq_startup_wait(v);                    /* the exit handler's last step */
		/* The entry, by the model: wait-for-SIPI with the SIPI sent is a lost SIPI. */
		bool lost = act() == M_ACT_WAIT_SIPI;
		if (lost || act() != M_ACT_ACTIVE || vmcs_record_get(SDM_GUEST_CS_SEL) != 0x9c00 ||
		    vmcs_record_get(SDM_GUEST_RIP) != 0)
		{
			char m[256];
			snprintf(m, sizeof m, "SIPI %s: entry with activity %llu, CS 0x%llx, RIP 0x%llx%s", sipi_step_name[step],
				 (unsigned long long)act(), (unsigned long long)vmcs_record_get(SDM_GUEST_CS_SEL),
				 (unsigned long long)vmcs_record_get(SDM_GUEST_RIP),
				 lost ? ": wait-for-SIPI with the only SIPI already sent, the vCPU is lost" : "");
			test_fail(__FILE__, __LINE__, m);
		}
		/* It slept only when there was nothing to take yet. */
		CHECK_EQ(hw_wait_turns, step == SIPI_DURING_WAIT ? 1u : 0u);
	}
}

/* INIT, SIPI, INIT while the vCPU waits: the SIPI belongs to the first INIT
 * and is stale; the vCPU waits on for the next SIPI, which starts it. */
static unsigned wait_round;
static void init_then_sipi(void)
{
	if (wait_round++ == 0) {
		icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	} else {
		icr(0, M_ICR(1, M_DM_STARTUP | 0x9d));
	}
	hw_set_cpu(1, true);
}
TEST(virq_waiting_vcpu_takes_a_second_init_and_only_the_sipi_after_it)
{
	hw_reset(2);
	struct vcpu *v = hw_vcpu(1);
	icr(0, M_ICR(1, M_DM_INIT | M_LEVEL_ASSERT));
	hw_set_cpu(1, true);
	v->reason = M_EXIT_INIT;
	exit_init(v);
	virq_before_entry(v);
	CHECK_EQ(act(), M_ACT_WAIT_SIPI);
	wait_round = 0;
	hw_wait_hook = init_then_sipi;
	virq_startup_wait(v);
	CHECK_EQ(act(), M_ACT_ACTIVE);
	CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9d00);
	CHECK_EQ(hw_wait_turns, 2u);
	CHECK_EQ(v->inits_taken, 2u);
}
