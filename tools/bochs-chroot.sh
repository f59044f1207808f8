#!/usr/bin/env bash
# Sets up (once) and caches a Debian trixie chroot with Bochs 3.0 in it.
# Bochs 3.0 needs trixie's glibc; bookworm's Bochs 2.7 has no posted interrupts.
# Usage: tools/bochs-chroot.sh            -> prints the chroot path when ready
set -euo pipefail
ROOT=${HV_BOCHS_CHROOT:-/var/cache/hv-bochs-trixie}
. "$(dirname "$0")/lib-mirror.sh"
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || { echo "$(basename "$0"): no Debian mirror in this machine's apt sources (set HV_DEBIAN_MIRROR)" >&2; exit 1; }

ready() { [ -x "$ROOT/usr/bin/bochs" ] && [ -f "$ROOT/usr/share/bochs/BIOS-bochs-latest" ] && [ -f "$ROOT/.hv-ready" ]; }

if ready; then echo "$ROOT"; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "bochs-chroot: need root to build the trixie chroot at $ROOT (or set HV_BOCHS_CHROOT to a ready one)" >&2
  exit 1
fi
command -v debootstrap >/dev/null || { echo "bochs-chroot: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }

exec 9>"/var/lock/hv-bochs-chroot.lock"; flock 9
if ready; then echo "$ROOT"; exit 0; fi
echo "bochs-chroot: building trixie chroot with Bochs 3.0 at $ROOT (about a minute)" >&2
rm -rf "$ROOT.tmp"
if ! debootstrap --variant=minbase \
      --include=bochs,bochsbios,vgabios,bochs-term,dbus-user-session \
      trixie "$ROOT.tmp" "$MIRROR" >&2; then
  echo "bochs-chroot: debootstrap reported an error; trying apt-get -f install inside" >&2
  mount -t proc proc "$ROOT.tmp/proc"
  trap 'umount "$ROOT.tmp/proc" 2>/dev/null || true' EXIT
  chroot "$ROOT.tmp" apt-get -f install -y >&2
  umount "$ROOT.tmp/proc"; trap - EXIT
fi
[ -x "$ROOT.tmp/usr/bin/bochs" ] || { echo "bochs-chroot: bochs not installed in chroot" >&2; exit 1; }
touch "$ROOT.tmp/.hv-ready"
rm -rf "$ROOT"; mv "$ROOT.tmp" "$ROOT"
echo "$ROOT"
