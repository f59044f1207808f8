/* MADT and SRAT shaped like real multi-socket Xeon servers (issue 26), and
 * the NUMA node pools (lib/nodemem.c) the per-CPU structures come from.
 *
 * Where the shapes come from (public figures; what a dump does not say is
 * this file's assumption and marked so):
 *  - SPR 2S: two Xeon Platinum 8480+ (56 cores, Hyper-Threading): 224
 *    threads, as public dmesg of such boards reports ("Allowing 224 CPUs");
 *    sub-NUMA clustering off: one node a socket.
 *  - EMR 2S: two Xeon Platinum 8592+ (64 cores, HT): 256 threads; SNC2
 *    (two dies a socket): 4 nodes.
 *  - GNR 2S: two Xeon 6980P (128 cores, HT): 512 threads; SNC3, the
 *    default on the three-compute-die parts: 6 nodes, cores split 43/43/42.
 *  - SPR 4S: four sockets of 56 cores with HT: 448 threads, one node a
 *    socket (the 448-CPU server the issue names).
 *  - GNR-SP 8S: eight sockets of 64 cores with HT: 1024 threads (the 6700P
 *    line is sold for up to eight sockets; the core count is assumed).
 * Assumed throughout: the APIC ID has the thread in bit 0, the core above
 * it, and the package from pkg_shift up (the CPUID leaf 0x1F layout, with
 * a die bit on the multi-die parts), so the later sockets of EMR, GNR and
 * the 4S/8S shapes have IDs above 255. Firmware lists every thread 0
 * before the threads 1, uses x2APIC structures (MADT type 9, SRAT type 2)
 * for IDs of 255 and above and the xAPIC ones below (ACPI specification,
 * "Processor Local x2APIC Structure"), memory of node 0 starts with the
 * 2 GiB below the PCI hole, and hot-pluggable ranges are listed per socket. */
#include "test.h"
#include "fixture.h"
#include "../../lib/acpi.h"
#include "../../lib/srat.h"
#include "../../lib/memmap.h"
#include "../../lib/nodemem.h"

/* ACPI specification: the header, the MADT and SRAT structure layouts. */
#define HDR_LEN        36
#define MADT_FIXED     44
#define SRAT_FIXED     48
#define MADT_LAPIC_LEN 8
#define MADT_X2_LEN    16
#define SRAT_LAPIC_LEN 16
#define SRAT_MEM_LEN   40
#define SRAT_X2_LEN    24
#define SRAT_GI_TYPE   5               /* Generic Initiator Affinity: skipped */
#define SRAT_GI_LEN    32
#define ENABLED        0x1
#define MEM_HOTPLUG    0x2
#define XAPIC_MAX      254             /* IDs above: x2APIC structures */

struct shape {
	const char *name;
	uint32_t sockets, cores, threads;
	uint32_t pkg_shift;
	uint32_t nodes_per_socket;
	uint32_t gib_per_node;
	uint32_t hotplug_gib;              /* per socket, 0: none */
	uint32_t disabled;                 /* absent CPUs listed disabled */
	bool initiator;                    /* a Generic Initiator structure too */
};

static const struct shape spr2s = { "SPR 2S", 2, 56, 2, 7, 1, 256, 512, 0, false };
static const struct shape emr2s = { "EMR 2S", 2, 64, 2, 8, 2, 128, 0, 4, false };
static const struct shape gnr2s = { "GNR 2S", 2, 128, 2, 9, 3, 128, 1024, 0, true };
static const struct shape spr4s = { "SPR 4S", 4, 56, 2, 7, 1, 128, 256, 8, false };
static const struct shape gnr8s = { "GNR-SP 8S", 8, 64, 2, 8, 1, 64, 0, 0, false };

/* The model: what the tables say, tallied while they are built. */
#define MAX_NODES 32
static struct {
	uint32_t ncpus, high, x2, disabled;
	uint32_t node_cpus[MAX_NODES];
	uint64_t node_mem[MAX_NODES], node_hot[MAX_NODES];
	uint32_t nmem;
} want;

