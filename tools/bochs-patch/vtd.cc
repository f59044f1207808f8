/////////////////////////////////////////////////////////////////////////
// hv patch (tools/bochs-patch/vtd.cc, copied to iodev/ by
// tools/bochs-patched.sh): VT-d remapping units for the project's Bochs.
//
// Written from the Intel Virtualization Technology for Directed I/O
// Architecture Specification (register descriptions, translation and
// interrupt-remapping structures, invalidation, fault reporting); the
// stateless decoding is vtd_core.h, shared with a host unit test. No code
// from another emulator.
//
// Two units at fixed register pages (a server has several): unit 0 at
// 0xFED90000 for the I/OxAPIC and every PCI function not in another unit's
// scope (its DRHD has INCLUDE_PCI_ALL), unit 1 at 0xFEDA0000 (Bochs's
// memory handlers take 64 KiB granules: one unit each) for the
// functions listed by "scope1=" (the USB controllers). Legacy-mode DMA
// remapping (root and context tables, the second-level walk), protected
// memory regions, fault recording, register-based and queued invalidation,
// interrupt remapping and posting. What it caches (context entries, IOTLB
// entries, IRTEs) is refreshed only by an invalidation, never by a table
// write, so a missing or misordered invalidation shows as it would on
// hardware. Everything happens at once: a command's status is set before
// the write returns, a queued descriptor completes when IQT is written.
// Strictness (issue 44, vtd_strict.h): every cache hit is compared with
// memory (a copy still different after the next completed wait is a
// stale hit, counted), misuse of the register protocol is counted as a
// violation, a translation into 0xFEEx_xxxx is blocked, and a blocked read
// completes as an error to the device.
/////////////////////////////////////////////////////////////////////////

#ifdef BX_VTD_HOST_TEST
#include "vtd_host.h"   // the host test's stand-ins for Bochs (test/unit/vtd_device_test.cc)
#else
#define BX_PLUGGABLE
#include "iodev.h"
#endif
#if BX_SUPPORT_PCI && BX_SUPPORT_APIC
#ifndef BX_VTD_HOST_TEST
#include "ioapic.h"
#include "cpu/cpu.h"   // whether a notification's CPU is halted in VMX non-root operation
#endif
#include "vtd.h"
#include "vtd_core.h"
#include <map>
#include <string>
#include <vector>
#include <algorithm>

#define LOG_THIS theVtd->

static bool halted_in_guest(Bit32u id);
static void stamp(Bit16u sid, Bit32u dest, Bit8u vector, bool posted);

#ifdef BX_VTD_HOST_TEST
#define vtd_now() vtd_host_now()
#else
#define vtd_now() bx_pc_system.time_ticks()
#endif

static const unsigned VTD_UNITS = 2;
static const bx_phy_address VTD_BASE = BX_CONST64(0xFED90000);
static const bx_phy_address VTD_STRIDE = 0x10000;
static const unsigned VTD_HAW = 40;             // host address width (DMAR byte 39)
static const unsigned VTD_MAX_SCOPE = 16;
static const unsigned VTD_FW_PAGES = 9;         // after the registers: the pre-boot tables and buffer

class bx_vtd_c : public logfunctions {
public:
  bx_vtd_c() { put("VTD"); }
};
static bx_vtd_c *theVtd;

// The bochsrc's "vtd:" line.
static struct {
  bool enabled;
  unsigned units;
  Bit16u scope1[VTD_MAX_SCOPE];
  unsigned nscope1;
  Bit16u ioapic_sid;
  unsigned preboot;                              // 1: firmware left TE, IR, QI and a PMR on; 2: warm (below)
  bool log_dma;                                  // every translated DMA page in the log
  unsigned defer;                                // deferred completion: device ticks a command takes (0: at once)
  bool strict;                                   // strict caches: the least every invalidation must do
  bool collapse;                                 // a fault of a source with a record pending is not recorded
} cfg = { false, VTD_UNITS, { 0 }, 0, 0xF0F8, false, false, 0, false, false };

// Deferred completion (defer=N): one device tick every VTD_TICK_US of
// emulated time; a command completes N ticks after its write, the queue
// is read VTD_QI_PER_TICK descriptors a tick.
static const unsigned VTD_TICK_US = 1, VTD_QI_PER_TICK = 2;

// A translation whose output lands in the interrupt address range (the
// specification's legacy-mode condition LGN.4).
static const unsigned VTD_FR_INTR_ADDR = 0xe;

static Bit64u rd64(bx_phy_address pa)
{
  Bit8u b[8];
  DEV_MEM_READ_PHYSICAL(pa, 8, b);
  Bit64u v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | b[i];
  return v;
}

static void wr64(bx_phy_address pa, Bit64u v)
{
  Bit8u b[8];
  for (int i = 0; i < 8; i++) b[i] = (Bit8u) (v >> (8 * i));
  DEV_MEM_WRITE_PHYSICAL(pa, 8, b);
}

// The unit's own read of a table entry: beyond the machine's memory
// nothing answers (fault reasons 7, 8, 9, 0x23, 0x27).
static bool fw_page(uint64_t pa)
{
  return pa >= VTD_BASE + 0x1000 && pa < VTD_BASE + VTD_STRIDE * (VTD_UNITS - 1) + 0x1000 * (1 + VTD_FW_PAGES) &&
         (pa - VTD_BASE) % VTD_STRIDE >= 0x1000 && (pa - VTD_BASE) % VTD_STRIDE < 0x1000 * (1 + VTD_FW_PAGES);
}

static bool rd64_cb(void *, uint64_t pa, uint64_t *val)
{
  if (pa + 8 > BX_MEM(0)->get_memory_len() && !fw_page(pa)) return false;
  *val = rd64((bx_phy_address) pa);
  return true;
}

// A compatibility-format message (SDM "Message Signalled Interrupts"):
// destination 19:12 (and, from a unit's own FEUADDR/IEUADDR, 31:8 of an
// x2APIC ID in the upper address), DM bit 2; vector 7:0, delivery mode
// 10:8, level 14, trigger 15.
static bool deliver_compat(Bit64u addr, Bit32u data)
{
  Bit8u vector = data & 0xFF, mode = (data >> 8) & 7;
  bool logical = (addr >> 2) & 1, level = (data >> 14) & 1, trig = (data >> 15) & 1;
  apic_dest_t dest = (Bit32u) ((addr >> 12) & 0xFF) | (Bit32u) ((addr >> 32) & 0xFFFFFF00);
  if (mode == 1 && !logical) mode = 0;   // lowest priority to one physical destination: that one
  return apic_bus_deliver_interrupt(vector, dest, mode, logical, level, trig);
}

class vtd_unit {
public:
  unsigned id;
  bx_phy_address base;
  Bit64u cap, ecap;
  Bit32u gsts;
  Bit64u rtaddr, root;                 // the register, and what SRTP latched
  Bit64u ccmd;
  Bit32u fsts, fectl, fedata, feaddr, feuaddr;
  Bit32u pmen, plmbase, plmlimit;
  Bit64u phmbase, phmlimit;
  Bit64u iqh, iqt, iqa, iqercd;
  Bit32u ics, iectl, iedata, ieaddr, ieuaddr;
  Bit64u irta, irt;                    // the register, and what SIRTP latched
  Bit64u iva, iotlb;
  Bit64u frcd[VTD_NFR][2];
  unsigned fault_next;
  Bit8u fw[VTD_FW_PAGES * 0x1000];     // the firmware's memory after the registers (RAM: read and written)
  // The caches: context entries by source ID, translations by domain and
  // page, IRTEs by index. Present and valid entries only (CAP.CM 0).
  // Each entry keeps what it was made from (the raw root and context
  // entries; the tables walked) and "seen": 0, or 1 + syncs when a hit
  // first found memory different (vtd_strict.h).
  struct ctx_entry { vtd_ctx c; Bit64u rlo, rhi, clo, chi, seen; };
  std::map<Bit16u, ctx_entry> ccache;
  struct tlb_entry { Bit64u hpa; unsigned shift; bool r, w; Bit64u slpt; unsigned levels, agaw; Bit64u seen; };
  std::map<Bit64u, tlb_entry> tlb;     // key: did << 48 | shift << 40 | page number
  struct irte_entry { Bit64u lo, hi, seen; };
  std::map<Bit16u, irte_entry> iec;
  // strict: the paging-structure cache, the non-leaf entries down to a
  // page table (the PDE level) by domain and 2 MiB region: the table, the
  // rights of the levels above, what the walk started from.
  struct pde_entry { Bit64u pt; bool r, w; Bit64u slpt; unsigned levels, agaw; Bit64u seen; };
  std::map<Bit64u, pde_entry> pde;     // key: did << 48 | addr >> 21
  Bit64u syncs;                        // invalidations known complete: waits done, CCMD/IOTLB commands done
  bool cc_due;                         // SRTP since the last context-cache invalidation
  std::map<std::string, Bit64u> violated;
  std::map<Bit16u, Bit64u> iec_index_inv;   // index-selective IEC invalidations per IRTE index
  // Deferred completion: what was written and the ticks left (0: none).
  Bit32u cmd_v, prs;
  unsigned cmd_ticks, ccmd_ticks, iotlb_ticks, prs_ticks;
  struct {
    Bit64u dma_pages, dma_blocked, pmr_blocked, faults, fault_overflows, faults_unrecorded;
    Bit64u tlb_hits, tlb_misses, ctx_misses;
    Bit64u ir_remapped, ir_posted, ir_notified, ir_notified_halted, ir_blocked, ir_compat_passed, iec_hits;
    Bit64u qi_descriptors, qi_errors, waits, cc_inv, iotlb_inv, iec_inv, commands;
    Bit64u stale_ctx, stale_iotlb, stale_iec, violations, intr_addr_blocked;
  } st;

