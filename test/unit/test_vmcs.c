/* Host tests for vmx/vmcs.c: on every measured Bochs profile and on the
 * synthetic ones, build the VMCS the hypervisor would launch (controls, a
 * plausible host state, the Linux 64-bit BSP state, the wait-for-SIPI AP
 * state and the state after a SIPI) and run the VM-entry check model over
 * the recorded fields. Also the IPI-virtualization fields. Expectations read
 * the recorded fields by the model's encodings and bits (sdm_vmcs.h). */
#include "test.h"
#include "fixture.h"
#include "vmcs_record.h"
#include "vmentry_model.h"
#include "sdm_vmcs.h"
#include "sdm_pid.h"
#include "../../vmx/vmcs.h"
#include "../../vmx/vmcs_fields.h"
#include "../../vmx/vmcs_ops.h"
#include "../../vmx/vmx_defs.h"
#include "../../vmx/tiers.h"
#include "../../apic/pi.h"
#include "../../lib/cpu.h"

#define EPTP_WB_4LEVEL (0x100000ull | 6 | (3 << 3))   /* PML4 at 1 MiB, WB, 4-level */
#define PAT_DEFAULT 0x0007040600070406ull
#define LINUX_ENTRY 0x1000200
#define LINUX_CR3 0x13000
#define LINUX_GDT 0x12000
#define LINUX_GDT_LIMIT 0x1f
#define SIPI_VECTOR 0x9a
#define PI_NV 0xf2                                      /* vmcs.c's POSTED_INTR_VECTOR */

/* ---- profiles ---- */

static const struct { const char *name; bool (*load)(struct vmx_raw_caps *); } synthetics[] = {
	{ "synthetic spr+ipiv", fixture_spr_ipiv },
	{ "synthetic no tertiary", fixture_no_tertiary },
	{ "synthetic no posted interrupts", fixture_no_posted },
	{ "synthetic no VID", fixture_no_vid },
};

#define MAX_PROFILES 32
struct profiles { int n; char name[MAX_PROFILES][64]; struct vmx_raw_caps raw[MAX_PROFILES]; };

/* Every fixture section, then the synthetic profiles. */
static void all_profiles(struct profiles *p)
{
	const char *names[MAX_PROFILES];
	char buf[MAX_PROFILES][64];
	int n = fixture_list_sections(names, buf, MAX_PROFILES - (int)ARRAY_SIZE(synthetics));
	for (p->n = 0; p->n < n; p->n++) {
		snprintf(p->name[p->n], 64, "%s", names[p->n]);
		CHECK(fixture_load_profile(names[p->n], &p->raw[p->n]));
	}
	for (size_t i = 0; i < ARRAY_SIZE(synthetics); i++, p->n++) {
		snprintf(p->name[p->n], 64, "%s", synthetics[i].name);
		CHECK(synthetics[i].load(&p->raw[p->n]));
	}
}

/* ---- building one VMCS ---- */

struct env {
	struct vmx_caps c;
	struct hv_tiers t;
	struct vmcs_config cfg;
	struct vmcs_resources res;
	struct vmcs_vcpu v;
	char err[256];
};

static struct vmcs_resources resources(paddr_t pid_table, uint32_t max_apic_id)
{
	return (struct vmcs_resources){ .eptp = EPTP_WB_4LEVEL, .msr_bitmap = 0x200000, .io_bitmap_a = 0x201000,
					.io_bitmap_b = 0x202000, .pid_table = pid_table, .max_apic_id = max_apic_id };
}

static const char *irq_name(int irq) { return irq == IRQ_VIRTUAL ? "IRQ_VIRTUAL" : "IRQ_PARTITION"; }

/* Decodes, lets tiers_choose pick (all auto) and builds the config. */
static int env_build(struct env *e, const struct vmx_raw_caps *raw, int irq, const struct vmcs_resources *res)
{
	memset(e, 0, sizeof *e);
	vmx_caps_decode(raw, &e->c);
	if (tiers_choose(&e->c, NULL, &e->t, e->err, sizeof e->err))
		return -2;
	e->res = res ? *res : resources(0x203000, 3);
	e->v = (struct vmcs_vcpu){ .vpid = 1, .pid = 0x204040 /* 64-byte aligned */, .virtual_apic = 0x205000 };
	return vmcs_config_build(&e->cfg, &e->c, &e->t, irq, &e->res, e->err, sizeof e->err);
}

/* CR0/CR4 with the VMX fixed bits, a 64-bit host, canonical bases. */
static struct vmcs_host host_for(const struct vmx_caps *c)
{
	struct vmcs_host h = {
		.cr0 = (c->cr0_fixed0 | X86_CR0_PE | X86_CR0_NE | BIT(4) | BIT(16) | X86_CR0_PG) & c->cr0_fixed1,
		.cr3 = 0x1000,
		.cr4 = (c->cr4_fixed0 | X86_CR4_PAE | X86_CR4_PGE) & c->cr4_fixed1,
		.efer = BIT(8) | BIT(10) | BIT(11),   /* LME, LMA, NXE */
		.pat = PAT_DEFAULT,
		.gs_base = 0x300000, .tr_base = 0x301000, .gdtr_base = 0x302000, .idtr_base = 0x303000,
		.rsp = 0x380000, .rip = 0x100400,
		.cs = 0x08, .ds = 0x10, .tr = 0x18,
	};
	return h;
}

enum state { ST_LINUX, ST_WAIT_SIPI, ST_AFTER_SIPI };
static const char *const state_names[] = { "Linux 64-bit BSP", "wait-for-SIPI AP", "AP after SIPI 0x9a" };

