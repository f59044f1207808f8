/* DMA isolation (see iommu.h). */
#include "iommu.h"
#include "tables.h"
#include "vtd_defs.h"
#include "../lib/dmar.h"
#include "../lib/options.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/spinlock.h"
#include "../lib/trap.h"

/* Fault reasons counted one by one: the DMA remapping ones (1-0xd) and
 * the interrupt remapping ones (0x20-0x27, VT-d "Interrupt Remapping Fault
 * Conditions"); any other in the last bucket. */
#define FAULT_REASONS 0x28
#define FR_IR_FIRST   0x20
/* Fault lines printed; past them faults are only counted (the report).
 * Since faults are read at each fault event, a guest whose device faults
 * without end would otherwise keep the boot CPU printing at serial speed. */
#define FAULT_LINES   64

static struct {
	const char *state;              /* for the banner and the report */
	bool available, on;
	bool ir_owned, ir_eim;          /* intremap=auto or on: the hypervisor's IRT in every unit (EIM: 32-bit destinations) */
	uint32_t msi_irte_base;         /* the MSIs' IRTEs from here (after the IOAPICs') */
	/* One table per PCI segment, in the units of that segment: an IRTE
	 * checks a 16-bit source ID, which names no segment, so a device of
	 * one segment could pass the check of a function with the same BDF on
	 * another if they shared a table. The IOAPICs' entries in segment 0's. */
	struct irt_seg {
		uint16_t seg;
		uint64_t *irt;          /* entry i at irt[2i] (63:0), irt[2i+1] (127:64) */
		/* The unit that remaps each IRTE's source (the DRHD index),
		 * IRTE_ANY where unknown: its interrupt entry cache alone holds it. */
		uint8_t *irte_unit;
		/* How often each IRTE was written after the table was made (each
		 * write followed by that index's invalidation; the report prints
		 * them, a run compares them with the units' counts). Saturates. */
		uint16_t *irte_writes;
	} irs[IOMMU_MAX_SEGS];
	uint32_t nirs;
	uint16_t *sid;                  /* the source ID of each IOAPIC of the MADT */
	uint32_t irt_entries;
	bool queued;                    /* iommuqi=auto: queued invalidation where offered */
	struct dmar_info dmar;          /* its arrays in page_alloc's pages, sized by dmar_count */
	uint32_t nunits;
	uint32_t nprobed;               /* units vtd_probe read, usable or not */
	struct vtd_unit *unit;          /* nunits of them, page_alloc's */
	int levels;
	struct vtd_map_stats st;
	uint64_t faults, overflows, by_reason[FAULT_REASONS + 1], reads, writes, irq_faults, fault_events;
} io = { .state = "off: not set up" };
static char state_buf[256];

bool iommu_available(void) { return io.available; }
bool iommu_ir_owned(void) { return io.ir_owned; }
const char *iommu_state_name(void) { return io.state; }
int iommu_levels(void) { return io.levels; }
uint32_t iommu_probed_units(uint32_t *ndrhd)
{
	*ndrhd = io.dmar.ndrhd;
	return io.nprobed;
}
const struct vtd_unit *iommu_unit(uint32_t i) { return i < io.nprobed ? &io.unit[i] : NULL; }
bool iommu_regs_range(uint32_t i, uint64_t *base, uint64_t *len)
{
	if (!io.dmar.drhd || i >= io.dmar.ndrhd)
		return false;
	*base = io.dmar.drhd[i].base;
	*len = (uint64_t)PAGE_SIZE << (io.dmar.drhd[i].size & 15);
	return true;
}

/* A DMAR or unit the hypervisor cannot use: iommu=require refuses (-1 with
 * err), auto boots with DMA isolation off, said loudly. */
static int unusable(int opt, const char *why, char *err, size_t errlen)
{
	if (opt == IOMMU_OPT_REQUIRE) {
		snprintf(err, errlen, "iommu=require: %s: refusing to start the guest", why);
		return -1;
	}
	snprintf(state_buf, sizeof state_buf, "off: %s", why);
	io.nunits = 0;
	io.state = state_buf;
	io.available = false;
	pr_warn("DMA isolation: %s: every device the guest drives can read and write the hypervisor's memory\n", io.state);
	return 0;
}

