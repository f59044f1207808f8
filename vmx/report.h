/* The exit report: stable, line-oriented, one prefix, key=value fields.
 *   hvstat: begin why=<shutdown|hypercall> cpus=N
 *   hvstat: cpu=I exits=N
 *   hvstat: cpu=I reason=NAME code=N count=N
 *   hvstat: cpu=I msr=0xNNN reads=N writes=N
 *   hvstat: end total_exits=N */
#ifndef VMX_REPORT_H
#define VMX_REPORT_H
void report_print(const char *why);
#endif
