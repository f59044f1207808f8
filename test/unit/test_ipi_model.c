/* Host tests for ipi/ipi.c and apic/pi.c against the model in ipi_model.h:
 * every expectation comes from the SDM's ICR and posted-interrupt layouts
 * and KVM's PV send-IPI ABI as written out in ipi_model.h and sdm_pid.h.
 * Each case also states its outcome by hand (vCPU masks, return values), so
 * the model itself is checked too. self is always a vCPU index. */
#include "test.h"
#include "ipi_model.h"
#include "sdm_pid.h"
#include "../../apic/pi.h"

/* ---- apic/pi.c against the SDM's bytes ---- */

TEST(ipi_model_pi_desc_bytes)
{
	uint8_t *raw = aligned_alloc(64, 3 * 64), want[64];
	memset(raw, 0xcc, 3 * 64);
	pi_desc_init((struct pi_desc *)(void *)(raw + 64), 0xf2, 0x12345678);
	sdm_pid_init(want, 0xf2, 0x12345678);
	for (int i = 0; i < 64; i++)
		if (raw[64 + i] != want[i])
			printf("    pi_desc_init: byte %d is 0x%02x, the SDM layout wants 0x%02x\n", i, raw[64 + i], want[i]);
	CHECK(!memcmp(raw + 64, want, 64));
	CHECK_EQ(raw[64 + 34], 0xf2);                   /* NV, bits 279:272 */
	CHECK_EQ(sdm_pid_ndst(raw + 64), 0x12345678);   /* NDST, bits 319:288 */
	for (int i = 0; i < 64; i++)
		CHECK(raw[i] == 0xcc && raw[128 + i] == 0xcc);

	/* pi_post: the PIR bit (bit v of bytes 31:0), then ON (bit 256) once. */
	uint8_t *d = raw + 64;
	CHECK(pi_post((struct pi_desc *)(void *)d, 0x41));
	CHECK_EQ(d[8], 0x02);
	CHECK_EQ(d[32], SDM_PID_ON);
	CHECK(!pi_post((struct pi_desc *)(void *)d, 0xff));
	CHECK_EQ(d[31], 0x80);
	/* SN (bit 257) set: PIR only; ON stays 0 and nobody is to be notified. */
	sdm_pid_init(d, 0xf2, 7);
	d[32] = SDM_PID_SN;
	CHECK(!pi_post((struct pi_desc *)(void *)d, 0x80));
	CHECK_EQ(d[16], 0x01);
	CHECK_EQ(d[32], SDM_PID_SN);
	CHECK_EQ(d[34], 0xf2);
	CHECK_EQ(sdm_pid_ndst(d), 7);
	for (int i = 0; i < 64; i++)
		CHECK(raw[i] == 0xcc && raw[128 + i] == 0xcc);
	free(raw);
}

TEST(ipi_model_pid_table_bytes)
{
	uint8_t *desc = aligned_alloc(64, 2 * 64);
	uint64_t *table = aligned_alloc(64, 64);
	memset(table, 0, 64);
	/* pid_table_set: entry i (8 bytes at 8*i) = address | valid (bit 0). */
	pid_table_set(table, 2, (paddr_t)(uintptr_t)desc);
	CHECK_EQ(sdm_pidpt_entry(table, 2), (uintptr_t)desc | SDM_PIDPT_VALID);
	CHECK(sdm_pidpt_entry(table, 0) == 0 && sdm_pidpt_entry(table, 1) == 0 && sdm_pidpt_entry(table, 3) == 0);
	/* pid_table_lookup on a table the model built: valid entries up to the last index only. */
	memset(table, 0, 64);
	sdm_pidpt_set(table, 1, desc);
	sdm_pidpt_set(table, 3, desc + 64);
	CHECK(pid_table_lookup(table, 3, 1) == (struct pi_desc *)(void *)desc);
	CHECK(pid_table_lookup(table, 3, 3) == (struct pi_desc *)(void *)(desc + 64));
	CHECK(pid_table_lookup(table, 3, 0) == NULL && pid_table_lookup(table, 3, 2) == NULL);
	CHECK(pid_table_lookup(table, 2, 3) == NULL);   /* valid, but past LAST_PID_POINTER_INDEX */
	CHECK(pid_table_lookup(table, 3, 4) == NULL);
	free(desc);
	free(table);
}

/* ---- the fast path ---- */

static const uint32_t fast_ids[] = { 0, 1, 2, 5 };   /* vCPUs 0..3; holes at APIC IDs 3, 4, 6, 7 */
#define FAST_LAST 7
#define NDST(k) (0x100 + 7 * (k))                    /* what mi_dom_init puts in descriptor k */
#define NV(k) (0xe0 + (k))

