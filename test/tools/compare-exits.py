#!/usr/bin/env python3
"""The Linux runs' exit counts of two make test runs, side by side.

  test/tools/compare-exits.py BEFORE_LOGS AFTER_LOGS [--tolerance PCT]

Each argument is a build/test-logs folder. For each linux-*.ser in both,
the sum over the vCPUs of the last `hvstat: cpu=N exits=M` each printed,
and the exits by reason where a run prints them (`hvstat: cpu=N reason
...=K`), before and after and the change in percent. A change past the
tolerance (default 10 %: Bochs's runs vary by a few percent, a guest's
timing-dependent work more) is flagged; exit 1 if any is. For a change
that is meant to leave the hypervisor's behaviour alone (a move of code).
"""
import glob
import os
import re
import sys

LINE = re.compile(r'hvstat: cpu=(\d+) exits=(\d+)')


def exits(path):
    last = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                last[int(m.group(1))] = int(m.group(2))
    return sum(last.values()), len(last)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tol = 10.0
    if "--tolerance" in sys.argv:
        tol = float(sys.argv[sys.argv.index("--tolerance") + 1])
        args = [a for a in args if a != sys.argv[sys.argv.index("--tolerance") + 1]]
    if len(args) != 2:
        print(__doc__)
        return 2
    before, after = args
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(before, "linux-*.ser")))
    flagged = 0
    print(f"{'run':28} {'before':>10} {'after':>10} {'change':>8}")
    for n in names:
        a = os.path.join(after, n)
        if not os.path.exists(a):
            print(f"{n[:-4]:28} {'':>10} {'missing':>10}")
            continue
        (b, bc), (x, xc) = exits(os.path.join(before, n)), exits(a)
        if not bc and not xc:
            continue
        ch = (x - b) * 100.0 / b if b else float("inf")
        flag = abs(ch) > tol or bc != xc
        flagged += flag
        print(f"{n[:-4]:28} {b:>10} {x:>10} {ch:>+7.1f}%{'  <-- past ' + str(tol) + ' %' if flag else ''}")
    print(f"compare-exits: {len(names)} runs, {flagged} past {tol} %")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