  void reset();
  Bit32u read32(unsigned off);
  void write32(unsigned off, Bit32u v);
  void command(Bit32u v);
  void gcmd_write(Bit32u v);
  void ccmd_do();
  void iotlb_do();
  void tick();
  void run_queue(unsigned budget = ~0u);
  bool do_descriptor(Bit64u lo, Bit64u hi);
  void cc_invalidate(unsigned g, Bit16u did, Bit16u sid, unsigned fm);
  void iotlb_invalidate(unsigned g, Bit16u did, Bit64u addr, unsigned am, bool ih);
  bool pde_walk(const vtd_ctx &c, Bit64u addr, bool write, vtd_xlate *x, int *fr, Bit64u *seen);
  void pde_fill(const vtd_ctx &c, Bit64u addr);
  void iec_invalidate(bool index, unsigned idx, unsigned im);
  void record_fault(Bit16u sid, Bit64u info, unsigned reason, bool read);
  void fault_event(Bit32u was_any);
  bool any_status() const;
  void fault_status_changed();
  void send(Bit32u addr, Bit32u uaddr, Bit32u data, const char *what);
  bool translate(Bit16u sid, Bit64u addr, unsigned len, bool write, Bit64u *hpa);
  int interrupt(Bit16u sid, bool rte, Bit64u addr, Bit32u data, Bit64u rte_value);
  bool pmr_on() const { return (pmen >> 31) & 1; }
  // vtd_strict.h: the violation counter and the stale-entry audit
  void violation(const char *what);
  bool ctx_differs(Bit16u sid, const ctx_entry &e);
  bool tlb_differs(const tlb_entry &t, const vtd_ctx &c, Bit64u addr);
  bool irte_differs(Bit16u index, const irte_entry &e);
  void stale_hit(Bit64u &seen, bool differs, Bit64u &count, const char *what, Bit64u key);
  void audit_at_exit();
  const char *name() const { return id ? "unit 1" : "unit 0"; }
};

static vtd_unit units[VTD_UNITS];
static bool vtd_active;

static vtd_unit *unit_of(Bit16u sid)
{
  if (cfg.units > 1)
    for (unsigned i = 0; i < cfg.nscope1; i++)
      if (cfg.scope1[i] == sid) return &units[1];
  return &units[0];
}

void vtd_unit::reset()
{
  Bit64u keep[2] = { cap, ecap };
  unsigned keep_id = id;
  bx_phy_address keep_base = base;
  gsts = 0; rtaddr = root = ccmd = 0;
  fsts = 0; fectl = VTD_CTL_IM; fedata = feaddr = feuaddr = 0;
  pmen = plmbase = plmlimit = 0; phmbase = phmlimit = 0;
  iqh = iqt = iqa = iqercd = 0;
  ics = 0; iectl = VTD_CTL_IM; iedata = ieaddr = ieuaddr = 0;
  irta = irt = 0; iva = iotlb = 0;
  memset(frcd, 0, sizeof(frcd));
  fault_next = 0;
  ccache.clear(); tlb.clear(); iec.clear(); pde.clear();
  syncs = 0; cc_due = false; violated.clear();
  cmd_v = prs = 0; cmd_ticks = ccmd_ticks = iotlb_ticks = prs_ticks = 0;
  cap = keep[0]; ecap = keep[1]; id = keep_id; base = keep_base;
}

// ---- registers ----

Bit32u vtd_unit::read32(unsigned off)
{
  if (off >= VTD_REG_FRCD && off < VTD_REG_FRCD + 16 * VTD_NFR) {
    unsigned n = (off - VTD_REG_FRCD) / 16, w = (off - VTD_REG_FRCD) % 16;
    return (Bit32u) (frcd[n][w / 8] >> (32 * ((w / 4) & 1)));
  }
  switch (off) {
  case VTD_REG_VER: return 0x10;                 // 1.0
  case VTD_REG_CAP: return (Bit32u) cap;
  case VTD_REG_CAP + 4: return (Bit32u) (cap >> 32);
  case VTD_REG_ECAP: return (Bit32u) ecap;
  case VTD_REG_ECAP + 4: return (Bit32u) (ecap >> 32);
  case VTD_REG_GCMD: return 0;
  case VTD_REG_GSTS: return gsts;
  case VTD_REG_RTADDR: return (Bit32u) rtaddr;
  case VTD_REG_RTADDR + 4: return (Bit32u) (rtaddr >> 32);
  case VTD_REG_CCMD: return (Bit32u) ccmd;
  case VTD_REG_CCMD + 4: return (Bit32u) (ccmd >> 32);
  case VTD_REG_FSTS: {
    Bit32u v = fsts & (VTD_FSTS_PFO | VTD_FSTS_IQE);
    for (unsigned n = 0; n < VTD_NFR; n++)
      if (frcd[n][1] >> 63) { v |= VTD_FSTS_PPF; break; }
    return v | (fsts & 0xff00);                  // FRI
  }
  case VTD_REG_FECTL: return fectl;
  case VTD_REG_FEDATA: return fedata;
  case VTD_REG_FEADDR: return feaddr;
  case VTD_REG_FEUADDR: return feuaddr;
  case VTD_REG_PMEN: return pmen | prs;         // PRS follows EPM (at once, or defer ticks later)
  case VTD_REG_PLMBASE: return plmbase;
  case VTD_REG_PLMLIMIT: return plmlimit;
  case VTD_REG_PHMBASE: return (Bit32u) phmbase;
  case VTD_REG_PHMBASE + 4: return (Bit32u) (phmbase >> 32);
  case VTD_REG_PHMLIMIT: return (Bit32u) phmlimit;
  case VTD_REG_PHMLIMIT + 4: return (Bit32u) (phmlimit >> 32);
  case VTD_REG_IQH: return (Bit32u) iqh;
  case VTD_REG_IQT: return (Bit32u) iqt;
  case VTD_REG_IQA: return (Bit32u) iqa;
  case VTD_REG_IQA + 4: return (Bit32u) (iqa >> 32);
  case VTD_REG_ICS: return ics;
  case VTD_REG_IECTL: return iectl;
  case VTD_REG_IEDATA: return iedata;
  case VTD_REG_IEADDR: return ieaddr;
  case VTD_REG_IEUADDR: return ieuaddr;
  case VTD_REG_IQERCD: return (Bit32u) iqercd;
  case VTD_REG_IRTA: return (Bit32u) irta;
  case VTD_REG_IRTA + 4: return (Bit32u) (irta >> 32);
  case VTD_REG_IVA: return (Bit32u) iva;
  case VTD_REG_IVA + 4: return (Bit32u) (iva >> 32);
  case VTD_REG_IOTLB: return (Bit32u) iotlb;
  case VTD_REG_IOTLB + 4: return (Bit32u) (iotlb >> 32);
  default: return 0;                             // reserved: reads 0
  }
}

static Bit64u set_lo(Bit64u r, Bit32u v) { return (r & BX_CONST64(0xFFFFFFFF00000000)) | v; }
static Bit64u set_hi(Bit64u r, Bit32u v) { return (r & 0xFFFFFFFF) | ((Bit64u) v << 32); }

void vtd_unit::write32(unsigned off, Bit32u v)
{
  const Bit64u haw_mask = (BX_CONST64(1) << VTD_HAW) - 1;
  if (off >= VTD_REG_FRCD && off < VTD_REG_FRCD + 16 * VTD_NFR) {
    // Only F (bit 127) is writable: write 1 to clear.
    unsigned n = (off - VTD_REG_FRCD) / 16, w = (off - VTD_REG_FRCD) % 16;
    if (w == 12 && (v >> 31)) {
      frcd[n][1] &= ~(BX_CONST64(1) << 63);
      fault_status_changed();
    }
    return;
  }
  switch (off) {
  case VTD_REG_GCMD: gcmd_write(v); break;
  case VTD_REG_RTADDR: rtaddr = set_lo(rtaddr, v & 0xFFFFF000); break;   // TTM (11:10) RsvdZ: no SMTS, no ADMS
  case VTD_REG_RTADDR + 4: rtaddr = set_hi(rtaddr, v) & haw_mask; break;
  case VTD_REG_CCMD: ccmd = set_lo(ccmd, v); break;
  case VTD_REG_CCMD + 4:
    if (ccmd_ticks) violation("ccmd-written-before-icc-cleared");
    ccmd = set_hi(ccmd, v & 0xE0000003);         // ICC, CIRG, FM; CAIG is the unit's
    if (ccmd >> 63) {
      if (cfg.defer) ccmd_ticks = cfg.defer;     // ICC reads 1 until then
      else ccmd_do();
    }
    break;
  case VTD_REG_FSTS: {
    Bit32u clear = v & (VTD_FSTS_PFO | VTD_FSTS_IQE);   // ICE, ITE RsvdZ: no Device-TLB (ECAP.DT 0)
    bool resume = (clear & VTD_FSTS_IQE) && (fsts & VTD_FSTS_IQE);
    fsts &= ~clear;
    if (resume) iqercd = 0;
    fault_status_changed();
    if (resume && !cfg.defer) run_queue();       // fetching resumes at IQH (defer: at the next tick)
    break;
  }
  case VTD_REG_FECTL: {
    bool unmask = (fectl & VTD_CTL_IM) && !(v & VTD_CTL_IM);
    fectl = (fectl & VTD_CTL_IP) | (v & VTD_CTL_IM);
    if (unmask && (fectl & VTD_CTL_IP)) {
      fectl &= ~VTD_CTL_IP;
      send(feaddr, feuaddr, fedata, "fault event");
    }
    break;
  }
  case VTD_REG_FEDATA: fedata = v; break;
  case VTD_REG_FEADDR: feaddr = v & ~3u; break;
  case VTD_REG_FEUADDR: feuaddr = v; break;
  case VTD_REG_PMEN:
    pmen = v & 0x80000000;
    if (cfg.defer) prs_ticks = cfg.defer;
    else prs = pmen >> 31;
    BX_INFO(("%s: protected memory regions %s (low 0x%08x-0x%08x, high 0x" FMT_ADDRX64 "-0x" FMT_ADDRX64 ")", name(),
             pmr_on() ? "on" : "off", plmbase, plmlimit | 0x1FFFFF, phmbase, phmlimit | 0x1FFFFF));
    break;
  case VTD_REG_PLMBASE: plmbase = v & 0xFFE00000; break;     // bits 20:0 RO: 2 MiB granules
  case VTD_REG_PLMLIMIT: plmlimit = v & 0xFFE00000; break;
  case VTD_REG_PHMBASE: phmbase = set_lo(phmbase, v & 0xFFE00000); break;
  case VTD_REG_PHMBASE + 4: phmbase = set_hi(phmbase, v) & haw_mask; break;
  case VTD_REG_PHMLIMIT: phmlimit = set_lo(phmlimit, v & 0xFFE00000); break;
  case VTD_REG_PHMLIMIT + 4: phmlimit = set_hi(phmlimit, v) & haw_mask; break;
  case VTD_REG_IQT:
    iqt = v & 0x7FFF0;                           // 18:4
    if ((gsts & VTD_GCMD_QIE) && !cfg.defer) run_queue();   // defer: read at the ticks
    break;
  case VTD_REG_IQT + 4: break;
  // IQA under QIE: software programs it with the queue off; counted, and
  // taken. DW (bit 11) is kept: a 256-bit width stops the queue (IQEI 5).
  case VTD_REG_IQA:
    if (gsts & VTD_GCMD_QIE) violation("iqa-written-under-qie");
    iqa = set_lo(iqa, v & 0xFFFFF807);
    break;
  case VTD_REG_IQA + 4:
    if (gsts & VTD_GCMD_QIE) violation("iqa-written-under-qie");
    iqa = set_hi(iqa, v) & (haw_mask | 0xFFF);
    break;
  case VTD_REG_ICS:
    if (v & 1) {
      ics = 0;
      iectl &= ~VTD_CTL_IP;                      // the only condition serviced
    }
    break;
  case VTD_REG_IECTL: {
    bool unmask = (iectl & VTD_CTL_IM) && !(v & VTD_CTL_IM);
    iectl = (iectl & VTD_CTL_IP) | (v & VTD_CTL_IM);
    if (unmask && (iectl & VTD_CTL_IP)) {
      iectl &= ~VTD_CTL_IP;
      send(ieaddr, ieuaddr, iedata, "invalidation event");
    }
    break;
  }
  case VTD_REG_IEDATA: iedata = v; break;
  case VTD_REG_IEADDR: ieaddr = v & ~3u; break;
  case VTD_REG_IEUADDR: ieuaddr = v; break;
  case VTD_REG_IRTA: irta = set_lo(irta, v & (0xFFFFF000 | 0x80F)); break;   // EIME (11) with ECAP.EIM, S 3:0
  case VTD_REG_IRTA + 4: irta = set_hi(irta, v) & (haw_mask | 0xFFF); break;
  case VTD_REG_IVA: iva = set_lo(iva, v & 0xFFFFF07F); break;
  case VTD_REG_IVA + 4: iva = set_hi(iva, v) & (haw_mask | 0xFFF); break;
  case VTD_REG_IOTLB: iotlb = set_lo(iotlb, v & 0); break;
  case VTD_REG_IOTLB + 4:
    if (iotlb_ticks) violation("iotlb-written-before-ivt-cleared");
    iotlb = set_hi(iotlb, v & 0xB003FFFF);       // IVT, IIRG, DR, DW, DID
    if (iotlb >> 63) {
      if (cfg.defer) iotlb_ticks = cfg.defer;
      else iotlb_do();
    }
    break;
  default:
    break;                                       // read-only or reserved
  }
}

