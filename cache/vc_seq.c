// SPDX-License-Identifier: GPL-2.0
/*
 * vc_seq: sequential-stream detection (see include/vc_seq.h).
 */
#include "vc_seq.h"

#define VC_SEQ_SECTOR_SHIFT	9

static bool thresh_valid(u64 kib)
{
	return kib >= 1 && kib <= VC_SEQ_MAX_THRESH_KIB;
}

static void forget_shard(struct vc_seq_shard *sh)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_MAX_STREAMS; i++) {
		sh->streams[i].submitter = 0;
		sh->streams[i].next_sector = 0;
		sh->streams[i].run_bytes = 0;
		sh->streams[i].last_used = 0;
		sh->streams[i].bypassing = false;
		sh->streams[i].confirmed = false;
	}
	sh->clock = 0;
}

/* Spread @nr entries over the shards; every shard lock held (or init). */
static void layout(struct vc_seq *s, unsigned int nr)
{
	unsigned int ns = nr >= VC_SEQ_SHARD_MIN ? VC_SEQ_SHARDS : 1, i;

	if (ns != s->nr_shards) {
		/* submitters move between shards: start afresh */
		for (i = 0; i < VC_SEQ_SHARDS; i++)
			forget_shard(&s->shard[i]);
	}
	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		struct vc_seq_shard *sh = &s->shard[i];
		unsigned int want = i < ns ? nr / ns + (i < nr % ns) : 0, j;

		/* entries beyond the new size are dropped */
		for (j = want; j < VC_SEQ_MAX_STREAMS; j++) {
			sh->streams[j].last_used = 0;
			sh->streams[j].run_bytes = 0;
			sh->streams[j].bypassing = false;
			sh->streams[j].confirmed = false;
		}
		sh->nr = want;
	}
	vc_store_u64(&s->nr_shards, ns);
	s->nr_streams = nr;
}

/* Every shard, under ctl_lock (held): lockdep is told they nest in it. */
static void lock_all(struct vc_seq *s)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_SHARDS; i++)
		vc_spin_lock_nest(&s->shard[i].lock, &s->ctl_lock);
}

static void unlock_all(struct vc_seq *s)
{
	unsigned int i = VC_SEQ_SHARDS;

	while (i--)
		vc_spin_unlock_nest(&s->shard[i].lock);
}

int vc_seq_init(struct vc_seq *s, unsigned int nr_streams, u64 threshold_kib,
		bool enabled)
{
	unsigned int i;

	if (nr_streams < 1 || nr_streams > VC_SEQ_MAX_STREAMS)
		return -EINVAL;
	if (!thresh_valid(threshold_kib))
		return -EINVAL;
	vc_spin_lock_init(&s->ctl_lock);
	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		vc_spin_lock_init(&s->shard[i].lock);
		s->shard[i].stats = (struct vc_seq_stats){ 0 };
		forget_shard(&s->shard[i]);
	}
	s->enabled = enabled;
	s->threshold_bytes = threshold_kib << 10;
	s->nr_shards = 0;
	layout(s, nr_streams);
	return 0;
}

void vc_seq_destroy(struct vc_seq *s)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_SHARDS; i++)
		vc_spin_lock_destroy(&s->shard[i].lock);
	vc_spin_lock_destroy(&s->ctl_lock);
}

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? ~0ULL : a + b;
}

/*
 * Entry of shard @sh to reuse for a new stream of @submitter:
 *  1. with VC_SEQ_PER_SUBMITTER entries already, one of its own (the
 *     least recently used that is not a detected stream, else the least
 *     recently used): a submitter doing random I/O churns only its own;
 *  2. else a free entry;
 *  3. else the least recently used "unconfirmed" entry (one request, no
 *     continuation yet);
 *  4. else the least recently used entry that is not a detected stream;
 *  5. else the least recently used.
 */