TEST(ipi_model_fast_path_posts_and_notifies)
{
	static const uint8_t vecs[] = { 16, 0x20, 0x41, 0x80, 0xc3, 0xff };
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	char what[96];
	mi_dom_init(&m, fast_ids, 4, FAST_LAST);
	for (unsigned k = 1; k < 4; k++)
		for (size_t v = 0; v < ARRAY_SIZE(vecs); v++) {
			mi_drain_all(&m);
			snprintf(what, sizeof what, "fast fixed 0x%x from vCPU 0 to APIC %u", vecs[v], fast_ids[k]);
			CHECK_EQ(mi_run_fast(&m, 0, MI_ICR(MI_FIXED, vecs[v], fast_ids[k]), &st, what), IPI_DONE);
			CHECK(sdm_pid_pir(mi_desc(&m, k), vecs[v]) && sdm_pid_on(mi_desc(&m, k)));
			CHECK_EQ(m.nev, 1);
			CHECK(mi_has_ev(&m, MI_EV_NOTIFY, NDST(k), NV(k)));
		}
	CHECK_EQ(st.fast, 3 * ARRAY_SIZE(vecs));

	/* ON already set: the next vector waits in PIR, no second notification. */
	mi_drain_all(&m);
	CHECK_EQ(mi_run_fast(&m, 0, MI_ICR(MI_FIXED, 0x50, 5), &st, "first post to APIC 5"), IPI_DONE);
	CHECK_EQ(m.nev, 1);
	CHECK_EQ(mi_run_fast(&m, 0, MI_ICR(MI_FIXED, 0x51, 5), &st, "second post, ON set"), IPI_DONE);
	CHECK_EQ(m.nev, 0);
	CHECK(sdm_pid_pir(mi_desc(&m, 3), 0x50) && sdm_pid_pir(mi_desc(&m, 3), 0x51));

	/* SN set: PIR only, ON stays 0, no notification. */
	mi_drain_all(&m);
	mi_set_ctrl(&m, 2, SDM_PID_SN);
	CHECK_EQ(mi_run_fast(&m, 0, MI_ICR(MI_FIXED, 0x60, 2), &st, "post with SN set"), IPI_DONE);
	CHECK(sdm_pid_pir(mi_desc(&m, 2), 0x60) && !sdm_pid_on(mi_desc(&m, 2)) && sdm_pid_sn(mi_desc(&m, 2)));
	CHECK_EQ(m.nev, 0);
	mi_set_ctrl(&m, 2, 0);

	/* To itself: posted, ON set, and notified like any target (ipi.h: "also
	 * when the target is the sender"). */
	mi_drain_all(&m);
	CHECK_EQ(mi_run_fast(&m, 3, MI_ICR(MI_FIXED, 0x70, 5), &st, "vCPU 3 to its own APIC 5"), IPI_DONE);
	CHECK(sdm_pid_pir(mi_desc(&m, 3), 0x70) && sdm_pid_on(mi_desc(&m, 3)));
	CHECK_EQ(m.nev, 1);
	CHECK(mi_has_ev(&m, MI_EV_NOTIFY, NDST(3), NV(3)));
	mi_dom_free(&m);
}

TEST(ipi_model_fast_path_leaves_the_rest_alone)
{
	static const struct { const char *what; uint64_t set, clear; } cases[] = {
		{ "lowest priority", MI_MODE(MI_LOWEST), 0 }, { "SMI", MI_MODE(MI_SMI), 0 },
		{ "delivery mode 011b", MI_MODE(MI_MODE3), 0 }, { "NMI", MI_MODE(MI_NMI), 0 },
		{ "INIT", MI_MODE(MI_INIT) | MI_ASSERT, 0 }, { "start-up", MI_MODE(MI_SIPI), 0 },
		{ "delivery mode 111b", MI_MODE(MI_MODE7), 0 }, { "logical destination", MI_LOGICAL, 0 },
		{ "shorthand self", MI_SH(MI_SH_SELF), 0 }, { "shorthand all", MI_SH(MI_SH_ALL), 0 },
		{ "shorthand others", MI_SH(MI_SH_OTHERS), 0 }, { "vector 0", 0, 0xff }, { "vector 15", 0x0f, 0xff },
		{ "reserved bit 13", 1ull << 13, 0 },
		{ "reserved bit 16", 1ull << 16, 0 }, { "reserved bit 17", 1ull << 17, 0 },
		{ "reserved bit 20", 1ull << 20, 0 }, { "reserved bit 24", 1ull << 24, 0 },
		{ "reserved bit 31", 1ull << 31, 0 },
		{ "APIC 3: a hole", MI_DEST(3), MI_DEST(~0u) }, { "APIC 4: a hole", MI_DEST(4), MI_DEST(~0u) },
		{ "APIC 7: a hole at the last index", MI_DEST(7), MI_DEST(~0u) },
		{ "APIC 8: a valid entry past the last index", MI_DEST(8), MI_DEST(~0u) },
		{ "broadcast", MI_DEST(MI_BROADCAST), MI_DEST(~0u) }, { "APIC 0x100", MI_DEST(0x100), MI_DEST(~0u) },
		{ "APIC 0x10005", MI_DEST(0x10005), MI_DEST(~0u) },
	};
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	mi_dom_init(&m, fast_ids, 4, FAST_LAST);
	const uint64_t base = MI_ICR(MI_FIXED, 0x41, 5);
	CHECK(mi_fast_qualifies(&m, base, &(unsigned){ 0 }));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t icr = (base & ~cases[i].clear) | cases[i].set;
		CHECK_EQ(mi_run_fast(&m, 0, icr, &st, cases[i].what), IPI_SLOW);
		CHECK_EQ(m.nev, 0);
	}
	/* Everything unchanged: descriptors (decoy included), counters. */
	CHECK_EQ(mi_compare_memory(&m, "after the refused writes"), 0);
	CHECK(!sdm_pid_on(mi_desc(&m, 4)) && sdm_pid_nv(mi_desc(&m, 4)) == NV(4));
	struct ipi_src_stats zero = { 0 };
	CHECK(!memcmp(&st, &zero, sizeof st));
	for (unsigned k = 0; k < 4; k++)
		CHECK_EQ(m.tstats[k].posts, 0);
	mi_dom_free(&m);
}

