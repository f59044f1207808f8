/* Ending a run: ACPI S5, QEMU's isa-debug-exit or Bochs's shutdown port. */
#ifndef LIB_POWER_H
#define LIB_POWER_H
#include "types.h"
#include "acpi.h"
void power_init(int exit_mode, const struct acpi_info *acpi);
/* Prints "hv: result=pass|fail" and ends the run as exit= asks; halts when
 * nothing could end it. */
__noreturn void hv_exit(bool success);
/* A boot-phase error: prints "hv: <why>", then hv_exit(false). */
__noreturn void hv_fail(const char *why);
#endif