// The register-based invalidations, when they complete: ICC or IVT clear,
// CAIG or IAIG the granularity done (00b: refused).
void vtd_unit::ccmd_do()
{
  unsigned g = (unsigned) vtd_bits(ccmd, 62, 61), caig = g;
  if (gsts & VTD_GCMD_QIE) {
    BX_ERROR(("%s: CCMD written while queued invalidation is on: not performed", name()));
    violation("register-invalidation-under-qie");
    caig = 0;
  } else if (g) {
    cc_invalidate(g, (Bit16u) ccmd, (Bit16u) (ccmd >> 16), (unsigned) vtd_bits(ccmd, 33, 32));
    syncs++;                                     // complete: ICC reads 0
  }
  ccmd = (ccmd & ~(BX_CONST64(1) << 63) & ~(BX_CONST64(3) << 59)) | ((Bit64u) caig << 59);
}

void vtd_unit::iotlb_do()
{
  unsigned g = (unsigned) vtd_bits(iotlb, 61, 60), iaig = g;
  unsigned am = (unsigned) vtd_bits(iva, 5, 0);
  if (gsts & VTD_GCMD_QIE) {
    BX_ERROR(("%s: IOTLB register written while queued invalidation is on: not performed", name()));
    violation("register-invalidation-under-qie");
    iaig = 0;
  } else if (g == 3 && am > vtd_bits(cap, 53, 48)) {
    iaig = 0;                                // beyond CAP.MAMV
  } else if (g) {
    iotlb_invalidate(g, (Bit16u) (iotlb >> 32), iva & ~BX_CONST64(0xFFF), am, (iva >> 6) & 1);
    syncs++;
  }
  iotlb = (iotlb & ~(BX_CONST64(1) << 63) & ~(BX_CONST64(3) << 57)) | ((Bit64u) iaig << 57);
}

// GCMD written: at once, or (defer) some ticks later. RTPS and IRTPS read 0
// from the SRTP or SIRTP write until the pointer is latched ("Global Status
// Register": cleared when software sets SRTP, set when the operation
// completes); every other status changes at completion. A second write
// before the first completed is a violation: the first completes then.
void vtd_unit::gcmd_write(Bit32u v)
{
  Bit32u changed = ((v ^ gsts) & VTD_GCMD_PERSISTENT) | (v & VTD_GCMD_ONESHOT);
  if (!cfg.defer || !(changed & ~(VTD_GCMD_EAFL | VTD_GCMD_SFL | VTD_GCMD_WBF))) { command(v); return; }
  if (cmd_ticks) {
    violation("gcmd-written-before-the-last-command-completed");
    command(cmd_v);
  }
  cmd_v = v;
  cmd_ticks = cfg.defer;
  if (v & VTD_GCMD_SRTP) gsts &= ~VTD_GCMD_SRTP;
  if (v & VTD_GCMD_SIRTP) gsts &= ~VTD_GCMD_SIRTP;
}

// One device tick (defer): commands whose time has come complete; the
// queue is read a few descriptors further.
void vtd_unit::tick()
{
  if (cmd_ticks && !--cmd_ticks) command(cmd_v);
  if (ccmd_ticks && !--ccmd_ticks) ccmd_do();
  if (iotlb_ticks && !--iotlb_ticks) iotlb_do();
  if (prs_ticks && !--prs_ticks) prs = pmen >> 31;
  run_queue(VTD_QI_PER_TICK);
}

// GCMD: software writes the status (one-shot bits clear) with one command
// changed. Persistent commands set or clear their status; one-shot ones
// act when written as 1. More than one command in a write is done in the
// order below and said in the log (the specification asks for one).
void vtd_unit::command(Bit32u v)
{
  Bit32u changed = ((v ^ gsts) & VTD_GCMD_PERSISTENT) | (v & VTD_GCMD_ONESHOT);
  changed &= ~(VTD_GCMD_EAFL | VTD_GCMD_SFL | VTD_GCMD_WBF);   // no advanced fault log; CAP.RWBF 0
  if (!changed) return;
  st.commands++;
  if (changed & (changed - 1)) {
    BX_ERROR(("%s: GCMD 0x%08x changes several commands at once (GSTS 0x%08x)", name(), v, gsts));
    violation("several-commands-in-one-gcmd-write");
  }
  if ((changed & VTD_GCMD_TE) && (v & VTD_GCMD_TE) && !(gsts & VTD_GCMD_SRTP) && !(changed & VTD_GCMD_SRTP))
    violation("te-without-rtps");
  if ((changed & VTD_GCMD_IRE) && (v & VTD_GCMD_IRE) && !(gsts & VTD_GCMD_SIRTP) && !(changed & VTD_GCMD_SIRTP))
    violation("ire-without-irtps");
  if (changed & VTD_GCMD_SRTP) {
    root = rtaddr;                               // no cache is flushed: software invalidates (CAP.ESRTPS 0)
    gsts |= VTD_GCMD_SRTP;                       // RTPS
    cc_due = true;
    BX_INFO(("%s: root table 0x" FMT_ADDRX64 " (translation %s)", name(), root, (gsts & VTD_GCMD_TE) ? "on" : "off"));
  }
  if (changed & VTD_GCMD_SIRTP) {
    irt = irta;                                  // the IEC keeps its entries: software invalidates (CAP.ESIRTPS 0)
    gsts |= VTD_GCMD_SIRTP;                      // IRTPS
    BX_INFO(("%s: interrupt remapping table 0x" FMT_ADDRX64 ", %u entries, %s", name(), (Bit64u) (irt & ~BX_CONST64(0xFFF)),
             2u << (irt & 0xF), (irt >> 11) & 1 ? "x2APIC (EIME)" : "xAPIC"));
  }
  if (changed & VTD_GCMD_QIE) {
    if (v & VTD_GCMD_QIE) {
      gsts |= VTD_GCMD_QIE;
      BX_INFO(("%s: queued invalidation on (queue 0x" FMT_ADDRX64 ", %u entries)", name(), (Bit64u) (iqa & ~BX_CONST64(0xFFF)),
               256u << (iqa & 7)));
      if (!cfg.defer) run_queue();
    } else {
      if (iqh != iqt) {
        BX_ERROR(("%s: queued invalidation turned off with descriptors not fetched (IQH 0x%x, IQT 0x%x)", name(),
                  (unsigned) iqh, (unsigned) iqt));
        violation("qie-off-with-iqh-not-iqt");
      }
      gsts &= ~VTD_GCMD_QIE;
      iqh = 0;                                   // reset whenever the queue is off
      BX_INFO(("%s: queued invalidation off", name()));
    }
  }
  if (changed & VTD_GCMD_CFI) {
    gsts = (gsts & ~VTD_GCMD_CFI) | (v & VTD_GCMD_CFI);
    BX_INFO(("%s: compatibility-format interrupts %s", name(), (v & VTD_GCMD_CFI) ? "passed through (CFI)" : "blocked"));
  }
  if (changed & VTD_GCMD_IRE) {
    gsts = (gsts & ~VTD_GCMD_IRE) | (v & VTD_GCMD_IRE);
    BX_INFO(("%s: interrupt remapping %s", name(), (v & VTD_GCMD_IRE) ? "on" : "off"));
  }
  if (changed & VTD_GCMD_TE) {
    gsts = (gsts & ~VTD_GCMD_TE) | (v & VTD_GCMD_TE);
    BX_INFO(("%s: translation %s (root table 0x" FMT_ADDRX64 ")", name(), (v & VTD_GCMD_TE) ? "on" : "off", root));
  }
}

// ---- invalidation ----

