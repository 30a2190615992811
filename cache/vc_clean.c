// SPDX-License-Identifier: GPL-2.0
/*
 * vc_clean: the cleaner (write-back of dirty blocks) and flush on demand.
 *
 * One work item runs the cleaner: on a timer (VC_P_CLEAN_INTERVAL_MS) and
 * when kicked.  Each pass picks a trigger, in this order:
 *   flush on demand   blocks marked FLUSHME, full speed
 *   mode              the cache left write-back: drain, full speed
 *   tail              victims hard to find: the coldest blocks, full speed
 *   watermark         dirty at the high mark: full speed, down to low
 *   idle              no host request to a device for VC_P_IDLE_MS: drain
 *                     that device, full speed
 *   watermark, rated  dirty above the low mark: written back ahead of the
 *                     high mark at a controlled rate (wb_rate())
 *   age               dirty epochs older than the flush period, rated
 * It collects eligible dirty blocks (up to VC_CLEAN_BATCH; a rated batch
 * about a second's worth) in (device, LBA) order from where the previous
 * batch stopped: a sweep over per-device maps of the chunks that hold
 * dirty blocks (struct vc_dirtymap), so the disk sees one elevator pass
 * across batches rather than the sets' hash order (the tail trigger, and
 * format 1 caches without chunks, scan the sets instead and sort the
 * batch).  It sorts them by (device, LBA), extends runs with
 * adjacent dirty blocks found by lookup, and writes each run with one
 * backing I/O (at most WB_MAX_IO_KIB), with at most WB_MAX_INFLIGHT runs
 * in flight (a quarter of that when rated, one while the host uses the
 * disk).  When every run of the batch is done, each backing device
 * written is FLUSHed, and only then are the blocks marked clean and their
 * records rewritten: a record never says clean before the data it points
 * to is durable at home.
 *
 * Host I/O never waits for write-back: a block is CLEANING only while its
 * own write home is in flight, and a write-back host write to it proceeds
 * and sets REDIRTY, which keeps it dirty when the batch ends (it is
 * written back again, a flush period later at the earliest).  The flush
 * period therefore bounds dirty age (period + one epoch + the write-back
 * time) without rewriting a hot block more than once per period.
 */
#include "vc_internal.h"

#define VC_CLEAN_BATCH	1024u

u32 vc_cur_epoch(struct vc_cache *c)
{
	u64 age = vc_param(c, VC_P_MAX_DIRTY_AGE_MS), len;

	if (!age)
		return 0;
	len = age * 1000000ULL / VC_EPOCH_DIV;
	if (!len)
		len = 1;
	return (u32)(vc_div_u64(vc_now_ns(), len) & (VC_NR_EPOCHS - 1));
}

static u64 wm_blocks(struct vc_cache *c, enum vc_param pct, enum vc_param bytes)
{
	u64 b = vc_param(c, bytes);

	if (b)
		return b >> c->block_shift;
	return vc_div_u64(c->nr_blocks * vc_param(c, pct), 100);
}

/*
 * The high watermark is reached: a write-back write that would make one
 * more block dirty is written through instead (vc_write.c), so that the
 * dirty data stays under the mark however fast the host writes.
 */
bool vc_dirty_over_high(struct vc_cache *c)
{
	return (u64)vc_atomic64_read(&c->nr_dirty) >=
		wm_blocks(c, VC_P_DIRTY_HIGH_PCT, VC_P_DIRTY_HIGH_BYTES);
}

/*
 * Between the high watermark and the hard limit (halfway from it to a
 * full cache) a write that would make one more block dirty is slowed: it
 * waits for the write-back batch under way to end (or VC_THROTTLE_MAX_NS)
 * and then goes to the cache; only past the hard limit is it written
 * through.  Writers slow down to the pace of write-back instead of
 * turning the cache into a disk at the mark.
 */
#define VC_THROTTLE_MAX_NS	100000000ULL

bool vc_dirty_over_hard(struct vc_cache *c)
{
	u64 high = wm_blocks(c, VC_P_DIRTY_HIGH_PCT, VC_P_DIRTY_HIGH_BYTES);

	if (high >= c->nr_blocks)
		return (u64)vc_atomic64_read(&c->nr_dirty) >= high;
	return (u64)vc_atomic64_read(&c->nr_dirty) >=
	       high + (c->nr_blocks - high) / 2;
}

/*
 * Park @r, a write that would make a block dirty above the high mark (set
 * lock held; nothing of the block taken yet).  False: go on now (it
 * waited once already, or the cleaner is stopping).
 */
bool vc_throttle_write(struct vc_cache *c, struct vc_req *r)
{
	bool first;

	if (r->throttled)
		return false;
	vc_spin_lock(&c->clean_lock);
	if (c->clean_stop) {
		vc_spin_unlock(&c->clean_lock);
		return false;
	}
	r->throttled = 1;
	first = !c->thr_head;
	if (first)
		c->thr_since_ns = vc_now_ns();
	r->defer_next = c->thr_head;
	c->thr_head = r;
	vc_spin_unlock(&c->clean_lock);
	vc_stat_add(VC_DSTAT(c, vc_key_dev(r->key), wb_throttled), 1);
	if (first)
		vc_work_queue_delayed(&c->clean_work, VC_THROTTLE_MAX_NS);
	return true;
}

/*
 * Slowed writes go at their deadline (VC_THROTTLE_MAX_NS after the first)
 * even when no batch can start (the dirty blocks' devices parked or
 * absent): a kick of the work before it ran the deadline's pass early,
 * and the pass then armed only the next tick (clean_interval_ms, 1 s by
 * default, up to an hour).  An earlier timer pulls the pending one in.
 */
static void throttle_rearm(struct vc_cache *c)
{
	u64 due = 0, now = vc_now_ns();

	vc_spin_lock(&c->clean_lock);
	if (c->thr_head)
		due = c->thr_since_ns + VC_THROTTLE_MAX_NS;
	vc_spin_unlock(&c->clean_lock);
	if (due)
		vc_work_queue_delayed(&c->clean_work, due > now ? due - now : 1);
}

/* Let the slowed writes go (all of them: they are few, and short). */
static void throttle_release(struct vc_cache *c, bool all)
{
	struct vc_req *r;

	vc_spin_lock(&c->clean_lock);
	r = NULL;
	if (c->thr_head && (all || vc_now_ns() - c->thr_since_ns >=
			    VC_THROTTLE_MAX_NS || !vc_dirty_over_high(c))) {
		r = c->thr_head;
		c->thr_head = NULL;
	}
	vc_spin_unlock(&c->clean_lock);
	while (r) {
		struct vc_req *n = r->defer_next;

		vc_req_dispatch(r);
		r = n;
	}
}

void vc_cache_kick_cleaner(struct vc_cache *c)
{
	vc_work_queue(&c->clean_work);
}

void vc_cache_kick_cleaner_if_needed(struct vc_cache *c)
{
	u64 d = (u64)vc_atomic64_read(&c->nr_dirty);

	/* at the high mark, and once when rated write-back begins */
	if (d >= wm_blocks(c, VC_P_DIRTY_HIGH_PCT, VC_P_DIRTY_HIGH_BYTES) ||
	    d == wm_blocks(c, VC_P_DIRTY_LOW_PCT, VC_P_DIRTY_LOW_BYTES) + 1)
		vc_cache_kick_cleaner(c);
}

/*
 * Drain waiters: a FLUSH (or FUA write) whose commit failed cannot rely
 * on the cache device for what it acknowledged; it completes once the
 * device's dirty blocks are written back (and the backing device flushed,
 * which every batch does before blocks become clean).  The cache degraded
 * when the commit failed, so no new dirty block appears meanwhile; while
 * waiters exist the cleaner drains.  A batch that failed a block of the
 * device (write error, or its data lost) fails the device's waiters.
 */
