#!/usr/bin/env bash
# Fetches (once) and caches QEMU 10 from Debian bookworm-backports, unpacked
# beside the host's QEMU 7.2 rather than installed: QEMU 7.2 refuses any APIC
# ID above 255 under TCG, 10 starts a CPU at x2APIC ID 256 (docs/scale.md).
# The packages come through a private apt configuration (the host's apt state
# untouched) from the Debian mirror this machine's apt uses. Prints the path
# of a wrapper that runs the unpacked qemu-system-x86_64 with its own module
# folder (QEMU_MODULE_DIR) and firmware folder (-L). Needs root for the
# default cache in /var/cache.
set -euo pipefail
CACHE=${HV_QEMU10_CACHE:-/var/cache/hv-qemu10}
SUITE=bookworm-backports
PKGS="qemu-system-x86 qemu-system-common qemu-system-data"
. "$(dirname "$0")/lib-mirror.sh"
wrapper=$CACHE/qemu-system-x86_64
if [ -x "$wrapper" ] && "$wrapper" --version 2>/dev/null | grep -q '^QEMU emulator version 1[0-9]\.'; then
  echo "$wrapper"; exit 0
fi
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || { echo "qemu10: no Debian mirror in this machine's apt sources (set HV_DEBIAN_MIRROR)" >&2; exit 1; }
for t in apt-get apt-cache dpkg-deb ldd; do
  command -v $t >/dev/null || { echo "qemu10: $t missing" >&2; exit 1; }
done
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"; flock 9
apt=$CACHE/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
echo "deb $MIRROR $SUITE main" > "$apt/sources.list"
apt_opts=(-o Dir::Etc::sourcelist="$apt/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt/lists"
          -o Dir::Cache="$apt/cache" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -q >&2
rm -rf "$CACHE/debs" "$CACHE/root.new"; mkdir -p "$CACHE/debs" "$CACHE/root.new"
# pkg/SUITE: the backports version, not the host's installed 7.2.
(cd "$CACHE/debs" && apt-get "${apt_opts[@]}" download $(for p in $PKGS; do echo "$p/$SUITE"; done) >&2) ||
  { echo "qemu10: apt-get download from $SUITE failed" >&2; exit 1; }
for d in "$CACHE"/debs/*.deb; do dpkg-deb -x "$d" "$CACHE/root.new"; done
rm -rf "$CACHE/root"; mv "$CACHE/root.new" "$CACHE/root"
bin=$CACHE/root/usr/bin/qemu-system-x86_64
[ -x "$bin" ] || { echo "qemu10: no usr/bin/qemu-system-x86_64 in the unpacked packages" >&2; exit 1; }
# Shared libraries: the backports build links against bookworm's; name any
# the host lacks (apt-get install them) rather than run a binary that cannot load.
if ldd "$bin" | grep -q 'not found'; then
  echo "qemu10: $bin needs libraries this host lacks:" >&2; ldd "$bin" | grep 'not found' >&2; exit 1
fi
cat > "$wrapper.new" <<EOW
#!/bin/sh
# QEMU 10 unpacked by tools/qemu10.sh: its own modules and firmware, no audio.
QEMU_MODULE_DIR=$CACHE/root/usr/lib/x86_64-linux-gnu/qemu exec $bin -L $CACHE/root/usr/share/qemu -audio none "\$@"
EOW
chmod +x "$wrapper.new"; mv "$wrapper.new" "$wrapper"
"$wrapper" --version | head -n1 | grep -q '^QEMU emulator version 1[0-9]\.' ||
  { echo "qemu10: $wrapper does not run:" >&2; "$wrapper" --version >&2 || true; exit 1; }
echo "qemu10: $("$wrapper" --version | head -n1) in $CACHE" >&2
echo "$wrapper"
