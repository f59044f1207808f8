#!/usr/bin/python3
# Debian's python3 on purpose: matplotlib comes from python3-matplotlib (tools/deps.sh).
"""Turns a serial log of the hypervisor into tables and a plot.

  hvreport.py LOG                  Markdown: exits by reason and CPU, MSRs, ports,
                                   and when the log has them: what each vCPU was
                                   served without an exit, timer lateness, the
                                   interval reports (report=SECONDS)
  hvreport.py LOG --png OUT.png    also a bar chart of exits by reason, and when
                                   the log has them OUT-timer-late.png (timer
                                   lateness) and OUT-intervals.png (exits/s)
  hvreport.py LOG --published      also the published hardware figures (quoted)
  hvreport.py A B                  compares two logs (tier vs tier, hv vs hv)
  hvreport.py A B C ...            compares any number of logs against the first
                                   (the published figures come with it)
  hvreport.py --figures LOG...     one JSON object a log, one a line, for scripts

The log's "hvstat:" lines (see vmx/report.h) are read; the last report in a
log counts (the one at guest shutdown when there is one). The interval reports,
the guest's "guest: idle" line and "hv: result=" are read from the whole log.
"""
import argparse
import json
import re
import sys

LINE = re.compile(r"hvstat: (.*)$")
KV = re.compile(r"(\w+)=(\S+)")
LATE_BUCKET = re.compile(r"<(\d+):(\d+)")            # " <127:984" of a timer_late_tsc line
RESULT = re.compile(r"hv: result=(\w+)")
IDLE = re.compile(r"guest: idle seconds=")
IDLE_RATE = re.compile(r"apic\d+=\+\d+ \(([0-9.]+)/s\)")  # "apic0=+69 (13.4/s)"

# Published figures, quoted from elsewhere: never measured by this tool.
PUBLISHED = [
    ("per-exit cost of an MSR-write exit (perf kvm stat, Skylake server)",
     "1.08 us", "0.58 us with KVM's fast path", "KVM PV EOI seed"),
    ("kvm-unit-tests vmexit ipi, x2APIC mode",
     "4,338 cycles", "3,645 cycles with IPIv", "IPIv seed"),
    ("external-interrupt exits",
     "42,916", "6,871 with KVM's exitless timer", "seed 004"),
    ("exits in one second",
     "49,849", "29,595 with PV EOI", "seed 003"),
]


def number(text):
    """An integer of the log, "+12" (an interval's change) or "12"."""
    return int(text.lstrip("+"))


def new_report(kv):
    return {"why": kv.get("why", "?"), "cpus": int(kv.get("cpus", 0)), "reasons": {},
            "msrs": {}, "ports": {}, "exits": {}, "total": None, "times": {}, "time": {},
            "projection": {},
            "served": {},          # cpu -> the "cpu=N posted=..." line
            "swapic": {},          # cpu -> the "cpu=N swapic ..." line
            "timer": {},           # cpu -> the "cpu=N timer tier=..." line
            "late": {},            # cpu -> [(bucket upper bound, count), ...]
            "timer_service": None,  # the "timer_service ..." line
            "console": None,        # the "console lines=N exits=M per_line=X ..." line
            "summary": {},          # a large machine's report: figure -> {total, cpus, min, median, max, max_cpu}
            "detailed": None}       # ... and the vCPUs it details one by one ("3,0,7"), or None


