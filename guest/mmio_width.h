/* The byte and word MOVs of an emulated configuration access (ECAM: Linux's
 * mmio_config_readb/readw/writeb/writew are MOV 8A/8B and 88/89 with an
 * operand-size prefix for the word), carried onto guest/mmio.c's decoder:
 * 0x66 before 89/8B makes a 16-bit access, 88/8A an 8-bit one (without REX,
 * register numbers 4-7 name AH, CH, DH, BH: SDM Vol. 2A, "Register Codes
 * Associated With +rb"). C6 and 66 C7 (immediates of 8 and 16 bits) are
 * refused by name. mmio_decode_wide also takes REX.W forms of 89, 8B and
 * C7 (the HPET's 64-bit registers: readq/writeq). Pure logic. */
#ifndef GUEST_MMIO_WIDTH_H
#define GUEST_MMIO_WIDTH_H
#include "mmio.h"

struct mmio_access {
	struct mmio_insn in;            /* len counts every byte, the prefix too */
	uint8_t size;                   /* 1, 2 or 4; 8 from mmio_decode_wide */
	bool high_byte;                 /* size 1: bits 15:8 of register in.reg - 4 */
};

int mmio_decode_width(const uint8_t *b, unsigned avail, struct mmio_access *out, const char **why);
/* As mmio_decode_width, and MOV r64 <- m64 (REX.W 8B), MOV m64 <- r64
 * (REX.W 89), MOV m64 <- imm32 sign-extended (REX.W C7 /0): size 8 (SDM
 * Vol. 2A, "REX Prefixes"). A size-8 access is read into or written from
 * the whole register; mmio_merge and mmio_extract are for sizes 1-4. */
int mmio_decode_wide(const uint8_t *b, unsigned avail, struct mmio_access *out, const char **why);
/* The register's new value after a read of 'size' bytes 'val' into it (a
 * 32-bit MOV zero-extends, 8 and 16 bits keep the rest). */
uint64_t mmio_merge(uint64_t old, const struct mmio_access *a, uint32_t val);
/* The value a write of 'size' bytes takes from the register. */
uint32_t mmio_extract(uint64_t reg, const struct mmio_access *a);
#endif
