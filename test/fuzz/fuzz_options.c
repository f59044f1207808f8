/* The hypervisor's command line (lib/options.c): any bytes, as a string. */
#include <stdint.h>
#include <string.h>
#include "../../lib/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char line[1024], err[256];
	struct hv_options o;
	if (n >= sizeof line)
		n = sizeof line - 1;
	memcpy(line, data, n);
	line[n] = 0;
	options_defaults(&o);
	int r = options_parse(line, &o, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();                 /* a refusal always says why */
	struct uart_desc early;
	uart_desc_com(&early, 0x3f8);
	(void)options_console(line, &early);
	return 0;
}