def read_log(path):
    """Everything the log has: {'report': the last complete report or None,
    'intervals': [...], 'idle': [rates per second] or None, 'result': 'pass'/'fail'/None}."""
    reports, cur = [], None
    intervals, seq = [], {"seq": "?", "seconds": "?"}   # seq: the last "interval seq=" line
    idle, result = None, None
    try:
        f = open(path, errors="replace")
    except OSError as e:
        sys.exit(f"hvreport: {e}")
    with f:
        for raw in f:
            raw = raw.replace("\r", "")
            m = RESULT.search(raw)
            if m:
                result = m.group(1)
            if IDLE.search(raw):
                idle = [float(r) for r in IDLE_RATE.findall(raw)]
            m = LINE.search(raw)
            if not m:
                continue
            body = m.group(1)
            kv = dict(KV.findall(body))
            # The interval reports are printed between the reports, never in one.
            if body.startswith("interval "):
                seq = {"seq": kv.get("seq", "?"), "seconds": kv.get("seconds", "?")}
                continue
            if " interval " in f" {body} ":
                try:
                    row = dict(seq, cpu=int(kv["cpu"]), top=kv.get("top", "none"))
                    for k in ("exits", "exits_per_s", "in_hv_permille", "posted", "notified",
                              "timer_posts", "pv_eois"):
                        row[k] = number(kv[k])
                except (KeyError, ValueError):
                    continue   # a line cut by other output on the UART
                intervals.append(row)
                continue
            if body.startswith("begin"):
                cur = new_report(kv)
            elif cur is None:
                continue
            elif body.startswith("end"):
                cur["total"] = int(kv.get("total_exits", 0))
                reports.append(cur)
                cur = None
            elif body.startswith("summary "):
                # reportcpus= (vmx/report.c): "summary cpus=N detailed=a,b,..." then one line a
                # figure: "summary exits ...", "summary reason=NAME code=C ...", "summary in_hv_permille ...".
                if "detailed" in kv:
                    cur["detailed"] = kv["detailed"]
                    continue
                try:
                    d = {k: int(kv[k]) for k in ("total", "cpus", "min", "median", "max", "max_cpu")}
                except (KeyError, ValueError):
                    continue   # cut by other output on the UART
                cur["summary"][kv.get("reason") or body.split()[1]] = d
            elif " exit_time " in f" {body} ":
                cur["times"][(int(kv["cpu"]), kv["reason"])] = {k: int(kv[k]) for k in
                                                                ("count", "min", "median", "p99", "max", "avg")}
            elif " time " in f" {body} " and "guest_tsc" in kv:
                t = {k: int(kv[k]) for k in ("guest_tsc", "in_hv_tsc", "guest_ms")}
                if "in_hv_permille" in kv:
                    t["in_hv_permille"] = int(kv["in_hv_permille"])
                else:
                    t["in_hv_permille"] = t["in_hv_tsc"] * 1000 // t["guest_tsc"] if t["guest_tsc"] else 0
                cur["time"][int(kv["cpu"])] = t
            elif " projection " in f" {body} ":
                cur["projection"][int(kv["cpu"])] = (int(kv["ns_per_exit"]), int(kv["projected_us_per_guest_s"]))
            elif " timer " in f" {body} " and "exits_fire" in kv:
                cur["timer"][int(kv["cpu"])] = kv
            elif " timer_late_tsc" in body:
                cur["late"][int(kv["cpu"])] = [(int(u), int(n)) for u, n in LATE_BUCKET.findall(body)]
            elif body.startswith("timer_service "):
                cur["timer_service"] = kv
            elif body.startswith("console "):
                if "lines" in kv:   # the other console lines: registers, interrupts
                    cur["console"] = kv
            elif " swapic " in f" {body} ":
                cur["swapic"][int(kv["cpu"])] = kv
            elif "posted" in kv and "notified" in kv:
                cur["served"][int(kv["cpu"])] = kv
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
    return {"report": reports[-1] if reports else None, "intervals": intervals, "idle": idle, "result": result}


def parse(path):
    """Returns the last report: {'why', 'cpus', 'reasons': {(cpu, name): n}, 'msrs', 'ports', 'exits', ...}
    with the log's 'intervals', 'idle' and 'result' added."""
    log = read_log(path)
    if not log["report"]:
        sys.exit(f"hvreport: no complete hvstat report in {path}")
    rep = log["report"]
    rep.update(intervals=log["intervals"], idle=log["idle"], result=log["result"])
    return rep


def by_reason(rep):
    out = {}
    for (cpu, name), n in rep["reasons"].items():
        out.setdefault(name, {})[cpu] = n
    return out


