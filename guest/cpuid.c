/* CPUID policy: pass the host through, say "hypervisor" with KVM's
 * signature, and hide what this hypervisor cannot vouch for. */
#include "cpuid.h"
#include "../lib/cpu.h"

struct cpuid_policy cpuid_policy;

/* Leaf 1 ECX */
#define CPUID1_ECX_DTES64    BIT(2)
#define CPUID1_ECX_MONITOR   BIT(3)
#define CPUID1_ECX_DS_CPL    BIT(4)
#define CPUID1_EDX_DS        BIT(21)
#define CPUID1_ECX_VMX       BIT(5)
#define CPUID1_ECX_SMX       BIT(6)
#define CPUID1_ECX_X2APIC    BIT(21)
#define CPUID1_ECX_OSXSAVE   BIT(27)
#define CPUID1_ECX_HYPERVISOR BIT(31)
/* Leaf 7.0 */
#define CPUID7_EBX_SGX       BIT(2)
#define CPUID7_EBX_INVPCID   BIT(10)
#define CPUID7_EBX_PT        BIT(25)
#define CPUID7_ECX_OSPKE     BIT(4)
#define CPUID7_ECX_WAITPKG   BIT(5)
#define CPUID7_ECX_LA57      BIT(16)
#define CPUID7_ECX_SGX_LC    BIT(30)
#define CPUID7_EDX_FSRM      BIT(4)
#define CPUID7_EDX_AMX_BF16  BIT(22)
#define CPUID7_EDX_AMX_TILE  BIT(24)
#define CPUID7_EDX_AMX_INT8  BIT(25)
/* Leaf 0xD */
#define XCR0_AMX (BIT(17) | BIT(18))
#define CPUIDD1_EAX_XSAVES   BIT(3)
#define CPUIDD1_EAX_XFD      BIT(4)
/* 0x80000001 EDX */
#define CPUIDX1_EDX_RDTSCP   BIT(27)
/* IA32_VMX_PROCBASED_CTLS2 (SDM Vol. 3C, "Secondary Processor-Based
 * VM-Execution Controls") and IA32_MISC_ENABLE (Vol. 4, 1A0H) */
#define PROC2_RDTSCP         BIT(3)
#define PROC2_INVPCID        BIT(12)
#define PROC2_XSAVES         BIT(20)
#define PROC2_USER_WAIT      BIT(26)
#define MISC_FAST_STRINGS    BIT(0)

static unsigned feat(struct cpufeat *out, unsigned n, bool has, const char *name, bool given, const char *why)
{
	if (has && n < CPUFEAT_MAX)
		out[n++] = (struct cpufeat){ name, given, why };
	return n;
}

