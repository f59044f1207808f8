/* A VT-d remapping unit (see vtd.h). The sequence follows the VT-d
 * specification, "Register Descriptions" (GCMD: write the current status
 * without the one-shot bits, plus the one command; poll GSTS), the order
 * of Linux's drivers/iommu/intel/ for a unit the firmware left running
 * (docs/iommu.md, "Hand-over from the firmware") and
 * "Invalidation of Translation Caches" (context cache, then IOTLB,
 * globally, after the root table is set: through the registers, or through
 * the queued-invalidation interface where ECAP.QI offers it). */
#include "vtd.h"
#include "vtd_defs.h"
#include "../lib/printk.h"
#include "../lib/tsc.h"
#include "../lib/cpu.h"
#include "../lib/memmap.h"
#include "../lib/string.h"

#define VTD_TIMEOUT_US 1000000

#ifdef HV_HOST_TEST
/* Host tests put a register model behind the unit (test/unit/vtd_regs_model.c). */
uint64_t vtd_mmio_read(uint64_t addr, unsigned size);
void vtd_mmio_write(uint64_t addr, unsigned size, uint64_t v);
static uint32_t rd32(const struct vtd_unit *u, uint32_t off) { return (uint32_t)vtd_mmio_read(u->base + off, 4); }
static uint64_t rd64(const struct vtd_unit *u, uint32_t off) { return vtd_mmio_read(u->base + off, 8); }
static void wr32(const struct vtd_unit *u, uint32_t off, uint32_t v) { vtd_mmio_write(u->base + off, 4, v); }
static void wr64(const struct vtd_unit *u, uint32_t off, uint64_t v) { vtd_mmio_write(u->base + off, 8, v); }
#else
static uint32_t rd32(const struct vtd_unit *u, uint32_t off)
{
	return *(volatile uint32_t *)(uintptr_t)(u->base + off);
}
static uint64_t rd64(const struct vtd_unit *u, uint32_t off)
{
	return *(volatile uint64_t *)(uintptr_t)(u->base + off);
}
static void wr32(const struct vtd_unit *u, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(uintptr_t)(u->base + off) = v;
}
static void wr64(const struct vtd_unit *u, uint32_t off, uint64_t v)
{
	*(volatile uint64_t *)(uintptr_t)(u->base + off) = v;
}
#endif

/* Waits until (reg & mask) == want; false on timeout. */
static bool wait32(const struct vtd_unit *u, uint32_t off, uint32_t mask, uint32_t want)
{
	uint64_t until = rdtsc() + tsc_from_us(VTD_TIMEOUT_US);
	while ((rd32(u, off) & mask) != want)
		if (rdtsc() > until)
			return false;
	return true;
}
static bool wait64_clear(const struct vtd_unit *u, uint32_t off, uint64_t bit)
{
	uint64_t until = rdtsc() + tsc_from_us(VTD_TIMEOUT_US);
	while (rd64(u, off) & bit)
		if (rdtsc() > until)
			return false;
	return true;
}

/* One global command: the status minus one-shot bits, plus cmd (set) or
 * minus it (clear); then GSTS must follow. */
static bool gcmd(const struct vtd_unit *u, uint32_t cmd, bool set, uint32_t status_bit)
{
	uint32_t sts = rd32(u, VTD_GSTS) & ~VTD_GSTS_ONESHOT;
	wr32(u, VTD_GCMD, set ? sts | cmd : sts & ~cmd);
	return wait32(u, VTD_GSTS, status_bit, set ? status_bit : 0);
}

/* What the unit offers and what the firmware left, on one line. Legacy
 * mode (RTADDR.TTM 00b) is what the hypervisor builds; no CAP or ECAP
 * field reports it absent (scalable mode, ECAP.SMTS, came with revision
 * 3.0 beside it), so it is taken as offered unless the firmware's state
 * rules it out (vtd_probe). */
