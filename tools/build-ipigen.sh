#!/bin/bash
# Builds the guest test module guest/test/ipigen/ipigen.ko for the guest kernel
# that tools/guest-kernel.sh caches, and prints the built module's path on
# stdout (everything else goes to stderr):
#
#   KO=$(tools/build-ipigen.sh [KERNEL])        KERNEL default: $CACHE/vmlinuz
#
# The kernel's release (6.1.0-NN-amd64) and Debian version (6.1.x-y) are read
# from the bzImage's version string (setup header field kernel_version). The
# module is built against Debian's linux-headers-<release> (which pulls
# linux-headers-<abi>-common, linux-kbuild-6.1 and the gcc the kernel was
# built with); as root the script installs it with apt-get, without root it
# names what is missing. The .ko (debug info stripped) is cached as
# $CACHE/ipigen-<release>-<hash of the sources>.ko and reused while neither
# the kernel nor the sources change. CACHE: HV_GUEST_CACHE, default
# /var/cache/hv-guest. HV_MODULE=NAME builds guest/test/NAME/NAME.ko instead
# (the same layout: NAME.c, Kbuild, Makefile), e.g. HV_MODULE=hvattack.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
MOD=${HV_MODULE:-ipigen}
SRCDIR=$HERE/guest/test/$MOD
CACHE=${HV_GUEST_CACHE:-/var/cache/hv-guest}

say() { echo "build-ipigen: $*" >&2; }
die() { echo "build-ipigen: error: $*" >&2; exit 1; }

for f in "$MOD.c" Kbuild Makefile; do
	[ -f "$SRCDIR/$f" ] || die "$SRCDIR/$f not found"
done
for t in sha256sum dd od objcopy strip make; do
	command -v "$t" >/dev/null 2>&1 || die "'$t' not found (apt-get install coreutils binutils make)"
done

# ---- the kernel and its version ----
KERNEL=${1:-$CACHE/vmlinuz}
if [ ! -s "$KERNEL" ] && [ $# -eq 0 ]; then
	say "no $KERNEL yet; running tools/guest-kernel.sh"
	KERNEL=$("$HERE/tools/guest-kernel.sh") || die "tools/guest-kernel.sh failed: no guest kernel to build against"
fi
[ -s "$KERNEL" ] || die "kernel $KERNEL not found"
[ "$(dd if="$KERNEL" bs=1 skip=514 count=4 2>/dev/null)" = "HdrS" ] || die "$KERNEL is not a bzImage (no HdrS magic)"
# Setup header: kernel_version (u16 at 0x20e) is the string's offset - 0x200.
voff=$(od -An -tu2 -j $((0x20e)) -N2 "$KERNEL" | tr -d ' ')
[ -n "$voff" ] && [ "$voff" -gt 0 ] || die "$KERNEL has no kernel_version string in its setup header"
VSTR=$(dd if="$KERNEL" bs=1 skip=$((voff + 0x200)) count=256 2>/dev/null | tr '\0' '\n' | head -n1)
KREL=${VSTR%% *}
case "$KREL" in
[0-9]*.*-*) ;;
*) die "cannot read the kernel release from $KERNEL (version string: '$VSTR')" ;;
esac
# "... #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16)": the package version.
DEBVER=$(sed -n 's/.* Debian \([0-9][^ ]*\) .*/\1/p' <<<"$VSTR")
say "guest kernel $KREL${DEBVER:+ (Debian $DEBVER)}"

# ---- the cached module ----
HASH=$(cd "$SRCDIR" && cat "$MOD.c" Kbuild Makefile ../hvguest.h | sha256sum | cut -c1-12)
KO=$CACHE/$MOD-$KREL-$HASH.ko
vermagic() { objcopy -O binary --only-section=.modinfo "$1" /dev/stdout 2>/dev/null | tr '\0' '\n' | sed -n 's/^vermagic=//p'; }
if [ -s "$KO" ] && [ "$(vermagic "$KO" | cut -d' ' -f1)" = "$KREL" ]; then
	say "using cached $KO"
	echo "$KO"
	exit 0
