#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the bench-engine table from vcache-sim --json output and callgrind."""
import argparse
import json
import os
import re
import sys

TRACES = [("zipf_0.9", "zipf 0.9"), ("zipf_1.1", "zipf 1.1"),
          ("zipf_1.2", "zipf 1.2"), ("pareto_0.9", "pareto 0.9")]


def pct(h, a):
    return 100.0 * h / a if a else 0.0


def callgrind_ir(path):
    """Instructions collected in the file (totals/summary line)."""
    with open(path) as f:
        for line in f:
            m = re.match(r"^(?:totals|summary):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise ValueError(f"{path}: no totals line")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--blocks", type=int, required=True)
    ap.add_argument("--requests", type=int, required=True)
    ap.add_argument("--hits", type=int, required=True)
    ap.add_argument("--cache-bytes", type=int, required=True)
    a = ap.parse_args()

    print(f"vcache engine benchmark: {a.requests} requests of 4 KiB "
          f"(80% reads, seed 1) over {a.blocks} blocks "
          f"({a.blocks * 4096 >> 20} MiB of data);")
    print(f"cache {a.cache_bytes >> 20} MiB = 10% of the data, write-back (wb) and "
          "write-through (wt), "
          "engine defaults (seq bypass, cleaning)")
    print()
    hdr = (f"{'trace':<11} {'policy':<10} {'mode':<4} {'hit%':>6} "
           f"{'read%':>6} {'OPT%':>6} {'OPT-b%':>6} {'hit-OPT':>7} "
           f"{'byp%':>6} {'flashW/IO':>9} {'dataW/IO':>8} {'bkIO/IO':>7}")
    print(hdr)
    print("-" * len(hdr))
    targets = []
    for key, label in TRACES:
        path = os.path.join(a.out, key + ".iolog.json")
        with open(path) as f:
            d = json.load(f)
        size = d["sizes"][0]
        o, ob = size["opt"], size["opt_bypass"]
        opt = pct(o["read_hits"] + o["write_hits"],
                  o["read_accesses"] + o["write_accesses"])
        optb = pct(ob["read_hits"] + ob["write_hits"],
                   ob["read_accesses"] + ob["write_accesses"])
        for r in d["runs"]:
            hit = pct(r["read_hit_blocks"] + r["write_hit_blocks"],
                      r["read_blocks"] + r["write_blocks"])
            rd = pct(r["read_hit_blocks"], r["read_blocks"])
            ios = r["host_ios"]
            fw = r["flash_bytes_written"] / 4096 / ios
            dw = (r["flash_bytes_written"] -
                  r["flash_meta_bytes_written"]) / 4096 / ios
            bk = r["backing_ios"] / ios
            byp = pct(r["bypassed_blocks"],
                      r["read_blocks"] + r["write_blocks"])
            print(f"{label:<11} {r['policy']:<10} {r['mode']:<4} "
                  f"{hit:6.2f} {rd:6.2f} "
                  f"{opt:6.2f} {optb:6.2f} {hit - opt:+7.2f} {byp:6.2f} "
                  f"{fw:9.3f} {dw:8.3f} {bk:7.3f}")
            bench_mem = r["meta_millibytes_per_block"], r["cache_blocks"]
            if key == "zipf_0.9" and r["policy"] == "lru+admit":
                targets.append(("LRU+admission within 10 points of OPT "
                                f"on zipf 0.9 ({r['mode']})",
                                f"{hit:.2f}% vs OPT {opt:.2f}% "
                                f"(gap {opt - hit:.2f})",
                                opt - hit <= 10.0))
        for ref, name in (("ref_lru", "LRU"), ("ref_lru_2hit", "2hit"),
                          ("ref_lru_tinylfu", "TinyLFU")):
            m = size.get(ref)
            if not m:
                continue
            hit = pct(m["read_hits"] + m["write_hits"],
                      m["read_accesses"] + m["write_accesses"])
            rd = pct(m["read_hits"], m["read_accesses"])
            print(f"{label:<11} {'model ' + name:<15} {hit:6.2f} {rd:6.2f} "
                  f"{opt:6.2f} {optb:6.2f} {hit - opt:+7.2f}")
        print()
    print("model LRU / 2hit / TinyLFU: independent reference caches (not the "
          "engine):\nLRU, every miss admitted; LRU admitting a miss (read or "
          "write) on its 2nd miss\n(exact ghost list); LRU admitting a miss "
          "accessed more often than the victim.")
    print("hit%: block hits / block accesses (reads + writes); read%: reads "
          "only;\nOPT%: exact Belady on the same trace, every miss admitted "
          "(writes allocate);\nOPT-b%: Belady that may also decline to "
          "admit; hit-OPT: hit% - OPT%;\nbyp%: block accesses the engine "
          "sent around the cache (admission, no clean victim...);\n"
          "flashW/IO: 4 KiB flash writes "
          "(data + metadata) per host I/O, dataW/IO: data only;\n"
          "bkIO/IO: backing-device I/Os per host I/O")
    print()

    for p in ("lru", "fifo"):
        cg = os.path.join(a.out, f"callgrind.{p}.out")
        if os.path.exists(cg):
            ir = callgrind_ir(cg)
            print(f"CPU per 4 KiB read hit ({p.upper()}): "
                  f"{ir / a.hits:.0f} instructions "
                  f"(callgrind, {a.hits} hits, whole engine path incl. "
                  "completion)")
        else:
            print(f"CPU per 4 KiB read hit ({p}): valgrind not installed")

    mem = []
    with open(os.path.join(a.out, "mem.txt")) as f:
        for line in f:
            m = re.match(r"mem blocks (\d+) millibytes_per_block (\d+)",
                         line)
            if m:
                mem.append((int(m.group(1)), int(m.group(2))))
    print("metadata RAM per cache block: " + ", ".join(
        f"{mb / 1000:.3f} B @ {fmt_blocks(n)}" for n, mb in mem))
    print(f"metadata RAM per cache block at the bench's cache size: "
          f"{bench_mem[0] / 1000:.3f} B @ {fmt_blocks(bench_mem[1])}")
    big = [mb for n, mb in mem if n * 4096 >= 1 << 30]
    worst = max(big) / 1000 if big else float("inf")
    allw = max(mb for _, mb in mem) / 1000 if mem else float("inf")
    targets.append(("metadata <= 16 B per block (caches >= 1 GiB)",
                    f"max {worst:.3f} B", worst <= 16.0))
    targets.append(("metadata <= 16 B per block (any size, 64 MiB up)",
                    f"max {allw:.3f} B", allw <= 16.0))
    print()
    for name, fig, ok in targets:
        print(f"target: {name}: {fig}: {'MET' if ok else 'MISSED'}")
    return 0


def fmt_blocks(n):
    b = n * 4096
    for unit in ("K", "M", "G", "T", "P"):
        b /= 1024
        if b < 1024:
            return f"{n} blocks ({b:.0f}{unit}iB)"
    return f"{n} blocks"


if __name__ == "__main__":
    sys.exit(main())
