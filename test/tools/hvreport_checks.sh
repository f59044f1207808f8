#!/usr/bin/env bash
# The checks of tools/hvreport.py's newer output on test/fixtures/hvreport_*.txt:
# what each vCPU was served without an exit, timer lateness, interval reports,
# published figures, the comparison of more than two logs, --figures, the PNGs.
#
# From test/run-tests.sh's tools level (its ok, bad, expect, expect_not and LOGS):
#   . test/tools/hvreport_checks.sh && hvreport_checks
# By hand, from anywhere:
#   test/tools/hvreport_checks.sh        (prints PASS/FAIL lines, exit 1 on a failure)

hvreport_checks() {
  local F=test/fixtures served=test/fixtures/hvreport_served.txt
  local out=$LOGS/hvreport-served.md png=$LOGS/hvreport-served.png
  local many=$LOGS/hvreport-many.md two=$LOGS/hvreport-two.md figs=$LOGS/hvreport-figures.jsonl
  local p
  rm -f "$png" "$LOGS/hvreport-served-timer-late.png" "$LOGS/hvreport-served-intervals.png"

  # A large machine's report (reportcpus=, vmx/report.c): the summary over
  # every vCPU, then the detailed ones; --figures carries the summary.
  tools/hvreport.py $F/hvreport_summary.txt > "$LOGS/hvreport-summary.md" 2>&1
  expect tools/hvreport-summary "$LOGS/hvreport-summary.md" '^Summary over 64 vCPUs \(the per-vCPU columns below: vCPUs 5,0,63,2' \
    '^\| exits \| 64000 \| 500 \| 980 \| 4100 \| 5 \|$' '^\| EXTERNAL_INTERRUPT \| 40000 \| 300 \| 610 \| 2600 \| 5 \|$' \
    '^\| reason \| cpu0 \| cpu2 \| cpu5 \| cpu63 \| these vCPUs \|$' '^\| MSR_WRITE \| 1500 \| 800 \| 1500 \| 500 \| 4300 \|$'
  tools/hvreport.py --figures $F/hvreport_summary.txt > "$LOGS/hvreport-summary.json" 2>&1
  expect tools/hvreport-summary-figures "$LOGS/hvreport-summary.json" '"summary": \{"exits": \{"total": 64000, "cpus": 64, "min": 500, "median": 980, "max": 4100, "max_cpu": 5\}'

  tools/hvreport.py "$served" --png "$png" --published > "$out" 2>&1
  expect tools/hvreport-served "$out" '^### what each vCPU was served without an exit$' \
    '^\| 0 \| posted \| 100 \| 10 \| 0 \| 500 \| 595 \| 260 \|$' '^\| 1 \| posted \| 30 \| 30 \| 30 \| 20 \| 60 \| 4 \|$' \
    '^\| 2 \| 900 \| 520 \| 380 \|$'
  expect tools/hvreport-timer-late "$out" '^\| cpu0 late by \| count \| cumulative % \|$' \
    '^\| \[127, 255\) \| 390 \| 98\.00 \|$' '^\| \[511, 1023\) \| 10 \| 100\.00 \|$' '^\| \[127, 255\) \| 15 \| 100\.00 \|$'
  expect tools/hvreport-intervals "$out" '^### interval reports$' \
    '^\| 1 \| 1\.002 \| 0 \| 300 \| 299 \| 4 \| 40 \| 2 \| 250 \| 0 \| WRMSR:\+200, HLT:\+60, CPUID:\+40 \|$' \
    '^\| 1 \| 1\.002 \| 1 \| 0 \| 0 \| 0 \| 0 \| 0 \| 0 \| 0 \| none \|$' \
    '^\| 2 \| 0\.998 \| 1 \| 50 \| 50 \| 1 \| 30 \| 30 \| 20 \| 0 \| HLT:\+50 \|$'
  # The fixture's interval line cut short by other output is left out, not half read.
  if [ "$(grep -c '^| 2 | 0.998 | 1 |' "$out")" = 1 ]; then ok tools/hvreport-interval-cut
  else bad tools/hvreport-interval-cut "a cut interval line made a row in $out"; fi
  expect tools/hvreport-published "$out" '^### published hardware figures \(quoted, not measured here\)$' \
    '^\| exits in one second \| 49,849 \| 29,595 with PV EOI \| seed 003 \|$'
  for p in "$png" "$LOGS/hvreport-served-timer-late.png" "$LOGS/hvreport-served-intervals.png"; do
    if [ "$(head -c 8 "$p" 2>/dev/null | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]; then ok "tools/hvreport-png-${p##*/}"
    else bad "tools/hvreport-png-${p##*/}" "no PNG $p (python3-matplotlib installed?)"; fi
  done

  # More than two logs: one table, the first log the base; the published figures with it.
  tools/hvreport.py $F/hvstat-a.txt $F/hvstat-b.txt "$served" > "$many" 2>&1
  expect tools/hvreport-compare-many "$many" '^### comparison \(base: test/fixtures/hvstat-a\.txt\)$' \
    '^\| CPUID \| 120 \| 80 \(-40, x0\.67\) \| 0 \(-120, x0\.00\) \|$' '^\| HLT \| 0 \| 0 \(\+0\) \| 150 \(\+150\) \|$' \
    '^\| \*\*total\*\* \| 135 \| 82 \(-53, x0\.61\) \| 512 \(\+377, x3\.79\) \|$' \
    '^### published hardware figures \(quoted, not measured here\)$'
  # Two logs: the output as before, without the published figures unless asked.
  tools/hvreport.py $F/hvstat-a.txt $F/hvstat-b.txt > "$two" 2>&1
  expect tools/hvreport-compare-two "$two" '^### test/fixtures/hvstat-a\.txt vs test/fixtures/hvstat-b\.txt$'
  expect_not tools/hvreport-compare-two-unchanged "$two" 'published|comparison \(base'

  # --figures: one JSON object a log, keys it cannot find left out.
  if tools/hvreport.py --figures "$served" $F/hvstat-b.txt $F/vmx-caps-bochs.txt > "$figs" 2>&1; then
    expect tools/hvreport-figures "$figs" '"result": "pass"' '"total_exits": 512,' '"exits_per_cpu": \[460, 52\]' \
      '"guest_ms": \[2000, 1800\]' '"in_hv_permille": \[0, 2\]' '"eoi_exits": 67,' '"timer_delivered": 520,' \
      '"timer_exits": 264,' '"posted": 130,' '"notified": 40,' '"idle_exits_per_s": 26\.6\}$' \
      '^\{"log": "test/fixtures/hvstat-b\.txt", "total_exits": 82, "exits_per_cpu": \[60, 22\], "eoi_exits": 0\}$' \
      '^\{"log": "test/fixtures/vmx-caps-bochs\.txt"\}$'
  else
    bad tools/hvreport-figures "tools/hvreport.py --figures failed: $(tail -n1 "$figs")"
  fi
}

# Run by hand: the helpers of test/run-tests.sh, in short.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  cd "$(dirname "$0")/../.."
  LOGS=${LOGS:-build/test-logs}
  mkdir -p "$LOGS"
  pass=0 fail=0
  ok()  { pass=$((pass + 1)); echo "PASS $1"; }
  bad() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
  expect() {
    local name=$1 log=$2 text pat miss=()
    shift 2
    text=$(tr -d '\r' < "$log" 2>/dev/null)
    for pat in "$@"; do grep -Eq -- "$pat" <<<"$text" || miss+=("$pat"); done
    if [ ${#miss[@]} -eq 0 ]; then ok "$name"; else bad "$name" "missing /${miss[*]}/ in $log"; fi
  }
  expect_not() {
    if tr -d '\r' < "$2" | grep -Eq -- "$3"; then bad "$1" "unexpected /$3/ in $2"; else ok "$1"; fi
  }
  hvreport_checks
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
fi
