// The patched Bochs's VT-d unit as a device (tools/bochs-patch/vtd.cc,
// compiled here with test/unit/vtd_host.h in place of Bochs): its registers
// written as a driver writes them, its DMA and interrupt paths driven as
// Bochs's devices drive them, against what the VT-d specification says the
// unit does ("Register Descriptions", "Caching Translation Information"
// and "Invalidation of Translation Caches", "Fault Logging", "Interrupt
// Remapping", "Interrupt Posting", "Protected Memory Regions"). In
// particular what only the caches show: a table changed without the
// invalidation the specification asks for keeps its old translation or
// route, and one changed from not present needs none (CAP.CM 0). Prints one
// "PASS|FAIL unit/vtd_device_NAME" line per case (test/run-tests.sh, level
// unit).
#define BX_VTD_HOST_TEST 1
#include "vtd_host.h"
#include <stdarg.h>
#include "host_cxx.h"
#include "../../tools/bochs-patch/vtd.cc"

// ---- the stand-ins ----
char vtd_host_log[1 << 16];
static size_t log_len;
static void vlog(const char *kind, const char *fmt, va_list ap)
{
  char line[512];
  vsnprintf(line, sizeof line, fmt, ap);
  if (getenv("UNIT_VERBOSE")) printf("      [%s] %s\n", kind, line);
  size_t n = strlen(line);
  if (log_len + n + 2 < sizeof vtd_host_log) {
    memcpy(vtd_host_log + log_len, line, n);
    log_len += n;
    vtd_host_log[log_len++] = '\n';
    vtd_host_log[log_len] = 0;
  }
}
void vtd_host_info(const char *fmt, ...) { va_list ap; va_start(ap, fmt); vlog("i", fmt, ap); va_end(ap); }
void vtd_host_error(const char *fmt, ...) { va_list ap; va_start(ap, fmt); vlog("e", fmt, ap); va_end(ap); }

Bit8u *vtd_host_mem;
vtd_host_memory vtd_host_memobj;
static struct { void *param; memory_handler_t rd, wr; bx_phy_address b, e; } handlers[4];
static unsigned nhandlers;
bool vtd_host_register(void *param, memory_handler_t rd, memory_handler_t wr, bx_phy_address b, bx_phy_address e)
{
  handlers[nhandlers].param = param; handlers[nhandlers].rd = rd; handlers[nhandlers].wr = wr;
  handlers[nhandlers].b = b; handlers[nhandlers].e = e;
  nhandlers++;
  return true;
}
static int handler_of(bx_phy_address a)
{
  for (unsigned i = 0; i < nhandlers; i++)
    if (a >= handlers[i].b && a <= handlers[i].e) return (int) i;
  return -1;
}
void vtd_host_read(bx_phy_address a, unsigned len, Bit8u *p)
{
  int h = handler_of(a);
  if (h >= 0) { handlers[h].rd(a, len, p, handlers[h].param); return; }
  for (unsigned i = 0; i < len; i++) p[i] = a + i < VTD_HOST_MEM ? vtd_host_mem[a + i] : 0xff;
}
void vtd_host_write(bx_phy_address a, unsigned len, Bit8u *p)
{
  int h = handler_of(a);
  if (h >= 0) { handlers[h].wr(a, len, p, handlers[h].param); return; }
  for (unsigned i = 0; i < len; i++) if (a + i < VTD_HOST_MEM) vtd_host_mem[a + i] = p[i];
}
vtd_host_irq vtd_host_irqs[256];
unsigned vtd_host_nirqs;
Bit64u vtd_host_clock;
bool apic_bus_deliver_interrupt(Bit8u vector, apic_dest_t dest, Bit8u mode, bool logical, bool, bool trig)
{
  vtd_host_irq r = { vector, mode, dest, logical, trig };
  if (vtd_host_nirqs < 256) vtd_host_irqs[vtd_host_nirqs++] = r;
  return true;
}

// ---- the platform a test sees ----
static const Bit16u XHCI = 0x0010, UHCI = 0x000a, IDE = 0x0009;   // unit 1, unit 1, unit 0
static const bx_phy_address U0 = 0xFED90000, U1 = 0xFEDA0000;

static void wr32(bx_phy_address u, unsigned off, Bit32u v) { Bit8u b[4]; memcpy(b, &v, 4); vtd_host_write(u + off, 4, b); }
static void wr64(bx_phy_address u, unsigned off, Bit64u v) { Bit8u b[8]; memcpy(b, &v, 8); vtd_host_write(u + off, 8, b); }
static Bit32u rd32(bx_phy_address u, unsigned off) { Bit32u v; vtd_host_read(u + off, 4, (Bit8u *) &v); return v; }
static Bit64u rd64(bx_phy_address u, unsigned off) { Bit64u v; vtd_host_read(u + off, 8, (Bit8u *) &v); return v; }
static void m64(bx_phy_address a, Bit64u v) { memcpy(vtd_host_mem + a, &v, 8); }
static Bit64u g64(bx_phy_address a) { Bit64u v; memcpy(&v, vtd_host_mem + a, 8); return v; }
static Bit32u g32(bx_phy_address a) { Bit32u v; memcpy(&v, vtd_host_mem + a, 4); return v; }
// One command as a driver gives it: the status without the one-shot bits, plus or minus cmd.
static void gcmd(bx_phy_address u, Bit32u cmd, bool set)
{
  Bit32u s = rd32(u, VTD_REG_GSTS) & ~(VTD_GCMD_ONESHOT);
  wr32(u, VTD_REG_GCMD, set ? s | cmd : s & ~cmd);
}

