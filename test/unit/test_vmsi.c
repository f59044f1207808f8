/* pci/ against a model of PCI functions written here from the PCI
 * Local Bus Specification 3.0: configuration mechanism #1 ("Configuration
 * Mechanism #1": CONFIG_ADDRESS 0xCF8 taken only as a dword, bit 31
 * enable, 30:24 and 1:0 read 0; a non-existent function reads all ones),
 * each register's writable bits ("MSI Capability Structure": message
 * control bit 0 enable and 6:4 multiple message enable writable, 3:1
 * multiple message capable, 7 64-bit capable, 8 per-vector masking capable
 * read-only; address 1:0 read 0; mask bits only for the vectors capable;
 * "MSI-X Capability and Table Structure": message control 15 enable and
 * 14 function mask writable, 10:0 table size read-only; table offset/BIR,
 * 16-byte entries, vector control bit 0 the mask) and the MSI address and
 * data formats of SDM Vol. 3A, "Message Signalled Interrupts" (0xFEE in
 * 31:20, destination 19:12, DM bit 2; vector 7:0, delivery mode 10:8).
 * No constant comes from the project's headers. */
#include "test.h"
#include "../../pci/vmsi.h"
#include "irte_model.h"

struct mfn {                     /* one function of the model */
	uint16_t bdf;
	uint8_t cfg[256], wmask[256];
};

struct model {
	struct mfn f[4];
	unsigned n;
	uint32_t cf8;                 /* the physical CONFIG_ADDRESS */
	uint8_t cf9;                  /* reset control, a byte port inside 0xCF8's dword */
	uint8_t bar2[0x4000] __attribute__((aligned(16)));         /* function C's BAR2: MSI-X table at 0x2000, PBA at 0x3000 */
	uint64_t bar2_pa;
	uint32_t table_at_calls;
	uint64_t table_at_pa;
	uint32_t gone_calls;
	uint64_t gone_pg;
	uint64_t lo_seen, hi_seen;    /* the lowest and highest address the hypervisor read or wrote (0: none) */
	uint32_t mem_accesses;
	uint32_t table_at_budget;     /* table_at answers "no room" after this many calls (0: never) */
};

static void seen(struct model *m, uint64_t pa)
{
	if (!m->mem_accesses++ || pa < m->lo_seen)
		m->lo_seen = pa;
	if (pa > m->hi_seen)
		m->hi_seen = pa;
}

static struct mfn *mfind(struct model *m, uint16_t bdf)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->f[i].bdf == bdf)
			return &m->f[i];
	return NULL;
}

static uint32_t m_cfg_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	struct mfn *f = mfind(ctx, bdf);
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)(f ? f->cfg[(off + i) & 0xff] : 0xff) << 8 * i;
	return v;
}

static void m_cfg_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	struct mfn *f = mfind(ctx, bdf);
	for (unsigned i = 0; f && i < size; i++) {
		unsigned o = (off + i) & 0xff;
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wmask[o]) | ((val >> 8 * i) & f->wmask[o]));
	}
	struct model *m = ctx;
	if (f && f == &m->f[2] && off <= 0x18 && off + size > 0x18)   /* function C's BAR2 */
		m->bar2_pa = (uint64_t)(f->cfg[0x18] | f->cfg[0x19] << 8 | f->cfg[0x1a] << 16 | (uint32_t)f->cfg[0x1b] << 24) & ~0xfull;
}

/* Mechanism #1 itself, at the ports. */
static uint32_t m_io_read(void *ctx, uint16_t port, unsigned size)
{
	struct model *m = ctx;
	if (port == 0xcf8 && size == 4)
		return m->cf8;
	if (port == 0xcf9 && size == 1)
		return m->cf9;
	if (port >= 0xcfc && (m->cf8 & 0x80000000u))
		return m_cfg_read(m, (uint16_t)(m->cf8 >> 8), (uint16_t)((m->cf8 & 0xfc) | (port & 3)), size);
	return 0xffffffffu >> (32 - 8 * size);
}

static void m_io_write(void *ctx, uint16_t port, unsigned size, uint32_t val)
{
	struct model *m = ctx;
	if (port == 0xcf8 && size == 4)
		m->cf8 = val & 0x80fffffcu;
	else if (port == 0xcf9 && size == 1)
		m->cf9 = (uint8_t)val;
	else if (port >= 0xcfc && (m->cf8 & 0x80000000u))
		m_cfg_write(m, (uint16_t)(m->cf8 >> 8), (uint16_t)((m->cf8 & 0xfc) | (port & 3)), size, val);
}

static uint32_t *bar2_word(struct model *m, uint64_t pa)
{
	if (pa < m->bar2_pa || pa - m->bar2_pa >= sizeof m->bar2)
		return NULL;
	return (uint32_t *)&m->bar2[pa - m->bar2_pa];
}
static uint32_t m_mem_read(void *ctx, uint64_t pa)
{
	seen(ctx, pa);
	uint32_t *w = bar2_word(ctx, pa);
	return w ? *w : 0xffffffffu;
}
static void m_mem_write(void *ctx, uint64_t pa, uint32_t val)
{
	struct model *m = ctx;
	seen(m, pa);
	uint32_t *w = bar2_word(m, pa);
	if (w && pa - m->bar2_pa < 0x3000)        /* the PBA is read-only */
		*w = val;
}
static bool m_table_at(void *ctx, uint64_t pa, uint32_t len)
{
	struct model *m = ctx;
	(void)len;
	if (m->table_at_budget && m->table_at_calls >= m->table_at_budget)
		return false;
	m->table_at_calls++;
	m->table_at_pa = pa;
	return true;
}
static void m_table_gone(void *ctx, uint64_t pg)
{
	struct model *m = ctx;
	m->gone_calls++;
	m->gone_pg = pg;
}

static void put(struct mfn *f, unsigned off, unsigned size, uint32_t v, uint32_t wmask)
{
	for (unsigned i = 0; i < size; i++) {
		f->cfg[off + i] = (uint8_t)(v >> 8 * i);
		f->wmask[off + i] = (uint8_t)(wmask >> 8 * i);
	}
}

/* A: 00:03.0, MSI 64-bit with per-vector masking, 4 vectors capable, then
 * a vendor capability. B: 00:04.0, MSI 32-bit, one vector. C: 01:00.0,
 * MSI-X, 8 entries, table in BAR2 at 0x2000, PBA at 0x3000. D: 00:05.0,
 * no capability list. */
