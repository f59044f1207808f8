#!/usr/bin/env bash
# mknested.sh OUT.cpio.lz4 PAYLOAD_DIR: L1's root filesystem for the nested
# level (issue 49): Debian's kernel booted bare on the patched Bochs, with
# kvm_intel nested=1, Debian's QEMU, SeaBIOS and OVMF, bash, busybox and the
# hypervisor's images, as one initramfs (newc cpio, LZ4 legacy frames).
#
# Everything comes from Debian's packages, none installed on the host:
#   - the dependency closure (Depends and Pre-Depends, recursively: apt-cache
#     depends --recurse) of qemu-system-x86, ovmf and bash is fetched with
#     apt-get download into $HV_NESTED_CACHE/debs (default
#     /var/cache/hv-nested/debs) and unpacked with dpkg-deb -x into a
#     staging tree (cached by the list of .debs);
#   - of that tree only what runs goes in: qemu-system-x86_64 and bash, and
#     the shared libraries the dynamic loader resolves for them inside the
#     tree (ld.so --list --library-path: a library found outside the tree is
#     an error, not a silent use of the host's), QEMU's firmware directory
#     (/usr/share/qemu with SeaBIOS's and iPXE's files), OVMF;
#   - kvm.ko, kvm-intel.ko and irqbypass.ko from the guest kernel's own
#     package (linux-image-VERSION, VERSION from tools/guest-kernel.sh's
#     cache);
#   - the host's static busybox (tools/guest-kernel.sh provides one) for
#     /init and the shell tools.
# PAYLOAD_DIR is copied to /hv: the hypervisor's tree as a user has it
# (tools/run-qemu-kvm.sh, build/usb.img, build/hv.iso), prepared by
# tools/run-nested.sh, which also writes /init (NESTED_INIT names the file).
#
# Why an initramfs and not a disk image: Debian's kernel builds ATA, SCSI
# disks and ext4 as modules (CONFIG_ATA=m, CONFIG_BLK_DEV_SD=m,
# CONFIG_EXT4_FS=m), so a disk would need an initramfs anyway, plus a
# filesystem image made without mounting; an initramfs is one more GRUB
# `initrd` line, the path every Linux test here already takes. Its costs:
# L1's RAM holds the whole tree (about 130 MB unpacked, most of it the
# stick image's empty FAT space), and the kernel unpacks it at boot (LZ4,
# not gzip: it decompresses several times faster, and that runs at Bochs's
# speed; the kernel takes only LZ4's legacy frame format, lz4 -l).
set -euo pipefail

say() { echo "mknested: $*" >&2; }
die() { echo "mknested: error: $*" >&2; exit 1; }

[ $# -eq 2 ] || { echo "usage: $0 OUT.cpio.lz4 PAYLOAD_DIR" >&2; exit 2; }
OUT=$1 PAYLOAD=$2
[ -d "$PAYLOAD" ] || die "payload directory $PAYLOAD missing"
[ -n "${NESTED_INIT:-}" ] && [ -f "$NESTED_INIT" ] || die "NESTED_INIT must name L1's init script"
HERE=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${HV_NESTED_CACHE:-/var/cache/hv-nested}
GCACHE=${HV_GUEST_CACHE:-/var/cache/hv-guest}
DEBS=$CACHE/debs
ROOTPKGS="qemu-system-x86 ovmf bash"

for t in apt-get apt-cache dpkg-deb cpio lz4 readelf; do
	command -v $t >/dev/null || die "$t not found (apt-get install apt dpkg cpio lz4 binutils)"
done
. "$HERE/tools/lib-static.sh"
BUSYBOX=""
for c in "${HV_BUSYBOX:-}" /bin/busybox "$GCACHE/busybox"; do
	[ -n "$c" ] && is_static "$c" && { BUSYBOX=$c; break; }
done
[ -n "$BUSYBOX" ] || die "no static busybox (run tools/guest-kernel.sh)"
KVER=$(awk '{sub(/^vmlinuz-/, "", $2); print $2}' "$GCACHE/vmlinuz.version" 2>/dev/null || true)
[ -n "$KVER" ] || die "no guest kernel cached in $GCACHE (run tools/guest-kernel.sh)"

# ---- the packages ----
mkdir -p "$DEBS"
# The closure: every package a root package depends on, recursively (both
# sides of an alternative: more than needed, harmless, the loader picks).
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
	--no-replaces --no-enhances $ROOTPKGS 2>/dev/null | grep -v '^ ' | grep -v '^<' | sort -u)
