/* IPIs in the virtual interrupt model (DESIGN.md, the IPI tiers). The
 * guest's x2APIC ICR writes and KVM's PV send-IPI hypercall are decoded here
 * and delivered through the posted-interrupt descriptors that the
 * PID-pointer table names, the very structures hardware IPI virtualization
 * walks. Pure logic over an ipi_domain: the hypervisor fills one with real
 * callbacks, the host unit tests with recording ones. */
#ifndef IPI_IPI_H
#define IPI_IPI_H
#include "../lib/types.h"
#include "../apic/pi.h"

/* x2APIC ICR (SDM Vol. 3A, "Interrupt Command Register (ICR)"; in x2APIC
 * mode one 64-bit MSR, 0x830, destination in bits 63:32). */
#define ICR_VECTOR(icr)      ((uint8_t)(icr))
#define ICR_MODE(icr)        (((icr) >> 8) & 7)
#define ICR_LOGICAL          BIT(11)
#define ICR_LEVEL_ASSERT     BIT(14)
#define ICR_TRIGGER_LEVEL    BIT(15)
#define ICR_SHORTHAND(icr)   (((icr) >> 18) & 3)
#define ICR_DEST(icr)        ((uint32_t)((icr) >> 32))
/* Bits that must be 0 in an x2APIC ICR write (#GP otherwise): 31:20, 17:16
 * and 13. Bit 12, the xAPIC's delivery status, does not exist in x2APIC
 * mode and "WRMSR to the ICR MSR ignores bit 12" (Intel's x2APIC
 * specification), as KVM does: it is not here, and no decoder reads it. */
#define ICR_X2APIC_RESERVED  (0xfff00000ull | BIT(17) | BIT(16) | BIT(13))

enum icr_mode { ICR_FIXED = 0, ICR_LOWEST = 1, ICR_SMI = 2, ICR_MODE3 = 3, ICR_NMI = 4, ICR_INIT = 5,
		ICR_SIPI = 6, ICR_MODE7 = 7 };
enum icr_shorthand { ICR_SH_NONE = 0, ICR_SH_SELF = 1, ICR_SH_ALL = 2, ICR_SH_OTHERS = 3 };
#define ICR_BROADCAST 0xffffffffu

/* KVM's PV send-IPI (Documentation/virt/kvm/x86/hypercalls.rst, KVM_HC_SEND_IPI):
 * a0 = bitmap of APIC IDs min..min+63, a1 = min+64..min+127, a2 = min,
 * a3 = ICR low (vector, delivery mode); RAX = number of vCPUs delivered to,
 * or a negative KVM error. */
#define KVM_HC_SEND_IPI 10
#define KVM_EINVAL      22

/* What ipi_* may do to the machine. ctx is passed back. */
struct ipi_ops {
	void (*notify)(void *ctx, uint32_t ndst, uint8_t nv);   /* send notification vector nv to x2APIC ID ndst */
	void (*nmi)(void *ctx, uint32_t vcpu);                  /* a virtual NMI for vCPU index */
	void (*init)(void *ctx, uint32_t vcpu);                 /* INIT to vCPU index */
	void (*sipi)(void *ctx, uint32_t vcpu, uint8_t vector); /* start-up IPI to vCPU index */
	/* Optional: a vector for the sender itself, set straight into its
	 * virtual IRR (the sender is in root mode on its own CPU); NULL: posted
	 * with a self-notification like any other. */
	void (*self)(void *ctx, uint8_t vector);
	void *ctx;
};

/* Per target vCPU: what was posted into its descriptor, and how often it was notified. */
struct ipi_target_stats {
	uint64_t posts, notifies;
	uint64_t vec_posts[256];
};