def summary_table(rep):
    """A large machine's report: each figure over every vCPU."""
    if not rep["summary"]:
        return []
    n = max(d["cpus"] for d in rep["summary"].values())
    lines = [f"Summary over {n} vCPUs (the per-vCPU columns below: vCPUs {rep['detailed'] or '?'}, "
             "the ones with the most exits; reportcpus=all prints every vCPU):", "",
             "| figure | total | min | median | max | vCPU with the most |", "|---|---:|---:|---:|---:|---:|"]
    order = sorted(rep["summary"], key=lambda k: (k not in ("exits", "in_hv_permille"), -rep["summary"][k]["total"]))
    for name in order:
        d = rep["summary"][name]
        total = "" if name == "in_hv_permille" else d["total"]
        lines.append(f"| {name} | {total} | {d['min']} | {d['median']} | {d['max']} | {d['max_cpu']} |")
    return lines + [""]


def table(rep, title):
    cpus = sorted(rep["exits"]) or list(range(rep["cpus"]))
    lines = [f"### {title} (report at {rep['why']}, {rep['cpus'] or len(cpus)} CPUs, {rep['total']} exits)", ""]
    lines += summary_table(rep)
    lines.append("| reason | " + " | ".join(f"cpu{c}" for c in cpus) +
                 (" | these vCPUs |" if rep["summary"] else " | total |"))
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
    con = rep.get("console")
    if con:
        lines += ["", f"The guest's console (a virtual 16550A): {con.get('lines', '?')} lines forwarded whole, "
                      f"{con.get('exits', '?')} I/O exits, {con.get('per_line', '?')} exits per line."]
    lines += served_table(rep) + late_tables(rep) + interval_table(rep.get("intervals", []))
    return "\n".join(lines)


