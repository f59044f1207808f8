/* The software x2APIC (apic/swapic.c) against a model written here from the
 * SDM (Vol. 3A, "Interrupt, Task, and Processor Priority", "Interrupt
 * Acceptance for Fixed Interrupts", "Signaling Interrupt Servicing
 * Completion") and KVM's documented PV EOI (Documentation/virt/kvm/x86/
 * msr.rst, MSR_KVM_PV_EOI_EN: bit 0 of the guest's word; 1 = the guest may
 * clear it instead of writing EOI). Page offsets written out: TPR 0x80,
 * PPR 0xA0, ISR 0x100 + 0x10 * (v / 32), IRR 0x200 + 0x10 * (v / 32). */
#include "test.h"
#include "../../apic/swapic.h"

#define M_TPR 0x80
#define M_PPR 0xa0
#define M_ISR 0x100
#define M_IRR 0x200

static uint8_t page[4096] __attribute__((aligned(4096)));

static uint32_t rd(uint32_t off) { uint32_t v; memcpy(&v, page + off, 4); return v; }
static void wr(uint32_t off, uint32_t v) { memcpy(page + off, &v, 4); }
static bool m_bit(uint32_t base, unsigned v) { return rd(base + 0x10 * (v / 32)) >> (v % 32) & 1; }

/* The model: a 256-entry scan from the top, priority classes of 16. */
static int m_top(uint32_t base)
{
	for (int v = 255; v >= 0; v--)
		if (m_bit(base, (unsigned)v))
			return v;
	return -1;
}
static uint32_t m_ppr(void)
{
	uint32_t tpr = rd(M_TPR) & 0xff;
	int isrv = m_top(M_ISR);
	uint32_t isr_class = isrv < 0 ? 0 : ((uint32_t)isrv >> 4) << 4;
	return (tpr >> 4) >= (isr_class >> 4) ? tpr : isr_class;
}
static int m_deliverable(void)
{
	int v = m_top(M_IRR);
	return v >= 0 && ((unsigned)v >> 4) > (m_ppr() >> 4) ? v : -1;
}

TEST(swapic_priority_and_nesting)
{
	memset(page, 0, sizeof page);
	CHECK_EQ(swapic_update_ppr(page), 0);
	CHECK_EQ(swapic_deliverable(page), -1);
	swapic_request(page, 0x31);
	swapic_request(page, 0xec);
	CHECK(m_bit(M_IRR, 0x31) && m_bit(M_IRR, 0xec));
	CHECK_EQ(swapic_deliverable(page), 0xec);               /* the highest first */
	swapic_accept(page, 0xec);
	CHECK(m_bit(M_ISR, 0xec) && !m_bit(M_IRR, 0xec));
	CHECK_EQ(rd(M_PPR), 0xe0);
	CHECK_EQ(rd(M_PPR), m_ppr());
	CHECK_EQ(swapic_deliverable(page), -1);                 /* 0x31 waits behind 0xec */
	swapic_request(page, 0xfd);                             /* a higher class nests */
	CHECK_EQ(swapic_deliverable(page), 0xfd);
	swapic_accept(page, 0xfd);
	swapic_request(page, 0xe5);                             /* same class as 0xec: waits */
	CHECK_EQ(swapic_deliverable(page), -1);
	CHECK_EQ(swapic_eoi(page), 0xfd);                       /* EOI clears the highest ISR bit */
	CHECK_EQ(rd(M_PPR), 0xe0);
	CHECK_EQ(swapic_deliverable(page), -1);                 /* 0xe5 is not above class 0xe */
	CHECK_EQ(swapic_eoi(page), 0xec);
	CHECK_EQ(swapic_deliverable(page), 0xe5);
	CHECK_EQ(swapic_deliverable(page), m_deliverable());
	swapic_accept(page, 0xe5);
	CHECK_EQ(swapic_eoi(page), 0xe5);
	CHECK_EQ(swapic_deliverable(page), 0x31);
	swapic_accept(page, 0x31);
	CHECK_EQ(swapic_eoi(page), 0x31);
	CHECK_EQ(swapic_eoi(page), -1);                          /* nothing in service */
	CHECK_EQ(rd(M_PPR), 0);
}

