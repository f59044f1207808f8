// hv patch (tools/bochs-patch/vtd_strict.h, included by vtd.cc, issue 44):
// what makes the VT-d unit as unforgiving as hardware without changing what
// it does for a correct driver: the protocol-violation counter and the
// stale-entry audit. Written from the VT-d specification ("Register
// Descriptions", "Caching Translation Information", "Invalidation of
// Translation Caches", "Interrupt Entry Cache"); no code from another
// emulator. docs/bochs.md says which reading each check takes.

// A use of the register protocol the specification asks software not to
// make: counted by name ("bochs-vtd: unit=N violation=NAME count=K"), the
// first five of each in Bochs's log. What the unit then does is unchanged
// (each is described where it is detected).
void vtd_unit::violation(const char *what)
{
  st.violations++;
  Bit64u n = ++violated[what];
  if (n <= 5)
    BX_ERROR(("%s: protocol violation: %s (GSTS 0x%08x, IQH 0x%x, IQT 0x%x)", name(), what, gsts, (unsigned) iqh,
              (unsigned) iqt));
}

// ---- the stale-entry audit ----
//
// A cached entry differs from memory when the table entries it was made
// from are no longer what memory holds: software changed them and has not
// (yet) invalidated. Between the change and the completion of the
// invalidation that covers it the unit may use the old copy (the
// specification lets it); once a wait descriptor (or a register-based
// invalidation) has completed after a hit first saw the difference, a hit
// on that copy is stale: the invalidation was missing or did not cover it.
// Fields the formats leave to software (a context entry's 6:3 of the upper
// half, an IRTE's 11:8) are not compared.

static const Bit64u CTX_HI_AVAILABLE = 0x78;      // context entry 70:67
static const Bit64u IRTE_LO_AVAILABLE = 0xF00;    // IRTE 11:8

// The root and context entries of sid in memory now, against the copy.
bool vtd_unit::ctx_differs(Bit16u sid, const ctx_entry &e)
{
  Bit64u re = (root & ~BX_CONST64(0xFFF)) + 16 * (sid >> 8), lo, hi, ctp = 0;
  if (!rd64_cb(NULL, re, &lo) || !rd64_cb(NULL, re + 8, &hi)) return true;
  if (lo != e.rlo || hi != e.rhi) return true;
  if (vtd_root_entry(lo, hi, VTD_HAW, &ctp)) return true;
  Bit64u ce = ctp + 16 * (sid & 0xFF);
  if (!rd64_cb(NULL, ce, &lo) || !rd64_cb(NULL, ce + 8, &hi)) return true;
  return lo != e.clo || (hi & ~CTX_HI_AVAILABLE) != (e.chi & ~CTX_HI_AVAILABLE);
}

// The walk of addr through the context's tables now, against the IOTLB
// entry: the same page, size and rights, or it differs.
bool vtd_unit::tlb_differs(const tlb_entry &t, const vtd_ctx &c, Bit64u addr)
{
  vtd_xlate x;
  if (vtd_sl_walk(rd64_cb, NULL, &c, cap, VTD_HAW, addr, !t.r, &x)) return true;
  return x.hpa != t.hpa || x.shift != t.shift || x.r != t.r || x.w != t.w;
}

bool vtd_unit::irte_differs(Bit16u index, const irte_entry &e)
{
  Bit64u a = (irt & ~BX_CONST64(0xFFF)) + 16 * (Bit64u) index, lo, hi;
  if (!rd64_cb(NULL, a, &lo) || !rd64_cb(NULL, a + 8, &hi)) return true;
  return (lo & ~IRTE_LO_AVAILABLE) != (e.lo & ~IRTE_LO_AVAILABLE) || hi != e.hi;
}