static void print_unit(const struct vtd_unit *u)
{
	uint32_t g = u->fw_gsts;
	unsigned ttm = (unsigned)VTD_RTADDR_TTM(u->fw_rtaddr);
	bool pmrs = u->cap & (VTD_CAP_PLMR | VTD_CAP_PHMR);
	char te[16];
	snprintf(te, sizeof te, (g & VTD_GSTS_TES) ? "on (TTM %u%ub)" : "off", ttm >> 1, ttm & 1);
	pr_info("iommu: unit at 0x%llx: version %u.%u; modes: legacy (RTADDR.TTM 00b): used; scalable (ECAP.SMTS): %s, SLTS %u, FLTS %u, PT %u, SC %u, C %u; PMRs: %s; firmware left: TE %s, IR %s, QI %s, PMRs %s\n",
		(unsigned long long)u->base, (u->ver >> 4) & 0xf, u->ver & 0xf,
		(u->ecap & VTD_ECAP_SMTS) ? "offered" : "not offered", !!(u->ecap & VTD_ECAP_SLTS),
		!!(u->ecap & VTD_ECAP_FLTS), !!(u->ecap & VTD_ECAP_PT), !!(u->ecap & VTD_ECAP_SC), !!(u->ecap & VTD_ECAP_C),
		!pmrs ? "none" : (u->cap & VTD_CAP_PLMR) && (u->cap & VTD_CAP_PHMR) ? "low and high" : (u->cap & VTD_CAP_PLMR) ? "low" : "high",
		te, (g & VTD_GSTS_IRES) ? "on" : "off", (g & VTD_GSTS_QIES) ? "on" : "off", (u->fw_pmen & VTD_PMEN_PRS) ? "on" : "off");
	/* And what a firmware that used the unit may leave besides (each
	 * taken over by vtd_enable and vtd_enable_ir). */
	uint32_t f = u->fw_fsts;
	if ((g & VTD_GSTS_CFIS) || (f & (VTD_FSTS_PPF | VTD_FSTS_PFO | VTD_FSTS_IQE)) || u->fw_iqh != u->fw_iqt)
		pr_info("iommu: unit at 0x%llx: firmware left also:%s%s%s%s, fault event %s; queue IQH 0x%llx IQT 0x%llx%s\n",
			(unsigned long long)u->base, (g & VTD_GSTS_CFIS) ? " CFI set (compatibility format passed)," : "",
			(f & VTD_FSTS_PPF) ? " faults recorded (PPF)," : "", (f & VTD_FSTS_PFO) ? " fault overflow (PFO)," : "",
			(f & VTD_FSTS_IQE) ? " queue stopped (IQE)" : " no queue error",
			(u->fw_fectl & VTD_FECTL_IM) ? "masked" : "unmasked", (unsigned long long)u->fw_iqh,
			(unsigned long long)u->fw_iqt, (f & VTD_FSTS_IQE) ? ": its descriptors from IQH on abandoned" : "");
}

