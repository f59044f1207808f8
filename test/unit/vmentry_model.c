/* The VM-entry check model (see vmentry_model.h). Rules are tagged with the
 * SDM subsection they come from; "[hv]" marks a rule of this hypervisor's
 * design that the SDM does not make a VM-entry failure. */
#include "vmentry_model.h"
#include "vmcs_record.h"
#include "sdm_vmcs.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAXPHYADDR 52
#define CR0_PE BIT(0)
#define CR0_WP BIT(16)
#define CR0_NW BIT(29)
#define CR0_CD BIT(30)
#define CR0_PG BIT(31)
#define CR4_PAE BIT(5)
#define CR4_PCIDE BIT(17)
#define CR4_CET BIT(23)
#define EFER_LME BIT(8)
#define EFER_LMA BIT(10)
#define EFER_VALID (BIT(0) | EFER_LME | EFER_LMA | BIT(11))   /* SCE, LME, LMA, NXE */
#define RFLAGS_TF BIT(8)
#define RFLAGS_IF BIT(9)
#define RFLAGS_VM BIT(17)
#define RFLAGS_RSVD (~0ull << 22 | BIT(15) | BIT(5) | BIT(3))
#define AR_UNUSABLE BIT(16)
#define INTR_STI 1u
#define INTR_MOVSS 2u
#define INTR_SMI 4u
#define INTR_NMI 8u

struct ctx {
	const struct vmx_caps *c;
	char *why;
	size_t n;
	int errors;
	uint32_t unwritten[64];
	unsigned nunwritten;
	uint32_t pin, proc, proc2, exit, entry;   /* proc2/proc3: 0 unless activated */
	uint64_t proc3;
	bool ia32e, ug;
};

__attribute__((format(printf, 2, 3)))
static void bad(struct ctx *x, const char *fmt, ...)
{
	if (x->errors++ == 0 && x->why && x->n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(x->why, x->n, fmt, ap);
		va_end(ap);
	}
}
#define RULE(cond, ...) do { if (!(cond)) bad(x, __VA_ARGS__); } while (0)
#define ULL(v) ((unsigned long long)(v))

/* A field VM entry reads; never written = undefined = a violation (once). */
static uint64_t rd(struct ctx *x, uint32_t f)
{
	if (vmcs_record_has(f))
		return vmcs_record_get(f);
	for (unsigned i = 0; i < x->nunwritten; i++)
		if (x->unwritten[i] == f)
			return 0;
	if (x->nunwritten < 64)
		x->unwritten[x->nunwritten++] = f;
	bad(x, "[fields] %s (0x%04x) is checked by VM entry but was never written (undefined after VMCLEAR)",
	    sdm_vmcs_name(f), f);
	return 0;
}

static bool canonical(uint64_t a) { return (uint64_t)((int64_t)(a << 16) >> 16) == a; }
static bool phys_ok(uint64_t a) { return !(a >> MAXPHYADDR); }
static bool pat_ok(uint64_t pat)   /* each byte UC(0), WC(1), WT(4), WP(5), WB(6) or UC-(7) */
{
	for (int i = 0; i < 8; i++) {
		unsigned t = (pat >> (8 * i)) & 0xff;
		if (t > 7 || !((0xf3u >> t) & 1))
			return false;
	}
	return true;
}

static unsigned low_bit(uint64_t m) { return (unsigned)__builtin_ctzll(m); }

/* "Reserved bits ... must be set properly": allowed-0 bits 1, allowed-1 bits only. */
static void ctl_word(struct ctx *x, const char *word, const char *msr, uint32_t v, const struct vmx_ctl *cap)
{
	uint32_t must1 = cap->allowed0 & ~v, must0 = v & ~cap->allowed1;
	if (must1) {
		const char *nm = vmx_ctl_bit_name(word, low_bit(must1));
		bad(x, "[VMX controls] %s controls 0x%08x: bit %u (%s) must be 1 (allowed-0 setting in %s)",
		    word, v, low_bit(must1), nm ? nm : "reserved", msr);
	}
	if (must0) {
		const char *nm = vmx_ctl_bit_name(word, low_bit(must0));
		bad(x, "[VMX controls] %s controls 0x%08x: bit %u (%s) must be 0 (not allowed-1 in %s)",
		    word, v, low_bit(must0), nm ? nm : "reserved", msr);
	}
}

/* VMWRITE to a field the CPU does not have fails ("unsupported VMCS component"). */
static void field_exists(struct ctx *x, uint32_t f, bool supported, const char *control)
{
	RULE(!vmcs_record_has(f) || supported,
	     "[fields] VMWRITE to %s: the field exists only with the 1-setting of \"%s\", which this CPU does not allow",
	     sdm_vmcs_name(f), control);
}

