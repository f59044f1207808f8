/* A model of the consistency checks VMLAUNCH makes (Intel SDM Vol. 3C,
 * "VM Entries": "Checks on VMX Controls and Host-State Area" and "Checks on
 * the Guest State Area"), run over the fields host tests recorded with
 * vmcs_write() (vmcs_record.h), plus a model of how the CPU virtualizes an
 * x2APIC ICR write with IPI virtualization ("IPI Virtualization").
 *
 * Assumptions, since a host test has no CPU to ask:
 *  - the processor is in 64-bit mode, outside SMM, when it executes VMLAUNCH;
 *  - physical-address width 52 (the architectural maximum: a stricter width
 *    would reject the host pointers tests pass as "physical" addresses) and
 *    48-bit linear addresses (no 5-level paging) for canonicality;
 *  - the virtual-APIC page is freshly zeroed (VTPR = 0), no SGX, no shadow
 *    VMCS (the link pointer must be all ones);
 *  - a field a check needs that was never written is itself a violation:
 *    after VMCLEAR its contents are undefined. */
#ifndef TEST_UNIT_VMENTRY_MODEL_H
#define TEST_UNIT_VMENTRY_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "../../vmx/caps.h"

/* Returns 0 when VM entry would succeed, else the number of violations; the
 * first one, naming the rule and the field, goes to why (may be NULL). */
int vmentry_check(const struct vmx_caps *c, char *why, size_t n);

#endif
