# Sourced by the benches (tools/bench-tiers.sh, bench-seeds.sh, bench-boot.sh).

# bare_iso OUT KERNEL INITRD CMDLINE: a GRUB ISO that boots the kernel itself
# (Linux boot protocol), no hypervisor.
bare_iso() {
  local dir rc; dir=$(mktemp -d)
  mkdir -p "$dir/boot/grub"
  cp "$2" "$dir/boot/vmlinuz"; cp "$3" "$dir/boot/initrd"
  printf 'set timeout=0\nserial --unit=0 --speed=115200\nterminal_output serial\nmenuentry bare {\n linux /boot/vmlinuz %s\n initrd /boot/initrd\n boot\n}\n' "$4" > "$dir/boot/grub/grub.cfg"
  grub-mkrescue -o "$1" "$dir" >/dev/null 2>&1; rc=$?; rm -rf "$dir"; return $rc
}

# What a dead or hung guest prints (a panic, Bochs 3.0 defect 3's death at a
# user-space page fault, an RCU stall, a blocked task, a soft lockup).
bench_dead_re='---\[ end Kernel panic|BUG: ENTRY_TRAMPOLINE|^PANIC|rcu: INFO: rcu_(preempt|sched) (self-)?detected stall|blocked for more than [0-9]+ seconds|soft lockup'

# boot_retried WHO LABEL ISO LOG MODEL CPUS TIMEOUT QUIET DONE_RE: boots ISO
# under Bochs (HV_BOCHS from the environment) until LOG matches DONE_RE, at
# most 3 times: a boot whose guest dies (Bochs 3.0 defect 3, ../shared/
# TESTING.md), prints a hang sign or stays silent QUIET seconds (the open
# hang, docs/interrupts.md) is stopped and made again; every failed
# attempt's log is kept as LOG's name with .tryN.
boot_retried() {
  local who=$1 label=$2 iso=$3 log=$4 model=$5 cpus=$6 tmo=$7 quiet_max=$8 done_re=$9 try
  for try in 1 2 3; do
    rm -f "$log"
    tools/run-bochs.sh "$iso" "$log" "$model" "$cpus" "$tmo" 512 >/dev/null &
    local pid=$! size=0 quiet=0 now
    while kill -0 $pid 2>/dev/null; do
      sleep 5
      now=$(stat -c %s "$log" 2>/dev/null || echo 0)
      if [ "$now" = "$size" ]; then quiet=$((quiet + 5)); else size=$now quiet=0; fi
      if [ $quiet -ge "$quiet_max" ] || tr -d '\r' < "$log" 2>/dev/null | grep -Eq -- "$bench_dead_re"; then
        pkill -f "$(basename "${log%.ser}").bochsrc"; break
      fi
    done
    wait $pid
    tr -d '\r' < "$log" | grep -Eq -- "$done_re" && return 0
    cp "$log" "${log%.ser}.try$try.ser"
    echo "$who: $label: the guest died or hung (Bochs; log kept as ${log%.ser}.try$try.ser), booting again" >&2
  done
  return 1
}
