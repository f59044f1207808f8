#!/usr/bin/env python3
"""The tables of make bench-vtd (tools/bench-vtd.sh). For each run N it reads
DIR/run-N.log (test/run-tests.sh's output for linux/hv-vtd and
linux/vtd-bare: the checks, and the exits per interrupt of "hv-vtd figures")
and DIR/run-N-hv.out, DIR/run-N-bare.out (the patched Bochs's "bochs-vtd:
latency" lines of each boot: from the unit's message to the vector's entry
into a guest handler, in emulated ticks, per source, vector and kind, and
the same by what the destination CPU was doing when the unit delivered).
Per device and path it takes the vector with the most samples (the one
hv.irqflood's thousand transfers used) and prints the median of the runs'
p50, p90, p99 (with their range) and the largest maximum, the posted and
remapped p99 against bare's, then where the samples waited. A run whose
check failed is named and left out; no run at all is an error."""
import re
import statistics
import sys

FIG = re.compile(r"^  hv-vtd figures: (\w+) route=(\w*) irqs=(\S+) exits=(\d+) exits_per_irq=(\S+)")
LAT = re.compile(r"bochs-vtd: latency source=(\S+) vector=(\S+) kind=(\S+) n=(\d+) p50=(\d+) p90=(\d+) p99=(\d+) max=(\d+)")
STATE = re.compile(r"bochs-vtd: latency-by-state source=(\S+) vector=(\S+) kind=(\S+) state=(\S+) n=(\d+) p50=(\d+) p90=(\d+) p99=(\d+) max=(\d+)")

# (device, path) -> (which boot, source ID, kind)
PATHS = [
    (("xhci", "posted"), "hv", "00:02.0", "posted"),
    (("xhci", "bare"), "bare", "00:02.0", "remapped_bare"),
    (("uhci", "remapped"), "hv", "f0:1f.0", "remapped_via_hv"),
    (("uhci", "bare"), "bare", "f0:1f.0", "remapped_bare"),
]
NAMES = {"xhci": "xHCI MSI-X (00:02.0)", "uhci": "UHCI pin 11, level (00:01.2)"}
PATH_NAMES = {"posted": "posted (hypervisor)", "bare": "remapped (bare kernel)",
              "remapped": "remapped (hypervisor, its exit)"}


def latency(path):
    """{(source, kind): row of the vector with the most samples}, with its states."""
    best, states = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LAT.search(line)
            if m:
                src, vec, kind, *nums = m.groups()
                row = dict(zip(("n", "p50", "p90", "p99", "max"), map(int, nums)), vector=vec)
                if (src, kind) not in best or row["n"] > best[(src, kind)]["n"]:
                    best[(src, kind)] = row
                continue
            m = STATE.search(line)
            if m:
                src, vec, kind, state, *nums = m.groups()
                states.setdefault((src, vec, kind), {})[state] = dict(zip(("n", "p50", "p90", "p99", "max"), map(int, nums)))
    for (src, kind), row in best.items():
        row["states"] = states.get((src, row["vector"], kind), {})
    return best


def parse(d, r):
    failed, exits = [], {}
    with open(f"{d}/run-{r}.log", errors="replace") as f:
        for line in f:
            if line.startswith("FAIL "):
                failed.append(line.split()[1])
            m = FIG.match(line)
            if m:
                exits[m.group(1)] = m.group(5)
    rows = {}
    lat = {"hv": latency(f"{d}/run-{r}-hv.out"), "bare": latency(f"{d}/run-{r}-bare.out")}
    for key, boot, src, kind in PATHS:
        row = lat[boot].get((src, kind))
        if row:
            row["exits_per_irq"] = exits.get(key[0], "?") if boot == "hv" else "-"
            rows[key] = row
    return rows, failed


def med(xs):
    return statistics.median(xs)


def main():
    d, runs = sys.argv[1], int(sys.argv[2])
    per, used = {}, 0
    for r in range(1, runs + 1):
        try:
            rows, failed = parse(d, r)
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
    print(f"Device interrupts through the VT-d units (patched Bochs, corei7_skylake_x, 2 CPUs), {used} run(s)")
    print()
    print("| device | path | exits per interrupt | samples per run | p50 (ticks), median [range] | p90 | p99, median [range] | max | p99 to bare |")
    print("|---|---|---|---|---|---|---|---|---|")
    goal = []
    for key, *_ in PATHS:
        vs = per.get(key, [])
        name, path = NAMES[key[0]], PATH_NAMES[key[1]]
        if not vs:
            print(f"| {name} | {path} | - | none measured | - | - | - | - | - |")
            continue
        p50, p99 = [v["p50"] for v in vs], [v["p99"] for v in vs]
        bare = per.get((key[0], "bare"), [])
        ratio = "-"
        if bare and key[1] != "bare":
            ratio = f"{med(p99) / med([v['p99'] for v in bare]):.2f}"
            if key[1] == "posted":
                goal.append(float(ratio))
        exits = "/".join(sorted({v["exits_per_irq"] for v in vs}))
        print(f"| {name} | {path} | {exits} | {min(v['n'] for v in vs)}-{max(v['n'] for v in vs)} | "
              f"{med(p50):g} [{min(p50)}-{max(p50)}] | {med([v['p90'] for v in vs]):g} | "
              f"{med(p99):g} [{min(p99)}-{max(p99)}] | {max(v['max'] for v in vs)} | {ratio} |")
    print()
    if goal:
        print(f"Posted p99 against bare's: {goal[0]:.2f} (the goal: at most 1.05): "
              f"{'met' if goal[0] <= 1.05 else 'missed'}")
        print()
    print("Where the samples waited (the destination CPU when the unit delivered: running with")
    print("interrupts on, halted in HLT, running with IF = 0, in VMX root operation, in MWAIT),")
    print("samples summed over the runs, p50 and p99 the median of the runs':")
    print()
    print("| device | path | CPU was | samples | share | p50 | p99 | max |")
    print("|---|---|---|---|---|---|---|---|")
    for key, *_ in PATHS:
        vs = per.get(key, [])
        total = sum(v["n"] for v in vs)
        states = sorted({s for v in vs for s in v["states"]})
        for s in states:
            rs = [v["states"][s] for v in vs if s in v["states"]]
            n = sum(x["n"] for x in rs)
            print(f"| {NAMES[key[0]]} | {PATH_NAMES[key[1]]} | {s} | {n} | {100.0 * n / total:.1f} % | "
                  f"{med([x['p50'] for x in rs]):g} | {med([x['p99'] for x in rs]):g} | {max(x['max'] for x in rs)} |")
    print()
    print("Ticks: Bochs's emulated time (one per instruction at its ips), from the unit's message to the")
    print("vector's entry into a guest handler through the IDT; exits: the hypervisor's external-interrupt")
    print("exits with the device's vector per interrupt the guest counted (an exit costs little in Bochs and")
    print("a lot on hardware). Emulated figures, not hardware.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
