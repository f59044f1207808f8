/* VMX architectural constants: capability MSRs and the bits of every control
 * word, named after the Intel SDM Vol. 3C ("Virtual Machine Control
 * Structures", "VM-Execution Control Fields" and Vol. 3D Appendix A "VMX
 * Capability Reporting Facility"). Only names here; no code. */
#ifndef VMX_VMX_DEFS_H
#define VMX_VMX_DEFS_H
#include "../lib/types.h"

#define VMX_B32(n) (1u << (n))	/* a bit of a 32-bit control word */

/* ---- CPUID and IA32_FEATURE_CONTROL ---- */
#define CPUID1_ECX_VMX                      VMX_B32(5)

#ifndef MSR_IA32_FEATURE_CONTROL	/* lib/msr.h may name it too */
#define MSR_IA32_FEATURE_CONTROL            0x03a
#endif
#define FEATURE_CONTROL_LOCK                BIT(0)
#define FEATURE_CONTROL_VMX_INSIDE_SMX      BIT(1)
#define FEATURE_CONTROL_VMX_OUTSIDE_SMX     BIT(2)

/* ---- VMX capability MSRs (Appendix A) ---- */
#define MSR_IA32_VMX_BASIC                  0x480
#define MSR_IA32_VMX_PINBASED_CTLS          0x481
#define MSR_IA32_VMX_PROCBASED_CTLS         0x482
#define MSR_IA32_VMX_EXIT_CTLS              0x483
#define MSR_IA32_VMX_ENTRY_CTLS             0x484
#define MSR_IA32_VMX_MISC                   0x485
#define MSR_IA32_VMX_CR0_FIXED0             0x486
#define MSR_IA32_VMX_CR0_FIXED1             0x487
#define MSR_IA32_VMX_CR4_FIXED0             0x488
#define MSR_IA32_VMX_CR4_FIXED1             0x489
#define MSR_IA32_VMX_VMCS_ENUM              0x48a
#define MSR_IA32_VMX_PROCBASED_CTLS2        0x48b
#define MSR_IA32_VMX_EPT_VPID_CAP           0x48c
#define MSR_IA32_VMX_TRUE_PINBASED_CTLS     0x48d
#define MSR_IA32_VMX_TRUE_PROCBASED_CTLS    0x48e
#define MSR_IA32_VMX_TRUE_EXIT_CTLS         0x48f
#define MSR_IA32_VMX_TRUE_ENTRY_CTLS        0x490
#define MSR_IA32_VMX_VMFUNC                 0x491
#define MSR_IA32_VMX_PROCBASED_CTLS3        0x492	/* 64-bit, allowed-1 only */
#define MSR_IA32_VMX_EXIT_CTLS2             0x493	/* 64-bit, allowed-1 only */

/* A 32-bit control capability MSR: allowed-0 in 31:0, allowed-1 in 63:32. */
#define VMX_CTL_ALLOWED0(msr)               ((uint32_t)(msr))
#define VMX_CTL_ALLOWED1(msr)               ((uint32_t)((msr) >> 32))

/* ---- IA32_VMX_BASIC (A.1) ---- */
#define VMX_BASIC_REVISION_MASK             0x7fffffffull	/* bits 30:0 */
#define VMX_BASIC_VMCS_SIZE_SHIFT           32
#define VMX_BASIC_VMCS_SIZE_MASK            0x1fffull		/* bits 44:32 */
#define VMX_BASIC_PHYS_ADDR_32              BIT(48)	/* VMXON/VMCS addresses limited to 32 bits */
#define VMX_BASIC_DUAL_MONITOR              BIT(49)
#define VMX_BASIC_MEMTYPE_SHIFT             50
#define VMX_BASIC_MEMTYPE_MASK              0xfull		/* bits 53:50 */
#define VMX_BASIC_MEMTYPE_UC                0
#define VMX_BASIC_MEMTYPE_WB                6
#define VMX_BASIC_INS_OUTS_INFO             BIT(54)
#define VMX_BASIC_TRUE_CTLS                 BIT(55)
#define VMX_BASIC_NO_ERRCODE_CHECK          BIT(56)	/* any exception may be injected with or without error code */

