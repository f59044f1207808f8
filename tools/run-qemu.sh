#!/usr/bin/env bash
# run-qemu.sh [USB_IMG] [SERIAL_LOG] [SMP] [TIMEOUT_S]: boots the stick image
# under QEMU (TCG) + OVMF as a USB mass-storage device. QEMU's exit status
# is 33 for hv's "pass" through isa-debug-exit, 35 for "fail", 124 on timeout.
# HV_QEMU_DEVICES: more QEMU arguments, placed before any PCI device (an
# IOMMU must come first: -device intel-iommu,aw-bits=48 -device edu).
set -uo pipefail
img=${1:-build/usb.img} ser=${2:-build/qemu.ser} smp=${3:-4} tmo=${4:-120}
fw=/usr/share/ovmf/OVMF.fd
[ -f "$fw" ] || { echo "run-qemu: $fw missing (apt-get install ovmf)" >&2; exit 1; }
timeout -k 5 "$tmo" qemu-system-x86_64 -machine q35 -cpu max -smp "$smp" -m 1024 -bios "$fw" \
  ${HV_QEMU_DEVICES:-} -device qemu-xhci -drive if=none,id=stick,format=raw,file="$img" -device usb-storage,drive=stick \
  -serial file:"$ser" -display none -monitor none -no-reboot -net none \
  -device isa-debug-exit,iobase=0xf4,iosize=0x04