static void model_init(struct model *m)
{
	memset(m, 0, sizeof *m);
	static const uint16_t bdfs[4] = { 0x0018, 0x0020, 0x0100, 0x0028 };
	for (unsigned i = 0; i < 4; i++) {
		struct mfn *f = &m->f[i];
		f->bdf = bdfs[i];
		put(f, 0x00, 4, 0x11118086u + i, 0);
		put(f, 0x04, 2, 0x0000, 0x0547);      /* command: I/O, memory, master, parity, SERR, INTx disable */
		put(f, 0x06, 2, i == 3 ? 0x0000 : 0x0010, 0);   /* status: capability list */
		put(f, 0x3c, 1, 0x0b, 0xff);           /* interrupt line */
		for (unsigned o = 0x80; o < 0x100; o++)  /* device-specific scratch, writable */
			put(f, o, 1, o, 0xff);
	}
	struct mfn *a = &m->f[0], *b = &m->f[1], *c = &m->f[2];
	put(a, 0x34, 1, 0x40, 0);
	put(a, 0x40, 4, 0x0184u << 16 | 0x60 << 8 | 0x05, 0x0071u << 16);
	put(a, 0x44, 4, 0, 0xfffffffcu);
	put(a, 0x48, 4, 0, 0xffffffffu);
	put(a, 0x4c, 4, 0, 0x0000ffffu);
	put(a, 0x50, 4, 0, 0x0000000fu);
	put(a, 0x54, 4, 0x5, 0);                   /* pending bits, read-only */
	put(a, 0x60, 4, 0x00000009u, 0);
	put(b, 0x34, 1, 0x50, 0);
	put(b, 0x50, 4, 0x0000u << 16 | 0x05, 0x0071u << 16);
	put(b, 0x54, 4, 0, 0xfffffffcu);
	put(b, 0x58, 4, 0, 0x0000ffffu);
	put(c, 0x34, 1, 0x70, 0);
	put(c, 0x18, 4, 0xfebf0000u, 0xffffc000u);   /* BAR2, 32-bit memory, 16 KiB */
	put(c, 0x04, 2, 0x0002, 0x0547);              /* memory decoding on, as firmware leaves it */
	put(c, 0x70, 4, 0x0007u << 16 | 0x11, 0xc000u << 16);
	put(c, 0x74, 4, 0x00002002u, 0);
	put(c, 0x78, 4, 0x00003002u, 0);
	m->bar2_pa = 0xfebf0000u;
	m->n = 4;
	for (unsigned i = 0; i < 8; i++)           /* entries as firmware may leave them: unmasked, aimed */
		memcpy(&m->bar2[0x2000 + 16 * i], (uint32_t[4]){ 0xfee00000u, 0, 0x30 + i, 0 }, 16);
	m->bar2[0x3000] = 0xa5;
}

static const uint32_t gids[2] = { 0, 1 }, hids[2] = { 4, 9 };
/* The remapping test: owned remapping with EIM and MSI_EXT_DEST_ID, and
 * vCPU 1 on a CPU with x2APIC ID 300. */
static bool owned;
static const uint32_t hids_far[2] = { 4, 300 };
static struct vioapic_dom dom_of(void)
{
	struct vioapic_dom d = { .apic_id = gids, .host_apic_id = owned ? hids_far : hids, .n = 2, .guest_x2apic = true,
				 .remap = owned, .eim = owned, .ext_dest = owned };
	d.host_vectors[3] = 0xffffull << 48;       /* 0xf0-0xff: not the guest's */
	d.host_vectors[3] &= ~(1ull << 63);        /* 0xff is not the hypervisor's, but in its class (refused) */
	return d;
}

static struct model M;
static struct vmsi S;
/* What the hypervisor reaches: below 4 GiB here (a refusal number of the
 * project's own: the place callback's answers are its interface). */
static unsigned m_place(void *ctx, uint64_t pa, uint64_t len)
{
	(void)ctx;
	return pa + len <= 0x100000000ull ? VR_NONE : VM_TABLE_BEYOND_MAP;
}
static struct vmsi_hw H = { m_cfg_read, m_cfg_write, m_io_read, m_io_write, m_mem_read, m_mem_write, m_table_at, m_place, &M, NULL,
			    m_table_gone, test_alloc, false, NULL, NULL };

static void setup(void)
{
	model_init(&M);
	memset(&S, 0, sizeof S);
	vmsi_scan(&S, &H);
}