static void fresh(unsigned preboot = 0)
{
  static bool started;
  memset(vtd_host_mem, 0, VTD_HOST_MEM);
  vtd_host_nirqs = 0;
  log_len = 0; vtd_host_log[0] = 0;
  cfg.preboot = preboot;
  if (!started) {
    started = true;
    cfg.enabled = true; cfg.units = 2; cfg.nscope1 = 2; cfg.scope1[0] = UHCI; cfg.scope1[1] = XHCI;
    bx_vtd_init();
  }
  bx_vtd_reset(0);
  for (unsigned n = 0; n < 2; n++) memset(&units[n].st, 0, sizeof(units[n].st));
}

// Tables for domain 1 (4 levels): root 0x100000 -> context 0x101000 (bus 0)
// -> PML4 0x102000 -> PDPT 0x103000 -> PD 0x104000 -> PT 0x105000; IOVA
// 0x40000000 + 4K*i maps page 0x200000 + 4K*i, read and write.
static const Bit64u ROOT = 0x100000, CTX = 0x101000, PML4 = 0x102000, PDPT = 0x103000, PD = 0x104000, PT = 0x105000;
static const Bit64u IOVA = 0x40000000, PAGE = 0x200000;
static void tables(Bit16u sid, Bit16u did)
{
  m64(ROOT, CTX | 1);
  m64(CTX + 16 * (sid & 0xff), PML4 | 1);
  m64(CTX + 16 * (sid & 0xff) + 8, 2 | (Bit64u) did << 8);   // AW 2: 4 levels
  m64(PML4, PDPT | 3);
  m64(PDPT + 8 * 1, PD | 3);                                  // IOVA bits 38:30 = 1
  m64(PD, PT | 3);
  for (unsigned i = 0; i < 8; i++) m64(PT + 8 * i, (PAGE + 0x1000 * i) | 3);
}
static void translation_on(bx_phy_address u)
{
  wr64(u, VTD_REG_RTADDR, ROOT);
  gcmd(u, VTD_GCMD_SRTP, true);
  gcmd(u, VTD_GCMD_TE, true);
}
static Bit32u dma_read32(Bit16u sid, Bit64u addr) { Bit32u v; bx_vtd_dma_read(sid, addr, 4, (Bit8u *) &v, true); return v; }
static void dma_write32(Bit16u sid, Bit64u addr, Bit32u v) { bx_vtd_dma_write(sid, addr, 4, (Bit8u *) &v, true); }
static void mark(unsigned page, Bit32u v) { memcpy(vtd_host_mem + PAGE + 0x1000 * page, &v, 4); }
static unsigned records(bx_phy_address u)
{
  unsigned n = 0;
  for (unsigned i = 0; i < VTD_NFR; i++) n += rd64(u, VTD_REG_FRCD + 16 * i + 8) >> 63;
  return n;
}

// ---- the cases ----

static void root_pointer_latched_by_srtp()
{
  fresh();
  tables(XHCI, 1);
  mark(0, 0x11111111);
  wr64(U1, VTD_REG_RTADDR, ROOT);
  CHECK_EQ(rd32(U1, VTD_REG_GSTS), 0);
  gcmd(U1, VTD_GCMD_SRTP, true);
  CHECK_EQ(rd32(U1, VTD_REG_GSTS), VTD_GCMD_SRTP);            // RTPS
  wr64(U1, VTD_REG_RTADDR, 0x180000);                          // not latched without SRTP
  CHECK_EQ(rd64(U1, VTD_REG_RTADDR), 0x180000);
  gcmd(U1, VTD_GCMD_TE, true);
  CHECK_EQ(rd32(U1, VTD_REG_GSTS), VTD_GCMD_TE | VTD_GCMD_SRTP);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0x11111111);               // through 0x100000
  CHECK_EQ(records(U1), 0);
  gcmd(U1, VTD_GCMD_TE, false);
  CHECK_EQ(rd32(U1, VTD_REG_GSTS), VTD_GCMD_SRTP);
  CHECK_EQ(dma_read32(XHCI, PAGE), 0x11111111);                // TE off: untranslated
  CHECK_EQ(rd32(U1, VTD_REG_VER), 0x10);
  CHECK_EQ(rd64(U1, VTD_REG_CAP) >> 59 & 1, 1);                // PI
  CHECK_EQ(rd64(U1, VTD_REG_ECAP) & 0x1b, 0x1b);               // C, QI, IR, EIM
}

