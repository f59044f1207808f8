/* Host tests for the Linux boot protocol loader (guest/linux.c).
 *
 * "Physical memory" is a host mapping: linux_load treats addresses as numbers
 * and dereferences them, so the tests hand it a memmap whose ranges cover the
 * mapping's real host addresses. The main arena is mapped below 2 GiB
 * (MAP_32BIT) so the 32-bit header fields and initrd_addr_max can be tested; a
 * second, ordinary mapping (above 4 GiB) exercises the ext_ high halves. */
#define _GNU_SOURCE
#include "test.h"
#include <sys/mman.h>
#include "../../guest/linux.h"

#define ARENA_SIZE MIB(256)
#define SETUP_SECTS 4
#define SETUP_SIZE ((SETUP_SECTS + 1) * 512)
#define PAYLOAD_SIZE KIB(64)
#define IMAGE_SIZE (SETUP_SIZE + PAYLOAD_SIZE)
#define INIT_SIZE MIB(4)
#define INITRD_SIZE KIB(256)

/* The low arena, 2 MiB aligned. Offsets used by the tests: */
#define OFF_ZP 0x0
#define OFF_CL 0x1000
#define OFF_KSRC MIB(1)
#define OFF_ISRC MIB(4)
#define OFF_PREF MIB(16)
#define OFF_ARENA_USED MIB(128)

static uint64_t arena_base(void)
{
	static uint64_t base;
	if (!base) {
		void *p = mmap(NULL, ARENA_SIZE + MIB(2), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap MAP_32BIT arena");
			exit(2);
		}
		base = ALIGN_UP((uint64_t)(uintptr_t)p, MIB(2));
	}
	return base;
}

static void *P(uint64_t pa) { return (void *)(uintptr_t)pa; }

static void mm_add(struct memmap *m, uint64_t base, uint64_t len, uint32_t type)
{
	if (m->count >= MEMMAP_MAX) {
		fprintf(stderr, "test memmap full\n");
		exit(2);
	}
	m->r[m->count].base = base;
	m->r[m->count].len = len;
	m->r[m->count].type = type;
	m->count++;
}

/* A synthetic bzImage: a setup header with the fields a 6.1 kernel has, and a
 * patterned payload. */
static void make_image(uint8_t *img, uint64_t pref)
{
	memset(img, 0, IMAGE_SIZE);
	struct setup_header *h = (struct setup_header *)(img + 0x1F1);
	h->setup_sects = SETUP_SECTS;
	h->syssize = PAYLOAD_SIZE / 16;
	h->boot_flag = 0xAA55;
	h->jump = 0xEB | (0x6A << 8);      /* header ends at 0x26C */
	h->header = 0x53726448;
	h->version = 0x020F;
	h->loadflags = LOADED_HIGH | CAN_USE_HEAP;
	h->initrd_addr_max = 0x7FFFFFFF;
	h->kernel_alignment = MIB(2);
	h->relocatable_kernel = 1;
	h->min_alignment = 21;
	h->xloadflags = XLF_KERNEL_64;
	h->cmdline_size = 255;
	h->pref_address = pref;
	h->init_size = INIT_SIZE;
	for (uint64_t i = 0; i < PAYLOAD_SIZE; i++)
		img[SETUP_SIZE + i] = (uint8_t)(i * 7 + 3);
}

static struct setup_header *hdr_of(uint64_t img) { return (struct setup_header *)((uint8_t *)P(img) + 0x1F1); }

/* The usual scene: image and initrd in the arena, everything usable. */
struct scene {
	uint64_t a, zp, cl, ksrc, isrc;
	struct memmap mem;
	struct linux_image li;
	char err[256];
};

static void scene_init(struct scene *s)
{
	memset(s, 0, sizeof *s);
	s->a = arena_base();
	s->zp = s->a + OFF_ZP;
	s->cl = s->a + OFF_CL;
	s->ksrc = s->a + OFF_KSRC;
	s->isrc = s->a + OFF_ISRC;
	make_image(P(s->ksrc), s->a + OFF_PREF);
	for (uint64_t i = 0; i < INITRD_SIZE; i++)
		((uint8_t *)P(s->isrc))[i] = (uint8_t)(i ^ 0x5A);
	memset(P(s->zp), 0xCC, 4096);
	memset(P(s->a + OFF_PREF), 0, PAYLOAD_SIZE);
}

static void scene_usable_all(struct scene *s)
{
	mm_add(&s->mem, s->a, OFF_ARENA_USED, MEM_USABLE);
}

static int scene_load(struct scene *s, const char *cmdline, uint64_t rsdp)
{
	return linux_load(&s->li, &s->mem, s->ksrc, IMAGE_SIZE, s->isrc, INITRD_SIZE, true,
			  cmdline, s->zp, s->cl, rsdp, s->err, sizeof s->err);
}

