// SPDX-License-Identifier: GPL-2.0
/*
 * vc_md: on-flash metadata - record sector writes with waiters, format,
 * load (validating everything), superblock and device table updates.
 */
#include "vc_internal.h"

#define MDF_INFLIGHT	1
#define MDF_DIRTY	2
#define MDF_FAILED	4	/* last write failed: retried by the cleaner */
#define MD_NOMEM_RETRY_NS	10000000ULL	/* 10 ms */
#define MD_CHUNK	128	/* sectors per bulk metadata I/O (>= a unit) */

/* ------------------------------------------------------ synchronous I/O */
struct sync_io {
	struct vc_dev_io io;
	vc_waitq_t wq;
	vc_atomic_t done;
	vc_atomic_t refs;	/* waiter + completion: last one frees */
	int err;
};

static void sync_put(struct sync_io *s)
{
	if (vc_atomic_dec_and_test(&s->refs)) {
		vc_waitq_destroy(&s->wq);
		vc_free(s);
	}
}

static void sync_end(struct vc_dev_io *io, int err)
{
	struct sync_io *s = vc_container_of(io, struct sync_io, io);

	s->err = err;
	vc_atomic_add_return(&s->done, 1);	/* full barrier: publishes err */
	vc_waitq_wake_all(&s->wq);
	sync_put(s);
}

static bool sync_done(void *arg)
{
	struct sync_io *s = arg;

	return vc_atomic_add_return(&s->done, 0) != 0;
}

int vc_sync_io(struct vc_dev *dev, u8 op, u32 flags, u64 sector, u32 len,
	       struct vc_buf *buf)
{
	struct sync_io *s = vc_zalloc(sizeof(*s), VC_GFP_KERNEL);
	int err;

	if (!s)
		return -ENOMEM;
	vc_waitq_init(&s->wq);
	vc_atomic_set(&s->refs, 2);
	s->io.dev = dev;
	s->io.op = op;
	s->io.flags = flags;
	s->io.sector = sector;
	s->io.len = len;
	s->io.buf = buf;
	s->io.end_io = sync_end;
	vc_dev_submit(&s->io);
	err = vc_waitq_wait(&s->wq, sync_done, s, false, 0);
	if (!err)
		err = s->err;
	sync_put(s);
	return err;
}

/* ----------------------------------------------------- record encoding */
static u64 rec_of_word(struct vc_cache *c, u64 w)
{
	u64 r;

	if ((w & (B_TOMB | B_LOST | B_UNLOSE)) == (B_TOMB | B_LOST) &&
	    c->version >= 3)
		return vc_key_lba(w) |
		       ((u64)vc_key_dev(w) << VC_REC_DEV_SHIFT) | VC_REC_LOST;
	if (!(w & B_VALID))
		return 0;
	r = vc_key_lba(w) | ((u64)vc_key_dev(w) << VC_REC_DEV_SHIFT) |
	    VC_REC_VALID;
	if (w & B_DIRTY)
		r |= VC_REC_DIRTY;
	return r;
}

static u32 rec_crc(struct vc_cache *c, struct vc_rec_sector *rs)
{
	rs->crc = 0;
	return vc_crc32c(c->nonce, rs, sizeof(*rs));
}

/* Fill @rs with the records of sector @idx (relative to md_start). */
static void build_rec_sector(struct vc_cache *c, u64 idx,
			     struct vc_rec_sector *rs)
{
	u64 first = idx * VC_RECS_PER_SECTOR;
	u32 i;

	vc_memset(rs, 0, sizeof(*rs));
	rs->index = vc_cpu_to_le32((u32)(c->md_start + idx));
	/* one view of the sector: an out-of-place switch is two words */
	vc_spin_lock(&c->rec_lock);
	for (i = 0; i < VC_RECS_PER_SECTOR; i++) {
		if (first + i >= c->nr_blocks)
			break;
		rs->rec[i] = vc_cpu_to_le64(rec_of_word(c, vc_word(c, (u32)(first + i))));
	}
	vc_spin_unlock(&c->rec_lock);
	rs->crc = vc_cpu_to_le32(rec_crc(c, rs));
}

/* Fill @rs[0 .. md_usec - 1] with the record sectors of unit @idx. */
static void build_rec_unit(struct vc_cache *c, u64 idx,
			   struct vc_rec_sector *rs)
{
	u32 i;

	for (i = 0; i < c->md_usec; i++)
		build_rec_sector(c, idx * c->md_usec + i, &rs[i]);
}

/* ---------------------------------------------------- async unit writes */
struct md_write {
	struct vc_cache *c;
	u64 idx;
	u16 num;
	u32 flushno;		/* its PREFLUSH's number, 0 = none */
	struct vc_dev_io io;
	struct vc_buf buf;	/* over rs */
	struct vc_rec_sector *rs;	/* md_usec sectors, after the struct */
};

/* The records of a pooled md_write start 512-byte aligned after it. */
#define MD_WRITE_HDR	((sizeof(struct md_write) + VC_SECTOR_SIZE - 1) & \
			 ~(size_t)(VC_SECTOR_SIZE - 1))

static void md_submit_mw(struct vc_cache *c, struct md_write *mw, u64 idx,
			 u16 num);

/*
 * Unit @idx's write failed (or, -ENOMEM, could not be made): retried by
 * vc_md_retry(), soon for lack of memory.  md_lock of @idx held.
 */
static void md_fail_locked(struct vc_cache *c, u64 idx, bool nomem)
{
	if (!(c->md_flags[idx] & MDF_FAILED))
		vc_atomic_inc(&c->md_failed);
	c->md_flags[idx] = MDF_FAILED;
	if (nomem)	/* retried soon, not only at the next tick */
		vc_work_queue_delayed(&c->clean_work, MD_NOMEM_RETRY_NS);
}

/* A unit write is over: md_inflight lets @c go once the wakers are out. */
static void md_inflight_put(struct vc_cache *c)
{
	vc_atomic_inc(&c->wakers);
	vc_atomic_dec(&c->md_inflight);
	vc_waitq_wake_all(&c->md_wq);
	vc_atomic_dec(&c->wakers);
}

/*
 * Write @mw (number mw->num of record unit mw->idx) finished; mw->rs is
 * what it wrote (its md_usec sectors).  On success, blocks
 * written as not dirty lose FLASHDIRTY and tombstones go.  On failure the
 * unit is marked FAILED (retried from the cleaner's tick and by the next
 * request that needs it), tombstones in it stay in the hash but lose
 * BUSY ("failed tombstones": never served, never reused; a request for
 * their backing block retries the record write and fails with EIO if it
 * fails again, so nothing is acknowledged that the stale record could
 * undo), and the cache degrades.  A write that failed for lack of memory (-ENOMEM) is no device
 * error: its waiters keep waiting and it is retried shortly.
 */