/* The guest's mechanism #1 accesses, through the filter. */
static uint32_t g_rd(uint16_t bdf, unsigned off, unsigned size)
{
	struct vioapic_dom d = dom_of();
	vmsi_port_write(&S, &d, &H, 0xcf8, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	return vmsi_port_read(&S, &H, (uint16_t)(0xcfc + (off & 3)), size);
}
static void g_wr(uint16_t bdf, unsigned off, unsigned size, uint32_t v)
{
	struct vioapic_dom d = dom_of();
	vmsi_port_write(&S, &d, &H, 0xcf8, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
	vmsi_port_write(&S, &d, &H, (uint16_t)(0xcfc + (off & 3)), size, v);
}
static uint32_t phys(unsigned fn, unsigned off, unsigned size) { return m_cfg_read(&M, M.f[fn].bdf, (uint16_t)off, size); }

TEST(vmsi_scan_finds_capabilities)
{
	setup();
	CHECK_EQ(S.nfn, 3);
	CHECK_EQ(S.fn[0].bdf, 0x0018);
	CHECK_EQ(S.fn[0].msi, 0x40);
	CHECK_EQ(S.fn[0].msix, 0);
	CHECK_EQ(S.fn[1].msi, 0x50);
	CHECK_EQ(S.fn[2].bdf, 0x0100);
	CHECK_EQ(S.fn[2].msix, 0x70);
	CHECK_EQ(S.fn[2].nent, 8);
	CHECK_EQ(S.fn[2].table_pa, 0xfebf2000u);
	CHECK_EQ(M.table_at_pa, 0xfebf2000u);
	CHECK(vmsi_trapped(&S, 0xfebf2000u));
	CHECK(!vmsi_trapped(&S, 0xfebf3000u));
	for (unsigned i = 0; i < 8; i++)           /* every physical entry masked by the scan */
		CHECK_EQ(m_mem_read(&M, 0xfebf2000u + 16 * i + 12) & 1, 1);
}

/* Every offset and width outside the emulated registers reads as the
 * device has it; a non-existent function reads all ones. */
TEST(vmsi_passthrough_reads_every_width)
{
	setup();
	for (unsigned fn = 0; fn < 4; fn++)
		for (unsigned off = 0; off < 256; off++)
			for (unsigned size = 1; size <= 4; size *= 2) {
				if ((off & 3) + size > 4)
					continue;
				bool emu = (fn == 0 && off + size > 0x42 && off < 0x54) || (fn == 1 && off + size > 0x52 && off < 0x5c) ||
					   (fn == 2 && off + size > 0x72 && off < 0x74);
				if (emu)
					continue;
				uint32_t g = g_rd(M.f[fn].bdf, off, size), p = phys(fn, off, size);
				if (g != p) {
					char msg[128];
					snprintf(msg, sizeof msg, "fn %u off 0x%x size %u: guest 0x%x device 0x%x", fn, off, size, g, p);
					test_fail(__FILE__, __LINE__, msg);
				}
			}
	CHECK_EQ(g_rd(0x0030, 0, 4), 0xffffffffu);
	CHECK_EQ(g_rd(0x0030, 2, 2), 0xffff);
	CHECK_EQ(g_rd(0x0030, 3, 1), 0xff);
}

/* Writes outside the emulated registers reach the device exactly: a twin
 * model written directly must end equal. */
TEST(vmsi_passthrough_writes_every_width)
{
	setup();
	static struct model twin;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	memcpy(&twin, &M, sizeof twin);
	for (unsigned k = 0; k < 3000; k++) {
		unsigned fn = (unsigned)(test_xorshift(&seed) % 4), size = 1u << (test_xorshift(&seed) % 3);
		unsigned off = (unsigned)(test_xorshift(&seed) % 256) & ~(size - 1);
		if ((fn == 0 && off >= 0x40 && off < 0x58) || (fn == 1 && off >= 0x50 && off < 0x5c) || (fn == 2 && off >= 0x70 && off < 0x7c) ||
		    (fn == 2 && off >= 0x18 && off < 0x1c))
			continue;
		uint32_t v = (uint32_t)test_xorshift(&seed);
		g_wr(M.f[fn].bdf, off, size, v);
		m_cfg_write(&twin, twin.f[fn].bdf, (uint16_t)off, size, v);
	}
	for (unsigned fn = 0; fn < 4; fn++)
		CHECK(!memcmp(M.f[fn].cfg, twin.f[fn].cfg, 256));
}

TEST(vmsi_config_address_register)
{
	setup();
	struct vioapic_dom d = dom_of();
	vmsi_port_write(&S, &d, &H, 0xcf8, 4, 0xffffffffu);
	CHECK_EQ(vmsi_port_read(&S, &H, 0xcf8, 4), 0x80fffffcu);   /* 30:24 and 1:0 read 0 */
	vmsi_port_write(&S, &d, &H, 0xcf9, 1, 0x06);                /* a byte at 0xCF9: not CONFIG_ADDRESS */
	CHECK_EQ(M.cf9, 0x06);
	CHECK_EQ(vmsi_port_read(&S, &H, 0xcf8, 4), 0x80fffffcu);
	/* Enable bit clear: the data ports are no configuration access. */
	vmsi_port_write(&S, &d, &H, 0xcf8, 4, 0x00001840u);
	CHECK_EQ(vmsi_port_read(&S, &H, 0xcfc, 4), 0xffffffffu);
	vmsi_port_write(&S, &d, &H, 0xcfc, 4, 0x12345678u);
	CHECK_EQ(phys(0, 0x44, 4), 0);
}

TEST(vmsi_msi_registers_read_only_bits)
{
	setup();
	CHECK_EQ(g_rd(0x0018, 0x40, 4), 0x01846005u);   /* ID 05, next 0x60, 64-bit, PVM, 4 capable, disabled */
	g_wr(0x0018, 0x40, 4, 0xffffffffu);
	CHECK_EQ(g_rd(0x0018, 0x40, 4), 0x01f56005u);   /* only enable and MME took; the ID did not move */
	g_wr(0x0018, 0x42, 2, 0);
	g_wr(0x0018, 0x44, 4, 0xfee01003u);
	CHECK_EQ(g_rd(0x0018, 0x44, 4), 0xfee01000u);
	g_wr(0x0018, 0x4c, 4, 0xffff0041u);
	CHECK_EQ(g_rd(0x0018, 0x4c, 4), 0x0041);          /* data is 16 bits */
	g_wr(0x0018, 0x50, 4, 0xffffffffu);
	CHECK_EQ(g_rd(0x0018, 0x50, 4), 0xf);             /* 4 vectors capable: 4 mask bits */
	CHECK_EQ(g_rd(0x0018, 0x54, 4), 0x5);             /* pending: the device's */
	CHECK_EQ(g_rd(0x0018, 0x51, 1), 0);
	CHECK_EQ(g_rd(0x0018, 0x4d, 1), 0);
	CHECK_EQ(g_rd(0x0020, 0x50, 4), 0x00000005u);   /* B: 32-bit, one vector */
	g_wr(0x0020, 0x52, 2, 0xffff);
	CHECK_EQ(g_rd(0x0020, 0x52, 2), 0x0071);          /* MME writable, as the spec has it */
	CHECK_EQ(phys(1, 0x52, 2) & 1, 0);               /* enabled with no address: refused, left disabled */
}

TEST(vmsi_msi_routed_to_the_vcpus_cpu)
{
	setup();
	g_wr(0x0018, 0x44, 4, 0xfee01000u);                /* APIC ID 1, physical */
	g_wr(0x0018, 0x48, 4, 0);
	g_wr(0x0018, 0x4c, 2, 0x0041);
	CHECK_EQ(phys(0, 0x44, 4), 0);                    /* nothing written while disabled */
	g_wr(0x0018, 0x42, 2, 0x0001);
	CHECK_EQ(phys(0, 0x44, 4), 0xfee09000u);          /* vCPU 1 runs on APIC ID 9 */
	CHECK_EQ(phys(0, 0x4c, 2), 0x0041);
	CHECK_EQ(phys(0, 0x42, 2) & 1, 1);
	CHECK_EQ(g_rd(0x0018, 0x44, 4), 0xfee01000u);     /* the guest sees its own */
	/* Masking is the guest's, per vector. */
	g_wr(0x0018, 0x50, 1, 0x1);
	CHECK_EQ(phys(0, 0x50, 4), 0x1);
	/* SMI: refused; with per-vector masking every vector masked. */
	g_wr(0x0018, 0x4c, 2, 0x0241);
	CHECK_EQ(phys(0, 0x50, 4), 0xf);
	CHECK_EQ(S.refused_by[VR_SMI], 1);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "smi");
	/* Four vectors from 0xfc: 0xfc-0xff, of which 0xfc-0xfe the host's. */
	g_wr(0x0018, 0x4c, 2, 0x00fc);
	g_wr(0x0018, 0x42, 2, 0x0021);
	CHECK_STR(vmsi_refusal_name(S.fn[0].last_refusal), "vector_of_hypervisor");
	g_wr(0x0018, 0x4c, 2, 0x0040);
	CHECK_EQ(S.fn[0].last_refusal, VR_NONE);
	g_wr(0x0018, 0x50, 1, 0x0);
	CHECK_EQ(phys(0, 0x50, 4), 0x0);
	CHECK_EQ(phys(0, 0x42, 2), 0x01a5);               /* MME 2 and enable onto the device */
	/* B, no masking: a refused MSI is left disabled on the device. */
	g_wr(0x0020, 0x54, 4, 0xfeeff000u);                /* broadcast NMI */
	g_wr(0x0020, 0x58, 2, 0x0400);
	g_wr(0x0020, 0x52, 2, 0x0001);
	CHECK_EQ(phys(1, 0x52, 2) & 1, 0);
	CHECK_EQ(g_rd(0x0020, 0x52, 2) & 1, 1);
	CHECK_EQ(S.refused_by[VR_NMI_NOT_ONE], 1);
	g_wr(0x0020, 0x54, 4, 0xfee00000u);                /* NMI to vCPU 0: allowed */
	CHECK_EQ(phys(1, 0x52, 2) & 1, 1);
	CHECK_EQ(phys(1, 0x54, 4), 0xfee04000u);
	CHECK_EQ(phys(1, 0x58, 2), 0x0400);
}

/* Linux's teardown of an MSI vector (seen with xhci-pci at power-off under
 * the patched Bochs): while MSI is still enabled it writes an all-zero
 * message, address low, address high, data, one register at a time, then
 * clears the enable bit. An address of 0 is no message at all: the device
 * must send nothing (its MSI off, or every vector masked), and it is not a
 * route the guest tried (no refusal counted, the function "parked"). Any
 * other address that is not 0xFEExxxxx stays a refusal. */
TEST(vmsi_msi_zero_message_parks_without_refusal)
{
	setup();
	g_wr(0x0020, 0x54, 4, 0xfee01000u);                /* B: 32-bit, no masking; vCPU 1 */
	g_wr(0x0020, 0x58, 2, 0x0023);
	g_wr(0x0020, 0x52, 2, 0x0001);
	CHECK_EQ(phys(1, 0x52, 2) & 1, 1);
	CHECK_EQ(phys(1, 0x54, 4), 0xfee09000u);
	g_wr(0x0020, 0x54, 4, 0);                          /* the zero message, still enabled */
	CHECK_EQ(phys(1, 0x52, 2) & 1, 0);                 /* the device sends nothing */
	g_wr(0x0020, 0x58, 2, 0);
	CHECK_EQ(phys(1, 0x52, 2) & 1, 0);
	CHECK_EQ(S.fn[1].refusals, 0);
	CHECK_EQ(S.refused_by[VM_BAD_ADDR], 0);
	CHECK_STR(vmsi_refusal_name(S.fn[1].last_refusal), "parked");
	g_wr(0x0020, 0x52, 2, 0x0000);
	CHECK_EQ(S.fn[1].refusals, 0);
	/* Enabled again with a real message: routed, as before. */
	g_wr(0x0020, 0x54, 4, 0xfee00000u);
	g_wr(0x0020, 0x58, 2, 0x0024);
	g_wr(0x0020, 0x52, 2, 0x0001);
	CHECK_EQ(phys(1, 0x52, 2) & 1, 1);
	CHECK_EQ(phys(1, 0x54, 4), 0xfee04000u);
	CHECK_EQ(S.fn[1].last_refusal, VR_NONE);
	/* A: 64-bit with per-vector masking: the zero message masks every vector. */
	g_wr(0x0018, 0x44, 4, 0xfee00000u);
	g_wr(0x0018, 0x48, 4, 0);
	g_wr(0x0018, 0x4c, 2, 0x0041);
	g_wr(0x0018, 0x42, 2, 0x0001);
	CHECK_EQ(phys(0, 0x50, 4), 0x0);
	g_wr(0x0018, 0x44, 4, 0);
	CHECK_EQ(phys(0, 0x50, 4), 0xf);
	CHECK_EQ(S.fn[0].refusals, 0);
	/* Not zero and not an MSI address: still a refusal. */
	g_wr(0x0018, 0x44, 4, 0x00001000u);
	CHECK_EQ(S.fn[0].refusals, 1);
	CHECK_EQ(S.refused_by[VM_BAD_ADDR], 1);
	CHECK_EQ(phys(0, 0x50, 4), 0xf);
}

static uint32_t t_rd(uint64_t pa) { return vmsi_mem_read(&S, &H, pa); }
static void t_wr(uint64_t pa, uint32_t v)
{
	struct vioapic_dom d = dom_of();
	vmsi_mem_write(&S, &d, &H, pa, v);
}

TEST(vmsi_msix_table_emulated)
{
	setup();
	uint64_t t = 0xfebf2000u;
	CHECK_EQ(g_rd(0x0100, 0x70, 4), 0x00070011u);   /* disabled, 8 entries */
	CHECK_EQ(t_rd(t + 12), 1);                         /* reset: masked */
	g_wr(0x0100, 0x72, 2, 0xffff);
	CHECK_EQ(g_rd(0x0100, 0x72, 2), 0xc007);
	CHECK_EQ(phys(2, 0x72, 2), 0xc007);               /* enable and function mask onto the device */
	t_wr(t + 0, 0xfee00003u);
	t_wr(t + 4, 0);
	t_wr(t + 8, 0x31);
	CHECK_EQ(t_rd(t + 0), 0xfee00000u);
	CHECK_EQ(m_mem_read(&M, t + 12), 1);               /* still masked: nothing routed */
	t_wr(t + 12, 0xfffffffeu);                         /* unmask; reserved bits read 0 */
	CHECK_EQ(t_rd(t + 12), 0);
	CHECK_EQ(m_mem_read(&M, t + 0), 0xfee04000u);
	CHECK_EQ(m_mem_read(&M, t + 8), 0x31);
	CHECK_EQ(m_mem_read(&M, t + 12), 0);
	/* Entry 1: an NMI to everyone, refused: the device's entry stays masked. */
	t_wr(t + 16, 0xfeeff000u);
	t_wr(t + 24, 0x400);
	t_wr(t + 28, 0);
	CHECK_EQ(m_mem_read(&M, t + 28), 1);
	CHECK_EQ(S.refused_by[VR_NMI_NOT_ONE], 1);
	/* Entry 2: logical, x2APIC cluster 0 member 1 = APIC ID 1, on APIC ID 9. */
	t_wr(t + 32, 0xfee02004u);
	t_wr(t + 40, 0x52);
	t_wr(t + 44, 0);
	CHECK_EQ(m_mem_read(&M, t + 32), 0xfee09000u);
	/* The PBA passes (read-only to the guest as to anyone). */
	CHECK(!vmsi_trapped(&S, 0xfebf3000u) || t_rd(0xfebf3000u) == 0xa5);
	/* The guest moves the BAR while MSI-X is off, then turns it on. */
	g_wr(0x0100, 0x72, 2, 0x0000);
	g_wr(0x0100, 0x18, 4, 0xfeb00000u);
	CHECK_EQ(M.bar2_pa, 0xfeb00000u);
	memset(M.bar2 + 0x2000, 0, 0x100);
	g_wr(0x0100, 0x72, 2, 0x8000);
	CHECK_EQ(S.fn[2].table_pa, 0xfeb02000u);
	CHECK_EQ(M.table_at_pa, 0xfeb02000u);
	CHECK(vmsi_trapped(&S, 0xfeb02000u));
	CHECK(!vmsi_trapped(&S, 0xfebf2000u));             /* the old page given back: no table there now */
	CHECK_EQ(M.gone_pg, 0xfebf2000u);
	CHECK_EQ(m_mem_read(&M, 0xfeb02000u), 0xfee04000u);   /* the entries reprogrammed there */
	CHECK_EQ(m_mem_read(&M, 0xfeb02000u + 12), 0);
	CHECK_EQ(m_mem_read(&M, 0xfeb02000u + 28), 1);
}

/* A table the hypervisor cannot reach (a 64-bit BAR placed above its
 * map): the guest's MSI-X enable stays virtual, the device's off. */
TEST(vmsi_msix_table_out_of_reach)
{
	setup();
	struct mfn *c = &M.f[2];
	put(c, 0x18, 4, 0xfebf0004u, 0xffffc000u);   /* BAR2 64-bit now */
	put(c, 0x1c, 4, 0, 0xffffffffu);
	g_wr(0x0100, 0x72, 2, 0x0000);
	g_wr(0x0100, 0x1c, 4, 0x10);                 /* 0x10_febf0000: above 4 GiB */
	g_wr(0x0100, 0x72, 2, 0x8000);
	CHECK_EQ(S.fn[2].table_pa, 0);
	CHECK_EQ(g_rd(0x0100, 0x72, 2), 0x8007);
	CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[2].last_refusal), "msix_table_beyond_map");
	g_wr(0x0100, 0x1c, 4, 0);                    /* back below: enabled again, entries emulated */
	g_wr(0x0100, 0x72, 2, 0x0000);
	g_wr(0x0100, 0x72, 2, 0x8000);
	CHECK_EQ(S.fn[2].table_pa, 0xfebf2000u);
	CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0x8000);
}

