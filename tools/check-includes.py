#!/usr/bin/env python3
"""Keeps the layers: the hypervisor's #include graph, checked.

  check-includes.py             the project's tree (the folders below)
  check-includes.py --root DIR  another tree with the same folders (the
                                fixtures in test/fixtures/includes/), with
                                no allow-list

Every .c and .h under boot lib apic pci ipi timer iommu vmx guest testaid (not guest/test/) is
read; each `#include "..."` is resolved relative to the including file. A
module is a .c with its .h (path without extension: lib/desc). Fails (exit 1)
and names:
  - every module circle (lib/a -> lib/b -> lib/a),
  - every pair of folders that include each other,
  - every include against the layer order (LAYERS below),
  - every include of testaid/ but by its dispatcher (ONLY_FROM below),
  - inside a folder with an order of its own (ORDER below: pci/), every
    include of a file that is not below the includer's,
  - every include that does not resolve to a file of the layers,
  - every hypervisor source file (.c .h .asm) over MAX_LINES lines.
Clean: one line, "includes: N files, M edges, layers ok".
"""
import argparse
import os
import re
import sys

FOLDERS = ["boot", "lib", "apic", "pci", "ipi", "timer", "iommu", "vmx", "guest", "testaid"]
EXCLUDE = ["guest/test"]          # the test guest's programs (Linux modules, user tools)
MAX_LINES = 650

# The layers, bottom to top, as what each folder may include besides itself.
#   lib                      the freestanding core: includes nothing above it
#   apic, timer, ipi, iommu  may include lib; ipi may include apic (the
#                            PID-pointer table), never the other way; timer
#                            and iommu (VT-d) include neither
#   pci                      the PCI configuration-space model, MSI and MSI-X
#                            emulation: may include lib and apic (the
#                            interrupt router, apic/vioapic.h) and nothing
#                            else; only vmx (its traps), testaid and boot
#                            include it
#   guest, vmx               may include everything below; vmx may include
#                            guest (the policies its exit handlers apply),
#                            never the other way
#   testaid                  the in-image test aids (iommutest=, bochstest=):
#                            may include everything but boot; nothing but
#                            boot (the dispatcher of those options) includes it
#   boot                     on top: nothing includes boot/
LAYERS = {
    "lib": set(),
    "apic": {"lib"},
    "pci": {"lib", "apic"},
    "timer": {"lib"},
    "ipi": {"lib", "apic"},
    "iommu": {"lib"},
    "guest": {"lib", "apic", "ipi", "timer", "iommu"},
    "vmx": {"lib", "apic", "pci", "ipi", "timer", "iommu", "guest"},
    "testaid": {"lib", "apic", "pci", "ipi", "timer", "iommu", "guest", "vmx"},
    "boot": {"lib", "apic", "pci", "ipi", "timer", "iommu", "guest", "vmx", "testaid"},
}

# Folders only the files named may include from outside: the test aids
# are reached through their dispatcher alone (a build without them links
# boot/aids_none.c instead).
ONLY_FROM = {"testaid": {"boot/aids.c"}}

# A folder's own order, bottom to top, by module (path without extension):
# a file may include its own module's header and the modules listed before
# its own, never one after it, so that no call inside the folder climbs
# back up (C needs the declaration). A module of the folder not listed is
# a problem too. pci/: docs/layout.md says what each one is.
ORDER = {
    "pci": ["model", "bar", "bridge", "alias", "fn", "route", "place", "scan",
            "msi", "msix", "sriov", "bridge_write", "cfg", "vmsi"],
}

# ---------------------------------------------------------------------------
# TEMPORARY allow-lists, for a file a change is still reshaping: printed on
# every run, and an entry no longer needed is an error. Empty since the
# split of vmx/virq.c (issue 17); keep them so.
TEMPORARY_SIZE = set()
TEMPORARY_CIRCLES = []
# ---------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def scan(root):
    """{relative path: [included relative path or None-resolved text]}, line counts."""
    files, lines = {}, {}
    for top in FOLDERS:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            rel_d = os.path.relpath(d, root)
            dirs[:] = sorted(x for x in dirs if os.path.join(rel_d, x) not in EXCLUDE)
            for n in sorted(names):
                rel = os.path.normpath(os.path.join(rel_d, n))
                if not n.endswith((".c", ".h", ".asm")):
                    continue
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines[rel] = text.count("\n")
                if n.endswith((".c", ".h")):
                    files[rel] = INCLUDE.findall(text)
    return files, lines


def folder(path):
    return path.split("/", 1)[0]


def module(path):
    return os.path.splitext(path)[0]


