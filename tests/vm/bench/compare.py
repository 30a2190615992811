#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest part of `make bench` (bench/run): one configuration per boot.

VC_BM_CACHE  vcache | vcache-fp30 | vcache-thr | bcache | dmcache | dmwc |
             hdd | vcache@KEY=VALUE+...  (vcache: defaults, write-back;
             -fp30: 30 s flush period; -thr: no flush period,
             threshold-only cleaning; @: the defaults, then
             `vcache-config set` of these settings)
VC_BM_DISK   throttled | seek (for the record; the runner chose the disk)
VC_BM_CSIZE  cache size in bytes (the same card region for every cache)
VC_BM_WARM, VC_BM_MEAS, VC_BM_DRAIN  seconds: warm-up (discarded),
             measured window, drain limit
VC_BM_HIT    1: the hit path first (4K randread QD1/QD32, every block
             cached, alternated with the raw card)
VC_BM_HITRT  seconds per hit-path / ceiling run
VC_BM_WORK   workloads, comma-separated: fio (hit path, OLTP mix, drain,
             ceilings) and/or pgbench (default: fio)
VC_BM_PG_SCALES   pgbench scale factors "SMALL,LARGE" (database smaller
             than the cache, three times larger)
VC_BM_PG_WARM, VC_BM_PG_RUN, VC_BM_PG_REPS  pgbench warm-up (discarded),
             seconds per measured run, number of measured runs
VC_BM_PG_CLIENTS  pgbench clients (-c; -j 2)
VC_BM_PG_MEM  memory.max of the postgres server's cgroup (bytes): its
             processes and the page cache of its files, so that the
             database does not sit in the guest's RAM
Every fio JSON and iops log goes to $VC_RUN_DIR/out/, the summary to
$VC_RUN_DIR/out/result.json.  A step that breaks is recorded in "errors"
and the rest carries on; the exit status is 1 if anything broke."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

CACHE = os.environ.get("VC_BM_CACHE", "vcache")
DISK = os.environ.get("VC_BM_DISK", "?")
CSIZE = int(os.environ.get("VC_BM_CSIZE", str(128 << 20)))
WARM = int(os.environ.get("VC_BM_WARM", "300"))
MEAS = int(os.environ.get("VC_BM_MEAS", "300"))
DRAIN = int(os.environ.get("VC_BM_DRAIN", "600"))
HIT = os.environ.get("VC_BM_HIT", "0") == "1"
HITRT = int(os.environ.get("VC_BM_HITRT", "10"))
HITREPS = int(os.environ.get("VC_BM_HITREPS", "2"))
RUN = os.environ["VC_RUN_DIR"]
OUT = os.path.join(RUN, "out")
CARD = "/dev/vflash0"
HDD = os.environ.get("VC_HDD", "")
DATA = 10 * CSIZE
HIT_AREA = 32 << 20
RAW_OFF = 768 << 20         # raw card test area, beyond every cache region
META = 16 << 20             # dm-cache metadata, right after the region
NAME = "bench"
WORK = [w for w in os.environ.get("VC_BM_WORK", "fio").split(",") if w]
PG_SCALES = dict(zip(("small", "large"), (int(x) for x in os.environ.get(
    "VC_BM_PG_SCALES", "4,26").split(","))))
PG_WARM = int(os.environ.get("VC_BM_PG_WARM", "60"))
PG_RUN = int(os.environ.get("VC_BM_PG_RUN", "30"))
PG_REPS = int(os.environ.get("VC_BM_PG_REPS", "3"))
PG_CLIENTS = int(os.environ.get("VC_BM_PG_CLIENTS", "8"))
PG_MEM = int(os.environ.get("VC_BM_PG_MEM", str(128 << 20)))
res = {"cache": CACHE, "disk": DISK, "cache_bytes": CSIZE,
       "data_bytes": DATA, "warm_s": WARM, "meas_s": MEAS,
       "drain_limit_s": DRAIN, "workloads": WORK, "errors": []}
os.makedirs(OUT, exist_ok=True)


def log(msg):
    print(f"# [{CACHE}/{DISK}] {msg}", flush=True)


def sh(*cmd, check=True, timeout=900):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: "
                           f"{(r.stderr or r.stdout).strip()}")
    return r


def sysw(path, val):
    with open(path, "w") as f:
        f.write(str(val))


def sysr(path):
    with open(path) as f:
        return f.read().strip()


def wait_for(path, secs=30):
    for _ in range(secs * 10):
        if os.path.exists(path):
            return True
        time.sleep(0.1)
    return False


def fio(tag, dev, *opts, runtime=None, logs=False):
    """fio, JSON kept in OUT/tag.json; returns the job's JSON."""
    cmd = ["fio", f"--name={tag}", f"--filename={dev}", "--direct=1",
           "--ioengine=libaio", "--output-format=json",
           f"--output={OUT}/{tag}.json", "--randrepeat=0",
           "--percentile_list=50:99:99.9", *opts]
    if runtime:
        cmd += ["--time_based", f"--runtime={runtime}"]
    if logs:
        cmd += [f"--write_iops_log={OUT}/{tag}", "--log_avg_msec=10000"]
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=(runtime or 0) + 900)
    if r.returncode:
        raise RuntimeError(f"fio {tag} on {dev}: {r.stderr.strip()[-300:]}")
    with open(f"{OUT}/{tag}.json") as f:
        txt = f.read()
    return json.loads(txt[txt.index("{"):])["jobs"][0]


def lat(d):
    p = d["clat_ns"].get("percentile", {})
    return {k: p.get(v, 0) / 1000.0 for k, v in
            (("p50_us", "50.000000"), ("p99_us", "99.000000"),
             ("p999_us", "99.900000"))}


