// SPDX-License-Identifier: GPL-2.0
/*
 * vc_policy: the S3-FIFO and TinyLFU replacement policies of a set.
 *
 * Both keep the set's per-block RAM (vc_internal.h): they use the same
 * prev/next links as LRU, three bits of the block word and the set's
 * ghost table (1 byte per way at most), nothing more.
 *
 *   B_FREQ (2 bits)  accesses since insertion or since the hand passed,
 *                    saturating at 3 (lazy promotion: a hit never moves
 *                    a block, it only counts)
 *   B_SMALL          the block is on the small queue (S3-FIFO)
 *
 * S3-FIFO (Yang et al., SOSP 2023).  A miss enters the small FIFO (about
 * 10% of the set) unless its fingerprint is in the ghost table, then it
 * enters the main FIFO.  Evicting from the small queue: a block hit
 * since insertion moves to the main queue, else it leaves and its
 * fingerprint goes to the ghost table.  Evicting from the main queue:
 * a block with a count goes back to the head with the count lowered
 * (CLOCK), else it leaves.  A one-time scan passes through the small
 * queue only.
 *
 * TinyLFU (Einziger et al., Caffeine).  The ghost table holds a
 * count-min sketch of 4-bit counters (two per byte) of every access to
 * the set, halved every VC_TLFU_AGE * ways accesses so it follows
 * changes.  The main list is a CLOCK as above.  A miss on a full set is
 * admitted only if the sketch has seen its block more often than the
 * block the CLOCK would evict; otherwise it goes around the cache and
 * costs no flash write.  A scan's blocks are seen once: never admitted.
 *
 * Dirty, busy or read blocks are never evicted: the walk skips them in
 * place (the cleaner is asked to clean where the walk looks, and walks
 * the same blocks first: vc_cold_first/next).
 *
 * The admission parameter (second-hit) applies to FIFO, LRU and S3-FIFO
 * (TinyLFU is its own admission filter).
 *
 * Set lock held for everything here.
 */
#include "vc_internal.h"

#define VC_SMALL_PCT	10	/* S3-FIFO small queue, % of the set */
#define VC_POL_SCAN	1024	/* steps of one victim search */
#define VC_POL_TAIL_DIRTY 32	/* dirty blocks skipped: ask for cleaning */
#define VC_TLFU_DEPTH	4	/* sketch rows (counters per key) */
#define VC_TLFU_AGE	4	/* halve after this many accesses per way */
#define VC_GHOST_SALT	0x9e3779b97f4a7c15ULL
#define VC_SKETCH_SALT	0xc2b2ae3d27d4eb4fULL

static inline u16 bidx(struct vc_set *s, u32 blk)
{
	return (u16)(blk - s->first);
}

static inline u32 freq_of(u64 w)
{
	return (u32)((w & B_FREQ_MASK) >> B_FREQ_SHIFT);
}

static inline void set_freq(struct vc_cache *c, u32 blk, u32 f)
{
	vc_store_u64(&c->words[blk], (c->words[blk] & ~B_FREQ_MASK) |
		     ((u64)f << B_FREQ_SHIFT));
}

/* Can @w's block be given to other data now? */
static inline bool reusable(u64 w)
{
	return !(w & (B_DIRTY | B_FLASHDIRTY | B_BUSY | B_CLEANING |
		      B_READERS_MASK | B_TOMB));
}

void vc_pol_init_set(struct vc_cache *c, struct vc_set *s)
{
	s->shead = VC_NIL;
	s->stail = VC_NIL;
	s->nr_small = 0;
	s->samples = 0;
	s->pol = (u8)vc_atomic_read(&c->policy);
}

static void push_small(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u16 i = bidx(s, blk);

	c->prev[blk] = VC_NIL;
	c->next[blk] = s->shead;
	if (s->shead != VC_NIL)
		c->prev[s->first + s->shead] = i;
	else
		s->stail = i;
	s->shead = i;
	s->nr_small++;
	vc_store_u64(&c->words[blk], c->words[blk] | B_SMALL);
}

bool vc_pol_small(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	(void)s;
	return c->words[blk] & B_SMALL;
}

/* ------------------------------------------------------- ghost table */
static u32 ghost_idx(struct vc_set *s, u64 key, u8 *tag)
{
	u64 h = vc_hash64((key & B_KEY_MASK) ^ VC_GHOST_SALT);

	*tag = (u8)(h >> 56) | 1;
	return (u32)h & s->gmask;
}

static void ghost_put(struct vc_set *s, u64 key)
{
	u8 tag;
	u32 i = ghost_idx(s, key, &tag);

	s->ghost[i] = tag;
}

/* Was @key evicted from the small queue recently?  Forgets it. */
static bool ghost_take(struct vc_set *s, u64 key)
{
	u8 tag;
	u32 i = ghost_idx(s, key, &tag);

	if (s->ghost[i] != tag)
		return false;
	s->ghost[i] = 0;
	return true;
}

