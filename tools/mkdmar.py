#!/usr/bin/env python3
"""mkdmar.py OUT [options]: the DMAR ACPI table of the patched Bochs's VT-d
units (tools/bochs-patch/vtd.cc), for GRUB's `acpi` command on the ISO
(tools/mkiso.sh, HV_ACPI_TABLES).

Layout from the VT-d specification, "DMA Remapping Reporting Structure":
the 36-byte ACPI header ("DMAR", revision 1), host address width - 1 at 36,
flags at 37 (bit 0 INTR_REMAP, bit 1 X2APIC_OPT_OUT, bit 2
DMA_CTRL_PLATFORM_OPT_IN), 10 reserved bytes; then one DRHD per unit (type 0,
length, flags bit 0 INCLUDE_PCI_ALL, size, segment, register base) with its
device scopes (type 1 PCI endpoint or 3 I/OxAPIC, length, flags, reserved,
enumeration ID, start bus, one (device, function) path entry). Unit 1 (the
USB controllers) comes first; unit 0, with INCLUDE_PCI_ALL and the I/OxAPIC,
last, as the specification asks of the INCLUDE_PCI_ALL unit of a segment.
"""
import argparse
import struct
import sys

BASE = 0xFED90000   # vtd.cc: unit n at BASE + 0x10000 * n
STRIDE = 0x10000
HAW = 40            # vtd.cc: VTD_HAW


def bdf(s):
    b, rest = s.split(':')
    d, f = rest.split('.')
    return int(b, 16), int(d, 16), int(f, 16)


def scope(kind, enum_id, bus, dev, fn):
    return struct.pack('<BBBBBBBB', kind, 8, 0, 0, enum_id, bus, dev, fn)


def drhd(flags, base, scopes):
    body = b''.join(scopes)
    return struct.pack('<HHBBHQ', 0, 16 + len(body), flags, 0, 0, base) + body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out')
    ap.add_argument('--ioapic-id', type=int, required=True, help="the I/OxAPIC's ID (the MADT's; Bochs: the CPU count)")
    ap.add_argument('--ioapic', default='f0:1f.0', help="the I/OxAPIC's source ID (vtd.cc's ioapic=, default f0:1f.0)")
    ap.add_argument('--unit1', default='00:01.2,00:02.0',
                    help="unit 1's PCI functions (vtd.cc's scope1=), comma-separated; empty: one unit")
    ap.add_argument('--opt-in', action='store_true', help='DMA_CTRL_PLATFORM_OPT_IN (pre-boot DMA protection)')
    ap.add_argument('--x2apic-opt-out', action='store_true')
    a = ap.parse_args()

    units = []
    if a.unit1:
        units.append(drhd(0, BASE + STRIDE, [scope(1, 0, *bdf(x)) for x in a.unit1.split(',')]))
    b, d, f = bdf(a.ioapic)
    units.append(drhd(1, BASE, [scope(3, a.ioapic_id, b, d, f)]))
    flags = 1 | (2 if a.x2apic_opt_out else 0) | (4 if a.opt_in else 0)
    body = struct.pack('<BB10x', HAW - 1, flags) + b''.join(units)
    length = 36 + len(body)
    hdr = struct.pack('<4sIBB6s8sI4sI', b'DMAR', length, 1, 0, b'HVPROJ', b'BXVTD   ', 1, b'HVPJ', 1)
    table = bytearray(hdr + body)
    table[9] = (-sum(table)) & 0xFF
    with open(a.out, 'wb') as fh:
        fh.write(table)
    return 0


if __name__ == '__main__':
    sys.exit(main())