static void guest_for(enum state s, struct vmcs_guest *g)
{
	if (s == ST_LINUX) {
		guest_state_linux64(g, LINUX_ENTRY, LINUX_CR3, LINUX_GDT, LINUX_GDT_LIMIT);
	} else {
		guest_state_wait_sipi(g);
		if (s == ST_AFTER_SIPI)
			guest_state_sipi(g, SIPI_VECTOR);
	}
}

/* Records controls, host and guest areas in vmcs_setup()'s order. */
static void write_vmcs(const struct env *e, enum state s)
{
	struct vmcs_guest g;
	struct vmcs_host h = host_for(&e->c);
	guest_for(s, &g);
	vmcs_record_clear();
	vmcs_write_controls(&e->cfg, &e->v);
	vmcs_write_host(&h);
	vmcs_write_guest(&e->cfg, &g);
}

/* Runs the model; prints the first violation with where it happened. */
static int enters(const struct env *e, const char *profile, int irq, enum state s)
{
	char why[512];
	int n = vmentry_check(&e->c, why, sizeof why);
	if (n)
		printf("    %s, %s, %s: %d violation(s), first: %s\n", profile, irq_name(irq), state_names[s], n, why);
	return n;
}

/* ---- every profile, both interrupt models, three guest states ---- */

TEST(vmcs_every_profile_enters_all_states)
{
	static struct profiles p;
	all_profiles(&p);
	CHECK_EQ(p.n, 12);   /* 5 Bochs 3.0 + 3 Bochs 2.7 models + 4 synthetic */
	for (int i = 0; i < p.n; i++)
		for (int irq = IRQ_PARTITION; irq <= IRQ_VIRTUAL; irq++) {
			struct env e;
			test_log_clear();
			int rc = env_build(&e, &p.raw[i], irq, NULL);
			if (rc)
				printf("    %s, %s: build failed: %s\n", p.name[i], irq_name(irq), e.err);
			CHECK_EQ(rc, 0);
			if (rc)
				continue;
			if (getenv("UNIT_VERBOSE")) {
				char tiers[64];
				printf("    %s, %s: %s, ipiv %s\n", p.name[i], irq_name(irq),
				       tiers_summary(&e.t, tiers, sizeof tiers), e.cfg.ipiv_note);
			}
			for (enum state s = ST_LINUX; s <= ST_AFTER_SIPI; s++) {
				write_vmcs(&e, s);
				CHECK_EQ(enters(&e, p.name[i], irq, s), 0);
				bool ia32e = vmcs_record_get(SDM_ENTRY_CONTROLS) & SDM_ENTRY_IA32E_MODE_GUEST;
				CHECK_EQ(ia32e, s == ST_LINUX);
				if (s == ST_LINUX) {
					CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), LINUX_ENTRY);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_CR3), LINUX_CR3);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_GDTR_BASE), LINUX_GDT);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_GDTR_LIMIT), LINUX_GDT_LIMIT);
				} else if (s == ST_WAIT_SIPI) {
					CHECK_EQ(vmcs_record_get(SDM_GUEST_ACTIVITY_STATE), SDM_ACTIVITY_WAIT_SIPI);
				} else {
					CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_BASE), 0x9a000);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_CS_SEL), 0x9a00);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_RIP), 0);
					CHECK_EQ(vmcs_record_get(SDM_GUEST_ACTIVITY_STATE), SDM_ACTIVITY_ACTIVE);
				}
			}
		}
}

/* Bochs 2.7 has EPT (WB, 4-level), unrestricted guest and wait-for-SIPI, so
 * the builder accepts it; it lacks posted interrupts and tertiary controls,
 * so IRQ_VIRTUAL runs with VID but without posting (ipi=pv, timer=preempt). */
TEST(vmcs_bochs27_models_build_without_posting)
{
	static const char *const models[] = {
		"bochs-2.7 corei7_skylake_x", "bochs-2.7 corei7_icelake_u", "bochs-2.7 tigerlake" };
	for (size_t i = 0; i < ARRAY_SIZE(models); i++) {
		struct vmx_raw_caps raw;
		struct env e;
		CHECK(fixture_load_profile(models[i], &raw));
		CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, NULL), 0);
		CHECK(e.c.ept && e.c.ept_wb && e.c.ept_4level && e.c.unrestricted && e.c.wait_for_sipi);
		CHECK(e.c.hlt_exiting_optional && e.c.msr_bitmaps && e.c.secondary);
		CHECK(!e.c.posted_intr && !e.c.tertiary && e.c.vid);
		CHECK(e.t.ipi == IPI_PV && e.t.eoi == EOI_VID && e.t.timer == TIMER_PREEMPT);
		CHECK(!(e.cfg.pin & SDM_PIN_POSTED_INTR) && (e.cfg.proc2 & SDM_PROC2_VIRT_INTR_DELIVERY));
		CHECK(!e.cfg.proc3_active && !e.cfg.ipiv);
		CHECK_CONTAINS(e.cfg.ipiv_note, "off: ipi tier is pv");
		for (enum state s = ST_LINUX; s <= ST_AFTER_SIPI; s++) {
			write_vmcs(&e, s);
			CHECK(!vmcs_record_has(SDM_POSTED_INTR_NV) && !vmcs_record_has(SDM_POSTED_INTR_DESC_ADDR));
			CHECK(!vmcs_record_has(SDM_TERTIARY_CONTROLS) && !vmcs_record_has(SDM_PID_POINTER_TABLE));
			CHECK(vmcs_record_has(SDM_VIRTUAL_APIC_PAGE_ADDR) && vmcs_record_has(SDM_EOI_EXIT_BITMAP3));
			CHECK_EQ(enters(&e, models[i], IRQ_VIRTUAL, s), 0);
		}
	}
}

