/* The Multiboot2 information structure, parsed (mb2_info.c). */
#ifndef BOOT_MB2_INFO_H
#define BOOT_MB2_INFO_H
#include "../lib/boot_info.h"

#define MB2_INFO_MAX (1u << 20)   /* a structure larger than this is taken for garbage */

/* Fills bi (command lines, modules, memory map) from info; the RSDP GRUB
 * copies into its ACPI tag goes to rsdp_copy (*have_rsdp). Returns 0, or -1
 * with bi->boot_error saying what is malformed and where. */
int mb2_parse(const uint8_t *info, struct boot_info *bi, uint8_t *rsdp_copy, size_t rsdp_max, bool *have_rsdp);
#endif