static void drain_check_md(struct vc_cache *c, u32 failed_devs, bool md_err)
{
	struct vc_drain_waiter *done = NULL, **pp, *w;

	vc_spin_lock(&c->clean_lock);
	pp = &c->drain_waiters;
	while ((w = *pp) != NULL) {
		struct vc_bdev_slot *b = &c->bdev[w->dev];
		bool home = !vc_atomic64_read(&b->nr_dirty);
		/*
		 * Home is not enough: a record that may still say DIRTY would
		 * bring back, after a power cut, a cache copy that no cache
		 * FLUSH made durable (the one that failed is why we drain).
		 * Wait for those records to be cleared (FUA), or fail if a
		 * record write fails.
		 */
		bool clear = !vc_atomic64_read(&b->nr_flashdirty);
		/* lost data never goes home: the FLUSH cannot succeed */
		bool fail = (failed_devs & (1u << w->dev)) ||
			    vc_atomic64_read(&b->nr_lost) > 0 ||
			    (md_err && home && !clear);

		if (fail || (home && clear)) {
			*pp = w->next;
			w->err = fail ? -EIO : 0;
			w->next = done;
			done = w;
		} else {
			pp = &w->next;
		}
	}
	vc_spin_unlock(&c->clean_lock);
	while (done) {
		w = done;
		done = w->next;
		w->fn(w, w->err);
	}
}

static void drain_check(struct vc_cache *c, u32 failed_devs)
{
	drain_check_md(c, failed_devs, false);
}

/* A record write ended (vc_md.c): drain waiters may be done, or fail. */
void vc_drain_md_done(struct vc_cache *c, int err)
{
	drain_check_md(c, 0, err && err != -ENOMEM);
}

/* Does a FLUSH or FUA write wait for a drain (vc_drain_wait())? */
bool vc_drain_waiting(struct vc_cache *c)
{
	bool waiting;

	vc_spin_lock(&c->clean_lock);
	waiting = c->drain_waiters;
	vc_spin_unlock(&c->clean_lock);
	return waiting;
}

void vc_drain_wait(struct vc_cache *c, struct vc_drain_waiter *w, u32 dev)
{
	w->dev = dev;
	vc_spin_lock(&c->clean_lock);
	w->next = c->drain_waiters;
	c->drain_waiters = w;
	vc_spin_unlock(&c->clean_lock);
	vc_cache_kick_cleaner(c);
	drain_check(c, 0);
}

/* filters */
#define F_FLUSHME	1
#define F_EPOCHS	2
#define F_TAIL		4	/* walk each set's replacement list from the tail */
#define F_DEVS		8	/* only the devices in c->batch_filter_devs */

static bool eligible(struct vc_cache *c, u64 w, u32 filter, u32 epochs)
{
	if ((w & (B_VALID | B_DIRTY | B_BUSY | B_CLEANING | B_TOMB)) !=
	    (B_VALID | B_DIRTY))
		return false;
	if (!c->bdev[vc_key_dev(w)].dev || c->bdev[vc_key_dev(w)].parked)
		return false;	/* its device is not attached (or leaving) */
	if ((filter & F_FLUSHME) && !(w & B_FLUSHME))
		return false;
	if ((filter & F_DEVS) &&
	    !(c->batch_filter_devs & (1u << vc_key_dev(w))))
		return false;
	if ((filter & F_EPOCHS) &&
	    !(epochs & (1u << ((w & B_EPOCH_MASK) >> B_EPOCH_SHIFT))))
		return false;
	return true;
}

/* ------------------------------------------------- write-back order */
/* Lookups one sweep may do before it gives the worker back (a few ms). */
#define VC_SWEEP_LOOKUPS	65536u

static inline struct vc_dirtymap *dmap_of(struct vc_cache *c, u32 dev)
{
	return (struct vc_dirtymap *)(uintptr_t)vc_load_u64(&c->bdev[dev].dmap);
}

static inline u64 chunk_of(struct vc_cache *c, u64 lba)
{
	return lba >> c->set_shift;
}

static void dmap_set(struct vc_dirtymap *m, u64 bit)
{
	vc_atomic64_t *a = &m->w[bit >> 6];
	s64 b = (s64)(1ULL << (bit & 63)), o = vc_atomic64_read(a);

	while (!(o & b)) {
		s64 p = vc_atomic64_cmpxchg(a, o, o | b);

		if (p == o)
			break;
		o = p;
	}
}

static void dmap_clear(struct vc_dirtymap *m, u64 bit)
{
	vc_atomic64_t *a = &m->w[bit >> 6];
	s64 b = (s64)(1ULL << (bit & 63)), o = vc_atomic64_read(a);

	while (o & b) {
		s64 p = vc_atomic64_cmpxchg(a, o, o & ~b);

		if (p == o)
			break;
		o = p;
	}
}

/* The first set bit at or after @bit; m->nbits if none. */
static u64 dmap_next(struct vc_dirtymap *m, u64 bit)
{
	while (bit < m->nbits) {
		u64 v = (u64)vc_atomic64_read(&m->w[bit >> 6]) >> (bit & 63);

		if (v) {
			bit += vc_popcount64((v & (0 - v)) - 1);	/* ctz */
			return bit < m->nbits ? bit : m->nbits;
		}
		bit = (bit | 63) + 1;
	}
	return m->nbits;
}

/* A block of @w's chunk turned dirty (vc_block_set_word, set lock held). */
void vc_dirtymap_mark(struct vc_cache *c, u64 w)
{
	struct vc_dirtymap *m;
	u64 bit;

	if (!c->set_shift)
		return;
	m = dmap_of(c, vc_key_dev(w));
	bit = chunk_of(c, vc_key_lba(w));
	if (m && bit < m->nbits)
		dmap_set(m, bit);
}

/*
 * Device @id is being attached (ctl_mutex held; not yet present, so the
 * cleaner does not sweep it): a map as big as the device, with the bits of
 * the dirty blocks it has already (kept by detach --keep-dirty, or loaded).
 */
int vc_dirtymap_attach(struct vc_cache *c, u32 id, u64 nr_sectors)
{
	u64 blocks = nr_sectors >> (c->block_shift - VC_SECTOR_SHIFT);
	u64 nbits = (blocks + (1ULL << c->set_shift) - 1) >> c->set_shift;
	struct vc_dirtymap *m = dmap_of(c, id);
	u32 si, i;

	if (!c->set_shift)
		return 0;
	if (!m || m->nbits < nbits) {
		struct vc_dirtymap *n = vc_large_zalloc(sizeof(*n) +
							((nbits + 63) >> 6) * sizeof(n->w[0]));

		if (!n)
			return -ENOMEM;
		n->nbits = nbits;
		n->retired = m;
		vc_store_u64(&c->bdev[id].dmap, (u64)(uintptr_t)n);
		m = n;
	} else {
		for (i = 0; i < (m->nbits + 63) >> 6; i++)
			vc_atomic64_set(&m->w[i], 0);
	}
	for (si = 0; si < c->nr_sets; si++) {
		struct vc_set *s = &c->sets[si];

		vc_spin_lock(&s->lock);
		for (i = 0; s->nr_dirty && i < s->ways; i++) {
			u64 w = c->words[s->first + i];

			if ((w & (B_VALID | B_DIRTY)) == (B_VALID | B_DIRTY) &&
			    vc_key_dev(w) == id)
				vc_dirtymap_mark(c, w);
		}
		vc_spin_unlock(&s->lock);
	}
	return 0;
}

static void dirtymap_free(struct vc_cache *c)
{
	u32 i;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		struct vc_dirtymap *m = dmap_of(c, i);

		while (m) {
			struct vc_dirtymap *r = m->retired;

			vc_large_free(m);
			m = r;
		}
		vc_store_u64(&c->bdev[i].dmap, 0);
	}
}

static void take(struct vc_cache *c, struct vc_set *s, u32 blk, u64 w,
		 u8 trigger)
{
	/* REDIRTY from now on: written since it was taken */
	vc_block_set_word(c, s, blk, (w | B_CLEANING) & ~B_REDIRTY);
	c->cand[c->cand_nr].key = w & B_KEY_MASK;
	c->cand[c->cand_nr].blk = blk;
	c->cand[c->cand_nr].trigger = trigger;
	c->cand[c->cand_nr].err = 0;
	c->cand[c->cand_nr].lost = 0;
	c->cand_nr++;
}

