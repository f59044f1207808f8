/* The Multiboot2 information parser (boot/mb2_info.c) against structures
 * built here from the Multiboot2 specification ("Boot information format":
 * u32 total_size, u32 reserved, then tags of u32 type, u32 size, each padded
 * to 8 bytes; type 0 ends, 1 command line, 3 module {mod_start, mod_end,
 * string}, 6 memory map {entry_size, entry_version, entries of u64 base, u64
 * length, u32 type, u32 reserved}, 14/15 ACPI old/new RSDP copy). */
#include "test.h"
#include "../../boot/mb2_info.h"

static uint8_t buf[65536] __attribute__((aligned(8)));
static uint32_t at;

static void begin(void) { memset(buf, 0, sizeof buf); at = 8; }
static void *tag(uint32_t type, uint32_t size)
{
	uint32_t *t = (uint32_t *)(buf + at);
	t[0] = type;
	t[1] = size;
	void *payload = t + 2;
	at += (size + 7) & ~7u;
	return payload;
}
static void end(void) { tag(0, 8); *(uint32_t *)buf = at; }

static struct boot_info bi;
static uint8_t rsdp[64];
static bool have;
static int parse(void)
{
	memset(&bi, 0, sizeof bi);
	return mb2_parse(buf, &bi, rsdp, sizeof rsdp, &have);
}

static void good_prefix(void)
{
	begin();
	strcpy(tag(1, 8 + 12), "exit=bochs ");
	uint32_t *m = tag(3, 16 + 20);
	m[0] = 0x400000; m[1] = 0x480000;
	strcpy((char *)(m + 2), "/vmlinuz quiet");
	m = tag(3, 16 + 8);
	m[0] = 0x500000; m[1] = 0x510000;
	uint32_t *mm = tag(6, 16 + 2 * 24);
	mm[0] = 24; mm[1] = 0;
	uint64_t *e = (uint64_t *)(mm + 2);
	e[0] = 0; e[1] = 0x9f000; ((uint32_t *)&e[2])[0] = 1;
	e[3] = 0x100000; e[4] = 0x7f00000; ((uint32_t *)&e[5])[0] = 1;
	uint8_t *r = tag(15, 8 + 36);
	memcpy(r, "RSD PTR ", 8);
}

TEST(mb2_good_structure)
{
	good_prefix();
	end();
	CHECK_EQ(parse(), 0);
	CHECK_STR(bi.boot_error, "");
	CHECK_STR(bi.cmdline, "exit=bochs ");
	CHECK_STR(bi.guest_cmdline, "quiet");
	CHECK_EQ(bi.kernel.addr, 0x400000);
	CHECK_EQ(bi.kernel.size, 0x80000);
	CHECK_EQ(bi.initrd.addr, 0x500000);
	CHECK_EQ(bi.initrd.size, 0x10000);
	CHECK(have);
	CHECK(!memcmp(rsdp, "RSD PTR ", 8));
	CHECK(bi.mem.count >= 4);                         /* two RAM ranges, two modules */
}

/* Each malformation ends the parse with a message naming it; none loops. */
TEST(mb2_malformed_structures_are_named)
{
	static const struct { const char *what, *want; } cases[] = {
		{ "zero-size tag", "has size 0" },
		{ "tag past the end", "malformed" },
		{ "entry size 0", "entry size 0" },
		{ "module ends first", "ends at 0x1000 before it starts at 0x2000" },
		{ "short ACPI tag", "an RSDP has at least 20" },
		{ "no end tag", "no end tag" },
		{ "total too small", "says it is 8 bytes" },
		{ "too many map entries", "does not fit the hypervisor's table" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		good_prefix();
		switch (i) {
		case 0: tag(7, 0); at = at + 8; end(); break;     /* size 0: the old loop never moved */
		case 1: { uint32_t *t = tag(1, 16); (void)t; *(uint32_t *)(buf + at - 16 + 4) = 60000; end(); break; }
		case 2: { uint32_t *mm = tag(6, 16 + 24); mm[0] = 0; end(); break; }
		case 3: { uint32_t *m = tag(3, 16 + 8); m[0] = 0x2000; m[1] = 0x1000; end(); break; }
		case 4: tag(14, 8 + 8); end(); break;
		case 5: *(uint32_t *)buf = at; break;                 /* tags, then nothing */
		case 6: end(); *(uint32_t *)buf = 8; break;
		case 7: { uint32_t *mm = tag(6, 16 + 300 * 24); mm[0] = 24;
			  uint64_t *e = (uint64_t *)(mm + 2);
			  for (int k = 0; k < 300; k++) { e[k * 3] = (uint64_t)k << 24; e[k * 3 + 1] = 4096; }
			  end(); break; }
		}
		CHECK_EQ(parse(), -1);
		CHECK_CONTAINS(bi.boot_error, cases[i].want);
		CHECK_CONTAINS(bi.boot_error, "multiboot2: ");
	}
}

/* Random bytes after a valid header: the parse ends, in bounds (ASan). */
TEST(mb2_random_structures_end)
{
	uint64_t seed = 0x2545f4914f6cdd1dull;
	for (int round = 0; round < 3000; round++) {
		begin();
		uint32_t total = 16 + (uint32_t)(seed % 2000);
		for (uint32_t k = 8; k < total; k++) {
			seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
			buf[k] = (uint8_t)(k % 8 == 4 ? seed % 64 : k % 8 == 0 ? seed % 16 : seed);
		}
		*(uint32_t *)buf = total;
		int r = parse();
		CHECK(r == 0 || r == -1);
		if (r == -1)
			CHECK_CONTAINS(bi.boot_error, "multiboot2: ");
	}
}
