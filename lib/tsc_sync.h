/* The TSCs of several packages: IA32_TSC_ADJUST made equal within each
 * package (never across: firmware may use it to make up for a socket
 * reset apart from the others), then what is left between packages
 * measured and, where it is certain, made up for in the guest's TSC
 * offsets. Pure: lib/tsc.c and boot/smp.c give it the MSR values and the
 * measurements, the unit tests a model of two sockets. */
#ifndef LIB_TSC_SYNC_H
#define LIB_TSC_SYNC_H
#include "types.h"

#define TSC_PKG_MAX 64       /* packages tracked; a CPU of any other is left as it is, counted */

enum { TSC_PKG_FREE, TSC_PKG_CLAIMED, TSC_PKG_READY };

struct tsc_pkg {
	uint32_t state;          /* TSC_PKG_*: a slot is claimed by a package's first CPU */
	uint32_t id;             /* package ID: APIC ID >> the package shift */
	int64_t adjust;          /* its first CPU's IA32_TSC_ADJUST: the package's */
	uint32_t cpus, set;      /* CPUs seen; of them, set to the package's value */
	uint64_t max_diff;       /* the largest difference set */
	/* The skew of the package to the boot CPU: its best measurement (the
	 * CPU with the tightest bound), and what the guest's TSC offset of
	 * its vCPUs makes up for. */
	uint32_t measured;
	int64_t offset;
	uint64_t bound;
	int64_t comp;
};

struct tsc_pkgs {
	struct tsc_pkg p[TSC_PKG_MAX];
	uint32_t npkgs;          /* slots in use (at rest) */
	uint32_t untracked;      /* CPUs beyond TSC_PKG_MAX packages: left alone */
};

/* The boot CPU's package and value: the first entry. */
void tsc_pkgs_init(struct tsc_pkgs *t, uint32_t boot_pkg, int64_t boot_adjust);
/* A CPU of package pkg whose IA32_TSC_ADJUST holds own: the value it must
 * hold (its package's; its own when it is the package's first). Safe to
 * call from every CPU at once. */
int64_t tsc_pkgs_adjust(struct tsc_pkgs *t, uint32_t pkg, int64_t own);

/* One CPU's skew to the boot CPU (lib/tsc_skew.h's offset and bound). */
struct tsc_cpu_skew { uint32_t pkg; bool ok; int64_t offset; uint64_t bound; };
/* Per package other than the boot CPU's: the measurement with the
 * tightest bound; where the offset lies beyond it (the TSCs certainly
 * differ), comp = -offset, else 0. Returns how many packages are made up for. */
uint32_t tsc_pkgs_compensate(struct tsc_pkgs *t, uint32_t boot_pkg, const struct tsc_cpu_skew *s, uint32_t n);
/* The guest TSC offset for a CPU of package pkg (0 when none). */
int64_t tsc_pkgs_comp(const struct tsc_pkgs *t, uint32_t pkg);
const struct tsc_pkg *tsc_pkgs_find(const struct tsc_pkgs *t, uint32_t pkg);
#endif
