// SPDX-License-Identifier: GPL-2.0
/*
 * vc_commit: group commit of new dirty records, and the cache-flush
 * numbering that decides which record writes need a PREFLUSH.
 *
 * The block layer asks a write to be durable only once a later FLUSH
 * completed, or at once if it has FUA.  So a plain write that makes a
 * block dirty is acknowledged as soon as its data is on the cache device;
 * its DIRTY record is written by the next commit: one cache FLUSH (making
 * the data of every write acknowledged before it durable), then every
 * record unit (vc_format.h: the cache device's physical block) dirtied
 * since the last commit, with FUA and no PREFLUSH
 * (the dm-writecache model).  A host FLUSH (or PREFLUSH write) waits for
 * the commit that starts after it arrived, which covers every write
 * acknowledged before it; commits are serialised.  A commit also starts
 * when many units wait, and on a timer (commit_ms) so that a crash
 * loses at most that much of unflushed write-back data's records.
 *
 * A DIRTY record must never be durable before the data it points to.
 * Every cache FLUSH the engine issues (explicit, or a record write's
 * PREFLUSH) gets a number; a record unit remembers the number of the
 * last flush issued before its newest dirty mark (the mark comes after
 * the data write completed).  A record write of the unit can skip the
 * PREFLUSH once a flush with a higher number completed.
 */
#include "vc_internal.h"

#define COMMIT_EARLY	1024	/* record units waiting that start a commit now */
#define COMMIT_RETRY_MS	100	/* at least this between failed commits */

