// SPDX-License-Identifier: GPL-2.0
/*
 * vc_cache: life cycle (create, load, attach, detach, shutdown), online
 * control (mode, policy, parameters), statistics.
 */
#include "vc_internal.h"

/* ---------------------------------------------------------- parameters */
struct param_desc {
	const char *name;
	u64 def, min, max;
};

static const struct param_desc params[VC_NR_PARAMS] = {
	[VC_P_DIRTY_HIGH_PCT]	 = { "dirty_high_pct", 60, 0, 100 },
	[VC_P_DIRTY_LOW_PCT]	 = { "dirty_low_pct", 40, 0, 100 },
	[VC_P_DIRTY_HIGH_BYTES]	 = { "dirty_high_bytes", 0, 0, ~0ULL },
	[VC_P_DIRTY_LOW_BYTES]	 = { "dirty_low_bytes", 0, 0, ~0ULL },
	[VC_P_MAX_DIRTY_AGE_MS]	 = { "max_dirty_age_ms", 60000, 0, 86400000 },
	[VC_P_IDLE_MS]		 = { "idle_ms", 2000, 0, 86400000 },
	[VC_P_WB_MAX_INFLIGHT]	 = { "wb_max_inflight", 64, 1, 1024 },
	[VC_P_WB_MAX_IO_KIB]	 = { "wb_max_io_kib", 1024, 4, VC_MAX_WB_IO_KIB },
	[VC_P_CLEAN_INTERVAL_MS] = { "clean_interval_ms", 1000, 1, 3600000 },
	[VC_P_SEQ_ENABLE]	 = { "seq_enable", 1, 0, 1 },
	[VC_P_SEQ_THRESHOLD_KIB] = { "seq_threshold_kib", VC_SEQ_DEF_THRESH_KIB,
				     1, VC_SEQ_MAX_THRESH_KIB },
	[VC_P_ADMISSION]	 = { "admission", VC_ADMIT_ALL, 0,
				     VC_NR_ADMISSIONS - 1 },
	[VC_P_ADMIT_FULL_PCT]	 = { "admit_full_pct", 90, 0, 100 },
	[VC_P_PID_MODE]		 = { "pid_mode", VC_PID_MODE_CACHE_ALL, 0, 1 },
	[VC_P_COMMIT_MS]	 = { "commit_ms", 100, 0, 10000 },
	[VC_P_READAHEAD_KIB]	 = { "readahead_kib", VC_RA_DEF_KIB, 0,
				     VC_RA_MAX_KIB },
};

void vc_params_default(struct vc_params *p)
{
	u32 i;

	for (i = 0; i < VC_NR_PARAMS; i++)
		p->v[i] = params[i].def;
}

const char *vc_param_name(enum vc_param id)
{
	return (u32)id < VC_NR_PARAMS ? params[id].name : "?";
}

int vc_param_by_name(const char *name)
{
	u32 i;

	for (i = 0; i < VC_NR_PARAMS; i++) {
		size_t n = vc_strnlen(params[i].name, 64);

		if (!vc_memcmp(params[i].name, name, n) && !name[n])
			return (int)i;
	}
	return -ENOENT;
}

const char *vc_mode_name(enum vc_mode m)
{
	static const char *const n[] = { "write-back", "write-through",
					 "write-around", "pass-through" };

	return (u32)m < VC_NR_MODES ? n[m] : "?";
}

const char *vc_policy_name(enum vc_policy p)
{
	static const char *const n[] = { "fifo", "lru", "s3fifo", "tinylfu" };

	return (u32)p < VC_NR_POLICIES ? n[p] : "?";
}

int vc_param_check(enum vc_param id, u64 v)
{
	if ((u32)id >= VC_NR_PARAMS)
		return -EINVAL;
	if (v < params[id].min || v > params[id].max)
		return -EINVAL;
	return 0;
}

static int params_check(const u64 *v)
{
	u32 i;

	for (i = 0; i < VC_NR_PARAMS; i++)
		if (vc_param_check(i, v[i]))
			return -EINVAL;
	if (v[VC_P_DIRTY_LOW_PCT] > v[VC_P_DIRTY_HIGH_PCT] ||
	    (v[VC_P_DIRTY_HIGH_BYTES] &&
	     v[VC_P_DIRTY_LOW_BYTES] > v[VC_P_DIRTY_HIGH_BYTES]))
		return -EINVAL;
	return 0;
}

void vc_cache_config_default(struct vc_cache_config *cfg)
{
	vc_memset(cfg, 0, sizeof(*cfg));
	cfg->block_size = VC_DEF_BLOCK_SIZE;
	cfg->mode = VC_MODE_WB;
	cfg->policy = VC_POLICY_LRU;
	vc_params_default(&cfg->params);
}

