/* The model of a virtualized ICR write (ipiv_model.h) against what apic/pi.c
 * does for the software path: the same PID-pointer table walk and posting,
 * both sides' descriptors read as raw bytes in the SDM's layout
 * (sdm_pid.h). The descriptors and table are built by pi_desc_init and
 * pid_table_set, so a wrong layout there fails the model's reads. */
#include "test.h"
#include "ipiv_model.h"
#include "sdm_pid.h"
#include "../../apic/pi.h"

static const uint32_t apic_ids[] = { 0, 2, 5, 300 };
#define LAST_ID 300
#define PI_NV 0xf2

/* A PID-pointer table for apic_ids with one 64-byte descriptor each. */
struct pid_set { uint64_t *table; struct pi_desc *desc; };

static void pid_set_init(struct pid_set *s)
{
	uint64_t bytes = pid_table_bytes(LAST_ID);
	s->table = aligned_alloc(4096, bytes);
	s->desc = aligned_alloc(4096, 4096);
	memset(s->table, 0, bytes);
	memset(s->desc, 0, 4096);
	for (size_t i = 0; i < ARRAY_SIZE(apic_ids); i++) {
		pi_desc_init(&s->desc[i], PI_NV, apic_ids[i]);
		pid_table_set(s->table, apic_ids[i], (paddr_t)(uintptr_t)&s->desc[i]);
	}
}

static void pid_set_free(struct pid_set *s) { free(s->table); free(s->desc); }

/* Both sides' descriptors are read as raw bytes in the SDM's layout (sdm_pid.h). */
#define ICR_FIXED_PHYS(dest, vec) (((uint64_t)(dest) << 32) | (vec))
#define RAW(set, i) ((uint8_t *)(void *)&(set).desc[i])

/* The same fixed, physical ICR write on both sides: the model on m, and on p
 * what the software path does with pi.c (lookup, then pi_post). */
static struct ipiv_result post_both(struct pid_set *m, struct pid_set *p, uint32_t dest, uint8_t vec, bool *pi_notify)
{
	struct ipiv_result r = ipiv_model_icr_write(m->table, LAST_ID, ICR_FIXED_PHYS(dest, vec));
	struct pi_desc *d = pid_table_lookup(p->table, LAST_ID, dest);
	CHECK_EQ(r.apic_write_exit, d == NULL);
	*pi_notify = d ? pi_post(d, vec) : false;
	CHECK_EQ(r.notify, *pi_notify);
	if (d && r.desc)   /* the same APIC ID's descriptor */
		CHECK_EQ((r.desc - (uint8_t *)(void *)m->desc) / SDM_PID_BYTES, (size_t)(d - p->desc));
	return r;
}

static bool same_pir(const uint8_t *a, const uint8_t *b) { return !memcmp(a, b, 32); }

/* PIR (bits 255:0) holds exactly the vectors listed. */
static bool pir_is(const uint8_t *d, const unsigned *vecs, size_t n)
{
	uint8_t want[32] = { 0 };
	for (size_t i = 0; i < n; i++)
		want[vecs[i] / 8] |= (uint8_t)(1u << (vecs[i] % 8));
	return !memcmp(d, want, sizeof want);
}

