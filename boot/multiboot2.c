/* Multiboot2 hand-off: turns GRUB's information structure into a boot_info.
 * Modules: the first is the guest kernel (its string is the guest's command
 * line), the second the initrd. */
#include "boot_info.h"
#include "../lib/string.h"
#include "../lib/acpi.h"

#define MB2_BOOTLOADER_MAGIC 0x36d76289
enum {
	MB2_TAG_END = 0, MB2_TAG_CMDLINE = 1, MB2_TAG_MODULE = 3, MB2_TAG_MMAP = 6,
	MB2_TAG_ACPI_OLD = 14, MB2_TAG_ACPI_NEW = 15,
};

struct mb2_tag { uint32_t type, size; };
struct mb2_module { uint32_t type, size, start, end; char string[]; };
struct mb2_mmap { uint32_t type, size, entry_size, entry_version; };
struct mb2_mmap_entry { uint64_t base, len; uint32_t type, rsvd; };

extern char __image_start[], __image_end[];
static struct boot_info bi;
static uint8_t rsdp_copy[64] __aligned(16);  /* GRUB gives a copy, not an address */

/* GRUB may or may not put the file name first; drop a leading path. */
static const char *skip_path(const char *s)
{
	if (*s == '/' || *s == '(') {
		while (*s && *s != ' ')
			s++;
		while (*s == ' ')
			s++;
	}
	return s;
}

static void copy_str(char *dst, const char *src)
{
	size_t n = strlen(src);
	if (n >= BOOT_CMDLINE_MAX)
		n = BOOT_CMDLINE_MAX - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

static uint32_t mb2_type(uint32_t t)
{
	switch (t) {
	case 1: return MEM_USABLE;
	case 3: return MEM_ACPI;
	case 4: return MEM_NVS;
	case 5: return MEM_BAD;
	default: return MEM_RESERVED;
	}
}

void mb2_main(uint32_t magic, uint32_t info);

void mb2_main(uint32_t magic, uint32_t info)
{
	paddr_t rsdp_tag = 0;
	unsigned nmod = 0;

	bi.loader = "multiboot2";
	if (magic != MB2_BOOTLOADER_MAGIC) {
		copy_str(bi.cmdline, "");
		hv_main(&bi);     /* hv_main says what is missing */
	}
	uint32_t total = *(uint32_t *)(uintptr_t)info;
	for (uint8_t *p = (uint8_t *)(uintptr_t)info + 8; p < (uint8_t *)(uintptr_t)info + total;) {
		struct mb2_tag *t = (void *)p;
		if (t->type == MB2_TAG_END)
			break;
		switch (t->type) {
		case MB2_TAG_CMDLINE:
			copy_str(bi.cmdline, skip_path((const char *)(t + 1)));
			break;
		case MB2_TAG_MODULE: {
			struct mb2_module *m = (void *)t;
			struct boot_module *bm = nmod == 0 ? &bi.kernel : nmod == 1 ? &bi.initrd : NULL;
			if (bm) {
				bm->addr = m->start;
				bm->size = m->end - m->start;
			}
			if (nmod == 0)
				copy_str(bi.guest_cmdline, skip_path(m->string));
			nmod++;
			memmap_add(&bi.mem, m->start, ALIGN_UP(m->end, PAGE_SIZE) - m->start, MEM_BOOT);
			break;
		}
		case MB2_TAG_MMAP: {
			struct mb2_mmap *mm = (void *)t;
			for (uint8_t *e = (uint8_t *)(mm + 1); e + mm->entry_size <= p + t->size; e += mm->entry_size) {
				struct mb2_mmap_entry *me = (void *)e;
				memmap_add(&bi.mem, me->base, me->len, mb2_type(me->type));
			}
			break;
		}
		case MB2_TAG_ACPI_OLD:
		case MB2_TAG_ACPI_NEW:
			if (!rsdp_tag || t->type == MB2_TAG_ACPI_NEW) {
				uint32_t n = t->size - 8 < sizeof rsdp_copy ? t->size - 8 : sizeof rsdp_copy;
				memcpy(rsdp_copy, t + 1, n);
				rsdp_tag = (paddr_t)(uintptr_t)rsdp_copy;
			}
			break;
		}
		p += ALIGN_UP(t->size, 8);
	}
	/* The information structure itself stays readable until hv_main is done with it. */
	memmap_add(&bi.mem, ALIGN_DOWN(info, PAGE_SIZE), ALIGN_UP(info + total, PAGE_SIZE) - ALIGN_DOWN(info, PAGE_SIZE), MEM_BOOT);
	/* Prefer the firmware's own RSDP (an address the guest can use too). */
	bi.rsdp = acpi_find_rsdp_legacy();
	if (!bi.rsdp)
		bi.rsdp = rsdp_tag;
	bi.image_start = (paddr_t)(uintptr_t)__image_start;
	bi.image_end = (paddr_t)(uintptr_t)__image_end;
	hv_main(&bi);
}
