#!/usr/bin/env bash
# make bench-vtd (issue 34's figures): device interrupts through the
# patched Bochs's VT-d units. BENCH_RUNS boots (default 3) of each of
# linux/hv-vtd (the hypervisor on its defaults: the xHCI's MSI-X posted,
# the UHCI's level pin remapped through its exit) and linux/vtd-bare (Linux
# alone, its own intel-iommu remapping the same devices), each run with its
# own RDRAND seed (a Bochs boot replays exactly from its inputs: the seed
# is what varies between runs), with make test's checks; then one table
# (tools/benchvtd.py): per device and path the exits per interrupt and the
# latency from the unit's message to the handler's entry in emulated ticks,
# the median of the runs' medians with their range, and the ratio to bare.
# Logs and the table in build/bench/vtd/.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${BENCH_RUNS:-3}
out=build/bench/vtd
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
  echo "bench-vtd: run $r of $runs (seed $((946684800 + r - 1)))" >&2
  HV_BOCHS_SEED=$((946684800 + r - 1)) LINUX_ONLY='^linux-(hv-vtd|vtd-bare)$' LINUX_JOBS=2 \
    test/run-tests.sh linux > "$out/run-$r.log" 2>&1
  tail -n1 "$out/run-$r.log" >&2
done
python3 tools/benchvtd.py "$out" "$runs" | tee "$out/vtd.md"
