#!/usr/bin/env bash
# The installed system boots under hv (issue 46), a CI step of its own
# (.ci/run, make test-deb; about 10 minutes of emulator time with the UEFI
# boots, too long for make test's budget):
#   1. make deb; lintian: no error or warning (tools/deb/lintian-overrides
#      says why its one override);
#   2. tools/deb-disk.sh make: the cached Debian bookworm system
#      (tools/deb-base.sh) on an ext4 disk image, GRUB in its boot sector,
#      the package installed with apt, GRUB_DEFAULT=hv, update-grub;
#   3. the patched Bochs boots the disk: GRUB's default entry is hv's, hv
#      starts the installed kernel with its initramfs, which mounts root from
#      the ATA disk and runs the test's init there (tools/deb-check-init:
#      not systemd, see docs/usage.md), whose checks give hv's verdict;
#   4. a newer kernel package installed (dpkg -i): its hooks regenerate the
#      entry, and the second boot runs the new kernel under hv;
#   5. apt-get remove hv: update-grub leaves no hv entry, Linux's stay.
# Each Bochs boot has the patched Bochs's PMU ("pmu: enabled=1"): the init
# runs Debian's perf stat and perf record on the 2 vCPUs (issue 45);
# DEB_BOCHSRC= (empty): the boots without it, whose perf checks must fail.
# The UEFI path on the same disk (its partition 2 is the ESP): the disk's
# build ran 'hv-efi install --removable' (no EFI variables in a chroot, so
# hv.efi is the ESP's fallback loader \EFI\BOOT\BOOTX64.EFI; no NVRAM
# entry); QEMU+OVMF (fresh NVRAM) boots the disk after steps 3 and 4: hv.efi
# reads \hv\hv.cfg and the kernel and initramfs hv-efi copied there (the
# sizes it prints are the disk's files'), finds no VMX (QEMU's TCG) and
# hands the machine to that kernel natively (novmx=linux); the initramfs
# mounts root from the IDE disk and the test's init checks it, with
# hvcheck.expect=native (no hypervisor must answer). After step 4 the ESP
# holds the new kernel only; after step 5 none of hv's files.
# HV_EMU_WRAP: a command each emulator run goes under (a machine's slot
# lock, say); none by default. Every run's serial log is removed before it:
# a run that never started leaves no log to pass on.
# Ends "N passed, N failed"; exit 1 on a failure. Logs: HV_DEB_CACHE/run/logs
# (default /var/cache/hv-deb/run; the disk image is there too, never in the tree).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
run=${HV_DEB_CACHE:-/var/cache/hv-deb}/run
LOGS=$run/logs
img=$run/disk.img
mkdir -p "$LOGS"
pass=0 fail=0 t_all=$SECONDS
ok()  { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
expect() {
  local name=$1 log=$2 miss=() text pat; shift 2
  text=$(tr -d '\r' < "$log" 2>/dev/null)
  for pat in "$@"; do grep -Eq -- "$pat" <<<"$text" || miss+=("$pat"); done
  if [ ${#miss[@]} -eq 0 ]; then ok "$name"; else bad "$name" "missing /${miss[*]}/ in $log"; fi
}
expect_not() {
  if tr -d '\r' < "$2" | grep -Eq -- "$3"; then bad "$1" "unexpected /$3/ in $2"; else ok "$1"; fi
}
finish() { echo "deb: $((SECONDS - t_all)) s in all"; echo "$pass passed, $fail failed"; [ $fail = 0 ]; exit $?; }
step() { local t0=$SECONDS name=$1; shift; "$@" > "$LOGS/$name.out" 2>&1; local rc=$?
  echo "  $name: exit $rc after $((SECONDS - t0)) s"; return $rc; }

# 1. The package.
rm -f $B/hv_*.deb
if step make-deb make -s B=$B deb; then ok deb/build; else bad deb/build "make deb failed ($LOGS/make-deb.out)"; finish; fi
deb=$(ls $B/hv_*_amd64.deb)
if command -v lintian >/dev/null; then
  lintian "$deb" > "$LOGS/lintian.out" 2>&1
  expect_not deb/lintian "$LOGS/lintian.out" '^[EW]: '
else bad deb/lintian "lintian not installed (make deps)"; fi
dpkg-deb -c "$deb" > "$LOGS/contents.out"
expect deb/contents "$LOGS/contents.out" ' \./boot/hv-0~' ' \./etc/grub\.d/20_linux_hv$' ' \./etc/default/grub\.d/hv\.cfg$' \
  ' \./usr/lib/hv/hv\.efi$' ' \./usr/lib/hv/hvcall$' ' \./usr/share/man/man7/hv\.7\.gz$' \
  ' \./usr/sbin/hv-efi$' ' \./etc/default/hv-efi$' ' \./etc/kernel/postinst\.d/zz-hv-efi$' ' \./etc/kernel/postrm\.d/zz-hv-efi$' \
  ' \./etc/initramfs/post-update\.d/hv-efi$' ' \./usr/share/man/man8/hv-efi\.8\.gz$'

# 2. The installed disk.
hvb=$(tools/bochs-patched.sh) || { bad deb/bochs-patched "tools/bochs-patched.sh failed"; finish; }
# (the workload of the init's perf checks: guest/test/pmutest's spin)
${CC:-gcc} -static -O1 -Wall -Wextra -Werror -o $B/deb-pmutest guest/test/pmutest.c ||
  { bad deb/pmutest "guest/test/pmutest.c did not build (gcc -static: libc6-dev)"; finish; }
if DEB_PERF_WORK=$B/deb-pmutest DEB_TEST_HV="exit=bochs hlt=guest" DEB_TEST_EFI_HV="exit=qemu" \
   DEB_TEST_EFI_LINUX="console=ttyS0,115200 init=/usr/local/sbin/hv-check hvcheck.expect=native panic=1" step disk tools/deb-disk.sh make "$img" "$deb"; then ok deb/disk
else bad deb/disk "tools/deb-disk.sh make failed ($LOGS/disk.out)"; tail -n 20 "$LOGS/disk.out"; finish; fi
read -r k_old k_new < "${HV_DEB_CACHE:-/var/cache/hv-deb}/kernels"
tools/deb-disk.sh cfg "$img" > "$LOGS/grub1.cfg" 2>/dev/null
# (the hv entry's module2 line: the kernel, root by UUID, the knobs' words)
expect deb/grub-entry "$LOGS/grub1.cfg" '^ *set default="hv"$' "^menuentry 'Debian GNU/Linux' " \
  "--id 'hv' \{\$" "^	multiboot2	/boot/hv-0~[^ ]+ exit=bochs hlt=guest\$" \
  "^	module2	/boot/vmlinuz-$k_old root=UUID=[0-9a-f-]+ ro console=ttyS0,115200 init=/usr/local/sbin/hv-check\$" \
  "^	module2	--nounzip	/boot/initrd.img-$k_old\$" "--id 'hv-probe'"
expect_not deb/grub-bare-root-uuid "$LOGS/grub1.cfg" '	linux	.* root=/dev/'

# boot NAME KERNEL: Bochs boots the disk; hv's verdict, the guest's checks.
boot() {
  local n=$1 k=$2 log=$LOGS/$1.ser t0=$SECONDS rc
  rm -f "$log"
  HV_BOCHS=$hvb HV_BOCHSRC_EXTRA="${DEB_BOCHSRC-pmu: enabled=1}" ${HV_EMU_WRAP:-} tools/run-bochs.sh "$img" "$log" corei7_skylake_x 2 "${DEB_BOOT_TIMEOUT:-900}" 512 \
    > "$LOGS/$n.run" 2>&1
  rc=$?
  echo "  $n: Bochs exit $rc after $((SECONDS - t0)) s (patched: $hvb)"
  # (Bochs exits 1 after the ACPI power-off hv's exit=bochs asks for;
  # 124: the timeout; 125-127: it never ran, and the log is not a run's)
  case $rc in 0|1) ok "deb/$n/bochs-ends" ;;
    *) bad "deb/$n/bochs-ends" "Bochs exit $rc (1: the power-off; $LOGS/$n.run)" ;; esac
  expect "deb/$n/grub-default-is-hv" "$log" "Booting .Debian GNU/Linux, with hv 0~"
  expect "deb/$n/result" "$log" '^hv: result=pass' '^hv: canary intact' 'hv: guest ends the machine'
  expect "deb/$n/kernel" "$log" "^guest: kernel $k\$" '^guest: init started: /usr/local/sbin/hv-check as pid 1$'
  expect "deb/$n/root-from-disk" "$log" '^guest: root /dev/sda1 ext4$' '^guest: root uuid ([0-9a-f-]+) \(root=UUID=\1\)$' \
    'EXT4-fs \(sda1\): mounted filesystem'
  expect "deb/$n/guest-checks" "$log" '^guest: cpus=2$' '^guest: verdict pass$' '^guest: hvcall verdict pass rc=0$'
  expect_not "deb/$n/healthy" "$log" '^guest: check failed|^PANIC|^EXCEPTION|Kernel panic|^hv: guest died|still here after'
  # Debian's perf on the patched Bochs's PMU (its pmu: line), through hv, on
  # 2 vCPUs (tools/deb-check-init): perf stat of hv-pmutest spin counts its
  # 3,000,000 loop instructions in user mode and what the static binary's
  # start and exit add (under 2%); cycles at least as many (one a Bochs
  # step); perf record's samples every 10007 user instructions, about 300,
  # two thirds in spin_a and one third in spin_b as perf report names them
  # from the binary's symbols (each within 4 points).
  local ins cyc pa pb ns
  ins=$(tr -d '\r' < "$log" | sed -n 's/^guest: perf stat instructions:u \([0-9]*\)$/\1/p' | head -n1)
  cyc=$(tr -d '\r' < "$log" | sed -n 's/^guest: perf stat cycles:u \([0-9]*\)$/\1/p' | head -n1)
  if [ -n "$ins" ] && [ -n "$cyc" ] && [ "$ins" -ge 3000000 ] && [ "$ins" -lt 3060000 ] && [ "$cyc" -ge "$ins" ]; then
    ok "deb/$n/perf-stat"; else bad "deb/$n/perf-stat" "instructions:u ${ins:-none} (3000000 <= N < 3060000), cycles:u ${cyc:-none} (>= instructions) in $log"; fi
  pa=$(tr -d '\r' < "$log" | sed -n 's/^guest: perf report spin_a \([0-9]*\)\.[0-9]*% .*/\1/p' | head -n1)
  pb=$(tr -d '\r' < "$log" | sed -n 's/^guest: perf report spin_b \([0-9]*\)\.[0-9]*% .*/\1/p' | head -n1)
  ns=$(tr -d '\r' < "$log" | sed -n 's/^guest: perf record samples \([0-9]*\)$/\1/p' | head -n1)
  if [ -n "$pa" ] && [ -n "$pb" ] && [ -n "$ns" ] && [ "$pa" -ge 62 ] && [ "$pa" -le 70 ] && [ "$pb" -ge 29 ] && [ "$pb" -le 37 ] &&
     [ "$ns" -ge 295 ] && [ "$ns" -le 320 ]; then ok "deb/$n/perf-record"
  else bad "deb/$n/perf-record" "spin_a ${pa:-none}% (62..70), spin_b ${pb:-none}% (29..37), ${ns:-no} samples (295..320) in $log"; fi
  echo "  $n: perf stat instructions:u ${ins:-?} cycles:u ${cyc:-?}; perf record ${ns:-?} samples, spin_a ${pa:-?}%, spin_b ${pb:-?}%"
  local t
  t=$(tr -d '\r' < "$log" | sed -n 's/^\[ *\([0-9.]*\)\] Run \/init as init process$/\1/p' | head -n1)
  echo "  $n: the initramfs started at ${t:-?} s of guest time, root mounted from the disk at $(tr -d '\r' < "$log" |
    sed -n 's/^\[ *\([0-9.]*\)\] EXT4-fs (sda1): mounted.*/\1/p' | head -n1) s"
}
# esp NAME KERNEL: the ESP holds hv.efi (also as the fallback loader), the
# kernel and initramfs as on the root file system, hv.cfg naming them.
esp() {
  local n=$1 k=$2 f=$LOGS/$1.out
  tools/deb-disk.sh esp "$img" > "$f" 2>/dev/null
  local e
  e=$(awk '$1 == "root" && $2 == "/usr/lib/hv/hv.efi" { print $3 }' "$f")
  expect "deb/$n/files" "$f" "^esp ::/EFI/BOOT/BOOTX64\.EFI ${e:-none} " "^esp ::/EFI/hv/hv\.efi ${e:-none} " \
    "^kernel=\\\\hv\\\\vmlinuz-$k\$" "^initrd=\\\\hv\\\\initrd\.img-$k\$" \
    '^cmdline=root=UUID=[0-9a-f-]+ ro console=ttyS0,115200 init=/usr/local/sbin/hv-check hvcheck.expect=native panic=1$' '^options=exit=qemu$'
  local w
  for w in vmlinuz initrd.img; do
    read -r _ _ sum size < <(grep "^root /boot/$w-$k " "$f")
    expect "deb/$n/$w-copied" "$f" "^esp ::/hv/$w-$k ${sum:-none} ${size:-none}\$"
  done
  expect_not "deb/$n/only-newest" <(grep -E '^esp ::/hv/(vmlinuz|initrd\.img)-' "$f" | grep -v -- "-$k ") .
}
# uefi NAME KERNEL nvram|fallback: QEMU+OVMF boots the disk, with the NVRAM
# efibootmgr wrote in the disk's build (OVMF starts Boot0000 "hv") or a
# fresh one (OVMF starts the disk, i.e. its fallback loader, hv.efi); hv.efi
# loads the kernel and initramfs from the ESP and, without VMX, starts them
# natively.
uefi() {
  local n=$1 k=$2 how=$3 log=$LOGS/$1.ser t0=$SECONDS rc vars=$run/$1-vars.fd
  local ks is
  if [ "$how" = nvram ]; then
    if tools/deb-disk.sh nvram "$img" "$vars" > "$LOGS/$n-nvram.out" 2>&1; then ok "deb/$n/nvram"
    else bad "deb/$n/nvram" "($LOGS/$n-nvram.out)"; fi
    expect "deb/$n/nvram-has-hv" "$LOGS/$n-nvram.out" '^ovmf-vars: .*Boot0000 \(.*BootOrder \(2 bytes'
  else cp /usr/share/OVMF/OVMF_VARS.fd "$vars"; fi
  ks=$(awk -v f="/boot/vmlinuz-$k" '$1 == "root" && $2 == f { print $4 }' "$LOGS/esp-$n.out")
  is=$(awk -v f="/boot/initrd.img-$k" '$1 == "root" && $2 == f { print $4 }' "$LOGS/esp-$n.out")
  rm -f "$log"
  ${HV_EMU_WRAP:-} timeout -k 5 "${DEB_UEFI_TIMEOUT:-600}" qemu-system-x86_64 -machine pc -cpu max -smp 2 -m 1024 \
    -drive if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE.fd -drive if=pflash,format=raw,file="$vars" \
    -drive file="$img",format=raw,if=ide -serial file:"$log" \
    -display none -monitor none -no-reboot -net none -device isa-debug-exit,iobase=0xf4,iosize=0x04 > "$LOGS/$n.run" 2>&1
  rc=$?
  echo "  $n: QEMU exit $rc after $((SECONDS - t0)) s"
  [ $rc = 0 ] && ok "deb/$n/powers-off" || bad "deb/$n/powers-off" "QEMU exit $rc (0: the guest's ACPI power-off)"
  if [ "$how" = nvram ]; then
    expect "deb/$n/ovmf-boots-the-entry" "$log" 'BdsDxe: starting Boot0000 "hv" from HD\(2,MBR,0x68766465,'
  else
    expect "deb/$n/ovmf-boots-the-fallback" "$log" 'BdsDxe: starting Boot[0-9A-F]{4} "UEFI QEMU HARDDISK'
  fi
  expect "deb/$n/hv-loaded-the-disk-files" "$log" \
    "efi: hv\.cfg: kernel \\\\hv\\\\vmlinuz-$k \(${ks:-none} bytes\), initrd \\\\hv\\\\initrd\.img-$k \(${is:-none} bytes\)"
  expect "deb/$n/no-vmx-native" "$log" 'vmx: not supported by this CPU' 'handing the machine to Linux natively \(novmx=linux' \
    'hv: native boot: entering the kernel at 0x'
  expect "deb/$n/kernel" "$log" "^guest: kernel $k\$" '^guest: init started: /usr/local/sbin/hv-check as pid 1$'
  expect "deb/$n/root-from-disk" "$log" '^guest: root /dev/sda1 ext4$' '^guest: root uuid ([0-9a-f-]+) \(root=UUID=\1\)$' \
    'EXT4-fs \(sda1\): mounted filesystem'
  expect "deb/$n/guest-checks" "$log" '^guest: cpus=2$' '^guest: no hypervisor answers, as expected' \
    '^guest: verdict pass \(native\)$' '^guest: hvcall verdict: no hypervisor'
  expect_not "deb/$n/healthy" "$log" '^guest: check failed|^PANIC|^EXCEPTION|Kernel panic|still here after'
}
# 3. The first boot (Bochs, GRUB), then the UEFI path (QEMU+OVMF).
boot boot1 "$k_old"
esp esp-uefi1 "$k_old"
uefi uefi1 "$k_old" nvram

