// SPDX-License-Identifier: GPL-2.0
/*
 * blocks.c - block access streams, exact OPT and the reference LRU/FIFO.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"

#define NONE UINT32_MAX

double vs_hit_pct(uint64_t hits, uint64_t acc)
{
	return acc ? 100.0 * (double)hits / (double)acc : 0.0;
}

/* ------------------------------------------- dense ids: open addressing */

struct idmap {
	uint64_t *key;
	uint32_t *val;
	size_t mask;
	uint32_t n;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int idmap_init(struct idmap *m, size_t hint)
{
	size_t cap = 1024;

	while (cap < hint * 2)
		cap <<= 1;
	m->key = malloc(cap * sizeof(*m->key));
	m->val = malloc(cap * sizeof(*m->val));
	if (!m->key || !m->val)
		return -1;
	memset(m->val, 0xff, cap * sizeof(*m->val));
	m->mask = cap - 1;
	m->n = 0;
	return 0;
}

static int idmap_grow(struct idmap *m)
{
	struct idmap nm;
	size_t i, j;

	if (idmap_init(&nm, (m->mask + 1)))
		return -1;
	for (i = 0; i <= m->mask; i++) {
		if (m->val[i] == NONE)
			continue;
		for (j = mix(m->key[i]) & nm.mask; nm.val[j] != NONE;
		     j = (j + 1) & nm.mask)
			;
		nm.key[j] = m->key[i];
		nm.val[j] = m->val[i];
	}
	nm.n = m->n;
	free(m->key);
	free(m->val);
	*m = nm;
	return 0;
}

/* Returns the id of key, creating it; NONE when memory runs out. */
static uint32_t idmap_get(struct idmap *m, uint64_t key)
{
	size_t j;

	if ((size_t)m->n * 2 >= m->mask && idmap_grow(m))
		return NONE;
	for (j = mix(key) & m->mask; m->val[j] != NONE; j = (j + 1) & m->mask)
		if (m->key[j] == key)
			return m->val[j];
	if (m->n == NONE - 1)
		return NONE;
	m->key[j] = key;
	m->val[j] = m->n;
	return m->n++;
}

static void idmap_free(struct idmap *m)
{
	free(m->key);
	free(m->val);
}

int vs_blocks_build(const struct vs_trace *t, uint32_t block_size,
		    struct vs_blocks *b)
{
	struct idmap m;
	size_t i, cap = 0;
	uint8_t *rw = NULL;
	size_t rwcap = 0;
	int rc = -1;

	memset(b, 0, sizeof(*b));
	b->block_size = block_size;
	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];

		if (r->op != VS_FLUSH && r->len)
			cap += (r->off + r->len - 1) / block_size -
			       r->off / block_size + 1;
	}
	b->id = malloc((cap ? cap : 1) * sizeof(*b->id));
	b->op = malloc(cap ? cap : 1);
	if (!b->id || !b->op || idmap_init(&m, 4096))
		goto out;
	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];
		uint64_t blk, last;

		if (r->op == VS_FLUSH || !r->len)
			continue;
		last = (r->off + r->len - 1) / block_size;
		for (blk = r->off / block_size; blk <= last; blk++) {
			uint32_t id = idmap_get(&m, (uint64_t)r->dev << 52 |
						    blk);

			if (id == NONE)
				goto out_map;
			if (id >= rwcap) {
				size_t nc = rwcap ? rwcap * 2 : 4096;
				uint8_t *n = realloc(rw, nc);

				if (!n)
					goto out_map;
				memset(n + rwcap, 0, nc - rwcap);
				rw = n;
				rwcap = nc;
			}
			if (r->op != VS_DISCARD && !rw[id]) {
				rw[id] = 1;
				b->nids_rw++;
			}
			b->id[b->n] = id;
			b->op[b->n++] = r->op;
		}
	}
	b->nids = m.n;
	rc = 0;
out_map:
	idmap_free(&m);
