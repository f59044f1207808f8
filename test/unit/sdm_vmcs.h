/* VMCS field encodings and control bits as the SDM gives them, for the test
 * models only: written out here, never taken from vmx/vmcs_fields.h or
 * vmx/vmx_defs.h, so that a wrong encoding or bit in the project makes the
 * VM-entry model fail instead of agreeing with it.
 *
 * Encodings: SDM Vol. 3D, Appendix B "Field Encoding in VMCS"; tertiary
 * controls (0x2034), PID-pointer table address (0x2042) and last PID-pointer
 * index (0x0008) from the ISE / Vol. 3C "IPI Virtualization". Bits: Vol. 3C
 * "VM-Execution Control Fields", "VM-Exit Controls", "VM-Entry Controls",
 * "VM-Entry Controls for Event Injection", "Guest Non-Register State", and
 * Appendix A "VMX Capability Reporting Facility" (A.6 IA32_VMX_MISC, A.10
 * IA32_VMX_EPT_VPID_CAP). Names mirror the project's minus its prefix, so
 * messages read the same. */
#ifndef TEST_UNIT_SDM_VMCS_H
#define TEST_UNIT_SDM_VMCS_H
#include <stdint.h>

#define SDM_VMCS_FIELDS(X) \
	/* 16-bit control */ \
	X(VPID, 0x0000) X(POSTED_INTR_NV, 0x0002) X(LAST_PID_POINTER_INDEX, 0x0008) X(VIRTUAL_TIMER_VECTOR, 0x000a) \
	/* 16-bit guest state */ \
	X(GUEST_ES_SEL, 0x0800) X(GUEST_CS_SEL, 0x0802) X(GUEST_SS_SEL, 0x0804) X(GUEST_DS_SEL, 0x0806) \
	X(GUEST_FS_SEL, 0x0808) X(GUEST_GS_SEL, 0x080a) X(GUEST_LDTR_SEL, 0x080c) X(GUEST_TR_SEL, 0x080e) \
	X(GUEST_INTR_STATUS, 0x0810) \
	/* 16-bit host state */ \
	X(HOST_ES_SEL, 0x0c00) X(HOST_CS_SEL, 0x0c02) X(HOST_SS_SEL, 0x0c04) X(HOST_DS_SEL, 0x0c06) \
	X(HOST_FS_SEL, 0x0c08) X(HOST_GS_SEL, 0x0c0a) X(HOST_TR_SEL, 0x0c0c) \
	/* 64-bit control */ \
	X(IO_BITMAP_A, 0x2000) X(IO_BITMAP_B, 0x2002) X(MSR_BITMAP, 0x2004) X(EXIT_MSR_STORE_ADDR, 0x2006) \
	X(EXIT_MSR_LOAD_ADDR, 0x2008) X(ENTRY_MSR_LOAD_ADDR, 0x200a) X(TSC_OFFSET, 0x2010) X(VIRTUAL_APIC_PAGE_ADDR, 0x2012) \
	X(APIC_ACCESS_ADDR, 0x2014) X(POSTED_INTR_DESC_ADDR, 0x2016) X(EPT_POINTER, 0x201a) \
	X(EOI_EXIT_BITMAP0, 0x201c) X(EOI_EXIT_BITMAP1, 0x201e) X(EOI_EXIT_BITMAP2, 0x2020) \
	X(EOI_EXIT_BITMAP3, 0x2022) X(XSS_EXIT_BITMAP, 0x202c) X(TERTIARY_CONTROLS, 0x2034) \
	X(PID_POINTER_TABLE, 0x2042) X(GUEST_DEADLINE_SHADOW, 0x204e) \
	/* 64-bit guest state */ \
	X(LINK_POINTER, 0x2800) X(GUEST_DEBUGCTL, 0x2802) X(GUEST_PAT, 0x2804) X(GUEST_EFER, 0x2806) \
	X(GUEST_PDPTE0, 0x280a) X(GUEST_PDPTE1, 0x280c) X(GUEST_PDPTE2, 0x280e) X(GUEST_PDPTE3, 0x2810) \
	X(GUEST_DEADLINE, 0x2830) \
	/* 64-bit host state */ \
	X(HOST_PAT, 0x2c00) X(HOST_EFER, 0x2c02) \
	/* 32-bit control */ \
	X(PIN_CONTROLS, 0x4000) X(PROC_CONTROLS, 0x4002) X(CR3_TARGET_COUNT, 0x400a) X(EXIT_CONTROLS, 0x400c) \
	X(EXIT_MSR_STORE_COUNT, 0x400e) X(EXIT_MSR_LOAD_COUNT, 0x4010) X(ENTRY_CONTROLS, 0x4012) \
	X(ENTRY_MSR_LOAD_COUNT, 0x4014) X(ENTRY_INTR_INFO, 0x4016) X(TPR_THRESHOLD, 0x401c) \
	X(PROC2_CONTROLS, 0x401e) \
	/* 32-bit guest state */ \
	X(GUEST_ES_LIMIT, 0x4800) X(GUEST_CS_LIMIT, 0x4802) X(GUEST_SS_LIMIT, 0x4804) X(GUEST_DS_LIMIT, 0x4806) \
	X(GUEST_FS_LIMIT, 0x4808) X(GUEST_GS_LIMIT, 0x480a) X(GUEST_LDTR_LIMIT, 0x480c) X(GUEST_TR_LIMIT, 0x480e) \
	X(GUEST_GDTR_LIMIT, 0x4810) X(GUEST_IDTR_LIMIT, 0x4812) X(GUEST_ES_AR, 0x4814) X(GUEST_CS_AR, 0x4816) \
	X(GUEST_SS_AR, 0x4818) X(GUEST_DS_AR, 0x481a) X(GUEST_FS_AR, 0x481c) X(GUEST_GS_AR, 0x481e) \
	X(GUEST_LDTR_AR, 0x4820) X(GUEST_TR_AR, 0x4822) X(GUEST_INTERRUPTIBILITY, 0x4824) \
	X(GUEST_ACTIVITY_STATE, 0x4826) \
	/* natural-width guest state */ \
	X(GUEST_CR0, 0x6800) X(GUEST_CR3, 0x6802) X(GUEST_CR4, 0x6804) X(GUEST_ES_BASE, 0x6806) \
	X(GUEST_CS_BASE, 0x6808) X(GUEST_SS_BASE, 0x680a) X(GUEST_DS_BASE, 0x680c) X(GUEST_FS_BASE, 0x680e) \
	X(GUEST_GS_BASE, 0x6810) X(GUEST_LDTR_BASE, 0x6812) X(GUEST_TR_BASE, 0x6814) X(GUEST_GDTR_BASE, 0x6816) \
	X(GUEST_IDTR_BASE, 0x6818) X(GUEST_DR7, 0x681a) X(GUEST_RSP, 0x681c) X(GUEST_RIP, 0x681e) \
	X(GUEST_RFLAGS, 0x6820) X(GUEST_PENDING_DBG, 0x6822) X(GUEST_SYSENTER_ESP, 0x6824) \
	X(GUEST_SYSENTER_EIP, 0x6826) \
	/* natural-width host state */ \
	X(HOST_CR0, 0x6c00) X(HOST_CR3, 0x6c02) X(HOST_CR4, 0x6c04) X(HOST_FS_BASE, 0x6c06) X(HOST_GS_BASE, 0x6c08) \
	X(HOST_TR_BASE, 0x6c0a) X(HOST_GDTR_BASE, 0x6c0c) X(HOST_IDTR_BASE, 0x6c0e) X(HOST_SYSENTER_ESP, 0x6c10) \
	X(HOST_SYSENTER_EIP, 0x6c12) X(HOST_RSP, 0x6c14) X(HOST_RIP, 0x6c16)

