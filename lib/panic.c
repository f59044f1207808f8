/* panic(): say why, stop every other CPU with an NMI, end the run as failed. */
#include "printk.h"
#include "percpu.h"
#include "power.h"
#include "cpu.h"
#include "canary.h"

volatile bool hv_panicking;
void (*panic_stop_others)(void);

void (*stop_hook)(void);

__noreturn void cpu_stop(void)
{
	if (stop_hook)
		stop_hook();
	cpu_halt_forever();
}

void stop_other_cpus(void)
{
	__atomic_store_n(&hv_panicking, true, __ATOMIC_SEQ_CST);
	if (ncpus > 1 && panic_stop_others)
		panic_stop_others();
}

__noreturn void panic(const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	cli();
	bool first = !__atomic_exchange_n(&hv_panicking, true, __ATOMIC_SEQ_CST);
	if (!first)
		cpu_halt_forever();
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	struct percpu *c = ncpus ? this_cpu() : NULL;
	pr_err("PANIC on cpu%u: %s", c ? c->index : 0, buf);
	canary_check();          /* did what ended here reach hypervisor memory? */
	if (ncpus > 1 && panic_stop_others)
		panic_stop_others();
	hv_exit(false);
}
