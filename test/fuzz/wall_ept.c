/* The wall fuzzer's EPT (wall_ept.h): the real vmx/ept.c, its tables in
 * page-aligned pages of the fuzzer's own (page_alloc over an arena), built
 * and edited as the hypervisor does:
 *  - boot: ept_build over [0, max(end of the map, 4 GiB)), at least
 *    512 GiB with 1 GiB pages (vmx/setup.c's ept_setup), no MTRRs: RAM
 *    write-back, the hypervisor's ranges left out (holes), MMIO and
 *    reserved ranges present identity leaves of UC type; the sinks as
 *    vmx/exit_ept.c (read, write) and vmx/ept_live.c (the absent GiB)
 *    allocate them;
 *  - beyond it, a GiB mapped late at the first touch of the trap or of a
 *    vCPU (ept_map_late within EPT_LATE_MAX_TABLES, then the absent GiB:
 *    vmx/ept_live.c's ept_live_late);
 *  - the trap's table pages out (vmx/msi_trap.c's hw_table_at: the GiB
 *    late first, refused beyond the address width, over the hypervisor's
 *    or an absent GiB; then ept_live_unmap: all pages or none, the
 *    run-time splits within EPT_LIVE_MAX_TABLES and the heap) and back
 *    (hw_table_gone: ept_restore_page);
 *  - a vCPU's EPT violation the traps declined (vmx/exit_ept.c's
 *    exit_ept_violation: the late GiB, else map_sink read then write,
 *    a store the decoder knows dropped, #PF on a hypervisor page the sink
 *    cannot take).
 *  - with nx_huge (vmx/ept.h), a vCPU's fetch from a non-executable large
 *    page (vmx/ept_live.c's ept_live_exec: split, or the fallback);
 * Not modelled: INVEPT and the TLBs (a translation is walked afresh at
 * every access), the hypervisor's own page tables (paging_map_mmio: room
 * always), the lock (one thread), the other traps' pages (the virtual
 * IOAPIC's, the HPET's, the ECAM pages: mapped here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wall_ept.h"
#include "../../vmx/ept.h"
#include "../../vmx/ept_live.h"
#include "../../lib/memmap.h"

#define ARENA_PAGES 2048
#define ADDR 0x000ffffffffff000ull
#define RWX (EPT_R | EPT_W | EPT_X)

static uint8_t *arena;
struct wept_pages wept_taken, wept_given, wept_sunk, wept_fetched;
uint64_t wept_nx_allowed;
struct wept_state {
	const struct memmap *mem;
	struct vmx_caps caps;
	uint64_t eptp, ept_end, gpa_limit;
	uint64_t sink, wsink, gib_sink, sink_gib;  /* exit_ept.c's two; ept_live.c's page and its GiB's entry */
	uint64_t base;                             /* the arena offset page_alloc's heap began at */
	struct ept_stats boot, rt, late;
	uint64_t refused, nx_allowed;
	bool runtime, nx;
};
static struct wept_state w;
const char *const wept_exit_name[] = { "its GiB mapped late", "the sink mapped", "the store dropped", "runs again",
				       "#PF injected" };

static void heap_at(uint64_t off)
{
	w.base = off;
	page_alloc_init((uint64_t)(uintptr_t)(arena + off), (uint64_t)ARENA_PAGES * PAGE_SIZE - off);
}
static uint64_t heap_used(void) { return w.base + page_alloc_used(); }

static int find(const struct wept_pages *r, uint64_t pg)
{
	for (uint32_t i = 0; i < r->n; i++)
		if (r->pg[i] == pg)
			return (int)i;
	return -1;
}
static void del(struct wept_pages *r, uint64_t pg)
{
	int i = find(r, pg);
	if (i >= 0)
		r->pg[i] = r->pg[--r->n];
}
/* (the oldest left out when full: wept_taken never is, wept_table_at
 * refuses first) */
static void add(struct wept_pages *r, uint64_t pg)
{
	if (find(r, pg) >= 0)
		return;
	if (r->n == sizeof r->pg / sizeof r->pg[0])
		memmove(r->pg, r->pg + 1, --r->n * sizeof r->pg[0]);
	r->pg[r->n++] = pg;
}

static uint64_t *sink_alloc(void)
{
	uint64_t *p = page_alloc(1);
	memset(p, 0xff, PAGE_SIZE);
	return p;
}