def sccs(graph):
    """Tarjan's strongly connected components, iteratively; only those with a circle."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = n
        n += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def circles(graph, comp, limit=50):
    """The simple circles inside one component, each from its smallest node."""
    comp_set, found = set(comp), []
    for s in comp:
        path, stack = [s], [iter(sorted(x for x in graph[s] if x in comp_set and x >= s))]
        while stack and len(found) < limit:
            w = next(stack[-1], None)
            if w is None:
                stack.pop()
                path.pop()
            elif w == s:
                found.append(path + [s])
            elif w not in path:
                path.append(w)
                stack.append(iter(sorted(x for x in graph[w] if x in comp_set and x >= s)))
    return found


def check(root, allow):
    files, lines = scan(root)
    problems, notes = [], []
    edges = set()                       # (file, included file)
    for src, incs in sorted(files.items()):
        for inc in incs:
            dst = os.path.normpath(os.path.join(os.path.dirname(src), inc))
            if dst not in files:
                problems.append(f"unresolved: {src} includes \"{inc}\" ({dst} is no file of the layers)")
                continue
            edges.add((src, dst))

    # (a) modules
    mgraph = {module(f): set() for f in files}
    for src, dst in edges:
        if module(src) != module(dst):
            mgraph[module(src)].add(module(dst))
    allowed_circles = {frozenset(c) for c in (TEMPORARY_CIRCLES if allow else [])}
    used_circles = set()
    for comp in sccs(mgraph):
        if frozenset(comp) in allowed_circles:
            used_circles.add(frozenset(comp))
            for c in circles(mgraph, comp):
                notes.append("TEMPORARY allowed module circle: " + " -> ".join(c))
            continue
        for c in circles(mgraph, comp):
            problems.append("module circle: " + " -> ".join(c))

    # (b) folders, and the layer order
    fedges = {}
    for src, dst in sorted(edges):
        a, b = folder(src), folder(dst)
        if a != b:
            fedges.setdefault((a, b), []).append(f"{src} -> {dst}")
    for (a, b), why in sorted(fedges.items()):
        if a < b and (b, a) in fedges:
            problems.append(f"folders include each other: {a} <-> {b} ({why[0]}; {fedges[(b, a)][0]})")
    for (a, b), why in sorted(fedges.items()):
        if b not in LAYERS.get(a, set()):
            may = " ".join(sorted(LAYERS.get(a, set()))) or "nothing outside itself"
            for w in why:
                problems.append(f"layer: {w} ({a}/ may include {may})")

    for src, dst in sorted(edges):
        only = ONLY_FROM.get(folder(dst))
        if only is not None and folder(src) != folder(dst) and src not in only:
            problems.append(f"only: {src} -> {dst} ({folder(dst)}/ is included only by {' '.join(sorted(only))})")

    # (c) the order inside a folder
    for top, order in ORDER.items():
        rank = {f"{top}/{m}": i for i, m in enumerate(order)}
        for m in sorted({module(f) for f in files if folder(f) == top}):
            if m not in rank:
                problems.append(f"order: {m} is in no place of {top}/'s order (ORDER in tools/check-includes.py)")
        for src, dst in sorted(edges):
            a, b = module(src), module(dst)
            if folder(src) != top or folder(dst) != top or a == b or a not in rank or b not in rank:
                continue
            if rank[b] >= rank[a]:
                problems.append(f"order: {src} -> {dst} ({a} may include only what is below it in {top}/: "
                                f"{' '.join(order[:rank[a]]) or 'nothing'})")

    # sizes
    allowed_size = TEMPORARY_SIZE if allow else set()
    for f, n in sorted(lines.items()):
        if n > MAX_LINES:
            if f in allowed_size:
                notes.append(f"TEMPORARY allowed size: {f} has {n} lines (over {MAX_LINES})")
            else:
                problems.append(f"size: {f} has {n} lines (over {MAX_LINES}): split it by concern")

    # allow-list entries no longer needed
    for f in sorted(allowed_size):
        if lines.get(f, 0) <= MAX_LINES:
            problems.append(f"allow-list: {f} is no longer over {MAX_LINES} lines: take it out of TEMPORARY_SIZE")
    for c in (TEMPORARY_CIRCLES if allow else []):
        if frozenset(c) not in used_circles:
            problems.append("allow-list: the circle " + " -> ".join(c) + " is gone: take it out of TEMPORARY_CIRCLES")

    return files, edges, problems, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", help="check this tree instead of the project's (no allow-list)")
    args = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = args.root or here
    if not os.path.isdir(root):
        print(f"check-includes: {root}: no such folder", file=sys.stderr)
        return 2
    files, edges, problems, notes = check(root, allow=args.root is None)
    for n in notes:
        print(n)
    for p in problems:
        print(p)
    if problems:
        print(f"includes: {len(files)} files, {len(edges)} edges, {len(problems)} problems")
        return 1
    print(f"includes: {len(files)} files, {len(edges)} edges, layers ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
