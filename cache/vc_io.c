// SPDX-License-Identifier: GPL-2.0
/*
 * vc_io: the host I/O paths - reads (hit, fill, bypass), writes in every
 * mode, discards, FLUSH/FUA - and the deferred-request list.
 */
#include "vc_internal.h"

/* vc_host_io.eflags */
#define HF_MISS		(1 << 0)
#define HF_HIT		(1 << 1)
#define HF_BYP_SEQ	(1 << 2)
#define HF_BYP_PID	(1 << 3)
#define HF_PREFLUSHED	(1 << 4)
#define HF_BYPASS	(1 << 5)	/* a block went around the cache */

static void hio_put(struct vc_cache *c, struct vc_host_io *hio);
static void write_backing_only(struct vc_req *r);

/* ------------------------------------------------------------- modes */
enum vc_mode vc_effective_mode(struct vc_cache *c)
{
	int m = vc_atomic_read(&c->mode), d = vc_atomic_read(&c->degraded);

	if (d >= 2)
		return VC_MODE_PT;
	if (d == 1 && m == VC_MODE_WB)
		return VC_MODE_WT;
	return (enum vc_mode)m;
}

void vc_degrade(struct vc_cache *c, const char *why)
{
	for (;;) {
		int d = vc_atomic_read(&c->degraded);
		int nd = vc_effective_mode(c) == VC_MODE_WB ? 1 : 2;

		if (nd <= d || d >= 2)
			return;
		if (vc_atomic_cmpxchg(&c->degraded, d, nd) == d) {
			vc_stat_add(VC_STAT(c, degradations), 1);
			vc_log_err("%s: %s: cache degraded to %s", c->cdev->name,
				   why, vc_mode_name(vc_effective_mode(c)));
			vc_cache_kick_cleaner(c);
			return;
		}
	}
}

/*
 * A write (or FLUSH) to the cache device failed: count it and degrade.  A
 * failure for lack of memory (-ENOMEM, from the environment) says nothing
 * about the device and does not degrade the cache for good.
 */
void vc_cache_write_failed(struct vc_cache *c, int err, const char *why)
{
	vc_stat_add(VC_STAT(c, cache_write_errors), 1);
	if (err != -ENOMEM)
		vc_degrade(c, why);
}

/* --------------------------------------------------------- deferral */
/* Queue @r until a busy block becomes free.  Set lock held. */
void vc_defer(struct vc_cache *c, struct vc_req *r)
{
	vc_atomic_inc(&c->nr_deferred);
	vc_spin_lock(&c->defer_lock);
	r->defer_next = NULL;
	if (c->defer_tail)
		c->defer_tail->defer_next = r;
	else
		c->defer_head = r;
	c->defer_tail = r;
	vc_spin_unlock(&c->defer_lock);
}

/* A block became less busy: retry deferred requests (from a work item). */
void vc_redrive(struct vc_cache *c)
{
	/*
	 * Full barrier, pairing with the set lock held around vc_defer(): a
	 * fence, not a read-modify-write, so that every completion does not
	 * pull the counter's cache line over.
	 */
	vc_smp_mb();
	if (vc_atomic_read(&c->nr_deferred))
		vc_work_queue(&c->defer_work);
}

void vc_defer_work_fn(vc_work_t *w)
{
	struct vc_cache *c = vc_container_of(w, struct vc_cache, defer_work);
	struct vc_req *r;

	vc_spin_lock(&c->defer_lock);
	r = c->defer_head;
	c->defer_head = c->defer_tail = NULL;
	vc_spin_unlock(&c->defer_lock);
	while (r) {
		struct vc_req *n = r->defer_next;

		vc_atomic_dec(&c->nr_deferred);
		vc_req_dispatch(r);
		r = n;
	}
}

/* ----------------------------------------------------------- helpers */
static u64 blk_sector(struct vc_cache *c, u32 blk)
{
	return c->data_start + ((u64)blk << (c->block_shift - VC_SECTOR_SHIFT));
}

static void ef_or(struct vc_host_io *hio, int bits)
{
	int old = vc_atomic_read(&hio->eflags);

	while (!((old & bits) == bits)) {
		int cur = vc_atomic_cmpxchg(&hio->eflags, old, old | bits);

		if (cur == old)
			break;
		old = cur;
	}
}

static void set_err(struct vc_host_io *hio, int err)
{
	if (err)
		vc_atomic_cmpxchg(&hio->error, 0, err);
}

/* A piece finished: record its error, free it, complete the host I/O. */
static void req_free(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	if (r->kind == RK_READ && r->ra) {
		/* a fill that read ahead: the run's buffer is shared */
		vc_ra_put(r->ra);
		r->ra = NULL;
		r->bounce = NULL;
	}
	if (r->bounce_pooled)
		vc_mempool_free(&c->blk_pool,
				vc_container_of(r->bounce, struct vc_pooled_buf,
						buf));
	else
		vc_buf_free(r->bounce);
	if (!r->embedded)
		vc_mempool_free(&c->req_pool, r);
}

static void req_done(struct vc_req *r, int err)
{
	struct vc_cache *c = r->c;
	struct vc_host_io *hio = r->hio;

	req_free(r);
	set_err(hio, err);
	hio_put(c, hio);
}

/* Like req_done but keeps @r alive (its block work goes on). */
static void req_ack(struct vc_req *r, int err)
{
	struct vc_host_io *hio = r->hio;

	r->hio = NULL;
	set_err(hio, err);
	hio_put(r->c, hio);
}

/*
 * Where a write piece's data is: the host's buffer, zeroes, or (a
 * partial write that allocated its block) the whole block in r->bounce.
 */
static struct vc_buf *src_buf(struct vc_req *r)
{
	if (r->rmw)
		return r->bounce;
	return r->zero ? r->c->zero_buf : r->hio->buf;
}

static u32 src_off(struct vc_req *r)
{
	if (r->rmw)
		return 0;
	return r->zero ? 0 : r->hio->buf_off + r->hoff;
}

static void io_init(struct vc_dev_io *io, struct vc_dev *dev, u8 op,
		    u32 flags, u64 sector, u32 len, struct vc_buf *buf,
		    u32 buf_off, vc_dev_end_io_t end, void *priv)
{
	vc_memset(io, 0, sizeof(*io));
	io->dev = dev;
	io->op = op;
	io->flags = flags;
	io->sector = sector;
	io->len = len;
	io->buf = buf;
	io->buf_off = buf_off;
	io->end_io = end;
	io->private = priv;
}

static struct vc_dev *bdev_of(struct vc_req *r)
{
	return r->c->bdev[vc_key_dev(r->key)].dev;
}

static void note_backing_io(struct vc_cache *c)
{
	vc_atomic64_set(&c->last_backing_io_ns, (s64)vc_now_ns());
	vc_stat_add(VC_STAT(c, backing_ios), 1);
}

/*
 * A host write (or write-zeroes, discard) ended on backing device @dev:
 * the next host FLUSH must FLUSH that device too (do_flush).  Counted at
 * completion: a backing FLUSH covers only writes completed before it.
 */
static void home_write_done(struct vc_cache *c, u32 dev)
{
	vc_atomic64_inc(&c->bdev[dev].home_writes);
}

/*
 * Drop a block from the cache.  If its record on flash may say dirty it
 * becomes a tombstone: it stays in the hash (so requests for the same
 * backing block wait) until a metadata write clears the record.  Set lock
 * held; returns true if the caller must call vc_md_mark() for it.
 */
bool vc_invalidate_locked(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u64 w = c->words[blk];

	if (w & (B_DIRTY | B_FLASHDIRTY)) {
		vc_block_set_word(c, s, blk, (w & B_KEY_MASK) | B_FLASHDIRTY |
				  B_BUSY | B_TOMB);
		vc_lru_unlink(c, s, blk);
		vc_lru_push_tail(c, s, blk);
		return true;
	}
	vc_hash_remove(c, s, blk);
	vc_block_set_word(c, s, blk, 0);
	vc_lru_unlink(c, s, blk);
	vc_lru_push_tail(c, s, blk);
	return false;
}

/*
 * The dirty data of @blk was lost (a cache read failed): drop the block
 * like vc_invalidate_locked(), and keep it in the hash as a lost marker
 * (B_TOMB | B_LOST): reads of its backing block fail with EIO until a
 * write covers the whole block or a discard does.  Set lock held; returns
 * true if the caller must call vc_md_mark() (the DIRTY record to clear).
 */
