#!/usr/bin/python3
# Debian's python3 on purpose: matplotlib comes from python3-matplotlib (tools/deps.sh).
"""Turns a serial log of the hypervisor into tables and a plot.

  hvreport.py LOG                  Markdown: exits by reason and CPU, MSRs, ports
  hvreport.py LOG --png OUT.png    also a bar chart of exits by reason
  hvreport.py A B                  compares two logs (tier vs tier, hv vs hv)

The log's "hvstat:" lines (see vmx/report.h) are read; the last report in a
log counts (the one at guest shutdown when there is one).
"""
import argparse
import re
import sys

LINE = re.compile(r"hvstat: (.*)$")
KV = re.compile(r"(\w+)=(\S+)")


def parse(path):
    """Returns the last report: {'why', 'cpus', 'reasons': {(cpu, name): n}, 'msrs', 'ports', 'exits'}."""
    reports, cur = [], None
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.search(raw.replace("\r", ""))
            if not m:
                continue
            kv = dict(KV.findall(m.group(1)))
            if m.group(1).startswith("begin"):
                cur = {"why": kv.get("why", "?"), "cpus": int(kv.get("cpus", 0)), "reasons": {},
                       "msrs": {}, "ports": {}, "exits": {}, "total": None, "times": {}, "time": {},
                       "projection": {}}
            elif cur is None:
                continue
            elif m.group(1).startswith("end"):
                cur["total"] = int(kv.get("total_exits", 0))
                reports.append(cur)
                cur = None
            elif " exit_time " in f" {m.group(1)} ":
                cur["times"][(int(kv["cpu"]), kv["reason"])] = {k: int(kv[k]) for k in
                                                                ("count", "min", "median", "p99", "max", "avg")}
            elif " time " in f" {m.group(1)} " and "guest_tsc" in kv:
                cur["time"][int(kv["cpu"])] = {k: int(kv[k]) for k in ("guest_tsc", "in_hv_tsc", "guest_ms")}
            elif " projection " in f" {m.group(1)} ":
                cur["projection"][int(kv["cpu"])] = (int(kv["ns_per_exit"]), int(kv["projected_us_per_guest_s"]))
            elif "reason" in kv:
                cur["reasons"][(int(kv["cpu"]), kv["reason"])] = int(kv["count"])
            # Other hvstat lines carry keys of these names too ("denied
            # msr=10 ..."): an access line has its reads and writes.
            elif "msr" in kv and "reads" in kv and "writes" in kv:
                cur["msrs"][(int(kv["cpu"]), kv["msr"])] = (int(kv["reads"]), int(kv["writes"]))
            elif "port" in kv and "reads" in kv and "writes" in kv:
                cur["ports"][(int(kv["cpu"]), kv["port"])] = (int(kv["reads"]), int(kv["writes"]))
            elif "exits" in kv:
                cur["exits"][int(kv["cpu"])] = int(kv["exits"])
    if not reports:
        sys.exit(f"hvreport: no complete hvstat report in {path}")
    return reports[-1]


def by_reason(rep):
    out = {}
    for (cpu, name), n in rep["reasons"].items():
        out.setdefault(name, {})[cpu] = n
    return out