/* The deepest table layout every unit offers that reaches 'need'; 0 with
 * err when a unit has none or the units share none. */
static int choose_levels(uint64_t need, bool *lp2m, bool *lp1g, char *err, size_t errlen)
{
	int levels = 5;
	*lp2m = *lp1g = true;
	for (uint32_t i = 0; i < io.nunits; i++) {
		int l = vtd_levels(io.unit[i].cap, need);
		if (!l) {
			snprintf(err, errlen, "iommu: unit %u: no table layout in SAGAW 0x%llx reaches 0x%llx", i,
				 (unsigned long long)VTD_CAP_SAGAW(io.unit[i].cap), (unsigned long long)need);
			return 0;
		}
		levels = l < levels ? l : levels;
		*lp2m = *lp2m && (VTD_CAP_SLLPS(io.unit[i].cap) & 1);
		*lp1g = *lp1g && (VTD_CAP_SLLPS(io.unit[i].cap) & 2);
	}
	for (uint32_t i = 0; i < io.nunits; i++)
		if (!(VTD_CAP_SAGAW(io.unit[i].cap) & BIT(levels - 2))) {
			snprintf(err, errlen, "iommu: the units share no table layout (unit %u lacks %d levels)", i, levels);
			return 0;
		}
	return levels;
}

/* What the identity tables must reach: memory and every RMRR. */
static uint64_t map_need(const struct memmap *mem)
{
	uint64_t need = memmap_end(mem);
	for (uint32_t i = 0; i < io.dmar.nrmrr; i++)
		if (io.dmar.rmrr[i].limit + 1 > need)
			need = io.dmar.rmrr[i].limit + 1;
	return need;
}

/* The DMAR into io.dmar: counted, room from page_alloc, parsed. */
static int dmar_load(const struct acpi_info *acpi, char *err, size_t errlen)
{
	uint64_t avail = acpi->dmar >= acpi_readable_lo && acpi->dmar < acpi_readable_hi ? acpi_readable_hi - acpi->dmar : 0;
	const uint8_t *t = (const uint8_t *)(uintptr_t)acpi->dmar;
	struct dmar_counts c;
	if (dmar_count(t, avail, &c, err, errlen))
		return -1;
	uint64_t bytes = dmar_bytes(&c);
	uint64_t pages = ALIGN_UP(bytes + (uint64_t)c.ndrhd * sizeof(struct vtd_unit), PAGE_SIZE) / PAGE_SIZE;
	if (pages > page_alloc_free() / PAGE_SIZE) {
		snprintf(err, errlen, "DMAR: %u DRHDs and %u scopes need %llu pages, %llu free", c.ndrhd, c.nscopes,
			 (unsigned long long)pages, (unsigned long long)(page_alloc_free() / PAGE_SIZE));
		return -1;
	}
	uint8_t *buf = page_alloc(pages);
	dmar_place(&io.dmar, &c, buf);
	_Static_assert(_Alignof(struct vtd_unit) <= 8, "dmar_bytes is a multiple of 8: the units follow the DMAR's arrays");
	io.unit = (struct vtd_unit *)(buf + bytes);
	return dmar_parse(t, avail, &io.dmar, err, errlen);
}

