/* Preparing the Linux guest: load the bzImage and initrd, build the zero
 * page, and the identity page tables and GDT the 64-bit entry needs. */
#ifndef GUEST_BOOT_H
#define GUEST_BOOT_H
#include "../lib/types.h"
#include "../lib/boot_info.h"
#include "linux.h"

/* Guest-physical layout of the start-up structures (below 1 MiB, which
 * Linux keeps for itself anyway). */
#define GUEST_ZERO_PAGE 0x10000
#define GUEST_CMDLINE   0x11000     /* 2 pages: cmdline_size is 2047 */
#define GUEST_GDT       0x13000
#define GUEST_PML4      0x14000
#define GUEST_PDPT      0x15000
#define GUEST_PD        0x16000     /* 4 pages: 4 GiB of 2 MiB pages */
#define GUEST_ACPI      0x1a000     /* the guest's RSDP, MADT and root table copies (guest/acpi.c) */
#define GUEST_ACPI_SIZE 0x6000
#define GUEST_BOOT_END  0x20000
#define GUEST_GDT_LIMIT 0x1f

struct guest_boot {
	struct linux_image li;
	uint64_t entry, zero_page, cr3, gdt;
	paddr_t probe;            /* hypervisor address the guest's test tries to read */
};

/* Returns 0, or -1 with a message: missing kernel or initrd, a bad image,
 * no room. 'probe' is appended to the kernel command line as hv.probe=,
 * the hypervisor's canary page (lib/canary.h) as hv.canary=. */
int guest_prepare(struct boot_info *bi, paddr_t rsdp, paddr_t probe, struct guest_boot *gb,
		  char *err, size_t errlen);
#endif
