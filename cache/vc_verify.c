// SPDX-License-Identifier: GPL-2.0
/*
 * vc_verify: is a returning disk the one the cache's blocks belong to?
 *
 * A backing device is found again by its identity (a serial number, a
 * device-mapper uuid...) and its size; both can be copied, and a disk
 * that only claims them would get another disk's dirty data written over
 * its own.  The cache holds more evidence: a clean block is, by its
 * definition, equal to its home copy (the cleaner FLUSHes the disk before
 * a block is recorded clean; a write around the cache clears the block's
 * record first).  So the disk that was there holds every clean block the
 * cache loaded for it, and another disk almost none.  All-zero blocks say
 * nothing (a new disk is zeroes too) and are passed over.
 *
 * A device that leaves while the cache runs (detach with KEEP, unplug)
 * has its clean blocks dropped; a few of them are first kept as
 * fingerprints (home LBA and crc32c, in RAM) and compared the same way
 * when a disk claims the slot.
 */
#include "vc_internal.h"

/* A plain clean block of @id: valid, not dirty, no record or I/O pending. */
static bool clean_of(u64 w, u32 id)
{
	return (w & (B_VALID | B_DIRTY | B_FLASHDIRTY | B_TOMB | B_BUSY |
		     B_CLEANING)) == B_VALID && vc_key_dev(w) == id;
}

static bool all_zero(const u8 *p, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Blocks looked at per sample region at most (a sparse slot ends early). */
#define VERIFY_SCAN	65536u
/*
 * All-zero clean blocks passed over per sample region at most (a
 * filesystem's inode tables and bitmaps read through the cache are mostly
 * zeroes: each costs one cache read).
 */
#define VERIFY_ZEROES	512u

/*
 * Sample region @k of the cache: its first clean block of @id, within
 * @nr_sectors of the device, whose cache copy (read into @buf) is not all
 * zeroes.  Returns its home sector, or -1 (none; a block that changed
 * while it was read, or could not be read, is counted in @skipped).
 */
static s64 sample_clean(struct vc_cache *c, u32 id, u32 k, u64 nr_sectors,
			struct vc_buf *buf, u8 *p, u32 *skipped)
{
	u32 bs = c->block_size, sect = bs >> VC_SECTOR_SHIFT, zeroes = 0;
	u64 b = vc_div_u64(c->nr_blocks * k, VC_VERIFY_SAMPLES);
	u64 end = vc_div_u64(c->nr_blocks * (k + 1), VC_VERIFY_SAMPLES);

	if (end > b + VERIFY_SCAN)
		end = b + VERIFY_SCAN;
	for (; b < end; b++) {
		u64 w = vc_word(c, (u32)b), home;

		if (!clean_of(w, id))
			continue;
		home = vc_key_lba(w) * sect;
		if (home + sect > nr_sectors)
			continue;
		/* the block may have changed while it was read */
		if (vc_sync_io(c->cdev, VC_DEV_READ, 0, c->data_start + b * sect,
			       bs, buf) || vc_word(c, (u32)b) != w) {
			(*skipped)++;
			continue;
		}
		if (!all_zero(p, bs))
			return (s64)home;
		if (++zeroes >= VERIFY_ZEROES)
			break;
	}
	return -1;
}

/*
 * Fingerprints of up to VC_VERIFY_SAMPLES clean blocks of @id within
 * @nr_sectors (one per sample region) into @fp, read through @buf (@p);
 * how many.  ctl_mutex held.
 */
static u32 take_fingerprints(struct vc_cache *c, u32 id, u64 nr_sectors,
			     struct vc_buf *buf, u8 *p,
			     struct vc_fingerprint *fp, u32 *skipped)
{
	u32 k, n = 0;

	for (k = 0; k < VC_VERIFY_SAMPLES; k++) {
		s64 home = sample_clean(c, id, k, nr_sectors, buf, p, skipped);

		if (home < 0)
			continue;
		fp[n].sector = (u64)home;
		fp[n++].crc = vc_crc32c(0, p, c->block_size);
	}
	return n;
}

void vc_verify_fingerprint(struct vc_cache *c, u32 id)
{
	struct vc_bdev_slot *s = &c->bdev[id];
	u32 bs = c->block_size, skipped = 0;
	struct vc_buf buf;
	u8 *p;

	s->nr_fp = 0;
	p = vc_malloc(bs, VC_GFP_KERNEL);
	if (!p)
		return;		/* the disk will be matched by identity alone */
	vc_buf_init_mem(&buf, p, bs);
	s->nr_fp = take_fingerprints(c, id, s->nr_sectors, &buf, p, s->fp,
				     &skipped);
	vc_free(p);
}

int vc_cache_verify_backing(struct vc_cache *c, u32 id, struct vc_dev *cand,
			    struct vc_verify_result *res)
{
	u32 bs = c->block_size, sect = bs >> VC_SECTOR_SHIFT, k, n;
	struct vc_fingerprint want[2 * VC_VERIFY_SAMPLES];
	struct vc_bdev_slot *s;
	struct vc_buf buf;
	u8 *p;
	int err = 0;

	vc_memset(res, 0, sizeof(*res));
	if (id >= VC_MAX_BACKING || !cand)
		return -EINVAL;
	s = &c->bdev[id];
	p = vc_malloc(bs, VC_GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	vc_buf_init_mem(&buf, p, bs);
	/*
	 * What the disk must hold, as home sector and crc32c, taken under
	 * ctl_mutex: the clean blocks the cache holds of it (loaded with the
	 * cache), read from the cache device, and the fingerprints of those
	 * dropped when it left.
	 */
	vc_mutex_lock(&c->ctl_mutex);
	if (!s->in_use || s->dev) {
		vc_mutex_unlock(&c->ctl_mutex);
		err = -ENOENT;
		goto out;
	}
	n = take_fingerprints(c, id, cand->nr_sectors, &buf, p, want,
			      &res->skipped);
	for (k = 0; k < s->nr_fp; k++)
		if (s->fp[k].sector + sect <= cand->nr_sectors)
			want[n++] = s->fp[k];
	vc_mutex_unlock(&c->ctl_mutex);
	/*
	 * The candidate is read without it: a disk that does not answer
	 * holds no other control call of the cache (stats, settings) and
	 * nobody waiting for those.  Nothing writes the slot's blocks
	 * meanwhile: it has no device.
	 */
	for (k = 0; k < n; k++) {
		if (vc_sync_io(cand, VC_DEV_READ, 0, want[k].sector, bs, &buf)) {
			err = -EIO;
			goto out;
		}
		res->compared++;
		if (vc_crc32c(0, p, bs) != want[k].crc)
			res->differ++;
	}
out:
	vc_free(p);
	return err;
}
