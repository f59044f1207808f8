/* Reading the VMX capability MSRs and entering/leaving VMX root operation. */
#ifndef VMX_VMXON_H
#define VMX_VMXON_H
#include "caps.h"
/* Fills raw from CPUID and the MSRs on the calling CPU, following the
 * reader rules (TRUE_* only with VMX_BASIC bit 55, PROCBASED_CTLS2/3 only
 * when allowed); an MSR that faults is recorded as absent. */
void vmx_read_raw_caps(struct vmx_raw_caps *raw);
/* vmx_read_raw_caps on the calling CPU, kept by its CPU index (vCPUs only,
 * index < MAX_CPUS), and what it read there. */
void vmx_probe_this_cpu(void);
const struct vmx_raw_caps *vmx_raw_caps_of(uint32_t index);
/* VMXON on the calling CPU (region from page_alloc); 0 or -1 with msg. */
int vmx_on(const struct vmx_caps *c, void *region, char *msg, size_t len);
void vmx_off(void);
#endif
