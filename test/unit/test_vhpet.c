/* apic/vhpet.c against a fake HPET written here from the IA-PC HPET
 * Specification 1.0a ("Register Set", "General Capabilities and ID
 * Register", "Timer N Configuration and Capability Register", "Timer N
 * FSB Interrupt Route Register"), sharing no constant with apic/vhpet.h:
 *  - 0x000 capabilities and ID, read-only: 12:8 the number of timers - 1;
 *  - 0x010 general configuration: bit 0 ENABLE_CNF, bit 1 LEG_RT_CNF
 *    writable, the rest reserved;
 *  - 0x0F0 the main counter, read and written;
 *  - timer N at 0x100 + 0x20 N: configuration (bit 15 Tn_FSB_INT_DEL_CAP
 *    and 63:32 Tn_INT_ROUTE_CAP read-only; bit 14 Tn_FSB_EN_CNF writable
 *    only where bit 15 is set; 13:9, 8, 6, 3, 2, 1 writable), comparator
 *    at +0x08, FSB interrupt route at +0x10 (63:32 address, 31:0 value);
 *  - 32- and 64-bit accesses; a 64-bit one is one access (the counter's
 *    two halves read at once), so the fake logs each access's width.
 * Three timers; timer 2 alone is FSB-capable. */
#include "test.h"
#include "../../apic/vhpet.h"

#define F_TIMERS      3
#define F_CFG(n)      (0x100u + 0x20u * (n))
#define F_CMP(n)      (0x108u + 0x20u * (n))
#define F_ROUTE(n)    (0x110u + 0x20u * (n))
#define F_FSB_EN      (1ull << 14)
#define F_FSB_CAP     (1ull << 15)
#define F_CFG_RW      ((1ull << 1) | (1ull << 2) | (1ull << 3) | (1ull << 6) | (1ull << 8) | (0x1full << 9))

static uint64_t f_reg[0x400 / 8];
static unsigned f_accesses, f_last_size;

static void f_reset(void)
{
	memset(f_reg, 0, sizeof f_reg);
	f_reg[0] = 0x0429b17f00000000ull | 0x8086a201ull | (uint64_t)(F_TIMERS - 1) << 8;  /* 69841279 fs */
	for (unsigned n = 0; n < F_TIMERS; n++) {
		f_reg[F_CFG(n) / 8] = (0x00f00000ull << 32) | (1ull << 4) | (1ull << 5);   /* routes 20-23, periodic, 64-bit */
		f_reg[F_CMP(n) / 8] = ~0ull;
	}
	f_reg[F_CFG(2) / 8] |= F_FSB_CAP;
	f_reg[F_ROUTE(2) / 8] = 0x1111222233334444ull;
	f_reg[0xf0 / 8] = 0x0123456789abcdefull;
	f_accesses = 0;
}

static uint64_t f_read(void *ctx, uint32_t off, unsigned size)
{
	(void)ctx;
	f_accesses++;
	f_last_size = size;
	uint64_t q = f_reg[off / 8];
	return size == 8 ? q : (uint32_t)(q >> (off & 4) * 8);
}

/* What a register keeps of a write of the whole 64 bits v. */
static uint64_t f_keep(uint32_t off, uint64_t old, uint64_t v)
{
	if (off == 0)
		return old;
	if (off == 0x10)
		return (old & ~3ull) | (v & 3);
	if (off >= 0x100 && off < F_CFG(F_TIMERS) && (off - 0x100) % 0x20 == 0) {
		uint64_t rw = F_CFG_RW | ((old & F_FSB_CAP) ? F_FSB_EN : 0);
		return (old & ~rw) | (v & rw);
	}
	return v;
}

static void f_write(void *ctx, uint32_t off, unsigned size, uint64_t val)
{
	(void)ctx;
	f_accesses++;
	f_last_size = size;
	uint64_t *q = &f_reg[off / 8], v = val;
	if (size == 4) {
		unsigned sh = (off & 4) * 8;
		v = (*q & ~(0xffffffffull << sh)) | (uint64_t)(uint32_t)val << sh;
	}
	*q = f_keep(off & ~7u, *q, v);
}

static const struct vhpet_hw f_hw = { f_read, f_write, NULL };

static struct vhpet h;

static void f_boot(void)
{
	f_reset();
	vhpet_init(&h, &f_hw);
	f_accesses = 0;
}

TEST(vhpet_init_finds_three_timers_and_timer_2_fsb_capable)
{
	f_boot();
	CHECK_EQ(h.ntimers, 3);
	CHECK_EQ(h.fsb_capable, 1u << 2);
	CHECK_EQ(h.fsb_was_on, 0);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_CAP, F_FSB_CAP);   /* the real register keeps its capability */
}

