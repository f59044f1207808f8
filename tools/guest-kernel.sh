#!/bin/bash
# Makes sure the guest cache (default /var/cache/hv-guest, override with
# HV_GUEST_CACHE) holds 'vmlinuz': Debian bookworm's stock kernel, the package
# linux-image-amd64 depends on (linux-image-6.1.0-NN-amd64). The .deb is fetched
# with 'apt-get download' and unpacked with 'dpkg-deb -x': nothing is installed.
# Also caches that kernel's USB host modules (usb-VERSION/: usb-common,
# usbcore, xhci-hcd, xhci-pci, uhci-hcd; tools/mkinitrd.sh puts them in for
# hv.xhci=1 and hv.uhci=1).
# Also makes sure a static busybox is available for tools/mkinitrd.sh: /bin/busybox
# when it is static, else busybox-static's binary unpacked into the cache.
#
# Prints the kernel's path on stdout (everything else goes to stderr), so
#   KERNEL=$(bash tools/guest-kernel.sh)
# works. A cached kernel is reused; delete the cache (or set HV_GUEST_REFRESH=1)
# to fetch again.
set -euo pipefail

CACHE=${HV_GUEST_CACHE:-/var/cache/hv-guest}
META_PKG=linux-image-amd64

say() { echo "guest-kernel: $*" >&2; }
die() { echo "guest-kernel: error: $*" >&2; exit 1; }

# A bzImage has "HdrS" at offset 0x202.
is_bzimage() {
	[ -s "$1" ] || return 1
	[ "$(dd if="$1" bs=1 skip=514 count=4 2>/dev/null)" = "HdrS" ]
}

. "$(dirname "$0")/lib-static.sh"

need_tool() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found: this script needs a Debian host with apt ($2)"
}

# Runs 'apt-get update' once when apt-cache has no candidate for a package.
apt_updated=0
ensure_candidate() {
	local pkg=$1 cand
	cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		if [ "$apt_updated" = 0 ]; then
			say "apt knows no candidate for $pkg; running apt-get update"
			if [ "$(id -u)" != 0 ]; then
				die "apt-get update needs root (run it once as root, or run this script as root)"
			fi
			apt-get update -qq >&2 || die "apt-get update failed (no network to the Debian mirror?)"
			apt_updated=1
			cand=$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
		fi
	fi
	if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
		die "no installable candidate for package $pkg (is this Debian bookworm with main enabled?)"
	fi
}

# Downloads one package into the current directory and unpacks it into ./root.
fetch_and_unpack() {
	local pkg=$1 deb
	ensure_candidate "$pkg"
	say "downloading $pkg"
	apt-get -o APT::Sandbox::User=root download "$pkg" >&2 || die "apt-get download $pkg failed"
	deb=$(ls -1 "${pkg}"_*.deb 2>/dev/null | head -n1)
	[ -n "$deb" ] || die "apt-get download $pkg left no .deb"
	mkdir -p root
	dpkg-deb -x "$deb" root || die "dpkg-deb -x $deb failed"
}

