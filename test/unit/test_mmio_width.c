/* guest/mmio_width.c: the byte and word MOVs of Linux's ECAM accessors
 * (mmio_config_readb/readw/writeb/writew: movb (%reg),%al, movw (%reg),%ax,
 * movb %al,(%reg), movw %ax,(%reg)), hand-assembled after the SDM (Vol.
 * 2A: 88 /r, 8A /r, 66 prefix with 89 /r and 8B /r; without REX, reg 4-7
 * of an 8-bit MOV are AH, CH, DH, BH). */
#include "test.h"
#include "../../guest/mmio_width.h"

TEST(mmio_width_byte_and_word_movs)
{
	static const struct { const char *what; uint8_t b[15]; unsigned n; uint8_t len, size, reg; bool write, hi; } c[] = {
		{ "movb (%rdx),%al", { 0x8a, 0x02 }, 2, 2, 1, 0, false, false },
		{ "movw (%rdx),%ax", { 0x66, 0x8b, 0x02 }, 3, 3, 2, 0, false, false },
		{ "movb %al,(%rdx)", { 0x88, 0x02 }, 2, 2, 1, 0, true, false },
		{ "movw %ax,(%rdx)", { 0x66, 0x89, 0x02 }, 3, 3, 2, 0, true, false },
		{ "movl (%rdx),%eax", { 0x8b, 0x02 }, 2, 2, 4, 0, false, false },
		{ "movb (%rdx),%ah", { 0x8a, 0x22 }, 2, 2, 1, 0, false, true },
		{ "movb (%rdx),%spl (REX)", { 0x40, 0x8a, 0x22 }, 3, 3, 1, 4, false, false },
		{ "movb %r9b,0x10(%rdi)", { 0x44, 0x88, 0x4f, 0x10 }, 4, 4, 1, 9, true, false },
		{ "movw %gs:(%rax),%cx", { 0x65, 0x66, 0x8b, 0x08 }, 4, 4, 2, 1, false, false },
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		struct mmio_access a;
		const char *why = NULL;
		int rc = mmio_decode_width(c[k].b, c[k].n, &a, &why);
		if (rc || a.in.len != c[k].len || a.size != c[k].size || a.in.reg != c[k].reg || a.in.write != c[k].write ||
		    a.high_byte != c[k].hi) {
			char m[200];
			snprintf(m, sizeof m, "%s: rc %d (%s) len %u size %u reg %u write %d hi %d", c[k].what, rc, why ? why : "",
				 a.in.len, a.size, a.in.reg, a.in.write, a.high_byte);
			test_fail(__FILE__, __LINE__, m);
		}
	}
	struct mmio_access a;
	const char *why;
	CHECK_EQ(mmio_decode_width((const uint8_t[]){ 0xc6, 0x02, 0x05 }, 3, &a, &why), -1);
	CHECK_CONTAINS(why, "immediate");
	CHECK_EQ(mmio_decode_width((const uint8_t[]){ 0x66, 0xc7, 0x02, 0x05, 0x00 }, 5, &a, &why), -1);
	CHECK_EQ(mmio_decode_width((const uint8_t[]){ 0x66, 0x8a, 0x02 }, 3, &a, &why), -1);
	CHECK_EQ(mmio_decode_width((const uint8_t[]){ 0x48, 0x8b, 0x02 }, 3, &a, &why), -1);   /* REX.W: 64 bits */
}

TEST(mmio_width_merge_and_extract)
{
	struct mmio_access b = { .size = 1 }, h = { .size = 1, .high_byte = true }, w = { .size = 2 }, d = { .size = 4 };
	CHECK_EQ(mmio_merge(0x1122334455667788ull, &b, 0xaabbccdd), 0x11223344556677ddull);
	CHECK_EQ(mmio_merge(0x1122334455667788ull, &h, 0xdd), 0x112233445566dd88ull);
	CHECK_EQ(mmio_merge(0x1122334455667788ull, &w, 0xaabbccdd), 0x112233445566ccddull);
	CHECK_EQ(mmio_merge(0x1122334455667788ull, &d, 0xaabbccdd), 0xaabbccddull);   /* zero-extended */
	CHECK_EQ(mmio_extract(0x1122334455667788ull, &b), 0x88);
	CHECK_EQ(mmio_extract(0x1122334455667788ull, &h), 0x77);
	CHECK_EQ(mmio_extract(0x1122334455667788ull, &w), 0x7788);
	CHECK_EQ(mmio_extract(0x1122334455667788ull, &d), 0x55667788);
}

/* REX.W forms (SDM Vol. 2A, "REX Prefixes": W = bit 3 of 0100WRXB): the
 * HPET's 64-bit registers as readq/writeq reach them. */
TEST(mmio_wide_quadword_movs)
{
	static const struct { const char *what; uint8_t b[15]; unsigned n; uint8_t len, size, reg; bool write, imm; } c[] = {
		{ "movq (%rdi),%rax", { 0x48, 0x8b, 0x07 }, 3, 3, 8, 0, false, false },
		{ "movq %r9,0xf0(%rsi)", { 0x4c, 0x89, 0x8e, 0xf0, 0, 0, 0 }, 7, 7, 8, 9, true, false },
		{ "movq $-1,(%rdx)", { 0x48, 0xc7, 0x02, 0xff, 0xff, 0xff, 0xff }, 7, 7, 8, 0, true, true },
		{ "movl (%rdi),%eax (no W)", { 0x8b, 0x07 }, 2, 2, 4, 0, false, false },
		{ "movw (%rdx),%ax (no W)", { 0x66, 0x8b, 0x02 }, 3, 3, 2, 0, false, false },
		{ "movq %fs:(%rax),%rcx", { 0x64, 0x48, 0x8b, 0x08 }, 4, 4, 8, 1, false, false },
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		struct mmio_access a;
		const char *why = NULL;
		int rc = mmio_decode_wide(c[k].b, c[k].n, &a, &why);
		if (rc || a.in.len != c[k].len || a.size != c[k].size || a.in.reg != c[k].reg || a.in.write != c[k].write ||
		    a.in.has_imm != c[k].imm) {
			char m[200];
			snprintf(m, sizeof m, "%s: rc %d (%s) len %u size %u reg %u write %d", c[k].what, rc, why ? why : "",
				 a.in.len, a.size, a.in.reg, a.in.write);
			test_fail(__FILE__, __LINE__, m);
		}
	}
	struct mmio_access a;
	const char *why = NULL;
	static const uint8_t addq[] = { 0x48, 0x01, 0x07 }, opq[] = { 0x66, 0x48, 0x8b, 0x07 };
	CHECK(mmio_decode_wide(addq, sizeof addq, &a, &why) < 0);
	CHECK_CONTAINS(why, "REX.W with an opcode");
	CHECK(mmio_decode_wide(opq, sizeof opq, &a, &why) < 0);
	CHECK_CONTAINS(why, "operand-size prefix with REX.W");
	/* The 32-bit decoder still refuses REX.W. */
	static const uint8_t movq[] = { 0x48, 0x8b, 0x07 };
	CHECK(mmio_decode_width(movq, sizeof movq, &a, &why) < 0);
}
