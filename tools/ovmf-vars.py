#!/usr/bin/env python3
"""ovmf-vars.py TEMPLATE OUT DIR: OUT is OVMF's variable file TEMPLATE
(/usr/share/OVMF/OVMF_VARS.fd) with the variables in DIR added, DIR being
what efivarfs holds (one file NAME-GUID per variable: its 4-byte attributes,
then its data), as efibootmgr wrote them in tools/deb-disk.sh's chroot
(EFIVARFS_PATH). This stands for the machine's NVRAM keeping what
efibootmgr set on it; QEMU gets OUT as its second pflash drive.

The file's layout: a firmware volume (the header's length at offset 0x30)
holding the variable store: its header (the store's GUID, 16 bytes; size,
4; format 0x5a; state 0xfe; 6 reserved), then the variables one after the
other, each 4-byte aligned, the free space 0xff. A variable of the
authenticated store (the GUID aaf32c78-947b-439a-a180-2e144ec37792) has a
60-byte header: StartId 0x55aa, State (0x3f: added), a reserved byte,
Attributes, MonotonicCount (8), TimeStamp (16), PubKeyIndex, NameSize,
DataSize (4 each), VendorGuid (16); then its UCS-2 name with its NUL,
then its data. Only that store is handled; anything else is refused.
"""
import os
import struct
import sys
import uuid

AUTH_STORE = uuid.UUID('aaf32c78-947b-439a-a180-2e144ec37792')
HDR = struct.Struct('<HBBIQ16sIII16s')   # 60 bytes


def die(msg):
    sys.exit('ovmf-vars: ' + msg)


def main():
    if len(sys.argv) != 4:
        die('usage: ovmf-vars.py TEMPLATE OUT DIR')
    tmpl, out, vdir = sys.argv[1:]
    img = bytearray(open(tmpl, 'rb').read())
    if img[0x28:0x2c] != b'_FVH':
        die(tmpl + ': no firmware volume header')
    store = struct.unpack_from('<H', img, 0x30)[0]
    guid = uuid.UUID(bytes_le=bytes(img[store:store + 16]))
    size, fmt, state = struct.unpack_from('<IBB', img, store + 16)
    if guid != AUTH_STORE or fmt != 0x5a or state != 0xfe:
        die('%s: not an authenticated variable store (%s, format %#x, state %#x)' % (tmpl, guid, fmt, state))
    end = store + size
    at = store + 28
    at = (at + 3) & ~3
    # Past the variables already there.
    while struct.unpack_from('<H', img, at)[0] == 0x55aa:
        f = HDR.unpack_from(img, at)
        at = (at + HDR.size + f[7] + f[8] + 3) & ~3
    added = []
    for fn in sorted(os.listdir(vdir)):
        name, _, g = fn.partition('-')
        raw = open(os.path.join(vdir, fn), 'rb').read()
        if len(raw) < 4 or not g:
            die('%s: not an efivarfs variable file' % fn)
        attrs = struct.unpack_from('<I', raw)[0]
        data = raw[4:]
        uname = (name + '\0').encode('utf-16-le')
        rec = HDR.pack(0x55aa, 0x3f, 0, attrs, 0, bytes(16), 0, len(uname), len(data),
                       uuid.UUID(g).bytes_le) + uname + data
        if at + len(rec) > end:
            die('the variable store is full')
        img[at:at + len(rec)] = rec
        at = (at + len(rec) + 3) & ~3
        added.append('%s (%d bytes, attributes %#x)' % (name, len(data), attrs))
    open(out, 'wb').write(img)
    print('ovmf-vars: %s: %s' % (out, ', '.join(added) or 'nothing added'))


main()
