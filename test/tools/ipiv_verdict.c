/* The unit tests' model of IPI virtualization (test/unit/ipiv_model.c) as a
 * command, for the agreement test with the patched Bochs: it builds the
 * PID-pointer table the hypervisor builds (entries 0..MAX valid; with
 * IPIVTEST=1 also max+1 absent, max+2 with a reserved bit, max+3 a spare
 * descriptor with SN set, and last index max+3) in the SDM's raw layout,
 * reads "ROW ICR" lines (ICR in hex) and prints "ROW VERDICT" with VERDICT
 * virt (posted, no exit), exit (APIC-write VM exit) or gp, then
 * "spare pir=<256 bits in hex, high first> on=N" for the spare descriptor.
 *
 *   build/ipiv-verdict MAX_APIC_ID IPIVTEST < rows */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../unit/ipiv_model.h"
#include "../unit/sdm_pid.h"

#define NV 0xf2

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s MAX_APIC_ID IPIVTEST(0|1) < 'ROW ICR' lines\n", argv[0]);
		return 2;
	}
	unsigned long max = strtoul(argv[1], NULL, 0);
	int test = atoi(argv[2]);
	if (max > 4096) {
		fprintf(stderr, "ipiv-verdict: MAX_APIC_ID %lu too large\n", max);
		return 2;
	}
	uint32_t last = (uint32_t)max + (test ? 3 : 0);
	uint64_t *table = calloc(last + 1, 8);
	uint8_t *descs = aligned_alloc(SDM_PID_ALIGN, (max + 2) * SDM_PID_BYTES);
	if (!table || !descs)
		return 2;
	for (uint32_t i = 0; i <= max; i++) {
		sdm_pid_init(descs + i * SDM_PID_BYTES, NV, i);
		table[i] = (uint64_t)(uintptr_t)(descs + i * SDM_PID_BYTES) | SDM_PIDPT_VALID;
	}
	uint8_t *spare = descs + (max + 1) * SDM_PID_BYTES;
	sdm_pid_init(spare, NV, 0);
	spare[SDM_PID_CTRL_BYTE] |= SDM_PID_SN;
	if (test) {
		table[max + 1] = 0;
		table[max + 2] = (uint64_t)(uintptr_t)spare | SDM_PIDPT_VALID | 2;   /* bit 1: reserved */
		table[max + 3] = (uint64_t)(uintptr_t)spare | SDM_PIDPT_VALID;
	}
	char line[256];
	while (fgets(line, sizeof line, stdin)) {
		unsigned row;
		unsigned long long icr;
		if (sscanf(line, "%u %llx", &row, &icr) != 2)
			continue;
		struct ipiv_result r = ipiv_model_icr_write(table, last, (uint64_t)icr);
		printf("%u %s\n", row, r.gp ? "gp" : r.apic_write_exit ? "exit" : "virt");
	}
	printf("spare pir=");
	for (int b = 31; b >= 0; b--)
		printf("%02x", spare[b]);
	printf(" on=%d\n", sdm_pid_on(spare) ? 1 : 0);
	free(table);
	free(descs);
	return 0;
}