/* ---- IPI virtualization ---- */

static const uint32_t apic_ids[] = { 0, 2, 5, 300 };
#define LAST_ID 300

/* A PID-pointer table for apic_ids with one 64-byte descriptor each. */
struct pid_set { uint64_t *table; struct pi_desc *desc; };

static void pid_set_init(struct pid_set *s)
{
	uint64_t bytes = pid_table_bytes(LAST_ID);
	s->table = aligned_alloc(4096, bytes);
	s->desc = aligned_alloc(4096, 4096);
	memset(s->table, 0, bytes);
	memset(s->desc, 0, 4096);
	for (size_t i = 0; i < ARRAY_SIZE(apic_ids); i++) {
		pi_desc_init(&s->desc[i], PI_NV, apic_ids[i]);
		pid_table_set(s->table, apic_ids[i], (paddr_t)(uintptr_t)&s->desc[i]);
	}
}

static void pid_set_free(struct pid_set *s) { free(s->table); free(s->desc); }

TEST(vmcs_spr_ipiv_virtual_programs_the_pid_table)
{
	struct vmx_raw_caps raw;
	struct pid_set s;
	struct env e;
	CHECK(fixture_spr_ipiv(&raw));
	pid_set_init(&s);
	CHECK_EQ(pid_table_bytes(LAST_ID), 4096);
	struct vmcs_resources res = resources((paddr_t)(uintptr_t)s.table, LAST_ID);
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, &res), 0);
	CHECK_EQ(e.t.ipi, IPI_IPIV);
	CHECK(e.cfg.ipiv && e.cfg.proc3_active);
	CHECK_CONTAINS(e.cfg.ipiv_note, "on: PID-pointer table at 0x");
	CHECK_CONTAINS(e.cfg.ipiv_note, ", last index 300");
	e.v.pid = (paddr_t)(uintptr_t)&s.desc[0];
	for (enum state s2 = ST_LINUX; s2 <= ST_AFTER_SIPI; s2++) {
		write_vmcs(&e, s2);
		CHECK(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_ACTIVATE_TERTIARY);
		CHECK(vmcs_record_get(SDM_TERTIARY_CONTROLS) & SDM_PROC3_IPI_VIRT);
		CHECK_EQ(vmcs_record_get(SDM_PID_POINTER_TABLE), (uintptr_t)s.table);
		CHECK_EQ(vmcs_record_get(SDM_LAST_PID_POINTER_INDEX), LAST_ID);
		CHECK(vmcs_record_get(SDM_PIN_CONTROLS) & SDM_PIN_POSTED_INTR);
		CHECK_EQ(vmcs_record_get(SDM_POSTED_INTR_NV), PI_NV);
		CHECK_EQ(vmcs_record_get(SDM_POSTED_INTR_DESC_ADDR), (uintptr_t)&s.desc[0]);
		uint64_t p2 = vmcs_record_get(SDM_PROC2_CONTROLS);
		CHECK((p2 & SDM_PROC2_VIRT_INTR_DELIVERY) && (p2 & SDM_PROC2_APIC_REG_VIRT) && (p2 & SDM_PROC2_VIRT_X2APIC_MODE));
		CHECK_EQ(enters(&e, "synthetic spr+ipiv", IRQ_VIRTUAL, s2), 0);
	}
	/* The table pid_table_set built: a valid entry per APIC ID, holes stay 0. */
	for (size_t i = 0; i < ARRAY_SIZE(apic_ids); i++)
		CHECK_EQ(sdm_pidpt_entry(s.table, apic_ids[i]), (uintptr_t)&s.desc[i] | SDM_PIDPT_VALID);
	CHECK(sdm_pidpt_entry(s.table, 1) == 0 && sdm_pidpt_entry(s.table, 299) == 0);
	pid_set_free(&s);
}

/* The same profile allows APIC-timer virtualization: timer=apicv keeps
 * tertiary bit 8 in the config beside IPIv but launches with it off (INIT's
 * LVT is masked; vmx/virq_timer.c turns it on per vCPU) and writes the
 * timer's three fields, disarmed; the VM-entry model accepts every state,
 * and with bit 8 on as the run time sets it, unless a check of the ISE's
 * fails: virtual-interrupt delivery 1, RDTSC exiting 0, vector <= 255. */
