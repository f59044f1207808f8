/* Linux x86 boot protocol loader (Documentation/arch/x86/boot.rst and
 * zero-page.rst): checks a bzImage, lays out the kernel, initrd, command line
 * and zero page in guest memory, and builds the guest's e820 table.
 *
 * Layout rules:
 *  - Kernel: the protected-mode part (everything after the setup sectors) is
 *    copied to its load address, which needs init_size bytes of usable RAM
 *    (the kernel decompresses in place there). pref_address is used when that
 *    window is usable; otherwise (relocatable kernels only) the lowest
 *    kernel_alignment-aligned address >= max(16 MiB, pref_address) whose window
 *    is usable. The kernel moves itself up to LOAD_PHYSICAL_ADDR (its
 *    pref_address) when loaded below it, hence the lower bound.
 *  - Initrd: stays where the boot loader put it when it is usable RAM, ends
 *    below the limit (initrd_addr_max + 1, or no limit with
 *    XLF_CAN_BE_LOADED_ABOVE_4G) and does not collide with the kernel window,
 *    the zero page or the command line; otherwise it is copied to the highest
 *    page-aligned usable place below the limit.
 *  - Nothing is placed over MEM_HV, the zero page, the command line, or the
 *    sources (bzImage, initrd) while they are still needed.
 *  - e820: every memmap range, MEM_HV as reserved; overlaps resolved (the more
 *    restrictive type wins, MEM_HV most of all), adjacent same-type entries
 *    merged; more than 128 entries is an error.
 * Every check runs before anything is written to guest memory. */
#include "linux.h"
#include "../lib/string.h"
#include "../lib/printk.h"

_Static_assert(sizeof(struct setup_header) == 0x26C - 0x1F1, "setup_header size");
_Static_assert(offsetof(struct setup_header, setup_sects) == 0x1F1 - 0x1F1, "setup_sects");
_Static_assert(offsetof(struct setup_header, syssize) == 0x1F4 - 0x1F1, "syssize");
_Static_assert(offsetof(struct setup_header, vid_mode) == 0x1FA - 0x1F1, "vid_mode");
_Static_assert(offsetof(struct setup_header, boot_flag) == 0x1FE - 0x1F1, "boot_flag");
_Static_assert(offsetof(struct setup_header, jump) == 0x200 - 0x1F1, "jump");
_Static_assert(offsetof(struct setup_header, header) == 0x202 - 0x1F1, "header");
_Static_assert(offsetof(struct setup_header, version) == 0x206 - 0x1F1, "version");
_Static_assert(offsetof(struct setup_header, type_of_loader) == 0x210 - 0x1F1, "type_of_loader");
_Static_assert(offsetof(struct setup_header, loadflags) == 0x211 - 0x1F1, "loadflags");
_Static_assert(offsetof(struct setup_header, code32_start) == 0x214 - 0x1F1, "code32_start");
_Static_assert(offsetof(struct setup_header, ramdisk_image) == 0x218 - 0x1F1, "ramdisk_image");
_Static_assert(offsetof(struct setup_header, ramdisk_size) == 0x21C - 0x1F1, "ramdisk_size");
_Static_assert(offsetof(struct setup_header, heap_end_ptr) == 0x224 - 0x1F1, "heap_end_ptr");
_Static_assert(offsetof(struct setup_header, ext_loader_ver) == 0x226 - 0x1F1, "ext_loader_ver");
_Static_assert(offsetof(struct setup_header, ext_loader_type) == 0x227 - 0x1F1, "ext_loader_type");
_Static_assert(offsetof(struct setup_header, cmd_line_ptr) == 0x228 - 0x1F1, "cmd_line_ptr");
_Static_assert(offsetof(struct setup_header, initrd_addr_max) == 0x22C - 0x1F1, "initrd_addr_max");
_Static_assert(offsetof(struct setup_header, kernel_alignment) == 0x230 - 0x1F1, "kernel_alignment");
_Static_assert(offsetof(struct setup_header, relocatable_kernel) == 0x234 - 0x1F1, "relocatable_kernel");
_Static_assert(offsetof(struct setup_header, xloadflags) == 0x236 - 0x1F1, "xloadflags");
_Static_assert(offsetof(struct setup_header, cmdline_size) == 0x238 - 0x1F1, "cmdline_size");
_Static_assert(offsetof(struct setup_header, hardware_subarch) == 0x23C - 0x1F1, "hardware_subarch");
_Static_assert(offsetof(struct setup_header, setup_data) == 0x250 - 0x1F1, "setup_data");
_Static_assert(offsetof(struct setup_header, pref_address) == 0x258 - 0x1F1, "pref_address");
_Static_assert(offsetof(struct setup_header, init_size) == 0x260 - 0x1F1, "init_size");
_Static_assert(offsetof(struct setup_header, kernel_info_offset) == 0x268 - 0x1F1, "kernel_info_offset");