static uint8_t *madt, *srat, *xsdt, *rsdp;
static uint32_t madt_len, srat_len;

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The header's length and checksum (all bytes sum to 0). */
static void seal(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	t[9] = 0;
	uint8_t s = 0;
	for (uint32_t i = 0; i < len; i++)
		s = (uint8_t)(s + t[i]);
	t[9] = (uint8_t)-s;
}

static uint32_t apic_id(const struct shape *sh, uint32_t pkg, uint32_t core, uint32_t t)
{
	return pkg << sh->pkg_shift | core << 1 | t;
}

static uint32_t node_of(const struct shape *sh, uint32_t pkg, uint32_t core)
{
	return pkg * sh->nodes_per_socket + core * sh->nodes_per_socket / sh->cores;
}

static void cpu_entries(uint32_t id, uint32_t uid, uint32_t node, bool on)
{
	uint8_t *m = madt + madt_len, *s = srat + srat_len;
	if (id > XAPIC_MAX) {
		m[0] = 9; m[1] = MADT_X2_LEN;
		put32(m + 4, id); put32(m + 8, on ? ENABLED : 0); put32(m + 12, uid);
		madt_len += MADT_X2_LEN;
		s[0] = 2; s[1] = SRAT_X2_LEN;
		put32(s + 4, node); put32(s + 8, id); put32(s + 12, on ? ENABLED : 0);
		srat_len += SRAT_X2_LEN;
	} else {
		m[0] = 0; m[1] = MADT_LAPIC_LEN;
		m[2] = (uint8_t)uid; m[3] = (uint8_t)id; put32(m + 4, on ? ENABLED : 0);
		madt_len += MADT_LAPIC_LEN;
		s[0] = 0; s[1] = SRAT_LAPIC_LEN;
		s[2] = (uint8_t)node; s[3] = (uint8_t)id; put32(s + 4, on ? ENABLED : 0);
		s[9] = (uint8_t)(node >> 8); s[10] = (uint8_t)(node >> 16); s[11] = (uint8_t)(node >> 24);
		srat_len += SRAT_LAPIC_LEN;
	}
	if (!on) {
		want.disabled++;
		return;
	}
	want.ncpus++;
	want.high += id > 255;
	want.x2 += id > XAPIC_MAX;
	want.node_cpus[node]++;
}

static void mem_entry(uint32_t node, uint64_t base, uint64_t len, uint32_t flags)
{
	uint8_t *s = srat + srat_len;
	s[0] = 1; s[1] = SRAT_MEM_LEN;
	put32(s + 2, node); put64(s + 8, base); put64(s + 16, len); put32(s + 28, flags);
	srat_len += SRAT_MEM_LEN;
	if (!(flags & ENABLED))
		return;
	want.nmem++;
	if (flags & MEM_HOTPLUG)
		want.node_hot[node] += len;
	else
		want.node_mem[node] += len;
}

