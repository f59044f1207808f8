/* VMCALL from the guest: KVM's ABI (RAX = number, RBX, RCX, RDX, RSI =
 * arguments, result in RAX) plus the hypervisor's own calls. The policy
 * (which call exists, who may make it, which error) is here; the exit
 * handler hands over the registers and the services it offers (hc_ops), so
 * guest/ never reaches back into vmx/. */
#ifndef GUEST_HYPERCALL_H
#define GUEST_HYPERCALL_H
#include "../lib/types.h"

/* KVM's error codes (include/uapi/linux/kvm_para.h, returned negated in RAX). */
#define KVM_ENOSYS 1000
#define KVM_EPERM  1
#define KVM_EINVAL 22
#define KVM_EOPNOTSUPP 95
#define KVM_HC_SEND_IPI_NR 10               /* PV send-IPI, when advertised */
#define HC_HV_BASE      0x48560000u         /* "HV": this hypervisor's calls */
#define HC_HV_REPORT    (HC_HV_BASE + 1)    /* print the exit report; from user mode once a second */
#define HC_HV_IPI_POSTS (HC_HV_BASE + 2)    /* RBX = x2APIC ID, RCX = vector: posts of it into that vCPU;
                                               -KVM_EOPNOTSUPP under IPI virtualization (the CPU posts) */
#define HC_HV_VERDICT   (HC_HV_BASE + 4)    /* RBX = 1 the guest's checks passed, 0 they failed
                                               (the test initramfs, before its power-off) */
#define HC_HV_EXITS     (HC_HV_BASE + 3)    /* RBX = x2APIC ID: VM exits of that vCPU so far */
#define HC_HV_EXITS_OF  (HC_HV_BASE + 5)    /* RBX = x2APIC ID, RCX = basic exit reason: those exits */
#define HC_HV_BOCHSTEST (HC_HV_BASE + 6)    /* bochstest=1 only, RBX = HC_BT_*: the next VM entry of
                                               the caller is one that shows a Bochs 3.0 defect */
#define HC_BT_ENTRY_PENDING 1   /* a host interrupt (the kick) pending at the entry */
#define HC_BT_HLT_PENDING   2   /* the same, the entry in the HLT state; its exit wakes the vCPU */
#define HC_BT_PIR_EMPTY     3   /* a posted-interrupt notification pending at the entry, PIR empty */
#define HC_BT_VIRQ_CLI      4   /* RBX: vector 0x40 pending in RVI and the kick, the entry blocked by STI
                                   (the guest's next instruction is CLI) */
#define HC_BT_EXC_KICK      5   /* the kick pending, the entry blocked by STI (the guest's next
                                   instruction is UD2: the kick exits at its handler's first instruction) */
#define HC_BT_VIRQ_HLT      6   /* vector 0x50 pending in RVI, the entry in the HLT state (guest IF = 1) */
#define HC_BT_VIRQ_NP       8   /* vector 0x70 pending in RVI, #NP intercepted for the entry (the guest's gate 0x70 not present) */
#define HC_BT_WINDOW_HLT    7   /* interrupt-window exiting from the entry on (guest IF = 0; it then
                                   halts with STI; HLT): the window's exit must wake it */

struct hc_call {
	uint64_t nr, a0, a1, a2, a3;         /* RAX, RBX, RCX, RDX, RSI */
	bool user;                           /* made at CPL > 0 */
	uint64_t now_us;                     /* the time of the call, for rate limits */
};

/* What the running hypervisor offers; a NULL service makes its calls -KVM_ENOSYS. */
struct hc_ops {
	uint64_t (*report)(uint32_t cpu);   /* returns the time (us) it finished printing */
	int64_t (*pv_send_ipi)(void *ctx, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr);
	int64_t (*vec_posts)(uint32_t apic_id, uint32_t vector);   /* < 0: no such vCPU */
	int64_t (*exits)(uint32_t apic_id);                        /* < 0: no such vCPU */
	int64_t (*exits_of)(uint32_t apic_id, uint32_t reason);    /* < 0: no such vCPU or reason */
	bool posts_by_cpu;   /* no vec_posts because the CPU posts (IPIv): -KVM_EOPNOTSUPP */
	void (*verdict)(uint32_t cpu, bool pass);                  /* the guest's own checks */
	int64_t (*bochs_test)(void *ctx, uint64_t what);           /* < 0: no such test */
};

/* A user-mode report is refused (-KVM_EPERM) until the console has been free
 * of user-mode reports this long since the last one *finished* printing (a
 * report takes about half a second of a 115200-baud UART: counting from its
 * start would let a loop keep the console busy), so that no guest process
 * can flood the serial console; the kernel is not limited. */
#define HC_USER_REPORT_INTERVAL_US 1000000ull

/* Returns the value for RAX. */
uint64_t hypercall(const struct hc_ops *ops, void *ctx, uint32_t cpu, const struct hc_call *c);
#endif