bool vc_lose_locked(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u64 key = c->words[blk] & B_KEY_MASK;
	bool md = vc_invalidate_locked(c, s, blk);

	vc_stat_add(VC_DSTAT(c, vc_key_dev(key), lost_blocks), 1);
	if (c->version >= 3) {
		/* the LOST record is written before anything uses it */
		vc_block_set_word(c, s, blk, key | B_TOMB | B_LOST |
				  B_FLASHDIRTY | B_BUSY);
		if (!md)
			vc_hash_insert(c, s, blk);
		return true;
	}
	if (md) {
		vc_block_set_word(c, s, blk, c->words[blk] | B_LOST);
	} else {
		vc_block_set_word(c, s, blk, key | B_TOMB | B_LOST);
		vc_hash_insert(c, s, blk);
	}
	return md;
}

/*
 * A whole-block write or discard supersedes the lost marker @blk (idle).
 * Returns false if the marker is gone (the block is now a miss), true if
 * its record must be cleared first: the block is then BUSY | UNLOSE and
 * the caller calls vc_md_mark() with unlose_md_end().
 */
static bool unlose_locked(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u64 w = c->words[blk];

	if (w & B_FLASHDIRTY) {
		vc_block_set_word(c, s, blk, w | B_UNLOSE | B_BUSY);
		return true;
	}
	vc_hash_remove(c, s, blk);
	vc_block_set_word(c, s, blk, 0);
	return false;
}

/*
 * The record of a superseded lost marker was written: cleared, the
 * request is driven again (now a miss); failed, the block stays lost and
 * a write fails (a discard leaves its blocks undefined anyway).
 */
static void unlose_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	if (err) {
		req_done(r, r->kind == RK_DISCARD ? 0 : -EIO);
		return;
	}
	vc_req_dispatch(r);
}

/* Unlock @s, clear the record of the lost marker @blk, then drive @r. */
static void unlose_then(struct vc_req *r, struct vc_set *s, u32 blk)
{
	vc_spin_unlock(&s->lock);
	r->blk = blk;
	vc_md_mark(r->c, blk, &r->mdw, unlose_md_end);
}

void vc_invalidate_blk(struct vc_cache *c, u32 blk)
{
	struct vc_set *s = vc_set_of_blk(c, blk);
	bool md;

	vc_spin_lock(&s->lock);
	md = vc_invalidate_locked(c, s, blk);
	vc_spin_unlock(&s->lock);
	if (md)
		vc_md_mark(c, blk, NULL, NULL);
	vc_redrive(c);
}

/* Clear @bits of a block's word (set lock taken here), then redrive. */
void vc_clear_bits(struct vc_cache *c, u32 blk, u64 bits)
{
	struct vc_set *s = vc_set_of_blk(c, blk);

	vc_spin_lock(&s->lock);
	vc_block_set_word(c, s, blk, c->words[blk] & ~bits);
	vc_spin_unlock(&s->lock);
	vc_redrive(c);
}

/* Take a victim for @key in @s: evict it and make it key|VALID|BUSY. */
u32 vc_take_victim(struct vc_cache *c, struct vc_set *s, u64 key)
{
	u32 blk = vc_find_victim(c, s);

	if (blk == ~0u)
		return blk;
	if (c->words[blk] & B_VALID) {
		vc_hash_remove(c, s, blk);
		vc_stat_add(VC_STAT(c, evictions), 1);
	}
	vc_block_set_word(c, s, blk, (key & B_KEY_MASK) | B_VALID | B_BUSY);
	vc_hash_insert(c, s, blk);
	vc_pol_insert(c, s, blk, key);
	return blk;
}

/*
 * Count the first lookup of @r on its path: @off is the counter's index
 * in struct vc_dev_stats (read_hits, read_misses, write_hits or
 * write_misses); the byte counter of the path follows the same order.
 */
static void count_path(struct vc_req *r, u32 off)
{
	struct vc_cache *c = r->c;
	u32 base = vc_key_dev(r->key) * VC_NR_DSTATS;

	_Static_assert(VC_DSTAT_OFF(write_miss_bytes) - VC_DSTAT_OFF(write_misses) ==
		       VC_DSTAT_OFF(read_hit_bytes) - VC_DSTAT_OFF(read_hits),
		       "path counters and their bytes in the same order");
	vc_stat_add(&c->dst, base + off, 1);
	vc_stat_add(&c->dst, base + off + VC_DSTAT_OFF(read_hit_bytes) -
		    VC_DSTAT_OFF(read_hits), r->len);
	if (off == VC_DSTAT_OFF(write_misses))
		ef_or(r->hio, HF_MISS);
}

/* Count a bypass; one for lack of space also wakes the cleaner. */
static void count_bypass(struct vc_req *r, int reason)
{
	struct vc_cache *c = r->c;
	u32 dev = vc_key_dev(r->key);

	ef_or(r->hio, HF_BYPASS);
	vc_stat_add(VC_DSTAT_IDX(c, dev, bypass, reason), 1);
	vc_stat_add(VC_DSTAT_IDX(c, dev, bypass_bytes, reason), r->len);
	if (reason == VC_BYP_ADMISSION)
		vc_stat_add(VC_STAT(c, not_admitted), 1);
	if (reason == VC_BYP_NOSPACE)
		vc_cache_kick_cleaner(c);
}

/* ------------------------------------------------------------- reads */
static void read_backing_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;

	if (err)
		vc_stat_add(VC_DSTAT(r->c, vc_key_dev(r->key),
				     backing_read_errors), 1);
	else
		vc_stat_add(VC_STAT(r->c, backing_bytes_read), r->len);
	req_done(r, err);
}

static void read_backing(struct vc_req *r)
{
	struct vc_host_io *hio = r->hio;

	note_backing_io(r->c);
	io_init(&r->io[0], bdev_of(r), VC_DEV_READ, 0, r->sector, r->len,
		hio->buf, hio->buf_off + r->hoff, read_backing_end, r);
	vc_dev_submit(&r->io[0]);
}

static void read_hit_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool md = false, lost = false;
	u64 w;

	vc_spin_lock(&s->lock);
	w = c->words[r->blk] - B_READER_ONE;
	vc_block_set_word(c, s, r->blk, w);
	if (err) {
		vc_stat_add(VC_STAT(c, cache_read_errors), 1);
		lost = w & B_DIRTY;
		/* a failing block is dropped once nobody else uses it */
		if (!(w & (B_BUSY | B_CLEANING | B_READERS_MASK)))
			md = lost ? vc_lose_locked(c, s, r->blk) :
				    vc_invalidate_locked(c, s, r->blk);
	}
	vc_spin_unlock(&s->lock);
	if (md)
		vc_md_mark(c, r->blk, NULL, NULL);
	vc_redrive(c);
	if (!err) {
		vc_stat_add(VC_STAT(c, flash_bytes_read), r->len);
		req_done(r, 0);
	} else if (lost) {
		vc_log_err("%s: read error on dirty block %u: data lost",
			   c->cdev->name, r->blk);
		req_done(r, -EIO);
	} else {
		vc_stat_add(VC_STAT(c, read_retries), 1);
		read_backing(r);
	}
}

static void fill_write_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;

	if (err) {
		vc_cache_write_failed(c, err, "cache write failed");
		vc_invalidate_blk(c, r->blk);
	} else {
		vc_stat_add(VC_STAT(c, flash_bytes_written), c->block_size);
		vc_clear_bits(c, r->blk, B_BUSY);
	}
	req_free(r);
}

/*
 * Take fill @r off its set's list.  True if a write took its block over
 * meanwhile (fill_overtake()): the block is that write's now.  Set lock
 * held.
 */
static bool fill_unlink_locked(struct vc_set *s, struct vc_req *r)
{
	struct vc_req **pp;

	if (r->superseded)
		return true;
	for (pp = &s->fills; *pp; pp = &(*pp)->fill_next) {
		if (*pp == r) {
			*pp = r->fill_next;
			break;
		}
	}
	r->fill_next = NULL;
	return false;
}

/* The same, taking the set lock. */
static bool fill_unlink(struct vc_cache *c, struct vc_req *r)
{
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool taken;

	vc_spin_lock(&s->lock);
	taken = fill_unlink_locked(s, r);
	vc_spin_unlock(&s->lock);
	return taken;
}

/*
 * A write-back write of the whole of block @blk, BUSY with a fill still
 * reading it from the backing device: the write takes the block over
 * (keeps it BUSY, writes it) instead of waiting for the disk; the fill
 * serves its reader what it read, older than the write (the read came
 * first), and leaves the block alone.  True if @blk had such a fill.  Set
 * lock held.
 */