TEST(vmcs_spr_apic_timer_virtualization_fields)
{
	struct vmx_raw_caps raw;
	struct pid_set s;
	struct env e;
	CHECK(fixture_spr_ipiv(&raw));
	pid_set_init(&s);
	struct vmcs_resources res = resources((paddr_t)(uintptr_t)s.table, LAST_ID);
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, &res), 0);
	CHECK_EQ(e.t.timer, TIMER_APICV);
	CHECK(e.cfg.apic_timer_virt);
	e.v.pid = (paddr_t)(uintptr_t)&s.desc[0];
	for (enum state s2 = ST_LINUX; s2 <= ST_AFTER_SIPI; s2++) {
		write_vmcs(&e, s2);
		uint64_t p3 = vmcs_record_get(SDM_TERTIARY_CONTROLS);
		CHECK(!(p3 & SDM_PROC3_APIC_TIMER_VIRT) && (p3 & SDM_PROC3_IPI_VIRT));
		CHECK(e.cfg.proc3 & SDM_PROC3_APIC_TIMER_VIRT);
		CHECK(vmcs_record_has(SDM_VIRTUAL_TIMER_VECTOR) && vmcs_record_get(SDM_VIRTUAL_TIMER_VECTOR) == 0);
		CHECK(vmcs_record_has(SDM_GUEST_DEADLINE) && vmcs_record_get(SDM_GUEST_DEADLINE) == 0);
		CHECK(vmcs_record_has(SDM_GUEST_DEADLINE_SHADOW) && vmcs_record_get(SDM_GUEST_DEADLINE_SHADOW) == 0);
		CHECK(vmcs_record_get(SDM_PROC2_CONTROLS) & SDM_PROC2_VIRT_INTR_DELIVERY);
		CHECK(!(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_RDTSC_EXITING));
		CHECK_EQ(enters(&e, "synthetic spr+apicv", IRQ_VIRTUAL, s2), 0);
		/* The CPU serving the guest's timer. */
		vmcs_write(SDM_TERTIARY_CONTROLS, p3 | SDM_PROC3_APIC_TIMER_VIRT);
		vmcs_write(SDM_VIRTUAL_TIMER_VECTOR, 0xec);
		vmcs_write(SDM_GUEST_DEADLINE, 0x123456789);
		vmcs_write(SDM_GUEST_DEADLINE_SHADOW, 0x123456789);
		CHECK_EQ(enters(&e, "synthetic spr+apicv, bit 8 on", IRQ_VIRTUAL, s2), 0);
		char why[512];
		uint64_t proc = vmcs_record_get(SDM_PROC_CONTROLS), proc2 = vmcs_record_get(SDM_PROC2_CONTROLS);
		vmcs_write(SDM_PROC_CONTROLS, proc | SDM_PROC_RDTSC_EXITING);
		CHECK(vmentry_check(&e.c, why, sizeof why) > 0);
		CHECK_CONTAINS(why, "needs \"RDTSC exiting\" 0");
		vmcs_write(SDM_PROC_CONTROLS, proc);
		vmcs_write(SDM_VIRTUAL_TIMER_VECTOR, 0x1ec);
		CHECK(vmentry_check(&e.c, why, sizeof why) > 0);
		CHECK_CONTAINS(why, "virtual timer vector 0x1ec: bits 15:8 must be 0");
		vmcs_write(SDM_VIRTUAL_TIMER_VECTOR, 0xec);
		/* Without VID (posted interrupts and IPIv then fail too): bit 8 adds its own violation. */
		vmcs_write(SDM_PROC2_CONTROLS, proc2 & ~(uint64_t)SDM_PROC2_VIRT_INTR_DELIVERY);
		int with8 = vmentry_check(&e.c, why, sizeof why);
		vmcs_write(SDM_TERTIARY_CONTROLS, p3);
		CHECK_EQ(with8, vmentry_check(&e.c, why, sizeof why) + 1);
	}
	/* Bochs's sapphire_rapids allows neither: no bit 8, no timer fields. */
	struct env b;
	CHECK(fixture_load_profile("bochs-3.0 sapphire_rapids", &raw));
	CHECK_EQ(env_build(&b, &raw, IRQ_VIRTUAL, NULL), 0);
	CHECK(b.t.timer != TIMER_APICV && !b.cfg.apic_timer_virt);
	/* ... so auto takes timer=deadline: no tertiary timer bit, nothing to
	 * check at VM entry beyond what timer=posted needs. */
	CHECK_EQ(b.t.timer, TIMER_DEADLINE);
	CHECK(b.cfg.deadline_pass);
	write_vmcs(&b, ST_LINUX);
	CHECK(!(vmcs_record_get(SDM_TERTIARY_CONTROLS) & SDM_PROC3_APIC_TIMER_VIRT));
	CHECK(!vmcs_record_has(SDM_VIRTUAL_TIMER_VECTOR) && !vmcs_record_has(SDM_GUEST_DEADLINE));
	CHECK_EQ(enters(&b, "bochs-3.0 sapphire_rapids, timer=deadline", IRQ_VIRTUAL, ST_LINUX), 0);
	pid_set_free(&s);
}

TEST(vmcs_spr_ipiv_partition_keeps_ipiv_off)
{
	struct vmx_raw_caps raw;
	struct env e;
	CHECK(fixture_spr_ipiv(&raw));
	CHECK_EQ(env_build(&e, &raw, IRQ_PARTITION, NULL), 0);
	CHECK(e.t.ipi == IPI_IPIV && !e.cfg.ipiv);   /* the tier would allow it, the partition model does not */
	CHECK_CONTAINS(e.cfg.ipiv_note, "partition");
	test_log_clear();
	vmcs_config_print(&e.cfg);
	CHECK_CONTAINS(test_log(), "IPI virtualization off: the partition interrupt model");
	write_vmcs(&e, ST_LINUX);
	CHECK(!vmcs_record_has(SDM_PID_POINTER_TABLE) && !vmcs_record_has(SDM_LAST_PID_POINTER_INDEX));
	CHECK(!(vmcs_record_get(SDM_TERTIARY_CONTROLS) & SDM_PROC3_IPI_VIRT));
	CHECK(!(vmcs_record_get(SDM_PIN_CONTROLS) & (SDM_PIN_POSTED_INTR | SDM_PIN_EXT_INT_EXITING)));
	CHECK(!(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_USE_TPR_SHADOW));
	CHECK(!vmcs_record_has(SDM_POSTED_INTR_DESC_ADDR) && !vmcs_record_has(SDM_VIRTUAL_APIC_PAGE_ADDR));
	CHECK_EQ(enters(&e, "synthetic spr+ipiv", IRQ_PARTITION, ST_LINUX), 0);
}

