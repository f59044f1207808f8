/* The posted-interrupt descriptor and the PID-pointer table as the SDM lays
 * them out, for the test models only: byte offsets written out here, never
 * apic/pi.h, so that a wrong struct layout in the project fails the models.
 *
 * SDM Vol. 3C, "Posted-Interrupt Descriptor": 64 bytes, 64-byte aligned;
 * PIR bits 255:0, ON bit 256, SN bit 257, NV bits 279:272, NDST bits 319:288
 * (x2APIC mode: the whole 32-bit APIC ID); the other bits are reserved.
 * "IPI Virtualization": the PID-pointer table has one 8-byte entry per APIC
 * ID, the entry of APIC ID i at byte 8*i: the physical address of the
 * descriptor with bit 0 set (valid). Host tests use host pointers as
 * physical addresses. All multi-byte fields are little-endian. */
#ifndef TEST_UNIT_SDM_PID_H
#define TEST_UNIT_SDM_PID_H
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define SDM_PID_BYTES      64
#define SDM_PID_ALIGN      64
#define SDM_PID_CTRL_BYTE  32            /* bits 263:256 */
#define SDM_PID_ON         0x01          /* bit 256 */
#define SDM_PID_SN         0x02          /* bit 257 */
#define SDM_PID_NV_BYTE    34            /* bits 279:272 */
#define SDM_PID_NDST_BYTE  36            /* bits 319:288 */
#define SDM_PIDPT_ENTRY_BYTES 8
#define SDM_PIDPT_VALID    1ull          /* entry bit 0 */
#define SDM_PIDPT_LOW_BITS 0x3full       /* entry bits 5:0: 000001b for a valid entry */

static inline bool sdm_pid_pir(const uint8_t *d, unsigned v) { return (d[v >> 3] >> (v & 7)) & 1; }
static inline void sdm_pid_set_pir(uint8_t *d, unsigned v) { d[v >> 3] |= (uint8_t)(1u << (v & 7)); }
static inline bool sdm_pid_on(const uint8_t *d) { return d[SDM_PID_CTRL_BYTE] & SDM_PID_ON; }
static inline bool sdm_pid_sn(const uint8_t *d) { return d[SDM_PID_CTRL_BYTE] & SDM_PID_SN; }
static inline uint8_t sdm_pid_nv(const uint8_t *d) { return d[SDM_PID_NV_BYTE]; }

static inline uint32_t sdm_pid_ndst(const uint8_t *d)
{
	const uint8_t *p = d + SDM_PID_NDST_BYTE;
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A fresh descriptor: nothing pending, ON and SN clear. */
static inline void sdm_pid_init(uint8_t *d, uint8_t nv, uint32_t ndst)
{
	memset(d, 0, SDM_PID_BYTES);
	d[SDM_PID_NV_BYTE] = nv;
	for (int i = 0; i < 4; i++)
		d[SDM_PID_NDST_BYTE + i] = (uint8_t)(ndst >> (8 * i));
}

/* What the target does on a notification: takes PIR, clears ON. */
static inline void sdm_pid_drain(uint8_t *d)
{
	memset(d, 0, 32);
	d[SDM_PID_CTRL_BYTE] &= (uint8_t)~SDM_PID_ON;
}

/* PID-pointer table entry i, read as 8 little-endian bytes. */
static inline uint64_t sdm_pidpt_entry(const void *table, uint64_t i)
{
	const uint8_t *p = (const uint8_t *)table + i * SDM_PIDPT_ENTRY_BYTES;
	uint64_t e = 0;
	for (int b = 7; b >= 0; b--)
		e = e << 8 | p[b];
	return e;
}

static inline void sdm_pidpt_set(void *table, uint64_t i, const void *desc)
{
	uint64_t e = (uint64_t)(uintptr_t)desc | SDM_PIDPT_VALID;
	uint8_t *p = (uint8_t *)table + i * SDM_PIDPT_ENTRY_BYTES;
	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(e >> (8 * b));
}
#endif