/* Trigger mode is "ignored for all other delivery modes" than INIT
 * de-assert (SDM Vol. 3A, ICR), and the level bit too: a fixed IPI lands in
 * the same PIR whichever path takes it. */
TEST(ipi_model_fixed_trigger_and_level_bits_are_ignored)
{
	static const uint64_t extra[] = { 0, MI_ASSERT, MI_TRIG_LEVEL, MI_ASSERT | MI_TRIG_LEVEL };
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	mi_dom_init(&m, fast_ids, 4, FAST_LAST);
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++) {
		uint64_t icr = MI_ICR(MI_FIXED, 0x90 + i, 2) | extra[i];
		mi_drain_all(&m);
		if (mi_run_fast(&m, 0, icr, &st, "trigger/level variant, fast") == IPI_SLOW)
			CHECK_EQ(mi_run_icr(&m, 0, icr, &st, "trigger/level variant, slow", NULL), IPI_DONE);
		CHECK(sdm_pid_pir(mi_desc(&m, 2), 0x90 + i) && sdm_pid_on(mi_desc(&m, 2)));
		CHECK(mi_has_ev(&m, MI_EV_NOTIFY, NDST(2), NV(2)));
	}
	mi_dom_free(&m);
}

/* ---- the slow path ---- */

/* vCPU:        0  1  2  3   4   5   6
 * x2APIC ID:   0  1  2  5  16  17  35   (clusters 0, 1, 2); last index 40. */
static const uint32_t slow_ids[] = { 0, 1, 2, 5, 16, 17, 35 };
#define SLOW_N 7
#define SLOW_LAST 40
#define SELF 3u                 /* vCPU 3, x2APIC ID 5: an index that is not its ID */
#define ALL 0x7fu
#define OTHERS (ALL & ~(1u << SELF))

enum { NONE, REF, DEA, DROP, GP };   /* which counter the write must tick */

