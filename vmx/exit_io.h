/* Port I/O exits and the run's verdict (vmx/exit_io.c). */
#ifndef VMX_EXIT_IO_H
#define VMX_EXIT_IO_H
#include "../lib/types.h"
struct vcpu;
void exit_io(struct vcpu *v);
/* HC_HV_VERDICT: the guest's own checks passed or failed. */
void hc_verdict(uint32_t cpu, bool pass);
/* The guest died (why: one line): "hv: guest died: <why>", the exit report,
 * result=fail, every other CPU stopped, the run ended. */
__noreturn void vmx_guest_died(struct vcpu *v, const char *why);
/* The guest reboots (a reset it asks for: 'val' written to 'port', 0: a
 * triple fault): as on_reboot= says, a death (report), a halt after the
 * report, or every CPU out of VMX and the machine reset. */
__noreturn void vmx_guest_reboots(struct vcpu *v, const char *why, uint16_t port, uint8_t val);
#endif
