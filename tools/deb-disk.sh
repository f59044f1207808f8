#!/usr/bin/env bash
# deb-disk.sh make IMG DEB: a disk image holding the installed Debian
# system of tools/deb-base.sh (cached), as an owner would have it: MBR
# partition 1 ext4, root and /boot on it; partition 2 (type 0xEF) the EFI
# system partition, FAT32, mounted at /boot/efi; GRUB installed to the
# disk's boot sector by the system's own grub-install (the image on a loop
# device); the package DEB installed with apt inside, the test's settings in
# /etc/default/grub.d/hv-test.cfg (DEB_TEST_HV, DEB_TEST_LINUX: hv's and the
# kernel's extra options) and the test's init (tools/deb-check-init) in
# /usr/local/sbin/hv-check (and DEB_PERF_WORK, a workload for its perf
# checks, in /usr/local/bin/hv-pmutest); then update-grub, as root would type it; then
# the UEFI path: the test's settings in /etc/default/hv-efi (DEB_TEST_EFI_HV,
# DEB_TEST_EFI_LINUX) and 'hv-efi install --removable': its efibootmgr
# writes the Boot#### entry into the test's NVRAM directory (below), and
# hv.efi is also the ESP's fallback loader \EFI\BOOT\BOOTX64.EFI.
# deb-disk.sh kernel IMG: installs the newer kernel's .deb the cache keeps
#   (dpkg -i; Debian's kernel hooks run update-initramfs and update-grub).
# deb-disk.sh remove IMG: apt-get remove hv.
# deb-disk.sh cfg IMG: prints the disk's /boot/grub/grub.cfg.
# deb-disk.sh esp IMG: the ESP's files (read from the FAT with mtools) with
#   their md5sums and sizes, the root's kernels, initramfs and hv.efi
#   likewise, and the ESP's \hv\hv.cfg.
# deb-disk.sh nvram IMG OUT.fd: OVMF's variable file with the variables
#   efibootmgr set in the chroot (tools/ovmf-vars.py); lists them.
# Each step prints what it ran; a failure exits non-zero naming it.
# The image's size is a whole number of 16x63 cylinders (Bochs's geometry:
# tools/run-bochs.sh reads it from the size).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "deb-disk: $*" >&2; }
die() { echo "deb-disk: error: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (losetup, mount, chroot)"
op=${1:?usage: deb-disk.sh make|kernel|remove|cfg IMG [DEB]} img=${2:?IMG}
cyl=516096   # 16 heads x 63 sectors x 512 bytes
mnt= loop= link=
cleanup() {
  [ -z "$link" ] || rm -f "$link"
  if [ -n "$mnt" ]; then
    for m in boot/efi dev/pts dev proc sys ""; do umount "$mnt/$m" 2>/dev/null || true; done
    rmdir "$mnt" 2>/dev/null || true
  fi
  [ -z "$loop" ] || losetup -d "$loop" 2>/dev/null || true
}
trap cleanup EXIT
# The disk on a loop device, its partition as ${loop}p1 (partx adds it
# where the kernel's own scan at losetup -P did not).
loop_up() {
  loop=$(losetup -f --show -P "$img") || die "losetup $img failed"
  [ -b "${loop}p1" ] || partx -a "$loop" 2>/dev/null || true
  [ -b "${loop}p2" ] || partx -a "$loop" 2>/dev/null || true
  [ -b "${loop}p1" ] && [ -b "${loop}p2" ] || die "no partition devices ${loop}p1, ${loop}p2 (losetup -P, partx -a)"
}
attach() {
  loop_up
  mnt=$(mktemp -d /tmp/hv-deb-mnt.XXXXXX)
  mount "${loop}p1" "$mnt" || die "mount ${loop}p1 failed"
}
# The ESP. This machine's kernel may have no vfat (mount fails: "unknown
# filesystem type"), so the chroot's /boot/efi is a directory on the root
# file system and esp_sync writes it onto the FAT partition with mtools
# after each step: a new FAT32 (volume ID 4856-4553, the fstab's UUID), the
# directory's files copied (so a file hv-efi removed is gone there too).
# hv-efi is told its ESP need not be FAT (HV_EFI_ANY_FS=1).
export HV_EFI_ANY_FS=1
esp_sync() {
  mkfs.vfat -F 32 -i 48564553 -n HV-ESP "${loop}p2" >/dev/null || die "mkfs.vfat (the ESP) failed"
  if [ -n "$(ls -A "$mnt/boot/efi")" ]; then
    (cd "$mnt/boot/efi" && mcopy -s -Q -m -i "${loop}p2" ./* ::/) || die "mcopy to the ESP failed"
  fi
  say "the ESP (${loop}p2): $(cd "$mnt/boot/efi" && find . -type f | wc -l) files from /boot/efi"
}
# /dev/disk/by-uuid/UUID, which udev makes on a real machine: GRUB's
# 10_linux writes root=UUID=... only when it exists (the bare entries).
chroot_up() {
  local u
  u=$(blkid -s UUID -o value "${loop}p1")
  if [ -n "$u" ] && [ ! -e "/dev/disk/by-uuid/$u" ]; then
    mkdir -p /dev/disk/by-uuid && ln -s "../../${loop#/dev/}p1" "/dev/disk/by-uuid/$u" && link=/dev/disk/by-uuid/$u
  fi
  mount --bind /dev "$mnt/dev" && mount --bind /dev/pts "$mnt/dev/pts" &&
    mount -t proc proc "$mnt/proc" && mount -t sysfs sys "$mnt/sys" || die "mounting /dev, /proc, /sys in the chroot failed"
}
# (hv-efi in the chroot: the ESP's device, and the test's NVRAM, below)
inroot() {
  say "# $*"
  chroot "$mnt" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HV_EFI_ESP_DEVICE="${loop}p2" ${efivars:+EFIVARFS_PATH=$efivars/} "$@" >&2
}
# The machine's NVRAM for efibootmgr in the chroot, where there is no
# efivarfs: a directory on the disk standing for it (libefivar reads and
# writes EFIVARFS_PATH as efivarfs, a file NAME-GUID per variable), which
# 'deb-disk.sh nvram' writes into OVMF's variable file for the UEFI boot.
efivars=/var/lib/hv-test-efivars
case $op in
make)
  deb=${3:?deb-disk.sh make IMG DEB}
  [ -f "$deb" ] || die "$deb: no such package"
  cache=$("$here/deb-base.sh") || die "tools/deb-base.sh failed"
  root=$cache/root
  rm -f "$img"
  truncate -s $((${DEB_DISK_CYLS:-6242} * cyl)) "$img"
  # The partition table: a bootable Linux partition from 1 MiB, then the
  # ESP (DEB_ESP_MIB, default 192 MiB) to the end.
  esp=$(( ${DEB_ESP_MIB:-192} * 2048 ))
  sectors=$(( $(stat -c %s "$img") / 512 - 2048 - esp ))
  python3 - "$img" "$sectors" "$esp" <<'PY'
import struct, sys
img, n, esp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mbr = bytearray(512)
mbr[440:444] = struct.pack('<I', 0x68766465)          # the disk's signature ("hvde")
mbr[446:462] = struct.pack('<B3sB3sII', 0x80, b'\xfe\xff\xff', 0x83, b'\xfe\xff\xff', 2048, n)
mbr[462:478] = struct.pack('<B3sB3sII', 0x00, b'\xfe\xff\xff', 0xef, b'\xfe\xff\xff', 2048 + n, esp)
mbr[510:512] = b'\x55\xaa'
with open(img, 'r+b') as f:
    f.write(mbr)
PY
  loop_up
  mkfs.ext4 -q -L hv-deb "${loop}p1" || die "mkfs.ext4 failed"
  mnt=$(mktemp -d /tmp/hv-deb-mnt.XXXXXX)
  mount "${loop}p1" "$mnt" || die "mount ${loop}p1 failed"
  say "copying the system ($(du -sh "$root" | cut -f1)) from $root"
  cp -a "$root/." "$mnt/"
  rm -f "$mnt/.hv-ready"
  uuid=$(blkid -s UUID -o value "${loop}p1")
  echo "UUID=$uuid / ext4 errors=remount-ro 0 1" > "$mnt/etc/fstab"
  echo "UUID=4856-4553 /boot/efi vfat umask=0077 0 1" >> "$mnt/etc/fstab"
  mkdir -p "$mnt/boot/efi"
  chroot_up
  # GRUB to the disk's boot sector (core.img in the gap before the
  # partition), as grub-pc's own setup does on a real disk.
  inroot grub-install --target=i386-pc "$loop" || die "grub-install $loop failed"
  inroot update-grub || die "update-grub (before hv) failed"
  cp "$deb" "$mnt/tmp/" && inroot apt-get install -y -q "/tmp/$(basename "$deb")" || die "apt-get install $(basename "$deb") failed"
  rm -f "$mnt/tmp/$(basename "$deb")"
  install -m 755 "$here/deb-check-init" "$mnt/usr/local/sbin/hv-check"
  # (DEB_PERF_WORK: the static guest/test/pmutest the init's perf runs time)
  [ -z "${DEB_PERF_WORK:-}" ] || install -m 755 "$DEB_PERF_WORK" "$mnt/usr/local/bin/hv-pmutest"
  # The machine's owner: GRUB on the serial console, hv the default.
  cat > "$mnt/etc/default/grub.d/hv-test.cfg" <<CFG
# written by tools/deb-disk.sh: the test's settings
GRUB_TIMEOUT=1
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB_CMDLINE_LINUX="console=ttyS0,115200"
GRUB_DEFAULT=hv
GRUB_CMDLINE_HV="${DEB_TEST_HV:-}"
GRUB_CMDLINE_LINUX_HV="${DEB_TEST_LINUX:-init=/usr/local/sbin/hv-check}"
CFG
  inroot update-grub || die "update-grub failed"
  # The UEFI path, as the owner of a machine booting hv.efi from its firmware.
  cat >> "$mnt/etc/default/hv-efi" <<CFG
# added by tools/deb-disk.sh: the test's settings
HV_EFI_OPTIONS="${DEB_TEST_EFI_HV:-}"
HV_EFI_CMDLINE="${DEB_TEST_EFI_LINUX:-console=ttyS0,115200 init=/usr/local/sbin/hv-check}"
CFG
  mkdir -p "$mnt$efivars"
  inroot hv-efi install --removable || die "hv-efi install --removable failed"
  esp_sync
  ;;
kernel)
  cache=$("$here/deb-base.sh") || die "tools/deb-base.sh failed"
  k=$(ls "$cache"/debs/linux-image-*.deb | head -n1)
  attach; chroot_up
  cp "$k" "$mnt/tmp/" && inroot dpkg -i "/tmp/$(basename "$k")" || die "dpkg -i $(basename "$k") failed"
  rm -f "$mnt/tmp/$(basename "$k")"
  esp_sync
  ;;
remove)
  attach; chroot_up
  inroot apt-get remove -y -q hv || die "apt-get remove hv failed"
  esp_sync
  ;;
cfg)
  attach
  cat "$mnt/boot/grub/grub.cfg"
  ;;
nvram)
  out=${3:?deb-disk.sh nvram IMG OUT.fd}
  attach
  "$here/ovmf-vars.py" /usr/share/OVMF/OVMF_VARS.fd "$out" "$mnt$efivars" || die "tools/ovmf-vars.py failed"
  ls "$mnt$efivars"
  ;;
esp)
  # (each file's md5sum and size from the FAT, then the root's originals)
  attach
  for f in $(mdir -/ -b -i "${loop}p2" ::/ 2>/dev/null | LC_ALL=C sort); do
    case $f in */) continue ;; esac
    echo "esp $f $(mtype -i "${loop}p2" "$f" | md5sum | cut -d' ' -f1) $(mtype -i "${loop}p2" "$f" | wc -c)"
  done
  for f in "$mnt"/boot/vmlinuz-* "$mnt"/boot/initrd.img-* "$mnt"/usr/lib/hv/hv.efi; do
    [ -f "$f" ] && echo "root ${f#"$mnt"} $(md5sum < "$f" | cut -d' ' -f1) $(stat -c %s "$f")"
  done
  echo "--- hv/hv.cfg"
  mtype -i "${loop}p2" ::/hv/hv.cfg 2>/dev/null || echo "(none)"
  ;;
*) die "unknown step $op" ;;
esac