static struct boot_params *bp_of(struct scene *s) { return P(s->zp); }

/* ---- linux_check ---- */

TEST(linux_check_accepts_good_image)
{
	static uint8_t img[IMAGE_SIZE];
	struct linux_image li;
	char err[200] = "x";
	make_image(img, MIB(16));
	CHECK_EQ(linux_check(img, sizeof img, &li, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_EQ(li.version, 0x020F);
	CHECK_EQ(li.setup_size, SETUP_SIZE);
	CHECK_EQ(li.pm_size, PAYLOAD_SIZE);
	CHECK_EQ(li.init_size, INIT_SIZE);
	CHECK_EQ(li.pref_address, MIB(16));
	CHECK_EQ(li.kernel_alignment, MIB(2));
	CHECK(li.relocatable);
	CHECK_EQ(li.cmdline_size, 255);
	CHECK_EQ(li.kernel_src, (uintptr_t)img);
	CHECK_EQ(li.kernel_size, sizeof img);
	CHECK_EQ(li.initrd_addr_max, 0x7FFFFFFF);
}

TEST(linux_check_setup_sects_zero_means_4)
{
	static uint8_t img[IMAGE_SIZE];
	struct linux_image li;
	char err[200];
	make_image(img, MIB(16));
	img[0x1F1] = 0;
	CHECK_EQ(linux_check(img, sizeof img, &li, err, sizeof err), 0);
	CHECK_EQ(li.setup_size, 5 * 512);
	img[0x1F1] = 30;  /* 31 * 512 = 15872 bytes of setup: payload becomes smaller */
	CHECK_EQ(linux_check(img, sizeof img, &li, err, sizeof err), -1);  /* syssize no longer fits */
	CHECK_CONTAINS(err, "truncated");
}

TEST(linux_check_rejects_bad_boot_flag)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	img[0x1FE] = 0x12;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "boot flag");
	CHECK_CONTAINS(err, "0xAA55");
}

TEST(linux_check_rejects_missing_hdrs)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	memcpy(img + 0x202, "HdrX", 4);
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_STR(err, "kernel: not a bzImage (no HdrS magic)");
}

TEST(linux_check_rejects_old_protocol)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	hdr_of((uintptr_t)img)->version = 0x020A;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "2.10");
	CHECK_CONTAINS(err, "2.12");
	CHECK_STR(err, "kernel: boot protocol 2.10 too old (need 2.12)");
	hdr_of((uintptr_t)img)->version = 0x020C;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), 0);
}

TEST(linux_check_rejects_no_64bit_entry)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	hdr_of((uintptr_t)img)->xloadflags = XLF_CAN_BE_LOADED_ABOVE_4G;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "64-bit");
	CHECK_CONTAINS(err, "XLF_KERNEL_64");
}

TEST(linux_check_rejects_zimage)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	hdr_of((uintptr_t)img)->loadflags = 0;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "LOADED_HIGH");
}