unsigned cpuid_features_decide(const struct cpufeat_host *h, struct cpuid_policy *p, struct cpufeat *out)
{
	unsigned n = 0;
	const char *ds = "the debug store (BTS, PEBS) is not switched between guest and host: IA32_DS_AREA #GPs";
	const char *sgx = "SGX is not virtualized (no EPC for the guest; ENCLS not handled)";
	/* AMX's tile data is Linux's dynamic state, which needs XFD
	 * (CPUID.(0DH,1):EAX[4]); without it Linux 6.1 sets XCR0's TILECFG
	 * without TILEDATA, an XSETBV #GP (seen bare on Bochs 3.0's
	 * sapphire_rapids, which has AMX and no XFD). With XFD the tile state
	 * is the guest's: XCR0 bits 17-18 through its XSETBV, IA32_XFD and
	 * IA32_XFD_ERR not intercepted (guest/msr.c), #NM not in the exception
	 * bitmap (Linux's XFD handler runs on its own #NM). VMX keeps no tile
	 * or XFD state across entries and exits (SDM Vol. 3C has no VMCS field
	 * for them), and the hypervisor never touches it: it is built with
	 * -mgeneral-regs-only and executes no XSAVE, XRSTOR or AMX instruction,
	 * so the guest's tiles and XFD stay live in root mode, unread. */
	bool xfd = h->d1a & CPUIDD1_EAX_XFD;
	bool xcr0_tiles = (h->xcr0 & XCR0_AMX) == XCR0_AMX;
	p->amx = (h->l7d & CPUID7_EDX_AMX_TILE) && xfd && xcr0_tiles;
	const char *amx = p->amx ? "tile state passed (XCR0 bits 17-18, XFD, IA32_XFD and IA32_XFD_ERR not intercepted); the hypervisor never touches it"
		: !(h->l7d & CPUID7_EDX_AMX_TILE) ? "AMX-TILE absent: no tile state to give"
		: !xfd ? "the CPU has AMX without XFD (CPUID.(0DH,1):EAX[4] = 0): Linux cannot enable tile data without it (its XSETBV #GPs); tile state is not passed either"
		       : "the CPU has AMX without XCR0 bits 17-18 (CPUID.(0DH,0):EAX): no tile state to pass";
	n = feat(out, n, h->l1c & CPUID1_ECX_VMX, "VMX", false, "the hypervisor's own: no nested VMX (its MSRs #GP)");
	n = feat(out, n, h->l1c & CPUID1_ECX_SMX, "SMX", false, "GETSEC (a measured launch) is the platform's, not virtualized");
	n = feat(out, n, h->l1d & CPUID1_EDX_DS, "DS", false, ds);
	n = feat(out, n, h->l1c & CPUID1_ECX_DTES64, "DTES64", false, ds);
	n = feat(out, n, h->l1c & CPUID1_ECX_DS_CPL, "DS-CPL", false, ds);
	n = feat(out, n, h->l7b & CPUID7_EBX_SGX, "SGX", false, sgx);
	n = feat(out, n, h->l7c & CPUID7_ECX_SGX_LC, "SGX-LC", false, sgx);
	n = feat(out, n, h->l7b & CPUID7_EBX_PT, "PT", false,
		 "Intel PT writes its trace to physical addresses, around EPT; its VMX controls (guest physical addresses, conceal VMX) are not used");
	n = feat(out, n, h->l7c & CPUID7_ECX_LA57, "LA57", false,
		 "the hypervisor walks the guest's page tables in 4 levels only (guest/gwalk.c): no 5-level paging for the guest");
	n = feat(out, n, h->l7d & CPUID7_EDX_AMX_TILE, "AMX-TILE", p->amx, amx);
	n = feat(out, n, h->l7d & CPUID7_EDX_AMX_INT8, "AMX-INT8", p->amx, amx);
	n = feat(out, n, h->l7d & CPUID7_EDX_AMX_BF16, "AMX-BF16", p->amx, amx);
	/* FSRM: Linux reads IA32_MISC_ENABLE and, with fast strings off (or the
	 * MSR absent, read as 0), drops ERMS but keeps FSRM, and its memmove
	 * takes FSRM to imply ERMS: its 32-byte loop then ran on shorter copies
	 * (Debian's 6.1 hung after "LSM: Security Framework initializing"). */
	bool fast = h->misc_enable_ok && (h->misc_enable & MISC_FAST_STRINGS);
	p->fsrm = (h->l7d & CPUID7_EDX_FSRM) && fast;
	n = feat(out, n, h->l7d & CPUID7_EDX_FSRM, "FSRM", p->fsrm,
		 p->fsrm ? "fast strings on (IA32_MISC_ENABLE bit 0)" :
		 !h->misc_enable_ok ? "IA32_MISC_ENABLE faults on this CPU: a guest takes fast strings for off and drops ERMS, and FSRM without ERMS breaks Linux's memmove"
				    : "fast strings off in IA32_MISC_ENABLE (bit 0): a guest drops ERMS, and FSRM without ERMS breaks Linux's memmove");
	/* WAITPKG: "enable user wait and pause" lets TPAUSE, UMONITOR and UMWAIT
	 * run in the guest; with RDTSC exiting they would exit instead (SDM
	 * Vol. 3C, "Instructions That Cause VM Exits Conditionally"). */
	bool uw = h->proc2_allowed1 & PROC2_USER_WAIT;
	p->waitpkg = (h->l7c & CPUID7_ECX_WAITPKG) && uw && !h->rdtsc_exiting_forced;
	n = feat(out, n, h->l7c & CPUID7_ECX_WAITPKG, "WAITPKG", p->waitpkg,
		 p->waitpkg ? "\"enable user wait and pause\" on, RDTSC exiting off: TPAUSE and UMWAIT never exit; IA32_UMWAIT_CONTROL passed" :
		 !uw ? "the CPU's VMX does not allow \"enable user wait and pause\" (IA32_VMX_PROCBASED_CTLS2 bit 26)"
		     : "the CPU forces RDTSC exiting on: TPAUSE and UMWAIT would exit");
	n = feat(out, n, h->l7b & CPUID7_EBX_INVPCID, "INVPCID", h->proc2_allowed1 & PROC2_INVPCID,
		 h->proc2_allowed1 & PROC2_INVPCID ? NULL : "the CPU's VMX does not allow \"enable INVPCID\"");
	n = feat(out, n, h->x1d & CPUIDX1_EDX_RDTSCP, "RDTSCP", h->proc2_allowed1 & PROC2_RDTSCP,
		 h->proc2_allowed1 & PROC2_RDTSCP ? NULL : "the CPU's VMX does not allow \"enable RDTSCP\"");
	n = feat(out, n, h->d1a & CPUIDD1_EAX_XSAVES, "XSAVES", h->proc2_allowed1 & PROC2_XSAVES,
		 h->proc2_allowed1 & PROC2_XSAVES ? NULL : "the CPU's VMX does not allow \"enable XSAVES/XRSTORS\"");
	return n;
}

