/* Posted-interrupt descriptors and the PID-pointer table (SDM Vol. 3C,
 * "Posted-Interrupt Processing" and "IPI Virtualization"). The same table
 * serves hardware IPIv and the software ICR fast path. */
#ifndef APIC_PI_H
#define APIC_PI_H
#include "../lib/types.h"

/* 64 bytes: PIR (256 bits), ON (bit 256), SN (bit 257), NV (bits 279:272),
 * NDST (bits 319:288). */
struct pi_desc {
	uint64_t pir[4];
	uint16_t control;        /* bit 0 ON (outstanding notification), bit 1 SN (suppress) */
	uint8_t nv;              /* notification vector */
	uint8_t rsvd0;
	uint32_t ndst;           /* notification destination: x2APIC ID */
	uint64_t rsvd1[3];
} __aligned(64);
_Static_assert(sizeof(struct pi_desc) == 64, "posted-interrupt descriptor is 64 bytes");

#define PI_ON BIT(0)
#define PI_SN BIT(1)
#define PID_ENTRY_VALID BIT(0)

/* Fills a descriptor for the CPU with 'apic_id' (x2APIC: NDST is the whole ID). */
void pi_desc_init(struct pi_desc *d, uint8_t nv, uint32_t apic_id);
/* Posts 'vector': sets its PIR bit; when ON and SN are both clear, sets ON
 * and returns true: the caller must send the notification vector. */
bool pi_post(struct pi_desc *d, uint8_t vector);
/* Takes and clears the pending vectors (what the CPU does on notification). */
void pi_take(struct pi_desc *d, uint64_t out[4]);

/* The PID-pointer table: entry i = physical address of the descriptor of
 * the CPU with APIC ID i, with bit 0 set; absent IDs stay 0. */
void pid_table_set(uint64_t *table, uint32_t apic_id, paddr_t desc_pa);
/* The lookup of a virtualized ICR write: NULL when the ID is above 'last'
 * or the entry is not valid (the CPU then makes an APIC-write VM exit). */
struct pi_desc *pid_table_lookup(const uint64_t *table, uint32_t last, uint32_t apic_id);
/* Bytes for a table covering APIC IDs 0..max_apic_id, rounded up to pages. */
uint64_t pid_table_bytes(uint32_t max_apic_id);

/* ipivtest=1 (a test aid for the IPI-virtualization agreement test): three
 * entries past the highest APIC ID 'max': max+1 absent (0), max+2 with a
 * reserved bit (bit 1) set, max+3 valid, naming 'spare', a descriptor with
 * SN set (so that a virtualized IPI to it sets PIR and no ON). The caller
 * makes max+3 the last index; the table must cover it. */
#define PID_TEST_ENTRIES 3
void pid_table_add_test_entries(uint64_t *table, uint32_t max, struct pi_desc *spare, uint8_t nv);
extern struct pi_desc *pid_test_spare;   /* NULL unless ipivtest=1 */
#endif
