/* See pci_fn_model.h. */
#include "test.h"
#include "pci_fn_model.h"

static void put(struct pfm_fn *f, unsigned off, unsigned size, uint32_t v, uint32_t wmask)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wmask[off + i] = (uint8_t)(wmask >> 8 * i);
	}
}

uint32_t pfm_cfg(const struct pfm_fn *f, unsigned off, unsigned size)
{
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)f->cfg[(off + i) & 0xfff] << 8 * i;
	return v;
}

uint64_t pfm_bar_base(const struct pfm_fn *f)
{
	unsigned o = 0x10 + 4 * f->bar;
	uint32_t lo = pfm_cfg(f, o, 4);
	uint64_t b = lo & ~0xfull;
	if ((lo & 6) == 4)
		b |= (uint64_t)pfm_cfg(f, o + 4, 4) << 32;
	return b;
}

int pfm_bdf_now(const struct pfm *m, const struct pfm_fn *f)
{
	if (!f->up)
		return f->bdf;
	const struct pfm_fn *br = &m->f[f->up - 1];
	int at = pfm_bdf_now(m, br);
	unsigned bus = br->cfg[0x19];
	if (at < 0 || !bus || bus <= (unsigned)at >> 8)
		return -1;
	for (const struct pfm_fn *a = br; a; a = a->up ? &m->f[a->up - 1] : NULL)
		if (bus < a->cfg[0x19] || bus > a->cfg[0x1a])
			return -1;               /* not forwarded on the way down */
	return (int)(bus << 8 | (f->bdf & 0xff));
}

static struct pfm_fn *by_bdf(struct pfm *m, uint16_t bdf)
{
	for (unsigned i = 0; i < m->n; i++)
		if (pfm_bdf_now(m, &m->f[i]) == bdf)
			return &m->f[i];
	return NULL;
}

/* Does every bridge above f forward a memory request for pa down to it?
 * PCI-to-PCI Bridge Architecture: only with Memory Space Enable (command
 * bit 1) set, and only an address inside its memory window (0x20: base
 * 31:20 in 15:4, limit 31:20 in 31:20, the limit's 19:0 all ones) or its
 * prefetchable one (0x24 alike, 64-bit with 0x28/0x2C where its low nibble
 * is 1). */
static bool forwarded(const struct pfm *m, const struct pfm_fn *f, uint64_t pa)
{
	for (unsigned n = 0; f->up && n < PFM_FNS; n++) {
		const struct pfm_fn *b = &m->f[f->up - 1];
		uint32_t w = pfm_cfg(b, 0x20, 4), p = pfm_cfg(b, 0x24, 4);
		uint64_t lo = (uint64_t)(w & 0xfff0) << 16, hi = (uint64_t)(w & 0xfff00000u) | 0xfffff;
		uint64_t plo = (uint64_t)(p & 0xfff0) << 16, phi = (uint64_t)(p & 0xfff00000u) | 0xfffff;
		if ((p & 0xf) == 1) {
			plo |= (uint64_t)pfm_cfg(b, 0x28, 4) << 32;
			phi |= (uint64_t)pfm_cfg(b, 0x2c, 4) << 32;
		}
		if (!(pfm_cfg(b, 0x04, 2) & 2) || !((pa >= lo && pa <= hi) || (pa >= plo && pa <= phi)))
			return false;
		f = b;
	}
	return true;
}

/* The function whose BAR decodes pa, and the offset there. */
static struct pfm_fn *by_pa(const struct pfm *m, uint64_t pa, uint32_t *off)
{
	for (unsigned i = 0; i < m->n; i++) {
		uint64_t b = pfm_bar_base(&m->f[i]);
		if (b && m->f[i].cfg[0x0e] == 0 && pa >= b && pa - b < m->f[i].bar_size && forwarded(m, &m->f[i], pa)) {
			*off = (uint32_t)((pa - b) % PFM_MEM);
			return (struct pfm_fn *)&m->f[i];
		}
	}
	return NULL;
}

/* The BAR's writable bits from the size up; the address bits below read 0. */
static void set_bar_size(struct pfm_fn *f, uint64_t size)
{
	unsigned o = 0x10 + 4 * f->bar;
	uint32_t lo = pfm_cfg(f, o, 4), keep = size >= (1ull << 32) ? 0xf : (uint32_t)~(size - 1) | 0xf;
	f->bar_size = size;
	put(f, o, 4, lo & keep, size >= (1ull << 32) ? 0 : (uint32_t)~(size - 1) & ~0xfu);
}

static uint32_t h_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	struct pfm_fn *f = by_bdf(ctx, bdf);
	return f ? pfm_cfg(f, off, size) : 0xffffffffu >> (32 - 8 * size);
}