void vtd_unit::cc_invalidate(unsigned g, Bit16u did, Bit16u sid, unsigned fm)
{
  st.cc_inv++;
  cc_due = false;
  if (g == 1) { ccache.clear(); return; }
  Bit16u mask = fm == 0 ? 0xFFFF : fm == 1 ? 0xFFFB : fm == 2 ? 0xFFF9 : 0xFFF8;
  for (std::map<Bit16u, ctx_entry>::iterator i = ccache.begin(); i != ccache.end(); ) {
    // Device-selective: the source (FM's function mask) and, strict, the
    // domain ID too ("Context-cache Invalidate Descriptor": device-
    // selective invalidation is of the source ID within the domain).
    bool drop = g == 2 ? i->second.c.did == did
                       : ((i->first & mask) == (sid & mask)) && (!cfg.strict || i->second.c.did == did);
    if (drop) ccache.erase(i++); else ++i;
  }
}

void vtd_unit::iotlb_invalidate(unsigned g, Bit16u did, Bit64u addr, unsigned am, bool ih)
{
  st.iotlb_inv++;
  if (cc_due) violation("iotlb-before-context-after-srtp");
  if (g == 1) { tlb.clear(); pde.clear(); return; }
  Bit64u lo = addr & ~((BX_CONST64(1) << (12 + am)) - 1), hi = lo + (BX_CONST64(1) << (12 + am));
  // The paging-structure cache: a domain-selective invalidation drops the
  // domain's entries; a page-selective one those of the regions it
  // touches, unless IH ("Invalidation Hint": software changed only leaf
  // entries) lets the unit keep them.
  for (std::map<Bit64u, pde_entry>::iterator i = pde.begin(); i != pde.end(); ) {
    Bit64u start = (i->first & ((BX_CONST64(1) << 48) - 1)) << 21;
    bool drop = (Bit16u) (i->first >> 48) == did && (g == 2 || (!ih && start < hi && start + (BX_CONST64(1) << 21) > lo));
    if (drop) pde.erase(i++); else ++i;
  }
  for (std::map<Bit64u, tlb_entry>::iterator i = tlb.begin(); i != tlb.end(); ) {
    bool drop = (Bit16u) (i->first >> 48) == did;
    if (drop && g == 3) {
      unsigned shift = (unsigned) ((i->first >> 40) & 0xFF);
      Bit64u start = (i->first & ((BX_CONST64(1) << 40) - 1)) << shift, end = start + (BX_CONST64(1) << shift);
      // Strict: an entry larger than the range (a superpage under a mask
      // that covers a part of it) is kept: software names the whole page.
      drop = cfg.strict ? start >= lo && end <= hi : start < hi && end > lo;
    }
    if (drop) tlb.erase(i++); else ++i;
  }
}

void vtd_unit::iec_invalidate(bool index, unsigned idx, unsigned im)
{
  st.iec_inv++;
  if (index) iec_index_inv[(Bit16u) idx]++;
  if (!index) { iec.clear(); return; }
  unsigned first = idx & ~((1u << im) - 1), count = 1u << im;
  for (unsigned n = 0; n < count; n++) iec.erase((Bit16u) (first + n));
}

// One descriptor; false when it stops the queue (IQE).
bool vtd_unit::do_descriptor(Bit64u lo, Bit64u hi)
{
  unsigned iqei, type = vtd_inv_check(lo, hi, cap, ecap, VTD_HAW, &iqei);
  if (!type) {
    bool was_any = any_status();
    fsts |= VTD_FSTS_IQE;
    iqercd = iqei;
    st.qi_errors++;
    BX_ERROR(("%s: invalidation queue error at IQH 0x%x: descriptor 0x%016llx %016llx (IQEI %u)", name(), (unsigned) iqh,
              (unsigned long long) hi, (unsigned long long) lo, iqei));
    fault_event(was_any);
    return false;
  }
  st.qi_descriptors++;
  switch (type) {
  case VTD_INV_CC:
    cc_invalidate((unsigned) vtd_bits(lo, 5, 4), (Bit16u) vtd_bits(lo, 31, 16), (Bit16u) vtd_bits(lo, 47, 32),
                  (unsigned) vtd_bits(lo, 49, 48));
    break;
  case VTD_INV_IOTLB:
    iotlb_invalidate((unsigned) vtd_bits(lo, 5, 4), (Bit16u) vtd_bits(lo, 31, 16), hi & ~BX_CONST64(0xFFF),
                     (unsigned) vtd_bits(hi, 5, 0), (hi >> 6) & 1);
    break;
  case VTD_INV_IEC:
    iec_invalidate((lo >> 4) & 1, (unsigned) vtd_bits(lo, 47, 32), (unsigned) vtd_bits(lo, 31, 27));
    break;
  case VTD_INV_WAIT:
    // Every earlier descriptor is complete (they complete in order, at
    // once), so FN has nothing to hold back.
    st.waits++;
    syncs++;
    if ((lo >> 5) & 1) {                         // SW: status write, not remapped
      Bit32u data = (Bit32u) (lo >> 32);
      DEV_MEM_WRITE_PHYSICAL((bx_phy_address) (hi & ~BX_CONST64(3)), 4, (Bit8u *) &data);
    }
    if ((lo >> 4) & 1) {                         // IF: ICS.IWC and the invalidation event
      if (!(ics & 1)) {
        ics |= 1;
        iectl |= VTD_CTL_IP;
        if (!(iectl & VTD_CTL_IM)) {
          iectl &= ~VTD_CTL_IP;
          send(ieaddr, ieuaddr, iedata, "invalidation event");
        }
      }
    }
    break;
  }
  return true;
}

void vtd_unit::run_queue(unsigned budget)
{
  if (!(gsts & VTD_GCMD_QIE) || (fsts & VTD_FSTS_IQE)) return;
  Bit64u size = BX_CONST64(4096) << (iqa & 7);
  if (iqh == iqt) return;
  if (iqt >= size) {
    bool was_any = any_status();
    fsts |= VTD_FSTS_IQE;
    iqercd = VTD_IQEI_TAIL;
    st.qi_errors++;
    BX_ERROR(("%s: invalidation queue tail 0x%x beyond the queue (%u bytes)", name(), (unsigned) iqt, (unsigned) size));
    fault_event(was_any);
    return;
  }
  if ((iqa >> 11) & 1) {
    // IQA.DW 1 (256-bit descriptors) on a unit without scalable mode:
    // "invalid descriptor width", IQEI 5.
    bool was_any = any_status();
    fsts |= VTD_FSTS_IQE;
    iqercd = VTD_IQEI_WIDTH;
    st.qi_errors++;
    violation("descriptor-width-256");
    BX_ERROR(("%s: invalidation queue with 256-bit descriptors (IQA.DW 1): not offered", name()));
    fault_event(was_any);
    return;
  }
  Bit64u q = iqa & ~BX_CONST64(0xFFF);
  while (iqh != iqt && budget--) {
    Bit64u lo, hi;
    if (!rd64_cb(NULL, q + iqh, &lo) || !rd64_cb(NULL, q + iqh + 8, &hi)) {
      bool was_any = any_status();
      fsts |= VTD_FSTS_IQE;
      iqercd = VTD_IQEI_FETCH;
      st.qi_errors++;
      BX_ERROR(("%s: invalidation queue at 0x" FMT_ADDRX64 " cannot be read", name(), q + iqh));
      fault_event(was_any);
      return;
    }
    if (!do_descriptor(lo, hi)) return;          // IQH stays at the descriptor
    iqh = (iqh + 16) % size;
  }
}

// ---- faults ----

void vtd_unit::send(Bit32u addr, Bit32u uaddr, Bit32u data, const char *what)
{
  Bit64u a = ((Bit64u) uaddr << 32) | addr;
  if ((addr >> 20) != 0xFEE || !deliver_compat(a, data))
    BX_ERROR(("%s: %s message address 0x%08x%08x data 0x%08x reached no local APIC", name(), what, uaddr, addr, data));
}

// An interrupt condition (FECTL.IP) arises when a status field is set and
// none was set before ("Fault Event Control Register", IP).
void vtd_unit::fault_event(Bit32u was_any)
{
  if (was_any) return;
  fectl |= VTD_CTL_IP;
  if (!(fectl & VTD_CTL_IM)) {
    fectl &= ~VTD_CTL_IP;
    send(feaddr, feuaddr, fedata, "fault event");
  }
}

bool vtd_unit::any_status() const
{
  if (fsts & (VTD_FSTS_PFO | VTD_FSTS_IQE)) return true;
  for (unsigned n = 0; n < VTD_NFR; n++)
    if (frcd[n][1] >> 63) return true;
  return false;
}

// Software serviced every status field: the held message goes.
void vtd_unit::fault_status_changed()
{
  if (!any_status()) fectl &= ~VTD_CTL_IP;
}

// One fault, one record, in the next recording register; PFO when that one
// still holds a fault software has not cleared.
void vtd_unit::record_fault(Bit16u sid, Bit64u info, unsigned reason, bool read)
{
  static unsigned logged;
  if (logged < 200) {
    logged++;
    BX_INFO(("%s: fault reason 0x%02x, source %02x:%02x.%u, %s 0x" FMT_ADDRX64, name(), reason, sid >> 8, (sid >> 3) & 0x1F,
             sid & 7, reason >= 0x20 ? "interrupt index/info" : read ? "read" : "write", info));
  }
  bool was_any = any_status(), had_pending = false;
  for (unsigned n = 0; n < VTD_NFR; n++) {
    if (!(frcd[n][1] >> 63)) continue;
    had_pending = true;
    if (cfg.collapse && (Bit16u) frcd[n][1] == sid) {
      // collapse=1: one record per source until software clears it (a
      // unit may record a repeated fault of a requester once; the
      // option shows whether a count relies on every fault recorded).
      st.faults_unrecorded++;
      return;
    }
  }
  if (frcd[fault_next][1] >> 63) {
    st.fault_overflows++;
    fsts |= VTD_FSTS_PFO;                        // dropped: no free recording register
    fault_event(was_any);
    return;
  }
  st.faults++;
  frcd[fault_next][0] = info & ~BX_CONST64(0xFFF);
  frcd[fault_next][1] = (BX_CONST64(1) << 63) | ((Bit64u) read << 62) | ((Bit64u) reason << 32) | sid;
  if (!had_pending)
    fsts = (fsts & ~0xFF00u) | (fault_next << 8);   // FRI: the first pending fault
  fault_next = (fault_next + 1) % VTD_NFR;
  fault_event(was_any);
}