/*
 * Take the eligible blocks of chunk @ch of device @dev from block @lba on,
 * up to @max candidates; its bit goes if the whole chunk is clean.  Returns
 * the block to go on from (the chunk's end when it was done).
 */
static u64 sweep_chunk(struct vc_cache *c, struct vc_dirtymap *m, u32 dev,
		       u64 ch, u64 lba, u32 filter, u32 epochs, u8 trigger,
		       u32 max, u32 *lookups)
{
	u64 end = (ch + 1) << c->set_shift;
	struct vc_set *s = &c->sets[vc_set_of(c, vc_mkkey(dev, lba))];
	bool dirty = false, whole = lba == ch << c->set_shift;

	vc_spin_lock(&s->lock);
	for (; s->nr_dirty && lba < end && c->cand_nr < max; lba++) {
		u32 blk = vc_lookup(c, s, vc_mkkey(dev, lba));
		u64 w;

		(*lookups)++;
		if (blk == ~0u)
			continue;
		w = c->words[blk];
		if ((w & (B_VALID | B_DIRTY)) == (B_VALID | B_DIRTY))
			dirty = true;
		if (eligible(c, w, filter, epochs))
			take(c, s, blk, w, trigger);
	}
	if (!s->nr_dirty)
		lba = end;
	if (lba == end && whole && !dirty)
		dmap_clear(m, ch);
	vc_spin_unlock(&s->lock);
	return lba;
}

/*
 * Collect in LBA order from the cursor on (device by device, wrapping
 * around), as far as VC_SWEEP_LOOKUPS allows.  False if it stopped for
 * that (come back at once); true when it went round or filled @max.
 */
static bool sweep(struct vc_cache *c, u32 filter, u32 epochs, u8 trigger,
		  u32 max)
{
	u32 dev = vc_key_dev(c->wb_cursor), lookups = 0, devs = 0;
	u64 lba = vc_key_lba(c->wb_cursor);
	bool done = true;

	while (c->cand_nr < max) {
		struct vc_dirtymap *m = dmap_of(c, dev);
		u64 ch;

		if (lookups >= VC_SWEEP_LOOKUPS) {
			done = false;
			break;
		}
		ch = m && vc_atomic_read(&c->bdev[dev].present) &&
		     !c->bdev[dev].parked &&
		     (!(filter & F_DEVS) || (c->batch_filter_devs & (1u << dev))) ?
		     dmap_next(m, chunk_of(c, lba)) : ~0ULL;
		if (!m || ch >= m->nbits) {
			/* this device is done: the next one, from its start */
			if (++devs > VC_MAX_BACKING)
				break;	/* all of them, once round */
			dev = dev + 1 < VC_MAX_BACKING ? dev + 1 : 0;
			lba = 0;
			continue;
		}
		if (ch > chunk_of(c, lba))
			lba = ch << c->set_shift;
		lba = sweep_chunk(c, m, dev, ch, lba, filter, epochs, trigger,
				  max, &lookups);
	}
	c->wb_cursor = vc_mkkey(dev, lba);
	return done;
}

static void collect(struct vc_cache *c, u32 filter, u32 epochs, u8 trigger,
		    u32 max)
{
	u32 n, si = c->scan_set;

	c->cand_nr = 0;
	if (max > VC_CLEAN_BATCH)
		max = VC_CLEAN_BATCH;
	for (n = 0; n < c->nr_sets && c->cand_nr < max; n++) {
		struct vc_set *s = &c->sets[si];
		u32 window = vc_max_u64(64, s->ways / 8);
		struct vc_cold_iter it;
		u32 i;

		vc_spin_lock(&s->lock);
		vc_cold_first(c, s, &it);
		for (i = 0; s->nr_dirty && i < s->ways; i++) {
			u32 blk = s->first + i;
			u64 w;

			if (filter & F_TAIL) {
				/* the coldest blocks: where victims are taken */
				blk = i < window ? vc_cold_next(c, s, &it) : ~0u;
				if (blk == ~0u)
					break;
			}
			w = c->words[blk];

			if (!eligible(c, w, filter, epochs))
				continue;
			take(c, s, blk, w, trigger);
			if (c->cand_nr >= max)
				break;
		}
		vc_spin_unlock(&s->lock);
		if (c->cand_nr >= max)
			break;	/* resume in this set next time */
		si = si + 1 < c->nr_sets ? si + 1 : 0;
	}
	c->scan_set = si;
}

static void sort_cand(struct vc_cand *a, u32 n)
{
	static const u32 gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	u32 g, i, j;

	for (g = 0; g < VC_ARRAY_SIZE(gaps); g++) {
		u32 gap = gaps[g];

		for (i = gap; i < n; i++) {
			struct vc_cand t = a[i];

			for (j = i; j >= gap && a[j - gap].key > t.key; j -= gap)
				a[j] = a[j - gap];
			a[j] = t;
		}
	}
}

/* Try to take the block caching @key for cleaning; ~0u if not eligible. */
static u32 grab(struct vc_cache *c, u64 key, u32 filter, u32 epochs)
{
	struct vc_set *s = &c->sets[vc_set_of(c, key)];
	u32 blk;

	(void)filter;
	(void)epochs;
	vc_spin_lock(&s->lock);
	blk = vc_lookup(c, s, key);
	/* neighbours join whatever the trigger: they share the I/O */
	if (blk != ~0u && eligible(c, c->words[blk], 0, 0))
		vc_block_set_word(c, s, blk,
				  (c->words[blk] | B_CLEANING) & ~B_REDIRTY);
	else
		blk = ~0u;
	vc_spin_unlock(&s->lock);
	return blk;
}

/* Build runs from the sorted candidates into c->rb / c->runs. */
static void build_runs(struct vc_cache *c, u8 trigger)
{
	u32 max = (u32)(vc_param(c, VC_P_WB_MAX_IO_KIB) << 10) >> c->block_shift;
	u32 i, nrb = 0, devs = 0;

	if (!max)
		max = 1;
	c->runs_nr = 0;
	for (i = 0; i < c->cand_nr; i++) {
		struct vc_run *run;
		u64 next;

		if (c->runs_nr && c->runs[c->runs_nr - 1].nr < max &&
		    c->rb[nrb - 1].key + 1 == c->cand[i].key &&
		    vc_key_dev(c->rb[nrb - 1].key) == vc_key_dev(c->cand[i].key)) {
			c->rb[nrb++] = c->cand[i];
			c->runs[c->runs_nr - 1].nr++;
		} else {
			run = &c->runs[c->runs_nr++];
			vc_memset(run, 0, sizeof(*run));
			run->c = c;
			run->first = nrb;
			run->nr = 1;
			c->rb[nrb++] = c->cand[i];
		}
		/* at a run's end, probe for adjacent dirty blocks */
		if (i + 1 < c->cand_nr && c->cand[i + 1].key == c->cand[i].key + 1)
			continue;
		/*
		 * c->rb holds 2 * VC_CLEAN_BATCH: probes may take what the
		 * candidates still to come leave free, no more (they overran
		 * it when probes of early candidates filled it: a filtered
		 * batch, e.g. flush on demand, among other dirty blocks).
		 */
		run = &c->runs[c->runs_nr - 1];
		next = c->rb[nrb - 1].key + 1;
		while (run->nr < max &&
		       nrb + (c->cand_nr - i - 1) < 2 * VC_CLEAN_BATCH &&
		       vc_key_lba(next) != 0) {
			u32 blk = grab(c, next, 0, 0);

			if (blk == ~0u)
				break;
			c->rb[nrb].key = next;
			c->rb[nrb].blk = blk;
			c->rb[nrb].trigger = trigger;
			c->rb[nrb].err = 0;
			c->rb[nrb].lost = 0;
			nrb++;
			run->nr++;
			next++;
		}
	}
	c->rb_nr = nrb;
	for (i = 0; i < nrb; i++)
		devs |= 1u << vc_key_dev(c->rb[i].key);
	vc_spin_lock(&c->clean_lock);
	c->batch_devs = devs;
	vc_spin_unlock(&c->clean_lock);
}

static void run_write_end(struct vc_dev_io *io, int err);
static void batch_flush(struct vc_cache *c);