void wept_boot(const struct memmap *mem, bool ept_1g, bool nx_huge)
{
	if (!arena && !(arena = aligned_alloc(PAGE_SIZE, ARENA_PAGES * PAGE_SIZE)))
		abort();
	memset(&w, 0, sizeof w);
	memset(&wept_taken, 0, sizeof wept_taken);
	memset(&wept_given, 0, sizeof wept_given);
	memset(&wept_sunk, 0, sizeof wept_sunk);
	memset(&wept_fetched, 0, sizeof wept_fetched);
	heap_at(0);
	ept_set_nx_huge(nx_huge);
	w.nx = nx_huge;
	w.mem = mem;
	w.caps.ept = w.caps.ept_2m = w.caps.ept_wb = w.caps.ept_4level = true;
	w.caps.ept_1g = ept_1g;
	uint64_t end = memmap_end(mem);
	end = end < GIB(4) ? GIB(4) : end;
	if (ept_1g && end < GIB(512))
		end = GIB(512);
	w.eptp = ept_build(mem, NULL, &w.caps, end, &w.boot);
	w.ept_end = ALIGN_UP(end, GIB(1));
	w.gpa_limit = 1ull << 46;
	w.sink = (uint64_t)(uintptr_t)sink_alloc();
	w.wsink = (uint64_t)(uintptr_t)sink_alloc();
	w.gib_sink = (uint64_t)(uintptr_t)sink_alloc();
	w.sink_gib = ept_sink_gib(w.gib_sink, &w.late);
}
void wept_run(void) { w.runtime = true; }
uint64_t wept_gpa_limit(void) { return w.gpa_limit; }

/* vmx/ept_live.c's ept_live_late. */
static void late(uint64_t gpa, bool *absent)
{
	ept_map_late(w.eptp, w.mem, NULL, &w.caps, gpa, &w.late, EPT_LATE_MAX_TABLES, w.sink_gib);
	const uint64_t *pml4 = (const uint64_t *)(uintptr_t)(w.eptp & ~0xfffull);
	uint64_t e4 = pml4[(gpa >> 39) & 511];
	uint64_t e3 = e4 ? ((const uint64_t *)(uintptr_t)(e4 & ADDR))[(gpa >> 30) & 511] : 0;
	*absent = !e3 || e3 == w.sink_gib;
}

bool wept_table_at(uint64_t pa, uint32_t len)
{
	for (uint64_t g = pa & ~(GIB(1) - 1); g < pa + len; g += GIB(1)) {
		bool absent = false;
		if (g >= w.ept_end && (g >= w.gpa_limit || memmap_type_at(w.mem, g) == MEM_HV))
			return false;
		if (g >= w.ept_end)
			late(g, &absent);
		if (absent)
			return false;
	}
	/* ept_live_unmap */
	uint64_t first = pa & ~0xfffull, end = (pa + len + 0xfff) & ~0xfffull, need = 0, fresh = 0;
	for (uint64_t pg = first; pg < end; pg += PAGE_SIZE) {
		need += ept_unmap_needs(w.eptp, pg);
		fresh += find(&wept_taken, pg) < 0;
	}
	if ((w.runtime && w.rt.tables + need > EPT_LIVE_MAX_TABLES) || need > page_alloc_free() / PAGE_SIZE ||
	    wept_taken.n + fresh > sizeof wept_taken.pg / sizeof wept_taken.pg[0]) {
		w.refused++;
		return false;
	}
	for (uint64_t pg = first; pg < end; pg += PAGE_SIZE) {
		ept_unmap_page(w.eptp, pg, w.runtime ? &w.rt : &w.boot);
		add(&wept_taken, pg);
		del(&wept_given, pg);
	}
	return true;
}

void wept_table_gone(uint64_t pg)
{
	ept_restore_page(w.eptp, pg);      /* its result ignored, as ept_live_restore does */
	del(&wept_taken, pg);
	add(&wept_given, pg);
}

/* The entry that maps gpa, or the first not present on the way, and its
 * level (the shift of the size it maps). */
static uint64_t walk(uint64_t gpa, int *shift)
{
	const uint64_t *t = (const uint64_t *)(uintptr_t)(w.eptp & ~0xfffull);
	for (int s = 39;; s -= 9) {
		uint64_t e = t[(gpa >> s) & 511];
		*shift = s;
		if (s == 12 || !(e & RWX) || (s <= 30 && (e & EPT_LARGE)))
			return e;
		t = (const uint64_t *)(uintptr_t)(e & ADDR);
	}
}
static uint64_t target(uint64_t e, int shift, uint64_t gpa)
{
	uint64_t size = 1ull << shift;
	return ((e & ADDR & ~(size - 1)) | (gpa & (size - 1))) & ~0xfffull;
}

int wept_access(uint64_t gpa, bool write)
{
	int shift;
	uint64_t e = walk(gpa, &shift);
	if (!(e & EPT_R) || (write && !(e & EPT_W)))
		return WA_FAULT;
	uint64_t pg = target(e, shift, gpa);
	return pg == (gpa & ~0xfffull) ? WA_IDENTITY : pg == w.sink ? WA_SINK : pg == w.wsink ? WA_WSINK :
	       pg == w.gib_sink ? WA_ABSENT_GIB : WA_OTHER;
}

