// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - the adapter between vcache-sim and the real engine.
 *
 * The engine runs single-threaded and deterministic: posix environment in
 * manual work mode, a virtual clock that follows the trace's timestamps,
 * VC_CFG_NODATA with NULL host buffers, and two kinds of simulated devices
 * (flash and backing) that keep no data.  Without a timing model every
 * device I/O completes inline; with one (struct vs_cfg.latency) device I/Os
 * complete from an event queue at their virtual completion time.  The
 * clock visits, in order, every device completion and every deadline of
 * the engine's deferred work (cleaner ticks, age checks) between two trace
 * records, so time-based cleaning happens when it would have.
 *
 * What the devices see is what is reported: flash bytes written (data and
 * metadata), backing I/Os.  Dirty ages are measured here, independently of
 * the engine.  A host write submitted in write-back mode makes its blocks
 * dirty (unless they are already).  A backing write is a pass-through of
 * host writes when all its blocks have a host write in flight and it is
 * not issued from the completion of a flash read (the engine writes back a
 * run of blocks once it has read them from flash); its blocks are clean.
 * Any other backing write is a cleaning: the blocks it covers become
 * clean once write-back's FLUSH of the device (its batch's) has ended,
 * unless written again meanwhile: the engine keeps a block dirty when a
 * host write raced its write-back (issue 19), and when that write came
 * relative to the cleaner taking the block is not visible from here, so
 * the engine is asked (vc_cache_block_dirty) from then on until it calls
 * the block clean.  The count of dirty blocks this gives is
 * checked against the engine's (shadow_dirty_at_end).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_engine.h"
#include "vc_posix.h"

#include "replay.h"

/* The virtual clock starts here, not at 0 (a zero time may mean "never"). */
#define CLOCK_BASE_NS 1000000000ull

struct sim;

struct simdev {
	struct vc_dev dev;
	struct sim *sim;
	bool backing;
	uint16_t idx;		/* trace device index (backing) */
	/* timing */
	uint64_t busy_until;	/* serial device: end of the last I/O */
	uint64_t next_sector;	/* serial device: where the head is */
	/* counters */
	uint64_t reads, writes, flushes, discards;
	uint64_t bytes_read, bytes_written, meta_bytes_written, meta_writes;
	uint64_t rmw_writes, meta_rmw_writes;	/* partial physical blocks */
};

/* (device, block) -> value, open addressing */
struct dmap {
	uint64_t *key;		/* key + 1; 0 = empty */
	uint64_t *val;
	size_t mask, n;
};

/* a device I/O waiting for its virtual completion time */
struct event {
	uint64_t t, seq;
	struct vc_dev_io *io;
};

struct lat {
	uint64_t *v;
	size_t n, cap;
	uint64_t sum, max;
};

struct sim {
	uint64_t now;
	const struct vs_cfg *cfg;
	struct vc_cache *cache;
	struct simdev flash;
	struct simdev bdev[VC_MAX_BACKING];
	uint32_t bid[VC_MAX_BACKING];
	uint32_t block_size;
	/* device completions (timing model) */
	struct event *ev;
	size_t nev, cap_ev;
	uint64_t ev_seq;
	/* host writes in flight: (dev, block) -> how many */
	struct dmap inflight;
	uint64_t overlapping_writes;	/* writes on blocks being written */
	/*
	 * (dev, block) -> 1: two host writes were in flight on it at once
	 * (until none is): which one the engine ends with is either
	 */
	struct dmap overlap;
	unsigned int in_flash_read_end;	/* inside a flash read's end_io */
	/* dirty blocks: (dev, block) -> time they became dirty */
	struct dmap dirty;
	/* (dev, block) -> 1: written again while dirty (the shadow's) */
	struct dmap lastw;
	/* written home while rewritten: the engine says when they are clean */
	struct dmap settle;
	/* written home: clean once write-back's FLUSH of the device is done */
	struct dmap pend;
	unsigned int in_backing_write_end;
	struct vc_dev_io *batch_flush[VC_MAX_BACKING];
	struct lat ages;
	uint64_t cleaned_unknown;
	/* host I/O */
	struct lat rlat, wlat;
	uint64_t outstanding;
	int first_err;
	size_t first_err_idx;
	bool oom;
};

struct hio_ctx {
	struct vc_host_io hio;
	struct sim *sim;
	const struct vs_req *r;
	size_t idx;
	uint64_t submit_ns;
};

const char *vs_replay_backend(void)
{
	return "vcache engine (libvcache.a, posix env, virtual clock)";
}

/* ------------------------------------------------------------ dirty map */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dull;
	x ^= x >> 33;
	return x;
}

