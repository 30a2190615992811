// SPDX-License-Identifier: GPL-2.0
/*
 * replay.c - the adapter between vcache-sim and the real engine.
 *
 * The engine runs single-threaded and deterministic: posix environment in
 * manual work mode, a virtual clock that follows the trace's timestamps,
 * VC_CFG_NODATA with NULL host buffers, and two simulated devices (flash and
 * backing) that keep no data and complete every I/O inline.  Between two
 * trace records the clock visits every deadline of the engine's deferred
 * work (cleaner ticks, age checks) so time-based cleaning happens when it
 * would have.
 *
 * What the devices see is what is reported: flash bytes written (data and
 * metadata), backing I/Os.  Dirty ages are measured here, independently of
 * the engine: a host write in write-back mode that did not go to the
 * backing device during its submission makes its blocks dirty (the age
 * starts at the first such write); a backing write that is not the
 * pass-through of the host write being submitted is a cleaning, and ends
 * the dirty life of each block it covers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_engine.h"
#include "vc_posix.h"

#include "replay.h"

#define MAX_COVER 64

struct simdev {
	struct vc_dev dev;
	struct sim *sim;
	bool backing;
	uint16_t idx;		/* trace device index (backing) */
	uint64_t reads, writes, flushes, discards;
	uint64_t bytes_read, bytes_written, meta_bytes_written;
};

/* dirty-since times, keyed by (device, block); open addressing */
struct dmap {
	uint64_t *key;		/* key + 1; 0 = empty */
	uint64_t *val;
	size_t mask, n;
};

struct sim {
	uint64_t now;
	struct vc_cache *cache;
	struct simdev flash;
	struct simdev bdev[VC_MAX_BACKING];
	uint32_t bid[VC_MAX_BACKING];
	uint32_t block_size;
	/* the host I/O being submitted, for classifying backing writes */
	bool in_submit;
	const struct vs_req *cur;
	uint64_t cover_lo[MAX_COVER], cover_hi[MAX_COVER];
	unsigned int ncover;
	bool cover_overflow;
	/* dirty ages */
	struct dmap dirty;
	uint64_t *ages;
	size_t nages, cap_ages;
	uint64_t age_sum, age_max, cleaned_unknown;
	/* host completions */
	uint64_t outstanding;
	int first_err;
	size_t first_err_idx;
	bool oom;
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

static uint64_t dkey(unsigned int dev, uint64_t blk)
{
	return (uint64_t)dev << 56 | blk;
}

/* -------------------------------------------------------------- devices */

static void record_age(struct sim *s, uint64_t age)
{
	if (s->nages == s->cap_ages) {
		size_t nc = s->cap_ages ? s->cap_ages * 2 : 65536;
		uint64_t *n = realloc(s->ages, nc * sizeof(*n));

		if (!n) {
			s->oom = true;
			return;
		}
		s->ages = n;
		s->cap_ages = nc;
	}
	s->ages[s->nages++] = age;
	s->age_sum += age;
	if (age > s->age_max)
		s->age_max = age;
}

static void backing_write(struct sim *s, struct simdev *d,
			  const struct vc_dev_io *io)
{
	uint64_t lo = io->sector * 512, hi = lo + io->len, blk, since;

	if (s->in_submit && s->cur && s->cur->op == VS_WRITE &&
	    s->cur->dev == d->idx && lo >= s->cur->off &&
	    hi <= s->cur->off + s->cur->len) {
		/* pass-through of the host write: remember what it covered */
		if (s->ncover < MAX_COVER) {
			s->cover_lo[s->ncover] = lo;
			s->cover_hi[s->ncover++] = hi;
		} else {
			s->cover_overflow = true;
		}
		return;
	}
	/* a cleaning: every block it covers is clean now */
	for (blk = lo / s->block_size; blk * s->block_size < hi; blk++) {
		if (dmap_take(&s->dirty, dkey(d->idx, blk), &since))
			record_age(s, s->now - since);
		else
			s->cleaned_unknown++;
	}
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
		if (io->flags & VC_DEV_META)
			d->meta_bytes_written += io->len;
		if (d->backing)
			backing_write(s, d, io);
		break;
	case VC_DEV_FLUSH:
		d->flushes++;
		break;
	case VC_DEV_DISCARD:
		d->discards++;
		break;
	default:
		err = -EIO;
	}
done:
	io->end_io(io, err);
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

/* --------------------------------------------------------------- engine */

/* The virtual clock starts here, not at 0 (a zero time may mean "never"). */
#define CLOCK_BASE_NS 1000000000ull

static u64 sim_clock(void *ctx)
{
	return ((struct sim *)ctx)->now;
}

/* Manual-mode waits (flush, shutdown): run due work, then jump ahead. */
static bool sim_pump(void *ctx)
{
	struct sim *s = ctx;
	u64 next;

	if (vc_posix_run_work())
		return true;
	next = vc_posix_next_work_ns();
	if (next == ~0ULL)
		return false;
	if (next > s->now)
		s->now = next;
	return vc_posix_run_work() > 0;
}

/* Run every work item due up to time t, visiting each deadline. */
static void advance_to(struct sim *s, uint64_t t)
{
	u64 next;

	while ((next = vc_posix_next_work_ns()) <= t) {
		if (next > s->now)
			s->now = next;
		if (!vc_posix_run_work())
			break;	/* due but not runnable now: never spin */
	}
	if (t > s->now)
		s->now = t;
	vc_posix_run_work();
}

struct hio_ctx {
	struct vc_host_io hio;
	struct sim *sim;
	size_t idx;
};

static void host_end_io(struct vc_host_io *hio, int err)
{
	struct hio_ctx *h = vc_container_of(hio, struct hio_ctx, hio);
	struct sim *s = h->sim;

	if (err && !s->first_err) {
		s->first_err = err;
		s->first_err_idx = h->idx;
	}
	s->outstanding--;
	free(h);
}

static int age_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
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
	p[VC_P_ADMISSION] = c->policy == VS_POL_LRU_ADMIT ?
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
	uint64_t lo, hi;

