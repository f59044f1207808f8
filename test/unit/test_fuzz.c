/* Randomized tests of the decoders that take outside input: they must
 * answer every input with a result or a clear error, never crash (ASan and
 * UBSan watch), and keep their invariants. Deterministic seeds. */
#include "test.h"
#include "../../lib/options.h"
#include "../../lib/memmap.h"
#include "../../lib/mtrr.h"
#include "../../guest/linux.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

TEST(fuzz_options_parse)
{
	static const char *const words[] = { "ipi=", "eoi=", "timer=", "exit=", "console=", "loglevel=", "smp=",
					      "guest=", "aptimeout=", "phantomcpu=", "auto", "fast", "0x3f8", "com2",
					      "=", " ", "\t", "9999999999999999999999", "-1", "", "x" };
	rng_state = 0x1234567;
	for (int i = 0; i < 20000; i++) {
		char line[160] = "", err[96];
		size_t len = 0;
		int n = rnd() % 8;
		for (int w = 0; w < n; w++) {
			const char *piece = words[rnd() % ARRAY_SIZE(words)];
			len += snprintf(line + len, sizeof line - len, "%s", piece);
			if (len >= sizeof line - 1)
				break;
			if (rnd() % 3 == 0 && len < sizeof line - 1)
				line[len++] = (char)(32 + rnd() % 95), line[len] = 0;
		}
		struct hv_options o;
		options_defaults(&o);
		memset(err, 'Z', sizeof err);
		int rc = options_parse(line, &o, err, sizeof err);
		CHECK(rc == 0 || rc == -1);
		if (rc) {
			CHECK(memchr(err, 0, sizeof err) != NULL);      /* terminated */
			CHECK(!strncmp(err, "option '", 8));             /* names the word */
		}
		CHECK(o.ipi >= IPI_AUTO && o.ipi <= IPI_TRAP);
		CHECK(o.exit_mode >= EXIT_NONE && o.exit_mode <= EXIT_BOCHS);
		CHECK(o.loglevel >= 0 && o.loglevel <= 3);
		struct uart_desc early;
		uart_desc_com(&early, 0x3f8);
		(void)options_console(line, &early);
	}
}

TEST(fuzz_memmap_normalize_invariants)
{
	static struct memmap m;
	static const uint32_t types[] = { MEM_USABLE, MEM_RESERVED, MEM_ACPI, MEM_NVS, MEM_BAD, MEM_BOOT, MEM_HV };
	rng_state = 0xabcdef;
	for (int i = 0; i < 2000; i++) {
		memset(&m, 0, sizeof m);
		int n = 1 + rnd() % 40;
		for (int k = 0; k < n; k++) {
			uint64_t base = (rnd() % 64) * PAGE_SIZE * 16, len = (rnd() % 40) * PAGE_SIZE * 4;
			memmap_add(&m, base, len, types[rnd() % ARRAY_SIZE(types)]);
		}
		/* Reference: the winning type of every page, before normalizing. */
		static uint32_t want[64 * 16 + 200];
		for (uint64_t p = 0; p < ARRAY_SIZE(want); p++) {
			uint32_t best = 0;
			for (uint32_t k = 0; k < m.count; k++)
				if (p * PAGE_SIZE >= m.r[k].base && p * PAGE_SIZE < m.r[k].base + m.r[k].len) {
					uint32_t t = m.r[k].type;
					if (!best || (t != MEM_USABLE && (best == MEM_USABLE || t > best)))
						best = t;
				}
			want[p] = best;
		}
		memmap_normalize(&m);
		for (uint32_t k = 0; k < m.count; k++) {
			CHECK(m.r[k].len > 0);
			if (k) {
				CHECK(m.r[k].base >= m.r[k - 1].base + m.r[k - 1].len);       /* sorted, disjoint */
				CHECK(!(m.r[k].base == m.r[k - 1].base + m.r[k - 1].len &&
					m.r[k].type == m.r[k - 1].type));                     /* merged */
			}
		}
		for (uint64_t p = 0; p < ARRAY_SIZE(want); p++)
			if (memmap_type_at(&m, p * PAGE_SIZE) != want[p]) {
				CHECK_EQ(memmap_type_at(&m, p * PAGE_SIZE), want[p]);
				return;
			}
	}
}

