/* ipi_fast_logical (ipi/ipi.c): x2APIC cluster-mode unicast and multicast
 * over the PID-pointer table, against the model's reading of the SDM (Vol.
 * 3A, "Logical Destination Mode in x2APIC Mode": LDR = cluster (x2APIC ID
 * 19:4) in 31:16, 1 << (x2APIC ID 3:0) in 15:0; a logical destination
 * selects every CPU of its cluster whose bit is set; 0xFFFFFFFF is the
 * broadcast), written out in ipi_model.h (mi_ldr, mi_logical_match). */
#include "test.h"
#include "ipi_model.h"

static const uint32_t ids[] = { 0, 1, 2, 5, 16, 17, 33, 47 };
#define NV (sizeof ids / sizeof ids[0])

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t pick(uint32_t n)
{
	return (uint32_t)(test_xorshift(&rng) % n);
}

static bool is_vcpu_id(uint32_t id)
{
	for (unsigned k = 0; k < NV; k++)
		if (ids[k] == id)
			return true;
	return false;
}

TEST(ipi_fast_logical_against_the_model)
{
	static struct mi_dom m;
	mi_dom_init(&m, ids, NV, 63);
	struct ipi_src_stats st = { 0 };
	unsigned done = 0, slow = 0;
	for (unsigned it = 0; it < 20000; it++) {
		uint32_t cluster = pick(5), mask = pick(4) ? (1u << pick(16)) : pick(0x10000);
		uint32_t dest = it % 97 == 0 ? MI_BROADCAST : (cluster << 16) | mask;
		unsigned vec = 16 + pick(240), mode = pick(8) ? MI_FIXED : pick(8);
		uint64_t icr = MI_ICR(mode, vec, dest) | MI_LOGICAL | (pick(50) ? 0 : MI_SH(1 + pick(3)));
		if (!pick(40))
			icr |= MI_RESERVED & (1ull << 13);
		bool all_vcpus = mask != 0;
		for (unsigned b = 0; b < 16; b++)
			if (mask & (1u << b))
				all_vcpus &= is_vcpu_id((cluster << 4) | b);
		bool want = mode == MI_FIXED && !(icr & MI_RESERVED) && MI_GET_SH(icr) == MI_SH_NONE &&
			    dest != MI_BROADCAST && all_vcpus;
		uint64_t before[NV];
		for (unsigned k = 0; k < NV; k++)
			before[k] = m.tstats[k].posts;
		uint64_t fl = st.fast_logical;
		uint32_t self = pick(NV);
		enum ipi_result r = ipi_fast_logical(&m.d, self, icr, &st);
		if ((r == IPI_DONE) != want) {
			char msg[160];
			snprintf(msg, sizeof msg, "icr 0x%016llx: returned %d, the model says %s", (unsigned long long)icr, r,
				 want ? "served" : "slow path");
			test_fail(__FILE__, __LINE__, msg);
			break;
		}
		for (unsigned k = 0; k < NV; k++) {
			bool hit = m.tstats[k].posts != before[k];
			bool in = want && mi_logical_match(mi_ldr(ids[k]), dest);
			if (hit != in) {
				char msg[160];
				snprintf(msg, sizeof msg, "icr 0x%016llx: vCPU %u (x2APIC ID %u) %s", (unsigned long long)icr, k,
					 ids[k], hit ? "posted, not in the set" : "in the set, not posted");
				test_fail(__FILE__, __LINE__, msg);
				it = ~0u - 1;
				break;
			}
		}
		CHECK_EQ(st.fast_logical, fl + (want ? 1 : 0));
		done += want;
		slow += !want;
		if (it % 64 == 0)
			for (unsigned k = 0; k < NV; k++)
				mi_drain(&m, k);
	}
	CHECK(done > 1000 && slow > 1000);   /* both outcomes exercised */
	mi_dom_free(&m);
}
