/* The Multiboot2 information structure (Multiboot2 specification, "Boot
 * information format") into a boot_info, every size checked before use:
 * a tag smaller than its header, one that runs past the structure, a memory
 * map whose entries are too small, a module that ends before it starts, a
 * short ACPI tag: each stops the parse with a message that names it.
 * Modules: the first is the guest kernel (its string is the guest's command
 * line), the second the initrd. Pure, so the host tests feed it bad input. */
#include "mb2_info.h"
#include "../lib/string.h"
#include "../lib/printk.h"

enum {
	MB2_TAG_END = 0, MB2_TAG_CMDLINE = 1, MB2_TAG_MODULE = 3, MB2_TAG_MMAP = 6,
	MB2_TAG_ACPI_OLD = 14, MB2_TAG_ACPI_NEW = 15,
};

struct mb2_tag { uint32_t type, size; };
struct mb2_module { uint32_t type, size, start, end; char string[]; };
struct mb2_mmap { uint32_t type, size, entry_size, entry_version; };
struct mb2_mmap_entry { uint64_t base, len; uint32_t type, rsvd; };

/* The string of at most max bytes at src (it need not be terminated within
 * them) into dst, without a leading path: GRUB may or may not put the file
 * name first. Nothing past max is read. */
static void copy_str(char *dst, const char *src, size_t max)
{
	if (max && (*src == '/' || *src == '(')) {
		size_t k = 0;
		while (k < max && src[k] && src[k] != ' ')
			k++;
		while (k < max && src[k] == ' ')
			k++;
		src += k;
		max -= k;
	}
	size_t n = 0;
	while (n < max && src[n])
		n++;
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

#define BAD(...) do { snprintf(bi->boot_error, sizeof bi->boot_error, __VA_ARGS__); return -1; } while (0)

int mb2_parse(const uint8_t *info, struct boot_info *bi, uint8_t *rsdp_copy, size_t rsdp_max, bool *have_rsdp)
{
	unsigned nmod = 0;
	uint32_t total = *(const uint32_t *)info;
	*have_rsdp = false;
	if (total < 16 || total > MB2_INFO_MAX)
		BAD("multiboot2: the information structure says it is %u bytes (16..%u expected)", total, MB2_INFO_MAX);
	for (uint32_t off = 8; off < total;) {
		const struct mb2_tag *t = (const void *)(info + off);
		if (total - off < sizeof *t || t->size < sizeof *t || t->size > total - off)
			BAD("multiboot2: tag type %u at offset %u has size %u (header 8, %u bytes left): malformed",
			    total - off >= sizeof *t ? t->type : 0, off, total - off >= sizeof *t ? t->size : 0, total - off);
		if (t->type == MB2_TAG_END)
			return 0;
		const char *payload = (const char *)(t + 1);
		uint32_t plen = t->size - (uint32_t)sizeof *t;
		switch (t->type) {
		case MB2_TAG_CMDLINE:
			copy_str(bi->cmdline, payload, plen);
			break;
		case MB2_TAG_MODULE: {
			const struct mb2_module *m = (const void *)t;
			if (t->size < sizeof *m)
				BAD("multiboot2: module tag at offset %u has size %u (at least %u)", off, t->size, (unsigned)sizeof *m);
			if (m->end < m->start)
				BAD("multiboot2: module %u ends at 0x%x before it starts at 0x%x", nmod, m->end, m->start);
			/* The first module is the kernel (its string the guest's command
			 * line), the second the initrd; more are boot data only. */
			if (nmod == 0) {
				bi->kernel.addr = m->start;
				bi->kernel.size = m->end - m->start;
				copy_str(bi->guest_cmdline, m->string, t->size - sizeof *m);
			} else if (nmod == 1) {
				bi->initrd.addr = m->start;
				bi->initrd.size = m->end - m->start;
			}
			nmod++;
			if (m->end > m->start)
				memmap_add(&bi->mem, m->start, ALIGN_UP((uint64_t)m->end, PAGE_SIZE) - m->start, MEM_BOOT);
			break;
		}
		case MB2_TAG_MMAP: {
			const struct mb2_mmap *mm = (const void *)t;
			if (t->size < sizeof *mm || mm->entry_size < sizeof(struct mb2_mmap_entry))
				BAD("multiboot2: memory map tag at offset %u: entry size %u (at least %u)", off,
				    t->size < sizeof *mm ? 0 : mm->entry_size, (unsigned)sizeof(struct mb2_mmap_entry));
			uint32_t n = 0;
			for (uint32_t e = sizeof *mm; e + mm->entry_size <= t->size; e += mm->entry_size, n++) {
				struct mb2_mmap_entry me;   /* entry_size need not keep entries aligned */
				memcpy(&me, (const uint8_t *)t + e, sizeof me);
				if (!memmap_add(&bi->mem, me.base, me.len, mb2_type(me.type)))
					BAD("multiboot2: memory map entry %u of %u does not fit the hypervisor's table (%u ranges)",
					    n, (t->size - (uint32_t)sizeof *mm) / mm->entry_size, (unsigned)MEMMAP_MAX);
			}
			break;
		}
		case MB2_TAG_ACPI_OLD:
		case MB2_TAG_ACPI_NEW:
			if (plen < 20)
				BAD("multiboot2: ACPI tag at offset %u holds %u bytes (an RSDP has at least 20)", off, plen);
			if (!*have_rsdp || t->type == MB2_TAG_ACPI_NEW) {
				memset(rsdp_copy, 0, rsdp_max);
				memcpy(rsdp_copy, payload, plen < rsdp_max ? plen : rsdp_max);
				*have_rsdp = true;
			}
			break;
		}
		off += ALIGN_UP(t->size, 8);
	}
	BAD("multiboot2: no end tag within the %u bytes of the information structure", total);
}