static void build(const struct shape *sh)
{
	uint32_t n = sh->sockets * sh->cores * sh->threads + sh->disabled;
	uint32_t nodes = sh->sockets * sh->nodes_per_socket;
	memset(&want, 0, sizeof want);
	free(madt); free(srat); free(xsdt); free(rsdp);
	madt = calloc(1, MADT_FIXED + n * MADT_X2_LEN);
	srat = calloc(1, SRAT_FIXED + n * SRAT_X2_LEN + (2 * nodes + 2 * sh->sockets + 2) * SRAT_MEM_LEN + SRAT_GI_LEN);
	madt_len = MADT_FIXED;
	srat_len = SRAT_FIXED;
	put32(madt + HDR_LEN, 0xfee00000);
	put32(srat + HDR_LEN, 1);                     /* reserved, 1 for compatibility */

	uint32_t uid = 0, last = 0;
	for (uint32_t t = 0; t < sh->threads; t++)
		for (uint32_t p = 0; p < sh->sockets; p++)
			for (uint32_t c = 0; c < sh->cores; c++) {
				last = apic_id(sh, p, c, t);
				cpu_entries(last, uid++, node_of(sh, p, c), true);
			}
	for (uint32_t d = 0; d < sh->disabled; d++)
		cpu_entries(apic_id(sh, sh->sockets, d, 0), uid++, 0, false);

	/* Memory: node 0 also has the 2 GiB below the PCI hole; then each
	 * node's from 4 GiB up; hot-plug ranges per socket above it all. */
	uint64_t at = 4ull << 30;
	mem_entry(0, 0, 2ull << 30, ENABLED);
	for (uint32_t k = 0; k < nodes; k++, at += (uint64_t)sh->gib_per_node << 30)
		mem_entry(k, at, (uint64_t)sh->gib_per_node << 30, ENABLED);
	for (uint32_t p = 0; sh->hotplug_gib && p < sh->sockets; p++, at += (uint64_t)sh->hotplug_gib << 30)
		mem_entry(p * sh->nodes_per_socket, at, (uint64_t)sh->hotplug_gib << 30, ENABLED | MEM_HOTPLUG);
	mem_entry(1, at, 1ull << 30, 0);              /* disabled: dropped */
	if (sh->initiator) {
		uint8_t *g = srat + srat_len;
		g[0] = SRAT_GI_TYPE; g[1] = SRAT_GI_LEN; put32(g + 4, 1);
		srat_len += SRAT_GI_LEN;
	}
	seal(madt, "APIC", madt_len, 5);
	seal(srat, "SRAT", srat_len, 3);

	xsdt = calloc(1, HDR_LEN + 16);
	put64(xsdt + HDR_LEN, (uintptr_t)madt);
	put64(xsdt + HDR_LEN + 8, (uintptr_t)srat);
	seal(xsdt, "XSDT", HDR_LEN + 16, 1);
	rsdp = calloc(1, 36);
	memcpy(rsdp, "RSD PTR ", 8);
	rsdp[15] = 2;
	put32(rsdp + 20, 36);
	put64(rsdp + 24, (uintptr_t)xsdt);
	uint8_t s = 0;
	for (int i = 0; i < 20; i++)
		s = (uint8_t)(s + rsdp[i]);
	rsdp[8] = (uint8_t)-s;
	s = 0;
	for (int i = 0; i < 36; i++)
		s = (uint8_t)(s + rsdp[i]);
	rsdp[32] = (uint8_t)-s;
	(void)last;
}

static struct acpi_info acpi;
static struct srat_info si;
static void *room;

