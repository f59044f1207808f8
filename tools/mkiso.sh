#!/usr/bin/env bash
# mkiso.sh OUT.iso HV.ELF [KERNEL INITRD]: a GRUB (BIOS) ISO booting hv.elf by Multiboot2.
# HV_CMDLINE: the hypervisor's options; GUEST_CMDLINE: the kernel's command line.
set -euo pipefail
out=$1 elf=$2 kernel=${3:-} initrd=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/boot/grub"
cp "$elf" "$dir/boot/hv.elf"
{
  echo "set timeout=0"
  echo "set default=0"
  echo "serial --unit=0 --speed=115200"
  echo "terminal_output serial"
  echo "menuentry hv {"
  echo "  multiboot2 /boot/hv.elf ${HV_CMDLINE:-}"
  if [ -n "$kernel" ]; then
    cp "$kernel" "$dir/boot/vmlinuz"
    echo "  module2 /boot/vmlinuz ${GUEST_CMDLINE:-console=ttyS0}"
  fi
  if [ -n "$initrd" ]; then
    cp "$initrd" "$dir/boot/initrd"
    echo "  module2 /boot/initrd initrd"
  fi
  echo "  boot"
  echo "}"
} > "$dir/boot/grub/grub.cfg"
grub-mkrescue -o "$out" "$dir" >/dev/null 2>&1 || { echo "mkiso: grub-mkrescue failed (grub-pc-bin, xorriso, mtools installed?)" >&2; exit 1; }
grub-file --is-x86-multiboot2 "$elf" || { echo "mkiso: $elf is not a Multiboot2 image" >&2; exit 1; }
