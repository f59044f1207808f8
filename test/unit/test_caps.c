/* Host tests for vmx/caps.c and vmx/tiers.c: capability decoding and the tier
 * choice, on the VMX MSRs measured under Bochs (test/fixtures/vmx-caps-bochs.txt)
 * and on synthetic profiles derived from them. */
#include "test.h"
#include "../../vmx/caps.h"
#include "../../vmx/tiers.h"
#include "../../vmx/vmx_defs.h"
#include "../../lib/options.h"
#include "fixture.h"

static void decode(const char *name, struct vmx_raw_caps *raw, struct vmx_caps *c)
{
	bool ok = fixture_load_profile(name, raw);
	if (!ok)
		printf("    profile %s not found\n", name);
	CHECK(ok);
	vmx_caps_decode(raw, c);
}

static int choose(const struct vmx_caps *c, int ipi, int eoi, int timer, struct hv_tiers *t, char *err)
{
	struct hv_options o;
	options_defaults(&o);
	o.ipi = ipi;
	o.eoi = eoi;
	o.timer = timer;
	t->ipi = t->eoi = t->timer = -1;
	return tiers_choose(c, &o, t, err, 256);
}

static const char *summary(const struct hv_tiers *t)
{
	static char buf[64];
	return tiers_summary(t, buf, sizeof buf);
}

/* ---- decoding ---- */

TEST(caps_every_fixture_section_decodes)
{
	const char *names[32];
	char buf[32][64];
	int n = fixture_list_sections(names, buf, 32);
	CHECK(n >= 8);
	for (int i = 0; i < n; i++) {
		struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
		test_log_clear();
		decode(names[i], &raw, &c);
		CHECK(c.vmx);
		CHECK(c.feature_control_ok);
		CHECK(c.true_ctls);
		CHECK(c.revision != 0);
		CHECK(c.vmcs_size > 0 && c.vmcs_size <= 4096);
		CHECK(c.secondary && c.ept && c.vpid && c.unrestricted && c.ept_wb && c.ept_4level);
		CHECK(c.msr_bitmaps && c.tpr_shadow && c.vid && c.virt_x2apic);
		CHECK(c.wait_for_sipi && c.hlt_exiting_optional);
		CHECK(c.tertiary == (raw.has_proc3 != 0));
		CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
		CHECK(t.ipi != IPI_AUTO && t.eoi == EOI_VID && t.timer != TIMER_AUTO);
		vmx_caps_print(&c);
		CHECK_CONTAINS(test_log(), "vmxcap: virtual-interrupt delivery: yes");
	}
}

TEST(caps_bochs30_skylake_x)
{
	struct vmx_raw_caps raw; struct vmx_caps c;
	decode("bochs-3.0 corei7_skylake_x", &raw, &c);
	CHECK(c.vmx && c.posted_intr && c.vid && c.ept && c.unrestricted);
	CHECK(!c.tertiary);
	CHECK_EQ(c.proc3_allowed1, 0);
	CHECK(!c.ipiv && !c.apic_timer_virt);
	CHECK_EQ(c.revision, 0x2b); CHECK_EQ(c.vmcs_size, 4096);
	CHECK(c.true_ctls);
	CHECK_EQ(c.pin.allowed0, 0x16); CHECK_EQ(c.pin.allowed1, 0xff);
	CHECK_EQ(c.proc.allowed0, 0x04006172);	/* TRUE: CR3-load/store exiting may be 0 */
	CHECK_EQ(c.proc2.allowed1, 0x02577fff); CHECK_EQ(c.exit.allowed0, 0x00036dfb);
	CHECK_EQ(c.entry.allowed0, 0x000011fb);
	CHECK(c.ept_2m && c.ept_1g && c.ept_wb && c.ept_4level);
	CHECK(c.ack_intr_on_exit && c.ext_int_exiting && c.preemption_timer);
	CHECK(c.apic_reg_virt && c.virt_x2apic);
	CHECK_EQ(c.vmfunc, 1); CHECK_EQ(c.cr0_fixed0, 0x80000021);
	CHECK_EQ(c.cr4_fixed1, 0x3727ff);

	struct hv_tiers t; char err[256];
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
	CHECK_CONTAINS(test_log(), "tier: ipi=fast (no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available)\n");
	CHECK_CONTAINS(test_log(), "tier: eoi=vid (virtual-interrupt delivery)\n");
	CHECK_CONTAINS(test_log(), "tier: timer=deadline (no APIC-timer virtualization: IA32_VMX_PROCBASED_CTLS3 not available; "
		       "IA32_TSC_DEADLINE passed through to the vCPU's own LAPIC timer: arming exits never, an expiry once)\n");
	CHECK(tiers_vid_on(&c, &t));
}