static bool fill_overtake_locked(struct vc_set *s, u32 blk)
{
	struct vc_req **pp, *f;

	for (pp = &s->fills; (f = *pp) != NULL; pp = &f->fill_next) {
		if (f->blk == blk) {
			*pp = f->fill_next;
			f->fill_next = NULL;
			f->superseded = 1;
			return true;
		}
	}
	return false;
}

static void fill_read_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_host_io *hio = r->hio;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	/* the block's place in the run read (readahead: vc_ra.c) */
	u32 boff = r->ra ? (u32)(vc_key_lba(r->key) - vc_ra_first_lba(r->ra)) *
			   c->block_size : 0;
	bool stale, taken;

	vc_spin_lock(&s->lock);
	taken = fill_unlink_locked(s, r);
	stale = s->byp_gen != r->gen;
	vc_spin_unlock(&s->lock);
	if (r->ra)
		vc_ra_install(r->ra, err);
	if (err) {
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_read_errors),
			    1);
		if (!taken)
			vc_invalidate_blk(c, r->blk);
		req_done(r, err);
		return;
	}
	vc_stat_add(VC_STAT(c, backing_bytes_read), r->io[0].len);
	vc_buf_copy(hio->buf, hio->buf_off + r->hoff, r->bounce, boff + r->off,
		    r->len);
	if (taken) {
		/* a whole-block write holds the block now: serve the reader */
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), fills_overtaken), 1);
		req_done(r, 0);
		return;
	}
	if (stale) {
		/* a write went around us meanwhile: our copy may be old */
		vc_invalidate_blk(c, r->blk);
		req_done(r, 0);
		return;
	}
	if (r->embedded) {
		/* the host request (and @r in it) is gone once acked */
		struct vc_req *n = vc_mempool_alloc(&c->req_pool);

		*n = *r;
		n->embedded = 0;
		r->bounce = NULL;
		r->bounce_pooled = 0;
		r->ra = NULL;
		req_ack(r, 0);
		r = n;
	} else {
		req_ack(r, 0);
	}
	io_init(&r->io[0], c->cdev, VC_DEV_WRITE, 0, blk_sector(c, r->blk),
		c->block_size, r->bounce, boff, fill_write_end, r);
	vc_dev_submit(&r->io[0]);
}

/* Is the whole cache block inside the backing device? */
static bool block_fits(struct vc_cache *c, u64 key)
{
	u64 end = (vc_key_lba(key) + 1) << (c->block_shift - VC_SECTOR_SHIFT);

	return end <= c->bdev[vc_key_dev(key)].dev->nr_sectors;
}

/*
 * Admission (vc_policy.c): TinyLFU's frequency filter, or second-hit
 * admission for FIFO/LRU/S3-FIFO once the set is nearly full.  Set lock
 * held.
 */
static bool admission_refuses(struct vc_cache *c, struct vc_set *s, u64 key)
{
	return vc_pol_admit_refuses(c, s, key);
}

static void dispatch_read(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = &c->sets[vc_set_of(c, r->key)];
	int ef = vc_atomic_read(&r->hio->eflags);
	int byp = -1;
	u32 blk, nr;
	u64 w, first;

	vc_spin_lock(&s->lock);
	blk = vc_lookup(c, s, r->key);
	if (blk != ~0u && (c->words[blk] & (B_TOMB | B_BUSY)) == B_TOMB) {
		bool lost = c->words[blk] & B_LOST;

		vc_spin_unlock(&s->lock);
		if (lost) {
			/* the newest data was lost: never serve older */
			vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), lost_reads),
				    1);
			req_done(r, -EIO);
			return;
		}
		/* a failed tombstone: the backing device has the data */
		count_bypass(r, VC_BYP_BUSY);
		read_backing(r);
		return;
	}
	if (blk != ~0u) {
		w = c->words[blk];
		if ((w & B_BUSY) ||
		    ((w & B_READERS_MASK) >> B_READERS_SHIFT) >= B_MAX_READERS) {
			vc_defer(c, r);
			vc_spin_unlock(&s->lock);
			return;
		}
		vc_block_set_word(c, s, blk, w + B_READER_ONE);
		vc_lru_touch(c, s, blk);
		vc_spin_unlock(&s->lock);
		if (!r->hit) {
			r->hit = 1;
			count_path(r, VC_DSTAT_OFF(read_hits));
		}
		ef_or(r->hio, HF_HIT);
		r->blk = blk;
		/* read_hit_end's success path is irq-safe (vc_env.h) */
		io_init(&r->io[0], c->cdev, VC_DEV_READ, VC_DEV_IRQ_END,
			blk_sector(c, blk) + (r->off >> VC_SECTOR_SHIFT),
			r->len, r->hio->buf, r->hio->buf_off + r->hoff,
			read_hit_end, r);
		vc_dev_submit(&r->io[0]);
		return;
	}

	/* miss */
	if (!r->hit) {
		r->hit = 2;
		count_path(r, VC_DSTAT_OFF(read_misses));
	}
	ef_or(r->hio, HF_MISS);
	if (vc_effective_mode(c) == VC_MODE_PT)
		byp = VC_BYP_MODE;
	else if (ef & HF_BYP_PID)
		byp = VC_BYP_PID;
	else if (ef & HF_BYP_SEQ)
		byp = VC_BYP_SEQ;
	else if (!block_fits(c, r->key))
		byp = VC_BYP_MODE;
	else if (admission_refuses(c, s, r->key))
		byp = VC_BYP_ADMISSION;
	if (byp < 0 && s->byp_inflight)
		byp = VC_BYP_BUSY;	/* a write around us is in flight */
	blk = ~0u;
	if (byp < 0) {
		blk = vc_take_victim(c, s, r->key);
		if (blk == ~0u)
			byp = VC_BYP_NOSPACE;
		r->gen = s->byp_gen;
	}
	if (byp < 0) {
		r->blk = blk;
		r->superseded = 0;
		r->fill_next = s->fills;
		s->fills = r;
	}
	vc_spin_unlock(&s->lock);
	if (byp >= 0) {
		count_bypass(r, byp);
		read_backing(r);
		return;
	}
	vc_stat_add(VC_STAT(c, admitted), 1);
	first = vc_key_lba(r->key);
	nr = 1;
	r->ra = vc_ra_take(c, r->key, &first, &nr);
	if (r->ra) {
		r->bounce = vc_ra_buf(r->ra);
	} else if (!(c->flags & VC_CFG_NODATA)) {
		r->bounce = vc_buf_alloc(c->block_size, VC_GFP_NOIO);
		if (!r->bounce) {
			if (!fill_unlink(c, r))
				vc_invalidate_blk(c, blk);
			count_bypass(r, VC_BYP_BUSY);
			read_backing(r);
			return;
		}
	}
	note_backing_io(c);
	io_init(&r->io[0], bdev_of(r), VC_DEV_READ, 0,
		first << (c->block_shift - VC_SECTOR_SHIFT),
		nr * c->block_size, r->bounce, 0, fill_read_end, r);
	vc_dev_submit(&r->io[0]);
}

/* ------------------------------------------------------------ writes */
static void byp_uncount(struct vc_req *r);

static void backing_write_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;

	byp_uncount(r);
	home_write_done(r->c, vc_key_dev(r->key));
	if (err)
		vc_stat_add(VC_DSTAT(r->c, vc_key_dev(r->key),
				     backing_write_errors), 1);
	else
		vc_stat_add(VC_STAT(r->c, backing_bytes_written), r->len);
	req_done(r, err);
}

/*
 * Something may reach the backing device behind the set's fills (set lock
 * held): fills in flight are stale, new misses go around the cache.
 */
static void byp_start_locked(struct vc_set *s)
{
	s->byp_inflight++;
	s->byp_gen++;
}

/* A write around the cache is in flight in its set (set lock held). */
static void byp_count_locked(struct vc_set *s, struct vc_req *r)
{
	byp_start_locked(s);
	r->byp_counted = 1;
}

/* A write around the cache is no longer in flight in its set. */
static void byp_uncount(struct vc_req *r)
{
	struct vc_set *s;

	if (!r->byp_counted)
		return;
	s = &r->c->sets[vc_set_of(r->c, r->key)];
	vc_spin_lock(&s->lock);
	s->byp_inflight--;
	vc_spin_unlock(&s->lock);
	r->byp_counted = 0;
}

/*
 * A write around the cache over a block whose record may still say DIRTY
 * (written back, but the clean record not yet durable; or a failed
 * tombstone).  Were the write acknowledged first, a power cut would let
 * that record bring the old data back over it, FUA or a later FLUSH
 * notwithstanding: the record write (FUA) must complete before the new
 * data goes home.  If it failed, the block stays a (failed) tombstone that
 * is never served, the write fails with EIO (nothing written), and the
 * next request for the block or the cleaner's tick retries the record.
 */