TEST(vmcs_no_tertiary_profile_never_writes_tertiary)
{
	struct vmx_raw_caps raw;
	CHECK(fixture_no_tertiary(&raw));
	for (int irq = IRQ_PARTITION; irq <= IRQ_VIRTUAL; irq++) {
		struct env e;
		CHECK_EQ(env_build(&e, &raw, irq, NULL), 0);
		CHECK(!e.c.tertiary && !e.cfg.proc3_active && !e.cfg.ipiv);
		CHECK_CONTAINS(e.cfg.ipiv_note, "off");
		for (enum state s = ST_LINUX; s <= ST_AFTER_SIPI; s++) {
			write_vmcs(&e, s);
			CHECK(!vmcs_record_has(SDM_TERTIARY_CONTROLS) && !vmcs_record_has(SDM_PID_POINTER_TABLE));
			CHECK(!(vmcs_record_get(SDM_PROC_CONTROLS) & SDM_PROC_ACTIVATE_TERTIARY));
			CHECK_EQ(enters(&e, "synthetic no tertiary", irq, s), 0);
		}
	}
}

/* ---- what the hypervisor refuses to run without ---- */

static void no_secondary(struct vmx_raw_caps *r) { fixture_clear_allowed1(&r->proc, &r->true_proc, VMX_PROC_ACTIVATE_SECONDARY); }
static void no_ept_wb(struct vmx_raw_caps *r) { r->ept_vpid &= ~VMX_EPT_CAP_MEMTYPE_WB; }
static void no_ept_4level(struct vmx_raw_caps *r) { r->ept_vpid &= ~VMX_EPT_CAP_PWL4; }
static void no_unrestricted(struct vmx_raw_caps *r) { fixture_clear_allowed1(&r->proc2, NULL, VMX_PROC2_UNRESTRICTED_GUEST); }
static void no_msr_bitmaps(struct vmx_raw_caps *r) { fixture_clear_allowed1(&r->proc, &r->true_proc, VMX_PROC_USE_MSR_BITMAPS); }
static void no_wait_sipi(struct vmx_raw_caps *r) { r->misc &= ~VMX_MISC_ACT_WAIT_SIPI; }
static void hlt_forced(struct vmx_raw_caps *r) { fixture_set_allowed0(&r->proc, &r->true_proc, VMX_PROC_HLT_EXITING); }
static void mwait_forced(struct vmx_raw_caps *r) { fixture_set_allowed0(&r->proc, &r->true_proc, VMX_PROC_MWAIT_EXITING); }
static void desc_forced(struct vmx_raw_caps *r)
{
	fixture_set_allowed0(&r->proc2, NULL, VMX_PROC2_DESC_TABLE_EXITING);
	r->proc2 |= (uint64_t)VMX_PROC2_DESC_TABLE_EXITING << 32;
}
static void pml_forced(struct vmx_raw_caps *r)
{
	fixture_set_allowed0(&r->proc2, NULL, VMX_PROC2_PML);
	r->proc2 |= (uint64_t)VMX_PROC2_PML << 32;
}
static void no_64bit_host(struct vmx_raw_caps *r) { fixture_clear_allowed1(&r->exit, &r->true_exit, VMX_EXIT_HOST_ADDR_SPACE_SIZE); }
static void no_entry_efer(struct vmx_raw_caps *r) { fixture_clear_allowed1(&r->entry, &r->true_entry, VMX_ENTRY_LOAD_EFER); }

TEST(vmcs_missing_requirements_are_refused_by_name)
{
	static const struct { const char *what; void (*mutate)(struct vmx_raw_caps *); } cases[] = {
		{ "secondary controls", no_secondary },
		{ "EPT with 4-level walks and write-back", no_ept_wb },
		{ "EPT with 4-level walks and write-back", no_ept_4level },
		{ "unrestricted guest (APs start in real mode)", no_unrestricted },
		{ "MSR bitmaps", no_msr_bitmaps },
		{ "the wait-for-SIPI activity state", no_wait_sipi },
		{ "HLT without exiting", hlt_forced },
		{ "HLT, MWAIT and PAUSE without exiting", mwait_forced },
		{ "64-bit host and EFER switching on exit", no_64bit_host },
		{ "loading EFER on entry", no_entry_efer },
		{ "no forced-on descriptor-table, ENCLS, ENCLV, PML, UMWAIT/TPAUSE, bus-lock, instruction-timeout, #VE or "
		  "VMCS-shadowing control (their exits have no handler)", desc_forced },
		{ "no forced-on descriptor-table, ENCLS, ENCLV, PML, UMWAIT/TPAUSE, bus-lock, instruction-timeout, #VE or "
		  "VMCS-shadowing control (their exits have no handler)", pml_forced },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (int irq = IRQ_PARTITION; irq <= IRQ_VIRTUAL; irq++) {
			struct vmx_raw_caps raw;
			struct env e;
			char want[256];
			CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
			cases[i].mutate(&raw);
			CHECK_EQ(env_build(&e, &raw, irq, NULL), -1);
			snprintf(want, sizeof want, "vmcs: the CPU does not allow %s, which this hypervisor needs", cases[i].what);
			CHECK_STR(e.err, want);
		}
}

/* Forced-on controls whose exits vmx/forced.c emulates: the configuration
 * builds, and carries them. */
TEST(vmcs_forced_controls_with_handlers_are_kept)
{
	const uint32_t bits = VMX_PROC_MOV_DR_EXITING | VMX_PROC_RDPMC_EXITING | VMX_PROC_MONITOR_EXITING |
			      VMX_PROC_CR3_LOAD_EXITING | VMX_PROC_CR3_STORE_EXITING | VMX_PROC_INVLPG_EXITING |
			      VMX_PROC_RDTSC_EXITING;
	struct vmx_raw_caps raw;
	struct env e;
	CHECK(fixture_load_profile("bochs-3.0 corei7_skylake_x", &raw));
	fixture_set_allowed0(&raw.proc, &raw.true_proc, bits);
	fixture_set_allowed0(&raw.proc2, NULL, VMX_PROC2_RDRAND_EXITING);
	raw.proc2 |= (uint64_t)VMX_PROC2_RDRAND_EXITING << 32;
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, NULL), 0);
	CHECK_EQ(e.cfg.proc & bits, bits);
	CHECK(e.cfg.proc2 & VMX_PROC2_RDRAND_EXITING);
}