TEST(ipi_model_slow_path)
{
	static const struct {
		const char *what;
		uint64_t icr;
		uint32_t posted, one_of, nmi, init, sipi;   /* vCPU masks; one_of: lowest priority */
		int counter;
	} cases[] = {
		{ "fixed, shorthand self", MI_ICR(MI_FIXED, 0x30, 0) | MI_SH(MI_SH_SELF), 1u << SELF, 0, 0, 0, 0, NONE },
		{ "fixed, shorthand self ignores the destination", MI_ICR(MI_FIXED, 0x30, 16) | MI_SH(MI_SH_SELF), 1u << SELF,
		  0, 0, 0, 0, NONE },
		{ "fixed, shorthand all", MI_ICR(MI_FIXED, 0x31, 0) | MI_SH(MI_SH_ALL), ALL, 0, 0, 0, 0, NONE },
		{ "fixed, shorthand others", MI_ICR(MI_FIXED, 0x32, 0) | MI_SH(MI_SH_OTHERS), OTHERS, 0, 0, 0, 0, NONE },
		{ "logical cluster 0, IDs 0 and 2", MI_ICR(MI_FIXED, 0x33, 0x5) | MI_LOGICAL, 0x05, 0, 0, 0, 0, NONE },
		{ "logical cluster 0, ID 5", MI_ICR(MI_FIXED, 0x33, 0x20) | MI_LOGICAL, 0x08, 0, 0, 0, 0, NONE },
		{ "logical cluster 1, IDs 16 and 17", MI_ICR(MI_FIXED, 0x34, 0x10003) | MI_LOGICAL, 0x30, 0, 0, 0, 0, NONE },
		{ "logical cluster 2, ID 35", MI_ICR(MI_FIXED, 0x35, 0x20008) | MI_LOGICAL, 0x40, 0, 0, 0, 0, NONE },
		{ "logical cluster 1, IDs 16 and 21 (no vCPU)", MI_ICR(MI_FIXED, 0x36, 0x10021) | MI_LOGICAL, 0x10, 0, 0, 0,
		  0, NONE },
		{ "logical cluster 0, ID 3 (no vCPU)", MI_ICR(MI_FIXED, 0x37, 0x8) | MI_LOGICAL, 0, 0, 0, 0, 0, DROP },
		{ "logical cluster 3 (no vCPU)", MI_ICR(MI_FIXED, 0x37, 0x3ffff) | MI_LOGICAL, 0, 0, 0, 0, 0, DROP },
		{ "logical cluster 1, empty bitmap", MI_ICR(MI_FIXED, 0x37, 0x10000) | MI_LOGICAL, 0, 0, 0, 0, 0, DROP },
		{ "physical broadcast", MI_ICR(MI_FIXED, 0x38, MI_BROADCAST), ALL, 0, 0, 0, 0, NONE },
		{ "logical broadcast", MI_ICR(MI_FIXED, 0x39, MI_BROADCAST) | MI_LOGICAL, ALL, 0, 0, 0, 0, NONE },
		{ "physical APIC 35", MI_ICR(MI_FIXED, 0x3a, 35), 0x40, 0, 0, 0, 0, NONE },
		{ "physical APIC 3 (a hole)", MI_ICR(MI_FIXED, 0x3b, 3), 0, 0, 0, 0, 0, DROP },
		{ "physical APIC 41 (past the last index)", MI_ICR(MI_FIXED, 0x3b, 41), 0, 0, 0, 0, 0, DROP },
		{ "physical APIC 0x10000", MI_ICR(MI_FIXED, 0x3b, 0x10000), 0, 0, 0, 0, 0, DROP },
		{ "fixed with trigger level", MI_ICR(MI_FIXED, 0x3c, 5) | MI_TRIG_LEVEL | MI_ASSERT, 0x08, 0, 0, 0, 0, NONE },
		{ "lowest priority, APIC 5", MI_ICR(MI_LOWEST, 0x40, 5), 0, 0x08, 0, 0, 0, NONE },
		{ "lowest priority, logical cluster 1", MI_ICR(MI_LOWEST, 0x41, 0x10003) | MI_LOGICAL, 0, 0x30, 0, 0, 0, NONE },
		{ "lowest priority, broadcast", MI_ICR(MI_LOWEST, 0x42, MI_BROADCAST), 0, ALL, 0, 0, 0, NONE },
		{ "lowest priority, shorthand others", MI_ICR(MI_LOWEST, 0x43, 0) | MI_SH(MI_SH_OTHERS), 0, OTHERS, 0, 0, 0,
		  NONE },
		{ "lowest priority, APIC 4 (a hole)", MI_ICR(MI_LOWEST, 0x44, 4), 0, 0, 0, 0, 0, DROP },
		{ "NMI to APIC 5 (vector ignored)", MI_ICR(MI_NMI, 0, 5), 0, 0, 0x08, 0, 0, NONE },
		{ "NMI, shorthand others", MI_ICR(MI_NMI, 2, 0) | MI_SH(MI_SH_OTHERS), 0, 0, OTHERS, 0, 0, NONE },
		{ "NMI, logical cluster 1", MI_ICR(MI_NMI, 2, 0x10002) | MI_LOGICAL, 0, 0, 0x20, 0, 0, NONE },
		{ "NMI to APIC 6 (a hole)", MI_ICR(MI_NMI, 2, 6), 0, 0, 0, 0, 0, DROP },
		{ "INIT assert to APIC 16", MI_ICR(MI_INIT, 0, 16) | MI_ASSERT, 0, 0, 0, 0x10, 0, NONE },
		{ "INIT assert, trigger level, APIC 17", MI_ICR(MI_INIT, 0, 17) | MI_ASSERT | MI_TRIG_LEVEL, 0, 0, 0, 0x20, 0,
		  NONE },
		{ "INIT, level 0, edge (not a de-assert)", MI_ICR(MI_INIT, 0, 16), 0, 0, 0, 0x10, 0, NONE },
		{ "INIT assert, shorthand others", MI_ICR(MI_INIT, 0, 0) | MI_ASSERT | MI_SH(MI_SH_OTHERS), 0, 0, 0, OTHERS,
		  0, NONE },
		{ "INIT de-assert, shorthand all", MI_ICR(MI_INIT, 0, 0) | MI_TRIG_LEVEL | MI_SH(MI_SH_ALL), 0, 0, 0, 0, 0,
		  DEA },
		{ "INIT de-assert, APIC 16", MI_ICR(MI_INIT, 0, 16) | MI_TRIG_LEVEL, 0, 0, 0, 0, 0, DEA },
		{ "SIPI 0x9a to APIC 35", MI_ICR(MI_SIPI, 0x9a, 35), 0, 0, 0, 0, 0x40, NONE },
		{ "SIPI 0x00 to APIC 2", MI_ICR(MI_SIPI, 0x00, 2), 0, 0, 0, 0, 0x04, NONE },
		{ "SIPI 0x10, shorthand others", MI_ICR(MI_SIPI, 0x10, 0) | MI_SH(MI_SH_OTHERS), 0, 0, 0, 0, OTHERS, NONE },
		{ "SMI to APIC 5", MI_ICR(MI_SMI, 0, 5), 0, 0, 0, 0, 0, REF },
		{ "SMI, shorthand all", MI_ICR(MI_SMI, 0, 0) | MI_SH(MI_SH_ALL), 0, 0, 0, 0, 0, REF },
		{ "delivery mode 011b", MI_ICR(MI_MODE3, 0x40, 5), 0, 0, 0, 0, 0, REF },
		{ "delivery mode 111b", MI_ICR(MI_MODE7, 0x40, 5), 0, 0, 0, 0, 0, REF },
		{ "fixed vector 0", MI_ICR(MI_FIXED, 0, 5), 0, 0, 0, 0, 0, REF },
		{ "fixed vector 15, shorthand all", MI_ICR(MI_FIXED, 15, 0) | MI_SH(MI_SH_ALL), 0, 0, 0, 0, 0, REF },
		{ "lowest priority vector 15", MI_ICR(MI_LOWEST, 15, 5), 0, 0, 0, 0, 0, REF },
		{ "SMI with a reserved bit", MI_ICR(MI_SMI, 0, 5) | 1ull << 13, 0, 0, 0, 0, 0, GP },
		{ "INIT with bit 12 (ignored)", MI_ICR(MI_INIT, 0, 5) | MI_ASSERT | MI_IGNORED, 0, 0, 0, 1u << SELF, 0, NONE },
		{ "INIT with bits 12 and 13", MI_ICR(MI_INIT, 0, 5) | MI_ASSERT | MI_IGNORED | 1ull << 13, 0, 0, 0, 0, 0, GP },
	};
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	mi_dom_init(&m, slow_ids, SLOW_N, SLOW_LAST);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ipi_src_stats b = st;
		uint32_t posted = 0;
		mi_drain_all(&m);
		enum ipi_result r = mi_run_icr(&m, SELF, cases[i].icr, &st, cases[i].what, &posted);
		bool ok = r == (cases[i].counter == GP ? IPI_GP : IPI_DONE);
		if (cases[i].one_of)
			ok &= __builtin_popcount(posted) == 1 && (posted & cases[i].one_of);
		else
			ok &= posted == cases[i].posted;
		ok &= m.nev == mi_count_ev(&m, MI_EV_NOTIFY) + (unsigned)__builtin_popcount(cases[i].nmi | cases[i].init |
											       cases[i].sipi);
		ok &= mi_count_ev(&m, MI_EV_NOTIFY) == (unsigned)__builtin_popcount(posted);   /* all drained */
		for (unsigned k = 0; k < SLOW_N; k++) {
			ok &= mi_has_ev(&m, MI_EV_NMI, k, 0) == !!(cases[i].nmi >> k & 1);
			ok &= mi_has_ev(&m, MI_EV_INIT, k, 0) == !!(cases[i].init >> k & 1);
			ok &= mi_has_ev(&m, MI_EV_SIPI, k, MI_GET_VEC(cases[i].icr)) == !!(cases[i].sipi >> k & 1);
		}
		ok &= st.refused - b.refused == (unsigned)(cases[i].counter == REF || cases[i].counter == GP);
		ok &= st.init_deassert - b.init_deassert == (unsigned)(cases[i].counter == DEA);
		ok &= st.dropped - b.dropped == (unsigned)(cases[i].counter == DROP);
		if (!ok)
			printf("    slow case %zu (%s): result %d, posted 0x%x, %u callbacks\n", i, cases[i].what, r, posted,
			       m.nev);
		CHECK(ok);
	}
	mi_dom_free(&m);
}

