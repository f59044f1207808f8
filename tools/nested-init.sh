#!/bin/sh
# L1's /init for the nested level (issue 49; tools/run-nested.sh puts it in
# the initramfs tools/mknested.sh builds). L1 is Debian's kernel, bare on the
# patched Bochs. It loads kvm_intel with nested=1, then does what a user on
# an Intel host with nested KVM does: `tools/run-qemu-kvm.sh` in the
# hypervisor's tree (/hv), which boots the hypervisor (L2) under QEMU+KVM;
# the hypervisor runs the usual test Linux (L3). L2's serial console is
# QEMU's stdio, printed here with the prefix "L2| " on L1's console, so the
# whole thing is in Bochs's serial log. Every line of L1's own is "l1: ...".
#
# Options on L1's kernel command line:
#   l1.mode=uefi|iso|both   the stick through OVMF (make qemu-kvm's path),
#                           the Multiboot2 ISO through SeaBIOS and GRUB
#                           (HV_ISO=build/hv.iso), or both in turn (default uefi)
#   l1.smp=N                the hypervisor's vCPUs (HV_SMP, default 2)
#   l1.mem=MB               L2's memory (HV_MEM, default 1024)
#   l1.timeout=S            each QEMU run's limit in L1 seconds (default 3000)
#   l1.kvm=A,B              more kvm_intel parameters (e.g. enable_apicv=0)
#   l1.trace=0              no KVM trace events (default 1: nested VM-entry
#                           failures and the exits reflected to the hypervisor)
#   l1.trace=2              also one vCPU's exits, entries, injected events and
#                           APIC events (l1.tracevcpu=N, default 1), the last
#                           l1.tracelines (default 300) printed after each run
#   l1.shell=1              a shell on the console at the end
export PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
exec </dev/console >/dev/console 2>&1
echo
up() { cut -d' ' -f1 /proc/uptime; }
CMDLINE=$(cat /proc/cmdline)
opt() {   # opt NAME DEFAULT: the value of NAME= on the command line (the last one)
	v=$2
	for w in $CMDLINE; do case $w in "$1"=*) v=${w#*=} ;; esac; done
	echo "$v"
}
echo "l1: init at $(up) s (L1's clock), $(grep -c ^processor /proc/cpuinfo) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB, kernel $(uname -r)"
echo "l1: cpu: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'); vmx flags: $(grep -m1 '^vmx flags' /proc/cpuinfo | sed 's/.*: //' | cut -c1-400)"

M=/lib/modules/$(uname -r)/kernel
kvmopts=$(opt l1.kvm "" | tr ',' ' ')
insmod $M/virt/lib/irqbypass.ko || echo "l1: insmod irqbypass failed"
insmod $M/arch/x86/kvm/kvm.ko || echo "l1: insmod kvm failed"
# shellcheck disable=SC2086
if insmod $M/arch/x86/kvm/kvm-intel.ko nested=1 $kvmopts; then
	echo "l1: kvm_intel loaded at $(up) s (nested=1${kvmopts:+ $kvmopts})"
else
	echo "l1: insmod kvm-intel.ko failed (rc=$?)"
fi
P=/sys/module/kvm_intel/parameters
line=""
for p in nested ept unrestricted_guest enable_apicv enable_ipiv vpid flexpriority enable_shadow_vmcs preemption_timer pml eptad enable_pml nested_early_check; do
	[ -r $P/$p ] && line="$line $p=$(cat $P/$p)"
done
echo "l1: kvm_intel:$line"
dmesg | grep -iE 'kvm|vmx' | sed 's/^/l1: dmesg: /'
[ -c /dev/kvm ] && echo "l1: /dev/kvm present" || echo "l1: no /dev/kvm"