static int dmap_resize(struct dmap *m, size_t cap)
{
	uint64_t *k = calloc(cap, sizeof(*k)), *v = malloc(cap * sizeof(*v));
	size_t i, j;

	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (i = 0; m->key && i <= m->mask; i++) {
		if (!m->key[i])
			continue;
		for (j = hash64(m->key[i]) & (cap - 1); k[j];
		     j = (j + 1) & (cap - 1))
			;
		k[j] = m->key[i];
		v[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = k;
	m->val = v;
	m->mask = cap - 1;
	return 0;
}

static size_t dmap_slot(const struct dmap *m, uint64_t key)
{
	size_t j;

	for (j = hash64(key + 1) & m->mask; m->key[j] && m->key[j] != key + 1;
	     j = (j + 1) & m->mask)
		;
	return j;
}

/* Insert key with val unless present. */
static int dmap_set_new(struct dmap *m, uint64_t key, uint64_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->mask && dmap_resize(m, (m->mask + 1) * 2))
		return -1;
	j = dmap_slot(m, key);
	if (!m->key[j]) {
		m->key[j] = key + 1;
		m->val[j] = val;
		m->n++;
	}
	return 0;
}

/* Remove key; returns true with its value if it was present. */
static bool dmap_take(struct dmap *m, uint64_t key, uint64_t *val)
{
	size_t j = dmap_slot(m, key), k;

	if (!m->key[j])
		return false;
	*val = m->val[j];
	m->key[j] = 0;
	m->n--;
	/* backward-shift deletion keeps probe chains intact */
	for (k = (j + 1) & m->mask; m->key[k]; k = (k + 1) & m->mask) {
		size_t home = hash64(m->key[k]) & m->mask;

		if ((k > j && (home <= j || home > k)) ||
		    (k < j && (home <= j && home > k))) {
			m->key[j] = m->key[k];
			m->val[j] = m->val[k];
			m->key[k] = 0;
			j = k;
		}
	}
	return true;
}

/* Insert or overwrite. */
static int dmap_put(struct dmap *m, uint64_t key, uint64_t val)
{
	size_t j;

	if ((m->n + 1) * 2 > m->mask && dmap_resize(m, (m->mask + 1) * 2))
		return -1;
	j = dmap_slot(m, key);
	if (!m->key[j]) {
		m->key[j] = key + 1;
		m->n++;
	}
	m->val[j] = val;
	return 0;
}

static bool dmap_get(const struct dmap *m, uint64_t key, uint64_t *val)
{
	size_t j = dmap_slot(m, key);

	if (!m->key[j])
		return false;
	*val = m->val[j];
	return true;
}

static void dmap_free(struct dmap *m)
{
	free(m->key);
	free(m->val);
}

static uint64_t dkey(unsigned int dev, uint64_t blk)
{
	return (uint64_t)dev << 56 | blk;
}

static void lat_add(struct sim *s, struct lat *l, uint64_t v)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 65536;
		uint64_t *n = realloc(l->v, nc * sizeof(*n));

		if (!n) {
			s->oom = true;
			return;
		}
		l->v = n;
		l->cap = nc;
	}
	l->v[l->n++] = v;
	l->sum += v;
	if (v > l->max)
		l->max = v;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* 99th percentile (nearest rank); sorts l->v */
static uint64_t lat_p99(struct lat *l)
{
	if (!l->n)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), u64_cmp);
	return l->v[(l->n * 99 + 99) / 100 - 1];
}

/* -------------------------------------------------------------- devices */

static void backing_write(struct sim *s, struct simdev *d,
			  const struct vc_dev_io *io)
{
	uint64_t lo = io->sector * 512, hi = lo + io->len, blk, v;
	bool held = io->len > 0 && !s->in_flash_read_end;

	/*
	 * A host write to a block being written back no longer waits
	 * (issue 19): a write-back can have host writes in flight on its
	 * blocks.  A block the engine holds dirty is never passed through.
	 */
	for (blk = lo / s->block_size; held && blk * s->block_size < hi; blk++)
		held = dmap_get(&s->inflight, dkey(d->idx, blk), &v) &&
		       !vc_cache_block_dirty(s->cache, s->bid[d->idx], blk);
	if (held) {
		/* pass-through of host writes: these blocks are clean now */
		for (blk = lo / s->block_size; blk * s->block_size < hi;
		     blk++)
			dmap_take(&s->dirty, dkey(d->idx, blk), &v);
		return;
	}
	/* a cleaning: every block it covers is clean now */
	for (blk = lo / s->block_size; blk * s->block_size < hi; blk++) {
		uint64_t key = dkey(d->idx, blk);

		if (dmap_get(&s->dirty, key, &v)) {
			/* clean when write-back's FLUSH of the device ends */
			if (dmap_put(&s->pend, key, v))
				s->oom = true;
		} else if (!dmap_get(&s->settle, key, &v) &&
			   !dmap_get(&s->pend, key, &v)) {
			s->cleaned_unknown++;
		}
	}
}