/* Per source vCPU: how its IPIs were served. */
struct ipi_src_stats {
	uint64_t fast;                 /* ICR writes served by the fast path (one exit each) */
	uint64_t slow_mode[8];         /* slow-path ICR writes by delivery mode (enum icr_mode) */
	uint64_t slow_shorthand[4];    /* ... and by shorthand (enum icr_shorthand) */
	uint64_t slow_logical;         /* ... with a logical destination */
	uint64_t dropped;              /* destinations that are not vCPUs of the guest */
	uint64_t refused;              /* SMI, reserved modes, vector < 16, reserved bits */
	uint64_t init_deassert;        /* INIT level de-assert: ignored, as in x2APIC mode */
	uint64_t pv_calls, pv_targets, pv_errors;
	uint64_t fast_logical;         /* logical (x2APIC cluster) ICR writes served by ipi_fast_logical */
};

/* The guest's vCPUs as the IPI code sees them. */
struct ipi_domain {
	const uint64_t *pid_table;       /* entry i: descriptor of APIC ID i | valid (apic/pi.h) */
	uint32_t last_index;             /* LAST_PID_POINTER_INDEX: highest ID in the table */
	const uint16_t *vcpu_of_apic;    /* APIC ID (<= last_index) -> vCPU index, IPI_NO_VCPU if none */
	uint32_t nvcpus;
	const uint32_t *apic_id;         /* vCPU index -> x2APIC ID */
	struct ipi_target_stats *tstats; /* nvcpus entries */
	struct ipi_ops ops;
};
#define IPI_NO_VCPU 0xffffu

/* Posts a fixed vector to the vCPU with x2APIC ID dest through the
 * PID-pointer table; notifies NDST exactly when the post set ON, also when
 * the target is the sender (self). Returns false when dest is not a vCPU of
 * the table. */
bool ipi_post(const struct ipi_domain *d, uint32_t self, uint32_t dest, uint8_t vector);

/* Result of an ICR write. */
enum ipi_result {
	IPI_DONE,       /* handled: the instruction retires */
	IPI_SLOW,       /* ipi_fast only: not for the fast path, call ipi_icr_write */
	IPI_GP,         /* reserved bits set: #GP to the guest, nothing sent */
};

/* A fixed, logical-destination, no-shorthand ICR write (x2APIC cluster
 * mode: cluster ID in bits 31:16 of the destination, one bit per member in
 * 15:0; member b of cluster c has x2APIC ID (c << 4) | b, SDM Vol. 3A,
 * "Logical Destination Mode in x2APIC Mode"), which IPI virtualization
 * never virtualizes: posted over the same PID-pointer table to every
 * member, all or nothing. IPI_SLOW when it does not qualify or a member is
 * not a vCPU (the slow path then drops and counts it). */
enum ipi_result ipi_fast_logical(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st);

/* The fast path (tier `fast`), a software IPI virtualization: fixed mode,
 * physical destination, no shorthand, vector >= 16, no reserved bit (bit 12
 * ignored), and a destination with a valid PID-pointer entry at or below
 * last_index -> post + notify, IPI_DONE. Anything else: IPI_SLOW, nothing
 * touched. */
enum ipi_result ipi_fast(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st);

/* The full ICR write (every tier's slow path): every delivery mode (SMI
 * refused), physical and logical (cluster) destinations, the shorthands and
 * broadcast. Only vCPUs of the domain are ever reached. */
enum ipi_result ipi_icr_write(const struct ipi_domain *d, uint32_t self, uint64_t icr, struct ipi_src_stats *st);

/* KVM_HC_SEND_IPI. Returns the number of vCPUs delivered to, or -KVM_EINVAL
 * for a logical destination, a shorthand, a delivery mode other than fixed,
 * lowest priority or NMI, or a fixed/lowest-priority vector below 16. APIC
 * IDs that are no vCPU are skipped and counted as dropped; lowest priority
 * delivers to every listed vCPU (as KVM does). 'self' is the sender's vCPU
 * index, here and above. */
int64_t ipi_pv_send(const struct ipi_domain *d, uint32_t self, uint64_t bitmap_low, uint64_t bitmap_high,
		    uint64_t min, uint64_t icr, struct ipi_src_stats *st);
#endif
