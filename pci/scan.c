/* The scan, sized from what it counts first: every bus, device and
 * function, their MSI, MSI-X, SR-IOV and Resizable BAR capabilities taken;
 * functions found at the guest's first access (hot-added, VFs), let go of
 * when they change (hot-swap, VF Enable). */
#include "scan.h"
#include "alias.h"
#include "bar.h"
#include "bridge.h"
#include "fn.h"
#include "place.h"
#include "route.h"

/* PCI Express Base Specification, "Extended Capabilities" (from 0x100: ID
 * 15:0, version 19:16, next 31:20) and "SR-IOV Extended Capability" (ID
 * 0010h; TotalVFs at +0Eh; the rest in vmsi.h). */
#define CFG_EXT_FIRST 0x100
#define EXT_ID_SRIOV  0x0010
#define EXT_ID_REBAR  0x0015              /* "Resizable BAR Extended Capability" */
#define SRIOV_TOTAL   0x0e

/* What one function has: MSI and MSI-X offsets, MSI-X size and table
 * dword, the VFs its SR-IOV capability can enable. */
struct fn_caps {
	unsigned type;                      /* header type 6:0 */
	uint8_t msi, msix;
	uint16_t nent;
	uint32_t table;
	uint16_t total_vfs;
	uint16_t sriov;                     /* the SR-IOV capability's offset, 0: none */
	uint16_t rebar;                     /* Resizable BAR's offset, 0: none */
};

static void probe_caps(const struct vmsi_hw *hw, uint16_t bdf, struct fn_caps *c)
{
	*c = (struct fn_caps){ .type = hw->cfg_read(hw->ctx, bdf, CFG_HDR_TYPE, 1) & 0x7f };
	if (!(hw->cfg_read(hw->ctx, bdf, CFG_STATUS, 2) & CFG_CAP_LIST) || c->type > 1)
		return;
	uint32_t p = hw->cfg_read(hw->ctx, bdf, CFG_CAP_PTR, 1) & 0xfc;
	for (unsigned n = 0; p >= 0x40 && n < 48; n++) {     /* 48: (256 - 64) / 4, a loop cannot be longer */
		uint32_t h = hw->cfg_read(hw->ctx, bdf, (uint16_t)p, 4);
		if ((h & 0xff) == PCI_CAP_ID_MSI && !c->msi)
			c->msi = (uint8_t)p;
		else if ((h & 0xff) == PCI_CAP_ID_MSIX && !c->msix)
			c->msix = (uint8_t)p;
		p = (h >> 8) & 0xfc;
	}
	if (c->msix) {
		c->nent = (uint16_t)((hw->cfg_read(hw->ctx, bdf, c->msix + 2, 2) & 0x7ff) + 1);
		c->table = hw->cfg_read(hw->ctx, bdf, c->msix + 4, 4);
	}
	/* 960: (4096 - 256) / 4, a loop cannot be longer. */
	for (uint32_t e = CFG_EXT_FIRST, n = 0; hw->ext_cfg && e >= CFG_EXT_FIRST && e < 0x1000 && n < 960; n++) {
		uint32_t h = hw->cfg_read(hw->ctx, bdf, (uint16_t)e, 4);
		if (h == 0 || h == 0xffffffffu)
			break;
		if ((h & 0xffff) == EXT_ID_SRIOV && !c->sriov) {
			c->sriov = (uint16_t)e;
			c->total_vfs = (uint16_t)hw->cfg_read(hw->ctx, bdf, (uint16_t)(e + SRIOV_TOTAL), 2);
		} else if ((h & 0xffff) == EXT_ID_REBAR && !c->rebar) {
			c->rebar = (uint16_t)e;
		}
		e = h >> 20 & 0xffc;
	}
}

/* The pages an MSI-X table of nent entries at offset 'off' in its BAR spans. */
static uint32_t table_pages(uint32_t off, uint16_t nent)
{
	return (uint32_t)(((off & 0xfff) + 16ull * nent + 0xfff) >> 12);
}

/* Every function of the 256 buses in turn (a missing function 0: no
 * device; function 0 without the multi-function bit: the only one). */
static void walk(const struct vmsi_hw *hw, void (*fn)(void *arg, uint16_t bdf), void *arg)
{
	for (uint32_t bus = 0; bus < 256; bus++)
		for (uint32_t dev = 0; dev < 32; dev++)
			for (uint32_t f = 0; f < 8; f++) {
				uint16_t bdf = (uint16_t)(bus << 8 | dev << 3 | f);
				uint32_t id = hw->cfg_read(hw->ctx, bdf, 0, 2) & 0xffff;
				if (id == 0xffff || id == VMSI_VENDOR_CRS) {   /* absent, or not ready: found at first access */
					if (!f)
						break;
					continue;
				}
				fn(arg, bdf);
				if (!f && !(hw->cfg_read(hw->ctx, bdf, CFG_HDR_TYPE, 1) & 0x80))
					break;
			}
}

