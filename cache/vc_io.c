// SPDX-License-Identifier: GPL-2.0
/*
 * vc_io: the host I/O path's common part - modes, the deferred-request
 * list, request helpers, discards and write-zeroes, FLUSH/FUA, a host
 * request's life (split, submit, completion) and the pools.  Reads are in
 * vc_read.c, writes in vc_write.c.
 */
#include "vc_io.h"

static void hio_put(struct vc_cache *c, struct vc_host_io *hio);

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
static void set_err(struct vc_host_io *hio, int err)
{
	if (err)
		vc_atomic_cmpxchg(&hio->error, 0, err);
}

/* A piece finished: record its error, free it, complete the host I/O. */
void vc_req_free(struct vc_req *r)
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

void vc_req_done(struct vc_req *r, int err)
{
	struct vc_cache *c = r->c;
	struct vc_host_io *hio = r->hio;

	vc_req_free(r);
	set_err(hio, err);
	hio_put(c, hio);
}

/* Like vc_req_done but keeps @r alive (its block work goes on). */
void vc_req_ack(struct vc_req *r, int err)
{
	struct vc_host_io *hio = r->hio;

	r->hio = NULL;
	set_err(hio, err);
	hio_put(r->c, hio);
}

void vc_note_backing_io(struct vc_cache *c)
{
	vc_atomic64_set(&c->last_backing_io_ns, (s64)vc_now_ns());
	vc_stat_add(VC_STAT(c, backing_ios), 1);
}

/*
 * A host write (or write-zeroes, discard) ended on backing device @dev:
 * the next host FLUSH must FLUSH that device too (do_flush).  Counted at
 * completion: a backing FLUSH covers only writes completed before it.
 */
void vc_home_write_done(struct vc_cache *c, u32 dev)
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
bool vc_unlose_locked(struct vc_cache *c, struct vc_set *s, u32 blk)
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
		vc_req_done(r, r->kind == RK_DISCARD ? 0 : -EIO);
		return;
	}
	vc_req_dispatch(r);
}

/* Unlock @s, clear the record of the lost marker @blk, then drive @r. */
void vc_unlose_then(struct vc_req *r, struct vc_set *s, u32 blk)
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
/* Count a bypass; one for lack of space also wakes the cleaner. */
void vc_count_bypass(struct vc_req *r, int reason)
{
	struct vc_cache *c = r->c;
	u32 dev = vc_key_dev(r->key);

	vc_ef_or(r->hio, HF_BYPASS);
	vc_stat_add(VC_DSTAT_IDX(c, dev, bypass, reason), 1);
	vc_stat_add(VC_DSTAT_IDX(c, dev, bypass_bytes, reason), r->len);
	if (reason == VC_BYP_ADMISSION)
		vc_stat_add(VC_STAT(c, not_admitted), 1);
	if (reason == VC_BYP_NOSPACE)
		vc_cache_kick_cleaner(c);
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
	vc_req_done(r, 0);
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
		vc_req_done(r, 0);
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
	vc_req_done(r, 0);
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
		if (vc_unlose_locked(c, s, blk)) {
			vc_unlose_then(r, s, blk);
			return;
		}
		vc_spin_unlock(&s->lock);
		vc_redrive(c);
		vc_req_done(r, 0);
		return;
	}
	/*
	 * A partial discard of a dirty block keeps it (the rest is live), as
	 * it keeps a lost marker (the rest is lost).
	 */
	if (w & B_LOST) {
		vc_spin_unlock(&s->lock);
		vc_req_done(r, 0);
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
	vc_req_done(r, err ? -EIO : 0);
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
		vc_dispatch_write(r);
		return;
	}
	if (w & B_LOST) {
		if (!full) {
			/* the rest of the block stays lost */
			vc_spin_unlock(&s->lock);
			vc_req_done(r, 0);
			return;
		}
		/*
		 * The zeroes supersede the marker like a write's data:
		 * durable at home before its record goes (vc_write.c)
		 */
		vc_spin_unlock(&s->lock);
		r->zero = 1;
		r->kind = RK_WRITE;
		vc_dispatch_write(r);
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
		vc_dispatch_read(r);
		break;
	case RK_WRITE:
		vc_dispatch_write(r);
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
	vc_home_write_done(c, hio->dev_id);
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
		vc_note_backing_io(c);
		vc_io_init(&a->io[0], c->bdev[hio->dev_id].dev,
			   hio->op == VC_OP_DISCARD ? VC_DEV_DISCARD : VC_DEV_WRITE_ZEROES,
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

/*
 * The data of a host write whose PREFLUSH is done goes on in split_work,
 * not here: this runs in the completion of a commit or a FLUSH, whose
 * loop over its waiters (commit_finish(), md_complete()) may still hold
 * the pieces of later ones, such as a FUA write's 256 waiting for the same
 * commit.  Cutting the write here could wait in vc_mempool_alloc() for
 * pieces only that loop gives back.
 */
static void split_later(struct vc_cache *c, struct vc_host_io *hio)
{
	hio->split_next = NULL;
	vc_spin_lock(&c->defer_lock);
	if (c->split_tail)
		c->split_tail->split_next = hio;
	else
		c->split_head = hio;
	c->split_tail = hio;
	vc_spin_unlock(&c->defer_lock);
	vc_work_queue(&c->split_work);
}

void vc_split_work_fn(vc_work_t *w)
{
	struct vc_cache *c = vc_container_of(w, struct vc_cache, split_work);
	struct vc_host_io *hio;

	for (;;) {
		vc_spin_lock(&c->defer_lock);
		hio = c->split_head;
		if (hio) {
			c->split_head = hio->split_next;
			if (!c->split_head)
				c->split_tail = NULL;
		}
		vc_spin_unlock(&c->defer_lock);
		if (!hio)
			break;
		split_and_dispatch(c, hio);
	}
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
		split_later(c, hio);
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
		vc_note_backing_io(c);
		vc_stat_add(VC_DSTAT(c, hio->dev_id, backing_flushes), 1);
		vc_io_init(&a->io[1], d->dev, VC_DEV_FLUSH, 0, 0, 0, NULL, 0,
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
			vc_byp_start_locked(s);
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