static void check_fields(struct ctx *x)
{
	const struct vmx_caps *c = x->c;
	uint32_t p1 = c->proc.allowed1, s1 = c->proc2.allowed1;
	field_exists(x, SDM_PROC2_CONTROLS, p1 & SDM_PROC_ACTIVATE_SECONDARY, "activate secondary controls");
	field_exists(x, SDM_TERTIARY_CONTROLS, p1 & SDM_PROC_ACTIVATE_TERTIARY, "activate tertiary controls");
	field_exists(x, SDM_VIRTUAL_APIC_PAGE_ADDR, p1 & SDM_PROC_USE_TPR_SHADOW, "use TPR shadow");
	field_exists(x, SDM_TPR_THRESHOLD, p1 & SDM_PROC_USE_TPR_SHADOW, "use TPR shadow");
	field_exists(x, SDM_POSTED_INTR_NV, c->pin.allowed1 & SDM_PIN_POSTED_INTR, "process posted interrupts");
	field_exists(x, SDM_POSTED_INTR_DESC_ADDR, c->pin.allowed1 & SDM_PIN_POSTED_INTR, "process posted interrupts");
	field_exists(x, SDM_VPID, s1 & SDM_PROC2_VPID, "enable VPID");
	field_exists(x, SDM_EPT_POINTER, s1 & SDM_PROC2_EPT, "enable EPT");
	field_exists(x, SDM_APIC_ACCESS_ADDR, s1 & SDM_PROC2_VIRT_APIC_ACCESSES, "virtualize APIC accesses");
	field_exists(x, SDM_XSS_EXIT_BITMAP, s1 & SDM_PROC2_XSAVES, "enable XSAVES/XRSTORS");
	for (uint32_t f = SDM_EOI_EXIT_BITMAP0; f <= SDM_EOI_EXIT_BITMAP3; f += 2)
		field_exists(x, f, s1 & SDM_PROC2_VIRT_INTR_DELIVERY, "virtual-interrupt delivery");
	field_exists(x, SDM_GUEST_INTR_STATUS, s1 & SDM_PROC2_VIRT_INTR_DELIVERY, "virtual-interrupt delivery");
	field_exists(x, SDM_PID_POINTER_TABLE, c->proc3_allowed1 & SDM_PROC3_IPI_VIRT, "IPI virtualization");
	field_exists(x, SDM_LAST_PID_POINTER_INDEX, c->proc3_allowed1 & SDM_PROC3_IPI_VIRT, "IPI virtualization");
	field_exists(x, SDM_VIRTUAL_TIMER_VECTOR, c->proc3_allowed1 & SDM_PROC3_APIC_TIMER_VIRT, "APIC-timer virtualization");
	field_exists(x, SDM_GUEST_DEADLINE, c->proc3_allowed1 & SDM_PROC3_APIC_TIMER_VIRT, "APIC-timer virtualization");
	field_exists(x, SDM_GUEST_DEADLINE_SHADOW, c->proc3_allowed1 & SDM_PROC3_APIC_TIMER_VIRT, "APIC-timer virtualization");
	field_exists(x, SDM_GUEST_PAT, (c->entry.allowed1 & SDM_ENTRY_LOAD_PAT) || (c->exit.allowed1 & SDM_EXIT_SAVE_PAT),
		     "load IA32_PAT");
	field_exists(x, SDM_HOST_PAT, c->exit.allowed1 & SDM_EXIT_LOAD_PAT, "load IA32_PAT");
	field_exists(x, SDM_GUEST_EFER, (c->entry.allowed1 & SDM_ENTRY_LOAD_EFER) || (c->exit.allowed1 & SDM_EXIT_SAVE_EFER),
		     "load IA32_EFER");
	field_exists(x, SDM_HOST_EFER, c->exit.allowed1 & SDM_EXIT_LOAD_EFER, "load IA32_EFER");
}

static void check_eptp(struct ctx *x, uint64_t eptp)
{
	uint64_t cap = x->c->ept_vpid;
	unsigned mt = eptp & 7, wl = ((eptp >> 3) & 7) + 1;
	RULE((mt == 0 && (cap & SDM_EPT_CAP_MEMTYPE_UC)) || (mt == 6 && (cap & SDM_EPT_CAP_MEMTYPE_WB)),
	     "[VMX controls] EPTP 0x%llx: memory type %u is not one IA32_VMX_EPT_VPID_CAP allows (UC=0 bit 8, WB=6 bit 14)",
	     ULL(eptp), mt);
	RULE((wl == 4 && (cap & SDM_EPT_CAP_PWL4)) || (wl == 5 && (cap & SDM_EPT_CAP_PWL5)),
	     "[VMX controls] EPTP 0x%llx: page-walk length %u (bits 5:3 = %u) not supported by IA32_VMX_EPT_VPID_CAP",
	     ULL(eptp), wl, wl - 1);
	RULE(!(eptp & BIT(6)) || (cap & SDM_EPT_CAP_AD_FLAGS),
	     "[VMX controls] EPTP 0x%llx: bit 6 (accessed/dirty flags) set but EPT A/D flags not supported", ULL(eptp));
	RULE(!(eptp & BIT(7)) || (cap & SDM_EPT_CAP_SSS_CONTROL),
	     "[VMX controls] EPTP 0x%llx: bit 7 (supervisor shadow-stack) set but not supported", ULL(eptp));
	RULE(!(eptp & 0xf00) && phys_ok(eptp),
	     "[VMX controls] EPTP 0x%llx: reserved bits 11:8 or bits beyond the physical-address width set", ULL(eptp));
}

