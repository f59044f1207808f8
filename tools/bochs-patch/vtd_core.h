/* The VT-d remapping unit of the project's Bochs (vtd.cc): its formats
 * decoded without any state, so that the same lines run in Bochs and in a
 * host unit test (test/unit/test_bochs_vtd.c) against models written apart
 * from it. Written from the Intel VT-d specification ("Register
 * Descriptions", "Root Entry", "Context Entry", "Second-Level Paging
 * Entries", "Interrupt Remapping", "Invalidation Descriptors", "Fault
 * Reason Encodings"); no code from another emulator. C and C++. */
#ifndef BX_VTD_CORE_H
#define BX_VTD_CORE_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

/* Register offsets ("Register Descriptions"). The fault-recording
 * registers and the IOTLB registers sit where CAP.FRO and ECAP.IRO say. */
enum {
  VTD_REG_VER = 0x000, VTD_REG_CAP = 0x008, VTD_REG_ECAP = 0x010,
  VTD_REG_GCMD = 0x018, VTD_REG_GSTS = 0x01c, VTD_REG_RTADDR = 0x020,
  VTD_REG_CCMD = 0x028, VTD_REG_FSTS = 0x034, VTD_REG_FECTL = 0x038,
  VTD_REG_FEDATA = 0x03c, VTD_REG_FEADDR = 0x040, VTD_REG_FEUADDR = 0x044,
  VTD_REG_AFLOG = 0x058, VTD_REG_PMEN = 0x064, VTD_REG_PLMBASE = 0x068,
  VTD_REG_PLMLIMIT = 0x06c, VTD_REG_PHMBASE = 0x070, VTD_REG_PHMLIMIT = 0x078,
  VTD_REG_IQH = 0x080, VTD_REG_IQT = 0x088, VTD_REG_IQA = 0x090,
  VTD_REG_ICS = 0x09c, VTD_REG_IECTL = 0x0a0, VTD_REG_IEDATA = 0x0a4,
  VTD_REG_IEADDR = 0x0a8, VTD_REG_IEUADDR = 0x0ac, VTD_REG_IQERCD = 0x0b0,
  VTD_REG_IRTA = 0x0b8,
  VTD_REG_FRCD = 0x400,    /* CAP.FRO = 0x40 */
  VTD_REG_IVA = 0x500,     /* ECAP.IRO = 0x50: IVA, then the IOTLB register */
  VTD_REG_IOTLB = 0x508,
  VTD_NFR = 8              /* fault-recording registers (CAP.NFR = 7) */
};

/* GCMD and GSTS: one bit each, the status at the command's position. */
#define VTD_GCMD_TE    (1u << 31)
#define VTD_GCMD_SRTP  (1u << 30)
#define VTD_GCMD_SFL   (1u << 29)
#define VTD_GCMD_EAFL  (1u << 28)
#define VTD_GCMD_WBF   (1u << 27)
#define VTD_GCMD_QIE   (1u << 26)
#define VTD_GCMD_IRE   (1u << 25)
#define VTD_GCMD_SIRTP (1u << 24)
#define VTD_GCMD_CFI   (1u << 23)
/* Persistent commands (the status holds them) and one-shot ones. */
#define VTD_GCMD_PERSISTENT (VTD_GCMD_TE | VTD_GCMD_QIE | VTD_GCMD_IRE | VTD_GCMD_CFI | VTD_GCMD_EAFL)
#define VTD_GCMD_ONESHOT    (VTD_GCMD_SRTP | VTD_GCMD_SFL | VTD_GCMD_WBF | VTD_GCMD_SIRTP)

/* FSTS ("Fault Status Register"). */
#define VTD_FSTS_PFO (1u << 0)
#define VTD_FSTS_PPF (1u << 1)
#define VTD_FSTS_IQE (1u << 4)
#define VTD_FSTS_ICE (1u << 5)
#define VTD_FSTS_ITE (1u << 6)
/* FECTL and IECTL: interrupt mask, interrupt pending. */
#define VTD_CTL_IM (1u << 31)
#define VTD_CTL_IP (1u << 30)

/* IQERCD.IQEI ("IQ Error Info"): why IQE was set. */
enum { VTD_IQEI_TAIL = 1, VTD_IQEI_FETCH = 2, VTD_IQEI_TYPE = 3, VTD_IQEI_RSVD = 4, VTD_IQEI_WIDTH = 5 };

