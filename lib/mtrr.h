/* Memory types from the variable-range MTRRs (SDM Vol. 3A, "Memory Type
 * Range Registers"), for EPT's memory-type fields. The fixed ranges below
 * 1 MiB are left to the firmware memory map. */
#ifndef LIB_MTRR_H
#define LIB_MTRR_H
#include "types.h"

#define MTRR_UC 0
#define MTRR_WC 1
#define MTRR_WT 4
#define MTRR_WP 5
#define MTRR_WB 6
#define MTRR_MIXED (-1)      /* the region is not of one type */
#define MTRR_MAX_VAR 32

struct mtrr_state {
	bool enabled;            /* IA32_MTRR_DEF_TYPE.E */
	uint8_t def_type;
	uint32_t nvar;
	struct { uint64_t base, mask; uint8_t type; } var[MTRR_MAX_VAR];   /* valid ranges only */
};

#ifndef HV_HOST_TEST
/* Reads the MTRRs of the calling CPU; enabled=false when there are none. */
void mtrr_read(struct mtrr_state *s);
#endif
/* The effective type of [a, a+size), size a power of two and a aligned to it;
 * MTRR_MIXED when ranges cover only part of it. Overlaps resolve as the SDM
 * says: UC wins, WT beats WB, anything else undefined is taken as UC. */
int mtrr_region_type(const struct mtrr_state *s, uint64_t a, uint64_t size);
void mtrr_print(const struct mtrr_state *s);
#endif