static struct vc_seq_stream *pick_victim(struct vc_seq_shard *sh,
					 u64 submitter)
{
	struct vc_seq_stream *own = NULL, *own_small = NULL, *lru = NULL;
	struct vc_seq_stream *lru_small = NULL, *lru_unconf = NULL;
	unsigned int i, nown = 0;

	for (i = 0; i < sh->nr; i++) {
		struct vc_seq_stream *e = &sh->streams[i];

		if (!e->last_used)
			continue;
		if (e->submitter == submitter) {
			nown++;
			if (!own || e->last_used < own->last_used)
				own = e;
			if (!e->bypassing && (!own_small ||
					      e->last_used < own_small->last_used))
				own_small = e;
		}
		if (!lru || e->last_used < lru->last_used)
			lru = e;
		if (!e->bypassing &&
		    (!lru_small || e->last_used < lru_small->last_used))
			lru_small = e;
		if (!e->confirmed &&
		    (!lru_unconf || e->last_used < lru_unconf->last_used))
			lru_unconf = e;
	}
	if (own && nown >= VC_SEQ_PER_SUBMITTER)
		return own_small ? own_small : own;
	for (i = 0; i < sh->nr; i++)
		if (!sh->streams[i].last_used)
			return &sh->streams[i];
	if (lru_unconf)
		return lru_unconf;
	return lru_small ? lru_small : lru;
}

static unsigned int shard_of(u64 submitter, u64 nr_shards)
{
	return (unsigned int)(((submitter * 0x9e3779b97f4a7c15ULL) >> 58) %
			      nr_shards);
}

/* Lock and return the shard of @submitter (stable under its lock). */
static struct vc_seq_shard *lock_shard(struct vc_seq *s, u64 submitter)
{
	for (;;) {
		u64 ns = vc_load_u64(&s->nr_shards);
		struct vc_seq_shard *sh = &s->shard[shard_of(submitter, ns)];

		vc_spin_lock(&sh->lock);
		if (s->nr_shards == ns)
			return sh;
		/* the table was re-laid out meanwhile */
		vc_spin_unlock(&sh->lock);
	}
}

bool vc_seq_check(struct vc_seq *s, u64 submitter, u64 sector,
		  u32 nr_sectors)
{
	struct vc_seq_stream *st = NULL;
	struct vc_seq_shard *sh;
	u64 bytes = (u64)nr_sectors << VC_SEQ_SECTOR_SHIFT;
	u64 end = sector + nr_sectors;
	bool bypass = false;
	unsigned int i;

	if (!nr_sectors || !vc_load_u64(&s->enabled))
		return false;
	sh = lock_shard(s, submitter);
	sh->stats.checked++;
	/*
	 * A request whose end wraps past the last possible sector cannot be
	 * continued by anything; it is not part of a stream.
	 */
	if (end < sector)
		goto out;
	sh->clock++;

	for (i = 0; i < sh->nr; i++) {
		struct vc_seq_stream *e = &sh->streams[i];

		if (!e->last_used || e->submitter != submitter ||
		    e->next_sector != sector)
			continue;
		/*
		 * Two streams of one submitter may meet at the same sector:
		 * keep the longer run, free the other.
		 */
		if (!st) {
			st = e;
		} else if (e->run_bytes > st->run_bytes) {
			st->last_used = 0;
			st = e;
		} else {
			e->last_used = 0;
		}
	}

	if (st) {
		st->run_bytes = add_sat(st->run_bytes, bytes);
		st->confirmed = true;
	} else {
		/* never NULL: a shard in use has at least one entry */
		st = pick_victim(sh, submitter);
		if (st->last_used)
			sh->stats.streams_replaced++;
		st->submitter = submitter;
		st->run_bytes = bytes;
		st->bypassing = false;
		st->confirmed = false;
	}
	st->next_sector = end;
	st->last_used = sh->clock;

	if (st->run_bytes > vc_load_u64(&s->threshold_bytes)) {
		if (!st->bypassing) {
			st->bypassing = true;
			sh->stats.streams_detected++;
		}
		bypass = true;
		sh->stats.bypassed_ios++;
		sh->stats.bypassed_bytes += bytes;
	}
out:
	vc_spin_unlock(&sh->lock);
	return bypass;
}

