// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized model-based test of the vcache engine.
 *
 * Millions of host operations (reads, writes with and without FUA and
 * PREFLUSH, FLUSH, discards, sequential streams) interleaved with
 * management (mode and policy switches, tunables, PID lists, blocking and
 * background flush on demand, detach and reattach, clean shutdown and
 * reload, optionally power cuts and reload) run against the real engine
 * on simulated devices, while a reference model tracks every backing
 * sector.  Every read is checked against the model; after flush on demand
 * and detach the backing device itself is compared; after a power cut
 * nothing older than the durable version may come back.
 *
 * Reproducible: the seed is printed; --seed and --ops replay a run.
 *
 *   model [--seed N] [--ops N] [--ndev N] [--queued] [--crash] [--policy P]
 *         [--errors none|cache|backing|both|lossy] [--block-size B]
 *         [--backing-mib N] [--cache-kib N] [-v]
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

struct run {
	struct harness h;
	u64 ops;
	bool queued;
	bool crash;
	int errors;		/* 0 none, 1 cache writes, 2 backing, 3 lossy, 4 both */
	u64 stream_next[4][H_MAX_DEV];
	/* figures */
	u64 n_mode, n_mode_busy, n_policy, n_param, n_fod, n_bgflush, n_detach;
	u64 n_overtake;		/* whole-block writes racing a read */
	u64 n_shutdown, n_crash, n_pid, n_seq;
	u64 n_cut_loaded, n_force, n_load_retry, n_sweeps;
	struct h_io *slots[64];
	unsigned int nslots;
	bool cut_armed;		/* a power cut may strike any I/O */
	unsigned int interrupt_after;	/* progress calls before ^C */
	bool errors_on;		/* injection active right now */
	u64 n_progress, n_interrupted;
};

enum { ERR_NONE, ERR_CACHE, ERR_BACKING, ERR_LOSSY, ERR_BOTH };

static struct harness *H;

#define FAILED(h) ((h)->failures != 0)

static void note(struct harness *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct harness *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->last_op, sizeof(h->last_op), fmt, ap);
	va_end(ap);
	if (h->o.verbose > 2)
		fprintf(stderr, "op: %s\n", h->last_op);
}

static int pick_dev(struct run *r)
{
	struct harness *h = &r->h;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		int d = (int)h_rand_below(h, h->o.ndev);

		if (h->dev[d].id != H_NO_ID)
			return d;
	}
	return -1;
}

/* Hot/cold ranges: 80% of I/O in the first 20% of each device. */
static void pick_range(struct run *r, int d, u64 *sector, u32 *len)
{
	struct harness *h = &r->h;
	u64 n = h->dev[d].nr_sectors, spb = h->cfg.block_size / H_SECT;
	u64 start, sects;

	if (h_rand_below(h, 10) < 8)
		start = h_rand_below(h, n / 5);
	else
		start = h_rand_below(h, n);
	switch (h_rand_below(h, 4)) {
	case 0:		/* sub-block, unaligned */
		sects = 1 + h_rand_below(h, spb * 2);
		break;
	case 1:		/* multi-block, unaligned */
		sects = 1 + h_rand_below(h, spb * 16);
		break;
	default:	/* block-aligned */
		start -= start % spb;
		sects = spb * (1 + h_rand_below(h, 8));
	}
	if (start + sects > n)
		sects = n - start;
	*sector = start;
	*len = (u32)(sects * H_SECT);
}

static void wait_slot(struct run *r)
{
	struct harness *h = &r->h;
	unsigned int depth = r->queued ? 8 : 1;

	while (h->inflight >= depth)
		if (!h_pump(h))
			h_advance(h, 100000);
}

/*
 * May any host I/O fail right now?  Only while injection is on (backing
 * or lossy errors; cache write errors too: a write over a block whose
 * record cannot be cleared fails, cache/API.md) or a power cut is armed.
 * Outside the windows the checks are strict, except that the blocks found
 * lost (dev.lost) may fail with -EIO.
 */
static bool errors_possible(struct run *r)
{
	return r->errors_on || r->cut_armed || simdev_power_is_cut(r->h.pw);
}

static void reap_done(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nslots;) {
		if (r->slots[i]->done) {
			h_io_free(r->slots[i]);
			r->slots[i] = r->slots[--r->nslots];
		} else {
			i++;
		}
	}
}

/*
 * May a management operation fail?  With device errors on, -EIO is a
 * legitimate answer (a record that cannot be written, a block that cannot
 * be written back); the data checks that follow success stay strict.
 */