/* Stock Bochs 3.0 (an emulator without hlt=guest): its VID delivers at
 * RFLAGS.IF = 0 (defect G), so auto takes the software x2APIC, with the
 * reason; eoi=vid is still honoured, and auto elsewhere is unchanged. */
TEST(caps_stock_bochs_auto_keeps_vid_off)
{
	struct vmx_raw_caps raw; struct vmx_caps c;
	decode("bochs-3.0 corei7_skylake_x", &raw, &c);
	c.vid_ignores_if = true;
	struct hv_tiers t; char err[256];
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=pv timer=preempt");
	CHECK(!tiers_vid_on(&c, &t));
	CHECK_CONTAINS(test_log(), "tier: eoi=pv (auto: an emulator without hlt=guest, taken for stock Bochs 3.0, whose virtual-interrupt delivery ignores RFLAGS.IF (defect G)");
	test_log_clear();
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_VID, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
	/* A tier that needs VID, asked for, keeps it. */
	CHECK_EQ(choose(&c, IPI_FAST, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_POSTED, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=posted");
	CHECK_EQ(choose(&c, IPI_TRAP, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=trap eoi=pv timer=preempt");
	c.vid_ignores_if = false;
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
}

TEST(caps_bochs30_sapphire_rapids)
{
	struct vmx_raw_caps raw; struct vmx_caps c;
	decode("bochs-3.0 sapphire_rapids", &raw, &c);
	CHECK(c.tertiary);
	CHECK_EQ(c.proc3_allowed1, VMX_PROC3_VIRT_SPEC_CTRL); CHECK_EQ(c.proc3_allowed1, 0x80);
	CHECK(!c.ipiv && !c.apic_timer_virt);
	CHECK(c.posted_intr && c.vid);

	struct hv_tiers t; char err[256];
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
	CHECK_CONTAINS(test_log(), "tier: ipi=fast (IPI virtualization not allowed by IA32_VMX_PROCBASED_CTLS3)");
	CHECK_CONTAINS(test_log(), "tier: timer=deadline (APIC-timer virtualization not allowed by IA32_VMX_PROCBASED_CTLS3; IA32_TSC_DEADLINE passed");

	test_log_clear();
	struct hv_tiers keep = { 42, 43, 44 };
	t = keep;
	struct hv_options o;
	options_defaults(&o);
	o.ipi = IPI_IPIV;
	CHECK_EQ(tiers_choose(&c, &o, &t, err, sizeof err), -1);
	CHECK_STR(err, "ipi=ipiv refused: IPI virtualization not allowed by IA32_VMX_PROCBASED_CTLS3");
	CHECK_EQ(t.ipi, 42);	/* untouched */
	CHECK_EQ(t.timer, 44);
	CHECK(!strstr(test_log(), "tier: "));	/* nothing printed on refusal */

	test_log_clear();
	vmx_caps_print(&c);
	CHECK_CONTAINS(test_log(), "vmxcap: tertiary controls available, IA32_VMX_PROCBASED_CTLS3=0x0000000000000080\n");
	CHECK_CONTAINS(test_log(), "vmxcap: posted interrupts: yes\n");
	CHECK_CONTAINS(test_log(), "vmxcap: IPI virtualization: no\n");
}

/* The project's patched Bochs (tools/bochs-patch/) has two profiles: its
 * sapphire_rapids as the CPU ships (tertiary bit 4, IPI virtualization; no
 * bit 8) and xeon_next (bits 4 and 8). IA32_VMX_PROCBASED_CTLS3 as each
 * reads there: 0x90 and 0x190 (bit 7 is Bochs's "virtualize
 * IA32_SPEC_CTRL"; SDM Vol. 3D, "Tertiary Processor-Based VM-Execution
 * Controls": bit 4 IPI virtualization; the ISE: bit 8 APIC-timer
 * virtualization). */
TEST(caps_patched_bochs_profiles)
{
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	CHECK(fixture_load_profile("bochs-3.0 sapphire_rapids", &raw));
	raw.proc3 = 0x90;
	vmx_caps_decode(&raw, &c);
	CHECK(c.ipiv && !c.apic_timer_virt);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=deadline");
	CHECK_CONTAINS(test_log(), "tier: timer=deadline (APIC-timer virtualization not allowed by IA32_VMX_PROCBASED_CTLS3; "
		       "IA32_TSC_DEADLINE passed through to the vCPU's own LAPIC timer: arming exits never, an expiry once)\n");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_APICV, &t, err), -1);
	CHECK_STR(err, "timer=apicv refused: APIC-timer virtualization not allowed by IA32_VMX_PROCBASED_CTLS3");
	/* housekeeping= asks for the service: auto gives posted, deadline is refused. */
	struct hv_options o;
	options_defaults(&o);
	o.housekeeping = 1;
	test_log_clear();
	CHECK_EQ(tiers_choose(&c, &o, &t, err, sizeof err), 0);
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=posted");
	CHECK_CONTAINS(test_log(), "tier: timer=posted (APIC-timer virtualization not allowed by IA32_VMX_PROCBASED_CTLS3; "
		       "housekeeping= gives the timer to a service CPU (timer=posted))\n");
	o.timer = TIMER_DEADLINE;
	CHECK_EQ(tiers_choose(&c, &o, &t, err, sizeof err), -1);
	CHECK_STR(err, "timer=deadline refused: housekeeping= gives the timer to a service CPU (timer=posted)");
	/* eoi=pv: nothing posts, so no deadline tier either. */
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_PV, TIMER_DEADLINE, &t, err), -1);
	CHECK_STR(err, "timer=deadline refused: virtual-interrupt delivery off: eoi=pv and VID exclude each other");

	raw.proc3 = 0x190;   /* xeon_next */
	vmx_caps_decode(&raw, &c);
	CHECK(c.ipiv && c.apic_timer_virt);
	test_log_clear();
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=apicv");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_DEADLINE, &t, err), 0);   /* the lower tier stays selectable */
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=deadline");
}

