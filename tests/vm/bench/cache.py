#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest part of tests/vm/bench-cache: the cached device against the raw
card it caches on, and against bcache on the same card.

1. fio 4K randread at QD1 and QD32, every block a hit, on the raw card
   (below the region) and on /dev/vcache/NAME, runs alternated; IOPS, p99,
   ratio cached/raw; the hits are checked with the cache's statistics and
   the backing disk's read count.
2. fio 4K randwrite QD32 in write-back: metadata writes, cache flushes and
   commits per host write (cache statistics), and the card's own counters.
3. The same randread runs through bcache on the same card and HDD.

Prints a table and writes results.json to the run directory.  Figures never
fail the run; a broken step (fio error, a cache that cannot be created)
does."""
import glob
import json
import os
import subprocess
import sys
import time

RUNTIME = int(os.environ.get("VC_BENCH_RUNTIME", "8"))
WRUNTIME = int(os.environ.get("VC_BENCH_WRITE_RUNTIME") or 20)
REPS = int(os.environ.get("VC_BENCH_REPS", "3"))
SIZE = os.environ.get("VC_BENCH_SIZE", "256M")
REGION = os.environ.get("VC_BENCH_REGION", "512M")
RUN_DIR = os.environ["VC_RUN_DIR"]
CARD = "/dev/vflash0"
HDD = os.environ.get("VC_HDD", "")
NAME = "bench"
CDEV = f"/dev/vcache/{NAME}"
TARGET = 0.95
QDS = (1, 32)

res = {"config": {"runtime_s": RUNTIME, "write_runtime_s": WRUNTIME,
                  "reps": REPS, "size": SIZE, "region": REGION,
                  "target_qd32_ratio": TARGET}}


def log(msg):
    print(f"# {msg}", flush=True)


def sh(*cmd, check=True, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: "
                           f"{(r.stderr or r.stdout).strip()}")
    return r


def fio(dev, rw, qd, runtime, readonly=False):
    cmd = ["fio", "--name=b", f"--filename={dev}", f"--rw={rw}", "--bs=4k",
           "--direct=1", "--ioengine=libaio", f"--iodepth={qd}",
           f"--size={SIZE}", "--time_based", f"--runtime={runtime}",
           "--ramp_time=1", "--randrepeat=0", "--norandommap",
           "--output-format=json"]
    if readonly:
        cmd.append("--readonly")
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=runtime + 300)
    if r.returncode:
        raise RuntimeError(f"fio {rw} QD{qd} on {dev} failed: "
                           f"{r.stderr.strip()}")
    j = json.loads(r.stdout[r.stdout.index("{"):])["jobs"][0]
    d = j["read" if "read" in rw else "write"]
    pct = d["clat_ns"].get("percentile", {})
    return {"iops": d["iops"], "p99_us": pct.get("99.000000", 0) / 1000.0,
            "mean_us": d["clat_ns"]["mean"] / 1000.0,
            "ios": d["total_ios"]}


def fill(dev):
    sh("fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
       "--direct=1", "--ioengine=libaio", "--iodepth=8", f"--size={SIZE}")


def vc_show():
    return json.loads(sh("vcache-config", "show", NAME, "--json").stdout)


def vc_stats():
    return vc_show()["stats"]


def disk_reads(dev):
    """Completed reads of a whole disk (/sys/block/X/stat field 1)."""
    name = os.path.basename(os.path.realpath(dev))
    with open(f"/sys/block/{name}/stat") as f:
        return int(f.read().split()[0])


def cpu_counters():
    """Context switches and function-call IPIs (CAL) of the whole guest."""
    c = {"ctxt": 0, "ipi": 0}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                c["ctxt"] = int(line.split()[1])
    with open("/proc/interrupts") as f:
        for line in f:
            w = line.split()
            if w and w[0] == "CAL:":
                c["ipi"] = sum(int(x) for x in w[1:] if x.isdigit())
    return c


def delta(a, b, keys):
    return {k: b[k] - a[k] for k in keys}


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def summarize(runs):
    return {"iops": mean([r["iops"] for r in runs]),
            "p99_us": mean([r["p99_us"] for r in runs]),
            "ctxt_per_io": mean([r["ctxt_per_io"] for r in runs]),
            "ipi_per_io": mean([r["ipi_per_io"] for r in runs]),
            "iops_runs": [round(r["iops"]) for r in runs]}


def cpu_fio(dev, qd, readonly=False):
    """A randread run with the guest's context switches and IPIs per I/O
    (the ramp's I/Os are not in fio's count: a slight overestimate)."""
    c0 = cpu_counters()
    r = fio(dev, "randread", qd, RUNTIME, readonly=readonly)
    c1 = cpu_counters()
    n = r["ios"] or 1
    r["ctxt_per_io"] = (c1["ctxt"] - c0["ctxt"]) / n
    r["ipi_per_io"] = (c1["ipi"] - c0["ipi"]) / n
    r["cpu_text"] = (f"{r['ctxt_per_io']:.1f} cs, {r['ipi_per_io']:.1f} "
                     "IPI per I/O")
    return r


def alternate(label, dev, check_hits, variants=None):
    """REPS x (raw, DEV) per QD; check_hits(before) -> (after-fn).
    variants: [(label, setup-fn)], each run after the raw card in every
    rep (the first is @label, whose ratio is "ratio"; the others' are
    "ratio_LABEL")."""
    variants = variants or [(label, None)]
    out = {}
    for qd in QDS:
        raw, duts = [], {v: [] for v, _ in variants}
        for i in range(REPS):
            r = cpu_fio(CARD, qd, readonly=True)
            raw.append(r)
            log(f"raw card  randread QD{qd:<2} run {i + 1}: "
                f"{r['iops']:7.0f} IOPS, p99 {r['p99_us']:7.0f} us  "
                f"({r['cpu_text']})")
            for v, setup in variants:
                if setup:
                    setup()
                snap = check_hits()
                r = cpu_fio(dev, qd)
                r["hits"] = snap()
                duts[v].append(r)
                log(f"{v:9} randread QD{qd:<2} run {i + 1}: "
                    f"{r['iops']:7.0f} IOPS, p99 {r['p99_us']:7.0f} us  "
                    f"({r['cpu_text']}; {r['hits']['text']})")
        s = out[f"qd{qd}"] = {"raw": {"runs": raw, **summarize(raw)}}
        for v, runs in duts.items():
            s[v] = {"runs": runs, **summarize(runs)}
            s["ratio" if v == label else f"ratio_{v}"] = (
                s[v]["iops"] / s["raw"]["iops"] if s["raw"]["iops"] else 0.0)
        s["all_hits"] = all(r["hits"]["all_hits"]
                            for runs in duts.values() for r in runs)
    return out


# The integrated hit path can be turned off (vcache.ko direct_hits=N: read
# hits go to the card as a second bio through the region's hidden disk, as
# before issue 19): both are measured in the same boot, alternated.
DIRECT = "/sys/module/vcache/parameters/direct_hits"


def set_direct(on):
    with open(DIRECT, "w") as f:
        f.write("Y" if on else "N")


def vc_hit_check():
    s0, h0 = vc_stats(), disk_reads(HDD)

    def after():
        s1, h1 = vc_stats(), disk_reads(HDD)
        d = delta(s0, s1, ("reads", "read_hits", "read_misses", "md_writes",
                            "wb_ios", "commits", "cache_flushes"))
        d["backing_reads"] = h1 - h0
        d["all_hits"] = (d["read_misses"] == 0 and d["backing_reads"] == 0
                         and d["read_hits"] > 0)
        d["text"] = (f"hits {d['read_hits']}, misses {d['read_misses']}, "
                     f"HDD reads {d['backing_reads']}")
        busy = [k for k in ("md_writes", "wb_ios", "commits", "cache_flushes")
                if d[k]]
        if busy:
            d["text"] += ", meanwhile " + ", ".join(f"{k} {d[k]}"
                                                    for k in busy)
        return d
    return after


def bc_hit_check():
    h0 = disk_reads(HDD)

    def after():
        d = {"backing_reads": disk_reads(HDD) - h0}
        d["all_hits"] = d["backing_reads"] == 0
        d["text"] = f"HDD reads {d['backing_reads']}"
        return d
    return after


# ------------------------------------------------------------ 1: reads
def part_reads():
    log(f"create {NAME}: {REGION} region of {CARD}, 4k blocks, write-back, "
        f"backing {HDD}")
    sh("vcache-config", "create", NAME, "--cache", CARD, "--size", REGION,
       "--backing", HDD, "--mode", "wb", "--block-size", "4k",
       "--seq-cutoff", "off")
    sh("udevadm", "settle")
    for _ in range(50):
        if os.path.exists(CDEV):
            break
        time.sleep(0.1)
    raw_bytes = int(sh("blockdev", "--getsize64", CARD).stdout)
    res["config"]["raw_card_bytes"] = raw_bytes
    log(f"raw card now {raw_bytes >> 20} MiB; {SIZE} test area at its "
        f"start; filling it and (through {CDEV}) the cache")
    fill(CARD)
    t = time.time()
    fill(CDEV)
    log(f"cache warm in {time.time() - t:.0f} s; flush (write back to the "
        "HDD) so no write-back runs during the reads")
    sh("vcache-config", "flush", NAME, timeout=900)
    st = vc_show()
    res["config"]["cache_blocks"] = st["stats"]["nr_blocks"]
    res["config"]["valid_blocks_after_warm"] = st["stats"]["valid_blocks"]
    if os.path.exists(DIRECT):
        try:
            res["vcache"] = alternate(
                "vcache", CDEV, vc_hit_check,
                [("vcache", lambda: set_direct(True)),
                 ("vcache-bio", lambda: set_direct(False))])
        finally:
            set_direct(True)
    else:
        res["vcache"] = alternate("vcache", CDEV, vc_hit_check)


# ----------------------------------------------------------- 2: writes
MD_KEYS = ("writes", "write_hits", "write_misses", "md_writes",
           "cache_flushes", "commits", "wb_ios", "clean_watermark",
           "clean_age", "clean_idle", "flash_bytes_written",
           "backing_ios", "bypass_busy")
FW_KEYS = ("write_cmds", "flush_cmds", "bytes_written", "read_cmds",
           "flash_bytes_programmed")


def fwstats():
    r = sh("vcfw", "stats", "--json")
    return json.loads(r.stdout[r.stdout.index("{"):])


def part_writes():
    s0, f0 = vc_stats(), fwstats()
    r = fio(CDEV, "randwrite", 32, WRUNTIME)
    s1, f1 = vc_stats(), fwstats()
    r["raw"] = fio(CARD, "randwrite", 32, RUNTIME)
    d = delta(s0, s1, MD_KEYS)
    fd = delta(f0, f1, FW_KEYS)
    w = d["writes"] or 1
    res["writes"] = {"fio": r, "stats": d, "card": fd,
                     "md_writes_per_write": d["md_writes"] / w,
                     "cache_flushes_per_write": d["cache_flushes"] / w,
                     "commits_per_write": d["commits"] / w,
                     "card_write_cmds_per_write": fd["write_cmds"] / w,
                     "card_flush_cmds_per_write": fd["flush_cmds"] / w,
                     "card_bytes_per_host_byte":
                         fd["bytes_written"] / (4096.0 * w)}
    log(f"randwrite QD32 {WRUNTIME} s: {r['iops']:.0f} IOPS, p99 "
        f"{r['p99_us']:.0f} us, {d['writes']} host writes")


# ----------------------------------------------------------- 3: bcache
def wait_for(path, secs=30, gone=False):
    for _ in range(secs * 10):
        if os.path.exists(path) != gone:
            return True
        time.sleep(0.1)
    return False


def bcache_teardown():
    for f in (glob.glob("/sys/block/bcache*/bcache/stop") +
              glob.glob("/sys/fs/bcache/*-*/unregister")):
        try:
            with open(f, "w") as fh:
                fh.write("1")
        except OSError:
            pass
    ok = wait_for("/sys/block/vflash0/bcache", gone=True)
    wait_for("/sys/block/bcache0", gone=True)
    return ok


def sysw(path, val):
    with open(path, "w") as f:
        f.write(str(val))


def part_bcache():
    if not os.access("/usr/sbin/make-bcache", os.X_OK):
        raise RuntimeError("make-bcache not found (bcache-tools: "
                           "scripts/deps.sh installs it on the host)")
    d = vc_show()
    log(f"delete {NAME} ({d['dirty_bytes']} dirty bytes discarded): the "
        "region goes back to the raw card")
    sh("vcache-config", "delete", NAME, "--discard-dirty")
    sh("udevadm", "settle")
    r = sh("modprobe", "bcache", check=False)
    if not os.path.exists("/sys/fs/bcache/register"):
        raise RuntimeError(f"bcache module not available: {r.stderr.strip()}")
    log(f"make-bcache -C {CARD} -B {HDD} (4k blocks), writeback, "
        "sequential_cutoff 0, congestion thresholds 0")
    sh("make-bcache", "--block", "4k", "--wipe-bcache", "--writeback",
       "-C", CARD, "-B", HDD)
    sh("udevadm", "settle")
    # udev's 69-bcache.rules registers both; by hand if it did not
    for dev in (CARD, HDD):
        if not os.path.exists(f"/sys/block/{os.path.basename(dev)}/bcache"):
            try:
                sysw("/sys/fs/bcache/register", dev)
            except OSError:
                pass
    if not wait_for("/sys/block/bcache0/bcache/cache"):
        raise RuntimeError("bcache0 did not appear attached to its cache set")
    bdir = "/sys/block/bcache0/bcache"
    cset = os.path.realpath(f"{bdir}/cache")
    sysw(f"{bdir}/cache_mode", "writeback")
    sysw(f"{bdir}/sequential_cutoff", 0)
    sysw(f"{cset}/congested_read_threshold_us", 0)
    sysw(f"{cset}/congested_write_threshold_us", 0)
    fill("/dev/bcache0")
    # the data stays dirty in the cache: no background write-back during
    # the reads (vcache's was flushed to the same end)
    sysw(f"{bdir}/writeback_running", 0)
    with open(f"{bdir}/dirty_data") as f:
        dirty = f.read().strip()
    log(f"bcache warm: {dirty} dirty, writeback paused")
    res["bcache"] = alternate("bcache", "/dev/bcache0", bc_hit_check)
    st = {}
    for k in ("cache_hits", "cache_misses", "cache_bypass_hits",
              "cache_bypass_misses"):
        with open(f"{bdir}/stats_total/{k}") as f:
            st[k] = int(f.read())
    res["bcache"]["stats_total"] = st


# ----------------------------------------------------------- the table
def table():
    print()
    print(f"4 KiB random read, every block a hit: fio libaio direct, "
          f"{RUNTIME} s per run after 1 s ramp, {REPS} runs each, "
          f"alternated with the raw card; {SIZE} area")
    print(f"HDD backing ({HDD}, throttled), card nodelay timing; IOPS = "
          "mean of the runs (each run in brackets), p99 = mean p99, cs/IPI "
          "= guest context switches / function-call IPIs per I/O")
    print(f"{'device':22}" + "".join(
        f"{'QD' + str(q) + ' IOPS':>28}{'p99 us':>8}{'cs/IPI':>10}"
        for q in QDS))

    def row(name, key, part):
        line = f"{name:22}"
        for q in QDS:
            s = res[part][f"qd{q}"][key]
            runs = "/".join(str(x) for x in s["iops_runs"])
            line += (f"{s['iops']:>7.0f} [{runs:>18}]{s['p99_us']:>8.0f}"
                     f"{s['ctxt_per_io']:>6.1f}/{s['ipi_per_io']:<3.1f}")
        print(line)

    def ratio(name, part, key="ratio"):
        line = f"{name:22}"
        for q in QDS:
            s = res[part][f"qd{q}"]
            hits = "" if s["all_hits"] else "NOT all hits"
            line += f"{s[key]:>28.2f}{hits:>18}"
        print(line)

    if "vcache" in res:
        row("raw card", "raw", "vcache")
        row("vcache (cached dev)", "vcache", "vcache")
        ratio("  vcache / raw", "vcache")
        if "vcache-bio" in res["vcache"]["qd1"]:
            row("vcache, bio path", "vcache-bio", "vcache")
            ratio("  bio path / raw", "vcache", "ratio_vcache-bio")
    if "bcache" in res:
        row("raw card (bcache run)", "raw", "bcache")
        row("bcache", "bcache", "bcache")
        ratio("  bcache / raw", "bcache")
    elif "bcache_error" in res:
        print(f"bcache: not measured: {res['bcache_error']}")
    if "vcache" in res:
        r = res["vcache"]["qd32"]["ratio"]
        v = "met" if r >= TARGET else "MISSED"
        res["target_met"] = r >= TARGET
        if "vcache-bio" in res["vcache"]["qd1"]:
            print("(bio path: direct_hits=N, the read hit as a second bio "
                  "through the region's hidden disk, as before issue 19)")
        print(f"\ntarget (cached device >= {TARGET:.2f} x raw card at QD32 "
              f"randread): target {v} ({r:.2f}; bcache 0.79 and dm-cache "
              "0.72 of their raw flash in the issue"
              + (f"; bcache here {res['bcache']['qd32']['ratio']:.2f}"
                 if "bcache" in res else "") + ")")
        if not (res["vcache"]["qd1"]["all_hits"]
                and res["vcache"]["qd32"]["all_hits"]):
            print("WARNING: some cached runs were not all hits")
    if "writes" in res:
        w = res["writes"]
        d, fd = w["stats"], w["card"]
        print()
        print(f"4 KiB random write, write-back, QD32, {WRUNTIME} s on "
              f"{CDEV}: {w['fio']['iops']:.0f} IOPS, mean "
              f"{w['fio']['mean_us']:.0f} us, p99 {w['fio']['p99_us']:.0f} us,"
              f" {d['writes']} host writes ({d['write_hits']} hits, "
              f"{d['write_misses']} misses)")
        rw = w["fio"]["raw"]
        print(f"  (the raw card, same load, {RUNTIME} s: {rw['iops']:.0f} "
              f"IOPS, mean {rw['mean_us']:.0f} us, p99 {rw['p99_us']:.0f} us)")
        print(f"  md_writes / write        {w['md_writes_per_write']:8.3f}"
              f"   ({d['md_writes']})")
        print(f"  cache_flushes / write    "
              f"{w['cache_flushes_per_write']:8.3f}   ({d['cache_flushes']})")
        print(f"  commits / write          {w['commits_per_write']:8.3f}"
              f"   ({d['commits']})")
        print(f"  card write cmds / write  "
              f"{w['card_write_cmds_per_write']:8.3f}   ({fd['write_cmds']})")
        print(f"  card flush cmds / write  "
              f"{w['card_flush_cmds_per_write']:8.3f}   ({fd['flush_cmds']})")
        print(f"  card bytes / host byte   "
              f"{w['card_bytes_per_host_byte']:8.3f}")
        print(f"  meanwhile write-back: {d['wb_ios']} I/Os (cleaned by "
              f"watermark {d['clean_watermark']}, age {d['clean_age']}, "
              f"idle {d['clean_idle']} blocks), {d['backing_ios']} HDD I/Os")


def main():
    if not os.path.exists(CARD) or not HDD:
        sys.exit(f"bench-cache: need {CARD} and the HDD ($VC_HDD)")
    t0 = time.time()
    rc = 0
    try:
        part_reads()
        part_writes()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"bench-cache: FAILED: {e}", flush=True)
        rc = 1
    if rc == 0:
        try:
            part_bcache()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            res["bcache_error"] = str(e)
            log(f"bcache: not measured: {e}")
    if not bcache_teardown():
        print("bench-cache: bcache did not let go of the card", flush=True)
        rc = 1
    if sh("vcache-config", "show", NAME, check=False).returncode == 0:
        sh("vcache-config", "delete", NAME, "--discard-dirty", check=False)
    # udev probes the card's raw disk after it changed: let it finish, or
    # its open races the runner's rmmod
    sh("udevadm", "settle", check=False)
    res["elapsed_s"] = round(time.time() - t0)
    with open(os.path.join(RUN_DIR, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    table()
    print(f"\n(guest part: {res['elapsed_s']} s; results.json in {RUN_DIR})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
