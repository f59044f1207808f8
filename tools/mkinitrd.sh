#!/bin/bash
# Builds the guest's busybox initramfs: tools/mkinitrd.sh OUT.cpio.gz
#
# Contents: a static busybox (with an applet symlink for each command), /init
# (the shell script below), /bin/ipitest (guest/test/ipitest.c, built with
# gcc -static), /lib/ipigen.ko and /lib/hvattack.ko (guest/test/ipigen and
# guest/test/hvattack, kernel modules built by tools/build-ipigen.sh for the
# cached guest kernel). Format: newc cpio, gzip.
#
# What /init does (one "guest: ..." line per step, on the console):
#   mounts /proc, /sys, /dev (devtmpfs), /dev/shm (tmpfs: cyclictest wants it)
#   hv.bench=1      -> "guest: uptime=<contents of /proc/uptime>", power off
#   "guest: cpus=N" (CPUs online)
#   hv.init=shell   -> a shell on the console (power off when it exits)
#   hv.ipigen=R     -> "guest: ipigen rounds=R hv=0|1", insmod /lib/ipigen.ko rounds=R hv=1
#                      (hv=0 with hv.bare=1), its "ipigen: ..." lines on the console
#                      (printk timestamps off meanwhile), rmmod; a failed insmod prints
#                      "guest: ipigen: insmod failed (rc=N)" and the last dmesg lines
#   hv.longline=N   -> N lines "guest: longline I/N <640 characters> end", one a second
#   hv.hammer=MS    -> insmod /lib/hvattack.ko hammer_ms=MS: the IOREGSEL hammer only
#   hv.msiattack=1  -> insmod /lib/hvattack.ko msi_attack=1: forbidden MSI routes
#                      ("hvattack: msi modes dev=... readback=7/7 -> written")
#   hv.uhci=1       -> insmod /lib/usb/uhci-hcd.ko (and usbcore): "guest: uhci level=0|1 irqs=N
#                      device=VID:PID pin=P", a level-triggered IOAPIC pin end to end
#   hv.xhci=1       -> insmod /lib/usb/{usb-common,usbcore,xhci-hcd,xhci-pci}.ko, wait for
#                      a USB device: "guest: xhci msi=0|1 mode=msix|msi|intx vectors=V irqs=N
#                      device=VID:PID" (checks: MSI or MSI-X, interrupts, a device); with
#                      MSI-X, insmod /lib/hvattack.ko msix_show=1: the table as the guest
#                      reads it ("hvattack: msix entry=I addr=... data=... ctrl=..."), then
#                      entry 0 masked (msix_mask=0), the root hub unbound (its device
#                      dropped), entry 0 unmasked a second later (msix_unmask=0:
#                      "hvattack: msix unmask entry=0 pba=0x1 -> 0x0"), the hub bound again:
#                      "guest: xhci pending: irqs=+N device=VID:PID"
#   hv.irqmove=N    -> after hv.xhci=1 hv.uhci=1: their interrupts moved to the other CPU N
#                      times while they flow: "guest: irqmove round=R to=cpuT xhci=+N/+O
#                      uhci=+N/+O effective=..." (each interrupt after a move on the new CPU)
#   hv.irqflood=N   -> after hv.xhci=1 (and hv.uhci=1): N control transfers to each USB
#                      device (guest/test/usbctl.c), each ending in its controller's
#                      interrupt: "guest: irqflood xhci|uhci n=N ok=K irqs=+I total=A ticks=T"
#   hv.uhciforge=H  -> the UHCI's driver unbound, insmod /lib/hvattack.ko uhci_forge=H (its
#                      DMA forging interrupt requests naming IRTE handles H..H+7), bound
#                      again: "guest: uhci forge: FN bound again, device VID:PID"
#   hv.dmaevents=1  -> insmod /lib/hvattack.ko dma_events=1 canary=<hv.canary> dma_high=<top>:
#                      the xHCI's event ring on the canary page, above the guest's memory
#                      and at 0xfee00040 (forged interrupt requests); needs VT-d units
#   hv.msixattack=1 -> insmod /lib/hvattack.ko msix_attack=1 canary=<hv.canary>: the MSI-X
#                      table rewritten unmasked and moved onto the hypervisor's canary page,
#                      register pages and 65 pages (after hv.xhci=1), then the driver checked
#                      (the device dropped and enumerated again by its root hub):
#                      "guest: xhci after the msix attack: irqs=+N device=VID:PID"
#   hv.attack=1     -> the hostile guest: /sys/power/state and mem_sleep shown and
#                      S3 asked for ("guest: attack: ..."), insmod /lib/hvattack.ko
#                      target_apic=N (hv.attack_apic=N, default 1) with its
#                      "hvattack: ..." lines, then the report hypercall 20 times
#                      from user mode ("guest: attack: ... N answered")
#   hv.hpet=1       -> the HPET through busybox devmem (needs iomem=relaxed): "guest: hpet
#                      base=0x... timers=N fsb_cap=0x... timer=T fsb_en=dropped|kept
#                      route=dropped|kept counter64=moves|stuck arat=0|1" (issue 35 item 8;
#                      arat: CPUID.06H:EAX[2], without which Linux would use FSB timers)
#   hv.failcheck=1  -> one check fails on purpose ("guest: check failed: failcheck"):
#                      the guest's verdict (hvcall verdict, at the end) is fail
#   hv.panic=1      -> "guest: panic: ...", then the kernel panics on purpose (echo c >
#                      /proc/sysrq-trigger); with panic=N it reboots N s later, which the
#                      hypervisor takes for the guest's death (result=fail, the run ends)
#   hv.halt=1       -> "guest: halt: ...", then halt -f: every CPU halted with IF = 0, which
#                      the hypervisor takes for the guest's death too
#   hv.reboot=LIST  -> before the rest, one reset (reboot -f) per item of LIST (Linux's reboot
#                      types: kbd, pci, triple, acpi, each with :cold or :warm), the boots counted
#                      in CMOS byte 0x7e: "guest: reboot: boot K of N+1, reset by TYPE MODE (reboot
#                      -f)", and on the last boot "guest: reboot: boot N+1 of N+1: the machine came
#                      back N times"
#   hv.ipivtab=1    -> insmod /lib/ipivtab.ko: "ipivtab: row=K icr=... verdict=..." lines
#                      (before ipigen), for the IPI-virtualization agreement test
#   hv.timercheck=S -> "guest: timercheck jiffies=+J seconds=T hz=H": jiffies against
#                      the clock (both from /proc/timer_list) over S seconds of sleep,
#                      and "guest: idle seconds=T apicN=+E (R/s) ...": each vCPU's VM
#                      exits meanwhile, counted inside one sleeping process (hvcall idle)
#   hv.timertrace=1 -> with hv.timercheck: "guest: idle expiry cpu=N kind=hrtimer|timer|work|wakeup
#                      function=F count=K": the timers that expired in the idle window, the
#                      work items run and the tasks woken (function= their name)
#   hv.hotplug=C    -> insmod /lib/hotplug.ko cycles=C: CPU 1 offline and online C times
#                      ("hotplug: cycle=K ... verdict=ok", "hotplug: nmi-init ... -> online")
#   hv.ifmask=R     -> insmod /lib/ifmask.ko rounds=R: is a call to CPU 1 ever delivered
#                      while it has IF=0? ("ifmask: done ... verdict=ok", Bochs defect 3)
#   hv.ipibench=N   -> insmod /lib/ipibench.ko count=N: the seeds' IPI benchmarks
#                      ("ipibench: roundtrip ..." and "ipibench: micro test=..." lines)
#   hv.cyclictest=L -> "guest: cyclictest loops=L": cyclictest -q -m -S -p 80 -i 1000 -l L
#                      (one thread per CPU), its "T: ..." lines, "guest: cyclictest done rc=N"
#   hv.hackbench=L  -> hackbench -g 2 -f 10 -l L: "guest: hackbench time=S rc=N"
#   hv.waitpkg=1   -> "guest: umwait_control ..." and guest/test/waitpkg.c's line: TPAUSE and
#                      UMWAIT waited, with this vCPU's exits over them and over a spin
#   hv.amx=1       -> "guest: amx flags=..." and guest/test/amx.c's line: a tile matrix
#                      multiply against a C loop, SIGILL before the permission (XFD)
#   runs "ipitest ROUNDS" (ROUNDS from hv.ipirounds=, default 2000; 0 skips it)
#   hv.probe=0xADDR -> reads that page of /dev/mem with dd and prints
#                      "guest: devmem read of 0xADDR failed (rc=N): <error>" or
#                      "guest: devmem read of 0xADDR SUCCEEDED", its first 16 bytes and
#                      "guest: devmem page: N bytes other than 0xff"; else "guest: no hv.probe"
#   hv.noprobe=1    -> no probe even so (the benchmarks: "guest: hv.noprobe=1: ...")
#   "guest: verdict pass|fail", /bin/hvcall verdict (the hypervisor's result= follows it)
#   "guest: done", poweroff -f
#
# Needs: cpio, gzip, gcc (with static glibc: libc6-dev) and a static busybox:
# HV_BUSYBOX, else /bin/busybox when static, else the one tools/guest-kernel.sh
# caches in ${HV_GUEST_CACHE:-/var/cache/hv-guest}/busybox.
# The modules: HV_IPIGEN=path / HV_HVATTACK=path take that file, =none leaves
# the module out; by default tools/build-ipigen.sh builds it (or reuses its
# cached build).
set -euo pipefail