def disk_stat(dev):
    """(reads, writes, sectors written) of a whole disk."""
    name = os.path.basename(os.path.realpath(dev))
    f = sysr(f"/sys/block/{name}/stat").split()
    return int(f[0]), int(f[4]), int(f[6])


def card_bytes_written():
    r = sh("vcfw", "stats", "--json", check=False)
    try:
        return json.loads(r.stdout[r.stdout.index("{"):])["bytes_written"]
    except (ValueError, KeyError):
        return None


# ------------------------------------------------------------ the caches
def linear(name, dev, off, size):
    sh("dmsetup", "create", name, "--noudevsync", "--table",
       f"0 {size // 512} linear {dev} {off // 512}")
    p = f"/dev/mapper/{name}"
    if not wait_for(p, 5):
        sh("dmsetup", "mknodes", name, check=False)
    return p


def hdd_sectors():
    return int(sh("blockdev", "--getsz", HDD).stdout)


def setup():
    """Create the cache; returns the device to benchmark."""
    if CACHE.startswith("vcache"):
        cmd = ["vcache-config", "create", NAME, "--cache", CARD, "--size",
               str(CSIZE), "--backing", HDD, "--mode", "wb"]
        if CACHE == "vcache-fp30":
            cmd += ["--flush-period", "30"]
        elif CACHE == "vcache-thr":
            cmd += ["--flush-period", "off"]
        sh(*cmd)
        if CACHE.startswith("vcache@"):
            # a variant: the defaults, then these settings (bench/run)
            sh("vcache-config", "set", NAME,
               *CACHE[len("vcache@"):].split("+"))
        sh("udevadm", "settle", check=False)
        dev = f"/dev/vcache/{NAME}"
        if not wait_for(dev, 10):
            raise RuntimeError(f"{dev} did not appear")
        res["settings"] = vc_show().get("params", {})
        return dev
    if CACHE == "hdd":
        return HDD
    region = linear("vcregion", CARD, 0, CSIZE)
    if CACHE == "bcache":
        sh("modprobe", "bcache", check=False)
        # 64 KiB buckets: bcache wants >= 1024 of them (the default
        # 512 KiB gives 256 on a 128 MiB region: "nbuckets is too small")
        sh("make-bcache", "--block", "4k", "--bucket", "64k",
           "--wipe-bcache", "--writeback", "-C", region, "-B", HDD)
        sh("udevadm", "settle", check=False)
        for dev in (region, HDD):
            try:
                sysw("/sys/fs/bcache/register", dev)
            except OSError:
                pass
        if not wait_for("/sys/block/bcache0/bcache/cache", 30):
            raise RuntimeError("bcache0 did not attach to its cache set")
        b = "/sys/block/bcache0/bcache"
        cset = os.path.realpath(f"{b}/cache")
        sysw(f"{b}/cache_mode", "writeback")
        sysw(f"{b}/sequential_cutoff", 0)
        sysw(f"{cset}/congested_read_threshold_us", 0)
        sysw(f"{cset}/congested_write_threshold_us", 0)
        res["settings"] = {k: sysr(f"{b}/{k}") for k in
                           ("cache_mode", "sequential_cutoff",
                            "writeback_percent", "writeback_delay")}
        return "/dev/bcache0"
    if CACHE == "dmcache":
        meta = linear("vcmeta", CARD, CSIZE, META)
        sh("dd", "if=/dev/zero", f"of={meta}", "bs=1M", "count=1",
           "oflag=direct")
        sh("dmsetup", "create", "vcbench", "--noudevsync", "--table",
           dmcache_table("smq"))
        res["settings"] = {"table": dmcache_table("smq")}
    elif CACHE == "dmwc":
        t = f"0 {hdd_sectors()} writecache s {HDD} {region} 4096 0"
        sh("dmsetup", "create", "vcbench", "--noudevsync", "--table", t)
        res["settings"] = {"table": t}
    else:
        raise RuntimeError(f"unknown cache {CACHE}")
    if not wait_for("/dev/mapper/vcbench", 5):
        sh("dmsetup", "mknodes", "vcbench", check=False)
    return "/dev/mapper/vcbench"


def dmcache_table(policy):
    # dm-cache's smallest block is 32 KiB (64 sectors)
    return (f"0 {hdd_sectors()} cache /dev/mapper/vcmeta /dev/mapper/vcregion"
            f" {HDD} 64 1 writeback {policy} 0")


def teardown():
    if CACHE.startswith("vcache"):
        sh("vcache-config", "delete", NAME, "--discard-dirty", check=False)
    for f in (glob.glob("/sys/block/bcache*/bcache/stop") +
              glob.glob("/sys/fs/bcache/*-*/unregister")):
        try:
            sysw(f, 1)
        except OSError:
            pass
    # unregistering a cache set is asynchronous: it holds the region
    # until it is gone (a fresh make-bcache on it got EBUSY)
    for _ in range(300):
        if not glob.glob("/sys/block/bcache*") and \
                not glob.glob("/sys/fs/bcache/*-*"):
            break
        time.sleep(0.2)
    if CACHE == "bcache":
        # bcache's superblocks stay on the region and the HDD: when the
        # next setup creates the region again, udev's bcache rule
        # registers it at once (a cache set holding it), and make-bcache
        # gets EBUSY (the seek run's pgbench, 2026-11-28)
        for dev in ("/dev/mapper/vcregion", HDD):
            if os.path.exists(dev):
                sh("dd", "if=/dev/zero", f"of={dev}", "bs=1M", "count=1",
                   "oflag=direct", check=False)
    for n in ("vcbench", "vcmeta", "vcregion"):
        for _ in range(20):
            if not os.path.exists(f"/dev/mapper/{n}"):
                break
            if sh("dmsetup", "remove", "--noudevsync", n,
                  check=False).returncode == 0:
                break
            time.sleep(0.5)
    sh("udevadm", "settle", check=False)