static bool mgmt_err_ok(struct run *r, int ret)
{
	return errors_possible(r) || (r->errors_on && ret == -EIO);
}

static void host_op_over(struct run *r, int op, u32 flags, int d,
			 u64 sector, u32 len, u64 stream, bool over_reads);

static void host_op(struct run *r, int op, u32 flags, int d, u64 sector,
		    u32 len, u64 stream)
{
	host_op_over(r, op, flags, d, sector, len, stream, false);
}

/* @over_reads: a write may race reads in flight on its range */
static void host_op_over(struct run *r, int op, u32 flags, int d,
			 u64 sector, u32 len, u64 stream, bool over_reads)
{
	struct harness *h = &r->h;
	struct h_io *io;

	if (len && !(over_reads ? h_range_reads_only(h, d, sector, len) :
		     h_range_free(h, d, sector, len)))
		return;
	io = h_io_new(h, d, op, flags, sector, len);
	io->tolerate_err = errors_possible(r);
	io->hio.stream = stream;
	io->hio.pid = 100 + (s32)(stream & 3);
	io->hio.tgid = 100;
	note(h, "%s flags %#x dev %d sector %llu len %u",
	     op == VC_OP_READ ? "read" : op == VC_OP_WRITE ? "write" :
	     op == VC_OP_FLUSH ? "flush" : "discard", flags, d,
	     (unsigned long long)sector, len);
	h_submit(h, io);
	if (!r->queued) {
		h_wait(h, io);
		h_io_free(io);
		return;
	}
	/* queued: freed by reap_done() once completed */
	r->slots[r->nslots++] = io;
	while (r->nslots >= VC_ARRAY_SIZE(r->slots)) {
		reap_done(r);
		if (r->nslots >= VC_ARRAY_SIZE(r->slots) && !h_pump(h))
			h_advance(h, 100000);
	}
}

static void reap_all(struct run *r)
{
	h_quiesce(&r->h);
	reap_done(r);
}

static void op_rw(struct run *r)
{
	struct harness *h = &r->h;
	int d = pick_dev(r);
	u64 sector, x = h_rand_below(h, 100);
	u32 len, flags = 0;

	if (d < 0)
		return;
	pick_range(r, d, &sector, &len);
	wait_slot(r);
	if (x < 52) {
		host_op(r, VC_OP_READ, 0, d, sector, len,
			100 + h_rand_below(h, 8));
		return;
	}
	if (x < 97 && r->queued && h_rand_below(h, 16) == 0) {
		/*
		 * A read of part of a block, then a write of the whole block
		 * while the read (a miss: a fill reading the disk) is in
		 * flight: the write may take the block over (racy read).
		 */
		u32 bs = h->cfg.block_size;
		u64 spb = bs / H_SECT;

		sector -= sector % spb;
		if (sector + spb > h->dev[d].nr_sectors)
			return;
		host_op(r, VC_OP_READ, 0, d, sector + h_rand_below(h, spb), 512,
			100 + h_rand_below(h, 8));
		wait_slot(r);
		host_op_over(r, VC_OP_WRITE, 0, d, sector, bs,
			     100 + h_rand_below(h, 8), true);
		r->n_overtake++;
		return;
	}
	if (x < 97) {
		if (h_rand_below(h, 20) == 0)
			flags |= VC_IO_FUA;
		if (h_rand_below(h, 30) == 0)
			flags |= VC_IO_PREFLUSH;
		host_op(r, VC_OP_WRITE, flags, d, sector, len,
			100 + h_rand_below(h, 8));
		return;
	}
	host_op(r, VC_OP_DISCARD, 0, d, sector, len, 0);
}

/* Requests crossing or past the end of the device must be refused. */
static void op_beyond_end(struct run *r)
{
	struct harness *h = &r->h;
	int d = pick_dev(r);
	u64 n;
	struct h_io *io;

	if (d < 0)
		return;
	reap_all(r);
	n = h->dev[d].nr_sectors;
	io = h_io_new(h, d, h_rand_below(h, 2) ? VC_OP_READ : VC_OP_WRITE, 0,
		      h_rand_below(h, 2) ? n - 1 : n + h_rand_below(h, 1000),
		      4096);
	io->tolerate_err = true;
	note(h, "I/O beyond the end of dev %d", d);
	h_submit(h, io);
	h_wait(h, io);
	if (io->err != -EINVAL && !errors_possible(r))
		h_fail(h, "I/O beyond the end: error %d, expected -EINVAL",
		       io->err);
	h_io_free(io);
}