/*
 * Write-back's FLUSH of device @dev ended (its batch is over): what it
 * wrote home is clean unless written again meanwhile.  Whether a host
 * write came after the cleaner took the block is not visible from here,
 * so the engine says which (settle_blocks); a block the shadow holds
 * dirty that the engine cleaned without writing it home, or a write-back
 * of a block never dirtied, still shows.
 */
static void pend_done(struct sim *s, unsigned int dev)
{
	size_t i;

	for (i = 0; s->pend.key && i <= s->pend.mask; i++) {
		uint64_t key = s->pend.key[i], v, w;

		if (!key--)
			continue;
		if ((key >> 56) != dev)
			continue;
		dmap_take(&s->pend, key, &v);
		dmap_take(&s->lastw, key, &w);
		if (dmap_put(&s->settle, key, v))
			s->oom = true;
		i = (size_t)-1;	/* the table moved: start over */
	}
}

/*
 * Blocks written home while rewritten: clean once the engine says so (its
 * batch ended); until then, and while the engine keeps them dirty, the
 * shadow keeps them dirty too.
 */
static void settle_blocks(struct sim *s)
{
	size_t i;

	for (i = 0; s->settle.key && i <= s->settle.mask; i++) {
		uint64_t key = s->settle.key[i], v;

		if (!key--)
			continue;
		/*
		 * Still dirty, or a host write to it not yet in the engine's
		 * hands (slowed at the watermark, reading the rest of its
		 * block): the shadow keeps it.
		 */
		if (dmap_get(&s->inflight, key + 0, &v) ||
		    vc_cache_block_dirty(s->cache, s->bid[key >> 56],
					 key & ((1ull << 56) - 1)))
			continue;
		dmap_take(&s->settle, key, &v);
		if (dmap_take(&s->dirty, key, &v))
			lat_add(s, &s->ages, s->now - v);
		i = (size_t)-1;	/* the table moved: start over */
	}
}

static void complete_io(struct sim *s, struct vc_dev_io *io, int err)
{
	bool fr = io->dev == &s->flash.dev && io->op == VC_DEV_READ;
	bool bw = io->dev != &s->flash.dev && io->op == VC_DEV_WRITE;
	int bf = -1;
	unsigned int i;

	for (i = 0; i < VC_MAX_BACKING && io->op == VC_DEV_FLUSH; i++)
		if (s->batch_flush[i] == io) {
			s->batch_flush[i] = NULL;
			bf = (int)i;
		}
	s->in_flash_read_end += fr;
	s->in_backing_write_end += bw;
	io->end_io(io, err);
	s->in_backing_write_end -= bw;
	s->in_flash_read_end -= fr;
	if (bf >= 0 && !err)
		pend_done(s, (unsigned int)bf);
	if (s->settle.n && !s->in_flash_read_end)
		settle_blocks(s);
}

static int ev_push(struct sim *s, uint64_t t, struct vc_dev_io *io)
{
	struct event e = { t, s->ev_seq++, io };
	size_t i;

	if (s->nev == s->cap_ev) {
		size_t nc = s->cap_ev ? s->cap_ev * 2 : 1024;
		struct event *n = realloc(s->ev, nc * sizeof(*n));

		if (!n)
			return -1;
		s->ev = n;
		s->cap_ev = nc;
	}
	for (i = s->nev++; i; ) {
		size_t p = (i - 1) / 2;

		if (s->ev[p].t < e.t || (s->ev[p].t == e.t && s->ev[p].seq < e.seq))
			break;
		s->ev[i] = s->ev[p];
		i = p;
	}
	s->ev[i] = e;
	return 0;
}

static struct vc_dev_io *ev_pop(struct sim *s)
{
	struct vc_dev_io *io = s->ev[0].io;
	struct event e = s->ev[--s->nev];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nev)
			break;
		if (c + 1 < s->nev && (s->ev[c + 1].t < s->ev[c].t ||
		    (s->ev[c + 1].t == s->ev[c].t &&
		     s->ev[c + 1].seq < s->ev[c].seq)))
			c++;
		if (e.t < s->ev[c].t || (e.t == s->ev[c].t && e.seq < s->ev[c].seq))
			break;
		s->ev[i] = s->ev[c];
		i = c;
	}
	if (s->nev)
		s->ev[i] = e;
	return io;
}

