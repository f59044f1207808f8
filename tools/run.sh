#!/usr/bin/env bash
# make run: boot build/hv.elf and Debian's kernel with the project's initramfs
# (corei7_skylake_x, 2 CPUs) on the emulator the tests trust, and show the
# serial console. That is the project's patched Bochs 3.0
# (tools/bochs-patched.sh, built once into /var/cache/hv-bochs-patched,
# about 2.5 minutes the first time) with hlt=guest, as every Linux run of
# `make test`; RUN_BOCHS=stock runs Debian's Bochs 3.0 instead (its defect
# H kills some two-CPU boots: docs/bochs.md), RUN_BOCHS=/path/to/bochs any
# other build.
# RUN_MODEL, RUN_CPUS, RUN_TIMEOUT, HV_CMDLINE, GUEST_CMDLINE override the
# defaults; RUN_GUEST=none boots the hypervisor alone (platform report only).
# The guest's command line always gets panic=1 oops=panic (unless it names
# panic= itself): a guest that dies reboots, the hypervisor traps the reset
# and ends the run at once with "hv: guest died: ..." and result=fail.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh || exit 1
mkdir -p build
guest=()
if [ "${RUN_GUEST:-linux}" != none ]; then
  kernel=$(tools/guest-kernel.sh) || exit 1
  tools/mkinitrd.sh build/initrd.cpio.gz || exit 1
  guest=("$kernel" build/initrd.cpio.gz)
fi
hv_cmdline=${HV_CMDLINE:-exit=bochs}
guest_cmdline=${GUEST_CMDLINE:-console=ttyS0}
[[ " $guest_cmdline" == *" panic="* ]] || guest_cmdline+=" panic=1 oops=panic"
bochs=${RUN_BOCHS:-patched} what=""
case $bochs in
  patched)
    echo "run: the project's patched Bochs 3.0 (tools/bochs-patched.sh; a first run builds it, about 2.5 minutes)"
    HV_BOCHS=$(tools/bochs-patched.sh) || { echo "run: tools/bochs-patched.sh failed (RUN_BOCHS=stock runs Debian's Bochs 3.0)"; exit 1; }
    export HV_BOCHS
    # (its HLT wakes for a pending virtual interrupt, as hardware's does)
    [[ " $hv_cmdline" == *" hlt="* ]] || hv_cmdline+=" hlt=guest"
    what="the patched Bochs 3.0" ;;
  stock)
    unset HV_BOCHS
    what="Debian's Bochs 3.0 (stock: its defect H kills some 2-CPU boots)" ;;
  *)
    [ -x "$bochs" ] || { echo "run: RUN_BOCHS=$bochs: expected patched, stock or the path of a Bochs binary"; exit 1; }
    export HV_BOCHS=$bochs
    what="Bochs $bochs" ;;
esac
HV_CMDLINE="$hv_cmdline" GUEST_CMDLINE="$guest_cmdline" \
  tools/mkiso.sh build/run.iso build/hv.elf "${guest[@]}" || exit 1
echo "run: $what, ${RUN_MODEL:-corei7_skylake_x} with ${RUN_CPUS:-2} CPUs; hv: $hv_cmdline; guest: $guest_cmdline"
echo "run: serial log in build/run.ser"
: > build/run.ser    # not the last run's log: neither tail nor the watcher below may read it
tools/run-bochs.sh build/run.iso build/run.ser "${RUN_MODEL:-corei7_skylake_x}" "${RUN_CPUS:-2}" "${RUN_TIMEOUT:-900}" 512 &
pid=$!
# The hypervisor ends the run itself (exit=bochs) when the guest powers off
# or dies; should Bochs go on after its result line (exit= not bochs), it is
# stopped 10 s later.
(
  while kill -0 $pid 2>/dev/null; do
    sleep 2
    grep -q 'hv: result=' build/run.ser 2>/dev/null || continue
    sleep 10
    kill -0 $pid 2>/dev/null || break
    echo "run: stopping Bochs: the hypervisor gave its result 10 s ago"
    pkill -TERM -P $pid    # run-bochs.sh's timeout, which ends Bochs
    break
  done
) &
watcher=$!
# Follow the serial console while Bochs runs; tail reads the rest once Bochs has ended.
tail -n +1 -s 0.5 -F --pid=$pid build/run.ser 2>/dev/null | tr -d '\r'
wait $pid; rc=$?
kill $watcher 2>/dev/null; wait $watcher 2>/dev/null
grep -q 'hv: result=pass' build/run.ser && echo "run: hv reported pass" || {
  died=$(tr -d '\r' < build/run.ser | grep -m1 -o 'hv: guest died: .*')
  echo "run: hv did not report pass (Bochs exit $rc${died:+; $died})"; exit 1; }