/* Rule: without posted interrupts neither IPI virtualization nor the fast path
 * (both post into a PID) is possible, so ipi=pv; VID is still there, so
 * eoi=vid; the timer falls back to the VMX-preemption timer. */
TEST(caps_bochs27_models_have_no_posted_interrupts)
{
	static const char *const models[] = {
		"bochs-2.7 corei7_skylake_x", "bochs-2.7 corei7_icelake_u", "bochs-2.7 tigerlake" };
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
		test_log_clear();
		decode(models[i], &raw, &c);
		CHECK(c.vmx && !c.posted_intr && c.vid && !c.tertiary);
		CHECK_EQ(c.vmcs_size, 4096);
		CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
		CHECK_STR(summary(&t), "ipi=pv eoi=vid timer=preempt");
		CHECK(t.timer != TIMER_POSTED);
		CHECK_CONTAINS(test_log(), "tier: ipi=pv (no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available; "
			       "no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS)");
		CHECK_CONTAINS(test_log(), "tier: timer=preempt (");
		vmx_caps_print(&c);
		CHECK_CONTAINS(test_log(), "vmxcap: posted interrupts: no\n");
		CHECK_CONTAINS(test_log(), "vmxcap: tertiary controls not available\n");
		CHECK_EQ(choose(&c, IPI_FAST, EOI_AUTO, TIMER_AUTO, &t, err), -1);
		CHECK_STR(err, "ipi=fast refused: no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS");
	}
}

/* ---- synthetic profiles ---- */

/* SYNTHETIC: no emulator implements IPI virtualization or APIC-timer
 * virtualization. Start from the measured Bochs 3.0 sapphire_rapids MSRs and
 * also allow tertiary bits 4 (IPIv) and 8 (APIC-timer virtualization) in
 * MSR 0x492, as a CPU with both would report. */
static void synthetic_spr_ipiv(struct vmx_raw_caps *raw, struct vmx_caps *c)
{
	CHECK(fixture_spr_ipiv(raw));	/* the same profile test_vmcs.c uses */
	vmx_caps_decode(raw, c);
}