/* ---- the model can fail: deliberately broken VMCSs ---- */

/* Builds a good VMCS for the profile and state, then changes one field. */
static int broken(const char *profile, bool (*load)(struct vmx_raw_caps *), enum state s, uint32_t field,
		  uint64_t clear, uint64_t set, char *why, size_t n)
{
	struct vmx_raw_caps raw;
	struct env e;
	CHECK(load ? load(&raw) : fixture_load_profile(profile, &raw));
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, NULL), 0);
	write_vmcs(&e, s);
	CHECK_EQ(enters(&e, profile, IRQ_VIRTUAL, s), 0);   /* good before the change */
	vmcs_write(field, (vmcs_record_get(field) & ~clear) | set);
	return vmentry_check(&e.c, why, n);
}

#define SKX "bochs-3.0 corei7_skylake_x"

TEST(vmcs_model_rejects_32bit_host_exit_controls)
{
	char why[512];
	CHECK(broken(SKX, NULL, ST_LINUX, SDM_EXIT_CONTROLS, SDM_EXIT_HOST_ADDR_SPACE_SIZE, 0, why, sizeof why) > 0);
	CHECK_CONTAINS(why, "host address-space size");
}

TEST(vmcs_model_rejects_rflags_bit1_clear)
{
	char why[512];
	CHECK_EQ(broken(SKX, NULL, ST_LINUX, SDM_GUEST_RFLAGS, 2, 0, why, sizeof why), 1);
	CHECK_CONTAINS(why, "[guest RFLAGS] GUEST_RFLAGS 0x0: reserved bit 1 must be 1");
}

static bool skx_with_pwl5(struct vmx_raw_caps *r)
{
	bool ok = fixture_load_profile(SKX, r);
	r->ept_vpid |= SDM_EPT_CAP_PWL5;   /* SYNTHETIC: 5-level EPT allowed */
	return ok;
}

TEST(vmcs_model_rejects_eptp_walk_length_5_without_support)
{
	char why[512];
	CHECK_EQ(broken(SKX, NULL, ST_LINUX, SDM_EPT_POINTER, 0x38, 4 << 3, why, sizeof why), 1);
	CHECK_CONTAINS(why, "page-walk length 5 (bits 5:3 = 4) not supported");
	/* The same EPTP is fine where IA32_VMX_EPT_VPID_CAP bit 7 allows it. */
	CHECK_EQ(broken("synthetic pwl5", skx_with_pwl5, ST_LINUX, SDM_EPT_POINTER, 0x38, 4 << 3, why, sizeof why), 0);
}