/* Found by the fuzz target vmsi: the guest moves the table's BAR to 0 (no
 * table located), writes the device's table there directly, moves the BAR
 * back and enables MSI-X: what it wrote directly must not reach the
 * device unmasked. */
TEST(vmsi_msix_table_written_while_unlocated)
{
	setup();
	g_wr(0x0100, 0x18, 4, 0);                       /* BAR2 = 0: no table located */
	CHECK_EQ(S.fn[2].table_pa, 0);
	M.bar2_pa = 0;
	t_wr(0x2000 + 16 * 3, 0xfee00000u);             /* passes: nothing trapped at 0 */
	t_wr(0x2000 + 16 * 3 + 8, 0x0200);              /* an SMI */
	t_wr(0x2000 + 16 * 3 + 12, 0);                  /* unmasked on the device */
	g_wr(0x0100, 0x18, 4, 0xfebf0000u);
	M.bar2_pa = 0xfebf0000u;
	g_wr(0x0100, 0x72, 2, 0x8000);
	for (unsigned i = 0; i < 8; i++)
		CHECK_EQ(m_mem_read(&M, 0xfebf2000u + 16 * i + 12) & 1, 1);
}

/* The router for MSI: each delivery mode, the vector's edges, physical and
 * logical destinations, addresses that are not interrupts. */