/* MTRR region types against a page-by-page evaluation of the same rules. */
static int page_type(const struct mtrr_state *s, uint64_t pa)
{
	int t = -1;
	for (uint32_t i = 0; i < s->nvar; i++) {
		if ((pa & s->var[i].mask) != (s->var[i].base & s->var[i].mask))
			continue;
		int u = s->var[i].type;
		if (t < 0 || t == u)
			t = u;
		else if (t == MTRR_UC || u == MTRR_UC)
			t = MTRR_UC;
		else if ((t == MTRR_WT && u == MTRR_WB) || (t == MTRR_WB && u == MTRR_WT))
			t = MTRR_WT;
		else
			t = MTRR_UC;
	}
	return t < 0 ? s->def_type : t;
}

TEST(fuzz_mtrr_region_type_matches_pages)
{
	static const uint8_t types[] = { MTRR_UC, MTRR_WC, MTRR_WT, MTRR_WP, MTRR_WB };
	rng_state = 0x5eed;
	for (int i = 0; i < 3000; i++) {
		struct mtrr_state s = { .enabled = true, .def_type = types[rnd() % 5] };
		s.nvar = rnd() % 5;
		for (uint32_t k = 0; k < s.nvar; k++) {
			uint64_t size = PAGE_SIZE << (rnd() % 10);            /* 4 KiB .. 2 MiB */
			s.var[k].base = (rnd() % 64) * size;
			s.var[k].mask = ~(size - 1) & 0x000ffffffffff000ull;
			s.var[k].type = types[rnd() % 5];
		}
		uint64_t size = PAGE_SIZE << (rnd() % 10);
		uint64_t a = (rnd() % 64) * size;
		int got = mtrr_region_type(&s, a, size);
		int first = page_type(&s, a), uniform = 1;
		for (uint64_t pa = a; pa < a + size; pa += PAGE_SIZE)
			uniform &= page_type(&s, pa) == first;
		/* A type must hold for every page; MIXED is always safe (the EPT
		 * builder then splits), and a region that is not uniform must be MIXED. */
		if ((got != MTRR_MIXED && (!uniform || got != first)) || (!uniform && got != MTRR_MIXED)) {
			CHECK_EQ(got, uniform ? first : MTRR_MIXED);
			return;
		}
	}
}

TEST(fuzz_linux_check_mutated_headers)
{
	enum { SZ = 64 * 1024 };
	uint8_t *img = malloc(SZ);
	char err[200];
	struct linux_image li;
	rng_state = 0xb2;
	int accepted = 0;
	for (int i = 0; i < 20000; i++) {
		memset(img, 0, SZ);
		/* A plausible header: boot flag, HdrS, a version, LOADED_HIGH, XLF_KERNEL_64 ... */
		img[0x1f1] = 4;
		img[0x1fe] = 0x55; img[0x1ff] = 0xaa;
		memcpy(img + 0x202, "HdrS", 4);
		img[0x206] = 0x0f; img[0x207] = 2;
		img[0x211] = 1;
		img[0x236] = 1;
		img[0x234] = 1;
		img[0x232] = 0x20;                         /* kernel_alignment 2 MiB */
		img[0x262] = 0x10;                         /* init_size 1 MiB */
		/* ... then random damage to the header bytes. */
		int flips = rnd() % 12;
		for (int f = 0; f < flips; f++)
			img[0x1f0 + rnd() % 0x80] = (uint8_t)rnd();
		uint64_t size = rnd() % 2 ? SZ : rnd() % SZ;
		int rc = linux_check(img, size, &li, err, sizeof err);
		CHECK(rc == 0 || rc == -1);
		if (rc)
			CHECK(memchr(err, 0, sizeof err) && !strncmp(err, "kernel: ", 8));
		else {
			accepted++;
			CHECK(li.version >= 0x020c && li.setup_size < size);
		}
	}
	CHECK(accepted > 0);
	free(img);
}
