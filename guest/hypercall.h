/* VMCALL from the guest: KVM's ABI (RAX = number, RBX, RCX, RDX, RSI =
 * arguments, result in RAX) plus the hypervisor's own calls. */
#ifndef GUEST_HYPERCALL_H
#define GUEST_HYPERCALL_H
#include "../lib/types.h"

#define KVM_ENOSYS 1000
#define HC_HV_BASE   0x48560000u            /* "HV": this hypervisor's calls */
#define HC_HV_REPORT (HC_HV_BASE + 1)       /* print the exit report; allowed from user mode */

struct vcpu;
void hypercall(struct vcpu *v);
#endif
