/* usbctl SYSFSDEV N [CPU]: N control transfers to one USB device, each a
 * GET_DESCRIPTOR of its 18-byte device descriptor through usbfs, one
 * after the other (issue 44 item 8: a device interrupt source fast enough
 * for a thousand samples a run). Each transfer ends with the host
 * controller's completion interrupt (the xHCI's transfer event on its
 * MSI-X line, the UHCI's IOC on its level pin), so N transfers make at
 * least N device interrupts. SYSFSDEV is the device's directory in
 * /sys/bus/usb/devices (its busnum and devnum name /dev/bus/usb/BBB/DDD,
 * made from its dev file when devtmpfs has not); CPU, if given, the CPU
 * the loop is pinned to. Prints
 *   usbctl: dev=BBB/DDD n=N ok=K bad=B first=XX.. ticks=T
 * (bad: transfers that failed or returned another descriptor than the
 * first; ticks: TSC ticks over the loop). Exit 0 when all N were good. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <x86intrin.h>
#include <linux/usbdevice_fs.h>

static int read_num(const char *dir, const char *name, unsigned *a, unsigned *b)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = b ? fscanf(f, "%u:%u", a, b) : fscanf(f, "%u", a);
	fclose(f);
	return n == (b ? 2 : 1) ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: usbctl SYSFSDEV N [CPU]\n");
		return 2;
	}
	long n = strtol(argv[2], NULL, 0);
	if (n <= 0 || n > 10000000) {
		fprintf(stderr, "usbctl: bad count %s\n", argv[2]);
		return 2;
	}
	if (argc > 3) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[3]), &set);
		if (sched_setaffinity(0, sizeof set, &set)) {
			perror("usbctl: sched_setaffinity");
			return 2;
		}
	}
	unsigned bus, devnum, maj, min;
	if (read_num(argv[1], "busnum", &bus, NULL) || read_num(argv[1], "devnum", &devnum, NULL) ||
	    read_num(argv[1], "dev", &maj, &min)) {
		fprintf(stderr, "usbctl: %s: no busnum, devnum or dev\n", argv[1]);
		return 2;
	}
	char node[64];
	snprintf(node, sizeof node, "/dev/bus/usb/%03u/%03u", bus, devnum);
	int fd = open(node, O_RDWR);
	if (fd < 0 && errno == ENOENT) {
		char d[64];
		snprintf(d, sizeof d, "/dev/bus/usb/%03u", bus);
		mkdir("/dev/bus", 0755);
		mkdir("/dev/bus/usb", 0755);
		mkdir(d, 0755);
		if (mknod(node, S_IFCHR | 0600, makedev(maj, min)) == 0)
			fd = open(node, O_RDWR);
	}
	if (fd < 0) {
		fprintf(stderr, "usbctl: open %s: %s\n", node, strerror(errno));
		return 2;
	}
	unsigned char first[18] = { 0 }, buf[18];
	long ok = 0, bad = 0;
	unsigned long long t0 = __rdtsc();
	for (long i = 0; i < n; i++) {
		struct usbdevfs_ctrltransfer c = {
			.bRequestType = 0x80,        /* device to host, standard, device */
			.bRequest = 6,               /* GET_DESCRIPTOR */
			.wValue = 0x0100,            /* the device descriptor, index 0 */
			.wIndex = 0,
			.wLength = sizeof buf,
			.timeout = 5000,             /* ms */
			.data = buf,
		};
		memset(buf, 0, sizeof buf);
		int r = ioctl(fd, USBDEVFS_CONTROL, &c);
		if (r != (int) sizeof buf || buf[1] != 1) {
			bad++;
			continue;
		}
		if (!ok)
			memcpy(first, buf, sizeof buf);
		if (memcmp(first, buf, sizeof buf))
			bad++;
		else
			ok++;
	}
	unsigned long long t = __rdtsc() - t0;
	printf("usbctl: dev=%03u/%03u n=%ld ok=%ld bad=%ld first=%02x%02x%02x%02x ticks=%llu\n", bus, devnum,
	       n, ok, bad, first[0], first[1], first[2], first[3], t);
	close(fd);
	return ok == n ? 0 : 1;
}
