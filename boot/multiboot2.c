/* Multiboot2 hand-off: GRUB's information structure into a boot_info
 * (boot/mb2_info.c parses and checks it), then hv_main. */
#include "main.h"
#include "mb2_info.h"
#include "../lib/string.h"
#include "../lib/acpi.h"

#define MB2_BOOTLOADER_MAGIC 0x36d76289

extern char __image_start[], __image_end[];
static struct boot_info bi;
static uint8_t rsdp_copy[64] __aligned(16);  /* GRUB gives a copy, not an address */

void mb2_main(uint32_t magic, uint32_t info);

void mb2_main(uint32_t magic, uint32_t info)
{
	bool have_rsdp = false;

	bi.loader = "multiboot2";
	bi.image_start = (paddr_t)(uintptr_t)__image_start;
	bi.image_end = (paddr_t)(uintptr_t)__image_end;
	if (magic != MB2_BOOTLOADER_MAGIC) {
		hv_main(&bi);     /* hv_main says what is missing */
	}
	/* A malformed structure leaves its message in bi.boot_error: hv_main
	 * prints it once the console is up and fails the run. */
	if (mb2_parse((const uint8_t *)(uintptr_t)info, &bi, rsdp_copy, sizeof rsdp_copy, &have_rsdp))
		hv_main(&bi);
	uint32_t total = *(uint32_t *)(uintptr_t)info;
	/* The information structure itself stays readable until hv_main is done with it. */
	memmap_add(&bi.mem, ALIGN_DOWN(info, PAGE_SIZE), ALIGN_UP(info + total, PAGE_SIZE) - ALIGN_DOWN(info, PAGE_SIZE), MEM_BOOT);
	/* Prefer the firmware's own RSDP (an address the guest can use too). */
	bi.rsdp = acpi_find_rsdp_legacy();
	if (!bi.rsdp && have_rsdp)
		bi.rsdp = (paddr_t)(uintptr_t)rsdp_copy;
	hv_main(&bi);
}