# 4. The kernel upgrade regenerates the entry.
if step kernel tools/deb-disk.sh kernel "$img"; then ok deb/kernel-install; else bad deb/kernel-install "($LOGS/kernel.out)"; fi
tools/deb-disk.sh cfg "$img" > "$LOGS/grub2.cfg" 2>/dev/null
expect deb/grub-regenerated "$LOGS/grub2.cfg" "^	module2	/boot/vmlinuz-$k_new root=UUID=" "--id 'hv-$k_new'" "--id 'hv-$k_old'"
# (the "hv" entry, the first after 20_linux_hv's header, has the new kernel)
expect deb/grub-hv-is-newest <(sed -n "/--id 'hv' {/,/^}/p" "$LOGS/grub2.cfg") "vmlinuz-$k_new "
boot boot2 "$k_new"
esp esp-uefi2 "$k_new"
uefi uefi2 "$k_new" fallback

# 5. Removal.
if step remove tools/deb-disk.sh remove "$img"; then ok deb/remove; else bad deb/remove "($LOGS/remove.out)"; fi
tools/deb-disk.sh cfg "$img" > "$LOGS/grub3.cfg" 2>/dev/null
expect_not deb/removed-entries "$LOGS/grub3.cfg" 'multiboot2|--id .hv'
expect deb/bare-entries-kept "$LOGS/grub3.cfg" "^menuentry 'Debian GNU/Linux' " "	linux	/boot/vmlinuz-$k_new root=UUID="
tools/deb-disk.sh esp "$img" > "$LOGS/esp3.out" 2>/dev/null
expect_not deb/esp-cleaned "$LOGS/esp3.out" '^esp '
expect deb/esp-cleaned-cfg "$LOGS/esp3.out" '^\(none\)$'
tools/deb-disk.sh nvram "$img" "$run/removed-vars.fd" > "$LOGS/nvram3.out" 2>&1
expect_not deb/nvram-entry-removed "$LOGS/nvram3.out" '^Boot0000-'
finish
