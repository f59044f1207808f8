#!/usr/bin/env bash
# Builds (once) and caches the project's patched Bochs 3.0: Debian trixie's
# bochs source package plus tools/bochs-patch/ (IPI virtualization and
# APIC-timer virtualization on the sapphire_rapids model, 64-byte aligned
# posted-interrupt descriptors; defects.patch: fixes of 3.0's VMX defects;
# xhci-msi.patch: an MSI capability on the xHCI, delivered to the local APICs;
# xhci-msix.patch: an MSI-X capability too, its table and PBA in a BAR of
# their own; vtd.patch with vtd.cc: VT-d remapping units, "vtd:" in the
# bochsrc; features.patch: IA32_MISC_ENABLE (fast strings on: Linux's
# FSRM path) and IA32_UMWAIT_CONTROL's reserved bits; amx.patch: XFD
# (IA32_XFD, IA32_XFD_ERR, #NM) and Bochs's AMX defects, the trace cache's
# cross-modifying code with AMX on; pmu.patch with pmu.cc: an architectural
# PMU (version 2: 4 GP and 3 fixed counters, the PMI through the LVTPC),
# "pmu: enabled=1" in the bochsrc, off without it; reset.patch: a machine that survives its reset: the soft reset
# as the chipset's INIT under VMX's rules, the UART's master reset, and the
# BIOS's two steps that failed after a warm reset, so the BIOS is built
# here too, beside the binary, and tools/run-bochs.sh takes it from there).
# Prints the path of the binary.
# The cache key is the hash of the patch and the configure flags:
# changing any of them builds again. Stock Bochs (tools/bochs-chroot.sh) stays
# the platform of every other test; tools/run-bochs.sh runs this one when
# HV_BOCHS names it. Needs root for the default cache in /var/cache.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${HV_BOCHS_PATCHED_CACHE:-/var/cache/hv-bochs-patched}
. "$(dirname "$0")/lib-mirror.sh"
MIRROR=$(debian_mirror)
[ -n "$MIRROR" ] || { echo "$(basename "$0"): no Debian mirror in this machine's apt sources (set HV_DEBIAN_MIRROR)" >&2; exit 1; }
PATCH_DIR=$here/bochs-patch
# Debian's CPU-related flags (debian/rules), so that each CPU model is the one
# the stock package has; no GUI, no debugger, no plugins; no IPS display (its
# SIGALRM handler logs, and deadlocks on the log lock when the signal lands
# while the CPU loop is logging: seen once in a few runs with nogui).
FLAGS="--with-nogui --with-rfb=no --enable-x86-64 --enable-smp --enable-cpu-level=6 --enable-vmx=2
 --enable-avx --enable-evex --enable-amx --enable-cet --enable-protection-keys --enable-uintr
 --enable-pci --enable-all-optimizations --enable-fpu --enable-a20-pin --enable-repeat-speedups
 --enable-memtype --disable-docbook --disable-show-ips --enable-usb --enable-usb-xhci"
ORIG=bochs_3.0+dfsg.orig.tar.xz