/*
 * The block an out-of-place write left, its record clear: the spare of
 * its record sector (vc_write.c), unless the sector has one already (two
 * such writes within one commit): then a free block.  Set lock held.
 */
static void md_spare_or_free(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u32 lo, hi, b;

	vc_rec_sector_blocks(s, blk, &lo, &hi);
	for (b = lo; b < hi; b++)
		if (vc_is_spare(c->words[b]))
			break;
	vc_block_set_word(c, s, blk, b < hi ? 0 : B_SPARE);
	vc_lru_unlink(c, s, blk);
	if (b < hi)
		vc_lru_push_tail(c, s, blk);	/* free blocks wait there */
	else
		vc_lru_push_head(c, s, blk);
}

static void md_complete(struct vc_cache *c, struct md_write *mw, int err)
{
	u64 idx = mw->idx;
	u16 num = mw->num;
	const struct vc_rec_sector *rs = mw->rs;
	u32 li = (u32)(idx % VC_MD_LOCKS), i;
	struct vc_md_waiter *done = NULL, **pp, *w;
	u64 first = idx * c->md_recs;
	bool again = false, tomb = false, nomem = err == -ENOMEM;
	u16 next = 0;

	if (err && !nomem) {
		vc_stat_add(VC_STAT(c, cache_write_errors), 1);
		vc_degrade(c, "metadata write failed");
	}
	for (i = 0; i < c->md_recs && !nomem; i++) {
		u32 blk = (u32)(first + i);
		struct vc_set *s;
		u64 wd;

		if (first + i >= c->nr_blocks)
			break;
		if (!err && (vc_le64_to_cpu(rs[i / VC_RECS_PER_SECTOR]
					    .rec[i % VC_RECS_PER_SECTOR]) &
			     VC_REC_DIRTY))
			continue;
		if (!(vc_word(c, blk) & B_FLASHDIRTY))
			continue;
		s = vc_set_of_blk(c, blk);
		vc_spin_lock(&s->lock);
		wd = c->words[blk];
		if ((wd & (B_TOMB | B_LOST | B_UNLOSE)) ==
		    (B_TOMB | B_LOST | B_UNLOSE)) {
			if (!err) {	/* record cleared: the marker goes */
				vc_hash_remove(c, s, blk);
				vc_block_set_word(c, s, blk, 0);
			} else {	/* still lost */
				vc_block_set_word(c, s, blk,
						  wd & ~(B_BUSY | B_UNLOSE));
			}
			tomb = true;
		} else if ((wd & (B_TOMB | B_LOST)) == (B_TOMB | B_LOST) &&
			   !err) {
			/*
			 * The record says LOST (format 3: not clear, so the
			 * block is never reused) or is cleared (format 2).
			 */
			vc_block_set_word(c, s, blk,
					  (wd & (B_KEY_MASK | B_TOMB | B_LOST)) |
					  (c->version >= 3 ? B_FLASHDIRTY : 0));
			tomb = true;
		} else if ((wd & (B_TOMB | B_OOP_OLD)) == (B_TOMB | B_OOP_OLD) &&
			   !err) {
			/* an out-of-place write's old block: its sector's spare */
			md_spare_or_free(c, s, blk);
			tomb = true;
		} else if ((wd & B_TOMB) && !err) {
			vc_hash_remove(c, s, blk);	/* record cleared */
			vc_block_set_word(c, s, blk, 0);
			tomb = true;
		} else if (wd & B_TOMB) {
			/* a failed tombstone: requests retry the record */
			vc_block_set_word(c, s, blk, wd & ~B_BUSY);
			tomb = true;
		} else if (!err && (wd & B_FLASHDIRTY) &&
			   !((wd & B_VALID) && (wd & B_DIRTY))) {
			vc_block_set_word(c, s, blk, wd & ~B_FLASHDIRTY);
		}
		vc_spin_unlock(&s->lock);
	}

	vc_spin_lock(&c->md_lock[li]);
	pp = &c->md_waiters[li];
	while (!nomem && (w = *pp) != NULL) {
		if (w->sector == idx && (s16)(num - w->target) >= 0) {
			*pp = w->next;
			w->next = done;
			done = w;
		} else {
			pp = &w->next;
		}
	}
	if (err) {
		md_fail_locked(c, idx, nomem);
	} else {
		if (c->md_flags[idx] & MDF_FAILED)
			vc_atomic_dec(&c->md_failed);
		if (c->md_flags[idx] & MDF_DIRTY) {
			c->md_flags[idx] = MDF_INFLIGHT;
			next = ++c->md_started[idx];
			again = true;
		} else {
			c->md_flags[idx] = 0;
		}
	}
	vc_spin_unlock(&c->md_lock[li]);

	if (tomb)
		vc_redrive(c);
	vc_drain_md_done(c, err);	/* before md_inflight lets @c go */
	if (again) {
		/*
		 * The next write of the unit in this one's md_write: taking
		 * another from the pool here could wait for a free that only
		 * completions like this one (each holding its own) bring.
		 */
		md_submit_mw(c, mw, idx, next);
	} else {
		/* back to the pool before md_inflight lets @c go */
		vc_mempool_free(&c->md_pool, mw);
		md_inflight_put(c);
	}
	while (done) {
		w = done;
		done = w->next;
		w->next = NULL;
		w->fn(w, err);
	}
}

static void md_end(struct vc_dev_io *io, int err)
{
	struct md_write *mw = io->private;
	struct vc_cache *c = mw->c;

	if (!err && mw->flushno)
		vc_cflush_done(c, mw->flushno);
	md_complete(c, mw, err);	/* frees or reuses @mw */
}

/* Write number @num of record unit @idx in @mw (new or reused). */
static void md_submit_mw(struct vc_cache *c, struct md_write *mw, u64 idx,
			 u16 num)
{
	u32 len = c->md_usec * VC_SECTOR_SIZE;

	mw->c = c;
	mw->idx = idx;
	mw->num = num;
	mw->flushno = 0;
	mw->rs = (struct vc_rec_sector *)((u8 *)mw + MD_WRITE_HDR);
	build_rec_unit(c, idx, mw->rs);
	vc_buf_init_mem(&mw->buf, mw->rs, len);
	vc_memset(&mw->io, 0, sizeof(mw->io));
	mw->io.dev = c->cdev;
	mw->io.op = VC_DEV_WRITE;
	mw->io.flags = VC_DEV_FUA | VC_DEV_META;
	/* a DIRTY record in it whose data no completed flush covered yet */
	if (vc_md_needs_preflush(c, idx)) {
		mw->io.flags |= VC_DEV_PREFLUSH;
		mw->flushno = vc_cflush_issue(c);
	}
	mw->io.sector = c->md_start + idx * c->md_usec;
	mw->io.len = len;
	mw->io.buf = &mw->buf;
	mw->io.end_io = md_end;
	mw->io.private = mw;
	vc_stat_add(VC_STAT(c, md_writes), 1);
	vc_stat_add(VC_STAT(c, flash_bytes_written), len);
	vc_dev_submit(&mw->io);
}

