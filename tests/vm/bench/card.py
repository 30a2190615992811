#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest part of tests/vm/bench-card: fio 4K randread/randwrite at QD1 and
QD32 on the vcache card, null_blk and a plain virtio-blk disk, side by side.
Prints a table and writes results.json to the run directory."""
import json
import os
import subprocess
import sys

RUNTIME = int(os.environ.get("VC_BENCH_RUNTIME", "10"))
SIZE = os.environ.get("VC_BENCH_SIZE", "256M")
RUN_DIR = os.environ["VC_RUN_DIR"]


def fio(dev, rw, qd, runtime=RUNTIME):
    cmd = ["fio", "--name=b", f"--filename={dev}", f"--rw={rw}", "--bs=4k",
           "--direct=1", "--ioengine=libaio", f"--iodepth={qd}",
           f"--size={SIZE}", "--time_based", f"--runtime={runtime}",
           "--ramp_time=1", "--randrepeat=0", "--norandommap",
           "--output-format=json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"fio failed on {dev}: {r.stderr}")
    j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    d = j["read" if "read" in rw else "write"]
    pct = d["clat_ns"].get("percentile", {})
    p99 = pct.get("99.000000", 0) / 1000.0
    return {"iops": d["iops"], "p99_us": p99,
            "mean_us": d["clat_ns"]["mean"] / 1000.0}


def prefill(dev):
    subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write",
                    "--bs=1M", "--direct=1", "--ioengine=libaio",
                    "--iodepth=8", f"--size={SIZE}"],
                   check=True, capture_output=True)


def main():
    card = "/dev/vflash0"
    virtio = os.environ.get("VC_BENCH_DISK")
    if not os.path.exists(card) or not virtio:
        sys.exit(f"bench: need {card} and the bench virtio disk")
    subprocess.run(["modprobe", "null_blk", "nr_devices=1", "queue_mode=2",
                    "gb=1", "bs=512", "submit_queues=2", "irqmode=1"],
                   check=True)
    devs = [("vcache card", card), ("null_blk", "/dev/nullb0"),
            ("virtio-blk", virtio)]
    tests = [("randread", 1), ("randread", 32), ("randwrite", 1),
             ("randwrite", 32)]
    res = {}
    for name, dev in devs:
        if name != "null_blk":
            prefill(dev)
        for rw, qd in tests:
            r = fio(dev, rw, qd)
            res.setdefault(name, {})[f"{rw}-qd{qd}"] = r
            print(f"# {name:12} {rw:9} QD{qd:<2}: {r['iops']:9.0f} IOPS, "
                  f"p99 {r['p99_us']:8.0f} us", flush=True)
    with open(os.path.join(RUN_DIR, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    cols = [f"{rw} QD{qd}" for rw, qd in tests]
    print()
    print(f"4 KiB random I/O, fio libaio direct, {RUNTIME} s each, "
          f"IOPS / p99 latency (us)")
    print(f"{'device':14}" + "".join(f"{c:>22}" for c in cols))
    for name, _ in devs:
        row = f"{name:14}"
        for rw, qd in tests:
            r = res[name][f"{rw}-qd{qd}"]
            row += f"{r['iops']:>12.0f} /{r['p99_us']:>7.0f}"
        print(row)
    c = res["vcache card"]["randread-qd32"]["iops"]
    v = res["virtio-blk"]["randread-qd32"]["iops"]
    verdict = "met" if c >= v else "MISSED"
    print(f"\ntarget (card QD32 randread >= virtio-blk): {verdict} "
          f"({c:.0f} vs {v:.0f} IOPS, {100.0 * c / v:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