#include "vtd_strict.h"   // the violation counter and the stale-entry audit

// ---- DMA remapping ----

bool vtd_unit::translate(Bit16u sid, Bit64u addr, unsigned len, bool write, Bit64u *hpa)
{
  if (!(gsts & VTD_GCMD_TE)) {
    *hpa = addr;
    if (pmr_on() && vtd_pmr_hit(plmbase, plmlimit, phmbase, phmlimit, addr, len)) {
      st.pmr_blocked++;                          // not a remapping fault: not recorded
      return false;
    }
    return true;
  }
  vtd_ctx c;
  std::map<Bit16u, ctx_entry>::iterator ci = ccache.find(sid);
  if (ci != ccache.end()) {
    stale_hit(ci->second.seen, ctx_differs(sid, ci->second), st.stale_ctx, "context entry", sid);
    c = ci->second.c;
  } else {
    st.ctx_misses++;
    Bit64u re = (root & ~BX_CONST64(0xFFF)) + 16 * (sid >> 8), lo, hi, ctp = 0;
    ctx_entry ent = ctx_entry();
    int fr;
    if (!rd64_cb(NULL, re, &lo) || !rd64_cb(NULL, re + 8, &hi)) {
      fr = VTD_FR_ROOT_ACCESS;
    } else if (!(fr = vtd_root_entry(ent.rlo = lo, ent.rhi = hi, VTD_HAW, &ctp))) {
      Bit64u ce = ctp + 16 * (sid & 0xFF);
      if (!rd64_cb(NULL, ce, &lo) || !rd64_cb(NULL, ce + 8, &hi)) {
        fr = VTD_FR_CTX_ACCESS;
      } else {
        c.fpd = false;
        ent.clo = lo; ent.chi = hi;
        fr = vtd_context_entry(lo, hi, cap, VTD_HAW, &c);
        if (fr == VTD_FR_CTX_INVALID && c.fpd) {
          st.dma_blocked++; st.faults_unrecorded++;   // FPD: the entry asks for no record
          return false;
        }
      }
    }
    if (fr) {
      st.dma_blocked++;
      record_fault(sid, addr, fr, !write);
      return false;
    }
    ent.c = c;
    ccache[sid] = ent;
  }
  tlb_entry t;
  bool hit = false;
  for (unsigned shift = 12; shift <= 30 && !hit; shift += 9) {
    std::map<Bit64u, tlb_entry>::iterator ti = tlb.find(((Bit64u) c.did << 48) | ((Bit64u) shift << 40) | (addr >> shift));
    if (ti != tlb.end() && cfg.strict && !(write ? ti->second.w : ti->second.r)) {
      // Strict: the cached entry lacks the right: the fault is reported
      // from it, no walk (hardware may do either).
      stale_hit(ti->second.seen, tlb_differs(ti->second, c, addr), st.stale_iotlb, "IOTLB entry", ti->first);
      st.dma_blocked++;
      if (c.fpd) st.faults_unrecorded++;
      else record_fault(sid, addr, write ? VTD_FR_WRITE : VTD_FR_READ, !write);
      return false;
    }
    if (ti != tlb.end() && (write ? ti->second.w : ti->second.r)) {
      stale_hit(ti->second.seen, tlb_differs(ti->second, c, addr), st.stale_iotlb, "IOTLB entry", ti->first);
      t = ti->second;
      hit = true;
    }
  }
  if (hit) {
    st.tlb_hits++;
  } else {
    // A miss, or a cached entry without the right: walk (hardware may walk
    // again before it reports a permission fault).
    st.tlb_misses++;
    vtd_xlate x;
    int fr;
    Bit64u seen = 0;                             // a translation made through a stale entry inherits it
    if (!pde_walk(c, addr, write, &x, &fr, &seen)) {
      fr = vtd_sl_walk(rd64_cb, NULL, &c, cap, VTD_HAW, addr, write, &x);
      if (!fr && x.shift == 12) pde_fill(c, addr);
    }
    if (fr) {
      st.dma_blocked++;
      if (c.fpd) st.faults_unrecorded++;
      else record_fault(sid, addr, fr, !write);
      return false;
    }
    t.hpa = x.hpa; t.shift = x.shift; t.r = x.r; t.w = x.w;
    t.slpt = c.slpt; t.levels = c.levels; t.agaw = c.agaw; t.seen = seen;
    if (tlb.size() >= 4096) tlb.clear();         // a full IOTLB drops entries, as hardware may
    tlb[((Bit64u) c.did << 48) | ((Bit64u) t.shift << 40) | (addr >> t.shift)] = t;
  }
  *hpa = t.hpa | (addr & ((BX_CONST64(1) << t.shift) - 1));
  // An output in the interrupt address range is blocked ("Software must
  // not program paging-structure entries to remap any address to the
  // interrupt address range"; LGN.4): recorded unless the context has FPD.
  if (*hpa <= BX_CONST64(0xFEEFFFFF) && *hpa + len - 1 >= BX_CONST64(0xFEE00000)) {
    st.dma_blocked++;
    st.intr_addr_blocked++;
    if (c.fpd) st.faults_unrecorded++;
    else record_fault(sid, addr, VTD_FR_INTR_ADDR, !write);
    return false;
  }
  // With translation on, PMRs "may or may not" block remapped requests:
  // this unit blocks them, on the translated address.
  if (pmr_on() && vtd_pmr_hit(plmbase, plmlimit, phmbase, phmlimit, *hpa, len)) {
    st.pmr_blocked++;
    return false;
  }
  if (cfg.log_dma)
    BX_INFO(("%s: %02x:%02x.%u %s 0x" FMT_ADDRX64 " -> 0x" FMT_ADDRX64, name(), sid >> 8, (sid >> 3) & 0x1F, sid & 7,
             write ? "write" : "read", addr, *hpa));
  return true;
}

// ---- interrupt remapping ----

// -1: not taken (no remapping: the caller delivers the compatibility-format
// message); 1: delivered, posted, or blocked and recorded; 0: remapped but
// no local APIC took it.
int vtd_unit::interrupt(Bit16u sid, bool rte, Bit64u addr, Bit32u data, Bit64u rte_value)
{
  if (!(gsts & VTD_GCMD_IRE)) return -1;
  bool eime = (irt >> 11) & 1;
  Bit32u index = 0;
  int fmt = rte ? vtd_rte_request(rte_value, &index) : vtd_msi_request(addr, data, &index);
  if (fmt == 1) {
    // Compatibility format: passed through only with CFI, and never in
    // x2APIC mode ("Global Command Register", CFI).
    if ((gsts & VTD_GCMD_CFI) && !eime) { st.ir_compat_passed++; return -1; }
    st.ir_blocked++;
    record_fault(sid, 0, VTD_FR_IR_COMPAT, false);
    return 1;
  }
  if (fmt) {
    st.ir_blocked++;
    record_fault(sid, (Bit64u) index << 48, fmt, false);
    return 1;
  }
  if (index >= (2u << (irt & 0xF))) {
    st.ir_blocked++;
    record_fault(sid, (Bit64u) index << 48, VTD_FR_IR_INDEX, false);
    return 1;
  }
  Bit64u lo, hi;
  std::map<Bit16u, irte_entry>::iterator ii = iec.find((Bit16u) index);
  if (ii != iec.end()) {
    stale_hit(ii->second.seen, irte_differs((Bit16u) index, ii->second), st.stale_iec, "IRTE", index);
    lo = ii->second.lo; hi = ii->second.hi;
    st.iec_hits++;
  } else {
    Bit64u e = (irt & ~BX_CONST64(0xFFF)) + 16 * (Bit64u) index;
    if (!rd64_cb(NULL, e, &lo) || !rd64_cb(NULL, e + 8, &hi)) {
      st.ir_blocked++;
      record_fault(sid, (Bit64u) index << 48, VTD_FR_IR_TABLE, false);
      return 1;
    }
  }
  vtd_irte r = vtd_irte();
  int fr = vtd_irte_check(lo, hi, sid, eime, (cap >> 59) & 1, VTD_HAW, &r);
  if (fr) {
    st.ir_blocked++;
    if (!(fr != VTD_FR_IR_NP && vtd_irte_fpd(lo)))
      record_fault(sid, (Bit64u) index << 48, fr, false);
    else
      st.faults_unrecorded++;
    return 1;
  }
  if (ii == iec.end()) {                         // a present, valid entry is cached
    irte_entry ent = { lo, hi, 0 };
    iec[(Bit16u) index] = ent;
  }
  // An I/OxAPIC's remappable entry: its vector and trigger mode must be
  // the IRTE's ("I/OxAPIC Programming": the EOI the IOAPIC matches is by
  // the RTE's vector; level EOIs need the RTE's TM). Counted.
  if (rte && (Bit8u) rte_value != r.vector) violation("rte-vector-not-the-irtes");
  if (rte && !r.posted && (bool) ((rte_value >> 15) & 1) != r.tm) violation("rte-trigger-mode-not-the-irtes");
  if (r.posted) {
    // One update of the descriptor: PIR bit, ON; the notification after it.
    Bit64u pid[5];
    if (r.pda + 40 > BX_MEM(0)->get_memory_len()) {
      st.ir_blocked++;
      if (r.fpd) st.faults_unrecorded++;
      else record_fault(sid, (Bit64u) index << 48, VTD_FR_IR_PID, false);
      return 1;
    }
    for (unsigned i = 0; i < 5; i++) pid[i] = rd64(r.pda + 8 * i);
    bool notify = vtd_pid_post(pid, r.vector, r.urgent);
    for (unsigned i = 0; i < 5; i++) wr64(r.pda + 8 * i, pid[i]);
    st.ir_posted++;
    stamp(sid, vtd_pid_ndst(pid, eime), r.vector, true);
    if (notify) {
      st.ir_notified++;
      if (halted_in_guest(vtd_pid_ndst(pid, eime))) st.ir_notified_halted++;
      if (!apic_bus_deliver_interrupt(vtd_pid_nv(pid), vtd_pid_ndst(pid, eime), 0, false, true, false))
        BX_ERROR(("%s: notification vector 0x%02x to 0x%x reached no local APIC", name(), vtd_pid_nv(pid),
                  vtd_pid_ndst(pid, eime)));
    }
    return 1;
  }
  st.ir_remapped++;
  Bit8u vector = r.vector, mode = (Bit8u) r.dlm;
  bool logical = r.dm;
  if (mode == 7) vector = DEV_pic_iac();         // ExtINT: the 8259 answers
  if (mode == 1 && !logical) mode = 0;           // lowest priority to one physical destination: that one
  // Stamped when one CPU is named: physical, or an x2APIC logical (cluster)
  // destination with one bit set (cluster << 16 | bit: x2APIC ID
  // cluster * 16 + bit, SDM "Logical Destination Mode in x2APIC Mode").
  if (mode == 0 || mode == 1) {
    Bit32u m = r.dest & 0xFFFF;
    if (!logical)
      stamp(sid, r.dest, vector, false);
    else if (eime && m && !(m & (m - 1)))
      stamp(sid, (r.dest >> 16) * 16 + (Bit32u) __builtin_ctz(m), vector, false);
  }
  return apic_bus_deliver_interrupt(vector, r.dest, mode, logical, true, r.tm) ? 1 : 0;
}