/* Fault reasons ("Non-recoverable Fault Reason Encodings"), legacy mode. */
enum {
  VTD_FR_ROOT_NP = 0x1,        /* root entry not present */
  VTD_FR_CTX_NP = 0x2,         /* context entry not present */
  VTD_FR_CTX_INVALID = 0x3,    /* context entry: AW or TT the unit does not support */
  VTD_FR_ADDR_WIDTH = 0x4,     /* input address above the domain's width */
  VTD_FR_WRITE = 0x5,          /* write without write permission */
  VTD_FR_READ = 0x6,           /* read without read permission */
  VTD_FR_SL_ACCESS = 0x7,      /* a paging entry could not be read */
  VTD_FR_ROOT_ACCESS = 0x8,
  VTD_FR_CTX_ACCESS = 0x9,
  VTD_FR_ROOT_RSVD = 0xa,      /* reserved field in a present root entry */
  VTD_FR_CTX_RSVD = 0xb,       /* reserved field in a present context entry */
  VTD_FR_SL_RSVD = 0xc,        /* reserved field in a present paging entry */
  VTD_FR_IR_REQ_RSVD = 0x20,   /* reserved field in a remappable interrupt request */
  VTD_FR_IR_INDEX = 0x21,      /* interrupt index beyond the table (IRTA.S) */
  VTD_FR_IR_NP = 0x22,         /* IRTE not present */
  VTD_FR_IR_TABLE = 0x23,      /* the table could not be read */
  VTD_FR_IR_RSVD = 0x24,       /* reserved field in a present IRTE */
  VTD_FR_IR_COMPAT = 0x25,     /* compatibility format blocked */
  VTD_FR_IR_SID = 0x26,        /* source-ID verification failed */
  VTD_FR_IR_PID = 0x27         /* posted-interrupt descriptor could not be accessed */
};

static inline uint64_t vtd_bits(uint64_t v, unsigned hi, unsigned lo)
{
  unsigned w = hi - lo + 1;
  return (v >> lo) & (w >= 64 ? ~(uint64_t) 0 : (((uint64_t) 1 << w) - 1));
}

/* Bits haw..51 of a table pointer are reserved; 63:52 too in root and
 * context entries (the pointer fields end at 63, the unit implements HAW). */
static inline uint64_t vtd_above(unsigned haw)
{
  return haw >= 64 ? 0 : ~(((uint64_t) 1 << haw) - 1);
}

/* The unit's read of guest memory (tables, IRTEs): 8 bytes at pa. False
 * when nothing answers there. */
typedef bool (*vtd_read64_fn)(void *ctx, uint64_t pa, uint64_t *val);

/* ---- DMA remapping, legacy mode ---- */

/* Root entry ("Root Entry", legacy): 0 present, 11:1 reserved, 63:12 the
 * context-table pointer; 127:64 reserved. 0 and *ctp, or the reason. */
static inline int vtd_root_entry(uint64_t lo, uint64_t hi, unsigned haw, uint64_t *ctp)
{
  if (!(lo & 1))
    return VTD_FR_ROOT_NP;
  if (vtd_bits(lo, 11, 1) || hi || (lo & vtd_above(haw)))
    return VTD_FR_ROOT_RSVD;
  *ctp = lo & ~(uint64_t) 0xfff;
  return 0;
}

struct vtd_ctx {
  uint64_t slpt;     /* second-level page-table pointer */
  uint16_t did;      /* domain ID */
  unsigned levels;   /* 3, 4 or 5 */
  unsigned agaw;     /* 39, 48 or 57 */
  bool fpd;          /* fault processing disable */
};

/* Context entry ("Context Entry", legacy): low 0 P, 1 FPD, 3:2 TT, 11:4
 * reserved, 63:12 SLPTPTR; high 2:0 AW, 6:3 available, 7 reserved, 23:8
 * DID, 63:24 reserved. TT 00b (untranslated requests through the walk) is
 * the only type this unit has (ECAP.DT 0, ECAP.PT 0); AW must be a SAGAW
 * bit. 0 and *c, or the reason. */