TEST(vmcs_ipiv_icr_model_matches_pi)
{
	struct pid_set m, p;
	bool pn;
	pid_set_init(&m);
	pid_set_init(&p);

	/* Every valid ID: posted, ON set, notification NV to NDST (pi_desc_init's bytes). */
	for (size_t i = 0; i < ARRAY_SIZE(apic_ids); i++) {
		struct ipiv_result r = post_both(&m, &p, apic_ids[i], 0x20, &pn);
		CHECK(!r.apic_write_exit && r.notify && pn);
		CHECK(r.ndst == apic_ids[i] && r.nv == PI_NV && r.desc == RAW(m, i));
		CHECK(pir_is(RAW(m, i), (const unsigned[]){ 0x20 }, 1));
		CHECK(same_pir(RAW(m, i), RAW(p, i)));
		CHECK(sdm_pid_on(RAW(m, i)) && sdm_pid_on(RAW(p, i)));
	}
	/* A hole and an ID above the last index: APIC-write VM exit, nothing posted. */
	CHECK(post_both(&m, &p, 1, 0x20, &pn).apic_write_exit);
	CHECK(post_both(&m, &p, LAST_ID + 1, 0x20, &pn).apic_write_exit);

	/* Not a fixed, physical, no-shorthand, edge IPI with a vector >= 16: the
	 * CPU exits (pi.c is not involved; the exit handler decodes the ICR). */
	static const uint32_t not_virtualized[] = {
		1u << 8,                 /* lowest priority */
		4u << 8,                 /* NMI */
		5u << 8 | 1u << 14,      /* INIT */
		6u << 8,                 /* start-up */
		1u << 11,                /* logical destination */
		1u << 15 | 1u << 14,     /* level-triggered */
		1u << 18,                /* shorthand self */
		2u << 18,                /* all including self */
		3u << 18,                /* all excluding self */
		1u << 12,                /* bit 12 (no delivery status in x2APIC mode) */
	};
	uint8_t before[SDM_PID_BYTES];
	memcpy(before, RAW(m, 1), sizeof before);
	for (size_t i = 0; i < ARRAY_SIZE(not_virtualized); i++) {
		struct ipiv_result r = ipiv_model_icr_write(m.table, LAST_ID, ICR_FIXED_PHYS(2, 0x41) | not_virtualized[i]);
		CHECK(r.apic_write_exit && !r.gp && !r.notify && r.desc == NULL);
	}
	struct ipiv_result low = ipiv_model_icr_write(m.table, LAST_ID, ICR_FIXED_PHYS(2, 0x0f));
	CHECK(low.apic_write_exit && low.desc == NULL);   /* vector < 16 */
	struct ipiv_result gp = ipiv_model_icr_write(m.table, LAST_ID, ICR_FIXED_PHYS(2, 0x41) | 1u << 13);
	CHECK(gp.gp && !gp.apic_write_exit && gp.desc == NULL);   /* reserved bit: #GP */
	CHECK(!memcmp(before, RAW(m, 1), sizeof before));

	/* ON already set: the next vectors land in PIR without a second notification;
	 * vectors 0x20, 0x41, 0x80, 0xff cover all four PIR words. */
	static const uint8_t vecs[] = { 0x41, 0x80, 0xff };
	for (size_t i = 0; i < ARRAY_SIZE(vecs); i++) {
		struct ipiv_result r = post_both(&m, &p, 5, vecs[i], &pn);
		CHECK(!r.apic_write_exit && !r.notify && !pn);
	}
	CHECK(pir_is(RAW(m, 2), (const unsigned[]){ 0x20, 0x41, 0x80, 0xff }, 4));
	CHECK(same_pir(RAW(m, 2), RAW(p, 2)));
	uint64_t taken[4];
	pi_take(&p.desc[2], taken);
	CHECK(taken[0] == BIT(0x20) && taken[1] == BIT(1) && taken[2] == BIT(0) && taken[3] == BIT(63));
	CHECK(!sdm_pid_on(RAW(p, 2)) && pir_is(RAW(p, 2), NULL, 0));

	/* SN set (the target is not running): posted, no notification. The CPU
	 * sets ON only together with sending the notification, so ON stays 0
	 * (whoever clears SN checks PIR); pi_post does the same. */
	RAW(m, 3)[SDM_PID_CTRL_BYTE] = SDM_PID_SN;
	RAW(p, 3)[SDM_PID_CTRL_BYTE] = SDM_PID_SN;
	memset(RAW(m, 3), 0, 32);
	memset(RAW(p, 3), 0, 32);
	struct ipiv_result r = post_both(&m, &p, LAST_ID, 0x80, &pn);
	CHECK(!r.apic_write_exit && !r.notify && !pn);
	CHECK(same_pir(RAW(m, 3), RAW(p, 3)));
	CHECK(pir_is(RAW(m, 3), (const unsigned[]){ 0x80 }, 1));
	CHECK_EQ(RAW(m, 3)[SDM_PID_CTRL_BYTE], SDM_PID_SN);   /* hardware: ON untouched */
	CHECK_EQ(RAW(p, 3)[SDM_PID_CTRL_BYTE], SDM_PID_SN);   /* pi_post: the same */

	/* An entry with a reserved bit (5:1) set: the SDM model exits; pid_table_set
	 * never makes one (it masks bits 5:0 of the descriptor address). */
	uint64_t saved = m.table[2];
	m.table[2] |= 2;
	CHECK(ipiv_model_icr_write(m.table, LAST_ID, ICR_FIXED_PHYS(2, 0x30)).apic_write_exit);
	m.table[2] = saved;
	pid_set_free(&m);
	pid_set_free(&p);
}

/* ipivtest=1's entries (apic/pi.c), read as the SDM lays them out: past the
 * highest APIC ID, one absent, one with a reserved bit, one valid naming a
 * descriptor with SN set. The model must exit on the first two, and post
 * without notification (ON stays clear) on the third. */
TEST(ipiv_model_ipivtest_entries)
{
	enum { MAX = 3 };
	static uint64_t table[512] __attribute__((aligned(4096)));
	static struct pi_desc spare __attribute__((aligned(64)));
	memset(table, 0, sizeof table);
	for (uint32_t i = 0; i <= MAX + 3; i++)
		table[i] = 0xdead0000ull;      /* garbage: the function must set all three */
	pid_table_add_test_entries(table, MAX, &spare, PI_NV);
	const uint8_t *raw = (const uint8_t *)(const void *)&spare;
	CHECK_EQ(sdm_pidpt_entry(table, MAX + 1), 0);
	CHECK_EQ(sdm_pidpt_entry(table, MAX + 2) & SDM_PIDPT_LOW_BITS, 3);
	CHECK_EQ(sdm_pidpt_entry(table, MAX + 3) & SDM_PIDPT_LOW_BITS, SDM_PIDPT_VALID);
	CHECK(sdm_pid_sn(raw) && !sdm_pid_on(raw));
	CHECK_EQ(sdm_pid_nv(raw), PI_NV);
	struct ipiv_result r = ipiv_model_icr_write(table, MAX + 3, ICR_FIXED_PHYS(MAX + 1, 0x41));
	CHECK(r.apic_write_exit);
	r = ipiv_model_icr_write(table, MAX + 3, ICR_FIXED_PHYS(MAX + 2, 0x41));
	CHECK(r.apic_write_exit);
	r = ipiv_model_icr_write(table, MAX + 3, ICR_FIXED_PHYS(MAX + 3, 0x41));
	CHECK(!r.apic_write_exit && !r.gp && !r.notify && r.desc == raw);
	CHECK(sdm_pid_pir(raw, 0x41) && !sdm_pid_on(raw));
	r = ipiv_model_icr_write(table, MAX + 3, ICR_FIXED_PHYS(MAX + 4, 0x41));
	CHECK(r.apic_write_exit);
	pid_test_spare = NULL;
}
