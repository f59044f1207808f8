/* The virtual x2APIC page (apic/vapic.c) against layouts written out here
 * from the SDM: the posted-interrupt descriptor as raw bytes (sdm_pid.h,
 * Vol. 3C "Posted-Interrupt Descriptor": PIR bits 255:0 at byte 0, ON bit
 * 256), the virtual-APIC page (Vol. 3C "Virtual-APIC Page"; Vol. 3A "Local
 * APIC Register Address Map"): TPR at 0x80, IRR at 0x200 + 0x10 * (v / 32),
 * bit v % 32; x2APIC MSR 0x800 + (offset >> 4). */
#include "test.h"
#include "sdm_pid.h"
#include "../../apic/vapic.h"
#include "../../apic/swapic.h"

#define V_TPR 0x080
#define V_PPR 0x0a0
#define V_ISR 0x100
#define V_IRR 0x200
#define MSR_X2APIC_TPR 0x808

static uint8_t page[4096] __attribute__((aligned(4096)));

static uint32_t rd(uint32_t off) { uint32_t v; memcpy(&v, page + off, 4); return v; }
static void wr(uint32_t off, uint32_t v) { memcpy(page + off, &v, 4); }

/* A descriptor between two 64-byte canaries; NV 0xf2, NDST 0x1234. */
static uint8_t *desc_buf;
static uint8_t *fresh_desc(void)
{
	if (!desc_buf)
		desc_buf = aligned_alloc(64, 3 * 64);
	memset(desc_buf, 0xcc, 3 * 64);
	sdm_pid_init(desc_buf + 64, 0xf2, 0x1234);
	return desc_buf + 64;
}
static bool canaries_ok(void)
{
	for (int i = 0; i < 64; i++)
		if (desc_buf[i] != 0xcc || desc_buf[128 + i] != 0xcc)
			return false;
	return true;
}
static bool pir_empty(const uint8_t *d)
{
	for (int i = 0; i < 32; i++)
		if (d[i])
			return false;
	return true;
}
/* The page holds exactly the IRR bits in want[8] (one word per 32 vectors) and nothing else. */
static bool page_is_irr(const uint32_t want[8])
{
	for (uint32_t off = 0; off < 4096; off += 4) {
		uint32_t w = off >= V_IRR && off < V_IRR + 0x80 && (off - V_IRR) % 0x10 == 0 ? want[(off - V_IRR) / 0x10] : 0;
		if (rd(off) != w)
			return false;
	}
	return true;
}

#define TAKE(d) vapic_take_posted(page, (struct pi_desc *)(void *)(d))

/* Every vector alone: PIR bit v goes to IRR word v / 32 bit v % 32, the
 * return value is v, ON is cleared, PIR is empty, NV/NDST/SN untouched. */
TEST(vapic_take_posted_every_vector)
{
	unsigned bad = 0;
	for (unsigned v = 0; v < 256; v++) {
		uint8_t *d = fresh_desc();
		memset(page, 0, sizeof page);
		sdm_pid_set_pir(d, v);
		d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
		int top = TAKE(d);
		uint32_t want[8] = { 0 };
		want[v / 32] = 1u << (v % 32);
		bool ok = top == (int)v && page_is_irr(want) && pir_empty(d) && !sdm_pid_on(d) && !sdm_pid_sn(d) &&
			  sdm_pid_nv(d) == 0xf2 && sdm_pid_ndst(d) == 0x1234 && canaries_ok();
		if (!ok && bad++ < 6)
			printf("    vector %u: returned %d, IRR word %u = 0x%08x (want 0x%08x), PIR %s, ON %d\n", v, top,
			       v / 32, rd(V_IRR + 0x10 * (v / 32)), want[v / 32], pir_empty(d) ? "empty" : "not empty",
			       sdm_pid_on(d));
		CHECK(ok);
	}
	CHECK_EQ(bad, 0);
}

/* Several vectors at once, across the 32-bit word (31/32, 63/64) and
 * 64-bit PIR word edges and the ends (0, 255): all land, the highest is
 * returned, and IRR bits already set stay set (the move is an OR). */