TEST(vmsi_route_modes_and_vectors)
{
	struct vioapic_dom d = dom_of();
	static const struct { uint64_t addr; uint32_t data; const char *want; uint64_t paddr; } c[] = {
		{ 0xfee00000u, 0x0030, "routed", 0xfee04000u },
		{ 0xfee01000u, 0x0130, "routed", 0xfee09000u },        /* lowest priority, one vCPU */
		{ 0xfee01000u, 0x0230, "smi", 0 },
		{ 0xfee01000u, 0x0330, "reserved_mode", 0 },
		{ 0xfee01000u, 0x0430, "routed", 0xfee09000u },        /* NMI to one vCPU */
		{ 0xfee01000u, 0x0500, "init", 0 },
		{ 0xfee01000u, 0x0630, "reserved_mode", 0 },
		{ 0xfee01000u, 0x0700, "extint", 0 },
		{ 0xfee01000u, 0x00ff, "vector_in_hypervisor_class", 0 },   /* 0xff: the class of 0xf0-0xfe (issue 33, item 6) */
		{ 0xfee01000u, 0x00ef, "routed", 0xfee09000u },
		{ 0xfee01000u, 0x00fe, "vector_of_hypervisor", 0 },
		{ 0xfee01000u, 0x000f, "vector_below_16", 0 },
		{ 0xfee01000u, 0x0010, "routed", 0xfee09000u },
		{ 0xfee02000u, 0x0030, "no_vcpu", 0 },
		{ 0xfeeff000u, 0x0030, "fixed_multicast", 0 },
		{ 0xfeeff000u, 0x0130, "routed", 0xfee04000u },        /* lowest priority among both: 0x30 % 2 = vCPU 0 */
		{ 0xfee01004u, 0x0030, "routed", 0xfee04000u },        /* logical: cluster 0 member 0 = APIC ID 0 */
		{ 0xfee03004u, 0x0030, "fixed_multicast", 0 },
		{ 0xfee01008u, 0x0030, "routed", 0xfee09000u },        /* RH: the destination still physical */
		{ 0xfee01020u, 0x0030, "ext_dest_or_remappable", 0 },  /* KVM extended destination bits 11:5 */
		{ 0xfee01010u, 0x0030, "ext_dest_or_remappable", 0 },  /* remappable format, bit 4 */
		{ 0xfed01000u, 0x0030, "not_an_msi_address", 0 },
		{ 0x1fee01000ull, 0x0030, "not_an_msi_address", 0 },
	};
	for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
		uint64_t pa = 1;
		uint32_t pd = 1;
		unsigned r = vmsi_route(&d, c[k].addr, c[k].data, 1, 0, 0, NULL, &pa, &pd);
		if (strcmp(vmsi_refusal_name(r), c[k].want) || pa != c[k].paddr || (!r && pd != c[k].data)) {
			char m[200];
			snprintf(m, sizeof m, "case %zu (0x%llx, 0x%x): %s paddr 0x%llx data 0x%x, want %s 0x%llx", k,
				 (unsigned long long)c[k].addr, c[k].data, vmsi_refusal_name(r), (unsigned long long)pa, pd,
				 c[k].want, (unsigned long long)c[k].paddr);
			test_fail(__FILE__, __LINE__, m);
		}
	}
	/* xAPIC guest: logical destinations are not translated. */
	d.guest_x2apic = false;
	uint64_t pa;
	uint32_t pd;
	CHECK_STR(vmsi_refusal_name(vmsi_route(&d, 0xfee01004u, 0x30, 1, 0, 0, NULL, &pa, &pd)), "xapic_logical");
}

/* Owned remapping: each function's vectors through IRTEs from the
 * hypervisor's table, the device in remappable format; judged by the
 * remapping-unit model (irte_model.c, from the VT-d specification): what
 * the device's message delivers is what the guest asked, on the CPU that
 * runs the named vCPU (x2APIC ID 300, so only an IRTE can say it). */
static uint64_t irt[2 * 1024];
static void m_irte(void *ctx, uint32_t index, const struct vioapic_irte *e)
{
	(void)ctx;
	irt[2 * index] = e->lo;
	irt[2 * index + 1] = e->hi;
}

static int deliver(unsigned fn, uint64_t addr, uint32_t data, struct irm_out *o)
{
	const struct irm_unit u = { irt, 9, true, false };   /* 2^10 entries, EIME */
	return irm_msi(&u, M.f[fn].bdf, addr, data, o);
}