_Static_assert(sizeof(struct boot_e820_entry) == 20, "e820 entry");
_Static_assert(sizeof(struct boot_params) == 4096, "boot_params size");
_Static_assert(offsetof(struct boot_params, tboot_addr) == 0x058, "tboot_addr");
_Static_assert(offsetof(struct boot_params, acpi_rsdp_addr) == 0x070, "acpi_rsdp_addr");
_Static_assert(offsetof(struct boot_params, ext_ramdisk_image) == 0x0C0, "ext_ramdisk_image");
_Static_assert(offsetof(struct boot_params, ext_ramdisk_size) == 0x0C4, "ext_ramdisk_size");
_Static_assert(offsetof(struct boot_params, ext_cmd_line_ptr) == 0x0C8, "ext_cmd_line_ptr");
_Static_assert(offsetof(struct boot_params, cc_blob_address) == 0x13C, "cc_blob_address");
_Static_assert(offsetof(struct boot_params, alt_mem_k) == 0x1E0, "alt_mem_k");
_Static_assert(offsetof(struct boot_params, e820_entries) == 0x1E8, "e820_entries");
_Static_assert(offsetof(struct boot_params, sentinel) == 0x1EF, "sentinel");
_Static_assert(offsetof(struct boot_params, hdr) == 0x1F1, "hdr");
_Static_assert(offsetof(struct boot_params, edd_mbr_sig_buffer) == 0x290, "edd_mbr_sig_buffer");
_Static_assert(offsetof(struct boot_params, e820_table) == 0x2D0, "e820_table");
_Static_assert(offsetof(struct boot_params, eddbuf) == 0xD00, "eddbuf");

#define BOOT_PROTO_MIN 0x020C       /* 2.12: xloadflags, 64-bit entry */
#define BOOT_PROTO_RSDP 0x020E      /* 2.14+: acpi_rsdp_addr is filled */
#define KERNEL_MIN_LOAD MIB(16)
#define INITRD_ADDR_MAX_DEFAULT 0x37FFFFFFu
#define ENTRY64_OFFSET 0x200
#define LOADER_TYPE_UNDEFINED 0xFF

typedef unsigned long long ull;

#define ERR(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static inline void *pa_ptr(paddr_t pa) { return (void *)(uintptr_t)pa; }

/* Exclusive end of [base, base+len), saturating instead of wrapping. */
static inline uint64_t end_of(uint64_t base, uint64_t len)
{
	uint64_t e = base + len;
	return e < base ? UINT64_MAX : e;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	if (!alen || !blen)
		return false;
	return a < end_of(b, blen) && b < end_of(a, alen);
}

static uint64_t rd16(const uint8_t *p) { return (uint64_t)p[0] | (uint64_t)p[1] << 8; }
static uint64_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | rd32(p + 4) << 32; }

/* ---- boot protocol header ---- */

