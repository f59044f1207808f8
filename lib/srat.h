/* The ACPI SRAT (ACPI specification, "System Resource Affinity Table"): the
 * proximity domain (NUMA node) of each CPU (Processor Local APIC/SAPIC
 * Affinity, type 0; Processor Local x2APIC Affinity, type 2) and of each
 * memory range (Memory Affinity, type 1). Other structures (GICC, GIC ITS,
 * Generic Initiator, ...) are skipped by their length; disabled entries are
 * counted and dropped. As lib/dmar.h: srat_count walks and checks, the
 * caller finds srat_bytes of room, srat_place points into it, srat_parse
 * fills it; no fixed cap. */
#ifndef LIB_SRAT_H
#define LIB_SRAT_H
#include "types.h"

struct srat_cpu {
	uint32_t apic_id;
	uint32_t node;               /* proximity domain */
	bool x2apic_entry;           /* from a type 2 structure */
};

struct srat_mem {
	uint64_t base, len;
	uint32_t node;
	bool hotplug;                /* Hot Pluggable: may be absent now */
	bool nonvolatile;
};

/* A proximity domain named by an enabled CPU or memory entry. */
struct srat_node {
	uint32_t id;
	uint32_t ncpus;
	uint64_t mem;                /* bytes in its enabled ranges, hot-pluggable ones left out */
	uint64_t hotplug;            /* bytes in its hot-pluggable ranges */
};

/* Enabled entries: what srat_parse needs room for (nodes: at most cpus + mems). */
struct srat_counts {
	uint32_t ncpus, nmem;
};

struct srat_info {
	uint8_t revision;
	uint32_t ncpus, nmem, nnodes;
	uint32_t ndisabled;          /* type 0-2 entries without the Enabled flag */
	uint32_t nother;             /* structures of other types, skipped */
	uint32_t ndup;               /* CPUs listed again (the first is kept) */
	struct srat_counts room;
	struct srat_cpu *cpu;
	struct srat_mem *mem;
	struct srat_node *node;      /* sorted by id */
};

/* Checks the SRAT at t (avail bytes readable): signature, length, checksum,
 * every structure's length; counts its enabled CPU and memory entries.
 * Returns 0, or -1 with a message naming the fault. */
int srat_count(const uint8_t *t, uint64_t avail, struct srat_counts *c, char *err, size_t errlen);
size_t srat_bytes(const struct srat_counts *c);
/* Zeroes *s and points its arrays into buf (srat_bytes(c), 8-byte aligned). */
void srat_place(struct srat_info *s, const struct srat_counts *c, void *buf);
/* Fills *out (room from srat_place). Returns 0, or -1 with a message. */
int srat_parse(const uint8_t *t, uint64_t avail, struct srat_info *out, char *err, size_t errlen);

/* The node of the CPU with this APIC ID, or -1 when the SRAT does not name it. */
int64_t srat_node_of_apic(const struct srat_info *s, uint32_t apic_id);
/* The node's entry, or NULL. */
const struct srat_node *srat_node(const struct srat_info *s, uint32_t id);
/* One line at info level: the nodes, CPUs and memory of each. */
void srat_print(const struct srat_info *s);
#endif
