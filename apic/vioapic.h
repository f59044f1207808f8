/* The guest's virtual IOAPIC (issue 27, part 1): the IOAPIC pages are not in
 * the guest's EPT; its IOREGSEL/IOWIN (and EOI) accesses land here, against
 * a per-pin virtual redirection entry, and the hypervisor alone programs the
 * physical pin, in compatibility format with the vCPU's physical APIC ID.
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
#define VIOAPIC_RO         (VIOAPIC_DELIVS | VIOAPIC_REMOTE_IRR)
/* What a guest write keeps: 63:48 (destination; 55:48 the PCH's extended
 * destination and remappable-format bits, refused when set) and 16:0 less
 * the read-only bits. 47:17 are reserved and read 0. */
#define VIOAPIC_RTE_RW     (0xffff000000000000ull | 0x1ffffull)

/* Why a pin is not routed (its physical pin masked); counted per pin. */
enum vioapic_refusal {
	VR_NONE = 0, VR_SMI, VR_INIT, VR_EXTINT, VR_RESERVED_MODE, VR_NMI_NOT_ONE, VR_VECTOR_LOW,
	VR_VECTOR_HOST, VR_NO_VCPU, VR_MULTICAST, VR_XAPIC_LOGICAL, VR_DEST_ABOVE_255, VR_EXT_DEST, VR_COUNT
};
extern const char *const vioapic_refusal_names[VR_COUNT];

/* The guest's vCPUs as the router sees them. */
struct vioapic_dom {
	const uint32_t *apic_id;        /* the guest's APIC ID of vCPU i */
	const uint32_t *host_apic_id;   /* the APIC ID of the CPU vCPU i runs on */
	uint32_t n;
	bool guest_x2apic;              /* the guest's APIC mode (logical destinations are x2APIC cluster) */
	uint64_t host_vectors[4];       /* vectors the hypervisor owns on the physical APICs */
};

/* The physical IOAPIC as vioapic sees it (one register at a time). */
struct vioapic_hw {
	uint32_t (*read)(void *ctx, uint32_t reg);
	void (*write)(void *ctx, uint32_t reg, uint32_t val);
	void (*eoi)(void *ctx, uint8_t vector);   /* the physical EOI register (version 0x20) */
	void *ctx;
};

struct vioapic_pin {
	uint64_t vrte;                  /* the guest's entry, read-only bits clear */
	uint64_t prte;                  /* what the physical pin holds */
	uint8_t refused;                /* enum vioapic_refusal of the current entry */
	uint32_t refusals;              /* unmasked entries refused */
	uint32_t writes;                /* guest writes to the entry */
	uint32_t routes;                /* times the physical pin was programmed unmasked */
	uint8_t last_vector;            /* the vector it last had then */
	uint8_t last_dest;              /* and the host APIC ID it named */
};

struct vioapic {
	uint32_t id, ver, arb;          /* ID (27:24 writable), VER and ARB (read-only) */
	uint32_t npins;
	uint32_t regsel;                /* IOREGSEL, bits 7:0 */
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
 * refusal and a masked physical entry. Pure. */
enum vioapic_refusal vioapic_route(const struct vioapic_dom *d, uint64_t vrte, uint64_t *prte);
/* The guest's entry for 'pin' as it wrote it (read-only bits clear), 0 past
 * the last pin: what the console's virtual UART routes by, no physical
 * access. */
uint64_t vioapic_rte(const struct vioapic *a, uint32_t pin);
#endif
