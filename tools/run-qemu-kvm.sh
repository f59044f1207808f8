#!/usr/bin/env bash
# run-qemu-kvm.sh [--check] [SERIAL_LOG]: boots the stick image under QEMU
# with KVM and nested VMX (-enable-kvm -cpu host,+vmx) + OVMF, so that the
# hypervisor runs on the host's real VT-x through KVM's nested support.
#   --check      only check the host (Intel CPU with vmx, /dev/kvm usable,
#                kvm_intel nested=1), QEMU and OVMF; exit 0 when all is there
#   SERIAL_LOG   write the serial console to this file (default: stdout)
# Environment: HV_SMP (vCPUs, default 2), HV_MEM (MiB of guest memory,
# default 2048), HV_USB_IMG (default build/usb.img, made by `make usb
# KERNEL=... INITRD=...`); HV_ISO=FILE boots that Multiboot2 ISO instead
# (tools/mkiso.sh's: GRUB and hv.elf) through SeaBIOS, QEMU's own BIOS.
# Exit status: 2 when something the run needs is missing (one line says what
# and how to fix it); else QEMU's: 33 for hv's "pass" and 35 for "fail" when
# hv.cfg has exit=qemu (isa-debug-exit), 0 when QEMU is closed otherwise.
# Note: KVM's nested VMX offers no IPI virtualization and no APIC-timer
# virtualization to its guest, so `ipi=auto` picks a software tier here.
set -uo pipefail

check_only=0
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi
ser=${1:-}
img=${HV_USB_IMG:-build/usb.img}
iso=${HV_ISO:-}
smp=${HV_SMP:-2}
mem=${HV_MEM:-2048}
fw=/usr/share/ovmf/OVMF.fd

missing() { echo "run-qemu-kvm: $*" >&2; exit 2; }

# The host: the hypervisor is VT-x only, and it runs as KVM's guest.
grep -q '^vendor_id[[:space:]]*: GenuineIntel' /proc/cpuinfo ||
	missing "needs an Intel host: this CPU is $(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n 1) (hv uses VT-x; AMD's SVM cannot run it)"
grep -qw vmx /proc/cpuinfo ||
	missing "no 'vmx' in /proc/cpuinfo: this host has no usable VT-x (enable Intel Virtualization Technology in the firmware; in a VM, the outer hypervisor must expose VMX)"
[ -e /dev/kvm ] ||
	missing "no /dev/kvm: load KVM with 'modprobe kvm_intel nested=1'"
( exec 3<>/dev/kvm ) 2>/dev/null ||
	missing "/dev/kvm is not usable by $(id -un) (add the user to group kvm: 'usermod -aG kvm $(id -un)', then log in again; or run as root)"
nested=/sys/module/kvm_intel/parameters/nested
[ -r "$nested" ] ||
	missing "kvm_intel is not loaded: 'modprobe kvm_intel nested=1'"
case "$(cat "$nested")" in
Y | y | 1) ;;
*) missing "nested VMX is off ($nested is $(cat "$nested")): 'modprobe -r kvm_intel && modprobe kvm_intel nested=1' (no VM may be running; to keep it: 'options kvm_intel nested=1' in /etc/modprobe.d/kvm.conf)" ;;
esac
command -v qemu-system-x86_64 >/dev/null ||
	missing "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"
[ -f "$fw" ] || missing "$fw missing (apt-get install ovmf)"
case "$smp" in
'' | *[!0-9]* | 0) missing "HV_SMP='$smp': expected a vCPU count, 1 or more" ;;
esac
case "$mem" in
'' | *[!0-9]* | 0) missing "HV_MEM='$mem': expected MiB of guest memory" ;;
esac
[ "$check_only" = 1 ] && { echo "run-qemu-kvm: host ready (Intel, vmx, /dev/kvm, nested VMX, QEMU, OVMF)"; exit 0; }

if [ -n "$iso" ]; then
	[ -f "$iso" ] || missing "HV_ISO=$iso missing (tools/mkiso.sh OUT.iso build/hv.elf KERNEL INITRD makes one)"
	boot=(-cdrom "$iso" -boot d)
	what="$iso (SeaBIOS, GRUB, Multiboot2)"
else
	[ -f "$img" ] ||
		missing "$img missing: make it first with 'make usb KERNEL=... INITRD=...' (docs/usage.md, 'A USB stick')"
	[ ! -f build/hv.efi ] || [ ! build/hv.efi -nt "$img" ] ||
		echo "run-qemu-kvm: note: build/hv.efi is newer than $img, which boots its own copy ('make usb ...' again to use it)" >&2
	boot=(-bios "$fw" -device qemu-xhci -drive if=none,id=stick,format=raw,file="$img" -device usb-storage,drive=stick)
	what="$img (OVMF)"
fi

if [ -n "$ser" ]; then
	serial=(-serial "file:$ser")
	echo "run-qemu-kvm: $what, $smp vCPUs, $mem MiB, serial console in $ser" >&2
else
	serial=(-serial stdio)
	echo "run-qemu-kvm: $what, $smp vCPUs, $mem MiB" >&2
fi
qemu-system-x86_64 -machine q35 -enable-kvm -cpu host,+vmx -smp "$smp" -m "$mem" "${boot[@]}" \
	"${serial[@]}" -display none -monitor none -no-reboot -net none \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
