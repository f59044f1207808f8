#!/usr/bin/env bash
# make run: boot build/hv.elf and Debian's kernel with the project's initramfs
# under Bochs 3.0 (corei7_skylake_x, 2 CPUs) and show the serial console.
# RUN_MODEL, RUN_CPUS, RUN_TIMEOUT, HV_CMDLINE, GUEST_CMDLINE override the defaults;
# RUN_GUEST=none boots the hypervisor alone (platform report only).
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
HV_CMDLINE="${HV_CMDLINE:-exit=bochs}" GUEST_CMDLINE="${GUEST_CMDLINE:-console=ttyS0}" \
  tools/mkiso.sh build/run.iso build/hv.elf "${guest[@]}" || exit 1
echo "run: Bochs 3.0 ${RUN_MODEL:-corei7_skylake_x} with ${RUN_CPUS:-2} CPUs; serial log in build/run.ser"
tools/run-bochs.sh build/run.iso build/run.ser "${RUN_MODEL:-corei7_skylake_x}" "${RUN_CPUS:-2}" "${RUN_TIMEOUT:-900}" 512 &
pid=$!
# Follow the serial console while Bochs runs; tail reads the rest once Bochs has ended.
tail -n +1 -s 0.5 -F --pid=$pid build/run.ser 2>/dev/null | tr -d '\r'
wait $pid; rc=$?
grep -q 'hv: result=pass' build/run.ser && echo "run: hv reported pass" || { echo "run: hv did not report pass (Bochs exit $rc)"; exit 1; }