// One hit on a cached entry: seen is 0 while memory agrees; the first hit
// that finds it different notes the syncs then (1 + syncs); a hit after a
// later sync that still finds it different is stale.
void vtd_unit::stale_hit(Bit64u &seen, bool differs, Bit64u &count, const char *what, Bit64u key)
{
  if (!differs) { seen = 0; return; }
  if (!seen) { seen = syncs + 1; return; }
  if (syncs + 1 <= seen) return;
  count++;
  if (count <= 5)
    BX_ERROR(("%s: stale %s 0x" FMT_ADDRX64 " used: memory changed, and %llu invalidation(s) completed since without dropping it",
              name(), what, key, (unsigned long long) (syncs + 1 - seen)));
}

// The non-leaf entries of c's tables down to addr's page table: its
// address and the rights of the levels above (false: not present, a
// superpage, unreadable on the way: nothing a paging-structure cache keeps).
static bool pde_of(const vtd_ctx &c, Bit64u addr, Bit64u *pt, bool *r, bool *w)
{
  Bit64u table = c.slpt;
  *r = *w = true;
  for (unsigned level = c.levels; level >= 2; level--) {
    Bit64u e;
    if (!rd64_cb(NULL, (table & ~BX_CONST64(0xFFF)) + 8 * ((addr >> (12 + 9 * (level - 1))) & 511), &e)) return false;
    if (!(e & 3) || ((e >> 7) & 1)) return false;
    *r = *r && (e & 1);
    *w = *w && ((e >> 1) & 1);
    table = e & BX_CONST64(0x000ffffffffff000);
  }
  *pt = table;
  return true;
}

static bool pde_differs(const vtd_unit::pde_entry &p, const vtd_ctx &c, Bit64u addr)
{
  Bit64u pt;
  bool r, w;
  return !pde_of(c, addr, &pt, &r, &w) || pt != p.pt || r != p.r || w != p.w;
}

// strict: a translation through a cached paging-structure entry (the
// walk starts at the page table it names, with the rights above it):
// false when none is cached for the domain and region.
bool vtd_unit::pde_walk(const vtd_ctx &c, Bit64u addr, bool write, vtd_xlate *x, int *fr, Bit64u *seen)
{
  if (!cfg.strict) return false;
  Bit64u key = ((Bit64u) c.did << 48) | (addr >> 21);
  std::map<Bit64u, pde_entry>::iterator i = pde.find(key);
  if (i == pde.end()) return false;
  stale_hit(i->second.seen, pde_differs(i->second, c, addr), st.stale_iotlb, "paging-structure entry", key);
  *seen = i->second.seen;
  if (write ? !i->second.w : !i->second.r) { *fr = write ? VTD_FR_WRITE : VTD_FR_READ; return true; }
  vtd_ctx leaf = c;
  leaf.slpt = i->second.pt;
  leaf.levels = 1;
  *fr = vtd_sl_walk(rd64_cb, NULL, &leaf, cap, VTD_HAW, addr, write, x);
  if (!*fr) {
    x->r = x->r && i->second.r;
    x->w = x->w && i->second.w;
  }
  return true;
}

void vtd_unit::pde_fill(const vtd_ctx &c, Bit64u addr)
{
  if (!cfg.strict) return;
  pde_entry p = pde_entry();
  if (!pde_of(c, addr, &p.pt, &p.r, &p.w)) return;
  p.slpt = c.slpt; p.levels = c.levels; p.agaw = c.agaw;
  if (pde.size() >= 1024) pde.clear();
  pde[((Bit64u) c.did << 48) | (addr >> 21)] = p;
}

// The first present context entry under the current root that names
// domain did (0 and *c: none): the tables a request tagged did would walk now.
static bool ctx_of_domain(Bit64u root, Bit64u cap, Bit16u did, vtd_ctx *c)
{
  for (unsigned bus = 0; bus < 256; bus++) {
    Bit64u lo, hi, ctp = 0;
    Bit64u re = (root & ~BX_CONST64(0xFFF)) + 16 * bus;
    if (!rd64_cb(NULL, re, &lo) || !rd64_cb(NULL, re + 8, &hi) || vtd_root_entry(lo, hi, VTD_HAW, &ctp)) continue;
    for (unsigned devfn = 0; devfn < 256; devfn++) {
      vtd_ctx x = vtd_ctx();
      if (rd64_cb(NULL, ctp + 16 * devfn, &lo) && rd64_cb(NULL, ctp + 16 * devfn + 8, &hi) &&
          !vtd_context_entry(lo, hi, cap, VTD_HAW, &x) && x.did == did) {
        *c = x;
        return true;
      }
    }
  }
  return false;
}