static void dispatch_write(struct vc_req *r);

static void byp_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	if (err) {
		byp_uncount(r);
		vc_redrive(r->c);
		req_done(r, -EIO);
		return;
	}
	write_backing_only(r);
}

static void write_backing_only(struct vc_req *r)
{
	note_backing_io(r->c);
	io_init(&r->io[0], bdev_of(r), VC_DEV_WRITE, r->fua ? VC_DEV_FUA : 0,
		r->sector, r->len, src_buf(r), src_off(r), backing_write_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * The block of @r was invalidated; if its record may still say DIRTY
 * (@md), the host write is acknowledged only once a record write cleared
 * it: acknowledged first, a power cut would let the stale record bring
 * the old data back over the new.  If the record cannot be written, the
 * write fails with EIO (the block stays a failed tombstone).  The result
 * is otherwise r->err_back.
 */
static void ack_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	req_done(r, err ? -EIO : r->err_back);
}

static void ack_after_record(struct vc_req *r, bool md)
{
	struct vc_cache *c = r->c;

	if (md) {
		/* may complete @r; the record write's end redrives waiters */
		vc_md_mark(c, r->blk, &r->mdw, ack_md_end);
		return;
	}
	vc_redrive(c);
	req_done(r, r->err_back);
}

/*
 * Write-back write failed on the cache (data or metadata): the host data
 * goes to the backing device instead; the block is dropped unless it holds
 * other dirty data, which is then lost (counted).
 */
static void wb_fallback_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool md;

	home_write_done(c, vc_key_dev(r->key));
	if (err)
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_write_errors),
			    1);
	else
		vc_stat_add(VC_STAT(c, backing_bytes_written), r->len);
	/*
	 * The block's older dirty data is gone if it could not be read back
	 * (lost), or if the write home that carried it failed: reads must
	 * fail from now on, never return the backing device's older data.
	 */
	if (err && r->olddirty)
		r->lost = 1;
	vc_spin_lock(&s->lock);
	md = r->lost ? vc_lose_locked(c, s, r->blk) :
		       vc_invalidate_locked(c, s, r->blk);
	vc_spin_unlock(&s->lock);
	r->err_back = err;
	ack_after_record(r, md);
}

/*
 * The host data goes home instead of the cache.  FUA when the block held
 * older dirty data (r->olddirty): its DIRTY record is cleared right after,
 * and until the new data is durable at home nothing else would hold the
 * block's newest durable version (a power cut before the backing device's
 * next FLUSH would bring back its older data).
 */
static void write_piece_home(struct vc_req *r)
{
	note_backing_io(r->c);
	io_init(&r->io[0], bdev_of(r), VC_DEV_WRITE,
		r->fua || r->olddirty ? VC_DEV_FUA : 0,
		r->sector, r->len, src_buf(r), src_off(r), wb_fallback_end, r);
	vc_dev_submit(&r->io[0]);
}

/* The rest of the dirty block was read back: send the whole block home. */
static void rmw_read_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;

	if (err) {
		vc_stat_add(VC_STAT(c, cache_read_errors), 1);
		vc_log_err("%s: cache errors on dirty block %u: its other data is lost",
			   c->cdev->name, r->blk);
		r->lost = 1;
		write_piece_home(r);
		return;
	}
	vc_buf_copy(r->bounce, r->off, src_buf(r), src_off(r), r->len);
	note_backing_io(c);
	/* FUA: the block's dirty record is cleared right after */
	io_init(&r->io[0], bdev_of(r), VC_DEV_WRITE, VC_DEV_FUA,
		vc_key_lba(r->key) << (c->block_shift - VC_SECTOR_SHIFT),
		c->block_size, r->bounce, 0, wb_fallback_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * A write to a cached block failed on the cache device (data or record).
 * The host data goes home instead and the block is dropped.  If the block
 * held other dirty data (a partial write), that is read back from the
 * cache and written home with it, so nothing is lost unless the read fails
 * too.  @r holds the block BUSY.
 */
static void wb_fallback(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool partial_dirty;

	vc_spin_lock(&s->lock);
	if (c->words[r->blk] & B_CLEANING) {
		/* an older version is on its way home: it must land first */
		vc_clean_park(c, r);
		vc_spin_unlock(&s->lock);
		return;
	}
	r->olddirty = (c->words[r->blk] & B_DIRTY) && !r->newdirty;
	partial_dirty = r->olddirty && r->len != c->block_size;
	vc_spin_unlock(&s->lock);
	if (!partial_dirty) {
		write_piece_home(r);
		return;
	}
	if (!(c->flags & VC_CFG_NODATA) && !r->bounce)
		r->bounce = vc_buf_alloc(c->block_size, VC_GFP_NOIO);
	if (!(c->flags & VC_CFG_NODATA) && !r->bounce) {
		/* the pool's reserve: saving dirty data must not fail */
		struct vc_pooled_buf *pb = vc_mempool_alloc(&c->blk_pool);

		vc_buf_init_mem(&pb->buf, pb->data, c->block_size);
		r->bounce = &pb->buf;
		r->bounce_pooled = 1;
	}
	io_init(&r->io[0], c->cdev, VC_DEV_READ, 0, blk_sector(c, r->blk),
		c->block_size, r->bounce, 0, rmw_read_end, r);
	vc_dev_submit(&r->io[0]);
}

/* The cleaner's write home of @r's block ended: fall back now. */
void vc_clean_unpark(struct vc_req *r)
{
	wb_fallback(r);
}

static void wb_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	if (err) {
		wb_fallback(r);
		return;
	}
	vc_clear_bits(r->c, r->blk, B_BUSY);
	req_done(r, 0);
}

static void fua_drain_end(struct vc_drain_waiter *dw, int err)
{
	struct vc_req *r = vc_container_of(dw, struct vc_req, dw);

	req_done(r, err);
}

/*
 * A FUA write over a dirty block waited for the commit of its record.  If
 * the commit failed, its data becomes durable by write-back instead.
 */
static void fua_commit_end(struct vc_commit_waiter *cw, int err)
{
	struct vc_req *r = vc_container_of(cw, struct vc_req, cw);

	if (err) {
		r->dw.fn = fua_drain_end;
		vc_drain_wait(r->c, &r->dw, vc_key_dev(r->key));
		return;
	}
	req_done(r, 0);
}

static void wb_write_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s;
	u64 w;

	if (err) {
		vc_cache_write_failed(c, err, "cache write failed");
		wb_fallback(r);
		return;
	}
	vc_stat_add(VC_STAT(c, flash_bytes_written), r->len);
	s = vc_set_of_blk(c, r->blk);
	vc_spin_lock(&s->lock);
	w = c->words[r->blk];
	if (!(w & B_DIRTY)) {
		/*
		 * Newly dirty.  FUA (or no group commit): acknowledged once
		 * its record is durable.  Else now: the record goes out with
		 * the next commit (a FLUSH, a FUA write, the timer).
		 */
		bool lazy = !r->fua && vc_param(c, VC_P_COMMIT_MS);

		r->newdirty = 1;
		w |= B_DIRTY | B_FLASHDIRTY | B_REDIRTY;
		w = (w & ~B_EPOCH_MASK) | ((u64)vc_cur_epoch(c) << B_EPOCH_SHIFT);
		if (lazy)
			w &= ~B_BUSY;
		vc_md_note_dirty(c, vc_md_unit_of(c, r->blk));
		vc_block_set_word(c, s, r->blk, w);
		vc_spin_unlock(&s->lock);
		vc_cache_kick_cleaner_if_needed(c);
		if (!lazy) {
			vc_md_mark(c, r->blk, &r->mdw, wb_md_end);
			return;
		}
		vc_md_defer(c, r->blk);
		vc_redrive(c);
		req_done(r, 0);
		return;
	}
	/* newer than what the cleaner may be writing home: dirty again */
	w |= B_REDIRTY;
	vc_block_set_word(c, s, r->blk, w & ~B_BUSY);
	vc_spin_unlock(&s->lock);
	vc_redrive(c);
	if (r->fua && vc_commit_pending(c)) {
		/* its DIRTY record may not be durable yet: commit first */
		r->cw.fn = fua_commit_end;
		vc_commit_request(c, &r->cw, false);
		return;
	}
	req_done(r, 0);
}