/* Every reserved bit of an x2APIC ICR write alone: #GP, nothing sent. */
TEST(ipi_model_slow_path_reserved_bits_gp)
{
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	char what[64];
	mi_dom_init(&m, slow_ids, SLOW_N, SLOW_LAST);
	unsigned n = 0;
	for (unsigned bit = 0; bit < 32; bit++) {
		if (!(MI_RESERVED >> bit & 1))
			continue;
		snprintf(what, sizeof what, "fixed to all with reserved bit %u", bit);
		CHECK_EQ(mi_run_icr(&m, SELF, MI_ICR(MI_FIXED, 0x50, 0) | MI_SH(MI_SH_ALL) | 1ull << bit, &st, what, NULL),
			 IPI_GP);
		CHECK_EQ(m.nev, 0);
		n++;
	}
	CHECK_EQ(n, 15);   /* 31:20, 17:16, 13 */
	CHECK_EQ(st.refused, 15);
	for (unsigned k = 0; k < SLOW_N; k++)
		CHECK_EQ(m.tstats[k].posts, 0);
	mi_dom_free(&m);
}

/* ---- KVM's PV send-IPI ---- */

TEST(ipi_model_pv_send_ipi)
{
	const uint64_t ones = ~0ull, top = ~0ull;
	static const struct {
		const char *what;
		uint64_t lo, hi, min, icr;
		int64_t ret;
		uint32_t posted, nmi;
		uint64_t dropped;
	} cases[] = {
		{ "IDs 0, 1, 2, 5", 0x27, 0, 0, MI_ICR(MI_FIXED, 0x40, 0), 4, 0x0f, 0, 0 },
		{ "holes 3, 4, 6, 7, 40", 0xd8 | 1ull << 40, 0, 0, MI_ICR(MI_FIXED, 0x40, 0), 0, 0, 0, 5 },
		{ "min 16: IDs 16, 17, 35", 0x80003, 0, 16, MI_ICR(MI_FIXED, 0x41, 0), 3, 0x70, 0, 0 },
		{ "min 16, a1 bit 3: ID 83, past the last index", 0, 1ull << 3, 16, MI_ICR(MI_FIXED, 0x41, 0), 0, 0, 0, 1 },
		{ "min 0, a1 bit 0: ID 64", 0, 1, 0, MI_ICR(MI_FIXED, 0x41, 0), 0, 0, 0, 1 },
		{ "min 35, IDs 35..40", 0x3f, 0, 35, MI_ICR(MI_FIXED, 0x42, 0), 1, 0x40, 0, 5 },
		{ "min 1, all 128 bits", ones, ones, 1, MI_ICR(MI_FIXED, 0x43, 0), 6, 0x7e, 0, 122 },
		{ "min 2^63, all bits", ones, ones, 1ull << 63, MI_ICR(MI_FIXED, 0x44, 0), 0, 0, 0, 128 },
		{ "min 2^32 (truncated: APIC 0)", 1, 0, 1ull << 32, MI_ICR(MI_FIXED, 0x45, 0), 0, 0, 0, 1 },
		{ "min 0xffffffff (not a broadcast here)", 3, 0, 0xffffffffull, MI_ICR(MI_FIXED, 0x45, 0), 0, 0, 0, 2 },
		{ "min 2^64-2: IDs past 2^64 (wrapped: 0, 1)", 0xf, 0, top - 1, MI_ICR(MI_FIXED, 0x46, 0), 0, 0, 0, 4 },
		{ "min 2^64-64, a1 (wrapped: 0..63)", 0, ones, top - 63, MI_ICR(MI_FIXED, 0x46, 0), 0, 0, 0, 64 },
		{ "ICR bits 63:32 are not read", 0x4, 0, 0, MI_ICR(MI_FIXED, 0x47, 0x12345678), 1, 0x04, 0, 0 },
		{ "NMI to IDs 2, 5, 16", 0x10024, 0, 0, MI_ICR(MI_NMI, 0, 0), 3, 0, 0x1c, 0 },
		{ "NMI to itself (APIC 5)", 0x20, 0, 0, MI_ICR(MI_NMI, 0, 0), 1, 0, 1u << SELF, 0 },
		{ "lowest priority: every listed ID", 0x3, 0, 16, MI_ICR(MI_LOWEST, 0x48, 0), 2, 0x30, 0, 0 },
		{ "to itself (APIC 5) and APIC 2", 0x24, 0, 0, MI_ICR(MI_FIXED, 0x49, 0), 2, 0x0c, 0, 0 },
		{ "logical", 0x1, 0, 0, MI_ICR(MI_FIXED, 0x40, 0) | MI_LOGICAL, -MI_KVM_EINVAL, 0, 0, 0 },
		{ "shorthand self", 0x1, 0, 0, MI_ICR(MI_FIXED, 0x40, 0) | MI_SH(MI_SH_SELF), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "shorthand all", 0x1, 0, 0, MI_ICR(MI_FIXED, 0x40, 0) | MI_SH(MI_SH_ALL), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "shorthand others", 0x1, 0, 0, MI_ICR(MI_FIXED, 0x40, 0) | MI_SH(MI_SH_OTHERS), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "SMI", 0x1, 0, 0, MI_ICR(MI_SMI, 0, 0), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "mode 011b", 0x1, 0, 0, MI_ICR(MI_MODE3, 0x40, 0), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "INIT", 0x1, 0, 0, MI_ICR(MI_INIT, 0, 0) | MI_ASSERT, -MI_KVM_EINVAL, 0, 0, 0 },
		{ "SIPI", 0x1, 0, 0, MI_ICR(MI_SIPI, 0x9a, 0), -MI_KVM_EINVAL, 0, 0, 0 },
		{ "mode 111b", 0x1, 0, 0, MI_ICR(MI_MODE7, 0x40, 0), -MI_KVM_EINVAL, 0, 0, 0 },
	};
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	int64_t sum = 0;
	unsigned errors = 0;
	mi_dom_init(&m, slow_ids, SLOW_N, SLOW_LAST);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ipi_src_stats b = st;
		uint32_t posted = 0;
		mi_drain_all(&m);
		int64_t r = mi_run_pv(&m, SELF, cases[i].lo, cases[i].hi, cases[i].min, cases[i].icr, &st, cases[i].what,
				      &posted);
		bool ok = r == cases[i].ret && posted == cases[i].posted && st.dropped - b.dropped == cases[i].dropped;
		ok &= mi_count_ev(&m, MI_EV_NOTIFY) == (unsigned)__builtin_popcount(posted);
		ok &= mi_count_ev(&m, MI_EV_NMI) == (unsigned)__builtin_popcount(cases[i].nmi);
		for (unsigned k = 0; k < SLOW_N; k++)
			ok &= mi_has_ev(&m, MI_EV_NMI, k, 0) == !!(cases[i].nmi >> k & 1);
		if (!ok)
			printf("    PV case %zu (%s): returned %lld, posted 0x%x, dropped +%llu\n", i, cases[i].what,
			       (long long)r, posted, (unsigned long long)(st.dropped - b.dropped));
		CHECK(ok);
		if (r >= 0)
			sum += r;
		else
			errors++;
	}
	CHECK_EQ(st.pv_calls, ARRAY_SIZE(cases));
	CHECK_EQ(st.pv_targets, (uint64_t)sum);
	CHECK_EQ(st.pv_errors, errors);
	mi_dom_free(&m);
}

