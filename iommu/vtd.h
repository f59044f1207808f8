/* One VT-d remapping hardware unit (a DRHD): its capabilities, turning DMA
 * remapping on with a given root table, and reading its fault recording
 * registers. The registers are reached through the identity map. */
#ifndef IOMMU_VTD_H
#define IOMMU_VTD_H
#include "../lib/types.h"
#include "../lib/spinlock.h"

struct vtd_unit {
	uint64_t base;          /* register page(s) */
	uint32_t ver;
	uint64_t cap, ecap;
	uint32_t fro, nfr;      /* fault recording registers: offset, count */
	uint32_t iro;           /* IOTLB registers' offset */
	/* What the firmware left: GSTS, RTADDR, PMEN (0 without PMRs), FSTS,
	 * FECTL, and with its queue on IQH and IQT. */
	uint32_t fw_gsts, fw_pmen, fw_fsts, fw_fectl;
	uint64_t fw_rtaddr, fw_iqh, fw_iqt;
	bool on;                /* translation enabled by us */
	/* The queued-invalidation interface, where ECAP.QI offers it and the
	 * caller wants it: one 4 KiB queue of 256 descriptors, the status
	 * dword the wait descriptors write. */
	bool qi;
	uint64_t *iq;
	volatile uint32_t *qi_status;
	uint32_t qi_tail;       /* next free descriptor */
	uint32_t qi_seq;        /* the last status data asked for */
	uint64_t qi_waits;      /* wait descriptors completed */
	/* One submitter at a time: the queue's tail, slots, sequence and
	 * status word are the unit's (the IOAPIC and MSI traps submit under
	 * locks of their own). */
	spinlock_t qi_lock;
	/* Queue errors met and recovered at run time ("Invalidation Queue
	 * Error", "Invalidation Time-out Error", "Invalidation Completion
	 * Error"), and submissions that timed out. */
	uint64_t qi_iqe, qi_ite, qi_ice, qi_timeouts;
	/* The invalidations given to the unit (queued or by register): the
	 * context cache, the IOTLB, the interrupt entry cache globally and by
	 * index (the report prints them; a run compares them with the unit's). */
	uint64_t inv_cc, inv_iotlb, inv_iec, inv_iec_index;
};

/* A DMA fault read from a fault recording register. */
struct vtd_fault {
	uint16_t sid;           /* source ID: bus << 8 | device << 3 | function */
	uint64_t addr;          /* the page of the faulting request */
	uint8_t reason;
	bool read;
};

/* Reads VER, CAP, ECAP and the state the firmware left (GSTS, RTADDR,
 * PMEN) and prints them with the modes the unit offers. Returns 0, or -1
 * with err: registers that read as all ones (no unit there), or no mode the
 * hypervisor can drive (err says "no mode the hypervisor can drive"). */
int vtd_probe(struct vtd_unit *u, uint64_t base, char *err, size_t errlen);
/* The hand-over (docs/iommu.md, "Hand-over from the firmware"):
 * interrupt remapping left on is turned off, then queued invalidation left
 * on (after the unit has read its queue); the fault event masked, old
 * faults cleared, the write buffer flushed when CAP.RWBF asks; the root
 * table set (legacy mode) with translation left as the firmware had it;
 * the context cache and the IOTLB invalidated globally; translation on
 * (GSTS.TES) if it was not; then the PMRs off (PMEN.EPM 0, PRS polled)
 * where CAP.PLMR or PHMR. The invalidations go through the queue (context
 * cache, IOTLB, the interrupt entry cache where ECAP.IR, then a wait
 * descriptor whose status write is polled) when queued is set and ECAP.QI
 * offers it, else through the registers. Returns 0, or -1 with err. */
int vtd_enable(struct vtd_unit *u, paddr_t root, bool queued, char *err, size_t errlen);
/* Interrupt remapping on (the first step of the posted-interrupt design,
 * docs/iommu.md; used by the iommutest aid only): IRTA (the table, 2^(S+1)
 * entries, EIME for 32-bit destinations), GCMD.SIRTP, the interrupt entry
 * cache invalidated, GCMD.CFI cleared if the firmware left it set
 * (compatibility-format requests blocked), GCMD.IRE. Needs ECAP.IR and the queue. 0, or -1 with err. */
int vtd_enable_ir(struct vtd_unit *u, paddr_t irt, unsigned size_field, bool eime, char *err, size_t errlen);
/* GCMD.IRE cleared, waited for in GSTS.IRES: false when it timed out. */
bool vtd_disable_ir(struct vtd_unit *u);
/* The queue's head as the unit reports it (IQH), through the unit's
 * register accessors (the host tests' register model included). */
uint64_t vtd_iqh(const struct vtd_unit *u);
/* Invalidates the interrupt entry cache globally (queued only: there is no
 * register for it). Returns 0, or -1 with err. */
int vtd_invalidate_iec(struct vtd_unit *u, char *err, size_t errlen);
/* The same for one IRTE index ("Interrupt Entry Cache Invalidate
 * Descriptor", index-selective: G 1, IM 0, IIDX the index). */
int vtd_invalidate_iec_index(struct vtd_unit *u, uint32_t index, char *err, size_t errlen);
/* Reads every recorded fault into f (up to max), clearing each; *overflow
 * is set when the unit dropped faults (FSTS.PFO, cleared). Returns the count. */
uint32_t vtd_read_faults(struct vtd_unit *u, struct vtd_fault *f, uint32_t max, bool *overflow);
/* The unit's fault event, masked until now, to APIC ID apic_id with vector
 * (a fault recorded while the records were clear raises it). False, masked
 * still, when the unit cannot name that APIC ID (above 255 without EIM). */
bool vtd_fault_event_on(struct vtd_unit *u, uint32_t apic_id, uint8_t vector);
/* A short description of a fault reason. */
const char *vtd_fault_reason_name(uint8_t reason);
#endif
