/* The one hand-off from a boot entry (UEFI or Multiboot2) to hv_main()
 * (boot/main.h). After hv_main() starts, nothing looks at firmware
 * structures again. In lib/ because the layers above boot/ read it too
 * (the guest's loader and set-up); only boot/ fills it. */
#ifndef LIB_BOOT_INFO_H
#define LIB_BOOT_INFO_H
#include "types.h"
#include "memmap.h"

#define BOOT_CMDLINE_MAX 512

struct boot_module {
	paddr_t addr;     /* 0 when absent */
	uint64_t size;
};

struct boot_info {
	const char *loader;                     /* "uefi" or "multiboot2" */
	struct memmap mem;                      /* normalized firmware memory map */
	paddr_t rsdp;                           /* ACPI RSDP, 0 when none found */
	char cmdline[BOOT_CMDLINE_MAX];         /* the hypervisor's options */
	struct boot_module kernel;              /* guest bzImage */
	struct boot_module initrd;              /* guest initramfs */
	char guest_cmdline[BOOT_CMDLINE_MAX];   /* the guest kernel's command line */
	paddr_t image_start, image_end;         /* the hypervisor image itself */
	paddr_t heap_start, heap_end;           /* pre-reserved pages (UEFI) or 0 */
	paddr_t trampoline;                     /* a 4 KiB page below 1 MiB for APs */
	char boot_error[200];                   /* what the loader found wrong (a file it could not read,
						   a malformed boot information); hv_main fails with it */
};
#endif
