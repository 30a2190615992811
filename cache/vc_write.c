// SPDX-License-Identifier: GPL-2.0
/*
 * vc_write: the write path in every mode - write-back into the cache,
 * write-through, writes around the cache, partial blocks
 * (read-modify-write) and the fallback home of a failed cache write.
 */
#include "vc_io.h"

/* ------------------------------------------------------------ writes */
static void byp_uncount(struct vc_req *r);

static void backing_write_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;

	byp_uncount(r);
	vc_home_write_done(r->c, vc_key_dev(r->key));
	if (err)
		vc_stat_add(VC_DSTAT(r->c, vc_key_dev(r->key),
				     backing_write_errors), 1);
	else
		vc_stat_add(VC_STAT(r->c, backing_bytes_written), r->len);
	vc_req_done(r, err);
}

/*
 * Something may reach the backing device behind the set's fills (set lock
 * held): fills in flight are stale, new misses go around the cache.
 */
void vc_byp_start_locked(struct vc_set *s)
{
	s->byp_inflight++;
	s->byp_gen++;
}

/* A write around the cache is in flight in its set (set lock held). */
static void byp_count_locked(struct vc_set *s, struct vc_req *r)
{
	vc_byp_start_locked(s);
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

static void byp_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	if (err) {
		byp_uncount(r);
		vc_redrive(r->c);
		vc_req_done(r, -EIO);
		return;
	}
	vc_write_backing_only(r);
}

void vc_write_backing_only(struct vc_req *r)
{
	vc_note_backing_io(r->c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_WRITE,
		   r->fua ? VC_DEV_FUA : 0, r->sector, r->len,
		   vc_req_src_buf(r), vc_req_src_off(r), backing_write_end, r);
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

	vc_req_done(r, err ? -EIO : r->err_back);
}

/*
 * The callers have made @r's block less busy (BUSY cleared, or the block
 * dropped): requests deferred on it go on now.  Not at the record write's
 * end: that redrives only for a tombstone, and a valid block written
 * through over a clean record not yet durable (FLASHDIRTY) is none.
 */
static void ack_after_record(struct vc_req *r, bool md)
{
	struct vc_cache *c = r->c;

	vc_redrive(c);
	if (md) {
		/* may complete @r */
		vc_md_mark(c, r->blk, &r->mdw, ack_md_end);
		return;
	}
	vc_req_done(r, r->err_back);
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

	vc_home_write_done(c, vc_key_dev(r->key));
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
	if (err && r->olddirty && !r->lost) {
		/* never silent: the write failed, and took older data with it */
		vc_log_err("%s: dirty block %u: its cache write and its write home both failed: its older data is lost",
			   c->cdev->name, r->blk);
		r->lost = 1;
	}
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
	vc_note_backing_io(r->c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_WRITE,
		   r->fua || r->olddirty ? VC_DEV_FUA : 0, r->sector, r->len,
		   vc_req_src_buf(r), vc_req_src_off(r), wb_fallback_end, r);
	vc_dev_submit(&r->io[0]);
}

static void home_first_end(struct vc_dev_io *io, int err);

/*
 * The rest of the dirty block was read back: send the whole block home,
 * to the end of a fallback (the cache copy failed) or of a write going
 * home first (write_home_first(): the cache copy intact).
 */
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
	vc_buf_copy(r->bounce, r->off, vc_req_src_buf(r), vc_req_src_off(r), r->len);
	vc_note_backing_io(c);
	/* FUA: the block's dirty record is cleared right after */
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_WRITE, VC_DEV_FUA,
		   vc_key_lba(r->key) << (c->block_shift - VC_SECTOR_SHIFT),
		   c->block_size, r->bounce, 0,
		   r->home_first ? home_first_end : wb_fallback_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * Read the rest of @r's dirty block (r->olddirty) from the cache, then send
 * the whole block home with the write's piece in it (rmw_read_end()).
 */