int vtd_probe(struct vtd_unit *u, uint64_t base, char *err, size_t errlen)
{
	u->base = base;
	u->on = false;
	u->ver = rd32(u, VTD_VER);
	u->cap = rd64(u, VTD_CAP);
	u->ecap = rd64(u, VTD_ECAP);
	if (u->ver == 0xffffffffu || u->cap == ~0ull || !u->cap) {
		snprintf(err, errlen, "iommu: no remapping unit answers at 0x%llx (CAP 0x%llx)", (unsigned long long)base,
			 (unsigned long long)u->cap);
		return -1;
	}
	u->fro = (uint32_t)VTD_CAP_FRO(u->cap);
	u->nfr = (uint32_t)VTD_CAP_NFR(u->cap);
	u->iro = (uint32_t)VTD_ECAP_IRO(u->ecap);
	if (u->fro + 16 * u->nfr > 0x10000 || u->iro + 16 > 0x10000) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: fault registers at 0x%x x%u or IOTLB at 0x%x beyond its registers",
			 (unsigned long long)base, u->fro, u->nfr, u->iro);
		return -1;
	}
	u->fw_gsts = rd32(u, VTD_GSTS);
	u->fw_rtaddr = rd64(u, VTD_RTADDR);
	u->fw_pmen = (u->cap & (VTD_CAP_PLMR | VTD_CAP_PHMR)) ? rd32(u, VTD_PMEN) : 0;
	u->fw_fsts = rd32(u, VTD_FSTS);
	u->fw_fectl = rd32(u, VTD_FECTL);
	u->fw_iqh = u->fw_iqt = 0;
	if (u->fw_gsts & VTD_GSTS_QIES) {
		u->fw_iqh = rd64(u, VTD_IQH);
		u->fw_iqt = rd64(u, VTD_IQT);
	}
	print_unit(u);
	/* The new root table goes in with translation on (SRTP while TES is
	 * 1); the mode does not: "Root Table Address Register" has TTM
	 * changed only with translation off, which would leave the machine
	 * without DMA protection meanwhile. */
	unsigned ttm = (unsigned)VTD_RTADDR_TTM(u->fw_rtaddr);
	if ((u->fw_gsts & VTD_GSTS_TES) && ttm != VTD_TTM_LEGACY) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: no mode the hypervisor can drive: the firmware left translation on in %s (RTADDR.TTM %u%ub); the hypervisor builds legacy-mode tables (TTM 00b), and the mode changes only with translation off, a window without DMA protection",
			 (unsigned long long)base, ttm == 1 ? "scalable mode" : "a reserved mode", ttm >> 1, ttm & 1);
		return -1;
	}
	return 0;
}

static void clear_faults(const struct vtd_unit *u)
{
	for (uint32_t i = 0; i < u->nfr; i++)
		wr32(u, u->fro + 16 * i + 12, (uint32_t)(VTD_FRCD_F >> 32));   /* F is write-1-to-clear */
	wr32(u, VTD_FSTS, rd32(u, VTD_FSTS) & (VTD_FSTS_PFO | VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE));
}

/* The queue: IQT to 0, IQA (128-bit descriptors, one page: 256 of them),
 * then GCMD.QIE; the unit starts at IQH 0 ("Queued Invalidation
 * Interface"). */
static bool qi_start(struct vtd_unit *u)
{
	if (!u->iq) {
		u->iq = page_alloc(1);
		u->qi_status = page_alloc(1);
		if (!u->iq || !u->qi_status)
			return false;
	}
	memset(u->iq, 0, PAGE_SIZE);
	u->qi_tail = 0;
	wr64(u, VTD_IQT, 0);
	wr64(u, VTD_IQA, (uint64_t)(uintptr_t)u->iq & VTD_ADDR_MASK);   /* DW 0, QS 0 */
	return gcmd(u, VTD_GCMD_QIE, true, VTD_GCMD_QIE);
}

/* A queue error met while waiting, recovered as the specification has
 * software do it ("Invalidation Queue Error": the unit stops with IQH on
 * the descriptor it refused until FSTS.IQE is cleared; the refused one is
 * replaced by a wait descriptor that does nothing, so that the unit goes
 * on with the rest, our own wait included. ITE and ICE concern device-TLB
 * invalidations, which the hypervisor never queues: cleared, counted).
 * Said in err; the queue works on. */
static void qi_recover(struct vtd_unit *u, uint32_t fsts, char *err, size_t errlen)
{
	uint64_t head = (rd64(u, VTD_IQH) >> 4) & 0xff;
	if (fsts & VTD_FSTS_IQE) {
		u->qi_iqe++;
		u->iq[2 * head] = VTD_QI_WAIT_NOP;
		u->iq[2 * head + 1] = 0;
		__asm__ volatile("mfence" ::: "memory");
	}
	u->qi_ite += !!(fsts & VTD_FSTS_ITE);
	u->qi_ice += !!(fsts & VTD_FSTS_ICE);
	snprintf(err, errlen, "iommu: unit at 0x%llx: invalidation queue error (FSTS 0x%x) at descriptor %llu: %s, the queue goes on",
		 (unsigned long long)u->base, fsts, (unsigned long long)head,
		 (fsts & VTD_FSTS_IQE) ? "the descriptor refused was replaced by one that does nothing" : "cleared");
	wr32(u, VTD_FSTS, fsts & (VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE));   /* write 1 to clear */
}