	if (!h)
		return -ENOMEM;
	h->sim = s;
	h->idx = idx;
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
	s->outstanding++;
	s->in_submit = true;
	s->cur = r;
	s->ncover = 0;
	s->cover_overflow = false;
	vc_cache_submit(s->cache, &h->hio);
	s->in_submit = false;
	s->cur = NULL;
	return 0;
}

/* After a host write: its blocks that did not go to backing are dirty. */
static int mark_dirty(struct sim *s, const struct vs_req *r)
{
	uint64_t blk, last = (r->off + r->len - 1) / s->block_size;
	unsigned int i;

	if (s->cover_overflow)
		return 0;
	for (blk = r->off / s->block_size; blk <= last; blk++) {
		uint64_t blo = blk * s->block_size, bhi = blo + s->block_size;
		bool covered = false;

		if (blo < r->off)
			blo = r->off;
		if (bhi > r->off + r->len)
			bhi = r->off + r->len;
		for (i = 0; i < s->ncover && !covered; i++)
			covered = s->cover_lo[i] <= blo &&
				  s->cover_hi[i] >= bhi;
		if (!covered &&
		    dmap_set_new(&s->dirty, dkey(r->dev, blk), s->now))
			return -1;
	}
	return 0;
}

/* A discard drops the dirty blocks it covers entirely. */
static void drop_dirty(struct sim *s, const struct vs_req *r)
{
	uint64_t blk, since;
	uint64_t first = (r->off + s->block_size - 1) / s->block_size;
	uint64_t end = (r->off + r->len) / s->block_size;

	for (blk = first; blk < end; blk++)
		dmap_take(&s->dirty, dkey(r->dev, blk), &since);
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
	s = calloc(1, sizeof(*s));
	if (!s || dmap_resize(&s->dirty, 1 << 16)) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->block_size = c->block_size;
	s->first_err_idx = SIZE_MAX;

	vc_cache_config_default(&cc);
	cc.block_size = c->block_size;
	cc.mode = c->mode == VS_MODE_WT ? VC_MODE_WT :
		  c->mode == VS_MODE_WA ? VC_MODE_WA : VC_MODE_WB;
	cc.policy = c->policy == VS_POL_FIFO ? VC_POLICY_FIFO : VC_POLICY_LRU;
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

	s->now = CLOCK_BASE_NS;
	vc_posix_set_log_level(1);
	vc_posix_set_clock(sim_clock, s);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(sim_pump, s);

	e = vc_cache_create(&s->flash.dev, &cc, &s->cache);
	if (e) {
		snprintf(err, errlen, "engine refused the cache (%" PRIu64
			 " blocks of %u bytes): error %d", nblocks,
			 c->block_size, e);
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
	vc_cache_reset_stats(s->cache);
	s->flash.writes = s->flash.bytes_written = 0;
	s->flash.meta_bytes_written = s->flash.reads = 0;
	s->flash.bytes_read = s->flash.flushes = 0;

	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];

		advance_to(s, CLOCK_BASE_NS + r->t_ns);
		if (submit_req(s, r, i, s->bid[r->dev])) {
			snprintf(err, errlen, "out of memory");
			goto out_cache;
		}
		if (r->op == VS_WRITE &&
		    vc_cache_get_mode(s->cache) == VC_MODE_WB &&
		    mark_dirty(s, r)) {
			snprintf(err, errlen, "out of memory");
			goto out_cache;
		}
		if (r->op == VS_DISCARD)
			drop_dirty(s, r);
		if (s->first_err || s->oom)
			break;
	}
	/* let every queued completion and due work item run */
	for (k = 0; s->outstanding && k < 1000000; k++)
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
	res->cleaned_blocks = s->nages;
	res->cleaned_unknown = s->cleaned_unknown;
	res->dirty_age_max_ns = s->age_max;
	res->dirty_age_sum_ns = s->age_sum;
	if (s->nages) {
		qsort(s->ages, s->nages, sizeof(*s->ages), age_cmp);
		res->dirty_age_p99_ns = s->ages[(s->nages * 99 + 99) / 100 - 1];
	}
	res->cache_blocks = st.nr_blocks;
	res->meta_millibytes_per_block = st.mem_millibytes_per_block;
	res->mem_bytes = st.mem_bytes;
	res->evictions = st.evictions;
	res->not_admitted = st.not_admitted;
	rc = 0;
out_cache:
	/* dirty blocks stay where they are: nothing to write back */
	vc_cache_abandon(s->cache);
out_env:
	vc_posix_set_pump(NULL, NULL);
	vc_posix_set_clock(NULL, NULL);
out_free:
	free(s->dirty.key);
	free(s->dirty.val);
	free(s->ages);
	free(s);
	return rc;
}
