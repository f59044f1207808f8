/* A model of a VT-d remapping unit translating an untranslated DMA request
 * in legacy mode, written from the VT-d specification's formats alone (it
 * shares no definition with iommu/): the root entry, the context entry, the
 * second-level walk with its reserved-bit, permission and address-width
 * checks. */
#ifndef TEST_UNIT_VTD_MODEL_H
#define TEST_UNIT_VTD_MODEL_H
#include <stdint.h>
#include <stdbool.h>

struct vtd_model {
	uint64_t rtaddr;     /* the root table */
	unsigned sagaw;      /* CAP.SAGAW: bit 1 39-bit, 2 48-bit, 3 57-bit */
	unsigned mgaw;       /* CAP.MGAW in bits */
	unsigned haw;        /* host address width */
	bool lp_2m, lp_1g;   /* CAP.SLLPS */
};

/* 0 and *hpa when the request is translated, else the fault reason. */
int vtd_model_translate(const struct vtd_model *u, uint16_t sid, uint64_t addr, bool write, uint64_t *hpa);
#endif