/* "Checks on VM-Execution Control Fields". */
static void check_exec_controls(struct ctx *x)
{
	const struct vmx_caps *c = x->c;
	uint32_t pin = x->pin, proc = x->proc, p2 = x->proc2;

	ctl_word(x, "pin", "IA32_VMX_(TRUE_)PINBASED_CTLS", pin, &c->pin);
	ctl_word(x, "proc", "IA32_VMX_(TRUE_)PROCBASED_CTLS", proc, &c->proc);
	if (proc & SDM_PROC_ACTIVATE_SECONDARY)   /* else not checked: treated as all 0 */
		ctl_word(x, "proc2", "IA32_VMX_PROCBASED_CTLS2", p2, &c->proc2);
	if (proc & SDM_PROC_ACTIVATE_TERTIARY) {
		uint64_t extra = x->proc3 & ~c->proc3_allowed1;
		const char *nm = extra ? vmx_ctl_bit_name("proc3", low_bit(extra)) : NULL;
		RULE(!extra, "[VMX controls] tertiary controls 0x%llx: bit %u (%s) not allowed-1 in IA32_VMX_PROCBASED_CTLS3",
		     ULL(x->proc3), extra ? low_bit(extra) : 0, nm ? nm : "reserved");
	}
	uint64_t n = rd(x, SDM_CR3_TARGET_COUNT);
	RULE(n <= 4, "[VMX controls] CR3-target count %llu is greater than 4", ULL(n));
	if (proc & SDM_PROC_USE_IO_BITMAPS) {
		uint64_t a = rd(x, SDM_IO_BITMAP_A), b = rd(x, SDM_IO_BITMAP_B);
		RULE(!(a & 0xfff) && phys_ok(a), "[VMX controls] I/O bitmap A address 0x%llx not 4-KByte aligned", ULL(a));
		RULE(!(b & 0xfff) && phys_ok(b), "[VMX controls] I/O bitmap B address 0x%llx not 4-KByte aligned", ULL(b));
	}
	if (proc & SDM_PROC_USE_MSR_BITMAPS) {
		uint64_t a = rd(x, SDM_MSR_BITMAP);
		RULE(!(a & 0xfff) && phys_ok(a), "[VMX controls] MSR-bitmap address 0x%llx not 4-KByte aligned", ULL(a));
	}
	bool vid = p2 & SDM_PROC2_VIRT_INTR_DELIVERY;
	if (proc & SDM_PROC_USE_TPR_SHADOW) {
		uint64_t a = rd(x, SDM_VIRTUAL_APIC_PAGE_ADDR), thr = rd(x, SDM_TPR_THRESHOLD);
		RULE(!(a & 0xfff) && phys_ok(a), "[VMX controls] virtual-APIC address 0x%llx not 4-KByte aligned", ULL(a));
		if (!vid)
			RULE(!(thr & ~0xfull), "[VMX controls] TPR threshold 0x%llx: bits 31:4 must be 0 without VID", ULL(thr));
		if (!vid && !(p2 & SDM_PROC2_VIRT_APIC_ACCESSES))   /* VTPR of a zeroed page is 0 */
			RULE(!(thr & 0xf), "[VMX controls] TPR threshold 0x%llx above VTPR[7:4] (0 on a fresh virtual-APIC page)",
			     ULL(thr));
	} else {
		RULE(!(p2 & (SDM_PROC2_VIRT_X2APIC_MODE | SDM_PROC2_APIC_REG_VIRT | SDM_PROC2_VIRT_INTR_DELIVERY)) &&
		     !(x->proc3 & SDM_PROC3_IPI_VIRT),
		     "[VMX controls] without \"use TPR shadow\", virtualize x2APIC mode, APIC-register virtualization, "
		     "virtual-interrupt delivery and IPI virtualization must be 0 (proc2 0x%08x)", p2);
	}
	RULE((pin & SDM_PIN_NMI_EXITING) || !(pin & SDM_PIN_VIRTUAL_NMIS),
	     "[VMX controls] \"virtual NMIs\" needs \"NMI exiting\"");
	RULE((pin & SDM_PIN_VIRTUAL_NMIS) || !(proc & SDM_PROC_NMI_WINDOW_EXITING),
	     "[VMX controls] \"NMI-window exiting\" needs \"virtual NMIs\"");
	if (p2 & SDM_PROC2_VIRT_APIC_ACCESSES) {
		uint64_t a = rd(x, SDM_APIC_ACCESS_ADDR);
		RULE(!(a & 0xfff) && phys_ok(a), "[VMX controls] APIC-access address 0x%llx not 4-KByte aligned", ULL(a));
	}
	RULE(!(p2 & SDM_PROC2_VIRT_X2APIC_MODE) || !(p2 & SDM_PROC2_VIRT_APIC_ACCESSES),
	     "[VMX controls] \"virtualize x2APIC mode\" and \"virtualize APIC accesses\" are both 1");
	RULE(!vid || (pin & SDM_PIN_EXT_INT_EXITING),
	     "[VMX controls] \"virtual-interrupt delivery\" needs \"external-interrupt exiting\" (pin 0x%08x)", pin);
	if (pin & SDM_PIN_POSTED_INTR) {
		uint64_t nv = rd(x, SDM_POSTED_INTR_NV), d = rd(x, SDM_POSTED_INTR_DESC_ADDR);
		RULE(vid, "[VMX controls] \"process posted interrupts\" needs \"virtual-interrupt delivery\"");
		RULE(x->exit & SDM_EXIT_ACK_INTR_ON_EXIT,
		     "[VMX controls] \"process posted interrupts\" needs the \"acknowledge interrupt on exit\" VM-exit control");
		RULE(nv <= 0xff, "[VMX controls] posted-interrupt notification vector 0x%llx: bits 15:8 must be 0", ULL(nv));
		RULE(!(d & 0x3f) && phys_ok(d),
		     "[VMX controls] posted-interrupt descriptor address 0x%llx not 64-byte aligned", ULL(d));
	}
	if (p2 & SDM_PROC2_VPID)
		RULE(rd(x, SDM_VPID) != 0, "[VMX controls] \"enable VPID\" with VPID 0000H");
	if (p2 & SDM_PROC2_EPT)
		check_eptp(x, rd(x, SDM_EPT_POINTER));
	RULE((p2 & SDM_PROC2_EPT) || !(p2 & (SDM_PROC2_UNRESTRICTED_GUEST | SDM_PROC2_PML | SDM_PROC2_MODE_BASED_EPT_EXEC |
					    SDM_PROC2_SUBPAGE_WRITE_PERM)),
	     "[VMX controls] \"unrestricted guest\" (or PML, mode-based execute, sub-page permissions) needs \"enable EPT\"");
	if (x->proc3 & SDM_PROC3_IPI_VIRT) {
		uint64_t t = rd(x, SDM_PID_POINTER_TABLE);
		rd(x, SDM_LAST_PID_POINTER_INDEX);
		RULE(!(t & 7) && phys_ok(t), "[VMX controls] PID-pointer table address 0x%llx: bits 2:0 must be 0", ULL(t));
		RULE(t != 0, "[hv] IPI virtualization with PID-pointer table address 0: it would read entries at physical 0");
		RULE(vid && (p2 & SDM_PROC2_APIC_REG_VIRT) && (p2 & SDM_PROC2_VIRT_X2APIC_MODE) && (pin & SDM_PIN_POSTED_INTR),
		     "[hv] IPI virtualization needs virtual-interrupt delivery, APIC-register virtualization, virtualize "
		     "x2APIC mode and process posted interrupts (x2APIC ICR writes are only virtualized with them, and "
		     "targets receive through posted-interrupt processing): proc2 0x%08x pin 0x%08x", p2, pin);
	}
	/* Intel's ISE, "APIC-Timer Virtualization", checks on VMX controls (as
	 * Intel's KVM series applies them to a nested guest's VMCS). */
	if (x->proc3 & SDM_PROC3_APIC_TIMER_VIRT) {
		uint64_t vec = rd(x, SDM_VIRTUAL_TIMER_VECTOR);
		rd(x, SDM_GUEST_DEADLINE);
		rd(x, SDM_GUEST_DEADLINE_SHADOW);
		RULE(vid, "[VMX controls, ISE] \"APIC-timer virtualization\" needs \"virtual-interrupt delivery\"");
		RULE(!(proc & SDM_PROC_RDTSC_EXITING), "[VMX controls, ISE] \"APIC-timer virtualization\" needs \"RDTSC exiting\" 0");
		RULE(vec <= 0xff, "[VMX controls, ISE] virtual timer vector 0x%llx: bits 15:8 must be 0", ULL(vec));
	}
}