static void read_rest_send_home(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	if (!(c->flags & VC_CFG_NODATA) && !r->bounce)
		r->bounce = vc_buf_alloc(c->block_size, VC_GFP_NOIO);
	if (!(c->flags & VC_CFG_NODATA) && !r->bounce) {
		/* the pool's reserve: saving dirty data must not fail */
		struct vc_pooled_buf *pb = vc_mempool_alloc(&c->blk_pool);

		vc_buf_init_mem(&pb->buf, pb->data, c->block_size);
		r->bounce = &pb->buf;
		r->bounce_pooled = 1;
	}
	vc_io_init(&r->io[0], c->cdev, VC_DEV_READ, 0, vc_blk_sector(c, r->blk),
		   c->block_size, r->bounce, 0, rmw_read_end, r);
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
	read_rest_send_home(r);
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
	vc_req_done(r, 0);
}

static void fua_drain_end(struct vc_drain_waiter *dw, int err)
{
	struct vc_req *r = vc_container_of(dw, struct vc_req, dw);

	vc_req_done(r, err);
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
	vc_req_done(r, 0);
}

static void write_home_first(struct vc_req *r);

/*
 * The new data of an out-of-place write (oop_take_locked()) is on the
 * cache in r->blk.  The block takes the place of r->old_blk under one
 * view of their record sector (rec_lock): the new block's record says
 * DIRTY, the old one's is clear, in one sector write, so a power cut
 * leaves the old mapping or the new, never both, never neither.  Until
 * that record is durable the old block is a tombstone (not reused: its
 * record still names its data), out of the hash: requests find the new
 * block.  The record goes with the next commit (FUA: now), as a newly
 * dirty block's does; a power cut before it brings the older version
 * back, which a write not yet flushed allows.
 *
 * If the cache write failed, the older data is intact in r->old_blk: the
 * new data goes home first (write_home_first()), and should that fail
 * too, the write fails and the block keeps its older data, dirty.
 */
static void oop_write_end(struct vc_req *r, int err)
{
	struct vc_cache *c = r->c;
	u32 nw = r->blk, old = r->old_blk;
	struct vc_set *s = vc_set_of_blk(c, nw);
	bool lazy = !r->fua && vc_param(c, VC_P_COMMIT_MS);
	u64 w;

	r->oop = 0;
	if (err) {
		vc_cache_write_failed(c, err, "cache write failed");
		vc_spin_lock(&s->lock);
		/* its record never said dirty: free again at once */
		vc_block_set_word(c, s, nw, 0);
		vc_lru_unlink(c, s, nw);
		vc_lru_push_tail(c, s, nw);
		vc_spin_unlock(&s->lock);
		r->blk = old;
		write_home_first(r);	/* @old stays BUSY for it */
		return;
	}
	vc_stat_add(VC_STAT(c, flash_bytes_written), r->len);
	/*
	 * Not newdirty: should the record write below fail, the new block
	 * stands for the older acknowledged data too (the old block is a
	 * tombstone now), so wb_fallback() sends it home FUA and marks it
	 * lost if that fails, as for any block holding older dirty data.
	 */
	vc_spin_lock(&s->lock);
	w = c->words[old];
	/*
	 * The new record's data needs a cache flush before the record is
	 * durable, unless it was written FUA (then the record write needs
	 * no PREFLUSH for it: an O_DSYNC overwrite is two writes, not three)
	 */
	if (!r->fua)
		vc_md_note_dirty(c, vc_md_unit_of(c, nw));
	vc_spin_lock(&c->rec_lock);
	vc_lru_replace(c, s, old, nw);
	/* a flush waiting for the block waits for its new place (no count) */
	vc_store_u64(&c->words[old], c->words[old] & ~B_FLUSHME);
	vc_hash_remove(c, s, old);
	vc_block_set_word(c, s, nw, (w & (B_KEY_MASK | B_EPOCH_MASK | B_FLUSHME)) |
			  B_VALID | B_DIRTY | B_FLASHDIRTY | B_REDIRTY | B_BUSY);
	vc_hash_insert(c, s, nw);
	vc_block_set_word(c, s, old, (w & B_KEY_MASK) | B_FLASHDIRTY | B_BUSY |
			  B_TOMB | B_OOP_OLD);
	vc_spin_unlock(&c->rec_lock);
	vc_spin_unlock(&s->lock);
	if (!lazy) {
		vc_md_mark(c, nw, &r->mdw, wb_md_end);
		return;
	}
	vc_md_defer(c, nw);
	vc_clear_bits(c, nw, B_BUSY);	/* and redrives */
	vc_req_done(r, 0);
}

