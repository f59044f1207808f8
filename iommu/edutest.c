/* The edu DMA test (see edutest.h). The edu device (QEMU's docs/specs/edu.rst):
 * BAR0 registers, DMA source at 0x80, destination at 0x88, count at 0x90,
 * command at 0x98 (bit 0 start, bit 1 direction: 1 from the device's buffer
 * to RAM); the buffer is 4 KiB at device address 0x40000. It is found on the
 * PCI buses through configuration mechanism #1 (ports 0xCF8/0xCFC). */
#include "edutest.h"
#include "iommu.h"
#include "vtd_defs.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define EDU_VENDOR   0x1234
#define EDU_DEVICE   0x11e8
#define EDU_ID       0x00
#define EDU_DMA_SRC  0x80
#define EDU_DMA_DST  0x88
#define EDU_DMA_CNT  0x90
#define EDU_DMA_CMD  0x98
#define EDU_CMD_RUN  BIT(0)
#define EDU_CMD_TO_RAM BIT(1)
#define EDU_BUF      0x40000ull
/* Half the device's 4 KiB buffer a transfer: QEMU 7.2's edu checks the
 * buffer's bound off by one and aborts the emulator on a transfer that
 * ends at its last byte (fixed in later QEMU). */
#define XFER         2048u

#define PCI_CMD_MEM  BIT(1)
#define PCI_CMD_BM   BIT(2)

static uint32_t pci_rd(uint32_t bus, uint32_t dev, uint32_t fn, uint32_t reg)
{
	outl(0xcf8, 0x80000000u | bus << 16 | dev << 11 | fn << 8 | (reg & 0xfc));
	return inl(0xcfc);
}
static void pci_wr(uint32_t bus, uint32_t dev, uint32_t fn, uint32_t reg, uint32_t v)
{
	outl(0xcf8, 0x80000000u | bus << 16 | dev << 11 | fn << 8 | (reg & 0xfc));
	outl(0xcfc, v);
}

static volatile uint8_t *edu;
static uint16_t edu_sid;

static uint64_t edu_rd(uint32_t off) { return *(volatile uint64_t *)(edu + off); }
static uint32_t edu_rd32(uint32_t off) { return *(volatile uint32_t *)(edu + off); }
static void edu_wr(uint32_t off, uint64_t v) { *(volatile uint64_t *)(edu + off) = v; }

static bool edu_find(void)
{
	for (uint32_t bus = 0; bus < 256; bus++)
		for (uint32_t dev = 0; dev < 32; dev++)
			for (uint32_t fn = 0; fn < 8; fn++) {
				uint32_t id = pci_rd(bus, dev, fn, 0);
				if ((id & 0xffff) == 0xffff) {
					if (!fn)
						break;
					continue;
				}
				if (id != (EDU_DEVICE << 16 | EDU_VENDOR))
					continue;
				uint32_t bar = pci_rd(bus, dev, fn, 0x10);
				uint64_t base = bar & ~0xfull;
				if ((bar & 6) == 4)
					base |= (uint64_t)pci_rd(bus, dev, fn, 0x14) << 32;
				if (bar & 1 || !base) {
					pr_err("iommutest: edu at %02x:%02x.%u: BAR0 0x%x not an assigned memory BAR\n", bus, dev, fn, bar);
					return false;
				}
				pci_wr(bus, dev, fn, 0x04, (pci_rd(bus, dev, fn, 0x04) & 0xffff) | PCI_CMD_MEM | PCI_CMD_BM);
				edu = (volatile uint8_t *)(uintptr_t)base;
				edu_sid = (uint16_t)(bus << 8 | dev << 3 | fn);
				pr_info("iommutest: edu at %02x:%02x.%u (source ID 0x%04x), BAR0 0x%llx, ID register 0x%x\n", bus, dev, fn,
					edu_sid, (unsigned long long)base, edu_rd32(EDU_ID));
				return true;
			}
	pr_err("iommutest: no edu device (1234:11e8) on any bus (QEMU: -device edu,dma_mask=0xffffffffffffffff)\n");
	return false;
}

/* One transfer of XFER bytes between RAM at 'ram' and the device's buffer. */
static bool edu_dma(uint64_t ram, bool to_ram)
{
	edu_wr(EDU_DMA_SRC, to_ram ? EDU_BUF : ram);
	edu_wr(EDU_DMA_DST, to_ram ? ram : EDU_BUF);
	edu_wr(EDU_DMA_CNT, XFER);
	edu_wr(EDU_DMA_CMD, EDU_CMD_RUN | (to_ram ? EDU_CMD_TO_RAM : 0));
	uint64_t until = rdtsc() + tsc_from_us(5000000);
	while (edu_rd(EDU_DMA_CMD) & EDU_CMD_RUN)
		if (rdtsc() > until) {
			pr_err("iommutest: edu DMA %s 0x%llx did not finish in 5 s\n", to_ram ? "to" : "from",
			       (unsigned long long)ram);
			return false;
		}
	return true;
}

