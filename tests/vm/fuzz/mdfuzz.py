#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mdfuzz.py: metadata mutations for make fuzz-metadata.

  mdfuzz.py table PRISTINE OUT SEED      card-space table (both copies,
                                         131072 bytes, docs/card-space.md)
  mdfuzz.py engine PRISTINE OUT SEED     engine metadata (the first sectors
                                         of a cache device, vc_format.h)
  mdfuzz.py conf-v1 TABLE OUT             every conf blob of a card-space
                                         table as the older driver wrote it
  mdfuzz.py batch KIND PRISTINE DIR SEED...
                                         one per SEED, as DIR/SEED.img, and
                                         a line "SEED what" each

Writes the mutated image to OUT and prints one line naming the mutation.
Mutations: bit flips with the checksum left stale or recomputed (so that
the checks behind the checksum are reached), fields set to boundary,
foreign and future values with valid checksums, truncation (a tail
zeroed), foreign content (random sectors, another structure's sector),
swapped copies, duplicated and out-of-range block records.
"""
import random
import struct
import sys

_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(crc, data):
    t = _T
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def p32(b, o, v):
    struct.pack_into("<I", b, o, v & 0xFFFFFFFF)


def p64(b, o, v):
    struct.pack_into("<Q", b, o, v & 0xFFFFFFFFFFFFFFFF)


def p16(b, o, v):
    struct.pack_into("<H", b, o, v & 0xFFFF)


def flip(r, b, lo, hi, n):
    for _ in range(n):
        o = r.randrange(lo, hi)
        b[o] ^= 1 << r.randrange(8)


BOUND64 = [0, 1, 2, 511, 512, 4095, 4096, (1 << 20) - 1, 1 << 20, 1 << 32,
           (1 << 48) - 1, 1 << 63, (1 << 64) - 1]
BOUND32 = [0, 1, 2, 3, 4, 15, 16, 17, 255, 4096, 65536, 1 << 31, (1 << 32) - 1]


# ------------------------------------------------------------ card table
COPY = 65536


def table_fix(img, c):
    """recompute copy c's crc (seed ~0, over 65536 bytes, crc zeroed)"""
    base = c * COPY
    p32(img, base + 8, 0)
    p32(img, base + 8, crc32c(0xFFFFFFFF, bytes(img[base:base + COPY])))


# the driver's conf blob (driver/cached/vcc_card.c): a 24-byte head, the
# parameters (room for 15 in version 1, 32 in version 2), 16 devices of 88
CONF_MAGIC = 0x464E4F43
CONF_ROOM = {1: 15, 2: 32}


def conf_room(img, o):
    return CONF_ROOM.get(u32(img, o + 4), 32)


def conf_size(img, o):
    return 24 + 8 * conf_room(img, o) + 88 * 16


def conf_fix(img, c, e):
    o = c * COPY + 4096 * (1 + e) + 96
    n = conf_size(img, o)
    p32(img, o + 8, 0)
    p32(img, o + 8, crc32c(0xFFFFFFFF, bytes(img[o:o + n])))


def conf_to_v1(img):
    """every version 2 conf blob of both copies rewritten as version 1
    (as the driver before readahead_kib wrote it): the first 15
    parameters kept, the table's crcs recomputed"""
    n = 0
    for c in (0, 1):
        base = c * COPY
        for e in range(min(u32(img, base + 12), 15)):
            eo = base + 4096 * (1 + e)
            o = eo + 96
            if u32(img, o) != CONF_MAGIC or u32(img, o + 4) != 2:
                continue
            v2 = bytes(img[o:o + conf_size(img, o)])
            v1 = bytearray(v2[:24] + v2[24:24 + 8 * 15] + v2[24 + 8 * 32:])
            p32(v1, 4, 1)
            p32(v1, 20, min(u32(v1, 20), 15))
            p32(v1, 8, 0)
            p32(v1, 8, crc32c(0xFFFFFFFF, bytes(v1)))
            img[o:o + len(v2)] = v1 + bytes(len(v2) - len(v1))
            p32(img, eo + 52, len(v1))
            n += 1
        table_fix(img, c)
    return n


def mutate_table(img, r):
    c = r.choice([0, 0, 1, 2])          # 2: both copies
    copies = [0, 1] if c == 2 else [c]
    base = copies[0] * COPY
    nreg = u32(img, base + 12)
    kind = r.randrange(17)
    if kind == 16 and c == 2:
        c = 1           # both copies a valid empty table is a real one
        copies = [1]
    fix = r.random() < 0.8
    what = ""
    for cc in copies:
        b = cc * COPY
        e = r.randrange(max(min(nreg, 14), 1))
        eo = b + 4096 * (1 + e)
        if kind == 0:
            n = r.randint(1, 8)
            flip(r, img, b, b + 4096 + 4096 * max(min(nreg, 15), 1), n)
            what = f"{n} bit flips"
        elif kind == 1:
            p16(img, b + 4, r.choice([0, 2, 3, 0xFFFF]))
            what = "future/foreign version"
        elif kind == 2:
            p16(img, b + 6, r.choice([0, 512, 8192, 0xFFFF]))
            what = "block size"
        elif kind == 3:
            p32(img, b + 12, r.choice(BOUND32))
            what = "nr_regions"
        elif kind == 4:
            p64(img, b + 24, r.choice(BOUND64))
            what = "capacity"
        elif kind == 5:
            p64(img, b + 16, r.choice(BOUND64))
            what = "generation"
        elif kind == 6:
            p64(img, eo + 32, r.choice(BOUND64 + [u32(img, eo + 32) + 4096]))
            what = "entry start"
        elif kind == 7:
            p64(img, eo + 40, r.choice(BOUND64))
            what = "entry length"
        elif kind == 8:
            name = r.choice([b"", b"x" * 32, b"\xff\xfe", b"a/b", b"..", b"fm",
                             b"a\nregion b", b"a b"])
            img[eo:eo + 32] = (name + bytes(32))[:32]
            what = "entry name"
        elif kind == 9:
            p32(img, eo + 52, r.choice([1551, 1553, 1687, 2049, 1 << 31, 0]))
            what = "conf_len"
        elif kind == 10:       # the conf blob, its own crc recomputed
            co = eo + 96
            k = r.randrange(5)
            if k == 0:
                flip(r, img, co, co + conf_size(img, co), r.randint(1, 6))
            elif k == 1:
                p32(img, co + 4, r.choice([0, 1, 3, 0xFFFFFFFF]))
            elif k == 2:
                p32(img, co + 20, r.choice([16, 100, 1 << 31]))
            elif k == 3:
                p32(img, co + 12 + 4 * r.randrange(2), r.choice([4, 255, 1 << 31]))
            else:              # a device name / identity without NUL
                d = co + 24 + 8 * conf_room(img, co) + 88 * r.randrange(16)
                img[d] = 1
                img[d + 8:d + 88] = bytes([0x41]) * 80
            conf_fix(img, cc, e)
            what = f"conf blob field {k}"
        elif kind == 11:       # truncated: the tail zeroed
            cut = r.randrange(0, min(COPY, 4096 * (1 + max(min(nreg, 15), 1))))
            img[b + cut:b + COPY] = bytes(COPY - cut)
            what = f"truncated at {cut}"
        elif kind == 12:       # foreign: random bytes with the magic
            img[b + 4:b + COPY] = bytes(r.getrandbits(8) for _ in range(COPY - 4))
            what = "foreign content"
        elif kind == 13:       # a second entry overlapping the first
            same = r.random() < 0.5     # and of the same name
            if nreg >= 1:
                img[eo + 4096:eo + 8192] = img[eo:eo + 4096]
                if not same:
                    img[eo + 4096] ^= 0x01
                p32(img, b + 12, nreg + 1)
            what = "overlapping entries" + (" of one name" if same else "")
        elif kind == 14:       # the magic alone gone
            p32(img, b, 0)
            what = "magic wiped"
        elif kind == 15:       # the count alone lowered
            p32(img, b + 12, max(nreg - 1, 0))
            what = "nr_regions lowered"
        else:                  # a valid empty table of the same generation
            img[b + 4096:b + COPY] = bytes(COPY - 4096)
            p32(img, b + 12, 0)
            what = "emptied, same generation"
        if fix:
            table_fix(img, cc)
    return f"table copy {'AB'[c] if c < 2 else 'A+B'}: {what}{' (crc fixed)' if fix else ''}"


# -------------------------------------------------------- engine metadata
SB, SB2, DEVTAB, MDS = 0, 24, 8, 32


def sec(img, s):
    return s * 512


def engine_fix(img, s, nonce):
    o = s * 512
    crc_off = 12 if s in (SB, SB2) else (4 if s in range(DEVTAB, DEVTAB + 16) else 0)
    p32(img, o + crc_off, 0)
    seed = 0xFFFFFFFF if s in (SB, SB2) else nonce
    p32(img, o + crc_off, crc32c(seed, bytes(img[o:o + 512])))


def mutate_engine(img, r):
    # the newer superblock copy (higher seq) is what the loader uses
    seqs = [struct.unpack_from("<Q", img, s * 512 + 64)[0] for s in (SB, SB2)]
    cur = SB if seqs[0] >= seqs[1] else SB2
    nonce = u32(img, cur * 512 + 72)
    md_start = struct.unpack_from("<Q", img, cur * 512 + 32)[0]
    md_sectors = struct.unpack_from("<Q", img, cur * 512 + 40)[0]
    nr_blocks = struct.unpack_from("<Q", img, cur * 512 + 24)[0]
    maxsec = len(img) // 512
    fix = r.random() < 0.8
    kind = r.randrange(12)
    s = cur if r.random() < 0.8 else (SB2 if cur == SB else SB)
    o = s * 512
    sbname = {cur: "the newer superblock", SB2 if cur == SB else SB: "the older superblock"}
    if kind == 0:
        n = r.randint(1, 6)
        flip(r, img, o, o + 512, n)
        what = f"{sbname[s]} ({s}): {n} bit flips"
    elif kind == 1:
        p32(img, o + 8, r.choice([0, 4, 5, 0xFFFF, 1, 2]))
        what = f"{sbname[s]} ({s}): version"
    elif kind == 2:
        off, vals = r.choice([
            (16, [0, 512, 4097, 1 << 17, 1 << 31]),          # block_size
            (24, BOUND64),                                     # nr_blocks
            (32, [0, 1, 8, 24, 31, maxsec, 1 << 40]),           # md_start
            (40, [0, 1, md_sectors + 1, 1 << 40]),            # md_sectors
            (48, [0, 8, md_start, 1 << 40]),                  # data_start
            (56, [0, 1, (1 << 64) - 1, maxsec * 4]),            # dev_sectors
            (76, [4, 100, 1 << 31]),                          # mode
            (80, [4, 100, 1 << 31]),                          # policy
            (84, [33, 1000, 1 << 31]),                        # nr_params
            (344, [9, 40, 63, 64, 1 << 31]),                  # set_shift
        ])
        v = r.choice(vals)
        (p64 if off in (24, 32, 40, 48, 56) else p32)(img, o + off, v)
        what = f"{sbname[s]} ({s}): field at {off} = {v}"
    elif kind == 3:
        img[o + 348:o + 380] = bytes([0x7A]) * 32        # label, no NUL
        what = f"{sbname[s]} ({s}): label without NUL"
    elif kind == 4:
        p32(img, o + 20, r.choice([0, 0x4E41454C]))
        what = f"{sbname[s]} ({s}): clean flag"
    elif kind == 5:       # a device table sector
        s = DEVTAB + r.randrange(2)
        o = s * 512
        k = r.randrange(4)
        if k == 0:
            p64(img, o + 16, r.choice(BOUND64))
        elif k == 1:
            img[o + 24:o + 72] = (b"dm:SOMEONE-ELSE" + bytes(48))[:48]
        elif k == 2:
            p32(img, o + 8, r.choice([0, s + 1, 1 << 31]))
        else:
            p32(img, o + 12, r.choice([0, 2, 0xFFFFFFFF]))
        what = f"device table sector {s}: field {k}"
    elif kind in (6, 7, 8):  # record sectors
        if md_sectors == 0 or md_start + md_sectors > maxsec:
            what = "records (none in the image)"
        else:
            s = md_start + r.randrange(min(md_sectors, maxsec - md_start))
            o = s * 512
            i = r.randrange(63)
            ro = o + 8 + 8 * i
            rec = struct.unpack_from("<Q", img, ro)[0]
            k = r.randrange(6)
            if k == 0:
                rec = (rec & ~((1 << 48) - 1)) | r.choice([(1 << 48) - 1, 1 << 40, nr_blocks * 1000])
            elif k == 1:
                rec = (rec & ~(0xFF << 48)) | (r.choice([1, 15, 16, 255]) << 48)
            elif k == 2:
                rec |= r.choice([1 << 59, 1 << 63, 0xF8 << 56])
            elif k == 3:
                # a plausible record (valid, dirty, some block): with
                # its crc recomputed it would be a lie no loader can
                # see through, so its crc stays stale
                rec = (1 << 56) | (1 << 57) | r.randrange(1 << 16)
                fix = False
            elif k == 4:  # a duplicate of another valid record of the sector
                others = [struct.unpack_from("<Q", img, o + 8 + 8 * j)[0] for j in range(63)]
                others = [x for x in others if x & (1 << 56)]
                if others:
                    rec = r.choice(others)
            else:
                p32(img, o + 4, r.choice([0, s + 1, 1 << 31]))
            struct.pack_into("<Q", img, ro, rec)
            what = f"record sector {s} entry {i}: kind {k}"
    elif kind == 9:       # truncated: zeroes from a point on
        cut = r.randrange(0, min(len(img), (md_start + md_sectors) * 512) or 512)
        img[cut:] = bytes(len(img) - cut)
        fix = False
        what = f"truncated at byte {cut}"
    elif kind == 10:      # foreign sectors: random, or another structure
        n = r.randint(1, 4)
        for _ in range(n):
            t = r.randrange(min(maxsec, md_start + md_sectors + 1))
            if r.random() < 0.5:
                img[t * 512:(t + 1) * 512] = bytes(r.getrandbits(8) for _ in range(512))
            else:
                f = r.choice([SB, SB2, DEVTAB, md_start])
                img[t * 512:(t + 1) * 512] = img[f * 512:(f + 1) * 512]
        fix = False
        what = f"{n} foreign sectors"
    else:                 # both superblocks: the older copy wins with a lie
        other = SB2 if cur == SB else SB
        p64(img, other * 512 + 64, max(seqs) + 1)
        flip(r, img, other * 512 + 16, other * 512 + 92, 1)
        engine_fix(img, other, nonce)
        what = "the other superblock copy newer, with a changed field"
    if fix and kind not in (9, 10, 11):
        engine_fix(img, s, nonce)
    return what + (" (crc fixed)" if fix and kind not in (9, 10, 11) else "")


def main():
    if sys.argv[1] == "conf-v1":  # conf-v1 TABLE OUT
        img = bytearray(open(sys.argv[2], "rb").read())
        n = conf_to_v1(img)
        open(sys.argv[3], "wb").write(img)
        print(f"{n} conf blobs rewritten as version 1")
        return
    if sys.argv[1] == "batch":   # batch KIND PRISTINE OUTDIR SEED...
        kind, src, out = sys.argv[2], sys.argv[3], sys.argv[4]
        pristine = open(src, "rb").read()
        for seed in map(int, sys.argv[5:]):
            r = random.Random(seed)
            img = bytearray(pristine)
            what = mutate_table(img, r) if kind == "table" else mutate_engine(img, r)
            open(f"{out}/{seed}.img", "wb").write(img)
            print(seed, what, flush=True)
        return
    kind, src, dst, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    r = random.Random(seed)
    img = bytearray(open(src, "rb").read())
    what = mutate_table(img, r) if kind == "table" else mutate_engine(img, r)
    open(dst, "wb").write(img)
    print(what)


if __name__ == "__main__":
    main()
