#!/usr/bin/env bash
# run-nested.sh: the hypervisor under KVM's nested VMX inside the patched
# Bochs (issue 49), in one command:
#   L0  the project's patched Bochs 3.0 (tools/bochs-patched.sh), sapphire_rapids, 2 CPUs
#   L1  Debian's kernel (tools/guest-kernel.sh's), bare, kvm_intel nested=1, with
#       Debian's QEMU and OVMF in its initramfs (tools/mknested.sh), whose /init
#       (tools/nested-init.sh) runs tools/run-qemu-kvm.sh as a user would
#   L2  the hypervisor: hv.efi from the stick through OVMF (make qemu-kvm's path),
#       and/or hv.elf from the Multiboot2 ISO through SeaBIOS and GRUB
#   L3  the usual test Linux (Debian's kernel, tools/mkinitrd.sh's initramfs)
# Bochs's serial log holds it all: L1's lines ("l1: ..."), L2's console
# ("L2| ..."). It is kept with a copy whose lines carry the wall-clock second
# they arrived at, in $HV_NESTED_OUT (default /var/cache/hv-nested/run):
# l1.ser and l1.timed.
#
# Environment (defaults in brackets):
#   NESTED_MODE       uefi | iso | both                 [uefi]
#   NESTED_SMP        the hypervisor's vCPUs (HV_SMP)   [2]
#   NESTED_L2MEM      L2's memory in MiB (HV_MEM)       [1024]
#   NESTED_CPUS       Bochs CPUs (L1's)                 [2]
#   NESTED_MODEL      Bochs CPU model                   [sapphire_rapids]
#   NESTED_MEGS       L1's memory in MiB (Bochs at most 2048) [2048]
#   NESTED_TIMEOUT    Bochs's wall-clock limit, s       [5400]
#   NESTED_HV_CMDLINE the hypervisor's options          [exit=qemu]
#   NESTED_GUEST_CMDLINE  L3's kernel command line      [console=ttyS0 panic=1 oops=panic]
#   NESTED_L1_CMDLINE more options for L1's kernel (nested-init.sh's l1.* among them)
#   NESTED_BOCHS      a Bochs binary                    [tools/bochs-patched.sh's]
# sapphire_rapids needs `clearcpuid=amx_tile,amx_bf16,amx_int8 no5lvl`
# on a bare Linux (docs/bochs.md): L1 always gets them (FSRM no longer: the
# patched Bochs has IA32_MISC_ENABLE, defect P).
# Exit status: 0 when the hypervisor said result=pass in every L2 run, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
HERE=$(pwd)
CACHE=${HV_NESTED_CACHE:-/var/cache/hv-nested}
OUT=${HV_NESTED_OUT:-$CACHE/run}
mode=${NESTED_MODE:-uefi} smp=${NESTED_SMP:-2} l2mem=${NESTED_L2MEM:-1024}
cpus=${NESTED_CPUS:-2} model=${NESTED_MODEL:-sapphire_rapids} megs=${NESTED_MEGS:-2048} tmo=${NESTED_TIMEOUT:-5400}
hv_cmdline=${NESTED_HV_CMDLINE:-exit=qemu}
guest_cmdline=${NESTED_GUEST_CMDLINE:-console=ttyS0 panic=1 oops=panic}
l1_cmdline="console=ttyS0 clearcpuid=amx_tile,amx_bf16,amx_int8 no5lvl tsc_early_khz=50000 panic=10"
l1_cmdline+=" l1.mode=$mode l1.smp=$smp l1.mem=$l2mem ${NESTED_L1_CMDLINE:-}"
say() { echo "nested: $*"; }
die() { echo "nested: error: $*" >&2; exit 1; }
t_start=$SECONDS

tools/deps.sh >/dev/null || die "tools/deps.sh failed"
make -s build/hv.efi build/hv.elf >/dev/null || die "building hv.efi and hv.elf failed"
kernel=$(tools/guest-kernel.sh) || die "tools/guest-kernel.sh failed"
mkdir -p "$OUT"
tools/mkinitrd.sh "$OUT/l3-initrd.cpio.gz" || die "tools/mkinitrd.sh failed"

# The hypervisor's tree as a user has it: tools/run-qemu-kvm.sh, build/usb.img
# (make usb's image, with the guest), build/hv.iso (tools/mkiso.sh's).
payload=$OUT/payload
rm -rf "$payload"; mkdir -p "$payload/tools" "$payload/build"
cp tools/run-qemu-kvm.sh "$payload/tools/"
cp -p build/hv.efi "$payload/build/hv.efi"
case $mode in uefi | both)
	KERNEL=$kernel INITRD=$OUT/l3-initrd.cpio.gz HV_CMDLINE=$hv_cmdline GUEST_CMDLINE=$guest_cmdline \
		tools/mkusb.sh "$payload/build/usb.img" build/hv.efi >/dev/null || die "tools/mkusb.sh failed" ;;