TEST(swapic_tpr_blocks_lower_classes)
{
	memset(page, 0, sizeof page);
	wr(M_TPR, 0x45);
	swapic_update_ppr(page);
	CHECK_EQ(rd(M_PPR), 0x45);                               /* TPR above an empty ISR */
	swapic_request(page, 0x41);
	CHECK_EQ(swapic_deliverable(page), -1);                  /* class 4 is not above 4 */
	swapic_request(page, 0x50);
	CHECK_EQ(swapic_deliverable(page), 0x50);
	swapic_accept(page, 0x50);
	CHECK_EQ(rd(M_PPR), 0x50);                               /* ISRV's class is above TPR's */
	swapic_eoi(page);
	CHECK_EQ(rd(M_PPR), 0x45);
	wr(M_TPR, 0);
	swapic_update_ppr(page);
	CHECK_EQ(swapic_deliverable(page), 0x41);
}

/* Random requests, accepts and EOIs, checked step by step against the model. */
TEST(swapic_random_against_model)
{
	memset(page, 0, sizeof page);
	srand(11);
	for (int i = 0; i < 20000; i++) {
		int op = rand() % 4;
		if (op == 0) {
			swapic_request(page, (uint8_t)(16 + rand() % 240));
		} else if (op == 1) {
			int v = swapic_deliverable(page);
			CHECK_EQ(v, m_deliverable());
			if (v >= 0)
				swapic_accept(page, (uint8_t)v);
		} else if (op == 2) {
			int want = m_top(M_ISR);
			CHECK_EQ(swapic_eoi(page), want);
		} else {
			wr(M_TPR, (uint32_t)(rand() % 256) & 0xf0);
			swapic_update_ppr(page);
		}
		CHECK_EQ(rd(M_PPR), m_ppr());
	}
}

/* PV EOI, KVM's protocol: armed only when nothing else is requested and the
 * vector is edge-triggered; the guest's test-and-clear of bit 0 replaces its
 * EOI write; a flag the guest did not take is withdrawn at the next exit. */
TEST(swapic_pv_eoi_protocol)
{
	static volatile uint32_t flag;
	bool armed;
	memset(page, 0, sizeof page);
	flag = 0;
	swapic_request(page, 0xec);
	swapic_accept(page, 0xec);
	armed = swapic_pv_eoi_arm(page, &flag, false);
	CHECK(armed);
	CHECK_EQ(flag & 1, 1);
	/* The guest's EOI: test-and-clear (Linux's kvm_guest_apic_eoi_write). */
	bool skip = flag & 1;
	flag &= ~1u;
	CHECK(skip);
	CHECK_EQ(swapic_pv_eoi_sync(page, &flag, &armed), 0xec);  /* the host does the EOI */
	CHECK(!armed);
	CHECK(!m_bit(M_ISR, 0xec));
	CHECK_EQ(swapic_pv_eoi_sync(page, &flag, &armed), -1);    /* once */

	/* Not armed with another vector requested, nor for a level vector. */
	swapic_request(page, 0x31);
	swapic_request(page, 0xec);
	swapic_accept(page, 0xec);
	CHECK(!swapic_pv_eoi_arm(page, &flag, false));
	CHECK_EQ(flag & 1, 0);
	swapic_accept(page, 0x31);
	CHECK(!swapic_pv_eoi_arm(page, &flag, true));
	swapic_eoi(page);
	swapic_eoi(page);

	/* Armed, then an exit before the guest's EOI: withdrawn, no EOI done. */
	swapic_request(page, 0xef);
	swapic_accept(page, 0xef);
	armed = swapic_pv_eoi_arm(page, &flag, false);
	CHECK_EQ(swapic_pv_eoi_sync(page, &flag, &armed), -1);
	CHECK_EQ(flag & 1, 0);                                     /* the guest will write EOI */
	CHECK(m_bit(M_ISR, 0xef));
	CHECK_EQ(swapic_eoi(page), 0xef);                          /* ... which it does */
	/* Other bits of the word are the guest's: untouched. */
	flag = 0xf0;
	swapic_request(page, 0xe0);
	swapic_accept(page, 0xe0);
	armed = swapic_pv_eoi_arm(page, &flag, false);
	CHECK_EQ(flag, 0xf1);
	CHECK_EQ(swapic_pv_eoi_sync(page, &flag, &armed), -1);
	CHECK_EQ(flag, 0xf0);
	swapic_eoi(page);
}