static void run_read_end(struct vc_dev_io *io, int err);
static void run_read_end_put(struct vc_run *run);

/* Read blocks @i..@i+@n-1 of @run (consecutive on the cache device). */
static void run_read(struct vc_cache *c, struct vc_run *run, u32 i, u32 n)
{
	struct vc_dev_io *io = &run->rio[i];

	vc_memset(io, 0, sizeof(*io));
	io->dev = c->cdev;
	io->op = VC_DEV_READ;
	io->sector = c->data_start +
		     ((u64)c->rb[run->first + i].blk << (c->block_shift -
							  VC_SECTOR_SHIFT));
	io->len = n << c->block_shift;
	io->buf = run->buf;
	io->buf_off = i << c->block_shift;
	io->end_io = run_read_end;
	io->private = run;
	vc_dev_submit(io);
}

static void run_read_end(struct vc_dev_io *io, int err)
{
	struct vc_run *run = io->private;
	struct vc_cache *c = run->c;
	u32 i = (u32)(io - run->rio), n = io->len >> c->block_shift, k;

	if (err && n > 1) {
		/* a merged read failed: block by block, to lose only what fails */
		vc_atomic_add_return(&run->pending, (int)n - 1);
		for (k = 0; k < n; k++)
			run_read(c, run, i + k, 1);
		return;
	}
	if (err) {
		vc_stat_add(VC_STAT(c, cache_read_errors), 1);
		c->rb[run->first + i].lost = 1;
		run->err = err;
	} else {
		vc_stat_add(VC_STAT(c, flash_bytes_read), io->len);
	}
	run_read_end_put(run);
}

/* A read of @run (or the submitter's hold) is done. */
static void run_read_end_put(struct vc_run *run)
{
	if (!vc_atomic_dec_and_test(&run->pending))
		return;
	if (run->err) {
		/* blocks that read fine stay dirty and are retried later */
		run_write_end(&run->wio, run->err);
		return;
	}
	run->start_ns = vc_now_ns();
	vc_dev_submit(&run->wio);
}

static void issue_run(struct vc_cache *c, struct vc_run *run)
{
	u32 bsec = c->block_size >> VC_SECTOR_SHIFT, i;
	u64 key = c->rb[run->first].key;
	int err = 0;

	run->err = 0;
	run->buf = NULL;
	run->reserved = false;
	if (!(c->flags & VC_CFG_NODATA)) {
		run->buf = vc_buf_alloc(run->nr << c->block_shift, VC_GFP_NOIO);
		if (!run->buf)
			err = -ENOMEM;
	}
	run->rio = err ? NULL : vc_zalloc(sizeof(*run->rio) * run->nr,
					  VC_GFP_NOIO);
	if (!run->rio) {
		vc_buf_free(run->buf);
		run->buf = NULL;
		err = -ENOMEM;
		/* short of memory: the reserve, if free and big enough */
		vc_spin_lock(&c->clean_lock);
		if (!c->res_busy && run->nr <= c->res_blocks) {
			c->res_busy = true;
			run->reserved = true;
		}
		vc_spin_unlock(&c->clean_lock);
		if (run->reserved) {
			run->buf = c->res_buf;
			run->rio = c->res_rio;
			vc_memset(run->rio, 0, sizeof(*run->rio) * run->nr);
			err = 0;
		}
	}
	vc_memset(&run->wio, 0, sizeof(run->wio));
	run->wio.dev = c->bdev[vc_key_dev(key)].dev;
	run->wio.op = VC_DEV_WRITE;
	run->wio.sector = vc_key_lba(key) * bsec;
	run->wio.len = run->nr << c->block_shift;
	run->wio.buf = run->buf;
	run->wio.end_io = run_write_end;
	run->wio.private = run;
	if (err) {
		run->err = err;
		run_write_end(&run->wio, err);
		return;
	}
	/*
	 * Blocks consecutive on the backing device are often consecutive in
	 * the cache too (filled or written in order): one read for each
	 * such stretch.  Count the reads first (+1 holds the count up while
	 * they are submitted and complete).
	 */
	vc_atomic_set(&run->pending, 1);
	for (i = 0; i < run->nr;) {
		u32 n = 1;

		while (i + n < run->nr &&
		       c->rb[run->first + i + n].blk ==
		       c->rb[run->first + i].blk + n)
			n++;
		vc_atomic_add_return(&run->pending, 1);
		run_read(c, run, i, n);
		i += n;
	}
	run_read_end_put(run);
}

/*
 * The run's backing write is over: its blocks are no longer being
 * cleaned.  They stay dirty until the batch's backing FLUSH decides
 * (finish_batch); a host write meanwhile sets REDIRTY and keeps them
 * dirty.  Requests that must not overtake a write home of an older
 * version (vc_clean_park()) go on now.
 */
static void run_release(struct vc_cache *c, struct vc_run *run)
{
	struct vc_req *parked;
	u32 i;

	for (i = 0; i < run->nr; i++) {
		struct vc_cand *e = &c->rb[run->first + i];
		struct vc_set *s = vc_set_of_blk(c, e->blk);

		vc_spin_lock(&s->lock);
		vc_block_set_word(c, s, e->blk, c->words[e->blk] & ~B_CLEANING);
		vc_spin_unlock(&s->lock);
	}
	vc_spin_lock(&c->clean_lock);
	parked = c->clean_parked;
	c->clean_parked = NULL;
	vc_spin_unlock(&c->clean_lock);
	while (parked) {
		struct vc_req *r = parked;

		parked = r->defer_next;
		vc_clean_unpark(r);
	}
	vc_redrive(c);
}

/*
 * @r must wait until block @blk, being cleaned, has no write home in
 * flight: queue it (set lock held, @blk CLEANING).  Any run's end resumes
 * every parked request; one whose block is still being cleaned parks again.
 */
void vc_clean_park(struct vc_cache *c, struct vc_req *r)
{
	vc_spin_lock(&c->clean_lock);
	r->defer_next = c->clean_parked;
	c->clean_parked = r;
	vc_spin_unlock(&c->clean_lock);
}

static void run_write_end(struct vc_dev_io *io, int err)
{
	struct vc_run *run = vc_container_of(io, struct vc_run, wio);
	struct vc_cache *c = run->c;
	u32 dev = vc_key_dev(c->rb[run->first].key);
	bool all_done, more;
	u32 i;

	if (err) {
		if (!run->err)
			vc_stat_add(VC_DSTAT(c, dev, backing_write_errors), 1);
		/* no memory (the reserve busy): not a failure, taken again */
		for (i = 0; i < run->nr; i++)
			c->rb[run->first + i].err = err == -ENOMEM ?
						    CAND_NOMEM : 1;
	} else {
		vc_lat_add(c, VC_LAT_WRITEBACK, vc_now_ns() - run->start_ns);
		vc_stat_add(VC_DSTAT(c, dev, wb_ios), 1);
		vc_stat_add(VC_DSTAT(c, dev, wb_blocks), run->nr);
		vc_stat_add(VC_DSTAT(c, dev, wb_bytes),
			    (u64)run->nr << c->block_shift);
		vc_stat_add(VC_STAT(c, backing_ios), 1);
		vc_stat_add(VC_STAT(c, backing_bytes_written),
			    (u64)run->nr << c->block_shift);
	}
	if (run->reserved) {
		vc_spin_lock(&c->clean_lock);
		c->res_busy = false;
		vc_spin_unlock(&c->clean_lock);
	} else {
		vc_buf_free(run->buf);
		vc_free(run->rio);
	}
	run->buf = NULL;
	run->rio = NULL;
	run->reserved = false;
	run_release(c, run);

	vc_spin_lock(&c->clean_lock);
	c->runs_inflight--;
	c->runs_done++;
	if (!err)
		c->batch_dev_mask |= 1u << vc_key_dev(c->rb[run->first].key);
	all_done = c->runs_done == c->runs_nr;
	more = c->runs_next < c->runs_nr;
	vc_spin_unlock(&c->clean_lock);
	if (more)
		vc_work_queue(&c->clean_work);
	if (all_done)
		batch_flush(c);
}

