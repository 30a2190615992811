// SPDX-License-Identifier: GPL-2.0
/*
 * vc_map: sets, per-set hash tables, replacement lists, admission filter,
 * block-state accounting.  All functions taking a struct vc_set need its
 * lock held (except vc_map_alloc/free and vc_set_of).
 */
#include "vc_internal.h"

static u32 rounddown_pow2(u32 v)
{
	u32 p = 1;

	while (p * 2 <= v)
		p *= 2;
	return p;
}

/* RAM that scales with the number of blocks (no fixed overhead). */
static u64 mem_scaling(u64 nr_blocks)
{
	u64 nr_sets, s, total, heads = 0, ghost = 0, mdsec;

	if (!nr_blocks)
		return 0;
	nr_sets = vc_div_u64(nr_blocks + VC_MAX_WAYS - 1, VC_MAX_WAYS);
	for (s = 0; s < nr_sets; s++) {
		u64 a = vc_div_u64(s * nr_blocks, nr_sets);
		u64 b = vc_div_u64((s + 1) * nr_blocks, nr_sets);
		u32 ways = (u32)(b - a);

		heads += rounddown_pow2(ways / 4 ? ways / 4 : 1);
		ghost += rounddown_pow2(ways);
	}
	mdsec = vc_div_u64(nr_blocks + VC_RECS_PER_SECTOR - 1,
			   VC_RECS_PER_SECTOR);
	total = nr_blocks * (sizeof(u64) + 3 * sizeof(u16)) +
		heads * sizeof(u16) + ghost * sizeof(u8) +
		mdsec * (sizeof(u16) + sizeof(u32) + sizeof(u8)) +
		(mdsec + 63) / 64 * 2 * sizeof(u64) +
		nr_sets * sizeof(struct vc_set);
	return total;
}

u64 vc_cache_mem_bytes(u64 nr_blocks)
{
	return mem_scaling(nr_blocks) + sizeof(struct vc_cache);
}

u64 vc_cache_mem_bytes_per_block(u64 nr_blocks)
{
	if (!nr_blocks)
		return 0;
	return vc_div_u64(mem_scaling(nr_blocks) * 1000, nr_blocks);
}

int vc_map_alloc(struct vc_cache *c)
{
	u64 nr = c->nr_blocks, s, hoff = 0, goff = 0;
	u32 i;

	if (!nr || nr > 0xffffffffULL)
		return -EINVAL;
	c->nr_sets = (u32)vc_div_u64(nr + VC_MAX_WAYS - 1, VC_MAX_WAYS);
	c->sets = vc_large_zalloc(sizeof(*c->sets) * c->nr_sets);
	if (!c->sets)
		return -ENOMEM;
	c->heads_total = 0;
	c->ghost_total = 0;
	for (s = 0; s < c->nr_sets; s++) {
		struct vc_set *st = &c->sets[s];
		u64 a = vc_div_u64(s * nr, c->nr_sets);
		u64 b = vc_div_u64((s + 1) * nr, c->nr_sets);

		st->first = (u32)a;
		st->ways = (u32)(b - a);
		st->hmask = rounddown_pow2(st->ways / 4 ? st->ways / 4 : 1) - 1;
		st->gmask = rounddown_pow2(st->ways) - 1;
		c->heads_total += st->hmask + 1;
		c->ghost_total += st->gmask + 1;
	}
	c->words = vc_large_zalloc(sizeof(u64) * nr);
	c->prev = vc_large_zalloc(sizeof(u16) * nr);
	c->next = vc_large_zalloc(sizeof(u16) * nr);
	c->hnext = vc_large_zalloc(sizeof(u16) * nr);
	c->heads_mem = vc_large_zalloc(sizeof(u16) * c->heads_total);
	c->ghost_mem = vc_large_zalloc(sizeof(u8) * c->ghost_total);
	if (!c->words || !c->prev || !c->next || !c->hnext || !c->heads_mem ||
	    !c->ghost_mem) {
		vc_map_free(c);
		return -ENOMEM;
	}
	for (s = 0; s < c->nr_sets; s++) {
		struct vc_set *st = &c->sets[s];

		vc_spin_lock_init(&st->lock);
		st->heads = c->heads_mem + hoff;
		st->ghost = c->ghost_mem + goff;
		hoff += st->hmask + 1;
		goff += st->gmask + 1;
		for (i = 0; i <= st->hmask; i++)
			st->heads[i] = VC_NIL;
		/*
		 * All blocks free, the lowest index at the tail: taken in
		 * index order, so data written in order lies in order in the
		 * cache too (write-back reads it in stretches).
		 */
		st->head = VC_NIL;
		st->tail = VC_NIL;
		vc_pol_init_set(c, st);
		for (i = 0; i < st->ways; i++) {
			c->hnext[st->first + i] = VC_NIL;
			vc_lru_push_head(c, st, st->first + i);
		}
	}
	c->mem_bytes = vc_cache_mem_bytes(nr);
	return 0;
}