/*
 * @wait: may sleep for an md_write (the control paths' retries).  Else,
 * from the I/O paths (completions, the cleaner's batches, which may start
 * thousands of unit writes at once), an md_write only if there is one at
 * once: waiting there could hold up the completions that give them back,
 * and the pool keeps 16.
 */
static void md_submit(struct vc_cache *c, u64 idx, u16 num, bool wait)
{
	struct md_write *mw = wait ? vc_mempool_alloc(&c->md_pool) :
				     vc_mempool_try_alloc(&c->md_pool);

	u32 li = (u32)(idx % VC_MD_LOCKS);

	if (mw) {
		md_submit_mw(c, mw, idx, num);
		return;
	}
	/* as a write that failed for lack of memory: waiters keep waiting */
	vc_spin_lock(&c->md_lock[li]);
	md_fail_locked(c, idx, true);
	vc_spin_unlock(&c->md_lock[li]);
	md_inflight_put(c);
}

#define MD_POOL_MIN	16

int vc_md_pool_init(struct vc_cache *c)
{
	return vc_mempool_init(&c->md_pool, MD_POOL_MIN,
			       MD_WRITE_HDR + c->md_usec * VC_SECTOR_SIZE);
}

/*
 * The record of @blk changed: make sure a write of its unit starts after
 * now.  If @w, call @fn once that write completed (err = its result).
 * Called without set locks held.
 */
void vc_md_mark(struct vc_cache *c, u32 blk, struct vc_md_waiter *w,
		void (*fn)(struct vc_md_waiter *w, int err))
{
	vc_md_mark_sector(c, vc_md_unit_of(c, blk), w, fn);
}

/* The same for record unit @idx. */
void vc_md_mark_sector(struct vc_cache *c, u64 idx, struct vc_md_waiter *w,
		       void (*fn)(struct vc_md_waiter *w, int err))
{
	u32 li = (u32)(idx % VC_MD_LOCKS);
	bool start = false;
	u16 num = 0;

	vc_spin_lock(&c->md_lock[li]);
	if (w) {
		w->sector = idx;
		w->target = (u16)(c->md_started[idx] + 1);
		w->fn = fn;
		w->next = c->md_waiters[li];
		c->md_waiters[li] = w;
	}
	if (c->md_flags[idx] & MDF_INFLIGHT) {
		c->md_flags[idx] |= MDF_DIRTY;
	} else {
		c->md_flags[idx] = MDF_INFLIGHT |
				   (c->md_flags[idx] & MDF_FAILED);
		num = ++c->md_started[idx];
		start = true;
		vc_atomic_inc(&c->md_inflight);
	}
	vc_spin_unlock(&c->md_lock[li]);
	if (start)
		md_submit(c, idx, num, false);
}

/*
 * Retry failed record-unit writes (from the cleaner's tick; @wait from the
 * control paths, which may sleep for an md_write: md_submit()).  A unit
 * whose write is in flight is not written again beside it: two writes of
 * one unit in flight land in any order, and an older snapshot landing
 * last could erase a DIRTY record or bring back a stale one.  The write in
 * flight already carries the newest state, or is followed by another
 * (MDF_DIRTY).
 */
void vc_md_retry(struct vc_cache *c, bool wait)
{
	u64 idx;

	if (!vc_atomic_read(&c->md_failed))
		return;
	for (idx = 0; idx < c->md_units; idx++) {
		u32 li = (u32)(idx % VC_MD_LOCKS);
		bool go = false;
		u16 num = 0;

		vc_spin_lock(&c->md_lock[li]);
		if ((c->md_flags[idx] & (MDF_FAILED | MDF_INFLIGHT)) ==
		    MDF_FAILED) {
			c->md_flags[idx] = MDF_INFLIGHT | MDF_FAILED;
			num = ++c->md_started[idx];
			go = true;
			vc_atomic_inc(&c->md_inflight);
		}
		vc_spin_unlock(&c->md_lock[li]);
		if (go)
			md_submit(c, idx, num, wait);
	}
}

static bool md_idle(void *arg)
{
	struct vc_cache *c = arg;

	return vc_atomic_add_return(&c->md_inflight, 0) == 0;
}

int vc_md_wait_idle(struct vc_cache *c)
{
	return vc_waitq_wait(&c->md_wq, md_idle, c, false, 0);
}

/* --------------------------------------------------------- superblock */
static void sb_fill(struct vc_cache *c, struct vc_sb *sb, bool clean)
{
	u32 i;

	vc_memset(sb, 0, sizeof(*sb));
	sb->magic = vc_cpu_to_le64(VC_SB_MAGIC);
	sb->version = vc_cpu_to_le32(c->version);
	sb->block_size = vc_cpu_to_le32(c->block_size);
	sb->clean = vc_cpu_to_le32(clean ? VC_SB_CLEAN : 0);
	sb->nr_blocks = vc_cpu_to_le64(c->nr_blocks);
	sb->md_start = vc_cpu_to_le64(c->md_start);
	sb->md_sectors = vc_cpu_to_le64(c->md_sectors);
	sb->data_start = vc_cpu_to_le64(c->data_start);
	sb->dev_sectors = vc_cpu_to_le64(c->cdev->nr_sectors);
	sb->seq = vc_cpu_to_le64(c->sb_seq);
	sb->nonce = vc_cpu_to_le32(c->nonce);
	sb->mode = vc_cpu_to_le32((u32)vc_atomic_read(&c->mode));
	sb->policy = vc_cpu_to_le32((u32)vc_atomic_read(&c->policy));
	sb->nr_params = vc_cpu_to_le32(VC_NR_PARAMS);
	sb->set_shift = vc_cpu_to_le32(c->set_shift);
	if (c->version >= 3)
		vc_memcpy(sb->label, c->label, sizeof(sb->label));
	sb->md_unit = vc_cpu_to_le32(c->md_unit);
	for (i = 0; i < VC_NR_PARAMS; i++)
		sb->params[i] = vc_cpu_to_le64(vc_param(c, i));
	sb->crc = vc_cpu_to_le32(vc_crc32c(~0u, sb, sizeof(*sb)));
}

/*
 * Write the next superblock copy: its whole unit (the copy, then zeroes:
 * vc_buf_alloc() zeroes), so the device never reads-modifies-writes it.
 */
