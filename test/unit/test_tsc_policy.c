/* The guest's writes of the TSC (guest/msr.c). From the SDM: IA32_TSC is
 * MSR 0x10, IA32_TSC_ADJUST MSR 0x3B (Vol. 3B, "Time-Stamp Counter
 * Adjustment": a write to either moves this logical processor's TSC); the
 * MSR bitmap's write-low half starts at byte 2048, bit m % 8 of byte m / 8
 * (Vol. 3C, "MSR-Bitmap Address"). */
#include "test.h"
#include "../../guest/msr.h"

static bool m_write_exits(const uint8_t *bm, uint32_t m) { return (bm[2048 + m / 8] >> (m % 8)) & 1; }
static bool m_read_exits(const uint8_t *bm, uint32_t m) { return (bm[m / 8] >> (m % 8)) & 1; }

TEST(guest_tsc_writes_exit_reads_do_not)
{
	static uint8_t bm[4096];
	for (int virt = 0; virt < 2; virt++) {
		msr_bitmap_build(bm, virt, false);
		CHECK(m_write_exits(bm, 0x10));
		CHECK(m_write_exits(bm, 0x3b));
		CHECK(!m_read_exits(bm, 0x10));
		CHECK(!m_read_exits(bm, 0x3b));
	}
}

TEST(guest_tsc_writes_that_move_it_are_dropped)
{
	CHECK_EQ(guest_wrmsr(0x10, 12345), MSR_WRITE_DROPPED_TSC);
	CHECK_EQ(guest_tsc_adjust_write(0, 0), 0);                  /* no change: done */
	CHECK_EQ(guest_tsc_adjust_write(0, 1ull << 40), MSR_WRITE_DROPPED_TSC);
	CHECK_EQ(guest_tsc_adjust_write(77, 77), 0);
	CHECK_EQ(guest_tsc_adjust_write(77, 0), MSR_WRITE_DROPPED_TSC);
}