/* What a descriptor (its low quadword) invalidates, counted. */
static void count_inv(struct vtd_unit *u, uint64_t lo)
{
	switch (lo & 0xf) {
	case VTD_QI_CC_GLOBAL & 0xf: u->inv_cc++; break;
	case VTD_QI_IOTLB_GLOBAL & 0xf: u->inv_iotlb++; break;
	case VTD_QI_IEC_GLOBAL & 0xf: u->inv_iec++; if (lo & BIT(4)) u->inv_iec_index++; break;
	}
}

/* Puts n descriptors (low quadwords, high ones 0) and a wait descriptor
 * that writes a new sequence number to the status dword; moves the tail;
 * polls the status. A queue error on the way is recovered (qi_recover)
 * and the submission fails with err; under the unit's own lock. */
static int qi_submit(struct vtd_unit *u, const uint64_t *lo, uint32_t n, char *err, size_t errlen)
{
	const uint32_t slots = PAGE_SIZE / 16;
	int rc = 0;
	spin_lock(&u->qi_lock);
	uint32_t seq = ++u->qi_seq;
	*u->qi_status = 0;
	for (uint32_t i = 0; i <= n; i++) {
		uint64_t *d = &u->iq[2 * u->qi_tail];
		if (i < n) {
			d[0] = lo[i];
			d[1] = 0;
			count_inv(u, lo[i]);
		} else {
			d[0] = VTD_QI_WAIT_SW | (uint64_t)seq << VTD_QI_WAIT_DATA_SHIFT;
			d[1] = (uint64_t)(uintptr_t)u->qi_status;
		}
		u->qi_tail = (u->qi_tail + 1) % slots;
	}
	/* Descriptors in write-back memory: a unit that does not snoop reads
	 * them from memory. */
	if (!(u->ecap & VTD_ECAP_C))
		__asm__ volatile("wbinvd" ::: "memory");
	else
		__asm__ volatile("mfence" ::: "memory");
	wr64(u, VTD_IQT, (uint64_t)u->qi_tail << 4);
	uint64_t until = rdtsc() + tsc_from_us(VTD_TIMEOUT_US);
	while (*u->qi_status != seq) {
		uint32_t fsts = rd32(u, VTD_FSTS);
		if (fsts & (VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE)) {
			qi_recover(u, fsts, err, errlen);
			rc = -1;                 /* what was refused did not happen: said; the wait still ends */
		}
		if (rdtsc() > until) {
			u->qi_timeouts++;
			snprintf(err, errlen, "iommu: unit at 0x%llx: wait descriptor %u not completed (IQH 0x%llx, IQT 0x%llx, status %u)",
				 (unsigned long long)u->base, seq, (unsigned long long)rd64(u, VTD_IQH),
				 (unsigned long long)rd64(u, VTD_IQT), *u->qi_status);
			spin_unlock(&u->qi_lock);
			return -1;
		}
	}
	u->qi_waits++;
	spin_unlock(&u->qi_lock);
	return rc;
}

uint64_t vtd_iqh(const struct vtd_unit *u) { return rd64(u, VTD_IQH); }

int vtd_invalidate_iec(struct vtd_unit *u, char *err, size_t errlen)
{
	static const uint64_t iec = VTD_QI_IEC_GLOBAL;
	if (!u->qi) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: the interrupt entry cache is invalidated only through the queue",
			 (unsigned long long)u->base);
		return -1;
	}
	return qi_submit(u, &iec, 1, err, errlen);
}

int vtd_invalidate_iec_index(struct vtd_unit *u, uint32_t index, char *err, size_t errlen)
{
	const uint64_t iec = VTD_QI_IEC_INDEX(index);
	if (!u->qi) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: the interrupt entry cache is invalidated only through the queue",
			 (unsigned long long)u->base);
		return -1;
	}
	return qi_submit(u, &iec, 1, err, errlen);
}