esac
case $mode in iso | both)
	HV_CMDLINE=$hv_cmdline GUEST_CMDLINE=$guest_cmdline \
		tools/mkiso.sh "$payload/build/hv.iso" build/hv.elf "$kernel" "$OUT/l3-initrd.cpio.gz" || die "tools/mkiso.sh failed" ;;
esac
NESTED_INIT=tools/nested-init.sh tools/mknested.sh "$OUT/l1-initrd.cpio.lz4" "$payload" || die "tools/mknested.sh failed"
GUEST_CMDLINE=$l1_cmdline tools/mkiso.sh "$OUT/l1.iso" - "$kernel" "$OUT/l1-initrd.cpio.lz4" || die "tools/mkiso.sh (L1) failed"
bochs=${NESTED_BOCHS:-$(tools/bochs-patched.sh)} || die "tools/bochs-patched.sh failed"
say "prepared in $((SECONDS - t_start)) s; L1 ISO $(( $(stat -c %s "$OUT/l1.iso") / 1048576 )) MiB"
say "L0: $bochs, $model x$cpus, $megs MiB; L1: $l1_cmdline"
say "L2: the hypervisor ($mode), $smp vCPUs, $l2mem MiB: $hv_cmdline; L3: $guest_cmdline"
say "serial log: $OUT/l1.ser (timed copy: $OUT/l1.timed)"

ser=$OUT/l1.ser
: > "$ser"
t0=$SECONDS
HV_BOCHS=$bochs tools/run-bochs.sh "$OUT/l1.iso" "$ser" "$model" "$cpus" "$tmo" "$megs" &
pid=$!
# Each line with the wall-clock second since Bochs started.
# (no tr: it would buffer the lines and their times)
tail -n +1 -s 0.5 -F --pid=$pid "$ser" 2>/dev/null |
	while IFS= read -r l; do printf '[%5d] %s\n' $((SECONDS - t0)) "${l//$'\r'/}"; done | tee "$OUT/l1.timed"
wait $pid; rc=$?
wall=$((SECONDS - t0))
say "Bochs exit $rc after $wall s of wall time ($((SECONDS - t_start)) s in all)"
timed=$OUT/l1.timed
first() { grep -m1 -E -- "$1" "$timed" | sed 's/^\[ *\([0-9]*\)\].*/\1/'; }
for m in "Linux version@L1 kernel starts" "Run /init@L1 runs /init" "l1: kvm_intel loaded@kvm_intel loaded" \
	"L2\| run-qemu-kvm: @QEMU starts" "L2\| .*hv: @the hypervisor's first line" "L2\| .*vmx: @its VMX probe" \
	"L2\| .*Linux version@L3 kernel starts" "L2\| .*guest: init started@L3 init" "L2\| .*hv: result=@its result" \
	"l1: .*run-qemu-kvm.sh exit@QEMU exits"; do
	s=$(first "${m%@*}")
	if [ -n "$s" ]; then say "$(printf '%-28s' "${m#*@}:") $s s of wall time"; else say "$(printf '%-28s' "${m#*@}:") never"; fi
done
# A pass: the guest's own checks and every vCPU (the result line says both),
# no VM entry KVM refused, and as many runs as NESTED_MODE asks for.
want=1; [ "$mode" = both ] && want=2
pass=$(grep -c "L2| .*hv: result=pass (the guest's checks passed, $smp of $smp vCPUs ran" "$timed")
runs=$(grep -c 'l1: .*run-qemu-kvm.sh exit' "$timed")
refused=$(grep -E 'l1: .*kvm_nested_vmenter_failed events: [1-9]' "$timed" | wc -l)
grep -E 'l1: .*(exit|vmenter_failed events)' "$timed" | sed 's/^/nested: /'
grep -E "L2\| .*(tsc: |tier: |hv: result=)" "$timed" | sed 's/^/nested: /'
say "wall time: $wall s in Bochs, $((SECONDS - t_start)) s in all"
[ "$runs" = "$want" ] && [ "$pass" = "$runs" ] && [ "$refused" = 0 ] &&
	{ say "the hypervisor passed under nested KVM ($pass of $runs runs, $smp vCPUs each)"; exit 0; }
say "the hypervisor did not pass under nested KVM ($pass of $want runs passed on $smp vCPUs; runs with refused entries: $refused)"
exit 1