# ---------------------------------------------------- counters and dirty
def vc_show():
    return json.loads(sh("vcache-config", "show", NAME, "--json").stdout)


def dm_status():
    w = sh("dmsetup", "status", "vcbench").stdout.split()
    return [int(x) if x.isdigit() else x for x in w[3:]]


def counters():
    """Each cache's own hit counters."""
    if CACHE.startswith("vcache"):
        s = vc_show()["stats"]
        return {k: s.get(k, 0) for k in ("reads", "read_hits", "writes",
                                          "write_hits")}
    if CACHE == "bcache":
        b = "/sys/block/bcache0/bcache/stats_total"
        return {k: int(sysr(f"{b}/{k}")) for k in
                ("cache_hits", "cache_misses", "cache_bypass_hits",
                 "cache_bypass_misses")}
    if CACHE == "dmcache":
        s = dm_status()
        return {"read_hits": s[4], "read_misses": s[5], "write_hits": s[6],
                "write_misses": s[7]}
    if CACHE == "dmwc":
        s = dm_status()
        if len(s) >= 10:
            return {"reads": s[4], "read_hits": s[5], "writes": s[6],
                    "write_hits": s[7] + s[8]}
    return {}


def ratios(d):
    """(read hit ratio, write hit ratio) from a counters delta."""
    def r(h, n):
        return round(h / n, 4) if n else None
    if CACHE.startswith("vcache") or CACHE == "dmwc":
        return r(d.get("read_hits", 0), d.get("reads", 0)), \
            r(d.get("write_hits", 0), d.get("writes", 0))
    if CACHE == "dmcache":
        return (r(d["read_hits"], d["read_hits"] + d["read_misses"]),
                r(d["write_hits"], d["write_hits"] + d["write_misses"]))
    if CACHE == "bcache":   # bcache counts reads and writes together
        a = r(d["cache_hits"], d["cache_hits"] + d["cache_misses"] +
              d["cache_bypass_hits"] + d["cache_bypass_misses"])
        return a, a
    return None, None


def parse_size(t):
    m = re.fullmatch(r"([\d.]+)([kKMGT]?)", t.strip())
    if not m:
        return 0
    return int(float(m.group(1)) * {"": 1, "k": 1 << 10, "K": 1 << 10,
                                     "M": 1 << 20, "G": 1 << 30,
                                     "T": 1 << 40}[m.group(2)])


def dirty_bytes():
    if CACHE.startswith("vcache"):
        return vc_show().get("dirty_bytes", 0)
    if CACHE == "bcache":
        return parse_size(sysr("/sys/block/bcache0/bcache/dirty_data"))
    if CACHE == "dmcache":
        return dm_status()[10] * 32768
    if CACHE == "dmwc":
        s = dm_status()     # blocks in use (written back ones are freed
        return (s[1] - s[2]) * 4096   # as write-back completes)
    return 0


# ------------------------------------------------------------- the parts
def ceilings(dev):
    """Raw card and HDD (the hdd configuration)."""
    out = {}
    sh("fio", "--name=fill", f"--filename={CARD}", "--rw=write", "--bs=1M",
       "--direct=1", f"--offset={RAW_OFF}", f"--size={HIT_AREA}")
    for qd in (1, 32):
        j = fio(f"card-randread-qd{qd}", CARD, "--rw=randread", "--bs=4k",
                f"--iodepth={qd}", f"--offset={RAW_OFF}",
                f"--size={HIT_AREA}", "--readonly", runtime=HITRT)
        out[f"card_randread_qd{qd}_iops"] = j["read"]["iops"]
    j = fio("card-randwrite-qd32", CARD, "--rw=randwrite", "--bs=4k",
            "--iodepth=32", f"--offset={RAW_OFF}", f"--size={HIT_AREA}",
            runtime=HITRT)
    out["card_randwrite_qd32_iops"] = j["write"]["iops"]
    for qd in (1, 32):
        j = fio(f"hdd-randread-qd{qd}", HDD, "--rw=randread", "--bs=4k",
                f"--iodepth={qd}", "--readonly", "--norandommap",
                runtime=HITRT)
        out[f"hdd_randread_qd{qd}_iops"] = j["read"]["iops"]
    j = fio("hdd-randwrite-qd16", HDD, "--rw=randwrite", "--bs=4k",
            "--iodepth=16", "--norandommap", runtime=HITRT)
    out["hdd_randwrite_qd16_iops"] = j["write"]["iops"]
    j = fio("hdd-seqread", HDD, "--rw=read", "--bs=1M", "--iodepth=4",
            "--readonly", runtime=HITRT)
    out["hdd_seqread_bps"] = j["read"]["bw_bytes"]
    res["ceilings"] = out
    log("ceilings: " + ", ".join(f"{k} {v:.0f}" for k, v in out.items()))