/* ---- the first and last index of the PID-pointer table ---- */

/* SDM Vol. 3C, "IPI Virtualization": the table is indexed by the
 * destination APIC ID, 8 bytes an entry; an ID above LAST_PID_POINTER_INDEX
 * is not virtualized (here: not posted by any tier). vCPUs at index 0 and
 * at the last index 9, one between; mi_dom puts a valid decoy entry at 10. */
static const uint32_t edge_ids[] = { 0, 4, 9 };
#define EDGE_LAST 9

TEST(ipi_model_pid_table_first_and_last_index)
{
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	uint32_t posted;
	mi_dom_init(&m, edge_ids, 3, EDGE_LAST);
	const uint64_t *t = (const uint64_t *)(void *)m.table;
	CHECK(sdm_pidpt_entry(m.table, EDGE_LAST + 1) & SDM_PIDPT_VALID);   /* the decoy is there */
	CHECK(pid_table_lookup(t, EDGE_LAST, 0) == (struct pi_desc *)(void *)mi_desc(&m, 0));
	CHECK(pid_table_lookup(t, EDGE_LAST, EDGE_LAST) == (struct pi_desc *)(void *)mi_desc(&m, 2));
	CHECK(pid_table_lookup(t, EDGE_LAST, EDGE_LAST + 1) == NULL);
	CHECK(pid_table_lookup(t, 0, 0) == (struct pi_desc *)(void *)mi_desc(&m, 0));   /* a one-entry table */
	CHECK(pid_table_lookup(t, 0, 1) == NULL);

	/* The fast path: index 0 and the last index are posted, last + 1 is not. */
	CHECK_EQ(mi_run_fast(&m, 1, MI_ICR(MI_FIXED, 0x30, 0), &st, "fast to APIC 0 (index 0)"), IPI_DONE);
	CHECK(sdm_pid_pir(mi_desc(&m, 0), 0x30) && mi_has_ev(&m, MI_EV_NOTIFY, NDST(0), NV(0)));
	CHECK_EQ(mi_run_fast(&m, 1, MI_ICR(MI_FIXED, 0x31, EDGE_LAST), &st, "fast to the last index"), IPI_DONE);
	CHECK(sdm_pid_pir(mi_desc(&m, 2), 0x31) && mi_has_ev(&m, MI_EV_NOTIFY, NDST(2), NV(2)));
	CHECK_EQ(mi_run_fast(&m, 1, MI_ICR(MI_FIXED, 0x32, EDGE_LAST + 1), &st, "fast to last + 1"), IPI_SLOW);
	CHECK_EQ(m.nev, 0);
	CHECK_EQ(st.fast, 2);

	/* The slow path (every tier's ICR write): the same three. */
	mi_drain_all(&m);
	posted = 0;
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_FIXED, 0x33, 0), &st, "slow to APIC 0", &posted), IPI_DONE);
	CHECK_EQ(posted, 1u << 0);
	posted = 0;
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_FIXED, 0x34, EDGE_LAST), &st, "slow to the last index", &posted), IPI_DONE);
	CHECK_EQ(posted, 1u << 2);
	uint64_t dropped = st.dropped;
	posted = 0;
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_FIXED, 0x35, EDGE_LAST + 1), &st, "slow to last + 1", &posted), IPI_DONE);
	CHECK_EQ(posted, 0);
	CHECK_EQ(st.dropped, dropped + 1);
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_NMI, 0, EDGE_LAST + 1), &st, "NMI to last + 1", NULL), IPI_DONE);
	CHECK_EQ(mi_count_ev(&m, MI_EV_NMI), 0);
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_NMI, 0, 0), &st, "NMI to APIC 0", NULL), IPI_DONE);
	CHECK(mi_has_ev(&m, MI_EV_NMI, 0, 0));
	CHECK_EQ(mi_run_icr(&m, 1, MI_ICR(MI_NMI, 0, EDGE_LAST), &st, "NMI to the last index", NULL), IPI_DONE);
	CHECK(mi_has_ev(&m, MI_EV_NMI, 2, 0));

	/* KVM's PV send-IPI: bit b of a0 is APIC ID min + b. */
	static const struct { uint64_t lo, min; int64_t ret; uint32_t posted; uint64_t dropped; } pv[] = {
		{ 1ull << 0 | 1ull << EDGE_LAST | 1ull << (EDGE_LAST + 1), 0, 2, 0x5, 1 },
		{ 1ull << 0, 0, 1, 0x1, 0 },
		{ 1ull << 0 | 1ull << 1, EDGE_LAST, 1, 0x4, 1 },
		{ 1ull << 0, EDGE_LAST + 1, 0, 0, 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(pv); i++) {
		mi_drain_all(&m);
		posted = 0;
		dropped = st.dropped;
		int64_t r = mi_run_pv(&m, 1, pv[i].lo, 0, pv[i].min, MI_ICR(MI_FIXED, 0x36, 0), &st, "PV at the edges", &posted);
		if (r != pv[i].ret || posted != pv[i].posted || st.dropped - dropped != pv[i].dropped)
			printf("    PV case %zu: returned %lld, posted 0x%x, dropped +%llu\n", i, (long long)r, posted,
			       (unsigned long long)(st.dropped - dropped));
		CHECK_EQ(r, pv[i].ret);
		CHECK_EQ(posted, pv[i].posted);
		CHECK_EQ(st.dropped - dropped, pv[i].dropped);
	}
	CHECK_EQ(mi_compare_memory(&m, "after the edge cases"), 0);
	CHECK(!sdm_pid_on(mi_desc(&m, 3)) && sdm_pid_nv(mi_desc(&m, 3)) == NV(3));   /* the decoy never posted */
	mi_dom_free(&m);

	/* The table's size: entries 0..max of 8 bytes, in whole 4 KiB pages. */
	static const struct { uint32_t max; uint64_t bytes; } sz[] = {
		{ 0, 4096 }, { 1, 4096 }, { 511, 4096 }, { 512, 8192 }, { 1023, 8192 }, { 1024, 12288 }, { 0xffff, 0x80000 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sz); i++) {
		CHECK(sz[i].bytes >= ((uint64_t)sz[i].max + 1) * SDM_PIDPT_ENTRY_BYTES);
		CHECK_EQ(pid_table_bytes(sz[i].max), sz[i].bytes);
	}
}

