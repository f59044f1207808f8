#!/usr/bin/env python3
"""Plants one-line faults, one at a time, in a copy of the tree and runs the
host unit tests against each (issue 36): every fault must fail build/unit,
with a failure, not a hang.

  test/tools/plant-faults.py            the faults of issue 36 (1-21 but 7)
  test/tools/plant-faults.py 3 6        those only
  test/tools/plant-faults.py --locks    each spin_lock of the hypervisor's files
                                        the unit build compiles (vmx/, timer/),
                                        dropped in turn; names (file:line)
                                        after it choose some
  test/tools/plant-faults.py --list     what each fault changes

A fault is an exact text substitution (not a line number), so it survives
edits elsewhere in the file; a fault whose text is gone is reported as
such. The working tree is never touched: each fault is planted in a fresh
copy under $TMPDIR and built there (about 30 s a fault). Prints, per fault,
CAUGHT with the failing tests and their first messages, or MISSED."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_TIMEOUT = 300   # seconds: a run longer than this is a hang

# (name, file, text, replacement): issue 36's list, numbered as there.
FAULTS = [
    ("1", "pci/route.c", "uint64_t v = (rte & ~0xffull) | (base + i);",
     "uint64_t v = (rte & ~0xffull) | (base);"),
    ("2", "pci/msi.c", "unsigned mme = MSI_MME(ctl) < MSI_MMC(ctl) ?", "unsigned mme = MSI_MME(ctl) > MSI_MMC(ctl) ?"),
    ("3", "pci/bar.h", "return off + size > bar && off < bar + 8;", "return off + size > bar && off < bar + 4;"),
    ("4", "pci/cfg.c", "bool on = !(old_x & MSIX_EN) && (f->msix_ctl & MSIX_EN);",
     "bool on = (!(old_x & MSIX_EN) || true) && (f->msix_ctl & MSIX_EN);"),
    ("5", "pci/msix.c", "pa - f->table_pa < 16ull * f->nent", "pa - f->table_pa <= 16ull * f->nent"),
    ("6", "pci/msix.c", "if ((pa & 0xc) == 12 || !(e->ctrl & MSIX_ENT_MASK))", "if (!(e->ctrl & MSIX_ENT_MASK))"),
    ("8", "apic/vioapic.c", "if (host > 255)\n", "if (host > 256)\n"),
    ("9", "apic/vioapic.c",
     "\t\tif (!(p->prte & VIOAPIC_MASKED))\n\t\t\thw->write(hw->ctx, lo, (uint32_t)p->prte | (uint32_t)VIOAPIC_MASKED);\n", ""),
    ("10", "apic/vioapic.c", "(e->lo != p->irte.lo || e->hi != p->irte.hi)", "(e->lo != p->irte.lo)"),
    ("11", "vmx/ept_sync.c", "__atomic_load_n(&w->ept_seen, __ATOMIC_SEQ_CST) < g",
     "__atomic_load_n(&w->ept_seen, __ATOMIC_SEQ_CST) <= g"),
    ("12", "vmx/tsc.c", "(b & CPUID7_EBX_TSC_ADJUST) && rdmsr_safe", "rdmsr_safe"),
    ("13", "lib/srat.c", "if (srat_node_of_apic(s, apic_id) >= 0)", "if (srat_node_of_apic(s, apic_id) > 0)"),
    ("14", "lib/srat.c", "if (out->revision >= 2)", "if (out->revision > 2)"),
    ("15", "lib/srat.c", "if (!m->len || m->base + m->len < m->base)", "if (!m->len)"),
    ("16", "vmx/virq_startup.c", "else if (st.sipi >= 0)", "else if (st.sipi > 0)"),
    ("17", "vmx/virq_startup.c", "\t\tv->nmis_dropped++;\n\tvirq_posted_drop(v);\n", "\t\tv->nmis_dropped++;\n"),
    ("18", "vmx/virq_startup.c", "v->sipi_base && vmcs_read(VMCS_GUEST_RIP) == 0 && vmcs_read", "v->sipi_base && vmcs_read"),
    ("19", "vmx/virq_timer.c", "if (stale && (msr || !v->pass_handed))", "if (stale && (msr))"),
    ("20", "vmx/virq_timer.c", "\tspin_lock(&v->timer_lock);\n\tuint64_t d = vtimer_hand_over(&v->timer);\n\tspin_unlock",
     "\tuint64_t d = vtimer_hand_over(&v->timer);\n\tspin_unlock"),
    ("21", "boot/probe_verdict.c", "|| !(ebx[i] & 0xffff))", "|| (!(ebx[i] & 0xffff) && false))"),
    # Not a fault of the list: the shootdown's time-out taken away, so the
    # shooter waits for good on a vCPU that never answers. The tests must
    # end in a failure, not hang (issue 36).
    ("hang", "vmx/ept_sync.c", "if (rdtsc() - t0 > limit) {", "if (rdtsc() - t0 > limit && false) {"),
    # Nor this: a vCPU that reads the generation before it says it is in
    # the guest (a shooter in between neither waits for it nor is seen by
    # it). Only two threads racing can show it.
    ("race", "vmx/ept_sync.c", "\t__atomic_store_n(&v->in_guest, !v->parked, __ATOMIC_SEQ_CST);\n\tcatch_up(v);\n",
     "\tcatch_up(v);\n\t__atomic_store_n(&v->in_guest, !v->parked, __ATOMIC_SEQ_CST);\n"),
]


def unit_sources():
    """The hypervisor's files in the unit build (UNIT_SRCS less test/)."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "print-unit-srcs"],
                         cwd=ROOT, input="print-unit-srcs:\n\t@echo $(UNIT_SRCS)\n", capture_output=True, text=True)
    return [f for f in out.stdout.split() if not f.startswith("test/")]


