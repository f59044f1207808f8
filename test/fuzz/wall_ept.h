/* The wall fuzzer's EPT (test/fuzz/fuzz_wall.c, wall_ept.c): the real
 * vmx/ept.c over the fuzzer's memory map, edited as vmx/msi_trap.c and
 * vmx/ept_live.c edit it for the MSI trap and as vmx/exit_ept.c does for a
 * vCPU's EPT violation. */
#ifndef TEST_FUZZ_WALL_EPT_H
#define TEST_FUZZ_WALL_EPT_H
#include <stdbool.h>
#include <stdint.h>

struct memmap;

/* A new machine: the tables' pages reset, the identity map built
 * (vmx/setup.c's ept_setup: [0, max(end of the map, 4 GiB)), at least
 * 512 GiB with 1 GiB pages), the sinks allocated; the trap's unmaps are
 * the boot's (no budget) until wept_run. */
void wept_boot(const struct memmap *mem, bool ept_1g, bool nx_huge);
void wept_run(void);
/* vmx/msi_trap.c's hw_table_at and hw_table_gone, EPT side: the table's
 * GiBs mapped late where beyond the identity map, then all its pages out
 * or none (ept_live_unmap's budget); a page back (ept_live_restore). */
bool wept_table_at(uint64_t pa, uint32_t len);
void wept_table_gone(uint64_t pg);

/* What a guest access at gpa meets in the EPT now. */
enum { WA_FAULT, WA_IDENTITY, WA_SINK, WA_WSINK, WA_ABSENT_GIB, WA_OTHER };
int wept_access(uint64_t gpa, bool write);
/* vmx/exit_ept.c's exit_ept_violation for gpa once the traps before it
 * (the virtual IOAPIC's, the MSI trap's trapped_at, the HPET's) declined
 * it: the late GiB, the sink, the store dropped (known_store: the MMIO
 * decoder knows the instruction), or #PF. */
enum { WX_LATE, WX_SUNK, WX_DROPPED, WX_AGAIN, WX_PF };
int wept_exit(uint64_t gpa, bool write, bool known_store);
extern const char *const wept_exit_name[];
uint64_t wept_gpa_limit(void);

/* vmx/exit_ept.c's first step for a guest fetch under nx_huge
 * (vmx/ept_live.c's ept_live_exec: the large page split into executable
 * 4 KiB pages, or made executable as it is where the heap would keep less
 * than EPT_NX_RESERVE): 1 done now, 0 done before, -1 not such a page (the
 * rest of the exit follows). The page recorded in wept_fetched. */
int wept_fetch(uint64_t gpa);
/* The fetched page's leaf is executable and 4 KiB, or large and made
 * executable by the fallback (counted: wept_nx_allowed). */
bool wept_exec_ok(uint64_t pg, bool *large);
bool wept_nx_on(void);
extern uint64_t wept_nx_allowed;

/* The page pg's leaf: out (not present, its own address kept), back
 * (present, identity, RWX, as ept_restore_page leaves it), mapping one of
 * the exit path's sinks (1: the read sink, 2: the write sink); said. */
bool wept_out(uint64_t pg);
bool wept_back(uint64_t pg);
int wept_sink(uint64_t pg);
const char *wept_say(uint64_t pg);

/* The records the invariant walks: pages taken out (wept_table_at, no
 * wept_table_gone since), given back (and not taken again), and filled
 * with a sink by wept_exit. */
struct wept_pages { uint32_t n; uint64_t pg[256]; };
extern struct wept_pages wept_taken, wept_given, wept_sunk, wept_fetched;

/* One machine's tables and records, kept and put back. */
struct wept_snap;
struct wept_snap *wept_save(void);
void wept_load(const struct wept_snap *p);
#endif