int vc_md_write_sb(struct vc_cache *c, bool clean)
{
	u32 len = c->md_usec * VC_SECTOR_SIZE;
	struct vc_buf *b = vc_buf_alloc(len, VC_GFP_KERNEL);
	struct vc_sb *sb = vc_malloc(sizeof(*sb), VC_GFP_KERNEL);
	int err = -ENOMEM;

	if (b && sb) {
		/* alternate copies: the other one keeps the previous state */
		c->sb_seq++;
		sb_fill(c, sb, clean);
		vc_buf_from_mem(b, 0, sb, sizeof(*sb));
		err = vc_sync_io(c->cdev, VC_DEV_WRITE,
				 VC_DEV_FUA | VC_DEV_PREFLUSH | VC_DEV_META,
				 (c->sb_seq & 1) ? c->sb2_sector : VC_SB_SECTOR,
				 len, b);
		vc_stat_add(VC_STAT(c, md_writes), 1);
		vc_stat_add(VC_STAT(c, flash_bytes_written), len);
	}
	vc_free(sb);
	vc_buf_free(b);
	return err;
}

static void dev_fill(struct vc_cache *c, u32 id, struct vc_dev_sector *ds)
{
	struct vc_bdev_slot *d = &c->bdev[id];

	vc_memset(ds, 0, sizeof(*ds));
	ds->magic = vc_cpu_to_le32(VC_DEV_MAGIC);
	ds->index = vc_cpu_to_le32((u32)(c->devtab_sector + id));
	if (d->in_use) {
		ds->flags = vc_cpu_to_le32(VC_DEVF_IN_USE);
		ds->nr_sectors = vc_cpu_to_le64(d->nr_sectors);
		vc_memcpy(ds->uuid, d->uuid, sizeof(ds->uuid));
		if (c->version >= 3)
			vc_memcpy(ds->label, d->label, sizeof(ds->label));
	}
	ds->crc = vc_cpu_to_le32(vc_crc32c(c->nonce, ds, sizeof(*ds)));
}

/*
 * Write device table entry @id: the whole unit that holds it, every entry
 * of it from RAM (callers hold ctl_mutex: the others are as last written,
 * or being written by the caller), zeroes past the last entry.
 */
int vc_md_write_dev(struct vc_cache *c, u32 id)
{
	u32 len = c->md_usec * VC_SECTOR_SIZE, first = id & ~(c->md_usec - 1);
	struct vc_buf *b = vc_buf_alloc(len, VC_GFP_KERNEL);
	struct vc_dev_sector *ds = vc_malloc(sizeof(*ds), VC_GFP_KERNEL);
	int err = -ENOMEM;

	if (b && ds) {
		int tries = 3;
		u32 i;

		for (i = first; i < first + c->md_usec && i < VC_MAX_BACKING;
		     i++) {
			dev_fill(c, i, ds);
			vc_buf_from_mem(b, (i - first) * VC_SECTOR_SIZE, ds,
					sizeof(*ds));
		}
		do {	/* a transient error should not fail attach/detach */
			err = vc_sync_io(c->cdev, VC_DEV_WRITE,
					 VC_DEV_FUA | VC_DEV_PREFLUSH | VC_DEV_META,
					 c->devtab_sector + first, len, b);
			vc_stat_add(VC_STAT(c, md_writes), 1);
			vc_stat_add(VC_STAT(c, flash_bytes_written), len);
		} while (err == -EIO && --tries);
	}
	vc_free(ds);
	vc_buf_free(b);
	return err;
}

/*
 * Write every record unit from RAM state (format, clean shutdown), in
 * chunks of whole units.
 */
int vc_md_write_all(struct vc_cache *c)
{
	u64 end = c->md_units * c->md_usec;
	struct vc_buf *b = vc_buf_alloc(MD_CHUNK * VC_SECTOR_SIZE, VC_GFP_KERNEL);
	struct vc_rec_sector *rs = vc_malloc(sizeof(*rs), VC_GFP_KERNEL);
	u64 idx = 0;
	int err = 0;

	if (!b || !rs) {
		err = -ENOMEM;
		goto out;
	}
	while (idx < end && !err) {
		u32 n = (u32)vc_min_u64(MD_CHUNK, end - idx), i;

		for (i = 0; i < n; i++) {
			build_rec_sector(c, idx + i, rs);
			vc_buf_from_mem(b, i * VC_SECTOR_SIZE, rs, sizeof(*rs));
		}
		err = vc_sync_io(c->cdev, VC_DEV_WRITE, VC_DEV_META,
				 c->md_start + idx, n * VC_SECTOR_SIZE, b);
		vc_stat_add(VC_STAT(c, md_writes), n / c->md_usec);
		vc_stat_add(VC_STAT(c, flash_bytes_written), n * VC_SECTOR_SIZE);
		idx += n;
	}
out:
	vc_free(rs);
	vc_buf_free(b);
	return err;
}

/*
 * Erase every superblock copy a loader would look at (copy 0, every place
 * a second copy can be, format 2's included): a deleted cache is never
 * found again, and a format cut short never leaves an older cache to be
 * found.  Each goes as the whole unit around it, zeroed.
 */
int vc_md_erase_sb(struct vc_cache *c)
{
	static const u64 where[] = VC_SB_CANDIDATES;
	u32 len = c->md_usec * VC_SECTOR_SIZE, i;
	struct vc_buf *z = vc_buf_alloc(len, VC_GFP_KERNEL);
	u64 last = ~0ULL;
	int err = 0;

	if (!z)
		return -ENOMEM;
	for (i = 0; i < sizeof(where) / sizeof(where[0]) && !err; i++) {
		u64 at = where[i] & ~(u64)(c->md_usec - 1);

		if (at == last || at + c->md_usec > c->cdev->nr_sectors)
			continue;
		last = at;
		err = vc_sync_io(c->cdev, VC_DEV_WRITE, VC_DEV_FUA | VC_DEV_META,
				 at, len, z);
	}
	vc_buf_free(z);
	return err;
}

/*
 * Format: invalidate both old superblock copies, write records, devices,
 * then both superblock copies.
 */
int vc_md_format(struct vc_cache *c)
{
	u32 i;
	int err;

	err = vc_md_erase_sb(c);
	if (err)
		return err;
	err = vc_md_write_all(c);
	for (i = 0; i < VC_MAX_BACKING && !err; i++)
		err = vc_md_write_dev(c, i);
	if (!err)
		err = vc_md_write_sb(c, false);
	if (!err)
		err = vc_md_write_sb(c, false);
	return err;
}

static u32 dev_pbs(struct vc_dev *cdev)
{
	u32 lbs = cdev->logical_block_size ? cdev->logical_block_size : 512;

	return cdev->physical_block_size ? cdev->physical_block_size : lbs;
}

/*
 * Can @cdev hold a cache?  Its logical block must be 512 bytes (a host
 * write of one sector goes to the cache as it is); its physical block a
 * power of two at least that large.  The metadata never writes less than a
 * physical block (vc_md_unit_for()).
 */