TEST(vmsi_owned_remapping_through_irtes)
{
	owned = true;
	model_init(&M);
	memset(&S, 0, sizeof S);
	memset(irt, 0, sizeof irt);
	S.irte_base = 100;
	S.irte_count = 900;
	H.irte = m_irte;
	vmsi_scan(&S, &H);
	CHECK_EQ(S.fn[0].irte, 100);                       /* A: MSI, 32 IRTEs */
	CHECK_EQ(S.fn[1].irte, 132);                       /* B: MSI */
	CHECK_EQ(S.fn[2].irte, 164);                       /* C: MSI-X, 8 */
	/* A: four vectors 0x40-0x43 to APIC ID 1 (vCPU 1, on x2APIC ID 300). */
	g_wr(0x0018, 0x44, 4, 0xfee01000u);
	g_wr(0x0018, 0x4c, 2, 0x0040);
	g_wr(0x0018, 0x42, 2, 0x0021);                     /* MME 2: 4 vectors, enable */
	uint64_t pa = phys(0, 0x44, 4);
	uint32_t pd = phys(0, 0x4c, 2);
	CHECK_EQ(pa, 0xfee00000u | 100u << 5 | 1u << 4 | 1u << 3);   /* handle 100, remappable, SHV */
	CHECK_EQ(pd, 0);
	struct irm_out o;
	for (unsigned msg = 0; msg < 4; msg++) {          /* the device's message number in the data */
		CHECK_EQ(deliver(0, pa, pd | msg, &o), 0);
		CHECK_EQ(o.index, 100 + msg);
		CHECK_EQ(o.vector, 0x40 + msg);
		CHECK_EQ(o.dest, 300);
		CHECK(!o.dm);
	}
	/* Another requester with the same message: source-ID check fails. */
	CHECK_EQ(deliver(1, pa, pd, &o), 0x26);
	/* SMI: refused; the IRTEs taken back (not present), the device masked. */
	g_wr(0x0018, 0x4c, 2, 0x0240);
	CHECK_EQ(phys(0, 0x50, 4), 0xf);
	CHECK_EQ(deliver(0, pa, pd, &o), 0x22);
	/* B: KVM's extended destination (address 11:5 = destination 14:8) is
	 * read when offered: APIC ID 0x101 has no vCPU (refused as such, not
	 * as an unknown format); then APIC ID 1. */
	g_wr(0x0020, 0x58, 2, 0x00ff);
	g_wr(0x0020, 0x54, 4, 0xfee01000u | 1u << 5);
	g_wr(0x0020, 0x52, 2, 0x0001);
	CHECK_STR(vmsi_refusal_name(S.fn[1].last_refusal), "no_vcpu");
	g_wr(0x0020, 0x52, 2, 0x0000);
	g_wr(0x0020, 0x54, 4, 0xfee01000u);
	g_wr(0x0020, 0x58, 2, 0x00ef);                     /* vector 0xef: a device's, the highest class below the hypervisor's */
	g_wr(0x0020, 0x52, 2, 0x0001);
	pa = phys(1, 0x54, 4);
	CHECK_EQ(pa, 0xfee00000u | 132u << 5 | 1u << 4);   /* one vector: no SHV */
	CHECK_EQ(deliver(1, pa, phys(1, 0x58, 2), &o), 0);
	CHECK_EQ(o.vector, 0xef);
	CHECK_EQ(o.dest, 300);
	/* C: MSI-X entry 3, vCPU 0 (x2APIC ID 4), vector 0x61, level. */
	uint64_t t = 0xfebf2000u + 16 * 3;
	g_wr(0x0100, 0x72, 2, 0x8000);
	t_wr(t + 0, 0xfee00000u);
	t_wr(t + 4, 0);
	t_wr(t + 8, 0xc061);
	t_wr(t + 12, 0);
	pa = m_mem_read(&M, t);
	CHECK_EQ(pa, 0xfee00000u | 167u << 5 | 1u << 4);   /* 164 + entry 3 */
	CHECK_EQ(deliver(2, pa, m_mem_read(&M, t + 8), &o), 0);
	CHECK_EQ(o.vector, 0x61);
	CHECK_EQ(o.dest, 4);
	CHECK(o.tm);
	/* The guest cannot hand the device a remappable address of its own. */
	t_wr(t + 0, 0xfee00010u | 5u << 5);
	CHECK_EQ(m_mem_read(&M, t + 12), 1);
	CHECK_STR(vmsi_refusal_name(S.fn[2].last_refusal), "ext_dest_or_remappable");
	owned = false;
	H.irte = NULL;
}

TEST(vmsi_owned_remapping_no_irte_left)
{
	owned = true;
	model_init(&M);
	memset(&S, 0, sizeof S);
	S.irte_base = 0;
	S.irte_count = 40;                                 /* A takes 32; B's 32 do not fit */
	H.irte = m_irte;
	vmsi_scan(&S, &H);
	CHECK_EQ(S.fn[0].irte, 0);
	CHECK_EQ(S.fn[1].irte, VMSI_NO_IRTE);
	g_wr(0x0020, 0x54, 4, 0xfee00000u);
	g_wr(0x0020, 0x58, 2, 0x0041);
	g_wr(0x0020, 0x52, 2, 0x0001);
	CHECK_EQ(phys(1, 0x52, 2) & 1, 0);                 /* left disabled */
	CHECK_STR(vmsi_refusal_name(S.fn[1].last_refusal), "no_irte_left");
	owned = false;
	H.irte = NULL;
}

/* Sizes from the scan (issue 35, item 2): a bus of single-function
 * devices, each with one MSI capability at 0x40 (status bit 4, capability
 * pointer at 0x34, ID 05h), N of them over as many buses as needed. 501bce7
 * trapped 64 and left the rest to the guest (blocked with remapping owned);
 * now every one is trapped, each with its 32 IRTEs, and room is left for
 * hot-added functions. Where the caller gives arrays too small, the rest
 * are counted, not silently left. */
static unsigned many_n;
static uint32_t many_read(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	unsigned dev = bdf >> 3;                       /* bus * 32 + device */
	if ((bdf & 7) || dev >= many_n)
		return 0xffffffffu >> (32 - 8 * size);
	uint8_t cfg[256] = { [0] = 0x86, [1] = 0x80, [2] = 0x34, [3] = 0x12, [6] = 0x10, [0x34] = 0x40, [0x40] = 0x05 };
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)cfg[(off + i) & 0xff] << 8 * i;
	return v;
}
static void many_write(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx, (void)bdf, (void)off, (void)size, (void)val;
}