static bool test_bit64(const u64 *map, u64 i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

/* ------------------------------------------------------ flush numbers */
u32 vc_cflush_issue(struct vc_cache *c)
{
	vc_stat_add(VC_STAT(c, cache_flushes), 1);
	return (u32)vc_atomic_add_return(&c->cflush_issued, 1);
}

void vc_cflush_done(struct vc_cache *c, u32 n)
{
	for (;;) {
		int cur = vc_atomic_read(&c->cflush_done);

		if ((s32)(n - (u32)cur) <= 0 ||
		    vc_atomic_cmpxchg(&c->cflush_done, cur, (int)n) == cur)
			return;
	}
}

/*
 * A block of record unit @idx becomes dirty; its data write completed.
 * Call before the block's word says DIRTY: a record write that sees the
 * word must see the mark too.
 */
void vc_md_note_dirty(struct vc_cache *c, u64 idx)
{
	u32 li = (u32)(idx % VC_MD_LOCKS);

	vc_spin_lock(&c->md_lock[li]);
	c->md_markgen[idx] = (u32)vc_atomic_read(&c->cflush_issued);
	vc_spin_unlock(&c->md_lock[li]);
	vc_smp_mb();
}

/* Must a write of record unit @idx, already built, carry a PREFLUSH? */
bool vc_md_needs_preflush(struct vc_cache *c, u64 idx)
{
	u32 li = (u32)(idx % VC_MD_LOCKS), gen;

	vc_smp_mb();	/* pairs with vc_md_note_dirty() */
	vc_spin_lock(&c->md_lock[li]);
	gen = c->md_markgen[idx];
	vc_spin_unlock(&c->md_lock[li]);
	return (s32)((u32)vc_atomic_read(&c->cflush_done) - gen) <= 0;
}

/* ------------------------------------------------------------ commits */
static void commit_finish(struct vc_cache *c);

/*
 * The dirty record of @blk waits for the next commit (its word already
 * says DIRTY, vc_md_note_dirty() was called).  Arms the timer.
 */
void vc_md_defer(struct vc_cache *c, u32 blk)
{
	u64 idx = vc_md_unit_of(c, blk);
	bool first = false, early;

	vc_spin_lock(&c->commit_lock);
	if (!test_bit64(c->commit_pend, idx)) {
		c->commit_pend[idx / 64] |= 1ULL << (idx % 64);
		first = c->commit_nr++ == 0;
	}
	early = c->commit_nr >= COMMIT_EARLY && !c->commit_running;
	if (c->commit_stop)
		first = early = false;
	vc_spin_unlock(&c->commit_lock);
	if (early)
		vc_work_queue(&c->commit_work);
	else if (first)
		vc_work_queue_delayed(&c->commit_work,
				      vc_param(c, VC_P_COMMIT_MS) * 1000000ULL);
}

static void commit_run(struct vc_cache *c);

/*
 * Ask for a commit.  @w (may be NULL) is called with its result once a
 * commit that started after this call finished; @flush: that commit
 * flushes the cache device even if no record waits (a host FLUSH).
 */
void vc_commit_request(struct vc_cache *c, struct vc_commit_waiter *w,
		       bool flush)
{
	bool start;

	vc_spin_lock(&c->commit_lock);
	if (w) {
		w->target = c->commit_started + 1;
		w->next = c->commit_waiters;
		c->commit_waiters = w;
	}
	if (flush)
		c->commit_flush_wanted = true;
	start = !c->commit_running && !c->commit_stop &&
		(c->commit_waiters || c->commit_nr || c->commit_flush_wanted);
	if (start)
		c->commit_running = true;
	vc_spin_unlock(&c->commit_lock);
	if (start)
		commit_run(c);
}

void vc_commit_work_fn(vc_work_t *wk)
{
	struct vc_cache *c = vc_container_of(wk, struct vc_cache, commit_work);

	vc_commit_request(c, NULL, false);
}

/* Issue the taken units' record writes, a bounded number at a time. */
static void commit_issue(struct vc_cache *c)
{
	for (;;) {
		struct vc_commit_slot *sl;
		bool finish = false;
		u64 idx;

		vc_spin_lock(&c->commit_lock);
		while (c->commit_pos < c->md_units &&
		       !(c->commit_take[c->commit_pos / 64] >>
			 (c->commit_pos % 64)))
			c->commit_pos = (c->commit_pos | 63) + 1;
		while (c->commit_pos < c->md_units &&
		       !test_bit64(c->commit_take, c->commit_pos))
			c->commit_pos++;
		if (c->commit_pos >= c->md_units || !c->commit_free_nr) {
			if (c->commit_pos >= c->md_units &&
			    !c->commit_inflight && !c->commit_finishing) {
				c->commit_finishing = true;
				finish = true;
			}
			vc_spin_unlock(&c->commit_lock);
			if (finish)
				commit_finish(c);
			return;
		}
		idx = c->commit_pos++;
		c->commit_take[idx / 64] &= ~(1ULL << (idx % 64));
		sl = c->commit_free[--c->commit_free_nr];
		c->commit_inflight++;
		vc_spin_unlock(&c->commit_lock);
		vc_md_mark_sector(c, idx, &sl->mdw, vc_commit_md_end);
	}
}

void vc_commit_md_end(struct vc_md_waiter *mw, int err)
{
	struct vc_commit_slot *sl = vc_container_of(mw, struct vc_commit_slot,
						    mdw);
	struct vc_cache *c = sl->c;

	u64 idx = mw->sector;

	vc_spin_lock(&c->commit_lock);
	c->commit_free[c->commit_free_nr++] = sl;
	c->commit_inflight--;
	if (err) {
		/*
		 * The unit's DIRTY records are not durable: it waits for
		 * the next commit again, so that no later FLUSH or FUA write
		 * finds "nothing pending" (the error sticks until a commit
		 * wrote it).
		 */
		if (!c->commit_err)
			c->commit_err = err;
		if (!test_bit64(c->commit_pend, idx)) {
			c->commit_pend[idx / 64] |= 1ULL << (idx % 64);
			c->commit_nr++;
		}
	}
	vc_spin_unlock(&c->commit_lock);
	commit_issue(c);
}

static void commit_flush_end(struct vc_dev_io *io, int err)
{
	struct vc_cache *c = vc_container_of(io, struct vc_cache, commit_fio);
	u64 i;

	if (err) {
		/* nothing was written: the units wait for the next commit */
		vc_cache_write_failed(c, err, "cache flush failed");
		vc_spin_lock(&c->commit_lock);
		c->commit_err = err;
		for (i = 0; i < (c->md_units + 63) / 64; i++) {
			c->commit_nr += vc_popcount64(c->commit_take[i] &
						      ~c->commit_pend[i]);
			c->commit_pend[i] |= c->commit_take[i];
			c->commit_take[i] = 0;
		}
		c->commit_pos = c->md_units;
		vc_spin_unlock(&c->commit_lock);
	} else {
		vc_cflush_done(c, c->commit_fno);
	}
	commit_issue(c);
}

/* Start commit number commit_started + 1 (commit_running is set). */
static void commit_run(struct vc_cache *c)
{
	u64 *t;
	bool flush;

	vc_spin_lock(&c->commit_lock);
	c->commit_started++;
	t = c->commit_take;		/* all zero */
	c->commit_take = c->commit_pend;
	c->commit_pend = t;
	flush = c->commit_nr || c->commit_flush_wanted;
	c->commit_nr = 0;
	c->commit_flush_wanted = false;
	c->commit_err = 0;
	c->commit_pos = 0;
	c->commit_finishing = false;
	vc_spin_unlock(&c->commit_lock);
	vc_stat_add(VC_STAT(c, commits), 1);
	if (!flush) {
		c->commit_pos = c->md_units;
		commit_issue(c);
		return;
	}
	vc_memset(&c->commit_fio, 0, sizeof(c->commit_fio));
	c->commit_fio.dev = c->cdev;
	c->commit_fio.op = VC_DEV_FLUSH;
	c->commit_fio.end_io = commit_flush_end;
	c->commit_fno = vc_cflush_issue(c);
	vc_dev_submit(&c->commit_fio);
}

static void commit_finish(struct vc_cache *c)
{
	struct vc_commit_waiter *done = NULL, **pp, *w;
	bool again, retry;
	int err;

	vc_spin_lock(&c->commit_lock);
	c->commit_done = c->commit_started;
	err = c->commit_err;
	pp = &c->commit_waiters;
	while ((w = *pp) != NULL) {
		if ((s32)(c->commit_done - w->target) >= 0) {
			*pp = w->next;
			w->next = done;
			done = w;
		} else {
			pp = &w->next;
		}
	}
	again = (c->commit_waiters || c->commit_flush_wanted ||
		 c->commit_nr >= COMMIT_EARLY) && !c->commit_stop;
	/*
	 * Failed units are retried on the timer, not in a loop.  And units
	 * deferred while this commit ran: their timer (armed by the first of
	 * them, vc_md_defer()) may have fired into it and found it running;
	 * no later deferral arms another, so arm it here.
	 */
	retry = !again && c->commit_nr && !c->commit_stop;
	c->commit_running = false;
	vc_spin_unlock(&c->commit_lock);
	while (done) {
		w = done;
		done = w->next;
		w->fn(w, err);
	}
	/* not from here: a chain of inline completions would recurse */
	if (again)
		vc_work_queue(&c->commit_work);
	else if (retry)
		vc_work_queue_delayed(&c->commit_work,
				      (err ? vc_max_u64(vc_param(c, VC_P_COMMIT_MS),
							COMMIT_RETRY_MS) :
					     vc_param(c, VC_P_COMMIT_MS)) *
				      1000000ULL);
	vc_atomic_inc(&c->wakers);
	vc_waitq_wake_all(&c->md_wq);
	vc_atomic_dec(&c->wakers);
}

/* May a dirty record not be durable yet (waiting, or being committed)? */
bool vc_commit_pending(struct vc_cache *c)
{
	bool p;

	vc_spin_lock(&c->commit_lock);
	p = c->commit_nr || c->commit_running;
	vc_spin_unlock(&c->commit_lock);
	return p;
}

/*
 * No commit starts from now on (shutdown: every record is written by the
 * shutdown itself); one running finishes.  Waiters of no commit: none, no
 * host I/O is in flight.
 */
void vc_commit_stop(struct vc_cache *c)
{
	vc_spin_lock(&c->commit_lock);
	c->commit_stop = true;
	vc_spin_unlock(&c->commit_lock);
	vc_work_cancel_sync(&c->commit_work);
}

bool vc_commit_idle(struct vc_cache *c)
{
	bool idle;

	vc_spin_lock(&c->commit_lock);
	idle = !c->commit_running;
	vc_spin_unlock(&c->commit_lock);
	return idle;
}

int vc_commit_init(struct vc_cache *c)
{
	u64 words = (c->md_units + 63) / 64;
	u32 i;

	c->commit_pend = vc_large_zalloc(words * sizeof(u64));
	c->commit_take = vc_large_zalloc(words * sizeof(u64));
	c->md_markgen = vc_large_zalloc(c->md_units * sizeof(u32));
	if (!c->commit_pend || !c->commit_take || !c->md_markgen)
		return -ENOMEM;
	for (i = 0; i < VC_COMMIT_SLOTS; i++) {
		c->commit_slots[i].c = c;
		c->commit_free[i] = &c->commit_slots[i];
	}
	c->commit_free_nr = VC_COMMIT_SLOTS;
	/* a mark with no flush issued yet needs one */
	vc_atomic_set(&c->cflush_issued, 1);
	vc_atomic_set(&c->cflush_done, 0);
	return 0;
}

void vc_commit_free(struct vc_cache *c)
{
	vc_work_cancel_sync(&c->commit_work);
	vc_work_destroy(&c->commit_work);
	vc_large_free(c->commit_pend);
	vc_large_free(c->commit_take);
	vc_large_free(c->md_markgen);
	vc_spin_lock_destroy(&c->commit_lock);
}
