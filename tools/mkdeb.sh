#!/usr/bin/env bash
# mkdeb.sh OUTDIR HV.ELF HV.EFI: the Debian binary package "hv" (make deb),
# with dpkg-deb alone (no debhelper, no network), from the files in
# tools/deb/. Prints the .deb's path. Its version: 0~gitDATE.TIME.COMMIT from
# the checkout's last commit (HV_DEB_VERSION overrides; 0~unknown outside
# git). What it installs: tools/deb/hv.7, the man page it ships.
set -euo pipefail
out=$1 elf=$2 efi=$3
here=$(cd "$(dirname "$0")" && pwd) src=$(cd "$(dirname "$0")/.." && pwd)
d=$here/deb
die() { echo "mkdeb: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || die "dpkg-deb missing (apt-get install dpkg)"
grub-file --is-x86-multiboot2 "$elf" 2>/dev/null || die "$elf is not a Multiboot2 image"
if [ -n "${HV_DEB_VERSION:-}" ]; then ver=$HV_DEB_VERSION
elif git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
  ver=0~git$(TZ=UTC git -C "$src" log -1 --format=%cd --date=format-local:%Y%m%d.%H%M%S).$(git -C "$src" log -1 --format=%h)
else ver=0~unknown; fi
maint=${HV_DEB_MAINTAINER:-$(git -C "$src" log -1 --format='%an <%ae>' 2>/dev/null || echo 'hv maintainers <hv@localhost>')}
date=$(git -C "$src" log -1 --format=%aD 2>/dev/null || date -R)
# Reproducible: every file's time is the commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}
r=$(mktemp -d)
trap 'rm -rf "$r"' EXIT
chmod 755 "$r"
umask 022
install -d "$r/DEBIAN" "$r/boot" "$r/usr/lib/hv" "$r/usr/sbin" "$r/etc/grub.d" "$r/etc/default/grub.d" \
           "$r/etc/kernel/postinst.d" "$r/etc/kernel/postrm.d" "$r/etc/initramfs/post-update.d" \
           "$r/usr/share/doc/hv" "$r/usr/share/man/man7" "$r/usr/share/man/man8"
# Stripped (build/hv.elf keeps the symbols and the debug information).
strip --strip-unneeded --remove-section=.comment -o "$r/boot/hv-$ver" "$elf"
chmod 644 "$r/boot/hv-$ver"
grub-file --is-x86-multiboot2 "$r/boot/hv-$ver" || die "the stripped $elf is no Multiboot2 image"
install -m 644 "$efi" "$r/usr/lib/hv/hv.efi"
# hvcall, for the guest (hvcall report): static, as the test initramfs has it.
${CC:-gcc} -static -O2 -Wall -Werror -o "$r/usr/lib/hv/hvcall" "$src/guest/test/hvcall.c" || die "building hvcall failed"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$r/usr/lib/hv/hvcall"
install -m 755 "$d/20_linux_hv" "$r/etc/grub.d/20_linux_hv"
install -m 644 "$d/hv.cfg" "$r/etc/default/grub.d/hv.cfg"
# The UEFI path (hv-efi, man 8 hv-efi): the tool, its settings, the hooks.
install -m 755 "$d/hv-efi" "$r/usr/sbin/hv-efi"
install -m 644 "$d/hv-efi.default" "$r/etc/default/hv-efi"
for h in etc/kernel/postinst.d/zz-hv-efi etc/kernel/postrm.d/zz-hv-efi etc/initramfs/post-update.d/hv-efi; do
  install -m 755 "$d/hv-efi.hook" "$r/$h"
done
sed "s/@VERSION@/$ver/" "$d/hv-efi.8" | gzip -9n > "$r/usr/share/man/man8/hv-efi.8.gz"
sed "s/@VERSION@/$ver/" "$d/hv.7" | gzip -9n > "$r/usr/share/man/man7/hv.7.gz"
sed "s/@YEAR@/$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)/" "$d/copyright" > "$r/usr/share/doc/hv/copyright"
install -d "$r/usr/share/lintian/overrides"
install -m 644 "$d/lintian-overrides" "$r/usr/share/lintian/overrides/hv"
printf 'hv (%s) unstable; urgency=medium\n\n  * make deb, from the hv tree at\n    %s.\n\n -- %s  %s\n' \
  "$ver" "$(git -C "$src" log -1 --format=%H 2>/dev/null || echo unknown)" "$maint" "$date" |
  gzip -9n > "$r/usr/share/doc/hv/changelog.gz"
install -m 755 "$d/postinst" "$d/prerm" "$d/postrm" "$r/DEBIAN/"
(cd "$r" && find etc -type f -printf '/%p\n' | LC_ALL=C sort) > "$r/DEBIAN/conffiles"
(cd "$r" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum) > "$r/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$r" | cut -f1)
cat > "$r/DEBIAN/control" <<CTL
Package: hv
Version: $ver
Architecture: amd64
Maintainer: $maint
Installed-Size: $size
Recommends: grub-pc | grub-efi-amd64
Suggests: efibootmgr
Section: admin
Priority: optional
Description: thin hypervisor for Intel VT-x, booted by GRUB before Linux
 hv takes every core into VMX root operation and runs the installed Linux,
 unmodified, on all of them, bringing IPIs, EOIs, timer and device
 interrupts to it without VM exits where the CPU allows, and says on the
 serial console how well it did.
 .
 This package puts the Multiboot2 hypervisor in /boot and a GRUB script
 that adds an entry per installed kernel (man 7 hv); Linux's own entries
 stay the default until GRUB_DEFAULT=hv is set in
 /etc/default/grub.d/hv.cfg. For machines that boot it from the UEFI
 firmware instead, hv-efi (man 8 hv-efi) puts the UEFI application, its
 configuration and the newest kernel on the EFI system partition and makes
 an NVRAM boot entry with efibootmgr; kernel hooks keep the copies current.
CTL
find "$r" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
deb=$out/hv_${ver}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$r" "$deb" >/dev/null || die "dpkg-deb failed"
echo "$deb"