int vtd_enable_ir(struct vtd_unit *u, paddr_t irt, unsigned size_field, bool eime, char *err, size_t errlen)
{
	if (!(u->ecap & VTD_ECAP_IR) || !u->qi || (eime && !(u->ecap & VTD_ECAP_EIM)) || size_field > 15) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: interrupt remapping needs ECAP.IR%s and the queue (ECAP 0x%llx, queue %s)",
			 (unsigned long long)u->base, eime ? " and EIM" : "", (unsigned long long)u->ecap, u->qi ? "on" : "off");
		return -1;
	}
	wr64(u, VTD_IRTA, (irt & VTD_ADDR_MASK) | (eime ? VTD_IRTA_EIME : 0) | size_field);
	if (!gcmd(u, VTD_GCMD_SIRTP, true, VTD_GCMD_SIRTP)) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: setting the interrupt-remapping table timed out", (unsigned long long)u->base);
		return -1;
	}
	if (vtd_invalidate_iec(u, err, errlen))
		return -1;
	/* Compatibility format blocked ("Global Command Register", CFI: with
	 * IRE 1 and CFI 0 such requests are blocked). CFIS is persistent and
	 * every command writes the status back: CFI that firmware left set
	 * would stay set unless cleared by a command of its own. */
	if ((rd32(u, VTD_GSTS) & VTD_GSTS_CFIS) && !gcmd(u, VTD_GCMD_CFI, false, VTD_GSTS_CFIS)) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: blocking compatibility-format interrupts timed out", (unsigned long long)u->base);
		return -1;
	}
	if (!gcmd(u, VTD_GCMD_IRE, true, VTD_GCMD_IRE)) {
		snprintf(err, errlen, "iommu: unit at 0x%llx: enabling interrupt remapping timed out", (unsigned long long)u->base);
		return -1;
	}
	return 0;
}

bool vtd_disable_ir(struct vtd_unit *u)
{
	return gcmd(u, VTD_GCMD_IRE, false, VTD_GSTS_IRES);
}

/* Interrupt remapping, then queued invalidation, as the firmware left
 * them: off in that order (with IR on, the interrupt entry cache has no
 * invalidation but through the queue, "Interrupt Entry Cache Invalidate
 * Descriptor"); the queue only once the unit has read it to the tail
 * (Linux's dmar_disable_qi does the same). */
static const char *firmware_ir_qi_off(struct vtd_unit *u)
{
	uint32_t sts = rd32(u, VTD_GSTS);
	if (sts & VTD_GSTS_IRES) {
		pr_warn("iommu: unit at 0x%llx: interrupt remapping left on by the firmware: turned off\n", (unsigned long long)u->base);
		if (!vtd_disable_ir(u))
			return "turning interrupt remapping off";
	}
	if (sts & VTD_GSTS_QIES) {
		pr_warn("iommu: unit at 0x%llx: queued invalidation left on by the firmware: turned off\n", (unsigned long long)u->base);
		/* Stopped on a descriptor it refused ("Invalidation Queue
		 * Error": IQH names it, fetching resumes when IQE is cleared):
		 * the firmware's descriptors from there on are abandoned (the
		 * tail moved to the head, then IQE cleared: nothing left to
		 * fetch); the hypervisor invalidates everything itself. */
		if (rd32(u, VTD_FSTS) & VTD_FSTS_IQE) {
			wr64(u, VTD_IQT, rd64(u, VTD_IQH));
			wr32(u, VTD_FSTS, VTD_FSTS_IQE);
		}
		uint64_t until = rdtsc() + tsc_from_us(VTD_TIMEOUT_US);
		while (rd64(u, VTD_IQH) != rd64(u, VTD_IQT))
			if (rdtsc() > until)
				return "the firmware's invalidation queue draining";
		if (!gcmd(u, VTD_GCMD_QIE, false, VTD_GSTS_QIES))
			return "turning queued invalidation off";
	}
	return NULL;
}

/* After translation through the new tables: the PMRs off where the unit
 * has them ("Protected Memory Enable Register": EPM 0, then PRS 0). Both
 * on at once is not deterministic, and the guest's memory must not stay
 * blocked by the firmware's regions. */