struct vc_clean_flush {
	struct vc_cache *c;
	bool reserved;		/* c->res_flush */
	vc_atomic_t pending;
	int err[VC_MAX_BACKING];
	struct vc_dev_io io[VC_MAX_BACKING];
};

static void finish_batch(struct vc_cache *c, struct vc_clean_flush *f);

static void batch_flush_put(struct vc_clean_flush *f)
{
	if (vc_atomic_dec_and_test(&f->pending))
		finish_batch(f->c, f);
}

static void batch_flush_end(struct vc_dev_io *io, int err)
{
	struct vc_clean_flush *f = io->private;

	f->err[io - f->io] = err;
	if (err)
		vc_stat_add(VC_DSTAT(f->c, io - f->io, backing_write_errors), 1);
	batch_flush_put(f);
}

/* Every run is done: FLUSH the backing devices written, then finish. */
static void batch_flush(struct vc_cache *c)
{
	struct vc_clean_flush *f = vc_zalloc(sizeof(*f), VC_GFP_NOIO);
	u32 d;

	if (!f) {
		/* one batch at a time: the reserve is free */
		f = c->res_flush;
		vc_memset(f, 0, sizeof(*f));
		f->reserved = true;
	}
	f->c = c;
	vc_atomic_set(&f->pending, 1);
	for (d = 0; d < VC_MAX_BACKING; d++) {
		struct vc_dev *dev;

		if (!(c->batch_dev_mask & (1u << d)))
			continue;
		dev = c->bdev[d].dev;
		if (!dev) {
			/*
			 * Detached while the batch's other runs were in
			 * flight: no FLUSH made its writes durable, so its
			 * blocks stay dirty.
			 */
			f->err[d] = -ENODEV;
			continue;
		}
		vc_atomic_inc(&f->pending);
		vc_stat_add(VC_DSTAT(c, d, wb_flushes), 1);
		f->io[d].dev = dev;
		f->io[d].op = VC_DEV_FLUSH;
		f->io[d].end_io = batch_flush_end;
		f->io[d].private = f;
		vc_dev_submit(&f->io[d]);
	}
	batch_flush_put(f);
}

static void flush_check_done(struct vc_cache *c);

/*
 * The batch's data is durable on the backing devices (or failed): mark
 * blocks clean, rewrite their records, release everything.
 */
static void finish_batch(struct vc_cache *c, struct vc_clean_flush *f)
{
	u32 i, failed_devs = 0, nr_ok = 0, nr_units = 0;

	for (i = 0; i < c->rb_nr; i++) {
		struct vc_cand *e = &c->rb[i];
		u32 dev = vc_key_dev(e->key);
		struct vc_set *s = vc_set_of_blk(c, e->blk);
		bool ok = !e->err && !e->lost && f && !f->err[dev];
		bool md = false, flushme_failed = false, rewritten;
		u64 w;

		vc_spin_lock(&s->lock);
		w = c->words[e->blk];
		if ((w & (B_VALID | B_TOMB | B_KEY_MASK)) !=
		    (B_VALID | e->key) || !(w & B_DIRTY)) {
			/*
			 * Dropped since its write home (a discard, a failed
			 * host write), maybe cached again: not ours to mark.
			 */
			vc_spin_unlock(&s->lock);
			continue;
		}
		/*
		 * Written (REDIRTY) or being written (BUSY) since the cleaner
		 * took it: the cache holds newer data than what went home,
		 * and whatever failed meanwhile concerns an older version.
		 */
		rewritten = w & (B_REDIRTY | B_BUSY);
		if (rewritten) {
			e->lost = 0;
			ok = false;
		}
		if (e->lost && (w & B_READERS_MASK)) {
			/*
			 * Host reads of it are in flight: keep the block (still
			 * dirty) and let a later pass or those reads decide.
			 */
			e->lost = 0;
			e->err = 1;
		}
		if (e->lost) {
			md = vc_lose_locked(c, s, e->blk);
		} else if (ok) {
			w &= ~(B_DIRTY | B_FLUSHME);
			vc_block_set_word(c, s, e->blk, w);
			md = true;
		} else if (rewritten) {
			/*
			 * Dirty again since the batch began: it is written
			 * back once more, a flush period after that (not at
			 * once because its first dirtying is old).  A flush
			 * on demand keeps it (FLUSHME): the newer data may
			 * predate the flush, which must then write it home.
			 */
			w = (w & ~(B_REDIRTY | B_EPOCH_MASK)) |
			    ((u64)c->batch_epoch << B_EPOCH_SHIFT);
			vc_block_set_word(c, s, e->blk, w);
		} else if (e->err == CAND_NOMEM && !e->lost) {
			/*
			 * Not written back for lack of memory: still dirty, a
			 * flush on demand keeps it (the next batch, whose
			 * first run has the reserve, takes it again).
			 */
		} else {
			flushme_failed = w & B_FLUSHME;
			vc_block_set_word(c, s, e->blk, w & ~B_FLUSHME);
		}
		vc_spin_unlock(&s->lock);
		if (e->lost) {
			vc_log_err("%s: read error writing back block %u: data lost",
				   c->cdev->name, e->blk);
		}
		if (ok) {
			nr_ok++;
			vc_stat_add(VC_STAT_IDX(c, cleanings, e->trigger), 1);
			if (e->trigger == VC_CLEAN_AGE)
				vc_stat_add(VC_STAT(c, age_based_write_back), 1);
		}
		if (!ok && !rewritten && !(w & B_READERS_MASK) &&
		    !(e->err == CAND_NOMEM && !e->lost))
			failed_devs |= 1u << dev;
		if (e->lost || flushme_failed) {
			vc_spin_lock(&c->clean_lock);
			if (c->flush_active)
				c->flush_result = -EIO;
			vc_spin_unlock(&c->clean_lock);
		}
		if (md) {
			u32 u = (u32)vc_md_unit_of(c, e->blk);
			u64 bit = 1ULL << (u % 64);

			if (!(c->rb_unit_map[u / 64] & bit)) {
				c->rb_unit_map[u / 64] |= bit;
				c->rb_units[nr_units++] = u;
			}
		}
	}
	/*
	 * The batch's records, each unit once (its blocks were spread over
	 * the cache in key order: marking a unit per block rewrote units
	 * as often as blocks once the previous write had ended).  A record
	 * write takes the words as they are then: a block written again
	 * since it was marked clean above is recorded dirty, as it must be.
	 */
	for (i = 0; i < nr_units; i++) {
		u32 u = c->rb_units[i];

		c->rb_unit_map[u / 64] &= ~(1ULL << (u % 64));
		vc_md_mark_sector(c, u, NULL, NULL);
	}
	if (f && !f->reserved)
		vc_free(f);
	vc_spin_lock(&c->clean_lock);
	c->batch_active = false;
	c->batch_devs = 0;
	c->rb_nr = 0;
	c->runs_nr = 0;
	vc_spin_unlock(&c->clean_lock);
	vc_redrive(c);
	throttle_release(c, true);	/* blocks are clean: slowed writes go */
	vc_waitq_wake_all(&c->flush_wq);
	flush_check_done(c);
	drain_check(c, failed_devs);
	/*
	 * The next batch at once, unless nothing of this one could be
	 * written back: a failing backing device is retried at the tick,
	 * not in a loop that burns a CPU.
	 */
	if (nr_ok || !failed_devs)
		vc_work_queue(&c->clean_work);
	else
		vc_work_queue_delayed(&c->clean_work,
				      vc_max_u64(1, vc_param(c, VC_P_CLEAN_INTERVAL_MS)) *
				      1000000ULL);
}

/*
 * The rate of rated write-back (watermark ahead of the high mark, age),
 * in blocks per second: a proportional controller on dirty data against
 * its target (the low watermark), plus what the overdue epochs need to
 * be written within one epoch, at least VC_WB_MIN_RATE_KIB.  Halved while
 * the host uses the backing device (foreground I/O goes first).
 */
#define VC_WB_MIN_RATE_KIB	1024u	/* per second */
#define VC_WB_P_SECONDS		4u	/* dirty above target: gone in ~4 s */
#define VC_WB_FG_NS		100000000ULL	/* host backing I/O this recent */