int iommu_init(const struct acpi_info *acpi, int opt, int qi, struct memmap *mem, char *err, size_t errlen)
{
	io.queued = qi == IOMMU_QI_AUTO;
	if (opt == IOMMU_OPT_OFF) {
		io.state = "off: iommu=off (test aid: devices reach every byte, the hypervisor's included)";
		pr_warn("DMA isolation: %s\n", io.state);
		return 0;
	}
	if (!acpi->dmar) {
		if (opt == IOMMU_OPT_REQUIRE) {
			snprintf(err, errlen, "iommu=require: the firmware has no DMAR (no VT-d): refusing to start the guest");
			return -1;
		}
		io.state = "off: no DMAR";
		pr_warn("DMA isolation: off: no DMAR: every device the guest drives can read and write the hypervisor's memory\n");
		return 0;
	}
	char why[200];
	if (dmar_load(acpi, why, sizeof why))
		return unusable(opt, why, err, errlen);
	dmar_print(&io.dmar);
	/* Every unit probed before any is claimed: one the hypervisor cannot
	 * drive leaves the others alone. */
	for (uint32_t i = 0; i < io.dmar.ndrhd; i++) {
		const struct dmar_drhd *d = &io.dmar.drhd[i];
		uint64_t len = PAGE_SIZE << d->size;
		if (d->base + len > acpi_readable_hi) {
			snprintf(why, sizeof why, "iommu: DRHD %u registers at 0x%llx lie outside the identity map", i,
				 (unsigned long long)d->base);
			return unusable(opt, why, err, errlen);
		}
		int bad = vtd_probe(&io.unit[i], d->base, why, sizeof why);
		io.nprobed = i + 1;
		if (bad)
			return unusable(opt, why, err, errlen);
		const struct vtd_unit *u = &io.unit[i];
		pr_info("iommu: unit %u: version %u.%u, CAP 0x%llx, ECAP 0x%llx: SAGAW 0x%llx, MGAW %llu, %u fault registers at 0x%x, IOTLB at 0x%x%s%s%s\n",
			i, (u->ver >> 4) & 0xf, u->ver & 0xf, (unsigned long long)u->cap, (unsigned long long)u->ecap,
			(unsigned long long)VTD_CAP_SAGAW(u->cap), (unsigned long long)VTD_CAP_MGAW(u->cap), u->nfr, u->fro,
			u->iro, (u->cap & VTD_CAP_CM) ? ", caching mode" : "", (u->cap & VTD_CAP_RWBF) ? ", write-buffer flush" : "",
			(u->ecap & VTD_ECAP_QI) ? (io.queued ? ", queued invalidation" : ", queued invalidation (unused: iommuqi=off)") : "");
	}
	io.nunits = io.dmar.ndrhd;
	bool lp2m, lp1g;
	if (!choose_levels(map_need(mem), &lp2m, &lp1g, why, sizeof why)) {
		io.nunits = 0;
		return unusable(opt, why, err, errlen);
	}
	for (uint32_t i = 0; i < io.nunits; i++) {
		const struct dmar_drhd *d = &io.dmar.drhd[i];
		uint64_t len = PAGE_SIZE << d->size;
		if (!memmap_claim(mem, d->base, len)) {
			snprintf(why, sizeof why, "memmap: table full while claiming the VT-d registers of DRHD %u", i);
			io.nunits = 0;
			return unusable(opt, why, err, errlen);
		}
		pr_info("memmap: hypervisor owns [%016llx-%016llx] VT-d registers (DRHD %u)\n", (unsigned long long)d->base,
			(unsigned long long)(d->base + len - 1), i);
	}
	/* INCLUDE_PCI_ALL covers its own segment only. */
	uint32_t uncovered = dmar_check_coverage(&io.dmar);
	if (uncovered)
		pr_warn("iommu: %u device%s the DMAR names lie under no unit's scope (named above): remapped only if a listed unit sits above them\n",
			uncovered, uncovered == 1 ? "" : "s");
	io.available = true;
	io.state = "on";
	pr_info("DMA isolation: on: %u remapping unit%s (VT-d), turned on before the APs start\n", io.nunits,
		io.nunits == 1 ? "" : "s");
	return 0;
}

static void iommu_host_irq(uint8_t vector);

