/* The memory map (lib/memmap.c): ranges added in any order, normalized, then
 * claims and searches; the invariants of a normalized map are checked. */
#include <stdint.h>
#include <string.h>
#include "../../lib/memmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct memmap m;
	memset(&m, 0, sizeof m);
	size_t i = 0;
	for (; i + 17 <= n && m.count < MEMMAP_MAX; i += 17) {
		uint64_t base, len;
		memcpy(&base, data + i, 8);
		memcpy(&len, data + i + 8, 8);
		memmap_add(&m, base & 0xffffffffffffull, len & 0xfffffffffull, 1 + data[i + 16] % 7);
	}
	memmap_normalize(&m);
	for (uint32_t k = 0; k < m.count; k++) {
		if (!m.r[k].len)
			__builtin_trap();
		if (k && m.r[k].base < m.r[k - 1].base + m.r[k - 1].len)
			__builtin_trap();                  /* sorted, no overlaps */
	}
	if (i + 8 <= n) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		uint64_t f = memmap_find_free(&m, (a & 0xffffff) + 4096, 0x100000000ull);
		if (f)
			memmap_claim(&m, f, 4096);
	}
	(void)memmap_end(&m);
	return 0;
}