static u32 overdue_epochs(struct vc_cache *c);

static bool host_on_disk(struct vc_cache *c, u64 now)
{
	return now - (u64)vc_atomic64_read(&c->last_backing_io_ns) <
	       VC_WB_FG_NS;
}

static u64 wb_rate(struct vc_cache *c, u64 now)
{
	u64 dirty = (u64)vc_atomic64_read(&c->nr_dirty);
	u64 low = wm_blocks(c, VC_P_DIRTY_LOW_PCT, VC_P_DIRTY_LOW_BYTES);
	u64 floor = ((u64)VC_WB_MIN_RATE_KIB << 10) >> c->block_shift;
	u64 age = vc_param(c, VC_P_MAX_DIRTY_AGE_MS), rate = 0;

	if (dirty > low)
		rate = (dirty - low) / VC_WB_P_SECONDS;
	if (age) {
		u32 mask = overdue_epochs(c), e;
		u64 over = 0, epoch_ms = vc_max_u64(1, age / VC_EPOCH_DIV);

		for (e = 0; e < VC_NR_EPOCHS; e++) {
			s64 n = vc_atomic64_read(&c->epoch_dirty[e]);

			if ((mask & (1u << e)) && n > 0)
				over += (u64)n;
		}
		rate = vc_max_u64(rate, over * 1000 / epoch_ms);
	}
	if (host_on_disk(c, now))
		rate /= 2;
	return vc_max_u64(rate, vc_max_u64(floor, 1));
}

/*
 * Issue runs of the current batch up to the in-flight limit.  Full speed
 * for a flush, a drain, the high watermark, tail pressure and an idle
 * host; rated write-back spends tokens earned at wb_rate() and waits for
 * them (a timer), with one run in flight while the host uses the disk.
 */
static void issue_runs(struct vc_cache *c)
{
	u32 full = (u32)vc_param(c, VC_P_WB_MAX_INFLIGHT), limit;
	u64 now = vc_now_ns(), rate = 0, wait_ns = 0;
	bool rated;

	if (!full)
		full = 1;
	limit = full;
	vc_spin_lock(&c->clean_lock);
	/*
	 * Stopping (shutdown, detach), or a full-speed trigger waiting for
	 * this batch to end (a flush on demand): the batch
	 * ends at full speed.
	 */
	rated = c->batch_rated && !c->clean_stop && !c->flush_active;
	vc_spin_unlock(&c->clean_lock);
	if (rated) {
		rate = wb_rate(c, now);
		limit = host_on_disk(c, now) ? 1 : (full / 4 ? full / 4 : 1);
	} else if (c->batch_trigger == VC_CLEAN_TAIL) {
		limit = full / 4 ? full / 4 : 1;
	}
	for (;;) {
		struct vc_run *run = NULL;

		vc_spin_lock(&c->clean_lock);
		if (rated) {
			/* earn tokens; at most 100 ms worth (one run) saved up */
			s64 cap = (s64)vc_max_u64(rate / 10, c->runs_nr ?
				  c->runs[c->runs_next < c->runs_nr ?
					  c->runs_next : 0].nr : 1);

			/*
			 * Whole tokens only, and the clock advanced by their
			 * time alone: the fraction of a token earned so far
			 * stays for the next pass, however soon it comes.
			 */
			u64 dt = now > c->wb_tokens_ns ? now - c->wb_tokens_ns : 0;
			u64 earned = dt * rate / 1000000000ULL;

			c->wb_tokens += (s64)earned;
			c->wb_tokens_ns += earned * 1000000000ULL / rate;
			if (c->wb_tokens > cap) {
				c->wb_tokens = cap;
				c->wb_tokens_ns = now;
			}
		}
		if (c->batch_active && c->runs_next < c->runs_nr &&
		    c->runs_inflight < limit) {
			if (rated && c->wb_tokens <= 0) {
				wait_ns = (u64)(1 - c->wb_tokens) *
					  1000000000ULL / rate + 1;
			} else {
				run = &c->runs[c->runs_next++];
				c->runs_inflight++;
				if (rated)
					c->wb_tokens -= run->nr;
			}
		}
		vc_spin_unlock(&c->clean_lock);
		if (!run)
			break;
		issue_run(c, run);
	}
	vc_store_u64(&c->wb_rate_bps, rated ? rate << c->block_shift : 0);
	if (wait_ns)
		vc_work_queue_delayed(&c->clean_work, wait_ns);
}

static void flush_check_done(struct vc_cache *c)
{
	vc_flush_done_fn done = NULL;
	void *arg = NULL;
	int result = 0;

	vc_spin_lock(&c->clean_lock);
	if (c->flush_active && vc_atomic64_read(&c->flush_remaining) <= 0) {
		c->flush_active = false;
		result = c->flush_result;
		c->flush_last_result = result;
		c->flush_results[c->flush_seq % 8] = result;
		c->flush_done_seq = c->flush_seq;
		done = c->flush_done;
		arg = c->flush_done_arg;
		c->flush_done = NULL;
	}
	vc_spin_unlock(&c->clean_lock);
	if (done)
		done(arg, result);
	vc_waitq_wake_all(&c->flush_wq);
}

static u32 overdue_epochs(struct vc_cache *c)
{
	u32 cur, e, mask = 0;

	if (!vc_param(c, VC_P_MAX_DIRTY_AGE_MS))
		return 0;
	cur = vc_cur_epoch(c);
	for (e = 0; e < VC_NR_EPOCHS; e++) {
		u32 dist = (cur - e) & (VC_NR_EPOCHS - 1);

		if (dist >= VC_EPOCH_OVERDUE &&
		    vc_atomic64_read(&c->epoch_dirty[e]) > 0)
			mask |= 1u << e;
	}
	return mask;
}

/*
 * Devices with dirty data that the host left alone for @idle_ns: no host
 * request to the device at all (hits included: a burst of writes to the
 * cache is not idle time), whatever write-back itself does there.
 */
static u32 host_idle_devs(struct vc_cache *c, u64 now, u64 idle_ns)
{
	u32 d, mask = 0;

	if (!idle_ns)
		return 0;
	for (d = 0; d < VC_MAX_BACKING; d++) {
		struct vc_bdev_slot *b = &c->bdev[d];

		if (vc_atomic_read(&b->present) &&
		    vc_atomic64_read(&b->nr_dirty) > 0 &&
		    now - (u64)vc_atomic64_read(&b->last_host_io_ns) >= idle_ns)
			mask |= 1u << d;
	}
	return mask;
}