bool wept_out(uint64_t pg)
{
	int shift;
	uint64_t e = walk(pg, &shift);
	return shift == 12 && !(e & RWX) && (e & ADDR) == pg;
}
bool wept_back(uint64_t pg)
{
	int shift;
	uint64_t e = walk(pg, &shift);
	return (e & RWX) == RWX && target(e, shift, pg) == pg;
}
int wept_sink(uint64_t pg)
{
	int shift;
	uint64_t e = walk(pg, &shift);
	if (!(e & RWX))
		return 0;
	uint64_t to = target(e, shift, pg);
	return to == w.sink ? 1 : to == w.wsink ? 2 : 0;
}
const char *wept_say(uint64_t pg)
{
	static char buf[160];
	int shift;
	uint64_t e = walk(pg, &shift), to = target(e, shift, pg);
	const char *size = shift == 12 ? "4K" : shift == 21 ? "2M" : shift == 30 ? "1G" : "512G";
	if (!(e & RWX))
		snprintf(buf, sizeof buf, "%s entry 0x%llx: not present%s", size, (unsigned long long)e,
			 shift > 12 ? " (no table below)" : (e & ADDR) == pg ? ", its own address kept" : ", a hole");
	else
		snprintf(buf, sizeof buf, "%s entry 0x%llx: %c%c%c type %u, at %s0x%llx", size, (unsigned long long)e,
			 e & EPT_R ? 'R' : '-', e & EPT_W ? 'W' : '-', e & EPT_X ? 'X' : '-', (unsigned)(e >> EPT_MT_SHIFT & 7),
			 to == w.sink ? "the read sink " : to == w.wsink ? "the write sink " : to == w.gib_sink ? "the absent GiB's sink " :
			 to == pg ? "its own address " : "", (unsigned long long)to);
	return buf;
}

bool wept_nx_on(void) { return w.nx; }

int wept_fetch(uint64_t gpa)
{
	if (!w.nx)
		return -1;
	ept_set_nx_huge(true);             /* (the policy is global in ept.c: a snapshot of another boot may have set it) */
	unsigned need = ept_unmap_needs(w.eptp, gpa);
	int r;
	if (need && (uint64_t)need * PAGE_SIZE + EPT_NX_RESERVE > page_alloc_free()) {
		r = ept_exec_allow_large(w.eptp, gpa);
		w.nx_allowed += r > 0;
	} else {
		r = ept_exec_split(w.eptp, gpa, &w.rt);
	}
	wept_nx_allowed = w.nx_allowed;
	if (r >= 0)
		add(&wept_fetched, gpa & ~0xfffull);
	return r;
}

bool wept_exec_ok(uint64_t pg, bool *large)
{
	int shift;
	uint64_t e = walk(pg, &shift);
	*large = shift > 12;
	return (e & (EPT_R | EPT_X)) == (EPT_R | EPT_X) && (shift == 12 || w.nx_allowed);
}

/* vmx/exit_ept.c's map_sink, the fills recorded. */
static int map_sink(uint64_t gpa, bool write)
{
	int r = ept_map_sink(w.eptp, gpa, w.sink, w.wsink, write);
	if (r == 1)
		add(&wept_sunk, gpa & ~0xfffull);
	return r;
}

int wept_exit(uint64_t gpa, bool write, bool known_store)
{
	uint32_t type = memmap_type_at(w.mem, gpa);
	if (type != MEM_HV && gpa >= w.ept_end && gpa < w.gpa_limit) {
		bool absent;
		late(gpa, &absent);
		return WX_LATE;           /* mapped now, or by another vCPU meanwhile: the access runs again */
	}
	if (type != MEM_HV) {
		int sunk = map_sink(gpa, false);
		if (sunk < 0)
			return WX_AGAIN;
		bool dropped = write && known_store;
		if (write && !dropped)
			map_sink(gpa, true);
		return dropped ? WX_DROPPED : WX_SUNK;
	}
	int sunk = map_sink(gpa, false);
	if (sunk >= 0 && write && known_store)
		return WX_DROPPED;
	if (sunk >= 0 && write)
		sunk = map_sink(gpa, true);
	return sunk >= 0 ? WX_SUNK : WX_PF;
}

struct wept_snap {
	struct wept_state w;
	struct wept_pages taken, given, sunk, fetched;
	uint64_t used;
	uint8_t pages[];
};
struct wept_snap *wept_save(void)
{
	uint64_t used = heap_used();
	struct wept_snap *p = malloc(sizeof *p + used);
	if (!p)
		abort();
	p->w = w, p->taken = wept_taken, p->given = wept_given, p->sunk = wept_sunk, p->fetched = wept_fetched, p->used = used;
	memcpy(p->pages, arena, used);
	return p;
}
void wept_load(const struct wept_snap *p)
{
	memcpy(arena, p->pages, p->used);
	w = p->w, wept_taken = p->taken, wept_given = p->given, wept_sunk = p->sunk, wept_fetched = p->fetched;
	wept_nx_allowed = w.nx_allowed;
	ept_set_nx_huge(w.nx);
	heap_at(p->used);
}