static inline int vtd_context_entry(uint64_t lo, uint64_t hi, uint64_t cap, unsigned haw, struct vtd_ctx *c)
{
  if (!(lo & 1))
    return VTD_FR_CTX_NP;
  unsigned nd = (unsigned) vtd_bits(cap, 2, 0);
  unsigned did_bits = 4 + 2 * nd;
  if (vtd_bits(lo, 11, 4) || (lo & vtd_above(haw)) || vtd_bits(hi, 7, 7) || vtd_bits(hi, 63, 24) ||
      (did_bits < 16 && vtd_bits(hi, 23, 8 + did_bits)))
    return VTD_FR_CTX_RSVD;
  c->fpd = (lo >> 1) & 1;
  unsigned tt = (unsigned) vtd_bits(lo, 3, 2);
  unsigned aw = (unsigned) vtd_bits(hi, 2, 0);
  unsigned sagaw = (unsigned) vtd_bits(cap, 12, 8);
  if (tt != 0 || aw < 1 || aw > 3 || !((sagaw >> aw) & 1))
    return VTD_FR_CTX_INVALID;
  c->slpt = lo & ~(uint64_t) 0xfff;
  c->did = (uint16_t) vtd_bits(hi, 23, 8);
  c->levels = aw + 2;
  c->agaw = 30 + 9 * aw;
  return 0;
}

struct vtd_xlate {
  uint64_t hpa;      /* the page's host address (a large page's base) */
  unsigned shift;    /* 12, 21 or 30 */
  bool r, w;         /* the rights, ANDed over every level */
};

/* The second-level walk ("Second-Level Paging Entries"): bit 0 R, 1 W, 2 X
 * (no execute requests here: ignored), 6:3 ignored (EMT and IPAT in a leaf,
 * ECAP.MTS 0), 7 PS (reserved in the top level, allowed where CAP.SLLPS
 * says: bit 0 2 MiB, bit 1 1 GiB; ignored in a 4 KiB entry), 8 A and 10:9
 * ignored, 11 reserved in a
 * table entry (SNP in a leaf, ignored without ECAP.SC), haw..51 reserved,
 * 61:52 ignored, 62 reserved, 63 ignored; a large page's address bits below
 * its size reserved. An entry with R and W clear is not present. An
 * entry's reserved fields are checked before its rights. The address must
 * fit the domain's width and CAP.MGAW (reason 4). 0 and *x, or the reason. */
static inline int vtd_sl_walk(vtd_read64_fn rd, void *rctx, const struct vtd_ctx *c, uint64_t cap, unsigned haw,
                              uint64_t addr, bool write, struct vtd_xlate *x)
{
  unsigned mgaw = (unsigned) vtd_bits(cap, 21, 16) + 1;
  unsigned width = c->agaw < mgaw ? c->agaw : mgaw;
  if (width < 64 && (addr >> width))
    return VTD_FR_ADDR_WIDTH;
  unsigned sllps = (unsigned) vtd_bits(cap, 37, 34);
  uint64_t addr_rsvd = vtd_above(haw) & (((uint64_t) 1 << 52) - 1);
  uint64_t table = c->slpt;
  bool r = true, w = true;
  for (unsigned level = c->levels; level >= 1; level--) {
    unsigned shift = 12 + 9 * (level - 1);
    uint64_t e;
    if (!rd(rctx, table + 8 * ((addr >> shift) & 511), &e))
      return VTD_FR_SL_ACCESS;
    if (!(e & 3))
      return write ? VTD_FR_WRITE : VTD_FR_READ;
    bool ps = level > 1 && ((e >> 7) & 1);    /* a 4 KiB entry's bit 7 is ignored */
    bool leaf = level == 1 || ps;
    if ((e & addr_rsvd) || ((e >> 62) & 1))
      return VTD_FR_SL_RSVD;
    if (ps && (level > 3 || (level == 3 && !(sllps & 2)) || (level == 2 && !(sllps & 1))))
      return VTD_FR_SL_RSVD;
    if (!leaf && ((e >> 11) & 1))
      return VTD_FR_SL_RSVD;
    uint64_t base = e & 0x000ffffffffff000ull;
    if (leaf && (base & (((uint64_t) 1 << shift) - 1)))
      return VTD_FR_SL_RSVD;
    r = r && (e & 1);
    w = w && ((e >> 1) & 1);
    if (write ? !w : !r)
      return write ? VTD_FR_WRITE : VTD_FR_READ;
    if (leaf) {
      x->hpa = base;
      x->shift = shift;
      x->r = r;
      x->w = w;
      return 0;
    }
    table = base;
  }
  return VTD_FR_SL_ACCESS;   /* not reached: level 1 is a leaf */
}

