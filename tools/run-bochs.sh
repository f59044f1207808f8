#!/usr/bin/env bash
# run-bochs.sh ISO SERIAL_LOG [MODEL] [CPUS] [TIMEOUT_S] [MEGS]
# Boots an ISO under Bochs 3.0 (trixie chroot), headless, serial to a file.
# An ISO named *.img is a hard disk instead (ATA, booted from its boot sector;
# its size a whole number of 16x63 cylinders: tools/deb-disk.sh).
# HV_BOCHS=PATH runs that Bochs binary on the host instead (the project's
# patched build, tools/bochs-patched.sh), with the BIOS built beside it when
# there is one (reset.patch), else the chroot's, and the chroot's VGA BIOS.
# Exit status: Bochs's (1 after a "Shutdown" or S5), 124 on timeout, 125 when a bind mount fails.
# A boot replays exactly (docs/bochs.md, "Replay"): emulated time only
# ("clock: sync=none", a fixed time0, "vga: realtime=0": Bochs's default VGA
# timer runs on the host's clock and its callbacks reorder the CPUs' turns),
# and RDRAND's seed is HV_BOCHS_SEED (default 946684800) through
# tools/bochs-seed.c, preloaded: the same ISO, model, CPUs and seed give the
# same serial log, byte for byte. The seed is said in SERIAL_LOG's .run line.
# HV_BOCHSRC_EXTRA: more bochsrc lines (tools/replay.sh: Bochs's debug log).
# HV_BOCHS_COM1: COM1's mode instead of the file SERIAL_LOG (tools/typist.py:
# "mode=socket-server, dev=127.0.0.1:PORT", the typist writing SERIAL_LOG).
set -uo pipefail
iso=$(readlink -f "$1") ser=$(readlink -m "$2") model=${3:-corei7_skylake_x} cpus=${4:-2} tmo=${5:-300} megs=${6:-256}
here=$(cd "$(dirname "$0")" && pwd)
root=$("$here/bochs-chroot.sh") || exit 1
work=$(dirname "$ser")
mkdir -p "$work"
# A bochsrc value ends at a space and LD_PRELOAD splits at one: a checkout
# path with a space is reached through a space-free alias (symbolic links,
# removed at exit; the chroot binds them as directories).
if [[ "$iso$work" == *[[:space:]]* ]]; then
  alias_dir=$(mktemp -d /tmp/hv-bochs.XXXXXX) || exit 125
  trap 'rm -rf "$alias_dir"' EXIT
  ln -s "$(dirname "$iso")" "$alias_dir/iso" && ln -s "$work" "$alias_dir/work" || exit 125
  iso=$alias_dir/iso/$(basename "$iso") work=$alias_dir/work ser=$alias_dir/work/$(basename "$ser")
fi
rc_file="$work/$(basename "$ser" .ser).bochsrc"
bios=/usr/share/bochs/BIOS-bochs-latest vga=/usr/share/vgabios/vgabios.bin display='rfb, options="timeout=0"'
if [ -n "${HV_BOCHS:-}" ]; then
  [ -x "$HV_BOCHS" ] || { echo "run-bochs: HV_BOCHS=$HV_BOCHS is not an executable" >&2; exit 125; }
  bios=$root$bios vga=$root$vga display=nogui
  # The patched build's own BIOS (tools/bochs-patched.sh: reset.patch) when
  # it has one beside the binary; else the chroot's (Debian's bochsbios).
  [ -f "$(dirname "$HV_BOCHS")/BIOS-bochs-latest" ] && bios=$(dirname "$HV_BOCHS")/BIOS-bochs-latest
fi
drive="ata0-master: type=cdrom, path=$iso, status=inserted
boot: cdrom"
case $iso in *.img)
  drive="ata0-master: type=disk, path=$iso, mode=flat, cylinders=$(( $(stat -c %s "$iso") / 516096 )), heads=16, spt=63
boot: disk" ;;
esac
cat > "$rc_file" <<RC
megs: $megs
romimage: file=$bios
vgaromimage: file=$vga
cpu: model=$model, count=$cpus, ips=50000000, reset_on_triple_fault=0
clock: sync=none, time0=946684800
vga: realtime=0
$drive
com1: enabled=1, ${HV_BOCHS_COM1:-mode=file, dev=$ser}
display_library: $display
panic: action=fatal
error: action=report
log: $work/$(basename "$ser" .ser).bochslog
${HV_BOCHSRC_EXTRA:-}
RC
echo c > "$work/bochs.cont"
# The seed shim, built once per source change, kept beside the logs (which
# the chroot sees at the same path).
seed_so=$work/bochs-seed.so
if [ ! -f "$seed_so" ] || [ "$here/bochs-seed.c" -nt "$seed_so" ]; then
  cc -shared -fPIC -O2 -o "$seed_so.$$" "$here/bochs-seed.c" && mv "$seed_so.$$" "$seed_so" ||
    { echo "run-bochs: cannot build $here/bochs-seed.c (cc missing? apt-get install build-essential)" >&2; exit 125; }
fi
export HV_BOCHS_SEED=${HV_BOCHS_SEED:-946684800} LD_PRELOAD=$seed_so
export BOCHSRC="$rc_file" BOCHSCONT="$work/bochs.cont"
# Bind the work paths at the same place inside the chroot, in a private mount
# namespace: the mounts vanish with the run, and parallel runs do not meet.
: > "$ser"
if [ -n "${HV_BOCHS:-}" ]; then
  timeout --foreground -k 5 "$tmo" "$HV_BOCHS" -q -f "$rc_file" </dev/null >"$work/$(basename "$ser" .ser).stdout" 2>&1
  exit $?
fi
timeout --foreground -k 5 "$tmo" unshare --mount --propagation private -- sh -c '
  root=$1; shift
  for d in "$@"; do mkdir -p "$root$d" && mount --bind "$d" "$root$d" || exit 125; done
  exec chroot "$root" /usr/bin/bochs -q -f "$BOCHSRC" -rc "$BOCHSCONT"
' sh "$root" "$(dirname "$iso")" "$work" /proc </dev/null >"$work/$(basename "$ser" .ser).stdout" 2>&1
rc=$?
exit $rc
