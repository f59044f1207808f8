/* The edu DMA test (see edutest.h). The edu device (QEMU's docs/specs/edu.rst):
 * BAR0 registers, DMA source at 0x80, destination at 0x88, count at 0x90,
 * command at 0x98 (bit 0 start, bit 1 direction: 1 from the device's buffer
 * to RAM); the buffer is 4 KiB at device address 0x40000. It is found on the
 * PCI buses through configuration mechanism #1 (ports 0xCF8/0xCFC). */
#include "edutest.h"
#include "../iommu/iommu.h"
#include "../iommu/irte.h"
#include "../iommu/vtd_defs.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define EDU_VENDOR   0x1234
#define EDU_DEVICE   0x11e8
#define EDU_ID       0x00
#define EDU_IRQ_RAISE 0x60
#define EDU_IRQ_ACK  0x64
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
static uint32_t edu_bus, edu_dev, edu_fn;

static uint64_t edu_rd(uint32_t off) { return *(volatile uint64_t *)(edu + off); }
static uint32_t edu_rd32(uint32_t off) { return *(volatile uint32_t *)(edu + off); }
static void edu_wr(uint32_t off, uint64_t v) { *(volatile uint64_t *)(edu + off) = v; }
static void edu_wr32(uint32_t off, uint32_t v) { *(volatile uint32_t *)(edu + off) = v; }

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
				edu_bus = bus, edu_dev = dev, edu_fn = fn;
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

/* Interrupt remapping judged by QEMU's unit: edu's MSI (its capability
 * programmed in remappable format, raised through register 0x60) goes
 * through IRTEs built by iommu/irte.c; what arrives is read from the local
 * APIC's IRR (interrupts stay disabled: a request waits there). */
#define PCI_CAP_MSI  0x05
#define IR_SIZE      15                 /* 2^16 entries: index bit 15 used */
#define IR_WAIT_US   100000

static uint32_t msi_cap(void)
{
	if (!(pci_rd(edu_bus, edu_dev, edu_fn, 0x04) & (1u << 20)))   /* status: capability list */
		return 0;
	for (uint32_t p = pci_rd(edu_bus, edu_dev, edu_fn, 0x34) & 0xfc, n = 0; p && n < 48; n++) {
		uint32_t h = pci_rd(edu_bus, edu_dev, edu_fn, p);
		if ((h & 0xff) == PCI_CAP_MSI)
			return p;
		p = (h >> 8) & 0xfc;
	}
	return 0;
}

/* Programs edu's MSI (64-bit capable: address at +4, +8, data at +12),
 * enables it, raises edu's interrupt once, acknowledges it. */
static void edu_msi(uint32_t cap, uint32_t addr, uint16_t data)
{
	uint32_t ctl = pci_rd(edu_bus, edu_dev, edu_fn, cap);
	pci_wr(edu_bus, edu_dev, edu_fn, cap + 4, addr);
	pci_wr(edu_bus, edu_dev, edu_fn, cap + 8, 0);
	pci_wr(edu_bus, edu_dev, edu_fn, cap + 12, data);
	pci_wr(edu_bus, edu_dev, edu_fn, cap, ctl | 1u << 16);        /* MSI enable: control bit 0 */
	edu_wr32(EDU_IRQ_RAISE, 1);
	edu_wr32(EDU_IRQ_ACK, 1);
}

bool iommu_edu_locate(uint16_t *bdf)
{
	if (!edu && !edu_find())
		return false;
	*bdf = edu_sid;
	return true;
}

void iommu_edu_raise(void)
{
	edu_wr32(EDU_IRQ_RAISE, 1);
	edu_wr32(EDU_IRQ_ACK, 1);
}

bool iommu_vector_arrives(bool (*requested)(uint8_t), uint8_t vector, uint64_t wait_us)
{
	uint64_t until = rdtsc() + tsc_from_us(wait_us);
	while (!requested(vector))
		if (rdtsc() > until)
			return false;
	return true;
}

/* One check: IRTE e at index, edu's MSI pointing at it; the vector must
 * arrive (want) or not. */
static bool ir_one(const char *what, struct irte *irt, uint16_t index, const struct irte *e, uint8_t vector, bool want,
		   uint32_t cap, bool (*requested)(uint8_t))
{
	char err[160];
	irt[index] = *e;
	__asm__ volatile("wbinvd" ::: "memory");
	bool ok = !iommu_iec_invalidate(err, sizeof err);
	edu_msi(cap, irte_msi_addr(index), 0);
	bool got = iommu_vector_arrives(requested, vector, IR_WAIT_US);
	ok = ok && got == want;
	pr_info("iommutest: %s: IRTE 0x%x = %016llx %016llx, MSI address 0x%x data 0: vector 0x%x %s (want %s): %s\n", what,
		index, (unsigned long long)e->hi, (unsigned long long)e->lo, irte_msi_addr(index), vector,
		got ? "arrived" : "did not arrive", want ? "arrived" : "blocked", ok ? "ok" : "FAIL");
	return ok;
}