/* When would this I/O complete on device d, submitted now? */
static uint64_t service_done(struct sim *s, struct simdev *d,
			     const struct vc_dev_io *io)
{
	const struct vs_cfg *c = s->cfg;
	uint64_t start, t;

	if (!d->backing) {
		if (io->op == VC_DEV_READ)
			return s->now + c->flash_read_ns;
		if (io->op == VC_DEV_WRITE)
			return s->now + c->flash_write_ns;
		return s->now;
	}
	/* the disk: one I/O at a time, in submission order */
	start = d->busy_until > s->now ? d->busy_until : s->now;
	t = 0;
	if (io->op == VC_DEV_READ || io->op == VC_DEV_WRITE) {
		if (io->sector != d->next_sector)
			t += c->hdd_seek_ns;
		t += (uint64_t)((double)io->len * 1e9 /
				(double)c->hdd_bytes_per_s);
		d->next_sector = io->sector + io->len / 512;
	}
	d->busy_until = start + t;
	return d->busy_until;
}

static void sim_submit(struct vc_dev *dev, struct vc_dev_io *io)
{
	struct simdev *d = dev->priv;
	struct sim *s = d->sim;
	int err = 0;

	if (io->op != VC_DEV_FLUSH &&
	    (io->len % 512 || io->sector > dev->nr_sectors ||
	     io->len / 512 > dev->nr_sectors - io->sector)) {
		err = -EIO;	/* the engine went past the device: report */
		goto done;
	}
	switch (io->op) {
	case VC_DEV_READ:
		d->reads++;
		d->bytes_read += io->len;
		break;
	case VC_DEV_WRITE:
		d->writes++;
		d->bytes_written += io->len;
		if (io->flags & VC_DEV_META) {
			d->meta_bytes_written += io->len;
			d->meta_writes++;
		}
		if (dev->physical_block_size > 512 &&
		    ((io->sector * 512) | io->len) &
		    (dev->physical_block_size - 1)) {
			d->rmw_writes++;
			if (io->flags & VC_DEV_META)
				d->meta_rmw_writes++;
		}
		if (io->flags & VC_DEV_PREFLUSH)
			d->flushes++;
		if (d->backing)
			backing_write(s, d, io);
		break;
	case VC_DEV_FLUSH:
		d->flushes++;
		/* sent when write-back's last write ends: the batch's */
		if (d->backing && s->in_backing_write_end)
			s->batch_flush[d->idx] = io;
		break;
	case VC_DEV_DISCARD:
		d->discards++;
		break;
	case VC_DEV_WRITE_ZEROES:
		d->writes++;
		d->bytes_written += io->len;
		break;
	default:
		err = -EIO;
	}
	if (!err && s->cfg->latency) {
		if (!ev_push(s, service_done(s, d, io), io))
			return;
		s->oom = true;
		err = -ENOMEM;
	}
done:
	complete_io(s, io, err);
}

static const struct vc_dev_ops sim_ops = { .submit = sim_submit };

static void dev_init(struct sim *s, struct simdev *d, const char *name,
		     uint64_t sectors, bool backing, uint16_t idx)
{
	memset(d, 0, sizeof(*d));
	d->dev.ops = &sim_ops;
	d->dev.priv = d;
	d->dev.nr_sectors = sectors;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
	d->sim = s;
	d->backing = backing;
	d->idx = idx;
}

/* --------------------------------------------------------- event loop */

static u64 sim_clock(void *ctx)
{
	return ((struct sim *)ctx)->now;
}

/*
 * One step: run due work, else move the clock to the earliest of the next
 * device completion and the next work deadline, and do that.  No later
 * than limit.  Returns false when there is nothing to do until limit.
 */
static bool step(struct sim *s, uint64_t limit)
{
	uint64_t te = s->nev ? s->ev[0].t : UINT64_MAX;
	uint64_t tw = vc_posix_next_work_ns();

	if (tw <= s->now && vc_posix_run_work())
		return true;
	if (te <= tw && te <= limit) {
		struct vc_dev_io *io;

		if (te > s->now)
			s->now = te;
		io = ev_pop(s);
		complete_io(s, io, 0);
		return true;
	}
	if (tw < te && tw <= limit && tw > s->now) {
		s->now = tw;
		return vc_posix_run_work() > 0 || s->nev > 0;
	}
	return false;
}

/* Manual-mode waits (flush, shutdown): make progress, time may jump. */
static bool sim_pump(void *ctx)
{
	return step(ctx, UINT64_MAX);
}