static void h_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	struct pfm *m = ctx;
	struct pfm_fn *f = by_bdf(m, bdf);
	m->n_cfg_w++;
	for (unsigned i = 0; f && i < size; i++) {
		unsigned o = (off + i) & 0xfff;
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wmask[o]) | ((val >> 8 * i) & f->wmask[o]));
	}
	if (f && f->rebar && off < f->rebar + 12u && off + size > f->rebar + 8u)
		set_bar_size(f, 1ull << (((pfm_cfg(f, f->rebar + 8u, 4) >> 8) & 0x3f) + 20));
}

static uint32_t h_io_read(void *ctx, uint16_t port, unsigned size)
{
	(void)ctx, (void)port;
	return 0xffffffffu >> (32 - 8 * size);
}

static void h_io_write(void *ctx, uint16_t port, unsigned size, uint32_t val)
{
	(void)ctx, (void)port, (void)size, (void)val;
}

uint32_t pfm_mem(const struct pfm *m, uint64_t pa)
{
	uint32_t off, v;
	const struct pfm_fn *f = by_pa(m, pa, &off);
	if (!f || off > PFM_MEM - 4)
		return 0xffffffffu;              /* nothing decodes it: the master aborts, all ones */
	memcpy(&v, f->mem + off, 4);
	return v;
}

static uint32_t h_mem_read(void *ctx, uint64_t pa)
{
	struct pfm *m = ctx;
	m->n_mem_r++;
	return pfm_mem(m, pa);
}

static void h_mem_write(void *ctx, uint64_t pa, uint32_t val)
{
	struct pfm *m = ctx;
	uint32_t off;
	if (m->n_mem_w < PFM_LOG)
		m->mem_w[m->n_mem_w] = (struct pfm_write){ pa, val };
	m->n_mem_w++;
	struct pfm_fn *f = by_pa(m, pa, &off);
	m->n_mem_lost += !f;                     /* nothing decodes it: the write goes nowhere */
	if (!f || off > PFM_MEM - 4 || (off >= f->mem_ro_from && off < f->mem_ro_to))
		return;
	if (f->msix_nent && off >= f->msix_table_off && off < f->msix_table_off + 16 * f->msix_nent &&
	    (off - f->msix_table_off) % 16 == 12)
		val &= 1;                        /* vector control: 31:1 reserved */
	memcpy(f->mem + off, &val, 4);
}

static bool h_table_at(void *ctx, uint64_t pa, uint32_t len)
{
	struct pfm *m = ctx;
	m->n_table_at++;
	m->table_at_pa = pa;
	m->table_at_len = len;
	return true;
}

static unsigned h_place(void *ctx, uint64_t pa, uint64_t len)
{
	struct pfm *m = ctx;
	return pa + len <= m->reach ? VR_NONE : VM_TABLE_BEYOND_MAP;
}

static void h_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	struct pfm *m = ctx;
	if (index < 1024) {
		m->irt[2 * index] = e->lo;
		m->irt[2 * index + 1] = e->hi;
	}
	if (!m->n_irte++)
		m->irte_first = index;
	m->irte_last = index;
}

static void h_fn_moved(void *ctx, uint16_t from, uint16_t to)
{
	struct pfm *m = ctx;
	m->n_moved++;
	m->moved_from = from;
	m->moved_to = to;
}

void pfm_init(struct pfm *m, struct vmsi_hw *hw)
{
	memset(m, 0, sizeof *m);
	m->reach = 1ull << 46;
	*hw = (struct vmsi_hw){ h_cfg_read, h_cfg_write, h_io_read, h_io_write, h_mem_read, h_mem_write, h_table_at,
				h_place, m, h_irte, NULL, test_alloc, false, NULL, h_fn_moved };
}

struct pfm_fn *pfm_add(struct pfm *m, uint16_t bdf, unsigned bar, uint64_t base, bool bar64)
{
	struct pfm_fn *f = &m->f[m->n++];
	f->bdf = bdf;
	f->bar = bar;
	f->bar_size = PFM_MEM;
	put(f, 0x00, 4, 0x7e57u << 16 | 0x8086u, 0);   /* vendor, device */
	put(f, 0x04, 2, 0x0002, 0x0547);               /* command: memory decoding on, as firmware leaves it; I/O, master, parity, SERR, INTx disable writable */
	put(f, 0x0e, 1, 0x00, 0);                      /* header type 0, single function */
	unsigned o = 0x10 + 4 * bar;
	put(f, o, 4, (uint32_t)base | (bar64 ? 4u : 0u), ~(uint32_t)(PFM_MEM - 1));
	if (bar64)
		put(f, o + 4, 4, (uint32_t)(base >> 32), 0xffffffffu);
	return f;
}

/* Links the capability with this ID at off after the last one. */
static void link(struct pfm_fn *f, uint8_t off, uint8_t id)
{
	put(f, off, 2, id, 0);
	if (!(f->cfg[0x06] & 0x10)) {
		put(f, 0x06, 2, 0x0010, 0);              /* status: capabilities list */
		put(f, 0x34, 1, off, 0);
		return;
	}
	uint8_t p = f->cfg[0x34];
	while (f->cfg[p + 1])
		p = f->cfg[p + 1];
	f->cfg[p + 1] = off;
}

