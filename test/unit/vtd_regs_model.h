/* A model of VT-d remapping units' registers, written from the VT-d
 * specification's "Register Descriptions" alone (it shares no definition
 * with iommu/), for the hand-over from the firmware and for several units
 * (one 4 KiB register page each, unit k at VRM_BASE + k * VRM_UNIT_SIZE):
 *  - GCMD/GSTS ("Global Command Register", "Global Status Register"):
 *    TE, QIE, IRE and CFI are persistent: a write whose bit differs from
 *    the status is a command, and the status follows it; SRTP, SFL, WBF and
 *    SIRTP are one-shot: writing 1 runs the command (RTPS and IRTPS read 1
 *    when the pointer is latched, WBFS 0 when the flush is done), writing 0
 *    does nothing. One command per write: the specification has software
 *    serialize changes to several fields.
 *  - RTADDR is latched into the unit only by SRTP; TE is set only with a
 *    latched root table.
 *  - CCMD and the IOTLB register run their invalidation when ICC/IVT is
 *    written 1 and read it 0 when done; they must not be used while QIES
 *    is 1 (the register-based interface is off while the queue is on).
 *  - The queue: QIE set resets IQH to 0; a tail write (while FSTS.IQE
 *    is clear: "hardware stops fetching" until software clears it) runs the
 *    descriptors from IQH to IQT (context cache, IOTLB, interrupt entry
 *    cache, wait with status write); clearing QIE with IQH != IQT, or while
 *    interrupt remapping is on (there is no other way to invalidate the
 *    interrupt entry cache), is recorded as a violation.
 *  - IRTA is latched into the unit only by SIRTP ("Interrupt Remapping
 *    Table Address Register"); IRE set with no table latched is a
 *    violation.
 *  - PMEN: EPM, with PRS following; EPM cleared while TES is 0 is a
 *    violation (the PMRs are the only protection then).
 *  - An access outside every attached unit's page is a violation,
 *    recorded on unit 0.
 * Every GSTS the model takes on is checked against the start: if TES was
 * 1 at the start, TES 0 at any time is a violation (a window with no DMA
 * protection). */
#ifndef TEST_UNIT_VTD_REGS_MODEL_H
#define TEST_UNIT_VTD_REGS_MODEL_H
#include <stdint.h>
#include <stdbool.h>

#define VRM_BASE 0xfed90000ull
#define VRM_UNIT_SIZE 0x1000ull

struct vtd_regs_model {
	uint32_t ver;
	uint64_t cap, ecap;
	uint32_t gsts, fsts, fectl, pmen;
	uint64_t rtaddr, root;       /* the register, and the table latched by SRTP */
	uint64_t iqa, iqh, iqt, irta, ccmd, iotlb;
	uint64_t irt;                /* the IRTA latched by SIRTP (0: none) */
	uint64_t frcd[8][2];
	/* The firmware's queue still has descriptors the unit has not read:
	 * each IQH read shows it one further (the unit working meanwhile). */
	bool fw_queue_draining;
	/* Descriptor types (bit t: type t) the unit refuses: "Invalidation
	 * Queue Error" (FSTS.IQE, IQH left on it; fetching resumes when
	 * software clears IQE). */
	uint32_t refuse_types;
	unsigned iqe_seen;
	/* Interrupt entry cache invalidations run: global, index-selective
	 * (G bit 4; IIDX 47:32), the last index. */
	unsigned iec_global, iec_index;
	uint32_t iec_index_last;
	/* what happened */
	bool te_at_start;
	unsigned step;               /* register writes so far */
	unsigned srtp_step, sirtp_step, cc_step, iotlb_step, te_set_step, pmr_off_step, ire_off_step, qie_off_step;
	unsigned fectl_mask_step;    /* the first FECTL write with IM set */
	unsigned gcmd_writes;
	char violation[512];         /* the first one, with its step */
	unsigned violations;
};

/* The register accesses of iommu/vtd.c in host tests. */
uint64_t vtd_mmio_read(uint64_t addr, unsigned size);
void vtd_mmio_write(uint64_t addr, unsigned size, uint64_t v);
/* The model behind vtd_mmio_read/vtd_mmio_write from now on: one unit at
 * VRM_BASE (vrm_attach), or m[0..n-1], unit k at VRM_BASE + k *
 * VRM_UNIT_SIZE. NULL: plain memory stands for the registers. */
void vrm_attach(struct vtd_regs_model *m);
void vrm_attach_units(struct vtd_regs_model *m, unsigned n);
/* A unit as firmware may leave it: te/ir/qi/pmr on or off; with te, the
 * firmware's root table fw_root is latched (TTM in its bits 11:10). */
void vrm_reset(struct vtd_regs_model *m, uint64_t cap, uint64_t ecap, bool te, bool ir, bool qi, bool pmr,
	       uint64_t fw_root);
#endif