/* Process everything due up to time t, in time order; then now = t. */
static void advance_to(struct sim *s, uint64_t t)
{
	while (step(s, t))
		;
	if (t > s->now)
		s->now = t;
	vc_posix_run_work();
}

/* ------------------------------------------------------------ host I/O */

static void host_end_io(struct vc_host_io *hio, int err)
{
	struct hio_ctx *h = vc_container_of(hio, struct hio_ctx, hio);
	struct sim *s = h->sim;
	const struct vs_req *r = h->r;
	uint64_t blk, v, last;

	if (err && !s->first_err) {
		s->first_err = err;
		s->first_err_idx = h->idx;
	}
	if (r->op == VS_READ)
		lat_add(s, &s->rlat, s->now - h->submit_ns);
	else if (r->op == VS_WRITE)
		lat_add(s, &s->wlat, s->now - h->submit_ns);
	if (r->op == VS_WRITE) {
		last = (r->off + r->len - 1) / s->block_size;
		for (blk = r->off / s->block_size; blk <= last; blk++) {
			uint64_t key = dkey(r->dev, blk);

			/*
			 * Overlapping writes: an older one may end after a
			 * newer one went around the cache (the shadow called
			 * the block clean then) and leave its data dirty in
			 * the cache; the block layer orders neither, so the
			 * engine says which it kept.
			 */
			if (dmap_get(&s->overlap, key, &v) &&
			    vc_cache_get_mode(s->cache) == VC_MODE_WB &&
			    vc_cache_block_dirty(s->cache, s->bid[r->dev], blk) &&
			    dmap_set_new(&s->dirty, key, h->submit_ns))
				s->oom = true;
			if (dmap_get(&s->inflight, key, &v)) {
				dmap_take(&s->inflight, key, &v);
				if (v > 1 && dmap_put(&s->inflight, key, v - 1))
					s->oom = true;
				else if (v == 1)
					dmap_take(&s->overlap, key, &v);
			}
		}
	} else if (r->op == VS_DISCARD && !err) {
		/* a discard drops the dirty blocks it covers entirely */
		uint64_t first = (r->off + s->block_size - 1) / s->block_size;

		for (blk = first; (blk + 1) * s->block_size <= r->off + r->len;
		     blk++)
			dmap_take(&s->dirty, dkey(r->dev, blk), &v);
	}
	s->outstanding--;
	free(h);
}

static int set_params(struct vc_cache_config *cc, const struct vs_cfg *c,
		      char *err, size_t errlen)
{
	u64 *p = cc->params.v;
	unsigned int i;

	if (c->dirty_high_pct >= 0)
		p[VC_P_DIRTY_HIGH_PCT] = (u64)c->dirty_high_pct;
	if (c->dirty_low_pct >= 0)
		p[VC_P_DIRTY_LOW_PCT] = (u64)c->dirty_low_pct;
	if (p[VC_P_DIRTY_LOW_PCT] > p[VC_P_DIRTY_HIGH_PCT]) {
		snprintf(err, errlen,
			 "low watermark %" PRIu64 "%% above high watermark %" PRIu64 "%%",
			 (uint64_t)p[VC_P_DIRTY_LOW_PCT],
			 (uint64_t)p[VC_P_DIRTY_HIGH_PCT]);
		return -1;
	}
	if (c->flush_period_s >= 0)
		p[VC_P_MAX_DIRTY_AGE_MS] = (u64)c->flush_period_s * 1000;
	if (c->seq_thresh_kib == 0) {
		p[VC_P_SEQ_ENABLE] = 0;
	} else if (c->seq_thresh_kib > 0) {
		p[VC_P_SEQ_ENABLE] = 1;
		p[VC_P_SEQ_THRESHOLD_KIB] = (u64)c->seq_thresh_kib;
	}
	if (c->admit_pct >= 0)
		p[VC_P_ADMIT_FULL_PCT] = (u64)c->admit_pct;
	p[VC_P_ADMISSION] = c->policy == VS_POL_LRU_ADMIT ||
			    c->policy == VS_POL_S3FIFO_ADMIT ?
			    VC_ADMIT_SECOND_HIT : VC_ADMIT_ALL;
	for (i = 0; i < c->nparams; i++) {
		int id = vc_param_by_name(c->param_name[i]);

		if (id < 0) {
			int n = snprintf(err, errlen,
					 "unknown engine parameter '%s' (known:",
					 c->param_name[i]);

			for (id = 0; id < VC_NR_PARAMS && n > 0 &&
			     (size_t)n < errlen; id++)
				n += snprintf(err + n, errlen - (size_t)n,
					      " %s", vc_param_name(id));
			if (n > 0 && (size_t)n < errlen)
				snprintf(err + n, errlen - (size_t)n, ")");
			return -1;
		}
		p[id] = c->param_value[i];
	}
	return 0;
}