TEST(linux_check_rejects_truncated)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	CHECK_EQ(linux_check(img, 1000, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "too small");
	CHECK_EQ(linux_check(img, SETUP_SIZE - 1, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "truncated");
	CHECK_EQ(linux_check(img, SETUP_SIZE, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "truncated");
	CHECK_EQ(linux_check(img, IMAGE_SIZE - 16, NULL, err, sizeof err), -1);  /* syssize says more */
	CHECK_CONTAINS(err, "truncated");
	CHECK_EQ(linux_check(NULL, 0, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "missing");
}

TEST(linux_check_rejects_bad_alignment_and_init_size)
{
	static uint8_t img[IMAGE_SIZE];
	char err[200];
	make_image(img, MIB(16));
	hdr_of((uintptr_t)img)->kernel_alignment = 0x300000;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "kernel_alignment");
	make_image(img, MIB(16));
	hdr_of((uintptr_t)img)->init_size = 100;
	CHECK_EQ(linux_check(img, sizeof img, NULL, err, sizeof err), -1);
	CHECK_CONTAINS(err, "init_size");
}

/* ---- linux_load: the happy path ---- */

TEST(linux_load_basic_layout)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	const char *cmd = "console=ttyS0 hv.probe=0x200000";
	CHECK_EQ(scene_load(&s, cmd, 0xF5A40), 0);
	CHECK_STR(s.err, "");
	/* kernel at pref_address, payload copied, entry at +0x200 */
	CHECK_EQ(s.li.pm_entry_addr, s.a + OFF_PREF);
	CHECK_EQ(s.li.entry64, s.a + OFF_PREF + 0x200);
	CHECK(memcmp(P(s.li.pm_entry_addr), (uint8_t *)P(s.ksrc) + SETUP_SIZE, PAYLOAD_SIZE) == 0);
	/* the initrd stays where it was */
	CHECK_EQ(s.li.initrd, s.isrc);
	CHECK_EQ(s.li.initrd_size, INITRD_SIZE);
	CHECK(!s.li.initrd_moved);
	/* zero page */
	struct boot_params *bp = bp_of(&s);
	CHECK_EQ(s.li.boot_params, s.zp);
	CHECK_EQ(bp->hdr.header, 0x53726448);
	CHECK_EQ(bp->hdr.version, 0x020F);
	CHECK_EQ(bp->hdr.boot_flag, 0xAA55);
	CHECK_EQ(bp->hdr.type_of_loader, 0xFF);
	CHECK(bp->hdr.loadflags & LOADED_HIGH);
	CHECK(!(bp->hdr.loadflags & CAN_USE_HEAP));
	CHECK_EQ(bp->hdr.heap_end_ptr, 0);
	CHECK_EQ(bp->hdr.init_size, INIT_SIZE);
	CHECK_EQ(bp->hdr.xloadflags, XLF_KERNEL_64);
	CHECK_EQ(bp->hdr.setup_data, 0);
	CHECK_EQ(bp->sentinel, 0);
	CHECK_EQ(bp->tboot_addr, 0);
	CHECK_EQ(bp->screen_info[0], 0);
	/* command line */
	CHECK_EQ(s.li.cmdline, s.cl);
	CHECK_STR((const char *)P(s.cl), cmd);
	CHECK_EQ(bp->hdr.cmd_line_ptr, (uint32_t)s.cl);
	CHECK_EQ(bp->ext_cmd_line_ptr, 0);
	/* initrd fields (the arena is below 4 GiB: high halves zero) */
	CHECK_EQ(bp->hdr.ramdisk_image, (uint32_t)s.isrc);
	CHECK_EQ(bp->hdr.ramdisk_size, INITRD_SIZE);
	CHECK_EQ(bp->ext_ramdisk_image, 0);
	CHECK_EQ(bp->ext_ramdisk_size, 0);
	/* RSDP */
	CHECK_EQ(bp->acpi_rsdp_addr, 0xF5A40);
	/* one usable e820 entry */
	CHECK_EQ(bp->e820_entries, 1);
	CHECK_EQ(bp->e820_table[0].addr, s.a);
	CHECK_EQ(bp->e820_table[0].size, OFF_ARENA_USED);
	CHECK_EQ(bp->e820_table[0].type, 1);
	CHECK_EQ(s.li.e820_entries, 1);

	linux_print(&s.li);
	CHECK_CONTAINS(test_log(), "entry64");
	CHECK_CONTAINS(test_log(), "boot protocol 2.15");
}

TEST(linux_load_rsdp_only_for_2_14_plus)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	hdr_of(s.ksrc)->version = 0x020D;
	CHECK_EQ(scene_load(&s, "", 0xF5A40), 0);
	CHECK_EQ(bp_of(&s)->acpi_rsdp_addr, 0);
	scene_init(&s);
	scene_usable_all(&s);
	hdr_of(s.ksrc)->version = 0x020E;
	CHECK_EQ(scene_load(&s, "", 0xF5A40), 0);
	CHECK_EQ(bp_of(&s)->acpi_rsdp_addr, 0xF5A40);
}

TEST(linux_load_empty_and_null_cmdline)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	memset(P(s.cl), 'x', 16);
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, s.isrc, INITRD_SIZE, true, NULL,
			    s.zp, s.cl, 0, s.err, sizeof s.err), 0);
	CHECK_STR((const char *)P(s.cl), "");
	CHECK_EQ(bp_of(&s)->hdr.cmd_line_ptr, (uint32_t)s.cl);
}

TEST(linux_load_cmdline_too_long)
{
	static struct scene s;
	char cmd[400];
	scene_init(&s);
	scene_usable_all(&s);
	memset(cmd, 'a', sizeof cmd - 1);
	cmd[sizeof cmd - 1] = 0;
	CHECK_EQ(scene_load(&s, cmd, 0), -1);
	CHECK_CONTAINS(s.err, "cmdline");
	CHECK_CONTAINS(s.err, "399");
	CHECK_CONTAINS(s.err, "255");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);   /* nothing written on error */
	cmd[255] = 0;                                /* exactly cmdline_size is fine */
	CHECK_EQ(scene_load(&s, cmd, 0), 0);
	CHECK_EQ(strlen((const char *)P(s.cl)), 255);
}

/* ---- initrd ---- */