static void wt_sub_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s;
	bool md = false, lost = false;
	u64 w;

	if (io == &r->io[0])
		r->err_cache = err;
	else
		r->err_back = err;
	if (io == &r->io[1])
		home_write_done(c, vc_key_dev(r->key));
	if (!vc_atomic_dec_and_test(&r->pending))
		return;
	if (r->err_cache)
		vc_cache_write_failed(c, r->err_cache, "cache write failed");
	else
		vc_stat_add(VC_STAT(c, flash_bytes_written), r->len);
	if (r->err_back)
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_write_errors),
			    1);
	else
		vc_stat_add(VC_STAT(c, backing_bytes_written), r->len);
	s = vc_set_of_blk(c, r->blk);
	vc_spin_lock(&s->lock);
	w = c->words[r->blk];
	if (r->err_cache && !r->err_back && (w & B_DIRTY) &&
	    r->len != c->block_size) {
		/* save the rest of the dirty block before dropping it */
		vc_spin_unlock(&s->lock);
		wb_fallback(r);
		return;
	}
	if (r->err_cache || (r->err_back && !(w & B_DIRTY))) {
		/* cache copy unusable, or it disagrees with the backing dev */
		lost = r->err_cache && (w & B_DIRTY) && r->len != c->block_size;
		vc_block_set_word(c, s, r->blk, w & ~B_BUSY);
		md = lost ? vc_lose_locked(c, s, r->blk) :
			    vc_invalidate_locked(c, s, r->blk);
	} else {
		if (w & B_DIRTY)
			w |= B_REDIRTY;
		vc_block_set_word(c, s, r->blk, w & ~B_BUSY);
		/*
		 * Written back, its clean record not yet durable: until it
		 * is, a power cut lets the stale DIRTY record serve the
		 * block's old cache copy (a failed cache FLUSH would not say
		 * so).  Acknowledge once the clean record is durable.
		 */
		md = (w & (B_DIRTY | B_FLASHDIRTY)) == B_FLASHDIRTY;
	}
	vc_spin_unlock(&s->lock);
	ack_after_record(r, md);
}

/*
 * Write-through: both copies.  Over a dirty block (held BUSY by @r) the
 * home copy is FUA: should the cache copy fail, the block is dropped and
 * its DIRTY record cleared, and the home copy must then already be
 * durable (else a power cut before the backing device's next FLUSH loses
 * both the old durable data and the new).
 */
static void write_both(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	u32 fl = r->fua ? VC_DEV_FUA : 0;
	u32 fl_home = fl;

	if (vc_word(c, r->blk) & B_DIRTY)
		fl_home |= VC_DEV_FUA;
	vc_atomic_set(&r->pending, 2);
	note_backing_io(c);
	io_init(&r->io[0], c->cdev, VC_DEV_WRITE, fl,
		blk_sector(c, r->blk) + (r->off >> VC_SECTOR_SHIFT), r->len,
		src_buf(r), src_off(r), wt_sub_end, r);
	io_init(&r->io[1], bdev_of(r), VC_DEV_WRITE, fl_home, r->sector, r->len,
		src_buf(r), src_off(r), wt_sub_end, r);
	vc_dev_submit(&r->io[0]);
	vc_dev_submit(&r->io[1]);
}

static void write_cache_wb(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	io_init(&r->io[0], c->cdev, VC_DEV_WRITE, r->fua ? VC_DEV_FUA : 0,
		blk_sector(c, r->blk) + (r->off >> VC_SECTOR_SHIFT), r->len,
		src_buf(r), src_off(r), wb_write_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * A partial write that missed, in write-back: the block is allocated and
 * its rest read from the backing device, then the whole block is written
 * to the cache as any write-back write.  Without it every small write to
 * an uncached block (a database's log appends in 512-byte units, a
 * journal) would go to the disk synchronously, again and again for the
 * same block.  If the read fails or a write went around the cache in the
 * set meanwhile (our copy of the rest may be old), the block is dropped
 * and the write goes around the cache as before.
 */
static void rmw_alloc_around(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = &c->sets[vc_set_of(c, r->key)];
	bool md;

	vc_spin_lock(&s->lock);
	md = vc_invalidate_locked(c, s, r->blk);
	byp_count_locked(s, r);
	vc_spin_unlock(&s->lock);
	count_bypass(r, VC_BYP_BUSY);
	if (md) {
		vc_md_mark(c, r->blk, &r->mdw, byp_md_end);
		return;
	}
	vc_redrive(c);
	write_backing_only(r);
}

static void rmw_alloc_read_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool stale;

	if (err) {
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_read_errors),
			    1);
		rmw_alloc_around(r);
		return;
	}
	vc_stat_add(VC_STAT(c, backing_bytes_read), c->block_size);
	vc_spin_lock(&s->lock);
	stale = s->byp_gen != r->gen;
	vc_spin_unlock(&s->lock);
	if (stale) {
		rmw_alloc_around(r);
		return;
	}
	vc_buf_copy(r->bounce, r->off, src_buf(r), src_off(r), r->len);
	/* from now on a whole-block write of r->bounce */
	r->rmw = 1;
	r->sector -= r->off >> VC_SECTOR_SHIFT;
	r->off = 0;
	r->len = c->block_size;
	write_cache_wb(r);
}

/* @r holds its new block @r->blk BUSY; r->gen is the set's byp_gen. */
static void rmw_alloc(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	vc_stat_add(VC_STAT(c, admitted), 1);
	if (!(c->flags & VC_CFG_NODATA)) {
		r->bounce = vc_buf_alloc(c->block_size, VC_GFP_NOIO);
		if (!r->bounce) {
			rmw_alloc_around(r);
			return;
		}
	}
	note_backing_io(c);
	io_init(&r->io[0], bdev_of(r), VC_DEV_READ, 0,
		vc_key_lba(r->key) << (c->block_shift - VC_SECTOR_SHIFT),
		c->block_size, r->bounce, 0, rmw_alloc_read_end, r);
	vc_dev_submit(&r->io[0]);
}

