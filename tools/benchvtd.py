#!/usr/bin/env python3
"""The table of make bench-vtd (tools/bench-vtd.sh): reads DIR/run-N.log
(test/run-tests.sh's output for linux/hv-vtd and linux/vtd-bare) and prints,
per device and path, exits per interrupt (the hypervisor's external-
interrupt exits carrying the device's vector, per interrupt the guest
counted) and the latency from the VT-d unit's message to the guest
handler's entry (Bochs's "bochs-vtd: latency" medians, in emulated ticks):
the median of the runs' medians, their range, and the ratio to the bare
kernel's for the same device. A run whose check failed is named and left
out; no run at all is an error."""
import re
import statistics
import sys

FIG = re.compile(r"^  hv-vtd figures: (\w+) route=(\w*) irqs=(\S+) exits=(\d+) exits_per_irq=(\S+)")
LAT = re.compile(r"^    (?:(\w+) latency|bochs-vtd: latency) source=(\S+) vector=(\S+) kind=(\S+) n=(\d+) p50=(\d+) p90=(\d+)")


def parse(path):
    rows, failed, dev = {}, [], None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("FAIL "):
                failed.append(line.split()[1])
            m = FIG.match(line)
            if m:
                dev = m.group(1)
                rows[(dev, m.group(2))] = {"exits_per_irq": m.group(5), "irqs": m.group(3)}
                continue
            m = LAT.match(line)
            if not m:
                continue
            who, src, vec, kind, n, p50, p90 = m.groups()
            if kind == "remapped_bare" and src == "00:02.0":
                rows[("xhci", "bare")] = {"exits_per_irq": "-", "p50": int(p50), "p90": int(p90), "n": int(n)}
            elif who and kind in ("posted", "remapped_via_hv"):
                key = (who, "posted" if kind == "posted" else "remapped")
                if key in rows:
                    rows[key].update(p50=int(p50), p90=int(p90), n=int(n))
    return rows, failed


def main():
    d, runs = sys.argv[1], int(sys.argv[2])
    per = {}
    used = 0
    for r in range(1, runs + 1):
        try:
            rows, failed = parse(f"{d}/run-{r}.log")
        except OSError as e:
            print(f"benchvtd: run {r}: {e}", file=sys.stderr)
            continue
        if failed:
            print(f"benchvtd: run {r} left out: {len(failed)} check(s) failed, first {failed[0]}", file=sys.stderr)
            continue
        used += 1
        for k, v in rows.items():
            per.setdefault(k, []).append(v)
    if not used:
        print("benchvtd: no run passed its checks", file=sys.stderr)
        return 1
    bare = [v["p50"] for v in per.get(("xhci", "bare"), []) if "p50" in v]
    bare_med = statistics.median(bare) if bare else None
    print(f"Device interrupts through the VT-d units (patched Bochs, corei7_skylake_x, 2 CPUs), {used} run(s)")
    print()
    print("| device | path | exits per interrupt | latency p50 (ticks), median of runs [range] | p90 | to bare |")
    print("|---|---|---|---|---|---|")
    names = {"xhci": "xHCI MSI-X (00:02.0)", "uhci": "UHCI pin 11, level (00:01.2)"}
    for key in [("xhci", "posted"), ("xhci", "bare"), ("uhci", "remapped")]:
        vs = [v for v in per.get(key, []) if "p50" in v]
        if not vs:
            print(f"| {names[key[0]]} | {key[1]} | - | none measured | - | - |")
            continue
        p50 = [v["p50"] for v in vs]
        p90 = statistics.median(v["p90"] for v in vs)
        med = statistics.median(p50)
        exits = sorted({v["exits_per_irq"] for v in vs})
        path = {"posted": "posted (hypervisor)", "bare": "remapped (bare kernel)", "remapped": "remapped (hypervisor, its exit)"}[key[1]]
        ratio = f"{med / bare_med:.2f}" if bare_med and key[0] == "xhci" else "-"
        print(f"| {names[key[0]]} | {path} | {'/'.join(exits)} | {med:g} [{min(p50)}-{max(p50)}] | {p90:g} | {ratio} |")
    print()
    print("Ticks: Bochs's emulated time (one per instruction at its ips), from the unit's message to the")
    print("vector's entry into a guest handler through the IDT; exits: the hypervisor's external-interrupt")
    print("exits with the device's vector per interrupt the guest counted (an exit costs little in Bochs and")
    print("a lot on hardware). Emulated figures, not hardware.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
