/* The guest's MSR policy: a bitmap that passes through what is safe, and a
 * handler (with a written reason) for each MSR that is intercepted. */
#ifndef GUEST_MSR_H
#define GUEST_MSR_H
#include "../lib/types.h"

/* Fills a 4 KiB VMX MSR bitmap (SDM Vol. 3C, "MSR-Bitmap Address").
 * virtual_apic: the virtual interrupt model's x2APIC policy, in which
 * IA32_TSC_DEADLINE is intercepted (the hypervisor serves the guest's timer);
 * icr_virtualized: IPI virtualization takes ICR writes (they do not exit). */
void msr_bitmap_build(uint8_t *bitmap, bool virtual_apic, bool icr_virtualized);
/* Reads and writes of msr (in the low range) pass through, or exit:
 * APIC-timer virtualization takes IA32_TSC_DEADLINE per vCPU while it
 * serves the guest's timer (vmx/virq_timer.c). */
void msr_bitmap_pass(uint8_t *bitmap, uint32_t msr, bool pass);
/* The software x2APIC: every x2APIC register read and write exits. */
void msr_bitmap_all_apic(uint8_t *bitmap);
/* Whether the bitmap makes (msr, write) exit; MSRs outside the two bitmap
 * ranges always exit. */
bool msr_bitmap_intercepts(const uint8_t *bitmap, uint32_t msr, bool write);
/* Intercepted accesses: 0 done, -1 inject #GP; a write may also be
 * MSR_WRITE_DROPPED: it completes without effect (an IA32_APIC_BASE change
 * the SDM allows and the hypervisor refuses). */
#define MSR_WRITE_DROPPED 2
/* A vCPU's TSC as the guest sees it: the host's TSC plus 'offset' (the VMCS
 * TSC offset), and its own IA32_TSC_ADJUST. Both start as the CPU's (offset
 * 0, adjust as read at launch); the guest's writes move them together. */
struct guest_tsc {
	uint64_t offset;
	uint64_t adjust;
};
/* WRMSR IA32_TSC of 'val' at host TSC 'host_now'. */
void guest_tsc_write(struct guest_tsc *t, uint64_t host_now, uint64_t val);
/* WRMSR IA32_TSC_ADJUST of 'val'. */
void guest_tsc_adjust_write(struct guest_tsc *t, uint64_t val);
/* The microcode revision shown on an emulator, whose own is 0 (guest/msr.c). */
#define GUEST_MICROCODE_REVISION 0x7fffffffu
/* A guest write of IA32_APIC_BASE, given the value it holds and the
 * physical-address width (CPUID 0x80000008 EAX[7:0]): done (the value it
 * holds), #GP (reserved bits, a transition the SDM faults), or refused (a
 * valid change; counted as denied apic_base). */
enum apic_base_verdict { APIC_BASE_OK, APIC_BASE_GP, APIC_BASE_REFUSED };
enum apic_base_verdict guest_apic_base_write(uint64_t cur, uint64_t val, unsigned maxphyaddr);
int guest_rdmsr(uint32_t msr, uint64_t *value);
int guest_wrmsr(uint32_t msr, uint64_t value);
#endif
