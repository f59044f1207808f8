/* The hypercall policy (guest/hypercall.c) against KVM's documented ABI
 * (Documentation/virt/kvm/x86/hypercalls.rst): unknown numbers -KVM_ENOSYS
 * (-1000), KVM_HC_SEND_IPI (10) only where advertised and only at CPL 0
 * (-KVM_EPERM = -1), bad arguments -KVM_EINVAL (-22). Constants written out. */
#include "test.h"
#include "../../guest/hypercall.h"

static int reports, sends;
static uint64_t last_args[4];
static void *last_ctx;

static uint64_t now_us = 5000000;
static uint64_t report_us = 0;                /* how long a report prints */
static uint64_t rep(uint32_t cpu) { (void)cpu; reports++; return now_us + report_us; }
static int64_t send(void *ctx, uint64_t lo, uint64_t hi, uint64_t min, uint64_t icr)
{
	sends++;
	last_ctx = ctx;
	last_args[0] = lo; last_args[1] = hi; last_args[2] = min; last_args[3] = icr;
	return 3;
}
static int64_t posts(uint32_t id, uint32_t vec) { return id == 1 ? 1000 + (int64_t)vec : -1; }
static int64_t exits(uint32_t id) { return id == 0 ? 77 : -1; }
static int verdicts = -1;
static void verdict(uint32_t cpu, bool pass) { (void)cpu; verdicts = pass; }
static int64_t exits_of(uint32_t id, uint32_t reason) { return id == 0 && reason < 70 ? 100 + (int64_t)reason : -1; }

static uint64_t call(const struct hc_ops *o, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, bool user)
{
	struct hc_call c = { nr, a0, a1, a2, a3, user, now_us };
	return hypercall(o, (void *)0x1234, 0, &c);
}

/* User-mode reports: one a second, the rest -KVM_EPERM (-1); the kernel's always. */
TEST(hypercall_user_report_rate_limited)
{
	const struct hc_ops all = { rep, send, posts, exits, exits_of, false, verdict, NULL };
	int before = reports;
	now_us = 100000000;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), 0);
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), (uint64_t)-1);
	now_us += 999999;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), (uint64_t)-1);
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, false), 0);        /* the kernel's */
	now_us += 1;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), 0);
	CHECK_EQ(reports - before, 3);
	now_us += 10000000;
}

/* The interval counts from the end of the last user report: a report that
 * prints for 2 s and a loop calling again at once get one report in 3 s. */
TEST(hypercall_user_report_interval_from_its_end)
{
	const struct hc_ops all = { rep, send, posts, exits, exits_of, false, verdict, NULL };
	int before = reports;
	now_us += 50000000;
	report_us = 2000000;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), 0);
	now_us += 2000001;                            /* just after it finished */
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), (uint64_t)-1);
	now_us += 999998;                             /* 999,999 us after its end */
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), (uint64_t)-1);
	now_us += 1;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), 0);
	CHECK_EQ(reports - before, 2);
	report_us = 0;
	now_us += 10000000;
}