/* ---- ICR bit 12 ---- */

/* "WRMSR to the ICR MSR ignores bit 12 of its source operand" (MI_IGNORED):
 * every tier delivers an ICR write with bit 12 set exactly as without it,
 * the fast path (tier fast) and the full decode (tiers fast, pv, trap and
 * the APIC-write exit of ipiv) alike, and KVM's PV send-IPI with it in a3.
 * The real reserved bits next to it still fault. */
TEST(ipi_model_icr_bit12_ignored)
{
	struct mi_dom m;
	struct ipi_src_stats st = { 0 };
	uint32_t posted;
	mi_dom_init(&m, fast_ids, 4, FAST_LAST);
	CHECK_EQ(mi_run_fast(&m, 0, MI_ICR(MI_FIXED, 0x41, 5) | MI_IGNORED, &st, "fast, fixed to APIC 5, bit 12"), IPI_DONE);
	CHECK(sdm_pid_pir(mi_desc(&m, 3), 0x41) && mi_has_ev(&m, MI_EV_NOTIFY, NDST(3), NV(3)));
	CHECK_EQ(st.fast, 1);
	CHECK_EQ(st.refused, 0);
	mi_dom_free(&m);

	mi_dom_init(&m, slow_ids, SLOW_N, SLOW_LAST);
	static const struct { const char *what; uint64_t icr; uint32_t posted, nmi, init, sipi; } ok[] = {
		{ "fixed to APIC 35", MI_ICR(MI_FIXED, 0x42, 35), 0x40, 0, 0, 0 },
		{ "fixed, shorthand all", MI_ICR(MI_FIXED, 0x43, 0) | MI_SH(MI_SH_ALL), ALL, 0, 0, 0 },
		{ "fixed, logical cluster 1", MI_ICR(MI_FIXED, 0x44, 0x10003) | MI_LOGICAL, 0x30, 0, 0, 0 },
		{ "NMI to APIC 2", MI_ICR(MI_NMI, 0, 2), 0, 0x04, 0, 0 },
		{ "INIT assert to APIC 16", MI_ICR(MI_INIT, 0, 16) | MI_ASSERT, 0, 0, 0x10, 0 },
		{ "SIPI 0x9a to APIC 16", MI_ICR(MI_SIPI, 0x9a, 16), 0, 0, 0, 0x10 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct ipi_src_stats b = st;
		mi_drain_all(&m);
		posted = 0;
		enum ipi_result r = mi_run_icr(&m, SELF, ok[i].icr | MI_IGNORED, &st, ok[i].what, &posted);
		bool good = r == IPI_DONE && posted == ok[i].posted && st.refused == b.refused && st.dropped == b.dropped;
		for (unsigned k = 0; k < SLOW_N; k++) {
			good &= mi_has_ev(&m, MI_EV_NMI, k, 0) == !!(ok[i].nmi >> k & 1);
			good &= mi_has_ev(&m, MI_EV_INIT, k, 0) == !!(ok[i].init >> k & 1);
			good &= mi_has_ev(&m, MI_EV_SIPI, k, MI_GET_VEC(ok[i].icr)) == !!(ok[i].sipi >> k & 1);
		}
		if (!good)
			printf("    %s with bit 12: result %d (%s), posted 0x%x, refused +%llu\n", ok[i].what, r,
			       r == IPI_GP ? "#GP" : r == IPI_DONE ? "done" : "slow", posted,
			       (unsigned long long)(st.refused - b.refused));
		CHECK(good);
	}
	/* Bit 12 does not hide a reserved bit. */
	static const uint64_t rsvd[] = { 1ull << 13, 1ull << 16, 1ull << 17, 1ull << 20, 1ull << 31 };
	for (size_t i = 0; i < ARRAY_SIZE(rsvd); i++) {
		mi_drain_all(&m);
		CHECK_EQ(mi_run_icr(&m, SELF, MI_ICR(MI_FIXED, 0x45, 35) | MI_IGNORED | rsvd[i], &st, "bit 12 and a reserved bit",
				    NULL), IPI_GP);
		CHECK_EQ(m.nev, 0);
	}
	/* KVM_HC_SEND_IPI with bit 12 in the ICR word: delivered. */
	mi_drain_all(&m);
	posted = 0;
	CHECK_EQ(mi_run_pv(&m, SELF, 0x24, 0, 0, MI_ICR(MI_FIXED, 0x46, 0) | MI_IGNORED, &st, "PV with bit 12", &posted), 2);
	CHECK_EQ(posted, 0x0c);
	mi_dom_free(&m);
}
