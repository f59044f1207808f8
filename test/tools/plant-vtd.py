#!/usr/bin/env python3
"""Takes out one of the hypervisor's VT-d invalidations at a time, in a copy
of the tree, and runs linux/hv-vtd on the patched Bochs's strict units
(issue 44): the run must fail, by the units' own counts (a stale cached
entry used or left, a protocol violation) or by what the guest sees.

  test/tools/plant-vtd.py --list      what each plant takes out
  test/tools/plant-vtd.py NAME...     those plants (each about as long as
                                      one linux/hv-vtd run)
  test/tools/plant-vtd.py none        no plant: the same run on the tree as
                                      it is (it must pass)

PLANT_REV=COMMIT takes the tree from that commit (git archive) instead of
the working files; PLANT_WRAP=CMD runs each emulator run under CMD (a
machine's emulator slot), the copy and the build outside it.

A plant is an exact text substitution (as test/tools/plant-faults.py),
reported GONE when its text is not found once. Prints, per plant, CAUGHT
with the run's failing checks, or MISSED. The working tree is never
touched; the copy's build/test-logs is kept (its path is printed)."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (name, file, text, replacement, what the strict unit should see); text
# and replacement may be lists (several substitutions in file, each exact).
# A name in COVERED is a plant another invalidation makes harmless: its run
# is expected to pass (COVERED), and fails the script if it does not.
COVERED = {
    # The interrupt entry cache is invalidated globally twice at the
    # hand-over: in vtd_enable (after the firmware's IR is off) and after
    # SIRTP in vtd_enable_ir. With IR off between them the unit caches no
    # IRTE, so either alone covers what the firmware left; both out is
    # iec-after-handover.
    "sirtp-iec", "enable-iec",
}
PLANTS = [
    ("enable-cc", "iommu/vtd.c",
     "uint64_t d[3] = { VTD_QI_CC_GLOBAL, VTD_QI_IOTLB_GLOBAL, VTD_QI_IEC_GLOBAL };",
     "uint64_t d[3] = { VTD_QI_IOTLB_GLOBAL, VTD_QI_IEC_GLOBAL, VTD_QI_IEC_GLOBAL };",
     "no context-cache invalidation after SRTP: violation iotlb-before-context-after-srtp"),
    ("enable-iotlb", "iommu/vtd.c",
     "uint64_t d[3] = { VTD_QI_CC_GLOBAL, VTD_QI_IOTLB_GLOBAL, VTD_QI_IEC_GLOBAL };",
     "uint64_t d[3] = { VTD_QI_CC_GLOBAL, VTD_QI_IEC_GLOBAL, VTD_QI_IEC_GLOBAL };",
     "no IOTLB invalidation after SRTP: stale only when the firmware left IOTLB entries (item 4's warm state)"),
    ("sirtp-iec", "iommu/vtd.c",
     "\tif (vtd_invalidate_iec(u, err, errlen))\n\t\treturn -1;\n\t/* Compatibility",
     "\t/* Compatibility",
     "no interrupt-entry-cache invalidation after SIRTP: covered by the one in vtd_enable (IR off between them)"),
    ("enable-iec", "iommu/vtd.c",
     "qi_submit(u, d, (u->ecap & VTD_ECAP_IR) ? 3 : 2, err, errlen)",
     "qi_submit(u, d, 2, err, errlen)",
     "no interrupt-entry-cache invalidation in vtd_enable: covered by the one after SIRTP"),
    ("iec-after-handover", "iommu/vtd.c",
     ["qi_submit(u, d, (u->ecap & VTD_ECAP_IR) ? 3 : 2, err, errlen)",
      "\tif (vtd_invalidate_iec(u, err, errlen))\n\t\treturn -1;\n\t/* Compatibility"],
     ["qi_submit(u, d, 2, err, errlen)", "\t/* Compatibility"],
     "neither interrupt-entry-cache invalidation of the hand-over: the firmware's cached IRTE stale at exit"),
    ("irte-iec-index", "iommu/iommu.c",
     "(owner == IRTE_ANY || owner == i) && vtd_invalidate_iec_index(&io.unit[i], index, err, sizeof err))",
     "(owner == IRTE_ANY || owner == i) && 0)",
     "no invalidation after an IRTE is rewritten: a stale IRTE used, or cached and different at exit"),
    ("irte-iec-wrong-unit", "iommu/iommu.c",
     "(owner == IRTE_ANY || owner == i) && vtd_invalidate_iec_index(&io.unit[i], index, err, sizeof err))",
     "(owner == IRTE_ANY || owner != i) && vtd_invalidate_iec_index(&io.unit[i], index, err, sizeof err))",
     "an IRTE's invalidation sent to the other unit: its own unit's copy stale; the counts per unit and index differ"),
    ("irte-no-source-check", "apic/vioapic.c",
     ["irte->hi = IRTE_SRC(src) | IRTE_PDA_HI(d->pid[v]);", "\tirte->hi = IRTE_SRC(src);"],
     ["irte->hi = IRTE_SRC(src & 0xffff) | IRTE_PDA_HI(d->pid[v]);", "\tirte->hi = IRTE_SRC(src & 0xffff);"],
     "IRTEs without source validation: the UHCI's forged requests naming the xHCI's entries are delivered"),
]


def copy_tree(dst):
    rev = os.environ.get("PLANT_REV")
    if rev:
        a = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-C", dst, "-xf", "-"], input=a, check=True)
        return
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        f = f.decode()
        os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(dst, f), follow_symlinks=False)


def main(argv):
    if not argv or "--list" in argv:
        for name, f, text, repl, why in PLANTS:
            print(f"{name:>15} {f}: {why}")
        return 0
    missed = 0
    for want in argv:
        plant = [p for p in PLANTS if p[0] == want] or ([("none", "Makefile", "", "", "nothing taken out")] if want == "none" else [])
        if not plant:
            print(f"{want}: no such plant (--list)")
            return 2
        name, f, text, repl, why = plant[0]
        tree = tempfile.mkdtemp(prefix=f"plant-vtd-{name}-")
        copy_tree(tree)
        p = os.path.join(tree, f)
        s = open(p).read()
        texts, repls = (text, repl) if isinstance(text, list) else ([text], [repl])
        if name != "none" and any(s.count(t) != 1 for t in texts):
            print(f"GONE {name}: the text is not in {f} once")
            missed += 1
            continue
        if name != "none":
            for t, r in zip(texts, repls):
                s = s.replace(t, r)
            open(p, "w").write(s)
        b = subprocess.run(["make", "-s", "all", "build/ipiv-verdict"], cwd=tree, capture_output=True, text=True)
        if b.returncode:
            print(f"BUILD-FAILED {name}\n{b.stdout[-800:]}{b.stderr[-800:]}")
            continue
        env = dict(os.environ, LINUX_ONLY="^linux-hv-vtd$")
        wrap = os.environ.get("PLANT_WRAP", "").split()
        r = subprocess.run(wrap + ["test/run-tests.sh", "linux"], cwd=tree, env=env, capture_output=True, text=True)
        open(os.path.join(tree, "plant-run.out"), "w").write(r.stdout + r.stderr)
        fails = [l for l in r.stdout.split("\n") if l.startswith("FAIL ")]
        passes = [l for l in r.stdout.split("\n") if l.startswith("PASS linux/hv-vtd")]
        if name == "none":
            print(f"{'PASSED' if not fails and passes else 'FAILED'} none: {len(passes)} checks passed\n  " + "\n  ".join(fails[:12]))
        elif name in COVERED:
            if fails:
                missed += 1
            print(f"{'NOT-COVERED' if fails else 'COVERED'} {name} ({why}): {len(passes)} checks passed\n  " + "\n  ".join(fails[:12]))
        elif fails:
            print(f"CAUGHT {name} ({why}):\n  " + "\n  ".join(fails[:12]))
        else:
            missed += 1
            print(f"MISSED {name} ({why}): {len(passes)} checks passed")
        for l in r.stdout.split("\n"):
            if l.startswith("    bochs-vtd: ") and ("stale_" in l or "violation=" in l):
                print("  " + l.strip())
        print(f"  logs: {tree}/build/test-logs")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
