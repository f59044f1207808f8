#!/usr/bin/env bash
# make bench (part 3): the tier-by-tier bench against bare metal, in one run
# set. The same Debian kernel and initramfs, the same guest work, booted
#   bare        GRUB boots the kernel itself, no hypervisor (the reference)
#   partition   the hypervisor's partition model (the guest owns the x2APIC)
#   auto        the virtual model, tiers chosen from the CPU (skylake_x:
#               ipi=fast eoi=vid timer=deadline)
#   timer-posted  timer=posted (the vCPU's own host timer serves it)
#   ipi-pv, ipi-trap, eoi-pv, eoi-trap, timer-preempt, timer-trap
#               the virtual model, one tier changed
#   timer-hk    timer=posted with a housekeeping CPU (3 CPUs, 2 vCPUs)
# under stock Bochs 3.0 (corei7_skylake_x, 2 CPUs), and, when the project's
# patched Bochs builds (tools/bochs-patched.sh),
#   spr-bare    sapphire_rapids bare (the reference for spr-* and next-*: a
#               bare kernel never reads the VMX capabilities, the only
#               difference between the two profiles)
#   spr-auto, spr-posted, spr-hk
#               sapphire_rapids as it ships (IPI virtualization, no
#               APIC-timer virtualization): auto (ipi=ipiv timer=deadline),
#               timer=posted, timer=posted with a housekeeping CPU
#   next-auto   xeon_next (both): auto (ipi=ipiv timer=apicv)
# (the emulator patch, not hardware; hlt=guest on the patched Bochs). BENCH_RUNS boots of each (default 1), two at a time; a boot
# that Bochs kills (defect 3) or that hangs is made again, at most twice.
# The guest work, every boot: ipibench (IPI round trip with the target
# polling, the send-IPI microbenchmark), cyclictest, hackbench, ipigen's
# counted IPIs, 5 s of idle. tools/benchtab.py turns the logs into
# build/bench/tiers.md and PNG plots (docs/results.md quotes them).
# BENCH_ONLY=REGEX boots only the matching configurations (the tables take
# the logs already there for the rest); BENCH_TABLE_ONLY=1 boots nothing;
# BENCH_KEEP=1 keeps the boots whose log is there and complete (to add runs).
set -uo pipefail
cd "$(dirname "$0")/.."
B=build
runs=${BENCH_RUNS:-1}
kernel=$(tools/guest-kernel.sh) || exit 1
tools/mkinitrd.sh $B/initrd.cpio.gz >/dev/null || exit 1
[ -f $B/hv.elf ] || { echo "bench-tiers: build/hv.elf missing (make)" >&2; exit 1; }
mkdir -p $B/bench
work="idle=halt hv.ipibench=${BENCH_IPIBENCH:-2000} hv.cyclictest=${BENCH_CYCLIC:-1000} hv.hackbench=${BENCH_HACK:-10} hv.ipigen=${BENCH_IPIS:-5000} hv.timercheck=5 hv.ipirounds=0 hv.noprobe=1"
# tsc_early_khz for the bare kernel: Bochs's CPUID says 3.5 GHz while its
# TSC runs at ips (50 MHz); the hypervisor tells its guest the measured rate
# (CPUID 0x15), the bare kernel gets it on its command line (tools/bench-boot.sh).
bare_cmd="console=ttyS0 $work hv.bare=1 tsc_early_khz=50000"
hv_cmd="console=ttyS0 $work"
hvb=""
if [ -z "${BENCH_NO_PATCHED:-}" ]; then
  hvb=$(tools/bochs-patched.sh 2>$B/bench/bochs-patched.log) || { hvb=""; echo "bench-tiers: no patched Bochs (see $B/bench/bochs-patched.log): spr-* not booted" >&2; }
