/* The DMAR parser (lib/dmar.c): the input is the table, all of it readable. */
#include <stdint.h>
#include <string.h>
#include "../../lib/dmar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct dmar_info info;
	char err[256];
	int r = dmar_parse(data, n, &info, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	if (!r && (!info.ndrhd || info.ndrhd > DMAR_MAX_DRHD || info.nscopes > DMAR_MAX_SCOPES))
		__builtin_trap();
	for (uint32_t i = 0; !r && i < info.ndrhd; i++)
		if (info.drhd[i].first + info.drhd[i].n > info.nscopes || (info.drhd[i].base & 0xfff))
			__builtin_trap();
	return 0;
}
