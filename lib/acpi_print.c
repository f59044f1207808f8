/* The ACPI tables' summary at boot (see acpi_print.h). */
#include "acpi_print.h"
#include "cpusum.h"
#include "printk.h"

/* A large MADT as runs of CPUs whose APIC IDs and UIDs both count up by
 * one, of one entry type (lib/cpusum.h: past the number of CPUs detailed):
 * "0-143/0-143 256-399/144-287(x2)", six runs a line. */
static void acpi_print_cpu_runs(const struct acpi_info *a)
{
	char line[160];
	size_t len = 0;
	uint32_t runs = 0;
	for (uint32_t i = 0; i < a->ncpus;) {
		uint32_t j = i;
		while (j + 1 < a->ncpus && a->cpu[j + 1].apic_id == a->cpu[j].apic_id + 1 &&
		       a->cpu[j + 1].uid == a->cpu[j].uid + 1 && a->cpu[j + 1].x2apic_entry == a->cpu[i].x2apic_entry)
			j++;
		if (!len)
			len = (size_t)snprintf(line, sizeof line, "ACPI:   APIC ID/UID runs:");
		if (i == j)
			len += (size_t)snprintf(line + len, sizeof line - len, " %u/%u", a->cpu[i].apic_id, a->cpu[i].uid);
		else
			len += (size_t)snprintf(line + len, sizeof line - len, " %u-%u/%u-%u", a->cpu[i].apic_id,
						a->cpu[j].apic_id, a->cpu[i].uid, a->cpu[j].uid);
		if (len < sizeof line && a->cpu[i].x2apic_entry)
			len += (size_t)snprintf(line + len, sizeof line - len, "(x2)");
		i = j + 1;
		if (++runs % 6 == 0 || i == a->ncpus) {
			pr_info("%s\n", line);
			len = 0;
		}
	}
}

void acpi_print(const struct acpi_info *a)
{
	char line[160];
	size_t len;

	pr_info("ACPI: RSDP 0x%llx rev %u, %s 0x%llx\n", (unsigned long long)a->rsdp,
		a->rsdp_revision, a->xsdt ? "XSDT" : "RSDT", (unsigned long long)a->root);
	pr_info("ACPI: MADT 0x%llx, FADT 0x%llx, DSDT 0x%llx\n", (unsigned long long)a->madt,
		(unsigned long long)a->fadt, (unsigned long long)a->dsdt);
	pr_info("ACPI: LAPIC 0x%x, %u CPUs, max APIC ID %u\n", a->lapic_addr, a->ncpus,
		a->max_apic_id);
	if (!cpusum_detailed(a->ncpus)) {
		acpi_print_cpu_runs(a);
	} else {
		for (uint32_t i = 0; i < a->ncpus; i += 8) {
			len = (size_t)snprintf(line, sizeof line, "ACPI:   APIC ID/UID:");
			for (uint32_t k = i; k < a->ncpus && k < i + 8 && len < sizeof line; k++)
				len += (size_t)snprintf(line + len, sizeof line - len, " %u/%u%s",
							a->cpu[k].apic_id, a->cpu[k].uid,
							a->cpu[k].x2apic_entry ? "(x2)" : "");
			pr_info("%s\n", line);
		}
	}
	for (uint32_t i = 0; i < a->nioapics; i++)
		pr_info("ACPI: IOAPIC id %u at 0x%x, GSI base %u\n", a->ioapic[i].id,
			a->ioapic[i].addr, a->ioapic[i].gsi_base);
	pr_info("ACPI: PM1a_CNT 0x%x, PM1b_CNT 0x%x, PM timer 0x%x (%s)\n", a->pm1a_cnt,
		a->pm1b_cnt, a->pm_tmr_port, a->pm_tmr_32bit ? "32-bit" : "24-bit");
	if (a->hpet_base)
		pr_info("ACPI: HPET %u registers at 0x%llx\n", a->hpet_number, (unsigned long long)a->hpet_base);
	if (a->s5_valid)
		pr_info("ACPI: S5 SLP_TYPa %u, SLP_TYPb %u\n", a->slp_typa, a->slp_typb);
	else
		pr_info("ACPI: no S5 sleep type; power-off unavailable\n");
	if (a->reset_valid)
		pr_info("ACPI: reset register space %u addr 0x%llx value 0x%x\n", a->reset_space,
			(unsigned long long)a->reset_addr, a->reset_value);
}