void vc_map_free(struct vc_cache *c)
{
	u32 s;

	if (c->sets && c->words) {
		for (s = 0; s < c->nr_sets; s++)
			vc_spin_lock_destroy(&c->sets[s].lock);
	}
	vc_large_free(c->sets);
	vc_large_free(c->words);
	vc_large_free(c->prev);
	vc_large_free(c->next);
	vc_large_free(c->hnext);
	vc_large_free(c->heads_mem);
	vc_large_free(c->ghost_mem);
	c->sets = NULL;
	c->words = NULL;
	c->prev = c->next = c->hnext = NULL;
	c->heads_mem = NULL;
	c->ghost_mem = NULL;
}

u32 vc_set_of(struct vc_cache *c, u64 key)
{
	u64 h = vc_hash64((key & B_KEY_MASK) >> c->set_shift);

	return (u32)(((h & 0xffffffffULL) * c->nr_sets) >> 32);
}

static u32 bucket_of(struct vc_set *s, u64 key)
{
	return (u32)(vc_hash64(key & B_KEY_MASK) >> 32) & s->hmask;
}

u32 vc_lookup(struct vc_cache *c, struct vc_set *s, u64 key)
{
	u16 i = s->heads[bucket_of(s, key)];

	key &= B_KEY_MASK;
	while (i != VC_NIL) {
		u32 blk = s->first + i;
		u64 w = c->words[blk];

		if ((w & (B_VALID | B_TOMB)) && (w & B_KEY_MASK) == key)
			return blk;
		i = c->hnext[blk];
	}
	return ~0u;
}

void vc_hash_insert(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u32 b = bucket_of(s, c->words[blk]);

	c->hnext[blk] = s->heads[b];
	s->heads[b] = (u16)(blk - s->first);
}

void vc_hash_remove(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u16 *pp = &s->heads[bucket_of(s, c->words[blk])];

	while (*pp != VC_NIL) {
		u32 cur = s->first + *pp;

		if (cur == blk) {
			*pp = c->hnext[blk];
			c->hnext[blk] = VC_NIL;
			return;
		}
		pp = &c->hnext[cur];
	}
}

void vc_lru_unlink(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u16 p = c->prev[blk], n = c->next[blk];
	bool sm = c->words[blk] & B_SMALL;

	if (p != VC_NIL)
		c->next[s->first + p] = n;
	else if (sm)
		s->shead = n;
	else
		s->head = n;
	if (n != VC_NIL)
		c->prev[s->first + n] = p;
	else if (sm)
		s->stail = p;
	else
		s->tail = p;
	c->prev[blk] = VC_NIL;
	c->next[blk] = VC_NIL;
	if (sm) {
		s->nr_small--;
		vc_store_u64(&c->words[blk], c->words[blk] & ~B_SMALL);
	}
}

