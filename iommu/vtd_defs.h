/* Intel VT-d (Virtualization Technology for Directed I/O) architecture
 * constants: the remapping unit's registers ("Register Descriptions"), the
 * legacy-mode root and context entries and the second-level paging entries
 * ("Translation Structure Formats"), and the fault reasons ("Non-recoverable
 * Fault Reason Encodings"). */
#ifndef IOMMU_VTD_DEFS_H
#define IOMMU_VTD_DEFS_H
#include "../lib/types.h"

/* Register offsets. */
#define VTD_VER      0x00
#define VTD_CAP      0x08
#define VTD_ECAP     0x10
#define VTD_GCMD     0x18
#define VTD_GSTS     0x1c
#define VTD_RTADDR   0x20
#define VTD_CCMD     0x28
#define VTD_FSTS     0x34
#define VTD_FECTL    0x38
#define VTD_FEDATA   0x3c
#define VTD_FEADDR   0x40
#define VTD_FEUADDR  0x44
/* Protected Memory Enable: EPM (31) enables the PMRs, PRS (0) is their
 * status ("Protected Memory Enable Register"). */
#define VTD_PMEN     0x64
#define VTD_PMEN_EPM BIT(31)
#define VTD_PMEN_PRS BIT(0)
/* The queued-invalidation interface: queue head and tail (bits 18:4: the
 * offset of a 128-bit descriptor), queue address (63:12 base, 11 DW: 0 for
 * 128-bit descriptors, 2:0 QS: 2^QS pages). */
#define VTD_IQH      0x80
#define VTD_IQT      0x88
#define VTD_IQA      0x90
/* Interrupt-remapping table address: 63:12 base, 11 EIME (32-bit x2APIC
 * destinations), 3:0 S (2^(S+1) entries). */
#define VTD_IRTA     0xb8
#define VTD_IRTA_EIME BIT(11)
/* IOTLB registers at ECAP.IRO * 16: IVA at +0, IOTLB at +8. */
#define VTD_IOTLB_OFF 8

/* Root Table Address: 63:12 the root table, 11:10 TTM (translation table
 * mode: 00b legacy, 01b scalable; 10b and 11b reserved). */
#define VTD_RTADDR_TTM(r)  (((r) >> 10) & 3)
#define VTD_TTM_LEGACY     0

/* CAP fields. */
#define VTD_CAP_ND(c)      ((c) & 7)
#define VTD_CAP_RWBF       BIT(4)                   /* write-buffer flush required */
#define VTD_CAP_PLMR       BIT(5)                   /* protected low-memory region */
#define VTD_CAP_PHMR       BIT(6)                   /* protected high-memory region */
#define VTD_CAP_CM         BIT(7)                   /* caching mode */
#define VTD_CAP_SAGAW(c)   (((c) >> 8) & 0x1f)      /* bit 1: 39-bit 3-level, 2: 48-bit 4-level, 3: 57-bit 5-level */
#define VTD_CAP_MGAW(c)    ((((c) >> 16) & 0x3f) + 1)
#define VTD_CAP_FRO(c)     ((((c) >> 24) & 0x3ff) * 16)
#define VTD_CAP_SLLPS(c)   (((c) >> 34) & 0xf)      /* bit 0: 2 MiB, bit 1: 1 GiB pages */
#define VTD_CAP_NFR(c)     ((((c) >> 40) & 0xff) + 1)
#define VTD_CAP_PI         BIT(59)                  /* posted interrupts (IRTE mode 1) */
#define VTD_CAP_ESRTPS     BIT(63)                  /* SRTP also invalidates the caches */
/* ECAP fields. */
#define VTD_ECAP_C         BIT(0)                   /* page walks snoop the caches */
#define VTD_ECAP_QI        BIT(1)
#define VTD_ECAP_IR        BIT(3)
#define VTD_ECAP_EIM       BIT(4)
#define VTD_ECAP_PT        BIT(6)                   /* pass-through translation type */
#define VTD_ECAP_SC        BIT(7)                   /* snoop control */
#define VTD_ECAP_IRO(e)    ((((e) >> 8) & 0x3ff) * 16)
#define VTD_ECAP_SMTS      BIT(43)                  /* scalable-mode translation */
#define VTD_ECAP_SLTS      BIT(46)                  /* second-level translation in scalable mode */
#define VTD_ECAP_FLTS      BIT(47)                  /* first-level translation in scalable mode */

/* GCMD / GSTS bits. */
#define VTD_GCMD_TE        BIT(31)
#define VTD_GCMD_SRTP      BIT(30)
#define VTD_GCMD_WBF       BIT(27)
#define VTD_GCMD_QIE       BIT(26)
#define VTD_GCMD_IRE       BIT(25)
#define VTD_GCMD_SIRTP     BIT(24)
#define VTD_GCMD_CFI       BIT(23)
/* GSTS: each bit at its command's position (TES, RTPS, FLS, WBFS, QIES,
 * IRES, IRTPS, CFIS). The persistent ones (TE, QIE, IRE, CFI) follow the
 * command; the one-shot ones (SRTP, SFL, WBF, SIRTP) report the last
 * command's completion. */
