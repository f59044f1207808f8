/* The bzImage check and the boot_params/e820 builder (guest/linux.c): the
 * input is the kernel image, loaded into an arena that the memory map says
 * is usable RAM (below 4 GiB, as in a real boot), with the zero page and the
 * command line at its start. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "../../guest/linux.h"

#define ARENA (64ull << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static uint8_t *a;
	static struct memmap mem;
	static struct linux_image li;
	char err[256];
	if (!a) {
		a = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT | MAP_NORESERVE, -1, 0);
		if (a == MAP_FAILED)
			__builtin_trap();
	}
	uint64_t base = (uint64_t)(uintptr_t)a;
	if (n > (8ull << 20))
		n = 8ull << 20;
	memset(&mem, 0, sizeof mem);
	memmap_add(&mem, base, ARENA, MEM_USABLE);
	memmap_add(&mem, base + (60ull << 20), 1ull << 20, MEM_HV);
	memmap_normalize(&mem);
	memcpy(a + (1 << 20), data, n);
	int r = linux_check(a + (1 << 20), n, &li, err, sizeof err);
	if (r) {
		if (!err[0])
			__builtin_trap();
		return 0;
	}
	r = linux_load(&li, &mem, base + (1 << 20), n, base + (10ull << 20), 4096, false, "console=ttyS0",
		       base, base + 0x1000, 0, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	return 0;
}