static int submit_req(struct sim *s, const struct vs_req *r, size_t idx,
		      uint32_t id)
{
	struct hio_ctx *h = calloc(1, sizeof(*h));
	uint64_t lo, hi, blk;
	bool overlap = false;

	if (!h)
		return -ENOMEM;
	h->sim = s;
	h->r = r;
	h->idx = idx;
	h->submit_ns = s->now;
	h->hio.dev_id = id;
	h->hio.pid = (s32)r->pid;
	h->hio.tgid = (s32)r->pid;
	h->hio.stream = r->pid;
	h->hio.end_io = host_end_io;
	h->hio.buf = NULL;
	switch (r->op) {
	case VS_READ:
		h->hio.op = VC_OP_READ;
		break;
	case VS_WRITE:
		h->hio.op = VC_OP_WRITE;
		break;
	case VS_DISCARD:
		h->hio.op = VC_OP_DISCARD;
		break;
	default:
		h->hio.op = VC_OP_FLUSH;
	}
	if (r->flags & VS_F_FUA)
		h->hio.flags |= VC_IO_FUA;
	if (r->flags & VS_F_PREFLUSH)
		h->hio.flags |= VC_IO_PREFLUSH;
	if (r->op != VS_FLUSH) {
		/* the block layer works in sectors: round outwards */
		lo = r->off / 512 * 512;
		hi = (r->off + r->len + 511) / 512 * 512;
		h->hio.sector = lo / 512;
		h->hio.len = (u32)(hi - lo);
	}
	if (r->op == VS_WRITE) {
		bool wb = vc_cache_get_mode(s->cache) == VC_MODE_WB;

		for (blk = r->off / s->block_size;
		     blk <= (r->off + r->len - 1) / s->block_size; blk++) {
			uint64_t key = dkey(r->dev, blk), v = 0, v2;

			if (dmap_get(&s->inflight, key, &v)) {
				overlap = true;
				if (dmap_put(&s->overlap, key, 1)) {
					free(h);
					return -ENOMEM;
				}
			}
			if (dmap_get(&s->dirty, key, &v2) &&
			    dmap_put(&s->lastw, key, 1)) {
				free(h);
				return -ENOMEM;
			}
			if (dmap_put(&s->inflight, key, v + 1) ||
			    (wb && dmap_set_new(&s->dirty, key, s->now))) {
				free(h);
				return -ENOMEM;
			}
		}
	}
	s->overlapping_writes += overlap;
	s->outstanding++;
	vc_cache_submit(s->cache, &h->hio);
	return 0;
}

int vs_replay(const struct vs_trace *t, const struct vs_cfg *c,
	      struct vs_result *res, char *err, size_t errlen)
{
	struct vc_cache_config cc;
	struct vc_stats st;
	struct sim *s;
	uint64_t bsize[VS_MAX_DEVS] = { 0 }, nblocks, fsect;
	unsigned int d, k;
	size_t i;
	int rc = -1, e;

	memset(res, 0, sizeof(*res));
	if (t->ndevs > VC_MAX_BACKING) {
		snprintf(err, errlen,
			 "the trace has %u devices; the engine caches at most %d",
			 t->ndevs, VC_MAX_BACKING);
		return -1;
	}
	if (c->latency && (!c->hdd_bytes_per_s || !c->flash_read_ns ||
			   !c->flash_write_ns)) {
		snprintf(err, errlen, "device timings must be positive");
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s || dmap_resize(&s->dirty, 1 << 16) ||
	    dmap_resize(&s->inflight, 1 << 10) ||
	    dmap_resize(&s->overlap, 1 << 10) ||
	    dmap_resize(&s->lastw, 1 << 16) ||
	    dmap_resize(&s->settle, 1 << 10) ||
	    dmap_resize(&s->pend, 1 << 12)) {
		if (s) {
			dmap_free(&s->dirty);
			dmap_free(&s->inflight);
			dmap_free(&s->overlap);
			dmap_free(&s->lastw);
	dmap_free(&s->overlap);
			dmap_free(&s->settle);
			dmap_free(&s->pend);
			free(s);
		}
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->cfg = c;
	s->block_size = c->block_size;
	s->first_err_idx = SIZE_MAX;

	vc_cache_config_default(&cc);
	cc.block_size = c->block_size;
	cc.mode = c->mode == VS_MODE_WT ? VC_MODE_WT :
		  c->mode == VS_MODE_WA ? VC_MODE_WA : VC_MODE_WB;
	cc.policy = c->policy == VS_POL_FIFO ? VC_POLICY_FIFO :
		    c->policy == VS_POL_S3FIFO ||
		    c->policy == VS_POL_S3FIFO_ADMIT ? VC_POLICY_S3FIFO :
		    c->policy == VS_POL_TINYLFU ? VC_POLICY_TINYLFU :
		    VC_POLICY_LRU;
	cc.flags = VC_CFG_NODATA;
	nblocks = c->cache_bytes / c->block_size;
	cc.nr_blocks = nblocks;
	if (set_params(&cc, c, err, errlen))
		goto out_free;

	/* backing sizes: the trace's extent per device (or --backing-size) */
	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];
		uint64_t end = (r->off + r->len + 511) / 512 * 512;

