#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py RESULTS_DIR: the markdown table (table.md), the PNG
plots and the targets of `make bench` from the result.json of every
configuration in RESULTS_DIR.  Prints the table and each target as MET or
MISSED; exits 0 either way (a missed target is a figure, not a crash)."""
import json
import os
import sys

PEERS = ("bcache", "dmcache", "dmwc")
LABEL = {"hdd": "HDD alone", "vcache": "vcache", "bcache": "bcache",
         "dmcache": "dm-cache (smq)", "dmwc": "dm-writecache",
         "vcache-fp30": "vcache, 30 s flush period",
         "vcache-thr": "vcache, no flush period"}
ORDER = ("vcache", "bcache", "dmcache", "dmwc", "hdd", "vcache-fp30",
         "vcache-thr")


def label(c):
    """A variant "vcache@k=v+k=v" reads "vcache, k=v k=v"."""
    if c.startswith("vcache@"):
        return "vcache, " + " ".join(c[len("vcache@"):].split("+"))
    return LABEL[c]


def order(res):
    """The fixed order, then the vcache variants by name."""
    return ORDER + tuple(sorted({k[1] for k in res} - set(ORDER)))


def load(d):
    res = {}
    for name in sorted(os.listdir(d)):
        f = os.path.join(d, name, "result.json")
        if os.path.exists(f):
            with open(f) as fh:
                r = json.load(fh)
            res[(r["disk"], r["cache"])] = r
    return res


def fmt(v, spec=".0f", none="-"):
    if v is None:
        return none
    return format(v, spec)


def pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"


def table(res, cond):
    L = []
    disks = [d for d in ("throttled", "seek")
             if any(k[0] == d for k in res)]
    q = cond.get("profile") or ("quick" if cond.get("quick") else "full")
    fio = "fio" in cond.get("workloads", ["fio"])
    L.append(f"Run: {cond.get('started', '?')} ({q}: cache "
             f"{cond.get('csize', 0) >> 20} MiB"
             + (f", data 10x, warm-up "
                f"{cond.get('warm')} s discarded, measured {cond.get('meas')}"
                f" s, drain limit {cond.get('drain')} s" if fio else "")
             + (f"; pgbench scales {cond.get('pg_scales')}, warm-up "
                f"{cond.get('pg_warm')} s, {cond.get('pg_reps')} x "
                f"{cond.get('pg_run')} s, {cond.get('pg_clients')} clients,"
                f" server cgroup memory.max "
                f"{(cond.get('pg_mem') or 0) >> 20} MiB"
                if "pgbench" in cond.get("workloads", []) else "")
             + ")\n")
    # slub_debug is a test setting (tests/vm/run --bench boots without it)
    slub = sorted({k[1] for k, r in res.items()
                   if "slub_debug" in r.get("cmdline", "")})
    known = [k for k, r in res.items() if "cmdline" in r]
    if slub:
        L.append("Booted WITH slub_debug (a test setting, not a benchmark's): "
                 + ", ".join(slub) + "\n")
    elif known:
        L.append("Guest kernel booted without slub_debug (--bench).\n")
    for disk in disks:
        if not any(k[0] == disk and "fio" in r.get("workloads", ["fio"])
                   for k, r in res.items()):
            continue
        L.append(f"### OLTP mix on the {disk} HDD (fio randrw 75/25, 4 KiB, "
                 "zipf 1.1, QD16)\n")
        L.append("| cache | IOPS | read | write | read p50/p99/p99.9 us | "
                 "write p99 us | read hit | write hit | HDD I/O per I/O | "
                 "flash B per I/O | CV 10 s | drain s | drain MB/s |")
        L.append("|---|" + "---:|" * 12)
        for c in order(res):
            r = res.get((disk, c))
            if not r:
                continue
            o = r.get("oltp")
            if "fio" not in r.get("workloads", ["fio"]):
                continue
            if not o:
                L.append(f"| {label(c)} | not measured: "
                         f"{'; '.join(r.get('errors', []))[:200]} |")
                continue
            dr = r.get("drain", {})
            ds = dr.get("seconds")
            dtxt = (fmt(ds, ".1f") if ds is not None else
                    (f">{r['drain_limit_s']}" if dr else "-"))
            rl, wl = o["read_lat"], o["write_lat"]
            L.append(
                f"| {label(c)} | {o['iops']:.0f} | {o['read_iops']:.0f} | "
                f"{o['write_iops']:.0f} | {rl['p50_us']:.0f}/"
                f"{rl['p99_us']:.0f}/{rl['p999_us']:.0f} | "
                f"{wl['p99_us']:.0f} | {pct(o['read_hit_ratio'])} | "
                f"{pct(o['write_hit_ratio'])} | "
                f"{fmt(o['backing_ios_per_host_io'], '.3f')} | "
                f"{fmt(o['flash_bytes_per_host_io'], '.0f')} | "
                f"{fmt(o['cv_10s'], '.3f')} | {dtxt} | "
                f"{fmt(dr.get('backing_write_bps', None) and dr['backing_write_bps'] / 1e6, '.2f')} |")
        L.append("")
    L += pg_table(res, disks)
    hits = [(k, r) for k, r in res.items() if r.get("hit")]
    if hits:
        L.append("### Hit path (4 KiB randread, every block cached, "
                 "alternated with the raw card)\n")
        L.append("| cache | QD1 IOPS | raw card | ratio | QD32 IOPS | "
                 "raw card | ratio | HDD reads |")
        L.append("|---|" + "---:|" * 7)
        for c in order(res):
            for (d, cc), r in hits:
                if cc != c:
                    continue
                h = r["hit"]
                L.append(f"| {label(c)} | {h['qd1']['iops']:.0f} | "
                         f"{h['qd1']['raw_iops']:.0f} | "
                         f"{h['qd1']['ratio']:.2f} | {h['qd32']['iops']:.0f}"
                         f" | {h['qd32']['raw_iops']:.0f} | "
                         f"{h['qd32']['ratio']:.2f} | "
                         f"{h['qd1']['hdd_reads'] + h['qd32']['hdd_reads']}"
                         " |")
        L.append("")
    ceil = [(k, r) for k, r in res.items() if r.get("ceilings")]
    if ceil:
        L.append("### Raw ceilings\n")
        L.append("| disk | card randread QD1 | QD32 | card randwrite QD32 | "
                 "HDD randread QD1 | QD32 | HDD randwrite QD16 | "
                 "HDD seq read MB/s |")
        L.append("|---|" + "---:|" * 7)
        for (d, _), r in sorted(ceil):
            c = r["ceilings"]
            L.append(f"| {d} | {c['card_randread_qd1_iops']:.0f} | "
                     f"{c['card_randread_qd32_iops']:.0f} | "
                     f"{c['card_randwrite_qd32_iops']:.0f} | "
                     f"{c['hdd_randread_qd1_iops']:.0f} | "
                     f"{c['hdd_randread_qd32_iops']:.0f} | "
                     f"{c['hdd_randwrite_qd16_iops']:.0f} | "
                     f"{c['hdd_seqread_bps'] / 1e6:.0f} |")
        L.append("")
    return L


def pg_best_peer(res, disk, size):
    peers = {c: res.get((disk, c), {}).get("pgbench", {}).get(size, {})
             .get("tps") for c in PEERS}
    peers = {c: v for c, v in peers.items() if v}
    if not peers:
        return None, None
    best = max(peers, key=peers.get)
    return best, peers[best]


def pg_counters(c, p):
    """The cache's own counters over the measured runs, in one cell."""
    if c.startswith("vcache"):
        v = p.get("vcache_stats") or {}
        keys = ("read_hits", "read_misses", "write_hits", "write_misses",
                "bypass_seq", "bypass_busy", "wb_blocks", "wb_ios",
                "backing_flushes", "wb_flushes", "wb_throttled", "flushes",
                "cache_flushes", "dirty_bytes")
        return " ".join(f"{k}={v[k]}" for k in keys if k in v)
    return p.get("status_end") or "-"


