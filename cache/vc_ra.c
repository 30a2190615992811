// SPDX-License-Identifier: GPL-2.0
/*
 * vc_ra: readahead of a read-miss fill into free cache blocks.
 *
 * A read miss fills its block from the backing device.  While the cache
 * has free blocks (after creation, a detach, discards), the fill also
 * reads the uncached blocks next to its own, within the aligned window of
 * readahead_kib around it, in the same backing I/O, and installs them
 * clean: a database smaller than the cache is in the cache after far
 * fewer disk I/Os (a disk that seeks, or counts I/Os, reads 64 KiB at the
 * cost of 4).  A block is read ahead only where its set has a free block
 * at the tail of its replacement list: readahead never evicts, so a full
 * cache never trades a block it holds for a guess.
 *
 * A block read ahead is VALID|BUSY from its taking until its cache write
 * completed, as a fill's block is: requests for it wait (vc_defer), and a
 * detach, unplug or shutdown waits for it.  A write around the cache into
 * its set while it was read (byp_gen) may have made the copy old: it is
 * dropped.  A backing read error drops every block of the run.
 */
#include "vc_internal.h"

struct vc_ra_blk {
	struct vc_dev_io io;
	struct vc_ra *ra;
	u64 lba;
	u32 blk;
	u32 gen;		/* its set's byp_gen when taken */
};

struct vc_ra {
	struct vc_cache *c;
	struct vc_buf *buf;	/* the run read: nr blocks from first_lba */
	vc_atomic_t refs;	/* the fill, and each block write in flight */
	u32 dev;
	u64 first_lba;
	u32 nr_ra;		/* entries in b[] */
	struct vc_ra_blk b[];
};

/*
 * Take backing block @key for readahead if it is cached nowhere, no write
 * around the cache is in flight in its set, and the set has a free block
 * at its tail.  The block becomes key|VALID|BUSY.
 */
static bool ra_take_one(struct vc_cache *c, u64 key, struct vc_ra_blk *e)
{
	struct vc_set *s = &c->sets[vc_set_of(c, key)];
	bool ok = false;

	vc_spin_lock(&s->lock);
	if (!s->byp_inflight && s->tail != VC_NIL &&
	    !(c->words[s->first + s->tail] & (B_VALID | B_TOMB | B_BUSY)) &&
	    vc_lookup(c, s, key) == ~0u) {
		e->blk = vc_take_victim(c, s, key);
		e->gen = s->byp_gen;
		ok = e->blk != ~0u;
	}
	vc_spin_unlock(&s->lock);
	e->lba = vc_key_lba(key);
	return ok;
}

static void ra_free(struct vc_ra *ra)
{
	vc_buf_free(ra->buf);
	vc_free(ra);
}

/*
 * For a fill of @key (its block taken): take the blocks to read ahead
 * with it.  NULL if none (or no memory: @first_lba and @nr untouched);
 * else the run to read, @nr blocks from @first_lba (the fill's own
 * included) into vc_ra_buf(), and the fill holds a reference
 * (vc_ra_put()).
 */
struct vc_ra *vc_ra_take(struct vc_cache *c, u64 key, u64 *first_lba,
			 u32 *nr)
{
	u32 bs = c->block_size, sect = bs >> VC_SECTOR_SHIFT, win, i, n = 0;
	u64 lba = vc_key_lba(key), base, end, l, first, dev_blocks;
	struct vc_dev *dev = c->bdev[vc_key_dev(key)].dev;
	struct vc_ra *ra;

	win = (u32)((vc_param(c, VC_P_READAHEAD_KIB) << 10) >> c->block_shift);
	/* a full cache (its steady state) has no free block: no allocation */
	if (win < 2 || !dev || (c->flags & VC_CFG_NODATA) ||
	    (u64)vc_atomic64_read(&c->nr_valid) >= c->nr_blocks)
		return NULL;
	dev_blocks = dev->nr_sectors / sect;
	base = lba - lba % win;
	end = vc_min_u64(base + win, dev_blocks);
	ra = vc_malloc(sizeof(*ra) + (win - 1) * sizeof(ra->b[0]),
		       VC_GFP_NOIO);
	if (!ra)
		return NULL;
	/* the contiguous run around @lba: down from it, then up */
	for (l = lba; l > base; l--, n++)
		if (!ra_take_one(c, vc_mkkey(vc_key_dev(key), l - 1), &ra->b[n]))
			break;
	first = l;
	for (l = lba + 1; l < end; l++, n++)
		if (!ra_take_one(c, vc_mkkey(vc_key_dev(key), l), &ra->b[n]))
			break;
	if (!n) {
		vc_free(ra);
		return NULL;
	}
	ra->c = c;
	ra->dev = vc_key_dev(key);
	ra->nr_ra = n;
	ra->first_lba = first;
	vc_atomic_set(&ra->refs, 1);
	ra->buf = vc_buf_alloc((n + 1) * bs, VC_GFP_NOIO);
	if (!ra->buf) {
		for (i = 0; i < n; i++)
			vc_invalidate_blk(c, ra->b[i].blk);
		vc_free(ra);
		return NULL;
	}
	*first_lba = first;
	*nr = n + 1;
	return ra;
}

struct vc_buf *vc_ra_buf(struct vc_ra *ra)
{
	return ra->buf;
}

u64 vc_ra_first_lba(struct vc_ra *ra)
{
	return ra->first_lba;
}

void vc_ra_put(struct vc_ra *ra)
{
	if (vc_atomic_dec_and_test(&ra->refs))
		ra_free(ra);
}

static void ra_write_end(struct vc_dev_io *io, int err)
{
	struct vc_ra_blk *e = io->private;
	struct vc_ra *ra = e->ra;
	struct vc_cache *c = ra->c;
	u32 blk = e->blk;

	/* the run is not touched once its last block is not BUSY */
	vc_ra_put(ra);
	if (err) {
		vc_cache_write_failed(c, err, "cache write failed");
		vc_invalidate_blk(c, blk);
	} else {
		vc_stat_add(VC_STAT(c, flash_bytes_written), c->block_size);
		vc_clear_bits(c, blk, B_BUSY);
	}
}

/*
 * The fill's backing read ended (@err): write each block read ahead to
 * the cache, or drop it.  Called before the fill lets go of the run.
 */
void vc_ra_install(struct vc_ra *ra, int err)
{
	struct vc_cache *c = ra->c;
	u32 bs = c->block_size, i;

	for (i = 0; i < ra->nr_ra; i++) {
		struct vc_ra_blk *e = &ra->b[i];
		struct vc_set *s = vc_set_of_blk(c, e->blk);
		bool stale;

		vc_spin_lock(&s->lock);
		stale = s->byp_gen != e->gen;
		vc_spin_unlock(&s->lock);
		if (err || stale) {
			vc_invalidate_blk(c, e->blk);
			continue;
		}
		vc_stat_add(VC_DSTAT(c, ra->dev, readahead_blocks), 1);
		e->ra = ra;
		vc_atomic_inc(&ra->refs);
		vc_memset(&e->io, 0, sizeof(e->io));
		e->io.dev = c->cdev;
		e->io.op = VC_DEV_WRITE;
		e->io.sector = c->data_start +
			((u64)e->blk << (c->block_shift - VC_SECTOR_SHIFT));
		e->io.len = bs;
		e->io.buf = ra->buf;
		e->io.buf_off = (u32)(e->lba - ra->first_lba) * bs;
		e->io.end_io = ra_write_end;
		e->io.private = e;
		vc_dev_submit(&e->io);
	}
}
