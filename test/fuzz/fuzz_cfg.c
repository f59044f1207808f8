/* \hv\hv.cfg (boot/cfg.c): any bytes as the file. A refusal always says
 * why; what is accepted fits its fields, NUL-terminated. */
#include <stdint.h>
#include <string.h>
#include "../../boot/cfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct hv_cfg cfg;
	char err[256];
	int r = cfg_parse((const char *)data, n, &cfg, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	if (strnlen(cfg.options, sizeof cfg.options) == sizeof cfg.options ||
	    strnlen(cfg.cmdline, sizeof cfg.cmdline) == sizeof cfg.cmdline ||
	    strnlen(cfg.kernel, sizeof cfg.kernel) == sizeof cfg.kernel ||
	    strnlen(cfg.initrd, sizeof cfg.initrd) == sizeof cfg.initrd)
		__builtin_trap();
	return 0;
}
