/* The ACPI DMAR table (Intel VT-d specification, "DMA Remapping Reporting
 * Structure"): the remapping hardware units (DRHD), reserved memory regions
 * (RMRR), root ports with ATS (ATSR), the units' proximity domains (RHSA),
 * the SoC-integrated ATC devices (SATC), their device scopes, and the count
 * of ANDD structures. A pure parser: bytes in, a summary out, with no fixed
 * cap: dmar_count() walks and checks the table and counts what it holds,
 * the caller finds room for that (dmar_bytes, dmar_place), dmar_parse()
 * fills it. */
#ifndef LIB_DMAR_H
#define LIB_DMAR_H
#include "types.h"

/* (device, function) pairs kept per scope. A longer path is a PCIe
 * hierarchy more than 8 bridges deep below the start bus (exotic: real
 * DMARs name root ports and integrated endpoints, paths of 1 or 2): it is
 * kept cut, marked, named in a warning, and never matched as covering a
 * device (dmar_unit_of). */
#define DMAR_MAX_PATH   8

/* Header flags (offset 37). */
#define DMAR_F_INTR_REMAP       BIT(0)
#define DMAR_F_X2APIC_OPT_OUT   BIT(1)
#define DMAR_F_DMA_CTRL_OPT_IN  BIT(2)

/* Remapping structure types. */
enum dmar_type { DMAR_DRHD = 0, DMAR_RMRR = 1, DMAR_ATSR = 2, DMAR_RHSA = 3, DMAR_ANDD = 4, DMAR_SATC = 5 };
/* Device scope types. */
enum dmar_scope_type {
	DMAR_SCOPE_ENDPOINT = 1, DMAR_SCOPE_BRIDGE = 2, DMAR_SCOPE_IOAPIC = 3,
	DMAR_SCOPE_HPET = 4, DMAR_SCOPE_ACPI = 5,
};
#define DMAR_DRHD_INCLUDE_PCI_ALL BIT(0)
#define DMAR_ATSR_ALL_PORTS       BIT(0)
#define DMAR_SATC_ATC_REQUIRED    BIT(0)

struct dmar_scope {
	uint8_t type;                /* enum dmar_scope_type */
	uint8_t enum_id;             /* IOAPIC ID, HPET number, ACPI device number */
	uint8_t bus;                 /* start bus */
	uint8_t npath;               /* path entries kept: at most DMAR_MAX_PATH */
	bool cut;                    /* the table's path was longer: never matched */
	uint8_t path[DMAR_MAX_PATH][2];  /* device, function */
};

/* A structure's scopes: scope[first .. first + n - 1] of struct dmar_info. */
struct dmar_drhd {
	uint64_t base;               /* register base, 4 KiB aligned */
	uint16_t segment;
	uint8_t flags;               /* DMAR_DRHD_INCLUDE_PCI_ALL */
	uint8_t size;                /* register set: 2^size pages (0 in older tables: one page) */
	uint32_t first, n;
};

struct dmar_rmrr {
	uint64_t base, limit;        /* [base, limit], limit inclusive */
	uint16_t segment;
	uint32_t first, n;
};

struct dmar_atsr {
	uint8_t flags;               /* DMAR_ATSR_ALL_PORTS */
	uint16_t segment;
	uint32_t first, n;
};

struct dmar_rhsa {
	uint64_t base;               /* the DRHD's register base */
	uint32_t node;               /* its proximity domain (SRAT) */
};

struct dmar_satc {
	uint8_t flags;               /* DMAR_SATC_ATC_REQUIRED */
	uint16_t segment;
	uint32_t first, n;
};

/* How many of each the table holds: what dmar_parse needs room for. */
struct dmar_counts {
	uint32_t ndrhd, nrmrr, natsr, nrhsa, nsatc, nscopes;
};

struct dmar_info {
	uint8_t haw;                 /* host address width in bits (field + 1) */
	uint8_t flags;
	uint8_t revision;
	uint32_t ndrhd, nrmrr, natsr, nrhsa, nsatc, nandd, nscopes;
	uint32_t nunknown;           /* structures of later types, skipped as the specification asks */
	uint64_t unknown_types;      /* bit t: a structure of type t (< 64) was skipped */
	uint32_t ncut;               /* scopes whose path was longer than DMAR_MAX_PATH */
	/* Room, from dmar_place (or set by hand): arrays of room.n* entries. */
	struct dmar_counts room;
	struct dmar_drhd *drhd;
	struct dmar_rmrr *rmrr;
	struct dmar_atsr *atsr;
	struct dmar_rhsa *rhsa;
	struct dmar_satc *satc;
	struct dmar_scope *scope;
};

/* Checks the DMAR at t, of which avail bytes may be read, as dmar_parse
 * does, and counts its structures and scopes into *c. Returns 0, or -1 with
 * the message dmar_parse would give. */
int dmar_count(const uint8_t *t, uint64_t avail, struct dmar_counts *c, char *err, size_t errlen);
/* The bytes dmar_place carves for c (8-byte aligned arrays). */
size_t dmar_bytes(const struct dmar_counts *c);
/* Zeroes *d and points its arrays into buf (dmar_bytes(c) bytes, 8-byte
 * aligned), with room for c. */
void dmar_place(struct dmar_info *d, const struct dmar_counts *c, void *buf);

/* Parses the DMAR at t into *out, whose arrays and room the caller set
 * (dmar_place); the counts and flags are reset first. Checks the signature,
 * the length against avail and the fixed part, the checksum, every
 * structure's length against its type and the table, every scope's length
 * and path, DRHD bases, RMRR ranges, INCLUDE_PCI_ALL last in its segment,
 * and that a DRHD exists. Returns 0, or -1 with a message naming the
 * structure and the fault ("DMAR: structure 2 (RMRR) at offset 0x60: limit
 * 0xfff below base 0x2000"), or saying the room was short. */
int dmar_parse(const uint8_t *t, uint64_t avail, struct dmar_info *out, char *err, size_t errlen);

/* The DRHD (index) that remaps the device a scope names on segment seg: the
 * DRHD of that segment whose scope names it (an endpoint or IOAPIC/HPET/ACPI
 * device by the same path or ID) or a bridge above it, else the segment's
 * INCLUDE_PCI_ALL DRHD; -1 when no unit covers it. */
int dmar_unit_of(const struct dmar_info *d, uint16_t seg, const struct dmar_scope *dev);
/* The same, but only a unit whose own scope names the device (or a bridge
 * above it); -1 where only INCLUDE_PCI_ALL would take it: the caller does
 * not know the unit and acts on every unit of the segment. */
int dmar_unit_exact(const struct dmar_info *d, uint16_t seg, const struct dmar_scope *dev);

/* Warns of every segment without an INCLUDE_PCI_ALL unit (devices outside
 * its DRHDs' scopes are not remapped there) and names every device an RMRR,
 * ATSR or SATC names that no unit covers. Returns how many it named. */
uint32_t dmar_check_coverage(const struct dmar_info *d);

/* Logs the table at info level, and in one warning each: structures of
 * later types skipped, paths cut, RHSAs naming no unit. */
void dmar_print(const struct dmar_info *d);
#endif