// The tables an entry of domain did is judged by at exit: those of the
// domain's first context entry under the root (looked up once per domain,
// in known), else the ones it was walked from.
static vtd_ctx audit_ctx(std::map<Bit16u, std::pair<bool, vtd_ctx> > &known, Bit64u root, Bit64u cap, Bit16u did,
                         Bit64u slpt, unsigned levels, unsigned agaw)
{
  std::map<Bit16u, std::pair<bool, vtd_ctx> >::iterator k = known.find(did);
  if (k == known.end()) {
    vtd_ctx c = vtd_ctx();
    bool found = ctx_of_domain(root, cap, did, &c);
    k = known.insert(std::make_pair(did, std::make_pair(found, c))).first;
  }
  if (k->second.first) return k->second.second;
  vtd_ctx c = vtd_ctx();
  c.slpt = slpt; c.levels = levels; c.agaw = agaw;
  return c;
}

// At exit: every cached entry that differs from memory is stale (software
// changed the table and never invalidated it). An IOTLB entry is judged
// by the tables its domain's context entries name now (a domain ID that
// software took over with new tables and no IOTLB invalidation keeps the
// old translations: the warm firmware state's); with no context entry of
// its domain left, by the tables it was walked from.
void vtd_unit::audit_at_exit()
{
  for (std::map<Bit16u, ctx_entry>::iterator i = ccache.begin(); i != ccache.end(); ++i)
    if (ctx_differs(i->first, i->second)) {
      st.stale_ctx++;
      BX_ERROR(("%s: at exit the cached context entry of %02x:%02x.%u differs from memory", name(), i->first >> 8,
                (i->first >> 3) & 0x1F, i->first & 7));
    }
  std::map<Bit16u, std::pair<bool, vtd_ctx> > known;
  for (std::map<Bit64u, tlb_entry>::iterator i = tlb.begin(); i != tlb.end(); ++i) {
    vtd_ctx c = audit_ctx(known, root, cap, (Bit16u) (i->first >> 48), i->second.slpt, i->second.levels, i->second.agaw);
    unsigned shift = (unsigned) ((i->first >> 40) & 0xFF);
    Bit64u addr = (i->first & ((BX_CONST64(1) << 40) - 1)) << shift;
    if (tlb_differs(i->second, c, addr)) {
      st.stale_iotlb++;
      BX_ERROR(("%s: at exit the IOTLB entry of domain %u for 0x" FMT_ADDRX64 " differs from memory", name(),
                (unsigned) (i->first >> 48), addr));
    }
  }
  for (std::map<Bit64u, pde_entry>::iterator i = pde.begin(); i != pde.end(); ++i) {
    vtd_ctx c = audit_ctx(known, root, cap, (Bit16u) (i->first >> 48), i->second.slpt, i->second.levels, i->second.agaw);
    Bit64u addr = (i->first & ((BX_CONST64(1) << 48) - 1)) << 21;
    if (pde_differs(i->second, c, addr)) {
      st.stale_iotlb++;
      BX_ERROR(("%s: at exit the cached paging-structure entry of domain %u for 0x" FMT_ADDRX64 " differs from memory",
                name(), (unsigned) (i->first >> 48), addr));
    }
  }
  for (std::map<Bit16u, irte_entry>::iterator i = iec.begin(); i != iec.end(); ++i)
    if (irte_differs(i->first, i->second)) {
      st.stale_iec++;
      BX_ERROR(("%s: at exit the cached IRTE %u differs from memory", name(), i->first));
    }
}

static bool audited;
void bx_vtd_exit_audit(void)
{
  if (!vtd_active || audited) return;
  audited = true;
  for (unsigned n = 0; n < cfg.units; n++) units[n].audit_at_exit();
}