/* A sequential stream: one of four submitters continues its run. */
static void op_seq(struct run *r)
{
	struct harness *h = &r->h;
	int d = pick_dev(r), k = (int)h_rand_below(h, 4);
	u64 *next, n;
	u32 len = 64 * 1024;

	if (d < 0)
		return;
	n = h->dev[d].nr_sectors;
	next = &r->stream_next[k][d];
	if (*next + len / H_SECT > n || h_rand_below(h, 64) == 0)
		*next = h_rand_below(h, n / 2);
	wait_slot(r);
	r->n_seq++;
	host_op(r, k & 1 ? VC_OP_WRITE : VC_OP_READ, 0, d, *next, len,
		1000 + (u64)k);
	*next += len / H_SECT;
}

static void op_mode(struct run *r)
{
	struct harness *h = &r->h;
	enum vc_mode m = (enum vc_mode)h_rand_below(h, VC_NR_MODES);
	bool degraded;
	int err;

	/* write-back most of the time: that is where bugs hide */
	if (h_rand_below(h, 2))
		m = VC_MODE_WB;
	/* degraded: write-back waits while a FLUSH drains (EBUSY) */
	degraded = vc_cache_get_mode(h->c) != vc_cache_get_requested_mode(h->c);
	note(h, "set mode %s", vc_mode_name(m));
	err = vc_cache_set_mode(h->c, m);
	if (err == -EBUSY && m == VC_MODE_WB && degraded) {
		note(h, "set mode write-back refused: a FLUSH drains");
		r->n_mode_busy++;
		return;
	}
	if (err)
		h_fail(h, "set_mode(%d) failed (%d)", m, err);
	if (vc_cache_get_requested_mode(h->c) != m)
		h_fail(h, "requested mode %d, engine says %d", m,
		       vc_cache_get_requested_mode(h->c));
	r->n_mode++;
}

static void op_policy(struct run *r)
{
	struct harness *h = &r->h;
	enum vc_policy p = (enum vc_policy)h_rand_below(h, VC_NR_POLICIES);

	note(h, "set policy %s", vc_policy_name(p));
	if (vc_cache_set_policy(h->c, p) || vc_cache_get_policy(h->c) != p)
		h_fail(h, "set_policy(%d) failed", p);
	r->n_policy++;
}

static void op_param(struct run *r)
{
	struct harness *h = &r->h;
	u64 v;
	int id, ret;

	switch (h_rand_below(h, 9)) {
	case 0:
		id = VC_P_DIRTY_HIGH_PCT;
		v = 20 + h_rand_below(h, 80);
		break;
	case 1:
		id = VC_P_DIRTY_LOW_PCT;
		v = h_rand_below(h, 20);
		break;
	case 2:
		id = VC_P_MAX_DIRTY_AGE_MS;
		v = h_rand_below(h, 3) ? 1000 * (1 + h_rand_below(h, 30)) : 0;
		break;
	case 3:
		id = VC_P_IDLE_MS;
		v = h_rand_below(h, 2) ? 100 * (1 + h_rand_below(h, 20)) : 0;
		break;
	case 4:
		id = VC_P_WB_MAX_INFLIGHT;
		v = 1 + h_rand_below(h, 64);
		break;
	case 5:
		id = VC_P_SEQ_ENABLE;
		v = h_rand_below(h, 2);
		break;
	case 6:
		id = VC_P_SEQ_THRESHOLD_KIB;
		v = 64 + h_rand_below(h, 512);
		break;
	case 7:
		id = VC_P_ADMISSION;
		v = h_rand_below(h, VC_NR_ADMISSIONS);
		break;
	default:
		id = VC_P_WB_MAX_IO_KIB;
		v = 4 << h_rand_below(h, 11);	/* 4 KiB .. the 4 MiB maximum */
		break;
	}
	note(h, "set param %s = %llu", vc_param_name(id),
	     (unsigned long long)v);
	ret = vc_cache_set_param(h->c, id, v);
	/* low > high watermark may be refused; anything else must work */
	if (ret && ret != -EINVAL)
		h_fail(h, "set_param %s=%llu: %d", vc_param_name(id),
		       (unsigned long long)v, ret);
	if (!ret && vc_cache_get_param(h->c, id) != v)
		h_fail(h, "param %s reads back %llu, set %llu",
		       vc_param_name(id),
		       (unsigned long long)vc_cache_get_param(h->c, id),
		       (unsigned long long)v);
	r->n_param++;
}

