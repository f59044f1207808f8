/* The pre-boot state of iommutest=preon (see preon.h). The steps follow
 * the VT-d specification ("Register Descriptions": GCMD takes the current
 * status without the one-shot bits plus one command, then GSTS is polled;
 * "Invalidation of Translation Caches"; "Queued Invalidation Interface";
 * "Interrupt Remapping Table Address Register"). */
#include "preon.h"
#include "../iommu/vtd_defs.h"
#include "../lib/cpu.h"
#include "../lib/dmar.h"
#include "../lib/memmap.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define PREON_TIMEOUT_US 1000000
#define PREON_IRTA_S 7u        /* 2^(S+1) = 256 entries of 16 bytes: one page */

static uint32_t rd32(uint64_t b, uint32_t off) { return *(volatile uint32_t *)(uintptr_t)(b + off); }
static uint64_t rd64(uint64_t b, uint32_t off) { return *(volatile uint64_t *)(uintptr_t)(b + off); }
static void wr32(uint64_t b, uint32_t off, uint32_t v) { *(volatile uint32_t *)(uintptr_t)(b + off) = v; }
static void wr64(uint64_t b, uint32_t off, uint64_t v) { *(volatile uint64_t *)(uintptr_t)(b + off) = v; }

static bool until_set(uint64_t b, uint32_t off, uint64_t bit, bool set, bool wide)
{
	uint64_t until = rdtsc() + tsc_from_us(PREON_TIMEOUT_US);
	while (!!((wide ? rd64(b, off) : rd32(b, off)) & bit) != set)
		if (rdtsc() > until)
			return false;
	return true;
}

/* One GCMD command set, GSTS polled for status. */
static bool cmd(uint64_t b, uint32_t c, uint32_t status)
{
	wr32(b, VTD_GCMD, (rd32(b, VTD_GSTS) & ~VTD_GSTS_ONESHOT) | c);
	return until_set(b, VTD_GSTS, status, true, false);
}

static const char *unit_on(uint64_t b, char *pmr, size_t pmrlen, uint64_t *root_out, uint64_t *irt_out)
{
	uint64_t cap = rd64(b, VTD_CAP), ecap = rd64(b, VTD_ECAP);
	uint64_t *root = page_alloc(1), *iq = page_alloc(1), *irt = page_alloc(1);
	volatile uint32_t *status = page_alloc(1);
	if (!root || !iq || !irt || !status)
		return "no free pages";
	memset(root, 0, PAGE_SIZE);      /* no root entry present: every request blocked */
	memset(iq, 0, PAGE_SIZE);
	memset(irt, 0, PAGE_SIZE);       /* no IRTE present: every remappable interrupt blocked */
	*status = 0;
	__asm__ volatile("wbinvd" ::: "memory");
	*root_out = (uint64_t)(uintptr_t)root;
	*irt_out = (uint64_t)(uintptr_t)irt;
	/* DMA remapping: root table (legacy mode, TTM 00b), the context cache
	 * and the IOTLB invalidated globally through the registers, TE. */
	wr64(b, VTD_RTADDR, *root_out & VTD_ADDR_MASK);
	if (!cmd(b, VTD_GCMD_SRTP, VTD_GSTS_RTPS))
		return "setting the root table";
	wr64(b, VTD_CCMD, VTD_CCMD_ICC | VTD_CCMD_GLOBAL);
	if (!until_set(b, VTD_CCMD, VTD_CCMD_ICC, false, true))
		return "context-cache invalidation";
	uint32_t iro = (uint32_t)VTD_ECAP_IRO(ecap);
	wr64(b, iro + VTD_IOTLB_OFF, VTD_IOTLB_IVT | VTD_IOTLB_GLOBAL | VTD_IOTLB_DR | VTD_IOTLB_DW);
	if (!until_set(b, iro + VTD_IOTLB_OFF, VTD_IOTLB_IVT, false, true))
		return "IOTLB invalidation";
	if (!cmd(b, VTD_GCMD_TE, VTD_GSTS_TES))
		return "enabling translation";
	/* The PMRs: "Protected Memory Enable Register" exists only where
	 * CAP.PLMR or CAP.PHMR says so. */
	if (cap & (VTD_CAP_PLMR | VTD_CAP_PHMR)) {
		wr32(b, VTD_PMEN, VTD_PMEN_EPM);
		if (!until_set(b, VTD_PMEN, VTD_PMEN_PRS, true, false))
			return "enabling the protected memory regions";
		snprintf(pmr, pmrlen, "PMRs on (CAP.PLMR %u, PHMR %u; regions as reset)", !!(cap & VTD_CAP_PLMR),
			 !!(cap & VTD_CAP_PHMR));
	} else {
		snprintf(pmr, pmrlen, "PMRs not offered (CAP.PLMR 0, PHMR 0)");
	}
	/* Interrupt remapping needs ECAP.IR and, to invalidate the interrupt
	 * entry cache, the queue (ECAP.QI). */
	if (!(ecap & VTD_ECAP_QI) || !(ecap & VTD_ECAP_IR))
		return "interrupt remapping (the unit lacks ECAP.QI or ECAP.IR)";
	wr64(b, VTD_IQT, 0);
	wr64(b, VTD_IQA, (uint64_t)(uintptr_t)iq & VTD_ADDR_MASK);   /* 128-bit descriptors, one page */
	if (!cmd(b, VTD_GCMD_QIE, VTD_GSTS_QIES))
		return "enabling queued invalidation";
	wr64(b, VTD_IRTA, (*irt_out & VTD_ADDR_MASK) | ((ecap & VTD_ECAP_EIM) ? VTD_IRTA_EIME : 0) | PREON_IRTA_S);
	if (!cmd(b, VTD_GCMD_SIRTP, VTD_GCMD_SIRTP))
		return "setting the interrupt-remapping table";
	/* The interrupt entry cache (global), then a wait descriptor that
	 * writes 1 to the status dword. */
	iq[0] = VTD_QI_IEC_GLOBAL;
	iq[2] = VTD_QI_WAIT_SW | 1ull << VTD_QI_WAIT_DATA_SHIFT;
	iq[3] = (uint64_t)(uintptr_t)status;
	__asm__ volatile("wbinvd" ::: "memory");
	wr64(b, VTD_IQT, 2 << 4);
	uint64_t until = rdtsc() + tsc_from_us(PREON_TIMEOUT_US);
	while (*status != 1)
		if (rdtsc() > until || (rd32(b, VTD_FSTS) & (VTD_FSTS_IQE | VTD_FSTS_ICE | VTD_FSTS_ITE)))
			return "the interrupt entry cache invalidation";
	if (!cmd(b, VTD_GCMD_IRE, VTD_GSTS_IRES))
		return "enabling interrupt remapping";
	return NULL;
}