int linux_check(const void *image, uint64_t size, struct linux_image *li, char *err, size_t errlen)
{
	const uint8_t *k = image;
	if (err && errlen)
		err[0] = 0;
	if (!k || !size)
		ERR("kernel: missing (no bzImage given)");
	if (size < 1024)
		ERR("kernel: image too small (%llu bytes), not a bzImage", (ull)size);
	uint64_t boot_flag = rd16(k + 0x1FE);
	if (boot_flag != BOOT_FLAG_MAGIC)
		ERR("kernel: bad boot flag 0x%04llx at 0x1FE (want 0xAA55), not a bzImage", (ull)boot_flag);
	if (rd32(k + 0x202) != SETUP_HDR_MAGIC)
		ERR("kernel: not a bzImage (no HdrS magic)");
	uint64_t version = rd16(k + 0x206);
	if (version < BOOT_PROTO_MIN)
		ERR("kernel: boot protocol %u.%02u too old (need 2.12)",
		    (unsigned)(version >> 8), (unsigned)(version & 0xFF));
	uint8_t loadflags = k[0x211];
	if (!(loadflags & LOADED_HIGH))
		ERR("kernel: zImage (LOADED_HIGH clear), only bzImage is supported");
	uint16_t xlf = (uint16_t)rd16(k + 0x236);
	if (!(xlf & XLF_KERNEL_64))
		ERR("kernel: no 64-bit entry point (XLF_KERNEL_64 clear in xloadflags 0x%x)", xlf);

	unsigned sects = k[0x1F1] ? k[0x1F1] : 4;
	uint64_t setup_size = (uint64_t)(sects + 1) * 512;
	if (size <= setup_size)
		ERR("kernel: truncated image (%llu bytes, the setup part alone is %llu)",
		    (ull)size, (ull)setup_size);
	uint64_t pm_size = size - setup_size;
	uint64_t syssize = rd32(k + 0x1F4) * 16;
	if (syssize > pm_size)
		ERR("kernel: truncated image (%llu bytes, header says %llu)",
		    (ull)size, (ull)(setup_size + syssize));
	if (pm_size <= ENTRY64_OFFSET)
		ERR("kernel: protected-mode part too small (%llu bytes)", (ull)pm_size);

	bool reloc = k[0x234] != 0;
	uint64_t align = rd32(k + 0x230);
	uint64_t pref = rd64(k + 0x258);
	uint64_t init_size = rd32(k + 0x260);
	if (reloc && (align < PAGE_SIZE || (align & (align - 1))))
		ERR("kernel: bad kernel_alignment 0x%llx (want a power of two >= 4 KiB)", (ull)align);
	if (!pref)
		ERR("kernel: pref_address is 0");
	if (init_size < pm_size)
		ERR("kernel: init_size 0x%llx smaller than the kernel (0x%llx bytes)", (ull)init_size, (ull)pm_size);
	if (!reloc && (pref & (PAGE_SIZE - 1)))
		ERR("kernel: not relocatable and pref_address 0x%llx is not page aligned", (ull)pref);

	if (li) {
		memset(li, 0, sizeof *li);
		li->kernel_src = (paddr_t)(uintptr_t)image;
		li->kernel_size = size;
		li->version = (uint16_t)version;
		li->setup_size = (uint32_t)setup_size;
		li->pm_size = pm_size;
		li->init_size = init_size;
		li->pref_address = pref;
		li->kernel_alignment = align;
		li->relocatable = reloc;
		li->loadflags = loadflags;
		li->xloadflags = xlf;
		li->cmdline_size = (uint32_t)rd32(k + 0x238);
		li->initrd_addr_max = (uint32_t)rd32(k + 0x22C);
		if (!li->initrd_addr_max)
			li->initrd_addr_max = INITRD_ADDR_MAX_DEFAULT;
	}
	return 0;
}

/* ---- memory map queries (only the struct memmap layout is used) ---- */

/* [a, a+len) covered without gaps by ranges of 'type' (any type when 0). */
static bool mem_covered_by(const struct memmap *m, uint64_t a, uint64_t len, uint32_t type)
{
	/* A range that wraps past 2^64 is covered by nothing. (Found by
	 * fuzzing: pref_address 0xffffffffffffffff "fitted", and the kernel
	 * was copied there.) */
	if (len && a > UINT64_MAX - len)
		return false;
	uint64_t end = end_of(a, len), cur = a;
	while (cur < end) {
		bool found = false;
		for (uint32_t i = 0; i < m->count; i++) {
			const struct mem_range *r = &m->r[i];
			if ((!type || r->type == type) && r->len && r->base <= cur && cur < end_of(r->base, r->len)) {
				cur = end_of(r->base, r->len);
				found = true;
				break;
			}
		}
		if (!found)
			return false;
	}
	return true;
}

/* Usable RAM: covered by MEM_USABLE ranges and overlapping no other range. */
static bool mem_usable(const struct memmap *m, uint64_t a, uint64_t len)
{
	if (!len)
		return false;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].type != MEM_USABLE && overlaps(a, len, m->r[i].base, m->r[i].len))
			return false;
	return mem_covered_by(m, a, len, MEM_USABLE);
}

static bool mem_touches_type(const struct memmap *m, uint64_t a, uint64_t len, uint32_t type)
{
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].type == type && overlaps(a, len, m->r[i].base, m->r[i].len))
			return true;
	return false;
}