// Whether the CPU whose local APIC ID is id sits halted (HLT) in VMX
// non-root operation: a notification to it must wake it (SDM, "Posted-
// Interrupt Processing"; the guest's HLT does not exit with hlt=guest).
static bool halted_in_guest(Bit32u id)
{
#if !defined(BX_VTD_HOST_TEST) && BX_SUPPORT_VMX
  for (unsigned k = 0; k < BX_SMP_PROCESSORS; k++)
    if (BX_CPU(k)->get_apic_id() == id)   // Bochs: a CPU's APIC ID is its index
      return BX_CPU(k)->in_vmx_guest && BX_CPU(k)->activity_state == BX_CPU_C::BX_ACTIVITY_STATE_HLT;
#else
  (void) id;
#endif
  return false;
}

// ---- device-interrupt latency (vtd.h, bx_vtd_taken) ----

// An interrupt a unit delivered to one physical destination, waiting for
// that CPU to take its vector through the IDT. A second one of the same
// destination and vector before that keeps the first's time (the two are
// one delivery to the handler).
struct lat_stamp { Bit64u t; Bit16u sid; bool posted; Bit8u state; Bit64u rip; };
static std::map<Bit64u, lat_stamp> stamps;
unsigned bx_vtd_stamps;
// Samples by (source, vector, kind): kind 0 posted and taken in VMX non-root
// operation, 1 remapped and taken in non-root (through the hypervisor's
// VM exit and its own delivery), 2 remapped and taken outside VMX (a bare
// kernel). At most LAT_MAX each, the first ones.
#define LAT_MAX 65536
static std::map<Bit32u, std::vector<Bit64u> > lat;   // key: sid << 16 | vector << 8 | kind
static const char *const lat_kind[3] = { "posted", "remapped_via_hv", "remapped_bare" };
// The same samples by what the destination CPU was doing when the unit
// delivered (where an interrupt waits: the tail's explanation, make
// bench-vtd): 0 running with interrupts enabled, 1 halted (HLT, in or out
// of VMX non-root), 2 running with RFLAGS.IF = 0 (the guest's, in non-
// root), 3 in VMX root operation (a VM exit being handled: a posted one
// waits for the next VM entry), 4 waiting in MWAIT. Key: the lat key << 3
// | state.
static std::map<Bit64u, std::vector<Bit64u> > lat_state;
static const char *const lat_state_name[5] = { "running", "halted", "if0", "root", "mwait" };

// Where a destination CPU in VMX root operation was (its RIP), per source
// and vector: the samples that waited there name the hypervisor's code.
static std::map<Bit32u, std::map<Bit64u, unsigned> > root_rips;   // key: sid << 16 | vector << 8

static Bit8u cpu_state(Bit32u id, Bit64u *rip)
{
  *rip = 0;
#if !defined(BX_VTD_HOST_TEST) && BX_SUPPORT_VMX
  for (unsigned k = 0; k < BX_SMP_PROCESSORS; k++)
    if (BX_CPU(k)->get_apic_id() == id) {
      BX_CPU_C *c = BX_CPU(k);
      *rip = c->get_instruction_pointer();
      if (c->in_vmx && !c->in_vmx_guest) return 3;
      if (c->activity_state == BX_CPU_C::BX_ACTIVITY_STATE_HLT) return 1;
      if (c->activity_state == BX_CPU_C::BX_ACTIVITY_STATE_MWAIT ||
          c->activity_state == BX_CPU_C::BX_ACTIVITY_STATE_MWAIT_IF) return 4;
      return c->get_IF() ? 0 : 2;
    }
#else
  (void) id;
#endif
  return 0;
}

static void stamp(Bit16u sid, Bit32u dest, Bit8u vector, bool posted)
{
  Bit64u key = ((Bit64u) dest << 8) | vector;
  if (stamps.count(key)) return;
  lat_stamp s = { vtd_now(), sid, posted, 0, 0 };
  s.state = cpu_state(dest, &s.rip);
  stamps[key] = s;
  bx_vtd_stamps = (unsigned) stamps.size();
}

void bx_vtd_taken(Bit32u apic_id, Bit8u vector, unsigned vmx)
{
  if (vmx == 1) return;                          // VMX root: the hypervisor's, not the handler's
  std::map<Bit64u, lat_stamp>::iterator it = stamps.find(((Bit64u) apic_id << 8) | vector);
  if (it == stamps.end()) return;
  unsigned kind = it->second.posted ? 0 : vmx == 2 ? 1 : 2;
  if (it->second.posted && vmx != 2) kind = 2;   // cannot happen: a posted vector is taken in non-root only
  std::vector<Bit64u> &v = lat[((Bit32u) it->second.sid << 16) | ((Bit32u) vector << 8) | kind];
  if (v.size() < LAT_MAX) {
    v.push_back(vtd_now() - it->second.t);
    Bit64u k = ((((Bit64u) it->second.sid << 16) | ((Bit64u) vector << 8) | kind) << 3) | it->second.state;
    lat_state[k].push_back(v.back());
    if (it->second.state == 3) root_rips[((Bit32u) it->second.sid << 16) | ((Bit32u) vector << 8)][it->second.rip]++;
  }
  stamps.erase(it);
  bx_vtd_stamps = (unsigned) stamps.size();
}

static void print_latency(void)
{
  for (std::map<Bit32u, std::vector<Bit64u> >::iterator it = lat.begin(); it != lat.end(); ++it) {
    std::vector<Bit64u> v = it->second;
    std::sort(v.begin(), v.end());
    Bit16u sid = (Bit16u) (it->first >> 16);
    size_t n = v.size();
    fprintf(stderr, "bochs-vtd: latency source=%02x:%02x.%u vector=0x%02x kind=%s n=%zu p50=%llu p90=%llu p99=%llu max=%llu ticks\n",
            sid >> 8, (sid >> 3) & 0x1F, sid & 7, (it->first >> 8) & 0xFF, lat_kind[it->first & 0xFF], n, (unsigned long long) v[n / 2],
            (unsigned long long) v[n * 9 / 10], (unsigned long long) v[n * 99 / 100], (unsigned long long) v[n - 1]);
  }
  for (std::map<Bit64u, std::vector<Bit64u> >::iterator it = lat_state.begin(); it != lat_state.end(); ++it) {
    std::vector<Bit64u> v = it->second;
    std::sort(v.begin(), v.end());
    Bit32u key = (Bit32u) (it->first >> 3);
    Bit16u sid = (Bit16u) (key >> 16);
    size_t n = v.size();
    fprintf(stderr, "bochs-vtd: latency-by-state source=%02x:%02x.%u vector=0x%02x kind=%s state=%s n=%zu p50=%llu p90=%llu p99=%llu max=%llu ticks\n",
            sid >> 8, (sid >> 3) & 0x1F, sid & 7, (key >> 8) & 0xFF, lat_kind[key & 0xFF], lat_state_name[it->first & 7], n,
            (unsigned long long) v[n / 2], (unsigned long long) v[n * 9 / 10], (unsigned long long) v[n * 99 / 100],
            (unsigned long long) v[n - 1]);
  }
  for (std::map<Bit32u, std::map<Bit64u, unsigned> >::iterator it = root_rips.begin(); it != root_rips.end(); ++it)
    for (std::map<Bit64u, unsigned>::iterator r = it->second.begin(); r != it->second.end(); ++r)
      fprintf(stderr, "bochs-vtd: latency-root-rip source=%02x:%02x.%u vector=0x%02x rip=0x%llx n=%u\n", it->first >> 24,
              (it->first >> 19) & 0x1F, (it->first >> 16) & 7, (it->first >> 8) & 0xFF, (unsigned long long) r->first, r->second);
}

// ---- the bus ----

// The register page, then the firmware's pages (VTD_FW_PAGES pages of
// memory the firmware keeps for itself: where the pre-boot tables live,
// below; zeros at each reset until the pre-boot state writes them).
static bool mmio_read(bx_phy_address a, unsigned len, void *data, void *param)
{
  vtd_unit *u = (vtd_unit *) param;
  Bit8u *out = (Bit8u *) data;
  for (unsigned i = 0; i < len; i++) {
    unsigned off = (unsigned) ((a + i) - u->base);
    out[i] = off < 0x1000 ? (Bit8u) (u->read32(off & ~3u) >> (8 * (off & 3))) : u->fw[off - 0x1000];
  }
  return true;
}

static bool mmio_write(bx_phy_address a, unsigned len, void *data, void *param)
{
  vtd_unit *u = (vtd_unit *) param;
  const Bit8u *in = (const Bit8u *) data;
  unsigned off = (unsigned) (a - u->base);
  if (off >= 0x1000) {                           // the firmware's pages: memory
    memcpy(&u->fw[off - 0x1000], in, len);
    return true;
  }
  if ((len != 4 && len != 8) || (off & 3)) {
    BX_ERROR(("%s: %u-byte write at offset 0x%03x: only aligned dword and qword writes are done", u->name(), len, off));
    return true;
  }
  for (unsigned d = 0; d < len / 4; d++) {       // a qword as its two dwords, low first
    Bit32u v = in[4 * d] | (in[4 * d + 1] << 8) | (in[4 * d + 2] << 16) | ((Bit32u) in[4 * d + 3] << 24);
    u->write32(off + 4 * d, v);
  }
  return true;
}

static void plain_read(bx_phy_address a, unsigned len, Bit8u *data, bool dma)
{
  if (dma) DEV_MEM_READ_PHYSICAL_DMA(a, len, data); else DEV_MEM_READ_PHYSICAL(a, len, data);
}