int vc_md_check_dev(struct vc_dev *cdev, char *err, size_t errlen)
{
	u32 lbs = cdev->logical_block_size ? cdev->logical_block_size : 512;
	u32 pbs = dev_pbs(cdev);

	if (lbs != VC_SECTOR_SIZE) {
		if (err && errlen)
			vc_snprintf(err, errlen,
				    "%s has %u-byte logical blocks: the cache metadata needs 512-byte writes",
				    cdev->name, lbs);
		return -EINVAL;
	}
	if (pbs < lbs || (pbs & (pbs - 1))) {
		if (err && errlen)
			vc_snprintf(err, errlen,
				    "%s reports %u-byte physical blocks: not a power of two of at least 512 bytes",
				    cdev->name, pbs);
		return -EINVAL;
	}
	return 0;
}

/*
 * The metadata unit a new cache on @cdev gets: its physical block, at
 * least 4 KiB (the flash page of cards that report 512 bytes); 0 if the
 * physical block is larger than a unit can be.
 */
u32 vc_md_unit_for(struct vc_dev *cdev)
{
	u32 pbs = dev_pbs(cdev);

	if (pbs > VC_MD_UNIT_MAX)
		return 0;
	return pbs < VC_MD_UNIT_MIN ? VC_MD_UNIT_MIN : pbs;
}

/*
 * A loaded cache whose unit is smaller than the device's physical block
 * (an older format, or an image moved to another device) still works,
 * each metadata write a read-modify-write of the device: say so.
 */
void vc_md_check_unit(struct vc_cache *c)
{
	u32 pbs = dev_pbs(c->cdev);

	if (pbs > c->md_usec * VC_SECTOR_SIZE)
		vc_log_warn("%s: %u-byte physical blocks, but this cache (format %u) writes metadata in %u-byte units: each metadata write is a read-modify-write; create the cache again to write whole physical blocks",
			    c->cdev->name, pbs, c->version,
			    c->md_usec * VC_SECTOR_SIZE);
}

/* --------------------------------------------------------------- load */
/* Put a one-line reason in @err (if any) and return @code. */
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
	VC_PRINTF(4, 5);
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	__builtin_va_list ap;

	if (err && errlen) {
		__builtin_va_start(ap, fmt);
		vc_vsnprintf(err, errlen, fmt, ap);
		__builtin_va_end(ap);
	}
	return code;
}

static bool is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

u64 vc_cache_blocks_for_unit(u64 sectors, u32 block_size, u32 md_unit)
{
	u64 bsec = block_size >> VC_SECTOR_SHIFT, nr, data, align, start;

	if (!is_pow2(block_size) || block_size < VC_MIN_BLOCK_SIZE ||
	    block_size > VC_MAX_BLOCK_SIZE || !is_pow2(md_unit) ||
	    md_unit < VC_MD_UNIT_MIN || md_unit > VC_MD_UNIT_MAX)
		return 0;
	start = vc_fmt_md_start(VC_FORMAT_VERSION, md_unit);
	align = vc_max_u64(bsec, md_unit >> VC_SECTOR_SHIFT);
	if (sectors <= start + bsec)
		return 0;
	nr = vc_div_u64(sectors - start, bsec);
	if (nr > 0xfffffff0ULL)
		nr = 0xfffffff0ULL;
	while (nr) {
		u64 md = vc_fmt_md_sectors(VC_FORMAT_VERSION, md_unit, nr);

		data = (start + md + align - 1) & ~(align - 1);
		if (data + nr * bsec <= sectors)
			break;
		/* shrink by the overshoot, at least one */
		nr -= vc_max_u64(1, vc_div_u64(data + nr * bsec - sectors +
					       bsec - 1, bsec));
	}
	return nr;
}

u64 vc_cache_blocks_for(u64 sectors, u32 block_size)
{
	return vc_cache_blocks_for_unit(sectors, block_size, VC_MD_UNIT_MIN);
}

int vc_sb_check(const struct vc_sb *sbp, u64 dev_sectors, char *err,
		size_t errlen)
{
	struct vc_sb sb = *sbp;
	u32 crc = vc_le32_to_cpu(sb.crc), bs, ver, unit, usec;
	u64 nr, md, data, bsec, i;

	if (vc_le64_to_cpu(sb.magic) != VC_SB_MAGIC)
		return fail(err, errlen, -ENODATA, "no vcache metadata (bad magic)");
	if (vc_le32_to_cpu(sb.version) < VC_FORMAT_VERSION_MIN ||
	    vc_le32_to_cpu(sb.version) > VC_FORMAT_VERSION)
		return fail(err, errlen, -EOPNOTSUPP, "metadata version %u not supported (want %u..%u)",
		     vc_le32_to_cpu(sb.version), VC_FORMAT_VERSION_MIN,
		     VC_FORMAT_VERSION);
	sb.crc = 0;
	if (vc_crc32c(~0u, &sb, sizeof(sb)) != crc)
		return fail(err, errlen, -EUCLEAN, "superblock checksum mismatch");
	bs = vc_le32_to_cpu(sb.block_size);
	if (!is_pow2(bs) || bs < VC_MIN_BLOCK_SIZE || bs > VC_MAX_BLOCK_SIZE)
		return fail(err, errlen, -EUCLEAN, "bad block size %u", bs);
	bsec = bs >> VC_SECTOR_SHIFT;
	ver = vc_le32_to_cpu(sb.version);
	unit = vc_le32_to_cpu(sb.md_unit);
	if (ver >= 4 && (!is_pow2(unit) || unit < VC_MD_UNIT_MIN ||
			 unit > VC_MD_UNIT_MAX))
		return fail(err, errlen, -EUCLEAN, "bad metadata unit %u", unit);
	if (ver < 4 && unit)
		return fail(err, errlen, -EUCLEAN, "reserved superblock bytes not zero");
	usec = vc_fmt_unit_sectors(ver, unit);
	nr = vc_le64_to_cpu(sb.nr_blocks);
	if (!nr || nr > 0xfffffff0ULL)
		return fail(err, errlen, -EUCLEAN, "bad block count %llu", (unsigned long long)nr);
	if (vc_le64_to_cpu(sb.md_start) != vc_fmt_md_start(ver, unit))
		return fail(err, errlen, -EUCLEAN, "bad metadata start");
	md = vc_le64_to_cpu(sb.md_sectors);
	if (md != vc_fmt_md_sectors(ver, unit, nr))
		return fail(err, errlen, -EUCLEAN, "metadata size does not match block count");
	data = vc_le64_to_cpu(sb.data_start);
	if (ver >= 4 && usec > bsec)
		bsec = usec;	/* data_start is aligned to the unit too */
	if (data < vc_le64_to_cpu(sb.md_start) + md || (data & (bsec - 1)) ||
	    data > dev_sectors)
		return fail(err, errlen, -EUCLEAN, "bad data start %llu", (unsigned long long)data);
	if (nr > vc_div_u64(dev_sectors - data, bs >> VC_SECTOR_SHIFT))
		return fail(err, errlen, -EUCLEAN, "cache blocks exceed the device (%llu sectors)",
		     (unsigned long long)dev_sectors);
	if (vc_le64_to_cpu(sb.dev_sectors) > dev_sectors)
		return fail(err, errlen, -EUCLEAN, "device shrank: formatted for %llu sectors, has %llu",
		     (unsigned long long)vc_le64_to_cpu(sb.dev_sectors),
		     (unsigned long long)dev_sectors);
	if (vc_le32_to_cpu(sb.clean) != 0 && vc_le32_to_cpu(sb.clean) != VC_SB_CLEAN)
		return fail(err, errlen, -EUCLEAN, "bad clean flag");
	if (vc_le32_to_cpu(sb.mode) >= VC_NR_MODES ||
	    vc_le32_to_cpu(sb.policy) >= VC_NR_POLICIES)
		return fail(err, errlen, -EUCLEAN, "bad mode or policy");
	if (vc_le32_to_cpu(sb.nr_params) > VC_FMT_MAX_PARAMS)
		return fail(err, errlen, -EUCLEAN, "bad parameter count");
	if (vc_le32_to_cpu(sb.set_shift) != 0 &&
	    vc_le32_to_cpu(sb.set_shift) != VC_SET_SHIFT)
		return fail(err, errlen, -EUCLEAN, "bad set hash %u",
			    vc_le32_to_cpu(sb.set_shift));
	for (i = 0; i < sizeof(sb.reserved); i++)
		if (sb.reserved[i])
			return fail(err, errlen, -EUCLEAN, "reserved superblock bytes not zero");
	if (vc_le32_to_cpu(sb.version) < 3) {
		for (i = 0; i < sizeof(sb.label); i++)
			if (sb.label[i])
				return fail(err, errlen, -EUCLEAN, "reserved superblock bytes not zero");
	} else if (vc_strnlen((const char *)sb.label, sizeof(sb.label)) ==
		   sizeof(sb.label)) {
		return fail(err, errlen, -EUCLEAN, "superblock name not terminated");
	}
	return 0;
}