/* Covered by ranges of any type (gaps are not memory). */
static bool mem_covered(const struct memmap *m, uint64_t a, uint64_t len)
{
	return mem_covered_by(m, a, len, 0);
}

/* Regions a placement must stay clear of. */
struct region {
	uint64_t base, len;
	const char *what;
};
#define MAX_AVOID 6

/* Does [a, a+len) hit an avoided region or a non-usable memmap range? Returns
 * the lowest start and highest end among the conflicts. */
static bool find_conflicts(const struct memmap *m, const struct region *av, int nav,
			   uint64_t a, uint64_t len, uint64_t *lo, uint64_t *hi)
{
	bool hit = false;
	*lo = UINT64_MAX;
	*hi = 0;
	for (int i = 0; i < nav; i++) {
		if (overlaps(a, len, av[i].base, av[i].len)) {
			hit = true;
			if (av[i].base < *lo) *lo = av[i].base;
			if (end_of(av[i].base, av[i].len) > *hi) *hi = end_of(av[i].base, av[i].len);
		}
	}
	for (uint32_t i = 0; i < m->count; i++) {
		const struct mem_range *r = &m->r[i];
		if (r->type != MEM_USABLE && overlaps(a, len, r->base, r->len)) {
			hit = true;
			if (r->base < *lo) *lo = r->base;
			if (end_of(r->base, r->len) > *hi) *hi = end_of(r->base, r->len);
		}
	}
	return hit;
}

static bool fits(const struct memmap *m, const struct region *av, int nav, uint64_t a, uint64_t len)
{
	uint64_t lo, hi;
	return mem_usable(m, a, len) && !find_conflicts(m, av, nav, a, len, &lo, &hi);
}

/* Lowest align-aligned address >= lower with [a, a+len) usable and clear.
 * Returns 0 when none. */
static uint64_t find_lowest(const struct memmap *m, const struct region *av, int nav,
			    uint64_t len, uint64_t align, uint64_t lower)
{
	uint64_t best = 0;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct mem_range *r = &m->r[i];
		if (r->type != MEM_USABLE || !r->len)
			continue;
		uint64_t rend = end_of(r->base, r->len);
		uint64_t start = r->base > lower ? r->base : lower;
		if (start > UINT64_MAX - align)
			continue;
		uint64_t cand = ALIGN_UP(start, align);
		while (cand >= start && cand < rend && len <= rend - cand) {
			if (best && cand >= best)
				break;
			uint64_t lo, hi;
			if (!find_conflicts(m, av, nav, cand, len, &lo, &hi)) {
				best = cand;
				break;
			}
			if (hi > UINT64_MAX - align)
				break;
			cand = ALIGN_UP(hi, align);
		}
	}
	return best;
}

/* Highest page-aligned address with [a, a+len) usable, clear and ending at or
 * below limit. Returns 0 when none. */
static uint64_t find_highest(const struct memmap *m, const struct region *av, int nav,
			     uint64_t len, uint64_t limit)
{
	uint64_t best = 0;
	for (uint32_t i = 0; i < m->count; i++) {
		const struct mem_range *r = &m->r[i];
		if (r->type != MEM_USABLE || !r->len)
			continue;
		uint64_t top = end_of(r->base, r->len);
		if (top > limit)
			top = limit;
		if (top < r->base || top - r->base < len)
			continue;
		uint64_t cand = ALIGN_DOWN(top - len, PAGE_SIZE);
		while (cand >= r->base && cand > best) {
			uint64_t lo, hi;
			if (!find_conflicts(m, av, nav, cand, len, &lo, &hi)) {
				best = cand;
				break;
			}
			if (lo < len || lo - len < r->base)
				break;
			uint64_t next = ALIGN_DOWN(lo - len, PAGE_SIZE);
			if (next >= cand)
				break;
			cand = next;
		}
	}
	return best;
}

/* ---- e820 ---- */

uint32_t linux_e820_type(uint32_t mem_type)
{
	switch (mem_type) {
	case MEM_USABLE: return E820_TYPE_RAM;
	case MEM_ACPI: return E820_TYPE_ACPI;
	case MEM_NVS: return E820_TYPE_NVS;
	case MEM_BAD: return E820_TYPE_UNUSABLE;
	case MEM_RESERVED:
	case MEM_HV:
	default: return E820_TYPE_RESERVED;
	}
}

/* Which type wins where ranges overlap: usable loses to everything, the
 * hypervisor's own memory beats everything. */
