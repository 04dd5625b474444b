#!/usr/bin/env python3
"""Registers per thread of the kernels in a tessel disk cache, without a GPU.

  tools/dev/cubin_registers.py [CACHE_DIR]   (default $TESSEL_CACHE_DIR)

Reads each entry's cubin (the ELF inside the cache entry) and prints its
kernel name and the register count ptxas gave it (the EIATTR_REGCOUNT
attribute of .nv.info): a quick check of register pressure after a change to
the lowering, e.g. with tessel-warmup --cache-dir on a scratch folder.
"""

import glob
import json
import os
import struct
import sys

EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 0x04  # attribute with a 16-bit size and a payload


def registers(elf):
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
                for i in range(shnum)]
    names = sections[shstrndx][4]

    def name(offset):
        start = names + offset
        return elf[start:elf.index(b"\0", start)].decode()

    for sec in sections:
        if not name(sec[0]).startswith(".nv.info"):
            continue
        pos, end = sec[4], sec[4] + sec[5]
        while pos < end:
            fmt, attr = elf[pos], elf[pos + 1]
            if fmt == EIFMT_SVAL:
                size, = struct.unpack_from("<H", elf, pos + 2)
                if attr == EIATTR_REGCOUNT:
                    return struct.unpack_from("<I", elf, pos + 8)[0]
                pos += 4 + size
            else:
                pos += 4  # the other formats carry at most 2 bytes
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "TESSEL_CACHE_DIR", "")
    if not root:
        sys.exit("usage: cubin_registers.py CACHE_DIR")
    rows = []
    for path in glob.glob(os.path.join(root, "v*", "*", "*.cubin")):
        data = open(path, "rb").read()
        at = data.find(b"\x7fELF")
        if at < 0:
            continue
        meta = path[:-len(".cubin")] + ".json"
        entry = json.load(open(meta)).get("entry", "?") if os.path.exists(
            meta) else "?"
        rows.append((entry, registers(data[at:]), os.path.basename(path)))
    for entry, regs, file in sorted(rows):
        print("{:<40} {:>4} registers  {}".format(entry, regs or "?", file))


if __name__ == "__main__":
    main()
