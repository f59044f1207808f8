/* The SRAT parser (lib/srat.c): the input is the table, all of it readable.
 * Counted, given exactly the room counted, parsed: the passes must agree,
 * every CPU's node must exist, and the nodes' CPUs add up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../lib/srat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct srat_info info;
	struct srat_counts c;
	char err[256];
	int r = srat_count(data, n, &c, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	if (r)
		return 0;
	void *buf = malloc(srat_bytes(&c) + 1);
	srat_place(&info, &c, buf);
	r = srat_parse(data, n, &info, err, sizeof err);
	if (r || info.ncpus + info.ndup != c.ncpus || info.nmem > c.nmem || info.nnodes > c.ncpus + c.nmem)
		__builtin_trap();
	uint32_t sum = 0;
	for (uint32_t i = 0; i < info.nnodes; i++) {
		sum += info.node[i].ncpus;
		if (i && info.node[i].id <= info.node[i - 1].id)
			__builtin_trap();
	}
	if (sum != info.ncpus)
		__builtin_trap();
	for (uint32_t i = 0; i < info.ncpus; i++)
		if (!srat_node(&info, info.cpu[i].node) || srat_node_of_apic(&info, info.cpu[i].apic_id) != info.cpu[i].node)
			__builtin_trap();
	srat_print(&info);
	free(buf);
	return 0;
}