static int type_rank(uint32_t mem_type)
{
	switch (mem_type) {
	case MEM_USABLE: return 1;
	case MEM_ACPI: return 2;
	case MEM_NVS: return 3;
	case MEM_RESERVED: return 4;
	case MEM_BAD: return 6;
	case MEM_HV: return 7;
	default: return 5;
	}
}

/* Sweeps the range boundaries in address order, writing merged entries into
 * table (when not NULL, at most max). Returns the number of entries needed. */
static uint32_t build_e820(const struct memmap *m, struct boot_e820_entry *table, uint32_t max)
{
	uint32_t n = 0, last_type = 0;
	uint64_t last_end = 0, x = UINT64_MAX;
	bool any = false;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->r[i].len && m->r[i].base < x) {
			x = m->r[i].base;
			any = true;
		}
	while (any) {
		uint64_t next = UINT64_MAX;
		bool have_next = false;
		int best_rank = 0;
		uint32_t best_type = 0;
		for (uint32_t i = 0; i < m->count; i++) {
			const struct mem_range *r = &m->r[i];
			if (!r->len)
				continue;
			uint64_t e = end_of(r->base, r->len);
			if (r->base > x && r->base <= next) { next = r->base; have_next = true; }
			if (e > x && e <= next) { next = e; have_next = true; }
			if (r->base <= x && x < e && type_rank(r->type) > best_rank) {
				best_rank = type_rank(r->type);
				best_type = r->type;
			}
		}
		if (!have_next)
			break;
		if (best_rank) {
			uint32_t t = linux_e820_type(best_type);
			if (n && t == last_type && last_end == x) {
				if (table && n <= max)
					table[n - 1].size += next - x;
			} else {
				n++;
				if (table && n <= max) {
					table[n - 1].addr = x;
					table[n - 1].size = next - x;
					table[n - 1].type = t;
				}
			}
			last_type = t;
			last_end = next;
		}
		x = next;
	}
	return n;
}

/* ---- the layout ---- */