void vc_clean_work_fn(vc_work_t *wk)
{
	struct vc_cache *c = vc_container_of(wk, struct vc_cache, clean_work);
	u64 dirty = (u64)vc_atomic64_read(&c->nr_dirty), now = vc_now_ns();
	u64 idle = vc_param(c, VC_P_IDLE_MS) * 1000000ULL;
	u32 filter = 0, epochs = 0, idle_devs = 0;
	u64 high, low;
	int trigger = -1;
	bool active, stop, rated = false, more = false;

	vc_spin_lock(&c->clean_lock);
	active = c->batch_active;
	stop = c->clean_stop;
	vc_spin_unlock(&c->clean_lock);
	throttle_release(c, stop);	/* those waiting too long */
	if (active) {
		issue_runs(c);
		return;
	}
	flush_check_done(c);
	vc_md_retry(c, false);
	if (stop)
		return;
	vc_pidlist_tick(&c->pids, now);	/* expire exited processes */

	high = wm_blocks(c, VC_P_DIRTY_HIGH_PCT, VC_P_DIRTY_HIGH_BYTES);
	low = wm_blocks(c, VC_P_DIRTY_LOW_PCT, VC_P_DIRTY_LOW_BYTES);
	c->wm_active = dirty >= high;
	idle_devs = dirty ? host_idle_devs(c, now, idle) : 0;

	vc_spin_lock(&c->clean_lock);
	active = c->flush_active;
	vc_spin_unlock(&c->clean_lock);
	if (active) {
		trigger = VC_CLEAN_FLUSH;
		filter = F_FLUSHME;
	} else if (dirty && (vc_effective_mode(c) != VC_MODE_WB ||
			     c->drain_waiters)) {
		trigger = VC_CLEAN_MODE;
	} else if (dirty && vc_atomic_cmpxchg(&c->tail_pressure, 1, 0)) {
		trigger = VC_CLEAN_TAIL;
		filter = F_TAIL;
	} else if (dirty && c->wm_active) {
		trigger = VC_CLEAN_WATERMARK;	/* at the mark: full speed */
	} else if (idle_devs) {
		trigger = VC_CLEAN_IDLE;
		filter = F_DEVS;
	} else if (dirty > low) {
		/* ahead of the high mark, rated */
		trigger = VC_CLEAN_WATERMARK;
		rated = true;
	} else if (overdue_epochs(c)) {
		epochs = overdue_epochs(c);
		trigger = VC_CLEAN_AGE;
		filter = F_EPOCHS;
		rated = true;
	}
	if (trigger >= 0) {
		u64 max = VC_CLEAN_BATCH;

		vc_spin_lock(&c->clean_lock);
		c->batch_active = true;
		c->batch_trigger = (u32)trigger;
		c->batch_rated = rated;
		c->batch_filter_devs = idle_devs;
		if (now - c->wb_tokens_ns > 1000000000ULL) {
			c->wb_tokens = 0;	/* no burst after a pause */
			c->wb_tokens_ns = now;
		}
		c->batch_epoch = vc_cur_epoch(c);
		c->batch_dev_mask = 0;
		c->runs_next = c->runs_done = c->runs_inflight = 0;
		vc_spin_unlock(&c->clean_lock);
		/* the watermark cleans down to the low mark, not below */
		if (trigger == VC_CLEAN_WATERMARK)
			max = dirty > low ? dirty - low : 1;
		/* rated: about a second's worth, blocks turn clean as it goes */
		if (rated) {
			u64 run = (vc_param(c, VC_P_WB_MAX_IO_KIB) << 10) >>
				  c->block_shift;

			max = vc_min_u64(max, vc_max_u64(wb_rate(c, now), run));
		}
		c->cand_nr = 0;
		if (c->set_shift && !(filter & F_TAIL))
			more = !sweep(c, filter, epochs, (u8)trigger,
				      (u32)vc_min_u64(max, VC_CLEAN_BATCH));
		else
			collect(c, filter, epochs, (u8)trigger,
				(u32)vc_min_u64(max, VC_CLEAN_BATCH));
		if (c->cand_nr) {
			sort_cand(c->cand, c->cand_nr);
			build_runs(c, (u8)trigger);
			issue_runs(c);
			return;	/* the batch's end queues us again */
		}
		vc_spin_lock(&c->clean_lock);
		c->batch_active = false;
		vc_spin_unlock(&c->clean_lock);
		if (more) {
			/* the sweep gave the worker back: go on from its cursor */
			vc_work_queue(&c->clean_work);
			return;
		}
		vc_waitq_wake_all(&c->flush_wq);
	}
	vc_store_u64(&c->wb_rate_bps, 0);
	drain_check(c, 0);
	vc_work_queue_delayed(&c->clean_work,
			      vc_max_u64(1, vc_param(c, VC_P_CLEAN_INTERVAL_MS)) *
			      1000000ULL);
	throttle_rearm(c);
}

int vc_cleaner_init(struct vc_cache *c)
{
	/* first: cache_free() cancels the work whatever failed below */
	vc_spin_lock_init(&c->clean_lock);
	vc_work_init(&c->clean_work, vc_clean_work_fn);
	c->cand = vc_large_zalloc(sizeof(*c->cand) * VC_CLEAN_BATCH);
	c->rb = vc_large_zalloc(sizeof(*c->rb) * 2 * VC_CLEAN_BATCH);
	c->runs = vc_large_zalloc(sizeof(*c->runs) * 2 * VC_CLEAN_BATCH);
	c->rb_units = vc_large_zalloc(sizeof(*c->rb_units) * 2 * VC_CLEAN_BATCH);
	c->rb_unit_map = vc_large_zalloc(sizeof(u64) * ((c->md_units + 63) / 64));
	/* the largest run (wb_max_io_kib's maximum) */
	c->res_blocks = (u32)vc_min_u64(VC_MAX_WB_IO_KIB << 10 >> c->block_shift,
					c->nr_blocks);
	if (!(c->flags & VC_CFG_NODATA))
		c->res_buf = vc_buf_alloc(c->res_blocks << c->block_shift,
					  VC_GFP_KERNEL);
	c->res_rio = vc_large_zalloc(sizeof(*c->res_rio) * c->res_blocks);
	c->res_flush = vc_zalloc(sizeof(*c->res_flush), VC_GFP_KERNEL);
	if (!c->cand || !c->rb || !c->runs || !c->rb_units ||
	    !c->rb_unit_map || !c->res_rio || !c->res_flush ||
	    (!(c->flags & VC_CFG_NODATA) && !c->res_buf)) {
		vc_cleaner_free(c);
		return -ENOMEM;
	}
	return 0;
}

static bool batch_idle(void *arg)
{
	struct vc_cache *c = arg;
	bool active;

	vc_spin_lock(&c->clean_lock);
	active = c->batch_active;
	vc_spin_unlock(&c->clean_lock);
	return !active;
}

/* Stop starting batches, let the current one finish, stop the timer. */
void vc_cleaner_stop(struct vc_cache *c)
{
	vc_spin_lock(&c->clean_lock);
	c->clean_stop = true;
	vc_spin_unlock(&c->clean_lock);
	throttle_release(c, true);
	vc_work_queue(&c->clean_work);
	vc_waitq_wait(&c->flush_wq, batch_idle, c, false, 0);
	vc_work_cancel_sync(&c->clean_work);
}

void vc_cleaner_start(struct vc_cache *c)
{
	vc_spin_lock(&c->clean_lock);
	c->clean_stop = false;
	vc_spin_unlock(&c->clean_lock);
	vc_work_queue(&c->clean_work);
}

void vc_cleaner_free(struct vc_cache *c)
{
	dirtymap_free(c);
	vc_buf_free(c->res_buf);
	vc_large_free(c->res_rio);
	vc_free(c->res_flush);
	c->res_buf = NULL;
	c->res_rio = NULL;
	c->res_flush = NULL;
	vc_large_free(c->cand);
	vc_large_free(c->rb);
	vc_large_free(c->runs);
	vc_large_free(c->rb_units);
	vc_large_free(c->rb_unit_map);
	c->cand = NULL;
	c->rb = NULL;
	c->runs = NULL;
	c->rb_units = NULL;
	c->rb_unit_map = NULL;
}

/* ------------------------------------------------------ flush on demand */
/*
 * Take the flush marks off the blocks of device @dev (VC_DEV_ID_ALL:
 * every block); @counted: each counted off flush_remaining (the marks of
 * the running flush), else stored directly (a cancelled flush's).
 * flush_mark_mutex held.  Returns how many.
 */
static u64 flush_unmark(struct vc_cache *c, u32 dev, bool counted)
{
	u64 n = 0;
	u32 si;

	for (si = 0; si < c->nr_sets; si++) {
		struct vc_set *s = &c->sets[si];
		u32 i;

		vc_spin_lock(&s->lock);
		for (i = 0; i < s->ways; i++) {
			u32 blk = s->first + i;
			u64 w = c->words[blk];

			if (!(w & B_FLUSHME) ||
			    (dev != VC_DEV_ID_ALL &&
			     (!(w & (B_VALID | B_TOMB)) || vc_key_dev(w) != dev)))
				continue;
			if (counted)
				vc_block_set_word(c, s, blk, w & ~B_FLUSHME);
			else
				vc_store_u64(&c->words[blk], w & ~B_FLUSHME);
			n++;
		}
		vc_spin_unlock(&s->lock);
	}
	return n;
}

static int flush_mark(struct vc_cache *c, u32 dev_id, vc_flush_done_fn done,
		      void *arg, bool background, u64 *seq);

