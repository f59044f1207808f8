/* Internal to vmx/msi_trap.c and vmx/msi_trap_report.c: the trap's
 * segments, its lock and its counts. */
#ifndef VMX_MSI_TRAP_INT_H
#define VMX_MSI_TRAP_INT_H
#include "../pci/vmsi.h"
#include "../lib/acpi.h"
#include "../lib/spinlock.h"

/* One PCI segment (an MCFG entry; segment 0 also without one, through the
 * ports): its functions, their configuration pages out of the EPT (PCI
 * Express Base Specification, "Enhanced Configuration Access Mechanism":
 * bus 27:20, device 19:15, function 14:12 above the window's base, which
 * the PCI Firmware Specification's MCFG gives for bus 0 of the segment),
 * and its routes: with owned remapping, its own table's IRTEs (a segment
 * without a unit is not remapped: compatibility format there). */
struct msi_seg {
	uint64_t ecam;                       /* the window's base (bus 0), 0: none */
	/* Configuration pages out of the EPT (bit bdf): each trapped
	 * function's, and each that held no function at boot, so that a
	 * function hot-added or a VF enabled later is found at the guest's
	 * first access (vmsi_seen); one found without MSI or MSI-X is given
	 * back. */
	uint8_t *ecam_out;
	struct vioapic_dom dom;
	struct vmsi_hw hw;                   /* the physical side: its ECAM, or the ports */
	struct vmsi s;
	uint32_t necam, ecam_absent, ecam_given_back;
	uint32_t ecam_moved, ecam_unfollowed;   /* pages taken out for a function's new BDF; none could be */
	uint32_t untrapped_said;             /* s.untrapped already said (functions found later without room) */
	uint8_t bus0, bus1;
	bool reached;                        /* scanned: ports, or a window the hypervisor maps */
};
extern struct msi_seg msi_segs[ACPI_MAX_MCFG + 1];   /* segment 0 without an entry, and every entry */
extern uint32_t msi_nsegs;
extern spinlock_t msi_lock;                        /* the virtual state and the physical CONFIG_ADDRESS */
extern bool msi_trap_on;
struct msi_trap_counts {
	uint64_t bad_insns, unaligned, late_pages, gone_pages, ecam_accesses;
};
extern struct msi_trap_counts msi_counts;
/* f's name: bus:device.function, with the segment before it when not 0. */
void msi_say_fn(char *b, size_t n, uint16_t seg, uint16_t bdf);
#endif