int linux_load(struct linux_image *li, const struct memmap *mem, paddr_t kernel_src, uint64_t kernel_size,
	       paddr_t initrd_src, uint64_t initrd_size, bool initrd_required, const char *cmdline,
	       paddr_t zero_page, paddr_t cmdline_pa, paddr_t rsdp, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	if (!li || !mem)
		ERR("linux: no image descriptor or memory map");
	if (linux_check(pa_ptr(kernel_src), kernel_size, li, err, errlen))
		return -1;

	/* The initrd. */
	bool have_initrd = initrd_src && initrd_size;
	if (!have_initrd) {
		if (initrd_required)
			ERR("initrd: missing");
		initrd_src = 0;
		initrd_size = 0;
	}
	if (have_initrd && overlaps(initrd_src, initrd_size, kernel_src, kernel_size))
		ERR("initrd: 0x%llx-0x%llx overlaps the bzImage at 0x%llx-0x%llx",
		    (ull)initrd_src, (ull)end_of(initrd_src, initrd_size),
		    (ull)kernel_src, (ull)end_of(kernel_src, kernel_size));

	/* The command line. */
	if (!cmdline)
		cmdline = "";
	uint64_t cmdlen = strlen(cmdline);
	if (cmdlen > li->cmdline_size)
		ERR("cmdline: %llu bytes, longer than the kernel's cmdline_size (%u)",
		    (ull)cmdlen, li->cmdline_size);

	/* The zero page and the command line's home: guest-visible, apart. */
	struct region zp = { zero_page, sizeof(struct boot_params), "the zero page" };
	struct region cl = { cmdline_pa, cmdlen + 1, "the command line" };
	const struct region *fixed[2] = { &zp, &cl };
	if (!zero_page)
		ERR("zero page: no address given");
	if (!cmdline_pa)
		ERR("cmdline: no address given");
	for (int i = 0; i < 2; i++) {
		const struct region *f = fixed[i];
		if (mem_touches_type(mem, f->base, f->len, MEM_HV))
			ERR("linux: %s at 0x%llx overlaps hypervisor memory (the guest could not read it)",
			    f->what, (ull)f->base);
		if (!mem_covered(mem, f->base, f->len))
			ERR("linux: %s at 0x%llx is outside the memory map", f->what, (ull)f->base);
		if (overlaps(f->base, f->len, kernel_src, kernel_size))
			ERR("linux: %s at 0x%llx overlaps the bzImage", f->what, (ull)f->base);
		if (have_initrd && overlaps(f->base, f->len, initrd_src, initrd_size))
			ERR("linux: %s at 0x%llx overlaps the initrd", f->what, (ull)f->base);
	}
	if (overlaps(zp.base, zp.len, cl.base, cl.len))
		ERR("linux: the command line at 0x%llx overlaps the zero page at 0x%llx",
		    (ull)cmdline_pa, (ull)zero_page);

	/* The e820 table must fit the zero page. */
	uint32_t e820_n = build_e820(mem, NULL, 0);
	if (e820_n > E820_MAX_ENTRIES_ZEROPAGE)
		ERR("e820: the memory map needs %u entries after merging (the zero page holds %u)",
		    e820_n, (unsigned)E820_MAX_ENTRIES_ZEROPAGE);
	if (!e820_n)
		ERR("e820: the memory map is empty");

	/* The kernel's window: init_size bytes at its load address. */
	struct region av[MAX_AVOID];
	int nav = 0;
	av[nav++] = zp;
	av[nav++] = cl;
	av[nav++] = (struct region){ kernel_src, kernel_size, "the bzImage" };
	if (have_initrd)
		av[nav++] = (struct region){ initrd_src, initrd_size, "the initrd" };
	uint64_t win = li->init_size;
	paddr_t dest = 0;
	if (fits(mem, av, nav, li->pref_address, win)) {
		dest = li->pref_address;
	} else if (!li->relocatable) {
		ERR("kernel: not relocatable, and its pref_address 0x%llx-0x%llx is not free usable RAM",
		    (ull)li->pref_address, (ull)end_of(li->pref_address, win));
	} else {
		uint64_t lower = li->pref_address > KERNEL_MIN_LOAD ? li->pref_address : KERNEL_MIN_LOAD;
		dest = find_lowest(mem, av, nav, win, li->kernel_alignment, lower);
		if (!dest)
			ERR("kernel: no free usable RAM for %llu MiB (init_size 0x%llx) at or above 0x%llx aligned to 0x%llx",
			    (ull)((win + MIB(1) - 1) >> 20), (ull)win, (ull)lower, (ull)li->kernel_alignment);
	}
	/* Above 4 GiB only for a kernel that says it can run there (boot
	 * protocol, xloadflags bit 1). */
	if (end_of(dest, win) > GIB(4) && !(li->xloadflags & XLF_CAN_BE_LOADED_ABOVE_4G))
		ERR("kernel: the only room is at 0x%llx, above 4 GiB, and its xloadflags 0x%x lack XLF_CAN_BE_LOADED_ABOVE_4G",
		    (ull)dest, li->xloadflags);

	/* The initrd: keep it where it is if allowed, else move it high. */
	paddr_t initrd = 0;
	bool moved = false;
	if (have_initrd) {
		uint64_t limit = (li->xloadflags & XLF_CAN_BE_LOADED_ABOVE_4G)
				 ? UINT64_MAX : (uint64_t)li->initrd_addr_max + 1;
		struct region iav[MAX_AVOID];
		int niav = 0;
		iav[niav++] = zp;
		iav[niav++] = cl;
		iav[niav++] = (struct region){ dest, win, "the kernel" };
		if (end_of(initrd_src, initrd_size) <= limit && fits(mem, iav, niav, initrd_src, initrd_size)) {
			initrd = initrd_src;
		} else {
			iav[niav++] = (struct region){ initrd_src, initrd_size, "the initrd" };
			iav[niav++] = (struct region){ kernel_src, kernel_size, "the bzImage" };
			initrd = find_highest(mem, iav, niav, initrd_size, limit);
			if (!initrd)
				ERR("initrd: no free usable RAM for %llu bytes below 0x%llx",
				    (ull)initrd_size, (ull)limit);
			moved = true;
		}
	}

	/* Everything checked: write guest memory. The kernel copy cannot hit the
	 * initrd source, the zero page or the command line (all avoided). */
	struct setup_header hdr;
	uint64_t hdr_len = 0x202 + ((const uint8_t *)pa_ptr(kernel_src))[0x201] - SETUP_HDR_OFFSET;
	if (hdr_len < offsetof(struct setup_header, kernel_info_offset))
		hdr_len = offsetof(struct setup_header, kernel_info_offset); /* 2.12 has up to here */
	if (hdr_len > sizeof hdr)
		hdr_len = sizeof hdr;
	if (hdr_len > kernel_size - SETUP_HDR_OFFSET)
		hdr_len = kernel_size - SETUP_HDR_OFFSET;
	memset(&hdr, 0, sizeof hdr);
	memcpy(&hdr, (const uint8_t *)pa_ptr(kernel_src) + SETUP_HDR_OFFSET, hdr_len);

	memmove(pa_ptr(dest), (const uint8_t *)pa_ptr(kernel_src) + li->setup_size, li->pm_size);
	if (moved)
		memmove(pa_ptr(initrd), pa_ptr(initrd_src), initrd_size);
	memcpy(pa_ptr(cmdline_pa), cmdline, cmdlen + 1);

	struct boot_params *bp = pa_ptr(zero_page);
	memset(bp, 0, sizeof *bp);
	hdr.type_of_loader = LOADER_TYPE_UNDEFINED;
	hdr.ext_loader_ver = 0;
	hdr.ext_loader_type = 0;
	hdr.loadflags = (uint8_t)((hdr.loadflags | LOADED_HIGH) & ~CAN_USE_HEAP);
	hdr.heap_end_ptr = 0;
	hdr.vid_mode = 0xFFFF;              /* "normal" */
	hdr.code32_start = dest >> 32 ? 0 : (uint32_t)dest;
	hdr.cmd_line_ptr = (uint32_t)cmdline_pa;
	hdr.ramdisk_image = (uint32_t)initrd;
	hdr.ramdisk_size = (uint32_t)initrd_size;
	hdr.hardware_subarch = 0;           /* PC */
	hdr.hardware_subarch_data = 0;
	hdr.setup_data = 0;
	bp->hdr = hdr;
	bp->ext_cmd_line_ptr = (uint32_t)(cmdline_pa >> 32);
	bp->ext_ramdisk_image = (uint32_t)(initrd >> 32);
	bp->ext_ramdisk_size = (uint32_t)(initrd_size >> 32);
	if (li->version >= BOOT_PROTO_RSDP)
		bp->acpi_rsdp_addr = rsdp;
	build_e820(mem, bp->e820_table, E820_MAX_ENTRIES_ZEROPAGE);
	bp->e820_entries = (uint8_t)e820_n;

	li->pm_entry_addr = dest;
	li->entry64 = dest + ENTRY64_OFFSET;
	li->boot_params = zero_page;
	li->cmdline = cmdline_pa;
	li->initrd = initrd;
	li->initrd_size = initrd_size;
	li->initrd_moved = moved;
	li->e820_entries = e820_n;
	return 0;
}