void pfm_msi(struct pfm_fn *f, uint8_t off, unsigned mmc, bool addr64, bool pvm)
{
	link(f, off, 0x05);
	put(f, off + 2, 2, mmc << 1 | (addr64 ? 1u << 7 : 0) | (pvm ? 1u << 8 : 0), 0x0071);
	put(f, off + 4, 4, 0, 0xfffffffcu);
	unsigned d = off + 8;
	if (addr64) {
		put(f, off + 8, 4, 0, 0xffffffffu);
		d = off + 12;
	}
	put(f, d, 2, 0, 0xffff);
	if (pvm) {
		unsigned n = 1u << mmc;
		put(f, d + 4, 4, 0, n >= 32 ? 0xffffffffu : (1u << n) - 1);
		put(f, d + 8, 4, 0, 0);                  /* pending: read-only */
	}
}

struct pfm_fn *pfm_bridge_fixed(struct pfm *m, uint16_t bdf, uint8_t sec, uint8_t sub)
{
	struct pfm_fn *f = pfm_add(m, bdf, 0, 0, false);
	put(f, 0x10, 4, 0, 0);                         /* no BAR */
	put(f, 0x0e, 1, 0x01, 0);                      /* header type 1 */
	put(f, 0x18, 1, bdf >> 8, 0xff);
	put(f, 0x19, 1, sec, 0xff);
	put(f, 0x1a, 1, sub, 0xff);
	return f;
}

void pfm_pcie(struct pfm_fn *f, uint8_t off, unsigned type)
{
	link(f, off, 0x10);
	put(f, off + 2, 2, (type & 0xf) << 4 | 2, 0);  /* capability version 2 in 3:0 */
}

void pfm_msix(struct pfm_fn *f, uint8_t off, unsigned nent, uint32_t table_off, uint32_t pba_off)
{
	link(f, off, 0x11);
	put(f, off + 2, 2, nent - 1, 0xc000);
	put(f, off + 4, 4, table_off | f->bar, 0);
	put(f, off + 8, 4, pba_off | f->bar, 0);
	f->msix_nent = nent;
	table_off %= PFM_MEM;                            /* a larger BAR: its memory repeated */
	pba_off %= PFM_MEM;
	f->msix_table_off = table_off;
	for (unsigned i = 0; i < nent; i++)
		memcpy(&f->mem[table_off + 16 * i], (uint32_t[4]){ 0xfee00000u, 0, 0x30 + i, 0 }, 16);
	f->mem[pba_off] = 0xa5;
	f->mem_ro_from = pba_off;
	f->mem_ro_to = pba_off + 8;
}

struct pfm_fn *pfm_bridge(struct pfm *m, uint16_t bdf, struct pfm_fn *up, uint8_t sec, uint8_t sub, uint32_t lo, uint32_t hi)
{
	struct pfm_fn *f = &m->f[m->n++];
	f->bdf = bdf;
	put(f, 0x00, 4, 0xb1d6u << 16 | 0x8086u, 0);
	put(f, 0x04, 2, 0x0006, 0x0547);
	put(f, 0x0e, 1, 0x01, 0);                      /* header type 1, single function */
	put(f, 0x18, 3, (uint32_t)sub << 16 | (uint32_t)sec << 8, 0xffffff);
	put(f, 0x20, 4, (hi & 0xfff00000u) | (lo >> 16 & 0xfff0), 0xfff0fff0u);
	put(f, 0x24, 4, 0x0000fff0u, 0);               /* no prefetchable window (base above limit) */
	if (up)
		pfm_below(m, f, up);
	return f;
}

void pfm_below(struct pfm *m, struct pfm_fn *f, struct pfm_fn *br)
{
	f->up = (unsigned)(br - m->f) + 1;
	f->cfg[0x18] = f->cfg[0x0e] == 1 ? (uint8_t)br->cfg[0x19] : f->cfg[0x18];   /* a bridge's primary: the bus it is on */
}

void pfm_rebar(struct pfm_fn *f, uint16_t off, uint32_t sizes, unsigned n)
{
	put(f, off, 4, 1u << 16 | 0x0015, 0);          /* ID 0015h, version 1, no next */
	put(f, off + 4, 4, sizes, 0);
	put(f, off + 8, 4, n << 8 | 1u << 5 | f->bar, 0x3f00);
	f->rebar = off;
	set_bar_size(f, 1ull << (n + 20));
}

void pfm_clear_log(struct pfm *m)
{
	m->n_mem_w = m->n_mem_lost = m->n_mem_r = m->n_cfg_w = m->n_table_at = m->n_irte = 0;
	m->irte_first = m->irte_last = 0;
}

unsigned pfm_writes_in(const struct pfm *m, uint64_t pa, uint64_t len)
{
	unsigned n = 0;
	for (unsigned i = 0; i < m->n_mem_w && i < PFM_LOG; i++)
		n += m->mem_w[i].pa >= pa && m->mem_w[i].pa - pa < len;
	return n;
}
