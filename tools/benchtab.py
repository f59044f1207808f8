#!/usr/bin/python3
"""Turns the tier bench's serial logs into a Markdown table and PNG plots.

  benchtab.py --dir build/bench --runs N --out tiers.md [--png DIR] NAME...

Reads DIR/tiers-NAME-R.ser for R in 1..N (tools/bench-tiers.sh writes them;
--suffix .txt for the test fixtures, which are text, not build outputs).
Per configuration: medians with min..max over the runs, exits per operation,
and every time as a ratio to the bare boot of the same Bochs model in the
same run set ("bare" for the stock skylake_x boots, "spr-bare" for spr-*).
The benchmarks' lines (ipibench, cyclictest, hackbench) are read here; the
hypervisor's report and the guest's idle figure through tools/hvreport.py
--figures.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def guest_figures(text):
    """The guest-side figures of one log (absent ones left out)."""
    f = {}
    m = re.search(r"^ipibench: roundtrip count=\d+ tsc min=\d+ median=(\d+) p90=\d+ p99=(\d+) .*?"
                  r"(?:exits_per_op=([0-9.]+))?$", text, re.M)
    if m:
        f["rtt"] = int(m.group(1))
        f["rtt_p99"] = int(m.group(2))
        if m.group(3):
            f["rtt_exits"] = float(m.group(3))
    for m in re.finditer(r"^ipibench: micro test=(\w+) count=\d+ total_ns=\d+ ns_per_op=(\d+) .*?"
                         r"(?:exits_per_op=([0-9.]+))?$", text, re.M):
        f[f"{m.group(1)}_ns"] = int(m.group(2))
        if m.group(3):
            f[f"{m.group(1)}_exits"] = float(m.group(3))
    avgs, maxs = [], []
    for m in re.finditer(r"^guest: cyclictest T: *\d+ .*Avg: *(\d+) +Max: *(\d+)", text, re.M):
        avgs.append(int(m.group(1)))
        maxs.append(int(m.group(2)))
    if avgs:
        f["cyc_avg"] = sum(avgs) / len(avgs)
        f["cyc_max"] = max(maxs)
    m = re.search(r"^guest: hackbench time=([0-9.]+) rc=0", text, re.M)
    if m:
        f["hackbench"] = float(m.group(1))
    return f


def hv_figures(path):
    """tools/hvreport.py --figures on one log; {} when it has no report (bare)."""
    r = subprocess.run([os.path.join(HERE, "hvreport.py"), "--figures", path], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return {}
    return json.loads(r.stdout.strip().splitlines()[-1])


def figures(path):
    with open(path, errors="replace") as fh:
        text = fh.read().replace("\r", "")
    f = guest_figures(text)
    h = hv_figures(path)
    if "total_exits" in h:
        f["total_exits"] = h["total_exits"]
    if "idle_exits_per_s" in h:   # the guest's "guest: idle ... (R/s)" line
        f["idle_exits_s"] = h["idle_exits_per_s"]
    irqs = h.get("posted", 0) + h.get("timer_delivered", 0)
    if irqs and "eoi_exits" in h:
        f["eoi_exits"] = h["eoi_exits"] / irqs
    if h.get("timer_delivered"):
        f["timer_exits"] = h.get("timer_exits", 0) / h["timer_delivered"]
    return f


def spread(vals, fmt):
    if not vals:
        return "-"
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(vals))}..{fmt.format(max(vals))})"


def ratio(vals, base):
    if not vals or not base:
        return ""
    b = statistics.median(base)
    if not b:
        return ""
    rs = [v / b for v in vals]
    med = statistics.median(rs)
    return f" x{med:.2f}" if len(rs) == 1 else f" x{med:.2f} ({min(rs):.2f}..{max(rs):.2f})"


# (key, column title, format, compared with bare)
COLUMNS = [
    ("rtt_exits", "exits per IPI round trip", "{:.2f}", False),
    ("normal_exits", "exits per IPI (send-IPI bench, normal)", "{:.2f}", False),
    ("eoi_exits", "EOI exits per interrupt", "{:.2f}", False),
    ("timer_exits", "exits per timer interrupt", "{:.2f}", False),
    ("idle_exits_s", "idle exits/s", "{:.1f}", False),
    ("rtt", "IPI round trip (TSC)", "{:.0f}", True),
    ("normal_ns", "send-IPI normal (ns/op)", "{:.0f}", True),
    ("broadcast_ns", "send-IPI broadcast (ns/op)", "{:.0f}", True),
    ("self_ns", "self-IPI (ns/op)", "{:.0f}", True),
    ("cyc_avg", "cyclictest avg (us)", "{:.0f}", True),
    ("cyc_max", "cyclictest max (us)", "{:.0f}", True),
    ("hackbench", "hackbench (s)", "{:.2f}", True),
    ("total_exits", "total exits", "{:.0f}", False),
]


def base_of(name):
    return "spr-bare" if name.startswith(("spr-", "next-")) else "bare"


def bars(plt, shown, series, ylabel, title, out, unit_line=False):
    """One grouped bar chart: series is [(label, [value per config])]."""
    fig, ax = plt.subplots(figsize=(max(7, len(shown) * 0.9), 4))
    width = 0.8 / len(series)
    for i, (label, vals) in enumerate(series):
        ax.bar([x + i * width for x in range(len(shown))], vals, width, label=label)
    if unit_line:
        ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(shown))])
    ax.set_xticklabels(shown, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    return out


def median_of(data, name, key):
    v = [f[key] for f in data.get(name, []) if key in f]
    return statistics.median(v) if v else 0


def plot(data, names, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("benchtab: --png needs matplotlib (apt-get install python3-matplotlib)")
    shown = [n for n in names if not n.endswith("bare") and n in data]
    ratios = []
    for k, label in [("rtt", "IPI round trip"), ("cyc_avg", "cyclictest avg"), ("cyc_max", "cyclictest max"),
                     ("hackbench", "hackbench")]:
        vals = []
        for n in shown:
            b = median_of(data, base_of(n), k)
            vals.append(median_of(data, n, k) / b if b else 0)
        ratios.append((label, vals))
    exits = [(label, [median_of(data, n, k) for n in shown])
             for k, label in [("rtt_exits", "per IPI round trip"), ("eoi_exits", "EOI exits per interrupt"),
                              ("timer_exits", "per timer interrupt")]]
    return [bars(plt, shown, ratios, "ratio to bare metal (same emulator)",
                 "Time against bare metal, per tier (Bochs: emulated time)",
                 os.path.join(outdir, "tiers-ratio.png"), unit_line=True),
            bars(plt, shown, exits, "VM exits per operation", "Exits per operation, per tier",
                 os.path.join(outdir, "tiers-exits.png"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--png", help="directory for tiers-ratio.png and tiers-exits.png")
    ap.add_argument("--suffix", default=".ser", help="the logs' file name ending (default .ser)")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args()
    data, missing = {}, []
    for n in args.names:
        for r in range(1, args.runs + 1):
            p = os.path.join(args.dir, f"tiers-{n}-{r}{args.suffix}")
            if not os.path.exists(p):
                missing.append(p)
                continue
            f = figures(p)
            if "rtt" not in f:   # no benchmark output: the boot failed
                missing.append(p + " (no ipibench figures)")
                continue
            data.setdefault(n, []).append(f)
    if not data:
        sys.exit("benchtab: no usable log in " + args.dir)
    lines = ["| config | runs | " + " | ".join(c[1] for c in COLUMNS) + " |",
             "|---|---:|" + "---:|" * len(COLUMNS)]
    for n in args.names:
        runs = data.get(n, [])
        cells = []
        for key, _, fmt, vs_bare in COLUMNS:
            vals = [f[key] for f in runs if key in f]
            cell = spread(vals, fmt)
            if vs_bare and not n.endswith("bare") and vals:
                cell += ratio(vals, [f[key] for f in data.get(base_of(n), []) if key in f])
            cells.append(cell)
        lines.append(f"| {n} | {len(runs)} | " + " | ".join(cells) + " |")
    lines += ["", "Medians with min..max over the runs; xR: the median's ratio to the bare boot of the same "
              "Bochs model in this run set (R > 1: slower than bare). Bochs's TSC counts instructions: an exit "
              "costs little here, so the exit counts are the figures that carry over to hardware."]
    if missing:
        lines += ["", "Missing or failed boots: " + "; ".join(missing)]
    with open(args.out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    if args.png:
        for p in plot(data, args.names, args.png):
            print(f"benchtab: wrote {p}", file=sys.stderr)
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())
