/* Host-side runner and the stand-ins for the hypervisor's printk and panic. */
#include "test.h"
#include <setjmp.h>
#include <pthread.h>
#include <stdarg.h>
#include "../../lib/printk.h"
#include "../../lib/acpi.h"
#include "cpu_fake.h"

#define MAX_TESTS 1024
static struct { const char *name; void (*fn)(void); } tests[MAX_TESTS];
static int ntests, cur_failed;
static char logbuf[1 << 16];
static size_t loglen;
static jmp_buf *panic_jmp;
static jmp_buf test_jmp;             /* test_bail: back to the runner */
static jmp_buf *bail_jmp;            /* test_expect_bail's, while it runs */
static char bail_msg[256];

int log_level = LOG_DEBUG;

void test_register(const char *name, void (*fn)(void))
{
	if (ntests == MAX_TESTS) { fprintf(stderr, "too many tests\n"); exit(2); }
	tests[ntests].name = name;
	tests[ntests++].fn = fn;
}

void test_fail(const char *file, int line, const char *msg)
{
	printf("    %s:%d: CHECK failed: %s\n", file, line, msg);
	__atomic_fetch_add(&cur_failed, 1, __ATOMIC_RELAXED);   /* a two-thread test may fail on both */
}

void test_bail(const char *file, int line, const char *msg)
{
	if (bail_jmp) {
		snprintf(bail_msg, sizeof bail_msg, "%s", msg);
		longjmp(*bail_jmp, 1);
	}
	test_fail(file, line, msg);
	longjmp(test_jmp, 1);
}

bool test_expect_bail(void (*fn)(void *), void *arg, char *msg, size_t len)
{
	jmp_buf jb;
	bail_jmp = &jb;
	if (setjmp(jb)) {
		bail_jmp = NULL;
		snprintf(msg, len, "%s", bail_msg);
		return true;
	}
	fn(arg);
	bail_jmp = NULL;
	return false;
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;   /* two-thread tests print from both */

void printk_write(const char *s, size_t n)
{
	pthread_mutex_lock(&log_lock);
	if (loglen + n >= sizeof logbuf)
		loglen = 0;
	memcpy(logbuf + loglen, s, n);
	loglen += n;
	logbuf[loglen] = 0;
	if (getenv("UNIT_VERBOSE"))
		fwrite(s, 1, n, stdout);
	pthread_mutex_unlock(&log_lock);
}

void printk_level(int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	if (level > log_level)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = sizeof buf - 1;
	printk_write(buf, n);
}

void panic(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printk_write("PANIC: ", 7);
	printk_write(buf, strlen(buf));
	if (panic_jmp)
		longjmp(*panic_jmp, 1);
	fprintf(stderr, "unexpected panic: %s\n", buf);
	abort();
}

const char *test_log(void) { return logbuf; }
void test_log_clear(void) { loglen = 0; logbuf[0] = 0; }

bool test_expect_panic(void (*fn)(void *), void *arg)
{
	jmp_buf jb;
	jmp_buf *saved = panic_jmp;
	panic_jmp = &jb;
	if (setjmp(jb)) {
		panic_jmp = saved;
		return true;
	}
	fn(arg);
	panic_jmp = saved;
	return false;
}

char *test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc(n + 1);
	if (fread(buf, 1, n, f) != (size_t)n) { fclose(f); free(buf); return NULL; }
	buf[n] = 0;
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

static int catalog_n;
static FILE *catalog_out;

void catalog_entry(const char *file, int line, const char *input, int rc, const char *err, const char *must)
{
	char m[700];
	if (!rc) {
		snprintf(m, sizeof m, "bad input '%s' was accepted", input);
		test_fail(file, line, m);
	} else if (!err || !strstr(err, must)) {
		snprintf(m, sizeof m, "bad input '%s': message \"%.400s\" lacks \"%s\"", input, err ? err : "(none)", must);
		test_fail(file, line, m);
	}
	catalog_n++;
	if (catalog_out)
		fprintf(catalog_out, "%-48s -> %s\n", input, err ? err : "(none)");
}

/* acpi_parse's room in the tests: zeroed heap, the last 16 kept reachable
 * (a test holds at most a few parses at once). Set again before each test,
 * so that one may take it away (NULL: no memory). */
static void *acpi_rooms[16];
static unsigned acpi_rooms_next;
static void *test_acpi_alloc(size_t n)
{
	unsigned i = acpi_rooms_next++ % 16;
	free(acpi_rooms[i]);
	return acpi_rooms[i] = calloc(1, n ? n : 1);
}

/* The MSI trap's arrays in the tests (vmsi_hw.alloc): zeroed heap, the
 * last 64 blocks kept reachable (a test holds a few scans at once; each
 * takes three), older ones freed. */
void *test_alloc(void *ctx, size_t n)
{
	static void *blocks[64];
	static unsigned next;
	(void)ctx;
	unsigned i = next++ % 64;
	free(blocks[i]);
	return blocks[i] = calloc(1, n ? n : 1);
}

/* One test, from which test_bail comes back here. */
static void run_one(void (*fn)(void))
{
	panic_jmp = NULL;
	bail_jmp = NULL;
	if (!setjmp(test_jmp))
		fn();
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;
	const char *cat = getenv("HV_CATALOG");
	if (cat && !(catalog_out = fopen(cat, "w")))
		fprintf(stderr, "unit: cannot write the catalog to %s\n", cat);
	for (int i = 0; i < ntests; i++) {
		if (only && !strstr(tests[i].name, only))
			continue;
		cur_failed = 0;
		test_log_clear();
		acpi_alloc = test_acpi_alloc;
		cpu_fake_reset();
		run_one(tests[i].fn);
		if (cur_failed) {
			failed++;
			printf("FAIL unit/%s\n", tests[i].name);
		} else {
			passed++;
			printf("PASS unit/%s\n", tests[i].name);
		}
	}
	if (!only) {   /* the catalog is whole only when every test ran */
		if (catalog_n >= CATALOG_MIN) {
			passed++;
			printf("PASS unit/catalog-of-bad-inputs (%d inputs, each refused with a message naming it)\n", catalog_n);
		} else {
			failed++;
			printf("FAIL unit/catalog-of-bad-inputs: %d entries, want at least %d\n", catalog_n, CATALOG_MIN);
		}
	}
	if (catalog_out)
		fclose(catalog_out);
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