def hit_path(dev):
    """Every block of a 32 MiB area cached; randread alternated with the
    raw card (an area beyond every cache region)."""
    sh("fio", "--name=fill", f"--filename={CARD}", "--rw=write", "--bs=1M",
       "--direct=1", f"--offset={RAW_OFF}", f"--size={HIT_AREA}")
    # 4 KiB random writes cover every block (fio's random map) and are
    # cached by all three (1 MiB sequential writes would go around
    # vcache's default sequential cutoff)
    sh("fio", "--name=fill", f"--filename={dev}", "--rw=randwrite",
       "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=16",
       f"--size={HIT_AREA}")
    # reads promote (dm-cache smq caches what is read again)
    for _ in range(2):
        sh("fio", "--name=warm", f"--filename={dev}", "--rw=read",
           "--bs=1M", "--direct=1", f"--size={HIT_AREA}")
    out = {}
    for qd in (1, 32):
        raw, cac, hdd_reads = [], [], 0
        for i in range(HITREPS):
            j = fio(f"hit-raw-qd{qd}-{i}", CARD, "--rw=randread", "--bs=4k",
                    f"--iodepth={qd}", f"--offset={RAW_OFF}",
                    f"--size={HIT_AREA}", "--readonly", runtime=HITRT)
            raw.append(j["read"]["iops"])
            r0 = disk_stat(HDD)[0]
            j = fio(f"hit-{CACHE}-qd{qd}-{i}", dev, "--rw=randread",
                    "--bs=4k", f"--iodepth={qd}", f"--size={HIT_AREA}",
                    runtime=HITRT)
            hdd_reads += disk_stat(HDD)[0] - r0
            cac.append(j["read"]["iops"])
        m = sum(cac) / len(cac)
        rm = sum(raw) / len(raw)
        out[f"qd{qd}"] = {"iops": m, "raw_iops": rm, "ratio": m / rm,
                          "runs": cac, "raw_runs": raw,
                          "hdd_reads": hdd_reads}
        log(f"hit path QD{qd}: {m:.0f} IOPS vs raw card {rm:.0f}: "
            f"{m / rm:.2f} (HDD reads meanwhile {hdd_reads})")
    res["hit"] = out


def iops_series(tag):
    """Sum of read and write IOPS per 10 s interval from fio's log."""
    per = {}
    for f in glob.glob(f"{OUT}/{tag}_iops*.log"):
        with open(f) as fh:
            for line in fh:
                w = [x.strip() for x in line.split(",")]
                if len(w) >= 2:
                    t = int(w[0]) // 1000
                    per[t] = per.get(t, 0) + int(w[1])
    return [per[t] for t in sorted(per)]


def oltp(dev):
    mix = ["--rw=randrw", "--rwmixread=75", "--bs=4k",
           "--random_distribution=zipf:1.1", "--iodepth=16",
           f"--size={DATA}", "--norandommap"]
    log(f"OLTP warm-up {WARM} s (discarded)")
    fio("oltp-warm", dev, *mix, runtime=WARM)
    c0, s0, f0 = counters(), disk_stat(HDD), card_bytes_written()
    v0 = vc_stats()
    log(f"OLTP measured {MEAS} s")
    j = fio("oltp", dev, *mix, runtime=MEAS, logs=True)
    c1, s1, f1 = counters(), disk_stat(HDD), card_bytes_written()
    v1 = vc_stats()
    rd, wr = j["read"], j["write"]
    host = rd["total_ios"] + wr["total_ios"]
    d = {k: c1[k] - c0[k] for k in c1}
    rh, wh = ratios(d)
    series = iops_series("oltp")
    mean = sum(series) / len(series) if series else 0
    cv = ((sum((x - mean) ** 2 for x in series) / len(series)) ** 0.5 /
          mean) if mean else None
    # merged latency percentiles of the mix: fio's per direction; the
    # figure of record is the read side (what a query waits for) and
    # the write side next to it
    o = {"iops": rd["iops"] + wr["iops"], "read_iops": rd["iops"],
         "write_iops": wr["iops"], "read_lat": lat(rd),
         "write_lat": lat(wr), "host_ios": host,
         "read_hit_ratio": rh, "write_hit_ratio": wh, "counters": d,
         "backing_ios_per_host_io":
             ((s1[0] - s0[0]) + (s1[1] - s0[1])) / host if host else None,
         "backing_reads": s1[0] - s0[0], "backing_writes": s1[1] - s0[1],
         "flash_bytes_per_host_io":
             (f1 - f0) / host if host and f0 is not None and f1 is not None
             and CACHE != "hdd" else None,
         "iops_10s": series, "cv_10s": cv}
    if v0 is not None and v1 is not None:
        # every vcache counter over the window: where writes went (hits,
        # bypasses by reason, throttled), what write-back did
        o["vcache"] = {k: v1[k] - v0.get(k, 0) for k in v1
                       if not k.endswith("_bps")}
        log("OLTP vcache: " + ", ".join(
            f"{k} {v}" for k, v in sorted(o["vcache"].items())
            if v and ("bypass" in k or k.startswith("wb_") or
                      "flush" in k) and not k.endswith("_bytes")))
    res["oltp"] = o
    log(f"OLTP: {o['iops']:.0f} IOPS (r {rd['iops']:.0f} w "
        f"{wr['iops']:.0f}), read p99 {o['read_lat']['p99_us']:.0f} us, "
        f"hits r {rh} w {wh}, backing I/O per host I/O "
        f"{o['backing_ios_per_host_io']}, 10 s IOPS {series} (CV {cv})")


WB_DELTAS = ("wb_ios", "wb_blocks", "wb_flushes", "backing_flushes",
             "backing_ios")
WB_GAUGES = ("dirty_blocks", "wb_rate_bps")


def hdd_inflight():
    """Requests the guest has in flight to the HDD (reads + writes)."""
    name = os.path.basename(os.path.realpath(HDD))
    try:
        return sum(int(x) for x in sysr(f"/sys/block/{name}/inflight").split())
    except (OSError, ValueError):
        return None


