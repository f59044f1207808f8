/* The trapped MSI and MSI-X (pci/) under any sequence of guest
 * accesses: configuration ports 0xCF8-0xCFF of any width and MSI-X table
 * dwords, against a fake bus of two functions (A: MSI 64-bit with
 * per-vector masking, 8 vectors capable; B: MSI-X, 4 entries in BAR0).
 * Input: 8-byte records (kind: an MSI register of A, B's message control
 * or BAR, any port access, a table dword; selector, size, flags, value32).
 * Invariant after every access: whatever the device would send is a route
 * the router allows (address 0xFEE00000 | a vCPU's host APIC ID << 12,
 * delivery mode fixed, lowest priority or NMI, a vector of 16 or more that
 * is not the hypervisor's); the fake's MSI enable with nothing masked, or
 * an unmasked MSI-X entry in an enabled function, is what is checked. */
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include "../../pci/vmsi.h"

static uint8_t cfg[2][256], wmask[2][256];
static uint32_t table[16];                     /* B's 4 entries */
static uint32_t cf8;

static int fn_of(uint16_t bdf) { return bdf == 0x0008 ? 0 : bdf == 0x0010 ? 1 : -1; }

static uint32_t c_rd(void *ctx, uint16_t bdf, uint16_t off, unsigned size)
{
	(void)ctx;
	int f = fn_of(bdf);
	uint32_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint32_t)(f < 0 ? 0xff : cfg[f][(off + i) & 0xff]) << 8 * i;
	return v;
}
static void c_wr(void *ctx, uint16_t bdf, uint16_t off, unsigned size, uint32_t val)
{
	(void)ctx;
	int f = fn_of(bdf);
	for (unsigned i = 0; f >= 0 && i < size; i++) {
		unsigned o = (off + i) & 0xff;
		cfg[f][o] = (uint8_t)((cfg[f][o] & ~wmask[f][o]) | ((val >> 8 * i) & wmask[f][o]));
	}
}
static uint32_t io_rd(void *ctx, uint16_t port, unsigned size)
{
	if (port >= 0xcfc && (cf8 & 0x80000000u))
		return c_rd(ctx, (uint16_t)(cf8 >> 8), (uint16_t)((cf8 & 0xfc) | (port & 3)), size);
	return port == 0xcf8 && size == 4 ? cf8 : 0xffffffffu;
}
static void io_wr(void *ctx, uint16_t port, unsigned size, uint32_t val)
{
	if (port == 0xcf8 && size == 4)
		cf8 = val;
	else if (port >= 0xcfc && (cf8 & 0x80000000u))
		c_wr(ctx, (uint16_t)(cf8 >> 8), (uint16_t)((cf8 & 0xfc) | (port & 3)), size, val);
}
static uint64_t bar0(void) { return (uint64_t)(cfg[1][0x10] | cfg[1][0x11] << 8 | cfg[1][0x12] << 16 | (uint32_t)cfg[1][0x13] << 24) & ~0xfull; }
static uint32_t m_rd(void *ctx, uint64_t pa)
{
	(void)ctx;
	uint64_t b = bar0();
	return pa >= b && pa < b + sizeof table ? table[(pa - b) / 4] : 0;
}
static void m_wr(void *ctx, uint64_t pa, uint32_t v)
{
	(void)ctx;
	uint64_t b = bar0();
	if (pa >= b && pa < b + sizeof table)
		table[(pa - b) / 4] = v;
}

static const uint32_t gid[3] = { 0, 1, 2 }, hid[3] = { 8, 9, 300 };

static void allowed(uint32_t addr_lo, uint32_t addr_hi, uint32_t data, unsigned nvec)
{
	uint32_t dest = (addr_lo >> 12) & 0xff;
	if (addr_hi || (addr_lo & 0xfff00fffu) != 0xfee00000u || (dest != 8 && dest != 9))
		abort();
	unsigned dlm = (data >> 8) & 7;
	if (dlm != 0 && dlm != 1 && dlm != 4)
		abort();
	for (unsigned i = 0; dlm != 4 && i < nvec; i++) {
		unsigned v = ((data & 0xff) & ~(nvec - 1)) | i;
		if (v < 16 || (v >= 0xf0 && v != 0xff))
			abort();
	}
}

static void check(void)
{
	uint16_t ctl = (uint16_t)(cfg[0][0x42] | cfg[0][0x43] << 8);
	uint32_t mask = cfg[0][0x50];
	unsigned mme = (ctl >> 4) & 7, n = 1u << (mme < 3 ? mme : 3);
	if ((ctl & 1) && (mask & ((1u << n) - 1)) != ((1u << n) - 1))
		allowed(cfg[0][0x44] | cfg[0][0x45] << 8 | cfg[0][0x46] << 16 | (uint32_t)cfg[0][0x47] << 24,
			cfg[0][0x48] | cfg[0][0x49] << 8 | cfg[0][0x4a] << 16 | (uint32_t)cfg[0][0x4b] << 24,
			cfg[0][0x4c] | cfg[0][0x4d] << 8, n);
	uint16_t xc = (uint16_t)(cfg[1][0x42] | cfg[1][0x43] << 8);
	for (unsigned i = 0; (xc & 0x8000) && !(xc & 0x4000) && i < 4; i++)
		if (!(table[4 * i + 3] & 1))
			allowed(table[4 * i], table[4 * i + 1], table[4 * i + 2], 1);
}

