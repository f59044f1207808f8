/* Host stand-ins for what only the hypervisor has. */
#include <stdbool.h>
#include <stdint.h>

/* No MSRs on the host: every read faults, as on a CPU without them. */
bool rdmsr_safe(uint32_t msr, uint64_t *v)
{
	(void)msr;
	*v = 0;
	return false;
}
