/* The Multiboot2 information (boot/mb2_info.c): the input is the structure
 * GRUB would hand over, in a buffer as large as the parser may read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../../boot/mb2_info.h"

static uint8_t *buf;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct boot_info bi;
	uint8_t rsdp[64];
	bool have;
	if (!buf)
		buf = aligned_alloc(8, MB2_INFO_MAX);
	if (n > MB2_INFO_MAX)
		n = MB2_INFO_MAX;
	memset(buf, 0, 8);
	memcpy(buf, data, n);
	memset(buf + n, 0, (n < 64 ? 64 : n + 64 > MB2_INFO_MAX ? MB2_INFO_MAX : n + 64) - n);
	if (n < 8)
		return 0;
	/* The parser may read up to 'total' bytes: the buffer holds MB2_INFO_MAX. */
	memset(&bi, 0, sizeof bi);
	int r = mb2_parse(buf, &bi, rsdp, sizeof rsdp, &have);
	if (r && !bi.boot_error[0])
		__builtin_trap();
	return 0;
}