TEST(vmsi_sizes_from_the_scan_trap_every_function)
{
	static struct vmsi s;
	struct vmsi_hw hw = { .cfg_read = many_read, .cfg_write = many_write, .alloc = test_alloc };
	memset(&s, 0, sizeof s);
	many_n = 300;                                  /* past 501bce7's 64, over ten buses */
	s.irte_count = 65536 - 256;                    /* one IOAPIC's 256, the rest the MSIs' */
	CHECK(vmsi_scan(&s, &hw));
	CHECK_EQ(s.need.fns, 300);
	CHECK_EQ(s.need.irtes, 300 * 32);
	CHECK_EQ(s.nfn, 300);
	CHECK_EQ(s.untrapped, 0);
	CHECK(s.fn_room >= 300 + 32);                  /* room for hot-added functions */
	CHECK_EQ(s.fn[299].bdf, 299u << 3);
	CHECK_EQ(s.fn[299].irte, 299 * 32);
	CHECK_EQ(vmsi_irtes_wanted(&s.need), 300 * 32 + 2048 + 32 * 32);
	/* Arrays the caller gives: the rest counted. */
	static struct vmsi_fn few[10];
	memset(&s, 0, sizeof s);
	s.fn = few, s.fn_room = 10;
	vmsi_scan(&s, &hw);
	CHECK_EQ(s.nfn, 10);
	CHECK_EQ(s.untrapped, 290);
	/* No memory: nothing trapped, every function counted. */
	struct vmsi_hw none = { .cfg_read = many_read, .cfg_write = many_write };
	memset(&s, 0, sizeof s);
	CHECK(!vmsi_scan(&s, &none));
	CHECK_EQ(s.nfn, 0);
	CHECK_EQ(s.untrapped, 300);
}

/* The trap's wall (issue 33, item 1): a table BAR the guest moves over
 * RAM, the hypervisor's memory or a range it claims (a VT-d unit's
 * registers) is refused, counted by reason, and the hypervisor reads and
 * writes nothing there; a place inside the device's own range is taken.
 * The memory map and the claimed range are this test's own: RAM below
 * 1 GiB with the hypervisor at 0x3f000000, a reserved page at 0xfeb00000,
 * one VT-d unit's registers at 0xfed90000. */
static struct memmap wall_mem;
static struct vmsi_claims wall;
static unsigned wall_place(void *ctx, uint64_t pa, uint64_t len)
{
	(void)ctx;
	return vmsi_place_judge(&wall, pa, len);
}

static void wall_setup(void)
{
	memset(&wall_mem, 0, sizeof wall_mem);
	wall_mem.count = 3;
	wall_mem.r[0] = (struct mem_range){ 0, 0x3f000000, MEM_USABLE };
	wall_mem.r[1] = (struct mem_range){ 0x3f000000, 0x1000000, MEM_HV };
	wall_mem.r[2] = (struct mem_range){ 0xfeb00000u, 0x1000, MEM_RESERVED };
	memset(&wall, 0, sizeof wall);
	wall.mem = &wall_mem;
	wall.reach_end = 0x100000000ull;
	vmsi_claim(&wall, 0xfed90000u, 0x1000);
	vmsi_claim(&wall, 0xfee00000u, 0x100000);
	H.place = wall_place;
	setup();
	/* MSI-X on, entry 0 routed: the device's real entry programmed. */
	g_wr(0x0100, 0x72, 2, 0x8000);
	t_wr(0xfebf2000u, 0xfee00000u);
	t_wr(0xfebf2008u, 0x31);
	t_wr(0xfebf200cu, 0);
	CHECK_EQ(m_mem_read(&M, 0xfebf2000u), 0xfee04000u);
}

/* The guest writes BAR2 = bar; the hypervisor's accesses from then on. */
static void wall_move(uint32_t bar)
{
	M.mem_accesses = 0;
	M.lo_seen = M.hi_seen = 0;
	g_wr(0x0100, 0x18, 4, bar);
}

TEST(vmsi_wall_table_never_over_memory_or_claimed)
{
	wall_setup();
	static const struct { uint32_t bar; const char *why; } bad[] = {
		{ 0x3f000000u, "msix_table_over_memory" },         /* the hypervisor's heap */
		{ 0x00100000u, "msix_table_over_memory" },         /* guest RAM */
		{ 0xfeb00000u, "msix_table_over_memory" },         /* reserved (no table there at boot) */
		{ 0xfed90000u, "msix_table_over_claimed_range" },  /* a VT-d unit's registers in the BAR */
		{ 0xfee00000u, "msix_table_over_claimed_range" },  /* the interrupt-message range */
	};
	for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		uint32_t n0 = S.fn[2].refusals;
		wall_move(bad[k].bar);
		CHECK_EQ(S.fn[2].table_pa, 0);
		CHECK_STR(vmsi_refusal_name(S.fn[2].last_refusal), bad[k].why);
		CHECK_EQ(S.fn[2].refusals, n0 + 1);
		/* Not one access of the hypervisor's own at the refused place. */
		CHECK(!M.mem_accesses || M.hi_seen < bad[k].bar || M.lo_seen >= bad[k].bar + 0x4000u);
		CHECK(!vmsi_trapped(&S, bad[k].bar + 0x2000u));
		CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0);        /* the device's MSI-X off: it sends nothing */
		/* The guest's own access there is no table access: the trap does
		 * not own the page (the exit handler then applies the EPT's rules). */
		CHECK_EQ(vmsi_mem_read(&S, &H, bad[k].bar + 0x2000u), 0xffffffffu);
		CHECK_EQ(M.mem_accesses, 0);
	}
	CHECK_EQ(S.refused_by[VM_TABLE_OVER_MEMORY], 3);
	/* No memory map to judge by (the trap set up before it was known: the
	 * MSI-X attack run caught that order): nothing is taken. */
	wall.mem = NULL;
	CHECK_EQ(vmsi_place_judge(&wall, 0xe0000000u, 0x1000), VM_TABLE_OVER_MEMORY);
	wall.mem = &wall_mem;
	CHECK_EQ(S.refused_by[VM_TABLE_OVER_CLAIMED], 2);
	/* Back inside the device's own range: placed, the entries rewritten. */
	wall_move(0xfebf0000u);
	CHECK_EQ(S.fn[2].table_pa, 0xfebf2000u);
	CHECK(vmsi_trapped(&S, 0xfebf2000u));
	CHECK_EQ(m_mem_read(&M, 0xfebf2000u), 0xfee04000u);
	CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0x8000);
	H.place = m_place;
}

/* Issue 33, item 2: a table moved to 65 and more distinct places keeps
 * one trapped page (each old one given back), never a page the trap does
 * not own; when the EPT has no room for a new place (table_at's budget),
 * the place is refused, counted, the device's MSI-X off: never a table
 * page out of the EPT without the trap knowing it. */
TEST(vmsi_wall_moves_give_pages_back_and_respect_the_budget)
{
	wall_setup();
	uint32_t gone0 = M.gone_calls;
	for (uint32_t k = 0; k < 70; k++) {
		wall_move(0xe0000000u + k * 0x4000u);
		CHECK_EQ(S.fn[2].table_pa, 0xe0002000u + k * 0x4000u);
		CHECK_EQ(S.npages, 1);
		CHECK(vmsi_trapped(&S, S.fn[2].table_pa));
	}
	CHECK_EQ(M.gone_calls - gone0, 70);
	CHECK_EQ(S.refused_by[VM_TABLE_NO_ROOM], 0);
	M.table_at_budget = M.table_at_calls;              /* the EPT's budget spent */
	wall_move(0xe8000000u);
	CHECK_EQ(S.fn[2].table_pa, 0);
	CHECK_EQ(S.npages, 0);
	CHECK_STR(vmsi_refusal_name(S.fn[2].last_refusal), "msix_table_no_room");
	CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0);
	M.table_at_budget = 0;
	H.place = m_place;
}

