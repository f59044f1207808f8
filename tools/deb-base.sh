#!/usr/bin/env bash
# Builds (once) and caches the installed Debian system tools/deb-disk.sh puts
# on a disk: bookworm by debootstrap from this machine's Debian archive
# (tools/lib-mirror.sh), with systemd, udev, initramfs-tools, GRUB for BIOS
# (grub-pc), efibootmgr (hv-efi's NVRAM entry), Debian's perf (linux-perf:
# the guest's perf stat and perf record, tools/deb-check-init) and the older of the two
# newest Debian 6.1 kernel ABIs (linux-image-6.1.0-N-amd64), and the newer
# one's .deb kept beside it for the kernel upgrade the test makes. Cache: HV_DEB_CACHE (default /var/cache/hv-deb):
#   root/         the system (a directory; the disk is made from a copy)
#   debs/         the upgrade kernel's .deb
#   kernels       "OLD NEW": the two kernel releases
# Prints the cache's path. About 5 minutes the first time, then nothing.
set -euo pipefail
CACHE=${HV_DEB_CACHE:-/var/cache/hv-deb}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib-mirror.sh"
say() { echo "deb-base: $*" >&2; }
die() { echo "deb-base: error: $*" >&2; exit 1; }
# (a cache from before the UEFI path, without efibootmgr, or from before
# perf, is built again)
ready() { [ -f "$CACHE/root/.hv-ready" ] && [ -x "$CACHE/root/usr/bin/efibootmgr" ] && [ -x "$CACHE/root/usr/bin/perf" ] && [ -s "$CACHE/kernels" ] &&
          ls "$CACHE"/debs/linux-image-*.deb >/dev/null 2>&1; }
if ready; then echo "$CACHE"; exit 0; fi
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || die "no Debian mirror in this machine's apt sources (set HV_DEBIAN_MIRROR)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"; flock 9
if ready; then echo "$CACHE"; exit 0; fi
# The two newest kernel ABIs this machine's apt knows (main and its updates).
mapfile -t abis < <(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -V | tail -n2)
[ ${#abis[@]} = 2 ] || die "apt knows fewer than two linux-image-6.1.0-N-amd64 packages (${abis[*]:-none}); run apt-get update"
old=${abis[0]#linux-image-} new=${abis[1]#linux-image-}
say "kernels: $old installed, $new for the upgrade"
r=$CACHE/root.tmp
rm -rf "$CACHE/debs"
t0=$SECONDS
# (A debootstrap that ended is kept for the steps after it.)
if [ ! -f "$r/.hv-debootstrapped" ]; then
  rm -rf "$r"
  debootstrap --variant=minbase --include=systemd-sysv,udev,kmod,initramfs-tools,zstd bookworm "$r" "$MIRROR" >&2 ||
    die "debootstrap failed"
  touch "$r/.hv-debootstrapped"
fi
# The machine's own apt sources, so the chroot's apt reaches the updates too.
rm -f "$r/etc/apt/sources.list"
cp /etc/apt/sources.list "$r/etc/apt/" 2>/dev/null || true
cp /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources "$r/etc/apt/sources.list.d/" 2>/dev/null || true
rm -f "$r"/etc/apt/sources.list.d/*disabled*
mount -t proc proc "$r/proc"; mount --bind /dev "$r/dev"; mount -t sysfs sys "$r/sys"
trap 'umount "$r/proc" "$r/dev" "$r/sys" 2>/dev/null || true' EXIT
inroot() { chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
inroot apt-get update -q >&2 || die "apt-get update in the chroot failed"
echo hv-deb > "$r/etc/hostname"
inroot apt-get install -y -q --no-install-recommends grub-pc efibootmgr linux-perf "linux-image-$old" >&2 ||
  die "installing grub-pc, efibootmgr, linux-perf and $old failed"
mkdir -p "$CACHE/debs"
inroot sh -c "cd /tmp && apt-get download -q linux-image-$new" >&2 || die "apt-get download linux-image-$new failed"
mv "$r"/tmp/linux-image-*.deb "$CACHE/debs/"
inroot apt-get clean
umount "$r/proc" "$r/dev" "$r/sys"; trap - EXIT
rm -f "$r/.hv-debootstrapped"; touch "$r/.hv-ready"
echo "$old $new" > "$CACHE/kernels"
rm -rf "$CACHE/root"; mv "$r" "$CACHE/root"
say "built in $((SECONDS - t0)) s"
echo "$CACHE"