static void wb_write_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s;
	u64 w;

	if (r->oop) {
		oop_write_end(r, err);
		return;
	}
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
		vc_md_note_dirty(c, vc_md_unit_of(c, r->blk));
		vc_block_set_word(c, s, r->blk, w);
		vc_spin_unlock(&s->lock);
		vc_cache_kick_cleaner_if_needed(c);
		if (!lazy) {
			vc_md_mark(c, r->blk, &r->mdw, wb_md_end);
			return;
		}
		/*
		 * The block stays BUSY until its record waits for the commit:
		 * a FUA write of it finding it dirty in between would see no
		 * commit pending and be acknowledged while the DIRTY record
		 * its data depends on is on no commit's list (a power cut
		 * then serves the backing device's older data).
		 */
		vc_md_defer(c, r->blk);
		vc_clear_bits(c, r->blk, B_BUSY);	/* and redrives */
		vc_req_done(r, 0);
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
	vc_req_done(r, 0);
}

static void wt_sub_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s;
	bool md;
	u64 w;

	if (io == &r->io[0])
		r->err_cache = err;
	else
		r->err_back = err;
	if (io == &r->io[1])
		vc_home_write_done(c, vc_key_dev(r->key));
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
	vc_block_set_word(c, s, r->blk, w & ~B_BUSY);
	if (r->err_cache || r->err_back) {
		/* cache copy unusable, or it disagrees with the backing dev */
		md = vc_invalidate_locked(c, s, r->blk);
	} else {
		/*
		 * Written back, its clean record not yet durable: until it
		 * is, a power cut lets the stale DIRTY record serve the
		 * block's old cache copy (a failed cache FLUSH would not say
		 * so).  Acknowledge once the clean record is durable.
		 */
		md = w & B_FLASHDIRTY;
	}
	vc_spin_unlock(&s->lock);
	ack_after_record(r, md);
}

/*
 * Write-through: both copies, of a block that holds no dirty data (@r holds
 * it BUSY; over dirty data a write goes home first, write_home_first()).
 */
static void write_both(struct vc_req *r)
{
	struct vc_cache *c = r->c;
	u32 fl = r->fua ? VC_DEV_FUA : 0;

	vc_atomic_set(&r->pending, 2);
	vc_note_backing_io(c);
	vc_io_init(&r->io[0], c->cdev, VC_DEV_WRITE, fl,
		   vc_blk_sector(c, r->blk) + (r->off >> VC_SECTOR_SHIFT),
		   r->len, vc_req_src_buf(r), vc_req_src_off(r), wt_sub_end, r);
	vc_io_init(&r->io[1], vc_req_bdev(r), VC_DEV_WRITE, fl, r->sector,
		   r->len, vc_req_src_buf(r), vc_req_src_off(r), wt_sub_end, r);
	vc_dev_submit(&r->io[0]);
	vc_dev_submit(&r->io[1]);
}

/*
 * A write that does not go to the cache (write-through after a
 * degradation, pass-through, a denied process) over a block holding older
 * dirty data: home first (FUA; part of a block with the rest read from the
 * cache), then the block is dropped.  Writing both
 * copies at once would overwrite the only copy of the acknowledged older
 * data in place, and if both writes failed (the card and the disk failing
 * together) it was gone.  Should the home write fail, the cache copy is
 * untouched and still the block's newest durable data: the block stays
 * dirty and the write fails.  @r holds the block BUSY.
 */
static void home_first_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);
	bool md = false;

	vc_home_write_done(c, vc_key_dev(r->key));
	if (err)
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_write_errors),
			    1);
	else
		vc_stat_add(VC_STAT(c, backing_bytes_written), r->len);
	vc_spin_lock(&s->lock);
	if (err)
		vc_block_set_word(c, s, r->blk, c->words[r->blk] & ~B_BUSY);
	else
		md = vc_invalidate_locked(c, s, r->blk);
	vc_spin_unlock(&s->lock);
	r->err_back = err;
	ack_after_record(r, md);
}