TEST(caps_synthetic_ipiv_profile)
{
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	synthetic_spr_ipiv(&raw, &c);
	CHECK(c.tertiary && c.ipiv && c.apic_timer_virt);
	CHECK_EQ(c.proc3_allowed1, 0x190);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=apicv");
	CHECK_CONTAINS(test_log(), "tier: ipi=ipiv (tertiary bit 4 IPI virtualization allowed, with "
		       "APIC-register virtualization, VID and posted interrupts)\n");
	CHECK_CONTAINS(test_log(), "tier: timer=apicv (tertiary bit 8 APIC-timer virtualization allowed");
	CHECK_STR(summary(&t), "ipi=ipiv eoi=vid timer=apicv");
	vmx_caps_print(&c);
	CHECK_CONTAINS(test_log(), "vmxcap: IPI virtualization: yes\n");
	CHECK_CONTAINS(test_log(), "IA32_VMX_PROCBASED_CTLS3=0x0000000000000190\n");

	/* Lower tiers stay selectable on the same CPU, for comparisons. */
	test_log_clear();
	CHECK_EQ(choose(&c, IPI_FAST, EOI_TRAP, TIMER_PREEMPT, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=trap timer=preempt");
	CHECK(tiers_vid_on(&c, &t));	/* eoi=trap keeps VID (all-ones EOI-exit bitmap) */
	CHECK_CONTAINS(test_log(), "tier: eoi=trap (override)\n");

	/* eoi=pv turns VID off, and with it everything that posts. */
	test_log_clear();
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_PV, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=pv timer=preempt");
	CHECK(!tiers_vid_on(&c, &t));
	CHECK_CONTAINS(test_log(), "tier: ipi=pv (virtual-interrupt delivery off: eoi=pv and VID exclude each other)\n");
	CHECK_EQ(choose(&c, IPI_IPIV, EOI_PV, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "ipi=ipiv refused: virtual-interrupt delivery off: eoi=pv and VID exclude each other");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_PV, TIMER_APICV, &t, err), -1);
	CHECK_STR(err, "timer=apicv refused: virtual-interrupt delivery off: eoi=pv and VID exclude each other");
}

TEST(caps_synthetic_no_tertiary)
{
	/* SYNTHETIC: sapphire_rapids with "activate tertiary controls" (primary
	 * allowed-1 bit 17) cleared. MSR 0x492 still holds IPIv and timer bits,
	 * which the decoder must ignore (A.3.4: the MSR is only meaningful when
	 * bit 17 may be 1). */
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	CHECK(fixture_load_profile("bochs-3.0 sapphire_rapids", &raw));
	raw.proc3 |= VMX_PROC3_IPI_VIRT | VMX_PROC3_APIC_TIMER_VIRT;
	fixture_clear_allowed1(&raw.proc, &raw.true_proc, VMX_PROC_ACTIVATE_TERTIARY);
	vmx_caps_decode(&raw, &c);
	CHECK(!c.tertiary && !c.ipiv && !c.apic_timer_virt);
	CHECK_EQ(c.proc3_allowed1, 0);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_EQ(t.ipi, IPI_FAST);
	CHECK_EQ(t.timer, TIMER_DEADLINE);
	CHECK_CONTAINS(test_log(), "tier: ipi=fast (no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available)");
	vmx_caps_print(&c);
	CHECK_CONTAINS(test_log(), "vmxcap: tertiary controls not available\n");
}

TEST(caps_synthetic_no_posted_interrupts)
{
	/* SYNTHETIC: the IPIv profile above with "process posted interrupts"
	 * (pin allowed-1 bit 7) cleared: IPIv and the fast paths all need it. */
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	synthetic_spr_ipiv(&raw, &c);
	fixture_clear_allowed1(&raw.pin, &raw.true_pin, VMX_PIN_POSTED_INTR);
	vmx_caps_decode(&raw, &c);
	CHECK(!c.posted_intr && c.ipiv && c.vid);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=vid timer=apicv");
	CHECK_CONTAINS(test_log(), "tier: ipi=pv (no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS)\n");
	CHECK_EQ(choose(&c, IPI_IPIV, EOI_AUTO, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "ipi=ipiv refused: no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_POSTED, &t, err), -1);
	CHECK_STR(err, "timer=posted refused: no posted interrupts: not allowed by IA32_VMX_PINBASED_CTLS");

	/* Posted interrupts allowed but ack-interrupt-on-exit not: still no posting. */
	synthetic_spr_ipiv(&raw, &c);
	fixture_clear_allowed1(&raw.exit, &raw.true_exit, VMX_EXIT_ACK_INTR_ON_EXIT);
	vmx_caps_decode(&raw, &c);
	CHECK(c.posted_intr && !c.ack_intr_on_exit);
	test_log_clear();
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_EQ(t.ipi, IPI_PV);
	CHECK_CONTAINS(test_log(), "acknowledge-interrupt-on-exit");
}

TEST(caps_synthetic_no_vid)
{
	/* SYNTHETIC: Bochs 3.0 skylake_x with "virtual-interrupt delivery"
	 * (secondary allowed-1 bit 9) cleared. */
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_clear_allowed1(&raw.proc2, NULL, VMX_PROC2_VIRT_INTR_DELIVERY);
	vmx_caps_decode(&raw, &c);
	CHECK(!c.vid && c.posted_intr && c.virt_x2apic);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=pv timer=preempt");
	CHECK_CONTAINS(test_log(), "tier: eoi=pv (no virtual-interrupt delivery: not allowed by IA32_VMX_PROCBASED_CTLS2)\n");
	CHECK_CONTAINS(test_log(), "tier: ipi=pv (no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available; "
		       "no virtual-interrupt delivery: not allowed by IA32_VMX_PROCBASED_CTLS2)\n");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_VID, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "eoi=vid refused: no virtual-interrupt delivery: not allowed by IA32_VMX_PROCBASED_CTLS2");

	/* VID allowed but "use TPR shadow" not: VID is unusable (26.2.1.1). */
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_clear_allowed1(&raw.proc, &raw.true_proc, VMX_PROC_USE_TPR_SHADOW);
	vmx_caps_decode(&raw, &c);
	CHECK(c.vid && !c.tpr_shadow);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_VID, TIMER_AUTO, &t, err), -1);
	CHECK_CONTAINS(err, "use TPR shadow");
}

