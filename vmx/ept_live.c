/* Run-time EPT edits under one lock, within a budget (ept_live.h). */
#include "ept_live.h"
#include "ept.h"
#include "../lib/memmap.h"
#include "../lib/printk.h"
#include "../lib/spinlock.h"
#include "../lib/string.h"

static spinlock_t lock;
static struct ept_stats rt;              /* tables split at run time */
static uint64_t refused;

void ept_live_lock(void) { spin_lock(&lock); }
void ept_live_unlock(void) { spin_unlock(&lock); }

bool ept_live_unmap(uint64_t eptp, uint64_t pa, uint64_t len, bool runtime)
{
	struct ept_stats boot = { 0 };
	uint64_t first = pa & ~0xfffull, end = (pa + len + 0xfff) & ~0xfffull;
	spin_lock(&lock);
	/* At most what every page would need on its own (pages in one large
	 * page need it once: an overestimate, never an underestimate). */
	uint64_t need = 0;
	for (uint64_t pg = first; pg < end; pg += PAGE_SIZE)
		need += ept_unmap_needs(eptp, pg);
	if ((runtime && rt.tables + need > EPT_LIVE_MAX_TABLES) || need > page_alloc_free() / PAGE_SIZE) {
		refused++;
		spin_unlock(&lock);
		return false;
	}
	for (uint64_t pg = first; pg < end; pg += PAGE_SIZE)
		ept_unmap_page(eptp, pg, runtime ? &rt : &boot);
	spin_unlock(&lock);
	return true;
}

void ept_live_restore(uint64_t eptp, uint64_t pg)
{
	spin_lock(&lock);
	ept_restore_page(eptp, pg);
	spin_unlock(&lock);
}

static struct ept_nx_stats nx;

int ept_live_exec(uint64_t eptp, uint64_t gpa)
{
	struct ept_stats st = { 0 };
	spin_lock(&lock);
	unsigned need = ept_unmap_needs(eptp, gpa);
	int r;
	if (need && (uint64_t)need * PAGE_SIZE + EPT_NX_RESERVE > page_alloc_free()) {
		r = ept_exec_allow_large(eptp, gpa);
		if (r == 0)
			nx.again++;
		if (r > 0 && !nx.allowed_large++)
			pr_warn("hv: EPT: the heap keeps no room to split the large page at GPA 0x%llx for a guest fetch: made executable as it is (open to the iTLB-multihit erratum; counted, said once)\n",
				(unsigned long long)gpa);
	} else {
		r = ept_exec_split(eptp, gpa, &st);
		if (r > 0) {
			nx.split_2m++;
			nx.split_1g += need > 1;
		} else if (r == 0) {
			nx.again++;
		}
	}
	spin_unlock(&lock);
	return r;
}

/* (read without the lock: figures for the report, which may come from a
 * panic on a CPU that holds it) */
struct ept_nx_stats ept_live_nx_stats(void)
{
	return nx;
}

uint64_t ept_live_tables(void) { return rt.tables; }
uint64_t ept_live_refused(void) { return refused; }

static struct ept_stats late;
static uint64_t sink_gib;

bool ept_live_late(uint64_t eptp, const struct memmap *m, const struct mtrr_state *mtrr, const struct vmx_caps *c,
		   uint64_t gpa, bool *absent)
{
	spin_lock(&lock);
	if (!sink_gib) {
		uint8_t *sink = page_alloc(1);
		memset(sink, 0xff, PAGE_SIZE);
		sink_gib = ept_sink_gib((paddr_t)(uintptr_t)sink, &late);
	}
	bool now = ept_map_late(eptp, m, mtrr, c, gpa, &late, EPT_LATE_MAX_TABLES, sink_gib);
	const uint64_t *pml4 = (const uint64_t *)(uintptr_t)(eptp & ~0xfffull);
	uint64_t e4 = pml4[(gpa >> 39) & 511];
	uint64_t e3 = e4 ? ((const uint64_t *)(uintptr_t)(e4 & 0x000ffffffffff000ull))[(gpa >> 30) & 511] : 0;
	spin_unlock(&lock);
	*absent = !e3 || e3 == sink_gib;
	return now;
}

void ept_live_late_stats(struct ept_stats *out)
{
	spin_lock(&lock);
	*out = late;
	spin_unlock(&lock);
}
