/* Setting up and starting the vCPUs (vmx/vcpu.c). */
#ifndef VMX_VCPU_LAUNCH_H
#define VMX_VCPU_LAUNCH_H
#include "vcpu.h"
struct percpu;
struct vcpu *vcpu_create(struct percpu *p, uint8_t nv);
/* The boot CPU's guest state and RSI (the zero page). */
void vcpu_set_bsp_guest(const struct vmcs_guest *g, uint64_t rsi);
/* VMXON, VMCS, VMLAUNCH on the calling CPU; never returns. */
__noreturn void vcpu_launch_this_cpu(void);
#endif