enum sdm_vmcs_field {
#define SDM_FIELD_ENUM(name, enc) SDM_##name = enc,
	SDM_VMCS_FIELDS(SDM_FIELD_ENUM)
#undef SDM_FIELD_ENUM
};

/* The model's name of an encoding, for messages ("unnamed field" if none). */
const char *sdm_vmcs_name(uint32_t encoding);

#define SDM_B(n) (1u << (n))

/* Pin-based VM-execution controls. */
#define SDM_PIN_EXT_INT_EXITING          SDM_B(0)
#define SDM_PIN_NMI_EXITING              SDM_B(3)
#define SDM_PIN_VIRTUAL_NMIS             SDM_B(5)
#define SDM_PIN_PREEMPTION_TIMER         SDM_B(6)
#define SDM_PIN_POSTED_INTR              SDM_B(7)
/* Primary processor-based VM-execution controls. */
#define SDM_PROC_RDTSC_EXITING           SDM_B(12)
#define SDM_PROC_ACTIVATE_TERTIARY       SDM_B(17)
#define SDM_PROC_USE_TPR_SHADOW          SDM_B(21)
#define SDM_PROC_NMI_WINDOW_EXITING      SDM_B(22)
#define SDM_PROC_USE_IO_BITMAPS          SDM_B(25)
#define SDM_PROC_MONITOR_TRAP_FLAG       SDM_B(27)
#define SDM_PROC_USE_MSR_BITMAPS         SDM_B(28)
#define SDM_PROC_ACTIVATE_SECONDARY      SDM_B(31)
/* Secondary processor-based VM-execution controls. */
#define SDM_PROC2_VIRT_APIC_ACCESSES     SDM_B(0)
#define SDM_PROC2_EPT                    SDM_B(1)
#define SDM_PROC2_VIRT_X2APIC_MODE       SDM_B(4)
#define SDM_PROC2_VPID                   SDM_B(5)
#define SDM_PROC2_UNRESTRICTED_GUEST     SDM_B(7)
#define SDM_PROC2_APIC_REG_VIRT          SDM_B(8)
#define SDM_PROC2_VIRT_INTR_DELIVERY     SDM_B(9)
#define SDM_PROC2_PML                    SDM_B(17)
#define SDM_PROC2_XSAVES                 SDM_B(20)
#define SDM_PROC2_MODE_BASED_EPT_EXEC    SDM_B(22)
#define SDM_PROC2_SUBPAGE_WRITE_PERM     SDM_B(23)
/* Tertiary processor-based VM-execution controls (64 bits). */
#define SDM_PROC3_IPI_VIRT               (1ull << 4)
/* APIC-timer virtualization (Intel's ISE, "APIC-Timer Virtualization";
 * the same encodings in Intel's KVM series): tertiary bit 8; the virtual
 * timer vector (16-bit control 0x000A), the guest deadline (64-bit guest
 * state 0x2830) and its shadow (64-bit control 0x204E), in the field list. */