struct count_arg {
	const struct vmsi_hw *hw;
	struct vmsi_need *n;
};

static void count_fn(void *arg, uint16_t bdf)
{
	struct count_arg *a = arg;
	struct fn_caps c;
	probe_caps(a->hw, bdf, &c);
	if (!c.msi && !c.msix)
		return;
	uint32_t irtes = (c.msi ? VMSI_MSI_IRTES : 0) + (c.msix ? c.nent : 0u);
	uint32_t pages = c.msix ? table_pages(c.table & ~7u, c.nent) : 0;
	struct vmsi_need *n = a->n;
	n->fns++;
	n->entries += c.msix ? c.nent : 0u;
	n->pages += pages;
	n->irtes += irtes;
	/* Each VF counted as its PF (a VF's own capabilities are read only
	 * once VF Enable makes it answer). */
	n->vfs += c.total_vfs;
	n->vf_entries += c.total_vfs * (c.msix ? c.nent : 0u);
	n->vf_irtes += c.total_vfs * irtes;
	n->vf_pages += c.total_vfs * pages;
}

void vmsi_count(const struct vmsi_hw *hw, struct vmsi_need *n)
{
	*n = (struct vmsi_need){ 0 };
	struct count_arg a = { hw, n };
	walk(hw, count_fn, &a);
}

/* At most this many of a kind from the room for VFs: an IRT indexes 2^16
 * entries, and the pool is the hypervisor's memory. */
#define VMSI_VF_CAP 65536u
static uint32_t vf_part(uint32_t x) { return x < VMSI_VF_CAP ? x : VMSI_VF_CAP; }

uint32_t vmsi_irtes_wanted(const struct vmsi_need *n)
{
	return n->irtes + vf_part(n->vf_irtes) + VMSI_ROOM_IRTES;
}

/* The arrays, sized from the count (room included), from hw->alloc. */
static bool size_arrays(struct vmsi *s, const struct vmsi_hw *hw)
{
	const struct vmsi_need *n = &s->need;
	s->fn_room = n->fns + vf_part(n->vfs) + VMSI_ROOM_FNS;
	s->pool_room = n->entries + vf_part(n->vf_entries) + VMSI_ROOM_ENTRIES;
	s->page_room = n->pages + vf_part(n->vf_pages) + VMSI_ROOM_PAGES;
	s->fn = hw->alloc ? hw->alloc(hw->ctx, s->fn_room * sizeof *s->fn) : NULL;
	s->pool = hw->alloc && s->fn ? hw->alloc(hw->ctx, s->pool_room * sizeof *s->pool) : NULL;
	s->page = hw->alloc && s->pool ? hw->alloc(hw->ctx, s->page_room * sizeof *s->page) : NULL;
	s->seen = hw->alloc && s->page ? hw->alloc(hw->ctx, 65536 / 8) : NULL;
	if (s->seen)
		return true;
	s->fn = NULL, s->pool = NULL, s->page = NULL;
	s->fn_room = s->pool_room = s->page_room = 0;
	return false;
}

/* Function bdf taken into the trap (its capabilities c; a VF: its PF's
 * index + 1 and its number): the guest's state from the physical one, its
 * IRTEs, its table placed. A function the trap held before (a VF enabled
 * again) keeps its slot and IRTEs. */
