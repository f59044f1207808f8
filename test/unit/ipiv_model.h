/* A model of how the CPU virtualizes a guest WRMSR to the x2APIC ICR
 * (0x830) with "IPI virtualization" on (SDM Vol. 3C, "IPI Virtualization"),
 * over a PID-pointer table and descriptors read and written as raw bytes in
 * the SDM's layout (sdm_pid.h), never through apic/pi.h. */
#ifndef TEST_UNIT_IPIV_MODEL_H
#define TEST_UNIT_IPIV_MODEL_H
#include <stdint.h>
#include <stdbool.h>

struct ipiv_result {
	bool gp;                  /* reserved bits: the WRMSR faults, nothing else */
	bool apic_write_exit;     /* not virtualized: APIC-write VM exit */
	bool notify;              /* a notification IPI was sent ... */
	uint32_t ndst;            /* ... to this physical APIC ID (PID.NDST) */
	uint8_t nv;               /* ... with this vector (PID.NV) */
	uint8_t *desc;            /* the descriptor written (raw bytes), NULL if none */
};
/* table/last: the PID-pointer table (entries hold host pointers, as the host
 * tests use them for physical addresses) and LAST_PID_POINTER_INDEX. */
struct ipiv_result ipiv_model_icr_write(const uint64_t *table, uint32_t last, uint64_t icr);
#endif
