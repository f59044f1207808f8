/* The DMAR parser (lib/dmar.c): the input is the table, all of it readable.
 * Counted, given exactly the room counted, parsed: both passes must agree,
 * and the coverage walk must stay inside the arrays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../lib/dmar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct dmar_info info;
	struct dmar_counts c;
	char err[256];
	int r = dmar_count(data, n, &c, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	if (r)
		return 0;
	void *buf = malloc(dmar_bytes(&c) + 1);
	dmar_place(&info, &c, buf);
	r = dmar_parse(data, n, &info, err, sizeof err);
	if (r || !info.ndrhd || info.ndrhd != c.ndrhd || info.nscopes != c.nscopes || info.nrmrr != c.nrmrr ||
	    info.natsr != c.natsr || info.nrhsa != c.nrhsa || info.nsatc != c.nsatc)
		__builtin_trap();
	for (uint32_t i = 0; i < info.ndrhd; i++)
		if (info.drhd[i].first + info.drhd[i].n > info.nscopes || (info.drhd[i].base & 0xfff))
			__builtin_trap();
	for (uint32_t i = 0; i < info.nscopes; i++)
		if (dmar_unit_of(&info, 0, &info.scope[i]) >= (int)info.ndrhd)
			__builtin_trap();
	dmar_check_coverage(&info);
	free(buf);
	return 0;
}
