#!/usr/bin/env bash
# run-qemu.sh [USB_IMG] [SERIAL_LOG] [SMP] [TIMEOUT_S]: boots the stick image
# under QEMU (TCG) + OVMF as a USB mass-storage device. QEMU's exit status
# is 33 for hv's "pass" through isa-debug-exit, 35 for "fail", 124 on timeout.
# HV_QEMU_DEVICES: more QEMU arguments, placed before any PCI device (an
# IOMMU must come first: -device intel-iommu,aw-bits=48 -device edu).
# SMP may be a whole -smp value (64,sockets=2,cores=16,threads=2).
# HV_QEMU: the QEMU binary (tools/qemu10.sh's wrapper for QEMU 10);
# HV_QEMU_MACHINE (default q35; q35,kernel-irqchip=split for intremap=on),
# HV_QEMU_MEM (MiB, default 1024).
set -uo pipefail
img=${1:-build/usb.img} ser=${2:-build/qemu.ser} smp=${3:-4} tmo=${4:-120}
fw=/usr/share/ovmf/OVMF.fd
[ -f "$fw" ] || { echo "run-qemu: $fw missing (apt-get install ovmf)" >&2; exit 1; }
timeout -k 5 "$tmo" "${HV_QEMU:-qemu-system-x86_64}" -machine "${HV_QEMU_MACHINE:-q35}" -cpu max -smp "$smp" \
  -m "${HV_QEMU_MEM:-1024}" -bios "$fw" \
  ${HV_QEMU_DEVICES:-} -device qemu-xhci -drive if=none,id=stick,format=raw,file="$img" -device usb-storage,drive=stick \
  -serial file:"$ser" -display none -monitor none -no-reboot -net none \
  -device isa-debug-exit,iobase=0xf4,iosize=0x04
