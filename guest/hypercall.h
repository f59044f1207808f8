/* VMCALL from the guest: KVM's ABI (RAX = number, RBX, RCX, RDX, RSI =
 * arguments, result in RAX) plus the hypervisor's own calls. */
#ifndef GUEST_HYPERCALL_H
#define GUEST_HYPERCALL_H
#include "../lib/types.h"

/* KVM's error codes (include/uapi/linux/kvm_para.h, as returned in RAX). */
#define KVM_ENOSYS 1000
#define KVM_EPERM  1
#define KVM_HC_SEND_IPI_NR 10               /* PV send-IPI, when advertised */
#define HC_HV_BASE      0x48560000u         /* "HV": this hypervisor's calls */
#define HC_HV_REPORT    (HC_HV_BASE + 1)    /* print the exit report; allowed from user mode */
#define HC_HV_IPI_POSTS (HC_HV_BASE + 2)    /* RBX = x2APIC ID, RCX = vector: posts of it into that vCPU */
#define HC_HV_EXITS     (HC_HV_BASE + 3)    /* RBX = x2APIC ID: VM exits of that vCPU so far */

struct vcpu;
void hypercall(struct vcpu *v);
#endif
