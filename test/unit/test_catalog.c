/* The catalog of bad inputs, part 1: every option with bad values, broken
 * kernels, a broken Multiboot2 information structure and broken ACPI roots,
 * each given to its decoder here; each must fail with a message that names
 * the input and the fault (CATALOG in test.h; other files add their own
 * entries: initrds, memory maps, MADTs). The emulator-level entries (files
 * named in hv.cfg that the stick lacks, a malformed hv.cfg) are in
 * test/run-tests.sh (level qemu). Layouts are written out from the Linux
 * boot protocol, the Multiboot2 specification and the ACPI specification. */
#include "test.h"
#include "../../lib/options.h"
#include "../../lib/acpi.h"
#include "../../guest/linux.h"
#include "../../boot/mb2_info.h"
#include "../../boot/cfg.h"

TEST(catalog_options)
{
	/* word, what the message must hold */
	static const char *const bad[][2] = {
		{ "ipi=bogus", "ipi=bogus" }, { "ipi=", "ipi=" }, { "eoi=apicv", "eoi=apicv" },
		{ "timer=fast", "timer=fast" }, { "irq=maybe", "irq=maybe" }, { "hlt=sometimes", "hlt=sometimes" },
		{ "novmx=windows", "novmx=windows" }, { "exit=reboot", "exit=reboot" }, { "guest=bsd", "guest=bsd" },
		{ "console=com9", "console=com9" }, { "console=0xzz", "console=0xzz" }, { "loglevel=4", "loglevel=4" },
		{ "loglevel=high", "loglevel=high" }, { "smp=0", "smp=0" }, { "smp=5000", "smp=5000" },
		{ "aptimeout=999", "aptimeout=999" }, { "aptimeout=60000001", "aptimeout=60000001" },
		{ "housekeeping=0xffffffff", "housekeeping=0xffffffff" }, { "housekeeping=cpu2", "housekeeping=cpu2" },
		{ "phantomcpu=-1", "phantomcpu=-1" }, { "ipivtest=2", "ipivtest=2" }, { "report=1d", "report=1d" }, { "frobnicate=1", "unknown option" },
		{ "ipi", "expected key=value" }, { "smp=99999999999999999999", "smp=99999999999999999999" },
		{ "irq=", "irq=" }, { "console=", "console=" }, { "housekeeping=", "housekeeping=" },
		{ "aptimeout=abc", "aptimeout=abc" }, { "exit=bochs timer=trap ipi=ipi", "ipi=ipi" },
		{ "iommu=on", "iommu=on': bad value, expected one of auto, require, off" }, { "iommutest=yes", "iommutest=yes" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct hv_options o;
		char err[256] = "";
		options_defaults(&o);
		char input[96];
		snprintf(input, sizeof input, "option %s", bad[i][0]);
		CATALOG(input, options_parse(bad[i][0], &o, err, sizeof err), err, bad[i][1]);
	}
}

/* A bzImage setup header (Linux boot protocol, "The Real-Mode Kernel
 * Header"): setup_sects 0x1F1, syssize 0x1F4, boot_flag 0x1FE, header
 * "HdrS" 0x202, version 0x206, loadflags 0x211, kernel_alignment 0x230,
 * relocatable_kernel 0x234, xloadflags 0x236, pref_address 0x258,
 * init_size 0x260. */
static uint8_t kimg[64 * 1024];
static void w16(uint32_t at, uint16_t v) { memcpy(kimg + at, &v, 2); }
static void w32(uint32_t at, uint32_t v) { memcpy(kimg + at, &v, 4); }
static void good_kernel(void)
{
	memset(kimg, 0, sizeof kimg);
	kimg[0x1F1] = 4;                                 /* 4 setup sectors + the boot sector */
	w32(0x1F4, (sizeof kimg - 5 * 512) / 16);        /* syssize, 16-byte units */
	w16(0x1FE, 0xAA55);
	memcpy(kimg + 0x202, "HdrS", 4);
	w16(0x206, 0x020F);                              /* 2.15 */
	kimg[0x211] = 0x01;                              /* LOADED_HIGH */
	w32(0x230, 0x200000);
	kimg[0x234] = 1;
	w16(0x236, 0x0003);                              /* XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G */
	w32(0x260, 0x400000);
	w32(0x258, 0x1000000);                           /* pref_address */
}

TEST(catalog_kernels)
{
	struct linux_image li;
	char err[256];
	good_kernel();
	CHECK_EQ(linux_check(kimg, sizeof kimg, &li, err, sizeof err), 0);   /* the builder is sound */
	CATALOG("kernel: none (size 0)", linux_check(kimg, 0, &li, err, sizeof err), err, "kernel: missing");
	CATALOG("kernel: 100 bytes", linux_check(kimg, 100, &li, err, sizeof err), err, "too small (100 bytes)");
	CATALOG("kernel: truncated after the setup", linux_check(kimg, 5 * 512 + 100, &li, err, sizeof err), err, "truncated");
	kimg[0x1FE] = 0;
	CATALOG("kernel: boot flag 0x0000", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "bad boot flag");
	good_kernel();
	memcpy(kimg + 0x202, "Hdr?", 4);
	CATALOG("kernel: no HdrS", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "no HdrS");
	good_kernel();
	w16(0x206, 0x020B);
	CATALOG("kernel: boot protocol 2.11", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "2.11 too old");
	good_kernel();
	kimg[0x211] = 0;
	CATALOG("kernel: zImage (not LOADED_HIGH)", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "LOADED_HIGH");
	good_kernel();
	w16(0x236, 0);
	CATALOG("kernel: no 64-bit entry", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "XLF_KERNEL_64");
	good_kernel();
	w32(0x230, 0x3000);
	CATALOG("kernel: kernel_alignment 0x3000", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "kernel_alignment");
	good_kernel();
	w32(0x260, 0);
	w32(0x258, 0x1000000);
	CATALOG("kernel: init_size 0", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "init_size");
	/* Random bytes: whatever they hold, not a bzImage. */
	srand(7);
	for (size_t i = 0; i < sizeof kimg; i++)
		kimg[i] = (uint8_t)rand();
	kimg[0x1FE] = 0x12;
	CATALOG("kernel: 64 KiB of random bytes", linux_check(kimg, sizeof kimg, &li, err, sizeof err), err, "not a bzImage");
}

/* Multiboot2 information ("Boot information format"): u32 total_size, u32
 * reserved, tags {u32 type, u32 size} padded to 8 bytes, type 0 ends. */
static uint8_t mb[4096] __attribute__((aligned(8)));
static struct boot_info mbi;
static int mb_parse(void)
{
	static uint8_t rsdp[64];
	bool have;
	memset(&mbi, 0, sizeof mbi);
	return mb2_parse(mb, &mbi, rsdp, sizeof rsdp, &have);
}
static void mb_put(uint32_t at, uint32_t v) { memcpy(mb + at, &v, 4); }

TEST(catalog_multiboot2)
{
	memset(mb, 0, sizeof mb);
	mb_put(0, 24); mb_put(8, 1); mb_put(12, 0);            /* a tag of size 0 */
	CATALOG("multiboot2: a tag of size 0", mb_parse(), mbi.boot_error, "has size 0");
	memset(mb, 0, sizeof mb);
	mb_put(0, 8);
	CATALOG("multiboot2: total_size 8", mb_parse(), mbi.boot_error, "says it is 8 bytes");
	memset(mb, 0, sizeof mb);
	mb_put(0, 24); mb_put(8, 1); mb_put(12, 16);           /* a command line to the end: no end tag */
	CATALOG("multiboot2: no end tag", mb_parse(), mbi.boot_error, "no end tag");
	memset(mb, 0, sizeof mb);
	mb_put(0, 48); mb_put(8, 6); mb_put(12, 32); mb_put(16, 0); /* memory map, entry size 0 */
	mb_put(40, 0); mb_put(44, 8);
	CATALOG("multiboot2: memory map entry size 0", mb_parse(), mbi.boot_error, "entry size 0");
	memset(mb, 0, sizeof mb);
	mb_put(0, 48); mb_put(8, 3); mb_put(12, 24); mb_put(16, 0x500000); mb_put(20, 0x400000); /* module ends first */
	mb_put(40, 0); mb_put(44, 8);
	CATALOG("multiboot2: module ending before its start", mb_parse(), mbi.boot_error, "before it starts");
}

/* ACPI RSDP (ACPI 6.x, "Root System Description Pointer"): "RSD PTR ", checksum
 * over 20 bytes, revision at 15, RSDT address at 16, length at 20, XSDT
 * address at 24, extended checksum over all 36. */
static uint8_t acpi_mem[4096] __attribute__((aligned(16)));
static void acpi_sum(uint8_t *p, size_t n, size_t at)
{
	uint8_t s = 0;
	p[at] = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	p[at] = (uint8_t)-s;
}

TEST(catalog_acpi_roots)
{
	struct acpi_info ai;
	char err[256];
	paddr_t lo = acpi_readable_lo, hi = acpi_readable_hi;
	acpi_readable_lo = 0;
	acpi_readable_hi = ~0ull;
	uint8_t *r = acpi_mem, *x = acpi_mem + 64;
	memset(acpi_mem, 0, sizeof acpi_mem);
	memcpy(r, "RSD PTR ", 8);
	r[15] = 2;
	uint32_t len = 36;
	memcpy(r + 20, &len, 4);
	uint64_t xa = (uint64_t)(uintptr_t)x;
	memcpy(r + 24, &xa, 8);
	acpi_sum(r, 20, 8);
	acpi_sum(r, 36, 32);
	memcpy(x, "XSDT", 4);                                  /* an XSDT with no entries */
	len = 36;
	memcpy(x + 4, &len, 4);
	x[8] = 1;
	acpi_sum(x, 36, 9);
	paddr_t rp = (paddr_t)(uintptr_t)r;
	CATALOG("ACPI: an XSDT without a MADT", acpi_parse(rp, &ai, err, sizeof err), err, "no MADT in XSDT");
	CATALOG("ACPI: RSDP address 0", acpi_parse(0, &ai, err, sizeof err), err, "RSDP address is 0");
	x[9]++;
	CATALOG("ACPI: XSDT checksum bad", acpi_parse(rp, &ai, err, sizeof err), err, "XSDT checksum bad");
	x[9]--;
	len = 20;
	memcpy(x + 4, &len, 4);
	acpi_sum(x, 36, 9);
	CATALOG("ACPI: XSDT length 20", acpi_parse(rp, &ai, err, sizeof err), err, "XSDT truncated");
	r[8]++;
	CATALOG("ACPI: RSDP checksum bad", acpi_parse(rp, &ai, err, sizeof err), err, "RSDP checksum bad");
	r[8]--;
	r[32]++;
	CATALOG("ACPI: RSDP extended checksum bad", acpi_parse(rp, &ai, err, sizeof err), err, "extended checksum bad");
	r[32]--;
	memcpy(r, "RSD PTX ", 8);
	CATALOG("ACPI: RSDP signature bad", acpi_parse(rp, &ai, err, sizeof err), err, "RSDP signature bad");
	acpi_readable_lo = lo;
	acpi_readable_hi = hi;
}

/* \hv\hv.cfg (boot/cfg.c): good lines kept, the first bad line named. */
TEST(catalog_hv_cfg)
{
	static struct hv_cfg c;
	char err[256];
	const char *good = "# comment\r\noptions=exit=qemu \r\noptions=smp=2\n\nkernel=\\hv\\vmlinuz\ninitrd=\\hv\\initrd\ncmdline=console=ttyS0";
	CHECK_EQ(cfg_parse(good, strlen(good), &c, err, sizeof err), 0);
	CHECK_STR(c.options, "exit=qemu smp=2");
	CHECK_STR(c.kernel, "\\hv\\vmlinuz");
	CHECK_STR(c.initrd, "\\hv\\initrd");
	CHECK_STR(c.cmdline, "console=ttyS0");
	const char *typo = "options=exit=qemu\nkernal=\\hv\\vmlinuz\n";
	CATALOG("hv.cfg: a misspelt key", cfg_parse(typo, strlen(typo), &c, err, sizeof err), err,
		"line 2 'kernal=\\hv\\vmlinuz'");
	CHECK_STR(c.options, "exit=qemu");                 /* what came before it is kept */
	char longpath[300];
	memset(longpath, 'a', sizeof longpath);
	memcpy(longpath, "kernel=", 7);
	CATALOG("hv.cfg: a kernel path of 293 characters", cfg_parse(longpath, sizeof longpath, &c, err, sizeof err), err,
		"a path under 128 characters");
	CATALOG("hv.cfg: a line without '='", cfg_parse("options=x\nvmlinuz\n", 18, &c, err, sizeof err), err,
		"line 2 'vmlinuz'");
	CATALOG("hv.cfg: an empty key", cfg_parse("=x", 2, &c, err, sizeof err), err, "line 1 '=x'");
}

/* What tools/mkusb.sh writes without HV_CMDLINE (issue 26: that stick did
 * not boot, "hv.cfg line 2 'options=': not options=, ..."): an empty
 * value is a value, none. */
TEST(hv_cfg_empty_values_are_values)
{
	static struct hv_cfg c;
	char err[256];
	const char *mkusb = "# hv.cfg: options for the hypervisor and its guest\noptions=\ncmdline=\r\nkernel=\ninitrd=\n";
	CHECK_EQ(cfg_parse(mkusb, strlen(mkusb), &c, err, sizeof err), 0);
	CHECK_STR(err, "");
	CHECK_STR(c.options, "");
	CHECK_STR(c.cmdline, "");
	CHECK_STR(c.kernel, "");
	const char *then = "options=\noptions=smp=2\n";
	CHECK_EQ(cfg_parse(then, strlen(then), &c, err, sizeof err), 0);
	CHECK_STR(c.options, "smp=2");
}