static void write_home_first(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	if (r->len != c->block_size) {
		r->home_first = 1;
		r->olddirty = 1;
		read_rest_send_home(r);
		return;
	}
	vc_note_backing_io(c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_WRITE, VC_DEV_FUA,
		   r->sector, r->len, vc_req_src_buf(r), vc_req_src_off(r),
		   home_first_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * A whole-block write-back write over dirty block @blk (idle, not being
 * written home) goes out of place when a block whose record shares @blk's
 * record sector is the sector's spare, free, or clean and idle (the least
 * used is evicted, once: the block the write leaves becomes the sector's
 * spare, B_SPARE, so later ones in the sector evict nothing):
 * the in-place write it replaces put the block's older data at risk, and
 * if that write and the fallback write home both failed (a card and a
 * disk failing together) the older acknowledged data was lost
 * (debug-kernel-findings 10).  Out of place, a failed write leaves what
 * was there before.  Both blocks are BUSY until oop_write_end().  Set
 * lock held; false if no such block (the write goes in place).
 */
static bool oop_take_locked(struct vc_cache *c, struct vc_set *s,
			    struct vc_req *r, u32 blk)
{
	u32 lo, hi, b, best, spare = ~0u, free = ~0u, clean = ~0u;
	bool pending = false;

	vc_stat_add(VC_STAT(c, dirty_overwrites), 1);
	if (c->words[blk] & B_CLEANING)
		return false;	/* in place: the write re-dirties it */
	vc_rec_sector_blocks(s, blk, &lo, &hi);
	for (b = lo; b < hi && spare == ~0u; b++) {
		u64 w = c->words[b];

		if (vc_is_spare(w))
			spare = b;
		else if ((w & (B_TOMB | B_LOST | B_OOP_OLD)) ==
			 (B_TOMB | B_OOP_OLD))
			pending = true;	/* a spare once its commit is done */
		else if (b == blk || (w & (B_DIRTY | B_FLASHDIRTY | B_BUSY |
					   B_CLEANING | B_READERS_MASK | B_TOMB)))
			continue;
		else if (!(w & B_VALID))
			free = b;
		else if (clean == ~0u || (w & B_FREQ_MASK) <
					 (c->words[clean] & B_FREQ_MASK))
			clean = b;
	}
	/* evict for a spare only where none is on its way */
	best = spare != ~0u ? spare : free != ~0u ? free :
	       pending ? ~0u : clean;
	if (best == ~0u)
		return false;
	vc_stat_add(VC_STAT(c, oop_writes), 1);
	if (c->words[best] & B_VALID) {
		vc_hash_remove(c, s, best);
		vc_stat_add(VC_STAT(c, evictions), 1);
	}
	vc_block_set_word(c, s, best, B_BUSY);	/* no key: found by none */
	vc_block_set_word(c, s, blk, c->words[blk] | B_BUSY);
	vc_lru_touch(c, s, blk);
	r->oop = 1;
	r->old_blk = blk;
	r->blk = best;
	return true;
}

static void write_cache_wb(struct vc_req *r)
{
	struct vc_cache *c = r->c;

	vc_io_init(&r->io[0], c->cdev, VC_DEV_WRITE, r->fua ? VC_DEV_FUA : 0,
		   vc_blk_sector(c, r->blk) + (r->off >> VC_SECTOR_SHIFT),
		   r->len, vc_req_src_buf(r), vc_req_src_off(r), wb_write_end,
		   r);
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
	vc_count_bypass(r, VC_BYP_BUSY);
	if (md) {
		vc_md_mark(c, r->blk, &r->mdw, byp_md_end);
		return;
	}
	vc_redrive(c);
	vc_write_backing_only(r);
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
	vc_buf_copy(r->bounce, r->off, vc_req_src_buf(r), vc_req_src_off(r), r->len);
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
	vc_note_backing_io(c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_READ, 0,
		   vc_key_lba(r->key) << (c->block_shift - VC_SECTOR_SHIFT),
		   c->block_size, r->bounce, 0, rmw_alloc_read_end, r);
	vc_dev_submit(&r->io[0]);
}

/*
 * A whole-block write supersedes the lost marker r->blk, whose record is
 * not clear (it is BUSY | UNLOSE).  Clearing the record first would open a
 * window where a power cut leaves neither: no marker, the new data not yet
 * durable, and the backing device's older data served after the reload,
 * older than the version the marker stood for.  So the data goes home
 * first, FUA; then the record is cleared (which drops the marker, see
 * vc_md.c), then the write completes.  A failure at either step fails the
 * write with EIO and leaves the block lost.
 */
static void unlose_home_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_req *r = vc_container_of(mw, struct vc_req, mdw);

	vc_req_done(r, err ? -EIO : 0);
}

