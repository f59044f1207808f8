#!/usr/bin/env python3
"""mkspcr.py OUT [--port 0x2f8 | --mmio ADDR [--dword]] [--baud 115200] [--gsi N]:
an ACPI SPCR table naming a console UART, for GRUB's `acpi` command on the
ISO (tools/mkiso.sh, HV_ACPI_TABLES): what a server's firmware publishes when
its console redirection (serial-over-LAN) is on COM2.

Layout from Microsoft's "Serial Port Console Redirection Table", revision 2
(80 bytes): the 36-byte ACPI header ("SPCR"), the interface type at 36 (0,
a full 16550), 3 reserved, the base address at 40 as an ACPI Generic
Address Structure (space 1 I/O or 0 memory, register bit width 8, bit
offset 0, access size 1 byte or 3 dword, the 64-bit address), the interrupt
type at 52 (bit 0 PC-AT IRQ, bit 1 I/O APIC), the IRQ at 53, the GSI at 54
(4 bytes), the baud rate code at 58 (3 9600, 4 19200, 6 57600, 7 115200),
parity 59, stop bits 60 (1: one), flow control 61, terminal type 62 (3:
ANSI), language 63, the PCI device and vendor IDs at 64 and 66 (0xFFFF: not a
PCI device), the PCI bus, device and function at 68-70, PCI flags at 71
(4 bytes), the PCI segment at 75, 4 reserved.
"""
import argparse
import struct
import sys

CODES = {9600: 3, 19200: 4, 57600: 6, 115200: 7}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out')
    ap.add_argument('--port', type=lambda s: int(s, 0))
    ap.add_argument('--mmio', type=lambda s: int(s, 0))
    ap.add_argument('--dword', action='store_true', help='32-bit registers (MMIO only)')
    ap.add_argument('--baud', type=int, default=115200)
    ap.add_argument('--gsi', type=int, default=None)
    a = ap.parse_args()
    if (a.port is None) == (a.mmio is None):
        sys.exit('mkspcr: give one of --port and --mmio')
    if a.baud not in CODES:
        sys.exit(f'mkspcr: baud {a.baud}: the table codes only {sorted(CODES)}')
    if a.port is not None:
        gas = struct.pack('<BBBBQ', 1, 8, 0, 1, a.port)
        gsi = a.gsi if a.gsi is not None else (4 if a.port in (0x3f8, 0x3e8) else 3)
    else:
        gas = struct.pack('<BBBBQ', 0, 32 if a.dword else 8, 0, 3 if a.dword else 1, a.mmio)
        gsi = a.gsi if a.gsi is not None else 0
    body = struct.pack('<B3s', 0, b'\0' * 3) + gas
    body += struct.pack('<BBIBBBBBB', 0x3 if gsi < 16 else 0x2, gsi if gsi < 16 else 0, gsi,
                        CODES[a.baud], 0, 1, 0, 3, 0)
    body += struct.pack('<HHBBBIB4s', 0xffff, 0xffff, 0, 0, 0, 0, 0, b'\0' * 4)
    length = 36 + len(body)
    assert length == 80, length
    hdr = struct.pack('<4sIBB6s8sI4sI', b'SPCR', length, 2, 0, b'HVTEST', b'HVSPCR  ', 1, b'HVT ', 1)
    t = bytearray(hdr + body)
    t[9] = (-sum(t)) & 0xff
    with open(a.out, 'wb') as f:
        f.write(t)


if __name__ == '__main__':
    main()