def cpu_ms(t):
    """Guest CPU time per transaction (ticks of 10 ms), by kind."""
    if "cpu_user" not in t:
        return "-"
    hz = 100

    def ms(*k):
        return sum(t.get("cpu_" + x, 0) for x in k) * 1000 / hz
    return (f"{ms('user', 'nice'):.1f}/{ms('system', 'irq', 'softirq'):.1f}"
            f"/{ms('idle', 'iowait'):.1f}")


def pg_card_table(rows):
    """What a transaction cost on the card, whichever cache sits on it:
    the firmware's commands and the block layer's times on the raw card
    (runs from before the card counters were recorded have none)."""
    rows = [(c, p) for c, p in rows if p.get("card_per_tx")]
    if not rows:
        return []
    L = ["Per transaction on the card (firmware command counters; "
         "average times from the raw card's /sys/block stat):\n",
         "| cache | card writes | FLUSH | FUA writes | read-modify-writes "
         "| KiB written | card FLUSH avg ms | card write avg ms "
         "| guest CPU ms: user/system+irq/idle+iowait |",
         "|---|" + "---:|" * 8]
    for c, p in rows:
        t, k = p["card_per_tx"], p.get("card") or {}

        def avg(ms, n):
            return k[ms] / k[n] if k.get(n) else None
        L.append(f"| {label(c)} | {fmt(t.get('fw_write_cmds'), '.2f')} | "
                 f"{fmt(t.get('fw_flush_cmds'), '.2f')} | "
                 f"{fmt(t.get('fw_fua_cmds'), '.2f')} | "
                 f"{fmt(t.get('fw_rmw_writes'), '.2f')} | "
                 f"{fmt(t.get('fw_bytes_written') and t['fw_bytes_written'] / 1024, '.1f')} | "
                 f"{fmt(avg('blk_flush_ms', 'blk_flushes'), '.2f')} | "
                 f"{fmt(avg('blk_write_ms', 'blk_writes'), '.2f')} | "
                 f"{cpu_ms(t)} |")
    L.append("")
    return L


