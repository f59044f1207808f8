#!/usr/bin/env bash
# replay.sh NAME [BOCHSRC LINES...]: boots a kept run of test/run-tests.sh
# again, exactly (tools/run-bochs.sh: emulated time only, the run's RDRAND
# seed), and compares the serial log with the original: "identical" or the
# first line that differs. Kept are the ISO of every run that did not pass
# and every run's arguments (build/test-logs/NAME.replay). Extra arguments
# are bochsrc lines for the replay, e.g. Bochs's debug log of one CPU:
#   tools/replay.sh linux-skx 'debug: action=report, cpu0=report'
# (a debug log of a whole Linux boot is tens of GB: prefer Bochs's
# instruction-count breakpoints or a narrower 'debug:' line).
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=build/test-logs
name=${1:?usage: tools/replay.sh NAME [BOCHSRC LINES...]}; shift
args=$LOGS/$name.replay
[ -f "$args" ] || { echo "replay: no $args (the run's arguments are written by test/run-tests.sh)" >&2; exit 2; }
eval "set -- $(cat "$args") \"\$@\""
iso=$1 model=$2 cpus=$3 tmo=$4 megs=$5 seed=$6 bochs=$7; shift 7
[ -f "$iso" ] || { echo "replay: the ISO $iso is gone (only the ISOs of runs that did not pass are kept)" >&2; exit 2; }
extra=$(printf '%s\n' "$@")
out=$LOGS/$name.replay.ser
echo "replay: $name: $model x$cpus seed=$seed${bochs:+ (patched: $bochs)}${extra:+ with: $extra}"
: > "$out"   # (the watcher below must not read a previous replay's death)
HV_BOCHS=$bochs HV_BOCHS_SEED=$seed HV_BOCHSRC_EXTRA=$extra tools/run-bochs.sh "$iso" "$out" "$model" "$cpus" "$tmo" "$megs" &
rb=$!
# A guest that died (a panic, Bochs defect 3): the hypervisor ends Bochs
# itself ("hv: guest died: ..."); if Bochs still runs 30 s after the first
# words of the death, it is stopped, as test/run-tests.sh does.
while kill -0 $rb 2>/dev/null; do
  sleep 5
  if tr -d '\r' < "$out" 2>/dev/null | grep -Eq -- '---\[ end Kernel panic|^PANIC|BUG: ENTRY_TRAMPOLINE stack guard page was hit|^hv: guest died: '; then
    for ((w = 0; w < 30; w++)); do kill -0 $rb 2>/dev/null || break; sleep 1; done
    kill -0 $rb 2>/dev/null || break
    echo "replay: the guest or the hypervisor died 30 s ago; stopping Bochs"
    for p in $(pgrep -P $rb); do pkill -TERM -P "$p"; done
    break
  fi
done
wait $rb
echo "replay: Bochs exit $?"
if cmp -s "$LOGS/$name.ser" "$out"; then
  echo "replay: identical to the original serial log ($(wc -l < "$out") lines)"
else
  line=$(cmp "$LOGS/$name.ser" "$out" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p')
  echo "replay: differs from the original at line ${line:-?}:"
  diff <(tr -d '\r' < "$LOGS/$name.ser") <(tr -d '\r' < "$out") | head -n 6
  exit 1
fi
