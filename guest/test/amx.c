/* amx [SWITCHES]: an AMX matrix multiply in user mode, as the guest's own
 * CPU runs it (issue 45). C (16x16 int32) += A (16x64 int8) * B (64x16
 * int8) by TILELOADD, TDPBSSD and TILESTORED, checked against a plain C
 * loop, the bytes signed (negative ones too) from a fixed seed so that
 * every run multiplies the same matrices. First, before the process asks
 * for tile data (arch_prctl ARCH_REQ_XCOMP_PERM), a tile instruction must
 * raise SIGILL: XFD armed, the #NM, Linux's handler reading IA32_XFD_ERR.
 * Then two processes pinned to one CPU, each with matrices of its own, load
 * their tiles, meet through a pipe (so both hold tile state) and yield to
 * each other SWITCHES times before the multiply:
 * each switch saves and restores the tile data (XSAVES/XRSTORS with XFD
 * changed between the two). Prints
 *   guest: amx tdpbssd m=16 n=16 k=64 sigill_before_perm=yes|no switches=S sum=0xH ref=0xH mismatches=N child=ok|bad
 * (sum: a checksum of this process's C, ref: the C loop's). Exit 0 when
 * SIGILL came, the product and the child's match their loops; 2 when
 * CPUID.(7,0):EDX has no AMX-TILE or AMX-INT8; 1 else. */
#define _GNU_SOURCE
#include <errno.h>
#include <immintrin.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cpuid.h>

#define ARCH_REQ_XCOMP_PERM 0x1023   /* Linux's uapi asm/prctl.h */
#define XFEATURE_XTILEDATA  18       /* XCR0 bit 18 (SDM Vol. 1, 13.1) */
#define M 16
#define N 16
#define K 64

struct tilecfg {                     /* LDTILECFG's 64 bytes (SDM Vol. 2, LDTILECFG) */
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

static int8_t a[M][K], b[K / 4][N * 4];   /* B in the VNNI layout: row k/4, column 4n + k%4 */
static int32_t c[M][N], ref[M][N];
static sigjmp_buf jb;
static void on_sigill(int sig) { (void)sig; siglongjmp(jb, 1); }

static void config(void)
{
	static struct tilecfg cfg __attribute__((aligned(64)));
	memset(&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	cfg.rows[0] = M; cfg.colsb[0] = N * 4;       /* C */
	cfg.rows[1] = M; cfg.colsb[1] = K;           /* A */
	cfg.rows[2] = K / 4; cfg.colsb[2] = N * 4;   /* B */
	_tile_loadconfig(&cfg);
}

static void fill(uint32_t seed)
{
	for (int i = 0; i < M; i++)
		for (int k = 0; k < K; k++)
			a[i][k] = (int8_t)((seed = seed * 1103515245u + 12345u) >> 16);
	for (int k = 0; k < K; k++)
		for (int j = 0; j < N; j++)
			b[k / 4][j * 4 + k % 4] = (int8_t)((seed = seed * 1103515245u + 12345u) >> 16);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			c[i][j] = (int32_t)((seed = seed * 1103515245u + 12345u) >> 12) - 0x40000;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			int32_t s = c[i][j];
			for (int k = 0; k < K; k++)
				s += (int32_t)a[i][k] * (int32_t)b[k / 4][j * 4 + k % 4];
			ref[i][j] = s;
		}
}

/* Loads the three tiles, meets the other process (the child says it has
 * its tiles loaded on 'fd', the parent waits for that: both then hold tile
 * state), yields 'switches' times, multiplies, stores C; returns how many
 * of C's elements differ from the C loop's. */
static int multiply(int switches, int fd, bool child)
{
	char x = 'x';
	config();
	_tile_loadd(0, c, N * 4);
	_tile_loadd(1, a, K);
	_tile_loadd(2, b, N * 4);
	if (fd >= 0 && (child ? write(fd, &x, 1) : read(fd, &x, 1)) != 1)
		return -1;
	for (int s = 0; s < switches; s++)
		sched_yield();
	_tile_dpbssd(0, 1, 2);
	_tile_stored(0, c, N * 4);
	_tile_release();
	int bad = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			bad += c[i][j] != ref[i][j];
	return bad;
}

static uint32_t sum(int32_t (*x)[N])
{
	uint32_t h = 2166136261u;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			h = (h ^ (uint32_t)x[i][j]) * 16777619u;
	return h;
}

int main(int argc, char **argv)
{
	int switches = argc > 1 ? atoi(argv[1]) : 50;
	unsigned ea, eb, ec, ed;
	__cpuid_count(7, 0, ea, eb, ec, ed);
	if (!(ed & (1u << 24)) || !(ed & (1u << 25))) {
		printf("guest: amx absent (CPUID.(7,0):EDX[24]=%u [25]=%u)\n", (ed >> 24) & 1, (ed >> 25) & 1);
		return 2;
	}
	/* Without permission the tile data is XFD-armed: #NM, then SIGILL. */
	signal(SIGILL, on_sigill);
	volatile int sigill = 0;
	if (sigsetjmp(jb, 1))
		sigill = 1;
	else
		config();
	signal(SIGILL, SIG_DFL);
	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)) {
		printf("guest: amx ARCH_REQ_XCOMP_PERM failed: %s\n", strerror(errno));
		return 1;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	sched_setaffinity(0, sizeof set, &set);
	int pfd[2] = { -1, -1 };
	if (pipe(pfd))
		pfd[0] = pfd[1] = -1;
	pid_t child = fork();
	if (child == 0) {
		fill(0x5eed0002u);
		_exit(multiply(switches, pfd[1], true) ? 1 : 0);
	}
	fill(0x5eed0001u);
	int bad = multiply(switches, child > 0 ? pfd[0] : -1, false);
	int st = 0;
	bool child_ok = child > 0 && waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("guest: amx tdpbssd m=%d n=%d k=%d sigill_before_perm=%s switches=%d sum=0x%08x ref=0x%08x mismatches=%d child=%s\n",
	       M, N, K, sigill ? "yes" : "no", switches, sum(c), sum(ref), bad, child_ok ? "ok" : "bad");
	return sigill && !bad && child_ok ? 0 : 1;
}