/*
 * Is unit 0's padding (sectors 1 .. @usec - 1) all zero?  A second copy
 * for a unit over 4 KiB (sector 32 and beyond) may lie where another
 * layout keeps records or cached data, which a host can fill with a
 * crafted superblock: it counts only if unit 0 looks like its layout's,
 * zeroes after copy 0.  Every other layout has a device table in there
 * (sector 1, 8, or its own unit), so a copy planted in data never passes.
 */
static bool unit0_padding_zero(struct vc_dev *cdev, u32 usec)
{
	struct vc_buf *b = vc_buf_alloc((usec - 1) * VC_SECTOR_SIZE,
					VC_GFP_KERNEL);
	u8 sec[64];
	bool zero = !!b;
	u32 off;

	if (zero && vc_sync_io(cdev, VC_DEV_READ, VC_DEV_META, 1,
			       (usec - 1) * VC_SECTOR_SIZE, b))
		zero = false;
	for (off = 0; zero && off < (usec - 1) * VC_SECTOR_SIZE;
	     off += sizeof(sec)) {
		u32 j;

		vc_buf_to_mem(sec, b, off, sizeof(sec));
		for (j = 0; j < sizeof(sec); j++)
			zero &= !sec[j];
	}
	vc_buf_free(b);
	return zero;
}

/*
 * Read the superblock copies (sector 0, and every place a second copy can
 * be: VC_SB_CANDIDATES) and return in @sb the valid one with the highest
 * seq; a copy counts only where its own version (and unit) puts one, and
 * beyond sector 24 only if unit 0 is padded as its layout pads it.  If
 * none verifies, the reason (in @err) is the most telling: a damaged copy
 * rather than "no vcache metadata".
 */
static const u64 sb_where[] = VC_SB_CANDIDATES;
#define SB_WHERE	((int)VC_ARRAY_SIZE(sb_where))

int vc_md_read_sb(struct vc_dev *cdev, struct vc_sb *sb, char *err,
		  size_t errlen)
{
	const u64 *where = sb_where;
	struct vc_buf *b = vc_buf_alloc(VC_SECTOR_SIZE, VC_GFP_KERNEL);
	struct vc_sb cand;
	char (*why)[128] = vc_malloc(SB_WHERE * sizeof(*why), VC_GFP_KERNEL);
	int res[SB_WHERE], i, best = -1;

	if (!b || !why) {
		vc_buf_free(b);
		vc_free(why);
		return fail(err, errlen, -ENOMEM, "out of memory");
	}
	for (i = 0; i < SB_WHERE; i++) {
		why[i][0] = 0;
		if (where[i] >= cdev->nr_sectors) {
			res[i] = fail(why[i], sizeof(why[i]), -ENODATA,
				      "no vcache metadata (bad magic)");
			continue;
		}
		res[i] = vc_sync_io(cdev, VC_DEV_READ, VC_DEV_META, where[i],
				    VC_SECTOR_SIZE, b);
		if (res[i]) {
			vc_snprintf(why[i], sizeof(why[i]),
				    "cannot read the superblock (sector %llu): error %d",
				    (unsigned long long)where[i], res[i]);
			continue;
		}
		vc_buf_to_mem(&cand, b, 0, sizeof(cand));
		res[i] = vc_sb_check(&cand, cdev->nr_sectors, why[i],
				     sizeof(why[i]));
		if (!res[i] && i &&
		    (vc_fmt_sb2_sector(vc_le32_to_cpu(cand.version),
				       vc_le32_to_cpu(cand.md_unit)) != where[i] ||
		     (where[i] > VC_SB2_SECTOR &&
		      !unit0_padding_zero(cdev, vc_le32_to_cpu(cand.md_unit) >>
					  VC_SECTOR_SHIFT))))
			res[i] = fail(why[i], sizeof(why[i]), -ENODATA,
				      "no vcache metadata (bad magic)");
		if (res[i])
			continue;
		if (best < 0 ||
		    vc_le64_to_cpu(cand.seq) > vc_le64_to_cpu(sb->seq)) {
			*sb = cand;
			best = i;
		}
	}
	vc_buf_free(b);
	if (best >= 0) {
		vc_free(why);
		return 0;
	}
	for (i = 0; i < SB_WHERE && res[i] == -ENODATA; i++)
		;
	if (i == SB_WHERE)
		i = 0;
	i = fail(err, errlen, res[i], "%s", why[i]);
	vc_free(why);
	return i;
}

/* What a load found; salvage skips what does not verify and counts it. */
struct load_ctx {
	bool clean;		/* clean shutdown: clean records trusted */
	bool salvage;
	u64 bad_sectors;	/* record sectors skipped */
	u64 bad_records;	/* records skipped */
	u64 marked;		/* lost markers from damaged sectors */
	bool suspect;		/* loading a sector that did not verify */
	u32 bad_devs;		/* device table entries dropped (mask) */
	char *err;
	size_t errlen;
};

