/* Host tests for the hand-over in iommu/vtd.c: vtd_probe and vtd_enable
 * drive the register model written from the VT-d specification
 * (vtd_regs_model.c) from every state the firmware may leave a unit in:
 * translation, interrupt remapping, queued invalidation and the PMRs each on
 * or off, with the invalidations through the queue or the registers. */
#include "test.h"
#include "hw_fake.h"
#include "vtd_regs_model.h"
#include "../../iommu/vtd.h"
#include "../../lib/memmap.h"

#define HEAP_SIZE MIB(1)
#define NEW_ROOT 0x12345000ull
#define FW_ROOT  0x0badc000ull

/* CAP: SAGAW 39/48-bit, MGAW 48, FRO 0x40 (0x400), one fault register,
 * PLMR and PHMR. ECAP: C, QI, IR, EIM, IRO 0x50 (0x500). */
static const uint64_t cap = (6ull << 8) | (47ull << 16) | (0x40ull << 24) | (1ull << 5) | (1ull << 6);
static const uint64_t ecap = 1 | (1 << 1) | (1 << 3) | (1 << 4) | (0x50ull << 8);

static void expect(bool ok, const char *state, const char *what, const char *detail)
{
	if (!ok) {
		char m[768];
		snprintf(m, sizeof m, "%s: %s%s%s", state, what, detail ? ": " : "", detail ? detail : "");
		test_fail(__FILE__, __LINE__, m);
	}
}

static void handover(bool te, bool ir, bool qi, bool pmr, bool queued, bool pending)
{
	static struct vtd_regs_model m;
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	hw_tsc = 1;
	vrm_reset(&m, cap, ecap, te, ir, qi, pmr, FW_ROOT);
	if (pending) {
		m.iqt = m.iqh + 0x30;        /* three descriptors not yet read */
		m.fw_queue_draining = true;
	}
	vrm_attach(&m);
	char state[128], err[256] = "";
	snprintf(state, sizeof state, "firmware TE=%d IR=%d QI=%d%s PMR=%d, %s invalidation", te, ir, qi,
		 pending ? " (3 descriptors unread)" : "", pmr, queued ? "queued" : "register");
	struct vtd_unit u;
	memset(&u, 0, sizeof u);
	expect(vtd_probe(&u, VRM_BASE, err, sizeof err) == 0, state, "probe", err);
	int rc = vtd_enable(&u, NEW_ROOT, queued, err, sizeof err);
	expect(rc == 0, state, "vtd_enable failed", err);
	expect(m.violations == 0, state, "specification rule broken", m.violation);
	expect(m.root == NEW_ROOT, state, "the new root table is not the one latched", NULL);
	expect(m.srtp_step && m.cc_step > m.srtp_step && m.iotlb_step > m.cc_step, state,
	       "SRTP, then the context cache, then the IOTLB", NULL);
	expect(m.gsts & (1u << 31), state, "TES is 0 at the end", NULL);
	if (!te)
		expect(m.te_set_step > m.iotlb_step, state, "TE set before the new root table and the invalidations", NULL);
	else
		expect(m.te_set_step == 0, state, "TE set again though it never went off", NULL);
	expect(!(m.pmen & 1), state, "PMRs still on (PMEN.PRS 1) after the hand-over", NULL);
	if (pmr)
		expect(m.pmr_off_step > m.iotlb_step, state, "PMRs off before translation through the new tables", NULL);
	expect(!(m.gsts & (1u << 25)), state, "interrupt remapping the firmware left on is still on", NULL);
	if (ir && qi && m.qie_off_step)
		expect(m.ire_off_step && m.ire_off_step < m.qie_off_step, state, "IRE off before QIE off", NULL);
	expect(!!(m.gsts & (1u << 26)) == queued, state, "QIES at the end", NULL);
	page_alloc_init(0, 0);
	free(heap);
}

/* Every firmware start state, both invalidation interfaces; the queue left
 * on also with descriptors the unit has not read yet. */