int iommu_enable(const struct memmap *mem, char *err, size_t errlen)
{
	if (!io.available)
		return 0;
	/* One layout for every unit: the deepest each offers, the least of them
	 * (checked in iommu_init already; the memory map may have grown). */
	bool lp2m, lp1g;
	int levels = choose_levels(map_need(mem), &lp2m, &lp1g, err, errlen);
	if (!levels)
		return -1;
	paddr_t sl = vtd_sl_build(mem, io.dmar.rmrr, io.dmar.nrmrr, levels, lp2m, lp1g, &io.st, err, errlen);
	if (!sl)
		return -1;
	paddr_t root = vtd_root_build(sl, levels, VTD_DOMAIN_ID, &io.st);
	io.levels = levels;
	pr_info("iommu: identity tables (%d-level, %d-bit) to 0x%llx: %llu x 1G, %llu x 2M, %llu x 4K pages, %llu 4K hypervisor pages left out, %llu tables; %u RMRRs mapped%s\n",
		levels, 12 + 9 * levels, (unsigned long long)io.st.end, (unsigned long long)io.st.pages_1g,
		(unsigned long long)io.st.pages_2m, (unsigned long long)io.st.pages_4k, (unsigned long long)io.st.hv_pages_out,
		(unsigned long long)io.st.tables, io.dmar.nrmrr, io.st.rmrr_hv_conflicts ? " (some overlap the hypervisor: those pages left out)" : "");
	for (uint32_t i = 0; i < io.nunits; i++) {
		const struct vtd_unit *u = &io.unit[i];
		if (vtd_enable(&io.unit[i], root, io.queued, err, errlen))
			return -1;
		if (u->qi)
			pr_info("iommu: unit %u at 0x%llx: root table 0x%llx, context cache, IOTLB%s invalidated through the queue at 0x%llx (wait descriptor %u completed, IQH 0x%x), translation on\n",
				i, (unsigned long long)u->base, (unsigned long long)root,
				(u->ecap & VTD_ECAP_IR) ? " and interrupt entry cache" : "", (unsigned long long)(uintptr_t)u->iq,
				u->qi_seq, (unsigned)vtd_iqh(u));
		else
			pr_info("iommu: unit %u at 0x%llx: root table 0x%llx, context cache and IOTLB invalidated through the registers, translation on\n",
				i, (unsigned long long)u->base, (unsigned long long)root);
	}
	io.on = true;
	return 0;
}

void iommu_fault_events_to(uint32_t apic_id)
{
	for (uint32_t i = 0; io.on && i < io.nunits; i++)
		if (!vtd_fault_event_on(&io.unit[i], apic_id, IOMMU_FAULT_VECTOR))
			pr_warn("iommu: unit %u: its fault event cannot name APIC ID %u (no EIM): faults read at the report only\n",
				i, apic_id);
	host_irq_hook = iommu_host_irq;
}

int iommu_ir_enable(paddr_t irt, unsigned size_field, bool eime, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < io.nunits; i++)
		if (vtd_enable_ir(&io.unit[i], irt, size_field, eime, err, errlen))
			return -1;
	return 0;
}

/* The IOAPIC's requester ID: the DMAR's IOAPIC device scope whose
 * enumeration ID is its MADT IOAPIC ID (VT-d, "I/OxAPIC Device Scope"),
 * start bus and a one-entry path (device, function): -1 when none is (a
 * longer path needs the bridges' bus numbers, not read here). */
static int ioapic_sid(uint8_t id)
{
	for (uint32_t i = 0; i < io.dmar.nscopes; i++) {
		const struct dmar_scope *sc = &io.dmar.scope[i];
		if (sc->type == DMAR_SCOPE_IOAPIC && sc->enum_id == id && sc->npath == 1 && !sc->cut)
			return sc->bus << 8 | sc->path[0][0] << 3 | sc->path[0][1];
	}
	return -1;
}

/* The table of segment seg (NULL: none). */
static struct irt_seg *irt_of(uint16_t seg)
{
	for (uint32_t k = 0; k < io.nirs; k++)
		if (io.irs[k].seg == seg)
			return &io.irs[k];
	return NULL;
}

/* A table for each segment that has a unit, each unit's IRTA at its
 * segment's. NULL, or why not. */
