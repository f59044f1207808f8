/* A model of ipi/ipi.h written from the documents, not from the project's
 * headers: the x2APIC ICR layout (SDM Vol. 3A, "Interrupt Command Register
 * (ICR)", x2APIC mode), x2APIC logical destinations ("Logical Destination
 * Mode in x2APIC Mode"), the posted-interrupt descriptor and PID-pointer
 * table (sdm_pid.h), and KVM's PV send-IPI ABI
 * (Documentation/virt/kvm/x86/hypercalls.rst, KVM_HC_SEND_IPI).
 * ipi/ipi.h is included only for the prototypes and struct types needed to
 * call the code. Expectations come from the MI_ constants below.
 *
 * A domain (struct mi_dom) owns raw, guarded memory: every descriptor sits
 * between 64-byte canaries, the PID-pointer table between canary words,
 * with one valid "decoy" entry just past LAST_PID_POINTER_INDEX. The model
 * keeps a shadow copy of all of it and applies its own prediction to the
 * shadow; after every call the real bytes must equal the shadow. */
#ifndef TEST_UNIT_IPI_MODEL_H
#define TEST_UNIT_IPI_MODEL_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "../../ipi/ipi.h"

/* x2APIC ICR (MSR 830H, 64 bits). */
#define MI_VEC(v)      ((uint64_t)((v) & 0xffu))          /* bits 7:0 */
#define MI_MODE(m)     ((uint64_t)((m) & 7u) << 8)        /* bits 10:8 */
#define MI_LOGICAL     (1ull << 11)                       /* destination mode: 1 = logical */
#define MI_ASSERT      (1ull << 14)                       /* level: 1 = assert */
#define MI_TRIG_LEVEL  (1ull << 15)                       /* trigger mode: 1 = level */
#define MI_SH(s)       ((uint64_t)((s) & 3u) << 18)       /* bits 19:18 */
#define MI_DEST(d)     ((uint64_t)(uint32_t)(d) << 32)    /* bits 63:32 */
/* Reserved in x2APIC mode, a WRMSR setting one faults: 31:20, 17:16, 13.
 * Bit 12 (the xAPIC's delivery status) is not one of them: "WRMSR to the ICR
 * MSR ignores bit 12 of its source operand" (Intel's x2APIC specification,
 * "Interrupt Command Register"; the SDM drops the bit in x2APIC mode), and
 * KVM ignores it too. */
#define MI_RESERVED    (0xfff00000ull | 1ull << 17 | 1ull << 16 | 1ull << 13)
#define MI_IGNORED     (1ull << 12)
#define MI_BROADCAST   0xffffffffu
enum { MI_FIXED = 0, MI_LOWEST = 1, MI_SMI = 2, MI_MODE3 = 3, MI_NMI = 4, MI_INIT = 5, MI_SIPI = 6, MI_MODE7 = 7 };
enum { MI_SH_NONE = 0, MI_SH_SELF = 1, MI_SH_ALL = 2, MI_SH_OTHERS = 3 };
#define MI_ICR(mode, vec, dest) (MI_MODE(mode) | MI_VEC(vec) | MI_DEST(dest))
#define MI_GET_VEC(icr)  ((unsigned)((icr) & 0xff))
#define MI_GET_MODE(icr) ((unsigned)((icr) >> 8) & 7u)
#define MI_GET_SH(icr)   ((unsigned)((icr) >> 18) & 3u)
#define MI_GET_DEST(icr) ((uint32_t)((icr) >> 32))

/* x2APIC logical ID: cluster (ID[19:4]) in 31:16, bit ID[3:0] of 15:0. */
static inline uint32_t mi_ldr(uint32_t id) { return ((id >> 4) << 16) | (1u << (id & 0xf)); }
static inline bool mi_logical_match(uint32_t ldr, uint32_t dest)
{
	return dest == MI_BROADCAST || ((ldr >> 16) == (dest >> 16) && (ldr & dest & 0xffff));
}

/* KVM_HC_SEND_IPI (nr 10) fails with -KVM_EINVAL (22). */
#define MI_KVM_EINVAL 22