static void iotlb_keeps_a_changed_entry_until_invalidated()
{
  fresh();
  tables(XHCI, 1);
  mark(0, 0xaaaa0000); mark(1, 0xbbbb0001);
  translation_on(U1);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  m64(PT, (PAGE + 0x1000) | 3);                                // remapped, no invalidation
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);                // the IOTLB's old page
  // Page-selective invalidation of another page leaves it; of this one drops it.
  wr64(U1, VTD_REG_IVA, IOVA + 0x5000);
  wr64(U1, VTD_REG_IOTLB, BX_CONST64(1) << 63 | BX_CONST64(3) << 60 | BX_CONST64(1) << 32);
  CHECK_EQ(rd64(U1, VTD_REG_IOTLB) >> 63, 0);                  // IVT clear: done
  CHECK_EQ(rd64(U1, VTD_REG_IOTLB) >> 57 & 3, 3);              // IAIG: page-selective
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  wr64(U1, VTD_REG_IVA, IOVA);
  wr64(U1, VTD_REG_IOTLB, BX_CONST64(1) << 63 | BX_CONST64(3) << 60 | BX_CONST64(1) << 32);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xbbbb0001);
  // Another domain's invalidation does not touch domain 1.
  m64(PT, PAGE | 3);
  wr64(U1, VTD_REG_IOTLB, BX_CONST64(1) << 63 | BX_CONST64(2) << 60 | BX_CONST64(7) << 32);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xbbbb0001);
  wr64(U1, VTD_REG_IOTLB, BX_CONST64(1) << 63 | BX_CONST64(2) << 60 | BX_CONST64(1) << 32);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  CHECK_EQ(records(U1), 0);
}

static void not_present_entries_are_not_cached()
{
  fresh();
  tables(XHCI, 1);
  m64(PT + 8 * 2, 0);                                          // IOVA + 2 pages: not present
  mark(2, 0x22222222);
  translation_on(U1);
  CHECK_EQ(dma_read32(XHCI, IOVA + 0x2000), 0);                // blocked: zeros
  CHECK_EQ(records(U1), 1);
  Bit64u hi = rd64(U1, VTD_REG_FRCD + 8), lo = rd64(U1, VTD_REG_FRCD);
  CHECK_EQ(hi >> 32 & 0xff, VTD_FR_READ);
  CHECK_EQ(hi >> 62 & 1, 1);                                    // T: read
  CHECK_EQ(hi & 0xffff, XHCI);
  CHECK_EQ(lo, IOVA + 0x2000);
  m64(PT + 8 * 2, (PAGE + 0x2000) | 3);                         // made present: no invalidation needed
  CHECK_EQ(dma_read32(XHCI, IOVA + 0x2000), 0x22222222);
  // A read-only entry: the write is blocked, memory unchanged.
  m64(PT + 8 * 3, (PAGE + 0x3000) | 1);
  mark(3, 0x33333333);
  dma_write32(XHCI, IOVA + 0x3000, 0xdeadbeef);
  CHECK_EQ(g32(PAGE + 0x3000), 0x33333333);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 16 + 8) >> 32 & 0xff, VTD_FR_WRITE);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 16 + 8) >> 62 & 1, 0);       // T: write
  // A device of unit 0 (no tables there) is untouched by unit 1's state.
  mark(0, 0x44444444);
  CHECK_EQ(dma_read32(IDE, PAGE), 0x44444444);
}

static void context_cache_keeps_a_changed_entry_until_invalidated()
{
  fresh();
  tables(XHCI, 1);
  mark(0, 0xaaaa0000);
  translation_on(U1);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  // The function moved to domain 2 with its own tables (IOVA -> page 5).
  const Bit64u PML4b = 0x106000, PTb = 0x107000, PDb = 0x108000, PDPTb = 0x109000;
  m64(CTX + 16 * XHCI, PML4b | 1);
  m64(CTX + 16 * XHCI + 8, 2 | 2 << 8);
  m64(PML4b, PDPTb | 3); m64(PDPTb + 8, PDb | 3); m64(PDb, PTb | 3); m64(PTb, (PAGE + 0x5000) | 3);
  mark(5, 0x55555555);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);               // still domain 1's (context cache, IOTLB)
  // Device-selective context invalidation of another function: no change.
  wr64(U1, VTD_REG_CCMD, BX_CONST64(1) << 63 | BX_CONST64(3) << 61 | (Bit64u) UHCI << 16 | 1);
  CHECK_EQ(rd64(U1, VTD_REG_CCMD) >> 59 & 3, 3);              // CAIG
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  // Of this one (FM 0): the new context; domain 2's IOTLB is empty.
  wr64(U1, VTD_REG_CCMD, BX_CONST64(1) << 63 | BX_CONST64(3) << 61 | (Bit64u) XHCI << 16 | 1);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0x55555555);
  CHECK_EQ(records(U1), 0);
}

