#!/usr/bin/env bash
# make bench: the same kernel and initramfs booted bare under Bochs 3.0 and
# under the hypervisor, N runs each (BENCH_RUNS, default 1): wall time, guest
# TSC at init (Bochs: TSC = instructions), uptime at init, and the exit counts.
set -uo pipefail
cd "$(dirname "$0")/.."
B=build
runs=${BENCH_RUNS:-1} model=${BENCH_MODEL:-corei7_skylake_x} cpus=${BENCH_CPUS:-2}
kernel=$(tools/guest-kernel.sh) || exit 1
tools/mkinitrd.sh $B/initrd.cpio.gz >/dev/null || exit 1
# tsc_early_khz: Bochs's CPUID says 3.5 GHz while its TSC runs at ips (50 MHz);
# the hypervisor tells the guest the measured rate through CPUID 0x15, so the
# bare kernel gets the same figure on its command line, or its delay loops
# would run 70 times too long and the comparison would flatter the hypervisor.
gcmd="console=ttyS0 hv.bench=1 tsc_early_khz=50000"
mkdir -p $B/bench
: > $B/bench/results.txt
. tools/lib-bench.sh
bare_iso $B/bench/bare.iso "$kernel" $B/initrd.cpio.gz "$gcmd"
HV_CMDLINE="exit=bochs" GUEST_CMDLINE="$gcmd" tools/mkiso.sh $B/bench/hv.iso $B/hv.elf "$kernel" $B/initrd.cpio.gz || exit 1
for kind in bare hv; do
  for i in $(seq 1 "$runs"); do
    log=$B/bench/$kind-$i.ser
    t0=$(date +%s.%N)
    tools/run-bochs.sh $B/bench/$kind.iso "$log" "$model" "$cpus" 900 512 >/dev/null
    t1=$(date +%s.%N)
    tsc=$(tr -d '\r' < "$log" | sed -n 's/^guest: tsc=\([0-9]*\).*/\1/p' | head -1)
    up=$(tr -d '\r' < "$log" | sed -n 's/^guest: uptime=\([0-9.]*\).*/\1/p' | head -1)
    exits=$(tr -d '\r' < "$log" | sed -n 's/^hvstat: end total_exits=\([0-9]*\).*/\1/p' | tail -1)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    printf 'bench: %-4s run=%d wall_s=%s tsc_at_init=%s uptime_at_init=%s total_exits=%s\n' \
      "$kind" "$i" "$wall" "${tsc:-?}" "${up:-?}" "${exits:--}"
    echo "$kind $wall ${tsc:-0} ${up:-0} ${exits:-0}" >> $B/bench/results.txt
  done
done
# Medians with their spread (min..max): Bochs time is emulated, runs differ a few percent.
summary() {   # summary KIND COLUMN NAME
  awk -v k="$1" '$1 == k { print $'"$2"' }' $B/bench/results.txt | sort -g |
    awk -v k="$1" -v n="$3" '{ v[NR] = $1 } END { if (!NR) exit; m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
      printf "bench: %-4s %-15s median=%s min=%s max=%s runs=%d\n", k, n, m, v[1], v[NR], NR }'
}
for kind in bare hv; do
  summary $kind 2 wall_s; summary $kind 3 tsc_at_init; summary $kind 4 uptime_at_init
done
summary hv 5 total_exits
median() { awk -v k="$1" '$1 == k { print $3 }' $B/bench/results.txt | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
mb=$(median bare) mh=$(median hv)
[ -n "$mb" ] && [ -n "$mh" ] && awk -v b="$mb" -v h="$mh" 'BEGIN { if (b > 0) printf "bench: ratio hv/bare of the median TSC at init = %.3f\n", h / b }'
echo "bench: exits by reason under the hypervisor (last run):"
tools/hvreport.py "$B/bench/hv-$runs.ser" | sed 's/^/  /'