TEST(vhpet_guest_reads_timer_2_without_fsb_capability)
{
	f_boot();
	uint64_t real = f_reg[F_CFG(2) / 8];
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(2), 4), (uint32_t)real & ~(uint32_t)F_FSB_CAP);
	CHECK_EQ(f_last_size, 4);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(2), 8), real & ~F_FSB_CAP);
	CHECK_EQ(f_last_size, 8);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(2) + 4, 4), real >> 32);   /* Tn_INT_ROUTE_CAP as is */
	CHECK_EQ(h.cap_hidden, 2);
	/* Timers 0 and 1 read as they are. */
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(0), 8), f_reg[F_CFG(0) / 8]);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(1), 4), (uint32_t)f_reg[F_CFG(1) / 8]);
}

TEST(vhpet_guest_fsb_enable_never_reaches_timer_2)
{
	f_boot();
	uint64_t want = (1ull << 2) | (1ull << 3) | (21ull << 9);  /* enabled, periodic, IOAPIC pin 21 */
	vhpet_write(&h, &f_hw, F_CFG(2), 4, (uint32_t)(want | F_FSB_EN));
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_EN, 0);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_CFG_RW, want);     /* the rest of the write arrived */
	vhpet_write(&h, &f_hw, F_CFG(2), 4, 0);
	vhpet_write(&h, &f_hw, F_CFG(2), 8, (0xffffffffull << 32) | want | F_FSB_EN);
	CHECK_EQ(f_last_size, 8);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_EN, 0);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_CFG_RW, want);
	CHECK_EQ(f_reg[F_CFG(2) / 8] >> 32, 0x00f00000);    /* read-only half kept */
	CHECK_EQ(h.fsb_en_dropped, 2);
	/* The high half alone (Tn_INT_ROUTE_CAP) is read-only: passes. */
	vhpet_write(&h, &f_hw, F_CFG(2) + 4, 4, 0xffffffff);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_EN, 0);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(2), 4) & F_FSB_EN, 0);
}

TEST(vhpet_guest_fsb_route_writes_leave_the_real_one)
{
	f_boot();
	vhpet_write(&h, &f_hw, F_ROUTE(2), 8, 0xfee00000000000f1ull);     /* vector 0xf1, APIC ID 0 */
	vhpet_write(&h, &f_hw, F_ROUTE(2), 4, 0x400);                      /* delivery mode NMI */
	vhpet_write(&h, &f_hw, F_ROUTE(2) + 4, 4, 0xfee01000);             /* APIC ID 1 */
	CHECK_EQ(f_reg[F_ROUTE(2) / 8], 0x1111222233334444ull);
	CHECK_EQ(f_accesses, 0);
	CHECK_EQ(h.route_dropped, 3);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_ROUTE(2), 8), 0x1111222233334444ull);
	/* Timer 0's route register too. */
	vhpet_write(&h, &f_hw, F_ROUTE(0), 8, 0xfee0000000000500ull);
	CHECK_EQ(f_reg[F_ROUTE(0) / 8], 0);
}

TEST(vhpet_other_registers_pass_both_ways_32_and_64_bits)
{
	f_boot();
	/* Capabilities and ID, read. */
	CHECK_EQ(vhpet_read(&h, &f_hw, 0x000, 8), f_reg[0]);
	CHECK_EQ(vhpet_read(&h, &f_hw, 0x004, 4), f_reg[0] >> 32);
	/* The main counter: one 64-bit access, or either half. */
	CHECK_EQ(vhpet_read(&h, &f_hw, 0xf0, 8), 0x0123456789abcdefull);
	CHECK_EQ(f_last_size, 8);
	CHECK_EQ(vhpet_read(&h, &f_hw, 0xf0, 4), 0x89abcdef);
	CHECK_EQ(vhpet_read(&h, &f_hw, 0xf4, 4), 0x01234567);
	vhpet_write(&h, &f_hw, 0xf0, 8, 0xfedcba9876543210ull);
	CHECK_EQ(f_reg[0xf0 / 8], 0xfedcba9876543210ull);
	vhpet_write(&h, &f_hw, 0xf0, 4, 0x11111111);
	vhpet_write(&h, &f_hw, 0xf4, 4, 0x22222222);
	CHECK_EQ(f_reg[0xf0 / 8], 0x2222222211111111ull);
	/* General configuration: ENABLE_CNF and LEG_RT_CNF (the legacy
	 * replacement route: timers 0 and 1 to IOAPIC pins 2 and 8). */
	vhpet_write(&h, &f_hw, 0x010, 4, 3);
	CHECK_EQ(f_reg[0x10 / 8], 3);
	CHECK_EQ(vhpet_read(&h, &f_hw, 0x010, 8), 3);
	vhpet_write(&h, &f_hw, 0x010, 8, 1);
	CHECK_EQ(f_reg[0x10 / 8], 1);
	/* Each timer's comparator, whole and by halves. */
	for (unsigned n = 0; n < F_TIMERS; n++) {
		vhpet_write(&h, &f_hw, F_CMP(n), 8, 0x1000ull * (n + 1) << 32 | 0xabc);
		CHECK_EQ(f_reg[F_CMP(n) / 8], 0x1000ull * (n + 1) << 32 | 0xabc);
		vhpet_write(&h, &f_hw, F_CMP(n), 4, 0x5555);
		vhpet_write(&h, &f_hw, F_CMP(n) + 4, 4, 0x6666);
		CHECK_EQ(f_reg[F_CMP(n) / 8], 0x0000666600005555ull);
		CHECK_EQ(vhpet_read(&h, &f_hw, F_CMP(n), 8), 0x0000666600005555ull);
		CHECK_EQ(vhpet_read(&h, &f_hw, F_CMP(n) + 4, 4), 0x6666);
	}
	/* Timer 0's IOAPIC route and enable, with the guest's other bits. */
	vhpet_write(&h, &f_hw, F_CFG(0), 4, (2u << 9) | (1u << 2) | (1u << 8));
	CHECK_EQ(f_reg[F_CFG(0) / 8] & F_CFG_RW, (2u << 9) | (1u << 2) | (1u << 8));
	/* Past the last timer (reserved, where a fourth timer's route would
	 * be): passed, not filtered. */
	vhpet_write(&h, &f_hw, F_ROUTE(3), 4, 0x77);
	CHECK_EQ(f_reg[F_ROUTE(3) / 8], 0x77);
	CHECK_EQ(h.route_dropped, 0);
	CHECK_EQ(h.fsb_en_dropped, 0);
}

