/* The virtual IOAPIC at run time (ioapic=virtual, the virtual interrupt
 * model): the IOAPIC pages leave the guest's EPT, the guest's accesses
 * exit as EPT violations and are decoded (guest/mmio.c) and carried out
 * against apic/vioapic.c, which alone programs the physical IOAPICs. */
#ifndef VMX_VIOAPIC_TRAP_H
#define VMX_VIOAPIC_TRAP_H
#include "../lib/types.h"

struct acpi_info;
struct vcpu;
struct vioapic_dom;
struct vioapic_hw;

/* The router's view of the guest's vCPUs and of the hypervisor's own
 * vectors, with owned remapping as iommu_ir_owned() says (the MSI trap
 * routes through the same). */
void vioapic_dom_fill(struct vioapic_dom *d);
/* The physical IOAPIC at base as the router reaches it (IOREGSEL/IOWIN,
 * the EOI register, IRTEs through the hypervisor's own table). */
struct vioapic_hw vioapic_hw_at(paddr_t base);

/* Before the guest runs: every IOAPIC of the MADT (masked already) taken
 * over, its page out of the EPT at eptp. */
void vioapic_trap_setup(const struct acpi_info *acpi, uint64_t eptp);
/* Whether the virtual IOAPIC is on (vioapic_trap_setup ran). */
bool vioapic_trap_on(void);
/* An EPT violation at gpa: true when it was an IOAPIC page's (emulated,
 * RIP advanced; or an instruction that cannot be emulated: #GP). */
bool vioapic_trap_exit(struct vcpu *v, uint64_t gpa);
/* The guest's entry for GSI gsi (read-only bits clear), or -1 (no IOAPIC
 * has it): the console's virtual UART routes by it. */
int64_t vioapic_trap_gsi_rte(uint32_t gsi);
/* The physical pin of GSI gsi taken by the hypervisor (the console UART's
 * receive interrupt): an edge to 'vector' on the CPU host_apic_id; the
 * guest's entry for it stays virtual. false: no such pin, or not possible. */
bool vioapic_trap_own_gsi(uint32_t gsi, uint8_t vector, uint32_t host_apic_id);
/* Before a reset, every other CPU stopped: that pin masked again. */
void vioapic_trap_release_gsi(uint32_t gsi);
/* hvstat: one line per pin the guest programmed, one summary line. */
void vioapic_trap_report(void);
#endif