/* ---- Pin-based VM-execution controls ---- */
#define VMX_PIN_EXT_INT_EXITING             VMX_B32(0)
#define VMX_PIN_NMI_EXITING                 VMX_B32(3)
#define VMX_PIN_VIRTUAL_NMIS                VMX_B32(5)
#define VMX_PIN_PREEMPTION_TIMER            VMX_B32(6)
#define VMX_PIN_POSTED_INTR                 VMX_B32(7)

/* ---- Primary processor-based VM-execution controls ---- */
#define VMX_PROC_INT_WINDOW_EXITING         VMX_B32(2)
#define VMX_PROC_TSC_OFFSETTING             VMX_B32(3)
#define VMX_PROC_HLT_EXITING                VMX_B32(7)
#define VMX_PROC_INVLPG_EXITING             VMX_B32(9)
#define VMX_PROC_MWAIT_EXITING              VMX_B32(10)
#define VMX_PROC_RDPMC_EXITING              VMX_B32(11)
#define VMX_PROC_RDTSC_EXITING              VMX_B32(12)
#define VMX_PROC_CR3_LOAD_EXITING           VMX_B32(15)
#define VMX_PROC_CR3_STORE_EXITING          VMX_B32(16)
#define VMX_PROC_ACTIVATE_TERTIARY          VMX_B32(17)
#define VMX_PROC_CR8_LOAD_EXITING           VMX_B32(19)
#define VMX_PROC_CR8_STORE_EXITING          VMX_B32(20)
#define VMX_PROC_USE_TPR_SHADOW             VMX_B32(21)
#define VMX_PROC_NMI_WINDOW_EXITING         VMX_B32(22)
#define VMX_PROC_MOV_DR_EXITING             VMX_B32(23)
#define VMX_PROC_UNCOND_IO_EXITING          VMX_B32(24)
#define VMX_PROC_USE_IO_BITMAPS             VMX_B32(25)
#define VMX_PROC_MONITOR_TRAP_FLAG          VMX_B32(27)
#define VMX_PROC_USE_MSR_BITMAPS            VMX_B32(28)
#define VMX_PROC_MONITOR_EXITING            VMX_B32(29)
#define VMX_PROC_PAUSE_EXITING              VMX_B32(30)
#define VMX_PROC_ACTIVATE_SECONDARY         VMX_B32(31)

/* ---- Secondary processor-based VM-execution controls ---- */
#define VMX_PROC2_VIRT_APIC_ACCESSES        VMX_B32(0)
#define VMX_PROC2_EPT                       VMX_B32(1)
#define VMX_PROC2_DESC_TABLE_EXITING        VMX_B32(2)
#define VMX_PROC2_RDTSCP                    VMX_B32(3)
#define VMX_PROC2_VIRT_X2APIC_MODE          VMX_B32(4)
#define VMX_PROC2_VPID                      VMX_B32(5)
#define VMX_PROC2_WBINVD_EXITING            VMX_B32(6)
#define VMX_PROC2_UNRESTRICTED_GUEST        VMX_B32(7)
#define VMX_PROC2_APIC_REG_VIRT             VMX_B32(8)
#define VMX_PROC2_VIRT_INTR_DELIVERY        VMX_B32(9)
#define VMX_PROC2_PAUSE_LOOP_EXITING        VMX_B32(10)
#define VMX_PROC2_RDRAND_EXITING            VMX_B32(11)
#define VMX_PROC2_INVPCID                   VMX_B32(12)
#define VMX_PROC2_VMFUNC                    VMX_B32(13)
#define VMX_PROC2_VMCS_SHADOWING            VMX_B32(14)
#define VMX_PROC2_ENCLS_EXITING             VMX_B32(15)
#define VMX_PROC2_RDSEED_EXITING            VMX_B32(16)
#define VMX_PROC2_PML                       VMX_B32(17)
#define VMX_PROC2_EPT_VIOLATION_VE          VMX_B32(18)
#define VMX_PROC2_CONCEAL_VMX_FROM_PT       VMX_B32(19)
#define VMX_PROC2_XSAVES                    VMX_B32(20)
#define VMX_PROC2_MODE_BASED_EPT_EXEC       VMX_B32(22)
#define VMX_PROC2_SUBPAGE_WRITE_PERM        VMX_B32(23)
#define VMX_PROC2_PT_USES_GPA               VMX_B32(24)
#define VMX_PROC2_TSC_SCALING               VMX_B32(25)
#define VMX_PROC2_USER_WAIT_PAUSE           VMX_B32(26)
#define VMX_PROC2_PCONFIG                   VMX_B32(27)
#define VMX_PROC2_ENCLV_EXITING             VMX_B32(28)
#define VMX_PROC2_BUS_LOCK_DETECTION        VMX_B32(30)
#define VMX_PROC2_INSTRUCTION_TIMEOUT       VMX_B32(31)