def durable(t0):
    """The cache says clean: FLUSH the HDD (fsync of the block device) so
    that the drain ends when the data is durable at home, whatever the
    cache does about the disk's volatile write cache (vcache FLUSHes it
    after each write-back batch; a peer that does not leaves its last
    writes there).  (seconds since t0 when durable, the FLUSH's seconds)"""
    t1 = time.monotonic()
    fd = os.open(HDD, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    t2 = time.monotonic()
    return t2 - t0, t2 - t1


def drain():
    """Write back every dirty block, the way each cache offers: the dirty
    bytes and the backing writes sampled every second."""
    d0 = dirty_bytes()
    s0 = disk_stat(HDD)
    t0 = time.monotonic()
    bg = None
    if CACHE.startswith("vcache"):
        bg = subprocess.Popen(["vcache-config", "flush", NAME],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    elif CACHE == "bcache":
        sysw("/sys/block/bcache0/bcache/writeback_percent", 0)
        sysw("/sys/block/bcache0/bcache/writeback_running", 1)
    elif CACHE == "dmcache":
        sh("dmsetup", "suspend", "--noudevsync", "vcbench")
        sh("dmsetup", "reload", "vcbench", "--noudevsync", "--table",
           dmcache_table("cleaner"))
        sh("dmsetup", "resume", "--noudevsync", "vcbench")
    elif CACHE == "dmwc":
        bg = subprocess.Popen(["dmsetup", "message", "vcbench", "0",
                               "flush"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    curve, done_s, wb = [], None, []
    clean_s = flush_s = None
    v0 = vc_stats() or {}
    wall0 = time.time()
    while True:
        t = time.monotonic() - t0
        db = dirty_bytes()
        s = disk_stat(HDD)
        curve.append([round(t, 1), db, (s[2] - s0[2]) * 512])
        v = vc_stats()
        if v is not None:
            # why a drain waits: write-back I/Os and blocks, its backing
            # FLUSHes, the rated write-back's rate, flushes on demand, and
            # the HDD's requests in flight (guest side)
            wb.append([round(t, 1)] +
                      [v.get(k, 0) - v0.get(k, 0) for k in WB_DELTAS] +
                      [v.get(k, 0) for k in WB_GAUGES] +
                      [hdd_inflight()])
        finished = db == 0 and (bg is None or bg.poll() is not None)
        if finished:
            clean_s = t
            done_s, flush_s = durable(t0)
            break
        if t > DRAIN:
            break
        time.sleep(1)
    if bg and bg.poll() is None:
        bg.kill()
    s1 = disk_stat(HDD)
    el = time.monotonic() - t0
    wbc = wb
    wb = (s1[2] - s0[2]) * 512
    res["drain"] = {"dirty_bytes_at_start": d0, "seconds": done_s,
                    "finished": done_s is not None,
                    "seconds_clean": clean_s, "final_flush_s": flush_s,
                    "backing_bytes_written": wb,
                    "backing_writes": s1[1] - s0[1],
                    "backing_write_bps": wb / el if el else 0,
                    "wall_start": wall0,
                    "curve": curve}
    if wbc:
        res["drain"]["vcache_curve_fields"] = \
            ["t"] + list(WB_DELTAS) + list(WB_GAUGES) + ["hdd_inflight"]
        res["drain"]["vcache_curve"] = wbc
    log(f"drain: {d0} dirty bytes, "
        f"{'%.1f s' % done_s if done_s is not None else 'NOT finished in %d s' % DRAIN}"
        + (f" (clean at {clean_s:.1f} s, final HDD FLUSH {flush_s:.2f} s)"
           if done_s is not None else "") +
        f", backing {wb / el / 1e6:.2f} MB/s")


# ------------------------------------------------------------- pgbench
PG_MNT = "/tmp/vcbench-pg"
PG_SOCK = PG_MNT          # the socket on the ext4 mount itself
PG_CG = "/sys/fs/cgroup/vcbench-pg"


def pg_bin(name):
    """Debian's postgresql (scripts/deps.sh --bench): the newest major."""
    v = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
               key=lambda x: int(x.split("/")[4]))
    if not v:
        raise RuntimeError("postgresql is not installed (scripts/deps.sh "
                           "--bench)")
    return os.path.join(os.path.dirname(v[-1]), name)


def pg_cgroup():
    """A cgroup v2 with memory.max for the server; None if the guest
    kernel has none (the page cache then holds what fits in the
    guest's RAM, and that is recorded)."""
    try:
        if not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            sh("mount", "-t", "cgroup2", "none", "/sys/fs/cgroup")
        if "memory" not in sysr("/sys/fs/cgroup/cgroup.controllers").split():
            return None
        sysw("/sys/fs/cgroup/cgroup.subtree_control", "+memory")
        if os.path.isdir(PG_CG):
            os.rmdir(PG_CG)
        os.mkdir(PG_CG)
        sysw(f"{PG_CG}/memory.max", PG_MEM)
        return PG_CG
    except (OSError, RuntimeError) as e:
        log(f"pgbench: no memory cgroup ({e}): unlimited page cache")
        return None


def pg_as_postgres(cg=None):
    """preexec_fn: into the cgroup (while still root), then postgres."""
    import pwd
    pw = pwd.getpwnam("postgres")

    def fn():
        if cg:
            with open(f"{cg}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    return fn


def pg_sh(*cmd, cg=None, timeout=900):
    env = dict(os.environ, HOME=PG_MNT, PGHOST=PG_SOCK, PGUSER="postgres",
               LC_ALL="C")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       preexec_fn=pg_as_postgres(cg), env=env, cwd=PG_MNT)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: "
                           f"{(r.stderr or r.stdout).strip()[-400:]}")
    return r


def psql(q):
    return pg_sh(pg_bin("psql"), "-X", "-Atq", "-d", "postgres", "-c",
                 q).stdout.strip()


def status_line():
    """A peer's own status, as its tools print it."""
    if CACHE == "bcache":
        b = "/sys/block/bcache0/bcache"
        d = {k: sysr(f"{b}/stats_total/{k}") for k in
             ("cache_hits", "cache_misses", "cache_bypass_hits",
              "cache_bypass_misses", "cache_hit_ratio")}
        d["dirty_data"] = sysr(f"{b}/dirty_data")
        d["state"] = sysr(f"{b}/state")
        return " ".join(f"{k}={v}" for k, v in d.items())
    if CACHE in ("dmcache", "dmwc"):
        return sh("dmsetup", "status", "vcbench").stdout.strip()
    return None


def vc_stats():
    if not CACHE.startswith("vcache"):
        return None
    return {k: v for k, v in vc_show()["stats"].items()
            if isinstance(v, (int, float))}


def card_io():
    """The card as the host sees it: the firmware's command counters and
    the block layer's view of the raw card (requests and the milliseconds
    they took, FLUSHes apart), to tell what a transaction costs on flash
    whichever cache sits on it."""
    d = {}
    r = sh("vcfw", "stats", "--json", check=False)
    try:
        fw = json.loads(r.stdout[r.stdout.index("{"):])
        for k in ("write_cmds", "read_cmds", "flush_cmds", "fua_cmds",
                  "rmw_writes", "destages", "bytes_written"):
            d["fw_" + k] = int(fw[k])
    except (ValueError, KeyError):
        pass
    name = os.path.basename(os.path.realpath(CARD))
    try:
        f = [int(x) for x in sysr(f"/sys/block/{name}/stat").split()]
    except OSError:
        return d
    d.update({"blk_reads": f[0], "blk_read_ms": f[3], "blk_writes": f[4],
              "blk_write_ms": f[7]})
    if len(f) >= 17:
        d.update({"blk_flushes": f[15], "blk_flush_ms": f[16]})
    return d


def cpu_ticks():
    """The guest's CPU time so far in USER_HZ ticks (/proc/stat), by kind:
    a cache that costs CPU shows in system and softirq time per
    transaction (under TCG the guest's CPUs are slow, and a database
    benchmark may be bound by them rather than by the disks)."""
    with open("/proc/stat") as f:
        w = f.readline().split()
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq")
    return {f"cpu_{n}": int(v) for n, v in zip(names, w[1:])}


def du(path):
    """Bytes the cluster occupies (tables, indexes, WAL, catalogs)."""
    return int(sh("du", "-sb", path).stdout.split()[0])


def pg_snapshot():
    return {"counters": counters(), "vcache": vc_stats(),
            "status": status_line(), "disk": disk_stat(HDD),
            "flash": card_bytes_written(),
            "card": {**card_io(), **cpu_ticks()},
            "t": time.monotonic()}


def pg_latencies(prefix):
    """Per-transaction latencies (us) from pgbench's -l logs."""
    out = []
    for f in glob.glob(f"{prefix}.*"):
        with open(f) as fh:
            for line in fh:
                w = line.split()
                if len(w) >= 3 and w[2].isdigit():
                    out.append(int(w[2]))
    return out


def pctl(v, p):
    if not v:
        return None
    return v[min(len(v) - 1, int(p / 100.0 * len(v)))]


def pgbench_run(tag, secs, logs):
    cmd = [pg_bin("pgbench"), "-h", PG_SOCK, "-U", "postgres", "-c",
           str(PG_CLIENTS), "-j", "2", "-T", str(secs), "-P", "10"]
    prefix = f"{OUT}/{tag}"
    if logs:
        for f in glob.glob(f"{prefix}.*"):
            os.unlink(f)
        cmd += ["-l", f"--log-prefix={prefix}"]
    r = subprocess.run(cmd + ["postgres"], capture_output=True, text=True,
                       timeout=secs + 900, cwd=OUT)
    with open(f"{OUT}/{tag}-out.txt", "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode:
        raise RuntimeError(f"pgbench {tag}: exit {r.returncode}: "
                           f"{(r.stderr or r.stdout).strip()[-400:]}")

    def num(pat):
        m = re.search(pat, r.stdout)
        return float(m.group(1)) if m else None
    o = {"tps": num(r"tps = ([\d.]+)"),
         "transactions": int(num(r"actually processed: (\d+)") or 0),
         "failed": int(num(r"failed transactions: (\d+)") or 0),
         "lat_avg_ms": num(r"latency average = ([\d.]+) ms"),
         "progress_tps": [float(x) for x in
                          re.findall(r"progress: [\d.]+ s, ([\d.]+) tps",
                                     r.stderr)]}
    if logs:
        o["lat_us"] = sorted(pg_latencies(prefix))
        # a line per transaction: too big to keep in bench/results
        for f in glob.glob(f"{prefix}.*"):
            if not f.endswith("-out.txt"):
                os.unlink(f)
    return o


def pg_delta(a, b):
    d = {"counters": {k: b["counters"][k] - a["counters"].get(k, 0)
                      for k in b["counters"]},
         "backing_reads": b["disk"][0] - a["disk"][0],
         "backing_writes": b["disk"][1] - a["disk"][1],
         "status_before": a["status"], "status_after": b["status"],
         "card": {k: v - a["card"][k] for k, v in b["card"].items()
                  if k in a["card"]}}
    if a["vcache"] is not None:
        gauges = ("nr_blocks", "valid_blocks", "dirty_blocks",
                  "dirty_bytes", "mem_bytes", "oldest_dirty_age_ns",
                  "wb_rate_bps")
        d["vcache"] = {k: (v if k in gauges else v - a["vcache"].get(k, 0))
                       for k, v in b["vcache"].items()}
    if a["flash"] is not None and b["flash"] is not None and CACHE != "hdd":
        d["flash_bytes_written"] = b["flash"] - a["flash"]
    return d


def pgbench_size(size, scale):
    """A fresh cache, ext4 on it, a fresh cluster of SCALE, warm-up,
    PG_REPS measured runs."""
    o = {"scale": scale, "clients": PG_CLIENTS, "threads": 2,
         "warm_s": PG_WARM, "run_s": PG_RUN, "reps": PG_REPS,
         "mem_limit_bytes": None}
    res.setdefault("pgbench", {})[size] = o
    mounted = started = False
    cg = None
    try:
        dev = setup()
        t0 = time.monotonic()
        sh("mkfs.ext4", "-q", "-F", "-i", "262144", "-E",
           "lazy_itable_init=0,lazy_journal_init=0,nodiscard", dev)
        os.makedirs(PG_MNT, exist_ok=True)
        sh("mount", "-o", "noatime", dev, PG_MNT)
        mounted = True
        sh("chown", "postgres:postgres", PG_MNT)
        data = f"{PG_MNT}/data"
        pg_sh(pg_bin("initdb"), "-D", data, "-A", "trust", "-E", "UTF8",
              "--locale=C", "-N", "-U", "postgres")
        with open(f"{data}/postgresql.conf", "a") as f:
            f.write(f"""
# make bench (tests/vm/bench/compare.py)
listen_addresses = ''
unix_socket_directories = '{PG_SOCK}'
dynamic_shared_memory_type = mmap
shared_buffers = 16MB
max_connections = 30
checkpoint_timeout = 30s
min_wal_size = 32MB
max_wal_size = 128MB
log_checkpoints = on
""")
        cg = pg_cgroup()
        o["mem_limit_bytes"] = PG_MEM if cg else None
        pg_sh(pg_bin("pg_ctl"), "-D", data, "-l", f"{PG_MNT}/server.log",
              "-w", "-t", "300", "start", cg=cg)
        started = True
        log(f"pgbench {size}: initialising scale {scale}")
        t1 = time.monotonic()
        pg_sh(pg_bin("pgbench"), "-i", "-s", str(scale), "-I", "dtGvp",
              "-q", "postgres", timeout=3600)
        psql("CHECKPOINT")
        o["init_s"] = round(time.monotonic() - t1, 1)
        o["db_bytes"] = int(psql("SELECT pg_database_size('postgres')"))
        o["db_to_cache"] = o["db_bytes"] / CSIZE
        o["footprint_bytes"] = du(data)
        o["footprint_to_cache"] = o["footprint_bytes"] / CSIZE
        sh("sync")
        sysw("/proc/sys/vm/drop_caches", 3)
        log(f"pgbench {size}: database {o['db_bytes'] >> 20} MiB "
            f"({o['db_to_cache']:.2f}x the cache) in {o['init_s']} s; "
            f"warm-up {PG_WARM} s")
        pgbench_run(f"pg-{size}-warm", PG_WARM, False)
        runs, lats = [], []
        for i in range(PG_REPS):
            a = pg_snapshot()
            r = pgbench_run(f"pg-{size}-{i}", PG_RUN, True)
            b = pg_snapshot()
            d = pg_delta(a, b)
            lu = r.pop("lat_us")
            lats += lu
            tx = r["transactions"]
            r.update(d)
            r["lat_p95_ms"] = (pctl(lu, 95) or 0) / 1000
            r["lat_p99_ms"] = (pctl(lu, 99) or 0) / 1000
            r["backing_ios_per_tx"] = ((d["backing_reads"] +
                                        d["backing_writes"]) / tx
                                       if tx else None)
            runs.append(r)
            log(f"pgbench {size} run {i}: {r['tps']} TPS, latency avg "
                f"{r['lat_avg_ms']} ms p99 {r['lat_p99_ms']:.1f} ms, "
                f"backing I/O per tx {r['backing_ios_per_tx']}")
        lats.sort()
        tps = [r["tps"] for r in runs if r["tps"] is not None]
        m = sum(tps) / len(tps) if tps else None
        tx = sum(r["transactions"] for r in runs)
        br = sum(r["backing_reads"] for r in runs)
        bw = sum(r["backing_writes"] for r in runs)
        tot = {}
        for r in runs:
            for k, v in r["counters"].items():
                tot[k] = tot.get(k, 0) + v
        rh, wh = ratios(tot) if tot else (None, None)
        card = {}
        for r in runs:
            for k, v in r["card"].items():
                card[k] = card.get(k, 0) + v
        o.update({
            "runs": runs, "tps": m, "tps_runs": tps,
            "tps_min": min(tps) if tps else None,
            "tps_max": max(tps) if tps else None,
            "tps_cv": ((sum((x - m) ** 2 for x in tps) / len(tps)) ** 0.5
                       / m) if m else None,
            "transactions": tx,
            "failed": sum(r["failed"] for r in runs),
            "lat_avg_ms": (sum(lats) / len(lats) / 1000) if lats else None,
            "lat_p95_ms": (pctl(lats, 95) or 0) / 1000,
            "lat_p99_ms": (pctl(lats, 99) or 0) / 1000,
            "backing_reads": br, "backing_writes": bw,
            "backing_ios_per_tx": (br + bw) / tx if tx else None,
            "backing_reads_per_tx": br / tx if tx else None,
            "backing_writes_per_tx": bw / tx if tx else None,
            "counters": tot, "read_hit_ratio": rh, "write_hit_ratio": wh,
            "card": card, "card_per_tx": ({k: round(v / tx, 3)
                                           for k, v in card.items()}
                                          if tx else None),
            "footprint_end_bytes": du(data),
            "status_end": runs[-1]["status_after"] if runs else None})
        if CACHE.startswith("vcache") and runs:
            vt = {}
            for r in runs:
                for k, v in r["vcache"].items():
                    vt[k] = v if k in ("nr_blocks", "valid_blocks",
                                       "dirty_blocks", "dirty_bytes",
                                       "mem_bytes", "oldest_dirty_age_ns",
                                       "wb_rate_bps") else \
                        vt.get(k, 0) + v
            o["vcache_stats"] = vt
            # vcache counts requests in reads/writes but blocks in
            # *_hits: with ext4's multi-block requests the ratio of the
            # two exceeds 1; bytes are comparable
            if vt.get("read_bytes"):
                o["read_hit_ratio"] = round(vt.get("read_hit_bytes", 0) /
                                            vt["read_bytes"], 4)
            if vt.get("write_bytes"):
                o["write_hit_ratio"] = round(vt.get("write_hit_bytes", 0) /
                                             vt["write_bytes"], 4)
            rh = o.get("read_hit_ratio", rh)
            wh = o.get("write_hit_ratio", wh)
        if cg:
            try:
                o["memcg_events"] = dict(
                    ln.split() for ln in
                    sysr(f"{cg}/memory.events").splitlines())
            except OSError:
                pass
        log(f"pgbench {size}: {m and round(m, 1)} TPS (runs {tps}), "
            f"latency avg/p95/p99 {o['lat_avg_ms'] and round(o['lat_avg_ms'], 2)}"
            f"/{o['lat_p95_ms']:.2f}/{o['lat_p99_ms']:.2f} ms, backing I/O "
            f"per tx {o['backing_ios_per_tx']}, hits r {rh} w {wh}, "
            f"{round(time.monotonic() - t0)} s")
        if o.get("card_per_tx"):
            t = o["card_per_tx"]
            log(f"pgbench {size}: per tx on the card: writes "
                f"{t.get('fw_write_cmds')} FLUSH {t.get('fw_flush_cmds')} "
                f"FUA {t.get('fw_fua_cmds')} RMW {t.get('fw_rmw_writes')}; "
                f"card FLUSH {card.get('blk_flush_ms')} ms over "
                f"{card.get('blk_flushes')}")
    finally:
        if started:
            try:
                pg_sh(pg_bin("pg_ctl"), "-D", f"{PG_MNT}/data", "-m",
                      "fast", "-w", "-t", "300", "stop")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                res["errors"].append(f"pgbench {size} stop: {e}")
        if os.path.exists(f"{PG_MNT}/server.log"):
            shutil.copy(f"{PG_MNT}/server.log",
                        f"{OUT}/pg-{size}-server.log")
        if mounted:
            sh("umount", PG_MNT, check=False)
        if cg:
            try:
                os.rmdir(cg)
            except OSError:
                pass
        teardown()


def main():
    if not HDD or not os.path.exists(CARD):
        sys.exit("compare: need the card and the HDD")
    t0 = time.time()
    if "fio" in WORK:
        fio_part()
    if "pgbench" in WORK:
        for size, scale in PG_SCALES.items():
            try:
                pgbench_size(size, scale)
            except (RuntimeError, OSError, subprocess.TimeoutExpired,
                    ValueError, KeyError, IndexError) as e:
                res["errors"].append(f"pgbench {size}: {e}")
                log(f"pgbench {size} FAILED: {e}")
    res["kernel"] = os.uname().release
    with open("/proc/cmdline") as f:
        res["cmdline"] = f.read().strip()
    res["fio"] = sh("fio", "--version", check=False).stdout.strip()
    res["elapsed_s"] = round(time.time() - t0)
    with open(os.path.join(OUT, "result.json"), "w") as f:
        json.dump(res, f, indent=1)
    log(f"done in {res['elapsed_s']} s, errors: {res['errors'] or 'none'}")
    return 1 if res["errors"] else 0


def fio_part():
    """The hit path, the OLTP mix, the drain (and the ceilings for hdd)
    on one cache."""
    dev = None
    try:
        dev = setup()
        log(f"device {dev}, cache {CSIZE >> 20} MiB, data {DATA >> 20} MiB")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        res["errors"].append(f"setup: {e}")
        log(f"setup FAILED: {e}")
    steps = []
    if dev:
        if CACHE == "hdd":
            steps.append(("ceilings", ceilings))
        if HIT and CACHE in ("vcache", "bcache", "dmcache"):
            steps.append(("hit", hit_path))
        steps.append(("oltp", oltp))
        if CACHE != "hdd":
            steps.append(("drain", lambda _d: drain()))
    for name, fn in steps:
        try:
            fn(dev)
        except (RuntimeError, OSError, subprocess.TimeoutExpired,
                ValueError, KeyError, IndexError) as e:
            res["errors"].append(f"{name}: {e}")
            log(f"{name} FAILED: {e}")
            if name == "oltp":
                break
    try:
        teardown()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        res["errors"].append(f"teardown: {e}")


if __name__ == "__main__":
    sys.exit(main())