static int flush_begin(struct vc_cache *c, u32 dev_id, vc_flush_done_fn done,
		       void *arg, bool background, u64 *seq)
{
	int err;

	vc_mutex_lock(&c->flush_mark_mutex);
	err = flush_mark(c, dev_id, done, arg, background, seq);
	vc_mutex_unlock(&c->flush_mark_mutex);
	if (!err) {
		vc_cache_kick_cleaner(c);
		flush_check_done(c);
	}
	return err;
}

static int flush_mark(struct vc_cache *c, u32 dev_id, vc_flush_done_fn done,
		      void *arg, bool background, u64 *seq)
{
	u64 marked = 0, absent = 0;
	bool stale;
	u32 si;

	if (dev_id != VC_DEV_ID_ALL &&
	    (dev_id >= VC_MAX_BACKING || !c->bdev[dev_id].dev ||
	     c->bdev[dev_id].parked))
		return -ENODEV;
	vc_spin_lock(&c->clean_lock);
	if (c->flush_active) {
		vc_spin_unlock(&c->clean_lock);
		return -EBUSY;
	}
	stale = c->flush_marks_stale;
	c->flush_marks_stale = false;
	c->flush_active = true;
	c->flush_target = 0;
	*seq = ++c->flush_seq;
	c->flush_dev = dev_id;
	c->flush_result = 0;
	c->flush_done = done;
	c->flush_done_arg = arg;
	c->flush_background = background;
	/* a large bias keeps the count positive while marking */
	vc_atomic64_set(&c->flush_remaining, 1LL << 62);
	vc_spin_unlock(&c->clean_lock);
	if (stale) {
		/*
		 * The marks a cancelled flush left (its batch may still clean
		 * some, counting each off as if it were ours) go before the
		 * count starts; what their cleaning took off the bias
		 * meanwhile is put back.  Only flush_mark() sets marks.
		 */
		flush_unmark(c, VC_DEV_ID_ALL, false);
		vc_atomic64_set(&c->flush_remaining, 1LL << 62);
	}

	for (si = 0; si < c->nr_sets; si++) {
		struct vc_set *s = &c->sets[si];
		u32 i;

		vc_spin_lock(&s->lock);
		for (i = 0; i < s->ways; i++) {
			u32 blk = s->first + i;
			u64 w = c->words[blk];
			bool want = (w & B_VALID) && (w & B_DIRTY) &&
				    !(w & B_TOMB) &&
				    (dev_id == VC_DEV_ID_ALL ||
				     vc_key_dev(w) == dev_id);

			/* blocks of absent devices wait for them: skip */
			if (want && (!c->bdev[vc_key_dev(w)].dev ||
				     c->bdev[vc_key_dev(w)].parked)) {
				want = false;
				absent++;
			}

			if (want) {
				w |= B_FLUSHME;
				marked++;
			}
			/* direct store: the bias absorbs nothing here */
			vc_store_u64(&c->words[blk], w);
		}
		vc_spin_unlock(&s->lock);
	}
	vc_spin_lock(&c->clean_lock);
	c->flush_target = marked;
	if (absent)
		c->flush_result = -ENODEV;	/* not everything can go home */
	vc_spin_unlock(&c->clean_lock);
	vc_atomic64_add(&c->flush_remaining, (s64)marked - (1LL << 62));
	return 0;
}

/*
 * Device @id is parked (detach keeping its dirty blocks, unplug): the
 * cleaner takes none of its blocks, so a running flush would wait for
 * ever for those it marked.  They are unmarked (each counted off) and
 * the flush ends with -ENODEV, as one that found the device absent.
 */
void vc_flush_unmark_dev(struct vc_cache *c, u32 id)
{
	bool active;
	u64 n = 0;

	vc_mutex_lock(&c->flush_mark_mutex);
	vc_spin_lock(&c->clean_lock);
	active = c->flush_active;
	vc_spin_unlock(&c->clean_lock);
	if (active)
		n = flush_unmark(c, id, true);
	if (n) {
		vc_spin_lock(&c->clean_lock);
		if (c->flush_active)
			c->flush_result = -ENODEV;
		vc_spin_unlock(&c->clean_lock);
	}
	vc_mutex_unlock(&c->flush_mark_mutex);
	if (n)
		flush_check_done(c);
}

struct flush_wait {
	struct vc_cache *c;
	u64 seq;
};

static bool flush_over(void *arg)
{
	struct flush_wait *fw = arg;
	bool over;

	vc_spin_lock(&fw->c->clean_lock);
	over = fw->c->flush_done_seq >= fw->seq;
	vc_spin_unlock(&fw->c->clean_lock);
	return over;
}

static bool flush_idle(void *arg)
{
	struct vc_cache *c = arg;
	bool active;

	vc_spin_lock(&c->clean_lock);
	active = c->flush_active;
	vc_spin_unlock(&c->clean_lock);
	return !active;
}

void vc_cache_flush_get_progress(struct vc_cache *c,
				 struct vc_flush_progress *p)
{
	s64 rem = vc_atomic64_read(&c->flush_remaining);

	vc_spin_lock(&c->clean_lock);
	p->running = c->flush_active;
	p->target = c->flush_target;
	p->remaining = p->running && rem > 0 ? (u64)rem : 0;
	if (p->remaining > p->target)
		p->remaining = p->target;
	p->done = p->target - p->remaining;
	p->result = c->flush_active ? 0 : c->flush_last_result;
	vc_spin_unlock(&c->clean_lock);
}

static void flush_cancel_seq(struct vc_cache *c, u64 seq)
{
	vc_flush_done_fn done = NULL;
	void *arg = NULL;

	vc_spin_lock(&c->clean_lock);
	/* @seq 0: the background flush only, never a caller's blocking one */
	if (c->flush_active &&
	    (seq ? c->flush_seq == seq : c->flush_background)) {
		c->flush_active = false;
		c->flush_marks_stale = true;	/* its batch may go on */
		c->flush_last_result = -EINTR;
		c->flush_results[c->flush_seq % 8] = -EINTR;
		c->flush_done_seq = c->flush_seq;
		done = c->flush_done;
		arg = c->flush_done_arg;
		c->flush_done = NULL;
	}
	vc_spin_unlock(&c->clean_lock);
	if (done)
		done(arg, -EINTR);
	vc_waitq_wake_all(&c->flush_wq);
}

void vc_cache_flush_cancel(struct vc_cache *c)
{
	flush_cancel_seq(c, 0);
}

int vc_cache_flush_start(struct vc_cache *c, u32 dev_id,
			 vc_flush_done_fn done, void *arg)
{
	u64 seq;

	return flush_begin(c, dev_id, done, arg, true, &seq);
}

/*
 * Blocking flush.  If another flush runs, wait for it to end first (then
 * start ours): concurrent callers each get a complete flush.
 */
int vc_cache_flush(struct vc_cache *c, u32 dev_id,
		   vc_flush_progress_fn progress, void *arg)
{
	struct vc_flush_progress p;
	struct flush_wait fw = { .c = c };
	int err;

	for (;;) {
		err = flush_begin(c, dev_id, NULL, NULL, false, &fw.seq);
		if (err != -EBUSY)
			break;
		/* @progress may stop us while the other flush runs too */
		err = vc_waitq_wait(&c->flush_wq, flush_idle, c, true,
				    100000000ULL);
		if (err == -ETIMEDOUT) {
			vc_cache_flush_get_progress(c, &p);
			if (progress && progress(arg, &p))
				return -EINTR;
			continue;
		}
		if (err)
			return err == -EDEADLK ? -EBUSY : err;
	}
	if (err)
		return err;
	for (;;) {
		err = vc_waitq_wait(&c->flush_wq, flush_over, &fw, true,
				    100000000ULL);
		vc_cache_flush_get_progress(c, &p);
		if (!err)
			break;
		if (err == -ETIMEDOUT) {
			if (progress && progress(arg, &p)) {
				flush_cancel_seq(c, fw.seq);
				return -EINTR;
			}
			continue;
		}
		flush_cancel_seq(c, fw.seq);
		return err;
	}
	if (progress)
		progress(arg, &p);
	vc_spin_lock(&c->clean_lock);
	err = c->flush_results[fw.seq % 8];
	vc_spin_unlock(&c->clean_lock);
	return err;
}