/* ---- Interrupt remapping ---- */

/* An interrupt request: a DWORD write to 0xFEEx_xxxx ("Interrupt Requests
 * in Compatibility Format" / "... in Remappable Format"). Address bit 4 is
 * the format. Remappable: 19:5 handle 14:0, 3 SHV, 2 handle 15, 1:0 don't
 * care; data 15:0 the subhandle, added when SHV, and 31:16 reserved then
 * (0x20: a request field the remappable format reserves; without SHV the
 * data register is not decoded). 1 for compatibility format, 0 and *index
 * for remappable, or 0x21 when handle plus subhandle passes 16 bits (no
 * table holds such an index). */
static inline int vtd_msi_request(uint64_t addr, uint32_t data, uint32_t *index)
{
  if (!((addr >> 4) & 1))
    return 1;
  uint32_t handle = (uint32_t) (vtd_bits(addr, 19, 5) | (vtd_bits(addr, 2, 2) << 15));
  if ((addr >> 3) & 1) {
    if (data >> 16)
      return VTD_FR_IR_REQ_RSVD;
    handle += data & 0xffff;
  }
  *index = handle & 0xffff;
  /* the sum past 16 bits reaches no entry (the table holds at most 2^16) */
  return (handle >> 16) ? VTD_FR_IR_INDEX : 0;
}

/* What an I/OxAPIC sends for a redirection-table entry ("I/OxAPIC
 * Programming"): bit 48 the format; remappable: 63:49 index 14:0, 11 index
 * 15, 10:8 must be 000b and 47:17 reserved. 1 for compatibility format, 0
 * and *index, or 0x20. */
static inline int vtd_rte_request(uint64_t rte, uint32_t *index)
{
  if (!((rte >> 48) & 1))
    return 1;
  if (vtd_bits(rte, 47, 17) || vtd_bits(rte, 10, 8))
    return VTD_FR_IR_REQ_RSVD;
  *index = (uint32_t) (vtd_bits(rte, 63, 49) | (vtd_bits(rte, 11, 11) << 15));
  return 0;
}

struct vtd_irte {
  bool posted, fpd;
  uint8_t vector;
  /* remapped */
  uint32_t dest;
  bool dm, rh, tm;
  unsigned dlm;
  /* posted */
  uint64_t pda;
  bool urgent;
};

/* The FPD bit of an IRTE, readable before the entry is judged: faults on a
 * present entry are recorded only when it is clear. */
static inline bool vtd_irte_fpd(uint64_t lo) { return (lo & 3) == 3; }

/* One IRTE ("Interrupt Remapping Table Entry (IRTE) for Remapped
 * Interrupts" and "... for Posted Interrupts") for a request of source sid.
 * Remapped: 0 P, 1 FPD, 2 DM, 3 RH, 4 TM, 7:5 DLM (011b, 110b reserved),
 * 11:8 available, 14:12 reserved, 15 IM = 0, 23:16 vector, 31:24 reserved,
 * 63:32 destination (EIME 0: 47:40, with 39:32 and 63:48 reserved),
 * 79:64 SID, 81:80 SQ, 83:82 SVT (11b reserved), 127:84 reserved. Posted
 * (IM = 1, only with CAP.PI): 7:2 reserved, 11:8 available, 13:12
 * reserved, 14 URG, 23:16 vector, 37:24 reserved, 63:38 descriptor address
 * 31:6, 95:84 reserved, 127:96 descriptor address 63:32. Source
 * validation: SVT 01b compares SID with the requester's ID, SQ leaving out
 * function bit 2 (01b), bits 2:1 (10b) or 2:0 (11b); SVT 10b asks the
 * requester's bus to be within SID 15:8 (start) and 7:0 (end). 0 and *out,
 * or the reason (0x22, 0x24, 0x26). */
