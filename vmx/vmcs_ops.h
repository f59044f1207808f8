/* VMREAD/VMWRITE and friends. Every VMWRITE is checked: a failure panics
 * naming the field and the VM-instruction error. Host unit tests provide
 * vmcs_write/vmcs_read themselves and record the fields. */
#ifndef VMX_VMCS_OPS_H
#define VMX_VMCS_OPS_H
#include "../lib/types.h"
#include "vmcs_fields.h"

void vmcs_write(uint32_t field, uint64_t value);
uint64_t vmcs_read(uint32_t field);
/* BS in the pending debug exceptions when guest RFLAGS.TF is set (an
 * instruction retired by the hypervisor, or the HLT state entered). */
void vmcs_sync_pending_bs(void);
const char *vmcs_field_name(uint32_t field);
const char *vmx_insn_error_name(uint32_t err);
#ifndef HV_HOST_TEST
/* 0 on success, else -1 (VMfailInvalid) or the VM-instruction error. */
int vmclear(paddr_t pa);
int vmptrld(paddr_t pa);
#endif
#endif
