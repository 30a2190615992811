// SPDX-License-Identifier: GPL-2.0
/*
 * vc_read: the read path - hits, fills of read misses (with readahead,
 * vc_ra.c) and reads around the cache.
 */
#include "vc_io.h"

/* ------------------------------------------------------------- reads */
static void read_backing_end(struct vc_dev_io *io, int err)
{
	struct vc_req *r = io->private;

	if (err)
		vc_stat_add(VC_DSTAT(r->c, vc_key_dev(r->key),
				     backing_read_errors), 1);
	else
		vc_stat_add(VC_STAT(r->c, backing_bytes_read), r->len);
	vc_req_done(r, err);
}

static void read_backing(struct vc_req *r)
{
	struct vc_host_io *hio = r->hio;

	vc_note_backing_io(r->c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_READ, 0, r->sector, r->len,
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
		vc_req_done(r, 0);
	} else if (lost) {
		vc_log_err("%s: read error on dirty block %u: data lost",
			   c->cdev->name, r->blk);
		vc_req_done(r, -EIO);
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
	if (r->hio)	/* its host waited for this write: served, whatever it did */
		vc_req_done(r, 0);
	else
		vc_req_free(r);
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
bool vc_fill_overtake_locked(struct vc_set *s, u32 blk)
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
		vc_req_done(r, err);
		return;
	}
	vc_stat_add(VC_STAT(c, backing_bytes_read), r->io[0].len);
	vc_buf_copy(hio->buf, hio->buf_off + r->hoff, r->bounce, boff + r->off,
		    r->len);
	if (taken) {
		/* a whole-block write holds the block now: serve the reader */
		vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), fills_overtaken), 1);
		vc_req_done(r, 0);
		return;
	}
	if (stale) {
		/* a write went around us meanwhile: our copy may be old */
		vc_invalidate_blk(c, r->blk);
		vc_req_done(r, 0);
		return;
	}
	if (r->embedded) {
		/*
		 * The host request (and @r in it) is gone once acked: the
		 * fill write goes on in a piece of its own.  Without one at
		 * once, the host waits for the fill write (fill_write_end()
		 * acks it): waiting for a piece here, in the completion
		 * worker, could hold up the completions that free pieces.
		 */
		struct vc_req *n = vc_mempool_try_alloc(&c->req_pool);

		if (n) {
			*n = *r;
			n->embedded = 0;
			n->hio = NULL;	/* acked below */
			r->bounce = NULL;
			r->bounce_pooled = 0;
			r->ra = NULL;
			vc_req_ack(r, 0);
			r = n;
		}
	} else {
		vc_req_ack(r, 0);
	}
	vc_io_init(&r->io[0], c->cdev, VC_DEV_WRITE, 0,
		   vc_blk_sector(c, r->blk), c->block_size, r->bounce, boff,
		   fill_write_end, r);
	vc_dev_submit(&r->io[0]);
}

/* Is the whole cache block inside the backing device? */
bool vc_block_fits(struct vc_cache *c, u64 key)
{
	u64 end = (vc_key_lba(key) + 1) << (c->block_shift - VC_SECTOR_SHIFT);

	return end <= c->bdev[vc_key_dev(key)].dev->nr_sectors;
}

/*
 * Admission (vc_policy.c): TinyLFU's frequency filter, or second-hit
 * admission for FIFO/LRU/S3-FIFO once the set is nearly full.  Set lock
 * held.
 */
bool vc_admission_refuses(struct vc_cache *c, struct vc_set *s, u64 key)
{
	return vc_pol_admit_refuses(c, s, key);
}

void vc_dispatch_read(struct vc_req *r)
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
			vc_req_done(r, -EIO);
			return;
		}
		/* a failed tombstone: the backing device has the data */
		vc_count_bypass(r, VC_BYP_BUSY);
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
			vc_count_path(r, VC_DSTAT_OFF(read_hits));
		}
		vc_ef_or(r->hio, HF_HIT);
		r->blk = blk;
		/* read_hit_end's success path is irq-safe (vc_env.h) */
		vc_io_init(&r->io[0], c->cdev, VC_DEV_READ, VC_DEV_IRQ_END,
			   vc_blk_sector(c, blk) + (r->off >> VC_SECTOR_SHIFT),
			   r->len, r->hio->buf, r->hio->buf_off + r->hoff,
			   read_hit_end, r);
		vc_dev_submit(&r->io[0]);
		return;
	}

	/* miss */
	if (!r->hit) {
		r->hit = 2;
		vc_count_path(r, VC_DSTAT_OFF(read_misses));
	}
	vc_ef_or(r->hio, HF_MISS);
	if (vc_effective_mode(c) == VC_MODE_PT)
		byp = VC_BYP_MODE;
	else if (ef & HF_BYP_PID)
		byp = VC_BYP_PID;
	else if (ef & HF_BYP_SEQ)
		byp = VC_BYP_SEQ;
	else if (!vc_block_fits(c, r->key))
		byp = VC_BYP_MODE;
	else if (vc_admission_refuses(c, s, r->key))
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
		vc_count_bypass(r, byp);
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
			vc_count_bypass(r, VC_BYP_BUSY);
			read_backing(r);
			return;
		}
	}
	vc_note_backing_io(c);
	vc_io_init(&r->io[0], vc_req_bdev(r), VC_DEV_READ, 0,
		   first << (c->block_shift - VC_SECTOR_SHIFT),
		   nr * c->block_size, r->bounce, 0, fill_read_end, r);
	vc_dev_submit(&r->io[0]);
}
