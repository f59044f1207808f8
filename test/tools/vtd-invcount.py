#!/usr/bin/env python3
"""vtd-invcount.py SERIAL BOCHSOUT: the invalidations the hypervisor says it
gave each VT-d unit against what the patched Bochs's units counted (issue 44
item 7: counted per unit and per source exactly).

From SERIAL (the hypervisor's last report):
  hvstat: iommu unit=0xBASE cc_inv=A iotlb_inv=B iec_inv=C iec_index_inv=D qi_waits=W
  hvstat: iommu irte=IDX seg=S unit=0xBASE|any writes=N
From BOCHSOUT (the units at exit):
  bochs-vtd: unit=K base=0xBASE ...
  bochs-vtd: unit=K ... waits=W cc_inv=A iotlb_inv=B iec_inv=C ...
  bochs-vtd: unit=K base=0xBASE iec_index=IDX inv=N
Every unit's four counts must be equal, and the set of (unit, IRTE index,
count) of index-selective invalidations the same on both sides: an IRTE
the hypervisor wrote N times was invalidated N times in the unit that
remaps its source (every unit for unit=any), and no other index was.
Prints one line per mismatch and a verdict; exit 0 only when all agree and
both sides said something."""
import re
import sys


def main():
    ser, out = sys.argv[1], sys.argv[2]
    hv_unit, hv_irte, units = {}, {}, {}
    with open(ser, errors="replace") as f:
        text = f.read().replace("\r", "")
    for m in re.finditer(r"^hvstat: iommu unit=(0x[0-9a-f]+) cc_inv=(\d+) iotlb_inv=(\d+) iec_inv=(\d+) iec_index_inv=\d+ qi_waits=(\d+)$", text, re.M):
        hv_unit[int(m.group(1), 16)] = tuple(int(x) for x in m.group(2, 3, 4, 5))   # the last report's
    irte_lines = list(re.finditer(r"^hvstat: iommu irte=(\d+) seg=(\d+) unit=(0x[0-9a-f]+|any) writes=(\d+)$", text, re.M))
    with open(out, errors="replace") as f:
        btext = f.read()
    base_of = {}
    for m in re.finditer(r"^bochs-vtd: unit=(\d+) base=(0x[0-9a-f]+) gsts=", btext, re.M):
        base_of[int(m.group(1))] = int(m.group(2), 16)
    for m in re.finditer(r"^bochs-vtd: unit=(\d+) ir_remapped=.* waits=(\d+) cc_inv=(\d+) iotlb_inv=(\d+) iec_inv=(\d+) ", btext, re.M):
        k = int(m.group(1))
        units[base_of.get(k, -1)] = (int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(2)))
    bochs_idx = {}
    for m in re.finditer(r"^bochs-vtd: unit=\d+ base=(0x[0-9a-f]+) iec_index=(\d+) inv=(\d+)$", btext, re.M):
        bochs_idx[(int(m.group(1), 16), int(m.group(2)))] = int(m.group(3))
    # The last report's IRTE lines: those after the last unit line's report.
    hv_idx = {}
    for m in irte_lines:
        idx, unit, n = int(m.group(1)), m.group(3), int(m.group(4))
        for b in (units if unit == "any" else [int(unit, 16)]):
            hv_idx[(b, idx)] = n                     # a later report's count replaces an earlier one's
    bad = 0
    if not hv_unit or not units:
        print(f"vtd-invcount: no counts (hypervisor units {len(hv_unit)}, Bochs units {len(units)})")
        return 1
    names = ("cc_inv", "iotlb_inv", "iec_inv", "waits")
    for b in sorted(set(hv_unit) | set(units)):
        h, u = hv_unit.get(b), units.get(b)
        if h != u:
            bad += 1
            print(f"vtd-invcount: unit 0x{b:x}: hypervisor {dict(zip(names, h)) if h else None}, unit {dict(zip(names, u)) if u else None}")
    for key in sorted(set(hv_idx) | set(bochs_idx)):
        h, u = hv_idx.get(key, 0), bochs_idx.get(key, 0)
        if h != u:
            bad += 1
            print(f"vtd-invcount: unit 0x{key[0]:x} IRTE {key[1]}: written {h} times, invalidated by index {u} times")
    total = sum(hv_idx.values())
    print(f"vtd-invcount: {len(units)} units, {len(hv_idx)} IRTE indexes ({total} writes): "
          f"{'exact' if not bad else f'{bad} mismatch(es)'}")
    return 0 if not bad and hv_idx else 1


if __name__ == "__main__":
    sys.exit(main())