say() { echo "mkinitrd: $*" >&2; }
die() { echo "mkinitrd: error: $*" >&2; exit 1; }

[ $# -eq 1 ] && [ -n "$1" ] || { echo "usage: $0 OUT.cpio.gz" >&2; exit 2; }
OUT=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HV_GUEST_CACHE:-/var/cache/hv-guest}

command -v cpio >/dev/null 2>&1 || die "cpio not found (apt-get install cpio)"
command -v gzip >/dev/null 2>&1 || die "gzip not found (apt-get install gzip)"
CC=${CC:-gcc}
command -v "$CC" >/dev/null 2>&1 || die "$CC not found (apt-get install gcc libc6-dev)"

. "$(dirname "$0")/lib-static.sh"

BUSYBOX=""
for c in "${HV_BUSYBOX:-}" /bin/busybox "$CACHE/busybox"; do
	[ -n "$c" ] || continue
	if is_static "$c"; then BUSYBOX=$c; break; fi
	[ "$c" = "${HV_BUSYBOX:-}" ] && die "HV_BUSYBOX=$c is not a static executable"
done
[ -n "$BUSYBOX" ] || die "no static busybox: /bin/busybox is missing or dynamic and $CACHE/busybox is absent; run tools/guest-kernel.sh (it fetches busybox-static) or apt-get install busybox-static"

SRC="$HERE/guest/test/ipitest.c"
[ -f "$SRC" ] || die "$SRC not found"

