/* The guest instructions that may touch an emulated MMIO page (the virtual
 * IOAPIC's): decoded from their bytes, so that the access is carried out by
 * the hypervisor and RIP advanced. 64-bit mode only, 32-bit accesses only:
 * MOV r32 <- m32 (8B /r), MOV m32 <- r32 (89 /r), MOV m32 <- imm32 (C7 /0),
 * with REX (not W), ModRM, SIB and displacement forms (SDM Vol. 2,
 * "Instruction Format"). The address itself is not computed: the EPT
 * violation gives it. Pure logic. */
#ifndef GUEST_MMIO_H
#define GUEST_MMIO_H
#include "../lib/types.h"

#define MMIO_INSN_MAX 15                /* the architectural instruction length limit */

struct mmio_insn {
	uint8_t len;                    /* bytes, prefixes included */
	bool write;                     /* to memory */
	bool has_imm;                   /* C7: the value is imm32 */
	uint8_t reg;                    /* 89/8B: the register (0 RAX .. 15 R15) */
	uint32_t imm;
};

/* 0 and *out; or -1 and *why naming what is not supported (the opcode,
 * prefix or form), when the 'avail' bytes at b are not such an
 * instruction or end before it does. */
int mmio_decode(const uint8_t *b, unsigned avail, struct mmio_insn *out, const char **why);
#endif