out:
	free(rw);
	if (rc)
		vs_blocks_free(b);
	return rc;
}

void vs_blocks_free(struct vs_blocks *b)
{
	free(b->id);
	free(b->op);
	memset(b, 0, sizeof(*b));
}

static void count(struct vs_hits *h, uint8_t op, bool hit)
{
	if (op == VS_READ) {
		h->read_acc++;
		h->read_hits += hit;
	} else {
		h->write_acc++;
		h->write_hits += hit;
	}
}

/* ------------------------------------------------------------------ OPT */

struct hent {
	uint64_t next;		/* index of the block's next access */
	uint32_t id;
	uint32_t gen;		/* valid while it equals gen[id] */
};

struct heap {
	struct hent *e;
	size_t n;
};

static void heap_push(struct heap *h, struct hent v)
{
	size_t i = h->n++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (h->e[p].next >= v.next)
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = v;
}

static void heap_pop(struct heap *h)
{
	struct hent v = h->e[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->e[c + 1].next > h->e[c].next)
			c++;
		if (h->e[c].next <= v.next)
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	if (h->n)
		h->e[i] = v;
}

int vs_opt(const struct vs_blocks *b, uint64_t cache_blocks, int bypass,
	   struct vs_hits *hits)
{
	const uint64_t inf = UINT64_MAX;
	uint64_t *next = malloc((b->n ? b->n : 1) * sizeof(*next));
	uint64_t *pos = malloc((b->nids ? b->nids : 1) * sizeof(*pos));
	uint32_t *gen = calloc(b->nids ? b->nids : 1, sizeof(*gen));
	bool *in = calloc(b->nids ? b->nids : 1, sizeof(*in));
	struct heap h = { .e = malloc((b->n ? b->n : 1) * sizeof(*h.e)) };
	uint64_t used = 0;
	size_t i;
	int rc = -1;

	memset(hits, 0, sizeof(*hits));
	if (!next || !pos || !gen || !in || !h.e)
		goto out;
	for (i = 0; i < b->nids; i++)
		pos[i] = inf;
	for (i = b->n; i-- > 0;) {
		uint32_t id = b->id[i];

		if (b->op[i] == VS_DISCARD) {
			pos[id] = inf;	/* a discard ends the block's life */
		} else {
			next[i] = pos[id];
			pos[id] = i;
		}
	}
	for (i = 0; i < b->n; i++) {
		uint32_t id = b->id[i];
		uint8_t op = b->op[i];

		if (op == VS_DISCARD) {
			if (in[id]) {
				in[id] = false;
				gen[id]++;
				used--;
			}
			continue;
		}
		if (in[id]) {
			count(hits, op, true);
			gen[id]++;
			heap_push(&h, (struct hent){ next[i], id, gen[id] });
			continue;
		}
		count(hits, op, false);
		if (!cache_blocks)
			continue;
		if (used == cache_blocks) {
			/* drop stale entries, then the furthest next use */
			while (!in[h.e[0].id] || h.e[0].gen != gen[h.e[0].id])
				heap_pop(&h);
			if (bypass && next[i] >= h.e[0].next)
				continue;
			in[h.e[0].id] = false;
			gen[h.e[0].id]++;
			heap_pop(&h);
			used--;
		}
		in[id] = true;
		gen[id]++;
		used++;
		hits->fills++;
		heap_push(&h, (struct hent){ next[i], id, gen[id] });
	}
	rc = 0;
out:
	free(next);
	free(pos);
	free(gen);
	free(in);
	free(h.e);
	return rc;
}

/* ------------------------------------------------------ reference cache */

const char *const vs_ref_names[VS_REF_NR] = {
	"ref_fifo", "ref_lru", "ref_lru_2hit", "ref_lru_tinylfu", "ref_lfu",
};

/* min-heap of (count << 40 | stamp, id) for the exact LFU */
struct lheap {
	uint64_t *k;
	uint32_t *id;
	size_t n;
};