static const char *tables_of_segments(uint32_t size_field, bool need_eim, char *err, size_t errlen)
{
	uint64_t bytes = 16ull << (size_field + 1);
	io.nirs = 0;
	for (uint32_t i = 0; i < io.nunits; i++) {
		uint16_t seg = io.dmar.drhd[i].segment;
		struct irt_seg *t = irt_of(seg);
		if (!t && io.nirs == IOMMU_MAX_SEGS)
			return "units in more PCI segments than the hypervisor keeps tables for (IOMMU_MAX_SEGS)";
		if (!t) {
			t = &io.irs[io.nirs++];
			t->seg = seg;
			t->irt = page_alloc(bytes / PAGE_SIZE);
			t->irte_unit = page_alloc(ALIGN_UP(2u << size_field, PAGE_SIZE) / PAGE_SIZE);
			t->irte_writes = page_alloc(ALIGN_UP(4u << size_field, PAGE_SIZE) / PAGE_SIZE);
			if (!t->irt || !t->irte_unit || !t->irte_writes)
				return "no memory for the table";
			memset(t->irt, 0, bytes);
			memset(t->irte_unit, IRTE_ANY, 2u << size_field);
			memset(t->irte_writes, 0, 4u << size_field);
		}
		if (vtd_enable_ir(&io.unit[i], (paddr_t)(uintptr_t)t->irt, size_field, need_eim, err, errlen))
			return err;
	}
	return NULL;
}

bool iommu_ir_own(const struct acpi_info *acpi, bool need_eim, bool asked, uint32_t msi_irtes)
{
	char err[200];
	const char *why = NULL;
	if (!io.on)
		why = "DMA remapping is off";
	for (uint32_t i = 0; !why && i < io.nunits; i++) {
		const struct vtd_unit *u = &io.unit[i];
		if (!(u->ecap & VTD_ECAP_IR) || !u->qi)
			why = "a unit has no interrupt remapping (ECAP.IR) or no invalidation queue";
		else if (need_eim && !(u->ecap & VTD_ECAP_EIM))
			why = "a unit has no extended interrupt mode (ECAP.EIM) for 32-bit destinations";
	}
	uint32_t n = acpi->nioapics;
	if (!why && !n)
		why = "no IOAPIC in the MADT";
	/* 2^(S+1) entries: VIOAPIC_PINS (256) per IOAPIC, then the MSIs' as
	 * the scan counted them; at most 2^16 (S = 15). */
	uint64_t want = n * 256ull + msi_irtes;
	uint32_t size_field = 7;
	while (!why && (2ull << size_field) < want && size_field < 15)
		size_field++;
	if (!why && n * 256ull > (2ull << size_field))
		why = "more IOAPICs than one table indexes";
	for (uint32_t k = 0; !why && k < n; k++) {
		struct dmar_scope sc = { .type = DMAR_SCOPE_IOAPIC, .enum_id = acpi->ioapic[k].id };
		if (ioapic_sid(acpi->ioapic[k].id) < 0)
			why = "an IOAPIC of the MADT has no device scope in the DMAR (its source ID unknown)";
		else if (dmar_unit_of(&io.dmar, 0, &sc) < 0)
			why = "an IOAPIC of the MADT lies under no unit of PCI segment 0";
	}
	if (!why) {
		io.sid = page_alloc(ALIGN_UP(n * sizeof *io.sid, PAGE_SIZE) / PAGE_SIZE);
		if (!io.sid)
			why = "no memory for the table";
	}
	if (!why) {
		io.irt_entries = 2u << size_field;
		why = tables_of_segments(size_field, need_eim, err, sizeof err);
	}
	if (!why) {
		for (uint32_t k = 0; k < n; k++) {
			io.sid[k] = (uint16_t)ioapic_sid(acpi->ioapic[k].id);
			struct dmar_scope sc = { .type = DMAR_SCOPE_IOAPIC, .enum_id = acpi->ioapic[k].id };
			iommu_irte_owner(0, iommu_ioapic_irte_base(k), 256, dmar_unit_of(&io.dmar, 0, &sc));
		}
	}
	if (why) {
		for (uint32_t i = 0; io.irt_entries && i < io.nunits; i++)
			vtd_disable_ir(&io.unit[i]);     /* a unit turned on before another refused */
		io.nirs = 0;
		io.irt_entries = 0;
		if (asked)
			pr_warn("iommu: intremap=on: interrupt remapping not owned: %s; IOAPIC pins in compatibility format, CPUs above APIC ID 255 parked\n",
				why);
		else
			pr_info("iommu: intremap=auto: interrupt remapping not owned: %s; IOAPIC pins and MSIs in compatibility format, CPUs above APIC ID 255 parked\n",
				why);
		return false;
	}
	io.ir_owned = true;
	io.ir_eim = need_eim;
	io.msi_irte_base = n * 256u;
	pr_info("iommu: interrupt remapping owned: a table of %u entries (%u for MSIs, %u wanted by the scan) for each of %u PCI segment%s, in %u unit%s, %s destinations, compatibility format blocked; %u IOAPIC%s (source IDs from the DMAR)\n",
		io.irt_entries, io.irt_entries - io.msi_irte_base, msi_irtes, io.nirs, io.nirs == 1 ? "" : "s", io.nunits,
		io.nunits == 1 ? "" : "s", need_eim ? "32-bit (EIM)" : "8-bit", n, n == 1 ? "" : "s");
	if (want > io.irt_entries)
		pr_warn("iommu: the scan wants %llu IRTEs, a table holds %u: the functions past them have no IRTE (their MSIs refused, counted as no_irte_left)\n",
			(unsigned long long)want, io.irt_entries);
	return true;
}

