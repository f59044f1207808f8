/* Issue 33, items 4 and 5: the invalidation queue of one unit from two
 * submitters at once (the IOAPIC and MSI traps, each under its own lock);
 * a queue error recovered at run time as the VT-d specification has
 * software do it ("Invalidation Queue Error": the unit stops with IQH on
 * the refused descriptor until FSTS.IQE is cleared); an IRTE changed in
 * one 128-bit store, then its index invalidated ("Interrupt Entry Cache
 * Invalidate Descriptor", index-selective). Against the register model of
 * vtd_regs_model.c. */
#include <pthread.h>
#include "test.h"
#include "hw_fake.h"
#include "vtd_regs_model.h"
#include "../../iommu/vtd.h"
#include "../../iommu/iommu.h"
#include "../../lib/memmap.h"

#define HEAP_SIZE MIB(1)
static const uint64_t cap = (6ull << 8) | (47ull << 16) | (0x40ull << 24) | (1ull << 5) | (1ull << 6);
static const uint64_t ecap = 1 | (1 << 1) | (1 << 3) | (1 << 4) | (0x50ull << 8);   /* C, QI, IR, EIM */

static struct vtd_regs_model m;
static struct vtd_unit u;
static uint8_t *heap;

static void unit_up(void)
{
	heap = aligned_alloc(PAGE_SIZE, HEAP_SIZE);
	page_alloc_init((uintptr_t)heap, HEAP_SIZE);
	hw_tsc = 1;
	vrm_reset(&m, cap, ecap, false, false, false, false, 0);
	vrm_attach(&m);
	memset(&u, 0, sizeof u);
	char err[256] = "";
	CHECK_EQ(vtd_probe(&u, VRM_BASE, err, sizeof err), 0);
	CHECK_EQ(vtd_enable(&u, 0x12345000ull, true, err, sizeof err), 0);
	CHECK(u.qi);
}

static void unit_down(void)
{
	vrm_attach(NULL);
	page_alloc_init(0, 0);
	free(heap);
}

/* A refused descriptor: said, counted, IQE cleared, and the queue works
 * on (on 501bce7 qi_submit left FSTS.IQE set: every later submission on
 * the unit failed at once, "invalidation queue error (FSTS 0x10)"). */
TEST(vtd_queue_error_recovered_at_run_time)
{
	unit_up();
	char err[256] = "";
	m.refuse_types = 1u << 4;                      /* the unit refuses IEC descriptors */
	CHECK_EQ(vtd_invalidate_iec_index(&u, 7, err, sizeof err), -1);
	CHECK(strstr(err, "invalidation queue error") != NULL);
	CHECK(strstr(err, "the queue goes on") != NULL);
	CHECK_EQ(m.iqe_seen, 1);
	CHECK_EQ(m.fsts & (1u << 4), 0);               /* IQE cleared */
	CHECK_EQ(u.qi_iqe, 1);
	m.refuse_types = 0;
	err[0] = 0;
	CHECK_EQ(vtd_invalidate_iec_index(&u, 9, err, sizeof err), 0);
	CHECK_EQ(m.iec_index_last, 9);
	CHECK_EQ(vtd_invalidate_iec(&u, err, sizeof err), 0);
	CHECK_EQ(m.violations, 0);
	unit_down();
}

/* Two submitters at once: every wait completes, none times out, the
 * sequence numbers and slots are never shared (without the unit's lock
 * the two threads take the same slot or sequence: waits time out). */
static void *submitter(void *arg)
{
	uintptr_t base = (uintptr_t)arg;
	char err[256];
	for (uint32_t i = 0; i < 3000; i++)
		if (vtd_invalidate_iec_index(&u, (uint32_t)(base + i % 64), err, sizeof err))
			return (void *)1;
	return NULL;
}

TEST(vtd_queue_two_submitters)
{
	unit_up();
	uint64_t w0 = u.qi_waits;
	pthread_t a, b;
	void *ra, *rb;
	pthread_create(&a, NULL, submitter, (void *)0);
	pthread_create(&b, NULL, submitter, (void *)100);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	CHECK(ra == NULL && rb == NULL);
	CHECK_EQ(u.qi_waits - w0, 6000);
	CHECK_EQ(u.qi_timeouts, 0);
	unit_down();
}

/* The IRTE store: a reader that takes the entry whole (as a unit does)
 * never sees half of one posted entry and half of the other. The two
 * entries differ in both halves (descriptor address 31:6 in the low
 * quadword, 63:32 in the high, VT-d "IRTE for Posted Interrupts"), as two
 * vCPUs' descriptors on two sockets do. The old two 64-bit stores (high,
 * then low) are seen torn whenever the threads overlap (a scratch run of
 * this reader against them: reads=833300 torn=255978); whether they
 * overlap is the scheduler's, so only the whole store is checked here. */
static volatile uint64_t entry[2] __attribute__((aligned(16)));
static volatile int stop;
static const uint64_t lo_a = 0x1111111100008001ull, hi_a = 0x00000001aaaa0000ull;
static const uint64_t lo_b = 0x2222222200008001ull, hi_b = 0x00000002bbbb0000ull;
static void (*store)(volatile uint64_t *, uint64_t, uint64_t);

static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < 2000000 && !stop; i++)
		store(entry, i & 1 ? lo_a : lo_b, i & 1 ? hi_a : hi_b);
	stop = 1;
	return NULL;
}

static unsigned torn_reads(void)
{
	unsigned torn = 0;
	entry[0] = lo_a, entry[1] = hi_a;
	stop = 0;
	pthread_t w;
	pthread_create(&w, NULL, writer, NULL);
	while (!stop) {
		uint64_t lo = 0, hi = 0;              /* a 128-bit read: CMPXCHG16B of 0 with 0 */
		__asm__ volatile("lock cmpxchg16b %0" : "+m"(*(volatile unsigned __int128 *)entry), "+a"(lo), "+d"(hi)
				 : "b"(0ull), "c"(0ull) : "memory", "cc");
		if (!((lo == lo_a && hi == hi_a) || (lo == lo_b && hi == hi_b)))
			torn++;
	}
	pthread_join(w, NULL);
	return torn;
}

TEST(irte_store_is_never_torn)
{
	store = irte_store128;
	CHECK_EQ(torn_reads(), 0);
}

/* A unit's fault event (iommu_fault_interrupt: the boot CPU's exit, or a
 * STI window through lib/trap.c's hook): the records read under the fault
 * lock, the event counted in the report. With no unit on, nothing to read;
 * a dropped spin_lock there fails this test (the checked host locks). */
TEST(iommu_fault_event_reads_under_its_lock)
{
	test_log_clear();
	iommu_report();
	const char *l = strstr(test_log(), "fault_events=");
	unsigned long before = l ? strtoul(l + strlen("fault_events="), NULL, 10) : 0;
	CHECK(l != NULL);
	iommu_fault_interrupt();
	test_log_clear();
	iommu_report();
	l = strstr(test_log(), "fault_events=");
	CHECK(l != NULL);
	if (l)
		CHECK_EQ(strtoul(l + strlen("fault_events="), NULL, 10), before + 1);
	CHECK_EQ(iommu_poll_faults(NULL), 0);
}
