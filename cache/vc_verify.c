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

int vc_cache_verify_backing(struct vc_cache *c, u32 id, struct vc_dev *cand,
			    struct vc_verify_result *res)
{
	u32 bs = c->block_size, k, sect = bs >> VC_SECTOR_SHIFT;
	struct vc_buf ba, bb;
	u8 *pa = NULL, *pb = NULL;
	int err = 0;

	vc_memset(res, 0, sizeof(*res));
	if (id >= VC_MAX_BACKING || !cand)
		return -EINVAL;
	pa = vc_malloc(bs, VC_GFP_KERNEL);
	pb = vc_malloc(bs, VC_GFP_KERNEL);
	if (!pa || !pb) {
		err = -ENOMEM;
		goto out;
	}
	vc_buf_init_mem(&ba, pa, bs);
	vc_buf_init_mem(&bb, pb, bs);
	vc_mutex_lock(&c->ctl_mutex);
	if (!c->bdev[id].in_use || c->bdev[id].dev) {
		err = -ENOENT;
		goto unlock;
	}
	for (k = 0; k < VC_VERIFY_SAMPLES && !err; k++) {
		u64 b = vc_div_u64(c->nr_blocks * k, VC_VERIFY_SAMPLES);
		u64 end = vc_div_u64(c->nr_blocks * (k + 1), VC_VERIFY_SAMPLES);
		u32 zeroes = 0;

		if (end > b + VERIFY_SCAN)
			end = b + VERIFY_SCAN;
		for (; b < end; b++) {
			u64 w = vc_word(c, (u32)b), home;
			int e;

			if (!clean_of(w, id))
				continue;
			home = vc_key_lba(w) * sect;
			if (home + sect > cand->nr_sectors)
				continue;
			e = vc_sync_io(c->cdev, VC_DEV_READ, 0,
				       c->data_start + b * sect, bs, &ba);
			/* the block may have changed while it was read */
			if (e || vc_word(c, (u32)b) != w) {
				res->skipped++;
				continue;
			}
			if (all_zero(pa, bs)) {
				if (++zeroes >= VERIFY_ZEROES)
					break;
				continue;
			}
			e = vc_sync_io(cand, VC_DEV_READ, 0, home, bs, &bb);
			if (e) {
				err = -EIO;
				break;
			}
			res->compared++;
			if (vc_memcmp(pa, pb, bs))
				res->differ++;
			break;		/* one sample per region */
		}
	}
unlock:
	vc_mutex_unlock(&c->ctl_mutex);
out:
	vc_free(pa);
	vc_free(pb);
	return err;
}