void vc_lru_push_head(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u16 i = (u16)(blk - s->first);

	c->prev[blk] = VC_NIL;
	c->next[blk] = s->head;
	if (s->head != VC_NIL)
		c->prev[s->first + s->head] = i;
	else
		s->tail = i;
	s->head = i;
}

void vc_lru_push_tail(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u16 i = (u16)(blk - s->first);

	c->next[blk] = VC_NIL;
	c->prev[blk] = s->tail;
	if (s->tail != VC_NIL)
		c->next[s->first + s->tail] = i;
	else
		s->head = i;
	s->tail = i;
}

/*
 * Block @nw takes @old's place in the replacement order, with its policy
 * bits (queue, access count); @old goes to the main queue's head, away
 * from the tail where free blocks wait (a block that cannot be reused
 * there yet would hide them from S3-FIFO's victim search, which then
 * evicts from the small queue).  Set lock held.
 */
void vc_lru_replace(struct vc_cache *c, struct vc_set *s, u32 old, u32 nw)
{
	u16 i = (u16)(nw - s->first), p, n;
	u64 pol;
	bool sm;

	vc_lru_unlink(c, s, nw);
	p = c->prev[old];
	n = c->next[old];
	pol = c->words[old] & B_POL_MASK;
	sm = pol & B_SMALL;
	c->prev[nw] = p;
	c->next[nw] = n;
	if (p != VC_NIL)
		c->next[s->first + p] = i;
	else if (sm)
		s->shead = i;
	else
		s->head = i;
	if (n != VC_NIL)
		c->prev[s->first + n] = i;
	else if (sm)
		s->stail = i;
	else
		s->tail = i;
	/* the small queue's count is unchanged: one block for another */
	vc_store_u64(&c->words[nw], (c->words[nw] & ~B_POL_MASK) | pol);
	vc_store_u64(&c->words[old], c->words[old] & ~B_POL_MASK);
	c->prev[old] = VC_NIL;
	c->next[old] = VC_NIL;
	vc_lru_push_head(c, s, old);
}

void vc_lru_touch(struct vc_cache *c, struct vc_set *s, u32 blk)
{
	u64 w;

	switch (s->pol) {
	case VC_POLICY_LRU:
		if (s->head == (u16)(blk - s->first))
			return;
		vc_lru_unlink(c, s, blk);
		vc_lru_push_head(c, s, blk);
		return;
	case VC_POLICY_FIFO:
		return;
	default:
		/* S3-FIFO, TinyLFU: lazy promotion, a saturating count */
		w = c->words[blk];
		if ((w & B_FREQ_MASK) != B_FREQ_MASK)
			vc_store_u64(&c->words[blk], w + B_FREQ_ONE);
		if (s->pol == VC_POLICY_TINYLFU)
			vc_pol_hit(c, s, w);
	}
}

#define VC_VICTIM_SCAN	1024
#define VC_TAIL_DIRTY	32	/* dirty blocks skipped: ask for cleaning */

/*
 * Find a block to reuse: from the tail (oldest), the first that is
 * invalid or clean, idle, and whose record on flash cannot say dirty.
 * Returns ~0u if none within VC_VICTIM_SCAN candidates.
 */
u32 vc_find_victim(struct vc_cache *c, struct vc_set *s)
{
	u16 i = s->tail;
	u32 n = 0, dirty = 0;

	if (s->pol >= VC_POLICY_S3FIFO)
		return vc_pol_victim(c, s);

	while (i != VC_NIL && n++ < VC_VICTIM_SCAN) {
		u32 blk = s->first + i;
		u64 w = c->words[blk];

		if (!(w & (B_DIRTY | B_FLASHDIRTY | B_BUSY | B_CLEANING |
			   B_READERS_MASK | B_TOMB))) {
			if (dirty >= VC_TAIL_DIRTY &&
			    !vc_atomic_cmpxchg(&c->tail_pressure, 0, 1))
				vc_cache_kick_cleaner(c);
			return blk;
		}
		if (w & B_DIRTY)
			dirty++;
		i = c->prev[blk];
	}
	if (!vc_atomic_cmpxchg(&c->tail_pressure, 0, 1))
		vc_cache_kick_cleaner(c);
	return ~0u;
}