/* Processes 100..103 of the model: they exit and come back. */
static bool proc_dead[4];

static bool model_pid_alive(void *ctx, u64 pid)
{
	(void)ctx;
	if (pid >= 100 && pid < 104)
		return !__atomic_load_n(&proc_dead[pid - 100], __ATOMIC_RELAXED);
	return true;
}

static void op_pid(struct run *r)
{
	struct harness *h = &r->h;
	struct vc_pidlist *pl = vc_cache_pidlist(h->c);
	s32 pid = 100 + (s32)h_rand_below(h, 4);

	if (!pl)
		return;
	note(h, "pidlist op on %d", pid);
	switch (h_rand_below(h, 5)) {
	case 4:
		/* the process exits (expired at the next cleaner tick) */
		__atomic_store_n(&proc_dead[pid - 100], !proc_dead[pid - 100],
				 __ATOMIC_RELAXED);
		break;
	case 0:
		vc_pidlist_add(pl, VC_PID_DENY, pid);
		break;
	case 1:
		vc_pidlist_del(pl, VC_PID_DENY, pid);
		break;
	case 2:
		vc_pidlist_add(pl, VC_PID_ALLOW, pid);
		break;
	default:
		vc_cache_set_param(h->c, VC_P_PID_MODE, h_rand_below(h, 2));
	}
	r->n_pid++;
}

static int progress_cb(void *arg, const struct vc_flush_progress *p)
{
	struct run *r = arg;

	r->n_progress++;
	if (r->interrupt_after && !--r->interrupt_after)
		return 1;	/* the admin pressed ^C */
	if (p->done > p->target + 0 && p->target)
		h_fail(&r->h, "flush progress done %llu > target %llu",
		       (unsigned long long)p->done,
		       (unsigned long long)p->target);
	return 0;
}

/* Blocking flush on demand of one device or all, then check backing. */
static void op_flush_on_demand(struct run *r)
{
	struct harness *h = &r->h;
	int d = pick_dev(r);
	bool all = h_rand_below(h, 2);
	struct vc_stats st;
	int ret, i;

	if (d < 0)
		return;
	reap_all(r);
	/* some flushes get interrupted, from the callback or a "signal" */
	r->interrupt_after = h_rand_below(h, 4) == 0 ?
			     1 + (unsigned int)h_rand_below(h, 3) : 0;
	if (h_rand_below(h, 8) == 0)
		vc_posix_interrupt();
	note(h, "flush on demand %s%s", all ? "all" : "one device",
	     r->interrupt_after ? " (interrupted)" : "");
	ret = vc_cache_flush(h->c, all ? VC_DEV_ID_ALL : h->dev[d].id,
			     progress_cb, r);
	vc_posix_clear_interrupt();
	r->interrupt_after = 0;
	r->n_fod++;
	if (ret == -EINTR) {
		r->n_interrupted++;
		return;
	}
	if (ret) {
		if (!mgmt_err_ok(r, ret))
			h_fail(h, "flush on demand: %d", ret);
		return;
	}
	h_quiesce(h);
	if (errors_possible(r))
		return;
	for (i = 0; i < (int)h->o.ndev; i++) {
		if (!all && i != d)
			continue;
		if (h->dev[i].id == H_NO_ID)
			continue;
		h_verify_backing(h, i, false);
	}
	if (all) {
		vc_cache_get_stats(h->c, &st);
		/* new dirty data may only come from host writes: none ran */
		if (st.dirty_blocks)
			h_fail(h, "%llu dirty blocks after flushing all",
			       (unsigned long long)st.dirty_blocks);
	}
}

static void bg_done(void *arg, int result)
{
	int *res = arg;

	*res = result;
}

static void op_background_flush(struct run *r)
{
	struct harness *h = &r->h;
	static int result = 1;
	struct vc_flush_progress p;
	int ret;

	note(h, "background flush");
	if (result == 1) {
		ret = vc_cache_flush_start(h->c, VC_DEV_ID_ALL, bg_done,
					   &result);
		if (ret == -EBUSY)
			return;
		if (ret) {
			h_fail(h, "flush_start: %d", ret);
			return;
		}
		r->n_bgflush++;
		if (h_rand_below(h, 3) == 0) {
			vc_cache_flush_cancel(h->c);
			vc_cache_flush_get_progress(h->c, &p);
		}
		return;
	}
	vc_cache_flush_get_progress(h->c, &p);
	if (p.done > p.target)
		h_fail(h, "background progress done > target");
	result = 1;
}