/* "Checks on VM-Exit Control Fields" and "Checks on VM-Entry Control Fields". */
static void check_exit_entry_controls(struct ctx *x)
{
	const struct vmx_caps *c = x->c;
	ctl_word(x, "exit", "IA32_VMX_(TRUE_)EXIT_CTLS", x->exit, &c->exit);
	RULE((x->pin & SDM_PIN_PREEMPTION_TIMER) || !(x->exit & SDM_EXIT_SAVE_PREEMPTION_TIMER),
	     "[VMX controls] \"save VMX-preemption timer value\" without \"activate VMX-preemption timer\"");
	static const struct { uint32_t count, addr; const char *what; } lists[] = {
		{ SDM_EXIT_MSR_STORE_COUNT, SDM_EXIT_MSR_STORE_ADDR, "VM-exit MSR-store" },
		{ SDM_EXIT_MSR_LOAD_COUNT, SDM_EXIT_MSR_LOAD_ADDR, "VM-exit MSR-load" },
		{ SDM_ENTRY_MSR_LOAD_COUNT, SDM_ENTRY_MSR_LOAD_ADDR, "VM-entry MSR-load" },
	};
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
		if (rd(x, lists[i].count)) {
			uint64_t a = rd(x, lists[i].addr);
			RULE(!(a & 0xf) && phys_ok(a), "[VMX controls] %s address 0x%llx not 16-byte aligned", lists[i].what, ULL(a));
		}

	ctl_word(x, "entry", "IA32_VMX_(TRUE_)ENTRY_CTLS", x->entry, &c->entry);
	RULE(!(x->entry & (SDM_ENTRY_TO_SMM | SDM_ENTRY_DEACT_DUAL_MONITOR)),
	     "[VMX controls] \"entry to SMM\" and \"deactivate dual-monitor treatment\" must be 0 outside SMM (entry 0x%08x)",
	     x->entry);
	uint64_t info = rd(x, SDM_ENTRY_INTR_INFO);
	if (info & SDM_INTR_INFO_VALID) {
		unsigned type = (info >> 8) & 7, vec = info & 0xff;
		RULE(type != 1 && (type != 7 || (c->proc.allowed1 & SDM_PROC_MONITOR_TRAP_FLAG)),
		     "[VMX controls] VM-entry interruption type %u is reserved", type);
		RULE(type != 2 || vec == 2, "[VMX controls] injected NMI with vector %u", vec);
		RULE(type != 3 || vec <= 31, "[VMX controls] injected hardware exception with vector %u", vec);
		RULE(type != 7 || vec == 0, "[VMX controls] injected other event with vector %u", vec);
		RULE(!(info & 0x7ffff000), "[VMX controls] VM-entry interruption information 0x%llx: bits 30:12 must be 0",
		     ULL(info));
	}
}

static void fixed_bits(struct ctx *x, const char *what, uint64_t v, uint64_t must1, uint64_t may1)
{
	RULE((v & must1) == must1 && !(v & ~may1),
	     "%s 0x%llx: bits fixed in VMX operation not respected (must-be-1 missing 0x%llx, must-be-0 set 0x%llx)", what,
	     ULL(v), ULL(must1 & ~v), ULL(v & ~may1));
}