void iommu_ir_release(const char *why)
{
	if (!io.ir_owned)
		return;
	uint32_t stuck = 0;
	for (uint32_t i = 0; i < io.nunits; i++)
		stuck += !vtd_disable_ir(&io.unit[i]);
	io.ir_owned = false;
	pr_warn("iommu: interrupt remapping given up: %s; compatibility format again%s\n", why,
		stuck ? ", but a unit did not turn it off" : "");
}

bool iommu_ir_eim(void) { return io.ir_eim; }
uint32_t iommu_ioapic_irte_base(uint32_t k) { return k * 256; }
uint32_t iommu_msi_irte_base(void) { return io.msi_irte_base; }
uint32_t iommu_msi_irte_count(uint16_t seg)
{
	return io.ir_owned && irt_of(seg) ? io.irt_entries - io.msi_irte_base : 0;
}
bool iommu_ir_posting(void)
{
	bool all = io.ir_owned && io.nunits;
	for (uint32_t i = 0; all && i < io.nunits; i++)
		all = io.unit[i].cap & VTD_CAP_PI;
	return all;
}
/* VT-d "Remapped Interrupts" IRTE: P bit 0, destination 63:32 (EIM) or 47:40. */
static uint64_t irte_lo(uint16_t seg, uint32_t index)
{
	const struct irt_seg *t = irt_of(seg);
	return t && index < io.irt_entries ? t->irt[2 * (uint64_t)index] : 0;
}
bool iommu_irte_present(uint16_t seg, uint32_t index) { return irte_lo(seg, index) & 1; }
uint32_t iommu_irte_dest(uint16_t seg, uint32_t index)
{
	uint64_t lo = irte_lo(seg, index);
	return io.ir_eim ? (uint32_t)(lo >> 32) : (uint32_t)(lo >> 40) & 0xff;
}
uint64_t iommu_irte_hi(uint16_t seg, uint32_t index)
{
	const struct irt_seg *t = irt_of(seg);
	return t && index < io.irt_entries ? t->irt[2 * (uint64_t)index + 1] : 0;
}
uint16_t iommu_ioapic_sid(uint32_t k) { return io.sid[k]; }

/* 128 bits at once (CMPXCHG16B: every x86-64 CPU with VT-d has it): a
 * unit that reads the entry between two 64-bit stores could deliver a
 * posted interrupt to a descriptor address half old, half new (VT-d,
 * "Interrupt Remapping Table Entry (IRTE) for Posted Interrupts": software
 * updates a present entry with a 128-bit atomic operation). */
void irte_store128(volatile uint64_t *e, uint64_t lo, uint64_t hi)
{
	uint64_t olo = e[0], ohi = e[1];
	for (;;) {
		bool done;
		__asm__ volatile("lock cmpxchg16b %1"
				 : "=@ccz"(done), "+m"(*(volatile unsigned __int128 *)e), "+a"(olo), "+d"(ohi)
				 : "b"(lo), "c"(hi)
				 : "memory");
		if (done)
			return;              /* else olo:ohi hold what the entry held: try again */
	}
}

