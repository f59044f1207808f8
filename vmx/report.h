/* The exit report: stable, line-oriented, one prefix, key=value fields.
 *   hvstat: begin why=<shutdown|hypercall> cpus=N
 *   hvstat: cpu=I exits=N
 *   hvstat: cpu=I reason=NAME code=N count=N
 *   hvstat: cpu=I msr=0xNNN reads=N writes=N
 *   hvstat: end total_exits=N */
#ifndef VMX_REPORT_H
#define VMX_REPORT_H
#include "../lib/types.h"
void report_print(const char *why);
/* reportcpus= (lib/options.h): which vCPUs the report details one by one. */
void report_cpus_set(uint32_t n);
/* report=SECONDS: the interval report,
 *   hvstat: interval seq=K seconds=S.mmm cpus=N
 *   hvstat: cpu=I interval exits=+E exits_per_s=R in_hv_permille=P posted=+A notified=+B
 *           timer_posts=+C pv_eois=+D top=REASON:+n,...   (one line)
 * printed by vCPU 0 at its first exit once SECONDS have passed since the
 * last one (a guest that does not exit delays it). 0 turns it off. */
struct vcpu;
void report_periodic_init(uint32_t seconds);
void report_tick(struct vcpu *v);
#endif