static void plain_write(bx_phy_address a, unsigned len, Bit8u *data, bool dma)
{
  if (dma) DEV_MEM_WRITE_PHYSICAL_DMA(a, len, data); else DEV_MEM_WRITE_PHYSICAL(a, len, data);
}

// A blocked read completes with an error (a PCIe unsupported request):
// false, the data zeros; the device answers as its own specification says
// (the xHCI: a host system error, vtd.patch).
bool bx_vtd_dma_read(Bit16u rid, bx_phy_address addr, unsigned len, Bit8u *data, bool dma)
{
  if (!vtd_active) { plain_read(addr, len, data, dma); return true; }
  vtd_unit *u = unit_of(rid);
  bool ok = true;
  while (len) {
    unsigned n = 0x1000 - (unsigned) (addr & 0xFFF);
    if (n > len) n = len;
    Bit64u hpa;
    if ((addr >> 20) == 0xFEE) {
      memset(data, 0, n);                        // a read of the interrupt range: no memory there
      ok = false;
    } else if (u->translate(rid, addr, n, false, &hpa)) {
      u->st.dma_pages++;
      plain_read((bx_phy_address) hpa, n, data, dma);
    } else {
      memset(data, 0, n);                        // blocked: memory unread
      ok = false;
    }
    addr += n; data += n; len -= n;
  }
  return ok;
}

void bx_vtd_dma_write(Bit16u rid, bx_phy_address addr, unsigned len, Bit8u *data, bool dma)
{
  if (!vtd_active) { plain_write(addr, len, data, dma); return; }
  vtd_unit *u = unit_of(rid);
  if ((addr >> 20) == 0xFEE) {
    // An interrupt request: a DWORD write to the interrupt range, never translated.
    if (len != 4) {
      BX_ERROR(("%02x:%02x.%u: %u-byte write to the interrupt range 0x" FMT_ADDRX64 ": dropped", rid >> 8,
                (rid >> 3) & 0x1F, rid & 7, len, (Bit64u) addr));
      return;
    }
    Bit32u v = data[0] | (data[1] << 8) | (data[2] << 16) | ((Bit32u) data[3] << 24);
    if (!bx_vtd_msi(rid, addr, v)) deliver_compat(addr, v);
    return;
  }
  while (len) {
    unsigned n = 0x1000 - (unsigned) (addr & 0xFFF);
    if (n > len) n = len;
    Bit64u hpa;
    if (u->translate(rid, addr, n, true, &hpa)) {
      u->st.dma_pages++;
      plain_write((bx_phy_address) hpa, n, data, dma);
    }
    addr += n; data += n; len -= n;
  }
}

bool bx_vtd_msi(Bit16u rid, Bit64u addr, Bit32u data)
{
  if (!vtd_active) return false;
  return unit_of(rid)->interrupt(rid, false, addr, data, 0) >= 0;
}

int bx_vtd_ioapic(Bit64u rte)
{
  if (!vtd_active) return -1;
  return units[0].interrupt(cfg.ioapic_sid, true, 0, 0, rte);
}

// ---- configuration, start, reset ----

static bool parse_bdf(const char *s, Bit16u *sid)
{
  unsigned b, d, f;
  if (sscanf(s, "%x:%x.%x", &b, &d, &f) != 3 || b > 255 || d > 31 || f > 7) return false;
  *sid = (Bit16u) (b << 8 | d << 3 | f);
  return true;
}

bool bx_vtd_parse_option(const char *context, int num_params, char *params[])
{
  for (int i = 1; i < num_params; i++) {
    const char *p = params[i];
    if (!strncmp(p, "enabled=", 8)) cfg.enabled = atoi(p + 8) != 0;
    else if (!strncmp(p, "units=", 6)) cfg.units = atoi(p + 6);
    else if (!strncmp(p, "preboot=", 8)) cfg.preboot = (unsigned) atoi(p + 8);
    else if (!strncmp(p, "log_dma=", 8)) cfg.log_dma = atoi(p + 8) != 0;
    else if (!strncmp(p, "defer=", 6)) cfg.defer = (unsigned) atoi(p + 6);
    else if (!strncmp(p, "strict=", 7)) cfg.strict = atoi(p + 7) != 0;
    else if (!strncmp(p, "collapse=", 9)) cfg.collapse = atoi(p + 9) != 0;
    else if (!strncmp(p, "ioapic=", 7)) {
      if (!parse_bdf(p + 7, &cfg.ioapic_sid)) { fprintf(stderr, "%s: vtd: bad ioapic=%s\n", context, p + 7); return false; }
    } else if (!strncmp(p, "scope1=", 7)) {
      // BB:DD.F[+BB:DD.F...]: unit 1's PCI functions
      char buf[256];
      strncpy(buf, p + 7, sizeof(buf) - 1); buf[sizeof(buf) - 1] = 0;
      cfg.nscope1 = 0;
      for (char *t = strtok(buf, "+"); t; t = strtok(NULL, "+")) {
        if (cfg.nscope1 >= VTD_MAX_SCOPE || !parse_bdf(t, &cfg.scope1[cfg.nscope1])) {
          fprintf(stderr, "%s: vtd: bad scope1 entry %s\n", context, t);
          return false;
        }
        cfg.nscope1++;
      }
    } else {
      fprintf(stderr, "%s: vtd: unknown option %s\n", context, p);
      return false;
    }
  }
  if (cfg.preboot > 2) {
    fprintf(stderr, "%s: vtd: preboot=%u (0, 1 or 2)\n", context, cfg.preboot);
    return false;
  }
  if (cfg.units < 1 || cfg.units > VTD_UNITS) {
    fprintf(stderr, "%s: vtd: units=%u (1 or 2)\n", context, cfg.units);
    return false;
  }
  return true;
}

static void print_stats(void)
{
  for (unsigned n = 0; n < cfg.units; n++) {
    vtd_unit *u = &units[n];
    fprintf(stderr, "bochs-vtd: unit=%u base=0x%llx gsts=0x%08x dma_pages=%llu dma_blocked=%llu pmr_blocked=%llu faults=%llu "
            "fault_overflows=%llu faults_unrecorded=%llu tlb_hits=%llu tlb_misses=%llu ctx_misses=%llu\n",
            n, (unsigned long long) u->base, u->gsts, (unsigned long long) u->st.dma_pages,
            (unsigned long long) u->st.dma_blocked, (unsigned long long) u->st.pmr_blocked, (unsigned long long) u->st.faults,
            (unsigned long long) u->st.fault_overflows, (unsigned long long) u->st.faults_unrecorded,
            (unsigned long long) u->st.tlb_hits, (unsigned long long) u->st.tlb_misses, (unsigned long long) u->st.ctx_misses);
    fprintf(stderr, "bochs-vtd: unit=%u ir_remapped=%llu ir_posted=%llu ir_notified=%llu ir_notified_halted=%llu ir_blocked=%llu ir_compat_passed=%llu "
            "iec_hits=%llu qi_descriptors=%llu qi_errors=%llu waits=%llu cc_inv=%llu iotlb_inv=%llu iec_inv=%llu commands=%llu\n",
            n, (unsigned long long) u->st.ir_remapped, (unsigned long long) u->st.ir_posted,
            (unsigned long long) u->st.ir_notified, (unsigned long long) u->st.ir_notified_halted,
            (unsigned long long) u->st.ir_blocked,
            (unsigned long long) u->st.ir_compat_passed, (unsigned long long) u->st.iec_hits,
            (unsigned long long) u->st.qi_descriptors, (unsigned long long) u->st.qi_errors, (unsigned long long) u->st.waits,
            (unsigned long long) u->st.cc_inv, (unsigned long long) u->st.iotlb_inv, (unsigned long long) u->st.iec_inv,
            (unsigned long long) u->st.commands);
    fprintf(stderr, "bochs-vtd: unit=%u stale_ctx=%llu stale_iotlb=%llu stale_iec=%llu violations=%llu intr_addr_blocked=%llu audited=%s\n",
            n, (unsigned long long) u->st.stale_ctx, (unsigned long long) u->st.stale_iotlb, (unsigned long long) u->st.stale_iec,
            (unsigned long long) u->st.violations, (unsigned long long) u->st.intr_addr_blocked, audited ? "exit" : "hits-only");
    // Each IRTE index invalidated by an index-selective descriptor, and how
    // often (the run compares it with the hypervisor's writes of that IRTE).
    for (std::map<Bit16u, Bit64u>::iterator i = u->iec_index_inv.begin(); i != u->iec_index_inv.end(); ++i)
      fprintf(stderr, "bochs-vtd: unit=%u base=0x%llx iec_index=%u inv=%llu\n", n, (unsigned long long) u->base, i->first,
              (unsigned long long) i->second);
    for (std::map<std::string, Bit64u>::iterator i = u->violated.begin(); i != u->violated.end(); ++i)
      fprintf(stderr, "bochs-vtd: unit=%u violation=%s count=%llu\n", n, i->first.c_str(), (unsigned long long) i->second);
  }
  print_latency();
}

static void vtd_tick_all(void *)
{
  for (unsigned n = 0; n < cfg.units; n++) units[n].tick();
}

