/* Architectural MSR numbers used outside vmx/ (VMX capability MSRs are in vmx/vmx_defs.h). */
#ifndef LIB_MSR_H
#define LIB_MSR_H
#define MSR_IA32_TSC             0x010
#define MSR_IA32_TSC_ADJUST      0x03b
#define MSR_SMI_COUNT            0x034   /* SDM Vol. 4: SMIs since reset, 31:0 (Nehalem and later) */
#define MSR_IA32_FEATURE_CONTROL 0x03a
#define MSR_IA32_APIC_BASE       0x01b
#define MSR_IA32_BIOS_SIGN_ID    0x08b
#define MSR_IA32_MTRRCAP         0x0fe
#define MSR_IA32_SYSENTER_CS     0x174
#define MSR_IA32_SYSENTER_ESP    0x175
#define MSR_IA32_SYSENTER_EIP    0x176
#define MSR_IA32_MISC_ENABLE     0x1a0
#define MSR_IA32_VMX_FIRST       0x480   /* IA32_VMX_BASIC */
#define MSR_IA32_VMX_LAST        0x493   /* IA32_VMX_EXIT_CTLS2 */
#define MSR_IA32_PAT             0x277
#define MSR_IA32_PERF_GLOBAL_CTRL 0x38f
#define MSR_IA32_PEBS_ENABLE     0x3f1
#define MSR_IA32_RTIT_OUTPUT_BASE 0x560
#define MSR_IA32_RTIT_OUTPUT_MASK 0x561
#define MSR_IA32_RTIT_CTL        0x570
#define MSR_IA32_RTIT_CR3_MATCH  0x572
#define MSR_IA32_RTIT_ADDR0_A    0x580
#define MSR_IA32_RTIT_ADDR3_B    0x587
#define MSR_IA32_DS_AREA         0x600
#define MSR_IA32_MTRR_DEF_TYPE   0x2ff
#define MSR_IA32_TSC_DEADLINE    0x6e0
#define MSR_X2APIC_BASE          0x800
#define MSR_X2APIC_APICID        0x802
#define MSR_X2APIC_TPR           0x808
#define MSR_X2APIC_EOI           0x80b
#define MSR_X2APIC_ICR           0x830
#define MSR_X2APIC_TMCCT         0x839
#define MSR_X2APIC_SELF_IPI      0x83f
#define MSR_X2APIC_LAST          0x8ff
#define MSR_IA32_EFER            0xc0000080
#define MSR_IA32_STAR            0xc0000081
#define MSR_IA32_LSTAR           0xc0000082
#define MSR_IA32_CSTAR           0xc0000083
#define MSR_IA32_FMASK           0xc0000084
#define MSR_IA32_FS_BASE         0xc0000100
#define MSR_IA32_GS_BASE         0xc0000101
#define MSR_IA32_KERNEL_GS_BASE  0xc0000102
#define MSR_IA32_TSC_AUX         0xc0000103

#define MISC_ENABLE_BTS_UNAVAILABLE  (1ull << 11)
#define MISC_ENABLE_PEBS_UNAVAILABLE (1ull << 12)
#define APIC_BASE_BSP    (1ull << 8)
#define APIC_BASE_X2APIC (1ull << 10)
#define APIC_BASE_ENABLE (1ull << 11)
#define EFER_SCE (1ull << 0)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)
#define EFER_NXE (1ull << 11)
#endif