T=/sys/kernel/tracing
if [ "$(opt l1.trace 1)" != 0 ] && [ -d $T/events/kvm ]; then
	echo 4096 > $T/buffer_size_kb
	for e in kvm_nested_vmenter_failed kvm_nested_vmexit_inject kvm_nested_intr_vmexit; do
		if [ -e $T/events/kvm/$e/enable ]; then echo 1 > $T/events/kvm/$e/enable; else echo "l1: no trace event kvm:$e"; fi
	done
	if [ "$(opt l1.trace 1)" = 2 ]; then
		tv=$(opt l1.tracevcpu 1)
		for e in kvm_exit kvm_entry kvm_inj_exception kvm_inj_virq kvm_apic_accept_irq kvm_apic_ipi kvm_msr kvm_emulate_insn kvm_page_fault kvm_nested_vmexit kvm_apic kvm_userspace_exit; do
			[ -e $T/events/kvm/$e/enable ] || { echo "l1: no trace event kvm:$e"; continue; }
			# one vCPU where the event names it (kvm_exit: vcpu_id; kvm_entry: vcpu_id)
			grep -q 'vcpu_id' $T/events/kvm/$e/format && echo "vcpu_id == $tv" > $T/events/kvm/$e/filter
			echo 1 > $T/events/kvm/$e/enable
		done
		echo "l1: tracing vCPU $tv's exits, entries, injections and APIC events too"
	fi
	echo 1 > $T/tracing_on
	echo "l1: tracing kvm:kvm_nested_vmenter_failed, kvm:kvm_nested_vmexit_inject, kvm:kvm_nested_intr_vmexit"
else
	echo "l1: KVM trace events off or no tracefs"
fi

cd /hv || echo "l1: no /hv"
smp=$(opt l1.smp 2) mem=$(opt l1.mem 1024) tmo=$(opt l1.timeout 3000)
run_l2() {   # run_l2 NAME [ENV=VALUE...]: tools/run-qemu-kvm.sh as a user runs it, L2's console prefixed
	name=$1; shift
	echo "l1: $name: HV_SMP=$smp HV_MEM=$mem $* bash tools/run-qemu-kvm.sh (at $(up) s)"
	t0=$(up)
	( env HV_SMP="$smp" HV_MEM="$mem" "$@" timeout "$tmo" bash tools/run-qemu-kvm.sh; echo $? >/tmp/l2.rc ) 2>&1 |
		awk '{ sub(/\r$/, ""); print "L2| " $0; fflush() }'
	echo "l1: $name: run-qemu-kvm.sh exit $(cat /tmp/l2.rc) (33: hv's pass, 35: fail, 124: timeout) after $(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }') s of L1 time"
	if [ -d $T/events/kvm ]; then
		echo 0 > $T/tracing_on
		cp $T/trace /tmp/trace.txt
		n=$(grep -c kvm_nested_vmenter_failed /tmp/trace.txt)
		echo "l1: $name: kvm_nested_vmenter_failed events: $n"
		grep kvm_nested_vmenter_failed /tmp/trace.txt | head -n 40 | sed 's/^/l1: trace: /'
		echo "l1: $name: exits KVM reflected to the hypervisor (kvm_nested_vmexit_inject, by reason; the ring keeps the last 4 MiB a CPU):"
		awk '/kvm_nested_vmexit_inject: reason:/ { for (i = 1; i < NF; i++) if ($i == "reason:") n[$(i + 1)]++ }
			END { for (r in n) printf "l1:   %8d %s\n", n[r], r }' /tmp/trace.txt | sort -k2nr
		if [ "$(opt l1.trace 1)" = 2 ]; then
			echo "l1: $name: the last $(opt l1.tracelines 300) trace lines:"
			grep -v kvm_nested_vmexit_inject /tmp/trace.txt | grep -v '^#' | tail -n "$(opt l1.tracelines 300)" | sed 's/^/l1: trace: /'
		fi
		rm -f /tmp/trace.txt
		echo 1 > $T/tracing_on
		echo > $T/trace
	fi
	dmesg | grep -iE 'kvm|vmx|nested' | tail -n 20 | sed 's/^/l1: dmesg: /'
}
case $(opt l1.mode uefi) in
uefi) run_l2 uefi ;;
iso) run_l2 iso HV_ISO=build/hv.iso ;;
both) run_l2 uefi; run_l2 iso HV_ISO=build/hv.iso ;;
*) echo "l1: l1.mode=$(opt l1.mode uefi): expected uefi, iso or both" ;;
esac
echo "l1: done at $(up) s"
[ "$(opt l1.shell 0)" = 1 ] && sh
poweroff -f