void bx_vtd_init(void)
{
  if (!cfg.enabled) return;
  theVtd = new bx_vtd_c();
  for (unsigned n = 0; n < cfg.units; n++) {
    vtd_unit *u = &units[n];
    u->id = n;
    u->base = VTD_BASE + VTD_STRIDE * n;
    // CAP: ND 6 (64K domains), PLMR, PHMR, CM 0, SAGAW 4-level (bit 2), MGAW
    // 48, FRO 0x40, SLLPS 2 MiB and 1 GiB, PSI, NFR 8, MAMV 18, DWD, DRD, PI.
    u->cap = 6 | (1 << 5) | (1 << 6) | (BX_CONST64(4) << 8) | (BX_CONST64(47) << 16) |
             ((Bit64u) (VTD_REG_FRCD / 16) << 24) | (BX_CONST64(3) << 34) | (BX_CONST64(1) << 39) |
             ((Bit64u) (VTD_NFR - 1) << 40) | (BX_CONST64(18) << 48) | (BX_CONST64(1) << 54) | (BX_CONST64(1) << 55) |
             (BX_CONST64(1) << 59);
    // ECAP: C (page walks snoop, as a server's), QI, IR, EIM, IRO 0x50, MHMV
    // 15; no Device-TLB, no pass-through, no scalable mode.
    u->ecap = 1 | (1 << 1) | (1 << 3) | (1 << 4) | ((Bit64u) (VTD_REG_IVA / 16) << 8) | (BX_CONST64(15) << 20);
    memset(&u->st, 0, sizeof(u->st));
    u->reset();
    if (!DEV_register_memory_handlers(u, mmio_read, mmio_write, u->base, u->base + 0x1000 * (1 + VTD_FW_PAGES) - 1))
      BX_PANIC(("VT-d %s: its registers at 0x" FMT_ADDRX64 " overlap another device's", u->name(), (Bit64u) u->base));
    BX_INFO(("VT-d %s at 0x" FMT_ADDRX64 ": CAP 0x" FMT_ADDRX64 " ECAP 0x" FMT_ADDRX64 "%s", u->name(), (Bit64u) u->base,
             u->cap, u->ecap, n == 0 ? " (I/OxAPIC and every function not in unit 1)" : ""));
  }
  for (unsigned i = 0; i < cfg.nscope1; i++)
    BX_INFO(("VT-d unit 1 scope: %02x:%02x.%u", cfg.scope1[i] >> 8, (cfg.scope1[i] >> 3) & 0x1F, cfg.scope1[i] & 7));
  vtd_active = true;
  atexit(print_stats);
#ifndef BX_VTD_HOST_TEST
  if (cfg.defer) bx_pc_system.register_timer(theVtd, vtd_tick_all, VTD_TICK_US, 1, 1, "vtd");
#endif
  if (cfg.defer)
    BX_INFO(("VT-d: deferred completion: commands %u ticks of %u us, the queue %u descriptors a tick", cfg.defer,
             VTD_TICK_US, VTD_QI_PER_TICK));
}

// The state a firmware with pre-boot DMA protection leaves ("DMA_CTRL_
// PLATFORM_OPT_IN"): a root table with no entry present (every request
// blocked and recorded, reason 1), an empty invalidation queue and an
// interrupt-remapping table of two entries, neither present (every
// interrupt blocked); TE, QIE, IRE on (CFI clear); the low PMR over 0-16
// MiB on. The firmware's tables live where no OS writes: in three pages
// after the unit's registers that read as zeros (the DRHD gives the
// register set one page; the e820 map lists none of these), i.e. memory
// the firmware kept for itself, as a real one reserves it.
static void preboot(vtd_unit *u)
{
  bx_phy_address t = u->base + 0x1000;
  u->rtaddr = t;
  u->command(VTD_GCMD_SRTP);
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_TE);
  u->iqa = t + 0x1000;
  u->iqt = 0;
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_QIE);
  u->irta = (t + 0x2000) | (BX_CONST64(1) << 11);   // EIME, 2 entries (S 0)
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_SIRTP);
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_IRE);
  u->plmbase = 0;
  u->plmlimit = 0x00E00000;
  u->write32(VTD_REG_PMEN, 0x80000000);
  u->prs = 1; u->prs_ticks = 0;                    // the firmware waited for PRS
  memset(&u->st, 0, sizeof(u->st));                // the counts are the OS's
  u->violated.clear();
  BX_INFO(("VT-d %s: pre-boot DMA protection: root table 0x" FMT_ADDRX64 ", GSTS 0x%08x, PMR 0-16 MiB", u->name(),
           (Bit64u) t, u->gsts));
}

// The firmware's use of IRTE INDEX: read from its table and cached, as
// its own interrupt through it would leave it.
static void irte_entry_cache(vtd_unit *u, unsigned index)
{
  Bit64u e = (u->irt & ~BX_CONST64(0xFFF)) + 16 * (Bit64u) index, lo, hi;
  if (rd64_cb(NULL, e, &lo) && rd64_cb(NULL, e + 8, &hi) && (lo & 1)) {
    vtd_unit::irte_entry ent = { lo, hi, 0 };
    u->iec[(Bit16u) index] = ent;
  }
}

static void fw_wr64(vtd_unit *u, unsigned page, unsigned off, Bit64u v)
{
  for (int i = 0; i < 8; i++) u->fw[(page - 1) * 0x1000 + off + i] = (Bit8u) (v >> (8 * i));
}

// preboot=2, the warm state (issue 44 item 4): what a firmware that used
// its unit leaves. Its pages (after the registers): 1 root, 2 queue, 3 the
// interrupt-remapping table (256 entries), 4 bus 0's context table, 5-8 a
// 4-level second-level table, 9 the firmware's DMA buffer. Every context
// entry of bus 0 present (domain 1) with IOVA 0x1000 mapped to the buffer
// (read/write); one request from the unit's first function walked, so its
// context entry and that translation are cached; IRTE 200 present (vector
// 0xef to APIC ID 0) and cached; CFI set; the queue stopped with IQE at a
// Device-TLB descriptor (the unit has none: IQEI 3) with a context-cache
// invalidation and a wait descriptor after it, between IQH and IQT; nine
// requests from bus 1 (no root entry) faulted: eight records pending and
// PFO; the fault event pointed at the firmware's vector 0xef on APIC ID 0,
// unmasked, its message already taken (IP clear).
static void preboot_warm(vtd_unit *u)
{
  const bx_phy_address b = u->base;
  Bit16u sid = u->id && cfg.nscope1 ? cfg.scope1[cfg.nscope1 - 1] : 0;
  for (unsigned i = 0; i < sizeof(u->fw); i++) u->fw[i] = 0;
  fw_wr64(u, 1, 0, (b + 0x4000) | 1);                             // root entry, bus 0
  for (unsigned devfn = 0; devfn < 256; devfn++) {
    fw_wr64(u, 4, 16 * devfn, (b + 0x5000) | 1);                  // P, TT 00b, SLPTPTR
    fw_wr64(u, 4, 16 * devfn + 8, (BX_CONST64(1) << 8) | 2);      // DID 1, AW 4-level
  }
  fw_wr64(u, 5, 0, (b + 0x6000) | 3);                             // PML4E, PDPTE, PDE: R W
  fw_wr64(u, 6, 0, (b + 0x7000) | 3);
  fw_wr64(u, 7, 0, (b + 0x8000) | 3);
  fw_wr64(u, 8, 8, (b + 0x9000) | 3);                             // IOVA 0x1000 -> the buffer
  fw_wr64(u, 3, 16 * 200, (BX_CONST64(0) << 32) | (0xefu << 16) | 1);   // IRTE 200: P, vector 0xef, APIC ID 0
  // The firmware's stopped queue: a Device-TLB invalidation (type 3),
  // then a global context-cache invalidation and a wait that would write 1
  // into its buffer.
  fw_wr64(u, 2, 0x00, 3);
  fw_wr64(u, 2, 0x08, 0x1000);
  fw_wr64(u, 2, 0x10, 1 | (1 << 4));
  fw_wr64(u, 2, 0x20, 5 | (1 << 5) | (BX_CONST64(1) << 32));
  fw_wr64(u, 2, 0x28, b + 0x9000 + 0x800);
  u->fedata = 0xef; u->feaddr = 0xFEE00000; u->feuaddr = 0;      // masked while it runs (reset state)
  u->rtaddr = b + 0x1000;
  u->command(VTD_GCMD_SRTP);
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_TE);
  u->iqa = b + 0x2000;
  u->iqt = 0;
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_QIE);
  u->irta = (b + 0x3000) | (BX_CONST64(1) << 11) | 7;             // EIME, 256 entries (S 7)
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_SIRTP);
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_CFI);
  u->command((u->gsts & ~VTD_GCMD_ONESHOT) | VTD_GCMD_IRE);
  Bit64u hpa;
  u->translate(sid, 0x1000, 4, false, &hpa);                      // cached: the context entry and the page
  irte_entry_cache(u, 200);
  u->iqt = 0x30;
  u->run_queue();                                                 // stops at descriptor 0
  for (unsigned k = 0; k < VTD_NFR + 1; k++) u->translate(0x0100, 0x1000 * k, 4, false, &hpa);
  u->fectl = 0;                                                   // unmasked, the event taken
  u->plmbase = 0;
  u->plmlimit = 0x00E00000;
  u->write32(VTD_REG_PMEN, 0x80000000);
  u->prs = 1; u->prs_ticks = 0;
  memset(&u->st, 0, sizeof(u->st));
  u->violated.clear();
  BX_INFO(("%s: warm firmware state: GSTS 0x%08x, FSTS 0x%08x, IQH 0x%x IQT 0x%x, %u context, %u IOTLB, %u IRTE cached; "
           "IOVA 0x1000 of %02x:%02x.%u -> 0x" FMT_ADDRX64, u->name(), u->gsts, u->read32(VTD_REG_FSTS), (unsigned) u->iqh,
           (unsigned) u->iqt, (unsigned) u->ccache.size(), (unsigned) u->tlb.size(), (unsigned) u->iec.size(), sid >> 8,
           (sid >> 3) & 0x1F, sid & 7, hpa));
}

void bx_vtd_reset(unsigned)
{
  if (!vtd_active) return;
  for (unsigned n = 0; n < cfg.units; n++) {
    units[n].reset();
    memset(units[n].fw, 0, sizeof(units[n].fw));
    if (cfg.preboot == 2) preboot_warm(&units[n]);
    else if (cfg.preboot) preboot(&units[n]);
  }
}

#else  // no PCI or no APIC: nothing to remap

#include "vtd.h"
bool bx_vtd_parse_option(const char *, int, char *[]) { return false; }
void bx_vtd_init(void) {}
void bx_vtd_reset(unsigned) {}
bool bx_vtd_dma_read(Bit16u, bx_phy_address a, unsigned len, Bit8u *d, bool dma)
{ if (dma) DEV_MEM_READ_PHYSICAL_DMA(a, len, d); else DEV_MEM_READ_PHYSICAL(a, len, d); return true; }
void bx_vtd_exit_audit(void) {}
void bx_vtd_dma_write(Bit16u, bx_phy_address a, unsigned len, Bit8u *d, bool dma)
{ if (dma) DEV_MEM_WRITE_PHYSICAL_DMA(a, len, d); else DEV_MEM_WRITE_PHYSICAL(a, len, d); }
bool bx_vtd_msi(Bit16u, Bit64u, Bit32u) { return false; }
int bx_vtd_ioapic(Bit64u) { return -1; }

#endif