fi
# name model cpus bochs hv-options ("bare [WORDS]": no hypervisor, WORDS added
# to the kernel's command line). spr-bare hides what the hypervisor hides from
# its guest on that model (guest/cpuid.c): LA57 (no5lvl; Bochs panics in its SMM restore once it is on;
# ../shared/TESTING.md). FSRM no longer: its hang was Bochs's missing
# IA32_MISC_ENABLE (features.patch, docs/bochs.md defect P); AMX no longer:
# Bochs's model lacked XFD (the bare kernel died of the XSETBV #GP in
# fpu__init_cpu_xstate; amx.patch, defects S and T), and the hypervisor passes it.
# The stock rows name eoi=vid: on stock Bochs 3.0 auto keeps VID off (its
# defect G, docs/bochs.md); they compare the tiers as auto chooses them on a
# CPU with VID (the "auto" row: what auto picks on a Skylake-SP).
configs=(
  "bare corei7_skylake_x 2 stock bare"
  "partition corei7_skylake_x 2 stock exit=bochs irq=partition"
  "auto corei7_skylake_x 2 stock exit=bochs eoi=vid"
  "ipi-pv corei7_skylake_x 2 stock exit=bochs ipi=pv eoi=vid"
  "ipi-trap corei7_skylake_x 2 stock exit=bochs ipi=trap eoi=vid"
  "eoi-pv corei7_skylake_x 2 stock exit=bochs eoi=pv"
  "eoi-trap corei7_skylake_x 2 stock exit=bochs eoi=trap"
  "timer-preempt corei7_skylake_x 2 stock exit=bochs timer=preempt eoi=vid"
  "timer-trap corei7_skylake_x 2 stock exit=bochs timer=trap eoi=vid"
  "timer-posted corei7_skylake_x 2 stock exit=bochs timer=posted"
  "timer-hk corei7_skylake_x 3 stock exit=bochs housekeeping=2 eoi=vid"
)
[ -n "$hvb" ] && configs+=(
  "spr-bare sapphire_rapids 2 patched bare no5lvl"
  "spr-auto sapphire_rapids 2 patched exit=bochs hlt=guest"
  "spr-posted sapphire_rapids 2 patched exit=bochs timer=posted hlt=guest"
  "spr-hk sapphire_rapids 3 patched exit=bochs housekeeping=2 hlt=guest"
  "next-auto xeon_next 2 patched exit=bochs hlt=guest"
)

. tools/lib-bench.sh
# Done: the bare guest's "guest: done", or the hypervisor's result line.
done_re='^guest: done|hv: result='

# boot NAME MODEL CPUS BOCHS OPTS RUN: one boot, made again (at most twice)
# when the guest dies (Bochs 3.0 defect 3) or hangs; every attempt's log kept.
boot() {
  local name=$1 model=$2 cpus=$3 which=$4 opts=$5 r=$6
  local iso=$B/bench/tiers-$name-$r.iso
  if [ "${opts%% *}" = bare ]; then
    bare_iso "$iso" "$kernel" $B/initrd.cpio.gz "$bare_cmd$(sed -n 's/^bare / /p' <<<"$opts")" || { echo "bench-tiers: grub-mkrescue failed" >&2; return; }
  else HV_CMDLINE="$opts" GUEST_CMDLINE="$hv_cmd" tools/mkiso.sh "$iso" $B/hv.elf "$kernel" $B/initrd.cpio.gz >/dev/null || return
  fi
  if [ "$which" = patched ]; then export HV_BOCHS=$hvb; else unset HV_BOCHS; fi
  boot_retried bench-tiers "$name run $r" "$iso" $B/bench/tiers-$name-$r.ser "$model" "$cpus" 1200 180 "$done_re"
  rm -f "$iso"
}

