/* lib/srat.c where a mutation check found it unguarded (issue 36, faults
 * 13-15), and boot/probe_verdict.c's topology walk (fault 21). Layouts
 * from the ACPI specification, "System Resource Affinity Table (SRAT)":
 * the 36-byte header (revision at 8, checksum at 9: all bytes sum to 0),
 * 12 reserved bytes, then structures (type, length):
 *  - type 0, Processor Local APIC/SAPIC Affinity, 16 bytes: proximity
 *    domain 7:0 at 2, APIC ID at 3, flags at 4 (bit 0 enabled), domain
 *    31:8 at 9-11 (from SRAT revision 2 on; before, reserved);
 *  - type 1, Memory Affinity, 40 bytes: domain at 2, base at 8, length
 *    at 16, flags at 28 (bit 0 enabled). */
#include "test.h"
#include "../../lib/srat.h"
#include "../../boot/probe_verdict.h"

static uint8_t s_tab[512];
static uint32_t s_len;

static void s_begin(uint8_t rev)
{
	memset(s_tab, 0, sizeof s_tab);
	memcpy(s_tab, "SRAT", 4);
	s_tab[8] = rev;
	s_len = 48;
}
static void s_lapic(uint8_t apic, uint32_t domain)
{
	uint8_t *e = s_tab + s_len;
	e[0] = 0, e[1] = 16;
	e[2] = (uint8_t)domain;
	e[3] = apic;
	e[4] = 1;
	e[9] = (uint8_t)(domain >> 8), e[10] = (uint8_t)(domain >> 16), e[11] = (uint8_t)(domain >> 24);
	s_len += 16;
}
static void s_mem(uint32_t domain, uint64_t base, uint64_t len)
{
	uint8_t *e = s_tab + s_len;
	e[0] = 1, e[1] = 40;
	memcpy(e + 2, &domain, 4);
	memcpy(e + 8, &base, 8);
	memcpy(e + 16, &len, 8);
	e[28] = 1;
	s_len += 40;
}
static struct srat_info s_info;
static void *s_room;
static int s_parse(void)
{
	memcpy(s_tab + 4, &s_len, 4);
	s_tab[9] = 0;
	uint8_t sum = 0;
	for (uint32_t i = 0; i < s_len; i++)
		sum = (uint8_t)(sum + s_tab[i]);
	s_tab[9] = (uint8_t)-sum;
	char err[160] = "";
	struct srat_counts c;
	if (srat_count(s_tab, s_len, &c, err, sizeof err)) {
		test_fail(__FILE__, __LINE__, err);
		return -1;
	}
	free(s_room);
	s_room = calloc(1, srat_bytes(&c) + 8);
	srat_place(&s_info, &c, s_room);
	int r = srat_parse(s_tab, s_len, &s_info, err, sizeof err);
	if (r)
		test_fail(__FILE__, __LINE__, err);
	return r;
}

/* Fault 13: a CPU listed twice on node 0 is one CPU (the first entry kept). */
TEST(mutant_srat_cpu_listed_twice_on_node_0_counts_once)
{
	s_begin(3);
	s_lapic(0, 0);
	s_lapic(1, 0);
	s_lapic(0, 0);
	s_lapic(2, 1);
	s_lapic(2, 0);
	CHECK_EQ(s_parse(), 0);
	CHECK_EQ(s_info.ncpus, 3);
	CHECK_EQ(s_info.ndup, 2);
	CHECK_EQ(srat_node(&s_info, 0)->ncpus, 2);
	CHECK_EQ(srat_node(&s_info, 1)->ncpus, 1);
	CHECK_EQ(srat_node_of_apic(&s_info, 2), 1);
}

/* Fault 14: domain bits 31:8 of a type 0 structure count from revision 2
 * (ACPI 3.0's SRAT) on, and are reserved in revision 1. */
TEST(mutant_srat_revision_2_reads_the_whole_lapic_domain)
{
	for (uint8_t rev = 1; rev <= 3; rev++) {
		s_begin(rev);
		s_lapic(5, 0x00020301);
		CHECK_EQ(s_parse(), 0);
		int64_t want = rev >= 2 ? 0x20301 : 0x01;
		if (srat_node_of_apic(&s_info, 5) != want) {
			char m[120];
			snprintf(m, sizeof m, "revision %u: APIC ID 5 on node 0x%llx, want 0x%llx", rev,
				 (unsigned long long)srat_node_of_apic(&s_info, 5), (unsigned long long)want);
			test_fail(__FILE__, __LINE__, m);
		}
	}
}

/* Fault 15: a memory range whose end wraps past 2^64 is dropped. */
TEST(mutant_srat_memory_range_that_wraps_is_dropped)
{
	s_begin(3);
	s_mem(0, 0, 0x80000000u);
	s_mem(1, 0xfffffffffffff000ull, 0x2000);
	s_mem(2, 0x100000000ull, ~0ull);
	CHECK_EQ(s_parse(), 0);
	CHECK_EQ(s_info.nmem, 1);
	CHECK_EQ(s_info.nnodes, 1);
	CHECK(srat_node(&s_info, 1) == NULL);
	CHECK(srat_node(&s_info, 2) == NULL);
	CHECK_EQ(srat_node(&s_info, 0)->mem, 0x80000000u);
	free(s_room);
	s_room = NULL;
}

/* Fault 21: CPUID leaves 0x1F/0xB (SDM Vol. 2A, CPUID, "Extended Topology
 * Enumeration Leaf"): the list of levels ends at a subleaf whose level
 * type (ECX[15:8]) is 0, or whose EBX[15:0] (logical processors at that
 * level) is 0; a CPU that says a level has none says nothing usable. */
TEST(mutant_probe_topology_ends_at_a_level_without_processors)
{
	uint32_t a[3] = { 1, 7, 9 }, b[3] = { 2, 0, 256 }, c[3] = { 1u << 8 | 0, 2u << 8 | 1, 5u << 8 | 2 };
	CHECK_EQ(probe_pkg_shift(a, b, c, 3), 1);          /* the core level has EBX 0: ends there */
	b[1] = 112;
	CHECK_EQ(probe_pkg_shift(a, b, c, 3), 9);
	b[0] = 0x10000;                                    /* EBX[15:0] 0, bits above set */
	CHECK_EQ(probe_pkg_shift(a, b, c, 3), -1);
}