static void dispatch_write(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = &c->sets[vc_set_of(c, r->key)];
	int ef = vc_atomic_read(&r->hio->eflags);
	enum vc_mode m = vc_effective_mode(c);
	bool full = r->off == 0 && r->len == c->block_size;
	int byp = -1;
	bool md;
	u32 blk;
	u64 w;

	if (ef & HF_BYP_PID)
		byp = VC_BYP_PID;
	else if (ef & HF_BYP_SEQ)
		byp = VC_BYP_SEQ;
	else if (m == VC_MODE_WA || m == VC_MODE_PT)
		byp = VC_BYP_MODE;

	vc_spin_lock(&s->lock);
	blk = vc_lookup(c, s, r->key);
	if (blk != ~0u) {
		w = c->words[blk];
		/*
		 * A write-back write does not wait for the block's write
		 * home: it re-dirties the block (REDIRTY), so the older
		 * version's write-back does not mark it clean.  Any other
		 * path sends data home or may drop the block: it waits, so
		 * that the cleaner's older copy never lands home after it.
		 */
		if ((w & (B_BUSY | B_READERS_MASK | B_DIRTY | B_TOMB)) ==
		    B_BUSY && full && m == VC_MODE_WB && byp < 0 &&
		    !vc_dirty_over_high(c) && fill_overtake_locked(s, blk)) {
			/* a fill reading it from the disk: no waiting */
			if (!r->hit) {
				r->hit = 1;
				count_path(r, VC_DSTAT_OFF(write_hits));
			}
			r->blk = blk;
			vc_lru_touch(c, s, blk);
			vc_spin_unlock(&s->lock);
			write_cache_wb(r);
			return;
		}
		if ((w & (B_BUSY | B_READERS_MASK)) ||
		    ((w & B_CLEANING) && (m != VC_MODE_WB || byp >= 0))) {
			if (!r->waited) {
				r->waited = 1;
				vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key),
						     write_waits), 1);
			}
			vc_defer(c, r);
			vc_spin_unlock(&s->lock);
			return;
		}
		/*
		 * The whole block is rewritten: nothing lost is left, once
		 * no record can bring the lost data back.  A marker whose
		 * record is not clear (B_FLASHDIRTY: LOST, or may still say
		 * DIRTY) has it cleared first, then the write is driven
		 * again; if the record cannot be cleared the write fails
		 * and the marker stays (dropping it first would serve the
		 * backing device's older data).
		 */
		if ((w & B_LOST) && full) {
			if (unlose_locked(c, s, blk)) {
				unlose_then(r, s, blk);
				return;
			}
			vc_spin_unlock(&s->lock);
			dispatch_write(r);	/* now a miss */
			return;
		}
		if (w & B_TOMB) {
			/*
			 * A failed tombstone (record may say dirty): retry
			 * its record write; the data goes around the cache
			 * once it is cleared.  A lost marker (record clear)
			 * stays: the write goes around, reads keep failing.
			 */
			byp_count_locked(s, r);
			count_bypass(r, VC_BYP_BUSY);
			r->blk = blk;
			if (!(w & B_FLASHDIRTY)) {
				vc_spin_unlock(&s->lock);
				write_backing_only(r);
				return;
			}
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_spin_unlock(&s->lock);
			vc_md_mark(c, blk, &r->mdw, byp_md_end);
			return;
		}
		if (!r->hit) {
			r->hit = 1;
			count_path(r, VC_DSTAT_OFF(write_hits));
		}
		r->blk = blk;
		if (m == VC_MODE_WB && byp < 0 && !(w & B_DIRTY) &&
		    vc_dirty_over_high(c) && vc_throttle_write(c, r)) {
			vc_spin_unlock(&s->lock);	/* slowed at the mark */
			return;
		}
		if (m == VC_MODE_WB && byp < 0 &&
		    ((w & B_DIRTY) || !vc_dirty_over_hard(c))) {
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_lru_touch(c, s, blk);
			vc_spin_unlock(&s->lock);
			write_cache_wb(r);
			return;
		}
		/* write-through: also a clean block past the hard limit */
		if ((m == VC_MODE_WT || m == VC_MODE_WB) && byp < 0) {
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_lru_touch(c, s, blk);
			vc_spin_unlock(&s->lock);
			write_both(r);
			return;
		}
		/* bypassing write over a cached block */
		count_bypass(r, byp);
		if (w & B_DIRTY) {
			/* keep the dirty copy coherent: write both */
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_spin_unlock(&s->lock);
			write_both(r);
			return;
		}
		md = vc_invalidate_locked(c, s, blk);
		byp_count_locked(s, r);
		vc_spin_unlock(&s->lock);
		if (md) {
			/* the new data goes home once no record says dirty */
			r->blk = blk;
			vc_md_mark(c, blk, &r->mdw, byp_md_end);
			return;
		}
		write_backing_only(r);
		return;
	}
	if (!r->hit) {
		r->hit = 2;
		count_path(r, VC_DSTAT_OFF(write_misses));
	}
	/*
	 * A partial block is allocated (read-modify-write) in write-back
	 * below the high watermark, unless a write around the cache is in
	 * flight in the set (its data could be older in our read); else it
	 * goes around the cache.
	 */
	if (byp < 0 && !block_fits(c, r->key))
		byp = VC_BYP_MODE;
	if (byp < 0 && !full &&
	    (m != VC_MODE_WB || vc_dirty_over_hard(c) || s->byp_inflight))
		byp = VC_BYP_MODE;	/* partial block: not allocated */
	if (byp < 0 && admission_refuses(c, s, r->key))
		byp = VC_BYP_ADMISSION;	/* first touch: write around */
	if (byp < 0 && m == VC_MODE_WB && vc_dirty_over_high(c) &&
	    vc_throttle_write(c, r)) {
		vc_spin_unlock(&s->lock);	/* slowed at the mark */
		return;
	}
	blk = ~0u;
	if (byp < 0) {
		blk = vc_take_victim(c, s, r->key);
		if (blk == ~0u)
			byp = VC_BYP_NOSPACE;
		r->gen = s->byp_gen;
	}
	if (byp >= 0) {
		byp_count_locked(s, r);
	}
	vc_spin_unlock(&s->lock);
	if (byp >= 0) {
		count_bypass(r, byp);
		write_backing_only(r);
		return;
	}
	r->blk = blk;
	if (!full)
		rmw_alloc(r);
	else if (m == VC_MODE_WB && !vc_dirty_over_hard(c))
		write_cache_wb(r);
	else
		write_both(r);	/* write-through, or past the hard limit */
}

/* ---------------------------------------------------------- discards */
static void discard_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	/*
	 * A failed record write leaves a failed tombstone: never served,
	 * writes to it retry the record first.  After a power cut its stale
	 * record may bring the pre-discard data back, which a discard
	 * allows (discarded data is undefined until rewritten): done.
	 */
	(void)err;
	req_done(r, 0);
}

/*
 * The block of a discard or write-zeroes piece @r, idle, with its set
 * lock held; or ~0u, @r done (not cached) or deferred (busy), unlocked.
 */
static u32 lookup_idle_locked(struct vc_cache *c, struct vc_set *s,
			      struct vc_req *r)
{
	u32 blk;

	vc_spin_lock(&s->lock);
	blk = vc_lookup(c, s, r->key);
	if (blk == ~0u) {
		vc_spin_unlock(&s->lock);
		req_done(r, 0);
		return ~0u;
	}
	if (c->words[blk] & (B_BUSY | B_READERS_MASK | B_CLEANING)) {
		vc_defer(c, r);
		vc_spin_unlock(&s->lock);
		return ~0u;
	}
	return blk;
}

/*
 * A discard or write-zeroes piece dropped block @blk (or left it): done
 * now, or once the record write clearing it ends (@md: @fn decides).
 */
static void finish_dropped(struct vc_req *r, u32 blk, bool md,
			   void (*fn)(struct vc_md_waiter *mw, int err))
{
	struct vc_cache *c = r->c;

	if (md) {
		r->blk = blk;
		vc_md_mark(c, blk, &r->mdw, fn);
		return;
	}
	vc_redrive(c);
	req_done(r, 0);
}

static void dispatch_discard(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = &c->sets[vc_set_of(c, r->key)];
	bool full = r->off == 0 && r->len == c->block_size;
	bool md = false;
	u32 blk;
	u64 w;

	blk = lookup_idle_locked(c, s, r);
	if (blk == ~0u)
		return;
	w = c->words[blk];
	if ((w & B_LOST) && full) {
		if (unlose_locked(c, s, blk)) {
			unlose_then(r, s, blk);
			return;
		}
		vc_spin_unlock(&s->lock);
		vc_redrive(c);
		req_done(r, 0);
		return;
	}
	/*
	 * A partial discard of a dirty block keeps it (the rest is live), as
	 * it keeps a lost marker (the rest is lost).
	 */
	if (w & B_LOST) {
		vc_spin_unlock(&s->lock);
		req_done(r, 0);
		return;
	}
	if (full || !(w & B_DIRTY))
		md = vc_invalidate_locked(c, s, blk);
	vc_spin_unlock(&s->lock);
	finish_dropped(r, blk, md, discard_md_end);
}

/* ------------------------------------------------------ write zeroes */
static void zero_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	/* the record may bring the old data back: not zeroed */
	req_done(r, err ? -EIO : 0);
}

/*
 * A piece of a WRITE_ZEROES.  Zeroes must read back and be durable like a
 * write's data: a dirty block keeps them in the cache (written there like
 * data, never dropped, since the backing device's zeroes are durable only
 * after a FLUSH); a clean block is dropped (its record cleared first if it
 * may say dirty) and the backing device gets WRITE_ZEROES for the whole
 * range once every piece is done.
 */
static void dispatch_zero(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	struct vc_set *s = &c->sets[vc_set_of(c, r->key)];
	bool full = r->off == 0 && r->len == c->block_size;
	bool md;
	u32 blk;
	u64 w;

	blk = lookup_idle_locked(c, s, r);
	if (blk == ~0u)
		return;
	w = c->words[blk];
	if ((w & B_VALID) && (w & B_DIRTY)) {
		vc_spin_unlock(&s->lock);
		r->zero = 1;
		r->kind = RK_WRITE;
		dispatch_write(r);
		return;
	}
	if (w & B_LOST) {
		if (!full) {
			/* the rest of the block stays lost */
			vc_spin_unlock(&s->lock);
			req_done(r, 0);
			return;
		}
		if (unlose_locked(c, s, blk)) {
			unlose_then(r, s, blk);
			return;
		}
		vc_spin_unlock(&s->lock);
		vc_redrive(c);
		req_done(r, 0);
		return;
	}
	md = vc_invalidate_locked(c, s, blk);
	vc_spin_unlock(&s->lock);
	finish_dropped(r, blk, md, zero_md_end);
}

void vc_req_dispatch(struct vc_req *r)
{
	switch (r->kind) {
	case RK_READ:
		dispatch_read(r);
		break;
	case RK_WRITE:
		dispatch_write(r);
		break;
	case RK_ZERO:
		dispatch_zero(r);
		break;
	default:
		dispatch_discard(r);
		break;
	}
}

