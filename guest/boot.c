/* The Linux guest's start: files to memory, zero page, boot page tables. */
#include "boot.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/canary.h"

static struct memmap load_map;
static char cmdline[2048];

static void build_boot_tables(void)
{
	uint64_t *gdt = (uint64_t *)(uintptr_t)GUEST_GDT;
	uint64_t *pml4 = (uint64_t *)(uintptr_t)GUEST_PML4;
	uint64_t *pdpt = (uint64_t *)(uintptr_t)GUEST_PDPT;
	uint64_t *pd = (uint64_t *)(uintptr_t)GUEST_PD;

	memset((void *)(uintptr_t)GUEST_GDT, 0, GUEST_ACPI - GUEST_GDT);   /* the ACPI copies follow */
	gdt[2] = 0x00af9a000000ffffull;   /* __BOOT_CS 0x10: 64-bit code */
	gdt[3] = 0x00cf92000000ffffull;   /* __BOOT_DS 0x18: data */
	pml4[0] = GUEST_PDPT | 3;
	for (int i = 0; i < 4; i++)
		pdpt[i] = (GUEST_PD + i * PAGE_SIZE) | 3;
	for (int i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | 0x83;   /* present, writable, 2 MiB */
}

int guest_prepare(struct boot_info *bi, paddr_t rsdp, paddr_t probe, struct guest_boot *gb,
		  char *err, size_t errlen)
{
	memset(gb, 0, sizeof *gb);
	if (!bi->kernel.addr || !bi->kernel.size) {
		snprintf(err, errlen, "guest: no kernel given (Multiboot2: first module; UEFI: kernel= in \\hv\\hv.cfg)");
		return -1;
	}
	for (paddr_t pa = GUEST_ZERO_PAGE; pa < GUEST_BOOT_END; pa += PAGE_SIZE)
		if (memmap_type_at(&bi->mem, pa) != MEM_USABLE) {
			snprintf(err, errlen, "guest: start-up page 0x%llx is not usable RAM", (unsigned long long)pa);
			return -1;
		}
	if (linux_check((const void *)(uintptr_t)bi->kernel.addr, bi->kernel.size, &gb->li, err, errlen))
		return -1;

	/* The loader may use boot data (the modules) as RAM once they are copied,
	 * but not the start-up structures. */
	memcpy(&load_map, &bi->mem, sizeof load_map);
	for (uint32_t i = 0; i < load_map.count; i++)
		if (load_map.r[i].type == MEM_BOOT)
			load_map.r[i].type = MEM_USABLE;
	memmap_add(&load_map, GUEST_ZERO_PAGE, GUEST_BOOT_END - GUEST_ZERO_PAGE, MEM_RESERVED);
	memmap_normalize(&load_map);

	snprintf(cmdline, sizeof cmdline, "%s hv.probe=0x%llx hv.canary=0x%llx", bi->guest_cmdline, (unsigned long long)probe,
		 (unsigned long long)canary_pa());
	if (linux_load(&gb->li, &load_map, bi->kernel.addr, bi->kernel.size, bi->initrd.addr, bi->initrd.size,
		       true, cmdline, GUEST_ZERO_PAGE, GUEST_CMDLINE, rsdp, err, errlen))
		return -1;
	build_boot_tables();
	gb->entry = gb->li.entry64;
	gb->zero_page = GUEST_ZERO_PAGE;
	gb->cr3 = GUEST_PML4;
	gb->gdt = GUEST_GDT;
	gb->probe = probe;
	linux_print(&gb->li);
	pr_info("guest: command line \"%s\"\n", cmdline);
	return 0;
}