TEST(linux_load_initrd_missing)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	CATALOG("initrd: none given", linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, 0, 0, true, "", s.zp, s.cl, 0,
						 s.err, sizeof s.err), s.err, "initrd: missing");
	CATALOG("initrd: 0 bytes", linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, s.isrc, 0, true, "", s.zp, s.cl, 0,
					      s.err, sizeof s.err), s.err, "initrd: missing");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);
	/* not required: boots without one */
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, 0, 0, false, "", s.zp, s.cl, 0,
			    s.err, sizeof s.err), 0);
	CHECK_EQ(bp_of(&s)->hdr.ramdisk_image, 0);
	CHECK_EQ(bp_of(&s)->hdr.ramdisk_size, 0);
	CHECK_EQ(s.li.initrd, 0);
	CHECK_EQ(s.li.initrd_size, 0);
}

TEST(linux_load_initrd_moved_below_initrd_addr_max)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	/* The initrd sits at +40 MiB but the kernel allows it only below +8 MiB. */
	uint64_t src = s.a + MIB(40);
	memcpy(P(src), P(s.isrc), INITRD_SIZE);
	uint64_t limit = s.a + MIB(8);
	hdr_of(s.ksrc)->initrd_addr_max = (uint32_t)(limit - 1);
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, src, INITRD_SIZE, true, "", s.zp,
			    s.cl, 0, s.err, sizeof s.err), 0);
	CHECK_STR(s.err, "");
	CHECK(s.li.initrd_moved);
	CHECK_EQ(s.li.initrd, limit - INITRD_SIZE);         /* highest page-aligned spot */
	CHECK_EQ(s.li.initrd % 4096, 0);
	CHECK(s.li.initrd + INITRD_SIZE <= limit);
	CHECK(memcmp(P(s.li.initrd), P(src), INITRD_SIZE) == 0);
	CHECK_EQ(bp_of(&s)->hdr.ramdisk_image, (uint32_t)s.li.initrd);
	CHECK_EQ(bp_of(&s)->hdr.ramdisk_size, INITRD_SIZE);

	/* With XLF_CAN_BE_LOADED_ABOVE_4G the limit does not apply: it stays. */
	scene_init(&s);
	scene_usable_all(&s);
	hdr_of(s.ksrc)->initrd_addr_max = (uint32_t)(limit - 1);
	hdr_of(s.ksrc)->xloadflags |= XLF_CAN_BE_LOADED_ABOVE_4G;
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, src, INITRD_SIZE, true, "", s.zp,
			    s.cl, 0, s.err, sizeof s.err), 0);
	CHECK(!s.li.initrd_moved);
	CHECK_EQ(s.li.initrd, src);
}

TEST(linux_load_initrd_in_hv_memory_is_moved)
{
	static struct scene s;
	scene_init(&s);
	/* usable arena except the boot loader's initrd, which the hypervisor owns */
	mm_add(&s.mem, s.a, OFF_ISRC, MEM_USABLE);
	mm_add(&s.mem, s.isrc, MIB(1), MEM_HV);
	mm_add(&s.mem, s.isrc + MIB(1), OFF_ARENA_USED - OFF_ISRC - MIB(1), MEM_USABLE);
	CHECK_EQ(scene_load(&s, "", 0), 0);
	CHECK_STR(s.err, "");
	CHECK(s.li.initrd_moved);
	CHECK(s.li.initrd + INITRD_SIZE <= s.a + OFF_ARENA_USED);
	CHECK_EQ(s.li.initrd, s.a + OFF_ARENA_USED - INITRD_SIZE);   /* highest */
	CHECK(s.li.initrd + INITRD_SIZE <= s.li.pm_entry_addr ||
	      s.li.initrd >= s.li.pm_entry_addr + s.li.init_size);
	CHECK(memcmp(P(s.li.initrd), P(s.isrc), INITRD_SIZE) == 0);
}

TEST(linux_load_initrd_no_room)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	/* Below the limit only [+0x2000, +0x41000) is free (the zero page and the
	 * command line use the first two pages): 4 KiB short of the initrd. */
	hdr_of(s.ksrc)->initrd_addr_max = (uint32_t)(s.a + 0x2000 + INITRD_SIZE - 0x1000 - 1);
	CATALOG("initrd: larger than the RAM it may use", scene_load(&s, "", 0), s.err, "initrd: no free usable RAM");
	/* one page more and it fits, right after the command line */
	hdr_of(s.ksrc)->initrd_addr_max += 0x1000;
	CHECK_EQ(scene_load(&s, "", 0), 0);
	CHECK_EQ(s.li.initrd, s.a + 0x2000);
	CHECK(s.li.initrd_moved);
}

/* ---- kernel placement ---- */