/* ------------------------------------------------ host I/O lifecycle */
struct vc_aux {
	struct vc_cache *c;
	struct vc_host_io *hio;
	vc_atomic_t pending;
	int err;
	bool then_write;	/* PREFLUSH done: submit the write */
	s64 home_snap;		/* home_writes when the backing FLUSH began */
	struct vc_dev_io io[2];
	struct vc_commit_waiter cw;	/* the cache side of a FLUSH */
	struct vc_drain_waiter dw;	/* ... if its commit failed */
};

static void split_and_dispatch(struct vc_cache *c, struct vc_host_io *hio);

static void hio_complete(struct vc_cache *c, struct vc_host_io *hio)
{
	int ef = vc_atomic_read(&hio->eflags);
	u32 dev = hio->dev_id;
	int path;

	/* a miss anywhere makes a miss; else a bypass anywhere a bypass */
	switch (hio->op) {
	case VC_OP_READ:
	case VC_OP_WRITE:
		if (ef & HF_MISS)
			path = hio->op == VC_OP_READ ? VC_LAT_READ_MISS :
						       VC_LAT_WRITE_MISS;
		else if (ef & HF_BYPASS)
			path = VC_LAT_BYPASS;
		else
			path = hio->op == VC_OP_READ ? VC_LAT_READ_HIT :
						       VC_LAT_WRITE_HIT;
		break;
	case VC_OP_FLUSH:
		path = VC_LAT_FLUSH;
		break;
	default:
		path = -1;
	}
	if (path >= 0)
		vc_lat_add(c, path, vc_now_ns() - hio->start_ns);
	hio->end_io(hio, vc_atomic_read(&hio->error));
	vc_atomic_inc(&c->wakers);	/* @c may not be freed under us */
	vc_atomic_dec(&c->bdev[dev].inflight);
	if (vc_atomic_dec_and_test(&c->host_inflight))
		vc_waitq_wake_all(&c->io_wq);
	vc_atomic_dec(&c->wakers);
}

/*
 * A discard or write-zeroes has gone down (or never will): its blocks'
 * sets stop counting it (split_and_dispatch() counted each piece).
 */
static void span_uncount(struct vc_cache *c, struct vc_host_io *hio)
{
	u64 lba = (hio->sector << VC_SECTOR_SHIFT) >> c->block_shift;
	u64 last = ((hio->sector << VC_SECTOR_SHIFT) + hio->len - 1) >>
		   c->block_shift;

	for (; lba <= last; lba++) {
		struct vc_set *s = &c->sets[vc_set_of(c, vc_mkkey(hio->dev_id,
								   lba))];

		vc_spin_lock(&s->lock);
		s->byp_inflight--;
		vc_spin_unlock(&s->lock);
	}
}

static void discard_down_end(struct vc_dev_io *io, int err)
{
	struct vc_aux *a = io->private;

	struct vc_cache *c = a->c;
	struct vc_host_io *hio = a->hio;

	span_uncount(c, hio);
	home_write_done(c, hio->dev_id);
	/* a backing device without discard support is not an error */
	if (err && (err != -EOPNOTSUPP || hio->op == VC_OP_WRITE_ZEROES))
		set_err(hio, err);
	vc_mempool_free(&c->aux_pool, a);	/* before: @c may go after */
	hio_complete(c, hio);
}

static void hio_put(struct vc_cache *c, struct vc_host_io *hio)
{
	struct vc_aux *a;

	if (!vc_atomic_dec_and_test(&hio->pending))
		return;
	a = hio->aux;
	if ((hio->op == VC_OP_DISCARD || hio->op == VC_OP_WRITE_ZEROES) && a &&
	    !vc_atomic_read(&hio->error)) {
		/* blocks invalidated (and durable): pass it down */
		note_backing_io(c);
		io_init(&a->io[0], c->bdev[hio->dev_id].dev,
			hio->op == VC_OP_DISCARD ? VC_DEV_DISCARD :
			VC_DEV_WRITE_ZEROES,
			(hio->flags & VC_IO_FUA) ? VC_DEV_FUA : 0,
			hio->sector, hio->len, NULL, 0, discard_down_end, a);
		vc_dev_submit(&a->io[0]);
		return;
	}
	if (hio->op == VC_OP_DISCARD || hio->op == VC_OP_WRITE_ZEROES)
		span_uncount(c, hio);
	vc_mempool_free(&c->aux_pool, a);
	hio_complete(c, hio);
}

static void flush_done_part(struct vc_aux *a);

static void flush_drain_end(struct vc_drain_waiter *dw, int err)
{
	struct vc_aux *a = vc_container_of(dw, struct vc_aux, dw);

	if (err)
		a->err = err;
	flush_done_part(a);
}

/*
 * The cache side of a FLUSH: the commit that started after it arrived
 * (one cache FLUSH, then the records dirtied since the last commit) is
 * done.  If it failed (the cache degraded meanwhile), the cache device
 * holds nothing durable the FLUSH can count on: it completes once the
 * device's dirty blocks are written back and every record of the device
 * that may still say DIRTY is cleared (FUA record writes; a stale DIRTY
 * record would bring back, after a power cut, a cache copy no FLUSH made
 * durable), EIO if either fails or the device has lost data (lost
 * markers: acknowledged data that will never go home).  With none of
 * these, everything acknowledged is on the backing device and its FLUSH
 * decides.
 */
static void flush_commit_end(struct vc_commit_waiter *cw, int err)
{
	struct vc_aux *a = vc_container_of(cw, struct vc_aux, cw);
	struct vc_cache *c = a->c;
	u32 dev = a->hio->dev_id;

	if (err && (vc_atomic64_read(&c->bdev[dev].nr_dirty) > 0 ||
		    vc_atomic64_read(&c->bdev[dev].nr_flashdirty) > 0 ||
		    vc_atomic64_read(&c->bdev[dev].nr_lost) > 0)) {
		a->dw.fn = flush_drain_end;
		vc_drain_wait(c, &a->dw, dev);
		return;
	}
	flush_done_part(a);
}

static void flush_end(struct vc_dev_io *io, int err)
{
	struct vc_aux *a = io->private;
	struct vc_bdev_slot *d = &a->c->bdev[a->hio->dev_id];

	if (err) {
		vc_stat_add(VC_DSTAT(a->c, a->hio->dev_id, backing_write_errors),
			    1);
		a->err = err;
	} else {
		/* what had completed before it is durable now */
		s64 old = vc_atomic64_read(&d->home_flushed);

		while (old < a->home_snap) {
			s64 seen = vc_atomic64_cmpxchg(&d->home_flushed, old,
						       a->home_snap);

			if (seen == old)
				break;
			old = seen;
		}
	}
	flush_done_part(a);
}

static void flush_done_part(struct vc_aux *a)
{
	struct vc_cache *c = a->c;
	struct vc_host_io *hio = a->hio;

	if (!vc_atomic_dec_and_test(&a->pending))
		return;
	if (a->err)
		set_err(hio, a->err);
	if (a->then_write && !a->err) {
		if (hio->op == VC_OP_WRITE_ZEROES) {
			/* it keeps its state for passing the zeroes down */
			a->then_write = false;
			hio->aux = a;
		} else {
			vc_mempool_free(&c->aux_pool, a);
			hio->aux = NULL;
		}
		split_and_dispatch(c, hio);
		return;
	}
	vc_mempool_free(&c->aux_pool, a);
	hio_complete(c, hio);
}

/*
 * Commit (FLUSH the cache device), and FLUSH the backing device of @hio
 * only if a host write completed there since its last successful FLUSH
 * (write-through, around the cache, a fallback, write-zeroes): what the
 * cleaner writes home it FLUSHes itself before a block is marked clean,
 * so a FLUSH in write-back does not wait behind the disk's queue of
 * write-back writes (a disk's FLUSH CACHE waits for all of them).
 */
static void do_flush(struct vc_cache *c, struct vc_host_io *hio,
		     bool then_write)
{
	struct vc_aux *a = vc_mempool_alloc(&c->aux_pool);
	struct vc_bdev_slot *d = &c->bdev[hio->dev_id];
	bool home;

	a->c = c;
	a->hio = hio;
	a->then_write = then_write;
	a->home_snap = vc_atomic64_read(&d->home_writes);
	home = a->home_snap != vc_atomic64_read(&d->home_flushed);
	vc_atomic_set(&a->pending, home ? 2 : 1);
	a->cw.fn = flush_commit_end;
	if (home) {
		note_backing_io(c);
		vc_stat_add(VC_DSTAT(c, hio->dev_id, backing_flushes), 1);
		io_init(&a->io[1], d->dev, VC_DEV_FLUSH, 0, 0, 0, NULL, 0,
			flush_end, a);
	}
	vc_commit_request(c, &a->cw, true);
	if (home)
		vc_dev_submit(&a->io[1]);
}