/* A damaged piece: refuse (return @code) or, salvaging, count it (0). */
static int damaged(struct load_ctx *lc, u64 *count, int code)
{
	if (!lc->salvage)
		return code;
	if (count)
		(*count)++;
	return 0;
}

static int load_devs(struct vc_cache *c, struct vc_buf *b,
		     struct load_ctx *lc)
{
	char *err = lc->err;
	size_t errlen = lc->errlen;
	struct vc_dev_sector ds;
	u32 i, j;
	int e;

	e = vc_sync_io(c->cdev, VC_DEV_READ, VC_DEV_META, c->devtab_sector,
		       VC_DEVTAB_SECTORS * VC_SECTOR_SIZE, b);
	if (e)
		return fail(err, errlen, e, "cannot read the device table: error %d", e);
	for (i = 0; i < VC_MAX_BACKING; i++) {
		u32 crc, fl;

		vc_buf_to_mem(&ds, b, i * VC_SECTOR_SIZE, sizeof(ds));
		crc = vc_le32_to_cpu(ds.crc);
		ds.crc = 0;
		e = 0;
		fl = vc_le32_to_cpu(ds.flags);
		if (vc_le32_to_cpu(ds.magic) != VC_DEV_MAGIC ||
		    vc_crc32c(c->nonce, &ds, sizeof(ds)) != crc)
			e = fail(err, errlen, -EUCLEAN, "device table entry %u: bad checksum", i);
		else if (vc_le32_to_cpu(ds.index) != c->devtab_sector + i)
			e = fail(err, errlen, -EUCLEAN, "device table entry %u: misplaced", i);
		else if (fl & ~VC_DEVF_IN_USE)
			e = fail(err, errlen, -EUCLEAN, "device table entry %u: bad flags", i);
		for (j = 0; !e && j < sizeof(ds.reserved); j++)
			if (ds.reserved[j])
				e = fail(err, errlen, -EUCLEAN, "device table entry %u: reserved bytes", i);
		for (j = 0; !e && c->version < 3 && j < sizeof(ds.label); j++)
			if (ds.label[j])
				e = fail(err, errlen, -EUCLEAN, "device table entry %u: reserved bytes", i);
		if (!e && vc_strnlen((const char *)ds.label, sizeof(ds.label)) ==
		    sizeof(ds.label))
			e = fail(err, errlen, -EUCLEAN, "device table entry %u: name not terminated", i);
		if (!e && (fl & VC_DEVF_IN_USE) &&
		    (vc_strnlen((const char *)ds.uuid, sizeof(ds.uuid)) ==
		     sizeof(ds.uuid) || !ds.uuid[0]))
			e = fail(err, errlen, -EUCLEAN, "device table entry %u: bad identity", i);
		for (j = 0; !e && (fl & VC_DEVF_IN_USE) && j < i; j++)
			if (c->bdev[j].in_use &&
			    !vc_memcmp(c->bdev[j].uuid, ds.uuid, sizeof(ds.uuid)))
				e = fail(err, errlen, -EUCLEAN, "device table: entries %u and %u name the same device",
					 j, i);
		if (e) {
			if (!lc->salvage)
				return e;
			lc->bad_devs |= 1u << i;	/* unknown: its records go */
			continue;
		}
		if (!(fl & VC_DEVF_IN_USE))
			continue;
		c->bdev[i].in_use = true;
		c->bdev[i].nr_sectors = vc_le64_to_cpu(ds.nr_sectors);
		vc_memcpy(c->bdev[i].uuid, ds.uuid, sizeof(ds.uuid));
		vc_memcpy(c->bdev[i].label, ds.label, sizeof(ds.label));
	}
	return 0;
}

static int load_rec(struct vc_cache *c, u32 blk, u64 r, struct load_ctx *lc)
{
	char *err = lc->err;
	size_t errlen = lc->errlen;
	u64 lba, key, w;
	u32 dev;
	struct vc_set *s;

	if (!r)
		return 0;
	if ((r >> VC_REC_FLAG_SHIFT << VC_REC_FLAG_SHIFT) & ~VC_REC_KNOWN_FLAGS)
		return fail(err, errlen, -EUCLEAN, "block %u: unknown record flags", blk);
	if (r & VC_REC_LOST) {
		if ((r & (VC_REC_VALID | VC_REC_DIRTY)) || c->version < 3)
			return fail(err, errlen, -EUCLEAN, "block %u: bad lost record", blk);
	} else if (!(r & VC_REC_VALID)) {
		return fail(err, errlen, -EUCLEAN, "block %u: record without valid flag", blk);
	}
	if ((!lc->clean || lc->suspect) && !(r & (VC_REC_DIRTY | VC_REC_LOST)))
		return 0;	/* clean records are not trusted after a crash */
	lba = r & VC_REC_BLOCK_MASK;
	dev = (u32)((r >> VC_REC_DEV_SHIFT) & VC_REC_DEV_MASK);
	if (dev >= VC_MAX_BACKING || !c->bdev[dev].in_use)
		return fail(err, errlen, -EUCLEAN, "block %u: unknown backing device %u", blk, dev);
	if (lba > B_LBA_MASK ||
	    lba >= (c->bdev[dev].nr_sectors >> (c->block_shift - VC_SECTOR_SHIFT)))
		return fail(err, errlen, -EUCLEAN, "block %u: backing block %llu beyond device %u",
		     blk, (unsigned long long)lba, dev);
	key = vc_mkkey(dev, lba);
	s = &c->sets[vc_set_of(c, key)];
	if (blk < s->first || blk >= s->first + s->ways)
		return fail(err, errlen, -EUCLEAN, "block %u: record in the wrong set", blk);
	if (vc_lookup(c, s, key) != ~0u) {
		u32 o = vc_lookup(c, s, key);

		/*
		 * Salvaging: a marker from a damaged sector gives way to the
		 * verified record of the same block.
		 */
		if (lc->salvage && !lc->suspect && lc->marked &&
		    (c->words[o] & (B_TOMB | B_LOST)) == (B_TOMB | B_LOST) &&
		    !(r & VC_REC_LOST)) {
			vc_hash_remove(c, s, o);
			vc_block_set_word(c, s, o, 0);
			lc->marked--;
		} else {
			return fail(err, errlen, -EUCLEAN, "block %u: backing block %llu of device %u cached twice",
				    blk, (unsigned long long)lba, dev);
		}
	}
	if ((r & VC_REC_LOST) || lc->suspect) {
		/*
		 * Reads of the backing block keep failing: a lost marker.  A
		 * record of a damaged sector that still names a plausible
		 * dirty block becomes one too: its data cannot be trusted,
		 * and the backing device holds older data.
		 */
		if (lc->suspect) {
			lc->marked++;
			vc_stat_add(VC_DSTAT(c, dev, lost_blocks), 1);
		}
		vc_block_set_word(c, s, blk, key | B_TOMB | B_LOST |
				  (c->version >= 3 ? B_FLASHDIRTY : 0));
		vc_hash_insert(c, s, blk);
		return 0;
	}
	w = key | B_VALID;
	if (r & VC_REC_DIRTY)
		w |= B_DIRTY | B_FLASHDIRTY |
		     ((u64)vc_cur_epoch(c) << B_EPOCH_SHIFT);
	vc_block_set_word(c, s, blk, w);
	vc_hash_insert(c, s, blk);
	vc_lru_unlink(c, s, blk);
	vc_lru_push_head(c, s, blk);
	return 0;
}