TEST(linux_load_kernel_avoids_hv_at_pref)
{
	static struct scene s;
	scene_init(&s);
	uint64_t hv = s.a + OFF_PREF + MIB(1), hvlen = MIB(3);  /* inside the pref window */
	mm_add(&s.mem, s.a, hv - s.a, MEM_USABLE);
	mm_add(&s.mem, hv, hvlen, MEM_HV);
	mm_add(&s.mem, hv + hvlen, s.a + OFF_ARENA_USED - hv - hvlen, MEM_USABLE);
	memset(P(hv), 0xEE, hvlen);
	CHECK_EQ(scene_load(&s, "quiet", 0), 0);
	CHECK_STR(s.err, "");
	uint64_t k = s.li.pm_entry_addr;
	CHECK(k != s.a + OFF_PREF);
	CHECK_EQ(k % MIB(2), 0);
	CHECK(k >= s.a + OFF_PREF);                 /* never below pref_address */
	CHECK(k >= hv + hvlen || k + INIT_SIZE <= hv);
	CHECK_EQ(k, s.a + OFF_PREF + MIB(4));       /* the lowest aligned spot past the HV range */
	CHECK(memcmp(P(k), (uint8_t *)P(s.ksrc) + SETUP_SIZE, PAYLOAD_SIZE) == 0);
	/* the HV range was not touched */
	uint8_t *h = P(hv);
	bool intact = true;
	for (uint64_t i = 0; i < hvlen; i++)
		if (h[i] != 0xEE) { intact = false; break; }
	CHECK(intact);
	/* and it shows up reserved in e820 */
	struct boot_params *bp = bp_of(&s);
	CHECK_EQ(bp->e820_entries, 3);
	CHECK_EQ(bp->e820_table[1].addr, hv);
	CHECK_EQ(bp->e820_table[1].size, hvlen);
	CHECK_EQ(bp->e820_table[1].type, 2);
}

TEST(linux_load_kernel_avoids_sources)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	/* The initrd lies on the pref window: the kernel goes elsewhere, the initrd stays. */
	uint64_t src = s.a + OFF_PREF + MIB(2);
	memcpy(P(src), P(s.isrc), INITRD_SIZE);
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, src, INITRD_SIZE, true, "", s.zp,
			    s.cl, 0, s.err, sizeof s.err), 0);
	CHECK_EQ(s.li.pm_entry_addr, s.a + OFF_PREF + MIB(4));
	CHECK_EQ(s.li.initrd, src);
	CHECK(!s.li.initrd_moved);
	CHECK(memcmp(P(src), P(s.isrc), INITRD_SIZE) == 0);
}

TEST(linux_load_kernel_not_relocatable)
{
	static struct scene s;
	scene_init(&s);
	mm_add(&s.mem, s.a, OFF_PREF, MEM_USABLE);
	mm_add(&s.mem, s.a + OFF_PREF, MIB(2), MEM_HV);
	mm_add(&s.mem, s.a + OFF_PREF + MIB(2), MIB(64), MEM_USABLE);
	hdr_of(s.ksrc)->relocatable_kernel = 0;
	CHECK_EQ(scene_load(&s, "", 0), -1);
	CHECK_CONTAINS(s.err, "not relocatable");
}

TEST(linux_load_kernel_no_room)
{
	static struct scene s;
	scene_init(&s);
	/* usable RAM only in 3 MiB pieces separated by reserved holes */
	for (uint64_t off = 0; off < OFF_ARENA_USED; off += MIB(4)) {
		mm_add(&s.mem, s.a + off, MIB(3), MEM_USABLE);
		mm_add(&s.mem, s.a + off + MIB(3), MIB(1), MEM_RESERVED);
	}
	CHECK_EQ(scene_load(&s, "", 0), -1);
	CHECK_CONTAINS(s.err, "kernel: no free usable RAM");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);
}

/* No room below 4 GiB and a kernel without XLF_CAN_BE_LOADED_ABOVE_4G:
 * refused with the reason, nothing written. */
TEST(linux_load_kernel_above_4g_needs_the_flag)
{
	static struct scene s;
	scene_init(&s);
	mm_add(&s.mem, s.a, OFF_KSRC + IMAGE_SIZE, MEM_USABLE);       /* zero page, cmdline, bzImage only */
	mm_add(&s.mem, 0x100000000ull, MIB(256), MEM_USABLE);            /* the rest lies above 4 GiB */
	CHECK_EQ(scene_load(&s, "", 0), -1);
	CHECK_CONTAINS(s.err, "above 4 GiB, and its xloadflags 0x1 lack XLF_CAN_BE_LOADED_ABOVE_4G");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);
}