TEST(vtd_handover_every_firmware_state)
{
	for (unsigned s = 0; s < 64; s++)
		if (!(s & 32) || (s & 4))
			handover(s & 1, s & 2, s & 4, s & 8, s & 16, s & 32);
}

/* The model itself catches the orders the hand-over must avoid. */
TEST(vtd_handover_model_catches_bad_orders)
{
	static struct vtd_regs_model m;
	uint64_t te = 1u << 31, qie = 1u << 26, ire = 1u << 25;
	vrm_reset(&m, cap, ecap, true, true, true, true, FW_ROOT);
	vrm_attach(&m);
	vtd_mmio_write(VRM_BASE + 0x18, 4, qie | ire);                   /* TE off */
	CHECK_EQ(m.violations, 1);
	CHECK_CONTAINS(m.violation, "TES reads 0");
	vrm_reset(&m, cap, ecap, true, true, true, true, FW_ROOT);
	vtd_mmio_write(VRM_BASE + 0x18, 4, te | ire);                    /* QIE off under IRE */
	CHECK_CONTAINS(m.violation, "QIE cleared while IRES is 1");
	vrm_reset(&m, cap, ecap, false, false, false, true, FW_ROOT);
	vtd_mmio_write(VRM_BASE + 0x64, 4, 0);                            /* PMRs off, TE off */
	CHECK_CONTAINS(m.violation, "PMRs turned off while TES is 0");
	vrm_reset(&m, cap, ecap, false, false, false, false, FW_ROOT);
	vtd_mmio_write(VRM_BASE + 0x18, 4, te);                           /* TE with no root */
	CHECK_CONTAINS(m.violation, "no root table latched");
	vrm_reset(&m, cap, ecap, false, false, false, false, FW_ROOT);
	vtd_mmio_write(VRM_BASE + 0x18, 4, te | (1u << 30));              /* two commands */
	CHECK_CONTAINS(m.violation, "several commands");
}

/* What the unit offers and what the firmware left, printed per unit. */
TEST(vtd_probe_prints_modes_and_firmware_state)
{
	static struct vtd_regs_model m;
	uint64_t smts = 1ull << 43, slts = 1ull << 46;
	vrm_reset(&m, cap, ecap | smts | slts, true, true, true, true, FW_ROOT);
	vrm_attach(&m);
	struct vtd_unit u;
	char err[256] = "";
	test_log_clear();
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_CONTAINS(test_log(), "version 1.0");
	CHECK_CONTAINS(test_log(), "legacy (RTADDR.TTM 00b): used");
	CHECK_CONTAINS(test_log(), "scalable (ECAP.SMTS): offered, SLTS 1, FLTS 0");
	CHECK_CONTAINS(test_log(), "firmware left: TE on (TTM 00b), IR on, QI on, PMRs on");
	vrm_reset(&m, cap, ecap, false, false, false, false, FW_ROOT);
	test_log_clear();
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_CONTAINS(test_log(), "scalable (ECAP.SMTS): not offered");
	CHECK_CONTAINS(test_log(), "firmware left: TE off, IR off, QI off, PMRs off");
}

/* Translation left on in scalable mode (RTADDR.TTM 01b): legacy tables go
 * in only with translation off, a window: refused by name. */
TEST(vtd_probe_refuses_scalable_mode_left_on)
{
	static struct vtd_regs_model m;
	vrm_reset(&m, cap, ecap | (1ull << 43) | (1ull << 46), true, false, true, false, FW_ROOT | (1u << 10));
	vrm_attach(&m);
	struct vtd_unit u;
	char err[256] = "";
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), -1);
	CHECK_CONTAINS(err, "no mode the hypervisor can drive");
	CHECK_CONTAINS(err, "RTADDR.TTM 01b");
	CHECK_EQ(m.violations, 0);
	CHECK_EQ(m.gsts & (1u << 31), 1u << 31);                          /* left as it was */
}

