/* The guest's virtual IOAPIC (issue 27, part 1): the IOAPIC pages are not in
 * the guest's EPT; its IOREGSEL/IOWIN (and EOI) accesses land here, against
 * a per-pin virtual redirection entry, and the hypervisor alone programs the
 * physical pin: in compatibility format with the vCPU's physical APIC ID,
 * or, where the hypervisor owns VT-d interrupt remapping, in remappable
 * format through one IRTE per pin that names the vCPU's host APIC ID.
 * Pure logic over one IOAPIC: the caller serialises (one lock), reads and
 * writes the physical IOAPIC through vioapic_hw. Register interface: 82093AA
 * data sheet (IOREGSEL at +0x00, IOWIN at +0x10; ID 0x00, VER 0x01, ARB
 * 0x02, RTE n at 0x10 + 2n) and the ICH/PCH data sheets (EOI at +0x40 on a
 * version 0x20 IOAPIC). */
#ifndef APIC_VIOAPIC_H
#define APIC_VIOAPIC_H
#include "../lib/types.h"

#define VIOAPIC_PINS     256             /* VER 23:16 is 8 bits: at most 256 entries */
#define VIOAPIC_REGSEL   0x00
#define VIOAPIC_WIN      0x10
#define VIOAPIC_EOI      0x40
/* RTE bits (82093AA, "I/O Redirection Table Registers"). */
#define VIOAPIC_VECTOR(r)  ((uint8_t)(r))
#define VIOAPIC_DLM(r)     ((unsigned)((r) >> 8) & 7)
#define VIOAPIC_LOGICAL    BIT(11)
#define VIOAPIC_DELIVS     BIT(12)       /* read-only: delivery status */
#define VIOAPIC_ACTIVE_LOW BIT(13)
#define VIOAPIC_REMOTE_IRR BIT(14)       /* read-only: level accepted, no EOI yet */
#define VIOAPIC_LEVEL      BIT(15)
#define VIOAPIC_MASKED     BIT(16)
#define VIOAPIC_DEST(r)    ((uint8_t)((r) >> 56))
/* KVM's MSI_EXT_DEST_ID (Linux arch/x86/kernel/apic/io_apic.c): bits 55:49
 * carry destination bits 14:8 of a physical destination; bit 48 stays 0. */
#define VIOAPIC_EXT_DEST(r) ((unsigned)((r) >> 49) & 0x7f)
#define VIOAPIC_FORMAT      BIT(48)    /* remappable format (VT-d) */
#define VIOAPIC_RO         (VIOAPIC_DELIVS | VIOAPIC_REMOTE_IRR)
/* What a guest write keeps: 63:48 (destination; 55:48 the PCH's extended
 * destination and remappable-format bits, refused when set) and 16:0 less
 * the read-only bits. 47:17 are reserved and read 0. */
#define VIOAPIC_RTE_RW     (0xffff000000000000ull | 0x1ffffull)

/* Why a pin is not routed (its physical pin masked); counted per pin. */
enum vioapic_refusal {
	VR_NONE = 0, VR_SMI, VR_INIT, VR_EXTINT, VR_RESERVED_MODE, VR_NMI_NOT_ONE, VR_VECTOR_LOW,
	VR_VECTOR_HOST, VR_NO_VCPU, VR_MULTICAST, VR_XAPIC_LOGICAL, VR_DEST_ABOVE_255, VR_EXT_DEST,
	VR_VECTOR_HOST_CLASS,            /* in (or above) the priority class of a hypervisor vector: held in a
	                                    CPU's ISR it would mask the hypervisor's vectors there */
	VR_COUNT
};
extern const char *const vioapic_refusal_names[VR_COUNT];

/* The guest's vCPUs as the router sees them. */
struct vioapic_dom {
	const uint32_t *apic_id;        /* the guest's APIC ID of vCPU i */
	const uint32_t *host_apic_id;   /* the APIC ID of the CPU vCPU i runs on */
	uint32_t n;
	bool guest_x2apic;              /* the guest's APIC mode (logical destinations are x2APIC cluster) */
	uint64_t host_vectors[4];       /* vectors the hypervisor owns on the physical APICs */
	/* Owned VT-d interrupt remapping (docs/iommu.md): physical entries in
	 * remappable format through an IRTE per pin; eim: the IRTE holds a
	 * 32-bit (x2APIC) destination, else 8 bits; ext_dest: KVM's
	 * MSI_EXT_DEST_ID is offered to the guest (only with remap): its
	 * physical destinations are 15 bits, 55:49 and 63:56. */
	bool remap, eim, ext_dest;
	/* VT-d posting (every unit has CAP.PI, the virtual model): an edge
	 * fixed or lowest-priority route is a posted IRTE on the chosen
	 * vCPU's own posted-interrupt descriptor, pid[i] (its physical
	 * address): no exit while the vCPU runs. NMI and level-triggered
	 * routes stay remapped (the level EOI must reach the IOAPIC). */
	bool post;
	const uint64_t *pid;
};

/* VT-d "Interrupt Remapping Table Entry (IRTE) for Remapped Interrupts",
 * the fields the router fills: P 0, DM 2, TM 4, DLM 7:5, vector 23:16,
 * destination 63:32 (EIM) or 47:40, SID 79:64, SQ 81:80, SVT 83:82; and
 * "for Posted Interrupts": P 0, URG 14, IM 15 = 1, vector 23:16, the
 * descriptor's address 31:6 in 63:38 and 63:32 in 127:96, SID/SQ/SVT. */
struct vioapic_irte {
	uint64_t lo, hi;
};

/* Whom an installed route reaches and how (the report): directly (a
 * compatibility-format destination), through a remapped IRTE, or posted
 * into a vCPU's descriptor; vcpu -1 when no vCPU has that destination. */