mkdir -p "$CACHE" || die "cannot create cache directory $CACHE"
[ -w "$CACHE" ] || die "cache directory $CACHE is not writable (set HV_GUEST_CACHE)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hv-guest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# ---- the kernel ----
if [ "${HV_GUEST_REFRESH:-0}" = 1 ] || ! is_bzimage "$CACHE/vmlinuz"; then
	need_tool apt-get "to download packages"
	need_tool apt-cache "to find the kernel package"
	need_tool dpkg-deb "to unpack packages"
	ensure_candidate "$META_PKG"
	# linux-image-amd64 is a metapackage; its Depends names the real image.
	KPKG=$(apt-cache depends "$META_PKG" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ {print $2; exit}')
	[ -n "$KPKG" ] || die "cannot tell which kernel package $META_PKG depends on (apt-cache depends $META_PKG)"
	say "kernel package: $KPKG"
	(cd "$WORK" && fetch_and_unpack "$KPKG")
	SRC=$(ls -1 "$WORK"/root/boot/vmlinuz-* 2>/dev/null | head -n1)
	[ -n "$SRC" ] || die "$KPKG has no /boot/vmlinuz-*"
	is_bzimage "$SRC" || die "$SRC is not a bzImage (no HdrS magic)"
	cp "$SRC" "$CACHE/vmlinuz.tmp"
	mv -f "$CACHE/vmlinuz.tmp" "$CACHE/vmlinuz"
	echo "$KPKG $(basename "$SRC")" >"$CACHE/vmlinuz.version"
	say "cached $(basename "$SRC") as $CACHE/vmlinuz"
else
	say "using cached $CACHE/vmlinuz ($(cat "$CACHE/vmlinuz.version" 2>/dev/null || echo 'version unknown'))"
fi

# ---- the USB host modules of the same kernel (tools/mkinitrd.sh, hv.xhci=1, hv.uhci=1) ----
# usb-common, usbcore, xhci-hcd, xhci-pci and uhci-hcd from the kernel's own package,
# in $CACHE/usb-VERSION/ (VERSION: the kernel's, as 'vmlinuz.version' says).
KVER=$(awk '{sub(/^vmlinuz-/, "", $2); print $2}' "$CACHE/vmlinuz.version" 2>/dev/null || true)
USB_MODS="usb/common/usb-common usb/core/usbcore usb/host/xhci-hcd usb/host/xhci-pci usb/host/uhci-hcd"
if [ -n "$KVER" ]; then
	have=1
	for m in $USB_MODS; do [ -s "$CACHE/usb-$KVER/$(basename "$m").ko" ] || have=0; done
	if [ $have = 0 ]; then
		need_tool apt-get "to download packages"
		need_tool dpkg-deb "to unpack packages"
		say "caching the USB host modules of linux-image-$KVER"
		# The package the kernel step just unpacked, if it did (a fresh
		# cache): not downloaded twice.
		if [ ! -d "$WORK/root/lib/modules/$KVER" ]; then
			rm -rf "$WORK/root"
			(cd "$WORK" && fetch_and_unpack "linux-image-$KVER")
		fi
		mkdir -p "$CACHE/usb-$KVER.tmp"
		for m in $USB_MODS; do
			cp "$WORK/root/lib/modules/$KVER/kernel/drivers/$m.ko" "$CACHE/usb-$KVER.tmp/" ||
				die "linux-image-$KVER has no drivers/$m.ko"
		done
		rm -rf "$CACHE/usb-$KVER"; mv "$CACHE/usb-$KVER.tmp" "$CACHE/usb-$KVER"
		rm -rf "$WORK/root"
	fi
fi

# ---- a static busybox for the initramfs ----
if is_static /bin/busybox; then
	say "static busybox: /bin/busybox"
elif is_static "$CACHE/busybox"; then
	say "static busybox: $CACHE/busybox (cached)"
else
	need_tool apt-get "to download packages"
	need_tool dpkg-deb "to unpack packages"
	say "/bin/busybox is missing or not static; fetching busybox-static"
	rm -rf "$WORK/root"
	(cd "$WORK" && fetch_and_unpack busybox-static)
	BB=""
	for c in "$WORK/root/bin/busybox" "$WORK/root/usr/bin/busybox"; do
		[ -f "$c" ] && BB=$c && break
	done
	[ -n "$BB" ] || die "busybox-static has no bin/busybox"
	is_static "$BB" || die "busybox-static's busybox is not static?"
	cp "$BB" "$CACHE/busybox.tmp"
	chmod 755 "$CACHE/busybox.tmp"
	mv -f "$CACHE/busybox.tmp" "$CACHE/busybox"
	say "static busybox: $CACHE/busybox"
fi

echo "$CACHE/vmlinuz"