/* ------------------------------------------------------------ sketch */
/*
 * 2 * (gmask + 1) 4-bit counters; key k uses VC_TLFU_DEPTH of them, at
 * 16-bit slices of one hash (a set has at most 65536 counters).
 */
static inline u32 ctr_get(const u8 *g, u32 i)
{
	return (g[i >> 1] >> ((i & 1) << 2)) & 15;
}

static inline void ctr_inc(u8 *g, u32 i)
{
	g[i >> 1] += (u8)(1u << ((i & 1) << 2));
}

static u32 sketch_est(struct vc_set *s, u64 key)
{
	u64 h = vc_hash64((key & B_KEY_MASK) ^ VC_SKETCH_SALT);
	u32 mask = 2 * (s->gmask + 1) - 1, d, m = 15;

	for (d = 0; d < VC_TLFU_DEPTH; d++) {
		u32 v = ctr_get(s->ghost, (u32)(h >> (16 * d)) & mask);

		if (v < m)
			m = v;
	}
	return m;
}

static void sketch_age(struct vc_set *s)
{
	u32 i;

	for (i = 0; i <= s->gmask; i++)
		s->ghost[i] = (s->ghost[i] >> 1) & 0x77;
	s->samples /= 2;
}

/* Count an access to @key (conservative update: only the minima grow). */
static void sketch_inc(struct vc_set *s, u64 key)
{
	u64 h = vc_hash64((key & B_KEY_MASK) ^ VC_SKETCH_SALT);
	u32 mask = 2 * (s->gmask + 1) - 1, d, m = 15;
	u32 idx[VC_TLFU_DEPTH];

	for (d = 0; d < VC_TLFU_DEPTH; d++) {
		u32 v;

		idx[d] = (u32)(h >> (16 * d)) & mask;
		v = ctr_get(s->ghost, idx[d]);
		if (v < m)
			m = v;
	}
	if (m < 15) {
		for (d = 0; d < VC_TLFU_DEPTH; d++)
			if (ctr_get(s->ghost, idx[d]) == m)
				ctr_inc(s->ghost, idx[d]);
	}
	if (++s->samples >= s->ways * VC_TLFU_AGE)
		sketch_age(s);
}

void vc_pol_hit(struct vc_cache *c, struct vc_set *s, u64 w)
{
	(void)c;
	sketch_inc(s, w);
}

/* ------------------------------------------------------------ victim */
/*
 * One step of the main queue's CLOCK at block @blk (the walk's
 * position): true if @blk is the victim.  A counted block goes back to
 * the head with its count lowered.
 */
static bool main_step(struct vc_cache *c, struct vc_set *s, u32 blk,
		      u32 *dirty)
{
	u64 w = c->words[blk];
	u32 f = freq_of(w);

	if (f && (w & B_VALID)) {
		set_freq(c, blk, f - 1);
		vc_lru_unlink(c, s, blk);
		vc_lru_push_head(c, s, blk);
		return false;
	}
	if (reusable(w))
		return true;
	if (w & B_DIRTY)
		(*dirty)++;
	return false;
}

static void want_cleaning(struct vc_cache *c)
{
	if (!vc_atomic_cmpxchg(&c->tail_pressure, 0, 1))
		vc_cache_kick_cleaner(c);
}

/*
 * Walk the small queue from its tail; the victim or ~0u.  A block hit
 * while there moves to the main queue; so does a dirty one: it cannot
 * leave before it is written back, and the small queue must keep moving
 * (the cleaner reaches it in the main queue before the CLOCK does).
 */
static u32 small_walk(struct vc_cache *c, struct vc_set *s, u32 *n,
		      u32 *dirty)
{
	u16 i = s->stail;

	while (i != VC_NIL && (*n)++ < VC_POL_SCAN) {
		u32 blk = s->first + i;
		u64 w = c->words[blk];

		i = c->prev[blk];
		if (reusable(w)) {
			if (!(w & B_VALID) || !freq_of(w)) {
				if (w & B_VALID)
					ghost_put(s, w);
				return blk;
			}
		} else if (w & B_DIRTY) {
			(*dirty)++;
		} else if (!freq_of(w)) {
			continue;	/* busy or being read: wait */
		}
		vc_lru_unlink(c, s, blk);
		set_freq(c, blk, 0);
		vc_lru_push_head(c, s, blk);
	}
	return ~0u;
}

static u32 main_walk(struct vc_cache *c, struct vc_set *s, u32 *n,
		     u32 *dirty)
{
	u16 i = s->tail;

	while (i != VC_NIL && (*n)++ < VC_POL_SCAN) {
		u32 blk = s->first + i;

		i = c->prev[blk];
		if (main_step(c, s, blk, dirty))
			return blk;
	}
	return ~0u;
}