static inline int vtd_irte_check(uint64_t lo, uint64_t hi, uint16_t sid, bool eime, bool pi, unsigned haw,
                                 struct vtd_irte *out)
{
  if (!(lo & 1))
    return VTD_FR_IR_NP;
  bool posted = (lo >> 15) & 1;
  if (posted) {
    if (!pi || vtd_bits(lo, 7, 2) || vtd_bits(lo, 13, 12) || vtd_bits(lo, 37, 24) || vtd_bits(hi, 31, 20))
      return VTD_FR_IR_RSVD;
    uint64_t pda = (vtd_bits(lo, 63, 38) << 6) | (vtd_bits(hi, 63, 32) << 32);
    if (pda & vtd_above(haw))
      return VTD_FR_IR_RSVD;
    out->pda = pda;
    out->urgent = (lo >> 14) & 1;
  } else {
    unsigned dlm = (unsigned) vtd_bits(lo, 7, 5);
    if (vtd_bits(lo, 14, 12) || vtd_bits(lo, 31, 24) || vtd_bits(hi, 63, 20) || dlm == 3 || dlm == 6)
      return VTD_FR_IR_RSVD;
    if (!eime && (vtd_bits(lo, 39, 32) || vtd_bits(lo, 63, 48)))
      return VTD_FR_IR_RSVD;
    out->dest = eime ? (uint32_t) vtd_bits(lo, 63, 32) : (uint32_t) vtd_bits(lo, 47, 40);
    out->dm = (lo >> 2) & 1;
    out->rh = (lo >> 3) & 1;
    out->tm = (lo >> 4) & 1;
    out->dlm = dlm;
  }
  unsigned svt = (unsigned) vtd_bits(hi, 19, 18), sq = (unsigned) vtd_bits(hi, 17, 16);
  uint16_t want = (uint16_t) vtd_bits(hi, 15, 0);
  if (svt == 3)
    return VTD_FR_IR_RSVD;
  if (svt == 1) {
    uint16_t ignore = sq == 0 ? 0 : sq == 1 ? 0x4 : sq == 2 ? 0x6 : 0x7;
    if ((sid | ignore) != (want | ignore))
      return VTD_FR_IR_SID;
  } else if (svt == 2) {
    unsigned bus = sid >> 8;
    if (bus < (unsigned) (want >> 8) || bus > (unsigned) (want & 0xff))
      return VTD_FR_IR_SID;
  }
  out->posted = posted;
  out->fpd = (lo >> 1) & 1;
  out->vector = (uint8_t) vtd_bits(lo, 23, 16);
  return 0;
}

/* A posted interrupt ("Posted Interrupt Descriptor", "Interrupt-Posting
 * Hardware Operation") on the descriptor's first 64 bits past the PIR:
 * pid[0..3] PIR 255:0, pid[4] 256 ON, 257 SN, 279:272 NV, 319:288 NDST.
 * The vector's PIR bit is set; when ON is clear and URG or not SN, ON is
 * set and the notification is due (true): NV to NDST (x2APIC: all 32
 * bits; xAPIC: 15:8). The caller writes the descriptor back as one update. */
static inline bool vtd_pid_post(uint64_t pid[5], uint8_t vector, bool urgent)
{
  pid[vector >> 6] |= (uint64_t) 1 << (vector & 63);
  bool on = pid[4] & 1, sn = (pid[4] >> 1) & 1;
  if (on || (sn && !urgent))
    return false;
  pid[4] |= 1;
  return true;
}
static inline uint8_t vtd_pid_nv(const uint64_t pid[5]) { return (uint8_t) vtd_bits(pid[4], 23, 16); }
static inline uint32_t vtd_pid_ndst(const uint64_t pid[5], bool x2apic)
{
  return x2apic ? (uint32_t) vtd_bits(pid[4], 63, 32) : (uint32_t) vtd_bits(pid[4], 47, 40);
}

/* ---- Invalidation descriptors (128-bit, IQA.DW 0) ---- */

enum { VTD_INV_CC = 1, VTD_INV_IOTLB = 2, VTD_INV_DEVTLB = 3, VTD_INV_IEC = 4, VTD_INV_WAIT = 5 };