static const char *pmrs_off(struct vtd_unit *u)
{
	if (!(u->cap & (VTD_CAP_PLMR | VTD_CAP_PHMR)))
		return NULL;
	uint32_t pmen = rd32(u, VTD_PMEN);
	if (pmen & (VTD_PMEN_EPM | VTD_PMEN_PRS))
		pr_info("iommu: unit at 0x%llx: protected memory regions left on by the firmware: turned off after translation\n",
			(unsigned long long)u->base);
	wr32(u, VTD_PMEN, pmen & ~VTD_PMEN_EPM);
	return wait32(u, VTD_PMEN, VTD_PMEN_PRS, 0) ? NULL : "turning the protected memory regions off";
}

int vtd_enable(struct vtd_unit *u, paddr_t root, bool queued, char *err, size_t errlen)
{
	const char *step;
	uint32_t sts = rd32(u, VTD_GSTS);
	/* Masked until vtd_fault_event_on names where the event goes: first,
	 * so that nothing the hand-over does sends the firmware's vector. */
	wr32(u, VTD_FECTL, VTD_FECTL_IM);
	if ((step = firmware_ir_qi_off(u)))
		goto timeout;
	clear_faults(u);
	/* Tables in write-back memory: a unit that does not snoop (ECAP.C
	 * clear) reads them from memory. */
	if (!(u->ecap & VTD_ECAP_C))
		__asm__ volatile("wbinvd" ::: "memory");
	if (u->cap & VTD_CAP_RWBF) {
		uint32_t s = rd32(u, VTD_GSTS) & ~VTD_GSTS_ONESHOT;
		wr32(u, VTD_GCMD, s | VTD_GCMD_WBF);
		if (!wait32(u, VTD_GSTS, VTD_GSTS_WBFS, 0)) { step = "write-buffer flush"; goto timeout; }
	}
	/* The root table, with translation as the firmware left it: on
	 * (pre-boot DMA protection) it stays on, and the unit moves to the new
	 * tables at SRTP ("Global Command Register", SRTP: the root table may
	 * be set while TES is 1; the context cache and the IOTLB are then
	 * invalidated globally so that nothing cached from the old tables is
	 * used). */
	if (sts & VTD_GSTS_TES)
		pr_warn("iommu: unit at 0x%llx: translation left on by the firmware (GSTS 0x%x): kept on while the root table is replaced\n",
			(unsigned long long)u->base, sts);
	wr64(u, VTD_RTADDR, root & VTD_ADDR_MASK);   /* TTM 00b: legacy mode */
	if (!gcmd(u, VTD_GCMD_SRTP, true, VTD_GSTS_RTPS)) { step = "setting the root table"; goto timeout; }
	u->qi = queued && (u->ecap & VTD_ECAP_QI);
	if (u->qi) {
		/* Context cache, then IOTLB (with drains), then the interrupt
		 * entry cache where the unit remaps interrupts, then the wait. */
		uint64_t d[3] = { VTD_QI_CC_GLOBAL, VTD_QI_IOTLB_GLOBAL, VTD_QI_IEC_GLOBAL };
		if (!qi_start(u)) { step = "enabling queued invalidation"; goto timeout; }
		if (qi_submit(u, d, (u->ecap & VTD_ECAP_IR) ? 3 : 2, err, errlen))
			return -1;
	} else {
		wr64(u, VTD_CCMD, VTD_CCMD_ICC | VTD_CCMD_GLOBAL);
		u->inv_cc++;
		if (!wait64_clear(u, VTD_CCMD, VTD_CCMD_ICC)) { step = "context-cache invalidation"; goto timeout; }
		wr64(u, u->iro + VTD_IOTLB_OFF, VTD_IOTLB_IVT | VTD_IOTLB_GLOBAL | VTD_IOTLB_DR | VTD_IOTLB_DW);
		u->inv_iotlb++;
		if (!wait64_clear(u, u->iro + VTD_IOTLB_OFF, VTD_IOTLB_IVT)) { step = "IOTLB invalidation"; goto timeout; }
	}
	if (!(rd32(u, VTD_GSTS) & VTD_GSTS_TES) && !gcmd(u, VTD_GCMD_TE, true, VTD_GSTS_TES)) {
		step = "enabling translation";
		goto timeout;
	}
	u->on = true;
	if ((step = pmrs_off(u)))
		goto timeout;
	return 0;
timeout:
	snprintf(err, errlen, "iommu: unit at 0x%llx: %s timed out (GSTS 0x%x)", (unsigned long long)u->base, step,
		 rd32(u, VTD_GSTS));
	return -1;
}