void iommu_irte_owner(uint16_t seg, uint32_t first, uint32_t count, int unit)
{
	struct irt_seg *t = irt_of(seg);
	for (uint32_t i = first; t && i < first + count && i < io.irt_entries; i++)
		t->irte_unit[i] = unit >= 0 && (uint32_t)unit < io.nunits && unit < IRTE_ANY ? (uint8_t)unit : IRTE_ANY;
}

int iommu_unit_of_path(uint16_t seg, uint8_t start_bus, const uint8_t (*path)[2], uint32_t n)
{
	struct dmar_scope sc = { .type = DMAR_SCOPE_ENDPOINT, .bus = start_bus };
	if (!n || n > DMAR_MAX_PATH)
		return -1;
	sc.npath = (uint8_t)n;
	memcpy(sc.path, path, n * sizeof *path);
	return dmar_unit_exact(&io.dmar, seg, &sc);   /* the catch-all's: not known, every unit of the segment */
}

void iommu_irte_write(uint16_t seg, uint32_t index, uint64_t lo, uint64_t hi)
{
	struct irt_seg *t = irt_of(seg);
	if (!t || index >= io.irt_entries)
		return;                          /* no table there: the callers take indexes from it */
	irte_store128(t->irt + 2 * (uint64_t)index, lo, hi);
	if (t->irte_writes[index] != UINT16_MAX)
		t->irte_writes[index]++;
	/* Then that index's cached copy, in the unit that remaps its source
	 * (the one table is every unit's, but a unit caches only the entries
	 * its own requests used), or in every unit where the source's unit is
	 * not known. */
	char err[200];
	uint8_t owner = t->irte_unit[index];
	for (uint32_t i = 0; i < io.nunits; i++)
		if (io.dmar.drhd[i].segment == seg && (owner == IRTE_ANY || owner == i) && vtd_invalidate_iec_index(&io.unit[i], index, err, sizeof err))
			pr_err("%s\n", err);
}

int iommu_iec_invalidate(char *err, size_t errlen)
{
	for (uint32_t i = 0; i < io.nunits; i++)
		if (vtd_invalidate_iec(&io.unit[i], err, errlen))
			return -1;
	return 0;
}

/* The fault records of every unit read, cleared and counted by one CPU at a
 * time: the fault event on the boot CPU, the report and the test aid. */
static spinlock_t fault_lock;

void iommu_fault_interrupt(void)
{
	io.fault_events++;
	iommu_poll_faults(NULL);
}

static void iommu_host_irq(uint8_t vector)
{
	if (vector == IOMMU_FAULT_VECTOR)
		iommu_fault_interrupt();
}

uint32_t iommu_poll_faults(struct vtd_fault *last)
{
	struct vtd_fault f[16];
	uint32_t total = 0;
	spin_lock(&fault_lock);
	for (uint32_t i = 0; i < io.nunits; i++) {
		if (!io.unit[i].on)
			continue;
		bool overflow;
		uint32_t n = vtd_read_faults(&io.unit[i], f, ARRAY_SIZE(f), &overflow);
		if (overflow && ++io.overflows <= FAULT_LINES)
			pr_warn("iommu: unit %u: fault recording overflowed: faults lost\n", i);
		for (uint32_t k = 0; k < n; k++) {
			io.by_reason[f[k].reason < FAULT_REASONS ? f[k].reason : FAULT_REASONS]++;
			uint64_t seen = io.faults + io.irq_faults + 1;
			if (seen == FAULT_LINES + 1)
				pr_warn("iommu: more than %u faults: the rest counted, not printed (hvstat: iommu)\n", FAULT_LINES);
			if (f[k].reason >= FR_IR_FIRST) {
				/* An interrupt request blocked: the record's FI holds
				 * its interrupt_index in bits 63:48, not an address. */
				io.irq_faults++;
				if (seen <= FAULT_LINES)
					pr_warn("iommu: interrupt fault %llu on unit %u: source %02x:%02x.%u (0x%04x) index %llu, reason 0x%x (%s): blocked, recorded\n",
						(unsigned long long)io.irq_faults, i, f[k].sid >> 8, (f[k].sid >> 3) & 31, f[k].sid & 7,
						f[k].sid, (unsigned long long)(f[k].addr >> 48), f[k].reason,
						vtd_fault_reason_name(f[k].reason));
				continue;
			}
			io.faults++;
			if (f[k].read)
				io.reads++;
			else
				io.writes++;
			if (seen <= FAULT_LINES)
				pr_warn("iommu: DMA fault %llu on unit %u: source %02x:%02x.%u (0x%04x) %s at 0x%llx, reason %u (%s): blocked, recorded\n",
					(unsigned long long)io.faults, i, f[k].sid >> 8, (f[k].sid >> 3) & 31, f[k].sid & 7, f[k].sid,
					f[k].read ? "read" : "write", (unsigned long long)f[k].addr, f[k].reason,
					vtd_fault_reason_name(f[k].reason));
			if (last)
				*last = f[k];
		}
		total += n;
	}
	spin_unlock(&fault_lock);
	return total;
}