static void op_detach(struct run *r)
{
	struct harness *h = &r->h;
	int d = pick_dev(r), ret;
	bool force = h_rand_below(h, 4) == 0;

	if (d < 0)
		return;
	reap_all(r);
	note(h, "detach dev %d%s", d, force ? " (force: dirty data dropped)" : "");
	ret = vc_cache_detach(h->c, h->dev[d].id, force ? VC_DETACH_FORCE : 0);
	r->n_detach++;
	if (ret) {
		if (!mgmt_err_ok(r, ret))
			h_fail(h, "detach: %d", ret);
		return;
	}
	h->dev[d].id = H_NO_ID;
	if (force) {
		/* what is left is what the backing device has */
		r->n_force++;
		h_resync_from_backing(h, d);
	} else if (!errors_possible(r) && !h->lose_window) {
		h_verify_backing(h, d, false);
		/*
		 * A detach clears the device's lost markers (cache/API.md):
		 * the blocks found lost read the backing device's data now.
		 */
		h_resync_from_backing(h, d);
	} else {
		/*
		 * Injection on, or blocks may have been lost since the last
		 * sweep: their markers went with the detach, unseen.
		 */
		h_resync_from_backing(h, d);
	}
	note(h, "reattach dev %d", d);
	ret = h_attach(h, d);
	if (ret)
		h_fail(h, "reattach: %d", ret);
}

static void set_errors(struct run *r, bool on);

/*
 * Load the cache.  With device errors on, a read error of the loader is a
 * fair answer (-EIO): the devices are then healed and the load retried.
 */
static int load_retry(struct run *r, char *err, size_t errlen)
{
	int ret = h_load(&r->h, err, errlen);

	if (ret == -EIO && r->errors_on) {
		if (r->h.c) {
			vc_cache_abandon(r->h.c);
			r->h.c = NULL;
		}
		set_errors(r, false);
		r->n_load_retry++;
		ret = h_load(&r->h, err, errlen);
	}
	return ret;
}

/* Clean shutdown, power cut, reload: everything acknowledged is back. */
static void op_shutdown(struct run *r)
{
	struct harness *h = &r->h;
	char err[160] = "";
	u32 flags = h_rand_below(h, 3) == 0 ? VC_SHUTDOWN_FLUSH : 0;
	int ret, d;

	reap_all(r);
	/*
	 * As a filesystem does at unmount: without this FLUSH, writes that
	 * went straight to a backing device's volatile cache (write-through,
	 * write-around, pass-through) may be lost by the power cut.
	 */
	note(h, "FLUSH before clean shutdown");
	for (d = 0; d < (int)h->o.ndev; d++)
		if (h->dev[d].id != H_NO_ID &&
		    h_do(h, d, VC_OP_FLUSH, 0, 0, 0) && !errors_possible(r))
			h_fail(h, "FLUSH before shutdown failed");
	note(h, "clean shutdown%s + power cut + load",
	     flags ? " (flush)" : "");
	ret = vc_cache_shutdown(h->c, flags);
	h->c = NULL;
	r->n_shutdown++;
	/*
	 * A failed final metadata write is reported (the next load then
	 * recovers the dirty blocks only): expected when cache writes fail.
	 */
	if (ret && !mgmt_err_ok(r, ret))
		h_fail(h, "shutdown: %d", ret);
	simdev_power_cut(h->pw);
	simdev_power_restore(h->pw);
	ret = load_retry(r, err, sizeof(err));
	if (ret) {
		h_fail(h, "load after clean shutdown: %d (%s)", ret, err);
		return;
	}
	if (!errors_possible(r)) {
		if (h->lose_window && !h->lossy)
			h_sweep_lost(h);
		for (d = 0; d < (int)h->o.ndev; d++)
			h_verify_all(h, d);
	}
}

/* Power cut at a random upcoming device write, then reload and check. */
static void op_crash(struct run *r)
{
	struct harness *h = &r->h;
	char err[160] = "";
	u64 k = 1 + h_rand_below(h, 40);
	unsigned int guard = 0;
	int ret;

	reap_all(r);
	note(h, "power cut armed at write +%llu", (unsigned long long)k);
	simdev_power_cut_at(h->pw, k, h_rand_below(h, 2));
	r->cut_armed = true;
	while (!simdev_power_is_cut(h->pw) && guard++ < 2000 && !FAILED(h)) {
		if (h_rand_below(h, 50) == 0)
			h_advance(h, 2000000000ULL);
		op_rw(r);
		h_pump(h);
	}
	if (!simdev_power_is_cut(h->pw))
		simdev_power_cut(h->pw);
	h_quiesce(h);
	reap_all(r);
	r->cut_armed = false;
	r->n_crash++;
	/* reload and check with healthy devices (errors resume later) */
	if (r->errors)
		set_errors(r, false);
	vc_cache_abandon(h->c);
	h->c = NULL;
	simdev_power_restore(h->pw);
	note(h, "load after power cut");
	ret = load_retry(r, err, sizeof(err));
	if (ret) {
		h_fail(h, "load after power cut: %d (%s)", ret, err);
		return;
	}
	r->n_cut_loaded++;
	h_verify_after_crash(h);
}