/* ---- Tertiary processor-based VM-execution controls (64-bit) ----
 * Bits 0-4 and 7 as in the SDM's table of tertiary controls (also used the
 * same way by Xen and KVM). Bit 6 (MSRLIST) as in Bochs 3.0 and Xen.
 * Bit 8, APIC-timer virtualization: DESIGN.md says bit 8; the search found
 * it only in Intel's own KVM patch series for the feature
 * (VMX_FEATURE_GUEST_APIC_TIMER = word 3 bit 8, "Enable virtual APIC tsc
 * deadline", with VMCS fields GUEST_APIC_TIMER_VECTOR and GUEST_DEADLINE_*),
 * not in an SDM text available here. Treat it as provisional until checked
 * against the current SDM / ISE. */
#define VMX_PROC3_LOADIWKEY_EXITING         BIT(0)
#define VMX_PROC3_HLAT                      BIT(1)
#define VMX_PROC3_EPT_PAGING_WRITE          BIT(2)
#define VMX_PROC3_GUEST_PAGING_VERIFY       BIT(3)
#define VMX_PROC3_IPI_VIRT                  BIT(4)
#define VMX_PROC3_MSRLIST                   BIT(6)
#define VMX_PROC3_VIRT_SPEC_CTRL            BIT(7)
#define VMX_PROC3_APIC_TIMER_VIRT           BIT(8)

/* ---- Primary VM-exit controls ---- */
#define VMX_EXIT_SAVE_DEBUG_CTLS            VMX_B32(2)
#define VMX_EXIT_HOST_ADDR_SPACE_SIZE       VMX_B32(9)
#define VMX_EXIT_LOAD_PERF_GLOBAL_CTRL      VMX_B32(12)
#define VMX_EXIT_ACK_INTR_ON_EXIT           VMX_B32(15)
#define VMX_EXIT_SAVE_PAT                   VMX_B32(18)
#define VMX_EXIT_LOAD_PAT                   VMX_B32(19)
#define VMX_EXIT_SAVE_EFER                  VMX_B32(20)
#define VMX_EXIT_LOAD_EFER                  VMX_B32(21)
#define VMX_EXIT_SAVE_PREEMPTION_TIMER      VMX_B32(22)
#define VMX_EXIT_CLEAR_BNDCFGS              VMX_B32(23)
#define VMX_EXIT_CONCEAL_VMX_FROM_PT        VMX_B32(24)
#define VMX_EXIT_CLEAR_RTIT_CTL             VMX_B32(25)
#define VMX_EXIT_CLEAR_LBR_CTL              VMX_B32(26)
#define VMX_EXIT_CLEAR_UINV                 VMX_B32(27)
#define VMX_EXIT_LOAD_CET_STATE             VMX_B32(28)
#define VMX_EXIT_LOAD_PKRS                  VMX_B32(29)
#define VMX_EXIT_SAVE_PERF_GLOBAL_CTL       VMX_B32(30)
#define VMX_EXIT_ACTIVATE_SECONDARY         VMX_B32(31)