static void lheap_push(struct lheap *h, uint64_t k, uint32_t id)
{
	size_t i = h->n++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (h->k[p] <= k)
			break;
		h->k[i] = h->k[p];
		h->id[i] = h->id[p];
		i = p;
	}
	h->k[i] = k;
	h->id[i] = id;
}

static void lheap_pop(struct lheap *h)
{
	uint64_t k = h->k[--h->n];
	uint32_t id = h->id[h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->k[c + 1] < h->k[c])
			c++;
		if (k <= h->k[c])
			break;
		h->k[i] = h->k[c];
		h->id[i] = h->id[c];
		i = c;
	}
	h->k[i] = k;
	h->id[i] = id;
}

/*
 * Exact LFU with the whole history: every access of every block counted
 * from the start, never aged; once full, a miss is admitted only if its
 * block was accessed more often than the least-counted resident block
 * (the oldest of those), which it replaces.  What frequency alone can do
 * online with unlimited memory.
 */
static int lfu_exact(const struct vs_blocks *b, uint64_t cache_blocks,
		     struct vs_hits *hits)
{
	size_t nids = b->nids ? b->nids : 1, i;
	uint32_t *cnt = calloc(nids, sizeof(*cnt));
	uint64_t *stamp = calloc(nids, sizeof(*stamp));
	bool *in = calloc(nids, sizeof(*in));
	struct lheap h = { malloc((b->n + 1) * sizeof(uint64_t)),
			   malloc((b->n + 1) * sizeof(uint32_t)), 0 };
	uint64_t used = 0, st = 0;

	memset(hits, 0, sizeof(*hits));
	if (!cnt || !stamp || !in || !h.k || !h.id) {
		free(cnt);
		free(stamp);
		free(in);
		free(h.k);
		free(h.id);
		return -1;
	}
	for (i = 0; i < b->n; i++) {
		uint32_t id = b->id[i];
		uint8_t op = b->op[i];

		if (op == VS_DISCARD) {
			if (in[id]) {
				in[id] = false;
				used--;
			}
			continue;
		}
		cnt[id]++;
		if (in[id]) {
			count(hits, op, true);
			stamp[id] = ++st;
			lheap_push(&h, (uint64_t)cnt[id] << 40 | st, id);
			continue;
		}
		count(hits, op, false);
		if (!cache_blocks)
			continue;
		if (used == cache_blocks) {
			uint32_t v;

			/* drop stale entries: the top is the real minimum */
			while (!in[h.id[0]] ||
			       (h.k[0] & ((1ull << 40) - 1)) != stamp[h.id[0]])
				lheap_pop(&h);
			v = h.id[0];
			if (cnt[id] <= cnt[v])
				continue;
			lheap_pop(&h);
			in[v] = false;
			used--;
		}
		in[id] = true;
		used++;
		hits->fills++;
		stamp[id] = ++st;
		lheap_push(&h, (uint64_t)cnt[id] << 40 | st, id);
	}
	free(cnt);
	free(stamp);
	free(in);
	free(h.k);
	free(h.id);
	return 0;
}

int vs_refsim(const struct vs_blocks *b, uint64_t cache_blocks,
	      enum vs_ref_policy pol, struct vs_hits *hits)
{
	size_t nids = b->nids ? b->nids : 1;
	uint32_t *prev = malloc(nids * sizeof(*prev));
	uint32_t *nxt = malloc(nids * sizeof(*nxt));
	bool *in = calloc(nids, sizeof(*in));
	/* admission models: ghost stamps or access counts, per block */
	uint64_t *aux = calloc(nids, sizeof(*aux));
	uint32_t head = NONE, tail = NONE;	/* head: next victim */
	uint64_t used = 0, gseq = 0, sample = 0;
	size_t i, j;