TEST(vmcs_model_rejects_each_broken_field)
{
	static const struct {
		enum state s;
		uint32_t field;
		uint64_t clear, set;
		const char *rule;
	} cases[] = {
		{ ST_LINUX, SDM_PIN_CONTROLS, SDM_PIN_EXT_INT_EXITING, 0, "needs \"external-interrupt exiting\"" },
		{ ST_LINUX, SDM_PIN_CONTROLS, 0x16, 0, "bit 1 (reserved) must be 1" },
		{ ST_LINUX, SDM_EXIT_CONTROLS, SDM_EXIT_ACK_INTR_ON_EXIT, 0, "\"acknowledge interrupt on exit\"" },
		{ ST_LINUX, SDM_POSTED_INTR_DESC_ADDR, 0, 0x20, "not 64-byte aligned" },
		{ ST_LINUX, SDM_POSTED_INTR_NV, 0, 0x100, "bits 15:8 must be 0" },
		{ ST_LINUX, SDM_VPID, 0xffff, 0, "VPID 0000H" },
		{ ST_LINUX, SDM_MSR_BITMAP, 0, 0x800, "MSR-bitmap address" },
		{ ST_LINUX, SDM_CR3_TARGET_COUNT, 0, 5, "CR3-target count 5" },
		{ ST_LINUX, SDM_EPT_POINTER, 7, 1, "memory type 1" },
		{ ST_LINUX, SDM_ENTRY_CONTROLS, 0, SDM_ENTRY_TO_SMM, "entry to SMM" },
		{ ST_LINUX, SDM_HOST_CS_SEL, 0, 3, "HOST_CS_SEL 0xb: RPL and TI must be 0" },
		{ ST_LINUX, SDM_HOST_TR_SEL, 0xffff, 0, "HOST_TR_SEL must not be 0000H" },
		{ ST_LINUX, SDM_HOST_CR4, X86_CR4_PAE, 0, "PAE must be 1" },
		{ ST_LINUX, SDM_HOST_CR4, X86_CR4_VMXE, 0, "HOST_CR4" },
		{ ST_LINUX, SDM_HOST_EFER, BIT(10), 0, "LMA and LME must each equal" },
		{ ST_LINUX, SDM_HOST_RIP, 0, 0x0000800000000000ull, "HOST_RIP" },
		{ ST_LINUX, SDM_HOST_GS_BASE, 0, 0x0000800000000000ull, "HOST_GS_BASE" },
		{ ST_LINUX, SDM_GUEST_EFER, BIT(10), 0, "LMA must equal \"IA-32e mode guest\"" },
		{ ST_LINUX, SDM_GUEST_CR4, X86_CR4_PAE, 0, "needs CR0.PG and CR4.PAE" },
		{ ST_LINUX, SDM_GUEST_CR0, X86_CR0_NE, 0, "GUEST_CR0" },
		{ ST_LINUX, SDM_GUEST_CS_AR, 0, BIT(14), "L and D/B both 1" },
		{ ST_LINUX, SDM_GUEST_TR_AR, 0xf, 3, "TR type 3" },
		{ ST_LINUX, SDM_GUEST_TR_SEL, 0, 4, "TI must be 0" },
		{ ST_LINUX, SDM_GUEST_DS_AR, BIT(4), 0, "DS access rights 0xc083: S must be 1" },
		{ ST_LINUX, SDM_GUEST_SS_AR, BIT(15), 0, "SS limit 0xffffffff inconsistent with G" },
		{ ST_LINUX, SDM_GUEST_GDTR_LIMIT, 0, 0x10000, "bits 31:16 must be 0" },
		{ ST_LINUX, SDM_GUEST_RIP, 0, 0x0000800000000000ull, "not canonical (64-bit code)" },
		{ ST_LINUX, SDM_GUEST_RFLAGS, 0, BIT(17), "virtual-8086 CS must have base = selector << 4" },
		{ ST_LINUX, SDM_GUEST_DR7, 0, 1ull << 32, "GUEST_DR7" },
		{ ST_LINUX, SDM_GUEST_PAT, 0xff, 2, "GUEST_PAT 0x7040600070402 has an invalid memory type" },
		{ ST_LINUX, SDM_HOST_PAT, 0xff00, 0x300, "HOST_PAT" },
		{ ST_LINUX, SDM_LINK_POINTER, ~0ull, 0, "VMCS link pointer 0x0" },
		{ ST_LINUX, SDM_GUEST_ACTIVITY_STATE, 0, 4, "activity state 4" },
		{ ST_LINUX, SDM_GUEST_INTERRUPTIBILITY, 0, 1, "blocking by STI needs RFLAGS.IF 1" },
		{ ST_WAIT_SIPI, SDM_GUEST_INTERRUPTIBILITY, 0, 2, "activity state 3 with blocking by STI or MOV SS" },
		{ ST_WAIT_SIPI, SDM_GUEST_CS_AR, 0xf, 1, "CS type 1" },
		{ ST_WAIT_SIPI, SDM_GUEST_SS_AR, 0, 3 << 5, "non-conforming CS: DPL 0 must equal SS.DPL 3" },
		{ ST_WAIT_SIPI, SDM_GUEST_CR0, 0, X86_CR0_PG, "PG needs PE" },
		{ ST_WAIT_SIPI, SDM_GUEST_LDTR_AR, 0xf, 3, "LDTR type 3" },
		{ ST_AFTER_SIPI, SDM_GUEST_RIP, 0, 1ull << 32, "bits 63:32 must be 0 outside 64-bit mode" },
		{ ST_AFTER_SIPI, SDM_GUEST_CS_BASE, 0, 1ull << 32, "CS base 0x10009a000" },
		{ ST_AFTER_SIPI, SDM_GUEST_EFER, 0, BIT(10), "LMA must equal" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char why[512] = "";
		int n = broken(SKX, NULL, cases[i].s, cases[i].field, cases[i].clear, cases[i].set, why, sizeof why);
		if (!n || !strstr(why, cases[i].rule))
			printf("    case %zu (%s, field 0x%04x): %d violation(s), first: %s\n", i, state_names[cases[i].s],
			       cases[i].field, n, why);
		CHECK(n > 0);
		CHECK_CONTAINS(why, cases[i].rule);
	}
}

TEST(vmcs_model_checks_fields_and_activation)
{
	char why[512];
	struct vmx_raw_caps raw;
	struct env e;

	/* TERTIARY_CONTROLS written on a CPU without tertiary controls. */
	CHECK(fixture_load_profile(SKX, &raw));
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, NULL), 0);
	write_vmcs(&e, ST_LINUX);
	vmcs_write(SDM_TERTIARY_CONTROLS, 0);
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 1);
	CHECK_CONTAINS(why, "VMWRITE to TERTIARY_CONTROLS: the field exists only with the 1-setting of \"activate tertiary");

	/* A field the checks need, never written. */
	write_vmcs(&e, ST_LINUX);
	vmcs_record_clear();
	vmcs_write_controls(&e.cfg, &e.v);
	CHECK(vmentry_check(&e.c, why, sizeof why) > 0);
	CHECK_CONTAINS(why, "HOST_CR0 (0x6c00) is checked by VM entry but was never written");

	/* Secondary controls are not checked while "activate secondary" is 0. */
	CHECK_EQ(env_build(&e, &raw, IRQ_PARTITION, NULL), 0);
	write_vmcs(&e, ST_LINUX);
	vmcs_write(SDM_PROC2_CONTROLS, 0xffffffff);
	CHECK(vmentry_check(&e.c, why, sizeof why) > 0);
	CHECK_CONTAINS(why, "proc2 controls 0xffffffff: bit");
	vmcs_write(SDM_PROC_CONTROLS, vmcs_record_get(SDM_PROC_CONTROLS) & ~SDM_PROC_ACTIVATE_SECONDARY);
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 0);   /* 64-bit guest: PE and PG set, no EPT needed */

	/* IPIv without posted interrupts, and with a misaligned PID-pointer table. */
	struct pid_set s;
	pid_set_init(&s);
	CHECK(fixture_spr_ipiv(&raw));
	struct vmcs_resources res = resources((paddr_t)(uintptr_t)s.table, LAST_ID);
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, &res), 0);
	write_vmcs(&e, ST_LINUX);
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 0);
	vmcs_write(SDM_PID_POINTER_TABLE, (uintptr_t)s.table + 4);
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 1);
	CHECK_CONTAINS(why, "PID-pointer table address");
	write_vmcs(&e, ST_LINUX);
	vmcs_write(SDM_PIN_CONTROLS, vmcs_record_get(SDM_PIN_CONTROLS) & ~SDM_PIN_POSTED_INTR);
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 1);
	CHECK_CONTAINS(why, "[hv] IPI virtualization needs");
	write_vmcs(&e, ST_LINUX);
	vmcs_write(SDM_PROC_CONTROLS, vmcs_record_get(SDM_PROC_CONTROLS) & ~SDM_PROC_USE_TPR_SHADOW);
	CHECK(vmentry_check(&e.c, why, sizeof why) > 0);
	CHECK_CONTAINS(why, "without \"use TPR shadow\"");
	pid_set_free(&s);

	/* Wait-for-SIPI on a CPU whose IA32_VMX_MISC lacks it (model only: the
	 * builder refuses such a CPU, see above). */
	CHECK(fixture_load_profile(SKX, &raw));
	CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, NULL), 0);
	write_vmcs(&e, ST_WAIT_SIPI);
	e.c.misc &= ~SDM_MISC_ACT_WAIT_SIPI;
	CHECK_EQ(vmentry_check(&e.c, why, sizeof why), 1);
	CHECK_CONTAINS(why, "wait-for-SIPI not supported by IA32_VMX_MISC bit 8");
}