/* ---- VM-entry controls ---- */
#define VMX_ENTRY_LOAD_DEBUG_CTLS           VMX_B32(2)
#define VMX_ENTRY_IA32E_MODE_GUEST          VMX_B32(9)
#define VMX_ENTRY_TO_SMM                    VMX_B32(10)
#define VMX_ENTRY_DEACT_DUAL_MONITOR        VMX_B32(11)
#define VMX_ENTRY_LOAD_PERF_GLOBAL_CTRL     VMX_B32(13)
#define VMX_ENTRY_LOAD_PAT                  VMX_B32(14)
#define VMX_ENTRY_LOAD_EFER                 VMX_B32(15)
#define VMX_ENTRY_LOAD_BNDCFGS              VMX_B32(16)
#define VMX_ENTRY_CONCEAL_VMX_FROM_PT       VMX_B32(17)
#define VMX_ENTRY_LOAD_RTIT_CTL             VMX_B32(18)
#define VMX_ENTRY_LOAD_UINV                 VMX_B32(19)
#define VMX_ENTRY_LOAD_CET_STATE            VMX_B32(20)
#define VMX_ENTRY_LOAD_LBR_CTL              VMX_B32(21)
#define VMX_ENTRY_LOAD_PKRS                 VMX_B32(22)

/* ---- IA32_VMX_EPT_VPID_CAP (A.10) ---- */
#define VMX_EPT_CAP_EXEC_ONLY               BIT(0)
#define VMX_EPT_CAP_PWL4                    BIT(6)	/* page-walk length 4 */
#define VMX_EPT_CAP_PWL5                    BIT(7)	/* page-walk length 5 */
#define VMX_EPT_CAP_MEMTYPE_UC              BIT(8)
#define VMX_EPT_CAP_MEMTYPE_WB              BIT(14)
#define VMX_EPT_CAP_PDE_2MB                 BIT(16)
#define VMX_EPT_CAP_PDPTE_1GB               BIT(17)
#define VMX_EPT_CAP_INVEPT                  BIT(20)
#define VMX_EPT_CAP_AD_FLAGS                BIT(21)
#define VMX_EPT_CAP_ADV_EXIT_INFO           BIT(22)	/* advanced VM-exit info for EPT violations */
#define VMX_EPT_CAP_SSS_CONTROL             BIT(23)	/* supervisor shadow-stack control */
#define VMX_EPT_CAP_INVEPT_SINGLE           BIT(25)
#define VMX_EPT_CAP_INVEPT_ALL              BIT(26)
#define VMX_EPT_CAP_INVVPID                 BIT(32)
#define VMX_EPT_CAP_INVVPID_ADDR            BIT(40)
#define VMX_EPT_CAP_INVVPID_SINGLE          BIT(41)
#define VMX_EPT_CAP_INVVPID_ALL             BIT(42)
#define VMX_EPT_CAP_INVVPID_SINGLE_NOGLOBAL BIT(43)

/* ---- IA32_VMX_MISC (A.6) ---- */
#define VMX_MISC_PREEMPT_RATE_MASK          0x1full	/* bits 4:0: timer ticks every 2^N TSC ticks */
#define VMX_MISC_STORE_LMA                  BIT(5)
#define VMX_MISC_ACT_HLT                    BIT(6)
#define VMX_MISC_ACT_SHUTDOWN               BIT(7)
#define VMX_MISC_ACT_WAIT_SIPI              BIT(8)
#define VMX_MISC_PT_IN_VMX                  BIT(14)
#define VMX_MISC_RDMSR_SMBASE               BIT(15)
#define VMX_MISC_CR3_TARGETS_SHIFT          16
#define VMX_MISC_CR3_TARGETS_MASK           0x1ffull	/* bits 24:16 */
#define VMX_MISC_MAX_MSR_LIST_SHIFT         25
#define VMX_MISC_MAX_MSR_LIST_MASK          0x7ull	/* bits 27:25: 512 * (N + 1) entries */
#define VMX_MISC_SMM_BLOCK_SMI              BIT(28)
#define VMX_MISC_VMWRITE_ANY                BIT(29)	/* VMWRITE to VM-exit information fields */
#define VMX_MISC_INJECT_ZERO_LEN            BIT(30)	/* inject soft events with instruction length 0 */
#define VMX_MISC_MSEG_REV_SHIFT             32

/* ---- IA32_VMX_VMCS_ENUM (A.9) ---- */
#define VMX_VMCS_ENUM_MAX_INDEX_SHIFT       1
#define VMX_VMCS_ENUM_MAX_INDEX_MASK        0x1ffull	/* bits 9:1 */

#endif
