#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seeded random blkparse trace for vcache-sim tests: reads, writes with
FUA / pre-flush, discards, empty flushes, several devices and submitters,
aligned or not.

usage: randtrace.py SEED N UNALIGNED DISCARDS DEVS FLUSHES IOPS OUT
"""
import random, sys
seed, n, unaligned, discards, devs, flushes, rate = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
random.seed(seed)
out = sys.argv[8]
with open(out, "w") as f:
    seq = 0; t = 0.0
    for i in range(n):
        t += random.expovariate(rate)
        dev = random.choice(["8,0", "8,16", "8,32"][:devs])
        pid = random.randint(100, 105)
        r = random.random()
        if r < 0.45: rw = random.choice(["R", "RA", "RS"])
        elif r < 0.85: rw = random.choice(["W", "WS", "WFS", "FWS"]) if flushes else "W"
        elif r < 0.95: rw = "D" if discards else "R"
        else: rw = "FN" if flushes else "W"
        seq += 1
        if rw == "FN":
            f.write(f"{dev} 0 {seq} {t:.9f} {pid} Q {rw} [p]\n"); continue
        if unaligned:
            sector = random.randrange(0, 20000)
            nn = random.choice([1, 7, 8, 8, 16, 64, 256])
        else:
            sector = random.randrange(0, 2500) * 8
            nn = 8 * random.choice([1, 1, 1, 2, 4, 16])
        f.write(f"{dev} 0 {seq} {t:.9f} {pid} Q {rw} {sector} + {nn} [p]\n")
