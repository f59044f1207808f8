/* ACPI table parser: RSDP -> XSDT/RSDT -> MADT (CPUs, IOAPICs) and FADT
 * (PM1 control ports, PM timer, reset register) -> DSDT (\_S5_ sleep type
 * values for soft power-off).  Physical memory is identity-mapped. */
#ifndef LIB_ACPI_H
#define LIB_ACPI_H
#include "types.h"
#include "spcr.h"

/* Room kept in acpi_info.cpu[] beyond the MADT's own CPUs (phantomcpu=). */
#define ACPI_CPU_SPARE 1

/* Generic Address Structure address space IDs (FADT reset register). */
#define ACPI_SPACE_MEMORY 0
#define ACPI_SPACE_IO     1
#define ACPI_SPACE_PCI    2

struct acpi_cpu {
	uint32_t apic_id;
	uint32_t uid;           /* ACPI processor UID (type 0: the 8-bit processor ID) */
	bool x2apic_entry;      /* came from a MADT type 9 (x2APIC) entry */
};

struct acpi_ioapic {
	uint32_t id;
	uint32_t addr;
	uint32_t gsi_base;
};

#define ACPI_MAX_MCFG 16                        /* MCFG entries kept (segments, or split bus ranges) */
struct acpi_info {
	paddr_t rsdp, root, madt, fadt, dsdt;   /* root = XSDT or RSDT; 0 = absent */
	paddr_t dmar;                           /* VT-d's table, found, not parsed (lib/dmar.h) */
	paddr_t srat;                           /* NUMA affinity, found, not parsed (lib/srat.h) */
	paddr_t hpet;                           /* the HPET's table; 0 = absent */
	uint64_t hpet_base;                     /* its first block's registers (memory); 0 = none usable */
	uint8_t hpet_number;
	paddr_t mcfg;                           /* PCI Express's ECAM table; 0 = absent */
	paddr_t spcr;                           /* the firmware's console port (lib/spcr.h); 0 = absent */
	bool spcr_ok;                           /* spcr_uart decoded: a 16550 the hypervisor can drive */
	struct uart_desc spcr_uart;
	/* Its entry for segment 0 (PCI Firmware Specification 3.0, "MCFG
	 * Table Description"): the window's base and bus range; base 0 = none. */
	uint64_t mcfg_base;
	uint8_t mcfg_bus_start, mcfg_bus_end;
	uint32_t mcfg_other_segments;           /* MCFG entries of segments other than 0 */
	/* Every entry, segment 0's included, in table order (the first
	 * ACPI_MAX_MCFG; nmcfg_dropped past them, said). */
	uint32_t nmcfg, nmcfg_dropped;
	struct acpi_mcfg { uint64_t base; uint16_t seg; uint8_t bus0, bus1; } mcfg_entry[ACPI_MAX_MCFG];
	bool xsdt;                              /* root is an XSDT */
	uint8_t rsdp_revision;
	uint32_t lapic_addr;                    /* MADT, or the 64-bit override (type 5) */
	/* Enabled CPUs (MADT types 0 and 9), deduplicated by APIC ID, in MADT
	 * order, and the IOAPICs. No fixed cap: the MADT is counted first and
	 * the arrays come from acpi_alloc, cpu_room = the count + ACPI_CPU_SPARE. */
	uint32_t ncpus, cpu_room;
	struct acpi_cpu *cpu;
	uint32_t max_apic_id;
	uint32_t nioapics, ioapic_room;
	struct acpi_ioapic *ioapic;
	/* FADT: power-off and PM timer.  I/O ports; X_ fields are preferred
	 * when valid and in I/O space.  0 = not present. */
	uint32_t pm1a_cnt, pm1b_cnt;
	uint32_t pm_tmr_port;
	bool pm_tmr_32bit;                      /* FADT flag TMR_VAL_EXT */
	bool s5_valid;                          /* \_S5_ found in the DSDT */
	uint8_t slp_typa, slp_typb;
	/* FADT reset register (optional; reset_valid when RESET_REG_SUP). */
	uint8_t reset_space;                    /* ACPI_SPACE_* */
	uint64_t reset_addr;
	uint8_t reset_value;
	bool reset_valid;
};

/* Parses RSDP -> XSDT (revision >= 2 with a nonzero address, else RSDT) ->
 * MADT and FADT (-> DSDT for \_S5_).  Returns 0, or -1 with a message naming
 * the table and the fault in err (e.g. "ACPI: MADT checksum bad (sum 0x5a)").
 * A missing FADT or a DSDT without \_S5_ only warns (s5_valid = false). */
int acpi_parse(paddr_t rsdp, struct acpi_info *out, char *err, size_t errlen);
/* Where acpi_parse finds room for the MADT's CPUs and IOAPICs: zeroed
 * bytes, 8-byte aligned, or NULL when there is none (then what does not fit
 * is named in one warning). The hypervisor's heap, a test's allocator. */
extern void *(*acpi_alloc)(size_t bytes);
/* Where the parser may read (default: everywhere); the hypervisor sets its
 * identity map, so that a table pointer into nothing is refused, not read. */
extern paddr_t acpi_readable_lo, acpi_readable_hi;

/* Scans the first KiB of the EBDA and 0xE0000-0xFFFFF for a valid RSDP
 * (legacy BIOS).  Returns its physical address, or 0 when not found. */
paddr_t acpi_find_rsdp_legacy(void);

/* One ECAM base per bus range of a segment (issue 43 item 8: a segment
 * may have several MCFG entries, each for its own buses): the base (bus
 * 0's, as the MCFG gives it) of the first entry that covers bus 'bus' of
 * segment seg, 0: none. */
uint64_t acpi_mcfg_base(const struct acpi_info *a, uint16_t seg, uint8_t bus);
/* The index of that entry in mcfg_entry[], -1: none. */
int acpi_mcfg_entry(const struct acpi_info *a, uint16_t seg, uint8_t bus);
/* Whether pa lies in an ECAM window of segment seg, the entry that covers
 * the bus there being the one it lies in: *bdf its function. */
bool acpi_mcfg_bdf(const struct acpi_info *a, uint16_t seg, uint64_t pa, uint16_t *bdf);


#endif
