/* The summary of what lib/acpi.c parsed, printed at boot. */
#ifndef LIB_ACPI_PRINT_H
#define LIB_ACPI_PRINT_H
#include "acpi.h"

/* Logs a summary at info level: tables, CPUs (one by one, or as runs past
 * the CPUs lib/cpusum.h details), IOAPICs, PM1 ports and timer, HPET, S5. */
void acpi_print(const struct acpi_info *a);
#endif
