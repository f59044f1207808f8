/* A tiny host unit-test harness: TEST() registers a case, CHECK() records a
 * failure with its line and goes on. The runner prints one line per case and
 * closes with "unit: N passed, N failed". */
#ifndef TEST_UNIT_TEST_H
#define TEST_UNIT_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdbool.h>

void test_register(const char *name, void (*fn)(void));
void test_fail(const char *file, int line, const char *msg);
/* A failure the test cannot go on from (a wait that would never end): the
 * test fails with msg and the runner goes on with the next one. Only from
 * the test's own thread. */
__attribute__((noreturn)) void test_bail(const char *file, int line, const char *msg);
/* Runs fn; true when it bailed (its message in msg), which then is no failure. */
bool test_expect_bail(void (*fn)(void *), void *arg, char *msg, size_t len);

#define TEST(name) \
	static void name(void); \
	__attribute__((constructor)) static void reg_##name(void) { test_register(#name, name); } \
	static void name(void)

#define CHECK(cond) do { if (!(cond)) test_fail(__FILE__, __LINE__, #cond); } while (0)
#define CHECK_EQ(a, b) do { unsigned long long _a = (unsigned long long)(a), _b = (unsigned long long)(b); \
	if (_a != _b) { char _m[256]; snprintf(_m, sizeof _m, "%s == %s (0x%llx != 0x%llx)", #a, #b, _a, _b); \
	test_fail(__FILE__, __LINE__, _m); } } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b)) { char _m[1024]; snprintf(_m, sizeof _m, "%s == \"%s\" (got \"%s\")", #a, _b ? _b : "(null)", _a ? _a : "(null)"); \
	test_fail(__FILE__, __LINE__, _m); } } while (0)
#define CHECK_CONTAINS(hay, needle) do { const char *_h = (hay), *_n = (needle); \
	if (!_h || !strstr(_h, _n)) { char _m[512]; snprintf(_m, sizeof _m, "\"%.300s\" contains \"%s\"", _h ? _h : "(null)", _n); \
	test_fail(__FILE__, __LINE__, _m); } } while (0)

/* The catalog of bad inputs (issue: every bad input a clear error): each
 * entry is one bad input given to a decoder, which must fail (rc != 0) with
 * a message containing 'must' (the input and the fault named). The runner
 * lists every entry (HV_CATALOG=FILE writes them there) and fails unless
 * the catalog holds at least CATALOG_MIN entries. */
#define CATALOG_MIN 50
void catalog_entry(const char *file, int line, const char *input, int rc, const char *err, const char *must);
#define CATALOG(input, rc, err, must) catalog_entry(__FILE__, __LINE__, (input), (rc), (err), (must))

/* Zeroed memory for the code under test (the MSI trap's vmsi_hw.alloc). */
void *test_alloc(void *ctx, size_t n);

/* A reproducible pseudo-random sequence for the randomized tests
 * (xorshift64; *state is the test's own seed, never 0). */
static inline uint64_t test_xorshift(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

/* Everything printk printed since the last test_log_clear(). */
const char *test_log(void);
void test_log_clear(void);
/* Runs fn; returns true when it called panic() (the panic message is in the log). */
bool test_expect_panic(void (*fn)(void *), void *arg);
/* Reads a whole file (fixtures); caller frees. NULL on error. */
char *test_read_file(const char *path, size_t *len);
#endif