static void ir_checks(bool (*requested)(uint8_t), uint32_t apic_id, uint32_t *pass, uint32_t *total)
{
	char err[200];
	uint32_t cap = msi_cap();
	struct irte *irt = page_alloc((16ull << (IR_SIZE + 1)) / PAGE_SIZE);
	__asm__ volatile("cli");
	if (iommu_ir_enable((uint64_t)(uintptr_t)irt, IR_SIZE, false, err, sizeof err)) {
		pr_info("iommutest: interrupt remapping not checked: %s\n", err);
		return;
	}
	(*total)++;
	if (!cap || !irt) {
		pr_err("iommutest: edu has no MSI capability (or no memory for the table): FAIL\n");
		return;
	}
	memset(irt, 0, 16ull << (IR_SIZE + 1));
	pr_info("iommutest: interrupt remapping on: table 0x%llx, 65536 entries, xAPIC destinations; edu MSI capability at 0x%x\n",
		(unsigned long long)(uintptr_t)irt, cap);
	(*pass)++;
	struct irte e;
	struct irte_source mine = { .sid = edu_sid, .svt = IRTE_SVT_SID };
	struct irte_remapped r = { .dest = apic_id, .dlm = IRQ_DLM_FIXED, .src = mine };
	struct { const char *what; struct irte_source src; uint16_t index; uint8_t vector; bool want; } c[] = {
		{ "ir-remapped (index bit 15)", mine, 0x8005, 0x61, true },
		{ "ir-other-requester", { .sid = (uint16_t)(edu_sid ^ 0x100), .svt = IRTE_SVT_SID }, 7, 0x63, false },
		{ "ir-qualified-requester (SQ 01: function bit 2 ignored)",
		  { .sid = (uint16_t)(edu_sid ^ 4), .sq = 1, .svt = IRTE_SVT_SID }, 8, 0x64, true },
		/* SVT 10: start bus in SID 15:8, end bus in 7:0; one bus each, as
		 * QEMU 7.2 reads the two the other way round. */
		{ "ir-bus-range (SVT 10: edu's bus)", { .sid = (uint16_t)((edu_sid >> 8) * 0x101u), .svt = IRTE_SVT_BUS },
		  9, 0x65, true },
		{ "ir-bus-range-other (SVT 10: the next bus)",
		  { .sid = (uint16_t)(((edu_sid >> 8) + 1) * 0x101u), .svt = IRTE_SVT_BUS }, 10, 0x66, false },
	};
	for (uint32_t i = 0; i < ARRAY_SIZE(c); i++) {
		(*total)++;
		r.vector = c[i].vector;
		r.src = c[i].src;
		bool ok = !irte_encode_remapped(&r, &e, err, sizeof err) &&
			  ir_one(c[i].what, irt, c[i].index, &e, c[i].vector, c[i].want, cap, requested);
		*pass += ok;
	}
	/* Not present: nothing arrives (no vector at all can: IRR unchanged). */
	(*total)++;
	uint32_t before = 0, after = 0;
	for (uint32_t v = 32; v < 256; v++)
		before += requested((uint8_t)v);
	struct irte none = { 0, 0 };
	bool ok = ir_one("ir-not-present", irt, 6, &none, 0x62, false, cap, requested);
	for (uint32_t v = 32; v < 256; v++)
		after += requested((uint8_t)v);
	ok = ok && after == before;
	pr_info("iommutest: ir-not-present: %u vectors requested before, %u after: %s\n", before, after, ok ? "ok" : "FAIL");
	*pass += ok;
	/* A guest's MSI through the policy: fixed, broadcast, to a guest of two
	 * vCPUs on this CPU: remapped (one exit in the design) with the
	 * guest's vector, to this CPU. */
	(*total)++;
	struct irq_vcpu vc[2] = { { .apic_id = 0, .pid = 0x1000, .host_apic_id = apic_id },
				  { .apic_id = 1, .pid = 0x1040, .host_apic_id = apic_id } };
	struct irq_guest g = { .vcpu = vc, .n = 2 };
	struct irq_req q;
	struct irq_plan plan;
	ok = !irq_from_msi(0xfeeff000, 0x0067, &q, err, sizeof err);
	irq_plan(&g, &q, edu_sid, &plan);
	ok = ok && plan.route == IRQ_REMAPPED && ir_one("ir-guest-msi-through-the-policy", irt, 12, &plan.irte, 0x67, true, cap, requested);
	*pass += ok;
}

bool iommu_edu_test(const struct memmap *mem, bool (*requested)(uint8_t vector), uint32_t apic_id)
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

	ir_checks(requested, apic_id, &pass, &total);

	iommu_report();
	pr_info("iommutest: %u of %u checks passed\n", pass, total);
	return pass == total;
}
