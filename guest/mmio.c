/* The MMIO instruction decoder (mmio.h). Encodings: SDM Vol. 2A, chapter 2
 * ("Instruction Format": legacy prefixes, REX, opcode, ModRM, SIB,
 * displacement, immediate; 2.2.1.6 "RIP-Relative Addressing") and the MOV
 * entries of chapter 4. */
#include "mmio.h"

int mmio_decode(const uint8_t *b, unsigned avail, struct mmio_insn *out, const char **why)
{
	unsigned i = 0;
	uint8_t rex = 0;
	*out = (struct mmio_insn){ 0 };
	if (avail > MMIO_INSN_MAX)
		avail = MMIO_INSN_MAX;
	for (;; i++) {
		if (i >= avail) {
			*why = "instruction not readable (prefixes only)";
			return -1;
		}
		switch (b[i]) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: case 0x67:
			continue;       /* segments and address size: the EPT gives the address */
		case 0x66: *why = "operand-size prefix 0x66 (a 16-bit access)"; return -1;
		case 0xf0: *why = "LOCK prefix"; return -1;
		case 0xf2: case 0xf3: *why = "REP/REPNE prefix (string or SSE instruction)"; return -1;
		default: break;
		}
		break;
	}
	if ((b[i] & 0xf0) == 0x40) {            /* REX: the last prefix */
		rex = b[i++];
		if (rex & 8) {
			*why = "REX.W (a 64-bit access)";
			return -1;
		}
	}
	if (i + 2 > avail) {
		*why = "instruction not readable (opcode, ModRM)";
		return -1;
	}
	uint8_t op = b[i++], modrm = b[i++];
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	switch (op) {
	case 0x89: out->write = true; break;
	case 0x8b: break;
	case 0xc7:
		if (reg) {
			*why = "opcode C7 with ModRM.reg != 0";
			return -1;
		}
		out->write = out->has_imm = true;
		break;
	case 0x88: case 0x8a: case 0xc6: *why = "8-bit MOV (opcode 88/8A/C6)"; return -1;
	case 0x0f: *why = "two-byte opcode 0F (MOVZX, SSE, ...)"; return -1;
	default: *why = "opcode other than MOV 89/8B/C7"; return -1;
	}
	if (mod == 3) {
		*why = "ModRM names a register, not memory";
		return -1;
	}
	unsigned disp = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	if (rm == 4) {                          /* SIB */
		if (i >= avail) {
			*why = "instruction not readable (SIB)";
			return -1;
		}
		if (mod == 0 && (b[i] & 7) == 5)
			disp = 4;               /* no base: disp32 */
		i++;
	} else if (mod == 0 && rm == 5) {
		disp = 4;                       /* RIP-relative disp32 */
	}
	i += disp;
	out->reg = (uint8_t)(reg | ((rex & 4) ? 8 : 0));
	if (out->has_imm) {
		if (i + 4 > avail) {
			*why = "instruction not readable (imm32)";
			return -1;
		}
		out->imm = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
		out->reg = 0;
		i += 4;
	}
	if (i > avail) {
		*why = "instruction not readable (displacement)";
		return -1;
	}
	out->len = (uint8_t)i;
	return 0;
}
