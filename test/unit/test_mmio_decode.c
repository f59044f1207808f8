/* guest/mmio.c: the MOV forms an IOAPIC access compiles to, from bytes
 * assembled by hand after the SDM (Vol. 2A, "Instruction Format", Tables
 * 2-2 and 2-3 for ModRM and SIB; MOV 89 /r, 8B /r, C7 /0 id) and checked
 * against GNU as; and the forms refused by name. */
#include "test.h"
#include "../../guest/mmio.h"

struct ok_case { const char *what; uint8_t b[15]; unsigned n; uint8_t len; bool write, has_imm; uint8_t reg; uint32_t imm; };

static const struct ok_case ok[] = {
	{ "mov (%rdi),%eax", { 0x8b, 0x07 }, 2, 2, false, false, 0, 0 },
	{ "mov %esi,(%rdi)", { 0x89, 0x37 }, 2, 2, true, false, 6, 0 },
	/* Linux's io_apic_read/io_apic_write: writel(reg, &index), readl(&data) */
	{ "mov %edi,(%rax)", { 0x89, 0x38 }, 2, 2, true, false, 7, 0 },
	{ "mov 0x10(%rax),%eax", { 0x8b, 0x40, 0x10 }, 3, 3, false, false, 0, 0 },
	{ "mov 0x10(%rdi),%r8d", { 0x44, 0x8b, 0x47, 0x10 }, 4, 4, false, false, 8, 0 },
	{ "mov %eax,(%rsp)", { 0x89, 0x04, 0x24 }, 3, 3, true, false, 0, 0 },
	{ "mov 0x100(%rsp),%eax", { 0x8b, 0x84, 0x24, 0x00, 0x01, 0x00, 0x00 }, 7, 7, false, false, 0, 0 },
	{ "mov 0x12345678(%rip),%eax", { 0x8b, 0x05, 0x78, 0x56, 0x34, 0x12 }, 6, 6, false, false, 0, 0 },
	{ "mov 0xfec00000 (SIB, no base),%eax", { 0x8b, 0x04, 0x25, 0x00, 0x00, 0xc0, 0xfe }, 7, 7, false, false, 0, 0 },
	{ "movl $0x12345678,0x10(%rdi)", { 0xc7, 0x47, 0x10, 0x78, 0x56, 0x34, 0x12 }, 7, 7, true, true, 0, 0x12345678 },
	{ "movl $0,(%rdi)", { 0xc7, 0x07, 0, 0, 0, 0 }, 6, 6, true, true, 0, 0 },
	{ "mov %r9d,0x10(%r13)", { 0x45, 0x89, 0x4d, 0x10 }, 4, 4, true, false, 9, 0 },
	{ "mov %gs:(%rbx),%eax", { 0x65, 0x8b, 0x03 }, 3, 3, false, false, 0, 0 },
	{ "mov (%edi),%eax", { 0x67, 0x8b, 0x07 }, 3, 3, false, false, 0, 0 },
	{ "mov 0x40(%rax,%rcx,4),%r15d", { 0x44, 0x8b, 0x7c, 0x88, 0x40 }, 5, 5, false, false, 15, 0 },
	{ "trailing bytes ignored", { 0x8b, 0x07, 0x90, 0x90 }, 15, 2, false, false, 0, 0 },
};

TEST(mmio_decode_mov_forms)
{
	for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
		struct mmio_insn in;
		const char *why = NULL;
		int rc = mmio_decode(ok[k].b, ok[k].n, &in, &why);
		if (rc) {
			char m[160];
			snprintf(m, sizeof m, "%s: refused (%s)", ok[k].what, why);
			test_fail(__FILE__, __LINE__, m);
			continue;
		}
		CHECK_EQ(in.len, ok[k].len);
		CHECK_EQ(in.write, ok[k].write);
		CHECK_EQ(in.has_imm, ok[k].has_imm);
		CHECK_EQ(in.reg, ok[k].reg);
		CHECK_EQ(in.imm, ok[k].imm);
	}
}

struct bad_case { uint8_t b[15]; unsigned n; const char *must; };

static const struct bad_case bad[] = {
	{ { 0x48, 0x8b, 0x07 }, 3, "REX.W" },                  /* mov (%rdi),%rax */
	{ { 0x66, 0x8b, 0x07 }, 3, "0x66" },                   /* mov (%rdi),%ax */
	{ { 0xf0, 0x01, 0x07 }, 3, "LOCK" },
	{ { 0xf3, 0xa5 }, 2, "REP" },
	{ { 0x0f, 0xb6, 0x07 }, 3, "0F" },                     /* movzbl */
	{ { 0x8a, 0x07 }, 2, "8-bit" },
	{ { 0xa1, 0, 0, 0xc0, 0xfe, 0, 0, 0, 0 }, 9, "opcode" },  /* movabs moffs */
	{ { 0x89, 0xc0 }, 2, "register" },
	{ { 0xc7, 0x4f, 0x10, 0, 0, 0, 0 }, 7, "reg != 0" },
	{ { 0x8b, 0x84, 0x24, 0x00 }, 4, "displacement" },
	{ { 0xc7, 0x07, 0, 0 }, 4, "imm32" },
	{ { 0x8b }, 1, "ModRM" },
	{ { 0x65, 0x65 }, 2, "prefixes only" },
	{ { 0x8b, 0x04 }, 2, "SIB" },
};

TEST(mmio_decode_refuses_by_name)
{
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		struct mmio_insn in;
		const char *why = NULL;
		CHECK_EQ(mmio_decode(bad[k].b, bad[k].n, &in, &why), -1);
		CHECK_CONTAINS(why, bad[k].must);
	}
	/* 15 prefixes: past the length limit. */
	uint8_t many[20];
	memset(many, 0x3e, sizeof many);
	struct mmio_insn in;
	const char *why = NULL;
	CHECK_EQ(mmio_decode(many, sizeof many, &in, &why), -1);
}
