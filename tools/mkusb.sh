#!/usr/bin/env bash
# mkusb.sh OUT.img HV.EFI: a FAT "USB stick" image with \EFI\BOOT\BOOTX64.EFI and \hv\hv.cfg.
# KERNEL, INITRD: guest files to add (\hv\vmlinuz, \hv\initrd); HV_CMDLINE: the
# hypervisor's options; GUEST_CMDLINE: the kernel's command line; HV_CFG_EXTRA:
# more lines for hv.cfg, as they are (the tests' bad inputs).
# Write it to a stick with: dd if=OUT.img of=/dev/sdX bs=4M conv=fsync
set -euo pipefail
out=$1 efi=$2
for t in mkfs.vfat mmd mcopy; do command -v $t >/dev/null || { echo "mkusb: $t missing (apt-get install dosfstools mtools)" >&2; exit 1; }; done
size_mb=64
extra=0
for f in "${KERNEL:-}" "${INITRD:-}"; do [ -n "$f" ] && extra=$((extra + $(stat -c %s "$f") / 1048576 + 1)); done
size_mb=$((size_mb + extra))
rm -f "$out"
truncate -s ${size_mb}M "$out"
mkfs.vfat -F 32 -n HVSTICK "$out" >/dev/null
mmd -i "$out" ::/EFI ::/EFI/BOOT ::/hv
mcopy -i "$out" "$efi" ::/EFI/BOOT/BOOTX64.EFI
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
{
  echo "# hv.cfg: options for the hypervisor and its guest"
  echo "options=${HV_CMDLINE:-}"
  if [ -n "${KERNEL:-}" ]; then mcopy -i "$out" "$KERNEL" ::/hv/vmlinuz; echo 'kernel=\hv\vmlinuz'; fi
  if [ -n "${INITRD:-}" ]; then mcopy -i "$out" "$INITRD" ::/hv/initrd; echo 'initrd=\hv\initrd'; fi
  echo "cmdline=${GUEST_CMDLINE:-console=ttyS0}"
  [ -z "${HV_CFG_EXTRA:-}" ] || printf '%s\n' "$HV_CFG_EXTRA"
} > "$cfg"
mcopy -i "$out" "$cfg" ::/hv/hv.cfg
echo "mkusb: $out (${size_mb} MiB FAT32)"