/* Found by fuzzing (test/fuzz/fuzz_linux.c): a pref_address whose window
 * wraps past 2^64 counted as free RAM, and the kernel was copied there (a
 * write anywhere). Now it is refused with the reason, nothing written. */
TEST(linux_load_pref_address_that_wraps)
{
	static struct scene s;
	for (int reloc = 0; reloc < 2; reloc++) {
		scene_init(&s);
		scene_usable_all(&s);
		/* relocatable: exactly 2^64 - 1 (the window ends where it starts);
		 * not: page aligned, as that check comes first */
		hdr_of(s.ksrc)->pref_address = reloc ? ~0ull : ~0xfffull;
		hdr_of(s.ksrc)->relocatable_kernel = (uint8_t)reloc;
		CHECK_EQ(scene_load(&s, "", 0), -1);
		CHECK_CONTAINS(s.err, reloc ? "kernel: no free usable RAM" : "kernel: not relocatable");
		CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);
	}
}

TEST(linux_load_zero_page_in_hv_memory)
{
	static struct scene s;
	scene_init(&s);
	mm_add(&s.mem, s.a, 0x1000, MEM_HV);
	mm_add(&s.mem, s.a + 0x1000, OFF_ARENA_USED - 0x1000, MEM_USABLE);
	CHECK_EQ(scene_load(&s, "", 0), -1);
	CHECK_CONTAINS(s.err, "zero page");
	CHECK_CONTAINS(s.err, "hypervisor");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);
}

TEST(linux_load_zero_page_overlaps_cmdline)
{
	static struct scene s;
	scene_init(&s);
	scene_usable_all(&s);
	CHECK_EQ(linux_load(&s.li, &s.mem, s.ksrc, IMAGE_SIZE, s.isrc, INITRD_SIZE, true, "x",
			    s.zp, s.zp + 0x800, 0, s.err, sizeof s.err), -1);
	CHECK_CONTAINS(s.err, "overlaps the zero page");
}

/* ---- e820 ---- */

TEST(linux_load_e820_types_and_merging)
{
	static struct scene s;
	scene_init(&s);
	struct memmap *m = &s.mem;
	/* Out of order, a HV range next to a reserved one (both become type 2 and
	 * merge), two adjacent usable ranges (merge), fake firmware ranges. */
	mm_add(m, 0xFEC00000, 0x1000, MEM_RESERVED);
	mm_add(m, s.a + MIB(64), OFF_ARENA_USED - MIB(64), MEM_USABLE);
	mm_add(m, s.a, MIB(32), MEM_USABLE);
	mm_add(m, s.a + MIB(32), MIB(16), MEM_USABLE);
	mm_add(m, s.a + MIB(48), MIB(8), MEM_HV);
	mm_add(m, s.a + MIB(56), MIB(4), MEM_RESERVED);
	mm_add(m, s.a + MIB(60), MIB(2), MEM_ACPI);
	mm_add(m, s.a + MIB(62), MIB(1), MEM_NVS);
	mm_add(m, s.a + MIB(63), MIB(1), MEM_BAD);
	mm_add(m, 0xF0000, 0x10000, MEM_RESERVED);
	mm_add(m, 0, 0x9F000, 0x77);   /* unknown type: reserved */
	CHECK_EQ(scene_load(&s, "", 0), 0);
	CHECK_STR(s.err, "");
	struct boot_params *bp = bp_of(&s);
	static const struct { uint64_t addr, size; uint32_t type; } want[] = {
		{ 0, 0x9F000, 2 },
		{ 0xF0000, 0x10000, 2 },
		{ 0, MIB(48), 1 },          /* addr filled below: s.a */
		{ 0, MIB(12), 2 },          /* HV + reserved */
		{ 0, MIB(2), 3 },
		{ 0, MIB(1), 4 },
		{ 0, MIB(1), 5 },
		{ 0, OFF_ARENA_USED - MIB(64), 1 },
		{ 0xFEC00000, 0x1000, 2 },
	};
	uint64_t addrs[] = { 0, 0xF0000, s.a, s.a + MIB(48), s.a + MIB(60), s.a + MIB(62),
			     s.a + MIB(63), s.a + MIB(64), 0xFEC00000 };
	CHECK_EQ(bp->e820_entries, ARRAY_SIZE(want));
	for (unsigned i = 0; i < ARRAY_SIZE(want) && i < bp->e820_entries; i++) {
		CHECK_EQ(bp->e820_table[i].addr, addrs[i]);
		CHECK_EQ(bp->e820_table[i].size, want[i].size);
		CHECK_EQ(bp->e820_table[i].type, want[i].type);
	}
	CHECK_EQ(linux_e820_type(MEM_HV), 2);
	CHECK_EQ(linux_e820_type(MEM_USABLE), 1);
	CHECK_EQ(linux_e820_type(MEM_ACPI), 3);
	CHECK_EQ(linux_e820_type(MEM_NVS), 4);
	CHECK_EQ(linux_e820_type(MEM_BAD), 5);
	CHECK_EQ(linux_e820_type(MEM_RESERVED), 2);
}