static void unlose_home_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;
	struct vc_cache *c = r->c;
	struct vc_set *s = vc_set_of_blk(c, r->blk);

	vc_home_write_done(c, vc_key_dev(r->key));
	if (err) {
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), backing_write_errors),
			    1);
		vc_spin_lock(&s->lock);
		vc_block_set_word(c, s, r->blk,
				  c->words[r->blk] & ~(B_BUSY | B_UNLOSE));
		vc_spin_unlock(&s->lock);
		vc_redrive(c);
		vc_req_done(r, -EIO);
		return;
	}
	vc_stat_add(VC_STAT(c, backing_bytes_written), r->len);
	vc_md_mark(c, r->blk, &r->mdw, unlose_home_md_end);
}

static void unlose_home(struct vc_req *r)
{
	vc_note_backing_io(r->c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_WRITE, VC_DEV_FUA,
		   r->sector, r->len, vc_req_src_buf(r), vc_req_src_off(r),
		   unlose_home_end, r);
	vc_dev_submit(&r->io[0]);
}

void vc_dispatch_write(struct vc_req *r)
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
		    !vc_dirty_over_high(c) && vc_fill_overtake_locked(s, blk)) {
			/* a fill reading it from the disk: no waiting */
			if (!r->hit) {
				r->hit = 1;
				vc_count_path(r, VC_DSTAT_OFF(write_hits));
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
		 * DIRTY) stays until the new data is durable at home, then
		 * its record is cleared (unlose_home()); a marker without
		 * one just goes, and the write is driven again as a miss.
		 */
		if ((w & B_LOST) && full) {
			if (vc_unlose_locked(c, s, blk)) {
				vc_spin_unlock(&s->lock);
				r->blk = blk;
				unlose_home(r);
				return;
			}
			vc_spin_unlock(&s->lock);
			vc_dispatch_write(r);	/* now a miss */
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
			vc_count_bypass(r, VC_BYP_BUSY);
			r->blk = blk;
			if (!(w & B_FLASHDIRTY)) {
				vc_spin_unlock(&s->lock);
				vc_write_backing_only(r);
				return;
			}
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_spin_unlock(&s->lock);
			vc_md_mark(c, blk, &r->mdw, byp_md_end);
			return;
		}
		if (!r->hit) {
			r->hit = 1;
			vc_count_path(r, VC_DSTAT_OFF(write_hits));
		}
		r->blk = blk;
		if (m == VC_MODE_WB && byp < 0 && !(w & B_DIRTY) &&
		    vc_dirty_over_high(c) && vc_throttle_write(c, r)) {
			vc_spin_unlock(&s->lock);	/* slowed at the mark */
			return;
		}
		if (m == VC_MODE_WB && byp < 0 && full && (w & B_DIRTY) &&
		    oop_take_locked(c, s, r, blk)) {
			vc_spin_unlock(&s->lock);
			write_cache_wb(r);
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
			if (w & B_DIRTY)
				write_home_first(r);
			else
				write_both(r);
			return;
		}
		/* bypassing write over a cached block */
		vc_count_bypass(r, byp);
		if (w & B_DIRTY) {
			/* keep the dirty data until the new data is home */
			vc_block_set_word(c, s, blk, w | B_BUSY);
			vc_spin_unlock(&s->lock);
			write_home_first(r);
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
		vc_write_backing_only(r);
		return;
	}
	if (!r->hit) {
		r->hit = 2;
		vc_count_path(r, VC_DSTAT_OFF(write_misses));
	}
	/*
	 * A partial block is allocated (read-modify-write) in write-back
	 * below the high watermark, unless a write around the cache is in
	 * flight in the set (its data could be older in our read); else it
	 * goes around the cache.
	 */
	if (byp < 0 && !vc_block_fits(c, r->key))
		byp = VC_BYP_MODE;
	if (byp < 0 && !full &&
	    (m != VC_MODE_WB || vc_dirty_over_hard(c) || s->byp_inflight))
		byp = VC_BYP_MODE;	/* partial block: not allocated */
	if (byp < 0 && vc_admission_refuses(c, s, r->key))
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
	if (byp >= 0)
		byp_count_locked(s, r);
	vc_spin_unlock(&s->lock);
	if (byp >= 0) {
		vc_count_bypass(r, byp);
		vc_write_backing_only(r);
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