uint32_t vtd_read_faults(struct vtd_unit *u, struct vtd_fault *f, uint32_t max, bool *overflow)
{
	uint32_t n = 0, fsts = rd32(u, VTD_FSTS);
	*overflow = fsts & VTD_FSTS_PFO;
	if (fsts & VTD_FSTS_PPF) {
		/* From the index FSTS names, every register with F set, around. */
		uint32_t first = (uint32_t)VTD_FSTS_FRI(fsts) % u->nfr;
		for (uint32_t k = 0; k < u->nfr; k++) {
			uint32_t off = u->fro + 16 * ((first + k) % u->nfr);
			uint64_t hi = rd64(u, off + 8);
			if (!(hi & VTD_FRCD_F))
				continue;
			if (n < max) {
				f[n].sid = (uint16_t)VTD_FRCD_SID(hi);
				f[n].reason = (uint8_t)VTD_FRCD_REASON(hi);
				f[n].read = hi & VTD_FRCD_T_READ;
				f[n].addr = rd64(u, off) & ~0xfffull;
			}
			n++;
			wr32(u, off + 12, (uint32_t)(VTD_FRCD_F >> 32));
		}
	}
	if (*overflow)
		wr32(u, VTD_FSTS, VTD_FSTS_PFO);
	return n < max ? n : max;
}

bool vtd_fault_event_on(struct vtd_unit *u, uint32_t apic_id, uint8_t vector)
{
	/* "Fault Event Data/Address/Upper Address Registers": a compatibility-
	 * format message the unit sends itself (never remapped), destination
	 * 7:0 in address bits 19:12 and, with ECAP.EIM, 31:8 in the upper
	 * address; physical, fixed, edge. */
	if (apic_id > 0xff && !(u->ecap & VTD_ECAP_EIM))
		return false;
	wr32(u, VTD_FEDATA, vector);
	wr32(u, VTD_FEADDR, 0xfee00000u | (apic_id & 0xff) << 12);
	wr32(u, VTD_FEUADDR, (u->ecap & VTD_ECAP_EIM) ? apic_id & ~0xffu : 0);
	wr32(u, VTD_FECTL, 0);   /* IM clear: an event pending since is sent now */
	return true;
}

const char *vtd_fault_reason_name(uint8_t r)
{
	switch (r) {
	case VTD_FR_ROOT_P:    return "root entry not present";
	case VTD_FR_CTX_P:     return "context entry not present";
	case VTD_FR_CTX_INV:   return "context entry invalid";
	case VTD_FR_BEYOND_AW: return "address beyond the address width";
	case VTD_FR_WRITE:     return "write to a page not writable (not mapped)";
	case VTD_FR_READ:      return "read of a page not readable (not mapped)";
	case 0x7:              return "second-level entry unreadable";
	case 0x8:              return "root table unreadable";
	case 0x9:              return "context table unreadable";
	case 0xa:              return "root entry reserved bits";
	case 0xb:              return "context entry reserved bits";
	case 0xc:              return "second-level entry reserved bits";
	case 0xd:              return "translation type blocked";
	case 0xe:              return "translation into the interrupt address range";
	case 0x20:             return "reserved field in an interrupt request";
	case 0x21:             return "interrupt index beyond the table";
	case 0x22:             return "IRTE not present";
	case 0x23:             return "interrupt table unreadable";
	case 0x24:             return "IRTE reserved bits";
	case 0x25:             return "compatibility format blocked";
	case 0x26:             return "source ID not the IRTE's";
	case 0x27:             return "posted-interrupt descriptor unreadable";
	default:               return "other";
	}
}