uint64_t cpuid_guest_xcr0_mask(uint64_t host, bool amx)
{
	return amx ? host : host & ~XCR0_AMX;
}

/* XSETBV (SDM Vol. 2, "XSETBV"; Vol. 1, "Enabling the XSAVE Feature Set"):
 * #GP unless ECX = 0 (XCR0), x87 (bit 0) set, AVX (2) only with SSE (1),
 * MPX's BNDREGS and BNDCSR (3, 4) together, AVX-512's opmask, ZMM_Hi256 and
 * Hi16_ZMM (7:5) all or none and only with AVX and SSE, AMX's TILECFG and
 * TILEDATA (17, 18) together, and no bit the processor does not support. */
bool xsetbv_valid(uint32_t ecx, uint64_t val, uint64_t allowed)
{
	uint64_t avx512 = val & (BIT(5) | BIT(6) | BIT(7));
	if (ecx != 0 || !(val & BIT(0)) || (val & ~allowed))
		return false;
	if ((val & BIT(2)) && !(val & BIT(1)))
		return false;
	if (!!(val & BIT(3)) != !!(val & BIT(4)))
		return false;
	if (avx512 && (avx512 != (BIT(5) | BIT(6) | BIT(7)) || (val & (BIT(1) | BIT(2))) != (BIT(1) | BIT(2))))
		return false;
	if (!!(val & BIT(17)) != !!(val & BIT(18)))
		return false;
	return true;
}

static uint32_t copy_bit(uint32_t reg, uint32_t bit, bool set)
{
	return set ? reg | bit : reg & ~bit;
}

void cpuid_guest_cr4(uint32_t leaf, uint32_t sub, uint64_t guest_cr4, uint32_t *c)
{
	if (leaf == 1)
		*c = copy_bit(*c, CPUID1_ECX_OSXSAVE, guest_cr4 & X86_CR4_OSXSAVE);
	else if (leaf == 7 && sub == 0)
		*c = copy_bit(*c, CPUID7_ECX_OSPKE, guest_cr4 & X86_CR4_PKE);
}

uint32_t cpuid_kvm_features(bool pv_send_ipi, bool pv_eoi, bool ir_owned)
{
	return (pv_send_ipi ? BIT(KVM_FEATURE_PV_SEND_IPI) : 0) | (pv_eoi ? BIT(KVM_FEATURE_PV_EOI) : 0) |
	       (ir_owned ? BIT(KVM_FEATURE_MSI_EXT_DEST_ID) : 0);
}