TEST(caps_basic_bit55_selects_true_msrs)
{
	/* SYNTHETIC: make the TRUE pin-based MSR disagree with the plain one
	 * (posted interrupts only in the plain one) and check which is read. */
	struct vmx_raw_caps raw; struct vmx_caps c;
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_clear_allowed1(&raw.true_pin, NULL, VMX_PIN_POSTED_INTR);

	vmx_caps_decode(&raw, &c);	/* bit 55 set: TRUE_* */
	CHECK(c.true_ctls);
	CHECK(!c.posted_intr);
	CHECK_EQ(c.proc.allowed0, 0x04006172); CHECK_EQ(c.exit.allowed0, 0x00036dfb);

	raw.basic &= ~VMX_BASIC_TRUE_CTLS;	/* bit 55 clear: plain MSRs */
	vmx_caps_decode(&raw, &c);
	CHECK(!c.true_ctls);
	CHECK(c.posted_intr);
	CHECK_EQ(c.proc.allowed0, 0x0401e172);	/* CR3-load/store exiting forced */
	CHECK_EQ(c.exit.allowed0, 0x00036dff); CHECK_EQ(c.entry.allowed0, 0x000011ff);
	CHECK_EQ(c.revision, 0x2b);

	/* Bit 55 set but the TRUE MSRs were not read: fall back, and say so. */
	raw.basic |= VMX_BASIC_TRUE_CTLS;
	raw.has_true = false;
	test_log_clear();
	vmx_caps_decode(&raw, &c);
	CHECK(!c.true_ctls && c.posted_intr);
	CHECK_CONTAINS(test_log(), "TRUE_* control MSRs were not read");
}

TEST(caps_reader_rules_gate_optional_msrs)
{
	/* SYNTHETIC: "activate secondary controls" not allowed: PROCBASED_CTLS2,
	 * EPT_VPID_CAP and VMFUNC must be ignored even though values exist. */
	struct vmx_raw_caps raw; struct vmx_caps c;
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_clear_allowed1(&raw.proc, &raw.true_proc, VMX_PROC_ACTIVATE_SECONDARY);
	vmx_caps_decode(&raw, &c);
	CHECK(!c.secondary && !c.ept && !c.vpid && !c.unrestricted && !c.vid && !c.virt_x2apic);
	CHECK_EQ(c.proc2.allowed1, 0); CHECK_EQ(c.ept_vpid, 0);
	CHECK_EQ(c.vmfunc, 0);
	CHECK(c.posted_intr);	/* pin-based is still read */

	/* Secondary allowed but the MSR was not read. */
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	raw.has_proc2 = false;
	test_log_clear();
	vmx_caps_decode(&raw, &c);
	CHECK(!c.secondary && !c.ept);
	CHECK_CONTAINS(test_log(), "IA32_VMX_PROCBASED_CTLS2 was not read");

	/* Neither EPT nor VPID: no EPT_VPID_CAP. */
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_clear_allowed1(&raw.proc2, NULL, VMX_PROC2_EPT | VMX_PROC2_VPID);
	vmx_caps_decode(&raw, &c);
	CHECK(!c.ept && !c.unrestricted && !c.ept_wb && !c.ept_2m);
	CHECK_EQ(c.ept_vpid, 0);
}

