#!/usr/bin/env bash
# mkiso.sh OUT.iso HV.ELF [KERNEL INITRD]: a GRUB (BIOS) ISO booting hv.elf by Multiboot2.
# HV_CMDLINE: the hypervisor's options; GUEST_CMDLINE: the kernel's command line.
# HV.ELF "-": no hypervisor, GRUB boots KERNEL itself (Linux boot protocol).
# HV_ACPI_TABLES: ACPI table files GRUB adds to the firmware's (its `acpi`
# command: new RSDT/XSDT and RSDP, the RSDP in a new EBDA, which Linux and
# the Multiboot2 ACPI tag both find), e.g. tools/mkdmar.py's DMAR.
set -euo pipefail
out=$1 elf=$2 kernel=${3:-} initrd=${4:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/boot/grub"
[ "$elf" = - ] || cp "$elf" "$dir/boot/hv.elf"
{
  echo "set timeout=0"
  echo "set default=0"
  echo "serial --unit=0 --speed=115200"
  echo "terminal_output serial"
  n=0
  for t in ${HV_ACPI_TABLES:-}; do
    mkdir -p "$dir/boot/acpi"
    cp "$t" "$dir/boot/acpi/$n.bin"
    echo "acpi /boot/acpi/$n.bin"
    n=$((n + 1))
  done
  echo "menuentry hv {"
  if [ "$elf" = - ]; then
    [ -n "$kernel" ] || { echo "mkiso: no hypervisor and no kernel" >&2; exit 1; }
    cp "$kernel" "$dir/boot/vmlinuz"
    echo "  linux /boot/vmlinuz ${GUEST_CMDLINE:-console=ttyS0}"
    if [ -n "$initrd" ]; then
      cp "$initrd" "$dir/boot/initrd"
      echo "  initrd /boot/initrd"
    fi
  else
    echo "  multiboot2 /boot/hv.elf ${HV_CMDLINE:-}"
    if [ -n "$kernel" ]; then
      cp "$kernel" "$dir/boot/vmlinuz"
      echo "  module2 /boot/vmlinuz ${GUEST_CMDLINE:-console=ttyS0}"
    fi
    if [ -n "$initrd" ]; then
      cp "$initrd" "$dir/boot/initrd"
      echo "  module2 /boot/initrd initrd"
    fi
  fi
  echo "  boot"
  echo "}"
} > "$dir/boot/grub/grub.cfg"
grub-mkrescue -o "$out" "$dir" >/dev/null 2>&1 || { echo "mkiso: grub-mkrescue failed (grub-pc-bin, xorriso, mtools installed?)" >&2; exit 1; }
[ "$elf" = - ] || grub-file --is-x86-multiboot2 "$elf" || { echo "mkiso: $elf is not a Multiboot2 image" >&2; exit 1; }