enum vioapic_mode { VMODE_DIRECT, VMODE_REMAPPED, VMODE_POSTED, VMODE_COUNT };
extern const char *const vioapic_mode_names[VMODE_COUNT];
struct vioapic_reach {
	uint8_t mode;
	int32_t vcpu;
	uint32_t host_id;               /* the host APIC ID notified */
};
/* From the compatibility destination 'dest' without remapping, else from
 * the IRTE (its destination, or its descriptor's address). Pure. */
struct vioapic_reach vioapic_reach(const struct vioapic_dom *d, uint32_t dest, const struct vioapic_irte *e);

/* The physical IOAPIC as vioapic sees it (one register at a time). */
struct vioapic_hw {
	uint32_t (*read)(void *ctx, uint32_t reg);
	void (*write)(void *ctx, uint32_t reg, uint32_t val);
	void (*eoi)(void *ctx, uint8_t vector);   /* the physical EOI register (version 0x20) */
	void *ctx;
	/* With remapping: writes IRTE 'index' and invalidates its interrupt
	 * entry cache entry (VT-d "Interrupt Entry Cache Invalidate") before
	 * it returns. */
	void (*irte)(void *ctx, uint32_t index, const struct vioapic_irte *e);
};

struct vioapic_pin {
	uint64_t vrte;                  /* the guest's entry, read-only bits clear */
	uint64_t prte;                  /* what the physical pin holds */
	uint8_t refused;                /* enum vioapic_refusal of the current entry */
	uint32_t refusals;              /* unmasked entries refused */
	uint32_t writes;                /* guest writes to the entry */
	uint32_t routes;                /* times the physical pin was programmed unmasked */
	uint8_t last_vector;            /* the vector it last had then */
	struct vioapic_reach reach;     /* and whom it reached, how */
	struct vioapic_irte irte;       /* with remapping: its IRTE as last written */
	/* The hypervisor's own (vioapic_host_pin: the console UART's receive
	 * interrupt): the guest's entry is virtual alone, never the pin's. */
	bool host;
};

struct vioapic {
	uint32_t id, ver, arb;          /* ID (27:24 writable), VER and ARB (read-only) */
	uint32_t npins;
	uint32_t regsel;                /* IOREGSEL, bits 7:0 */
	/* With remapping (set by the caller after vioapic_init): pin p uses
	 * IRTE irte_base + p; sid is this IOAPIC's source ID (the DMAR's
	 * IOAPIC device scope whose enumeration ID is its MADT ID). */
	uint32_t irte_base;
	uint16_t sid;
	struct vioapic_pin pin[VIOAPIC_PINS];
	uint64_t eois;                  /* EOI-register writes forwarded */
	uint32_t refused_by[VR_COUNT];  /* refusals (unmasked entries) by reason */
};

/* Takes the physical IOAPIC's ID, VER, ARB and every entry, masked, as the
 * guest's initial state (the 82093AA resets with every entry masked). */
void vioapic_init(struct vioapic *a, const struct vioapic_hw *hw);
/* A 32-bit access at offset 'off' of the IOAPIC page (aligned, else a write
 * is dropped and a read gives 0; see vioapic.c). */
uint32_t vioapic_read(struct vioapic *a, const struct vioapic_hw *hw, uint32_t off);
/* Returns the pin whose entry the write changed (its physical pin
 * reprogrammed already), or -1. */
int vioapic_write(struct vioapic *a, const struct vioapic_dom *d, const struct vioapic_hw *hw, uint32_t off,
		  uint32_t val);
/* The physical entry for the guest's entry 'vrte', and VR_NONE; or a
 * refusal and a masked physical entry. Pure. Compatibility format; with
 * d->remap, the remappable entry pointing at IRTE 'index' and that IRTE
 * in *irte (source check 'src', VIOAPIC_SRC_ID or pci/alias.h's
 * VMSI_SRC_*; not present when refused). */
enum vioapic_refusal vioapic_route(const struct vioapic_dom *d, uint64_t vrte, uint64_t *prte);
/* An IRTE's source fields as bits 19:0 of its upper quadword (VT-d,
 * "Interrupt Remapping Table Entry (IRTE)": SID 79:64, SQ 81:80, SVT
 * 83:82): SVT 01b, SQ 00b, the whole requester ID (an IOAPIC's). */
#define VIOAPIC_SRC_ID(sid) ((uint32_t)(uint16_t)(sid) | 1u << 18)
enum vioapic_refusal vioapic_route_ir(const struct vioapic_dom *d, uint64_t vrte, uint32_t index, uint32_t src,
				      uint64_t *prte, struct vioapic_irte *irte);
/* The guest's entry for 'pin' as it wrote it (read-only bits clear), 0 past
 * the last pin: what the console's virtual UART routes by, no physical
 * access. */
uint64_t vioapic_rte(const struct vioapic *a, uint32_t pin);
/* Pin 'pin' taken by the hypervisor: an edge, active high, fixed, to the
 * host's vector 'vector' on the CPU with APIC ID 'host' (with remapping
 * through the pin's IRTE); the guest's writes of its entry change only the
 * virtual one from now. false: out of range, or a destination the format
 * cannot name (above 255 without x2APIC remapping). */
bool vioapic_host_pin(struct vioapic *a, const struct vioapic_dom *d, const struct vioapic_hw *hw, uint32_t pin,
		      uint8_t vector, uint32_t host);
/* The hypervisor's pin masked (before a reset: INIT leaves the IOAPIC as
 * it is, and the firmware meets what it still delivers). */
void vioapic_host_pin_off(struct vioapic *a, const struct vioapic_hw *hw, uint32_t pin);
#endif
