/* The ACPI parser (lib/acpi.c): the input is a piece of "physical memory"
 * at a fixed address with the RSDP at its start; table pointers the fuzzer
 * makes point into it (the seeds hold a full RSDP/XSDT/MADT/FADT/DSDT set
 * at FUZZ_ACPI_BASE). The parser may read only there (acpi_readable_*), as
 * in the hypervisor it may read only its identity map. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../../lib/acpi.h"

#define FUZZ_ACPI_BASE 0x20000000ull
#define FUZZ_ACPI_SIZE 0x10000ull

/* The MADT's room: one buffer, replaced on every parse. */
static void *fuzz_alloc(size_t n)
{
	static void *room;
	free(room);
	return room = calloc(1, n ? n : 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static uint8_t *mem;
	static struct acpi_info info;
	char err[256];
	if (!mem) {
		mem = mmap((void *)(uintptr_t)FUZZ_ACPI_BASE, FUZZ_ACPI_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (mem != (uint8_t *)(uintptr_t)FUZZ_ACPI_BASE)
			__builtin_trap();
		acpi_readable_lo = FUZZ_ACPI_BASE;
		acpi_readable_hi = FUZZ_ACPI_BASE + FUZZ_ACPI_SIZE;
		acpi_alloc = fuzz_alloc;
	}
	if (n > FUZZ_ACPI_SIZE)
		n = FUZZ_ACPI_SIZE;
	memset(mem, 0, FUZZ_ACPI_SIZE);
	memcpy(mem, data, n);
	int r = acpi_parse(FUZZ_ACPI_BASE, &info, err, sizeof err);
	if (r && !err[0])
		__builtin_trap();
	if (!r && (info.ncpus > info.cpu_room || info.nioapics > info.ioapic_room))
		__builtin_trap();
	return 0;
}
