#!/usr/bin/env python3
"""Canned readings for vcache-monitor's dry runs: reading K of cache "db"
(and "logs") in the format of `vcache-config list --json` plus "latency".

    fixture.py OUTDIR N   writes OUTDIR/r0.json .. r{N-1}.json

Reading k is k+1 windows of 10 s: every counter grows by the same step
each window, except read hits, which grow by 100 * (k+1) (so the rate
moves from one reading to the next in --watch)."""
import json
import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parents[3]
HDR = (TOP / "include/vcache/vcache_nl.h").read_text()
STATS = re.findall(
    r"X\([A-Z_0-9]+, ([a-z_0-9]+)\)",
    HDR[HDR.index("#define VCACHE_STATS("):HDR.index("#define VCACHE_S_ENUM_")])


def reading(k):
    w = k + 1
    hits = sum(100 * (j + 1) for j in range(w))
    st = {n: 0 for n in STATS}
    st.update(reads=hits + 10 * w, read_hits=hits, read_misses=10 * w,
              read_bytes=(hits + 10 * w) * 4096, read_hit_bytes=hits * 4096,
              read_miss_bytes=10 * w * 4096, writes=20 * w, write_hits=15 * w,
              write_misses=5 * w, write_bytes=20 * w * 4096,
              write_hit_bytes=15 * w * 4096, write_miss_bytes=5 * w * 4096,
              bypass_seq=3 * w, bypass_seq_bytes=3 * w * 65536,
              wb_blocks=4 * w, wb_bytes=4 * w * 4096, wb_ios=w,
              dirty_bytes=1 << 20, dirty_blocks=256, elapsed_ns=w * 10**10,
              flash_bytes_written=7 * w * 4096, md_writes=9 * w,
              oldest_dirty_age_ns=3 * 10**9, backing_write_errors=k,
              cache_size=0)
    st.pop("cache_size")
    dev = {n: st[n] for n in st}
    lat = {
        "read_hit": {"count": hits, "sum_ns": hits * 80000, "buckets": {"50": hits}},
        "read_miss": {"count": 10 * w, "sum_ns": 10 * w * 6000000,
                      "buckets": {"100": 9 * w, "150": w}},
        "writeback": {"count": w, "sum_ns": w * 9000000, "buckets": {"110": w}},
    }
    db = {"name": "db", "state": "running", "mode": "wb", "policy": "lru",
          "cache_disk": "vflash0", "cache_size_bytes": 1 << 30, "block_size_bytes": 4096,
          "stats": st, "latency": lat,
          "flush": {"running": k % 2 == 1, "target_blocks": 1000,
                    "done_blocks": 100 * k, "remaining_blocks": 1000 - 100 * k,
                    "last_result_errno": 0, "seq": 1},
          "backing": [{"devname": "db", "disk": "vcache0", "backing_disk": "vdb",
                       "id": 0, "state": "attached", "size_bytes": 1 << 34,
                       "dirty_bytes": 1 << 20, "stats": dev}]}
    logs = {"name": "logs-2", "state": "waiting", "mode": "wt", "policy": "fifo",
            "cache_disk": "nvme0n1p3", "cache_size_bytes": 1 << 28, "block_size_bytes": 4096,
            "stats": {n: 0 for n in STATS},
            "flush": {"running": False, "target_blocks": 0, "done_blocks": 0,
                      "remaining_blocks": 0, "last_result_errno": 0, "seq": 0},
            "backing": [{"devname": "logs-2", "disk": "vcache1", "id": 0,
                         "state": "waiting", "size_bytes": 0, "dirty_bytes": 0,
                         "stats": {n: 0 for n in STATS}}]}
    return {"caches": [db, logs]}


def main():
    out, n = Path(sys.argv[1]), int(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        (out / f"r{k}.json").write_text(json.dumps(reading(k)))


if __name__ == "__main__":
    main()
