/* A model of a VT-d interrupt-remapping unit taking one interrupt request,
 * written from the VT-d specification's formats alone (it shares no
 * definition with iommu/): the request in compatibility or remappable
 * format (an MSI write, or what an I/OxAPIC sends for a redirection-table
 * entry), the interrupt index with its subhandle, the table's size, the
 * IRTE in remapped or posted format with its reserved fields, source-ID
 * verification; and the model's own reading of a compatibility-format
 * request (what the guest meant). */
#ifndef TEST_UNIT_IRTE_MODEL_H
#define TEST_UNIT_IRTE_MODEL_H
#include <stdint.h>
#include <stdbool.h>

struct irm_unit {
	const uint64_t *irt;   /* the table: entry i at irt[2i] (63:0), irt[2i+1] (127:64) */
	unsigned size_field;   /* IRTA.S: 2^(S+1) entries */
	bool eime;             /* IRTA.EIME: x2APIC 32-bit destinations */
	bool posting;          /* CAP.PI */
};

/* What the unit delivers. */
struct irm_out {
	bool posted;
	/* posted */
	uint64_t pda;
	bool urgent;
	/* remapped */
	uint32_t dest;
	bool dm, rh, tm;
	unsigned dlm;
	/* both */
	uint8_t vector;
	uint32_t index;
};

/* An MSI write of data to addr by requester sid: 0 and *out, or the fault
 * reason (0x20 reserved request fields, 0x21 index beyond the table, 0x22
 * not present, 0x24 reserved IRTE fields, 0x25 compatibility format blocked
 * (GSTS.CFIS clear), 0x26 source-ID verification failed). */
int irm_msi(const struct irm_unit *u, uint16_t sid, uint64_t addr, uint32_t data, struct irm_out *out);
/* The request an I/OxAPIC sends for a remappable RTE, from requester sid. */
int irm_ioapic(const struct irm_unit *u, uint16_t sid, uint64_t rte, struct irm_out *out);

/* A compatibility-format request read by the model: -1 when a reserved
 * field is set, or the request is not compatibility format. */
struct irm_compat {
	uint8_t vector;
	unsigned dlm;
	bool dm, rh, tm, polarity_low, mask;
	uint8_t dest;
};
int irm_compat_msi(uint64_t addr, uint32_t data, struct irm_compat *c);
int irm_compat_rte(uint64_t rte, struct irm_compat *c);
#endif