static void put(int f, unsigned off, unsigned size, uint32_t v, uint32_t w)
{
	for (unsigned i = 0; i < size; i++) {
		cfg[f][off + i] = (uint8_t)(v >> 8 * i);
		wmask[f][off + i] = (uint8_t)(w >> 8 * i);
	}
}

static struct vmsi s;

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	memset(cfg, 0, sizeof cfg);
	memset(wmask, 0, sizeof wmask);
	for (int f = 0; f < 2; f++) {
		put(f, 0, 4, 0x11118086u, 0);
		put(f, 0x04, 2, 0, 0x0547);
		put(f, 0x06, 2, 0x0010, 0);
		put(f, 0x34, 1, 0x40, 0);
		for (unsigned o = 0x80; o < 0x100; o++)
			put(f, o, 1, 0, 0xff);
	}
	put(0, 0x40, 4, 0x0186u << 16 | 0x05, 0x0071u << 16);   /* 8 capable, 64-bit, PVM */
	put(0, 0x44, 4, 0, 0xfffffffcu);
	put(0, 0x48, 4, 0, 0xffffffffu);
	put(0, 0x4c, 4, 0, 0xffff);
	put(0, 0x50, 4, 0, 0xff);
	put(1, 0x10, 4, 0xfe000000u, 0xfffff000u);           /* BAR0, 4 KiB */
	put(1, 0x40, 4, 0x0003u << 16 | 0x11, 0xc000u << 16);
	put(1, 0x44, 4, 0x00000000u, 0);
	put(1, 0x48, 4, 0x00000800u, 0);
	for (unsigned i = 0; i < 16; i++)
		table[i] = i % 4 == 3 ? 0 : 0xfee00000u;         /* left unmasked by "firmware" */
	cf8 = 0;
	memset(&s, 0, sizeof s);
	/* The arrays the caller gives (no alloc): a few of each kind. */
	static struct vmsi_fn fns[8];
	static struct vmsi_entry pool[64];
	static uint64_t pages[16];
	s.fn = fns, s.fn_room = 8, s.pool = pool, s.pool_room = 64, s.page = pages, s.page_room = 16;
	struct vmsi_hw hw = { c_rd, c_wr, io_rd, io_wr, m_rd, m_wr, NULL, NULL, NULL, NULL, NULL, NULL, false, NULL, NULL };
	struct vioapic_dom dom = { .apic_id = gid, .host_apic_id = hid, .n = 3, .guest_x2apic = true };
	dom.host_vectors[3] = 0x7fffull << 48;
	vmsi_scan(&s, &hw);
	check();
	for (size_t i = 0; i + 8 <= n; i += 8) {
		const uint8_t *r = d + i;
		uint32_t v = (uint32_t)r[4] | (uint32_t)r[5] << 8 | (uint32_t)r[6] << 16 | (uint32_t)r[7] << 24;
		unsigned size = 1u << (r[2] % 3);
		static const uint8_t msi_regs[5] = { 0x42, 0x44, 0x48, 0x4c, 0x50 };
		switch (r[0] % 5) {
		case 0:       /* one of A's MSI registers, as mechanism #1 writes it */
		case 1: {     /* or one of B's: MSI-X message control, BAR0 */
			uint16_t bdf = r[0] % 5 ? 0x0010 : 0x0008;
			unsigned off = r[0] % 5 ? (r[1] & 1 ? 0x42 : 0x10) : msi_regs[r[1] % 5];
			vmsi_port_write(&s, &dom, &hw, 0xcf8, 4, 0x80000000u | (uint32_t)bdf << 8 | (off & 0xfc));
			vmsi_port_write(&s, &dom, &hw, (uint16_t)(0xcfc + (off & 3)), off & 2 ? (size > 2 ? 2 : size) : size, v);
			break;
		}
		case 2:       /* any port access, any width */
			if (r[3] & 1)
				(void)vmsi_port_read(&s, &hw, (uint16_t)(0xcf8 + (r[1] & 7)), size);
			else
				vmsi_port_write(&s, &dom, &hw, (uint16_t)(0xcf8 + (r[1] & 7)), size, v);
			break;
		default: {    /* an MSI-X table dword */
			uint64_t pa = bar0() + (r[1] & 0x3c);
			if (r[3] & 1)
				(void)vmsi_mem_read(&s, &hw, pa);
			else
				vmsi_mem_write(&s, &dom, &hw, pa, v);
		}
		}
		check();
	}
	return 0;
}
