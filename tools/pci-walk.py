#!/usr/bin/env python3
"""Follows a guest's access down the PCI model (pci/), call by call.

  pci-walk.py               the three walks docs/layout.md tells a newcomer
                            to follow, each printed as the files it enters
                            in the order the code calls them
  pci-walk.py --check       every call between two files of pci/ checked
                            against pci/'s order (ORDER in
                            tools/check-includes.py): exit 1, each named,
                            where a file calls one above it
  pci-walk.py --root DIR    another tree with a pci/ folder (the fixture in
                            test/fixtures/pciwalk/)

The graph is read from the sources as text: each function defined at the
top level of a pci/ file (or of the traps' vmx/msi_trap.c), and each call
in its body of a function defined there. Calls through the hardware
vtable (hw->cfg_write and the like) go to the traps' callbacks, out of the
model, and are not followed. The include check keeps each file to the
headers below it; this one catches what a local declaration would let
through, and prints the path a reader follows.
"""
import argparse
import importlib.util
import os
import re
import sys

WALKS = [
    ("a guest's configuration write (port 0xCFC)", "vmx/msi_trap.c:msi_trap_out", "vmsi_port_write"),
    ("a guest's MSI-X table write", "vmx/msi_trap.c:msi_trap_exit", "vmsi_mem_write"),
    ("a BAR move (the table's BAR or the command register written)", "pci/cfg.c:vmsi_cfg_write", "vmsi_bar_write"),
]

DEF = re.compile(r'^(?:static\s+)?(?:inline\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(([^;{]*?)\)\s*\{', re.M | re.S)
CALL = re.compile(r'\b(\w+)\s*\(')
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof"}


def strip(text):
    """The code without comments and string literals (same length)."""
    out = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', lambda m: '"' + ' ' * (len(m.group(0)) - 2) + '"', out)


def read(root, files):
    """Functions as 'file:name' -> file, and -> the functions each calls,
    resolved as the compiler would: a static function of the same file
    first, then the one function of that name with external linkage."""
    defs, raw, local, extern = {}, {}, {}, {}
    for rel in files:
        text = strip(open(os.path.join(root, rel), encoding="utf-8").read())
        for m in DEF.finditer(text):
            name = m.group(1)
            if name in KEYWORDS:
                continue
            depth, i = 1, m.end()
            while depth and i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            key = f"{rel}:{name}"
            defs[key] = rel
            raw[key] = [c for c in CALL.findall(text[m.end():i]) if c not in KEYWORDS]
            if re.match(r'\s*static\b', m.group(0)):
                local[(rel, name)] = key
            else:
                extern[name] = key
    body = {}
    for key, calls in raw.items():
        rel = defs[key]
        body[key] = [local.get((rel, c)) or extern.get(c) for c in calls]
        body[key] = [c for c in body[key] if c]
    return defs, body


def order(here):
    spec = importlib.util.spec_from_file_location("check_includes", os.path.join(here, "tools", "check-includes.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return {f"pci/{m}": i for i, m in enumerate(mod.ORDER["pci"])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root")
    args = ap.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    root = args.root or here
    rank = order(here)
    files = sorted(os.path.join("pci", n) for n in os.listdir(os.path.join(root, "pci")) if n.endswith((".c", ".h")))
    files += [f for f in ("vmx/msi_trap.c",) if os.path.exists(os.path.join(root, f))]
    defs, body = read(root, files)

    climbs = []
    for fn, calls in sorted(body.items()):
        a = os.path.splitext(defs[fn])[0]
        for c in sorted(set(calls)):
            if c == fn:
                continue
            b = os.path.splitext(defs[c])[0]
            if a == b or a not in rank or b not in rank:
                continue
            if rank[b] > rank[a]:
                climbs.append(f"climb: {fn} calls {c} ({b} is above {a} in pci/'s order)")
    if args.check:
        for c in climbs:
            print(c)
        print(f"pci-walk: {len(defs)} functions, {sum(len(set(v)) for v in body.values())} calls, {len(climbs)} climbs")
        return 1 if climbs else 0

    for title, at, entry in WALKS:
        entry = next((k for k in defs if k.endswith(":" + entry)), None)
        if entry is None:
            print(f"pci-walk: {title}: no function to start from")
            return 1
        seen, path, edges = set(), [], []

        def walk(fn, depth, caller):
            if caller:
                edges.append((defs[caller], defs[fn]))
            if fn in seen:
                return
            seen.add(fn)
            path.append((depth, defs[fn], fn.split(":")[1]))
            for c in body[fn]:
                walk(c, depth + 1, fn)
        walk(entry, 0, None)
        mod = lambda f: os.path.splitext(f)[0]
        moves = sum(1 for a, b in edges if mod(a) != mod(b))
        up = sum(1 for a, b in edges if mod(a) != mod(b) and rank.get(mod(b), -1) > rank.get(mod(a), 99))
        print(f"== {title}: {entry}, called by {at}")
        for depth, f, fn in path:
            print(f"  {'  ' * depth}{f}: {fn}")
        print(f"  {len(path)} functions in {len({mod(p[1]) for p in path})} files; {len(edges)} calls, "
              f"{moves} of them into another file, {up} of those up")
    print(f"pci-walk: {len(climbs)} climbs in pci/")
    return 1 if climbs else 0


if __name__ == "__main__":
    sys.exit(main())