/* acpi_parse, then the SRAT it found as the hypervisor loads it. */
static void parse_both(const struct shape *sh)
{
	char err[200] = "";
	build(sh);
	CHECK_EQ(acpi_parse((uintptr_t)rsdp, &acpi, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_EQ(acpi.srat, (uintptr_t)srat);
	struct srat_counts c;
	CHECK_EQ(srat_count(srat, srat_len, &c, err, sizeof err), 0);
	free(room);
	room = malloc(srat_bytes(&c));
	srat_place(&si, &c, room);
	CHECK_EQ(srat_parse(srat, srat_len, &si, err, sizeof err), 0);
}

static void check_shape(const struct shape *sh, const char *file)
{
	parse_both(sh);
	/* HV_SRAT_CORPUS=test/fuzz/corpus/srat writes the SRAT there, for the fuzzer. */
	fixture_write_corpus("HV_SRAT_CORPUS", file, srat, srat_len);
	printf("    %s: MADT %u bytes, %u CPUs (%u with IDs above 255, %u x2APIC entries, %u disabled); SRAT %u bytes, %u nodes\n",
	       sh->name, madt_len, want.ncpus, want.high, want.x2, want.disabled, srat_len, si.nnodes);
	CHECK_EQ(acpi.ncpus, want.ncpus);
	CHECK_EQ(acpi.cpu_room, want.ncpus + 1);      /* one more for phantomcpu= */
	uint32_t high = 0, x2 = 0;
	for (uint32_t i = 0; i < acpi.ncpus; i++) {
		high += acpi.cpu[i].apic_id > 255;
		x2 += acpi.cpu[i].x2apic_entry;
	}
	CHECK_EQ(high, want.high);
	CHECK_EQ(x2, want.x2);
	CHECK(!strstr(test_log(), "ignored"));

	uint32_t nodes = sh->sockets * sh->nodes_per_socket;
	CHECK_EQ(si.ncpus, want.ncpus);
	CHECK_EQ(si.nnodes, nodes);
	CHECK_EQ(si.nmem, want.nmem);
	CHECK_EQ(si.ndisabled, want.disabled + 1);    /* the CPUs and one memory range */
	CHECK_EQ(si.nother, sh->initiator ? 1 : 0);
	for (uint32_t k = 0; k < nodes; k++) {
		const struct srat_node *n = srat_node(&si, k);
		CHECK(n != NULL);
		if (!n)
			continue;
		CHECK_EQ(n->ncpus, want.node_cpus[k]);
		CHECK_EQ(n->mem, want.node_mem[k]);
		CHECK_EQ(n->hotplug, want.node_hot[k]);
	}
	/* Every CPU of the MADT has the node the model gave it. */
	uint32_t wrong = 0;
	for (uint32_t p = 0; p < sh->sockets; p++)
		for (uint32_t c = 0; c < sh->cores; c++)
			for (uint32_t t = 0; t < sh->threads; t++)
				wrong += srat_node_of_apic(&si, apic_id(sh, p, c, t)) != (int64_t)node_of(sh, p, c);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(srat_node_of_apic(&si, apic_id(sh, sh->sockets, 0, 0)), -1);   /* disabled */
	test_log_clear();
	srat_print(&si);
	char head[64];
	snprintf(head, sizeof head, "SRAT: %u nodes, %u CPUs", nodes, want.ncpus);
	CHECK_CONTAINS(test_log(), head);
}

TEST(numa_spr_2s) { check_shape(&spr2s, "server-spr-2s"); CHECK_CONTAINS(test_log(), "node 1: 112 CPUs 256 GiB (+512 GiB hot-plug)"); }
TEST(numa_emr_2s) { check_shape(&emr2s, "server-emr-2s"); CHECK_CONTAINS(test_log(), "node 3: 64 CPUs 128 GiB"); }
TEST(numa_gnr_2s) { check_shape(&gnr2s, "server-gnr-2s"); CHECK_CONTAINS(test_log(), "node 2: 84 CPUs 128 GiB"); }
TEST(numa_spr_4s_448) { check_shape(&spr4s, "server-spr-4s"); CHECK_EQ(acpi.ncpus, 448); }
TEST(numa_gnr_8s_1024) { check_shape(&gnr8s, "server-gnr-8s"); CHECK_EQ(acpi.ncpus, 1024); }

/* The two-socket GNR MADT with every socket listed twice as big: 1024
 * x2APIC-range entries, half of them for absent CPUs (disabled): all 512
 * kept, none dropped, and 24 IOAPICs more than the old cap of 16. */
TEST(numa_madt_1024_entries_24_ioapics)
{
	struct shape sh = gnr2s;
	sh.disabled = 512;
	build(&sh);
	uint8_t *big = calloc(1, madt_len + 24 * 12);
	memcpy(big, madt, madt_len);
	for (uint32_t i = 0; i < 24; i++) {
		uint8_t *e = big + madt_len + i * 12;
		e[0] = 1; e[1] = 12; e[2] = (uint8_t)(8 + i);
		put32(e + 4, 0xfec00000 + i * 0x1000); put32(e + 8, i * 24);
	}
	seal(big, "APIC", madt_len + 24 * 12, 5);
	free(madt);
	madt = big;
	put64(xsdt + HDR_LEN, (uintptr_t)madt);
	seal(xsdt, "XSDT", HDR_LEN + 16, 1);
	char err[200] = "";
	CHECK_EQ(acpi_parse((uintptr_t)rsdp, &acpi, err, sizeof err), 0);
	CHECK_EQ(want.ncpus + want.disabled, 1024);
	CHECK_EQ(acpi.ncpus, 512);
	CHECK_EQ(acpi.nioapics, 24);
	CHECK_EQ(acpi.ioapic[23].gsi_base, 23 * 24);
	CHECK_EQ(acpi.max_apic_id, apic_id(&sh, 1, 127, 1));
	CHECK(!strstr(test_log(), "ignored"));
}

/* SRAT faults are refused by name (entries of the catalog of bad inputs). */
TEST(numa_srat_bad)
{
	char err[200];
	struct srat_counts c;
	build(&spr2s);
	srat[SRAT_FIXED + 1] = 7;                     /* a type 0 of 7 bytes */
	seal(srat, "SRAT", srat_len, 3);
	CATALOG("SRAT: a processor affinity structure of 7 bytes", srat_count(srat, srat_len, &c, err, sizeof err), err,
		"offset 0x30 (type 0) too short (length 7 < 16)");
	srat[SRAT_FIXED + 1] = 0;
	seal(srat, "SRAT", srat_len, 3);
	CATALOG("SRAT: a structure of length 0", srat_count(srat, srat_len, &c, err, sizeof err), err,
		"offset 0x30 (type 0) has length 0");
	srat[SRAT_FIXED + 1] = SRAT_LAPIC_LEN;
	seal(srat, "SRAT", srat_len, 3);
	srat[20] ^= 1;
	CATALOG("SRAT: checksum off by one", srat_count(srat, srat_len, &c, err, sizeof err), err, "SRAT: checksum bad");
	seal(srat, "SRAT", srat_len, 3);
	CATALOG("SRAT: length one byte beyond readable memory", srat_count(srat, srat_len - 1, &c, err, sizeof err), err,
		"runs outside memory");
	seal(srat, "SRAT", SRAT_FIXED - 1, 3);
	CATALOG("SRAT: length 47", srat_count(srat, srat_len, &c, err, sizeof err), err, "truncated (length 47 < 48)");
	/* Room short of the table: refused, never overrun. */
	seal(srat, "SRAT", srat_len, 3);
	CHECK_EQ(srat_count(srat, srat_len, &c, err, sizeof err), 0);
	c.ncpus--;
	void *r = malloc(srat_bytes(&c));
	srat_place(&si, &c, r);
	CATALOG("SRAT: room for one CPU fewer than it lists", srat_parse(srat, srat_len, &si, err, sizeof err), err,
		"room for 223 CPUs");
	free(r);
}

/* Revision 1 tables: a type 0 structure's domain is its low 8 bits only. */
TEST(numa_srat_rev1_domain)
{
	char err[200];
	build(&spr2s);
	srat[SRAT_FIXED + 9] = 0x12;                  /* bits 15:8 of the first CPU's domain */
	seal(srat, "SRAT", srat_len, 1);
	struct srat_counts c;
	CHECK_EQ(srat_count(srat, srat_len, &c, err, sizeof err), 0);
	void *r = malloc(srat_bytes(&c));
	srat_place(&si, &c, r);
	CHECK_EQ(srat_parse(srat, srat_len, &si, err, sizeof err), 0);
	CHECK_EQ(srat_node_of_apic(&si, 0), 0);
	seal(srat, "SRAT", srat_len, 3);
	srat_place(&si, &c, r);
	CHECK_EQ(srat_parse(srat, srat_len, &si, err, sizeof err), 0);
	CHECK_EQ(srat_node_of_apic(&si, 0), 0x1200);
	free(r);
}

/* ---- node pools ---- */

#define POOL_RAM  (8u << 20)
#define HEAP_RAM  (1u << 20)

/* "Physical" RAM for the pools and a heap: real buffers (identity map). */
static uint8_t *ram, *heap;
static struct memmap mm;

/* Two nodes splitting ram in halves; node 2 names RAM the memory map does
 * not have as usable (reserved); node 3 only a hot-pluggable range. */
static void pool_setup(uint64_t per_cpu)
{
	if (!ram) {
		ram = aligned_alloc(1u << 20, POOL_RAM);
		heap = aligned_alloc(4096, HEAP_RAM);
	}
	uint64_t r = (uintptr_t)ram, half = POOL_RAM / 2;
	nodemem_reset();
	page_alloc_init((uintptr_t)heap, HEAP_RAM);
	memset(&mm, 0, sizeof mm);
	memmap_add(&mm, r, POOL_RAM, MEM_USABLE);
	memmap_add(&mm, r + POOL_RAM, 1u << 20, MEM_RESERVED);
	memmap_normalize(&mm);

	struct srat_counts c = { .ncpus = 8, .nmem = 4 };
	free(room);
	room = malloc(srat_bytes(&c));
	srat_place(&si, &c, room);
	si.ncpus = 8;
	for (uint32_t i = 0; i < 8; i++)
		si.cpu[i] = (struct srat_cpu){ .apic_id = i, .node = i / 2 };
	si.nmem = 4;
	si.mem[0] = (struct srat_mem){ .base = r, .len = half, .node = 0 };
	si.mem[1] = (struct srat_mem){ .base = r + half, .len = half, .node = 1 };
	si.mem[2] = (struct srat_mem){ .base = r + POOL_RAM, .len = 1u << 20, .node = 2 };
	si.mem[3] = (struct srat_mem){ .base = r, .len = POOL_RAM, .node = 3, .hotplug = true };
	si.nnodes = 4;
	for (uint32_t k = 0; k < 4; k++)
		si.node[k] = (struct srat_node){ .id = k, .ncpus = 2 };
	nodemem_srat = &si;
	CHECK_EQ(nodemem_init(&mm, &si, per_cpu), 2);
}

static bool in(const void *p, uint64_t base, uint64_t len)
{
	return (uintptr_t)p >= base && (uintptr_t)p < base + len;
}

TEST(numa_pools_local_and_fallback)
{
	uint64_t r = (uintptr_t)ram, half = POOL_RAM / 2;
	pool_setup(64 << 10);
	r = (uintptr_t)ram;
	CHECK_CONTAINS(test_log(), "node(s) 2 3");
	CHECK(nodemem_has_pool(0) && nodemem_has_pool(1) && !nodemem_has_pool(2) && !nodemem_has_pool(3));
	CHECK(!nodemem_has_pool(-1));
	/* The pools are the hypervisor's now. */
	CHECK(memmap_total(&mm, MEM_HV) == 2 * 128 * 1024);
	for (uint32_t cpu = 0; cpu < 4; cpu++) {
		int64_t node = nodemem_node_of(cpu);
		CHECK_EQ(node, cpu / 2);
		for (int k = 0; k < 4; k++) {
			uint8_t *p = page_alloc_node(node, 4);
			CHECK(in(p, r + node * half, half));
			CHECK(memmap_type_at(&mm, (uintptr_t)p) == MEM_HV);
			CHECK_EQ(p[0] | p[4095], 0);
			p[0] = 0xaa;
		}
	}
	CHECK_EQ(nodemem_fallback_pages(), 0);
	/* Node 0's pool (128 KiB) is full: its next pages come from the heap. */
	void *over = page_alloc_node(0, 1);
	CHECK(in(over, (uintptr_t)heap, HEAP_RAM));
	CHECK_EQ(nodemem_fallback_pages(), 1);
	/* Nodes 2 (no usable RAM) and 3 (hot-plug only) have no pool. */
	CHECK(in(page_alloc_node(nodemem_node_of(4), 2), (uintptr_t)heap, HEAP_RAM));
	CHECK(in(page_alloc_node(nodemem_node_of(7), 1), (uintptr_t)heap, HEAP_RAM));
	CHECK_EQ(nodemem_fallback_pages(), 4);
	/* A CPU the SRAT does not name: the heap, not counted as a fallback. */
	CHECK_EQ(nodemem_node_of(99), -1);
	CHECK(in(page_alloc_node(-1, 1), (uintptr_t)heap, HEAP_RAM));
	CHECK_EQ(nodemem_fallback_pages(), 4);
	nodemem_print();
	CHECK_CONTAINS(test_log(), "numa: node 1 pool: 128 of 128 KiB used");
	nodemem_reset();
	page_alloc_init(0, 0);
}

/* No SRAT and a heap too small: a pool for any CPU takes the per-CPU pages. */
TEST(numa_pool_any)
{
	pool_setup(64 << 10);
	nodemem_reset();
	page_alloc_init((uintptr_t)heap, HEAP_RAM);
	CHECK(nodemem_add_any(&mm, 3u << 20, UINT64_MAX));
	CHECK_EQ(nodemem_node_of(0), -1);
	void *p = page_alloc_node(-1, 16);
	CHECK(in(p, (uintptr_t)ram, POOL_RAM));
	CHECK_EQ(memmap_type_at(&mm, (uintptr_t)p), MEM_HV);
	CHECK_EQ(nodemem_fallback_pages(), 0);
	nodemem_reset();
	page_alloc_init(0, 0);
}
