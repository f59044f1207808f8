/* The model of a virtualized x2APIC ICR write (see ipiv_model.h). */
#include "ipiv_model.h"
#include "sdm_pid.h"

#define MAXPHYADDR 52   /* as vmentry_model.c assumes */
static bool phys_ok(uint64_t a) { return !(a >> MAXPHYADDR); }

/* IPI virtualization of a WRMSR to the x2APIC ICR (SDM Vol. 3C, "IPI
 * Virtualization"; the ICR as in Vol. 3A, "Interrupt Command Register
 * (ICR)"). Reserved bits 31:20, 17:16 and 13 make the WRMSR fault. Only a
 * fixed (10:8 = 000b), physical (bit 11 = 0), edge-triggered (bit 15 = 0) IPI
 * without shorthand (19:18 = 00b), with bit 12 clear and a vector whose bits
 * 7:4 are not 0000b is virtualized (the last three as the SDM lists them for
 * self-IPI virtualization, "APIC-Write Emulation": the IPI-virtualization
 * text itself was not at hand). ICR[63:32] indexes the PID-pointer table, up
 * to LAST_PID_POINTER_INDEX; the entry must have bits 5:0 = 000001b and no
 * bit past the physical-address width (pi.c's lookup tests bit 0 only, the
 * same for entries pid_table_set made). The PIR bit is set; ON is set, and
 * NV sent to NDST, only if ON was 0 and SN is 0. Anything else: APIC-write
 * VM exit. Descriptors are raw bytes (sdm_pid.h). */
struct ipiv_result ipiv_model_icr_write(const uint64_t *table, uint32_t last, uint64_t icr)
{
	struct ipiv_result r = { .apic_write_exit = true };
	uint32_t lo = (uint32_t)icr, dest = (uint32_t)(icr >> 32);
	unsigned vector = lo & 0xff;

	if (lo & (0xfff00000u | 3u << 16 | 1u << 13)) {
		r.gp = true;
		r.apic_write_exit = false;
		return r;
	}
	if (((lo >> 8) & 7) != 0 || (lo & (1u << 11)) || (lo & (1u << 15)) || ((lo >> 18) & 3) || (lo & (1u << 12)) ||
	    vector < 16)
		return r;   /* not fixed, logical, level-triggered, a shorthand, bit 12, or vector < 16 */
	if (dest > last)
		return r;
	uint64_t e = sdm_pidpt_entry(table, dest);
	if ((e & SDM_PIDPT_LOW_BITS) != SDM_PIDPT_VALID || !phys_ok(e))
		return r;
	uint8_t *d = (uint8_t *)(uintptr_t)(e & ~SDM_PIDPT_LOW_BITS);
	sdm_pid_set_pir(d, vector);
	r.apic_write_exit = false;
	r.desc = d;
	if (!sdm_pid_on(d) && !sdm_pid_sn(d)) {
		d[SDM_PID_CTRL_BYTE] |= SDM_PID_ON;
		r.notify = true;
		r.ndst = sdm_pid_ndst(d);
		r.nv = sdm_pid_nv(d);
	}
	return r;
}