/* PPR at the class boundary (SDM Vol. 3A, "Processor Priority Register
 * (PPR)": "If TPR[7:4] >= ISRV[7:4], PPR[7:0] = TPR[7:0]; otherwise
 * PPR[7:4] = ISRV[7:4] and PPR[3:0] = 0"), each value written out here:
 * a TPR of the same class as the highest in-service vector keeps its
 * sub-class bits, and its neighbours one class either side. */
TEST(swapic_ppr_tpr_same_class_as_isrv)
{
	static const struct { uint32_t tpr; int isrv; uint32_t ppr; } c[] = {
		{ 0x35, 0x3a, 0x35 },   /* equal class: TPR, low bits kept */
		{ 0x3f, 0x30, 0x3f },
		{ 0x30, 0x3f, 0x30 },
		{ 0x30, 0x30, 0x30 },
		{ 0x3a, 0x3a, 0x3a },
		{ 0x25, 0x3a, 0x30 },   /* TPR a class below: ISRV's class, low bits 0 */
		{ 0x2f, 0x30, 0x30 },
		{ 0x45, 0x3a, 0x45 },   /* a class above: TPR */
		{ 0x40, 0x3f, 0x40 },
		{ 0x0f, 0x10, 0x10 },
		{ 0xf1, 0xff, 0xf1 },
		{ 0xef, 0xf0, 0xf0 },
		{ 0x35, -1, 0x35 },     /* nothing in service */
		{ 0x00, -1, 0x00 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		memset(page, 0, sizeof page);
		wr(M_TPR, c[i].tpr);
		if (c[i].isrv >= 0) {
			wr(M_ISR + 0x10 * ((unsigned)c[i].isrv / 32), 1u << (c[i].isrv % 32));
			if (c[i].isrv > 0x10)   /* a lower vector in service as well changes nothing */
				wr(M_ISR + 0x10 * 0, rd(M_ISR) | 1u << 16);
		}
		uint32_t got = swapic_update_ppr(page);
		if (got != c[i].ppr || rd(M_PPR) != c[i].ppr)
			printf("    TPR 0x%02x, ISRV 0x%02x: PPR 0x%02x (stored 0x%02x), the SDM gives 0x%02x\n", c[i].tpr,
			       c[i].isrv, got, rd(M_PPR), c[i].ppr);
		CHECK_EQ(got, c[i].ppr);
		CHECK_EQ(rd(M_PPR), c[i].ppr);
		CHECK_EQ(rd(M_TPR), c[i].tpr);                     /* TPR is only read */
	}
	/* What the equal class means for delivery: TPR 0x35 with 0x3a in
	 * service holds back class 3 (0x3f) and lets class 4 (0x40) through. */
	memset(page, 0, sizeof page);
	wr(M_TPR, 0x35);
	swapic_request(page, 0x3a);
	swapic_accept(page, 0x3a);
	CHECK_EQ(rd(M_PPR), 0x35);
	swapic_request(page, 0x3f);
	CHECK_EQ(swapic_deliverable(page), -1);
	swapic_request(page, 0x40);
	CHECK_EQ(swapic_deliverable(page), 0x40);
	swapic_accept(page, 0x40);
	CHECK_EQ(rd(M_PPR), 0x40);
	CHECK_EQ(swapic_eoi(page), 0x40);
	CHECK_EQ(rd(M_PPR), 0x35);                                 /* back to TPR, not 0x30 */
}