def table(rep, title):
    cpus = sorted(rep["exits"]) or list(range(rep["cpus"]))
    lines = [f"### {title} (report at {rep['why']}, {len(cpus)} CPUs, {rep['total']} exits)", ""]
    lines.append("| reason | " + " | ".join(f"cpu{c}" for c in cpus) + " | total |")
    lines.append("|---|" + "---:|" * (len(cpus) + 1))
    rows = by_reason(rep)
    for name in sorted(rows, key=lambda r: -sum(rows[r].values())):
        vals = [rows[name].get(c, 0) for c in cpus]
        lines.append(f"| {name} | " + " | ".join(map(str, vals)) + f" | {sum(vals)} |")
    if rep["times"]:
        # perf-kvm-stat's layout: samples, share of samples, share of time,
        # min, max, average (TSC cycles in the hypervisor per exit).
        agg = {}
        for (cpu, name), t in rep["times"].items():
            a = agg.setdefault(name, {"n": 0, "sum": 0, "min": None, "max": 0})
            a["n"] += t["count"]
            a["sum"] += t["avg"] * t["count"]
            a["min"] = t["min"] if a["min"] is None else min(a["min"], t["min"])
            a["max"] = max(a["max"], t["max"])
        n_all = sum(a["n"] for a in agg.values()) or 1
        t_all = sum(a["sum"] for a in agg.values()) or 1
        lines += ["", "| exit reason | samples | samples % | time % | min | max | avg (TSC cycles in the hypervisor) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for name in sorted(agg, key=lambda r: -agg[r]["sum"]):
            a = agg[name]
            lines.append(f"| {name} | {a['n']} | {100 * a['n'] / n_all:.2f} | {100 * a['sum'] / t_all:.2f} | "
                         f"{a['min']} | {a['max']} | {a['sum'] // max(a['n'], 1)} |")
    if rep["projection"]:
        lines += ["", "| cpu | guest time (ms) | share of it in the hypervisor | projected hardware cost of its exits |",
                  "|---:|---:|---:|---|"]
        for cpu in sorted(rep["projection"]):
            ns, us = rep["projection"][cpu]
            t = rep["time"].get(cpu, {})
            share = 100 * t["in_hv_tsc"] / t["guest_tsc"] if t.get("guest_tsc") else 0
            lines.append(f"| {cpu} | {t.get('guest_ms', '?')} | {share:.2f} % (emulated) | "
                         f"{us} us per guest second at {ns} ns an exit (published figure; a projection) |")
    for kind in ("msrs", "ports"):
        if rep[kind]:
            lines += ["", f"| {kind[:-1]} | cpu | reads | writes |", "|---|---:|---:|---:|"]
            for (cpu, key), (r, w) in sorted(rep[kind].items(), key=lambda x: (x[0][1], x[0][0])):
                lines.append(f"| {key} | {cpu} | {r} | {w} |")
    return "\n".join(lines)


def compare(a, b, na, nb):
    ra, rb = by_reason(a), by_reason(b)
    lines = [f"### {na} vs {nb}", "", f"| reason | {na} | {nb} | change |", "|---|---:|---:|---:|"]
    for name in sorted(set(ra) | set(rb)):
        x, y = sum(ra.get(name, {}).values()), sum(rb.get(name, {}).values())
        lines.append(f"| {name} | {x} | {y} | {y - x:+d} |")
    lines.append(f"| **total** | {a['total']} | {b['total']} | {b['total'] - a['total']:+d} |")
    return "\n".join(lines)


def plot(reports, names, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("hvreport: --png needs matplotlib (apt-get install python3-matplotlib)")
    reasons = sorted({r for rep in reports for r in by_reason(rep)})
    fig, ax = plt.subplots(figsize=(max(6, len(reasons) * 1.2), 4))
    width = 0.8 / len(reports)
    for i, (rep, name) in enumerate(zip(reports, names)):
        rows = by_reason(rep)
        vals = [sum(rows.get(r, {}).values()) for r in reasons]
        ax.bar([x + i * width for x in range(len(reasons))], vals, width, label=name)
    ax.set_xticks([x + width * (len(reports) - 1) / 2 for x in range(len(reasons))])
    ax.set_xticklabels(reasons, rotation=30, ha="right")
    ax.set_ylabel("VM exits")
    ax.set_title("VM exits by reason")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="+", help="one log for a report, two to compare")
    ap.add_argument("--png", help="write a bar chart of exits by reason")
    args = ap.parse_args()
    if len(args.logs) > 2:
        ap.error("give one log, or two to compare")
    reps = [parse(p) for p in args.logs]
    for rep, p in zip(reps, args.logs):
        print(table(rep, p))
        print()
    if len(reps) == 2:
        print(compare(reps[0], reps[1], args.logs[0], args.logs[1]))
    if args.png:
        plot(reps, args.logs, args.png)
        print(f"\nhvreport: wrote {args.png}")


if __name__ == "__main__":
    main()