	memset(hits, 0, sizeof(*hits));
	if (pol == VS_REF_LFU) {
		free(prev);
		free(nxt);
		free(in);
		free(aux);
		return lfu_exact(b, cache_blocks, hits);
	}
	if (!prev || !nxt || !in || !aux) {
		free(prev);
		free(nxt);
		free(in);
		free(aux);
		return -1;
	}

#define UNLINK(x) do {							\
		if (prev[x] != NONE) nxt[prev[x]] = nxt[x]; else head = nxt[x]; \
		if (nxt[x] != NONE) prev[nxt[x]] = prev[x]; else tail = prev[x]; \
	} while (0)
#define APPEND(x) do {							\
		prev[x] = tail; nxt[x] = NONE;				\
		if (tail != NONE) nxt[tail] = x; else head = x;		\
		tail = x;						\
	} while (0)

	for (i = 0; i < b->n; i++) {
		uint32_t id = b->id[i];
		uint8_t op = b->op[i];

		if (op == VS_DISCARD) {
			if (in[id]) {
				UNLINK(id);
				in[id] = false;
				used--;
			}
			continue;
		}
		if (pol == VS_REF_LRU_TLFU) {
			aux[id]++;
			if (++sample == 10 * cache_blocks) {
				sample = 0;
				for (j = 0; j < b->nids; j++)
					aux[j] >>= 1;
			}
		}
		if (in[id]) {
			count(hits, op, true);
			if (pol != VS_REF_FIFO) {
				UNLINK(id);
				APPEND(id);
			}
			continue;
		}
		count(hits, op, false);
		if (!cache_blocks)
			continue;
		if (used == cache_blocks && pol == VS_REF_LRU_2HIT) {
			if (!aux[id] || gseq - aux[id] >= cache_blocks) {
				aux[id] = ++gseq;	/* remember, refuse */
				continue;
			}
			aux[id] = 0;
		}
		if (used == cache_blocks && pol == VS_REF_LRU_TLFU &&
		    aux[id] <= aux[head])
			continue;
		if (used == cache_blocks) {
			uint32_t v = head;

			UNLINK(v);
			in[v] = false;
			used--;
		}
		APPEND(id);
		in[id] = true;
		used++;
		hits->fills++;
	}
#undef UNLINK
#undef APPEND
	free(prev);
	free(nxt);
	free(in);
	free(aux);
	return 0;
}

static const uint32_t *oracle_cnt;

static int oracle_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (oracle_cnt[x] != oracle_cnt[y])
		return oracle_cnt[x] > oracle_cnt[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

int vs_oracle_lfu(const struct vs_blocks *b, uint64_t cache_blocks,
		  struct vs_hits *h)
{
	uint32_t *cnt, *ids;
	uint8_t *state;		/* 0 not kept, 1 kept, 2 kept and fetched */
	size_t i;
	uint32_t k;

	memset(h, 0, sizeof(*h));
	cnt = calloc(b->nids ? b->nids : 1, sizeof(*cnt));
	ids = malloc((b->nids ? b->nids : 1) * sizeof(*ids));
	state = calloc(b->nids ? b->nids : 1, 1);
	if (!cnt || !ids || !state) {
		free(cnt);
		free(ids);
		free(state);
		return -1;
	}
	for (i = 0; i < b->n; i++)
		if (b->op[i] != VS_DISCARD)
			cnt[b->id[i]]++;
	for (k = 0; k < b->nids; k++)
		ids[k] = k;
	oracle_cnt = cnt;
	qsort(ids, b->nids, sizeof(*ids), oracle_cmp);
	for (k = 0; k < b->nids && k < cache_blocks; k++)
		state[ids[k]] = 1;
	for (i = 0; i < b->n; i++) {
		uint32_t id = b->id[i];
		bool hit;

		if (b->op[i] == VS_DISCARD)
			continue;
		hit = state[id] == 2;
		if (state[id] == 1) {
			state[id] = 2;
			h->fills++;
		}
		if (b->op[i] == VS_READ) {
			h->read_acc++;
			h->read_hits += hit;
		} else {
			h->write_acc++;
			h->write_hits += hit;
		}
	}
	free(cnt);
	free(ids);
	free(state);
	return 0;
}