TEST(vhpet_fsb_left_on_by_firmware_is_turned_off_at_init)
{
	f_reset();
	f_reg[F_CFG(2) / 8] |= F_FSB_EN | (1ull << 2);
	vhpet_init(&h, &f_hw);
	CHECK_EQ(h.fsb_was_on, 1u << 2);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_EN, 0);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & (1ull << 2), 1ull << 2);
}

TEST(vhpet_widths_and_alignments_it_emulates)
{
	CHECK(vhpet_access_ok(0x000, 8));
	CHECK(vhpet_access_ok(0x004, 4));
	CHECK(vhpet_access_ok(0x3f8, 8));
	CHECK(!vhpet_access_ok(0x004, 8));      /* a 64-bit access not 8-aligned */
	CHECK(!vhpet_access_ok(0x102, 4));
	CHECK(!vhpet_access_ok(0x100, 1));
	CHECK(!vhpet_access_ok(0x100, 2));
	CHECK(!vhpet_access_ok(0x400, 4));      /* past the block */
}

/* Issue 43, item 3: on Intel PCHs (C620 and later) the P2SB's HPTC
 * register (config 60h, bits 1:0) puts the HPET's block at FED0_0000h,
 * FED0_1000h, FED0_2000h or FED0_3000h, and the guest may rewrite it: the
 * trap takes all four pages where the ACPI table's base is one of them,
 * and only the ACPI page (or two) elsewhere. */
TEST(vhpet_blocks_all_four_hptc_positions)
{
	uint64_t b[4] = { 0 };
	for (uint64_t at = 0xfed00000u; at <= 0xfed03000u; at += 0x1000) {
		CHECK_EQ(vhpet_blocks(at, b), 4);
		for (unsigned k = 0; k < 4; k++)
			CHECK_EQ(b[k], 0xfed00000u + 0x1000u * k);
	}
	CHECK_EQ(vhpet_blocks(0xfed00800u, b), 1);          /* no HPTC position: its own block */
	CHECK_EQ(b[0], 0xfed00800u);
	CHECK_EQ(vhpet_blocks(0xfed04000u, b), 1);
	CHECK_EQ(vhpet_blocks(0xfe000000u, b), 1);
	CHECK_EQ(b[0], 0xfe000000u);
}

/* A page where HPTC does not put the HPET decodes nothing: reads all
 * ones, and the filter does not make a capability-looking value of it;
 * writes there still have FSB enable and the route filtered (the guest
 * may move the HPET there next). */
TEST(vhpet_all_ones_page_reads_all_ones_through_the_filter)
{
	f_boot();
	uint64_t keep[0x400 / 8];
	memcpy(keep, f_reg, sizeof keep);
	memset(f_reg, 0xff, sizeof f_reg);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(2), 8), ~0ull);
	CHECK_EQ(vhpet_read(&h, &f_hw, F_CFG(0), 4), 0xffffffffu);
	CHECK_EQ(h.cap_hidden, 0);
	memcpy(f_reg, keep, sizeof keep);
	vhpet_write(&h, &f_hw, F_CFG(2), 4, 0xffffffffu);
	CHECK_EQ(f_reg[F_CFG(2) / 8] & F_FSB_EN, 0);
}
