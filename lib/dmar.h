/* The ACPI DMAR table (Intel VT-d specification, "DMA Remapping Reporting
 * Structure"): the remapping hardware units (DRHD), reserved memory regions
 * (RMRR), root ports with ATS (ATSR), their device scopes, and the counts of
 * RHSA and ANDD structures.  A pure parser: bytes in, a summary out. */
#ifndef LIB_DMAR_H
#define LIB_DMAR_H
#include "types.h"

#define DMAR_MAX_DRHD   16
#define DMAR_MAX_RMRR   32
#define DMAR_MAX_ATSR   16
#define DMAR_MAX_SCOPES 128
#define DMAR_MAX_PATH   8            /* (device, function) pairs kept per scope */

/* Header flags (offset 37). */
#define DMAR_F_INTR_REMAP       BIT(0)
#define DMAR_F_X2APIC_OPT_OUT   BIT(1)
#define DMAR_F_DMA_CTRL_OPT_IN  BIT(2)

/* Remapping structure types. */
enum dmar_type { DMAR_DRHD = 0, DMAR_RMRR = 1, DMAR_ATSR = 2, DMAR_RHSA = 3, DMAR_ANDD = 4 };
/* Device scope types. */
enum dmar_scope_type {
	DMAR_SCOPE_ENDPOINT = 1, DMAR_SCOPE_BRIDGE = 2, DMAR_SCOPE_IOAPIC = 3,
	DMAR_SCOPE_HPET = 4, DMAR_SCOPE_ACPI = 5,
};
#define DMAR_DRHD_INCLUDE_PCI_ALL BIT(0)
#define DMAR_ATSR_ALL_PORTS       BIT(0)

struct dmar_scope {
	uint8_t type;                /* enum dmar_scope_type */
	uint8_t enum_id;             /* IOAPIC ID, HPET number, ACPI device number */
	uint8_t bus;                 /* start bus */
	uint8_t npath;               /* path entries (kept: at most DMAR_MAX_PATH) */
	uint8_t path[DMAR_MAX_PATH][2];  /* device, function */
};

/* A structure's scopes: scope[first .. first + n - 1] of struct dmar_info. */
struct dmar_drhd {
	uint64_t base;               /* register base, 4 KiB aligned */
	uint16_t segment;
	uint8_t flags;               /* DMAR_DRHD_INCLUDE_PCI_ALL */
	uint8_t size;                /* register set: 2^size pages (0 in older tables: one page) */
	uint16_t first, n;
};

struct dmar_rmrr {
	uint64_t base, limit;        /* [base, limit], limit inclusive */
	uint16_t segment;
	uint16_t first, n;
};

struct dmar_atsr {
	uint8_t flags;               /* DMAR_ATSR_ALL_PORTS */
	uint16_t segment;
	uint16_t first, n;
};

struct dmar_info {
	uint8_t haw;                 /* host address width in bits (field + 1) */
	uint8_t flags;
	uint8_t revision;
	uint32_t ndrhd, nrmrr, natsr, nrhsa, nandd, nunknown, nscopes;
	struct dmar_drhd drhd[DMAR_MAX_DRHD];
	struct dmar_rmrr rmrr[DMAR_MAX_RMRR];
	struct dmar_atsr atsr[DMAR_MAX_ATSR];
	struct dmar_scope scope[DMAR_MAX_SCOPES];
};

/* Parses the DMAR at t, of which avail bytes may be read.  Checks the
 * signature, the length against avail and the fixed part, the checksum,
 * every structure's length against its type and the table, every scope's
 * length and path, DRHD bases, RMRR ranges, and that a DRHD exists.
 * Returns 0, or -1 with a message naming the structure and the fault
 * ("DMAR: structure 2 (RMRR) at offset 0x60: limit 0xfff below base 0x2000"). */
int dmar_parse(const uint8_t *t, uint64_t avail, struct dmar_info *out, char *err, size_t errlen);

/* Logs the table at info level. */
void dmar_print(const struct dmar_info *d);
#endif