void cpuid_filter(const struct cpuid_policy *p, uint32_t leaf, uint32_t sub,
		  uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	switch (leaf) {
	case 1:
		/* VMX is the hypervisor's; x2APIC is shown (the guest uses it). */
		*c &= ~(CPUID1_ECX_VMX | CPUID1_ECX_SMX | CPUID1_ECX_DTES64 | CPUID1_ECX_DS_CPL);
		*d &= ~CPUID1_EDX_DS;     /* the debug store is not switched (guest/msr.c) */
		if (p->hide_mwait)
			*c &= ~CPUID1_ECX_MONITOR;
		*c |= CPUID1_ECX_X2APIC | CPUID1_ECX_HYPERVISOR;
		break;
	case 7:
		if (sub == 0) {
			/* cpuid_features_decide says why each is hidden: FSRM
			 * without fast strings, WAITPKG without "enable user wait
			 * and pause", AMX without XFD; LA57 needs a paging mode this
			 * hypervisor does not virtualize; SGX and PT neither. */
			*b &= ~(CPUID7_EBX_SGX | CPUID7_EBX_PT);
			if (!p->invpcid)
				*b &= ~CPUID7_EBX_INVPCID;
			*c &= ~(CPUID7_ECX_LA57 | CPUID7_ECX_SGX_LC);
			if (!p->waitpkg)
				*c &= ~CPUID7_ECX_WAITPKG;
			if (!p->fsrm)
				*d &= ~CPUID7_EDX_FSRM;
			if (!p->amx)
				*d &= ~(CPUID7_EDX_AMX_BF16 | CPUID7_EDX_AMX_TILE | CPUID7_EDX_AMX_INT8);
		}
		break;
	case 0xd:
		/* With AMX the CPU's own answers (XCR0 bits, XFD, the tile
		 * components' sizes, offsets, alignment and XFD support). */
		if (sub == 0 && !p->amx)
			*a &= (uint32_t)~XCR0_AMX;
		if (sub == 1 && !p->xsaves)
			*a &= ~CPUIDD1_EAX_XSAVES;
		if (sub == 1 && !p->amx)
			*a &= ~CPUIDD1_EAX_XFD;
		if ((sub == 17 || sub == 18) && !p->amx)
			*a = *b = *c = *d = 0;
		break;
	case 0x1d: case 0x1e:      /* AMX: the palette and TMUL leaves */
		if (!p->amx)
			*a = *b = *c = *d = 0;
		break;
	case 0x12:                 /* SGX */
	case 0x14:                 /* Intel PT */
		*a = *b = *c = *d = 0;
		break;
	case 0x15:
		/* The rate the hypervisor took (lib/tsc_choose.c). Taken from this
		 * leaf: the CPU's own answer stands (its crystal is also the APIC
		 * timer's, which Linux reads here). Measured (an emulator's TSC,
		 * the PIT): crystal = TSC / k, ratio k/1, k the smallest power of
		 * two that fits the crystal in ECX's 32 bits, so that "TSC
		 * frequency" = ECX * EBX / EAX (SDM Vol. 2A, CPUID leaf 15H) is
		 * the rate, never a clamp of it. Under Bochs (50 MHz) k = 1. */
		if (p->tsc_hz && !p->tsc_host_leaf) {
			uint32_t k = 1;
			while (p->tsc_hz / k > UINT32_MAX)
				k <<= 1;
			*a = 1;
			*b = k;
			*c = (uint32_t)(p->tsc_hz / k);
		}
		break;
	case KVM_CPUID_SIGNATURE:
		*a = KVM_CPUID_FEATURES;
		*b = 0x4b4d564b;   /* "KVMK" */
		*c = 0x564b4d56;   /* "VMKV" */
		*d = 0x0000004d;   /* "M\0\0\0" */
		break;
	case KVM_CPUID_FEATURES:
		*a = p->kvm_features;
		*b = *c = *d = 0;
		break;
	case 0x80000001:
		if (!p->rdtscp)
			*d &= ~CPUIDX1_EDX_RDTSCP;
		break;
	default:
		if (leaf > KVM_CPUID_FEATURES && leaf < 0x40010000)
			*a = *b = *c = *d = 0;
		break;
	}
}
