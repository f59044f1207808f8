/* The hypervisor's canary (issue 33): one page of its own image filled with
 * a known pattern at boot and read again when the run ends (and at a
 * panic). Nothing of the hypervisor touches it in between, and the guest's
 * EPT leaves it out with the rest of the image: if it changed, a guest
 * reached hypervisor memory through something the hypervisor did on its
 * behalf (a moved MSI-X table, item 1). Its address is on the guest's
 * command line as hv.canary= so that hvattack aims at it. */
#ifndef LIB_CANARY_H
#define LIB_CANARY_H
#include "types.h"

/* Fills the page (once) and returns its physical address. */
paddr_t canary_pa(void);
/* Compares the page with the pattern and says so in one line: "hv: canary
 * intact ..." or "hv: canary CHANGED ...". True when intact, or when it
 * was never filled (nothing said). */
bool canary_check(void);
#endif
