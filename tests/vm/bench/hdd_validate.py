#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest part of tests/vm/hdd-validate: fio on the simulated HDD
(--hdd-model seek) against published 7200 rpm figures.  VC_VAL_PARTS
chooses the parts (reads,sweep), VC_VAL_RUNTIME the seconds per run.
Prints one line per figure and a JSON line "HDDVAL {...}"."""
import json
import os
import subprocess
import sys
import time

HDD = os.environ.get("VC_HDD", "")
RT = int(os.environ.get("VC_VAL_RUNTIME", "20"))
PARTS = os.environ.get("VC_VAL_PARTS", "reads,sweep").split(",")


def model_stats():
    """The disk model's statistics (the run directory is shared)."""
    try:
        with open(os.path.join(os.environ["VC_RUN_DIR"],
                               "hdd-stats.json")) as f:
            return json.load(f)
    except (OSError, ValueError, KeyError):
        return None


def fio(name, *opts, runtime=RT):
    cmd = ["fio", f"--name={name}", f"--filename={HDD}", "--direct=1",
           "--ioengine=libaio", "--time_based", f"--runtime={runtime}",
           "--output-format=json", "--randrepeat=0", *opts]
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=runtime + 600)
    wall = time.monotonic() - t
    if r.returncode:
        sys.exit(f"fio {name} failed: {r.stderr.strip()}")
    j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    rd, wr = j["read"], j["write"]
    return {"read_iops": rd["iops"], "write_iops": wr["iops"],
            "read_lat_us": rd["clat_ns"]["mean"] / 1000,
            "read_bw": rd["bw_bytes"], "ios": rd["total_ios"] + wr["total_ios"],
            "wall_s": wall}


res = {}
if "reads" in PARTS:
    time.sleep(1.2)
    m0 = model_stats()
    r = fio("rr1", "--rw=randread", "--bs=4k", "--iodepth=1")
    time.sleep(1.2)
    m1 = model_stats()
    res["randread_qd1_iops"] = r["read_iops"]
    print(f"4K random read QD1:  {r['read_iops']:6.0f} IOPS (published "
          "7200 rpm: 80-120)", flush=True)
    if m0 and m1 and m1["media_ops"] > m0["media_ops"]:
        svc = ((m1["busy_ns"] - m0["busy_ns"]) /
               (m1["media_ops"] - m0["media_ops"]) / 1000)
        res["qd1_model_service_us"] = svc
        res["qd1_fio_latency_us"] = r["read_lat_us"]
        print(f"  the model's service time {svc / 1000:.2f} ms per read, "
              f"fio saw {r['read_lat_us'] / 1000:.2f} ms: the VM path "
              f"(TCG guest, virtio, QEMU NBD client, nbdkit) adds "
              f"{(r['read_lat_us'] - svc) / 1000:.2f} ms", flush=True)
    r = fio("rr32", "--rw=randread", "--bs=4k", "--iodepth=32")
    res["randread_qd32_iops"] = r["read_iops"]
    print(f"4K random read QD32: {r['read_iops']:6.0f} IOPS (NCQ: 150-250)",
          flush=True)
    r = fio("seq", "--rw=read", "--bs=1M", "--iodepth=4", runtime=10)
    res["seqread_bps"] = r["read_bw"]
    print(f"sequential read 1M QD4: {r['read_bw'] / 1e6:6.0f} MB/s "
          "(150-200)", flush=True)
if "sweep" in PARTS:
    # the same set of blocks (one 4 KiB block per 64 KiB over the disk),
    # in LBA order and in random order, QD16, ended by a flush (fio
    # end_fsync); IOPS = writes / wall time including the flush
    out = {}
    for name, rw in (("sorted", ["--rw=write:60k"]),
                     ("random", ["--rw=randwrite", "--blockalign=64k",
                                 "--norandommap"])):
        r = fio(name, *rw, "--bs=4k", "--iodepth=16", "--end_fsync=1")
        out[name] = r["ios"] / r["wall_s"]
        print(f"4K write sweep, {name:6} order, QD16: {out[name]:7.0f} "
              f"IOPS ({r['ios']} writes in {r['wall_s']:.1f} s with the "
              "flush)", flush=True)
    res["sweep_sorted_iops"] = out["sorted"]
    res["sweep_random_iops"] = out["random"]
    res["sweep_ratio"] = out["sorted"] / out["random"]
    print(f"sorted / random: {res['sweep_ratio']:.1f}x (>= 10x)", flush=True)
print("HDDVAL " + json.dumps(res), flush=True)