static void faults_recorded_once_each_with_overflow_and_one_event()
{
  fresh();
  tables(XHCI, 1);
  for (unsigned i = 0; i < 8; i++) m64(PT + 8 * i, 0);
  translation_on(U1);
  wr32(U1, VTD_REG_FEDATA, 0x49);
  wr32(U1, VTD_REG_FEADDR, 0xfee01000);
  wr32(U1, VTD_REG_FEUADDR, 0);
  CHECK_EQ(rd32(U1, VTD_REG_FECTL), VTD_CTL_IM);               // masked at reset
  wr32(U1, VTD_REG_FECTL, 0);
  for (unsigned i = 0; i < 10; i++) dma_read32(XHCI, IOVA + 0x1000 * (i % 8));
  CHECK_EQ(records(U1), 8);
  Bit32u fsts = rd32(U1, VTD_REG_FSTS);
  CHECK_EQ(fsts & (VTD_FSTS_PFO | VTD_FSTS_PPF), VTD_FSTS_PFO | VTD_FSTS_PPF);
  CHECK_EQ(fsts >> 8 & 0xff, 0);                               // FRI: the first
  CHECK_EQ(vtd_host_nirqs, 1);                                 // one event for the burst
  CHECK_EQ(vtd_host_irqs[0].vector, 0x49);
  CHECK_EQ(vtd_host_irqs[0].dest, 1);
  CHECK_EQ(units[1].st.fault_overflows, 2);
  // Software clears every record and PFO: the next fault is a new event,
  // recorded in the next register round the ring.
  for (unsigned i = 0; i < VTD_NFR; i++) wr32(U1, VTD_REG_FRCD + 16 * i + 12, 0x80000000);
  CHECK_EQ(rd32(U1, VTD_REG_FSTS) & VTD_FSTS_PPF, 0);
  wr32(U1, VTD_REG_FSTS, VTD_FSTS_PFO);
  CHECK_EQ(rd32(U1, VTD_REG_FSTS) & 0xff, 0);
  wr32(U1, VTD_REG_FECTL, VTD_CTL_IM);                          // masked: held pending
  dma_read32(XHCI, IOVA);
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(rd32(U1, VTD_REG_FECTL), VTD_CTL_IM | VTD_CTL_IP);
  CHECK_EQ(rd32(U1, VTD_REG_FSTS) >> 8 & 0xff, 0);              // FRI: the ring's next register (8 mod 8)
  wr32(U1, VTD_REG_FECTL, 0);                                   // unmasked: sent, IP clear
  CHECK_EQ(vtd_host_nirqs, 2);
  CHECK_EQ(rd32(U1, VTD_REG_FECTL), 0);
}

static void queued_invalidation_waits_and_queue_errors()
{
  const Bit64u Q = 0x300000, STATUS = 0x330000;
  fresh();
  tables(XHCI, 1);
  mark(0, 0xaaaa0000); mark(1, 0xbbbb0001);
  translation_on(U1);
  wr64(U1, VTD_REG_IQA, Q);
  wr64(U1, VTD_REG_IQT, 0);
  gcmd(U1, VTD_GCMD_QIE, true);
  CHECK_EQ(rd32(U1, VTD_REG_GSTS) & VTD_GCMD_QIE, VTD_GCMD_QIE);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xaaaa0000);
  m64(PT, (PAGE + 0x1000) | 3);
  // IOTLB global, then a wait with status write.
  m64(Q + 0x00, 0x12); m64(Q + 0x08, 0);
  m64(Q + 0x10, 0x25 | BX_CONST64(0x1234) << 32); m64(Q + 0x18, STATUS);
  wr64(U1, VTD_REG_IQT, 0x20);
  CHECK_EQ(rd64(U1, VTD_REG_IQH), 0x20);
  CHECK_EQ(g32(STATUS), 0x1234);
  CHECK_EQ(dma_read32(XHCI, IOVA), 0xbbbb0001);
  // Register invalidation while the queue is on: refused (IAIG 00b).
  wr64(U1, VTD_REG_IOTLB, BX_CONST64(1) << 63 | BX_CONST64(1) << 60);
  CHECK_EQ(rd64(U1, VTD_REG_IOTLB) >> 57 & 3, 0);
  // A device-TLB descriptor (no ECAP.DT), then a wait: IQE at the first.
  wr32(U1, VTD_REG_FEDATA, 0x4a); wr32(U1, VTD_REG_FEADDR, 0xfee00000); wr32(U1, VTD_REG_FECTL, 0);
  m64(Q + 0x20, 0x3); m64(Q + 0x28, 0);
  m64(Q + 0x30, 0x25 | BX_CONST64(0x5678) << 32); m64(Q + 0x38, STATUS);
  wr64(U1, VTD_REG_IQT, 0x40);
  CHECK_EQ(rd32(U1, VTD_REG_FSTS) & VTD_FSTS_IQE, VTD_FSTS_IQE);
  CHECK_EQ(rd64(U1, VTD_REG_IQERCD) & 0xf, VTD_IQEI_TYPE);
  CHECK_EQ(rd64(U1, VTD_REG_IQH), 0x20);                       // at the bad descriptor
  CHECK_EQ(g32(STATUS), 0x1234);                                // the wait after it not run
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(vtd_host_irqs[0].vector, 0x4a);
  // Software puts a wait there instead (as Linux does) and clears IQE: resumed.
  m64(Q + 0x20, 0x25 | BX_CONST64(0x9999) << 32); m64(Q + 0x28, STATUS + 4);
  wr32(U1, VTD_REG_FSTS, VTD_FSTS_IQE);
  CHECK_EQ(rd64(U1, VTD_REG_IQH), 0x40);
  CHECK_EQ(g32(STATUS + 4), 0x9999);
  CHECK_EQ(g32(STATUS), 0x5678);
  // A reserved field (context-cache descriptor bit 8): IQEI 4.
  m64(Q + 0x40, 0x111); m64(Q + 0x48, 0);
  wr64(U1, VTD_REG_IQT, 0x50);
  CHECK_EQ(rd64(U1, VTD_REG_IQERCD) & 0xf, VTD_IQEI_RSVD);
  // Queue off resets IQH.
  m64(Q + 0x40, 0x11);
  wr32(U1, VTD_REG_FSTS, VTD_FSTS_IQE);
  CHECK_EQ(rd64(U1, VTD_REG_IQH), 0x50);
  gcmd(U1, VTD_GCMD_QIE, false);
  CHECK_EQ(rd64(U1, VTD_REG_IQH), 0);
}