key=$( { cat "$PATCH_DIR"/*; echo "$FLAGS"; } | sha256sum | cut -c1-12)
bin=$CACHE/$key/bochs
# A use marks the build (touch): eviction below goes by last use.
if [ -x "$bin" ]; then touch "$CACHE/$key" 2>/dev/null; echo "$bin"; exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"; flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
t0=$SECONDS
echo "bochs-patched: building the patched Bochs 3.0 ($key) in $CACHE (about 2 minutes)" >&2
for t in g++ make patch xz sha256sum apt-get bcc as86 iasl; do
  command -v $t >/dev/null || { echo "bochs-patched: $t missing (apt-get install build-essential patch xz-utils lz4 bcc bin86 acpica-tools)" >&2; exit 1; }
done

# The source: trixie's tarball through a private apt configuration (the
# host's apt state untouched), checked against the SHA-256 in trixie's
# Sources index (the mirror does not serve the .dsc that apt would check).
src=$CACHE/src
mkdir -p "$src/lists/partial" "$src/cache/archives/partial"
echo "deb-src $MIRROR trixie main" > "$src/sources.list"
apt_opts=(-o Dir::Etc::sourcelist="$src/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$src/lists"
          -o Dir::Cache="$src/cache" -o APT::Sandbox::User=root)
sources() {   # the Sources index, however apt stored it
  local f
  for f in "$src"/lists/*_source_Sources*; do
    case "$f" in *.lz4) lz4cat "$f" ;; *.gz) zcat "$f" ;; *.xz) xzcat "$f" ;; *) cat "$f" ;; esac
  done 2>/dev/null
}
want_sum() { sources | awk -v f="$ORIG" '
  /^Package: /{p = ($2 == "bochs")} p && /^Checksums-Sha256:/{c=1; next} p && c && /^ /{ if ($3 == f) print $1; next } {c=0}' | head -n1; }
if [ ! -f "$src/$ORIG" ] || [ "$(sha256sum < "$src/$ORIG" | cut -d' ' -f1)" != "$(want_sum)" ]; then
  apt-get "${apt_opts[@]}" update -q >&2
  (cd "$src" && apt-get "${apt_opts[@]}" source --download-only bochs >&2) ||
    echo "bochs-patched: apt-get source reported an error (the .dsc is not served here); checking the tarball" >&2
fi
want=$(want_sum)
[ -n "$want" ] || { echo "bochs-patched: no SHA-256 for $ORIG in trixie's Sources index" >&2; exit 1; }
[ -f "$src/$ORIG" ] || { echo "bochs-patched: $ORIG was not downloaded" >&2; exit 1; }
got=$(sha256sum < "$src/$ORIG" | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "bochs-patched: $ORIG sha256 $got, trixie's Sources index says $want" >&2; exit 1; }

work=$CACHE/build.$key
rm -rf "$work"; mkdir -p "$work"
tar -C "$work" -xf "$src/$ORIG"
tree=$(echo "$work"/bochs-*)
cp "$PATCH_DIR/vmx_ipiv_timer.cc" "$tree/cpu/"
cp "$PATCH_DIR/vtd.cc" "$PATCH_DIR/vtd.h" "$PATCH_DIR/vtd_core.h" "$PATCH_DIR/vtd_strict.h" "$tree/iodev/"
cp "$PATCH_DIR/pmu.cc" "$PATCH_DIR/pmu.h" "$tree/cpu/"
# hooks.patch first (it wires in vmx_ipiv_timer.cc; the others may use its
# lines as context), then every other *.patch of the directory in name
# order (defects.patch: 3.0's VMX defects; profiles.patch: the CPU
# profiles; reset.patch: the reset, the UART and the BIOS; tsc.patch:
# IA32_TSC_ADJUST 0 after a hard reset; pmu.patch: the PMU (cpu/pmu.cc); xhci-msi.patch:
# the xHCI's MSI; xhci-msix.patch, after it: its MSI-X; nested.patch: the
# virtual interrupt in the IDT-vectoring information, CR0.WP = 0 writes
# to read-only pages under CET; docs/bochs.md), and
# vtd.patch last: it wires in the VT-d units
# (vtd.cc) and hooks the devices the xhci-*.patch files shape.
for p in "$PATCH_DIR/hooks.patch" $(ls "$PATCH_DIR"/*.patch | grep -v '/hooks\.patch$' | grep -v '/vtd\.patch$' | LC_ALL=C sort) \
         "$PATCH_DIR/vtd.patch"; do
  patch -d "$tree" -p1 --no-backup-if-mismatch < "$p" >&2 ||
    { echo "bochs-patched: $(basename "$p") does not apply" >&2; exit 1; }
done
# shellcheck disable=SC2086
(cd "$tree" && ./configure $FLAGS > "$work/configure.log" 2>&1) ||
  { echo "bochs-patched: configure failed, see $work/configure.log" >&2; exit 1; }
# The BIOS of the same tree (reset.patch changes it), made as Debian makes
# its bochsbios package (debian/rules: make -C bios with a 32-bit gcc; bcc
# and as86 for the 16-bit part, iasl for the DSDT), before the version
# string below changes (the BIOS names itself "Bochs 3.0" as Debian's
# does), with Debian's build date so that the image is the same each time.
(cd "$tree/bios" && make BIOS-bochs-latest GCC32="gcc -m32 -march=i386 -fno-stack-protector" LD32="ld -m elf_i386" \
   BUILDDATE=03/02/25 > "$work/bios.log" 2>&1) ||
  { echo "bochs-patched: the BIOS did not build, see $work/bios.log" >&2; tail -n 20 "$work/bios.log" >&2; exit 1; }
# The version string says what this is.
sed -i 's/^#define VERSION .*/#define VERSION       "3.0+hv-ipiv-apic-timer"/;
        s/^#define REL_STRING .*/#define REL_STRING    "Debian 3.0+dfsg source with the hv project patch (tools\/bochs-patch)"/' "$tree/bxversion.h"
(cd "$tree" && make -j"$(nproc)" > "$work/make.log" 2>&1) ||
  { echo "bochs-patched: make failed, see $work/make.log" >&2; tail -n 20 "$work/make.log" >&2; exit 1; }
mkdir -p "$CACHE/$key.tmp"
cp "$tree/bochs" "$CACHE/$key.tmp/bochs"
cp "$tree/bios/BIOS-bochs-latest" "$CACHE/$key.tmp/BIOS-bochs-latest"
rm -rf "$CACHE/$key"; mv "$CACHE/$key.tmp" "$CACHE/$key"
rm -rf "$work"
# Builds of other patch sets unused for 7 days go (a 20 MB binary each).
# Not sooner: two checkouts of different patch sets share this cache, and
# one's build must not vanish under the other's running tests.
for old in "$CACHE"/*/; do
  old=${old%/}
  case "$(basename "$old")" in src|"$key") ;; *)
    [ -x "$old/bochs" ] && [ -n "$(find "$old" -maxdepth 0 -mtime +7)" ] && rm -rf "$old" ;;
  esac
done
echo "bochs-patched: built in $((SECONDS - t0)) s: $bin" >&2
echo "$bin"