STAGE=$(mktemp -d "${TMPDIR:-/tmp}/hv-initrd.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{bin,sbin,dev,proc,sys,tmp,etc,root,lib,usr/bin,usr/sbin}
chmod 1777 "$STAGE/tmp"

# busybox and its applets
cp "$BUSYBOX" "$STAGE/bin/busybox"
chmod 755 "$STAGE/bin/busybox"
n=0
for app in $("$STAGE/bin/busybox" --list); do
	[ "$app" = busybox ] && continue
	[ -e "$STAGE/bin/$app" ] || { ln -s busybox "$STAGE/bin/$app"; n=$((n + 1)); }
done
[ "$n" -gt 50 ] || die "$BUSYBOX --list gave only $n applets"
for app in sh mount mkdir cat dd poweroff; do
	[ -e "$STAGE/bin/$app" ] || die "busybox lacks the '$app' applet"
done

# ipitest
if ! "$CC" -static -O2 -Wall -pthread -o "$STAGE/bin/ipitest" "$SRC" 2>"$STAGE/cc.log"; then
	cat "$STAGE/cc.log" >&2
	die "building ipitest failed (static glibc needed: apt-get install libc6-dev)"
fi
# hvcall: asks the hypervisor for its exit report
if ! "$CC" -static -O2 -Wall -o "$STAGE/bin/hvcall" "$HERE/guest/test/hvcall.c" 2>"$STAGE/cc.log"; then
	cat "$STAGE/cc.log" >&2
	die "building hvcall failed"
fi
# waitpkg: TPAUSE and UMWAIT in user mode (hv.waitpkg=1)
if ! "$CC" -static -O2 -Wall -o "$STAGE/bin/waitpkg" "$HERE/guest/test/waitpkg.c" 2>"$STAGE/cc.log"; then
	cat "$STAGE/cc.log" >&2
	die "building waitpkg failed"
fi
# usbctl: control transfers to a USB device in a loop (hv.irqflood=N)
if ! "$CC" -static -O2 -Wall -o "$STAGE/bin/usbctl" "$HERE/guest/test/usbctl.c" 2>"$STAGE/cc.log"; then
	cat "$STAGE/cc.log" >&2
	die "building usbctl failed"
fi
# amx: a tile matrix multiply in user mode (hv.amx=1), Debian's gcc's AMX intrinsics
if ! "$CC" -static -O2 -Wall -mamx-tile -mamx-int8 -o "$STAGE/bin/amx" "$HERE/guest/test/amx.c" 2>"$STAGE/cc.log"; then
	cat "$STAGE/cc.log" >&2
	die "building amx failed"
fi
rm -f "$STAGE/cc.log"
is_static "$STAGE/bin/ipitest" || die "ipitest is not static"

# The test modules: ipigen.ko sends and counts IPIs (hv.ipigen=ROUNDS),
# hvattack.ko plays the hostile guest (hv.attack=1), ipivtab.ko writes a
# table of ICR values (hv.ipivtab=1), ipibench.ko runs the IPI benchmarks
# (hv.ipibench=N), hotplug.ko takes CPU 1 offline and online again with
# exact IPI counts after each start (hv.hotplug=CYCLES), ifmask.ko checks
# that no interrupt reaches a vCPU with IF=0 (hv.ifmask=ROUNDS).
# HV_IPIGEN / HV_HVATTACK / HV_IPIVTAB / HV_IPIBENCH / HV_HOTPLUG / HV_IFMASK
# name a prebuilt .ko, or "none" to leave it out; by default
# tools/build-ipigen.sh builds each (or reuses its cached build).
mod_notes=""
for mod in ipigen hvattack ipivtab ipibench hotplug ifmask; do
	var=HV_$(echo "$mod" | tr a-z A-Z)
	KO=${!var:-}
	if [ -z "$KO" ]; then
		KO=$(HV_MODULE=$mod "$HERE/tools/build-ipigen.sh") || die "tools/build-ipigen.sh failed for $mod ($var=none builds the initramfs without $mod.ko)"
	fi
	if [ "$KO" = none ]; then
		mod_notes+=", no $mod.ko"
	else
		[ -s "$KO" ] || die "$mod module $KO not found"
		cp "$KO" "$STAGE/lib/$mod.ko"
		mod_notes+=", $mod.ko from $KO"
	fi
done

# The kernel's USB host modules (tools/guest-kernel.sh caches them from the
# kernel's own package: usb-VERSION/), in /lib/usb/ for hv.xhci=1.
# HV_USBMODS=DIR takes them from DIR, =none leaves them out.
KVER=$(awk '{sub(/^vmlinuz-/, "", $2); print $2}' "$CACHE/vmlinuz.version" 2>/dev/null || true)
USBMODS=${HV_USBMODS:-${KVER:+$CACHE/usb-$KVER}}
[ -z "${HV_USBMODS:-}" ] && [ -n "$USBMODS" ] && [ ! -d "$USBMODS" ] && USBMODS=""
if [ -n "$USBMODS" ] && [ "$USBMODS" != none ]; then
	mkdir -p "$STAGE/lib/usb"
	for m in usb-common usbcore xhci-hcd xhci-pci uhci-hcd; do
		cp "$USBMODS/$m.ko" "$STAGE/lib/usb/" || die "$USBMODS/$m.ko not found (run tools/guest-kernel.sh)"
	done
	mod_notes+=", USB host modules from $USBMODS"
else
	mod_notes+=", no USB host modules"
fi

# cyclictest and hackbench from Debian's rt-tests (the host's package: the
# guest is the same Debian release), with the shared libraries they need
# (ldd's list) and the dynamic loader. HV_RTTESTS=none leaves them out.
if [ "${HV_RTTESTS:-}" != none ]; then
	for t in cyclictest hackbench; do
		[ -x "/usr/bin/$t" ] || die "/usr/bin/$t not found (apt-get install rt-tests; HV_RTTESTS=none builds without it)"
		cp "/usr/bin/$t" "$STAGE/usr/bin/$t"
		for lib in $(ldd "/usr/bin/$t" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
			mkdir -p "$STAGE$(dirname "$lib")"
			cp -L "$lib" "$STAGE$lib"
		done
	done
	[ -e "$STAGE/lib64/ld-linux-x86-64.so.2" ] || die "the dynamic loader for rt-tests was not found by ldd"
	mod_notes+=", cyclictest and hackbench (rt-tests)"
fi

# A console node, for kernels without a built-in initramfs providing one
# (needs root; /init also re-opens the console after mounting devtmpfs).
mknod -m 600 "$STAGE/dev/console" c 5 1 2>/dev/null || say "note: cannot mknod /dev/console (not root); relying on the kernel's"
mknod -m 666 "$STAGE/dev/null" c 1 3 2>/dev/null || true

cat >"$STAGE/init" <<'EOF'
#!/bin/sh
# Guest init for the hypervisor's tests (generated by tools/mkinitrd.sh).
set +e
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
umask 022

mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc || echo "guest: mount /proc failed"
mount -t sysfs sysfs /sys || echo "guest: mount /sys failed"
mount -t devtmpfs devtmpfs /dev || echo "guest: mount /dev (devtmpfs) failed"
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm || echo "guest: mount /dev/shm failed"
[ -c /dev/console ] && exec </dev/console >/dev/console 2>&1
echo    # start on a fresh line, whatever the firmware or kernel printed last
echo "guest: init started, mounted /proc /sys /dev"

CMDLINE=$(cat /proc/cmdline 2>/dev/null)
# opt NAME: prints the value of NAME=VALUE from the kernel command line (last wins).
opt() {
	val=""
	found=1
	for w in $CMDLINE; do
		case "$w" in
		"$1"=*) val=${w#*=}; found=0 ;;
		esac
	done
	echo "$val"
	return $found
}

# The run's checks: each failure is said and collected; the verdict goes to
# the hypervisor at the end (hvcall verdict), which prints result=pass only
# when it and its own checks passed.
FAILED=""
check_failed() {
	FAILED="$FAILED $1"
	echo "guest: check failed: $1"
}

# usb_wait GLOB: waits (at most 60 s) for a USB device at GLOB; sets dev
# (empty: none) and id (VID:PID, or none).
usb_wait() {
	dev="" i=0
	while [ -z "$dev" ] && [ $i -lt 60 ]; do
		for d in $1; do
			[ -f "$d/idVendor" ] && dev=$d && break
		done
		[ -n "$dev" ] || { sleep 1; i=$((i + 1)); }
	done
	id=none
	[ -n "$dev" ] && id="$(cat "$dev/idVendor"):$(cat "$dev/idProduct")"
}

# irq_line WHAT REGEX: the first /proc/interrupts line matching REGEX, said
# as "guest: WHAT /proc/interrupts:LINE"; sets line and irqs (its count
# summed over the CPUs).
irq_line() {
	line=$(grep -E "$2" /proc/interrupts | head -n1)
	echo "guest: $1 /proc/interrupts:$line"
	irqs=$(echo "$line" | awk '{ n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }')
}

# xhci_irqs: the xHCI's interrupt lines (MSI and MSI-X: "xhci_hcd", one
# a vector; INTx: "xhci-hcd:usbN"), each said as "guest: xhci
# /proc/interrupts:LINE"; irqs their count over lines and CPUs, vectors
# their number, mode msix, msi or intx from the function's msi_irqs/ in
# sysfs (Linux 6.1 calls both kinds "PCI-MSI" in /proc/interrupts), msi 1
# for either kind.
xhci_irqs() {
	irqs=0 vectors=0 mode=intx msi=0
	grep -E 'xhci[-_]hcd' /proc/interrupts >/tmp/xhci.irqs
	while IFS= read -r line; do
		echo "guest: xhci /proc/interrupts:$line"
		irqs=$((irqs + $(echo "$line" | awk '{ n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }')))
		vectors=$((vectors + 1))
	done </tmp/xhci.irqs
	for f in /sys/bus/pci/drivers/xhci_hcd/*/msi_irqs/*; do
		[ -f "$f" ] || continue
		mode=$(cat "$f")
		msi=1
		break
	done
}

# hvattack_passed: the last "hvattack: done failures=N" of the kernel log
# says 0 (each insmod of hvattack prints one: an earlier pass must not
# stand for the run just made).
hvattack_passed() {
	[ "$(dmesg | grep -o 'hvattack: done failures=[0-9]*' | tail -n1)" = 'hvattack: done failures=0' ]
}

# xhci_replug CMD: the root hub of the USB device $dev unbound from the hub
# driver in the background (its device dropped), CMD run a second later,
# the hub bound again and the device awaited (usb_wait); irqs and the
# others as xhci_irqs sets them, after.
xhci_replug() {
	hubif="$(cat "$dev/busnum")-0:1.0"
	echo "$hubif" >/sys/bus/usb/drivers/hub/unbind &
	sleep 1
	$1
	wait
	echo "$hubif" >/sys/bus/usb/drivers/hub/bind
	dev=""
	usb_wait '/sys/bus/usb/devices/[0-9]*-*'
	xhci_irqs >/dev/null
}

off() {
	sync
	sleep 3      # let the console drain: the UART is slow in emulated time
	poweroff -f
	echo "guest: poweroff -f failed; trying sysrq"
	echo o >/proc/sysrq-trigger 2>/dev/null
	while :; do sleep 1000; done
}

if [ "$(opt hv.bench)" = 1 ]; then
	/bin/hvcall tsc
	echo "guest: uptime=$(cat /proc/uptime)"
	/bin/hvcall verdict pass >/dev/null 2>&1   # the benchmark checks nothing in the guest
	off
fi

count_cpus() {
	online=$(cat /sys/devices/system/cpu/online 2>/dev/null)
	if [ -z "$online" ]; then
		nproc
		return
	fi
	n=0
	oldifs=$IFS
	IFS=,
	for part in $online; do
		case "$part" in
		*-*) n=$((n + ${part#*-} - ${part%-*} + 1)) ;;
		*) n=$((n + 1)) ;;
		esac
	done
	IFS=$oldifs
	echo "$n"
}
echo "guest: cpus=$(count_cpus)"

# hv.reboot=LIST: the guest resets the machine once per item of LIST (a
# comma list of Linux's reboot types, /sys/kernel/reboot/type: kbd, pci,
# triple, acpi, each with an optional :MODE, /sys/kernel/reboot/mode: cold,
# warm) before anything else, then runs on: each boot counts itself in CMOS
# byte 0x7e (0xa0 + the resets done; the RTC's battery-backed RAM, which a
# reset keeps) through /dev/port. Boot K of N+1 says "guest: reboot: boot K
# of N+1, reset by TYPE MODE (reboot -f)" and reboots; the last "guest:
# reboot: boot N+1 of N+1: the machine came back N times", clears the byte
# and goes on to the verdict (issue 48: a reset that Bochs, and the
# hypervisor, survive).
cmos_get() {	# cmos_get INDEX: the byte, in decimal
	printf "\\$(printf %o "$1")" | dd of=/dev/port bs=1 seek=112 count=1 conv=notrunc 2>/dev/null
	dd if=/dev/port bs=1 skip=113 count=1 2>/dev/null | od -An -tu1 | tr -d ' '
}
cmos_set() {	# cmos_set INDEX VALUE
	printf "\\$(printf %o "$1")\\$(printf %o "$2")" | dd of=/dev/port bs=1 seek=112 count=2 conv=notrunc 2>/dev/null
}
RB=$(opt hv.reboot)
if [ -n "$RB" ]; then
	n=$(echo "$RB" | tr ',' ' ' | wc -w)
	v=$(cmos_get 126)
	done_=0
	[ $(( ${v:-0} & 0xf0 )) = 160 ] && done_=$(( v & 15 ))
	k=$((done_ + 1))
	if [ "$done_" -lt "$n" ]; then
		item=$(echo "$RB" | cut -d, -f$k)
		type=${item%%:*} mode=cold
		[ "$item" != "$type" ] && mode=${item#*:}
		echo "guest: reboot: boot $k of $((n + 1)), reset by $type $mode (reboot -f)"
		echo "$type" >/sys/kernel/reboot/type || check_failed reboot-type-$type
		echo "$mode" >/sys/kernel/reboot/mode || check_failed reboot-mode-$mode
		cmos_set 126 $((160 + k))
		[ "$(cmos_get 126)" = $((160 + k)) ] || echo "guest: reboot: CMOS byte 0x7e reads $(cmos_get 126), not $((160 + k))"
		sync
		sleep 1      # the console drains first
		reboot -f
		check_failed reboot-survived
		echo "guest: reboot: still here"
	else
		echo "guest: reboot: boot $k of $((n + 1)): the machine came back $n times"
		cmos_set 126 0
	fi
fi

# hv.failcheck=1: a check that always fails, to show result=fail follows.
[ "$(opt hv.failcheck)" = 1 ] && check_failed failcheck

# hv.panic=1: the kernel panics on purpose (SysRq c); with panic=N on the
# kernel command line it reboots N seconds later, and the hypervisor, which
# traps the reset, ends the run: "hv: guest died: ...", result=fail.
if [ "$(opt hv.panic)" = 1 ]; then
	echo "guest: panic: the kernel panics on purpose (echo c > /proc/sysrq-trigger; panic=$(opt panic))"
	sleep 1      # the console drains first
	echo c >/proc/sysrq-trigger
	check_failed panic-survived
	echo "guest: panic: the kernel is still here"
fi
# hv.halt=1: the kernel halts (halt -f): every CPU stops with interrupts off
# (Linux's machine_halt), which the hypervisor takes for the guest's death.
if [ "$(opt hv.halt)" = 1 ]; then
	echo "guest: halt: every CPU halts with interrupts off (halt -f)"
	sleep 1
	halt -f
	check_failed halt-survived
	echo "guest: halt: still here"
fi

if [ "$(opt hv.init)" = shell ]; then
	echo "guest: hv.init=shell: starting a shell (exit to power off)"
	setsid cttyhack sh || sh
	off
fi

# module NAME ARGS...: insmod /lib/NAME.ko with its KERN_INFO lines on the
# console (printk timestamps off meanwhile), then rmmod; a failure is said as
# "guest: NAME: insmod failed (rc=N)" with the last dmesg lines.
module() {
	name=$1
	shift
	if [ ! -f "/lib/$name.ko" ]; then
		echo "guest: $name: /lib/$name.ko is not in this initramfs"
		return
	fi
	# The console drains first: the tty still sends the lines echoed
	# before, and the module's printk would land inside them (seen: a
	# "guest: xhci msi=..." line cut by hvattack's lines in linux-vtd-bare).
	sleep 1
	dmesg -n 7
	echo N >/sys/module/printk/parameters/time 2>/dev/null
	insmod "/lib/$name.ko" "$@"
	rc=$?
	echo Y >/sys/module/printk/parameters/time 2>/dev/null
	if [ $rc -ne 0 ]; then
		echo "guest: $name: insmod failed (rc=$rc)"
		check_failed "$name-insmod"
		dmesg | tail -n 5 | sed 's/^/guest: dmesg: /'
	else
		rmmod "$name" || echo "guest: $name: rmmod failed"
	fi
}

if [ "$(opt hv.attack)" = 1 ]; then
	echo "guest: attack: /sys/power/state: $(cat /sys/power/state 2>&1)"
	echo "guest: attack: /sys/power/mem_sleep: $(cat /sys/power/mem_sleep 2>&1)"
	if echo deep >/sys/power/mem_sleep 2>/dev/null; then
		echo "guest: attack: S3 (mem_sleep deep) OFFERED"
	else
		echo "guest: attack: S3 (mem_sleep deep) refused by the kernel: not offered"
	fi
	TARGET=$(opt hv.attack_apic)
	module hvattack target_apic="${TARGET:-1}"
	hvattack_passed || check_failed hvattack
	# The report hypercall from user mode, 20 times at once: rate-limited.
	n=0
	i=0
	while [ $i -lt 20 ]; do
		/bin/hvcall report >/dev/null 2>&1 && n=$((n + 1))
		i=$((i + 1))
	done
	echo "guest: attack: user-mode report hypercall 20 times: $n answered"
	sleep 1   # the next report must be allowed again
fi

# hv.xhci=1: the xHCI with MSI (issue 27, the patched Bochs): the USB host
# modules loaded, then, once a device other than a root hub is enumerated
# (at most 60 s), "guest: xhci msi=0|1 irqs=N device=VID:PID" from
# /proc/interrupts (msi=1: the controller's line says PCI-MSI) and sysfs.
if [ "$(opt hv.xhci)" = 1 ]; then
	for m in usb-common usbcore xhci-hcd xhci-pci; do
		insmod "/lib/usb/$m.ko" || { echo "guest: xhci: insmod $m failed"; check_failed "xhci-insmod-$m"; }
	done
	usb_wait '/sys/bus/usb/devices/[0-9]*-*'
	xhci_irqs
	echo "guest: xhci msi=$msi mode=$mode vectors=$vectors irqs=${irqs:-0} device=$id${dev:+ ($(basename "$dev"): $(cat "$dev/product" 2>/dev/null))}"
	[ "$msi" = 1 ] || check_failed xhci-not-msi
	if [ "$mode" = msix ]; then
		module hvattack msix_show=1
		# A pending bit end to end: the driver's entry 0 masked, the
		# device's root hub unbound meanwhile (its device dropped: xHCI
		# commands whose completion events on interrupter 0 are held
		# back), the entry unmasked a second later (the held message comes
		# and completes them), the hub bound again (the device
		# enumerated anew on the same vectors).
		if [ -n "$dev" ]; then
			before=$irqs
			module hvattack msix_mask=0
			xhci_replug "module hvattack msix_unmask=0"
			echo "guest: xhci pending: irqs=+$((irqs - before)) device=$id"
			[ $((irqs - before)) -gt 0 ] || check_failed xhci-no-interrupts-after-unmask
			[ -n "$dev" ] || check_failed xhci-no-device-after-unmask
		fi
	fi
	[ "${irqs:-0}" -gt 0 ] || check_failed xhci-no-interrupts
	[ -n "$dev" ] || { check_failed xhci-no-device; dmesg | grep -iE 'usb|xhci' | tail -n 8 | sed 's/^/guest: dmesg: /'; }
fi

# hv.uhci=1: a level-triggered device interrupt through the virtual IOAPIC
# (issue 27; the PIIX3's UHCI, which Bochs adds whenever USB is compiled
# in: PCI INTD, level, active low): uhci-hcd loaded, then, once a device on
# its bus is enumerated (at most 60 s), "guest: uhci level=0|1 irqs=N
# device=VID:PID pin=P" (level=1: the line says IO-APIC ... fasteoi, the
# level flow; P: its IOAPIC pin).
if [ "$(opt hv.uhci)" = 1 ]; then
	for m in usb-common usbcore uhci-hcd; do
		[ -d "/sys/module/$(echo "$m" | tr - _)" ] && continue
		insmod "/lib/usb/$m.ko" || { echo "guest: uhci: insmod $m failed"; check_failed "uhci-insmod-$m"; }
	done
	bus=$(cat /sys/bus/pci/drivers/uhci_hcd/*/usb*/busnum 2>/dev/null | head -n1)
	usb_wait "/sys/bus/usb/devices/${bus:-none}-1"
	irq_line uhci 'uhci_hcd'
	pin=$(echo "$line" | sed -n 's/.*IO-APIC *\([0-9]*\)-fasteoi.*/\1/p')
	level=0
	[ -n "$pin" ] && level=1
	echo "guest: uhci level=$level irqs=${irqs:-0} device=$id pin=${pin:-none}"
	[ "$level" = 1 ] || check_failed uhci-not-level
	[ "${irqs:-0}" -gt 0 ] || check_failed uhci-no-interrupts
	[ -n "$dev" ] || { check_failed uhci-no-device; dmesg | grep -iE 'usb|uhci' | tail -n 8 | sed 's/^/guest: dmesg: /'; }
fi

# hv.irqmove=N (after hv.xhci=1 and hv.uhci=1; issue 44 item 7): the USB
# controllers' interrupts moved while they flow, N times, alternately to
# the other CPU: each of the xHCI's MSI-X lines and the UHCI's IOAPIC line
# gets the new CPU in /proc/irq/I/smp_affinity (Linux gives it a vector
# there and reprograms the entry: at once for MSI-X, at the next interrupt
# for the IOAPIC's level pin), both root hubs are replugged once so that
# every move is done, then once more while the counts are read: every
# interrupt of that second replug is counted on the new CPU, none on the
# old (a stale remapping entry would still deliver to the old CPU, or with
# the old vector to a CPU where it names no handler). "guest: irqmove
# round=R to=cpuT xhci=+NEW/+OLD uhci=+NEW/+OLD effective=LIST" per round;
# checks irqmove-*.
irq_cpu_counts() { # irq_cpu_counts IRQ: "COUNT0 COUNT1" of that line
	awk -v q="$1:" '$1 == q { print $2, $3 }' /proc/interrupts
}
replug_root() { # replug_root BUSNUM: its root hub unbound and bound again
	echo "$1-0:1.0" >/sys/bus/usb/drivers/hub/unbind
	sleep 1
	echo "$1-0:1.0" >/sys/bus/usb/drivers/hub/bind
	dev=""
	usb_wait "/sys/bus/usb/devices/$1-*"
}
if [ -n "$(opt hv.irqmove)" ]; then
	xbus=$(cat /sys/bus/pci/drivers/xhci_hcd/*/usb*/busnum 2>/dev/null | head -n1)
	ubus=$(cat /sys/bus/pci/drivers/uhci_hcd/*/usb*/busnum 2>/dev/null | head -n1)
	xirqs=$(awk '/xhci_hcd/ { sub(":", "", $1); print $1 }' /proc/interrupts)
	uirq=$(awk '/uhci_hcd/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
	if [ -z "$xbus" ] || [ -z "$ubus" ] || [ -z "$xirqs" ] || [ -z "$uirq" ]; then
		echo "guest: irqmove: no xHCI or UHCI (buses '$xbus' '$ubus', irqs '$xirqs' '$uirq')"
		check_failed irqmove-no-devices
	else
		r=1
		while [ $r -le "$(opt hv.irqmove)" ]; do
			to=$((r % 2)) from=$(((r + 1) % 2))
			for q in $xirqs $uirq; do
				echo $((1 << to)) >/proc/irq/$q/smp_affinity || check_failed "irqmove-affinity-refused-irq$q"
			done
			replug_root "$xbus"; replug_root "$ubus"
			nh0=$(dmesg | grep -c 'No irq handler')
			for q in $xirqs $uirq; do eval "b$q=\"$(irq_cpu_counts "$q")\""; done
			replug_root "$xbus"; replug_root "$ubus"
			xn=0 xo=0 eff=""
			for q in $xirqs $uirq; do
				eval "set -- \$b$q $(irq_cpu_counts "$q")"
				if [ $to = 0 ]; then n=$(($3 - $1)) o=$(($4 - $2)); else n=$(($4 - $2)) o=$(($3 - $1)); fi
				eval "took$q=$(($3 + $4))"
				eff="$eff $q:$(cat /proc/irq/$q/effective_affinity_list 2>/dev/null)"
				if [ "$q" = "$uirq" ]; then un=$n uo=$o; else xn=$((xn + n)) xo=$((xo + o)); fi
			done
			echo "guest: irqmove round=$r to=cpu$to xhci=+$xn/+$xo uhci=+$un/+$uo effective=${eff# }"
			[ "$xn" -gt 0 ] || check_failed "irqmove-xhci-none-on-cpu$to-round$r"
			[ "$xo" = 0 ] || check_failed "irqmove-xhci-on-old-cpu$from-round$r"
			[ "$un" -gt 0 ] || check_failed "irqmove-uhci-none-on-cpu$to-round$r"
			[ "$uo" = 0 ] || check_failed "irqmove-uhci-on-old-cpu$from-round$r"
			# (an MSI-X line that took no interrupt may keep its old
			# CPU: without remapping Linux moves it at its next one)
			for e in $eff; do [ "${e#*:}" = $to ] || [ "$(eval echo \$took${e%%:*})" = 0 ] ||
				check_failed "irqmove-effective-affinity-irq${e%%:*}-round$r"; done
			[ "$(dmesg | grep -c 'No irq handler')" = "$nh0" ] || check_failed "irqmove-no-irq-handler-round$r"
			[ -n "$dev" ] || check_failed "irqmove-no-device-round$r"
			r=$((r + 1))
		done
		dmesg | grep 'No irq handler' | head -n 4 | sed 's/^/guest: dmesg: /'
		awk '$1 == "ERR:" || $1 == "MIS:" { print "guest: irqmove /proc/interrupts:" $0 }' /proc/interrupts
	fi
fi

# hv.irqflood=N (after hv.xhci=1, and hv.uhci=1 for the UHCI; issue 44
# item 8): N GET_DESCRIPTOR control transfers to the xHCI's device and to
# the UHCI's (/bin/usbctl, one after the other, pinned to CPU 0), each
# ending in its controller's completion interrupt: a source of device
# interrupts fast enough for make bench-vtd's thousand samples. "guest:
# irqflood DEV n=N ok=K irqs=+I total=A ticks=T" (A: the device's lines'
# count after it); checks irqflood-DEV-* (every transfer good, at least N
# interrupts counted).
irqflood() { # irqflood NAME SYSFSDEV REGEX
	b=$(grep -E "$3" /proc/interrupts | awk '{ for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }')
	out=$(/bin/usbctl "$2" "$(opt hv.irqflood)" 0 2>&1)
	a=$(grep -E "$3" /proc/interrupts | awk '{ for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }')
	ok=$(echo "$out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p')
	echo "guest: irqflood $1 n=$(opt hv.irqflood) ok=${ok:-0} irqs=+$((a - b)) total=$a ticks=$(echo "$out" | sed -n 's/.* ticks=//p') ($out)"
	[ "${ok:-0}" = "$(opt hv.irqflood)" ] || check_failed "irqflood-$1-transfers"
	[ $((a - b)) -ge "$(opt hv.irqflood)" ] || check_failed "irqflood-$1-interrupts"
}
if [ -n "$(opt hv.irqflood)" ]; then
	xbus=$(cat /sys/bus/pci/drivers/xhci_hcd/*/usb*/busnum 2>/dev/null | head -n1)
	ubus=$(cat /sys/bus/pci/drivers/uhci_hcd/*/usb*/busnum 2>/dev/null | head -n1)
	xd=$(ls -d /sys/bus/usb/devices/${xbus:-none}-* 2>/dev/null | grep -v : | head -n1)
	ud=$(ls -d /sys/bus/usb/devices/${ubus:-none}-* 2>/dev/null | grep -v : | head -n1)
	if [ -z "$xd" ]; then echo "guest: irqflood: no xHCI device (bus '$xbus')"; check_failed irqflood-no-xhci-device
	else irqflood xhci "$xd" 'xhci[-_]hcd'; fi
	if [ "$(opt hv.uhci)" = 1 ]; then
		if [ -z "$ud" ]; then echo "guest: irqflood: no UHCI device (bus '$ubus')"; check_failed irqflood-no-uhci-device
		else irqflood uhci "$ud" 'uhci_hcd'; fi
	fi
fi

# hv.hpet=1: the HPET as the guest sees it (issue 35 item 8). Each timer's
# configuration read for Tn_FSB_INT_DEL_CAP (bit 15); on the last timer (its
# interrupt left disabled) Tn_FSB_EN_CNF (bit 14) and an FSB route (vector
# 0xf1, then 64 bits: an NMI to APIC ID 1) written and read back, then both
# restored: under the hypervisor's trap neither may stick (Bochs's own HPET
# keeps both when they reach it, with or without the capability); and two
# 64-bit reads of the main counter (busybox devmem 64: a REX.W MOV) that
# must differ.
if [ "$(opt hv.hpet)" = 1 ]; then
	hb=$(sed -n 's/^ *\([0-9a-f]*\)-[0-9a-f]* : HPET .*/\1/p' /proc/iomem | head -n1)
	hb=$((0x${hb:-fed00000}))
	hid=$(devmem $hb 32)
	hn=$((((hid >> 8) & 31) + 1))
	hcap=0
	t=0
	while [ $t -lt $hn ]; do
		c=$(devmem $((hb + 0x100 + 0x20 * t)) 32)
		[ $((c & 0x8000)) = 0 ] || hcap=$((hcap | (1 << t)))
		t=$((t + 1))
	done
	t=$((hn - 1))
	hcfg=$((hb + 0x100 + 0x20 * t))
	hroute=$((hb + 0x110 + 0x20 * t))
	c=$(devmem $hcfg 32)
	r=$(devmem $hroute 32)
	devmem $hcfg 32 $(((c | 0x4000) & ~0x4))
	c2=$(devmem $hcfg 32)
	devmem $hroute 32 0xf1
	r2=$(devmem $hroute 32)
	q=$(devmem $hroute 64)
	devmem $hroute 64 0xfee01000000004f1
	q2=$(devmem $hroute 64)
	devmem $hcfg 32 $c
	devmem $hroute 64 $q
	devmem $hroute 32 $r
	k1=$(devmem $((hb + 0xf0)) 64)
	sleep 1
	k2=$(devmem $((hb + 0xf0)) 64)
	fsb=dropped
	[ $((c2 & 0x4000)) = 0 ] || fsb=kept
	route=dropped
	[ $((r2)) != $((0xf1)) ] || [ $((r)) = $((0xf1)) ] || route=kept
	[ "$q2" != "$q" ] && [ $((q2 & 0xffffffff)) = $((0x4f1)) ] && route=kept
	arat=0
	grep -qw arat /proc/cpuinfo && arat=1
	moves=moves
	[ "$k1" != "$k2" ] || moves=stuck
	echo "guest: hpet base=$(printf 0x%x $hb) timers=$hn fsb_cap=$(printf 0x%x $hcap) timer=$t fsb_en=$fsb route=$route counter64=$moves arat=$arat (${k1:-none} ${k2:-none})"
	[ "$hcap" = 0 ] || check_failed hpet-fsb-capability-seen
	[ $fsb = dropped ] || check_failed hpet-fsb-enable-kept
	[ $route = dropped ] || check_failed hpet-fsb-route-kept
	[ $moves = moves ] || check_failed hpet-counter-stuck
fi

# hv.msixattack=1: hvattack's MSI-X attack (after hv.xhci=1), then the
# driver's own vectors: the device dropped and enumerated again by its root
# hub (xhci_replug: xHCI commands and transfers, so interrupts on the
# driver's restored entry).
if [ "$(opt hv.msixattack)" = 1 ]; then
	module hvattack msix_attack=1 canary="$(opt hv.canary)"
	hvattack_passed || check_failed hvattack-msix
	xhci_irqs
	before=$irqs
	[ -n "$dev" ] && xhci_replug :
	xhci_irqs
	echo "guest: xhci after the msix attack: irqs=+$((irqs - before)) mode=$mode device=$id"
	[ $((irqs - before)) -gt 0 ] || check_failed xhci-no-interrupts-after-msix-attack
	[ -n "$dev" ] || check_failed xhci-no-device-after-msix-attack
fi

# xhci_read_at ADDR WHAT: the xHCI reads ADDR by DMA: its command ring
# moved there (CRCR, RCS 1) and doorbell 0 rung, through busybox devmem on
# its BAR (iomem=relaxed). The ring is then gone: run it last. Sets bdf.
xhci_read_at() {
	x=$(grep -l 0x0c0330 /sys/bus/pci/devices/*/class 2>/dev/null | head -n1)
	x=${x%/class}
	bar=$(head -n1 "$x/resource" 2>/dev/null | cut -d' ' -f1)
	if [ -z "$x" ] || [ -z "$bar" ]; then
		echo "guest: vtd $2: no xHCI"
		check_failed "vtd-$2-no-xhci"
		return 1
	fi
	bdf=$(basename "$x")
	caplen=$(devmem "$bar" 8)
	dboff=$(devmem $((bar + 0x14)) 32)
	op=$((bar + caplen))
	echo "guest: vtd $2: xHCI $bdf BAR $bar: command ring to $(printf 0x%x "$1"), doorbell 0"
	devmem $((op + 0x1c)) 32 $(($1 >> 32))
	devmem $((op + 0x18)) 32 $((($1 & 0xffffffc0) | 1))
	devmem $((bar + dboff)) 32 0
	sleep 1
	# A read the IOMMU blocked completes with an error: a host system
	# error (USBSTS.HSE, bit 2), the controller halted (HCH, bit 0).
	sts=$(devmem $((op + 4)) 32)
	echo "guest: vtd $2: xHCI USBSTS $sts after the read: $( [ $((sts & 4)) != 0 ] && echo 'host system error' || echo 'no host system error')"
}

# hv.vtd=1: Linux's own intel-iommu driver on the patched Bochs's VT-d units
# (bare, intel_iommu=on; issue 34): "guest: vtd units=N translated=N
# groups=N ir=..." from sysfs and the boot log (every PCI function in an
# IOMMU group, its unit, DMA and interrupt remapping on; the USB checks
# above ran through them). hv.dmafault=1 then blocks a DMA on purpose: the
# xHCI's command ring moved (CRCR) to IOVA 0x1000, which Linux never maps,
# and doorbell 0 rung (busybox devmem: needs iomem=relaxed); the unit must
# record the read and Linux must report it ("DMAR: [DMA Read ...] Request
# device [00:02.0] fault addr 0x1000 [fault reason 0x06] ..."). Last: it
# leaves the xHCI without its command ring.
if [ "$(opt hv.vtd)" = 1 ]; then
	units=$(ls -d /sys/class/iommu/dmar* 2>/dev/null | wc -l)
	fns=0 grouped=0
	for f in /sys/bus/pci/devices/*; do
		fns=$((fns + 1))
		[ -e "$f/iommu_group" ] && grouped=$((grouped + 1))
	done
	ir=$(dmesg | grep -o 'DMAR-IR: Enabled IRQ remapping in [a-z0-9]* mode' | head -n1)
	echo "guest: vtd units=$units functions=$fns in_groups=$grouped ir=\"${ir:-none}\""
	for f in /sys/bus/pci/devices/*; do
		u=$(basename "$(readlink "$f/iommu" 2>/dev/null)" 2>/dev/null)
		echo "guest: vtd $(basename "$f") class=$(cat "$f/class") unit=${u:-none} group=$(basename "$(readlink "$f/iommu_group" 2>/dev/null)" 2>/dev/null)"
	done
	[ "$units" -ge 1 ] && [ "$grouped" = "$fns" ] || check_failed vtd-not-all-translated
	[ -n "$ir" ] || check_failed vtd-no-interrupt-remapping
	if [ "$(opt hv.dmafault)" = 1 ]; then
		xhci_read_at 0x1000 dmafault && {
			line=$(dmesg | grep -m1 "DMAR: \[DMA Read.*fault addr 0x1000 ")
			dmesg | grep -A1 "DMAR: \[DMA Read.*fault addr 0x1000 " | sed 's/^/guest: vtd dmafault: /'
			case "$line" in
			*"${bdf#0000:}"*"fault reason 0x06"*) echo "guest: vtd dmafault=reported" ;;
			*) echo "guest: vtd dmafault=missing"; check_failed vtd-dmafault-not-reported ;;
			esac
		}
	fi
fi

# hv.uhciforge=H (under the hypervisor, with VT-d units, after hv.uhci=1;
# issue 44 item 7): the UHCI made to write remappable interrupt requests
# naming IRTE handles H to H+7 (hvattack uhci_forge=H: its control
# transfers' data stages written to 0xfee0xxxx), the xHCI's among them: a
# requester forging another's handle, which the unit's source-ID check
# refuses (the runner reads the faults). The UHCI's driver is unbound for
# it and bound again after, its device awaited: "guest: uhci forge: ...".
if [ -n "$(opt hv.uhciforge)" ]; then
	fn=$(ls -d /sys/bus/pci/drivers/uhci_hcd/0000:* 2>/dev/null | head -n1)
	fn=${fn##*/}
	if [ -z "$fn" ]; then
		echo "guest: uhci forge: no UHCI bound to uhci_hcd"
		check_failed uhci-forge-no-device
	else
		echo "$fn" >/sys/bus/pci/drivers/uhci_hcd/unbind
		module hvattack uhci_forge="$(opt hv.uhciforge)"
		hvattack_passed || check_failed hvattack-uhci-forge
		echo "$fn" >/sys/bus/pci/drivers/uhci_hcd/bind
		ubus=$(cat /sys/bus/pci/drivers/uhci_hcd/$fn/usb*/busnum 2>/dev/null | head -n1)
		dev=""
		usb_wait "/sys/bus/usb/devices/${ubus:-none}-1"
		echo "guest: uhci forge: $fn bound again, device ${id}"
		[ -n "$dev" ] || check_failed uhci-forge-device-gone
	fi
fi

# hv.dmaevents=1 (under the hypervisor, with VT-d units; issue 34): the
# xHCI made to write by DMA where the guest must not reach (hvattack
# dma_events=1: its event ring moved onto the canary page, onto the first
# address above every RAM and ACPI range of the guest's memory map, and
# onto 0xfee00040, where its events' DWORDs are forged interrupt
# requests); the unit must block and record each (the runner reads the
# hypervisor's report). Then only hv.dmaattack: the xHCI's event ring is
# not the driver's after.
if [ "$(opt hv.dmaevents)" = 1 ]; then
	top=0
	for m in /sys/firmware/memmap/*; do
		case "$(cat "$m/type" 2>/dev/null)" in
		"System RAM"|ACPI*) e=$(($(cat "$m/end") + 1)); [ "$e" -gt "$top" ] && top=$e ;;
		esac
	done
	top=$(( (top + 0xfff) & ~0xfff ))
	echo "guest: vtd dmaevents: above the guest's memory at $(printf 0x%x "$top")"
	module hvattack dma_events=1 canary="$(opt hv.canary)" dma_high="$top"
	hvattack_passed || check_failed hvattack-dma-events
fi

# hv.dmaattack=1 (under the hypervisor, with VT-d units; issue 34): the
# xHCI's DMA pointed at the hypervisor's page that hv.probe names (its
# command ring moved there): the hypervisor's tables leave that page out, so
# the unit blocks the read and records it (the hypervisor's report, Bochs's
# counts); the guest only says what it did. Needs iomem=relaxed.
if [ "$(opt hv.dmaattack)" = 1 ]; then
	P=$(opt hv.probe)
	if [ -n "$P" ]; then
		xhci_read_at $((P & ~0xfff)) dmaattack && echo "guest: vtd dmaattack: done at $(printf 0x%x $((P & ~0xfff)))"
	else
		echo "guest: vtd dmaattack: no hv.probe page"
		check_failed vtd-dmaattack-no-probe
	fi
fi

# hv.msiattack=1: only hvattack's MSI attack (forbidden routes into the
# first MSI capability: the patched Bochs's xHCI, after hv.xhci=1).
if [ "$(opt hv.msiattack)" = 1 ]; then
	module hvattack msi_attack=1
	hvattack_passed || check_failed hvattack-msi
fi

# hv.hammer=MS: only hvattack's IOREGSEL hammer, MS milliseconds on the last
# CPU while CPU 0 prints (issue 27: the guest's IOAPIC select register is
# its own; nothing of the hypervisor's reads the live one).
HM=$(opt hv.hammer)
if [ -n "$HM" ]; then
	module hvattack hammer_ms="$HM"
	hvattack_passed || check_failed hvattack-hammer
fi

# hv.longline=N: N lines of 640 characters, one a second (the console check:
# each must arrive whole while the hypervisor prints interval reports).
LL=$(opt hv.longline)
if [ -n "$LL" ]; then
	pat=""
	k=0
	while [ $k -lt 32 ]; do pat="${pat}0123456789abcdefghij"; k=$((k + 1)); done
	i=1
	while [ "$i" -le "$LL" ]; do
		echo "guest: longline $i/$LL $pat end"
		sleep 1
		i=$((i + 1))
	done
fi

# hv.ipivtab=1: the ICR table for the IPI-virtualization agreement test.
if [ "$(opt hv.ipivtab)" = 1 ]; then
	module ipivtab
	dmesg | grep -q 'ipivtab: done rows=' || check_failed ipivtab
fi

# The test modules ask the hypervisor for counts (hv=1) unless the guest
# runs bare (hv.bare=1: no hypervisor to answer a VMCALL).
HVARG=1
[ "$(opt hv.bare)" = 1 ] && HVARG=0

# hv.ipibench=N: the seeds' IPI benchmarks (round trip, send-IPI microbenchmark).
IPIBENCH=$(opt hv.ipibench)
if [ -n "$IPIBENCH" ]; then
	module ipibench count="$IPIBENCH" hv=$HVARG
	dmesg | grep -q 'ipibench: done' || check_failed ipibench-ran
	[ "$(dmesg | grep -c 'ipibench: micro test=')" = 5 ] || check_failed ipibench-micro
fi
# hv.cyclictest=LOOPS: timer latency, one SCHED_FIFO thread per CPU, 1 ms period.
CYC=$(opt hv.cyclictest)
if [ -n "$CYC" ]; then
	echo "guest: cyclictest loops=$CYC"
	cyclictest -q -m -S -p 80 -i 1000 -l "$CYC" >/tmp/cyc 2>&1
	rc=$?
	sed 's/^/guest: cyclictest /' /tmp/cyc
	echo "guest: cyclictest done rc=$rc"
	[ $rc = 0 ] || check_failed cyclictest
fi
# hv.hackbench=LOOPS: scheduler and IPI load, 2 groups of 10 senders and 10 receivers.
HB=$(opt hv.hackbench)
if [ -n "$HB" ]; then
	out=$(hackbench -g 2 -f 10 -l "$HB" 2>&1)
	rc=$?
	echo "guest: hackbench time=$(echo "$out" | sed -n 's/^Time: *//p') rc=$rc"
	[ $rc = 0 ] || { echo "$out" | tail -n 3; check_failed hackbench; }
fi

# hv.hotplug=CYCLES: CPU 1 offline and online CYCLES times, each start
# followed by exact IPI counts, then an NMI-NMI-INIT while it is offline.
HOTPLUG=$(opt hv.hotplug)
if [ -n "$HOTPLUG" ]; then
	echo "guest: hotplug cycles=$HOTPLUG"
	# hv.hotplugpin=0: the calls from wherever insmod runs (shows why the
	# module keeps to CPU 0: cycles with verdict=LOCAL).
	PIN=$(opt hv.hotplugpin)
	module hotplug cycles="$HOTPLUG" ${PIN:+pin=$PIN}
	dmesg | grep -q "hotplug: done cycles=$HOTPLUG ok=$HOTPLUG\$" || check_failed hotplug
	dmesg | grep -q 'hotplug: nmi-init .* -> online' || check_failed hotplug-nmi-init
fi

# hv.ifmask=ROUNDS: CPU 1 spins with IF=0 while two IPIs reach it; the
# function call must run only after it turns interrupts on (docs/bochs.md, defect 3).
IFMASK=$(opt hv.ifmask)
if [ -n "$IFMASK" ]; then
	echo "guest: ifmask rounds=$IFMASK"
	module ifmask rounds="$IFMASK"
	dmesg | grep -q "ifmask: done rounds=$IFMASK .* verdict=ok\$" || check_failed ifmask
fi

IPIGEN=$(opt hv.ipigen)
if [ -n "$IPIGEN" ]; then
	echo "guest: ipigen rounds=$IPIGEN hv=$HVARG"
	module ipigen rounds="$IPIGEN" hv=$HVARG
	dmesg | grep -q 'ipigen: done' || check_failed ipigen-ran
	dmesg | grep -q 'verdict=MISMATCH' && check_failed ipigen-verdicts
fi

# hv.timercheck=S: jiffies against the clock over S seconds of sleep, from
# /proc/timer_list ("jiffies: N" and "now at N nsecs"): the tick rate they give.
TCHECK=$(opt hv.timercheck)
if [ -n "$TCHECK" ]; then
	tl() { awk '/^now at/ { ns = $3 } /^jiffies:/ && !j { j = $2 } END { print j, ns }' /proc/timer_list; }
	# The vCPUs' x2APIC IDs, for the idle figure: exits per second while asleep.
	# Counted inside one process asleep (hvcall idle): the execs around it
	# (awk, sleep, hvcall: a static program's start costs dozens of CPUID
	# exits) stay out of the window.
	ids=$(awk '/^apicid/ { print $3 }' /proc/cpuinfo | tr '\n' ' ')
	# The guest's own local timer interrupts (LOC, per CPU) around the window.
	loc() { awk '$1 == "LOC:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) printf "%s ", $i }' /proc/interrupts; }
	# hv.timertrace=1: which timers expire in the window (the kernel's
	# timer and workqueue trace events): what the idle figure is made of.
	TT=/sys/kernel/tracing TTON=$(opt hv.timertrace)
	if [ "$TTON" = 1 ]; then
		[ -d $TT/events ] || mount -t tracefs nodev $TT 2>/dev/null
		if [ -w $TT/tracing_on ]; then
			echo 0 > $TT/tracing_on; echo > $TT/trace
			for e in timer/hrtimer_expire_entry timer/timer_expire_entry workqueue/workqueue_execute_start sched/sched_wakeup; do
				echo 1 > $TT/events/$e/enable
			done
		else
			echo "guest: timertrace: no tracefs"
		fi
	fi
	set -- $(tl)
	j0=$1 n0=$2
	l0=$(loc)
	# (tracing_on by the shell's own echo: no process started in the window)
	[ "$TTON" = 1 ] && [ -w $TT/tracing_on ] && echo 1 > $TT/tracing_on
	idle=$(/bin/hvcall idle "$TCHECK" $ids 2>/dev/null)
	[ "$TTON" = 1 ] && [ -w $TT/tracing_on ] && echo 0 > $TT/tracing_on
	l1=$(loc)
	if [ "$TTON" = 1 ] && [ -w $TT/tracing_on ]; then
		# One line per CPU and function, the most frequent first.
		awk '/ (hrtimer_expire_entry|timer_expire_entry|workqueue_execute_start|sched_wakeup): / {
			c = $0; sub(/^[^[]*\[/, "", c); sub(/\].*/, "", c);
			f = $0;
			if ($0 ~ / sched_wakeup: /) { if (!sub(/.*comm=/, "", f)) next; sub(/ pid=.*/, "", f); gsub(/ /, "_", f) }
			else { if (!sub(/.*function[= ]/, "", f)) next; sub(/[ ,].*/, "", f) }
			e = ($0 ~ /workqueue_execute_start/) ? "work" : ($0 ~ /hrtimer_expire_entry/) ? "hrtimer" : ($0 ~ / sched_wakeup: /) ? "wakeup" : "timer";
			n[(c + 0) " " e " " f]++ }
			END { for (k in n) { split(k, a, " "); printf "guest: idle expiry cpu=%d kind=%s function=%s count=%d\n", a[1], a[2], a[3], n[k] } }' \
			$TT/trace | sort -t= -k5 -nr | head -n 30
	fi
	set -- $(tl)
	tc=$(echo "$j0 $n0 $1 $2" | awk '{ dj = $3 - $1; dn = ($4 - $2) / 1e9;
		printf "guest: timercheck jiffies=+%d seconds=%.3f hz=%.1f\n", dj, dn, (dn > 0 ? dj / dn : 0) }')
	echo "$tc"
	# HZ is 250 in Debian's kernel: the tick must be within 1 %.
	echo "$tc" | awk '{ split($NF, h, "="); exit !(h[2] >= 247.5 && h[2] <= 252.5) }' || check_failed timercheck-hz
	[ -n "$idle" ] && echo "$idle"
	echo "$l0|$l1" | awk -F'|' '{ n = split($1, a, " "); split($2, b, " "); line = "guest: idle timer interrupts";
		for (i = 1; i <= n; i++) line = line sprintf(" cpu%d=+%d", i - 1, b[i] - a[i]); print line }'
fi

# hv.waitpkg=1: TPAUSE and UMONITOR/UMWAIT in user mode, their waits and
# this vCPU's exits over them (guest/test/waitpkg.c); the kernel's own
# IA32_UMWAIT_CONTROL as it set it.
if [ "$(opt hv.waitpkg)" = 1 ]; then
	echo "guest: umwait_control max_time=$(cat /sys/devices/system/cpu/umwait_control/max_time 2>/dev/null || echo none) c02=$(cat /sys/devices/system/cpu/umwait_control/enable_c02 2>/dev/null || echo none)"
	/bin/waitpkg 200 20000 || check_failed waitpkg
fi

# hv.amx=1: TILELOADD, TDPBSSD, TILESTORED against a C loop, SIGILL before
# the permission (XFD), tile data across 50 switches (guest/test/amx.c);
# the kernel's own word on AMX.
if [ "$(opt hv.amx)" = 1 ]; then
	echo "guest: amx flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep '^amx' | tr '\n' ',')"
	/bin/amx 50 || check_failed amx
fi

ROUNDS=$(opt hv.ipirounds)
[ -n "$ROUNDS" ] || ROUNDS=2000
if [ "$ROUNDS" = 0 ]; then
	echo "guest: ipitest skipped (hv.ipirounds=0)"
else
	echo "guest: running ipitest $ROUNDS"
	/bin/ipitest "$ROUNDS"
	rc=$?
	[ $rc -eq 0 ] || { echo "guest: ipitest exited with rc=$rc"; check_failed ipitest; }
fi

PROBE=$(opt hv.probe)
if [ "$(opt hv.noprobe)" = 1 ]; then
	echo "guest: hv.noprobe=1: no /dev/mem probe"
elif [ -z "$PROBE" ]; then
	echo "guest: no hv.probe"
else
	ADDR=$((PROBE))
	HEX=$(printf '0x%x' "$ADDR")
	echo "guest: reading /dev/mem page at $HEX (dd bs=4096 skip=$((ADDR / 4096)) count=1)"
	sleep 1   # the console drains first: the hypervisor's own lines share the UART
	dd if=/dev/mem of=/tmp/probe.bin bs=4096 skip=$((ADDR / 4096)) count=1 2>/tmp/probe.err
	rc=$?
	got=$(wc -c </tmp/probe.bin 2>/dev/null)
	if [ $rc -ne 0 ]; then
		msg=$(grep -v 'records' /tmp/probe.err | tail -n 1)
		[ -n "$msg" ] || msg=$(tail -n 1 /tmp/probe.err)
		echo "guest: devmem read of $HEX failed (rc=$rc): $msg"
		dmesg | tail -n 3 | sed 's/^/guest: dmesg: /'
	elif [ "${got:-0}" -ne 4096 ]; then
		echo "guest: devmem read of $HEX failed (rc=$rc): short read, ${got:-0} bytes"
	else
		echo "guest: devmem read of $HEX SUCCEEDED"
		echo "guest: devmem bytes: $(hexdump -n 16 -e '16/1 "%02x " ""' /tmp/probe.bin)"
		other=$(hexdump -v -e '/1 "%02x\n"' /tmp/probe.bin | grep -vc '^ff$')
		echo "guest: devmem page: $other bytes other than 0xff"
		[ "$other" = 0 ] || check_failed devmem-hypervisor-page-readable
	fi
fi

# Each IOAPIC line's count, last: "guest: ioapic pin=P count=N
# flow=edge|fasteoi NAME" (the runner holds them against the hypervisor's
# per-pin counts).
awk '/IO-APIC/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i
	for (; i <= NF; i++) if ($i ~ /^[0-9]+-(edge|fasteoi)$/) { split($i, p, "-"); print "guest: ioapic pin=" p[1] " count=" n " flow=" p[2] " " $NF; break } }' /proc/interrupts

# (The exit report on the guest's request is made by ipigen.ko, from the
# kernel; the one at power-off comes by itself.) The console drains first:
# the hypervisor's line about the verdict shares the UART.
sleep 1
if [ -z "$FAILED" ]; then
	echo "guest: verdict pass"
	sleep 1
	/bin/hvcall verdict pass
else
	echo "guest: verdict fail:$FAILED"
	sleep 1
	/bin/hvcall verdict fail
fi
echo "guest: done"
off
EOF
chmod 755 "$STAGE/init"

mkdir -p "$(dirname "$OUT")"
TMP_OUT="$OUT.tmp.$$"
# Reproducible: every file's time fixed, names sorted, no name or time in
# the gzip header, so that the same inputs give the same bytes (a boot in
# Bochs replays exactly: tools/run-bochs.sh).
find "$STAGE" -mindepth 1 -exec touch -h -d @946684800 {} +
(cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible --quiet) | gzip -9 -n >"$TMP_OUT" ||
	{ rm -f "$TMP_OUT"; die "cpio | gzip failed"; }
mv -f "$TMP_OUT" "$OUT"
say "wrote $OUT ($(wc -c <"$OUT") bytes; busybox from $BUSYBOX, $n applets, ipitest$mod_notes)"