[ "$(echo "$closure" | wc -l)" -gt 20 ] || die "apt-cache depends gave no closure for $ROOTPKGS (apt-get update first?)"
closure+=$'\n'"linux-image-$KVER"
# The candidates' file names, in one query (from an empty directory: apt-get
# download leaves out what is already where it runs).
empty=$(mktemp -d)
files=$(cd "$empty" && apt-get -o APT::Sandbox::User=root download --print-uris $closure 2>/dev/null | awk '{print $2}')
rmdir "$empty"
[ "$(echo "$files" | wc -w)" = "$(echo "$closure" | wc -w)" ] || die "apt-get download --print-uris named $(echo "$files" | wc -w) files for $(echo "$closure" | wc -w) packages"
need=()
debs=()
for f in $files; do
	[ -f "$DEBS/$f" ] || need+=("${f%%_*}")
	debs+=("$DEBS/$f")
done
if [ ${#need[@]} -gt 0 ]; then
	say "downloading ${#need[@]} packages into $DEBS"
	(cd "$DEBS" && apt-get -q -o APT::Sandbox::User=root download "${need[@]}" >&2) || die "apt-get download failed"
fi
for f in "${debs[@]}"; do [ -f "$f" ] || die "$f was not downloaded"; done
key=$(printf '%s\n' "${debs[@]##*/}" | sha256sum | cut -c1-12)
STAGE=$CACHE/stage-$key
if [ ! -f "$STAGE/.done" ]; then
	say "unpacking ${#debs[@]} packages into $STAGE"
	rm -rf "$STAGE"; mkdir -p "$STAGE"
	for d in "${debs[@]}"; do dpkg-deb -x "$d" "$STAGE" || die "dpkg-deb -x $d failed"; done
	touch "$STAGE/.done"
	for old in "$CACHE"/stage-*; do [ "$old" = "$STAGE" ] || rm -rf "$old"; done
fi

ROOT=$(mktemp -d "${TMPDIR:-/tmp}/hv-nested-root.XXXXXX")
trap 'rm -rf "$ROOT"' EXIT
mkdir -p "$ROOT"/{bin,sbin,dev,proc,sys,tmp,etc,root,run,usr/bin,usr/sbin,usr/share,lib/modules}
chmod 1777 "$ROOT/tmp"

# ---- an ELF and the libraries it needs, all from the staging tree ----
LIBPATH=$STAGE/lib/x86_64-linux-gnu:$STAGE/usr/lib/x86_64-linux-gnu:$STAGE/lib:$STAGE/usr/lib
LDSO=$STAGE/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[ -x "$LDSO" ] || LDSO=$(readlink -f "$STAGE/lib64/ld-linux-x86-64.so.2")
[ -x "$LDSO" ] || die "no dynamic loader in the staging tree (libc6)"
copy_path() {   # copy_path /ABS/PATH: from the staging tree to the root, symbolic links kept and followed
	local p=$1
	while :; do
		mkdir -p "$ROOT$(dirname "$p")"
		[ -e "$ROOT$p" ] || [ -L "$ROOT$p" ] || cp -a "$STAGE$p" "$ROOT$p"
		[ -L "$STAGE$p" ] || break
		local t; t=$(readlink "$STAGE$p")
		case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
	done
}
copy_elf() {    # copy_elf /ABS/PATH: the program and every library the loader resolves for it
	local f=$1 out l
	[ -f "$STAGE$f" ] || die "$f is not in the staging tree"
	copy_path "$f"
	out=$("$LDSO" --inhibit-cache --library-path "$LIBPATH" --list "$STAGE$f") || die "the loader cannot resolve $f: $out"
	while read -r l; do
		case $l in
		*"not found"*) die "$f: ${l%% *} not found in the staging tree" ;;
		*" => "/*)
			l=${l#* => }; l=${l%% (*}
			case $l in "$STAGE"/*) ;; *) die "$f: $l resolved outside the staging tree (a Depends missing?)" ;; esac
			copy_path "${l#"$STAGE"}" ;;
		esac
	done <<<"$out"
}
copy_path /lib64/ld-linux-x86-64.so.2
copy_path /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
copy_elf /usr/bin/qemu-system-x86_64
copy_elf /bin/bash
# QEMU's own modules: only TCG (a run without KVM, to compare: -accel tcg);
# -display none and -net none need no other. Its firmware files: /usr/share/qemu (links into /usr/share/seabios and
# the iPXE ROMs), and OVMF.
for d in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu /usr/share/ovmf; do
	[ -d "$STAGE$d" ] || die "$d missing in the staging tree"
	mkdir -p "$ROOT$(dirname "$d")"
	cp -a "$STAGE$d" "$ROOT$d"
done
copy_elf /usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so
rm -rf "$ROOT/usr/share/qemu/keymaps"   # -display none: no keyboard maps
"$ROOT/lib64/ld-linux-x86-64.so.2" --library-path "$ROOT/lib/x86_64-linux-gnu:$ROOT/usr/lib/x86_64-linux-gnu" \
	"$ROOT/usr/bin/qemu-system-x86_64" --version >/dev/null 2>&1 || die "the staged qemu-system-x86_64 does not run on the host"

# ---- the kernel's KVM modules ----
KSRC=$STAGE/lib/modules/$KVER/kernel
for m in virt/lib/irqbypass arch/x86/kvm/kvm arch/x86/kvm/kvm-intel; do
	[ -f "$KSRC/$m.ko" ] || die "linux-image-$KVER has no $m.ko"
	mkdir -p "$ROOT/lib/modules/$KVER/kernel/$(dirname "$m")"
	cp "$KSRC/$m.ko" "$ROOT/lib/modules/$KVER/kernel/$m.ko"
done

# ---- busybox, /etc, the payload, /init ----
cp "$BUSYBOX" "$ROOT/bin/busybox"
for app in $("$ROOT/bin/busybox" --list); do
	[ "$app" = busybox ] && continue
	for d in bin usr/bin sbin; do [ -e "$ROOT/$d/$app" ] && continue 2; done
	ln -s /bin/busybox "$ROOT/bin/$app"
done
echo "root:x:0:0:root:/root:/bin/sh" >"$ROOT/etc/passwd"
echo "root:x:0:" >"$ROOT/etc/group"
echo "kvm:x:104:" >>"$ROOT/etc/group"
mkdir -p "$ROOT/hv"
cp -a "$PAYLOAD/." "$ROOT/hv/"
cp "$NESTED_INIT" "$ROOT/init"
chmod 755 "$ROOT/init"
mknod -m 600 "$ROOT/dev/console" c 5 1 2>/dev/null || true

mkdir -p "$(dirname "$OUT")"
(cd "$ROOT" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | lz4 -q -l -9 >"$OUT.tmp" ||
	{ rm -f "$OUT.tmp"; die "cpio | lz4 failed"; }
mv -f "$OUT.tmp" "$OUT"
say "wrote $OUT ($(( $(stat -c %s "$OUT") / 1048576 )) MiB; unpacked $(du -sm "$ROOT" | cut -f1) MiB: qemu-system-x86_64 with $(find "$ROOT" -name '*.so*' | wc -l) libraries, bash, OVMF, SeaBIOS, kvm-intel.ko of $KVER, busybox)"
