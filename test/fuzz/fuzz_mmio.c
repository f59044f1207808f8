/* The virtual IOAPIC's guest-facing side: the MOV decoder (guest/mmio.c)
 * and the register interface with its router (apic/vioapic.c). The input's
 * first 15 bytes are an instruction; the rest is a sequence of 5-byte
 * accesses (offset selector, 32-bit value) to a virtual IOAPIC of 24 pins
 * over a fake physical one. Invariants: a decoded instruction fits in what
 * was given and names a register 0-15, a refusal names its cause; the
 * physical IOAPIC never holds an unmasked entry with delivery mode SMI,
 * INIT, ExtINT or 3/6, a vector below 16 for fixed or lowest priority, a
 * logical destination, or a destination that is not a vCPU's host APIC ID. */
#include <stdint.h>
#include <string.h>
#include "../../guest/mmio.h"
#include "../../apic/vioapic.h"

static uint64_t phys[24];
static uint32_t phys_sel;

static uint32_t rd(void *ctx, uint32_t reg)
{
	(void)ctx;
	if (reg == 1)
		return 0x00170011;
	if (reg >= 0x10 && reg < 0x10 + 48)
		return (uint32_t)(phys[(reg - 0x10) / 2] >> (reg & 1 ? 32 : 0));
	return 0;
}

static void wr(void *ctx, uint32_t reg, uint32_t val)
{
	(void)ctx;
	phys_sel = reg;
	if (reg < 0x10 || reg >= 0x10 + 48)
		__builtin_trap();                    /* only entries are ever written */
	uint64_t *r = &phys[(reg - 0x10) / 2];
	*r = reg & 1 ? ((uint64_t)val << 32) | (uint32_t)*r : (*r & ~0xffffffffull) | val;
}

static void eoi(void *ctx, uint8_t v) { (void)ctx; (void)v; }

static const uint32_t gid[3] = { 0, 1, 4 }, hid[3] = { 7, 8, 9 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct mmio_insn in;
	const char *why = NULL;
	unsigned avail = n < MMIO_INSN_MAX ? (unsigned)n : MMIO_INSN_MAX;
	if (mmio_decode(data, avail, &in, &why) == 0) {
		if (in.len == 0 || in.len > avail || in.reg > 15)
			__builtin_trap();
	} else if (!why) {
		__builtin_trap();
	}
	static struct vioapic a;
	struct vioapic_hw hw = { rd, wr, eoi, NULL, NULL };
	struct vioapic_dom d = { .apic_id = gid, .host_apic_id = hid, .n = 3, .guest_x2apic = true, .host_vectors = { 0, 0, 0, 7ull << 48 } };
	for (int p = 0; p < 24; p++)
		phys[p] = 1ull << 16;
	vioapic_init(&a, &hw);
	static const uint32_t offs[4] = { 0x00, 0x10, 0x40, 0x04 };
	for (size_t i = avail; i + 5 <= n; i += 5) {
		uint32_t v;
		memcpy(&v, data + i + 1, 4);
		uint32_t off = offs[data[i] & 3];
		if (data[i] & 4)
			(void)vioapic_read(&a, &hw, off);
		else
			vioapic_write(&a, &d, &hw, off, v);
	}
	for (int p = 0; p < 24; p++) {
		uint64_t r = phys[p];
		if (r & (1ull << 16))
			continue;
		unsigned dlm = (r >> 8) & 7, vec = (uint8_t)r, dest = (uint8_t)(r >> 56);
		if (dlm == 2 || dlm == 3 || dlm == 5 || dlm == 6 || dlm == 7 || (r & (1ull << 11)))
			__builtin_trap();
		if (dlm != 4 && (vec < 16 || (vec >= 0xf0 && vec <= 0xf2)))
			__builtin_trap();
		if (dest != 7 && dest != 8 && dest != 9)
			__builtin_trap();
	}
	return 0;
}