TEST(linux_load_e820_overlaps_resolved)
{
	static struct scene s;
	scene_init(&s);
	struct memmap *m = &s.mem;
	/* An un-normalized map: HV claimed on top of usable RAM. */
	mm_add(m, s.a, OFF_ARENA_USED, MEM_USABLE);
	mm_add(m, s.a + MIB(100), MIB(4), MEM_HV);
	mm_add(m, s.a + MIB(102), MIB(4), MEM_ACPI);  /* HV beats ACPI where they overlap */
	CHECK_EQ(scene_load(&s, "", 0), 0);
	struct boot_params *bp = bp_of(&s);
	CHECK_EQ(bp->e820_entries, 4);
	CHECK_EQ(bp->e820_table[0].addr, s.a);
	CHECK_EQ(bp->e820_table[0].size, MIB(100));
	CHECK_EQ(bp->e820_table[0].type, 1);
	CHECK_EQ(bp->e820_table[1].addr, s.a + MIB(100));
	CHECK_EQ(bp->e820_table[1].size, MIB(4));
	CHECK_EQ(bp->e820_table[1].type, 2);
	CHECK_EQ(bp->e820_table[2].addr, s.a + MIB(104));
	CHECK_EQ(bp->e820_table[2].size, MIB(2));
	CHECK_EQ(bp->e820_table[2].type, 3);
	CHECK_EQ(bp->e820_table[3].addr, s.a + MIB(106));
	CHECK_EQ(bp->e820_table[3].type, 1);
	/* nothing placed over the HV range even though a usable range covers it */
	CHECK(!(s.li.initrd < s.a + MIB(106) && s.li.initrd + INITRD_SIZE > s.a + MIB(100)));
}

TEST(linux_load_e820_too_many_entries)
{
	static struct scene s;
	scene_init(&s);
	/* 200 usable ranges separated by gaps: nothing to merge. */
	for (int i = 0; i < 200; i++)
		mm_add(&s.mem, s.a + (uint64_t)i * MIB(1) / 2, KIB(256), MEM_USABLE);
	mm_add(&s.mem, s.a + MIB(100), MIB(20), MEM_USABLE);
	CHECK_EQ(scene_load(&s, "", 0), -1);
	CHECK_CONTAINS(s.err, "e820");
	CHECK_CONTAINS(s.err, "128");
	CHECK_EQ(((uint8_t *)P(s.zp))[0], 0xCC);

	/* 127 + the big one = 128: fits */
	static struct scene t;
	scene_init(&t);
	for (int i = 0; i < 127; i++)
		mm_add(&t.mem, t.a + (uint64_t)i * MIB(1) / 2, KIB(256), MEM_USABLE);
	mm_add(&t.mem, t.a + MIB(100), MIB(20), MEM_USABLE);
	/* zero page and cmdline in the first piece; bzImage in the second; initrd in the third */
	t.ksrc = t.a + MIB(1) / 2;
	make_image(P(t.ksrc), t.a + MIB(100));
	t.isrc = t.a + MIB(1);
	CHECK_EQ(linux_load(&t.li, &t.mem, t.ksrc, IMAGE_SIZE, t.isrc, KIB(64), true, "", t.zp,
			    t.cl, 0, t.err, sizeof t.err), 0);
	CHECK_STR(t.err, "");
	CHECK_EQ(bp_of(&t)->e820_entries, 128);
}

/* ---- above 4 GiB: the ext_ halves ---- */