/* "Checks on the Host-State Area". */
static void check_host(struct ctx *x)
{
	const struct vmx_caps *c = x->c;
	uint64_t cr0 = rd(x, SDM_HOST_CR0), cr3 = rd(x, SDM_HOST_CR3), cr4 = rd(x, SDM_HOST_CR4);
	bool as64 = x->exit & SDM_EXIT_HOST_ADDR_SPACE_SIZE;

	fixed_bits(x, "[host control registers] HOST_CR0", cr0, c->cr0_fixed0, c->cr0_fixed1);
	fixed_bits(x, "[host control registers] HOST_CR4", cr4, c->cr4_fixed0, c->cr4_fixed1);
	RULE(phys_ok(cr3), "[host control registers] HOST_CR3 0x%llx sets bits beyond the physical-address width", ULL(cr3));
	RULE(canonical(rd(x, SDM_HOST_SYSENTER_ESP)) && canonical(rd(x, SDM_HOST_SYSENTER_EIP)),
	     "[host MSRs] HOST_SYSENTER_ESP/EIP must be canonical");
	if (x->exit & SDM_EXIT_LOAD_PAT)
		RULE(pat_ok(rd(x, SDM_HOST_PAT)), "[host MSRs] HOST_PAT 0x%llx has an invalid memory type",
		     ULL(vmcs_record_get(SDM_HOST_PAT)));
	if (x->exit & SDM_EXIT_LOAD_EFER) {
		uint64_t efer = rd(x, SDM_HOST_EFER);
		RULE(!(efer & ~EFER_VALID), "[host MSRs] HOST_EFER 0x%llx sets reserved bits", ULL(efer));
		RULE(!!(efer & EFER_LMA) == as64 && !!(efer & EFER_LME) == as64,
		     "[host MSRs] HOST_EFER 0x%llx: LMA and LME must each equal \"host address-space size\" (%d)", ULL(efer), as64);
	}
	static const struct { uint32_t f; const char *n; } sels[] = {
		{ SDM_HOST_CS_SEL, "CS" }, { SDM_HOST_SS_SEL, "SS" }, { SDM_HOST_DS_SEL, "DS" }, { SDM_HOST_ES_SEL, "ES" },
		{ SDM_HOST_FS_SEL, "FS" }, { SDM_HOST_GS_SEL, "GS" }, { SDM_HOST_TR_SEL, "TR" },
	};
	for (size_t i = 0; i < sizeof sels / sizeof sels[0]; i++) {
		uint64_t s = rd(x, sels[i].f);
		RULE(!(s & 7), "[host segments] HOST_%s_SEL 0x%llx: RPL and TI must be 0", sels[i].n, ULL(s));
	}
	RULE(rd(x, SDM_HOST_CS_SEL), "[host segments] HOST_CS_SEL must not be 0000H");
	RULE(rd(x, SDM_HOST_TR_SEL), "[host segments] HOST_TR_SEL must not be 0000H");
	RULE(as64 || rd(x, SDM_HOST_SS_SEL) != 0, "[host segments] HOST_SS_SEL 0000H needs a 64-bit host");
	static const struct { uint32_t f; const char *n; } bases[] = {
		{ SDM_HOST_FS_BASE, "FS" }, { SDM_HOST_GS_BASE, "GS" }, { SDM_HOST_GDTR_BASE, "GDTR" },
		{ SDM_HOST_IDTR_BASE, "IDTR" }, { SDM_HOST_TR_BASE, "TR" },
	};
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
		uint64_t b = rd(x, bases[i].f);
		RULE(canonical(b), "[host segments] HOST_%s_BASE 0x%llx is not canonical", bases[i].n, ULL(b));
	}
	uint64_t rip = rd(x, SDM_HOST_RIP), rsp = rd(x, SDM_HOST_RSP);
	RULE(as64, "[address-space size] the \"host address-space size\" VM-exit control must be 1: VMLAUNCH runs in "
	     "64-bit mode (IA32_EFER.LMA = 1) (exit controls 0x%08x)", x->exit);
	if (as64) {
		RULE(cr4 & CR4_PAE, "[address-space size] HOST_CR4 0x%llx: PAE must be 1 for a 64-bit host", ULL(cr4));
		RULE(canonical(rip), "[address-space size] HOST_RIP 0x%llx is not canonical", ULL(rip));
	} else {
		RULE(!x->ia32e && !(cr4 & CR4_PCIDE) && !(rip >> 32),
		     "[address-space size] a 32-bit host needs \"IA-32e mode guest\" 0, HOST_CR4.PCIDE 0, HOST_RIP[63:32] 0");
	}
	RULE(canonical(rsp), "[hv] HOST_RSP 0x%llx is not canonical (not an SDM entry check; the first push after a VM "
	     "exit would fault)", ULL(rsp));
}

struct seg { const char *name; uint64_t sel, base, limit, ar; };

static struct seg rdseg(struct ctx *x, const char *name, uint32_t sel_field)
{
	uint32_t i = sel_field - SDM_GUEST_ES_SEL;   /* same index pattern as vmcs.c's write_seg */
	return (struct seg){ name, rd(x, sel_field), rd(x, SDM_GUEST_ES_BASE + i), rd(x, SDM_GUEST_ES_LIMIT + i),
			     rd(x, SDM_GUEST_ES_AR + i) };
}

static unsigned ar_type(const struct seg *s) { return s->ar & 0xf; }
static unsigned ar_dpl(const struct seg *s) { return (s->ar >> 5) & 3; }
static bool usable(const struct seg *s) { return !(s->ar & AR_UNUSABLE); }
static bool g_ok(const struct seg *s)
{
	bool g = s->ar & BIT(15);
	return !((s->limit & 0xfff) != 0xfff && g) && !((s->limit & 0xfff00000) && !g);
}

/* S, P, reserved 11:8 and 31:17, G versus limit: common to every checked segment. */
static void seg_common(struct ctx *x, const struct seg *s, bool want_s)
{
	RULE(!!(s->ar & BIT(4)) == want_s, "[guest segments] %s access rights 0x%llx: S must be %d", s->name, ULL(s->ar),
	     want_s);
	RULE(s->ar & BIT(7), "[guest segments] %s access rights 0x%llx: P must be 1", s->name, ULL(s->ar));
	RULE(!(s->ar & 0xf00) && !(s->ar & 0xfffe0000ull),
	     "[guest segments] %s access rights 0x%llx: reserved bits 11:8 and 31:17 must be 0", s->name, ULL(s->ar));
	RULE(g_ok(s), "[guest segments] %s limit 0x%llx inconsistent with G in access rights 0x%llx", s->name,
	     ULL(s->limit), ULL(s->ar));
}