t0=$SECONDS
if [ -z "${BENCH_TABLE_ONLY:-}" ]; then
  todo=()
  for r in $(seq 1 "$runs"); do
    for c in "${configs[@]}"; do
      set -- $c
      [ -n "${BENCH_ONLY:-}" ] && ! [[ $1 =~ $BENCH_ONLY ]] && continue
      [ -n "${BENCH_KEEP:-}" ] && [ -f $B/bench/tiers-$1-$r.ser ] && tr -d '\r' < $B/bench/tiers-$1-$r.ser | grep -Eq "$done_re" && continue
      todo+=("$r $c")
    done
  done
  n=0 pids=()
  for job in "${todo[@]}"; do
    set -- $job
    r=$1 name=$2 model=$3 cpus=$4 which=$5; shift 5
    n=$((n + 1))
    echo "bench-tiers: boot $n of ${#todo[@]}: $name run $r ($((SECONDS - t0)) s elapsed)" >&2
    boot "$name" "$model" "$cpus" "$which" "$*" "$r" & pids+=($!)
    sleep 5
    if [ ${#pids[@]} -ge "${BENCH_JOBS:-2}" ]; then wait -n "${pids[@]}"; pids=($(jobs -pr)); fi
  done
  wait
fi
names=()
for c in "${configs[@]}"; do set -- $c; names+=("$1"); done
tools/benchtab.py --dir $B/bench --runs "$runs" --out $B/bench/tiers.md --png $B/bench "${names[@]}"; tab_rc=$?
[ -s $B/bench/tiers.md ] || exit 1
cat $B/bench/tiers.md
# docs/results.md: the section between the two markers is replaced by this
# run set's table (BENCH_NO_DOCS=1 leaves the docs alone); the plots go next
# to it as docs/results-tiers-*.png.
if [ -z "${BENCH_NO_DOCS:-}" ] && [ -z "${BENCH_ONLY:-}" ]; then
  sec=$(mktemp)
  {
    echo "<!-- bench-tiers:begin (written by make bench: tools/bench-tiers.sh) -->"
    echo "## Tiers against bare metal (make bench), $(date -u +%Y-%m-%d)"
    echo
    echo "Bochs 3.0, corei7_skylake_x, 2 CPUs (timer-hk: 3, one kept for the timer service), stock Debian package;"
    echo "spr-*: sapphire_rapids as it ships (IPI virtualization, no APIC-timer virtualization), next-*: xeon_next"
    echo "(both), on the project's patched Bochs (tools/bochs-patched.sh); spr-bare is the bare reference of both."
    echo "$runs run(s) of each configuration. Guest work in every"
    echo "boot: \`$work\` (ipibench: the IPI round trip with the target polling, and the send-IPI"
    echo "microbenchmark, $((${BENCH_IPIBENCH:-2000})) operations each; cyclictest $((${BENCH_CYCLIC:-1000})) loops at 1 ms, one thread per CPU;"
    echo "hackbench 2 groups x 10, $((${BENCH_HACK:-10})) loops; ipigen's counted IPIs; 5 s of idle)."
    echo
    cat $B/bench/tiers.md
    echo
    echo "![time against bare metal](results-tiers-ratio.png)"
    echo "![exits per operation](results-tiers-exits.png)"
    echo "<!-- bench-tiers:end -->"
  } > "$sec"
  cp $B/bench/tiers-ratio.png docs/results-tiers-ratio.png 2>/dev/null
  cp $B/bench/tiers-exits.png docs/results-tiers-exits.png 2>/dev/null
  python3 - "$sec" docs/results.md <<'PY'
import re, sys
sec = open(sys.argv[1]).read().rstrip("\n")
doc = open(sys.argv[2]).read()
pat = re.compile(r"<!-- bench-tiers:begin.*?<!-- bench-tiers:end -->", re.S)
if pat.search(doc):
    doc = pat.sub(lambda m: sec, doc)
else:   # first time: after the introduction, before the first section
    i = doc.find("\n## ")
    doc = doc[:i + 1] + sec + "\n\n" + doc[i + 1:] if i >= 0 else doc + "\n" + sec + "\n"
open(sys.argv[2], "w").write(doc)
PY
  rm -f "$sec"
  echo "bench-tiers: docs/results.md updated (and docs/results-tiers-*.png)" >&2
fi
echo "bench-tiers: $((SECONDS - t0)) s; table in $B/bench/tiers.md, plots in $B/bench/tiers-*.png, logs in $B/bench/tiers-*.ser" >&2
exit $tab_rc