TEST(linux_load_high_addresses_use_ext_fields)
{
	size_t len = MIB(40);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	uint64_t b = ALIGN_UP((uint64_t)(uintptr_t)p, MIB(2));
	if (b >> 32 == 0) {
		printf("note: host mapping below 4 GiB, ext_ fields not exercised\n");
		munmap(p, len);
		return;
	}
	static struct memmap mem;
	memset(&mem, 0, sizeof mem);
	mm_add(&mem, b, MIB(36), MEM_USABLE);
	uint64_t zp = b, cl = b + 0x1000, ksrc = b + MIB(1), isrc = b + MIB(2);
	make_image(P(ksrc), b + MIB(8));
	hdr_of(ksrc)->xloadflags |= XLF_CAN_BE_LOADED_ABOVE_4G;
	memset(P(isrc), 0x42, KIB(64));
	struct linux_image li;
	char err[256];
	CHECK_EQ(linux_load(&li, &mem, ksrc, IMAGE_SIZE, isrc, KIB(64), true, "console=ttyS0", zp, cl, 0,
			    err, sizeof err), 0);
	CHECK_STR(err, "");
	struct boot_params *bp = P(zp);
	CHECK_EQ(bp->hdr.cmd_line_ptr, (uint32_t)cl);
	CHECK_EQ(bp->ext_cmd_line_ptr, cl >> 32);
	CHECK_EQ(bp->hdr.ramdisk_image, (uint32_t)isrc);
	CHECK_EQ(bp->ext_ramdisk_image, isrc >> 32);
	CHECK_EQ(bp->hdr.ramdisk_size, KIB(64));
	CHECK_EQ(bp->ext_ramdisk_size, 0);
	CHECK_EQ(li.pm_entry_addr, b + MIB(8));
	CHECK_EQ(bp->hdr.code32_start, 0);   /* load address not expressible in 32 bits */
	CHECK_STR((const char *)P(cl), "console=ttyS0");

	/* Without XLF_CAN_BE_LOADED_ABOVE_4G the kernel itself may not go there. */
	make_image(P(ksrc), b + MIB(8));
	CHECK_EQ(linux_load(&li, &mem, ksrc, IMAGE_SIZE, isrc, KIB(64), true, "", zp, cl, 0,
			    err, sizeof err), -1);
	CHECK_CONTAINS(err, "above 4 GiB, and its xloadflags 0x1 lack XLF_CAN_BE_LOADED_ABOVE_4G");
	munmap(p, len);
}

/* ---- the real Debian kernel ---- */

TEST(linux_real_bzimage)
{
	const char *dir = getenv("HV_GUEST_CACHE");
	char path[512];
	snprintf(path, sizeof path, "%s/vmlinuz", dir && *dir ? dir : "/var/cache/hv-guest");
	size_t len = 0;
	char *img = test_read_file(path, &len);
	if (!img) {
		if (getenv("HV_REQUIRE_KERNEL") && *getenv("HV_REQUIRE_KERNEL")) {
			char m[600];
			snprintf(m, sizeof m, "HV_REQUIRE_KERNEL is set but %s is missing (run tools/guest-kernel.sh)", path);
			test_fail(__FILE__, __LINE__, m);
		} else {
			printf("note: real bzImage not present (%s); run tools/guest-kernel.sh\n", path);
		}
		return;
	}
	struct linux_image li;
	char err[256];
	CHECK_EQ(linux_check(img, len, &li, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK(li.version >= 0x020C);
	CHECK(li.xloadflags & XLF_KERNEL_64);
	CHECK(li.relocatable);
	CHECK(li.init_size > li.pm_size);
	printf("note: real bzImage: protocol %u.%02u, pm %llu bytes, init_size 0x%llx, pref 0x%llx, align 0x%llx\n",
	       li.version >> 8, li.version & 0xFF, (unsigned long long)li.pm_size,
	       (unsigned long long)li.init_size, (unsigned long long)li.pref_address,
	       (unsigned long long)li.kernel_alignment);

	/* Load it into the arena (its pref_address, 16 MiB, is not ours: it goes
	 * to the lowest aligned place above). */
	uint64_t a = arena_base();
	if (len + MIB(2) + li.init_size + li.kernel_alignment < ARENA_SIZE - MIB(4)) {
		static struct memmap mem;
		memset(&mem, 0, sizeof mem);
		mm_add(&mem, a, ARENA_SIZE, MEM_USABLE);
		uint64_t ksrc = a + MIB(1);
		memcpy(P(ksrc), img, len);
		uint64_t isrc = ALIGN_UP(ksrc + len, PAGE_SIZE);
		memset(P(isrc), 0x11, 4096);
		CHECK_EQ(linux_load(&li, &mem, ksrc, len, isrc, 4096, true, "console=ttyS0", a, a + 0x1000,
				    0xF0000, err, sizeof err), 0);
		CHECK_STR(err, "");
		CHECK_EQ(li.pm_entry_addr % li.kernel_alignment, 0);
		CHECK(li.pm_entry_addr >= li.pref_address);
		CHECK(li.pm_entry_addr + li.init_size <= a + ARENA_SIZE);
		CHECK(memcmp(P(li.pm_entry_addr), img + li.setup_size, li.pm_size) == 0);
		struct boot_params *bp = P(a);
		CHECK_EQ(bp->hdr.header, 0x53726448);
		CHECK_EQ(bp->hdr.version, li.version);
		CHECK_EQ(bp->hdr.type_of_loader, 0xFF);
		CHECK_EQ(bp->acpi_rsdp_addr, 0xF0000);
	}
	free(img);
}