void iommu_report(void)
{
	iommu_poll_faults(NULL);
	uint32_t queued = 0;
	uint64_t waits = 0;
	for (uint32_t i = 0; i < io.nunits; i++) {
		queued += io.unit[i].qi;
		waits += io.unit[i].qi_waits;
	}
	uint64_t qerr = 0, qto = 0;
	for (uint32_t i = 0; i < io.nunits; i++) {
		qerr += io.unit[i].qi_iqe + io.unit[i].qi_ite + io.unit[i].qi_ice;
		qto += io.unit[i].qi_timeouts;
	}
	pr_info("hvstat: iommu dma_isolation=%s units=%u levels=%d faults=%llu reads=%llu writes=%llu overflows=%llu invalidation=%s qi_waits=%llu qi_errors=%llu qi_timeouts=%llu irq_faults=%llu fault_events=%llu\n",
		io.on ? "on" : "off", io.nunits, io.levels, (unsigned long long)io.faults, (unsigned long long)io.reads,
		(unsigned long long)io.writes, (unsigned long long)io.overflows,
		!io.on ? "none" : queued == io.nunits ? "queued" : queued ? "mixed" : "registers", (unsigned long long)waits,
		(unsigned long long)qerr, (unsigned long long)qto, (unsigned long long)io.irq_faults,
		(unsigned long long)io.fault_events);
	for (uint32_t r = 0; r <= FAULT_REASONS; r++)
		if (io.by_reason[r])
			pr_info("hvstat: iommu fault_reason=%u count=%llu\n", r, (unsigned long long)io.by_reason[r]);
	/* The invalidations each unit was given, and each IRTE's writes (each
	 * one invalidated by index in the unit that remaps its source, or in
	 * every unit of its segment: unit=any). */
	for (uint32_t i = 0; io.on && i < io.nunits; i++) {
		const struct vtd_unit *u = &io.unit[i];
		pr_info("hvstat: iommu unit=0x%llx cc_inv=%llu iotlb_inv=%llu iec_inv=%llu iec_index_inv=%llu qi_waits=%llu\n",
			(unsigned long long)u->base, (unsigned long long)u->inv_cc, (unsigned long long)u->inv_iotlb,
			(unsigned long long)u->inv_iec, (unsigned long long)u->inv_iec_index, (unsigned long long)u->qi_waits);
	}
	for (uint32_t k = 0; k < io.nirs; k++) {
		const struct irt_seg *t = &io.irs[k];
		for (uint32_t x = 0; t->irte_writes && x < io.irt_entries; x++) {
			if (!t->irte_writes[x])
				continue;
			uint8_t o = t->irte_unit[x];
			if (o == IRTE_ANY)
				pr_info("hvstat: iommu irte=%u seg=%u unit=any writes=%u\n", x, t->seg, t->irte_writes[x]);
			else
				pr_info("hvstat: iommu irte=%u seg=%u unit=0x%llx writes=%u\n", x, t->seg,
					(unsigned long long)io.unit[o].base, t->irte_writes[x]);
		}
	}
}