/* The hypervisor's time kept out of the guest's counters (issue 45 item
 * 3). From the SDM (Vol. 3C, "VM-Exit Controls", "VM-Entry Controls",
 * Appendix B): exit control 12 "load IA32_PERF_GLOBAL_CTRL", exit control
 * 30 "save IA32_PERF_GLOBAL_CTL", entry control 13 "load
 * IA32_PERF_GLOBAL_CTRL"; fields 2808H (guest) and 2C04H (host). With all
 * three allowed and the MSR present (CPUID.0AH version 2), the guest's
 * value is loaded at entry and saved at exit and the host's is 0; with one
 * missing, none is set (the guest's writes would be lost). */
#define PERF_EXIT_LOAD   (1u << 12)
#define PERF_EXIT_SAVE   (1u << 30)
#define PERF_ENTRY_LOAD  (1u << 13)
#define PERF_GUEST_FIELD 0x2808u
#define PERF_HOST_FIELD  0x2c04u
TEST(vmcs_perf_global_ctrl_hidden_where_allowed)
{
	for (int k = 0; k < 3; k++) {   /* 0: all allowed; 1: no save control; 2: no IA32_PERF_GLOBAL_CTRL */
		struct vmx_raw_caps raw;
		struct env e;
		CHECK(fixture_spr_ipiv(&raw));
		uint64_t exit1 = (uint64_t)(PERF_EXIT_LOAD | (k == 1 ? 0 : PERF_EXIT_SAVE)) << 32;
		raw.exit |= exit1, raw.true_exit |= exit1;
		raw.exit &= ~((uint64_t)(k == 1 ? PERF_EXIT_SAVE : 0) << 32);
		raw.true_exit &= ~((uint64_t)(k == 1 ? PERF_EXIT_SAVE : 0) << 32);
		raw.entry |= (uint64_t)PERF_ENTRY_LOAD << 32, raw.true_entry |= (uint64_t)PERF_ENTRY_LOAD << 32;
		struct vmcs_resources res = resources(0x203000, 3);
		res.pmu_global = k != 2;
		CHECK_EQ(env_build(&e, &raw, IRQ_VIRTUAL, &res), 0);
		e.v.perf_global_ctrl = 0x70000000f;
		write_vmcs(&e, ST_LINUX);
		uint64_t ex = vmcs_record_get(SDM_EXIT_CONTROLS), en = vmcs_record_get(SDM_ENTRY_CONTROLS);
		if (k == 0) {
			CHECK(e.cfg.perf_hide);
			CHECK((ex & (PERF_EXIT_LOAD | PERF_EXIT_SAVE)) == (PERF_EXIT_LOAD | PERF_EXIT_SAVE) && (en & PERF_ENTRY_LOAD));
			CHECK_EQ(vmcs_record_get(PERF_GUEST_FIELD), 0x70000000f);
			CHECK_EQ(vmcs_record_get(PERF_HOST_FIELD), 0);
			CHECK_CONTAINS(e.cfg.perf_note, "hidden");
		} else {
			CHECK(!e.cfg.perf_hide);
			CHECK(!(ex & (PERF_EXIT_LOAD | PERF_EXIT_SAVE)) && !(en & PERF_ENTRY_LOAD));
			CHECK_CONTAINS(e.cfg.perf_note, k == 1 ? "lacks a VMX control" : "version below 2");
		}
		CHECK_EQ(enters(&e, "spr with the perf controls", IRQ_VIRTUAL, ST_LINUX), 0);
	}
}
