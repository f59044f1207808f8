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
/* on_reboot= and on_poweroff= (enum reboot_opt, poweroff_opt), after
 * power_init: auto resolved by exit=. */
void power_policy(int on_reboot, int on_poweroff);
int power_on_reboot(void);
int power_on_poweroff(void);
/* Resets the machine: the byte 'val' written to 'port' first (0: none),
 * then every reset control the PC has; halts if none took. */
__noreturn void power_reset(uint16_t port, uint8_t val);
/* Says why and halts this CPU (the others stopped already). */
__noreturn void power_halt(const char *why);
#endif