static void fill(uint8_t *p, uint8_t seed)
{
	for (uint32_t i = 0; i < PAGE_SIZE; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* The fault the last transfer left: exactly one, with the edu's source ID,
 * the page, the direction and (when want_reason) the reason. */
static bool fault_is(const char *what, uint64_t addr, bool read, uint8_t want_reason)
{
	struct vtd_fault f = { 0 };
	uint32_t n = iommu_poll_faults(&f);
	bool ok = n == 1 && f.sid == edu_sid && f.addr == addr && f.read == read && (!want_reason || f.reason == want_reason);
	pr_info("iommutest: %s: %u fault%s recorded, source 0x%04x, address 0x%llx, %s, reason %u (want 1, 0x%04x, 0x%llx, %s, %u): %s\n",
		what, n, n == 1 ? "" : "s", f.sid, (unsigned long long)f.addr, f.read ? "read" : "write", f.reason, edu_sid,
		(unsigned long long)addr, read ? "read" : "write", want_reason, ok ? "ok" : "FAIL");
	return ok;
}

bool iommu_edu_test(const struct memmap *mem)
{
	char err[200];
	uint32_t pass = 0, total = 0;
	if (!iommu_available()) {
		pr_err("iommutest: no remapping unit (QEMU: -M q35 -device intel-iommu): %s\n", iommu_state_name());
		return false;
	}
	if (iommu_enable(mem, err, sizeof err)) {
		pr_err("%s\n", err);
		return false;
	}
	if (!edu_find())
		return false;
	/* Guest pages: usable RAM the hypervisor does not own (after ExitBootServices no one uses it). */
	uint64_t g = memmap_find_free(mem, 3 * PAGE_SIZE, GIB(4));
	uint8_t *hv = page_alloc(1);
	if (!g) {
		pr_err("iommutest: no 3 free guest pages below 4 GiB\n");
		return false;
	}
	uint8_t *ga = (uint8_t *)(uintptr_t)g, *gb = ga + PAGE_SIZE, *gc = gb + PAGE_SIZE;
	uint64_t hv_pa = (uint64_t)(uintptr_t)hv;
	iommu_poll_faults(NULL);

	/* 1. A guest page through the device and back: equal, no fault. */
	total++;
	fill(ga, 0x11);
	memset(gb, 0, PAGE_SIZE);
	bool ok = edu_dma(g, false) && edu_dma(g + PAGE_SIZE, true);
	uint32_t n = iommu_poll_faults(NULL);
	ok = ok && !memcmp(ga, gb, XFER) && !n;
	pr_info("iommutest: guest-page: edu read 0x%llx and wrote 0x%llx: data %s, %u faults: %s\n", (unsigned long long)g,
		(unsigned long long)(g + PAGE_SIZE), memcmp(ga, gb, XFER) ? "DIFFERS" : "equal", n, ok ? "ok" : "FAIL");
	pass += ok;

	/* 2. A read of a hypervisor page: blocked (the buffer holds none of it), recorded. */
	total++;
	fill(hv, 0xc3);
	ok = edu_dma(hv_pa, false);
	bool rec = fault_is("hv-read", hv_pa, true, VTD_FR_READ);
	memset(gc, 0, PAGE_SIZE);
	ok = ok && edu_dma(g + 2 * PAGE_SIZE, true);
	bool leaked = !memcmp(gc, hv, XFER);
	ok = ok && rec && !leaked && !iommu_poll_faults(NULL);
	pr_info("iommutest: hv-read: edu read of hypervisor page 0x%llx: %s, buffer afterwards starts %02x %02x %02x %02x: %s\n",
		(unsigned long long)hv_pa, leaked ? "DATA LEAKED" : "blocked", gc[0], gc[1], gc[2], gc[3], ok ? "ok" : "FAIL");
	pass += ok;

	/* 3. A write to a hypervisor page: blocked (the page unchanged), recorded. */
	total++;
	fill(ga, 0x5a);
	ok = edu_dma(g, false) && !iommu_poll_faults(NULL) && edu_dma(hv_pa, true);
	rec = fault_is("hv-write", hv_pa, false, VTD_FR_WRITE);
	fill(gc, 0xc3);                  /* what the page held */
	bool same = !memcmp(hv, gc, PAGE_SIZE);
	ok = ok && rec && same;
	pr_info("iommutest: hv-write: edu write to hypervisor page 0x%llx: page %s: %s\n", (unsigned long long)hv_pa,
		same ? "unchanged" : "CHANGED", ok ? "ok" : "FAIL");
	pass += ok;

	/* 4. Above the guest's memory (within the address width): nothing mapped there. */
	total++;
	uint64_t above = ALIGN_UP(memmap_end(mem), GIB(1)) + GIB(1);
	ok = edu_dma(above, true) && fault_is("above-guest", above, false, VTD_FR_WRITE);
	pr_info("iommutest: above-guest: edu write to 0x%llx: %s\n", (unsigned long long)above, ok ? "ok" : "FAIL");
	pass += ok;

	/* 5. Beyond the tables' address width. */
	total++;
	uint64_t beyond = 1ull << (12 + 9 * iommu_levels());
	ok = edu_dma(beyond, true) && fault_is("beyond-width", beyond, false, VTD_FR_BEYOND_AW);
	pr_info("iommutest: beyond-width: edu write to 0x%llx (%d-level tables): %s\n", (unsigned long long)beyond,
		iommu_levels(), ok ? "ok" : "FAIL");
	pass += ok;

	/* 6. The guest page again: translation still works after the faults. */
	total++;
	fill(ga, 0x77);
	memset(gb, 0, PAGE_SIZE);
	ok = edu_dma(g, false) && edu_dma(g + PAGE_SIZE, true) && !memcmp(ga, gb, XFER) && !iommu_poll_faults(NULL);
	pr_info("iommutest: guest-page-again: %s\n", ok ? "ok" : "FAIL");
	pass += ok;

	iommu_report();
	pr_info("iommutest: %u of %u checks passed\n", pass, total);
	return pass == total;
}
