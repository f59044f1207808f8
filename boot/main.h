/* hv_main: where both boot entries (boot/efi.c, boot/multiboot2.c) end. */
#ifndef BOOT_MAIN_H
#define BOOT_MAIN_H
#include "../lib/boot_info.h"

/* Brings up the platform and every CPU, then starts the guest; never returns. */
__noreturn void hv_main(struct boot_info *bi);
#endif