TEST(hypercall_policy)
{
	const struct hc_ops all = { rep, send, posts, exits, exits_of, false, verdict, NULL }, none = { 0 };
	int ctx;
	(void)ctx;
	now_us += 50000000;
	CHECK_EQ(call(&all, 0x48560001, 0, 0, 0, 0, true), 0);          /* report, even from user mode */
	CHECK(reports >= 1);
	CHECK_EQ(call(&all, 10, 5, 6, 7, 0xfd, false), 3);               /* PV send-IPI: a0..a3 as given */
	CHECK_EQ(sends, 1);
	CHECK(last_ctx == (void *)0x1234);
	CHECK_EQ(last_args[0], 5); CHECK_EQ(last_args[1], 6); CHECK_EQ(last_args[2], 7); CHECK_EQ(last_args[3], 0xfd);
	CHECK_EQ(call(&all, 10, 1, 0, 0, 0xfd, true), (uint64_t)-1);     /* CPL 3: -KVM_EPERM */
	CHECK_EQ(call(&none, 10, 1, 0, 0, 0xfd, false), (uint64_t)-1000);/* not advertised */
	CHECK_EQ(sends, 1);
	CHECK_EQ(call(&all, 0x48560002, 1, 0xfb, 0, 0, false), 1000 + 0xfb);
	CHECK_EQ(call(&all, 0x48560002, 2, 0xfb, 0, 0, false), (uint64_t)-22);   /* no such vCPU */
	CHECK_EQ(call(&all, 0x48560002, 1, 256, 0, 0, false), (uint64_t)-22);    /* no such vector */
	CHECK_EQ(call(&all, 0x48560002, 1ull << 32, 0, 0, 0, false), (uint64_t)-22);
	CHECK_EQ(call(&none, 0x48560002, 1, 0xfb, 0, 0, false), (uint64_t)-1000);/* partition model */
	CHECK_EQ(call(&all, 0x48560003, 0, 0, 0, 0, false), 77);
	CHECK_EQ(call(&all, 0x48560003, 9, 0, 0, 0, false), (uint64_t)-22);
	CHECK_EQ(call(&all, 0x48560003, 0, 0x1234, 0, 0, false), 77);            /* RCX does not matter */
	CHECK_EQ(call(&all, 0x48560005, 0, 56, 0, 0, false), 156);               /* one reason */
	CHECK_EQ(call(&all, 0x48560005, 0, 80, 0, 0, false), (uint64_t)-22);     /* no such reason */
	CHECK_EQ(call(&all, 0x48560005, 9, 56, 0, 0, false), (uint64_t)-22);
	CHECK_EQ(call(&none, 0x48560005, 0, 56, 0, 0, false), (uint64_t)-1000);
	/* The guest's verdict: 1 pass, 0 fail, anything else -KVM_EINVAL; also from user mode. */
	CHECK_EQ(call(&all, 0x48560004, 1, 0, 0, 0, true), 0);
	CHECK_EQ(verdicts, 1);
	CHECK_EQ(call(&all, 0x48560004, 0, 0, 0, 0, false), 0);
	CHECK_EQ(verdicts, 0);
	CHECK_EQ(call(&all, 0x48560004, 2, 0, 0, 0, false), (uint64_t)-22);
	CHECK_EQ(verdicts, 0);
	CHECK_EQ(call(&none, 0x48560004, 1, 0, 0, 0, false), (uint64_t)-1000);
	/* Under IPI virtualization the CPU posts: -KVM_EOPNOTSUPP (-95), not -KVM_ENOSYS. */
	const struct hc_ops ipiv = { rep, send, NULL, exits, exits_of, true, verdict, NULL };
	CHECK_EQ(call(&ipiv, 0x48560002, 1, 0xfb, 0, 0, false), (uint64_t)-95);
	static const uint64_t unknown[] = { 0, 1, 5, 9, 11, 12, 0x48560000, 0x48560006, 0x48560007, ~0ull };
	for (unsigned i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
		CHECK_EQ(call(&all, unknown[i], 0, 0, 0, 0, false), (uint64_t)-1000);
}

/* bochstest=1's call: only when offered, only from the kernel; the test
 * number reaches the service with the caller's context, a refusal is -KVM_EINVAL. */
static uint64_t bt_last;
static void *bt_ctx;
static int64_t bochs_test(void *ctx, uint64_t what)
{
	bt_last = what;
	bt_ctx = ctx;
	return what >= 1 && what <= 3 ? 0 : -1;
}

TEST(hypercall_bochstest)
{
	const struct hc_ops all = { rep, send, posts, exits, exits_of, false, verdict, bochs_test },
			    none = { rep, send, posts, exits, exits_of, false, verdict, NULL };
	CHECK_EQ(call(&none, 0x48560006, 1, 0, 0, 0, false), (uint64_t)-1000);
	CHECK_EQ(call(&all, 0x48560006, 2, 0, 0, 0, false), 0);
	CHECK_EQ(bt_last, 2);
	CHECK(bt_ctx == (void *)0x1234);
	bt_last = 0;
	CHECK_EQ(call(&all, 0x48560006, 1, 0, 0, 0, true), (uint64_t)-1);      /* CPL 3: -KVM_EPERM */
	CHECK_EQ(bt_last, 0);
	CHECK_EQ(call(&all, 0x48560006, 4, 0, 0, 0, false), (uint64_t)-22);
}