/* "Checks on Guest Segment Registers". */
static void check_guest_segments(struct ctx *x, uint64_t cr0, uint64_t rflags)
{
	struct seg cs = rdseg(x, "CS", SDM_GUEST_CS_SEL), ss = rdseg(x, "SS", SDM_GUEST_SS_SEL);
	struct seg data[4] = { rdseg(x, "DS", SDM_GUEST_DS_SEL), rdseg(x, "ES", SDM_GUEST_ES_SEL),
			       rdseg(x, "FS", SDM_GUEST_FS_SEL), rdseg(x, "GS", SDM_GUEST_GS_SEL) };
	struct seg tr = rdseg(x, "TR", SDM_GUEST_TR_SEL), ldtr = rdseg(x, "LDTR", SDM_GUEST_LDTR_SEL);
	bool v86 = rflags & RFLAGS_VM, pe = cr0 & CR0_PE, ug = x->ug;

	RULE(!(tr.sel & 4), "[guest segments] TR selector 0x%llx: TI must be 0", ULL(tr.sel));
	RULE(!usable(&ldtr) || !(ldtr.sel & 4), "[guest segments] LDTR selector 0x%llx: TI must be 0", ULL(ldtr.sel));
	RULE(v86 || ug || (ss.sel & 3) == (cs.sel & 3), "[guest segments] SS.RPL must equal CS.RPL");
	RULE(canonical(tr.base) && canonical(data[2].base) && canonical(data[3].base),
	     "[guest segments] TR, FS and GS bases must be canonical");
	RULE(!usable(&ldtr) || canonical(ldtr.base), "[guest segments] LDTR base 0x%llx not canonical", ULL(ldtr.base));
	RULE(!(cs.base >> 32), "[guest segments] CS base 0x%llx: bits 63:32 must be 0", ULL(cs.base));
	const struct seg *low[3] = { &ss, &data[0], &data[1] };
	for (int i = 0; i < 3; i++)
		RULE(!usable(low[i]) || !(low[i]->base >> 32), "[guest segments] %s base 0x%llx: bits 63:32 must be 0",
		     low[i]->name, ULL(low[i]->base));

	if (v86) {
		const struct seg *all[6] = { &cs, &ss, &data[0], &data[1], &data[2], &data[3] };
		for (int i = 0; i < 6; i++)
			RULE(all[i]->base == all[i]->sel << 4 && all[i]->limit == 0xffff && all[i]->ar == 0xf3,
			     "[guest segments] virtual-8086 %s must have base = selector << 4, limit FFFFH, access rights F3H",
			     all[i]->name);
	} else {
		unsigned t = ar_type(&cs);
		RULE(t == 9 || t == 11 || t == 13 || t == 15 || (ug && t == 3),
		     "[guest segments] CS type %u: must be 9, 11, 13 or 15 (or 3 with unrestricted guest)", t);
		RULE(t != 3 || ar_dpl(&cs) == 0, "[guest segments] CS type 3 needs DPL 0");
		RULE(!(t == 9 || t == 11) || ar_dpl(&cs) == ar_dpl(&ss),
		     "[guest segments] non-conforming CS: DPL %u must equal SS.DPL %u", ar_dpl(&cs), ar_dpl(&ss));
		RULE(!(t == 13 || t == 15) || ar_dpl(&cs) <= ar_dpl(&ss),
		     "[guest segments] conforming CS: DPL %u must not exceed SS.DPL %u", ar_dpl(&cs), ar_dpl(&ss));
		seg_common(x, &cs, true);
		RULE(!(x->ia32e && (cs.ar & BIT(13)) && (cs.ar & BIT(14))),
		     "[guest segments] CS access rights 0x%llx: L and D/B both 1 in an IA-32e mode guest", ULL(cs.ar));
		if (usable(&ss)) {
			RULE(ar_type(&ss) == 3 || ar_type(&ss) == 7, "[guest segments] SS type %u: must be 3 or 7", ar_type(&ss));
			seg_common(x, &ss, true);
		}
		RULE(ug || ar_dpl(&ss) == (ss.sel & 3), "[guest segments] SS.DPL must equal SS.RPL without unrestricted guest");
		RULE(!(t == 3 || !pe) || ar_dpl(&ss) == 0,
		     "[guest segments] SS.DPL %u must be 0 when CS type is 3 or CR0.PE is 0", ar_dpl(&ss));
		for (int i = 0; i < 4; i++) {
			const struct seg *d = &data[i];
			if (!usable(d))
				continue;
			RULE((ar_type(d) & 1) && (!(ar_type(d) & 8) || (ar_type(d) & 2)),
			     "[guest segments] %s type %u: must be accessed, and readable if code", d->name, ar_type(d));
			RULE(ug || ar_type(d) > 11 || ar_dpl(d) >= (d->sel & 3),
			     "[guest segments] %s DPL must not be below its RPL without unrestricted guest", d->name);
			seg_common(x, d, true);
		}
	}
	unsigned tt = ar_type(&tr);
	RULE(x->ia32e ? tt == 11 : (tt == 3 || tt == 11),
	     "[guest segments] TR type %u: must be 11 (busy 64-bit TSS) in IA-32e mode, else 3 or 11", tt);
	RULE(usable(&tr), "[guest segments] TR must be usable");
	seg_common(x, &tr, false);
	if (usable(&ldtr)) {
		RULE(ar_type(&ldtr) == 2, "[guest segments] LDTR type %u: must be 2 (LDT)", ar_type(&ldtr));
		seg_common(x, &ldtr, false);
	}
}

