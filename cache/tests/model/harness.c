// SPDX-License-Identifier: GPL-2.0
/*
 * harness: the real engine on simulated devices, with a reference model
 * of the backing devices' contents (see harness.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAGIC	0x76636163686531ULL	/* "vcache1" */

static void *xzalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p) {
		fprintf(stderr, "harness: out of memory\n");
		abort();
	}
	return p;
}

u64 h_rand(struct harness *h)
{
	u64 z = (h->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void h_fail(struct harness *h, const char *fmt, ...)
{
	va_list ap;

	h->failures++;
	if (h->failures > 20)
		return;
	fprintf(stderr, "MODEL FAILURE (seed %llu): ",
		(unsigned long long)h->o.seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  last op: %s\n", h->last_op);
}

/* ------------------------------------------------------------------ */
/* Data pattern */

void h_fill_sector(u8 *p, u32 dev, u64 sector, u32 ver)
{
	u64 *w = (u64 *)p;
	unsigned int i;

	w[0] = MAGIC;
	w[1] = dev;
	w[2] = sector;
	w[3] = ver;
	for (i = 4; i < H_SECT / 8; i++)
		w[i] = w[i - 1] * 6364136223846793005ULL +
		       1442695040888963407ULL + sector;
}

long long h_sector_version(const u8 *p, u32 dev, u64 sector)
{
	const u64 *w = (const u64 *)p;
	u8 ref[H_SECT];
	unsigned int i;

	if (w[0] != MAGIC) {
		for (i = 0; i < H_SECT / 8; i++)
			if (w[i])
				return -1;
		return 0;
	}
	if (w[1] != dev || w[2] != sector || !w[3] || w[3] > 0xffffffffULL)
		return -1;
	h_fill_sector(ref, dev, sector, (u32)w[3]);
	if (memcmp(ref, p, H_SECT))
		return -1;
	return (long long)w[3];
}

static void describe(const u8 *p, char *out, size_t n)
{
	const u64 *w = (const u64 *)p;

	if (w[0] == MAGIC)
		snprintf(out, n, "stamp dev %llu sector %llu version %llu",
			 (unsigned long long)w[1], (unsigned long long)w[2],
			 (unsigned long long)w[3]);
	else
		snprintf(out, n, "unstamped data %016llx %016llx",
			 (unsigned long long)w[0], (unsigned long long)w[1]);
}

/* ------------------------------------------------------------------ */
/* Clock, pump */

static u64 clock_fn(void *ctx)
{
	struct harness *h = ctx;

	return __atomic_load_n(&h->now, __ATOMIC_RELAXED);
}

void h_advance(struct harness *h, u64 ns)
{
	__atomic_store_n(&h->now, h->now + ns, __ATOMIC_RELAXED);
}

bool h_pump(struct harness *h)
{
	unsigned int n = 0;

	h->idle_jump_ns = 0;
	if (h->o.completion == SIMDEV_COMPLETE_QUEUED)
		n += simdev_complete(h->pw, 1 + (unsigned int)h_rand_below(h, 8));
	n += vc_posix_run_work();
	return n > 0;
}

/* Called by engine waits in manual mode. */
static bool pump_hook(void *ctx)
{
	struct harness *h = ctx;
	u64 next;

	if (h->o.completion == SIMDEV_COMPLETE_QUEUED &&
	    simdev_complete(h->pw, 1 + (unsigned int)h_rand_below(h, 8))) {
		h->idle_jump_ns = 0;
		vc_posix_run_work();
		return true;
	}
	if (vc_posix_run_work() && h->idle_jump_ns < H_HANG_NS)
		return true;
	/* nothing to do now: jump the clock to the next timer */
	next = vc_posix_next_work_ns();
	if (next != ~0ULL && h->idle_jump_ns < H_HANG_NS) {
		u64 step = next > h->now ? next - h->now : 1000000;

		h_advance(h, step);
		h->idle_jump_ns += step;
		return true;
	}
	if (h->idle_jump_ns >= H_HANG_NS && !h->hangs++)
		h_fail(h, "an engine wait made no progress for an hour of virtual time: hung");
	return false;
}

void h_quiesce(struct harness *h)
{
	unsigned int idle = 0;

	while (h->inflight || simdev_power_inflight(h->pw)) {
		if (h_pump(h)) {
			idle = 0;
			continue;
		}
		/* host I/O waiting for a timer (e.g. a busy block) */
		h_advance(h, 1000000);
		if (++idle > 100000) {
			h_fail(h, "quiesce: %u host I/O never completed",
			       h->inflight);
			abort();
		}
	}
}

/* ------------------------------------------------------------------ */
/* Setup */

static void dev_alloc(struct h_dev *hd, u64 n)
{
	hd->nr_sectors = n;
	hd->cur = xzalloc(n * 4);
	hd->dur = xzalloc(n * 4);
	hd->hi = xzalloc(n * 4);
	hd->alt = xzalloc(n * 4);
	hd->wepoch = xzalloc(n * 4);
	hd->unknown = xzalloc(n);
	hd->uany = xzalloc(n);
	hd->lost = xzalloc(n);
	hd->zsince = xzalloc(n);
	hd->busy = xzalloc(n);
	hd->rd = xzalloc(n * sizeof(*hd->rd));
}

static void dev_free(struct h_dev *hd)
{
	free(hd->cur);
	free(hd->dur);
	free(hd->hi);
	free(hd->alt);
	free(hd->wepoch);
	free(hd->unknown);
	free(hd->uany);
	free(hd->lost);
	free(hd->zsince);
	free(hd->busy);
	free(hd->rd);
}

int h_init(struct harness *h, const struct h_opts *o)
{
	struct simdev_config sc = { 0 };
	u32 i;

	memset(h, 0, sizeof(*h));
	h->o = *o;
	if (!o->ndev || o->ndev > H_MAX_DEV)
		return -EINVAL;
	h->rng = o->seed;
	h->trace_sector = -1;
	h->now = 1000000000ULL;
	vc_posix_set_clock(clock_fn, h);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(pump_hook, h);
	vc_posix_set_log_level(o->verbose > 1 ? 3 : 0);
	h->pw = simdev_power_new(o->completion, o->seed ^ 0xabcdefULL);
	sc.power = h->pw;
	sc.name = "cache";
	sc.nr_sectors = o->cache_sectors;
	sc.volatile_cache = true;
	sc.cut_mode = o->cut_mode;
	sc.seed = o->seed * 3 + 1;
	/* the card's: 512-byte logical, 4 KiB physical blocks */
	sc.physical_block_size = 4096;
	h->csd = simdev_new(&sc);
	if (!h->csd)
		return -EINVAL;
	for (i = 0; i < o->ndev; i++) {
		struct h_dev *hd = &h->dev[i];
		char name[16];

		snprintf(name, sizeof(name), "hdd%u", i);
		sc.name = name;
		sc.nr_sectors = o->backing_sectors;
		sc.volatile_cache = o->volatile_backing;
		sc.ignore_flush = o->backing_ignores_flush;
		sc.physical_block_size = 0;
		sc.seed = o->seed * 7 + i;
		hd->sd = simdev_new(&sc);
		if (!hd->sd)
			return -EINVAL;
		snprintf(hd->uuid, sizeof(hd->uuid), "model-hdd-%u", i);
		hd->id = H_NO_ID;
		hd->epoch = 1;
		hd->durable_epoch = 0;
		dev_alloc(hd, o->backing_sectors);
	}
	vc_cache_config_default(&h->cfg);
	h->cfg.block_size = o->block_size;
	return 0;
}

void h_fini(struct harness *h)
{
	u32 i;

	if (h->c) {
		h_quiesce(h);
		vc_cache_abandon(h->c);
		h->c = NULL;
	}
	simdev_drain(h->pw);
	simdev_free(h->csd);
	for (i = 0; i < h->o.ndev; i++) {
		simdev_free(h->dev[i].sd);
		dev_free(&h->dev[i]);
	}
	simdev_power_free(h->pw);
	vc_posix_set_pump(NULL, NULL);
	vc_posix_set_clock(NULL, NULL);
	vc_posix_set_manual_work(false);
}

void h_check_device_rules(struct harness *h)
{
	struct simdev_stats ss;

	simdev_get_stats(h->csd, &ss);
	if (ss.overlapping_meta_writes)
		h_fail(h, "%llu metadata writes submitted while a write of the same sector was in flight",
		       (unsigned long long)ss.overlapping_meta_writes);
	/* metadata goes in whole physical blocks (vc_format.h) */
	if (ss.rmw_meta_writes)
		h_fail(h, "%llu metadata writes covered a 4 KiB physical block only in part",
		       (unsigned long long)ss.rmw_meta_writes);
}

int h_attach(struct harness *h, int d)
{
	struct h_dev *hd = &h->dev[d];
	int ret;

	ret = vc_cache_attach(h->c, simdev_dev(hd->sd), hd->uuid, &hd->id);
	if (ret)
		hd->id = H_NO_ID;
	return ret;
}

int h_create(struct harness *h)
{
	u32 i;
	int ret;

	ret = vc_cache_create(simdev_dev(h->csd), &h->cfg, &h->c);
	if (ret) {
		h->c = NULL;
		return ret;
	}
	for (i = 0; i < h->o.ndev; i++) {
		ret = h_attach(h, (int)i);
		if (ret)
			return ret;
	}
	return 0;
}

int h_load_detached(struct harness *h, char *err, size_t errlen)
{
	u32 i;
	int ret;

	for (i = 0; i < h->o.ndev; i++)
		h->dev[i].id = H_NO_ID;
	ret = vc_cache_load(simdev_dev(h->csd), 0, &h->c, err, errlen);
	if (ret)
		h->c = NULL;
	return ret;
}

int h_load(struct harness *h, char *err, size_t errlen)
{
	u32 i;
	int ret;

	ret = h_load_detached(h, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < h->o.ndev; i++) {
		ret = h_attach(h, (int)i);
		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Model updates */

static u32 durable_of(struct harness *h, struct h_dev *hd, u64 s)
{
	return hd->wepoch[s] < hd->durable_epoch ? hd->cur[s] : hd->dur[s];
}

/* Before changing sector s: fold the lazily durable state. */
static void settle(struct harness *h, struct h_dev *hd, u64 s)
{
	if (hd->wepoch[s] < hd->durable_epoch) {
		hd->dur[s] = hd->cur[s];
		hd->zsince[s] = 0;
	}
}

static void flush_done(struct h_dev *hd, u32 snap)
{
	if (snap + 1 > hd->durable_epoch)
		hd->durable_epoch = snap + 1;
}

/* A successful write or discard covering whole blocks clears their markers. */
static void clear_lost(struct harness *h, struct h_dev *hd, u64 sector,
		       u64 end)
{
	u64 spb = h->cfg.block_size / H_SECT;
	u64 b0 = (sector + spb - 1) / spb, b1 = end / spb, s;

	for (s = b0 * spb; s < b1 * spb; s++)
		hd->lost[s] = 0;
}

void h_all_durable(struct harness *h)
{
	u32 d;

	for (d = 0; d < h->o.ndev; d++) {
		flush_done(&h->dev[d], h->dev[d].epoch);
		h->dev[d].epoch++;
	}
}

static void model_write(struct harness *h, struct h_io *io)
{
	struct h_dev *hd = &h->dev[io->d];
	u64 s, end = io->hio.sector + io->hio.len / H_SECT;
	bool fua = io->hio.flags & VC_IO_FUA;

	for (s = io->hio.sector; s < end; s++) {
		if (io->err) {
			settle(h, hd, s);
			hd->unknown[s] = 1;
			hd->wepoch[s] = hd->epoch;
			if (io->ver > hd->hi[s])
				hd->hi[s] = io->ver;
			continue;
		}
		settle(h, hd, s);
		hd->cur[s] = io->ver;
		if (io->ver > hd->hi[s])
			hd->hi[s] = io->ver;
		hd->alt[s] = 0;
		hd->unknown[s] = 0;
		hd->uany[s] = 0;
		hd->wepoch[s] = hd->epoch;
		if (fua) {
			hd->dur[s] = io->ver;
			hd->zsince[s] = 0;
		}
	}
	if (!io->err)
		clear_lost(h, hd, io->hio.sector, end);
}

static void model_discard(struct harness *h, struct h_io *io)
{
	struct h_dev *hd = &h->dev[io->d];
	u64 s, end = io->hio.sector + io->hio.len / H_SECT;

	for (s = io->hio.sector; s < end; s++) {
		settle(h, hd, s);
		if (io->err) {
			hd->unknown[s] = 1;
			hd->uany[s] = 1;
		} else {
			if (hd->cur[s])
				hd->alt[s] = hd->cur[s];
			hd->cur[s] = 0;
			hd->zsince[s] = 1;
		}
		hd->wepoch[s] = hd->epoch;
	}
	if (!io->err)
		clear_lost(h, hd, io->hio.sector, end);
}

static void check_read(struct harness *h, struct h_io *io)
{
	struct h_dev *hd = &h->dev[io->d];
	u64 i, n = io->hio.len / H_SECT;

	for (i = 0; i < n; i++) {
		u64 s = io->hio.sector + i;
		const u8 *p = io->data + i * H_SECT;
		long long v = h_sector_version(p, (u32)io->d, s);
		char got[96];

		h->sectors_checked++;
		if (hd->unknown[s] && v >= 0)
			continue;
		if (hd->cur[s] == 0 && (v == 0 || (hd->alt[s] &&
						   v == hd->alt[s])))
			continue;
		if (v == hd->cur[s] && v != 0)
			continue;
		/*
		 * A write raced it: the data as submitted, or of a write
		 * since (in flight or done: the content names the sector).
		 */
		if (io->racy && v >= 0 && (u64)v >= io->subver[i] &&
		    (u64)v <= h->version && (v != 0 || io->subver[i] == 0))
			continue;
		/*
		 * Lost data (lossy runs) reads as an error, never as an
		 * older version: nothing is tolerated here.
		 */
		describe(p, got, sizeof(got));
		h_fail(h, "read dev %d sector %llu: expected version %u%s, got %s",
		       io->d, (unsigned long long)s, hd->cur[s],
		       hd->cur[s] ? "" : " (zeroes)", got);
		return;
	}
}

/* Is [sector, sector + len) inside harness device @d? */
static bool in_dev(struct harness *h, int d, u64 sector, u32 len)
{
	u64 n = h->dev[d].nr_sectors;

	return sector <= n && len / H_SECT <= n - sector;
}

/* Does [sector, +n) touch a block found lost? */
static bool range_lost(struct harness *h, int d, u64 sector, u64 n)
{
	u64 s;

	for (s = sector; s < sector + n; s++)
		if (h->dev[d].lost[s])
			return true;
	return false;
}

static void end_io(struct vc_host_io *hio, int err)
{
	struct h_io *io = vc_container_of(hio, struct h_io, hio);
	struct harness *h = io->h;
	u64 s, n = hio->len / H_SECT;

	if (io->done) {
		h_fail(h, "host I/O completed twice");
		return;
	}
	io->done = true;
	io->err = err;
	h->inflight--;
	if (h->trace_sector >= 0 && io->d == h->trace_dev &&
	    hio->op != VC_OP_FLUSH &&
	    (u64)h->trace_sector >= hio->sector &&
	    (u64)h->trace_sector < hio->sector + n) {
		const u8 *p = io->data ? io->data + (h->trace_sector -
						     hio->sector) * H_SECT :
					 NULL;

		fprintf(stderr, "trace: op %u flags %#x sector %llu len %u ver %u err %d mode %s%s%lld [%s]\n",
			hio->op, hio->flags, (unsigned long long)hio->sector,
			hio->len, io->ver, err,
			vc_mode_name(vc_cache_get_mode(h->c)),
			hio->op == VC_OP_READ ? " read version " : "",
			hio->op == VC_OP_READ && p ?
			h_sector_version(p, (u32)io->d, h->trace_sector) : 0LL,
			h->last_op);
	} else if (h->trace_sector >= 0 && hio->op == VC_OP_FLUSH) {
		fprintf(stderr, "trace: FLUSH err %d\n", err);
	}
	if (err) {
		h->n_errors++;
		if (err == -EIO && hio->op != VC_OP_FLUSH &&
		    in_dev(h, io->d, hio->sector, hio->len) &&
		    range_lost(h, io->d, hio->sector, n)) {
			if (hio->op == VC_OP_READ)
				h->lost_reads++;
		} else if (!io->tolerate_err)
			h_fail(h, "unexpected error %d on op %u dev %d sector %llu len %u",
			       err, hio->op, io->d,
			       (unsigned long long)hio->sector, hio->len);
	}
	if (hio->op != VC_OP_FLUSH && !in_dev(h, io->d, hio->sector, hio->len)) {
		/* a request beyond the device must be refused, nothing else */
		if (!err)
			h_fail(h, "I/O beyond the end of dev %d (sector %llu len %u) was accepted",
			       io->d, (unsigned long long)hio->sector,
			       hio->len);
		return;
	}
	if (hio->op != VC_OP_FLUSH)
		for (s = hio->sector; s < hio->sector + n; s++) {
			if (hio->op == VC_OP_READ) {
				h->dev[io->d].busy[s] &= ~H_BUSY_READ;
				h->dev[io->d].rd[s] = NULL;
			} else {
				h->dev[io->d].busy[s] &= ~H_BUSY_OTHER;
			}
		}
	/* PREFLUSH: everything acknowledged before submission is durable */
	if (!err && (hio->op == VC_OP_FLUSH ||
		     (hio->flags & VC_IO_PREFLUSH)))
		flush_done(&h->dev[io->d], io->snap);
	switch (hio->op) {
	case VC_OP_READ:
		if (!err && io->check)
			check_read(h, io);
		break;
	case VC_OP_WRITE:
		model_write(h, io);
		break;
	case VC_OP_DISCARD:
		model_discard(h, io);
		break;
	}
	/* the model's view of the traced sector after each op on it */
	if (h->trace_sector >= 0 && io->d == h->trace_dev &&
	    (hio->op == VC_OP_FLUSH ||
	     ((u64)h->trace_sector >= hio->sector &&
	      (u64)h->trace_sector < hio->sector + n))) {
		struct h_dev *hd = &h->dev[io->d];
		u64 t = (u64)h->trace_sector;

		fprintf(stderr, "trace: model %s%u: cur %u dur %u zsince %u wepoch %u epoch %u durable_epoch %u\n",
			hio->op == VC_OP_FLUSH ? "after FLUSH snap " : "",
			hio->op == VC_OP_FLUSH ? io->snap : 0,
			hd->cur[t], hd->dur[t], hd->zsince[t], hd->wepoch[t],
			hd->epoch, hd->durable_epoch);
	}
}

bool h_range_reads_only(struct harness *h, int d, u64 sector, u32 len)
{
	u64 s;

	if (!in_dev(h, d, sector, len))
		return true;
	for (s = sector; s < sector + len / H_SECT; s++)
		if (h->dev[d].busy[s] & H_BUSY_OTHER)
			return false;
	return true;
}

bool h_range_free(struct harness *h, int d, u64 sector, u32 len)
{
	u64 s;

	if (!in_dev(h, d, sector, len))
		return true;	/* refused by the engine, touches nothing */
	for (s = sector; s < sector + len / H_SECT; s++)
		if (h->dev[d].busy[s])
			return false;
	return true;
}

struct h_io *h_io_new(struct harness *h, int d, int op, u32 flags,
		      u64 sector, u32 len)
{
	struct h_io *io = xzalloc(sizeof(*io));
	u64 i;

	io->h = h;
	io->d = d;
	io->check = true;
	io->hio.dev_id = h->dev[d].id;
	io->hio.op = (u8)op;
	io->hio.flags = flags;
	io->hio.sector = sector;
	io->hio.len = len;
	io->hio.pid = 1;
	io->hio.tgid = 1;
	io->hio.end_io = end_io;
	if (len) {
		io->data = xzalloc(len);
		io->hio.buf = vc_buf_wrap(io->data, len);
	}
	if (op == VC_OP_WRITE) {
		io->ver = ++h->version;
		for (i = 0; i < len / H_SECT; i++)
			h_fill_sector(io->data + i * H_SECT, (u32)d,
				      sector + i, io->ver);
	} else if (op == VC_OP_READ) {
		memset(io->data, 0xee, len);
		io->subver = xzalloc((len / H_SECT + 1) * sizeof(u32));
	}
	return io;
}

void h_submit(struct harness *h, struct h_io *io)
{
	u64 s;

	if (io->hio.op == VC_OP_FLUSH || (io->hio.flags & VC_IO_PREFLUSH)) {
		io->snap = h->dev[io->d].epoch;
		h->dev[io->d].epoch++;
	}
	if (io->hio.op != VC_OP_FLUSH &&
	    in_dev(h, io->d, io->hio.sector, io->hio.len))
		for (s = io->hio.sector;
		     s < io->hio.sector + io->hio.len / H_SECT; s++) {
			struct h_dev *hd = &h->dev[io->d];

			if (io->hio.op == VC_OP_READ) {
				hd->busy[s] |= H_BUSY_READ;
				hd->rd[s] = io;
				io->subver[s - io->hio.sector] = hd->cur[s];
				continue;
			}
			hd->busy[s] |= H_BUSY_OTHER;
			if (hd->rd[s])
				hd->rd[s]->racy = true;
		}
	switch (io->hio.op) {
	case VC_OP_READ:
		h->n_reads++;
		break;
	case VC_OP_WRITE:
		h->n_writes++;
		break;
	case VC_OP_FLUSH:
		h->n_flushes++;
		break;
	default:
		h->n_discards++;
	}
	h->inflight++;
	h->idle_jump_ns = 0;
	vc_cache_submit(h->c, &io->hio);
}

int h_wait(struct harness *h, struct h_io *io)
{
	unsigned int idle = 0;

	while (!io->done) {
		if (h_pump(h)) {
			idle = 0;
			continue;
		}
		h_advance(h, 1000000);
		if (++idle > 100000) {
			h_fail(h, "host I/O never completed");
			abort();
		}
	}
	return io->err;
}

void h_io_free(struct h_io *io)
{
	if (!io)
		return;
	vc_buf_free(io->hio.buf);
	free(io->data);
	free(io->subver);
	free(io);
}

int h_do(struct harness *h, int d, int op, u32 flags, u64 sector, u32 len)
{
	struct h_io *io = h_io_new(h, d, op, flags, sector, len);
	int err;

	io->tolerate_err = h->lossy;
	h_submit(h, io);
	err = h_wait(h, io);
	h_io_free(io);
	return err;
}

void h_resync_from_backing(struct harness *h, int d)
{
	struct h_dev *hd = &h->dev[d];
	u8 p[H_SECT];
	u64 s;

	for (s = 0; s < hd->nr_sectors; s++) {
		long long v, dv;

		simdev_peek(hd->sd, s, p, H_SECT);
		v = h_sector_version(p, (u32)d, s);
		simdev_peek_durable(hd->sd, s, p, H_SECT);
		dv = h_sector_version(p, (u32)d, s);
		if (v < 0 || dv < 0) {
			h_fail(h, "dev %d sector %llu: the backing device holds data not written to it",
			       d, (unsigned long long)s);
			v = v < 0 ? 0 : v;
			dv = dv < 0 ? 0 : dv;
		}
		hd->cur[s] = (u32)v;
		hd->dur[s] = (u32)dv;
		if ((u32)v > hd->hi[s])
			hd->hi[s] = (u32)v;
		hd->alt[s] = 0;
		hd->unknown[s] = 0;
		hd->uany[s] = 0;
		hd->lost[s] = 0;
		/*
		 * Zeroes over durable data: a discard not yet made durable
		 * by a FLUSH.  A power cut may keep either (crash_ok()), even
		 * after a later write that is not durable either: the disk's
		 * volatile cache may write out the discard and lose the write
		 * (model seeds 10 and 5, cache and backing errors: a forced
		 * detach resynced from v and dv alone and forgot it).
		 */
		hd->zsince[s] = dv != 0 &&
				(v == 0 || simdev_pending_zeroes(hd->sd, s));
		hd->wepoch[s] = hd->epoch;	/* durable: dur, until a FLUSH */
	}
}

void h_prefill(struct harness *h, int d)
{
	struct h_dev *hd = &h->dev[d];
	u32 ver = ++h->version;
	u8 p[H_SECT];
	u64 s;

	for (s = 0; s < hd->nr_sectors; s++) {
		h_fill_sector(p, (u32)d, s, ver);
		simdev_poke(hd->sd, s, p, H_SECT);
		hd->cur[s] = ver;
		hd->dur[s] = ver;
		hd->hi[s] = ver;
		hd->wepoch[s] = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Whole-device checks */

#define CHUNK	(64u * 1024)

void h_verify_all(struct harness *h, int d)
{
	struct h_dev *hd = &h->dev[d];
	u64 s;

	for (s = 0; s < hd->nr_sectors; s += CHUNK / H_SECT) {
		u32 len = (u32)vc_min_u64(CHUNK, (hd->nr_sectors - s) * H_SECT);
		struct h_io *io = h_io_new(h, d, VC_OP_READ, 0, s, len);

		io->tolerate_err = h->lossy;
		h_submit(h, io);
		h_wait(h, io);
		h_io_free(io);
		if (h->failures)
			return;
	}
}

u64 h_verify_backing(struct harness *h, int d, bool durable)
{
	struct h_dev *hd = &h->dev[d];
	u8 p[H_SECT];
	u64 s, bad = 0;

	for (s = 0; s < hd->nr_sectors; s++) {
		u32 want = durable ? durable_of(h, hd, s) : hd->cur[s];
		long long v;

		if (hd->unknown[s])
			continue;
		if (durable)
			simdev_peek_durable(hd->sd, s, p, H_SECT);
		else
			simdev_peek(hd->sd, s, p, H_SECT);
		v = h_sector_version(p, (u32)d, s);
		if (v == want || (want == 0 && hd->alt[s] && v == hd->alt[s]))
			continue;
		/* a lost block's newest data never made it home */
		if (hd->lost[s] && v >= 0 && v <= hd->hi[s])
			continue;
		if (!bad)
			h_fail(h, "backing dev %d sector %llu (%s): expected version %u, found %lld",
			       d, (unsigned long long)s,
			       durable ? "durable" : "current", want, v);
		bad++;
	}
	return bad;
}

u64 h_blocks_only_in_cache(struct harness *h, int d)
{
	struct h_dev *hd = &h->dev[d];
	u64 spb = h->cfg.block_size / H_SECT, b, s, n = 0;
	u8 p[H_SECT];

	for (b = 0; b < hd->nr_sectors / spb; b++) {
		for (s = b * spb; s < (b + 1) * spb; s++) {
			u32 want = durable_of(h, hd, s);
			long long v;

			/*
			 * Discarded sectors may hold anything (a discard is
			 * superseded once a later write is durable); lost
			 * blocks read as errors.
			 */
			if (hd->unknown[s] || !want || hd->lost[s] ||
			    (hd->zsince[s] &&
			     hd->wepoch[s] >= hd->durable_epoch) ||
			    !hd->cur[s])
				continue;
			simdev_peek_durable(hd->sd, s, p, H_SECT);
			v = h_sector_version(p, (u32)d, s);
			/* newer data on the backing device is fine */
			if (v < (long long)want) {
				n++;
				break;
			}
		}
	}
	return n;
}

/*
 * One sector read after a crash: is @v (h_sector_version) allowed?
 * "Undefined but never older": only a discard (completed, or in flight at
 * the cut, and not superseded by a durable write) lets anything that was
 * once written come back; a failed or interrupted write leaves the old
 * data or its own, nothing older than the durable version.
 */
static bool crash_ok(struct harness *h, struct h_dev *hd, u64 s, long long v)
{
	u32 dv;

	/* a write or discard made durable by a later FLUSH settles */
	if (hd->zsince[s] && hd->cur[s] && !hd->uany[s] &&
	    hd->wepoch[s] < hd->durable_epoch)
		h->discard_superseded++;	/* "discarded" before the fix */
	settle(h, hd, s);
	dv = hd->dur[s];
	if (hd->wepoch[s] < hd->durable_epoch)
		dv = hd->cur[s];
	if (v < 0)
		return false;
	/* discarded since the last durable point, or discarded for good */
	if (hd->uany[s] || hd->zsince[s] || !hd->cur[s])
		return true;
	if (hd->unknown[s])
		h->strict_after_crash++;
	if (v == 0)
		return dv == 0;
	return ((u32)v >= dv && (u32)v <= hd->hi[s]) || (u32)v == hd->alt[s];
}

/*
 * Read [s0, +len) after a crash and check it; a failed read of more than a
 * block is read again block by block (only a lost block may fail).
 */
static void crash_block(struct harness *h, u32 d, u64 s0, u32 len)
{
	struct h_dev *hd = &h->dev[d];
	struct h_io *io = h_io_new(h, (int)d, VC_OP_READ, 0, s0, len);
	u64 i, n = len / H_SECT;
	char got[96];
	int err;

	io->check = false;
	io->tolerate_err = true;
	h_submit(h, io);
	err = h_wait(h, io);
	if (err && len > h->cfg.block_size) {
		u32 bs = h->cfg.block_size, off;

		h_io_free(io);
		for (off = 0; off < len; off += bs)
			crash_block(h, d, s0 + off / H_SECT,
				    vc_min_u64(bs, len - off));
		return;
	}
	if (err) {
		/* lost data reads as -EIO: only where injection may lose it */
		if (err != -EIO || !(h->lossy || h->lose_window ||
				     range_lost(h, (int)d, s0, n)))
			h_fail(h, "after crash dev %u sectors %llu+%llu: read failed (%d)",
			       d, (unsigned long long)s0,
			       (unsigned long long)n, err);
		for (i = 0; i < n; i++) {
			u64 s = s0 + i;

			settle(h, hd, s);
			hd->cur[s] = hd->wepoch[s] < hd->durable_epoch ?
				     hd->cur[s] : hd->dur[s];
			hd->dur[s] = hd->cur[s];
			hd->lost[s] = 1;
			hd->alt[s] = 0;
			hd->zsince[s] = 0;
			hd->wepoch[s] = 0;
		}
		h->lost_reads++;
		h_io_free(io);
		return;
	}
	for (i = 0; i < n; i++) {
		u64 s = s0 + i;
		const u8 *p = io->data + i * H_SECT;
		long long v = h_sector_version(p, d, s);

		h->sectors_checked++;
		if (!crash_ok(h, hd, s, v)) {
			describe(p, got, sizeof(got));
			h_fail(h, "after crash dev %u sector %llu: durable version %u (last acked %u%s), got %s",
			       d, (unsigned long long)s, durable_of(h, hd, s),
			       hd->cur[s], hd->unknown[s] ? ", a write failed" : "",
			       got);
		}
		/* resync: what was read is the truth now */
		hd->cur[s] = v > 0 ? (u32)v : 0;
		hd->dur[s] = hd->cur[s];
		hd->alt[s] = 0;
		hd->unknown[s] = v < 0;
		hd->uany[s] = 0;
		hd->zsince[s] = 0;
		hd->wepoch[s] = 0;
	}
	h_io_free(io);
}

void h_verify_after_crash(struct harness *h)
{
	u32 d;

	for (d = 0; d < h->o.ndev; d++) {
		struct h_dev *hd = &h->dev[d];
		u64 s0;

		if (hd->id == H_NO_ID)
			continue;
		for (s0 = 0; s0 < hd->nr_sectors; s0 += CHUNK / H_SECT)
			crash_block(h, d, s0, (u32)vc_min_u64(CHUNK,
					(hd->nr_sectors - s0) * H_SECT));
	}
	/* every sector's cur is durable now */
	for (d = 0; d < h->o.ndev; d++) {
		h->dev[d].epoch++;
		h->dev[d].durable_epoch = h->dev[d].epoch;
		memset(h->dev[d].wepoch, 0, h->dev[d].nr_sectors * 4);
	}
	/* every lost block was found */
	if (!h->lossy)
		h->lose_window = false;
}

void h_sweep_lost(struct harness *h)
{
	u32 d;

	for (d = 0; d < h->o.ndev; d++) {
		struct h_dev *hd = &h->dev[d];
		u64 s0, bs = h->cfg.block_size;

		if (hd->id == H_NO_ID)
			continue;
		for (s0 = 0; s0 + bs / H_SECT <= hd->nr_sectors;
		     s0 += bs / H_SECT) {
			struct h_io *io;
			int err;

			if (!h_range_free(h, (int)d, s0, (u32)bs))
				continue;
			io = h_io_new(h, (int)d, VC_OP_READ, 0, s0, (u32)bs);
			io->tolerate_err = true;
			h_submit(h, io);
			err = h_wait(h, io);
			if (err == -EIO && (h->lose_window ||
					    range_lost(h, (int)d, s0, bs / H_SECT))) {
				memset(hd->lost + s0, 1, bs / H_SECT);
			} else if (err) {
				h_fail(h, "sweep for lost blocks: dev %u sector %llu: read failed (%d)",
				       d, (unsigned long long)s0, err);
			}
			h_io_free(io);
			if (h->failures)
				return;
		}
	}
	h->lose_window = false;
}
