/* Handlers for exits that only forced-on exiting controls produce (forced.c). */
#ifndef VMX_FORCED_H
#define VMX_FORCED_H
#include "vcpu.h"
void exit_dr_access(struct vcpu *v);
void exit_rdpmc(struct vcpu *v);
void exit_rdrand(struct vcpu *v);
void exit_rdseed(struct vcpu *v);
void exit_skip(struct vcpu *v);          /* MONITOR, PAUSE */
void exit_mtf(struct vcpu *v);
#endif