static struct vmsi_fn *take_fn(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf, const struct fn_caps *c, uint16_t pf,
			       uint16_t vf)
{
	uint16_t up = s->bridge_of[bdf >> 8];
	struct vmsi_fn f = { .bdf = bdf, .parent = (bdf >> 8) && up ? (uint16_t)(up - 1) : VMSI_NO_PARENT,
			     .msi = c->msi, .msix = c->msix, .sriov = c->sriov, .pf = pf, .vf = vf,
			     .src = vmsi_alias_of(s, hw, bdf) };
	if (pf)
		f.parent = s->fn[pf - 1].parent;     /* under the PF's bridge, whatever its bus */
	struct vmsi_fn *old = s->fn ? vmsi_find(s, bdf) : NULL;
	for (uint32_t i = 0; !old && s->fn && i < s->nfn; i++)
		if (s->fn[i].retired && s->fn[i].pf == pf && (pf ? s->fn[i].vf == vf : s->fn[i].bdf == bdf))
			old = &s->fn[i];         /* VF n of this PF, or the function at this BDF, held before: its slot */
	f.id = pf ? 0 : hw->cfg_read(hw->ctx, bdf, 0, 4);
	if (!old && (!s->fn || s->nfn >= s->fn_room)) {
		s->untrapped++;                  /* counted: the caller says so */
		return NULL;
	}
	if (f.msi) {
		/* The guest starts from a disabled MSI: the read-only bits as the
		 * device has them, the rest as after reset (0). */
		f.msi_ctl = (uint16_t)(hw->cfg_read(hw->ctx, bdf, f.msi + 2, 2) & ~MSI_CTL_RW);
		hw->cfg_write(hw->ctx, bdf, f.msi + 2, 2, f.msi_ctl);
	}
	if (f.msix) {
		uint16_t ctl = (uint16_t)hw->cfg_read(hw->ctx, bdf, f.msix + 2, 2);
		f.msix_ctl = ctl & ~MSIX_CTL_RW;
		f.nent = c->nent;
		f.msix_table = c->table;
		f.rebar = c->rebar;
		f.bar_size = pf ? s->fn[pf - 1].vf_bar_size[(f.msix_table & 7) % 6] : vmsi_bar_size(hw, bdf, f.msix_table & 7);
		if (old && old->ent && old->nent >= f.nent) {
			f.ent = old->ent;
			for (uint32_t i = 0; i < f.nent; i++)
				f.ent[i] = (struct vmsi_entry){ 0, 0, 0, MSIX_ENT_MASK };
		} else if (s->pool_used + f.nent <= s->pool_room) {
			f.ent = &s->pool[s->pool_used];
			s->pool_used += f.nent;
			for (uint32_t i = 0; i < f.nent; i++)
				f.ent[i] = (struct vmsi_entry){ 0, 0, 0, MSIX_ENT_MASK };   /* reset: masked */
		}
		hw->cfg_write(hw->ctx, bdf, f.msix + 2, 2, f.msix_ctl);
	}
	if (f.sriov)
		vmsi_vf_bars_size(hw, &f);
	uint32_t need = (f.msi ? VMSI_MSI_IRTES : 0) + (f.msix ? f.nent : 0);
	uint32_t had = old && old->irte != VMSI_NO_IRTE ? (old->msi ? VMSI_MSI_IRTES : 0) + (old->msix ? old->nent : 0u) : 0;
	f.irte = VMSI_NO_IRTE;
	if (old && had >= need)
		f.irte = old->irte;
	else if (s->irte_count && s->irte_used + need <= s->irte_count) {
		f.irte = s->irte_base + s->irte_used;
		s->irte_used += need;
	}
	struct vmsi_fn *q = old ? old : &s->fn[s->nfn++];
	*q = f;
	if (q->msix) {
		unsigned r = vmsi_table_place(s, hw, q, vmsi_decoding(s, hw, q));
		if (r != VR_NONE)
			vmsi_count_route(s, q, r, 0, 0, 0, 0);
		for (uint32_t i = 0; i < q->nent && q->table_pa && q->ent; i++)
			hw->mem_write(hw->ctx, q->table_pa + 16ull * i + 12, MSIX_ENT_MASK);
	}
	return q;
}

struct scan_arg {
	struct vmsi *s;
	const struct vmsi_hw *hw;
};

/* A bridge (type 1 header): whose functions sit below it, and its bus
 * numbers followed (vmsi_bridge_add false: past the room, not followed). */
static void bridge_seen(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf)
{
	uint8_t sec = (uint8_t)hw->cfg_read(hw->ctx, bdf, CFG_SEC_BUS, 1);
	if (sec && !s->bridge_of[sec])
		s->bridge_of[sec] = (uint16_t)(bdf + 1);
	vmsi_bridge_add(s, hw, bdf);
}

static void scan_fn(void *arg, uint16_t bdf)
{
	struct scan_arg *a = arg;
	struct vmsi *s = a->s;
	struct fn_caps c;
	probe_caps(a->hw, bdf, &c);
	if (c.type == 1)
		bridge_seen(s, a->hw, bdf);
	vmsi_mark_seen(s, bdf);
	if (c.msi || c.msix)
		take_fn(s, a->hw, bdf, &c, 0, 0);
}

/* Is bdf VF n of a trapped PF whose VFs are enabled? (SR-IOV: VF n's
 * routing ID is the PF's plus First VF Offset plus (n - 1) times VF
 * Stride, n = 1..NumVFs.) Its PF's index + 1, 0: none. */