def pg_table(res, disks):
    L = []
    for disk in disks:
        for size in ("small", "large"):
            rows = [(c, res[(disk, c)]["pgbench"][size]) for c in order(res)
                    if size in (res.get((disk, c), {}).get("pgbench") or {})]
            if not rows:
                continue
            sc = rows[0][1]
            desc = ("smaller than" if size == "small" else
                    "three times") + " the cache"
            L.append(f"### pgbench on the {disk} HDD, database {desc} "
                     f"(scale {sc['scale']}, {sc['clients']} clients, "
                     f"{sc['reps']} runs of {sc['run_s']} s after "
                     f"{sc['warm_s']} s warm-up)\n")
            L.append("| cache | TPS | runs min-max (CV) | vs best peer | "
                     "latency avg/p95/p99 ms | read hit | write hit | "
                     "HDD I/O per tx (r+w) | DB / cache | failed |")
            L.append("|---|" + "---:|" * 9)
            _, bt = pg_best_peer(res, disk, size)
            for c, p in rows:
                v = p.get("vcache_stats") or {}
                if v.get("read_bytes"):   # bytes: hits count blocks,
                    p["read_hit_ratio"] = (v.get("read_hit_bytes", 0) /
                                           v["read_bytes"])
                if v.get("write_bytes"):  # reads/writes count requests
                    p["write_hit_ratio"] = (v.get("write_hit_bytes", 0) /
                                            v["write_bytes"])
                if p.get("tps") is None:
                    err = [e for e in res[(disk, c)].get("errors", [])
                           if "pgbench" in e]
                    L.append(f"| {label(c)} | not measured: "
                             f"{'; '.join(err)[:200]} |")
                    continue
                L.append(
                    f"| {label(c)} | {p['tps']:.1f} | "
                    f"{fmt(p['tps_min'], '.1f')}-{fmt(p['tps_max'], '.1f')}"
                    f" ({fmt(p['tps_cv'], '.3f')}) | "
                    f"{fmt(bt and p['tps'] / bt, '.2f')}{'x' if bt else ''} | "
                    f"{fmt(p['lat_avg_ms'], '.1f')}/"
                    f"{fmt(p['lat_p95_ms'], '.1f')}/"
                    f"{fmt(p['lat_p99_ms'], '.1f')} | "
                    f"{pct(p.get('read_hit_ratio'))} | "
                    f"{pct(p.get('write_hit_ratio'))} | "
                    f"{fmt(p['backing_ios_per_tx'], '.2f')} "
                    f"({fmt(p['backing_reads_per_tx'], '.2f')}+"
                    f"{fmt(p['backing_writes_per_tx'], '.2f')}) | "
                    f"{fmt(p.get('db_to_cache'), '.2f')} | "
                    f"{p.get('failed', 0)} |")
            L.append("")
            L += pg_card_table(rows)
            L.append("Cache counters over the measured runs (vcache: "
                     "`vcache-config show --json` deltas, dirty_bytes at "
                     "the end; peers: their status at the end):\n")
            for c, p in rows:
                if p.get("tps") is not None:
                    L.append(f"- {label(c)}: `{pg_counters(c, p)}`")
            L.append("")
    return L


