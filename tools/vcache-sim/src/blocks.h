/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blocks.h - a trace cut into cache-block accesses, and the models that run
 * on it: the exact OPT (Belady) hit ratio and a reference LRU/FIFO cache
 * used to cross-check the engine.
 */
#ifndef VS_BLOCKS_H
#define VS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* One access to one cache block; ids are dense 0..nids-1. */
struct vs_blocks {
	uint32_t *id;
	uint8_t *op;		/* VS_READ, VS_WRITE or VS_DISCARD */
	size_t n;
	uint32_t nids;		/* distinct blocks */
	uint32_t nids_rw;	/* distinct blocks read or written */
	uint32_t block_size;
};

/*
 * Cut every read, write and discard of t into block_size accesses (a request
 * touching part of a block counts as an access to that block).  Flushes
 * carry no block.  Returns 0, or -1 when memory runs out.
 */
int vs_blocks_build(const struct vs_trace *t, uint32_t block_size,
		    struct vs_blocks *b);
void vs_blocks_free(struct vs_blocks *b);

struct vs_hits {
	uint64_t read_acc, read_hits;
	uint64_t write_acc, write_hits;
	uint64_t fills;		/* blocks written into the cache by misses */
};

/*
 * Exact OPT (Belady's MIN) for a cache of cache_blocks blocks, demand fetch:
 * every miss, read or write, is admitted (evicting the resident block whose
 * next access is furthest away; a block whose next event is a discard, or
 * that is never accessed again, is the first victim).  A write is an access
 * like a read: a hit when the block is resident, otherwise a miss that
 * allocates (write-allocate, as in write-back).  A discard removes the block
 * and is not an access.  O(n log n).
 *
 * With bypass != 0 the model may also decline to admit a missed block whose
 * next access is further away than every resident block's (OPT with
 * optional admission, the bound for admission policies).
 */
int vs_opt(const struct vs_blocks *b, uint64_t cache_blocks, int bypass,
	   struct vs_hits *h);

/*
 * Static oracle LFU: the cache holds, from the start, the cache_blocks
 * blocks that the whole trace accesses most (reads and writes; ties to
 * the lower id) and nothing else.  Each block's first access is still a
 * miss (it has to be fetched once).  On a stationary trace no online
 * policy does better, and OPT lies above it.  Discards are ignored.
 */
int vs_oracle_lfu(const struct vs_blocks *b, uint64_t cache_blocks,
		  struct vs_hits *h);

enum vs_ref_policy {
	VS_REF_FIFO,
	VS_REF_LRU,
	VS_REF_LRU_2HIT,	/* LRU, read miss admitted on its 2nd miss */
	VS_REF_LRU_TLFU,	/* LRU, TinyLFU-style frequency admission */
	VS_REF_LFU,		/* exact LFU over the whole history */
	VS_REF_NR
};

extern const char *const vs_ref_names[VS_REF_NR];

/*
 * Reference caches of cache_blocks blocks; discards invalidate.
 * Independent of the engine: FIFO and LRU (every miss admitted) check it
 * exactly.  The two admission models show what admission could reach,
 * with exact bookkeeping the engine cannot afford in 16 bytes per block;
 * in both, once the cache is full, a miss (read, or write: a refused write
 * goes around the cache) is admitted only:
 *   LRU_2HIT  if the block missed before within the last cache_blocks
 *             refused misses (an exact ghost list);
 *   LRU_TLFU  if the block was accessed more often than the LRU victim,
 *             counting every access, all counts halved every
 *             10 * cache_blocks accesses;
 *   LFU       if the block was accessed more often (since the start of
 *             the trace, never aged) than the least-counted resident
 *             block, which it replaces: what frequency can do online
 *             with unlimited memory (the static oracle knows the counts
 *             in advance).
 */
int vs_refsim(const struct vs_blocks *b, uint64_t cache_blocks,
	      enum vs_ref_policy pol, struct vs_hits *h);

/* Percent hits over all accesses (0 when there are none). */
double vs_hit_pct(uint64_t hits, uint64_t acc);

#endif
