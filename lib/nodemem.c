/* NUMA-local pools for per-CPU structures (lib/nodemem.h). */
#include "nodemem.h"
#include "printk.h"
#include "string.h"

static struct node_pool *pools;
static uint32_t npools, pools_room;
static uint64_t fallback_pages;
const struct srat_info *nodemem_srat;

int64_t nodemem_node_of(uint32_t apic_id)
{
	return nodemem_srat ? srat_node_of_apic(nodemem_srat, apic_id) : -1;
}

void nodemem_reset(void)
{
	pools = NULL;
	npools = pools_room = 0;
	fallback_pages = 0;
	nodemem_srat = NULL;
}

static bool room_for(uint32_t n)
{
	if (pools_room >= n)
		return true;
	uint64_t pages = ALIGN_UP((uint64_t)n * sizeof *pools, PAGE_SIZE) / PAGE_SIZE;
	if (pages > page_alloc_free() / PAGE_SIZE)
		return false;
	struct node_pool *p = page_alloc(pages);
	if (npools)
		memcpy(p, pools, npools * sizeof *pools);
	pools = p;
	pools_room = (uint32_t)(pages * PAGE_SIZE / sizeof *pools);
	return true;
}

static void add_pool(struct memmap *m, uint32_t node, uint32_t ncpus, uint64_t base, uint64_t len)
{
	memmap_claim(m, base, len);
	pools[npools++] = (struct node_pool){ .node = node, .ncpus = ncpus, .base = base, .len = len };
	if (node == NODEMEM_ANY)
		pr_info("numa: per-CPU pool [%016llx-%016llx] (%llu KiB) for any CPU\n", (unsigned long long)base,
			(unsigned long long)(base + len - 1), (unsigned long long)(len >> 10));
	else
		pr_info("numa: node %u pool [%016llx-%016llx] (%llu KiB) for its %u CPUs\n", node,
			(unsigned long long)base, (unsigned long long)(base + len - 1),
			(unsigned long long)(len >> 10), ncpus);
}

uint32_t nodemem_init(struct memmap *m, const struct srat_info *s, uint64_t per_cpu)
{
	uint32_t made = 0, none = 0;
	char names[160];
	size_t nl = 0;
	names[0] = 0;
	if (!s || !s->nnodes || !room_for(npools + s->nnodes))
		return 0;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const struct srat_node *n = &s->node[i];
		if (!n->ncpus)
			continue;
		uint64_t len = ALIGN_UP((uint64_t)n->ncpus * per_cpu, PAGE_SIZE), base = 0;
		for (uint32_t k = s->nmem; k-- > 0 && !base;) {
			const struct srat_mem *r = &s->mem[k];
			if (r->node == n->id && !r->hotplug && !r->nonvolatile)
				base = memmap_find_free_in(m, len, r->base, r->base + r->len);
		}
		if (!base) {
			none++;
			if (nl < sizeof names)
				nl += (size_t)snprintf(names + nl, sizeof names - nl, " %u", n->id);
			continue;
		}
		add_pool(m, n->id, n->ncpus, base, len);
		made++;
	}
	if (none)
		pr_warn("numa: no usable RAM of their own for the per-CPU structures of node(s)%s: their CPUs use the heap\n",
			names);
	return made;
}

bool nodemem_add_any(struct memmap *m, uint64_t len, uint64_t limit)
{
	len = ALIGN_UP(len, PAGE_SIZE);
	uint64_t base = memmap_find_free(m, len, limit);
	if (!base || !room_for(npools + 1))
		return false;
	add_pool(m, NODEMEM_ANY, 0, base, len);
	return true;
}

static void *pool_take(uint32_t node, uint64_t pages)
{
	for (uint32_t i = 0; i < npools; i++) {
		struct node_pool *p = &pools[i];
		if (p->node != node || !pages || pages > (p->len - p->used) / PAGE_SIZE)
			continue;
		void *r = (void *)(uintptr_t)(p->base + p->used);
		p->used += pages * PAGE_SIZE;
		memset(r, 0, pages * PAGE_SIZE);
		return r;
	}
	return NULL;
}

void *page_alloc_node(int64_t node, uint64_t pages)
{
	void *r;
	if (node >= 0 && node != NODEMEM_ANY) {
		if ((r = pool_take((uint32_t)node, pages)))
			return r;
		fallback_pages += pages;
	}
	if ((r = pool_take(NODEMEM_ANY, pages)))
		return r;
	return page_alloc(pages);
}

bool nodemem_has_pool(int64_t node)
{
	for (uint32_t i = 0; node >= 0 && node != NODEMEM_ANY && i < npools; i++)
		if (pools[i].node == (uint32_t)node)
			return true;
	return false;
}

uint64_t nodemem_fallback_pages(void)
{
	return fallback_pages;
}

uint64_t nodemem_pool_used(void)
{
	uint64_t u = 0;
	for (uint32_t i = 0; i < npools; i++)
		u += pools[i].used;
	return u;
}

void nodemem_print(void)
{
	for (uint32_t i = 0; i < npools; i++) {
		if (pools[i].node == NODEMEM_ANY)
			pr_info("numa: any-CPU pool: %llu of %llu KiB used\n", (unsigned long long)(pools[i].used >> 10),
				(unsigned long long)(pools[i].len >> 10));
		else
			pr_info("numa: node %u pool: %llu of %llu KiB used\n", pools[i].node,
				(unsigned long long)(pools[i].used >> 10), (unsigned long long)(pools[i].len >> 10));
	}
	if (npools)
		pr_info("numa: %llu KiB of per-CPU structures fell back to the heap (their node had no pool or it was full)\n",
			(unsigned long long)(fallback_pages * PAGE_SIZE >> 10));
}