static void wait_with_interrupt_flag()
{
  const Bit64u Q = 0x300000;
  fresh();
  wr64(U0, VTD_REG_IQA, Q);
  gcmd(U0, VTD_GCMD_QIE, true);
  wr32(U0, VTD_REG_IEDATA, 0x4b); wr32(U0, VTD_REG_IEADDR, 0xfee00000); wr32(U0, VTD_REG_IECTL, 0);
  m64(Q, 0x15);                                                  // wait, IF
  wr64(U0, VTD_REG_IQT, 0x10);
  CHECK_EQ(rd32(U0, VTD_REG_ICS), 1);
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(vtd_host_irqs[0].vector, 0x4b);
  m64(Q + 0x10, 0x15);                                           // IWC still set: no new event
  wr64(U0, VTD_REG_IQT, 0x20);
  CHECK_EQ(vtd_host_nirqs, 1);
  wr32(U0, VTD_REG_ICS, 1);
  CHECK_EQ(rd32(U0, VTD_REG_ICS), 0);
  wr32(U0, VTD_REG_IECTL, VTD_CTL_IM);                           // masked: pending until unmasked
  m64(Q + 0x20, 0x15);
  wr64(U0, VTD_REG_IQT, 0x30);
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(rd32(U0, VTD_REG_IECTL), VTD_CTL_IM | VTD_CTL_IP);
  wr32(U0, VTD_REG_IECTL, 0);
  CHECK_EQ(vtd_host_nirqs, 2);
}

// IR on unit 1 with a table at 0x310000 of 256 entries.
static const Bit64u IRT = 0x310000;
static void irte(unsigned i, Bit64u lo, Bit64u hi) { m64(IRT + 16 * i, lo); m64(IRT + 16 * i + 8, hi); }
static void ir_on(bx_phy_address u, bool eime)
{
  const Bit64u Q = 0x300000;
  wr64(u, VTD_REG_IQA, Q);
  gcmd(u, VTD_GCMD_QIE, true);
  wr64(u, VTD_REG_IRTA, IRT | (eime ? 1 << 11 : 0) | 7);
  gcmd(u, VTD_GCMD_SIRTP, true);
  gcmd(u, VTD_GCMD_IRE, true);
}
static Bit64u msi_addr(unsigned handle) { return 0xfee00000 | (handle & 0x7fff) << 5 | 1 << 4 | (handle >> 15) << 2; }

