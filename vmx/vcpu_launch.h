/* Setting up and starting the vCPUs (vmx/vcpu.c). */
#ifndef VMX_VCPU_LAUNCH_H
#define VMX_VCPU_LAUNCH_H
#include "vcpu.h"
#define EXIT_STACK_PAGES 4
#define VCPU_PAGES (ALIGN_UP(sizeof(struct vcpu), PAGE_SIZE) / PAGE_SIZE)
/* Heap pages per vCPU, all from its CPU's node: the struct, VMCS, posted-
 * interrupt descriptor, virtual-APIC page, exit stack (vcpu_create) and
 * its own MSR bitmap (virq_timer_msr_bitmap, when the timer is handed). */
#define VCPU_HEAP_PAGES (VCPU_PAGES + 3 + EXIT_STACK_PAGES + 1)
struct percpu;
struct vcpu *vcpu_create(struct percpu *p, uint8_t nv);
/* The boot CPU's guest state and RSI (the zero page). */
void vcpu_set_bsp_guest(const struct vmcs_guest *g, uint64_t rsi);
/* VMXON, VMCS, VMLAUNCH on the calling CPU; never returns. */
__noreturn void vcpu_launch_this_cpu(void);
#endif