/* Memory decoding off (Linux sizes a BAR so): the table is nowhere, no
 * refusal for the sizing value; decoding on again places it, with the
 * device quiet (decoding off) until its page is trapped. */
TEST(vmsi_wall_sizing_with_decoding_off_is_not_a_refusal)
{
	wall_setup();
	uint32_t r0 = S.fn[2].refusals;
	g_wr(0x0100, 0x04, 2, 0x0000);                     /* decoding off */
	CHECK_EQ(S.fn[2].table_pa, 0);
	CHECK(!vmsi_trapped(&S, 0xfebf2000u));
	g_wr(0x0100, 0x18, 4, 0xffffffffu);                /* sizing */
	CHECK_EQ(phys(2, 0x18, 4), 0xffffc000u);
	g_wr(0x0100, 0x18, 4, 0xfebf0000u);
	CHECK_EQ(S.fn[2].refusals, r0);
	g_wr(0x0100, 0x04, 2, 0x0006);                     /* memory and bus master on */
	CHECK_EQ(phys(2, 0x04, 2), 0x0006);
	CHECK_EQ(S.fn[2].table_pa, 0xfebf2000u);
	CHECK(vmsi_trapped(&S, 0xfebf2000u));
	CHECK_EQ(m_mem_read(&M, 0xfebf2000u), 0xfee04000u);   /* entries written again at the place */
	CHECK_EQ(phys(2, 0x72, 2) & 0x8000, 0x8000);
	H.place = m_place;
}

/* The rest of a table's page: passed only inside the function's BAR.
 * Function C's BAR shrunk to 8 KiB with the table at offset 0x1000 and the
 * PBA just past the entries; a 2 KiB BAR leaves the rest of the page to
 * no one: dropped, reads all ones. */
TEST(vmsi_wall_rest_of_page_only_inside_the_bar)
{
	model_init(&M);
	struct mfn *c = &M.f[2];
	put(c, 0x18, 4, 0xfebf0000u, 0xfffff800u);         /* a 2 KiB BAR */
	put(c, 0x74, 4, 0x00000002u, 0);                   /* table at offset 0 */
	put(c, 0x78, 4, 0x00000082u, 0);                   /* PBA at 0x80 */
	memset(&S, 0, sizeof S);
	vmsi_scan(&S, &H);
	CHECK_EQ(S.fn[2].bar_size, 0x800);
	CHECK_EQ(S.fn[2].table_pa, 0xfebf0000u);
	M.mem_accesses = 0;
	(void)t_rd(0xfebf0080u);                           /* the PBA, inside the BAR: passed */
	CHECK_EQ(M.mem_accesses, 1);
	CHECK_EQ(t_rd(0xfebf0900u), 0xffffffffu);          /* past the BAR: nobody's */
	t_wr(0xfebf0900u, 0x12345678u);
	CHECK_EQ(M.mem_accesses, 1);
	CHECK_EQ(S.stray, 2);
}

/* The DMAR's name of a function (VT-d, "Device Scope Structure": a start
 * bus, then the (device, function) of each bridge down to it and its own),
 * from the bridges the scan saw: a root-bus endpoint is one entry, a
 * function two bridges down three; a loop of bridges or a path longer than
 * asked gives 0. Its IRTEs' interrupt entry cache is the unit's that this
 * path names (iommu_irte_owner). */
TEST(vmsi_scope_path_walks_the_bridges_up)
{
	memset(&S, 0, sizeof S);
	S.bridge_of[2] = 0x00e0 + 1;          /* 00:1c.0, a root port: secondary bus 2 */
	S.bridge_of[3] = 0x0200 + 1;          /* 02:00.0, a switch port: secondary bus 3 */
	uint8_t bus = 0xee, p[8][2];
	CHECK_EQ(vmsi_scope_path(&S, 0x0010, &bus, p, 8), 1);   /* 00:02.0 */
	CHECK_EQ(bus, 0);
	CHECK_EQ(p[0][0], 2);
	CHECK_EQ(p[0][1], 0);
	CHECK_EQ(vmsi_scope_path(&S, 0x0301, &bus, p, 8), 3);   /* 03:00.1 */
	CHECK_EQ(bus, 0);
	CHECK_EQ(p[0][0], 0x1c);
	CHECK_EQ(p[0][1], 0);
	CHECK_EQ(p[1][0], 0);
	CHECK_EQ(p[1][1], 0);
	CHECK_EQ(p[2][0], 0);
	CHECK_EQ(p[2][1], 1);
	CHECK_EQ(vmsi_scope_path(&S, 0x0301, &bus, p, 2), 0);   /* longer than asked */
	/* A bus the scan saw no bridge for (another root bus, e.g. a stack's
	 * 0x80): the hierarchy starts there. */
	CHECK_EQ(vmsi_scope_path(&S, 0x8008, &bus, p, 8), 1);
	CHECK_EQ(bus, 0x80);
	CHECK_EQ(p[0][0], 1);
	/* A bridge whose secondary bus is its own: never ends, refused. */
	S.bridge_of[5] = 0x0500 + 1;
	CHECK_EQ(vmsi_scope_path(&S, 0x0510, &bus, p, 8), 0);
}

/* Issue 43, item 5: a VF's remapping unit is its PF's (Linux: pci_physfn
 * before dmar_find_matched_drhd_unit). A VF whose routing ID lands on a
 * bus past its PF's (First VF Offset + (n - 1) * VF Stride past 255 of
 * the PF's devfn) has no bridge the scan saw above that bus: by its own
 * BDF it would be named as a root-bus device and matched to the
 * catch-all unit; by its PF it is named below the PF's root port. */
TEST(vmsi_vf_scope_path_is_its_pfs)
{
	memset(&S, 0, sizeof S);
	static struct vmsi_fn fns[2];
	memset(fns, 0, sizeof fns);
	S.fn = fns;
	S.nfn = 2;
	S.fn_room = 2;
	S.bridge_of[3] = 0x0018 + 1;          /* 00:03.0, a root port: secondary bus 3 */
	fns[0].bdf = 0x0300;                  /* the PF, 03:00.0 */
	fns[1].bdf = 0x0400;                  /* VF 1 at 04:00.0 (First VF Offset 0x100) */
	fns[1].pf = 1;
	fns[1].vf = 1;
	uint8_t bus = 0xee, p[8][2];
	CHECK_EQ(vmsi_fn_scope_path(&S, &fns[1], &bus, p, 8), 2);
	CHECK_EQ(bus, 0);
	CHECK_EQ(p[0][0], 3);
	CHECK_EQ(p[0][1], 0);
	CHECK_EQ(p[1][0], 0);
	CHECK_EQ(p[1][1], 0);
	/* A function that is no VF: its own path. */
	CHECK_EQ(vmsi_fn_scope_path(&S, &fns[0], &bus, p, 8), 2);
}