/* A descriptor's type, or 0 with *iqei when the unit takes it as an
 * invalidation queue error: a type it does not have (device-TLB without
 * ECAP.DT, the PASID-based types without scalable mode, type bits 11:9 set:
 * IQEI 3) or a reserved field set (IQEI 4). Layouts:
 * context cache (1): 5:4 G (01 global, 10 domain, 11 device), 15:6
 *   reserved, 31:16 DID, 47:32 SID, 49:48 FM, 63:50 and 127:64 reserved;
 * IOTLB (2): 5:4 G (01 global, 10 domain, 11 page), 6 DW, 7 DR (only with
 *   CAP.DWD/DRD), 15:8 reserved, 31:16 DID, 63:32 reserved; 69:64 AM, 70
 *   IH, 75:71 reserved, 127:76 address;
 * interrupt entry cache (4): 4 G (0 global, 1 index), 26:5 reserved,
 *   31:27 IM, 47:32 IIDX, 63:48 and 127:64 reserved;
 * wait (5): 4 IF, 5 SW, 6 FN, 7 PD (only with page requests), 31:8
 *   reserved, 63:32 status data; 65:64 reserved, 127:66 status address.
 * A granularity of 00b is reserved too. */
static inline unsigned vtd_inv_check(uint64_t lo, uint64_t hi, uint64_t cap, uint64_t ecap, unsigned haw, unsigned *iqei)
{
  unsigned type = (unsigned) vtd_bits(lo, 3, 0);
  *iqei = VTD_IQEI_TYPE;
  if (vtd_bits(lo, 11, 9))
    return 0;
  switch (type) {
  case VTD_INV_CC:
    *iqei = VTD_IQEI_RSVD;
    if (vtd_bits(lo, 5, 4) == 0 || vtd_bits(lo, 15, 6) || vtd_bits(lo, 63, 50) || hi)
      return 0;
    return type;
  case VTD_INV_IOTLB: {
    *iqei = VTD_IQEI_RSVD;
    unsigned g = (unsigned) vtd_bits(lo, 5, 4);
    if (g == 0 || vtd_bits(lo, 15, 8) || vtd_bits(lo, 63, 32) || vtd_bits(hi, 11, 7))
      return 0;
    if (((lo >> 6) & 1) && !((cap >> 54) & 1))
      return 0;
    if (((lo >> 7) & 1) && !((cap >> 55) & 1))
      return 0;
    if (g == 3 && (!((cap >> 39) & 1) || vtd_bits(hi, 5, 0) > vtd_bits(cap, 53, 48) ||
                   (hi & ~(uint64_t) 0xfff & vtd_above(haw))))
      return 0;
    if (g != 3 && hi)
      return 0;
    return type;
  }
  case VTD_INV_DEVTLB:
    return ((ecap >> 2) & 1) ? type : 0;
  case VTD_INV_IEC:
    *iqei = VTD_IQEI_RSVD;
    if (!((ecap >> 3) & 1)) {
      *iqei = VTD_IQEI_TYPE;
      return 0;
    }
    if (vtd_bits(lo, 26, 5) || vtd_bits(lo, 63, 48) || hi)
      return 0;
    if (((lo >> 4) & 1) && vtd_bits(lo, 31, 27) > vtd_bits(ecap, 23, 20))
      return 0;
    return type;
  case VTD_INV_WAIT:
    *iqei = VTD_IQEI_RSVD;
    if (vtd_bits(lo, 31, 8) || (((lo >> 7) & 1) && !((ecap >> 29) & 1)) || vtd_bits(hi, 1, 0))
      return 0;
    if (((lo >> 5) & 1) && (hi & vtd_above(haw)))
      return 0;
    return type;
  default:
    return 0;
  }
}

/* ---- Protected memory regions ---- */

/* Whether [pa, pa + len) touches an enabled region ("Protected Memory
 * Enable Register" and the four base and limit registers): the low region
 * [PLMBASE, PLMLIMIT | 2^21 - 1] below 4 GiB, the high one likewise; a
 * limit below its base leaves that region off. */
static inline bool vtd_pmr_hit(uint32_t plmbase, uint32_t plmlimit, uint64_t phmbase, uint64_t phmlimit,
                               uint64_t pa, uint64_t len)
{
  const uint64_t low_bits = ((uint64_t) 1 << 21) - 1;
  uint64_t last = pa + len - 1;
  uint64_t lb = plmbase & ~(uint32_t) low_bits, ll = (uint64_t) plmlimit | low_bits;
  if (plmlimit >= plmbase && pa <= ll && last >= lb)
    return true;
  uint64_t hb = phmbase & ~low_bits, hl = phmlimit | low_bits;
  if (phmlimit >= phmbase && pa <= hl && last >= hb)
    return true;
  return false;
}

#endif
