/* iommutest=ioapic (see irtest.h). The RTC's periodic interrupt is a
 * device that fires without a driver: CMOS register B bit 6 (PIE) on, the
 * rate of register A (1024 Hz as the firmware leaves it); its IRQ line
 * stays asserted until register C is read, so each read of C allows the
 * next edge. The HPET's legacy replacement (general configuration bit 1)
 * would take IRQ 8 from the RTC: turned off for the test, then restored. */
#include "irtest.h"
#include "../apic/lapic.h"
#include "../apic/vioapic.h"
#include "../vmx/vioapic_trap.h"
#include "edutest.h"
#include "../iommu/iommu.h"
#include "../vmx/msi_trap.h"
#include "msi_edutest.h"
#include "../lib/cpu.h"
#include "../lib/printk.h"
#include "../lib/string.h"
#include "../lib/tsc.h"

#define RTC_PIN      8
#define HPET_BASE    0xfed00000ull     /* QEMU q35's HPET */
#define HPET_CFG     0x10
#define HPET_LEG_RT  BIT(1)
#define WAIT_US      200000u
#define V_HERE       0x68
#define V_EXTINT     0x6a
#define V_FAR        0x69

static uint8_t cmos_rd(uint8_t r)
{
	outb(0x70, r);
	return inb(0x71);
}

static void cmos_wr(uint8_t r, uint8_t v)
{
	outb(0x70, r);
	outb(0x71, v);
}

static struct vioapic va;

/* The guest's two trapped writes for an entry: high half, then low. */
static void guest_rte(const struct vioapic_dom *d, const struct vioapic_hw *hw, uint64_t rte)
{
	vioapic_write(&va, d, hw, VIOAPIC_REGSEL, 0x11 + 2 * RTC_PIN);
	vioapic_write(&va, d, hw, VIOAPIC_WIN, (uint32_t)(rte >> 32));
	vioapic_write(&va, d, hw, VIOAPIC_REGSEL, 0x10 + 2 * RTC_PIN);
	vioapic_write(&va, d, hw, VIOAPIC_WIN, (uint32_t)rte);
}

/* RTC edges for a while (register C read each time), for QEMU's trace. */
static void edges(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		cmos_rd(0x0c);
		uint64_t until = rdtsc() + tsc_from_us(5000);
		while (rdtsc() < until)
			;
	}
}

static bool check(const char *what, bool ok, uint32_t *pass, uint32_t *total)
{
	(*total)++;
	*pass += ok;
	pr_info("iommutest: ioapic: %s: %s\n", what, ok ? "ok" : "FAIL");
	return ok;
}

static void show(const char *what, uint64_t guest)
{
	const struct vioapic_pin *p = &va.pin[RTC_PIN];
	pr_info("iommutest: ioapic: %s: guest RTE 0x%016llx -> %s, physical RTE 0x%016llx, IRTE %u = %016llx %016llx\n", what,
		(unsigned long long)guest, vioapic_refusal_names[p->refused], (unsigned long long)p->prte,
		va.irte_base + RTC_PIN, (unsigned long long)p->irte.hi, (unsigned long long)p->irte.lo);
}

bool ioapic_ir_test(const struct acpi_info *acpi, const struct memmap *mem, bool (*requested)(uint8_t vector),
		    uint32_t apic_id)
{
	uint32_t pass = 0, total = 0;
	bool need_eim;
	uint32_t far;
	if (!iommutest_own_remapping(acpi, mem, "ioapic", &need_eim, &far))
		return false;

	/* The virtual IOAPIC as vioapic_trap.c sets it up for the guest: the
	 * guest's APIC IDs are the host's; vCPU 1 on the CPU above 255. */
	struct vioapic_hw hw = vioapic_hw_at(acpi->ioapic[0].addr);
	vioapic_init(&va, &hw);
	va.irte_base = iommu_ioapic_irte_base(0);
	va.sid = iommu_ioapic_sid(0);
	uint32_t ids[2] = { apic_id, far };
	struct vioapic_dom d = { .apic_id = ids, .host_apic_id = ids, .n = far ? 2 : 1, .guest_x2apic = true,
				 .remap = true, .eim = need_eim, .ext_dest = true };
	pr_info("iommutest: ioapic: IOAPIC %u at 0x%x, source ID 0x%04x, pin %u's IRTE %u; vCPU 0 on APIC ID %u%s\n",
		acpi->ioapic[0].id, acpi->ioapic[0].addr, va.sid, RTC_PIN, va.irte_base + RTC_PIN, apic_id,
		far ? "" : " (no CPU above APIC ID 255)");
	if (far)
		pr_info("iommutest: ioapic: vCPU 1 on APIC ID %u (above 255)\n", far);

	volatile uint64_t *hpet = (volatile uint64_t *)(uintptr_t)HPET_BASE;
	uint64_t hpet_cfg = hpet[HPET_CFG / 8];
	if (hpet_cfg & HPET_LEG_RT)
		hpet[HPET_CFG / 8] = hpet_cfg & ~HPET_LEG_RT;
	uint8_t b = cmos_rd(0x0b);
	cmos_wr(0x0b, b | 0x40);

	/* 1. Fixed, edge, physical, to vCPU 0: the vector in this CPU's IRR. */
	uint64_t r = V_HERE | (uint64_t)apic_id << 56;
	guest_rte(&d, &hw, r);
	show("to-this-cpu", r);
	cmos_rd(0x0c);
	check("to-this-cpu: vector 0x68 arrived through the IRTE", va.pin[RTC_PIN].refused == VR_NONE &&
	      (va.pin[RTC_PIN].prte >> 48 & 1) && iommu_vector_arrives(requested, V_HERE, WAIT_US), &pass, &total);

	/* 2. ExtINT: refused, the pin masked; nothing arrives. */
	r = V_EXTINT | 7ull << 8 | (uint64_t)apic_id << 56;
	guest_rte(&d, &hw, r);
	show("extint", r);
	edges(4);
	check("extint: refused, pin masked, vector 0x6a never arrived", va.pin[RTC_PIN].refused == VR_EXTINT &&
	      (va.pin[RTC_PIN].prte & VIOAPIC_MASKED) && !iommu_vector_arrives(requested, V_EXTINT, WAIT_US), &pass, &total);

	/* 3. Above 255: the 15-bit destination of MSI_EXT_DEST_ID (63:56 bits
	 * 7:0, 55:49 bits 14:8) to vCPU 1; the IRTE names its 32-bit APIC ID.
	 * Nothing may reach this CPU; QEMU's trace shows the destination. */
	if (far) {
		r = V_FAR | (uint64_t)(far & 0xff) << 56 | (uint64_t)(far >> 8 & 0x7f) << 49;
		guest_rte(&d, &hw, r);
		show("above-255", r);
		edges(8);
		check("above-255: IRTE destination is the far CPU's APIC ID, vector 0x69 not on this CPU",
		      va.pin[RTC_PIN].refused == VR_NONE && (uint32_t)(va.pin[RTC_PIN].irte.lo >> 32) == far &&
		      !iommu_vector_arrives(requested, V_FAR, WAIT_US), &pass, &total);
	}

	guest_rte(&d, &hw, VIOAPIC_MASKED);
	cmos_wr(0x0b, b);
	cmos_rd(0x0c);
	hpet[HPET_CFG / 8] = hpet_cfg;
	uint32_t faults = iommu_poll_faults(NULL);
	pr_info("iommutest: ioapic: %u of %u checks passed, %u remapping faults recorded\n", pass, total, faults);
	return pass == total;
}
