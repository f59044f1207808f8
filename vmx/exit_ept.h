/* The EPT exits: a violation is a trap's page (the virtual IOAPIC's, an
 * MSI-X table's), a GiB beyond the identity map mapped on demand, or
 * absent memory (hypervisor memory, a page no trap owns): read as all
 * ones, stores dropped, counted; never a panic. A misconfiguration is the
 * hypervisor's own bug: it dumps and stops. */
#ifndef VMX_EXIT_EPT_H
#define VMX_EXIT_EPT_H
#include "vcpu.h"

void exit_ept_violation(struct vcpu *v);
void exit_ept_misconfig(struct vcpu *v);
#endif
