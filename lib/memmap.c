/* Memory map normalization and the hypervisor's page allocator. */
#include "memmap.h"
#include "spinlock.h"
#include "printk.h"
#include "string.h"

bool memmap_add(struct memmap *m, uint64_t base, uint64_t len, uint32_t type)
{
	if (!len)
		return true;
	/* Ends are exclusive, so a range may reach 2^64 - 1 at most: clip there. */
	if (base + len < base || base + len == 0)
		len = ~base;
	/* A range that continues the last one with the same type extends it:
	 * firmware maps come sorted and split finely (UEFI's boot-services
	 * code, data and free memory all become usable RAM). */
	if (m->count) {
		struct mem_range *last = &m->r[m->count - 1];
		if (last->type == type && last->base + last->len == base && base + len > base) {
			last->len += len;
			return true;
		}
	}
	if (m->count == MEMMAP_MAX)
		return false;
	m->r[m->count++] = (struct mem_range){ base, len, type };
	return true;
}

/* Which type wins where two ranges overlap: anything beats usable RAM, the
 * hypervisor's claim beats everything, otherwise the higher code. */
static uint32_t type_rank(uint32_t t)
{
	return t == MEM_USABLE ? 0 : t;
}

void memmap_normalize(struct memmap *m)
{
	/* Boundary sweep: collect every start and end, then give each elementary
	 * interval the winning type of the ranges that cover it. */
	static uint64_t pts[2 * MEMMAP_MAX];
	static struct memmap out;
	uint32_t np = 0;

	for (uint32_t i = 0; i < m->count; i++) {
		pts[np++] = m->r[i].base;
		pts[np++] = m->r[i].base + m->r[i].len;
	}
	for (uint32_t i = 1; i < np; i++) {         /* insertion sort: n is small */
		uint64_t v = pts[i];
		uint32_t j = i;
		while (j && pts[j - 1] > v) {
			pts[j] = pts[j - 1];
			j--;
		}
		pts[j] = v;
	}
	out.count = 0;
	for (uint32_t i = 0; i + 1 < np; i++) {
		uint64_t a = pts[i], b = pts[i + 1];
		if (a == b)
			continue;
		uint32_t best = 0;
		for (uint32_t k = 0; k < m->count; k++) {
			const struct mem_range *r = &m->r[k];
			if (r->base <= a && r->base + r->len >= b &&
			    (!best || type_rank(r->type) > type_rank(best)))
				best = r->type;
		}
		if (!best)
			continue;
		struct mem_range *last = out.count ? &out.r[out.count - 1] : NULL;
		if (last && last->type == best && last->base + last->len == a)
			last->len += b - a;
		else if (out.count < MEMMAP_MAX)
			out.r[out.count++] = (struct mem_range){ a, b - a, best };
	}
	memcpy(m, &out, sizeof out);
}

bool memmap_claim(struct memmap *m, uint64_t base, uint64_t len)
{
	if (!memmap_add(m, base, len, MEM_HV))
		return false;
	memmap_normalize(m);
	return true;
}

uint32_t memmap_type_at(const struct memmap *m, uint64_t addr)
{
	for (uint32_t i = 0; i < m->count; i++)
		if (addr >= m->r[i].base && addr - m->r[i].base < m->r[i].len)
			return m->r[i].type;
	return 0;
}

uint64_t memmap_total(const struct memmap *m, uint32_t type)
{
	uint64_t sum = 0;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].type == type)
			sum += m->r[i].len;
	return sum;
}

uint64_t memmap_end(const struct memmap *m)
{
	uint64_t end = 0;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].base + m->r[i].len > end)
			end = m->r[i].base + m->r[i].len;
	return end;
}

uint64_t memmap_find_free(const struct memmap *m, uint64_t len, uint64_t limit)
{
	return memmap_find_free_in(m, len, 0, limit);
}

uint64_t memmap_find_free_in(const struct memmap *m, uint64_t len, uint64_t floor, uint64_t limit)
{
	if (!len || len > UINT64_MAX - PAGE_SIZE)
		return 0;
	len = ALIGN_UP(len, PAGE_SIZE);
	for (uint32_t i = m->count; i-- > 0;) {
		const struct mem_range *r = &m->r[i];
		if (r->type != MEM_USABLE)
			continue;
		uint64_t lo = ALIGN_UP(r->base, PAGE_SIZE);
		uint64_t hi = ALIGN_DOWN(r->base + r->len, PAGE_SIZE);
		if (hi > limit)
			hi = ALIGN_DOWN(limit, PAGE_SIZE);
		/* Never hand out the first MiB: real-mode structures and the AP trampoline live there. */
		if (lo < MIB(1))
			lo = MIB(1);
		if (lo < floor)
			lo = ALIGN_UP(floor, PAGE_SIZE);
		if (hi > lo && hi - lo >= len)
			return hi - len;
	}
	return 0;
}

const char *memmap_type_name(uint32_t type)
{
	switch (type) {
	case MEM_USABLE: return "usable";
	case MEM_RESERVED: return "reserved";
	case MEM_ACPI: return "acpi";
	case MEM_NVS: return "acpi-nvs";
	case MEM_BAD: return "bad";
	case MEM_BOOT: return "boot-data";
	case MEM_HV: return "hypervisor";
	default: return "unknown";
	}
}

void memmap_print(const struct memmap *m, const char *title)
{
	pr_info("memmap: %s, %u ranges, %llu MiB usable, %llu KiB hypervisor\n", title, m->count,
		(unsigned long long)(memmap_total(m, MEM_USABLE) >> 20),
		(unsigned long long)(memmap_total(m, MEM_HV) >> 10));
	for (uint32_t i = 0; i < m->count; i++)
		pr_info("memmap:   [%016llx-%016llx] %s\n", (unsigned long long)m->r[i].base,
			(unsigned long long)(m->r[i].base + m->r[i].len - 1), memmap_type_name(m->r[i].type));
}

static uint64_t heap_next, heap_end, heap_base;

void page_alloc_init(uint64_t base, uint64_t len)
{
	heap_base = heap_next = ALIGN_UP(base, PAGE_SIZE);
	heap_end = ALIGN_DOWN(base + len, PAGE_SIZE);
	if (heap_end < heap_next)
		heap_end = heap_next;
}

/* Callers at run time (EPT splits, the sink) come from several CPUs: the
 * bump is taken under a lock; the budgets that keep a guest from emptying
 * the heap are the callers' (vmx/ept_live.h). */
static spinlock_t heap_lock;

void *page_alloc(uint64_t pages)
{
	uint64_t bytes = pages * PAGE_SIZE;
	spin_lock(&heap_lock);
	if (!pages || pages > (heap_end - heap_next) / PAGE_SIZE) {
		spin_unlock(&heap_lock);
		panic("page_alloc: out of hypervisor memory (%llu pages wanted, %llu free)\n",
		      (unsigned long long)pages, (unsigned long long)((heap_end - heap_next) / PAGE_SIZE));
	}
	void *p = (void *)(uintptr_t)heap_next;
	heap_next += bytes;
	spin_unlock(&heap_lock);
	memset(p, 0, bytes);
	return p;
}

uint64_t page_alloc_used(void) { return heap_next - heap_base; }
uint64_t page_alloc_free(void) { return heap_end - heap_next; }