/* "Checks on Guest Non-Register State". */
static void check_guest_nonreg(struct ctx *x, uint64_t rflags)
{
	const struct vmx_caps *c = x->c;
	uint64_t act = rd(x, SDM_GUEST_ACTIVITY_STATE), intr = rd(x, SDM_GUEST_INTERRUPTIBILITY);
	uint64_t info = rd(x, SDM_ENTRY_INTR_INFO), pend = rd(x, SDM_GUEST_PENDING_DBG);
	bool inject = info & SDM_INTR_INFO_VALID;
	unsigned itype = (info >> 8) & 7;

	RULE(act <= 3, "[guest non-register state] activity state %llu is not 0-3", ULL(act));
	RULE(act != SDM_ACTIVITY_HLT || (c->misc & SDM_MISC_ACT_HLT), "[guest non-register state] activity state HLT "
	     "not supported by IA32_VMX_MISC bit 6");
	RULE(act != SDM_ACTIVITY_SHUTDOWN || (c->misc & SDM_MISC_ACT_SHUTDOWN), "[guest non-register state] activity "
	     "state shutdown not supported by IA32_VMX_MISC bit 7");
	RULE(act != SDM_ACTIVITY_WAIT_SIPI || (c->misc & SDM_MISC_ACT_WAIT_SIPI), "[guest non-register state] activity "
	     "state wait-for-SIPI not supported by IA32_VMX_MISC bit 8");
	RULE(act != SDM_ACTIVITY_HLT || ((rd(x, SDM_GUEST_SS_AR) >> 5) & 3) == 0,
	     "[guest non-register state] activity state HLT needs SS.DPL 0");
	RULE(act == SDM_ACTIVITY_ACTIVE || !(intr & (INTR_STI | INTR_MOVSS)),
	     "[guest non-register state] activity state %llu with blocking by STI or MOV SS (interruptibility 0x%llx)",
	     ULL(act), ULL(intr));
	RULE(!inject || act == SDM_ACTIVITY_ACTIVE || act == SDM_ACTIVITY_HLT,
	     "[guest non-register state] event injection needs activity state active or HLT");
	RULE(act != SDM_ACTIVITY_WAIT_SIPI || !(x->entry & SDM_ENTRY_TO_SMM),
	     "[guest non-register state] wait-for-SIPI with \"entry to SMM\"");

	RULE(!(intr & ~0x1full), "[guest non-register state] interruptibility 0x%llx: bits 31:5 must be 0", ULL(intr));
	RULE((intr & 3) != 3, "[guest non-register state] interruptibility: blocking by STI and by MOV SS both set");
	RULE(!(intr & INTR_STI) || (rflags & RFLAGS_IF), "[guest non-register state] blocking by STI needs RFLAGS.IF 1");
	RULE(!(inject && itype == 0) || !(intr & 3),
	     "[guest non-register state] injecting an external interrupt while blocked by STI or MOV SS");
	RULE(!(inject && itype == 2) || !(intr & INTR_MOVSS),
	     "[guest non-register state] injecting an NMI while blocked by MOV SS");
	RULE(!(intr & INTR_SMI), "[guest non-register state] blocking by SMI outside SMM");
	RULE(!(intr & BIT(4)), "[guest non-register state] enclave interruption (bit 4) without SGX");
	RULE(!(inject && itype == 2 && (x->pin & SDM_PIN_VIRTUAL_NMIS)) || !(intr & INTR_NMI),
	     "[guest non-register state] injecting a virtual NMI while blocked by NMI");

	RULE(!(pend & (0xff0ull | BIT(13) | BIT(15) | ~0ull << 17)),
	     "[guest non-register state] pending debug exceptions 0x%llx: reserved bits set", ULL(pend));
	if ((intr & 3) || act == SDM_ACTIVITY_HLT) {
		bool btf = rd(x, SDM_GUEST_DEBUGCTL) & BIT(1), tf = rflags & RFLAGS_TF, bs = pend & BIT(14);
		RULE(bs == (tf && !btf), "[guest non-register state] pending debug BS must be RFLAGS.TF && !DEBUGCTL.BTF");
	}
	uint64_t link = rd(x, SDM_LINK_POINTER);
	RULE(link == ~0ull, "[guest non-register state] VMCS link pointer 0x%llx is not FFFFFFFF_FFFFFFFFH (no shadow "
	     "VMCS is set up)", ULL(link));
}

