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

/* A command line of n bytes (a..z repeated), in a command-line tag (type 1:
 * the string right after the 8-byte header) or as the first module's string
 * (type 3: after mod_start and mod_end), terminated or not (the tag's size
 * then ends at the last character, and its padding to 8 bytes is 'Z', which
 * must never be read as part of the line). 'path' puts "/boot/vmlinuz "
 * first, which the parser drops. Returns where the line starts. */
static const char *long_line(bool module, size_t n, bool nul, bool path)
{
	static const char pre[] = "/boot/vmlinuz ";
	size_t pre_len = path ? sizeof pre - 1 : 0, len = pre_len + n + (nul ? 1 : 0);
	begin();
	char *s;
	if (module) {
		uint32_t *m = tag(3, (uint32_t)(16 + len));
		m[0] = 0x400000; m[1] = 0x480000;
		s = (char *)(m + 2);
	} else {
		s = tag(1, (uint32_t)(8 + len));
	}
	memcpy(s, pre, pre_len);
	for (size_t i = 0; i < n; i++)
		s[pre_len + i] = (char)('a' + i % 26);
	if (nul)
		s[pre_len + n] = 0;
	for (char *p = s + len; (uintptr_t)p % 8; p++)
		*p = 'Z';
	end();
	return s + pre_len;
}

/* The bound on the copy of a long command line: the destination (the
 * struct's array) holds at most its size - 1 characters and the NUL; the
 * bytes right after it (the next field) are a canary that must survive. */
TEST(mb2_long_cmdline_truncated_exactly)
{
	static const size_t lens[] = { 0, 1, 300, 509, 510, 511, 512, 513, 514, 600, 1023, 1024, 4000 };
	const size_t cap = sizeof bi.cmdline;
	CHECK_EQ(cap, sizeof bi.guest_cmdline);
	for (int module = 0; module < 2; module++)
		for (int nul = 0; nul < 2; nul++)
			for (int path = 0; path <= module; path++)
				for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
					size_t n = lens[i], want = n < cap - 1 ? n : cap - 1;
					const char *src = long_line(module, n, nul, path);
					memset(&bi, 0xa5, sizeof bi);
					memset(&bi.mem, 0, sizeof bi.mem);
					bi.boot_error[0] = 0;
					CHECK_EQ(mb2_parse(buf, &bi, rsdp, sizeof rsdp, &have), 0);
					const char *dst = module ? bi.guest_cmdline : bi.cmdline;
					const uint8_t *after = (const uint8_t *)dst + cap;
					CHECK(after + 8 <= (const uint8_t *)(&bi + 1));
					bool ok = strnlen(dst, cap) == want && !memcmp(dst, src, want) && dst[want] == 0;
					for (int k = 0; k < 8; k++)
						ok &= after[k] == 0xa5;
					if (!ok)
						printf("    %s, %zu bytes, %s%s: strnlen %zu (want %zu), byte [%zu] 0x%02x,"
						       " canary after the array %02x %02x %02x %02x\n",
						       module ? "module string" : "command-line tag", n,
						       nul ? "terminated" : "not terminated", path ? ", path first" : "",
						       strnlen(dst, cap), want, want, (uint8_t)dst[want < cap ? want : cap - 1],
						       after[0], after[1], after[2], after[3]);
					CHECK(ok);
				}
}
