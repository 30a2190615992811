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

static void forget_streams(struct vc_seq *s)
{
	unsigned int i;

	for (i = 0; i < VC_SEQ_MAX_STREAMS; i++) {
		s->streams[i].submitter = 0;
		s->streams[i].next_sector = 0;
		s->streams[i].run_bytes = 0;
		s->streams[i].last_used = 0;
		s->streams[i].bypassing = false;
		s->streams[i].confirmed = false;
	}
	s->clock = 0;
}

int vc_seq_init(struct vc_seq *s, unsigned int nr_streams, u64 threshold_kib,
		bool enabled)
{
	if (nr_streams < 1 || nr_streams > VC_SEQ_MAX_STREAMS)
		return -EINVAL;
	if (!thresh_valid(threshold_kib))
		return -EINVAL;
	vc_spin_lock_init(&s->lock);
	s->enabled = enabled;
	s->nr_streams = nr_streams;
	s->threshold_bytes = threshold_kib << 10;
	s->stats = (struct vc_seq_stats){ 0 };
	forget_streams(s);
	return 0;
}

void vc_seq_destroy(struct vc_seq *s)
{
	vc_spin_lock_destroy(&s->lock);
}

static u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? ~0ULL : a + b;
}

/*
 * Entry to reuse for a new stream of @submitter:
 *  1. with VC_SEQ_PER_SUBMITTER entries already, one of its own (the
 *     least recently used that is not a detected stream, else the least
 *     recently used): a submitter doing random I/O churns only its own;
 *  2. else a free entry;
 *  3. else the least recently used "unconfirmed" entry (one request, no
 *     continuation yet);
 *  4. else the least recently used entry that is not a detected stream;
 *  5. else the least recently used.
 */
static struct vc_seq_stream *pick_victim(struct vc_seq *s, u64 submitter)
{
	struct vc_seq_stream *own = NULL, *own_small = NULL, *lru = NULL;
	struct vc_seq_stream *lru_small = NULL, *lru_unconf = NULL;
	unsigned int i, nown = 0;

	for (i = 0; i < s->nr_streams; i++) {
		struct vc_seq_stream *e = &s->streams[i];

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
	for (i = 0; i < s->nr_streams; i++)
		if (!s->streams[i].last_used)
			return &s->streams[i];
	if (lru_unconf)
		return lru_unconf;
	return lru_small ? lru_small : lru;
}

bool vc_seq_check(struct vc_seq *s, u64 submitter, u64 sector,
		  u32 nr_sectors)
{
	struct vc_seq_stream *st = NULL;
	u64 bytes = (u64)nr_sectors << VC_SEQ_SECTOR_SHIFT;
	u64 end = sector + nr_sectors;
	bool bypass = false;
	unsigned int i;

	if (!nr_sectors)
		return false;
	vc_spin_lock(&s->lock);
	if (!s->enabled)
		goto out;
	s->stats.checked++;
	/*
	 * A request whose end wraps past the last possible sector cannot be
	 * continued by anything; it is not part of a stream.
	 */
	if (end < sector)
		goto out;
	s->clock++;

	for (i = 0; i < s->nr_streams; i++) {
		struct vc_seq_stream *e = &s->streams[i];

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
		/* never NULL: nr_streams >= 1 */
		st = pick_victim(s, submitter);
		if (st->last_used)
			s->stats.streams_replaced++;
		st->submitter = submitter;
		st->run_bytes = bytes;
		st->bypassing = false;
		st->confirmed = false;
	}
	st->next_sector = end;
	st->last_used = s->clock;

	if (st->run_bytes > s->threshold_bytes) {
		if (!st->bypassing) {
			st->bypassing = true;
			s->stats.streams_detected++;
		}
		bypass = true;
		s->stats.bypassed_ios++;
		s->stats.bypassed_bytes += bytes;
	}
out:
	vc_spin_unlock(&s->lock);
	return bypass;
}

int vc_seq_set_threshold(struct vc_seq *s, u64 threshold_kib)
{
	unsigned int i;

	if (!thresh_valid(threshold_kib))
		return -EINVAL;
	vc_spin_lock(&s->lock);
	s->threshold_bytes = threshold_kib << 10;
	/* Re-evaluated on the next request of each stream. */
	for (i = 0; i < VC_SEQ_MAX_STREAMS; i++)
		if (s->streams[i].run_bytes <= s->threshold_bytes)
			s->streams[i].bypassing = false;
	vc_spin_unlock(&s->lock);
	return 0;
}

int vc_seq_set_streams(struct vc_seq *s, unsigned int nr_streams)
{
	unsigned int i;

	if (nr_streams < 1 || nr_streams > VC_SEQ_MAX_STREAMS)
		return -EINVAL;
	vc_spin_lock(&s->lock);
	/* Entries beyond the new size are dropped. */
	for (i = nr_streams; i < VC_SEQ_MAX_STREAMS; i++) {
		s->streams[i].last_used = 0;
		s->streams[i].run_bytes = 0;
		s->streams[i].bypassing = false;
	}
	s->nr_streams = nr_streams;
	vc_spin_unlock(&s->lock);
	return 0;
}

void vc_seq_set_enabled(struct vc_seq *s, bool enabled)
{
	vc_spin_lock(&s->lock);
	if (s->enabled != enabled)
		forget_streams(s);
	s->enabled = enabled;
	vc_spin_unlock(&s->lock);
}

bool vc_seq_enabled(struct vc_seq *s)
{
	bool r;

	vc_spin_lock(&s->lock);
	r = s->enabled;
	vc_spin_unlock(&s->lock);
	return r;
}

u64 vc_seq_threshold_kib(struct vc_seq *s)
{
	u64 r;

	vc_spin_lock(&s->lock);
	r = s->threshold_bytes >> 10;
	vc_spin_unlock(&s->lock);
	return r;
}

unsigned int vc_seq_nr_streams(struct vc_seq *s)
{
	unsigned int r;

	vc_spin_lock(&s->lock);
	r = s->nr_streams;
	vc_spin_unlock(&s->lock);
	return r;
}

unsigned int vc_seq_active_streams(struct vc_seq *s)
{
	unsigned int i, n = 0;

	vc_spin_lock(&s->lock);
	for (i = 0; i < s->nr_streams; i++)
		if (s->streams[i].last_used)
			n++;
	vc_spin_unlock(&s->lock);
	return n;
}

void vc_seq_get_stats(struct vc_seq *s, struct vc_seq_stats *out)
{
	vc_spin_lock(&s->lock);
	*out = s->stats;
	vc_spin_unlock(&s->lock);
}

void vc_seq_reset_stats(struct vc_seq *s)
{
	vc_spin_lock(&s->lock);
	s->stats = (struct vc_seq_stats){ 0 };
	vc_spin_unlock(&s->lock);
}

void vc_seq_reset_streams(struct vc_seq *s)
{
	vc_spin_lock(&s->lock);
	forget_streams(s);
	vc_spin_unlock(&s->lock);
}