/*
 * Second-hit admission: true if @key missed recently (its fingerprint is
 * in the set's ghost table), else remember it and return false.
 */
bool vc_ghost_admit(struct vc_cache *c, struct vc_set *s, u64 key)
{
	u64 h = vc_hash64((key & B_KEY_MASK) ^ 0x9e3779b97f4a7c15ULL);
	u32 idx = (u32)h & s->gmask;
	u8 tag = (u8)(h >> 56) | 1;

	(void)c;
	if (s->ghost[idx] == tag) {
		s->ghost[idx] = 0;
		return true;
	}
	s->ghost[idx] = tag;
	return false;
}

static void flushme_done(struct vc_cache *c)
{
	if (vc_atomic64_add_return(&c->flush_remaining, -1) <= 0)
		vc_waitq_wake_all(&c->flush_wq);
}

/*
 * Change a block's word, keeping every counter in step.  Set lock held.
 */
void vc_block_set_word(struct vc_cache *c, struct vc_set *s, u32 blk, u64 w)
{
	u64 old = c->words[blk];
	bool ov, nv;
	bool od, nd, ofd, nfd;

	w = (w & ~B_POL_MASK) | (old & B_POL_MASK);	/* vc_policy.c's */
	ov = old & B_VALID;
	nv = w & B_VALID;
	od = ov && (old & B_DIRTY);
	nd = nv && (w & B_DIRTY);
	if (ov != nv) {
		s->nr_valid += nv ? 1 : -1;
		vc_atomic64_add(&c->nr_valid, nv ? 1 : -1);
	}
	if (od) {
		s->nr_dirty--;
		vc_atomic64_dec(&c->nr_dirty);
		vc_atomic64_dec(&c->epoch_dirty[(old & B_EPOCH_MASK) >> B_EPOCH_SHIFT]);
		vc_atomic64_dec(&c->bdev[vc_key_dev(old)].nr_dirty);
	}
	if (nd && (!od || ((old ^ w) & B_KEY_MASK)))
		vc_dirtymap_mark(c, w);
	if (nd) {
		s->nr_dirty++;
		vc_atomic64_inc(&c->nr_dirty);
		vc_atomic64_inc(&c->epoch_dirty[(w & B_EPOCH_MASK) >> B_EPOCH_SHIFT]);
		vc_atomic64_inc(&c->bdev[vc_key_dev(w)].nr_dirty);
	}
	if ((old ^ w) & B_FLASHDIRTY)
		vc_atomic64_add(&c->nr_flashdirty, (w & B_FLASHDIRTY) ? 1 : -1);
	/*
	 * Per device: records that may say DIRTY (a lost marker's says LOST:
	 * it serves nothing).  Never reused while FLASHDIRTY: the key is the
	 * same on both sides.
	 */
	ofd = (old & (B_FLASHDIRTY | B_LOST)) == B_FLASHDIRTY;
	nfd = (w & (B_FLASHDIRTY | B_LOST)) == B_FLASHDIRTY;
	if (ofd != nfd)
		vc_atomic64_add(&c->bdev[vc_key_dev(nfd ? w : old)].nr_flashdirty,
				nfd ? 1 : -1);
	if ((old ^ w) & B_LOST) {
		vc_atomic64_add(&c->nr_lost, (w & B_LOST) ? 1 : -1);
		vc_atomic64_add(&c->bdev[vc_key_dev((w & B_LOST) ? w : old)].nr_lost,
				(w & B_LOST) ? 1 : -1);
	}
	vc_store_u64(&c->words[blk], w);
	if ((old & B_FLUSHME) && !(w & B_FLUSHME))
		flushme_done(c);
}