int iommu_preon(const struct acpi_info *acpi, char *err, size_t errlen)
{
	if (!acpi->dmar) {
		snprintf(err, errlen, "iommutest=preon: no DMAR (QEMU: -device intel-iommu)");
		return -1;
	}
	uint64_t avail = acpi->dmar >= acpi_readable_lo && acpi->dmar < acpi_readable_hi ? acpi_readable_hi - acpi->dmar : 0;
	const uint8_t *t = (const uint8_t *)(uintptr_t)acpi->dmar;
	struct dmar_counts c;
	struct dmar_info d;
	if (dmar_count(t, avail, &c, err, errlen))
		return -1;
	void *buf = page_alloc(ALIGN_UP(dmar_bytes(&c), PAGE_SIZE) / PAGE_SIZE);
	if (!buf) {
		snprintf(err, errlen, "iommutest=preon: no pages for the DMAR");
		return -1;
	}
	dmar_place(&d, &c, buf);
	if (dmar_parse(t, avail, &d, err, errlen))
		return -1;
	for (uint32_t i = 0; i < d.ndrhd; i++) {
		uint64_t b = d.drhd[i].base, root = 0, irt = 0;
		char pmr[80] = "";
		const char *step = unit_on(b, pmr, sizeof pmr, &root, &irt);
		if (step) {
			snprintf(err, errlen, "iommutest: preon: unit at 0x%llx: %s failed (GSTS 0x%x)", (unsigned long long)b,
				 step, rd32(b, VTD_GSTS));
			return -1;
		}
		pr_info("iommutest: preon: unit at 0x%llx left as pre-boot DMA protection would: root table 0x%llx (no entry present: every request blocked), translation on; queued invalidation on; interrupt-remapping table 0x%llx (256 entries, none present), interrupt remapping on; %s; GSTS 0x%x\n",
			(unsigned long long)b, (unsigned long long)root, (unsigned long long)irt, pmr, rd32(b, VTD_GSTS));
	}
	return 0;
}
