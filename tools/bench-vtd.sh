#!/usr/bin/env bash
# make bench-vtd (issues 34 and 44): device interrupts through the
# patched Bochs's VT-d units. BENCH_RUNS boots (default 3) of each of
# linux/hv-vtd (the hypervisor on its defaults: the xHCI's MSI-X posted,
# the UHCI's level pin remapped through its exit) and linux/vtd-bare (Linux
# alone, its own intel-iommu remapping the same devices), each run with its
# own RDRAND seed (a Bochs boot replays exactly from its inputs: the seed
# is what varies between runs), with make test's checks, each guest making
# BENCH_VTD_FLOOD (default 1000) control transfers to each USB device
# (hv.irqflood: as many device interrupts, each a latency sample); then
# the tables (tools/benchvtd.py): per device and path the exits per
# interrupt and the latency from the unit's message to the handler's entry
# in emulated ticks (p50, p90, p99, max: the median of the runs' with
# their range), p99 against bare's, and where the samples waited.
# Logs and the table in build/bench/vtd/.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${BENCH_RUNS:-3}
flood=${BENCH_VTD_FLOOD:-1000}
out=build/bench/vtd
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
  echo "bench-vtd: run $r of $runs (seed $((946684800 + r - 1)))" >&2
  rm -f build/test-logs/linux-hv-vtd.stdout build/test-logs/linux-vtd-bare.stdout
  HV_BOCHS_SEED=$((946684800 + r - 1)) VTD_FLOOD=$flood LINUX_ONLY='^linux-(hv-vtd|vtd-bare)$' LINUX_JOBS=2 \
    test/run-tests.sh linux > "$out/run-$r.log" 2>&1
  tail -n1 "$out/run-$r.log" >&2
  cp build/test-logs/linux-hv-vtd.stdout "$out/run-$r-hv.out" 2>/dev/null || echo "bench-vtd: run $r: no linux-hv-vtd.stdout" >&2
  cp build/test-logs/linux-vtd-bare.stdout "$out/run-$r-bare.out" 2>/dev/null || echo "bench-vtd: run $r: no linux-vtd-bare.stdout" >&2
done
python3 tools/benchvtd.py "$out" "$runs" | tee "$out/vtd.md"
