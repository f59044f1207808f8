/* bochstest=1: the entries that show Bochs 3.0's VMX defects
 * (testaid/bochstest.c), hooked into the exit loop by boot/'s dispatcher
 * (struct vmx_start's aid). */
#ifndef TESTAID_BOCHSTEST_H
#define TESTAID_BOCHSTEST_H
#include "../vmx/vcpu.h"
/* call: HC_HV_BOCHSTEST, RBX = HC_BT_*; 0, or -1 if refused. */
extern const struct vmx_exit_aid bochs_test_aid;
#endif