/*
 * Check one record sector (relative index @sidx, NULL if unreadable) and
 * load its records.
 */
static int load_rec_sector(struct vc_cache *c, u64 sidx,
			   struct vc_rec_sector *rs, struct load_ctx *lc)
{
	u64 sector = c->md_start + sidx;
	u32 crc, j;
	int e;

	if (!rs)
		return damaged(lc, &lc->bad_sectors, -EIO);
	crc = vc_le32_to_cpu(rs->crc);
	e = 0;
	if (rec_crc(c, rs) != crc)
		e = fail(lc->err, lc->errlen, -EUCLEAN,
			 "metadata sector %llu: bad checksum",
			 (unsigned long long)sector);
	else if (vc_le32_to_cpu(rs->index) != (u32)sector)
		e = fail(lc->err, lc->errlen, -EUCLEAN,
			 "metadata sector %llu: misplaced",
			 (unsigned long long)sector);
	if (e) {
		if (damaged(lc, &lc->bad_sectors, e))
			return e;
		/* salvage: what still looks like a dirty block is lost */
		lc->suspect = true;
		for (j = 0; j < VC_RECS_PER_SECTOR; j++) {
			u64 blk = sidx * VC_RECS_PER_SECTOR + j;

			if (blk < c->nr_blocks)
				load_rec(c, (u32)blk,
					 vc_le64_to_cpu(rs->rec[j]), lc);
		}
		lc->suspect = false;
		return 0;
	}
	for (j = 0; j < VC_RECS_PER_SECTOR; j++) {
		u64 blk = sidx * VC_RECS_PER_SECTOR + j;
		u64 r = vc_le64_to_cpu(rs->rec[j]);

		if (blk >= c->nr_blocks) {
			if (r && damaged(lc, &lc->bad_records,
					 fail(lc->err, lc->errlen, -EUCLEAN,
					      "metadata sector %llu: record beyond the last block",
					      (unsigned long long)sector)))
				return -EUCLEAN;
			continue;
		}
		e = load_rec(c, (u32)blk, r, lc);
		if (e && damaged(lc, &lc->bad_records, e))
			return e;
	}
	return 0;
}

/* Read @n record sectors from @idx into @b; salvaging, one by one. */
static int read_rec_chunk(struct vc_cache *c, u64 idx, u32 n,
			  struct vc_buf *b, struct vc_buf *one, u8 *bad,
			  struct load_ctx *lc)
{
	u32 i;
	int e;

	e = vc_sync_io(c->cdev, VC_DEV_READ, VC_DEV_META, c->md_start + idx,
		       n * VC_SECTOR_SIZE, b);
	if (!e || !lc->salvage) {
		if (e)
			fail(lc->err, lc->errlen, e,
			     "cannot read metadata: error %d", e);
		return e;
	}
	for (i = 0; i < n; i++) {
		struct vc_rec_sector rs;

		bad[i] = vc_sync_io(c->cdev, VC_DEV_READ, VC_DEV_META,
				    c->md_start + idx + i, VC_SECTOR_SIZE,
				    one) != 0;
		vc_buf_to_mem(&rs, one, 0, sizeof(rs));
		vc_buf_from_mem(b, i * VC_SECTOR_SIZE, &rs, sizeof(rs));
	}
	return 0;
}

/*
 * Salvaged: rewrite every record sector and the dropped device-table
 * entries from what was loaded, so the metadata verifies again.
 */
static int salvage_rewrite(struct vc_cache *c, struct load_ctx *lc)
{
	u32 i;
	int e;

	vc_log_err("%s: salvage: %llu record sectors and %llu records did not verify and were skipped, %u device table entries dropped: the dirty data they described is lost; %llu blocks they still name read as errors until rewritten (last damage: %s)",
		   c->cdev->name, (unsigned long long)lc->bad_sectors,
		   (unsigned long long)lc->bad_records,
		   vc_popcount64(lc->bad_devs),
		   (unsigned long long)lc->marked,
		   lc->err && lc->errlen ? lc->err : "?");
	vc_stat_add(VC_STAT(c, load_bad_sectors), lc->bad_sectors);
	vc_stat_add(VC_STAT(c, load_bad_records), lc->bad_records);
	e = vc_md_write_all(c);
	for (i = 0; i < VC_MAX_BACKING && !e; i++)
		if (lc->bad_devs & (1u << i))
			e = vc_md_write_dev(c, i);
	if (!e)
		e = vc_sync_io(c->cdev, VC_DEV_FLUSH, 0, 0, 0, NULL);
	return e;
}

/*
 * Second half of loading: the superblock @sb was read and checked by the
 * caller, which set up geometry and allocated the map.
 */
int vc_md_load(struct vc_cache *c, const struct vc_sb *sb, bool salvage,
	       char *err, size_t errlen)
{
	struct vc_buf *b = vc_buf_alloc(MD_CHUNK * VC_SECTOR_SIZE, VC_GFP_KERNEL);
	struct vc_buf *one = vc_buf_alloc(VC_SECTOR_SIZE, VC_GFP_KERNEL);
	struct vc_rec_sector *rs = vc_malloc(sizeof(*rs), VC_GFP_KERNEL);
	struct load_ctx lc = {
		.clean = vc_le32_to_cpu(sb->clean) == VC_SB_CLEAN,
		.salvage = salvage, .err = err, .errlen = errlen,
	};
	u8 bad[MD_CHUNK];
	u64 idx = 0;
	int e;

	if (!b || !one || !rs) {
		e = fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	e = load_devs(c, b, &lc);
	while (!e && idx < c->md_sectors) {
		u32 n = (u32)vc_min_u64(MD_CHUNK, c->md_sectors - idx), i;

		vc_memset(bad, 0, sizeof(bad));
		e = read_rec_chunk(c, idx, n, b, one, bad, &lc);
		for (i = 0; i < n && !e; i++) {
			vc_buf_to_mem(rs, b, i * VC_SECTOR_SIZE, sizeof(*rs));
			e = load_rec_sector(c, idx + i, bad[i] ? NULL : rs, &lc);
		}
		idx += n;
	}
	if (!e && (lc.bad_sectors || lc.bad_records || lc.bad_devs))
		e = salvage_rewrite(c, &lc);
out:
	vc_free(rs);
	vc_buf_free(one);
	vc_buf_free(b);
	return e;
}