TEST(vapic_take_posted_word_edges)
{
	static const struct { unsigned n, v[6]; } sets[] = {
		{ 2, { 31, 32 } }, { 2, { 63, 64 } }, { 2, { 0, 255 } }, { 3, { 95, 96, 127 } },
		{ 3, { 128, 191, 192 } }, { 2, { 223, 224 } }, { 1, { 31 } }, { 1, { 32 } }, { 1, { 63 } },
		{ 1, { 64 } }, { 6, { 16, 47, 80, 143, 200, 254 } },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		uint8_t *d = fresh_desc();
		memset(page, 0, sizeof page);
		uint32_t want[8] = { 0 };
		wr(V_IRR + 0x10 * 7, 1u << 3);       /* vector 227, already requested */
		want[7] = 1u << 3;
		unsigned hi = 0;
		for (unsigned k = 0; k < sets[i].n; k++) {
			unsigned v = sets[i].v[k];
			sdm_pid_set_pir(d, v);
			want[v / 32] |= 1u << (v % 32);
			hi = v > hi ? v : hi;
		}
		d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
		int top = TAKE(d);
		bool ok = top == (int)hi && page_is_irr(want) && pir_empty(d) && !sdm_pid_on(d) && canaries_ok();
		if (!ok) {
			printf("    set %zu: returned %d (want %u), IRR", i, top, hi);
			for (int w = 0; w < 8; w++)
				printf(" %08x/%08x", rd(V_IRR + 0x10 * w), want[w]);
			printf("\n");
		}
		CHECK(ok);
	}
	/* All 256 at once. */
	uint8_t *d = fresh_desc();
	memset(page, 0, sizeof page);
	memset(d, 0xff, 32);
	d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
	CHECK_EQ(TAKE(d), 255);
	uint32_t all[8];
	for (int w = 0; w < 8; w++)
		all[w] = ~0u;
	CHECK(page_is_irr(all));
	CHECK(pir_empty(d) && !sdm_pid_on(d) && canaries_ok());
}

/* ON is the notification's mark: ON set with an empty PIR is taken (-1,
 * ON cleared); ON clear means no notification is outstanding (SN set held
 * it back, apic/pi.c): nothing is moved, PIR and SN stay for whoever
 * clears SN. SN is never changed here. */
TEST(vapic_take_posted_on_and_sn)
{
	uint8_t *d = fresh_desc();
	memset(page, 0, sizeof page);
	uint32_t none[8] = { 0 };
	d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
	CHECK_EQ(TAKE(d), -1);
	CHECK(!sdm_pid_on(d) && page_is_irr(none));
	CHECK_EQ(TAKE(d), -1);                                  /* nothing the second time either */

	d = fresh_desc();
	sdm_pid_set_pir(d, 0x41);
	d[SDM_PID_CTRL_BYTE] |= SDM_PID_SN;                     /* posted with SN: no ON */
	CHECK_EQ(TAKE(d), -1);
	CHECK(sdm_pid_pir(d, 0x41) && sdm_pid_sn(d) && !sdm_pid_on(d));
	CHECK(page_is_irr(none));

	d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;                     /* ON and SN both set */
	CHECK_EQ(TAKE(d), 0x41);
	CHECK(pir_empty(d) && !sdm_pid_on(d) && sdm_pid_sn(d));
	CHECK_EQ(rd(V_IRR + 0x10 * 2), 1u << 1);
	CHECK(canaries_ok());
}

/* The software x2APIC's TPR write (eoi=pv: every x2APIC WRMSR exits). SDM
 * Vol. 3A, "Local APIC Register Address Map Supported by x2APIC": MSR 808H,
 * TPR, read/write, "Bits 31:8 are reserved"; "Reserved Bit Checking":
 * non-zero writes to reserved bits raise #GP; the upper 32 bits of every
 * x2APIC MSR but the ICR are reserved. Accepted: bits 7:0, stored at 0x80
 * (the caller then recomputes PPR). */
TEST(vapic_tpr_write)
{
	memset(page, 0, sizeof page);
	static const uint32_t good[] = { 0x5a, 0x00, 0xff, 0x10, 0x35 };
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		int r = vapic_write(page, MSR_X2APIC_TPR, good[i]);
		if (r)
			printf("    WRMSR 0x808 <- 0x%x: %d (#GP), the SDM accepts it\n", good[i], r);
		CHECK_EQ(r, 0);
		CHECK_EQ(rd(V_TPR), good[i]);
	}
	/* Each reserved bit alone, and the upper half: #GP, TPR unchanged. */
	unsigned faults = 0;
	for (unsigned bit = 8; bit < 64; bit++) {
		int r = vapic_write(page, MSR_X2APIC_TPR, 0x22 | 1ull << bit);
		if (r != -1)
			printf("    WRMSR 0x808 <- 0x%llx (reserved bit %u): %d, the SDM gives #GP\n",
			       (unsigned long long)(0x22 | 1ull << bit), bit, r);
		faults += r == -1;
		CHECK_EQ(rd(V_TPR), 0x35);
	}
	CHECK_EQ(faults, 56);
	CHECK_EQ(vapic_write(page, MSR_X2APIC_TPR, 0xffffffffull), -1);
	CHECK_EQ(rd(V_TPR), 0x35);
	/* Nothing else in the page changes. */
	for (uint32_t off = 0; off < 4096; off += 4)
		if (off != V_TPR)
			CHECK_EQ(rd(off), 0);
	CHECK(vapic_readable(MSR_X2APIC_TPR));

	/* What the caller does next (vmx/virq.c, eoi=pv): PPR from the new TPR
	 * and the highest in-service vector ("Processor Priority Register"). */
	wr(V_ISR + 0x10 * 1, 1u << (0x3a - 32));                  /* 0x3a in service */
	CHECK_EQ(vapic_write(page, MSR_X2APIC_TPR, 0x20), 0);
	CHECK_EQ(swapic_update_ppr(page), 0x30);
	CHECK_EQ(rd(V_PPR), 0x30);
	CHECK_EQ(vapic_write(page, MSR_X2APIC_TPR, 0x47), 0);
	CHECK_EQ(swapic_update_ppr(page), 0x47);
	CHECK_EQ(rd(V_PPR), 0x47);
}