_Static_assert(sizeof(struct vc_req) <=
	       sizeof(((struct vc_host_io *)0)->vc_req_space),
	       "vc_host_io.vc_req_space too small");

static void split_and_dispatch(struct vc_cache *c, struct vc_host_io *hio)
{
	u64 pos = hio->sector << VC_SECTOR_SHIFT;
	u64 end = pos + hio->len;
	u32 hoff = 0;
	u8 kind = hio->op == VC_OP_READ ? RK_READ :
		  hio->op == VC_OP_WRITE ? RK_WRITE :
		  hio->op == VC_OP_WRITE_ZEROES ? RK_ZERO : RK_DISCARD;

	vc_atomic_set(&hio->pending, 1);
	while (pos < end) {
		u64 lba = pos >> c->block_shift;
		u32 off = (u32)(pos & (c->block_size - 1));
		u32 len = (u32)vc_min_u64(c->block_size - off, end - pos);
		struct vc_req *r;

		if (pos == hio->sector << VC_SECTOR_SHIFT && len == end - pos) {
			/* one piece: use the space in the host request */
			r = (struct vc_req *)hio->vc_req_space;
			vc_memset(r, 0, sizeof(*r));
			r->embedded = 1;
		} else {
			r = vc_mempool_alloc(&c->req_pool);
		}
		r->c = c;
		r->hio = hio;
		r->kind = kind;
		r->fua = (hio->flags & VC_IO_FUA) ? 1 : 0;
		r->key = vc_mkkey(hio->dev_id, lba);
		r->sector = pos >> VC_SECTOR_SHIFT;
		r->off = off;
		r->len = len;
		r->hoff = hoff;
		vc_atomic_inc(&hio->pending);
		if (kind == RK_DISCARD || kind == RK_ZERO) {
			/*
			 * From now until the whole request has gone down to
			 * the backing device, no fill in this block's set may
			 * install what it read there: it may predate the
			 * discard or the zeroes (a block dropped below and
			 * read again before they land would come back with
			 * older data).  The set counts the request as a
			 * write around the cache: fills in flight are stale,
			 * new misses go around, readahead passes it by.
			 */
			struct vc_set *s = &c->sets[vc_set_of(c, r->key)];

			vc_spin_lock(&s->lock);
			byp_start_locked(s);
			vc_spin_unlock(&s->lock);
		}
		vc_req_dispatch(r);
		pos += len;
		hoff += len;
	}
	hio_put(c, hio);
}

/* A discard or write-zeroes: per block, then down to the backing device. */
static void start_passed_down(struct vc_cache *c, struct vc_host_io *hio)
{
	struct vc_aux *a = vc_mempool_alloc(&c->aux_pool);

	a->c = c;
	a->hio = hio;
	hio->aux = a;
	split_and_dispatch(c, hio);
}

/*
 * The host used device @d: write-back's "idle" is measured from here.
 * Stored at most once a millisecond: every request would otherwise pull
 * the line over from the other CPUs.
 */
static void note_host_io(struct vc_bdev_slot *d, u64 now)
{
	if (now - (u64)vc_atomic64_read(&d->last_host_io_ns) > 1000000ULL)
		vc_atomic64_set(&d->last_host_io_ns, (s64)now);
}

void vc_cache_submit(struct vc_cache *c, struct vc_host_io *hio)
{
	struct vc_bdev_slot *d;
	int ef = 0;

	vc_atomic_set(&hio->error, 0);
	vc_atomic_set(&hio->eflags, 0);
	hio->aux = NULL;
	hio->start_ns = vc_now_ns();
	if (hio->dev_id >= VC_MAX_BACKING || !c->bdev[hio->dev_id].dev) {
		hio->end_io(hio, -ENODEV);
		return;
	}
	d = &c->bdev[hio->dev_id];
	note_host_io(d, hio->start_ns);
	if (hio->op > VC_OP_WRITE_ZEROES ||
	    (hio->op != VC_OP_FLUSH &&
	     (!hio->len || (hio->len & (VC_SECTOR_SIZE - 1)) ||
	      hio->sector + (hio->len >> VC_SECTOR_SHIFT) > d->dev->nr_sectors ||
	      hio->sector + (hio->len >> VC_SECTOR_SHIFT) < hio->sector))) {
		hio->end_io(hio, -EINVAL);
		return;
	}
	vc_atomic_inc(&c->host_inflight);
	vc_atomic_inc(&d->inflight);

	switch (hio->op) {
	case VC_OP_READ:
		vc_stat_add(VC_DSTAT(c, hio->dev_id, reads), 1);
		vc_stat_add(VC_DSTAT(c, hio->dev_id, read_bytes), hio->len);
		break;
	case VC_OP_WRITE:
		vc_stat_add(VC_DSTAT(c, hio->dev_id, writes), 1);
		vc_stat_add(VC_DSTAT(c, hio->dev_id, write_bytes), hio->len);
		if (hio->flags & VC_IO_FUA)
			vc_stat_add(VC_DSTAT(c, hio->dev_id, fua_writes), 1);
		break;
	case VC_OP_FLUSH:
		vc_stat_add(VC_DSTAT(c, hio->dev_id, flushes), 1);
		do_flush(c, hio, false);
		return;
	case VC_OP_WRITE_ZEROES:
		vc_stat_add(VC_DSTAT(c, hio->dev_id, write_zeroes), 1);
		if (hio->flags & VC_IO_PREFLUSH) {
			vc_stat_add(VC_DSTAT(c, hio->dev_id, flushes), 1);
			do_flush(c, hio, true);
			return;
		}
		start_passed_down(c, hio);
		return;
	case VC_OP_DISCARD:
		vc_stat_add(VC_DSTAT(c, hio->dev_id, discards), 1);
		start_passed_down(c, hio);
		return;
	}
	if (!vc_pidlist_classify(&c->pids, hio->pid, hio->tgid, hio->cgroup))
		ef |= HF_BYP_PID;
	/*
	 * Sequential streams go around the cache when they would pollute
	 * it (large streaming reads and writes); a small or synchronous
	 * write (a log, a journal, fsync'd appends) never does: it is
	 * latency-critical, and flash is where it is fast.  The stream is
	 * still followed.
	 */
	if (vc_param(c, VC_P_SEQ_ENABLE) &&
	    vc_seq_check(&c->seq, hio->stream ^ ((u64)hio->dev_id << 56),
			 hio->sector, hio->len >> VC_SECTOR_SHIFT) &&
	    (hio->op != VC_OP_WRITE ||
	     (hio->len >= VC_SEQ_MIN_WRITE_BYPASS &&
	      !(hio->flags & (VC_IO_FUA | VC_IO_PREFLUSH)))))
		ef |= HF_BYP_SEQ;
	vc_atomic_set(&hio->eflags, ef);
	if (hio->op == VC_OP_WRITE && (hio->flags & VC_IO_PREFLUSH)) {
		vc_stat_add(VC_DSTAT(c, hio->dev_id, flushes), 1);
		do_flush(c, hio, true);
		return;
	}
	split_and_dispatch(c, hio);
}

/* ---------------------------------------------------------------- pools */
#define REQ_POOL_MIN	256	/* pieces: a 1 MiB request in 4 KiB blocks */
#define AUX_POOL_MIN	16
#define BLK_POOL_MIN	4

int vc_io_pools_init(struct vc_cache *c)
{
	int err = vc_mempool_init(&c->req_pool, REQ_POOL_MIN,
				  sizeof(struct vc_req));

	if (!err)
		err = vc_mempool_init(&c->aux_pool, AUX_POOL_MIN,
				      sizeof(struct vc_aux));
	if (!err && !(c->flags & VC_CFG_NODATA))
		err = vc_mempool_init(&c->blk_pool, BLK_POOL_MIN,
				      sizeof(struct vc_pooled_buf) +
				      c->block_size);
	if (!err && !(c->flags & VC_CFG_NODATA)) {
		c->zero_buf = vc_buf_alloc(c->block_size, VC_GFP_KERNEL);
		if (!c->zero_buf)
			err = -ENOMEM;
	}
	return err;
}

void vc_io_pools_exit(struct vc_cache *c)
{
	vc_buf_free(c->zero_buf);
	c->zero_buf = NULL;
	vc_mempool_exit(&c->blk_pool);
	vc_mempool_exit(&c->aux_pool);
	vc_mempool_exit(&c->req_pool);
}
