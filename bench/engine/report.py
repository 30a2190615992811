#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the bench-engine table from vcache-sim --json output and callgrind."""
import argparse
import json
import os
import re
import sys

TRACES = [("zipf_0.9", "zipf 0.9"), ("zipf_1.1", "zipf 1.1"),
          ("zipf_1.2", "zipf 1.2"), ("pareto_0.9", "pareto 0.9"),
          ("scan_0.9", "scan 0.9"), ("shift_0.9", "shift 0.9")]


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
    hdr = (f"{'trace':<11} {'policy':<12} {'mode':<4} {'hit%':>6} "
           f"{'read%':>6} {'OPT%':>6} {'ORCL%':>6} {'hit-ORCL':>8} "
           f"{'byp%':>6} {'flashW/IO':>9} {'dataW/IO':>8} {'bkIO/IO':>7}")
    print(hdr)
    print("-" * len(hdr))
    targets = []
    new_pols = ("s3fifo", "s3fifo+admit", "tinylfu")
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
        orc = size["oracle_lfu"]
        oracle = pct(orc["read_hits"] + orc["write_hits"],
                     orc["read_accesses"] + orc["write_accesses"])
        hits = {}
        flashw = {}
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
            hits[(r["policy"], r["mode"])] = hit
            flashw[(r["policy"], r["mode"])] = (fw, dw)
            print(f"{label:<11} {r['policy']:<12} {r['mode']:<4} "
                  f"{hit:6.2f} {rd:6.2f} "
                  f"{opt:6.2f} {oracle:6.2f} {hit - oracle:+8.2f} {byp:6.2f} "
                  f"{fw:9.3f} {dw:8.3f} {bk:7.3f}")
            bench_mem = r["meta_millibytes_per_block"], r["cache_blocks"]
        print(f"{label:<11} {'OPT':<12} {'':<4} {opt:6.2f}   (OPT-b, "
              f"may decline to admit: {optb:.2f})")
        print(f"{label:<11} {'oracle LFU':<12} {'':<4} {oracle:6.2f}")
        for mode in ("wb", "wt"):
            if key.startswith("zipf") or key.startswith("pareto"):
                for p in new_pols:
                    if (p, mode) not in hits:
                        continue
                    h = hits[(p, mode)]
                    targets.append((f"{p} within 1.5 points of the oracle "
                                    f"on {label} ({mode})",
                                    f"{h:.2f}% vs oracle {oracle:.2f}% "
                                    f"(gap {oracle - h:.2f})",
                                    oracle - h <= 1.5))
            else:
                for p in new_pols:
                    if (p, mode) not in hits:
                        continue
                    h = hits[(p, mode)]
                    lru = hits.get(("lru", mode), 0)
                    adm = hits.get(("lru+admit", mode), 0)
                    targets.append((f"{p} ahead of LRU and LRU+admission "
                                    f"on {label} ({mode})",
                                    f"{h:.2f}% vs LRU {lru:.2f}%, "
                                    f"LRU+admission {adm:.2f}%",
                                    h > lru and h > adm))
            if key == "zipf_0.9":
                lw = flashw.get(("lru", mode))
                for p in new_pols:
                    if (p, mode) not in flashw or not lw:
                        continue
                    fw, dw = flashw[(p, mode)]
                    targets.append((f"{p} >= 5x fewer flash writes per host "
                                    f"I/O than LRU on {label} ({mode})",
                                    f"{fw:.3f} vs LRU {lw[0]:.3f} "
                                    f"({lw[0] / fw:.2f}x; data only "
                                    f"{dw:.3f} vs {lw[1]:.3f}, "
                                    f"{lw[1] / dw:.2f}x)",
                                    lw[0] / fw >= 5.0))
        for ref, name in (("ref_lru", "LRU"), ("ref_lru_2hit", "2hit"),
                          ("ref_lru_tinylfu", "TinyLFU"),
                          ("ref_lfu", "exact LFU")):
            m = size.get(ref)
            if not m:
                continue
            hit = pct(m["read_hits"] + m["write_hits"],
                      m["read_accesses"] + m["write_accesses"])
            rd = pct(m["read_hits"], m["read_accesses"])
            print(f"{label:<11} {'model ' + name:<17} {hit:6.2f} {rd:6.2f} "
                  f"{opt:6.2f} {oracle:6.2f} {hit - oracle:+8.2f}")
        print()
    print("model LRU / 2hit / TinyLFU / exact LFU: independent reference "
          "caches (not the\nengine): LRU, every miss admitted; LRU admitting "
          "a miss (read or write) on its\n2nd miss (exact ghost list); LRU "
          "admitting a miss accessed more often than the\nvictim; LFU with "
          "exact counts of the whole history, unlimited memory (what\n"
          "frequency can reach online).")
    print("hit%: block hits / block accesses (reads + writes); read%: reads "
          "only;\nOPT%: exact Belady on the same trace, every miss admitted "
          "(writes allocate);\nORCL%: static oracle LFU (the most "
          "accessed blocks of the whole trace, cached\nfrom the start, "
          "first access a miss); hit-ORCL: hit% - ORCL%;\nbyp%: block accesses the engine "
          "sent around the cache (admission, no clean victim...);\n"
          "flashW/IO: 4 KiB flash writes "
          "(data + metadata) per host I/O, dataW/IO: data only;\n"
          "bkIO/IO: backing-device I/Os per host I/O")
    print()

    cpu = {}
    for p in ("lru", "fifo", "s3fifo", "tinylfu"):
        cg = os.path.join(a.out, f"callgrind.{p}.out")
        if os.path.exists(cg):
            ir = callgrind_ir(cg)
            cpu[p] = ir / a.hits
            print(f"CPU per 4 KiB read hit ({p.upper()}): "
                  f"{ir / a.hits:.0f} instructions "
                  f"(callgrind, {a.hits} hits, whole engine path incl. "
                  "completion)")
        else:
            print(f"CPU per 4 KiB read hit ({p}): valgrind not installed")
    for p in ("s3fifo", "tinylfu"):
        if p in cpu and "lru" in cpu:
            targets.append((f"CPU per read hit of {p} no worse than LRU's",
                            f"{cpu[p]:.0f} vs {cpu['lru']:.0f} instructions",
                            cpu[p] <= cpu["lru"]))

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
