/* The guest's interrupt programming (iommu/irte.c): the input is 24 bytes,
 * an MSI address (8), MSI data (4), an IOAPIC RTE (8) and a requester ID
 * (2) plus a guest shape (2), decoded and planned for a fixed set of vCPUs.
 * Invariants: a refusal names its cause; a decoded request re-encodes to
 * the same bits (but for the don't-care address bits 1:0, MSI data bit 14
 * and the read-only RTE bits 12 and 14); a plan's IRTE is present exactly
 * when it is not blocked, and a posted one points at a vCPU's descriptor
 * with the guest's vector and the requester's ID. */
#include <stdint.h>
#include <string.h>
#include "../../iommu/irte.h"

static const struct irq_vcpu vcpus[4] = {
	{ .apic_id = 0, .ldr = 0x01, .pid = 0x100000, .host_apic_id = 0 },
	{ .apic_id = 1, .ldr = 0x02, .pid = 0x100040, .host_apic_id = 2 },
	{ .apic_id = 4, .ldr = 0x11, .pid = 0x100080, .host_apic_id = 4 },
	{ .apic_id = 5, .ldr = 0x12, .pid = 0x1000c0, .host_apic_id = 6 },
};

static void plan(const struct irq_req *r, uint16_t sid, uint8_t shape)
{
	struct irq_guest g = { .vcpu = vcpus, .n = 1 + (shape & 3), .x2apic = shape & 4, .cluster = shape & 8,
			       .host_x2apic = shape & 16 };
	struct irq_plan p;
	irq_plan(&g, r, sid, &p);
	bool present = p.irte.lo & 1;
	if (present != (p.route != IRQ_BLOCKED) || (p.route == IRQ_BLOCKED && !p.why))
		__builtin_trap();
	if (p.route == IRQ_POSTED) {
		uint64_t pda = (p.irte.lo >> 38) << 6 | (p.irte.hi >> 32) << 32;
		if (p.vcpu >= g.n || pda != vcpus[p.vcpu].pid || ((p.irte.lo >> 16) & 0xff) != r->vector ||
		    !(p.targets >> p.vcpu & 1) || (uint16_t)p.irte.hi != sid)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	uint8_t in[24] = { 0 };
	memcpy(in, data, n < sizeof in ? n : sizeof in);
	uint64_t addr, rte;
	uint32_t msi_data;
	uint16_t sid;
	memcpy(&addr, in, 8);
	memcpy(&msi_data, in + 8, 4);
	memcpy(&rte, in + 12, 8);
	memcpy(&sid, in + 20, 2);
	char err[160];
	struct irq_req r;
	err[0] = 0;
	if (irq_from_msi(addr, msi_data, &r, err, sizeof err)) {
		if (!err[0])
			__builtin_trap();
	} else {
		uint32_t back = 0xfee00000u | r.dest << 12 | (uint32_t)r.redir_hint << 3 | (uint32_t)r.logical << 2;
		uint32_t dback = r.vector | (uint32_t)r.dlm << 8 | (uint32_t)r.level << 15;
		if (back != ((uint32_t)addr & ~3u) || dback != (msi_data & ~(1u << 14)))
			__builtin_trap();
		plan(&r, sid, in[22]);
		if ((irte_msi_addr(sid) & 0xfff00010u) != 0xfee00010u)
			__builtin_trap();
	}
	err[0] = 0;
	if (irq_from_ioapic_rte(rte, &r, err, sizeof err)) {
		if (!err[0])
			__builtin_trap();
	} else {
		uint64_t back = r.vector | (uint64_t)r.dlm << 8 | (uint64_t)r.logical << 11 | (uint64_t)r.active_low << 13 |
				(uint64_t)r.level << 15 | (uint64_t)r.masked << 16 | (uint64_t)r.dest << 56;
		if (back != (rte & ~(1ull << 12 | 1ull << 14)))
			__builtin_trap();
		plan(&r, sid, in[23]);
		uint64_t re = irte_ioapic_rte(sid, &r);
		if (!(re >> 48 & 1) || (re & 0x700) || (re >> 49 | (re >> 11 & 1) << 15) != sid)
			__builtin_trap();
	}
	return 0;
}
