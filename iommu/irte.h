/* VT-d interrupt remapping, on paper but encoded (docs/iommu.md, "Exitless
 * device interrupts"): the interrupt-remapping table entry (IRTE) in
 * remapped and in posted format; the guest's compatibility-format MSI
 * address/data and IOAPIC redirection-table entries decoded; a policy that
 * turns one of them into an IRTE (fixed and lowest-priority posted to the
 * destination vCPU's posted-interrupt descriptor, NMI remapped to the
 * vCPU's CPU, SMI/INIT/ExtINT blocked); and the remappable-format MSI and
 * RTE that point a device or an IOAPIC pin at an IRTE index. Pure: no
 * hardware is touched. From the VT-d specification, "Interrupt Remapping"
 * (interrupt requests in compatibility and remappable format) and
 * "Interrupt Remapping Table Entry (IRTE)" for remapped and posted
 * interrupts. */
#ifndef IOMMU_IRTE_H
#define IOMMU_IRTE_H
#include "../lib/types.h"

/* One 128-bit IRTE: lo is bits 63:0, hi bits 127:64. */
struct irte {
	uint64_t lo, hi;
};

/* Delivery modes (IRTE, MSI data 10:8, RTE 10:8). 3 and 6 are reserved. */
enum irq_dlm {
	IRQ_DLM_FIXED = 0,
	IRQ_DLM_LOWPRI = 1,
	IRQ_DLM_SMI = 2,
	IRQ_DLM_NMI = 4,
	IRQ_DLM_INIT = 5,
	IRQ_DLM_EXTINT = 7,
};

/* Source validation of an IRTE: SVT 00 none, 01 the whole requester ID
 * compared (SQ: 0 all bits, 1..3 ignoring function bit 2, bits 2:1, bits
 * 2:0), 10 the requester's bus within [SID 15:8, SID 7:0]. */
enum irte_svt { IRTE_SVT_NONE = 0, IRTE_SVT_SID = 1, IRTE_SVT_BUS = 2 };
struct irte_source {
	uint16_t sid;
	uint8_t sq;             /* 0..3 */
	uint8_t svt;            /* enum irte_svt */
};

/* A remapped-format IRTE: delivered by the unit as an interrupt to CPUs. */
struct irte_remapped {
	uint32_t dest;          /* APIC ID or logical destination */
	bool x2apic;            /* IRTA.EIME: 32-bit destination, else 8-bit at 47:40 */
	bool logical;           /* DM */
	bool redir_hint;        /* RH */
	bool level;             /* TM */
	uint8_t dlm;            /* enum irq_dlm */
	uint8_t vector;
	bool fpd;               /* fault processing disable */
	struct irte_source src;
};

/* A posted-format IRTE: the vector is posted into a descriptor. */
struct irte_posted {
	uint64_t pda;           /* the posted-interrupt descriptor, 64-byte aligned */
	uint8_t vector;         /* the virtual vector */
	bool urgent;            /* URG: notify even when the vCPU blocks notifications */
	bool fpd;
	struct irte_source src;
};

/* Encoders: 0 and *out, or -1 with err when a field does not fit (an 8-bit
 * destination above 255, a reserved delivery mode, a descriptor not 64-byte
 * aligned, SQ above 3 or a reserved SVT). The not-present IRTE is all zeros. */
int irte_encode_remapped(const struct irte_remapped *r, struct irte *out, char *err, size_t errlen);
int irte_encode_posted(const struct irte_posted *p, struct irte *out, char *err, size_t errlen);

/* An interrupt as the guest programmed it, in compatibility format. */
struct irq_req {
	uint8_t vector;
	uint8_t dlm;            /* enum irq_dlm */
	bool logical;           /* destination mode */
	bool level;             /* trigger mode */
	bool active_low;        /* RTE polarity (MSI: always high) */
	bool masked;            /* RTE mask (MSI: the capability's mask, not here) */
	bool redir_hint;        /* MSI address bit 3 (RTE: none) */
	uint32_t dest;          /* 8 bits */
};

/* The guest's MSI address (64 bits, high half must be 0: the interrupt
 * window is 0xFEExxxxx) and data. Refused with err: another window, the
 * remappable format (bit 4: the guest never sees interrupt remapping),
 * reserved address bits 11:5 (the extended destination ID of some
 * hypervisors is not offered here), reserved data bits 13:11 and 31:16, a
 * reserved delivery mode. */
int irq_from_msi(uint64_t addr, uint32_t data, struct irq_req *out, char *err, size_t errlen);
/* The guest's IOAPIC RTE: refused with err: the remappable format (bit 48),
 * reserved bits 55:17, a reserved delivery mode. The read-only bits 12
 * (delivery status) and 14 (remote IRR) are ignored. */
int irq_from_ioapic_rte(uint64_t rte, struct irq_req *out, char *err, size_t errlen);

/* The guest's vCPUs as the policy sees them. */
struct irq_vcpu {
	uint32_t apic_id;       /* the guest's APIC ID */
	uint8_t ldr;            /* xAPIC logical destination (LDR 31:24) */
	uint64_t pid;           /* its posted-interrupt descriptor */
	uint32_t host_apic_id;  /* the CPU it runs on */
};
struct irq_guest {
	const struct irq_vcpu *vcpu;
	uint32_t n;             /* at most 64 */
	bool x2apic;            /* the guest's APIC mode */
	bool cluster;           /* xAPIC DFR cluster model, else flat */
	bool host_x2apic;       /* IRTA.EIME */
};

enum irq_route {
	IRQ_POSTED,             /* exitless: the vector posted to one vCPU */
	IRQ_REMAPPED,           /* to the hypervisor on a vCPU's CPU (NMI, fixed multicast): one exit */
	IRQ_BLOCKED,            /* not present: the request faults, is counted, never delivered */
};
struct irq_plan {
	enum irq_route route;
	struct irte irte;
	uint64_t targets;       /* the vCPUs the guest addressed (bit i: vcpu[i]) */
	uint32_t vcpu;          /* the one posted to / whose CPU takes it */
	const char *why;        /* for IRQ_BLOCKED and IRQ_REMAPPED */
};

/* The policy: fixed to one vCPU, and lowest priority to any number (one
 * chosen by vector: the (vector mod count)-th destination, as KVM's vector
 * hashing), posted to that vCPU's descriptor; fixed to several vCPUs
 * remapped to the first one's CPU with the guest's vector (the hypervisor
 * posts it to the rest, one exit); NMI to one vCPU remapped as an NMI to
 * its CPU (an NMI exit, injected); SMI, INIT, ExtINT, NMI to several, a
 * vector below 16 for fixed or lowest priority, a destination with no
 * vCPU, logical destinations of an x2APIC guest: blocked. A masked RTE is
 * planned the same (the mask stays in the RTE). sid is the requester
 * (device or IOAPIC) checked by the IRTE. */
void irq_plan(const struct irq_guest *g, const struct irq_req *r, uint16_t sid, struct irq_plan *out);

/* The remappable-format MSI that points at IRTE index (address 19:5 index
 * 14:0, 4 format, 3 SHV clear, 2 index 15; data 0). */
uint32_t irte_msi_addr(uint16_t index);
/* The remappable-format RTE (63:49 index 14:0, 48 format, 11 index 15) that
 * keeps the guest's mask, trigger mode, polarity and vector (the IOAPIC
 * matches an EOI by that vector). */
uint64_t irte_ioapic_rte(uint16_t index, const struct irq_req *r);
#endif