/* ----------------------------------------------------------- lifecycle */
static u32 log2_u32(u32 v)
{
	u32 l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

static void cache_free(struct vc_cache *c)
{
	u32 i;

	/* let completions that just woke us leave the wait queues */
	while (vc_atomic_add_return(&c->wakers, 0))
		vc_cpu_relax();
	vc_work_cancel_sync(&c->clean_work);
	vc_work_cancel_sync(&c->defer_work);
	vc_work_cancel_sync(&c->split_work);
	vc_work_destroy(&c->clean_work);
	vc_work_destroy(&c->defer_work);
	vc_work_destroy(&c->split_work);
	vc_commit_free(c);
	vc_io_pools_exit(c);
	vc_mempool_exit(&c->md_pool);
	vc_cleaner_free(c);
	vc_map_free(c);
	vc_large_free(c->md_started);
	vc_large_free(c->md_flags);
	vc_spin_lock_destroy(&c->rec_lock);
	for (i = 0; i < VC_MD_LOCKS; i++)
		vc_spin_lock_destroy(&c->md_lock[i]);
	vc_spin_lock_destroy(&c->defer_lock);
	vc_spin_lock_destroy(&c->clean_lock);
	vc_waitq_destroy(&c->md_wq);
	vc_waitq_destroy(&c->io_wq);
	vc_waitq_destroy(&c->flush_wq);
	vc_mutex_destroy(&c->ctl_mutex);
	vc_mutex_destroy(&c->flush_mark_mutex);
	vc_seq_destroy(&c->seq);
	vc_pidlist_destroy(&c->pids);
	vc_pcpu_exit(&c->lat);
	vc_pcpu_exit(&c->dst);
	vc_pcpu_exit(&c->st);
	vc_free(c);
}

/* Allocate @c's structures once geometry and params are set. */
static int cache_init(struct vc_cache *c)
{
	u32 i;
	int err;

	vc_mutex_init(&c->ctl_mutex);
	vc_mutex_init(&c->flush_mark_mutex);
	vc_spin_lock_init(&c->rec_lock);
	for (i = 0; i < VC_MD_LOCKS; i++)
		vc_spin_lock_init(&c->md_lock[i]);
	vc_spin_lock_init(&c->defer_lock);
	vc_waitq_init(&c->md_wq);
	vc_waitq_init(&c->io_wq);
	vc_waitq_init(&c->flush_wq);
	vc_work_init(&c->defer_work, vc_defer_work_fn);
	vc_work_init(&c->split_work, vc_split_work_fn);
	vc_spin_lock_init(&c->commit_lock);
	vc_work_init(&c->commit_work, vc_commit_work_fn);
	/* cache_free() may run from here on (it cancels these works) */
	err = vc_pcpu_init(&c->st, VC_NR_STATS);
	if (!err)
		err = vc_pcpu_init(&c->dst, VC_MAX_BACKING * VC_NR_DSTATS);
	if (!err)
		err = vc_pcpu_init(&c->lat, VC_NR_LAT * VC_LAT_SLOTS);
	c->stats_since_ns = vc_now_ns();
	if (!err)
		err = vc_cleaner_init(c);
	if (!err)
		err = vc_seq_init(&c->seq, VC_SEQ_DEF_STREAMS,
				  c->params[VC_P_SEQ_THRESHOLD_KIB],
				  c->params[VC_P_SEQ_ENABLE] != 0);
	if (!err)
		err = vc_pidlist_init(&c->pids, VC_PIDLIST_DEF_CAP,
				      vc_env_pid_alive, NULL);
	if (!err)
		vc_env_pidlist_keys(&c->pids);
	if (!err)
		err = vc_pidlist_set_mode(&c->pids,
					  (enum vc_pid_mode)c->params[VC_P_PID_MODE]);
	if (err)
		return err;
	c->md_started = vc_large_zalloc(sizeof(u16) * c->md_units);
	c->md_flags = vc_large_zalloc(c->md_units);
	if (!c->md_started || !c->md_flags)
		return -ENOMEM;
	err = vc_commit_init(c);
	if (!err)
		err = vc_io_pools_init(c);
	if (!err)
		err = vc_md_pool_init(c);
	if (err)
		return err;
	vc_atomic64_set(&c->last_backing_io_ns, (s64)vc_now_ns());
	return vc_map_alloc(c);
}

/*
 * Format @version's layout (a version 1 cache is rewritten as 2), with
 * metadata units of @md_unit bytes (version 4).
 */
static void set_geometry(struct vc_cache *c, u32 version, u32 md_unit,
			 u32 block_size, u64 nr_blocks)
{
	u64 bsec = block_size >> VC_SECTOR_SHIFT, align;

	c->version = version < 2 ? 2 : version;
	c->md_unit = c->version >= 4 ? md_unit : 0;
	c->md_usec = vc_fmt_unit_sectors(c->version, c->md_unit);
	c->md_recs = c->md_usec * VC_RECS_PER_SECTOR;
	c->sb2_sector = vc_fmt_sb2_sector(c->version, c->md_unit);
	c->devtab_sector = vc_fmt_devtab_sector(c->version, c->md_unit);
	c->block_size = block_size;
	c->block_sectors = (u32)bsec;
	c->block_shift = log2_u32(block_size);
	c->nr_blocks = nr_blocks;
	c->md_start = vc_fmt_md_start(c->version, c->md_unit);
	c->md_sectors = vc_fmt_md_sectors(c->version, c->md_unit, nr_blocks);
	c->md_units = vc_div_u64(c->md_sectors + c->md_usec - 1, c->md_usec);
	align = c->version >= 4 ? vc_max_u64(bsec, c->md_usec) : bsec;
	c->data_start = (c->md_start + c->md_sectors + align - 1) &
			~(align - 1);
}

int vc_cache_create(struct vc_dev *cdev, const struct vc_cache_config *cfg,
		    struct vc_cache **out)
{
	u32 unit = vc_md_unit_for(cdev);
	u64 fit = vc_cache_blocks_for_unit(cdev->nr_sectors, cfg->block_size,
					   unit);
	struct vc_cache *c;
	struct vc_sb old;
	char why[128];
	u32 i;
	int err;

	*out = NULL;
	err = vc_md_check_dev(cdev, why, sizeof(why));
	if (err) {
		vc_log_err("cannot create a cache: %s", why);
		return err;
	}
	if (!unit) {
		vc_log_err("cannot create a cache: %s has %u-byte physical blocks, more than the %u bytes a metadata write can be",
			   cdev->name, cdev->physical_block_size,
			   VC_MD_UNIT_MAX);
		return -EINVAL;
	}
	if (!fit || cfg->mode >= VC_NR_MODES || cfg->policy >= VC_NR_POLICIES ||
	    (cfg->flags & ~VC_CFG_NODATA) || params_check(cfg->params.v) ||
	    vc_strnlen(cfg->label, sizeof(cfg->label)) == sizeof(cfg->label))
		return -EINVAL;
	if (cfg->nr_blocks > fit)
		return -ENOSPC;
	c = vc_zalloc(sizeof(*c), VC_GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->cdev = cdev;
	c->flags = cfg->flags;
	set_geometry(c, VC_FORMAT_VERSION, unit, cfg->block_size,
		     cfg->nr_blocks ? cfg->nr_blocks : fit);
	c->set_shift = VC_SET_SHIFT;
	vc_atomic_set(&c->mode, (int)cfg->mode);
	vc_atomic_set(&c->policy, (int)cfg->policy);
	for (i = 0; i < VC_NR_PARAMS; i++)
		c->params[i] = cfg->params.v[i];
	vc_memcpy(c->label, cfg->label, sizeof(c->label) - 1);
	/* a nonce different from the previous format's */
	c->nonce = (u32)vc_hash64(vc_now_ns() ^ ((u64)(unsigned long)c << 16) ^
				  c->nr_blocks);
	if (!vc_md_read_sb(cdev, &old, NULL, 0)) {
		if (vc_le32_to_cpu(old.nonce) == c->nonce)
			c->nonce++;
		/* the new superblocks outrank any copy of the old ones */
		c->sb_seq = vc_le64_to_cpu(old.seq);
	}
	err = cache_init(c);
	if (!err)
		err = vc_md_format(c);
	if (err) {
		cache_free(c);
		return err;
	}
	vc_cleaner_start(c);
	*out = c;
	return 0;
}

int vc_cache_load(struct vc_dev *cdev, u32 flags, struct vc_cache **out,
		  char *err, size_t errlen)
{
	struct vc_cache *c;
	struct vc_sb sb;
	u32 i, np;
	int e;

	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (flags & ~(VC_CFG_NODATA | VC_LOAD_SALVAGE))
		return -EINVAL;
	e = vc_md_check_dev(cdev, err, errlen);
	if (!e)
		e = vc_md_read_sb(cdev, &sb, err, errlen);
	if (e)
		return e;
	c = vc_zalloc(sizeof(*c), VC_GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->cdev = cdev;
	c->flags = flags & VC_CFG_NODATA;
	set_geometry(c, vc_le32_to_cpu(sb.version), vc_le32_to_cpu(sb.md_unit),
		     vc_le32_to_cpu(sb.block_size), vc_le64_to_cpu(sb.nr_blocks));
	vc_md_check_unit(c);
	c->data_start = vc_le64_to_cpu(sb.data_start);
	c->nonce = vc_le32_to_cpu(sb.nonce);
	c->set_shift = vc_le32_to_cpu(sb.set_shift);
	c->sb_seq = vc_le64_to_cpu(sb.seq);
	vc_memcpy(c->label, sb.label, sizeof(c->label));
	vc_atomic_set(&c->mode, (int)vc_le32_to_cpu(sb.mode));
	vc_atomic_set(&c->policy, (int)vc_le32_to_cpu(sb.policy));
	for (i = 0; i < VC_NR_PARAMS; i++)
		c->params[i] = params[i].def;
	np = vc_le32_to_cpu(sb.nr_params);
	for (i = 0; i < np && i < VC_NR_PARAMS; i++)
		c->params[i] = vc_le64_to_cpu(sb.params[i]);
	if (params_check(c->params)) {
		if (err)
			vc_snprintf(err, errlen, "superblock parameters out of range");
		vc_free(c);
		return -EUCLEAN;
	}
	e = cache_init(c);
	if (e) {
		if (err)
			vc_snprintf(err, errlen, "out of memory");
		cache_free(c);
		return e;
	}
	e = vc_md_load(c, &sb, flags & VC_LOAD_SALVAGE, err, errlen);
	/*
	 * From here on, a crash must not trust clean records: both copies
	 * say so, or a later unreadable newer copy would leave the older
	 * clean one to be trusted over blocks reused since.
	 */
	if (!e)
		e = vc_md_write_sb(c, false);
	if (!e)
		e = vc_md_write_sb(c, false);
	if (e) {
		cache_free(c);
		return e;
	}
	vc_cleaner_start(c);
	*out = c;
	return 0;
}

/* Does the cache hold a block of device @id at or beyond @sectors? */
static bool blocks_beyond(struct vc_cache *c, u32 id, u64 sectors)
{
	u64 i;

	for (i = 0; i < c->nr_blocks; i++) {
		u64 w = vc_word(c, (u32)i);

		/* a partial last block counts: it would not fit either */
		if ((w & (B_VALID | B_TOMB)) && vc_key_dev(w) == id &&
		    ((vc_key_lba(w) + 1) << (c->block_shift - VC_SECTOR_SHIFT)) >
		    sectors)
			return true;
	}
	return false;
}

int vc_cache_attach(struct vc_cache *c, struct vc_dev *bdev,
		    const char *uuid, u32 *id)
{
	size_t n = uuid ? vc_strnlen(uuid, VC_UUID_LEN) : 0;
	u8 key[VC_UUID_LEN];
	int slot = -1, i, err;
	bool fresh = false;
	u64 old_sectors;

	if (!n || n >= VC_UUID_LEN || !bdev || !bdev->nr_sectors)
		return -EINVAL;
	vc_memset(key, 0, sizeof(key));
	vc_memcpy(key, uuid, n);
	vc_mutex_lock(&c->ctl_mutex);
	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (c->bdev[i].in_use && !vc_memcmp(c->bdev[i].uuid, key, sizeof(key))) {
			slot = i;
			break;
		}
	}
	if (slot >= 0) {
		err = -EEXIST;
		if (c->bdev[slot].dev)
			goto out;
		/* known device: it must still hold every block we cache */
		err = -EINVAL;
		if (bdev->nr_sectors < c->bdev[slot].nr_sectors &&
		    blocks_beyond(c, (u32)slot, bdev->nr_sectors)) {
			vc_log_err("%s: %s shrank below blocks cached for it",
				   c->cdev->name, uuid);
			goto out;
		}
	} else {
		for (i = 0; i < VC_MAX_BACKING && slot < 0; i++)
			if (!c->bdev[i].in_use)
				slot = i;
		err = -ENOSPC;
		if (slot < 0)
			goto out;
		fresh = true;
	}
	err = vc_dirtymap_attach(c, (u32)slot, bdev->nr_sectors);
	if (err) {
		vc_log_err("%s: no memory for the write-back map of %s",
			   c->cdev->name, uuid);
		goto out;
	}
	old_sectors = c->bdev[slot].nr_sectors;
	vc_memcpy(c->bdev[slot].uuid, key, sizeof(key));
	c->bdev[slot].in_use = true;
	c->bdev[slot].nr_sectors = bdev->nr_sectors;
	err = vc_md_write_dev(c, (u32)slot);
	if (err) {
		vc_log_err("%s: cannot record backing device %s: error %d",
			   c->cdev->name, uuid, err);
		/* as the flash still has it: a new slot stays free */
		c->bdev[slot].nr_sectors = old_sectors;
		if (fresh) {
			c->bdev[slot].in_use = false;
			vc_memset(c->bdev[slot].uuid, 0,
				  sizeof(c->bdev[slot].uuid));
		}
		goto out;
	}
	/* its first host FLUSH goes home: what came before is unknown */
	vc_atomic64_set(&c->bdev[slot].home_flushed,
			vc_atomic64_read(&c->bdev[slot].home_writes) - 1);
	vc_atomic64_set(&c->bdev[slot].last_host_io_ns, (s64)vc_now_ns());
	c->bdev[slot].nr_fp = 0;
	c->bdev[slot].dev = bdev;
	vc_atomic_set(&c->bdev[slot].present, 1);
	if (bdev->no_volatile_cache)
		vc_log_info("%s: %s reports no volatile write cache: written-back data is taken as durable at completion (no FLUSH is sent)",
			    c->cdev->name, bdev->name);
	*id = (u32)slot;
	vc_cache_kick_cleaner(c);
out:
	vc_mutex_unlock(&c->ctl_mutex);
	return err;
}

int vc_cache_backing_info(struct vc_cache *c, u32 id,
			  struct vc_backing_info *bi)
{
	struct vc_bdev_slot *b;

	if (id >= VC_MAX_BACKING)
		return -EINVAL;
	b = &c->bdev[id];
	vc_mutex_lock(&c->ctl_mutex);
	vc_memset(bi, 0, sizeof(*bi));
	bi->in_use = b->in_use;
	bi->attached = b->dev != NULL;
	vc_memcpy(bi->uuid, b->uuid, sizeof(bi->uuid));
	bi->uuid[VC_UUID_LEN - 1] = 0;
	bi->nr_sectors = b->nr_sectors;
	bi->dirty_blocks = (u64)vc_atomic64_read(&b->nr_dirty);
	vc_memcpy(bi->label, b->label, sizeof(bi->label));
	bi->label[sizeof(bi->label) - 1] = 0;
	vc_mutex_unlock(&c->ctl_mutex);
	return b->in_use ? 0 : -ENOENT;
}

struct dev_scan {
	struct vc_cache *c;
	u32 id;
	bool force;
	bool keep;	/* dirty blocks stay (not waited for) */
	u64 lost;
	u64 unmarked;	/* lost markers that left with the device */
};

/*
 * Invalidate the blocks of a device; true when none is left (not even
 * busy ones or tombstones).
 */
static bool drop_dev_blocks(void *arg)
{
	struct dev_scan *ds = arg;
	struct vc_cache *c = ds->c;
	bool left = false;
	u32 si;

	for (si = 0; si < c->nr_sets; si++) {
		struct vc_set *s = &c->sets[si];
		u32 i;

		vc_spin_lock(&s->lock);
		for (i = 0; i < s->ways; i++) {
			u32 blk = s->first + i;
			u64 w = c->words[blk];
			bool md;

			if (!(w & (B_VALID | B_TOMB)) || vc_key_dev(w) != ds->id)
				continue;
			if ((w & (B_TOMB | B_LOST)) == (B_TOMB | B_LOST) &&
			    !(w & B_BUSY)) {
				/*
				 * A lost marker waits with a device that comes
				 * back (KEEP); else it leaves with the device,
				 * its record cleared first if not clear.
				 */
				if (ds->keep)
					continue;
				if (!(w & B_FLASHDIRTY)) {
					vc_hash_remove(c, s, blk);
					vc_block_set_word(c, s, blk, 0);
					ds->unmarked++;
					continue;
				}
				vc_block_set_word(c, s, blk,
						  w | B_UNLOSE | B_BUSY);
				ds->unmarked++;	/* once more if it fails */
				left = true;
				vc_spin_unlock(&s->lock);
				vc_md_mark(c, blk, NULL, NULL);
				vc_spin_lock(&s->lock);
				continue;
			}
			if (w & (B_BUSY | B_CLEANING | B_READERS_MASK | B_TOMB)) {
				left = true;
				continue;
			}
			if ((w & B_DIRTY) && ds->keep)
				continue;
			if ((w & B_DIRTY) && !ds->force) {
				left = true;
				continue;
			}
			if (w & B_DIRTY)
				ds->lost++;
			md = vc_invalidate_locked(c, s, blk);
			if (md) {
				left = true;
				vc_spin_unlock(&s->lock);
				vc_md_mark(c, blk, NULL, NULL);
				vc_spin_lock(&s->lock);
			}
		}
		vc_spin_unlock(&s->lock);
	}
	return !left;
}

/* Retry failed metadata writes a few times; true once none is left. */
static bool md_retry_sync(struct vc_cache *c)
{
	int tries;

	for (tries = 0; tries < 3; tries++) {
		vc_md_retry(c, true);
		if (vc_md_wait_idle(c))
			return false;
		if (!vc_atomic_read(&c->md_failed))
			return true;
	}
	return false;
}

static bool dev_io_done(void *arg);

/*
 * Free slot @id (its device gone) and record that on flash.  When the
 * record cannot be written the slot stays reserved, as the flash still
 * says: the device is waiting, and its identity gets the same slot back
 * (a new device never takes a slot the flash gives to another one).
 */
static int forget_slot(struct vc_cache *c, u32 id)
{
	struct vc_bdev_slot *b = &c->bdev[id];
	u8 uuid[sizeof(b->uuid)], label[sizeof(b->label)];
	int err;

	vc_memcpy(uuid, b->uuid, sizeof(uuid));
	vc_memcpy(label, b->label, sizeof(label));
	b->in_use = false;
	vc_memset(b->uuid, 0, sizeof(b->uuid));
	vc_memset(b->label, 0, sizeof(b->label));
	err = vc_md_write_dev(c, id);
	if (!err) {
		b->nr_fp = 0;
		return 0;
	}
	b->in_use = true;
	vc_memcpy(b->uuid, uuid, sizeof(uuid));
	vc_memcpy(b->label, label, sizeof(label));
	vc_log_err("%s: detach: backing device %u cannot be recorded as gone (error %d): its slot stays reserved for it",
		   c->cdev->name, id, err);
	return err;
}

int vc_cache_detach(struct vc_cache *c, u32 id, u32 flags)
{
	struct dev_scan ds = { .c = c, .id = id,
			       .force = (flags & VC_DETACH_FORCE) != 0,
			       .keep = (flags & VC_DETACH_KEEP) != 0 };
	int err;

	if (id >= VC_MAX_BACKING ||
	    (flags & ~(VC_DETACH_FORCE | VC_DETACH_KEEP)) ||
	    (ds.force && ds.keep))
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	err = -ENODEV;
	if (!c->bdev[id].dev)
		goto out;
	err = -EBUSY;
	if (vc_atomic_read(&c->bdev[id].inflight))
		goto out;
	if (ds.keep) {
		c->bdev[id].parked = true;	/* the cleaner picks none */
		vc_flush_unmark_dev(c, id);	/* nor can a flush */
		vc_verify_fingerprint(c, id);	/* before they are dropped */
	} else if (!ds.force && vc_atomic64_read(&c->bdev[id].nr_dirty)) {
		/*
		 * Only with dirty blocks: a flush first waits for a running
		 * one (a background flush of every device) to end, and its
		 * wait is interruptible; a clean device has nothing to wait for.
		 */
		err = vc_cache_flush(c, id, NULL, NULL);
		if (err)
			goto out;
	}
	/* md writes, fills and the cleaner finish on their own: poll */
	while (!drop_dev_blocks(&ds)) {
		err = -EIO;
		if (vc_atomic_read(&c->md_failed) && !md_retry_sync(c))
			goto out;	/* records cannot be cleared */
		err = vc_waitq_wait(&c->md_wq, drop_dev_blocks, &ds, false,
				    10000000ULL);
		if (!err)
			break;
		if (err != -ETIMEDOUT)
			goto out;
	}
	/*
	 * Its blocks are out of the runs, but the batch's backing FLUSH (the
	 * runs of other devices still in flight) may yet be sent to it: wait
	 * for that too, as unplug does, before the caller closes it.
	 */
	while (vc_waitq_wait(&c->md_wq, dev_io_done, &ds, false,
			     10000000ULL) == -ETIMEDOUT)
		;
	/*
	 * A record of this device that may still say dirty must be cleared
	 * before its id can name another device.
	 */
	err = vc_md_wait_idle(c);
	if (!err && vc_atomic_read(&c->md_failed) && !md_retry_sync(c))
		err = -EIO;
	if (err) {
		vc_log_err("%s: detach: cache metadata cannot be updated", c->cdev->name);
		goto out;
	}
	if (ds.lost) {
		vc_stat_add(VC_DSTAT(c, id, lost_blocks), ds.lost);
		vc_log_warn("%s: detach: %llu dirty blocks dropped",
			    c->cdev->name, (unsigned long long)ds.lost);
	}
	if (ds.unmarked)
		vc_log_warn("%s: detach: %llu blocks of device %u whose newest data was lost are no longer marked: read from the device itself they hold older data",
			    c->cdev->name, (unsigned long long)ds.unmarked, id);
	vc_atomic_set(&c->bdev[id].present, 0);
	c->bdev[id].dev = NULL;
	if (ds.keep) {
		/* its id, identity and dirty blocks wait for it */
		c->bdev[id].parked = false;
		goto out;
	}
	err = forget_slot(c, id);
out:
	if (err && ds.keep)
		c->bdev[id].parked = false;
	vc_mutex_unlock(&c->ctl_mutex);
	return err;
}

/* ---------------------------------------------------------------- names */
_Static_assert(sizeof(((struct vc_cache_config *)0)->label) == VC_LABEL_LEN &&
	       sizeof(((struct vc_backing_info *)0)->label) == VC_LABEL_LEN,
	       "labels as long as on flash");

static int label_copy(u8 *dst, const char *label)
{
	size_t n = label ? vc_strnlen(label, VC_LABEL_LEN) : 0;

	if (n >= VC_LABEL_LEN)
		return -EINVAL;
	vc_memset(dst, 0, VC_LABEL_LEN);
	vc_memcpy(dst, label, n);
	return 0;
}

int vc_cache_set_label(struct vc_cache *c, const char *label)
{
	u8 old[VC_LABEL_LEN];
	int err;

	if (c->version < 3)
		return -EOPNOTSUPP;
	vc_mutex_lock(&c->ctl_mutex);
	vc_memcpy(old, c->label, sizeof(old));
	err = label_copy(c->label, label);
	if (!err)
		err = vc_md_write_sb(c, false);
	if (err)
		vc_memcpy(c->label, old, sizeof(old));
	vc_mutex_unlock(&c->ctl_mutex);
	return err;
}

void vc_cache_get_label(struct vc_cache *c, char *out)
{
	vc_mutex_lock(&c->ctl_mutex);
	vc_memcpy(out, c->label, VC_LABEL_LEN);
	vc_mutex_unlock(&c->ctl_mutex);
	out[VC_LABEL_LEN - 1] = 0;
}

int vc_cache_set_dev_label(struct vc_cache *c, u32 id, const char *label)
{
	u8 old[VC_LABEL_LEN];
	int err;

	if (c->version < 3)
		return -EOPNOTSUPP;
	if (id >= VC_MAX_BACKING)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	err = -ENOENT;
	if (c->bdev[id].in_use) {
		vc_memcpy(old, c->bdev[id].label, sizeof(old));
		err = label_copy(c->bdev[id].label, label);
		if (!err)
			err = vc_md_write_dev(c, id);
		if (err)
			vc_memcpy(c->bdev[id].label, old, sizeof(old));
	}
	vc_mutex_unlock(&c->ctl_mutex);
	return err;
}

/* No block of the device has I/O in flight (fill, write, write-back). */
static bool dev_io_done(void *arg)
{
	struct dev_scan *ds = arg;
	struct vc_cache *c = ds->c;
	bool busy;
	u32 si;

	/* the batch's backing FLUSH and its ends still use the device */
	vc_spin_lock(&c->clean_lock);
	busy = c->batch_devs & (1u << ds->id);
	vc_spin_unlock(&c->clean_lock);
	if (busy)
		return false;
	for (si = 0; si < c->nr_sets; si++) {
		struct vc_set *s = &c->sets[si];
		u32 i;

		vc_spin_lock(&s->lock);
		busy = false;
		for (i = 0; i < s->ways && !busy; i++) {
			u64 w = c->words[s->first + i];

			busy = (w & (B_VALID | B_TOMB)) && vc_key_dev(w) == ds->id &&
			       (w & (B_BUSY | B_CLEANING | B_READERS_MASK));
		}
		vc_spin_unlock(&s->lock);
		if (busy)
			return false;
	}
	return true;
}

int vc_cache_unplug(struct vc_cache *c, u32 id)
{
	struct dev_scan ds = { .c = c, .id = id, .keep = true };

	if (id >= VC_MAX_BACKING)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	if (!c->bdev[id].dev) {
		vc_mutex_unlock(&c->ctl_mutex);
		return 0;
	}
	c->bdev[id].parked = true;	/* the cleaner picks none */
	vc_flush_unmark_dev(c, id);	/* nor can a flush */
	vc_verify_fingerprint(c, id);	/* before they are dropped */
	/* clean blocks go (best effort: their records may not be writable) */
	drop_dev_blocks(&ds);
	while (vc_waitq_wait(&c->md_wq, dev_io_done, &ds, false,
			     10000000ULL) == -ETIMEDOUT)
		;
	vc_atomic_set(&c->bdev[id].present, 0);
	c->bdev[id].dev = NULL;
	c->bdev[id].parked = false;
	vc_log_warn("%s: backing device %u unplugged: its dirty blocks wait for it",
		    c->cdev->name, id);
	vc_mutex_unlock(&c->ctl_mutex);
	return 0;
}

/* ------------------------------------------------------------- control */
static void persist_sb(struct vc_cache *c)
{
	int err = vc_md_write_sb(c, false);

	if (err)
		vc_log_warn("%s: cannot save settings: error %d", c->cdev->name, err);
}

int vc_cache_set_mode(struct vc_cache *c, enum vc_mode mode)
{
	if ((u32)mode >= VC_NR_MODES)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	/*
	 * An explicit choice by the administrator clears the degradation,
	 * but not while record sectors cannot be written: new dirty records
	 * beside stale ones could name a backing block twice.
	 */
	if (vc_atomic_read(&c->md_failed) && !md_retry_sync(c)) {
		vc_mutex_unlock(&c->ctl_mutex);
		vc_log_err("%s: cannot change mode: cache metadata cannot be written",
			   c->cdev->name);
		return -EIO;
	}
	/*
	 * Nor back to write-back while a FLUSH whose commit failed waits for
	 * the dirty data to drain: it completes when none is left, which new
	 * dirty writes would put off for as long as they come.
	 */
	if (mode == VC_MODE_WB && vc_atomic_read(&c->degraded) &&
	    vc_drain_waiting(c)) {
		vc_mutex_unlock(&c->ctl_mutex);
		vc_log_err("%s: cannot return to write-back yet: a FLUSH waits for the dirty data to drain after a failed cache flush; retry once it is done",
			   c->cdev->name);
		return -EBUSY;
	}
	vc_atomic_set(&c->mode, (int)mode);
	vc_atomic_set(&c->degraded, 0);
	persist_sb(c);
	vc_mutex_unlock(&c->ctl_mutex);
	vc_cache_kick_cleaner(c);	/* leaving WB: drain in background */
	return 0;
}

enum vc_mode vc_cache_get_mode(struct vc_cache *c)
{
	return vc_effective_mode(c);
}

enum vc_mode vc_cache_get_requested_mode(struct vc_cache *c)
{
	return (enum vc_mode)vc_atomic_read(&c->mode);
}

int vc_cache_set_policy(struct vc_cache *c, enum vc_policy policy)
{
	u32 i;

	if ((u32)policy >= VC_NR_POLICIES)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	vc_atomic_set(&c->policy, (int)policy);
	/* each set converts its lists under its lock: contents stay */
	for (i = 0; i < c->nr_sets; i++) {
		struct vc_set *s = &c->sets[i];

		vc_spin_lock(&s->lock);
		vc_pol_switch(c, s, (u8)policy);
		vc_spin_unlock(&s->lock);
	}
	persist_sb(c);
	vc_mutex_unlock(&c->ctl_mutex);
	return 0;
}

enum vc_policy vc_cache_get_policy(struct vc_cache *c)
{
	return (enum vc_policy)vc_atomic_read(&c->policy);
}

int vc_cache_set_param(struct vc_cache *c, enum vc_param id, u64 value)
{
	u64 v[VC_NR_PARAMS];
	u32 i;
	int err;

	if ((u32)id >= VC_NR_PARAMS)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	for (i = 0; i < VC_NR_PARAMS; i++)
		v[i] = vc_param(c, i);
	v[id] = value;
	err = params_check(v);
	if (!err && id == VC_P_SEQ_THRESHOLD_KIB)
		err = vc_seq_set_threshold(&c->seq, value);
	if (!err && id == VC_P_PID_MODE)
		err = vc_pidlist_set_mode(&c->pids, (enum vc_pid_mode)value);
	if (!err && id == VC_P_SEQ_ENABLE)
		vc_seq_set_enabled(&c->seq, value != 0);
	if (!err) {
		vc_store_u64(&c->params[id], value);
		persist_sb(c);
	}
	vc_mutex_unlock(&c->ctl_mutex);
	if (!err)
		vc_cache_kick_cleaner(c);
	return err;
}

int vc_cache_set_params(struct vc_cache *c, u32 mask, const u64 *nv)
{
	u64 v[VC_NR_PARAMS];
	u32 i;
	int err;

	if (mask >> VC_NR_PARAMS)
		return -EINVAL;
	vc_mutex_lock(&c->ctl_mutex);
	for (i = 0; i < VC_NR_PARAMS; i++)
		v[i] = (mask & (1u << i)) ? nv[i] : vc_param(c, i);
	err = params_check(v);
	if (!err && (mask & (1u << VC_P_SEQ_THRESHOLD_KIB)))
		err = vc_seq_set_threshold(&c->seq, v[VC_P_SEQ_THRESHOLD_KIB]);
	if (!err && (mask & (1u << VC_P_PID_MODE)))
		err = vc_pidlist_set_mode(&c->pids,
					  (enum vc_pid_mode)v[VC_P_PID_MODE]);
	if (!err) {
		if (mask & (1u << VC_P_SEQ_ENABLE))
			vc_seq_set_enabled(&c->seq, v[VC_P_SEQ_ENABLE] != 0);
		for (i = 0; i < VC_NR_PARAMS; i++)
			if (mask & (1u << i))
				vc_store_u64(&c->params[i], v[i]);
		persist_sb(c);
	}
	vc_mutex_unlock(&c->ctl_mutex);
	if (!err)
		vc_cache_kick_cleaner(c);
	return err;
}

u64 vc_cache_get_param(struct vc_cache *c, enum vc_param id)
{
	return (u32)id < VC_NR_PARAMS ? vc_param(c, id) : 0;
}

struct vc_pidlist *vc_cache_pidlist(struct vc_cache *c)
{
	return &c->pids;
}

/* ----------------------------------------------------------- statistics */
bool vc_cache_block_dirty(struct vc_cache *c, u32 dev, u64 lba)
{
	u64 key = vc_mkkey(dev, lba);
	struct vc_set *s;
	bool dirty = false;
	u32 blk;

	if (dev >= VC_MAX_BACKING)
		return false;
	s = &c->sets[vc_set_of(c, key)];
	vc_spin_lock(&s->lock);
	blk = vc_lookup(c, s, key);
	if (blk != ~0u)
		dirty = (c->words[blk] & (B_VALID | B_DIRTY)) ==
			(B_VALID | B_DIRTY);
	vc_spin_unlock(&s->lock);
	return dirty;
}

void vc_cache_get_stats(struct vc_cache *c, struct vc_stats *st)
{
	u64 *dst = (u64 *)st;
	u64 age = vc_param(c, VC_P_MAX_DIRTY_AGE_MS);
	u32 i;

	u64 *sum = (u64 *)&st->dev_sum;

	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		dst[i] = vc_pcpu_sum(&c->st, i);
	/* the per-device fields: the sum over every device */
	for (i = 0; i < VC_NR_DSTATS; i++) {
		u32 d;

		sum[i] = 0;
		for (d = 0; d < VC_MAX_BACKING; d++)
			sum[i] += vc_pcpu_sum(&c->dst, d * VC_NR_DSTATS + i);
	}
	st->nr_blocks = c->nr_blocks;
	st->valid_blocks = (u64)vc_atomic64_read(&c->nr_valid);
	st->dirty_blocks = (u64)vc_atomic64_read(&c->nr_dirty);
	st->wb_rate_bps = vc_load_u64(&c->wb_rate_bps);
	st->lost_marked = (u64)vc_atomic64_read(&c->nr_lost);
	st->block_size = c->block_size;
	st->elapsed_ns = vc_cache_stats_elapsed_ns(c);
	st->mem_bytes = c->mem_bytes;
	st->mem_millibytes_per_block = vc_cache_mem_bytes_per_block(c->nr_blocks);
	st->mode = (u32)vc_effective_mode(c);
	st->requested_mode = (u32)vc_atomic_read(&c->mode);
	st->policy = (u32)vc_atomic_read(&c->policy);
	st->oldest_dirty_age_ms = 0;
	if (age && st->dirty_blocks) {
		u32 cur = vc_cur_epoch(c), e, best = 0;

		for (e = 0; e < VC_NR_EPOCHS; e++) {
			u32 d = (cur - e) & (VC_NR_EPOCHS - 1);

			if (vc_atomic64_read(&c->epoch_dirty[e]) > 0 && d > best)
				best = d;
		}
		/* lower bound: whole epochs since the oldest one ended */
		st->oldest_dirty_age_ms = vc_div_u64(age * best, VC_EPOCH_DIV);
	}
}

void vc_cache_reset_stats(struct vc_cache *c)
{
	vc_pcpu_reset(&c->st);
	vc_pcpu_reset(&c->dst);
	vc_pcpu_reset(&c->lat);
	vc_store_u64(&c->stats_since_ns, vc_now_ns());
}

u64 vc_cache_stats_elapsed_ns(struct vc_cache *c)
{
	return vc_now_ns() - vc_load_u64(&c->stats_since_ns);
}

void vc_cache_get_dev_stats(struct vc_cache *c, u32 dev,
			    struct vc_dev_stats *st)
{
	u64 *v = (u64 *)st;
	u32 i;

	for (i = 0; i < VC_NR_DSTATS; i++)
		v[i] = dev < VC_MAX_BACKING ?
		       vc_pcpu_sum(&c->dst, dev * VC_NR_DSTATS + i) : 0;
}

void vc_cache_get_latency(struct vc_cache *c, enum vc_lat_path path,
			  u64 *buckets, u64 *sum_ns)
{
	u32 i;

	for (i = 0; i < VC_LAT_SLOTS; i++) {
		u64 v = (u32)path < VC_NR_LAT ?
			vc_pcpu_sum(&c->lat, path * VC_LAT_SLOTS + i) : 0;

		if (i < VC_LAT_BUCKETS)
			buckets[i] = v;
		else if (sum_ns)
			*sum_ns = v;
	}
}

/* -------------------------------------------------------------- shutdown */
static bool no_host_io(void *arg)
{
	struct vc_cache *c = arg;

	return vc_atomic_add_return(&c->host_inflight, 0) == 0;
}

static bool no_busy(void *arg)
{
	struct vc_cache *c = arg;
	u64 i;

	for (i = 0; i < c->nr_blocks; i++) {
		u64 w = vc_word(c, (u32)i);

		if ((w & (B_BUSY | B_READERS_MASK)) && !(w & B_TOMB) &&
		    !vc_is_spare(w))
			return false;
	}
	return vc_atomic_add_return(&c->md_inflight, 0) == 0 &&
	       vc_commit_idle(c);
}

/* FLUSH every attached backing device. */
static int flush_backing(struct vc_cache *c)
{
	u32 i;
	int e;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (!c->bdev[i].dev)
			continue;
		e = vc_sync_io(c->bdev[i].dev, VC_DEV_FLUSH, 0, 0, 0, NULL);
		if (e)
			return e;
	}
	return 0;
}

int vc_cache_shutdown(struct vc_cache *c, u32 flags)
{
	int err = 0, e;

	vc_waitq_wait(&c->io_wq, no_host_io, c, false, 0);
	if (flags & VC_SHUTDOWN_FLUSH)
		err = vc_cache_flush(c, VC_DEV_ID_ALL, NULL, NULL);
	vc_commit_stop(c);	/* the records are written below */
	vc_cleaner_stop(c);
	vc_work_cancel_sync(&c->defer_work);
	vc_work_cancel_sync(&c->split_work);
	/* background fills and metadata writes still in flight */
	for (;;) {
		e = vc_waitq_wait(&c->md_wq, no_busy, c, false, 10000000ULL);
		if (e != -ETIMEDOUT)
			break;
	}
	e = vc_md_wait_idle(c);
	if (flags & VC_SHUTDOWN_FORGET) {
		if (!e)
			e = vc_md_erase_sb(c);
		if (e)
			vc_log_err("%s: cannot erase the cache's superblocks (error %d): it may be found again",
				   c->cdev->name, e);
		cache_free(c);
		return e;
	}
	/*
	 * The clean flag makes the next load trust clean records: what they
	 * claim the backing devices hold must be durable there first.
	 */
	if (!e)
		e = flush_backing(c);
	/*
	 * The records written next name cache data: it must be durable
	 * before them (lazily acknowledged writes whose commit never ran).
	 * The clean superblock's PREFLUSH then orders the records before it.
	 */
	if (!e)
		e = vc_sync_io(c->cdev, VC_DEV_FLUSH, 0, 0, 0, NULL);
	if (!e)
		e = vc_md_write_all(c);
	if (!e)
		e = vc_md_write_sb(c, true);
	if (e)
		vc_log_err("%s: clean shutdown failed (error %d): the next load recovers dirty blocks only",
			   c->cdev->name, e);
	cache_free(c);
	return e ? e : (err == -EINTR ? 0 : err);
}

void vc_cache_abandon(struct vc_cache *c)
{
	vc_spin_lock(&c->clean_lock);
	c->clean_stop = true;
	vc_spin_unlock(&c->clean_lock);
	vc_commit_stop(c);
	cache_free(c);
}

int vc_engine_init(void)
{
	return vc_env_init();
}

void vc_engine_exit(void)
{
	vc_env_exit();
}