#define VTD_GSTS_TES       VTD_GCMD_TE
#define VTD_GSTS_RTPS      VTD_GCMD_SRTP
#define VTD_GSTS_WBFS      VTD_GCMD_WBF
#define VTD_GSTS_QIES      VTD_GCMD_QIE
#define VTD_GSTS_IRES      VTD_GCMD_IRE
#define VTD_GSTS_CFIS      VTD_GCMD_CFI
/* GSTS bits that are status of one-shot commands (SRTP, SFL, WBF, SIRTP):
 * cleared from the status before it is written back with one more bit. */
#define VTD_GSTS_ONESHOT   0x69000000u

/* CCMD: invalidate the context cache, globally. */
#define VTD_CCMD_ICC       BIT(63)
#define VTD_CCMD_GLOBAL    (1ull << 61)
/* IOTLB register: invalidate, globally, draining reads and writes. */
#define VTD_IOTLB_IVT      BIT(63)
#define VTD_IOTLB_GLOBAL   (1ull << 60)
#define VTD_IOTLB_DR       BIT(49)
#define VTD_IOTLB_DW       BIT(48)

/* FSTS / FECTL. */
#define VTD_FSTS_PFO       BIT(0)
#define VTD_FSTS_PPF       BIT(1)
#define VTD_FSTS_IQE       BIT(4)                   /* invalidation queue error */
#define VTD_FSTS_ICE       BIT(5)                   /* invalidation completion error */
#define VTD_FSTS_ITE       BIT(6)                   /* invalidation time-out error */
#define VTD_FSTS_FRI(s)    (((s) >> 8) & 0xff)
#define VTD_FECTL_IM       BIT(31)

/* A fault recording register: 128 bits; the high quadword holds F (127),
 * T (126: 1 read, 0 write), the reason (103:96) and the source ID (79:64);
 * the low one the faulting page address (63:12). */
#define VTD_FRCD_F         BIT(63)
#define VTD_FRCD_T_READ    BIT(62)
#define VTD_FRCD_REASON(h) (((h) >> 32) & 0xff)
#define VTD_FRCD_SID(h)    ((h) & 0xffff)

/* Invalidation descriptors (128 bits; low quadword here, the high one is
 * 0 but for the wait descriptor's status address). Type in 3:0.
 * Context cache: granularity 5:4 (01b global). IOTLB: granularity 5:4
 * (01b global), DW 6, DR 7. Interrupt entry cache: bit 4 clear, global.
 * Wait: IF 4, SW 5 (write the status data, 63:32, to the dword at the
 * address in the high quadword, 63:2), FN 6. */
#define VTD_QI_CC_GLOBAL    (0x1ull | 1ull << 4)
#define VTD_QI_IOTLB_GLOBAL (0x2ull | 1ull << 4 | 1ull << 6 | 1ull << 7)
#define VTD_QI_IEC_GLOBAL   0x4ull
#define VTD_QI_IEC_INDEX(i) (0x4ull | 1ull << 4 | (uint64_t)((i) & 0xffff) << 32)   /* G 1, IM 0, IIDX 47:32 */
#define VTD_QI_WAIT_NOP     0x5ull                    /* a wait descriptor that writes nothing, signals nothing */
#define VTD_QI_WAIT_SW      (0x5ull | 1ull << 5 | 1ull << 6)
#define VTD_QI_WAIT_DATA_SHIFT 32

/* Root entry (legacy mode, 128 bits): present, context-table pointer. */
#define VTD_ROOT_P         BIT(0)
/* Context entry (legacy mode, 128 bits). Low: present, fault processing
 * disable, translation type (00b: untranslated requests through the
 * second-level tables), the second-level table pointer. High: address
 * width (1: 39-bit 3-level, 2: 48-bit 4-level, 3: 57-bit 5-level), domain ID. */
#define VTD_CTX_P          BIT(0)
#define VTD_CTX_FPD        BIT(1)
#define VTD_CTX_AW(levels) ((uint64_t)((levels) - 2))
#define VTD_CTX_DID_SHIFT  8
/* Second-level paging entries. */
#define VTD_SL_R           BIT(0)
#define VTD_SL_W           BIT(1)
#define VTD_SL_PS          BIT(7)
#define VTD_ADDR_MASK      0x000ffffffffff000ull

/* Fault reasons (DMA remapping). */
#define VTD_FR_ROOT_P      0x1
#define VTD_FR_CTX_P       0x2
#define VTD_FR_CTX_INV     0x3
#define VTD_FR_BEYOND_AW   0x4
#define VTD_FR_WRITE       0x5
#define VTD_FR_READ        0x6
#endif
