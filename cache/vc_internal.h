/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal structures of the vcache engine.
 *
 * DESIGN
 *
 * Blocks and sets.  The cache device holds nr_blocks cache blocks.  They
 * are split into nr_sets sets of at most VC_MAX_WAYS consecutive blocks
 * (sizes differ by at most one).  A backing block (dev, lba) may live only
 * in set vc_set_of(key) (a fixed hash, part of the on-flash format), so a
 * set is a self-contained cache: its own hash table, its own replacement
 * list, its own lock.  With at most 32768 ways per set, links inside a set
 * are 16-bit, which is what keeps the RAM per block under 16 bytes:
 *
 *   u64 word[]     8 B   key (dev, lba) + state bits, see B_* below
 *   u16 prev[]     2 B   replacement list (head = most recent); S3-FIFO
 *   u16 next[]     2 B   keeps its small queue as a second list on them
 *   u16 hnext[]    2 B   hash chain inside the set
 *   u16 heads[]  <=0.5 B hash heads, ways/4 rounded down to a power of 2
 *                        (chains of 4 to 8 blocks)
 *   u8 ghost[]    <=1 B  admission filter: 8-bit fingerprints of recent
 *                        refused misses, ways rounded down to a power of 2
 *                        (S3-FIFO: also its ghost queue; TinyLFU: its
 *                        count-min sketch, two 4-bit counters a byte)
 *   md state    5/63 B   per metadata sector: started/done counters, flags
 *
 * Sets are large (tens of thousands of blocks), so per-set LRU behaves like
 * global LRU (keys are spread by a hash); a cache under 32768 blocks is a
 * single set, i.e. exactly global LRU/FIFO.
 *
 * Metadata on flash (vc_format.h): one 64-bit record per block, 63 per
 * 512-byte sector.  Writes of one sector are serialised (at most one in
 * flight; changes during a write mark it for another).  A request needing
 * its record durable waits for "write number started+1" of the sector.
 *
 * Block states (bits of word[]):
 *   VALID       holds (dev, lba)
 *   DIRTY       newer than the backing device; the record should say dirty
 *   FLASHDIRTY  the record on flash may say dirty: never reuse the block
 *               for other data while set
 *   BUSY        exclusive operation (fill, write, invalidation) in flight;
 *               other requests for the block wait on the deferred list
 *   CLEANING    its write home (the cleaner's) is in flight: reads and
 *               write-back writes proceed; what would drop the block or
 *               send host data home (discards, write-through, a failed
 *               write's fallback) waits, so that no older version lands
 *               home after a newer one
 *   REDIRTY     a host write left the block dirty (set by every such
 *               write, cleared when the cleaner takes the block): the
 *               cleaner marks a block clean only if it is not set once
 *               the batch's backing FLUSH is done (bcache's approach: a
 *               write racing write-back re-dirties, never waits)
 *   FLUSHME     part of the running flush-on-demand
 *   EPOCH       dirty-age epoch (3 bits) of the first dirtying write
 *   READERS     reads from the cache block in flight (3 bits)
 *   SMALL, FREQ replacement state owned by vc_policy.c (on the S3-FIFO
 *               small queue; 2-bit access count): vc_block_set_word()
 *               keeps them
 *   TOMB        invalidated while its record may say dirty: kept in the
 *               hash (BUSY) until a metadata write clears the record, so
 *               the backing block is never cached twice on flash; if that
 *               write fails, kept without BUSY ("failed tombstone"):
 *               reads go to the backing device, writes and discards
 *               retry the record write first
 *   LOST        with TOMB: the block's dirty data was lost (cache read
 *               error, or its write home failed).  It stays in the hash
 *               as a marker: reads of the backing block fail with EIO
 *               (the backing device holds older data) until a write
 *               covers the whole block or a discard does; never reused
 *               meanwhile.  Format 3 persists it as a LOST record
 *               (FLASHDIRTY then means "the record is not clear"); a
 *               whole-block write or discard clears that record first
 *               (UNLOSE).  Format 2 caches keep it in RAM only
 *
 * LOCK ORDER (take left before right; never hold two of one kind):
 *
 *   ctl_mutex  ->  set->lock  ->  md_lock[i]  ->  defer_lock
 *                  set->lock  ->  rec_lock  (a leaf: an out-of-place
 *                                 write's switch of two records)
 *                  set->lock  ->  clean_lock  (parking a request:
 *                                 vc_clean_park(), the write throttle)
 *   commit_lock  (vc_commit.c) is taken alone, never with another
 *
 *   ctl_mutex   (sleeping) control operations: mode/policy changes, attach,
 *               detach, flush start, shutdown.
 *   set->lock   the set's words/links/heads/ghost, its counters.
 *   rec_lock    a record sector's build (build_rec_sector()) against the
 *               switch of an out-of-place write (vc_write.c), which
 *               changes two words of one sector: a sector built from one
 *               old word and one new would name the block twice or not at
 *               all.
 *   md_lock[i]  record units s with s % VC_MD_LOCKS == i: md_started,
 *               md_done, md_flags, and waiter bucket i.
 *   clean_lock  the cleaner's batch state (runs, in-flight count).
 *   defer_lock  the deferred request list.
 *   stats are atomics, lock-free.  Device submission and host end_io are
 *   never called with any engine lock held.
 */
#ifndef VC_INTERNAL_H
#define VC_INTERNAL_H

#include "vc_engine.h"
#include "vc_format.h"
#include "vc_seq.h"
#include "vc_pidlist.h"

#define VC_MAX_WAYS		32768u
#define VC_NIL			0xffffu
#define VC_MD_LOCKS		64u
#define VC_MAX_WB_IO_KIB	4096u	/* largest write-back I/O */
#define VC_RA_DEF_KIB		64u	/* readahead window (vc_ra.c) */
#define VC_RA_MAX_KIB		1024u
/* writes smaller than this are never bypassed as sequential (bytes) */
#define VC_SEQ_MIN_WRITE_BYPASS	(64u << 10)

/* block word layout */
#define B_LBA_BITS		42
#define B_LBA_MASK		((1ULL << B_LBA_BITS) - 1)
#define B_DEV_SHIFT		42
#define B_DEV_MASK		0xfULL
#define B_KEY_MASK		((1ULL << 46) - 1)
#define B_VALID			(1ULL << 46)
#define B_DIRTY			(1ULL << 47)
#define B_FLASHDIRTY		(1ULL << 48)
#define B_BUSY			(1ULL << 49)
#define B_CLEANING		(1ULL << 50)
#define B_REDIRTY		(1ULL << 51)
#define B_FLUSHME		(1ULL << 52)
#define B_EPOCH_SHIFT		53
#define B_EPOCH_MASK		(7ULL << B_EPOCH_SHIFT)
#define B_READERS_SHIFT		56
#define B_READERS_MASK		(7ULL << B_READERS_SHIFT)
#define B_READER_ONE		(1ULL << B_READERS_SHIFT)
#define B_MAX_READERS		7
#define B_SMALL			(1ULL << 59)	/* policy: on the small queue */
#define B_TOMB			(1ULL << 60)	/* invalid, record pending */
#define B_LOST			(1ULL << 61)	/* with TOMB: data lost, EIO */
/*
 * With TOMB | LOST (a lost marker, never VALID): its record is being
 * cleared (a whole-block write or discard supersedes the loss); the
 * marker goes once that record write is durable, stays if it fails.
 */
#define B_UNLOSE		B_REDIRTY
/*
 * With TOMB alone (not LOST, not VALID): the block an out-of-place write
 * left (vc_write.c); once its clear record is durable it becomes its
 * record sector's spare.  A spare is BUSY | REDIRTY and nothing else (no
 * key, not VALID): no request owns it and no victim search takes it; the
 * next out-of-place write in its sector does.  RAM only (a load starts
 * with none); never waited for as busy (no_busy()).
 */
#define B_OOP_OLD		B_REDIRTY
#define B_SPARE			(B_BUSY | B_REDIRTY)
#define B_FREQ_SHIFT		62		/* policy: 2-bit access count */
#define B_FREQ_MASK		(3ULL << B_FREQ_SHIFT)
#define B_FREQ_ONE		(1ULL << B_FREQ_SHIFT)
/* owned by vc_policy.c: vc_block_set_word() keeps them */
#define B_POL_MASK		(B_SMALL | B_FREQ_MASK)

#define VC_NR_EPOCHS		8
#define VC_EPOCH_DIV		4	/* epoch length = max age / 4 */
#define VC_EPOCH_OVERDUE	3	/* clean epochs this many behind */

static inline u64 vc_mkkey(u32 dev, u64 lba)
{
	return ((u64)dev << B_DEV_SHIFT) | (lba & B_LBA_MASK);
}

static inline u32 vc_key_dev(u64 w) { return (u32)((w >> B_DEV_SHIFT) & B_DEV_MASK); }
static inline u64 vc_key_lba(u64 w) { return w & B_LBA_MASK; }

/* 64-bit mixer (murmur3 finalizer): part of the on-flash format. */
static inline u64 vc_hash64(u64 k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

struct vc_req;
struct vc_clean_flush;

/* A waiter for a record unit write. */
struct vc_md_waiter {
	struct vc_md_waiter *next;
	u64 sector;		/* index of the record unit */
	u16 target;		/* write number that satisfies it */
	void (*fn)(struct vc_md_waiter *w, int err);
};

/* A waiter for a group commit (vc_commit.c). */
struct vc_commit_waiter {
	struct vc_commit_waiter *next;
	u32 target;		/* commit number that satisfies it */
	void (*fn)(struct vc_commit_waiter *w, int err);
};

/* Waits until a backing device has no dirty block (vc_clean.c). */
struct vc_drain_waiter {
	struct vc_drain_waiter *next;
	u32 dev;
	int err;
	void (*fn)(struct vc_drain_waiter *w, int err);
};

/* A record write of a commit in flight. */
struct vc_commit_slot {
	struct vc_md_waiter mdw;
	struct vc_cache *c;
};

#define VC_COMMIT_SLOTS	64	/* record writes in flight per commit */

struct vc_set {
	vc_spinlock_t lock;
	u32 first;		/* first block */
	u32 ways;
	u32 hmask;		/* buckets - 1 */
	u32 gmask;		/* ghost entries - 1 */
	u16 *heads;
	u8 *ghost;
	u16 head, tail;		/* replacement list: head = newest */
	u16 shead, stail;	/* S3-FIFO small queue (same links) */
	u32 nr_small;		/* blocks on the small queue */
	u32 samples;		/* TinyLFU: sketch increments since aging */
	u8 pol;			/* enum vc_policy this set follows */
	u32 nr_valid;
	u32 nr_dirty;
	/*
	 * Backing-only host writes into this set: in flight, and started
	 * ever.  A fill does not start while one is in flight and is not
	 * installed if one started meanwhile (it may have read old data).
	 */
	u32 byp_inflight;
	u32 byp_gen;
	/*
	 * Fills reading their block from the backing device (BUSY): a
	 * write-back write of the whole block takes it over instead of
	 * waiting for the disk (the fill then only serves its reader).
	 */
	struct vc_req *fills;
};

/*
 * Write-back order: per backing device, a bitmap of its chunks (the
 * 1 << set_shift blocks that share a set) that may hold dirty blocks.
 * vc_block_set_word() sets a chunk's bit when one of its blocks turns
 * dirty; the cleaner clears it when it finds the chunk clean, both under
 * that set's lock.  The cleaner sweeps the bitmaps from a cursor, so that
 * write-back goes in LBA order across batches (an elevator), not in the
 * sets' hash order.  Built at attach; a bigger one replaces it when the
 * device grew, the one replaced is kept (lock-free readers) until the
 * cache is freed.  None with set_shift 0 (format 1): the cleaner scans
 * the sets then.
 */
struct vc_dirtymap {
	struct vc_dirtymap *retired;	/* the one this one replaced */
	u64 nbits;
	vc_atomic64_t w[];
};

/* A clean block's home sector and crc32c (vc_verify.c). */
struct vc_fingerprint {
	u64 sector;
	u32 crc;
};

struct vc_bdev_slot {
	struct vc_dev *dev;	/* NULL while not attached */
	u64 dmap;		/* struct vc_dirtymap *, vc_load_u64() */
	bool in_use;		/* slot reserved on flash */
	u8 uuid[48];
	u8 label[VC_LABEL_LEN];
	u64 nr_sectors;
	vc_atomic64_t nr_dirty;
	vc_atomic_t inflight;	/* host requests in flight */
	/*
	 * Host writes completed on the device, and how many of them its
	 * last successful FLUSH covered: equal, a host FLUSH needs none.
	 */
	vc_atomic64_t home_writes, home_flushed;
	vc_atomic64_t last_host_io_ns;	/* any host request to it */
	vc_atomic64_t nr_flashdirty;	/* its records that may say DIRTY */
	vc_atomic64_t nr_lost;		/* its lost markers */
	vc_atomic_t present;	/* dev set: for lock-free readers (cleaner) */
	bool parked;		/* detach with KEEP under way: no write-back */
	/*
	 * Clean blocks dropped when it left (detach with KEEP, unplug), a
	 * few of them as home sector and crc32c: compared with a disk that
	 * claims the slot (vc_verify.c).  RAM only.
	 */
	struct vc_fingerprint fp[VC_VERIFY_SAMPLES];
	u32 nr_fp;
};

/* One merged write-back I/O. */
struct vc_run {
	struct vc_cache *c;
	u32 first;		/* index into clean.cand */
	u32 nr;			/* blocks */
	struct vc_buf *buf;
	vc_atomic_t pending;
	int err;
	u64 start_ns;		/* backing write submitted */
	bool reserved;		/* buf and rio are the cleaner's reserve */
	struct vc_dev_io wio;	/* backing write */
	struct vc_dev_io *rio;	/* cache reads, nr of them */
};

struct vc_cand {
	u64 key;
	u32 blk;
	u8 trigger;
	u8 err;			/* 1: its write-back failed; CAND_NOMEM */
	u8 lost;
};
/* vc_cand.err: not written back for lack of memory (no failure) */
#define CAND_NOMEM	2

/*
 * Statistics are per-CPU counters (vc_env.h), one per u64 of struct
 * vc_stats: vc_stat_add(VC_STAT(c, field), v) touches no shared line.
 */
#define VC_NR_STATS	(sizeof(struct vc_stats) / sizeof(u64))
/* a per-device field through VC_STAT would be lost: a compile error */
#define VC_STAT_OFF(field) \
	(__builtin_offsetof(struct vc_stats, field) / sizeof(u64) + \
	 0 * sizeof(char[__builtin_offsetof(struct vc_stats, field) >= \
			 sizeof(struct vc_dev_stats) ? 1 : -1]))
#define VC_STAT(c, field) &(c)->st, (u32)VC_STAT_OFF(field)
#define VC_STAT_IDX(c, field, i) &(c)->st, (u32)(VC_STAT_OFF(field) + (i))
/*
 * Per backing device counters (struct vc_dev_stats), per CPU too:
 * vc_stat_add(VC_DSTAT(c, dev, field), v).  The cache-wide fields of the
 * same names in struct vc_stats are their sum (vc_cache_get_stats).
 */
#define VC_NR_DSTATS	(sizeof(struct vc_dev_stats) / sizeof(u64))
#define VC_DSTAT_OFF(field) \
	(__builtin_offsetof(struct vc_dev_stats, field) / sizeof(u64))
#define VC_DSTAT(c, dev, field) \
	&(c)->dst, (u32)((dev) * VC_NR_DSTATS + \
			 __builtin_offsetof(struct vc_dev_stats, field) / sizeof(u64))
#define VC_DSTAT_IDX(c, dev, field, i) \
	&(c)->dst, (u32)((dev) * VC_NR_DSTATS + (i) + \
			 __builtin_offsetof(struct vc_dev_stats, field) / sizeof(u64))

struct vc_cache {
	struct vc_dev *cdev;
	u32 flags;		/* VC_CFG_* */
	u32 block_size;
	u32 block_sectors;
	u32 block_shift;	/* log2(block_size) */
	u64 nr_blocks;
	u64 md_start, md_sectors, data_start;
	u32 nonce;
	u32 set_shift;		/* vc_set_of() hashes block >> set_shift */
	u64 sb_seq;
	u32 version;		/* on-flash format (vc_format.h) */
	u8 label[VC_LABEL_LEN];	/* the cache's name (format 3) */
	u64 sb2_sector, devtab_sector;	/* where this version has them */
	/*
	 * Metadata goes to the cache device in units of md_usec sectors,
	 * aligned (vc_format.h): the superblock and the device table a unit
	 * at a time, records by "record unit" (md_recs records in md_usec
	 * record sectors).  md_unit is the superblock's field (version 4).
	 */
	u32 md_unit, md_usec, md_recs;
	u64 md_units;		/* record units: md_sectors / md_usec, rounded up */

	/* mode: requested by the admin, and degradation level */
	vc_atomic_t mode;	/* enum vc_mode requested */
	vc_atomic_t degraded;	/* 0 none, 1 = at least WT, 2 = PT */
	vc_atomic_t policy;
	u64 params[VC_NR_PARAMS];	/* written under ctl_mutex, read racy */

	vc_mutex_t ctl_mutex;
	struct vc_bdev_slot bdev[VC_MAX_BACKING];

	/* mapping */
	u32 nr_sets;
	struct vc_set *sets;
	u64 *words;
	u16 *prev, *next, *hnext;
	u16 *heads_mem;
	u8 *ghost_mem;
	u64 heads_total, ghost_total;

	/* record units (indexed 0 .. md_units - 1) */
	vc_spinlock_t rec_lock;	/* see LOCK ORDER */
	vc_spinlock_t md_lock[VC_MD_LOCKS];
	struct vc_md_waiter *md_waiters[VC_MD_LOCKS];
	u16 *md_started;
	u32 *md_markgen;	/* cflush_issued at the newest dirty mark */
	u8 *md_flags;
	vc_atomic_t md_inflight;
	vc_atomic_t md_failed;	/* record units whose last write failed */
	vc_waitq_t md_wq;		/* md writes completed */

	/*
	 * Cache flushes the engine issued / the highest number known
	 * complete (vc_commit.c), and the group commit.
	 */
	vc_atomic_t cflush_issued, cflush_done;
	vc_spinlock_t commit_lock;
	u64 *commit_pend;	/* bitmap: record sectors waiting */
	u64 *commit_take;	/* bitmap: the running commit's, not issued */
	u64 commit_nr;		/* bits in commit_pend */
	u64 commit_pos;		/* next bit of commit_take to look at */
	u32 commit_started, commit_done;
	u32 commit_inflight;
	u32 commit_fno;		/* the running commit's flush number */
	int commit_err;
	bool commit_running, commit_finishing, commit_flush_wanted;
	bool commit_stop;	/* shutting down: no new commit */
	struct vc_commit_waiter *commit_waiters;
	struct vc_commit_slot commit_slots[VC_COMMIT_SLOTS];
	struct vc_commit_slot *commit_free[VC_COMMIT_SLOTS];
	u32 commit_free_nr;
	struct vc_dev_io commit_fio;
	vc_work_t commit_work;

	/* deferred requests (waiting for a busy block) */
	vc_spinlock_t defer_lock;
	vc_atomic_t nr_deferred;	/* skip defer_lock when 0 */
	struct vc_req *defer_head, *defer_tail;
	vc_work_t defer_work;
	/*
	 * Host writes whose PREFLUSH is done, to be cut into pieces by
	 * split_work (defer_lock): not in the completion that ended the
	 * FLUSH, whose later waiters may hold the pieces it would wait for.
	 */
	struct vc_host_io *split_head, *split_tail;
	vc_work_t split_work;

	/* host requests in flight */
	vc_atomic_t host_inflight;
	/*
	 * Completions between dropping an in-flight count and returning
	 * from the wake-up that may let shutdown free the cache.
	 */
	vc_atomic_t wakers;
	vc_waitq_t io_wq;

	/* cleaner */
	vc_work_t clean_work;
	vc_spinlock_t clean_lock;
	bool clean_stop;
	bool wm_active;		/* above high watermark, until below low */
	bool batch_active;
	u32 batch_trigger;
	u32 batch_epoch;	/* dirty-age epoch when the batch began */
	u32 batch_filter_devs;	/* the idle trigger's devices */
	bool batch_rated;	/* rate-controlled (issue_runs) */
	s64 wb_tokens;		/* blocks rated write-back may still send */
	u64 wb_tokens_ns;
	u64 wb_rate_bps;	/* rated write-back's rate now, 0 = none */
	u32 batch_devs;		/* backing devices with blocks in the batch */
	struct vc_req *clean_parked;	/* vc_clean_park() */
	struct vc_req *thr_head;	/* writes slowed at the high mark */
	u64 thr_since_ns;		/* the oldest of them arrived */
	struct vc_cand *cand;
	u32 cand_cap, cand_nr;
	struct vc_cand *rb;	/* blocks of the batch's runs, in order */
	u32 rb_nr;
	/*
	 * finish_batch()'s record units to rewrite, each once: the list
	 * (2 * VC_CLEAN_BATCH) and a bit per unit saying it is listed.
	 */
	u32 *rb_units;
	u64 *rb_unit_map;
	struct vc_run *runs;
	u32 runs_nr, runs_next, runs_done, runs_inflight;
	u32 flush_pending;	/* backing FLUSHes outstanding */
	u32 batch_dev_mask;
	struct vc_drain_waiter *drain_waiters;
	/*
	 * The cleaner's reserve, so that write-back (which is how dirty data
	 * drains) makes progress when memory is short: one run's buffer and
	 * reads, and the batch's FLUSH state.
	 */
	struct vc_buf *res_buf;
	struct vc_dev_io *res_rio;
	u32 res_blocks;		/* a run fits the reserve up to this */
	bool res_busy;
	struct vc_clean_flush *res_flush;
	bool res_flush_busy;
	u32 scan_set;		/* next set to scan */
	u64 wb_cursor;		/* next key of the sweep (vc_dirtymap) */
	vc_atomic64_t last_backing_io_ns;
	vc_atomic_t tail_pressure;	/* victims hard to find: clean tails */
	vc_atomic64_t epoch_dirty[VC_NR_EPOCHS];
	vc_atomic64_t nr_dirty;
	vc_atomic64_t nr_valid;
	vc_atomic64_t nr_flashdirty;	/* blocks whose record may say dirty */
	vc_atomic64_t nr_lost;		/* lost markers (B_LOST) */

	/* flush on demand */
	bool flush_active;
	bool flush_background;	/* started by vc_cache_flush_start() */
	u32 flush_dev;
	u64 flush_target;
	vc_atomic64_t flush_remaining;
	int flush_result;
	int flush_last_result;
	u64 flush_seq;		/* flushes started */
	u64 flush_done_seq;	/* last flush finished */
	int flush_results[8];	/* result of flush n at [n % 8] */
	vc_flush_done_fn flush_done;
	void *flush_done_arg;
	vc_waitq_t flush_wq;
	/*
	 * Held while marking blocks for a flush (flush_begin()) or taking a
	 * parked device's marks back (vc_flush_unmark_dev()): what the count
	 * of marks (flush_remaining) says must match the marks.
	 */
	vc_mutex_t flush_mark_mutex;
	bool flush_marks_stale;	/* a cancelled flush left its marks */

	/* classifiers */
	struct vc_seq seq;
	struct vc_pidlist pids;

	/*
	 * Pools of the I/O path (vc_env.h): request pieces, FLUSH/discard
	 * state, metadata writes, and block buffers for saving a dirty block
	 * whose cache write failed.
	 */
	vc_mempool_t req_pool, aux_pool, md_pool, blk_pool;
	struct vc_buf *zero_buf;	/* a block of zeroes, read-only */

	vc_pcpu_t st;		/* struct vc_stats, cache-wide fields */
	vc_pcpu_t dst;		/* struct vc_dev_stats per backing device */
	vc_pcpu_t lat;		/* [VC_NR_LAT][VC_LAT_SLOTS] */
	u64 stats_since_ns;	/* load or vc_cache_reset_stats() */
	u64 mem_bytes;
};

/* Per-block piece of a host request, or an engine-internal request. */
enum vc_req_kind {
	RK_READ,
	RK_WRITE,
	RK_DISCARD,
	RK_ZERO,	/* a piece of a WRITE_ZEROES */
};

struct vc_req {
	struct vc_cache *c;
	struct vc_host_io *hio;
	struct vc_req *defer_next;
	u8 kind;
	u8 fua;
	u8 hit;			/* first lookup hit */
	u8 newdirty;		/* this write made the block dirty */
	u8 embedded;		/* lives in hio->vc_req_space */
	u8 byp_counted;		/* counted in the set's byp_inflight */
	u8 bounce_pooled;	/* bounce is a struct vc_pooled_buf */
	u8 zero;		/* writes zeroes (c->zero_buf), not host data */
	u8 lost;		/* the block's other dirty data was lost */
	u8 throttled;		/* waited once at the high watermark */
	u8 rmw;			/* a partial write allocated its block:
				 * bounce holds the whole block to write */
	u8 olddirty;		/* wb_fallback: the block held older dirty
				 * data (lost if the write home fails) */
	u8 home_first;		/* write_home_first: the cache copy is
				 * intact (kept if the write home fails) */
	u8 oop;			/* out of place: the new data goes to blk,
				 * the dirty block it replaces is old_blk */
	u8 superseded;		/* fill: a whole-block write took the block */
	u8 waited;		/* write: counted in write_waits */
	struct vc_req *fill_next;	/* fill: on its set's fills (set lock) */
	u32 gen;		/* fills: set's byp_gen at start */
	u32 blk;		/* cache block (when allocated/hit) */
	u32 old_blk;		/* oop: the block holding the older data */
	u64 key;
	u64 sector;		/* backing sector of this piece */
	u32 off;		/* byte offset inside the cache block */
	u32 len;
	u32 hoff;		/* byte offset in the host buffer */
	vc_atomic_t pending;	/* sub-I/Os in flight */
	int err_cache, err_back;
	struct vc_buf *bounce;
	union {
		struct vc_md_waiter mdw;	/* a record write */
		struct vc_commit_waiter cw;	/* a group commit */
		struct vc_drain_waiter dw;	/* a drain after a failed one */
		struct vc_ra *ra;	/* a read-miss fill reading ahead */
	};
	struct vc_dev_io io[2];
};

/* vc_map.c */
int vc_map_alloc(struct vc_cache *c);
void vc_map_free(struct vc_cache *c);
u32 vc_set_of(struct vc_cache *c, u64 key);
u32 vc_lookup(struct vc_cache *c, struct vc_set *s, u64 key);
void vc_hash_insert(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_hash_remove(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_lru_unlink(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_lru_replace(struct vc_cache *c, struct vc_set *s, u32 old, u32 nw);
void vc_lru_push_head(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_lru_push_tail(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_lru_touch(struct vc_cache *c, struct vc_set *s, u32 blk);
u32 vc_find_victim(struct vc_cache *c, struct vc_set *s);
bool vc_ghost_admit(struct vc_cache *c, struct vc_set *s, u64 key);

/* vc_policy.c: S3-FIFO and TinyLFU (set lock held unless noted) */
void vc_pol_init_set(struct vc_cache *c, struct vc_set *s);
void vc_pol_insert(struct vc_cache *c, struct vc_set *s, u32 blk, u64 key);
bool vc_pol_admit_refuses(struct vc_cache *c, struct vc_set *s, u64 key);
void vc_pol_switch(struct vc_cache *c, struct vc_set *s, u8 pol);
void vc_pol_hit(struct vc_cache *c, struct vc_set *s, u64 w);
u32 vc_pol_victim(struct vc_cache *c, struct vc_set *s);
bool vc_pol_small(struct vc_cache *c, struct vc_set *s, u32 blk);
/* the cleaner's walk over the blocks nearest eviction, coldest first */
struct vc_cold_iter {
	u16 pos;
	u8 list;	/* 0 small queue (if any), 1 main list, 2 done */
};
void vc_cold_first(struct vc_cache *c, struct vc_set *s,
		   struct vc_cold_iter *it);
u32 vc_cold_next(struct vc_cache *c, struct vc_set *s,
		 struct vc_cold_iter *it);
void vc_block_set_word(struct vc_cache *c, struct vc_set *s, u32 blk, u64 w);
static inline u64 vc_word(struct vc_cache *c, u32 blk)
{
	return vc_load_u64(&c->words[blk]);
}

/*
 * The blocks [*lo, *hi) of set @s whose records share block @blk's record
 * sector (one 512-byte write switches them together).
 */
static inline void vc_rec_sector_blocks(const struct vc_set *s, u32 blk,
					u32 *lo, u32 *hi)
{
	u32 first = blk - blk % VC_RECS_PER_SECTOR;

	*lo = first > s->first ? first : s->first;
	*hi = first + VC_RECS_PER_SECTOR < s->first + s->ways ?
	      first + VC_RECS_PER_SECTOR : s->first + s->ways;
}

/* Is @w a record sector's spare (B_SPARE, policy bits aside)? */
static inline bool vc_is_spare(u64 w)
{
	return (w & ~B_POL_MASK) == B_SPARE;
}

/* The record unit holding the record of block @blk. */
static inline u64 vc_md_unit_of(struct vc_cache *c, u32 blk)
{
	return blk / c->md_recs;
}

static inline struct vc_set *vc_set_of_blk(struct vc_cache *c, u32 blk)
{
	/* sets differ in size by at most one: find by division, then fix */
	u32 s = (u32)vc_div_u64((u64)blk * c->nr_sets, c->nr_blocks);

	while (s + 1 < c->nr_sets && blk >= c->sets[s + 1].first)
		s++;
	while (blk < c->sets[s].first)
		s--;
	return &c->sets[s];
}

/* vc_md.c */
void vc_md_mark(struct vc_cache *c, u32 blk, struct vc_md_waiter *w,
		void (*fn)(struct vc_md_waiter *w, int err));
int vc_md_format(struct vc_cache *c);
int vc_md_load(struct vc_cache *c, const struct vc_sb *sb, bool salvage,
	       char *err, size_t errlen);
int vc_md_read_sb(struct vc_dev *cdev, struct vc_sb *sb, char *err,
		  size_t errlen);
int vc_md_check_dev(struct vc_dev *cdev, char *err, size_t errlen);
u32 vc_md_unit_for(struct vc_dev *cdev);
void vc_md_check_unit(struct vc_cache *c);
int vc_md_write_sb(struct vc_cache *c, bool clean);
int vc_md_write_dev(struct vc_cache *c, u32 id);
int vc_md_write_all(struct vc_cache *c);
int vc_md_erase_sb(struct vc_cache *c);
/* vc_verify.c: keep fingerprints of @id's clean blocks; ctl_mutex held */
void vc_verify_fingerprint(struct vc_cache *c, u32 id);

int vc_sync_io(struct vc_dev *dev, u8 op, u32 flags, u64 sector, u32 len,
	       struct vc_buf *buf);
int vc_md_wait_idle(struct vc_cache *c);
int vc_md_pool_init(struct vc_cache *c);
void vc_md_retry(struct vc_cache *c, bool wait);
void vc_flush_unmark_dev(struct vc_cache *c, u32 id);
bool vc_drain_waiting(struct vc_cache *c);
void vc_md_mark_sector(struct vc_cache *c, u64 idx, struct vc_md_waiter *w,
		       void (*fn)(struct vc_md_waiter *w, int err));

/* vc_commit.c */
u32 vc_cflush_issue(struct vc_cache *c);
void vc_cflush_done(struct vc_cache *c, u32 n);
void vc_md_note_dirty(struct vc_cache *c, u64 idx);
bool vc_md_needs_preflush(struct vc_cache *c, u64 idx);
void vc_md_defer(struct vc_cache *c, u32 blk);
void vc_commit_request(struct vc_cache *c, struct vc_commit_waiter *w,
		       bool flush);
void vc_commit_work_fn(vc_work_t *wk);
void vc_commit_md_end(struct vc_md_waiter *mw, int err);
bool vc_commit_idle(struct vc_cache *c);
bool vc_commit_pending(struct vc_cache *c);
bool vc_dirty_over_high(struct vc_cache *c);
bool vc_dirty_over_hard(struct vc_cache *c);
bool vc_throttle_write(struct vc_cache *c, struct vc_req *r);
void vc_commit_stop(struct vc_cache *c);
int vc_commit_init(struct vc_cache *c);
void vc_commit_free(struct vc_cache *c);

/* A block buffer of c->blk_pool. */
struct vc_pooled_buf {
	struct vc_buf buf;
	u8 data[];
};

/* vc_io.c, vc_read.c, vc_write.c: the host I/O path (vc_io.h) */
int vc_io_pools_init(struct vc_cache *c);
void vc_io_pools_exit(struct vc_cache *c);
void vc_defer(struct vc_cache *c, struct vc_req *r);
void vc_defer_work_fn(vc_work_t *w);
void vc_split_work_fn(vc_work_t *w);
void vc_req_dispatch(struct vc_req *r);
void vc_redrive(struct vc_cache *c);
bool vc_invalidate_locked(struct vc_cache *c, struct vc_set *s, u32 blk);
bool vc_lose_locked(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_invalidate_blk(struct vc_cache *c, u32 blk);
void vc_clear_bits(struct vc_cache *c, u32 blk, u64 bits);
u32 vc_take_victim(struct vc_cache *c, struct vc_set *s, u64 key);
enum vc_mode vc_effective_mode(struct vc_cache *c);
void vc_degrade(struct vc_cache *c, const char *why);
void vc_cache_write_failed(struct vc_cache *c, int err, const char *why);

/* vc_ra.c: readahead of a read-miss fill into free blocks */
struct vc_ra;
struct vc_ra *vc_ra_take(struct vc_cache *c, u64 key, u64 *first_lba,
			 u32 *nr);
struct vc_buf *vc_ra_buf(struct vc_ra *ra);
u64 vc_ra_first_lba(struct vc_ra *ra);
void vc_ra_install(struct vc_ra *ra, int err);
void vc_ra_put(struct vc_ra *ra);

/* vc_clean.c */
int vc_cleaner_init(struct vc_cache *c);
void vc_cleaner_stop(struct vc_cache *c);
void vc_cleaner_start(struct vc_cache *c);
void vc_cache_kick_cleaner_if_needed(struct vc_cache *c);
void vc_drain_wait(struct vc_cache *c, struct vc_drain_waiter *w, u32 dev);
void vc_drain_md_done(struct vc_cache *c, int err);
void vc_cleaner_free(struct vc_cache *c);
void vc_clean_work_fn(vc_work_t *w);
u32 vc_cur_epoch(struct vc_cache *c);
void vc_clean_park(struct vc_cache *c, struct vc_req *r);
void vc_dirtymap_mark(struct vc_cache *c, u64 w);
int vc_dirtymap_attach(struct vc_cache *c, u32 id, u64 nr_sectors);
void vc_clean_unpark(struct vc_req *r);	/* vc_write.c */

static inline void vc_stat_add(vc_pcpu_t *st, u32 i, u64 v)
{
	vc_pcpu_add(st, i, v);
}

/* Count @ns in the latency histogram of @path (per CPU), and its sum. */
#define VC_LAT_SLOTS	(VC_LAT_BUCKETS + 1)
static inline void vc_lat_add(struct vc_cache *c, u32 path, u64 ns)
{
	vc_pcpu_add(&c->lat, path * VC_LAT_SLOTS + vc_lat_bucket(ns), 1);
	vc_pcpu_add(&c->lat, path * VC_LAT_SLOTS + VC_LAT_BUCKETS, ns);
}

static inline u64 vc_param(struct vc_cache *c, enum vc_param p)
{
	return vc_load_u64(&c->params[p]);
}

#endif /* VC_INTERNAL_H */