/* Firmware that remapped interrupts may have let compatibility-format
 * interrupts through (GSTS.CFIS, bit 23, persistent like IRES). The
 * hypervisor's interrupt remapping must block them ("Global Command
 * Register", CFI: with CFI 0 and IRE 1, compatibility-format requests are
 * blocked); every GCMD write carries the status, so CFI left set would stay
 * set unless it is cleared by a command of its own. */
TEST(vtd_enable_ir_clears_cfi_the_firmware_left)
{
	static struct vtd_regs_model m;
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	hw_tsc = 1;
	vrm_reset(&m, cap, ecap, true, true, true, false, FW_ROOT);
	m.gsts |= 1u << 23;                                               /* CFIS */
	vrm_attach(&m);
	struct vtd_unit u;
	char err[256] = "";
	memset(&u, 0, sizeof u);
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_EQ(vtd_enable(&u, NEW_ROOT, true, err, sizeof err), 0);
	CHECK_EQ(vtd_enable_ir(&u, 0x7d000000, 15, true, err, sizeof err), 0);
	CHECK_EQ(m.violations, 0);
	CHECK_EQ(m.gsts & (1u << 25), 1u << 25);                          /* IRES */
	CHECK_EQ(m.gsts & (1u << 23), 0u);                                /* CFIS */
	page_alloc_init(0, 0);
	free(heap);
}

/* A firmware whose queue stopped on a descriptor the unit refused
 * ("Invalidation Queue Error": FSTS.IQE, IQH on the descriptor, and the
 * unit fetches nothing more until IQE is cleared), with faults recorded
 * (PPF, PFO) and the fault event unmasked to its own vector. IQH never
 * reaches IQT by waiting: the hand-over abandons the firmware's descriptors
 * (IQT := IQH, then IQE cleared), masks the fault event before anything
 * else, and clears the faults; the probe says what it found. */
TEST(vtd_enable_abandons_a_stopped_firmware_queue)
{
	static struct vtd_regs_model m;
	uint8_t *heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	hw_tsc = 1;
	vrm_reset(&m, cap, ecap, true, true, true, true, FW_ROOT);
	m.iqt = m.iqh + 0x30;
	m.fsts |= (1u << 4) | (1u << 1) | 1u;                            /* IQE PPF PFO */
	m.frcd[0][1] |= 1ull << 63;                                      /* F */
	m.fectl = 0;                                                     /* unmasked */
	m.refuse_types = 1u << 3;                                        /* a Device-TLB descriptor at IQH */
	vrm_attach(&m);
	struct vtd_unit u;
	char err[256] = "";
	memset(&u, 0, sizeof u);
	test_log_clear();
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_CONTAINS(test_log(), "faults recorded (PPF)");
	CHECK_CONTAINS(test_log(), "fault overflow (PFO)");
	CHECK_CONTAINS(test_log(), "queue stopped (IQE)");
	CHECK_CONTAINS(test_log(), "fault event unmasked");
	CHECK_CONTAINS(test_log(), "IQH 0x40 IQT 0x70: its descriptors from IQH on abandoned");
	int rc = vtd_enable(&u, NEW_ROOT, true, err, sizeof err);
	if (rc)
		test_fail(__FILE__, __LINE__, err);
	CHECK_EQ(m.violations, 0);
	CHECK_EQ(m.fsts & ((1u << 4) | 1u), 0u);                         /* IQE and PFO cleared */
	CHECK_EQ(m.frcd[0][1] >> 63, 0u);
	CHECK_EQ(m.fectl >> 31, 1u);                                     /* masked */
	CHECK(m.fectl_mask_step && m.fectl_mask_step < m.ire_off_step);  /* before anything is changed */
	CHECK_EQ(m.iqe_seen, 0u);                                        /* nothing of the firmware's run */
	CHECK_EQ(m.root, NEW_ROOT);
	page_alloc_init(0, 0);
	free(heap);
}
