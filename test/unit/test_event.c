/* The vCPU's event queue (vmx/event.c) against a model of the SDM written
 * out here: Vol. 3A, 6.15, "Interrupt 8—Double Fault Exception (#DF)",
 * Tables "Interrupt and Exception Classes" and "Conditions for Generating a
 * Double Fault"; the exceptions that push an error code (same section, per
 * vector); Vol. 3C, "VM-Entry Control Fields" (interruption-information
 * layout: vector 7:0, type 10:8 with 0 external interrupt, 2 NMI,
 * 3 hardware exception, 4 software interrupt, 5 privileged software
 * exception, 6 software exception; bit 11 deliver error code; bit 31 valid)
 * and the entry check that forbids an error code with CR0.PE = 0. */
#include "test.h"
#include "../../vmx/event.h"

#define M_VALID  0x80000000u
#define M_CODE   0x00000800u
#define M_INFO(type, vec) (M_VALID | ((uint32_t)(type) << 8) | (uint32_t)(vec))

/* The SDM's classes, by name. */
static const uint8_t m_contributory[] = { 0 /*#DE*/, 10 /*#TS*/, 11 /*#NP*/, 12 /*#SS*/, 13 /*#GP*/ };
static const uint8_t m_with_code[] = { 8 /*#DF*/, 10, 11, 12, 13, 14 /*#PF*/, 17 /*#AC*/, 21 /*#CP*/ };

static bool in(const uint8_t *set, size_t n, uint8_t v)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}
static bool m_contrib(uint8_t v) { return in(m_contributory, sizeof m_contributory, v); }
static bool m_code(uint8_t v) { return in(m_with_code, sizeof m_with_code, v); }

TEST(event_error_code_vectors)
{
	for (int v = 0; v < 32; v++)
		CHECK_EQ(event_has_error_code((uint8_t)v), m_code((uint8_t)v));
}

/* Every pair of hardware exceptions, as the double-fault table says. */
TEST(event_exception_pairs_follow_the_double_fault_table)
{
	for (int a = 0; a < 32; a++) {
		if (a == 2 || a == 15 || (a >= 22 && a != 28 && a != 29 && a != 30))
			continue;                          /* NMI, reserved vectors */
		for (int b = 0; b < 32; b++) {
			if (b == 2 || b == 8 || b == 15 || (b >= 22 && b != 28 && b != 29 && b != 30))
				continue;
			struct event_queue q = { .now = { M_INFO(3, a) | (m_code((uint8_t)a) ? M_CODE : 0), 0x10, 0 } };
			enum event_result r = event_queue_exception(&q, (uint8_t)b, 0x18);
			bool first_pf = a == 14, first_df = a == 8;
			bool second_bad = m_contrib((uint8_t)b) || b == 14;
			if (first_df && second_bad) {
				CHECK_EQ(r, EVENT_SHUTDOWN);
				CHECK(!(q.now.info & M_VALID));
			} else if ((m_contrib((uint8_t)a) && m_contrib((uint8_t)b)) || (first_pf && second_bad)) {
				CHECK_EQ(r, EVENT_QUEUED);
				CHECK_EQ(q.now.info, M_INFO(3, 8) | M_CODE);   /* #DF, error code 0 */
				CHECK_EQ(q.now.error, 0);
			} else {
				/* serially: the second is delivered */
				CHECK_EQ(r, EVENT_QUEUED);
				CHECK_EQ(q.now.info, M_INFO(3, b) | (m_code((uint8_t)b) ? M_CODE : 0));
				if (m_code((uint8_t)b))
					CHECK_EQ(q.now.error, 0x18);
			}
			CHECK(!(q.deferred.info & M_VALID));
		}
	}
}

TEST(event_exception_into_empty_queue)
{
	struct event_queue q = { 0 };
	CHECK_EQ(event_queue_exception(&q, 14, 0x6), EVENT_QUEUED);
	CHECK_EQ(q.now.info, M_INFO(3, 14) | M_CODE);
	CHECK_EQ(q.now.error, 6);
	struct event_queue u = { 0 };
	event_queue_exception(&u, 6, 0x1234);               /* #UD has no error code */
	CHECK_EQ(u.now.info, M_INFO(3, 6));
}

/* An external interrupt or NMI the exit interrupted is not lost: it waits. */
TEST(event_interrupt_and_nmi_deferred_behind_an_exception)
{
	struct event_queue q = { .now = { M_INFO(0, 0xec), 0, 0 } };
	CHECK_EQ(event_queue_exception(&q, 14, 2), EVENT_QUEUED);
	CHECK_EQ(q.now.info, M_INFO(3, 14) | M_CODE);
	CHECK_EQ(q.deferred.info, M_INFO(0, 0xec));
	struct event_queue n = { .now = { M_INFO(2, 2), 0, 0 } };
	event_queue_exception(&n, 13, 0);
	CHECK_EQ(n.now.info, M_INFO(3, 13) | M_CODE);
	CHECK_EQ(n.deferred.info, M_INFO(2, 2));
}

/* INT n, INT3, INTO, INT1: the instruction runs again and raises them anew. */
TEST(event_software_events_replaced)
{
	for (int type = 4; type <= 6; type++) {
		struct event_queue q = { .now = { M_INFO(type, 0x80), 0, 2 } };
		CHECK_EQ(event_queue_exception(&q, 13, 0x402), EVENT_QUEUED);
		CHECK_EQ(q.now.info, M_INFO(3, 13) | M_CODE);
		CHECK_EQ(q.now.error, 0x402);
		CHECK(!(q.deferred.info & M_VALID));
	}
}

TEST(event_no_error_code_in_real_mode)
{
	struct vmx_event e = { M_INFO(3, 13) | M_CODE, 0, 0 };
	CHECK_EQ(event_entry_info(&e, true), M_INFO(3, 13) | M_CODE);
	CHECK_EQ(event_entry_info(&e, false), M_INFO(3, 13));
}