static uint16_t vf_of(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf, uint16_t *n)
{
	for (uint32_t i = 0; i < s->nfn; i++) {
		const struct vmsi_fn *p = &s->fn[i];
		if (!p->sriov || p->pf)
			continue;
		uint16_t at = p->sriov;
		if (!(hw->cfg_read(hw->ctx, p->bdf, (uint16_t)(at + SRIOV_CTRL), 2) & SRIOV_VFE))
			continue;
		uint32_t num = hw->cfg_read(hw->ctx, p->bdf, (uint16_t)(at + SRIOV_NUM_VFS), 2) & 0xffff;
		uint32_t first = hw->cfg_read(hw->ctx, p->bdf, (uint16_t)(at + SRIOV_OFFSET), 2) & 0xffff;
		uint32_t stride = hw->cfg_read(hw->ctx, p->bdf, (uint16_t)(at + SRIOV_STRIDE), 2) & 0xffff;
		uint32_t d = (uint32_t)bdf - p->bdf;
		if (bdf < p->bdf || d < first || (stride ? (d - first) % stride : d != first))
			continue;
		uint32_t k = stride ? (d - first) / stride + 1 : 1;
		if (k <= num) {
			*n = (uint16_t)k;
			return (uint16_t)(i + 1);
		}
	}
	return 0;
}

struct vmsi_fn *vmsi_seen(struct vmsi *s, const struct vmsi_hw *hw, uint16_t bdf)
{
	struct vmsi_fn *f = vmsi_find(s, bdf);
	if (f || !s->seen || vmsi_was_seen(s, bdf))
		return f;
	/* A VF's Vendor ID reads FFFFh as an absent function's does (SR-IOV:
	 * "Vendor ID ... FFFFh"): an enabled VF is known from its PF alone. */
	uint16_t n = 0, pf = vf_of(s, hw, bdf, &n);
	/* Nothing there (yet): asked again at the next access; so is a
	 * function answering with Configuration Request Retry Status (its
	 * Vendor ID read as 0001h: still initialising, never a device). A VF is there
	 * once it answers: its Status, not all ones (touched within the 100 ms
	 * after VF Enable it reads all ones, and a VF taken then as one without
	 * MSI-X would be the guest's to program). */
	uint32_t id = hw->cfg_read(hw->ctx, bdf, pf ? 0x06 : 0x00, 2) & 0xffff;
	if (id == 0xffff || (!pf && id == VMSI_VENDOR_CRS))
		return NULL;
	vmsi_mark_seen(s, bdf);
	struct fn_caps c;
	probe_caps(hw, bdf, &c);
	if (c.type == 1)
		bridge_seen(s, hw, bdf);         /* a hot-added bridge: followed as the scan's are */
	if (c.msi || c.msix) {
		f = take_fn(s, hw, bdf, &c, pf, n);
		if (f && pf)
			s->vfs_found++;
		else if (f)
			s->hot_added++;
	}
	if (hw->fn_seen)
		hw->fn_seen(hw->ctx, bdf, f);
	return f;
}

bool vmsi_scan(struct vmsi *s, const struct vmsi_hw *hw)
{
	if (!s->need_counted)
		vmsi_count(hw, &s->need);
	bool sized = s->fn || size_arrays(s, hw);
	struct scan_arg a = { s, hw };
	walk(hw, scan_fn, &a);
	return sized;
}

/* A function the trap lets go of: its table's pages back, its guest state
 * as after reset, its BDF asked afresh at the next access. */
void vmsi_forget(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	vmsi_table_place(s, hw, f, false);
	f->msi_ctl &= (uint16_t)~MSI_CTL_RW;
	f->msix_ctl &= (uint16_t)~MSIX_CTL_RW;
	vmsi_unsee(s, f->bdf);
}

/* A function that is not the one taken (another in its slot, or none):
 * let go of, its IRTEs cleared (not present, their cached copies
 * invalidated), its slot and IRTEs left for the next function found at
 * that BDF. */
static void retire(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	vmsi_forget(s, hw, f);
	uint32_t n = (f->msi ? VMSI_MSI_IRTES : 0) + (f->msix ? f->nent : 0u);
	const struct vioapic_irte none = { 0, 0 };
	for (uint32_t i = 0; hw->irte && f->irte != VMSI_NO_IRTE && i < n; i++)
		hw->irte(hw->ctx, f->irte + i, &none);
	f->retired = true;
	s->swapped++;
}

/* Is f still the function taken (its IDs as then; a VF: its PF's, a VF's
 * read FFFFh)? Not (removed, swapped, in Retry Status): let go of, a PF
 * with its VFs, before the hypervisor writes anything for it (a removed
 * device's addresses decode nothing, or another device). One gone (its
 * bus not forwarded) cannot be asked: it still decodes memory. */
bool vmsi_still_taken(struct vmsi *s, const struct vmsi_hw *hw, struct vmsi_fn *f)
{
	struct vmsi_fn *p = f->pf ? &s->fn[f->pf - 1] : f;
	if (!p->retired && (!p->id || p->gone || hw->cfg_read(hw->ctx, p->bdf, 0, 4) == p->id))
		return true;
	uint16_t me = (uint16_t)(p - s->fn + 1);
	for (uint32_t i = 0; i < s->nfn; i++)
		if ((&s->fn[i] == p || s->fn[i].pf == me) && !s->fn[i].retired)
			retire(s, hw, &s->fn[i]);
	return false;
}