#define SDM_PROC3_APIC_TIMER_VIRT        (1ull << 8)
/* Primary VM-exit controls. */
#define SDM_EXIT_HOST_ADDR_SPACE_SIZE    SDM_B(9)
#define SDM_EXIT_ACK_INTR_ON_EXIT        SDM_B(15)
#define SDM_EXIT_SAVE_PAT                SDM_B(18)
#define SDM_EXIT_LOAD_PAT                SDM_B(19)
#define SDM_EXIT_SAVE_EFER               SDM_B(20)
#define SDM_EXIT_LOAD_EFER               SDM_B(21)
#define SDM_EXIT_SAVE_PREEMPTION_TIMER   SDM_B(22)
/* VM-entry controls. */
#define SDM_ENTRY_LOAD_DEBUG_CTLS        SDM_B(2)
#define SDM_ENTRY_IA32E_MODE_GUEST       SDM_B(9)
#define SDM_ENTRY_TO_SMM                 SDM_B(10)
#define SDM_ENTRY_DEACT_DUAL_MONITOR     SDM_B(11)
#define SDM_ENTRY_LOAD_PAT               SDM_B(14)
#define SDM_ENTRY_LOAD_EFER              SDM_B(15)
/* VM-entry interruption information: valid is bit 31, type bits 10:8. */
#define SDM_INTR_INFO_VALID              SDM_B(31)
/* Activity states ("Guest Non-Register State"). */
#define SDM_ACTIVITY_ACTIVE              0
#define SDM_ACTIVITY_HLT                 1
#define SDM_ACTIVITY_SHUTDOWN            2
#define SDM_ACTIVITY_WAIT_SIPI           3
/* IA32_VMX_MISC (A.6): activity states supported. */
#define SDM_MISC_ACT_HLT                 (1ull << 6)
#define SDM_MISC_ACT_SHUTDOWN            (1ull << 7)
#define SDM_MISC_ACT_WAIT_SIPI           (1ull << 8)
/* IA32_VMX_EPT_VPID_CAP (A.10). */
#define SDM_EPT_CAP_PWL4                 (1ull << 6)
#define SDM_EPT_CAP_PWL5                 (1ull << 7)
#define SDM_EPT_CAP_MEMTYPE_UC           (1ull << 8)
#define SDM_EPT_CAP_MEMTYPE_WB           (1ull << 14)
#define SDM_EPT_CAP_AD_FLAGS             (1ull << 21)
#define SDM_EPT_CAP_SSS_CONTROL          (1ull << 23)
#endif