def served_table(rep):
    """What each vCPU got without an exit (posted interrupts, timer posts,
    PV EOIs) next to the exits it still cost."""
    cpus = sorted(set(rep["served"]) | set(rep["swapic"]) | set(rep["timer"]))
    if not cpus:
        return []
    lines = ["", "### what each vCPU was served without an exit", "",
             "| cpu | timer tier | posted | notified | notify exits | timer posts | PV EOIs | timer exits (arm+fire) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for cpu in cpus:
        s = rep["served"].get(cpu, {})
        sw = rep["swapic"].get(cpu, {})
        t = rep["timer"].get(cpu, {})
        timer_exits = int(t["exits_arm"]) + int(t["exits_fire"]) if t else "-"
        lines.append(f"| {cpu} | {t.get('tier', '-')} | {s.get('posted', '-')} | {s.get('notified', '-')} | "
                     f"{s.get('notify_exits', '-')} | {s.get('timer_posts', '-')} | {sw.get('pv_eois', '-')} | "
                     f"{timer_exits} |")
    ts = rep["timer_service"]
    if ts:
        lines += ["", "| timer service on APIC ID | scans | posts | kicks |", "|---:|---:|---:|---:|",
                  f"| {ts.get('apic_id', '?')} | {ts.get('scans', '?')} | {ts.get('posts', '?')} | "
                  f"{ts.get('kicks', '?')} |"]
    return lines


def late_tables(rep):
    """The timer's lateness, a log2 histogram per CPU: bucket [lower, upper)."""
    lines = []
    for cpu in sorted(rep["late"]):
        buckets = rep["late"][cpu]
        n_all = sum(n for _, n in buckets) or 1
        if not lines:
            lines += ["", "### timer lateness (TSC cycles after the deadline, log2 buckets)"]
        lines += ["", f"| cpu{cpu} late by | count | cumulative % |", "|---|---:|---:|"]
        cum = 0
        for upper, n in buckets:
            cum += n
            lower = (upper + 1) // 2 - 1
            lines.append(f"| [{lower}, {upper}) | {n} | {100 * cum / n_all:.2f} |")
    return lines


def interval_table(intervals):
    if not intervals:
        return []
    lines = ["", "### interval reports", "",
             "| seq | seconds | cpu | exits | exits/s | in-hv ‰ | posted | notified | timer posts | PV EOIs "
             "| top reasons |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in intervals:
        top = r["top"].replace(",", ", ")
        lines.append(f"| {r['seq']} | {r['seconds']} | {r['cpu']} | {r['exits']} | {r['exits_per_s']} | "
                     f"{r['in_hv_permille']} | {r['posted']} | {r['notified']} | {r['timer_posts']} | "
                     f"{r['pv_eois']} | {top} |")
    return lines


def published_table():
    lines = ["### published hardware figures (quoted, not measured here)", "",
             "| published figure | before | after | quoted from |", "|---|---:|---:|---|"]
    for what, before, after, source in PUBLISHED:
        lines.append(f"| {what} | {before} | {after} | {source} |")
    return "\n".join(lines)


def compare(a, b, na, nb):
    ra, rb = by_reason(a), by_reason(b)
    lines = [f"### {na} vs {nb}", "", f"| reason | {na} | {nb} | change |", "|---|---:|---:|---:|"]
    for name in sorted(set(ra) | set(rb)):
        x, y = sum(ra.get(name, {}).values()), sum(rb.get(name, {}).values())
        lines.append(f"| {name} | {x} | {y} | {y - x:+d} |")
    lines.append(f"| **total** | {a['total']} | {b['total']} | {b['total'] - a['total']:+d} |")
    return "\n".join(lines)


def against(base, n):
    """n with its change against base: "80 (-40, x0.67)"."""
    if base == 0:
        return f"{n} ({n - base:+d})"
    return f"{n} ({n - base:+d}, x{n / base:.2f})"


def compare_many(reps, names):
    """A column a log; every log after the first with its change against the first."""
    rows = [by_reason(rep) for rep in reps]
    lines = [f"### comparison (base: {names[0]})", "",
             "| reason | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for name in sorted(set().union(*rows)):
        vals = [sum(r.get(name, {}).values()) for r in rows]
        lines.append(f"| {name} | {vals[0]} | " + " | ".join(against(vals[0], v) for v in vals[1:]) + " |")
    totals = [rep["total"] for rep in reps]
    lines.append(f"| **total** | {totals[0]} | " + " | ".join(against(totals[0], v) for v in totals[1:]) + " |")
    return "\n".join(lines)


def per_cpu(d, key=None):
    """{cpu: value} as a list indexed by CPU, None (JSON null) where a CPU has no line."""
    return [(d[c][key] if key else d[c]) if c in d else None for c in range(max(d) + 1)]


def figures(path):
    """The figures of one log for a bench script; keys it cannot find are left out."""
    log = read_log(path)
    rep = log["report"]
    out = {"log": path}
    if log["result"]:
        out["result"] = log["result"]
    if rep:
        out["total_exits"] = rep["total"]
        if rep["summary"]:
            out["summary"] = rep["summary"]
        if rep["exits"]:
            out["exits_per_cpu"] = per_cpu(rep["exits"])
        if rep["time"]:
            out["guest_ms"] = per_cpu(rep["time"], "guest_ms")
            out["in_hv_permille"] = per_cpu(rep["time"], "in_hv_permille")
        # The report lists only reasons and MSRs that occurred: none is 0.
        out["eoi_exits"] = (sum(n for (_, name), n in rep["reasons"].items() if name == "VIRTUALIZED_EOI") +
                            sum(w for (_, msr), (_, w) in rep["msrs"].items() if int(msr, 16) == 0x80b))
        if rep["timer"]:
            out["timer_delivered"] = sum(int(t["delivered"]) for t in rep["timer"].values())
            out["timer_exits"] = sum(int(t["exits_arm"]) + int(t["exits_fire"]) for t in rep["timer"].values())
        if rep["served"]:
            out["posted"] = sum(int(s["posted"]) for s in rep["served"].values())
            out["notified"] = sum(int(s["notified"]) for s in rep["served"].values())
    if log["idle"]:
        out["idle_exits_per_s"] = round(sum(log["idle"]), 1)
    return out


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("hvreport: --png needs matplotlib (apt-get install python3-matplotlib)")
    return plt


def beside(out, suffix):
    """OUT.png -> OUT-suffix.png (the second and third PNG next to the first)."""
    stem = out[:-4] if out.endswith(".png") else out
    return f"{stem}-{suffix}.png"


def plot(reports, names, out):
    plt = pyplot()
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


def finish(fig, ax, out, xlabel, ylabel, title):
    """Labels, a legend outside the axes, and the PNG written."""
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(out)
    return True


def series_name(names, name, cpu):
    return f"cpu{cpu}" if len(names) == 1 else f"{name} cpu{cpu}"


def plot_late(reports, names, out):
    """The timer lateness histograms: x is the log2 bucket, a bar series per CPU (and log)."""
    series = [(series_name(names, name, cpu), rep["late"][cpu])
              for rep, name in zip(reports, names) for cpu in sorted(rep["late"])]
    if not series:
        return False
    plt = pyplot()
    # Bucket b holds [2^b - 1, 2^(b+1) - 1): b is the position on the x axis,
    # so empty buckets keep their place and the axis stays log2.
    bucket = {u: (u + 1).bit_length() - 2 for _, buckets in series for u, _ in buckets}
    first, last = min(bucket.values()), max(bucket.values())
    fig, ax = plt.subplots(figsize=(max(6, (last - first + 1) * 0.5 + 3), 4))
    width = 0.8 / len(series)
    for i, (label, buckets) in enumerate(series):
        ax.bar([bucket[u] + i * width for u, _ in buckets], [n for _, n in buckets], width, label=label)
    ax.set_xticks([b + width * (len(series) - 1) / 2 for b in range(first, last + 1)])
    ax.set_xticklabels([f"<{(2 << b) - 1}" for b in range(first, last + 1)], rotation=45, ha="right")
    ax.set_yscale("log")
    return finish(fig, ax, out, "late by (TSC cycles, log2 buckets)", "timer expiries", "virtual timer lateness")


def plot_intervals(reports, names, out):
    """Exits per second of each interval, a line per CPU (and log), at the interval's end."""
    if not any(rep["intervals"] for rep in reports):
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    for rep, name in zip(reports, names):
        for cpu in sorted({r["cpu"] for r in rep["intervals"]}):
            ends, rates, t, span, last_seq = [], [], 0.0, 0.0, None
            for r in rep["intervals"]:
                if r["seq"] != last_seq:   # the time line moves on once an interval
                    last_seq = r["seq"]
                    try:
                        span = float(r["seconds"])
                        t += span
                    except ValueError:
                        span = 0.0
                if r["cpu"] == cpu:
                    ends.append(t)
                    # exits / seconds, not the report's whole exits_per_s: an
                    # idle interval's 10 exits in 90 s are 0.11/s, not 0.
                    rates.append(r["exits"] / span if span else r["exits_per_s"])
            ax.plot(ends, rates, marker="o", label=series_name(names, name, cpu))
    return finish(fig, ax, out, "seconds since the first interval began", "VM exits per second",
                  "VM exits per second, interval reports")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="+", help="one log for a report, more to compare with the first")
    ap.add_argument("--png", help="write a bar chart of exits by reason (and OUT-timer-late.png, OUT-intervals.png)")
    ap.add_argument("--published", action="store_true",
                    help="also print the published hardware figures (quoted, not measured here)")
    ap.add_argument("--figures", action="store_true", help="print one JSON object a log, one a line")
    args = ap.parse_args()
    if args.figures:
        for p in args.logs:
            print(json.dumps(figures(p)))
        return
    reps = [parse(p) for p in args.logs]
    for rep, p in zip(reps, args.logs):
        print(table(rep, p))
        print()
    if len(reps) == 2:
        print(compare(reps[0], reps[1], args.logs[0], args.logs[1]))
    elif len(reps) > 2:
        print(compare_many(reps, args.logs))
    if args.published or len(reps) > 2:
        if len(reps) > 1:
            print()
        print(published_table())
    if args.png:
        plot(reps, args.logs, args.png)
        print(f"\nhvreport: wrote {args.png}")
        for suffix, draw in (("timer-late", plot_late), ("intervals", plot_intervals)):
            out = beside(args.png, suffix)
            if draw(reps, args.logs, out):
                print(f"hvreport: wrote {out}")


if __name__ == "__main__":
    main()