static void set_errors(struct run *r, bool on)
{
	struct harness *h = &r->h;
	u32 ppm = on ? 2000 : 0;
	u32 i;

	r->errors_on = on && r->errors;
	if (r->errors_on) {
		/*
		 * Requests already in flight meet the injected errors too
		 * (a record write they wait for fails, their cache write
		 * fails): they may fail from now on, as new ones may.
		 */
		for (i = 0; i < r->nslots; i++)
			r->slots[i]->tolerate_err = true;
		note(h, "errors on (%u requests in flight)", r->nslots);
	}
	switch (r->errors) {
	case ERR_CACHE:
		simdev_error_random(h->csd, SIMDEV_OP_WRITE, ppm, -EIO);
		break;
	case ERR_BACKING:
		for (i = 0; i < h->o.ndev; i++)
			simdev_error_random(h->dev[i].sd,
					    SIMDEV_OP_READ | SIMDEV_OP_WRITE,
					    ppm, -EIO);
		break;
	case ERR_BOTH:
		simdev_error_random(h->csd, SIMDEV_OP_WRITE, ppm, -EIO);
		for (i = 0; i < h->o.ndev; i++)
			simdev_error_random(h->dev[i].sd,
					    SIMDEV_OP_READ | SIMDEV_OP_WRITE,
					    ppm, -EIO);
		break;
	case ERR_LOSSY:
		simdev_error_random(h->csd, SIMDEV_OP_READ | SIMDEV_OP_WRITE,
				    ppm, -EIO);
		for (i = 0; i < h->o.ndev; i++)
			simdev_error_random(h->dev[i].sd,
					    SIMDEV_OP_READ | SIMDEV_OP_WRITE,
					    ppm, -EIO);
		/* only while on; the blocks it lost stay marked (dev.lost) */
		h->lossy = on;
		if (on)
			h->lose_window = true;
		break;
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: model [--seed N] [--ops N] [--ndev N] [--queued] [--crash]\n"
		"             [--errors none|cache|backing|both|lossy] [--block-size B]\n"
		"             [--backing-mib N] [--cache-kib N] [--trace DEV:SECTOR]\n"
		"             [--policy fifo|lru|s3fifo|tinylfu] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "ops", 1, NULL, 'n' },
		{ "ndev", 1, NULL, 'd' }, { "queued", 0, NULL, 'q' },
		{ "crash", 0, NULL, 'c' }, { "errors", 1, NULL, 'e' },
		{ "block-size", 1, NULL, 'b' }, { "backing-mib", 1, NULL, 'B' },
		{ "cache-kib", 1, NULL, 'C' }, { "verbose", 0, NULL, 'v' },
		{ "trace", 1, NULL, 'T' }, { "policy", 1, NULL, 'P' },
		{ NULL, 0, NULL, 0 }
	};
	static struct run run;
	struct run *r = &run;
	struct h_opts o = {
		.seed = (u64)time(NULL) ^ ((u64)clock() << 20),
		.ndev = 2, .backing_sectors = 8 * 2048, .cache_sectors = 4096 * 2,
		.block_size = 4096, .cut_mode = SIMDEV_CUT_RANDOM_WRITES,
		.volatile_backing = true,
	};
	struct harness *h = &r->h;
	struct vc_stats st;
	u64 i, t0;
	int c, ret, trace_dev = 0;
	bool seed_given = false;
	long long trace_sector = -1;
	int policy = VC_POLICY_LRU;

	r->ops = 200000;
	while ((c = getopt_long(argc, argv, "s:n:d:qce:b:B:C:vT:P:", lo, NULL)) != -1) {
		switch (c) {
		case 'P':
			for (policy = 0; policy < VC_NR_POLICIES; policy++)
				if (!strcmp(optarg, vc_policy_name((enum vc_policy)policy)))
					break;
			if (policy == VC_NR_POLICIES)
				usage();
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			seed_given = true;
			break;
		case 'n': r->ops = strtoull(optarg, NULL, 0); break;
		case 'd': o.ndev = (u32)strtoul(optarg, NULL, 0); break;
		case 'q': r->queued = true; break;
		case 'c': r->crash = true; break;
		case 'b': o.block_size = (u32)strtoul(optarg, NULL, 0); break;
		case 'B': o.backing_sectors = strtoull(optarg, NULL, 0) * 2048; break;
		case 'C': o.cache_sectors = strtoull(optarg, NULL, 0) * 2; break;
		case 'v': o.verbose++; break;
		case 'T':
			if (sscanf(optarg, "%d:%lld", &trace_dev,
				   &trace_sector) != 2)
				usage();
			break;
		case 'e':
			if (!strcmp(optarg, "none")) r->errors = ERR_NONE;
			else if (!strcmp(optarg, "cache")) r->errors = ERR_CACHE;
			else if (!strcmp(optarg, "backing")) r->errors = ERR_BACKING;
			else if (!strcmp(optarg, "lossy")) r->errors = ERR_LOSSY;
			else if (!strcmp(optarg, "both")) r->errors = ERR_BOTH;
			else usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	o.completion = r->queued ? SIMDEV_COMPLETE_QUEUED :
				   SIMDEV_COMPLETE_INLINE;
	printf("model: seed %llu ops %llu ndev %u block %u%s%s errors %d\n",
	       (unsigned long long)o.seed, (unsigned long long)r->ops, o.ndev,
	       o.block_size, r->queued ? " queued" : "",
	       r->crash ? " crash" : "", r->errors);
	fflush(stdout);
	H = h;
	ret = h_init(h, &o);
	if (ret) {
		fprintf(stderr, "model: bad options (%d)\n", ret);
		return 2;
	}
	h->trace_dev = trace_dev;
	h->trace_sector = trace_sector;
	if (trace_sector >= 0 && trace_dev < (int)o.ndev)
		simdev_trace(h->dev[trace_dev].sd, trace_sector);
	if (trace_sector >= 0 && getenv("MODEL_TRACE_CACHE"))
		simdev_trace(h->csd, -2);
	vc_posix_set_pid_alive(model_pid_alive, NULL);
	h->cfg.mode = VC_MODE_WB;
	h->cfg.policy = (u32)policy;	/* the start; op_policy() switches */
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 5000;
	ret = h_create(h);
	if (ret) {
		fprintf(stderr, "model: create/attach failed: %d\n", ret);
		return 1;
	}
	t0 = (u64)clock();
	for (i = 0; i < r->ops && !FAILED(h); i++) {
		u64 x = h_rand_below(h, 100000);

		h_advance(h, h_rand_below(h, 200000));
		if (h_rand_below(h, 3000) == 0)
			h_advance(h, 1000000000ULL * (1 + h_rand_below(h, 20)));
		if (r->errors && i % 20000 == 0) {
			bool on = (i / 20000) % 2 == 1;

			if (!on && (r->errors_on || h->lose_window)) {
				/*
				 * Window closed: finish its I/O, then find
				 * the blocks it lost; from here on only
				 * those may fail.
				 */
				set_errors(r, false);
				reap_all(r);
				note(h, "errors off: sweep for lost blocks");
				h_sweep_lost(h);
				r->n_sweeps++;
			}
			set_errors(r, on);
		}
		if (x < 90000)
			op_rw(r);
		else if (x < 94000)
			op_seq(r);
		else if (x < 97500) {
			int d = pick_dev(r);

			wait_slot(r);
			if (d >= 0)
				host_op(r, VC_OP_FLUSH, 0, d, 0, 0, 0);
		} else if (x < 98200)
			op_mode(r);
		else if (x < 98500)
			op_policy(r);
		else if (x < 99200)
			op_param(r);
		else if (x < 99500)
			op_pid(r);
		else if (x < 99600)
			op_background_flush(r);
		else if (x < 99700)
			op_flush_on_demand(r);
		else if (x < 99740)
			op_detach(r);
		else if (x < 99760)
			op_shutdown(r);
		else if (x < 99780 && r->crash)
			op_crash(r);
		else if (x < 99790)
			op_beyond_end(r);
		h_pump(h);
	}
	if (!FAILED(h)) {
		reap_all(r);
		/* errors off, then a full check through the engine */
		if (r->errors)
			set_errors(r, false);
		reap_all(r);
		if (h->lose_window) {
			h_sweep_lost(h);
			r->n_sweeps++;
		}
		for (c = 0; c < (int)h->o.ndev && !FAILED(h); c++)
			if (h->dev[c].id != H_NO_ID)
				h_verify_all(h, c);
	}
	memset(&st, 0, sizeof(st));
	if (h->c)
		vc_cache_get_stats(h->c, &st);
	printf("model: %llu ops (%llu reads, %llu writes, %llu flushes, %llu discards, %llu seq) in %.1f s CPU\n",
	       (unsigned long long)i, (unsigned long long)h->n_reads,
	       (unsigned long long)h->n_writes,
	       (unsigned long long)h->n_flushes,
	       (unsigned long long)h->n_discards,
	       (unsigned long long)r->n_seq,
	       (double)((u64)clock() - t0) / CLOCKS_PER_SEC);
	printf("model: lossy: %llu sweeps for lost blocks, %llu reads of lost blocks failed (-EIO); after crashes: %llu sector reads held to \"never older\" after a failed write, %llu discarded sectors durably rewritten checked against the write\n",
	       (unsigned long long)r->n_sweeps,
	       (unsigned long long)h->lost_reads,
	       (unsigned long long)h->strict_after_crash,
	       (unsigned long long)h->discard_superseded);
	printf("model: %llu sectors checked; mode %llu (%llu refused during a drain) policy %llu param %llu pid %llu fod %llu bgflush %llu detach %llu shutdown %llu crash %llu; host errors %llu, stale tolerated %llu\n",
	       (unsigned long long)h->sectors_checked,
	       (unsigned long long)r->n_mode,
	       (unsigned long long)r->n_mode_busy, (unsigned long long)r->n_policy,
	       (unsigned long long)r->n_param, (unsigned long long)r->n_pid,
	       (unsigned long long)r->n_fod, (unsigned long long)r->n_bgflush,
	       (unsigned long long)r->n_detach,
	       (unsigned long long)r->n_shutdown,
	       (unsigned long long)r->n_crash,
	       (unsigned long long)h->n_errors,
	       (unsigned long long)h->stale_tolerated);
	printf("model: forced detaches %llu; flush on demand: %llu progress reports, %llu interrupted; engine bypass: seq %llu pid %llu mode %llu admission %llu nospace %llu\n",
	       (unsigned long long)r->n_force,
	       (unsigned long long)r->n_progress,
	       (unsigned long long)r->n_interrupted,
	       (unsigned long long)st.bypass[VC_BYP_SEQ],
	       (unsigned long long)st.bypass[VC_BYP_PID],
	       (unsigned long long)st.bypass[VC_BYP_MODE],
	       (unsigned long long)st.bypass[VC_BYP_ADMISSION],
	       (unsigned long long)st.bypass[VC_BYP_NOSPACE]);
	printf("model: engine: hits %llu/%llu reads, dirty %llu, cleanings wm %llu age %llu idle %llu flush %llu mode %llu, md writes %llu, lost %llu, degradations %llu, mode now %s\n",
	       (unsigned long long)st.read_hits,
	       (unsigned long long)(st.read_hits + st.read_misses),
	       (unsigned long long)st.dirty_blocks,
	       (unsigned long long)st.cleanings[VC_CLEAN_WATERMARK],
	       (unsigned long long)st.cleanings[VC_CLEAN_AGE],
	       (unsigned long long)st.cleanings[VC_CLEAN_IDLE],
	       (unsigned long long)st.cleanings[VC_CLEAN_FLUSH],
	       (unsigned long long)st.cleanings[VC_CLEAN_MODE],
	       (unsigned long long)st.md_writes,
	       (unsigned long long)st.lost_blocks,
	       (unsigned long long)st.degradations,
	       vc_mode_name(st.mode));
	printf("model: whole-block writes racing a read %llu; engine (since its last load): fills overtaken %llu, writes that waited %llu, blocks read ahead %llu\n",
	       (unsigned long long)r->n_overtake,
	       (unsigned long long)st.fills_overtaken,
	       (unsigned long long)st.write_waits,
	       (unsigned long long)st.readahead_blocks);
	h_check_device_rules(h);
	ret = FAILED(h) ? 1 : 0;
	if (ret) {
		printf("model: FAILED (%llu failures); replay:",
		       (unsigned long long)h->failures);
		for (c = 0; c < argc; c++)
			printf(" %s", argv[c]);
		if (!seed_given)
			printf(" --seed %llu", (unsigned long long)o.seed);
		printf("\n");
	}
	else
		printf("model: OK\n");
	h_fini(h);
	return ret;
}