TEST(caps_cpuid_vmx_clear)
{
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	raw.cpuid1_ecx &= ~CPUID1_ECX_VMX;
	vmx_caps_decode(&raw, &c);
	CHECK(!c.vmx);
	CHECK(!c.ept && !c.posted_intr && !c.vid && !c.secondary && !c.feature_control_ok);
	CHECK_EQ(c.revision, 0);
	vmx_caps_print(&c);
	CHECK_CONTAINS(test_log(), "vmxcap: VMX not supported");
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_AUTO, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=pv timer=trap");
}

TEST(caps_feature_control)
{
	struct vmx_raw_caps raw; struct vmx_caps c;
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	raw.feature_control = FEATURE_CONTROL_LOCK | FEATURE_CONTROL_VMX_OUTSIDE_SMX;
	vmx_caps_decode(&raw, &c);
	CHECK(c.feature_control_ok);
	raw.feature_control = FEATURE_CONTROL_LOCK | FEATURE_CONTROL_VMX_INSIDE_SMX;
	vmx_caps_decode(&raw, &c);
	CHECK(!c.feature_control_ok);
	raw.feature_control = 0;
	vmx_caps_decode(&raw, &c);
	CHECK(c.feature_control_ok);
}

/* ---- control words ---- */

TEST(caps_adjust_ctl)
{
	struct vmx_ctl pin27 = { 0x16, 0x7f };	/* Bochs 2.7 pin-based */
	uint32_t dropped = 0xdead;
	uint32_t v = vmx_adjust_ctl("pin", &pin27,
				    VMX_PIN_EXT_INT_EXITING | VMX_PIN_VIRTUAL_NMIS | VMX_PIN_POSTED_INTR, &dropped);
	CHECK_EQ(v, 0x16 | VMX_PIN_EXT_INT_EXITING | VMX_PIN_VIRTUAL_NMIS);
	CHECK_EQ(dropped, VMX_PIN_POSTED_INTR);
	CHECK_CONTAINS(test_log(), "vmx: pin control process posted interrupts (bit 7) not allowed by the CPU, dropped\n");
	CHECK_CONTAINS(test_log(), "vmx: pin control unnamed (bit 1) forced on by the CPU\n");
	CHECK_CONTAINS(test_log(), "(bit 4) forced on");
	CHECK(!strstr(test_log(), "(bit 0)"));

	/* Nothing to drop: no warning, NULL dropped pointer accepted. */
	test_log_clear();
	struct vmx_ctl proc = { 0x04006172, 0xfff9fffe };
	v = vmx_adjust_ctl("proc", &proc, VMX_PROC_HLT_EXITING | VMX_PROC_USE_MSR_BITMAPS, NULL);
	CHECK_EQ(v, 0x04006172 | VMX_PROC_HLT_EXITING | VMX_PROC_USE_MSR_BITMAPS);
	CHECK(!strstr(test_log(), "dropped"));
	v = vmx_adjust_ctl("proc", &proc, VMX_PROC_ACTIVATE_TERTIARY | VMX_PROC_ACTIVATE_SECONDARY, &dropped);
	CHECK_EQ(dropped, VMX_PROC_ACTIVATE_TERTIARY);
	CHECK(v & VMX_PROC_ACTIVATE_SECONDARY);
	CHECK_CONTAINS(test_log(), "proc control activate tertiary controls (bit 17) not allowed");

	/* An inconsistent MSR (must be 1 and must be 0) is reported. */
	test_log_clear();
	struct vmx_ctl bad = { 0x3, 0x1 };
	v = vmx_adjust_ctl("exit", &bad, 0, &dropped);
	CHECK_EQ(v, 0x1);
	CHECK_CONTAINS(test_log(), "(bit 1) must be both 0 and 1");

	/* Tertiary: allowed-1 only. */
	test_log_clear();
	uint64_t d3 = 0;
	uint64_t v3 = vmx_adjust_ctl3(0x80, VMX_PROC3_IPI_VIRT | VMX_PROC3_VIRT_SPEC_CTRL, &d3);
	CHECK_EQ(v3, VMX_PROC3_VIRT_SPEC_CTRL);
	CHECK_EQ(d3, VMX_PROC3_IPI_VIRT);
	CHECK_CONTAINS(test_log(), "vmx: proc3 control IPI virtualization (bit 4) not allowed by the CPU, dropped\n");
	CHECK_EQ(vmx_adjust_ctl3(0x190, VMX_PROC3_APIC_TIMER_VIRT, NULL), VMX_PROC3_APIC_TIMER_VIRT);
}

