/* bochstest=1: the entries that show Bochs 3.0's VMX defects (vmx/bochstest.c). */
#ifndef VMX_BOCHSTEST_H
#define VMX_BOCHSTEST_H
#include "../lib/types.h"
struct vcpu;
/* HC_HV_BOCHSTEST: RBX = HC_BT_*; 0, or -1 if refused. */
int64_t bochs_test_call(void *ctx, uint64_t what);
void bochs_test_after_exit(struct vcpu *v, uint32_t basic);
/* Before the exit's handler: true when it was HC_BT_VIRQ_NP's #NP (handled here). */
bool bochs_test_exit(struct vcpu *v, uint32_t basic);
void bochs_test_before_entry(struct vcpu *v, uint32_t basic);
#endif