/* A software disable (SDM Vol. 3A, "Local APIC State After It Has Been
 * Software Disabled": "The mask bits for all the LVT entries are set"):
 * SVR (MSR 80FH) written with bit 8 clear masks (bit 16) each LVT the
 * guest left unmasked, up to the last one, LVT Error at 0x370, and keeps
 * their vectors. Offsets from "Local APIC Register Address Map": LVT
 * Timer 0x320, Thermal 0x330, PMC 0x340, LINT0 0x350, LINT1 0x360,
 * Error 0x370. */
/* SDM Vol. 3A, "Local APIC State After It Has Been Software Disabled":
 * every LVT entry's mask bit is set, LVT CMCI (0x2F0) included. */
TEST(vapic_svr_disable_masks_every_lvt_to_lvt_error)
{
	static const uint32_t lvt[] = { 0x2f0, 0x320, 0x330, 0x340, 0x350, 0x360, 0x370 };
	memset(page, 0, sizeof page);
	CHECK_EQ(vapic_write(page, 0x80f, 0x1ff), 0);            /* enabled, spurious vector 0xff */
	for (size_t i = 0; i < ARRAY_SIZE(lvt); i++)
		wr(lvt[i], 0xe0 + (uint32_t)i);                      /* unmasked, fixed */
	CHECK_EQ(vapic_write(page, 0x80f, 0x0ff), 0);            /* software disable */
	for (size_t i = 0; i < ARRAY_SIZE(lvt); i++) {
		if (rd(lvt[i]) != ((0xe0 + (uint32_t)i) | 1u << 16))
			printf("    LVT at 0x%x reads 0x%x after the software disable\n", lvt[i], rd(lvt[i]));
		CHECK_EQ(rd(lvt[i]), (0xe0 + (uint32_t)i) | 1u << 16);
	}
}

/* RDMSR of the ISR, TMR and IRR (SDM Vol. 3A, "Local APIC Register Address
 * Map Supported by x2APIC"): MSRs 810H-817H ISR bits 31:0 .. 255:224,
 * 818H-81FH TMR, 820H-827H IRR, read-only; 80EH (no DFR in x2APIC mode)
 * is reserved. */
TEST(vapic_isr_tmr_irr_readable_from_the_first_word)
{
	CHECK(!vapic_readable(0x80e));
	for (uint32_t msr = 0x810; msr <= 0x827; msr++) {
		if (!vapic_readable(msr))
			printf("    RDMSR 0x%x refused, the SDM lists it readable\n", msr);
		CHECK(vapic_readable(msr));
	}
	CHECK(vapic_readable(0x828));                            /* ESR, next */
}

/* The LVT Performance Counter Register (SDM Vol. 3A, "Local Vector Table"):
 * vector 7:0, delivery mode 10:8 (000 fixed, 010 SMI, 100 NMI, 111
 * ExtINT, 101 INIT reserved for it), delivery status 12 (read-only), mask
 * 16; "When a performance-monitoring counters interrupt is generated, the
 * mask bit for its LVT entry is set". The physical entry carries out a
 * guest's NMI entry with its mask bit and nothing else (no vector: NMI
 * ignores it); any other mode leaves it masked, NMI, and is refused. */
TEST(vapic_lvtpc_physical_carries_nmi_and_its_mask)
{
	const uint32_t NMI = 4u << 8, MASK = 1u << 16;
	bool refused = true;
	CHECK_EQ(vapic_lvtpc_physical(NMI, &refused), NMI);          /* Linux's perf: APIC_DM_NMI, unmasked */
	CHECK(!refused);
	CHECK_EQ(vapic_lvtpc_physical(NMI | MASK, &refused), NMI | MASK);   /* masked, as after a PMI */
	CHECK(!refused);
	CHECK_EQ(vapic_lvtpc_physical(NMI | 0xfe | 1u << 12, &refused), NMI);   /* vector, status dropped */
	CHECK(!refused);
	static const uint32_t others[] = { 0u << 8, 2u << 8, 7u << 8, 5u << 8 };
	for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
		refused = false;
		uint32_t p = vapic_lvtpc_physical(others[i] | 0xee, &refused);
		if (p != (NMI | MASK) || !refused)
			printf("    guest LVTPC mode %u gives physical 0x%x refused=%d\n", others[i] >> 8, p, refused);
		CHECK_EQ(p, NMI | MASK);
		CHECK(refused);
		p = vapic_lvtpc_physical(others[i] | MASK, &refused);   /* masked: off, not refused */
		CHECK_EQ(p, NMI | MASK);
		CHECK(!refused);
	}
}