static void remapping_blocks_compatibility_format_and_keeps_cached_irtes()
{
  fresh();
  // Remapped, fixed, physical, vector 0x41 to APIC ID 1 (x2APIC), SVT 01 SID = the xHCI.
  irte(5, 1 | 0x41 << 16 | BX_CONST64(1) << 32, XHCI | 1 << 18);
  ir_on(U1, true);
  CHECK(bx_vtd_msi(XHCI, msi_addr(5), 0));
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(vtd_host_irqs[0].vector, 0x41);
  CHECK_EQ(vtd_host_irqs[0].dest, 1);
  // Another source with the same handle: source-ID check, 0x26.
  CHECK(bx_vtd_msi(UHCI, msi_addr(5), 0));
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 8) >> 32 & 0xff, VTD_FR_IR_SID);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD) >> 48, 5);                    // FI 63:48: the index
  // Compatibility format: blocked (0x25), also with CFI in x2APIC mode.
  CHECK(bx_vtd_msi(XHCI, 0xfee00000, 0x30));
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 16 + 8) >> 32 & 0xff, VTD_FR_IR_COMPAT);
  gcmd(U1, VTD_GCMD_CFI, true);
  CHECK(bx_vtd_msi(XHCI, 0xfee00000, 0x30));
  CHECK_EQ(vtd_host_nirqs, 1);
  // xAPIC mode (EIME 0) with CFI: passed through (the caller delivers it).
  wr64(U1, VTD_REG_IRTA, IRT | 7);
  gcmd(U1, VTD_GCMD_SIRTP, true);
  CHECK(!bx_vtd_msi(XHCI, 0xfee00000, 0x30));
  // A DMA write to 0xFEE00000 is an interrupt request too: passed through, delivered.
  dma_write32(XHCI, 0xfee00000, 0x31);
  CHECK_EQ(vtd_host_nirqs, 2);
  CHECK_EQ(vtd_host_irqs[1].vector, 0x31);
  gcmd(U1, VTD_GCMD_CFI, false);
  wr64(U1, VTD_REG_IRTA, IRT | 1 << 11 | 7);
  gcmd(U1, VTD_GCMD_SIRTP, true);
  // The IRTE changed without invalidation: the cached one still routes.
  irte(5, 1 | 0x42 << 16 | BX_CONST64(1) << 32, XHCI | 1 << 18);
  bx_vtd_msi(XHCI, msi_addr(5), 0);
  CHECK_EQ(vtd_host_irqs[vtd_host_nirqs - 1].vector, 0x41);
  // Index-selective IEC invalidation of index 4 (IM 0): still cached; of 5: the new vector.
  const Bit64u Q = 0x300000;
  Bit64u h = rd64(U1, VTD_REG_IQH);
  m64(Q + h, 0x14 | BX_CONST64(4) << 32); m64(Q + h + 8, 0);
  wr64(U1, VTD_REG_IQT, h + 16);
  bx_vtd_msi(XHCI, msi_addr(5), 0);
  CHECK_EQ(vtd_host_irqs[vtd_host_nirqs - 1].vector, 0x41);
  m64(Q + h + 16, 0x14 | BX_CONST64(5) << 32); m64(Q + h + 24, 0);
  wr64(U1, VTD_REG_IQT, h + 32);
  bx_vtd_msi(XHCI, msi_addr(5), 0);
  CHECK_EQ(vtd_host_irqs[vtd_host_nirqs - 1].vector, 0x42);
  // Beyond the table (S 7: 256 entries): 0x21; not present: 0x22, and nothing cached.
  unsigned before = vtd_host_nirqs;
  bx_vtd_msi(XHCI, msi_addr(300), 0);
  bx_vtd_msi(XHCI, msi_addr(6), 0);
  CHECK_EQ(vtd_host_nirqs, before);
  irte(6, 1 | 0x46 << 16 | BX_CONST64(1) << 32, 0);
  bx_vtd_msi(XHCI, msi_addr(6), 0);                               // made present: no invalidation needed
  CHECK_EQ(vtd_host_irqs[vtd_host_nirqs - 1].vector, 0x46);
  CHECK_EQ(units[1].st.ir_blocked, 5);
}

static void posting_sets_pir_and_on_and_notifies_once()
{
  const Bit64u PID = 0x320000;
  fresh();
  // Posted: vector 0x61, URG 0, descriptor at PID; NV 0xf2, NDST x2APIC 1.
  irte(9, 1 | 1 << 15 | 0x61 << 16 | (PID >> 6) << 38, XHCI | 1 << 18 | (PID >> 32) << 32);
  m64(PID + 32, 0xf2 << 16 | BX_CONST64(1) << 32);
  ir_on(U1, true);
  CHECK(bx_vtd_msi(XHCI, msi_addr(9), 0));
  CHECK_EQ(g64(PID + 8), BX_CONST64(1) << (0x61 - 64));          // PIR bit 0x61
  CHECK_EQ(g64(PID + 32) & 3, 1);                                 // ON
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(vtd_host_irqs[0].vector, 0xf2);
  CHECK_EQ(vtd_host_irqs[0].dest, 1);
  CHECK(!vtd_host_irqs[0].logical);
  CHECK(bx_vtd_msi(XHCI, msi_addr(9), 0));                        // ON already set: no notification
  CHECK_EQ(vtd_host_nirqs, 1);
  // The CPU took PIR and cleared ON, the VMM set SN: posted, not notified.
  m64(PID + 8, 0); m64(PID + 32, 0xf2 << 16 | BX_CONST64(1) << 32 | 2);
  bx_vtd_msi(XHCI, msi_addr(9), 0);
  CHECK_EQ(g64(PID + 8), BX_CONST64(1) << (0x61 - 64));
  CHECK_EQ(g64(PID + 32) & 3, 2);
  CHECK_EQ(vtd_host_nirqs, 1);
  // URG overrides SN.
  irte(10, 1 | 1 << 14 | 1 << 15 | 0x62 << 16 | (PID >> 6) << 38, XHCI | 1 << 18);
  bx_vtd_msi(XHCI, msi_addr(10), 0);
  CHECK_EQ(g64(PID + 32) & 3, 3);
  CHECK_EQ(vtd_host_nirqs, 2);
  CHECK_EQ(units[1].st.ir_posted, 4);
  CHECK_EQ(units[1].st.ir_notified, 2);
}