u32 vc_pol_victim(struct vc_cache *c, struct vc_set *s)
{
	u32 n = 0, dirty = 0, blk = ~0u;

	/* free blocks wait at the main tail */
	if (s->tail != VC_NIL &&
	    !(c->words[s->first + s->tail] & (B_VALID | B_TOMB | B_BUSY)))
		return s->first + s->tail;
	if (s->pol == VC_POLICY_S3FIFO && s->nr_small &&
	    (u64)s->nr_small * 100 >= (u64)s->ways * VC_SMALL_PCT)
		blk = small_walk(c, s, &n, &dirty);
	if (blk == ~0u) {
		n = 0;
		blk = main_walk(c, s, &n, &dirty);
	}
	if (blk == ~0u && s->pol == VC_POLICY_S3FIFO && s->nr_small) {
		n = 0;
		blk = small_walk(c, s, &n, &dirty);
	}
	if (blk == ~0u || dirty >= VC_POL_TAIL_DIRTY)
		want_cleaning(c);
	return blk;
}

/* ---------------------------------------------------------- insertion */
/* @blk now caches @key (word set already): put it on its queue. */
void vc_pol_insert(struct vc_cache *c, struct vc_set *s, u32 blk, u64 key)
{
	vc_lru_unlink(c, s, blk);
	set_freq(c, blk, 0);
	if (s->pol == VC_POLICY_S3FIFO && !ghost_take(s, key))
		push_small(c, s, blk);
	else
		vc_lru_push_head(c, s, blk);
}

/* TinyLFU: count the miss, admit it if it beats the victim. */
static bool tinylfu_refuses(struct vc_cache *c, struct vc_set *s, u64 key)
{
	u32 v;

	sketch_inc(s, key);
	v = vc_pol_victim(c, s);
	if (v == ~0u)
		return false;	/* no space: the caller counts it as such */
	if (!(c->words[v] & B_VALID))
		return false;	/* a free block */
	return sketch_est(s, key) <= sketch_est(s, c->words[v]);
}

/*
 * Should the miss on @key go around the cache?  TinyLFU: its frequency
 * filter.  FIFO, LRU, S3-FIFO: second-hit admission once the set is
 * nearly full, when the admission parameter asks for it (with S3-FIFO
 * the ghost table then holds refused misses as well as blocks evicted
 * from the small queue: either way the block was seen recently).
 */
bool vc_pol_admit_refuses(struct vc_cache *c, struct vc_set *s, u64 key)
{
	if (s->pol == VC_POLICY_TINYLFU)
		return tinylfu_refuses(c, s, key);
	if (vc_param(c, VC_P_ADMISSION) != VC_ADMIT_SECOND_HIT)
		return false;
	if ((u64)s->nr_valid * 100 <
	    (u64)s->ways * vc_param(c, VC_P_ADMIT_FULL_PCT))
		return false;
	return !vc_ghost_admit(c, s, key);
}

/* ------------------------------------------------------------ switch */
/*
 * The set follows @pol from now on.  Contents stay: the small queue is
 * spliced before the main list's head; the ghost table changes meaning
 * between fingerprints and sketch, so it starts empty when it does.
 */
void vc_pol_switch(struct vc_cache *c, struct vc_set *s, u8 pol)
{
	bool was_sketch = s->pol == VC_POLICY_TINYLFU;
	bool to_sketch = pol == VC_POLICY_TINYLFU;
	u16 i;

	if (s->pol == pol)
		return;
	if (s->shead != VC_NIL) {
		for (i = s->shead; i != VC_NIL; i = c->next[s->first + i])
			vc_store_u64(&c->words[s->first + i],
				     c->words[s->first + i] & ~B_SMALL);
		c->next[s->first + s->stail] = s->head;
		if (s->head != VC_NIL)
			c->prev[s->first + s->head] = s->stail;
		else
			s->tail = s->stail;
		s->head = s->shead;
		s->shead = VC_NIL;
		s->stail = VC_NIL;
		s->nr_small = 0;
	}
	if (was_sketch != to_sketch) {
		vc_memset(s->ghost, 0, s->gmask + 1);
		s->samples = 0;
	}
	s->pol = pol;
}

/* ----------------------------------------------------- cleaner's walk */
void vc_cold_first(struct vc_cache *c, struct vc_set *s,
		   struct vc_cold_iter *it)
{
	(void)c;
	if (s->stail != VC_NIL) {
		it->list = 0;
		it->pos = s->stail;
	} else {
		it->list = 1;
		it->pos = s->tail;
	}
}

/*
 * The next block nearest eviction: the small queue's tail first (where
 * S3-FIFO evicts most), then the main list's tail; ~0u at the end.
 */
u32 vc_cold_next(struct vc_cache *c, struct vc_set *s,
		 struct vc_cold_iter *it)
{
	u32 blk;

	while (it->pos == VC_NIL) {
		if (it->list != 0)
			return ~0u;
		it->list = 1;
		it->pos = s->tail;
	}
	blk = s->first + it->pos;
	it->pos = c->prev[blk];
	return blk;
}