fi
mkdir -p "$CACHE" 2>/dev/null || die "cannot create cache directory $CACHE (set HV_GUEST_CACHE)"
[ -w "$CACHE" ] || die "cache directory $CACHE is not writable (set HV_GUEST_CACHE)"

# ---- the headers ----
HPKG=linux-headers-$KREL
KDIR=/usr/src/linux-headers-$KREL
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
if ! installed "$HPKG" || [ ! -f "$KDIR/Makefile" ]; then
	command -v apt-get >/dev/null 2>&1 || die "$HPKG is not installed and there is no apt-get (this needs a Debian bookworm host)"
	if [ "$(id -u)" != 0 ]; then
		die "$HPKG is not installed; as root: apt-get install --no-install-recommends $HPKG (or run this script as root)"
	fi
	cand() { apt-cache policy "$HPKG" 2>/dev/null | awk '/Candidate:/ {print $2}'; }
	c=$(cand)
	if [ -z "$c" ] || [ "$c" = "(none)" ] || { [ -n "$DEBVER" ] && [ "$c" != "$DEBVER" ]; }; then
		say "apt has ${c:-no} candidate for $HPKG; running apt-get update"
		apt-get update -qq >&2 || die "apt-get update failed (no network to the Debian mirror?)"
		c=$(cand)
	fi
	if [ -z "$c" ] || [ "$c" = "(none)" ]; then
		die "apt finds no $HPKG: the Debian mirror has no headers for the cached kernel $KREL (if the mirror moved on to a newer kernel: HV_GUEST_REFRESH=1 tools/guest-kernel.sh, then run again)"
	fi
	pin=""
	if [ -n "$DEBVER" ]; then
		if [ "$c" = "$DEBVER" ]; then pin="=$DEBVER"; else
			say "warning: the kernel is Debian $DEBVER but apt offers $HPKG $c (same ABI $KREL; building anyway)"
		fi
	fi
	say "installing $HPKG$pin (with its -common headers, linux-kbuild and the kernel's gcc)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$HPKG$pin" >/dev/null ||
		die "apt-get install $HPKG$pin failed"
	[ -f "$KDIR/Makefile" ] || die "$HPKG installed but $KDIR/Makefile is missing"
fi
# The compiler the kernel was built with (Debian's headers name it in .kernelvariables).
KCC=$(sed -n 's/^CC *=.*)\(gcc-[0-9][0-9.]*\) *$/\1/p' "$KDIR/.kernelvariables" 2>/dev/null | head -n1)
if [ -n "$KCC" ] && ! command -v "$KCC" >/dev/null 2>&1; then
	die "the kernel's compiler $KCC is missing (as root: apt-get install $KCC, or reinstall $HPKG)"
fi

# ---- build ----
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hv-$MOD.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp "$SRCDIR/$MOD.c" "$SRCDIR/Kbuild" "$SRCDIR/Makefile" "$SRCDIR/../hvguest.h" "$WORK/"
say "building $MOD.ko against $KDIR"
if ! make -C "$KDIR" M="$WORK" modules >"$WORK/build.log" 2>&1; then
	cat "$WORK/build.log" >&2
	die "building $MOD.ko failed (log above)"
fi
grep -E 'warning:' "$WORK/build.log" >&2 || true
[ -s "$WORK/$MOD.ko" ] || die "the build left no $MOD.ko"
strip --strip-debug "$WORK/$MOD.ko"
vm=$(vermagic "$WORK/$MOD.ko")
[ "${vm%% *}" = "$KREL" ] || die "$MOD.ko has vermagic '$vm', not $KREL"
cp "$WORK/$MOD.ko" "$KO.tmp.$$"
mv -f "$KO.tmp.$$" "$KO"
say "built $KO (vermagic $vm)"
echo "$KO"