// The latency figures: an interrupt stamped when the unit posts or remaps
// it to one physical destination, measured when that CPU takes the vector
// through its IDT; a second message before that keeps the first's time, a
// delivery in VMX root is the hypervisor's and measures nothing, a vector
// never taken measures nothing.
static void latency_from_message_to_handler()
{
  const Bit64u PID = 0x320000;
  fresh();
  stamps.clear(); lat.clear(); bx_vtd_stamps = 0;
  irte(9, 1 | 1 << 15 | 0x61 << 16 | (PID >> 6) << 38, XHCI | 1 << 18 | (PID >> 32) << 32);   // posted to x2APIC 1
  m64(PID + 32, 0xf2 << 16 | BX_CONST64(1) << 32);
  irte(12, 1 | 0x35 << 16 | BX_CONST64(3) << 32, XHCI | 1 << 18);                              // remapped to APIC 3
  ir_on(U1, true);
  vtd_host_clock = 1000;
  CHECK(bx_vtd_msi(XHCI, msi_addr(9), 0));
  vtd_host_clock = 1100;
  CHECK(bx_vtd_msi(XHCI, msi_addr(9), 0));                        // coalesced: the first message's time stays
  CHECK_EQ(bx_vtd_stamps, 1);
  vtd_host_clock = 1500;
  bx_vtd_taken(1, 0x61, 1);                                       // in VMX root: not the guest's handler
  bx_vtd_taken(0, 0x61, 2);                                       // another CPU
  bx_vtd_taken(1, 0x62, 2);                                       // another vector
  CHECK_EQ(bx_vtd_stamps, 1);
  bx_vtd_taken(1, 0x61, 2);
  CHECK_EQ(bx_vtd_stamps, 0);
  bx_vtd_taken(1, 0x61, 2);                                       // nothing stamped now: no sample
  std::vector<Bit64u> &p = lat[(Bit32u) XHCI << 16 | 0x61 << 8 | 0];
  CHECK_EQ(p.size(), 1);
  if (p.size()) CHECK_EQ(p[0], 500);
  vtd_host_clock = 2000;
  CHECK(bx_vtd_msi(XHCI, msi_addr(12), 0));
  vtd_host_clock = 2070;
  bx_vtd_taken(3, 0x35, 0);                                       // outside VMX: a bare kernel's handler
  // x2APIC logical (cluster 1, bit 3): APIC ID 19; two bits: no one CPU, no stamp.
  irte(13, 1 | 1 << 2 | 0x36 << 16 | (BX_CONST64(1) << 16 | 1 << 3) << 32, XHCI | 1 << 18);
  irte(14, 1 | 1 << 2 | 0x37 << 16 | (BX_CONST64(1) << 16 | 3 << 3) << 32, XHCI | 1 << 18);
  CHECK(bx_vtd_msi(XHCI, msi_addr(13), 0));
  CHECK(bx_vtd_msi(XHCI, msi_addr(14), 0));
  CHECK_EQ(bx_vtd_stamps, 1);                                     // index 14's two bits: none
  vtd_host_clock = 2100;
  bx_vtd_taken(19, 0x36, 0);
  CHECK_EQ(bx_vtd_stamps, 0);
  std::vector<Bit64u> &b = lat[(Bit32u) XHCI << 16 | 0x35 << 8 | 2];
  std::vector<Bit64u> &l = lat[(Bit32u) XHCI << 16 | 0x36 << 8 | 2];
  CHECK_EQ(b.size(), 1);
  if (b.size()) CHECK_EQ(b[0], 70);
  CHECK_EQ(l.size(), 1);
  if (l.size()) CHECK_EQ(l[0], 30);
  CHECK_EQ(lat.size(), 3);
}

static void ioapic_remappable_entries()
{
  fresh();
  // Index 11: remapped, level (TM 1), vector 0x24, to APIC ID 0; SVT 01 with the IOAPIC's F0:1F.0.
  irte(11, 1 | 1 << 4 | 0x24 << 16, 0xF0F8 | 1 << 18);
  ir_on(U0, true);
  Bit64u rte = BX_CONST64(1) << 48 | (BX_CONST64(11) << 49) | 1 << 15 | 1 << 13 | 0x24;   // remappable, level, low
  CHECK_EQ(bx_vtd_ioapic(rte), 1);
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(vtd_host_irqs[0].vector, 0x24);
  CHECK(vtd_host_irqs[0].trig);
  // Compatibility format RTE: blocked (0x25); delivery mode bits set in a remappable RTE: 0x20.
  CHECK_EQ(bx_vtd_ioapic(0x30), 1);
  CHECK_EQ(bx_vtd_ioapic(rte | 1 << 8), 1);
  CHECK_EQ(vtd_host_nirqs, 1);
  CHECK_EQ(rd64(U0, VTD_REG_FRCD + 8) >> 32 & 0xff, VTD_FR_IR_COMPAT);
  CHECK_EQ(rd64(U0, VTD_REG_FRCD + 16 + 8) >> 32 & 0xff, VTD_FR_IR_REQ_RSVD);
  CHECK_EQ(rd64(U0, VTD_REG_FRCD + 8) & 0xffff, 0xF0F8);        // the IOAPIC's source ID
  // With remapping off the RTE goes on as before.
  gcmd(U0, VTD_GCMD_IRE, false);
  CHECK_EQ(bx_vtd_ioapic(0x30), -1);
}