def targets(res):
    L = ["### Targets\n"]
    for disk in ("throttled", "seek"):
        v = res.get((disk, "vcache"), {}).get("oltp")
        peers = {c: res.get((disk, c), {}).get("oltp") for c in PEERS}
        peers = {c: o["iops"] for c, o in peers.items() if o}
        if not v or not peers:
            L.append(f"- OLTP on the {disk} HDD: NOT MEASURED")
            continue
        best = max(peers, key=peers.get)
        ratio = v["iops"] / peers[best] if peers[best] else 0
        L.append(f"- OLTP mix on the {disk} HDD, vcache >= 1.5x the best "
                 f"peer: {'MET' if ratio >= 1.5 else 'MISSED'} (vcache "
                 f"{v['iops']:.0f} IOPS, best peer {LABEL[best]} "
                 f"{peers[best]:.0f}: {ratio:.2f}x)")
    for disk in ("throttled", "seek"):
        for size in ("small", "large"):
            v = (res.get((disk, "vcache"), {}).get("pgbench") or {}) \
                .get(size, {}).get("tps")
            best, bt = pg_best_peer(res, disk, size)
            what = (f"pgbench on the {disk} HDD, database "
                    f"{'smaller than' if size == 'small' else '3x'} the "
                    f"cache, vcache >= 1.5x the best peer")
            if not v or not bt:
                L.append(f"- {what}: NOT MEASURED")
                continue
            n = sum(1 for c in PEERS if (res.get((disk, c), {})
                                         .get("pgbench") or {})
                    .get(size, {}).get("tps"))
            L.append(f"- {what}: {'MET' if v >= 1.5 * bt else 'MISSED'} "
                     f"(vcache {v:.1f} TPS, best peer {LABEL[best]} "
                     f"{bt:.1f}: {v / bt:.2f}x"
                     f"{'' if n == len(PEERS) else f'; only {n} of 3 peers measured'})")
    v = res.get(("seek", "vcache"), {}).get("drain")
    b = res.get(("seek", "bcache"), {}).get("drain")
    if v and b:
        vs, bs = v["seconds"], b["seconds"]
        lim = res[("seek", "bcache")]["drain_limit_s"]
        vr = v["dirty_bytes_at_start"] / vs if vs else None
        br = (b["dirty_bytes_at_start"] / bs if bs else None)
        if vs is None:
            verdict, why = "MISSED", "vcache did not finish"
        elif bs is None:
            verdict, why = "MET", f"bcache did not finish in {lim} s"
            verdict = "MET" if 2 * vs <= lim else "MISSED"
        else:
            verdict = "MET" if 2 * vs <= bs else "MISSED"
            why = f"{bs / vs:.2f}x" if vs else "-"
        L.append(f"- drain on the seek model, vcache >= 2x faster than "
                 f"bcache: {verdict} (vcache {fmt(vs, '.1f', 'unfinished')}"
                 f" s for {v['dirty_bytes_at_start'] >> 20} MiB dirty, "
                 f"bcache {fmt(bs, '.1f', 'unfinished')} s for "
                 f"{b['dirty_bytes_at_start'] >> 20} MiB: {why}; dirty "
                 f"bytes cleaned per second: vcache {fmt(vr and vr / 1e6, '.2f')}"
                 f" MB/s, bcache {fmt(br and br / 1e6, '.2f')} MB/s)")
    else:
        L.append("- drain on the seek model: NOT MEASURED")
    for (d, c), r in res.items():
        if c == "vcache" and r.get("hit"):
            q = r["hit"]["qd32"]["ratio"]
            q1 = r["hit"]["qd1"]["ratio"]
            L.append(f"- hit path >= 0.95 of the raw card: "
                     f"{'MET' if q >= 0.95 else 'MISSED'} (QD32 {q:.2f}, "
                     f"QD1 {q1:.2f})")
    fp = res.get(("seek", "vcache-fp30"), {}).get("oltp")
    th = res.get(("seek", "vcache-thr"), {}).get("oltp")
    if fp and th:
        L.append(f"- flush-period steadiness (seek model): CV of the 10 s "
                 f"IOPS {fmt(fp['cv_10s'], '.3f')} with a 30 s flush "
                 f"period, {fmt(th['cv_10s'], '.3f')} with threshold-only "
                 f"cleaning (IOPS {fp['iops']:.0f} vs {th['iops']:.0f})")
    return L