		if (r->op != VS_FLUSH && end > bsize[r->dev])
			bsize[r->dev] = end;
	}
	/*
	 * The flash device: no data is stored, so its size costs nothing;
	 * generous room for the metadata, whatever its layout.
	 */
	fsect = nblocks * (c->block_size / 512) * 2 + (64ull << 11);
	dev_init(s, &s->flash, "sim-flash", fsect, false, 0);
	s->flash.dev.physical_block_size = c->flash_phys_block;

	s->now = CLOCK_BASE_NS;
	vc_posix_set_log_level(1);
	vc_posix_set_clock(sim_clock, s);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(sim_pump, s);

	e = vc_cache_create(&s->flash.dev, &cc, &s->cache);
	if (e) {
		snprintf(err, errlen, "engine refused the cache (%" PRIu64
			 " blocks of %u bytes, parameters as given): error %d",
			 nblocks, c->block_size, e);
		goto out_env;
	}
	for (d = 0; d < t->ndevs; d++) {
		uint64_t bytes = c->backing_bytes ? c->backing_bytes :
				 bsize[d];
		char uuid[VC_UUID_LEN];

		if (bytes < bsize[d]) {
			snprintf(err, errlen,
				 "trace device %s reaches byte %" PRIu64
				 ", beyond --backing-size", t->devs[d],
				 bsize[d]);
			goto out_cache;
		}
		if (!bytes)
			bytes = c->block_size;
		/* whole blocks, so the last block of the trace is cacheable */
		bytes = (bytes + c->block_size - 1) / c->block_size *
			c->block_size;
		dev_init(s, &s->bdev[d], "sim-backing", bytes / 512, true,
			 (uint16_t)d);
		snprintf(uuid, sizeof(uuid), "vcache-sim-%u", d);
		e = vc_cache_attach(s->cache, &s->bdev[d].dev, uuid,
				    &s->bid[d]);
		if (e) {
			snprintf(err, errlen, "attaching %s failed: error %d",
				 t->devs[d], e);
			goto out_cache;
		}
	}
	/* let the metadata writes of create/attach finish, then count */
	while (s->nev && step(s, UINT64_MAX))
		;
	if (s->now < CLOCK_BASE_NS + t->req[0].t_ns)
		s->now = CLOCK_BASE_NS + t->req[0].t_ns;
	vc_cache_reset_stats(s->cache);
	s->flash.writes = s->flash.bytes_written = 0;
	s->flash.meta_bytes_written = s->flash.reads = 0;
	s->flash.meta_writes = 0;
	s->flash.bytes_read = s->flash.flushes = 0;
	s->flash.busy_until = 0;

	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];

		advance_to(s, CLOCK_BASE_NS + r->t_ns);
		if (submit_req(s, r, i, s->bid[r->dev])) {
			s->oom = true;
			break;
		}
		if (s->first_err || s->oom)
			break;
	}
	/* let every in-flight I/O and due work item finish */
	for (k = 0; s->outstanding && k < 100000000; k++)
		if (!sim_pump(s))
			break;
	if (s->first_err) {
		const struct vs_req *r = &t->req[s->first_err_idx];

		snprintf(err, errlen,
			 "request %zu (%s %s offset %" PRIu64 " length %u) failed: error %d",
			 s->first_err_idx + 1, t->devs[r->dev],
			 vs_op_name(r->op), r->off, r->len, s->first_err);
		goto out_cache;
	}
	if (s->outstanding || s->oom) {
		snprintf(err, errlen, s->oom ? "out of memory" :
			 "%" PRIu64 " host I/Os never completed", s->outstanding);
		goto out_cache;
	}
	vc_cache_get_stats(s->cache, &st);
	res->dirty_at_end = st.dirty_blocks;
	res->virtual_ns = s->now - CLOCK_BASE_NS;
	res->shadow_dirty_at_end = s->dirty.n;
	for (i = 0; i <= s->dirty.mask; i++)
		if (s->dirty.key[i] &&
		    s->now - s->dirty.val[i] > res->dirty_oldest_at_end_ns)
			res->dirty_oldest_at_end_ns = s->now - s->dirty.val[i];
	if (c->drain_at_end) {
		e = vc_cache_flush(s->cache, VC_DEV_ID_ALL, NULL, NULL);
		while (s->nev && step(s, UINT64_MAX))
			;
		if (e) {
			snprintf(err, errlen, "final flush failed: error %d",
				 e);
			goto out_cache;
		}
		vc_cache_get_stats(s->cache, &st);
	}

	res->host_ios = st.reads + st.writes + st.discards + st.flushes;
	res->reads = st.reads;
	res->writes = st.writes;
	res->discards = st.discards;
	res->flushes = st.flushes;
	res->read_hit_blocks = st.read_hits;
	res->read_blocks = st.read_hits + st.read_misses;
	res->write_hit_blocks = st.write_hits;
	res->write_blocks = st.write_hits + st.write_misses;
	for (k = 0; k < VC_NR_BYPASS; k++)
		res->bypassed_blocks += st.bypass[k];
	res->bypass_mode = st.bypass[VC_BYP_MODE];
	res->bypass_seq = st.bypass[VC_BYP_SEQ];
	res->bypass_pid = st.bypass[VC_BYP_PID];
	res->bypass_admission = st.bypass[VC_BYP_ADMISSION];
	res->bypass_nospace = st.bypass[VC_BYP_NOSPACE];
	res->bypass_busy = st.bypass[VC_BYP_BUSY];
	res->flash_bytes_written = s->flash.bytes_written;
	res->flash_meta_bytes_written = s->flash.meta_bytes_written;
	res->flash_meta_writes = s->flash.meta_writes;
	res->flash_flushes = s->flash.flushes;
	res->flash_rmw_writes = s->flash.rmw_writes;
	res->flash_meta_rmw_writes = s->flash.meta_rmw_writes;
	res->flash_bytes_read = s->flash.bytes_read;
	for (d = 0; d < t->ndevs; d++) {
		const struct simdev *b = &s->bdev[d];

		res->backing_read_ios += b->reads;
		res->backing_write_ios += b->writes;
		res->backing_ios += b->reads + b->writes + b->discards;
		res->backing_flushes += b->flushes;
		res->backing_bytes_read += b->bytes_read;
		res->backing_bytes_written += b->bytes_written;
	}
	res->clean_watermark = st.cleanings[VC_CLEAN_WATERMARK];
	res->clean_age = st.age_based_write_back;
	res->clean_idle = st.cleanings[VC_CLEAN_IDLE];
	res->clean_demand = st.cleanings[VC_CLEAN_FLUSH] +
			    st.cleanings[VC_CLEAN_MODE];
	res->cleaned_blocks = s->ages.n;
	res->cleaned_unknown = s->cleaned_unknown;
	res->overlapping_writes = s->overlapping_writes;
	res->dirty_age_max_ns = s->ages.max;
	res->dirty_age_sum_ns = s->ages.sum;
	res->dirty_age_p99_ns = lat_p99(&s->ages);
	if (c->latency) {
		res->read_lat_avg_ns = s->rlat.n ? s->rlat.sum / s->rlat.n : 0;
		res->read_lat_p99_ns = lat_p99(&s->rlat);
		res->read_lat_max_ns = s->rlat.max;
		res->write_lat_avg_ns = s->wlat.n ? s->wlat.sum / s->wlat.n : 0;
		res->write_lat_p99_ns = lat_p99(&s->wlat);
		res->write_lat_max_ns = s->wlat.max;
	}
	res->cache_blocks = st.nr_blocks;
	res->meta_millibytes_per_block = st.mem_millibytes_per_block;
	res->mem_bytes = st.mem_bytes;
	res->evictions = st.evictions;
	res->not_admitted = st.not_admitted;
	res->dirty_overwrites = st.dirty_overwrites;
	res->oop_writes = st.oop_writes;
	rc = 0;
out_cache:
	/* nothing may be in flight when the cache is dropped */
	while (s->nev && step(s, UINT64_MAX))
		;
	vc_cache_abandon(s->cache);
out_env:
	vc_posix_set_pump(NULL, NULL);
	vc_posix_set_clock(NULL, NULL);
out_free:
	dmap_free(&s->dirty);
	dmap_free(&s->inflight);
	dmap_free(&s->lastw);
	dmap_free(&s->settle);
	dmap_free(&s->pend);
	free(s->ages.v);
	free(s->rlat.v);
	free(s->wlat.v);
	free(s->ev);
	free(s);
	return rc;
}