static void pmr_blocks_dma_without_translation()
{
  fresh();
  mark(0, 0x12345678);
  wr32(U1, VTD_REG_PLMBASE, 0x00200000);
  wr32(U1, VTD_REG_PLMLIMIT, 0x003fffff);
  CHECK_EQ(rd32(U1, VTD_REG_PLMLIMIT), 0x00200000);             // 2 MiB granules: 20:0 read 0
  wr32(U1, VTD_REG_PMEN, 0x80000000);
  CHECK_EQ(rd32(U1, VTD_REG_PMEN), 0x80000001);                  // PRS follows EPM
  dma_write32(XHCI, PAGE, 0xdeadbeef);
  CHECK_EQ(g32(PAGE), 0x12345678);                               // blocked, memory unchanged
  CHECK_EQ(dma_read32(XHCI, PAGE), 0);
  CHECK_EQ(records(U1), 0);                                      // not a remapping fault
  CHECK_EQ(units[1].st.pmr_blocked, 2);
  dma_write32(XHCI, 0x600000, 0x1);                              // above the region: through
  CHECK_EQ(g32(0x600000), 1);
  CHECK_EQ(dma_read32(IDE, PAGE), 0x12345678);                   // unit 0 has no PMR on
  wr32(U1, VTD_REG_PMEN, 0);
  CHECK_EQ(dma_read32(XHCI, PAGE), 0x12345678);
}

static void preboot_state_blocks_everything()
{
  fresh(true);
  for (unsigned u = 0; u < 2; u++) {
    bx_phy_address b = u ? U1 : U0;
    CHECK_EQ(rd32(b, VTD_REG_GSTS), 0xc7000000);                 // TES RTPS QIES IRES IRTPS
    CHECK_EQ(rd32(b, VTD_REG_PMEN), 0x80000001);
    CHECK_EQ(rd64(b, VTD_REG_RTADDR), b + 0x1000);
  }
  mark(0, 0x77777777);
  CHECK_EQ(dma_read32(XHCI, PAGE), 0);                           // root entry not present: reason 1
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 8) >> 32 & 0xff, VTD_FR_ROOT_NP);
  CHECK(bx_vtd_msi(XHCI, 0xfee00000, 0x30));                     // compatibility: blocked
  CHECK(bx_vtd_msi(XHCI, msi_addr(1), 0));                       // index 1: not present
  CHECK_EQ(vtd_host_nirqs, 0);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 16 + 8) >> 32 & 0xff, VTD_FR_IR_COMPAT);
  CHECK_EQ(rd64(U1, VTD_REG_FRCD + 32 + 8) >> 32 & 0xff, VTD_FR_IR_NP);
  // The firmware's pages are its memory: a write sticks, a reset clears it.
  wr32(U1, 0x1000, 0xffffffff);
  CHECK_EQ(rd32(U1, 0x1000), 0xffffffff);
  fresh(true);
  CHECK_EQ(rd32(U1, 0x1000), 0);
}

#include "vtd_device_strict.inc"

int main()
{
  vtd_host_mem = (Bit8u *) calloc(1, VTD_HOST_MEM);
  static const host_case cases[] = {
    { "root_pointer_latched_by_srtp", root_pointer_latched_by_srtp },
    { "iotlb_keeps_a_changed_entry_until_invalidated", iotlb_keeps_a_changed_entry_until_invalidated },
    { "not_present_entries_are_not_cached", not_present_entries_are_not_cached },
    { "context_cache_keeps_a_changed_entry_until_invalidated", context_cache_keeps_a_changed_entry_until_invalidated },
    { "faults_recorded_once_each_with_overflow_and_one_event", faults_recorded_once_each_with_overflow_and_one_event },
    { "queued_invalidation_waits_and_queue_errors", queued_invalidation_waits_and_queue_errors },
    { "wait_with_interrupt_flag", wait_with_interrupt_flag },
    { "remapping_blocks_compatibility_format_and_keeps_cached_irtes", remapping_blocks_compatibility_format_and_keeps_cached_irtes },
    { "posting_sets_pir_and_on_and_notifies_once", posting_sets_pir_and_on_and_notifies_once },
    { "latency_from_message_to_handler", latency_from_message_to_handler },
    { "ioapic_remappable_entries", ioapic_remappable_entries },
    { "pmr_blocks_dma_without_translation", pmr_blocks_dma_without_translation },
    { "preboot_state_blocks_everything", preboot_state_blocks_everything },
    VTD_STRICT_CASES
  };
  unsigned fail = run_cases("vtd_device", "vtd-device", cases, sizeof cases / sizeof cases[0]);
  free(vtd_host_mem);
  delete theVtd;
  return fail ? 1 : 0;
}