TEST(caps_bit_names)
{
	CHECK_STR(vmx_ctl_bit_name("pin", 7), "process posted interrupts");
	CHECK_STR(vmx_ctl_bit_name("proc", 7), "HLT exiting");
	CHECK_STR(vmx_ctl_bit_name("proc", 31), "activate secondary controls");
	CHECK_STR(vmx_ctl_bit_name("proc2", 9), "virtual-interrupt delivery");
	CHECK_STR(vmx_ctl_bit_name("proc2", 4), "virtualize x2APIC mode");
	CHECK_STR(vmx_ctl_bit_name("proc3", 4), "IPI virtualization");
	CHECK_STR(vmx_ctl_bit_name("proc3", 8), "APIC-timer virtualization");
	CHECK_STR(vmx_ctl_bit_name("exit", 15), "acknowledge interrupt on exit");
	CHECK_STR(vmx_ctl_bit_name("entry", 9), "IA-32e mode guest");
	CHECK(vmx_ctl_bit_name("pin", 1) == NULL);
	CHECK(vmx_ctl_bit_name("pin", 40) == NULL);
	CHECK(vmx_ctl_bit_name("proc3", 64) == NULL);
	CHECK(vmx_ctl_bit_name("bogus", 0) == NULL);
	CHECK(vmx_ctl_bit_name(NULL, 0) == NULL);
}

/* ---- report, comparison, overrides ---- */

/* The status word of the first "vmxcap:   <label>   <value>" row. */
static const char *row_value(const char *log, const char *label)
{
	static char val[32];
	char key[96];
	snprintf(key, sizeof key, "vmxcap:   %s ", label);
	const char *l = strstr(log, key);
	if (!l)
		return NULL;
	const char *e = strchr(l, '\n');
	const char *v = e;
	while (v > l && v[-1] != ' ')
		v--;
	snprintf(val, sizeof val, "%.*s", (int)(e - v), v);
	return val;
}

TEST(caps_print_table)
{
	struct vmx_raw_caps raw; struct vmx_caps c;
	decode("bochs-3.0 corei7_skylake_x", &raw, &c);
	test_log_clear();
	vmx_caps_print(&c);
	const char *log = test_log();
	CHECK_CONTAINS(log, "vmxcap: VMCS revision 0x2b, VMCS size 4096, TRUE_* control MSRs\n");
	CHECK_CONTAINS(log, "vmxcap: secondary processor-based VM-execution controls: allowed0=0x00000000 allowed1=0x02577fff\n");
	CHECK_CONTAINS(log, "vmxcap: tertiary controls not available\n");
	CHECK_CONTAINS(log, "vmxcap: posted interrupts: yes\n");
	CHECK_CONTAINS(log, "vmxcap: virtual-interrupt delivery: yes\n");
	CHECK_CONTAINS(log, "vmxcap: IPI virtualization: no\n");
	CHECK_CONTAINS(log, "vmxcap: EPT/VPID capabilities 0x00000f0106734141\n");
	CHECK_CONTAINS(log, "vmxcap: CR0 fixed0=0x0000000080000021 fixed1=0x00000000ffffffff\n");
	/* default1 bit 1 of the pin-based controls is forced; HLT exiting optional */
	CHECK(strstr(log, "vmxcap:   bit 1 ") != NULL);
	CHECK_STR(row_value(log, "HLT exiting"), "yes");
	CHECK_STR(row_value(log, "unrestricted guest"), "yes");
	CHECK_STR(row_value(log, "use TSC scaling"), "yes");
	CHECK_STR(row_value(log, "enable ENCLS exiting"), "no");
	CHECK_STR(row_value(log, "activate tertiary controls"), "no");
	CHECK_STR(row_value(log, "activity state wait-for-SIPI"), "yes");
	/* every line carries the prefix */
	for (const char *l = log; *l; ) {
		CHECK(!strncmp(l, "vmxcap: ", 8));
		const char *e = strchr(l, '\n');
		if (!e)
			break;
		l = e + 1;
	}
}

