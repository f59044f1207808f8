#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need (as root), and the
# cached trixie chroot with Bochs 3.0. Without root it names what is missing.
# Not here: linux-headers-<release> for the guest test module (it must match the
# guest kernel tools/guest-kernel.sh caches); tools/build-ipigen.sh installs it.
set -euo pipefail
PKGS="build-essential nasm gnu-efi lintian qemu-system-x86 ovmf mtools dosfstools grub-pc-bin grub-common xorriso debootstrap busybox-static cpio gzip python3 python3-matplotlib clang-14 libclang-rt-14-dev cppcheck clang-tidy-14 patch xz-utils lz4 rt-tests bcc bin86 acpica-tools"
missing=()
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q "${missing[@]}" >/dev/null
fi
if [ "${1:-}" != "--no-bochs" ]; then
  "$(dirname "$0")/bochs-chroot.sh" >/dev/null
fi
# QEMU 10 (bookworm-backports, unpacked in a cache beside Debian's 7.2): the
# run with CPUs above APIC ID 255 needs it and fails, naming it, without it.
"$(dirname "$0")/qemu10.sh" >/dev/null || echo "deps: QEMU 10 could not be fetched (tools/qemu10.sh): the qemu-x2apic-256 run will fail" >&2
echo "deps: ok"