void linux_print(const struct linux_image *li)
{
	pr_info("linux: bzImage at 0x%llx, %llu bytes, boot protocol %u.%02u, setup %u bytes\n",
		(ull)li->kernel_src, (ull)li->kernel_size, (unsigned)(li->version >> 8),
		(unsigned)(li->version & 0xFF), li->setup_size);
	pr_info("linux: kernel at 0x%llx-0x%llx (%llu bytes, init_size 0x%llx, pref 0x%llx, align 0x%llx%s), entry64 0x%llx\n",
		(ull)li->pm_entry_addr, (ull)end_of(li->pm_entry_addr, li->init_size), (ull)li->pm_size,
		(ull)li->init_size, (ull)li->pref_address, (ull)li->kernel_alignment,
		li->relocatable ? ", relocatable" : "", (ull)li->entry64);
	if (li->initrd_size)
		pr_info("linux: initrd at 0x%llx-0x%llx (%llu bytes, %s)\n", (ull)li->initrd,
			(ull)end_of(li->initrd, li->initrd_size), (ull)li->initrd_size,
			li->initrd_moved ? "moved" : "left where loaded");
	else
		pr_info("linux: no initrd\n");
	pr_info("linux: zero page at 0x%llx, cmdline at 0x%llx, %u e820 entries\n",
		(ull)li->boot_params, (ull)li->cmdline, li->e820_entries);
	if (li->boot_params) {
		const struct boot_params *bp = pa_ptr(li->boot_params);
		for (uint32_t i = 0; i < bp->e820_entries && i < E820_MAX_ENTRIES_ZEROPAGE; i++)
			pr_debug("linux:   e820 0x%016llx-0x%016llx type %u\n", (ull)bp->e820_table[i].addr,
				 (ull)(bp->e820_table[i].addr + bp->e820_table[i].size), bp->e820_table[i].type);
	}
}
