/* The guest's view of CPUID. */
#ifndef GUEST_CPUID_H
#define GUEST_CPUID_H
#include "../lib/types.h"

#define KVM_CPUID_SIGNATURE 0x40000000
#define KVM_CPUID_FEATURES  0x40000001
#define KVM_FEATURE_PV_EOI      6
#define KVM_FEATURE_PV_SEND_IPI 11
#define KVM_FEATURE_MSI_EXT_DEST_ID 15   /* IOAPIC RTE 55:49 / MSI address 11:5: destination 14:8 */

struct cpuid_policy {
	uint32_t kvm_features;     /* CPUID 0x40000001 EAX: only what is implemented */
	uint64_t tsc_hz;           /* advertised in leaf 0x15 (the rate taken; 0: the host's leaf) */
	bool tsc_host_leaf;        /* the rate came from the CPU's leaf 0x15: show it as it is */
	bool xsaves;               /* the VMCS enables XSAVES */
	bool invpcid, rdtscp, waitpkg;
	bool fsrm;                 /* cpuid_features_decide: fast strings on, so the guest keeps ERMS too */
	bool amx;                  /* cpuid_features_decide: AMX with XFD, the tile state the guest's */
	bool hide_mwait;           /* hlt=exit (the guest idles in HLT, which exits), timer=preempt (no deep C-states) */
};
extern struct cpuid_policy cpuid_policy;

/* CPUID 0x40000001 EAX: PV send-IPI where its tier runs, PV EOI on the
 * software x2APIC, MSI_EXT_DEST_ID only where the hypervisor owns VT-d
 * interrupt remapping (it translates the 15-bit destinations; without it a
 * destination above 255 would reach the CPU named by its low 8 bits). */
uint32_t cpuid_kvm_features(bool pv_send_ipi, bool pv_eoi, bool ir_owned);

/* Applies the policy to the host's answer for (leaf, subleaf). Pure: tests
 * feed it host values. */
void cpuid_filter(const struct cpuid_policy *p, uint32_t leaf, uint32_t sub,
		  uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d);
/* The bits CPUID copies from CR4 (SDM Vol. 2A, CPUID: CPUID.1:ECX.OSXSAVE
 * "a value of 1 indicates that the OS has set CR4.OSXSAVE[bit 18]",
 * CPUID.(EAX=7,ECX=0):ECX.OSPKE "OS has set CR4.PKE"): the hypervisor
 * executes CPUID under its own CR4, so they are set from the guest's CR4 as
 * the guest reads it ('guest_cr4': the read shadow for the bits the guest
 * does not own). */
void cpuid_guest_cr4(uint32_t leaf, uint32_t sub, uint64_t guest_cr4, uint32_t *c);
/* The guest's CPU features, decided from what the boot probed of this CPU
 * (the issue-45 rule: a feature is hidden only where the hypervisor cannot
 * make it correct on this CPU, and says why). */
struct cpufeat_host {
	uint32_t l1c, l1d;            /* CPUID.1 ECX, EDX as the CPU answers */
	uint32_t l7b, l7c, l7d;       /* CPUID.(7,0) EBX, ECX, EDX */
	uint32_t x1d, d1a;            /* CPUID.80000001H EDX, CPUID.(0DH,1) EAX */
	uint64_t xcr0;                /* CPUID.(0DH,0) EDX:EAX: the XCR0 bits the CPU supports */
	bool misc_enable_ok;          /* RDMSR of IA32_MISC_ENABLE did not fault */
	uint64_t misc_enable;
	uint32_t proc2_allowed1;      /* IA32_VMX_PROCBASED_CTLS2 allowed-1 (0: no secondary controls) */
	bool rdtsc_exiting_forced;    /* the primary controls' allowed-0 has RDTSC exiting */
};
struct cpufeat {
	const char *name;
	bool given;
	const char *why;              /* hidden: the reason; given: how, or NULL */
};
#define CPUFEAT_MAX 20
/* Fills out[] with every feature the CPU has that the guest may not get
 * (what it gets, and why not where it does not), sets p->fsrm,
 * p->waitpkg and p->amx; returns the count. Pure: tests give it host values. */
unsigned cpuid_features_decide(const struct cpufeat_host *h, struct cpuid_policy *p, struct cpufeat *out);
/* XCR0 bits the guest may set (host-supported, minus AMX's unless 'amx'). */
uint64_t cpuid_guest_xcr0_mask(uint64_t host_xcr0_supported, bool amx);
/* Whether XSETBV(ecx, val) is legal for the guest (the SDM's XSETBV #GP
 * rules, with 'allowed' from cpuid_guest_xcr0_mask): when it is not, the
 * guest gets #GP and the host never executes it. */
bool xsetbv_valid(uint32_t ecx, uint64_t val, uint64_t allowed);
#endif