/* "Checks on the Guest State Area". */
static void check_guest(struct ctx *x)
{
	const struct vmx_caps *c = x->c;
	uint64_t cr0 = rd(x, SDM_GUEST_CR0), cr3 = rd(x, SDM_GUEST_CR3), cr4 = rd(x, SDM_GUEST_CR4);
	uint64_t rflags = rd(x, SDM_GUEST_RFLAGS), rip = rd(x, SDM_GUEST_RIP);
	uint64_t relax = x->ug ? (CR0_PE | CR0_PG) : 0;

	/* CR0.NW and CR0.CD are never checked; PE and PG not with unrestricted guest. */
	fixed_bits(x, "[guest control registers] GUEST_CR0", cr0 & ~(CR0_NW | CR0_CD),
		   c->cr0_fixed0 & ~relax & ~(CR0_NW | CR0_CD), c->cr0_fixed1);
	RULE(!(cr0 & CR0_PG) || (cr0 & CR0_PE), "[guest control registers] GUEST_CR0 0x%llx: PG needs PE", ULL(cr0));
	fixed_bits(x, "[guest control registers] GUEST_CR4", cr4, c->cr4_fixed0, c->cr4_fixed1);
	RULE(!(cr4 & CR4_CET) || (cr0 & CR0_WP), "[guest control registers] CR4.CET needs CR0.WP");
	if (x->entry & SDM_ENTRY_LOAD_DEBUG_CTLS) {
		uint64_t dbg = rd(x, SDM_GUEST_DEBUGCTL), dr7 = rd(x, SDM_GUEST_DR7);
		RULE(!(dbg & (0x3cull | ~0xffffull)), "[guest MSRs] GUEST_DEBUGCTL 0x%llx sets reserved bits", ULL(dbg));
		RULE(!(dr7 >> 32), "[guest debug registers] GUEST_DR7 0x%llx: bits 63:32 must be 0", ULL(dr7));
	}
	if (x->ia32e)
		RULE((cr0 & CR0_PG) && (cr4 & CR4_PAE), "[guest control registers] an IA-32e mode guest needs CR0.PG and "
		     "CR4.PAE (CR0 0x%llx, CR4 0x%llx)", ULL(cr0), ULL(cr4));
	else
		RULE(!(cr4 & CR4_PCIDE), "[guest control registers] CR4.PCIDE outside IA-32e mode");
	RULE(phys_ok(cr3), "[guest control registers] GUEST_CR3 0x%llx beyond the physical-address width", ULL(cr3));
	RULE(canonical(rd(x, SDM_GUEST_SYSENTER_ESP)) && canonical(rd(x, SDM_GUEST_SYSENTER_EIP)),
	     "[guest MSRs] GUEST_SYSENTER_ESP/EIP must be canonical");
	if (x->entry & SDM_ENTRY_LOAD_PAT)
		RULE(pat_ok(rd(x, SDM_GUEST_PAT)), "[guest MSRs] GUEST_PAT 0x%llx has an invalid memory type",
		     ULL(vmcs_record_get(SDM_GUEST_PAT)));
	if (x->entry & SDM_ENTRY_LOAD_EFER) {
		uint64_t efer = rd(x, SDM_GUEST_EFER);
		RULE(!(efer & ~EFER_VALID), "[guest MSRs] GUEST_EFER 0x%llx sets reserved bits", ULL(efer));
		RULE(!!(efer & EFER_LMA) == x->ia32e, "[guest MSRs] GUEST_EFER 0x%llx: LMA must equal \"IA-32e mode guest\" "
		     "(%d)", ULL(efer), x->ia32e);
		RULE(!(cr0 & CR0_PG) || !!(efer & EFER_LMA) == !!(efer & EFER_LME),
		     "[guest MSRs] GUEST_EFER 0x%llx: LME must equal LMA when CR0.PG is 1", ULL(efer));
	}

	check_guest_segments(x, cr0, rflags);

	RULE(canonical(rd(x, SDM_GUEST_GDTR_BASE)) && canonical(rd(x, SDM_GUEST_IDTR_BASE)),
	     "[guest descriptor tables] GDTR and IDTR bases must be canonical");
	uint64_t gl = rd(x, SDM_GUEST_GDTR_LIMIT), il = rd(x, SDM_GUEST_IDTR_LIMIT);
	RULE(gl <= 0xffff && il <= 0xffff, "[guest descriptor tables] GDTR limit 0x%llx / IDTR limit 0x%llx: bits 31:16 "
	     "must be 0", ULL(gl), ULL(il));

	bool cs_l = rd(x, SDM_GUEST_CS_AR) & BIT(13);
	if (x->ia32e && cs_l)
		RULE(canonical(rip), "[guest RIP] GUEST_RIP 0x%llx is not canonical (64-bit code)", ULL(rip));
	else
		RULE(!(rip >> 32), "[guest RIP] GUEST_RIP 0x%llx: bits 63:32 must be 0 outside 64-bit mode", ULL(rip));
	RULE(!(rflags & RFLAGS_RSVD) && (rflags & 2), "[guest RFLAGS] GUEST_RFLAGS 0x%llx: reserved bit 1 must be 1 and "
	     "bits 63:22, 15, 5, 3 must be 0", ULL(rflags));
	RULE(!(rflags & RFLAGS_VM) || (!x->ia32e && (cr0 & CR0_PE)),
	     "[guest RFLAGS] RFLAGS.VM must be 0 in an IA-32e mode guest or with CR0.PE 0");
	uint64_t info = rd(x, SDM_ENTRY_INTR_INFO);
	RULE(!((info & SDM_INTR_INFO_VALID) && ((info >> 8) & 7) == 0) || (rflags & RFLAGS_IF),
	     "[guest RFLAGS] injecting an external interrupt needs RFLAGS.IF 1");

	check_guest_nonreg(x, rflags);

	/* PAE paging with EPT: VM entry checks the PDPTE fields. */
	if ((cr0 & CR0_PG) && (cr4 & CR4_PAE) && !x->ia32e && (x->proc2 & SDM_PROC2_EPT))
		for (uint32_t f = SDM_GUEST_PDPTE0; f < SDM_GUEST_PDPTE0 + 8; f += 2) {
			uint64_t e = rd(x, f);
			RULE(!(e & 1) || (!(e & 0x1e6) && phys_ok(e)), "[guest PDPTEs] %s 0x%llx sets reserved bits",
			     sdm_vmcs_name(f), ULL(e));
		}
}

int vmentry_check(const struct vmx_caps *c, char *why, size_t n)
{
	struct ctx ctx = { .c = c, .why = why, .n = n }, *x = &ctx;
	if (why && n)
		why[0] = 0;
	x->pin = (uint32_t)rd(x, SDM_PIN_CONTROLS);
	x->proc = (uint32_t)rd(x, SDM_PROC_CONTROLS);
	x->proc2 = (x->proc & SDM_PROC_ACTIVATE_SECONDARY) ? (uint32_t)rd(x, SDM_PROC2_CONTROLS) : 0;
	x->proc3 = (x->proc & SDM_PROC_ACTIVATE_TERTIARY) ? rd(x, SDM_TERTIARY_CONTROLS) : 0;
	x->exit = (uint32_t)rd(x, SDM_EXIT_CONTROLS);
	x->entry = (uint32_t)rd(x, SDM_ENTRY_CONTROLS);
	x->ia32e = x->entry & SDM_ENTRY_IA32E_MODE_GUEST;
	x->ug = x->proc2 & SDM_PROC2_UNRESTRICTED_GUEST;

	check_fields(x);
	check_exec_controls(x);
	check_exit_entry_controls(x);
	check_host(x);
	check_guest(x);
	return x->errors;
}