def lock_faults():
    faults = []
    for f in unit_sources():
        lines = open(os.path.join(ROOT, f)).read().split("\n")
        for n, line in enumerate(lines, 1):
            if re.match(r"^\s*spin_lock\(", line):
                faults.append((f"{f}:{n}", f, n, line))
    return faults


def copy_tree(dst):
    def ignore(d, names):
        return [n for n in names if os.path.relpath(os.path.join(d, n), ROOT) in ("build", ".git")]
    shutil.copytree(ROOT, dst, ignore=ignore, symlinks=True)


def run(tree, name):
    b = subprocess.run(["make", "-s", "build/unit"], cwd=tree, capture_output=True, text=True)
    if b.returncode:
        return "BUILD-FAILED", b.stdout + b.stderr
    env = dict(os.environ, HV_FIXTURES="test/fixtures")
    try:
        r = subprocess.run(["build/unit"], cwd=tree, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "HANG", f"no end after {RUN_TIMEOUT} s"
    lines = r.stdout.split("\n")
    fails = [l for l in lines if l.startswith("FAIL ")]
    if r.returncode == 0:
        return "MISSED", lines[-2] if len(lines) > 1 else ""
    if not fails:
        return "CRASHED", (r.stdout[-600:] + r.stderr[-600:])
    # Each failing test with its first messages.
    out, cur = [], []
    for l in lines:
        if l.startswith("    "):
            cur.append(l.strip())
        elif l.startswith("FAIL "):
            out.append(l + ("\n      " + "\n      ".join(cur[:3]) if cur else ""))
            cur = []
        else:
            cur = []
    return "CAUGHT", "\n".join(out) + "\n" + lines[-2]


def plant_text(tree, f, text, repl):
    p = os.path.join(tree, f)
    s = open(p).read()
    if s.count(text) != 1:
        return False
    open(p, "w").write(s.replace(text, repl))
    return True


def plant_line(tree, f, n):
    p = os.path.join(tree, f)
    lines = open(p).read().split("\n")
    lines[n - 1] = ""
    open(p, "w").write("\n".join(lines))
    return True


def main(argv):
    if "--list" in argv:
        for name, f, text, repl in FAULTS:
            print(f"{name:>5} {f}: {text!r} -> {repl!r}")
        for name, f, n, line in lock_faults():
            print(f"  lock {name}: {line.strip()} dropped")
        return 0
    want = [a for a in argv if not a.startswith("-")]
    if "--locks" in argv:
        todo = [(name, lambda t, f=f, n=n: plant_line(t, f, n))
                for name, f, n, _ in lock_faults() if not want or name in want]
    else:
        todo = [(name, lambda t, f=f, x=text, r=repl: plant_text(t, f, x, r))
                for name, f, text, repl in FAULTS if not want or name in want]
    missed = 0
    base = tempfile.mkdtemp(prefix="hv-faults-")
    try:
        for name, plant in todo:
            tree = os.path.join(base, "tree")
            shutil.rmtree(tree, ignore_errors=True)
            copy_tree(tree)
            if not plant(tree):
                print(f"== fault {name}: its text is not (once) in the file: not planted")
                missed += 1
                continue
            verdict, detail = run(tree, name)
            print(f"== fault {name}: {verdict}\n{detail}", flush=True)
            missed += verdict != "CAUGHT"
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"faults: {len(todo) - missed} caught, {missed} not")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