#define MI_MAXV 16
enum mi_ev_kind { MI_EV_NOTIFY = 1, MI_EV_NMI, MI_EV_INIT, MI_EV_SIPI };
struct mi_ev { uint32_t kind, a, b; };   /* notify: a = NDST, b = NV; nmi/init/sipi: a = vCPU, b = vector */
#define MI_MAXEV 256

struct mi_dom {
	unsigned n;                    /* vCPUs */
	uint32_t id[MI_MAXV];          /* the model's vCPU -> x2APIC ID */
	uint32_t last;                 /* LAST_PID_POINTER_INDEX */
	uint8_t *arena, *shadow;       /* canary | desc 0 | canary | ... | desc n (decoy) | canary */
	size_t arena_bytes;
	uint8_t *table_buf, *table_shadow;   /* canary words | entries 0..last+1 | canary words */
	size_t table_bytes;
	uint8_t *table;                /* entry 0 */
	uint16_t *vcpu_of_apic;        /* inputs of the domain (the code may only read them) */
	uint32_t *apic_id;
	struct ipi_target_stats *tstats, *tstats_exp;
	struct ipi_domain d;
	struct mi_ev ev[MI_MAXEV], exp[MI_MAXEV];
	unsigned nev, nexp;
	bool ev_overflow;
	unsigned failures;             /* details printed for the first few only */
};

/* ids: x2APIC IDs of vCPUs 0..n-1, all <= last. Descriptor k gets NV 0xe0+k
 * and NDST 0x100+7k (a host APIC ID, deliberately not the guest's). */
void mi_dom_init(struct mi_dom *m, const uint32_t *ids, unsigned n, uint32_t last);
void mi_dom_free(struct mi_dom *m);
uint8_t *mi_desc(struct mi_dom *m, unsigned k);         /* the code's bytes; k == n: the decoy */
uint8_t *mi_shadow_desc(struct mi_dom *m, unsigned k);  /* the model's bytes */
int mi_vcpu_of(const struct mi_dom *m, uint64_t apic_id);   /* -1: no vCPU */
/* Test set-up on both copies: control bits (ON/SN) of descriptor k, or drain it. */
void mi_set_ctrl(struct mi_dom *m, unsigned k, uint8_t ctrl);
void mi_drain(struct mi_dom *m, unsigned k);
void mi_drain_all(struct mi_dom *m);

/* Predictions. */
enum mi_cls { MI_GP, MI_REFUSED, MI_DEASSERT, MI_DROPPED, MI_DELIVER };
struct mi_pred { enum mi_cls cls; unsigned mode; uint32_t set; };       /* set: vCPU bitmask */
bool mi_fast_qualifies(const struct mi_dom *m, uint64_t icr, unsigned *k);
struct mi_pred mi_predict_icr(const struct mi_dom *m, uint32_t self, uint64_t icr);
enum mi_pv_cls { MI_PV_ERR, MI_PV_OK, MI_PV_UNDOC };
struct mi_pv_pred { enum mi_pv_cls cls; uint32_t set; uint64_t skipped; };
struct mi_pv_pred mi_predict_pv(const struct mi_dom *m, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr);

/* Run the code and check every byte, callback and counter against the
 * model. self is the sender's vCPU index. *posted (may be NULL) gets the
 * vCPUs posted to. what names the case in failure messages. */
enum ipi_result mi_run_fast(struct mi_dom *m, uint32_t self, uint64_t icr, struct ipi_src_stats *st, const char *what);
enum ipi_result mi_run_icr(struct mi_dom *m, uint32_t self, uint64_t icr, struct ipi_src_stats *st, const char *what,
			   uint32_t *posted);
int64_t mi_run_pv(struct mi_dom *m, uint32_t self, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr,
		  struct ipi_src_stats *st, const char *what, uint32_t *posted);
/* The real bytes, table and inputs equal the model's; 0 when so. */
int mi_compare_memory(struct mi_dom *m, const char *what);
/* Events the code made since the last run, for explicit checks. */
unsigned mi_count_ev(const struct mi_dom *m, uint32_t kind);
bool mi_has_ev(const struct mi_dom *m, uint32_t kind, uint32_t a, uint32_t b);
#endif