def plots(res, d):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return [f"(no plots: matplotlib missing: {e})"]
    made = []
    for disk in ("throttled", "seek"):
        rs = {c: res[(disk, c)] for c in order(res) if (disk, c) in res
              and (res[(disk, c)].get("oltp") or res[(disk, c)].get("drain"))}
        if not rs:          # no fio workload on this disk
            continue
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for c, r in rs.items():
            s = (r.get("oltp") or {}).get("iops_10s")
            if s:
                ax.plot([10 * (i + 1) for i in range(len(s))], s,
                        marker="o", label=label(c))
        ax.set_xlabel("s into the measured window")
        ax.set_ylabel("IOPS (10 s mean)")
        ax.set_yscale("log")
        ax.set_title(f"OLTP mix, {disk} HDD: IOPS over time")
        ax.legend(fontsize=8)
        p = os.path.join(d, f"iops-{disk}.png")
        fig.tight_layout()
        fig.savefig(p, dpi=90)
        plt.close(fig)
        made.append(p)

        fig, ax = plt.subplots(figsize=(8, 4.5))
        names = [c for c in rs if rs[c].get("oltp")]
        w = 0.25
        for i, (k, lab) in enumerate((("p50_us", "p50"), ("p99_us", "p99"),
                                      ("p999_us", "p99.9"))):
            ax.bar([j + (i - 1) * w for j in range(len(names))],
                   [rs[c]["oltp"]["read_lat"][k] / 1000 for c in names], w,
                   label=f"read {lab}")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([label(c) for c in names], fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("read latency, ms")
        ax.set_title(f"OLTP mix, {disk} HDD: read latency percentiles")
        ax.legend(fontsize=8)
        p = os.path.join(d, f"latency-{disk}.png")
        fig.tight_layout()
        fig.savefig(p, dpi=90)
        plt.close(fig)
        made.append(p)

        fig, ax = plt.subplots(figsize=(8, 4.5))
        for c, r in rs.items():
            cv = (r.get("drain") or {}).get("curve")
            if cv:
                ax.plot([x[0] for x in cv], [x[1] / 2**20 for x in cv],
                        label=label(c))
        ax.set_xlabel("s after the mix")
        ax.set_ylabel("dirty MiB")
        ax.set_title(f"Drain, {disk} HDD")
        ax.legend(fontsize=8)
        p = os.path.join(d, f"drain-{disk}.png")
        fig.tight_layout()
        fig.savefig(p, dpi=90)
        plt.close(fig)
        made.append(p)
    return made


def main():
    d = sys.argv[1]
    res = load(d)
    cond = {}
    if os.path.exists(os.path.join(d, "conditions.json")):
        with open(os.path.join(d, "conditions.json")) as f:
            cond = json.load(f)
    L = table(res, cond) + targets(res)
    errs = [f"- {k[0]}/{k[1]}: {e}" for k, r in res.items()
            for e in r.get("errors", [])]
    if errs:
        L += ["", "### Errors", ""] + errs
    made = plots(res, d)
    L += ["", "Plots: " + ", ".join(os.path.relpath(p, d) for p in made)
          if made and not made[0].startswith("(") else str(made)]
    text = "\n".join(L) + "\n"
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write(text)
    summary = {f"{k[0]}-{k[1]}": {kk: v for kk, v in r.items()
                                  if kk in ("oltp", "drain", "hit",
                                            "ceilings", "pgbench",
                                            "errors")}
               for k, r in res.items()}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