TEST(caps_compare_cpus)
{
	struct vmx_raw_caps a, b;
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &a));
	b = a;
	CHECK_EQ(vmx_caps_compare(0, &a, 1, &b), 0);
	CHECK(!strstr(test_log(), "differ"));

	b.proc2 ^= (uint64_t)VMX_PROC2_VIRT_INTR_DELIVERY << 32;
	CHECK_EQ(vmx_caps_compare(0, &a, 3, &b), 1);
	CHECK_CONTAINS(test_log(), "vmx: CPU 0 and CPU 3 differ in IA32_VMX_PROCBASED_CTLS2 (MSR 0x48b): "
		       "0x02577fff00000000 vs 0x02577dff00000000\n");

	test_log_clear();
	CHECK(fixture_load_profile("bochs-3.0 corei7_icelake_u", &b));
	CHECK_EQ(vmx_caps_compare(0, &a, 1, &b), 3);	/* BASIC, CR4_FIXED1, PROCBASED_CTLS2 */
	CHECK_CONTAINS(test_log(), "differ in IA32_VMX_BASIC (MSR 0x480): 0x00d810000000002b vs 0x00d8100000000004");
	CHECK_CONTAINS(test_log(), "IA32_VMX_CR4_FIXED1");

	test_log_clear();
	CHECK(fixture_load_profile("bochs-3.0 sapphire_rapids", &b));
	CHECK(vmx_caps_compare(0, &a, 2, &b) > 0);
	CHECK_CONTAINS(test_log(), "IA32_VMX_PROCBASED_CTLS3 (MSR 0x492): present on CPU 2, absent on CPU 0");

	test_log_clear();
	b = a;
	b.cpuid1_ecx &= ~CPUID1_ECX_VMX;
	CHECK_EQ(vmx_caps_compare(0, &a, 1, &b), 1);
	CHECK_CONTAINS(test_log(), "CPUID.1:ECX.VMX");
}

TEST(caps_overrides)
{
	struct vmx_raw_caps raw; struct vmx_caps c; struct hv_tiers t; char err[256];
	decode("bochs-3.0 corei7_skylake_x", &raw, &c);

	CHECK_EQ(choose(&c, IPI_PV, EOI_TRAP, TIMER_PREEMPT, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=pv eoi=trap timer=preempt");
	CHECK_CONTAINS(test_log(), "tier: ipi=pv (override)\n");
	CHECK_CONTAINS(test_log(), "tier: eoi=trap (override)\n");
	CHECK_CONTAINS(test_log(), "tier: timer=preempt (override)\n");

	CHECK_EQ(choose(&c, IPI_TRAP, EOI_PV, TIMER_TRAP, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=trap eoi=pv timer=trap");

	CHECK_EQ(choose(&c, IPI_FAST, EOI_VID, TIMER_POSTED, &t, err), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=posted");

	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_APICV, &t, err), -1);
	CHECK_STR(err, "timer=apicv refused: no APIC-timer virtualization: IA32_VMX_PROCBASED_CTLS3 not available");
	CHECK_EQ(choose(&c, IPI_IPIV, EOI_AUTO, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "ipi=ipiv refused: no IPI virtualization: IA32_VMX_PROCBASED_CTLS3 not available");
	CHECK_EQ(choose(&c, IPI_FAST, EOI_PV, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "ipi=fast refused: virtual-interrupt delivery off: eoi=pv and VID exclude each other");
	CHECK_EQ(choose(&c, 17, EOI_AUTO, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "ipi: bad tier value 17");
	CHECK_EQ(choose(&c, IPI_AUTO, -1, TIMER_AUTO, &t, err), -1);
	CHECK_STR(err, "eoi: bad tier value -1");

	/* No preemption timer: timer=preempt refused, auto still has fast. */
	fixture_clear_allowed1(&raw.pin, &raw.true_pin, VMX_PIN_PREEMPTION_TIMER);
	vmx_caps_decode(&raw, &c);
	CHECK_EQ(choose(&c, IPI_AUTO, EOI_AUTO, TIMER_PREEMPT, &t, err), -1);
	CHECK_STR(err, "timer=preempt refused: no VMX-preemption timer: not allowed by IA32_VMX_PINBASED_CTLS");

	/* NULL options = all auto; NULL err tolerated. */
	CHECK_EQ(tiers_choose(&c, NULL, &t, NULL, 0), 0);
	CHECK_STR(summary(&t), "ipi=fast eoi=vid timer=deadline");
	struct hv_tiers bogus = { 99, -2, 5 };
	CHECK_STR(summary(&bogus), "ipi=? eoi=? timer=trap");
}