int vc_seq_set_threshold(struct vc_seq *s, u64 threshold_kib)
{
	u64 t = threshold_kib << 10;
	unsigned int i, j;

	if (!thresh_valid(threshold_kib))
		return -EINVAL;
	vc_spin_lock(&s->ctl_lock);
	vc_store_u64(&s->threshold_bytes, t);
	/* Re-evaluated on the next request of each stream. */
	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		struct vc_seq_shard *sh = &s->shard[i];

		vc_spin_lock(&sh->lock);
		for (j = 0; j < VC_SEQ_MAX_STREAMS; j++)
			if (sh->streams[j].run_bytes <= t)
				sh->streams[j].bypassing = false;
		vc_spin_unlock(&sh->lock);
	}
	vc_spin_unlock(&s->ctl_lock);
	return 0;
}

int vc_seq_set_streams(struct vc_seq *s, unsigned int nr_streams)
{
	if (nr_streams < 1 || nr_streams > VC_SEQ_MAX_STREAMS)
		return -EINVAL;
	vc_spin_lock(&s->ctl_lock);
	lock_all(s);
	layout(s, nr_streams);
	unlock_all(s);
	vc_spin_unlock(&s->ctl_lock);
	return 0;
}

void vc_seq_set_enabled(struct vc_seq *s, bool enabled)
{
	unsigned int i;

	vc_spin_lock(&s->ctl_lock);
	if (!vc_load_u64(&s->enabled) != !enabled) {
		lock_all(s);
		for (i = 0; i < VC_SEQ_SHARDS; i++)
			forget_shard(&s->shard[i]);
		vc_store_u64(&s->enabled, enabled);
		unlock_all(s);
	}
	vc_spin_unlock(&s->ctl_lock);
}

bool vc_seq_enabled(struct vc_seq *s)
{
	return vc_load_u64(&s->enabled) != 0;
}

u64 vc_seq_threshold_kib(struct vc_seq *s)
{
	return vc_load_u64(&s->threshold_bytes) >> 10;
}

unsigned int vc_seq_nr_streams(struct vc_seq *s)
{
	unsigned int r;

	vc_spin_lock(&s->ctl_lock);
	r = s->nr_streams;
	vc_spin_unlock(&s->ctl_lock);
	return r;
}

unsigned int vc_seq_active_streams(struct vc_seq *s)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		struct vc_seq_shard *sh = &s->shard[i];

		vc_spin_lock(&sh->lock);
		for (j = 0; j < sh->nr; j++)
			if (sh->streams[j].last_used)
				n++;
		vc_spin_unlock(&sh->lock);
	}
	return n;
}

void vc_seq_get_stats(struct vc_seq *s, struct vc_seq_stats *out)
{
	unsigned int i;

	*out = (struct vc_seq_stats){ 0 };
	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		struct vc_seq_shard *sh = &s->shard[i];

		vc_spin_lock(&sh->lock);
		out->checked += sh->stats.checked;
		out->bypassed_ios += sh->stats.bypassed_ios;
		out->bypassed_bytes += sh->stats.bypassed_bytes;
		out->streams_detected += sh->stats.streams_detected;
		out->streams_replaced += sh->stats.streams_replaced;
		vc_spin_unlock(&sh->lock);
	}
}

void vc_seq_reset_stats(struct vc_seq *s)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		vc_spin_lock(&s->shard[i].lock);
		s->shard[i].stats = (struct vc_seq_stats){ 0 };
		vc_spin_unlock(&s->shard[i].lock);
	}
}

void vc_seq_reset_streams(struct vc_seq *s)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_SHARDS; i++) {
		vc_spin_lock(&s->shard[i].lock);
		forget_shard(&s->shard[i]);
		vc_spin_unlock(&s->shard[i].lock);
	}
}
