/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vc_engine.h - public API of the vcache cache engine.
 *
 * One struct vc_cache lives on one cache device (the flash) and caches up
 * to VC_MAX_BACKING backing devices (HDDs), each known by a small id.
 * See cache/API.md for how to drive it (userspace, virtual clock,
 * simulated devices, which callbacks run where).
 */
#ifndef VC_ENGINE_H
#define VC_ENGINE_H

#include "vc_env.h"

#define VC_MAX_BACKING		16	/* backing devices per cache */
#define VC_DEV_ID_ALL		0xffffffffu
#define VC_MIN_BLOCK_SIZE	4096u
#define VC_MAX_BLOCK_SIZE	65536u
#define VC_DEF_BLOCK_SIZE	4096u
#define VC_UUID_LEN		48	/* identity string of a backing dev */

enum vc_mode {
	VC_MODE_WB = 0,		/* write-back */
	VC_MODE_WT = 1,		/* write-through */
	VC_MODE_WA = 2,		/* write-around: writes skip the cache */
	VC_MODE_PT = 3,		/* pass-through: nothing new cached */
	VC_NR_MODES
};

enum vc_policy {
	VC_POLICY_FIFO = 0,
	VC_POLICY_LRU = 1,
	VC_POLICY_S3FIFO = 2,	/* small + main FIFO, ghost, lazy promotion */
	VC_POLICY_TINYLFU = 3,	/* frequency-sketch admission, CLOCK main */
	VC_NR_POLICIES
};

enum vc_admission {
	VC_ADMIT_ALL = 0,	/* every read miss is cached */
	VC_ADMIT_SECOND_HIT = 1, /* when nearly full: on its 2nd miss only */
	VC_NR_ADMISSIONS
};

/*
 * Tunables, settable at create time (struct vc_cache_config.params) and
 * online with vc_cache_set_param().  Names (for sysfs, tools) come from
 * vc_param_name() / vc_param_by_name().
 */
enum vc_param {
	VC_P_DIRTY_HIGH_PCT,	/* start cleaning above (% of blocks) */
	VC_P_DIRTY_LOW_PCT,	/* stop cleaning below */
	VC_P_DIRTY_HIGH_BYTES,	/* same in bytes; 0 = use the percentage */
	VC_P_DIRTY_LOW_BYTES,
	VC_P_MAX_DIRTY_AGE_MS,	/* flush period; 0 = no age limit */
	VC_P_IDLE_MS,		/* backing idle this long: drain; 0 = off */
	VC_P_WB_MAX_INFLIGHT,	/* write-back I/Os in flight, 1..1024 */
	VC_P_WB_MAX_IO_KIB,	/* largest merged write-back I/O */
	VC_P_CLEAN_INTERVAL_MS,	/* cleaner tick */
	VC_P_SEQ_ENABLE,	/* sequential bypass on/off */
	VC_P_SEQ_THRESHOLD_KIB,	/* bypass streams longer than this */
	VC_P_ADMISSION,		/* enum vc_admission */
	VC_P_ADMIT_FULL_PCT,	/* "nearly full" for admission */
	VC_P_PID_MODE,		/* enum vc_pid_mode (vc_pidlist.h) */
	VC_P_COMMIT_MS,		/* group commit of dirty records; 0 = none */
	VC_P_READAHEAD_KIB,	/* read-miss fill window into free blocks */
	VC_NR_PARAMS
};

struct vc_params {
	u64 v[VC_NR_PARAMS];
};

/* Fill @p with the defaults. */
void vc_params_default(struct vc_params *p);
const char *vc_param_name(enum vc_param id);
int vc_param_by_name(const char *name);	/* id or -ENOENT */
const char *vc_mode_name(enum vc_mode m);
const char *vc_policy_name(enum vc_policy p);

/* struct vc_cache_config.flags */
#define VC_CFG_NODATA	(1u << 0)	/* devices ignore data: no bounce buffers */

struct vc_cache_config {
	u32 block_size;		/* bytes, power of two, 4 KiB..64 KiB */
	u64 nr_blocks;		/* 0 = as many as fit on the cache device */
	u32 mode;		/* enum vc_mode */
	u32 policy;		/* enum vc_policy */
	u32 flags;		/* VC_CFG_* */
	struct vc_params params;
	/* a name kept in the superblock (format 3), NUL terminated; "" none */
	char label[32];
};

/* Fill @cfg with defaults (4 KiB blocks, WB, LRU, default params). */
void vc_cache_config_default(struct vc_cache_config *cfg);

struct vc_cache;

/*
 * Format @cdev as a new, empty cache and start it.  Everything previously
 * on @cdev is forgotten.  Control path (sleeps, writes metadata).
 */
int vc_cache_create(struct vc_dev *cdev, const struct vc_cache_config *cfg,
		    struct vc_cache **out);

/*
 * Load the cache on @cdev.  After a clean shutdown every block comes back;
 * after a crash exactly the dirty blocks come back (as dirty).  Corrupt or
 * foreign metadata is refused: -EUCLEAN (checksum, bounds, duplicates),
 * -ENODATA (no vcache metadata), -EOPNOTSUPP (unknown version), -EINVAL
 * (a cache device that cannot take 512-byte writes); @err (if not NULL)
 * receives a one-line reason.  @flags: VC_CFG_NODATA, VC_LOAD_SALVAGE.
 *
 * VC_LOAD_SALVAGE: damaged record sectors (checksum, unreadable) and
 * records that do not verify are skipped instead of refusing the cache:
 * every record that verifies is loaded, the rest are counted
 * (vc_stats.load_bad_sectors, load_bad_records) and logged, and their
 * cache blocks are never served (their dirty data, if any, is lost); a
 * record of a damaged but readable sector that still names a plausible
 * dirty block leaves a lost marker (reads of it fail until rewritten,
 * never return older data).  A bad
 * device-table entry makes its device unknown (its records are skipped).
 * The superblock must still verify (one of its two copies).
 */
#define VC_LOAD_SALVAGE	(1u << 1)
int vc_cache_load(struct vc_dev *cdev, u32 flags, struct vc_cache **out,
		  char *err, size_t errlen);

/*
 * Attach a backing device.  @uuid names it persistently (dirty blocks of a
 * device are kept for it across reboots until it comes back).  Returns the
 * id through @id (0..VC_MAX_BACKING-1).  -EEXIST if attached already,
 * -ENOSPC if the table is full, -EINVAL if its size shrank below a cached
 * block.
 */
int vc_cache_attach(struct vc_cache *c, struct vc_dev *bdev,
		    const char *uuid, u32 *id);

/* What the cache knows of backing slot @id (vc_cache_backing_info()). */
struct vc_backing_info {
	bool in_use;		/* slot recorded on flash */
	bool attached;		/* a vc_dev is attached now */
	char uuid[VC_UUID_LEN];	/* its identity, NUL terminated */
	u64 nr_sectors;		/* size when it was attached */
	u64 dirty_blocks;	/* its blocks dirty now */
	char label[32];		/* vc_cache_set_dev_label(), "" none */
};

/*
 * Names kept on the cache device with the cache (format 3; -EOPNOTSUPP
 * on an older format): the cache's own, and one per backing slot in use.
 * At most 31 bytes, NUL terminated.  Control path (writes metadata).
 */
int vc_cache_set_label(struct vc_cache *c, const char *label);
void vc_cache_get_label(struct vc_cache *c, char *out);
int vc_cache_set_dev_label(struct vc_cache *c, u32 id, const char *label);

/*
 * Fill @bi for slot @id: 0, -ENOENT (slot unused: @bi says so), -EINVAL.
 * After vc_cache_load() the slots in use but not attached are the backing
 * devices the cache waits for (their dirty blocks are kept).
 */
int vc_cache_backing_info(struct vc_cache *c, u32 id,
			  struct vc_backing_info *bi);

/*
 * What vc_cache_verify_backing() compared: clean blocks of the slot read
 * from the cache device and from the disk that claims the slot, and the
 * fingerprints kept when the disk left.
 */
#define VC_VERIFY_SAMPLES	8
struct vc_verify_result {
	u32 compared;		/* blocks read from both and compared */
	u32 differ;		/* of them, not equal */
	u32 skipped;		/* changed meanwhile, or a cache read failed */
};

/*
 * Before a disk found by its identity alone takes waiting backing slot
 * @id (a reboot, a module load: its clean blocks were loaded with the
 * cache): read up to VC_VERIFY_SAMPLES of the slot's clean blocks, spread
 * over the cache and not all zeroes, from the cache device and from @cand
 * (not attached: read only), and compare them.  A device that left while
 * the cache ran (VC_DETACH_KEEP, vc_cache_unplug()) has its clean blocks
 * dropped; up to VC_VERIFY_SAMPLES of them were first kept as fingerprints
 * (home sector and crc32c, in RAM until a disk takes the slot), compared
 * the same way (by crc32c).  @cand is read without the cache's control
 * lock: a disk that does not answer holds no other control call (stats,
 * settings, attach of another device).  A clean block equals its
 * home copy, so the disk that was there holds all of them; another disk
 * with a copied identity and size holds none (the caller decides, see
 * vcache(4) "Auto-attach").  Sleeps (control path).  0 with @res filled
 * in; -ENOENT if slot @id is not in use or attached already, -EIO if
 * @cand cannot be read, -ENOMEM.
 */
int vc_cache_verify_backing(struct vc_cache *c, u32 id, struct vc_dev *cand,
			    struct vc_verify_result *res);

/* vc_cache_detach() flags */
#define VC_DETACH_FORCE	(1u << 0)	/* drop dirty blocks (counted lost) */
#define VC_DETACH_KEEP	(1u << 1)	/* keep dirty blocks for its return */
/*
 * Detach a backing device: first writes back its dirty blocks (blocking,
 * like vc_cache_flush() on it, -EINTR if interrupted) unless FORCE, then
 * invalidates its blocks and frees its id.  In-flight I/O to it must be
 * finished by the caller first (-EBUSY otherwise).
 *
 * KEEP (not with FORCE): write-back to the device stops (runs in flight
 * finish), its clean blocks are invalidated and its dirty blocks stay,
 * with its id and identity, as for a device missing at load: the cache
 * waits for it, and vc_cache_attach() with the same identity takes them
 * back.  The caller may release the device once this returns.
 */
int vc_cache_detach(struct vc_cache *c, u32 id, u32 flags);

/*
 * The host lost backing device @id or let it go after a failed detach or
 * attach (it is about to be closed): the engine stops using it whatever
 * the state of its metadata.  Write-back to it stops, the I/O in flight
 * to it ends first, its clean blocks are dropped where their records can
 * be written, its dirty blocks, id and identity stay (as for a device
 * missing at load, or detach with KEEP): vc_cache_attach() with the same
 * identity takes them back.  Host I/O to it must have ended.  Returns 0
 * (-EINVAL for a bad id).
 */
int vc_cache_unplug(struct vc_cache *c, u32 id);

/* ---------------------------------------------------------------------
 * Host I/O.
 */
enum vc_op {
	VC_OP_READ = 0,
	VC_OP_WRITE = 1,
	VC_OP_FLUSH = 2,	/* empty FLUSH: all acked writes made durable */
	VC_OP_DISCARD = 3,
	/*
	 * Zeroes the range as a write would (read back as zeroes, durable by
	 * FLUSH or FUA), without data: whole cached blocks are dropped, dirty
	 * blocks partly covered get zeroes written into the cache, and the
	 * range goes down to the backing device as WRITE_ZEROES.
	 */
	VC_OP_WRITE_ZEROES = 4,
};

/* vc_host_io.flags */
#define VC_IO_FUA	(1u << 0)	/* durable (data + metadata) at ack */
#define VC_IO_PREFLUSH	(1u << 1)	/* FLUSH semantics before the write */

struct vc_host_io;
typedef void (*vc_host_end_io_t)(struct vc_host_io *hio, int err);

struct vc_host_io {
	/* filled by the caller */
	u32 dev_id;		/* backing device */
	u8 op;			/* enum vc_op */
	u32 flags;		/* VC_IO_* */
	u64 sector;		/* 512-byte sectors on the backing device */
	u32 len;		/* bytes, multiple of 512 (0 for FLUSH) */
	struct vc_buf *buf;	/* data (NULL: no data, see vc_env.h) */
	u32 buf_off;
	u64 pid, tgid;		/* submitter, for PID lists: ids as the
				 * environment's lists hold them (the
				 * kernel: struct pid addresses) */
	u64 cgroup;		/* charged cgroup for cgroup lists, 0: none */
	u64 stream;		/* submitter key for sequential detection */
	vc_host_end_io_t end_io;
	void *private;		/* for the caller */
	/*
	 * engine-private: the single-block request of the common case lives
	 * here, so a 4K I/O needs no allocation
	 */
	u64 vc_req_space[40];
	vc_atomic_t pending;
	vc_atomic_t error;
	u64 start_ns;
	vc_atomic_t eflags;
	void *aux;
	struct vc_host_io *split_next;	/* on the cache's split list */
};

/*
 * Submit one host I/O.  It may span any number of cache blocks.  end_io
 * is called exactly once, possibly before vc_cache_submit() returns.
 * Errors: -EIO (device error), -ENODEV (bad dev_id), -EINVAL (bad range),
 * -ENOMEM.
 */
void vc_cache_submit(struct vc_cache *c, struct vc_host_io *hio);

/* ---------------------------------------------------------------------
 * Flush on demand (write back dirty blocks).
 */
struct vc_flush_progress {
	u64 target;		/* dirty blocks when the flush started */
	u64 done;		/* of those, cleaned (or gone) since */
	u64 remaining;		/* dirty blocks still to write back */
	bool running;
	int result;		/* last finished flush: 0, -EINTR, -EIO */
};

/* Return non-zero to interrupt a blocking flush. */
typedef int (*vc_flush_progress_fn)(void *arg,
				    const struct vc_flush_progress *p);

/*
 * Blocking: returns when every block dirty at the start (of @dev_id, or
 * of all with VC_DEV_ID_ALL) is clean: 0; -EINTR when @progress returned
 * non-zero or a signal arrived; -EIO if a block could not be written back.
 * @progress (may be NULL) is called about every 100 ms of vc_now_ns(),
 * also while the flush waits for another one (a background flush) to end:
 * then it sees that one's progress.
 */
int vc_cache_flush(struct vc_cache *c, u32 dev_id,
		   vc_flush_progress_fn progress, void *arg);

/*
 * Background: starts a flush and returns.  @done (may be NULL) is called
 * once from the cleaner's worker with the result.  -EBUSY if one runs.
 */
typedef void (*vc_flush_done_fn)(void *arg, int result);
int vc_cache_flush_start(struct vc_cache *c, u32 dev_id,
			 vc_flush_done_fn done, void *arg);
void vc_cache_flush_get_progress(struct vc_cache *c,
				 struct vc_flush_progress *p);
/* Stop a background flush (its done callback gets -EINTR). */
void vc_cache_flush_cancel(struct vc_cache *c);

/* ---------------------------------------------------------------------
 * Online control.  All return 0 or -EINVAL.  vc_cache_set_mode() also
 * clears a degradation, and is refused with -EIO while metadata cannot
 * be written, and for write-back with -EBUSY while a FLUSH whose commit
 * failed waits for the dirty data to drain (API.md).
 */
int vc_cache_set_mode(struct vc_cache *c, enum vc_mode mode);
enum vc_mode vc_cache_get_mode(struct vc_cache *c);
/* The mode asked for, before degradation by errors. */
enum vc_mode vc_cache_get_requested_mode(struct vc_cache *c);
int vc_cache_set_policy(struct vc_cache *c, enum vc_policy policy);
enum vc_policy vc_cache_get_policy(struct vc_cache *c);
int vc_cache_set_param(struct vc_cache *c, enum vc_param id, u64 value);
/*
 * Set the parameters whose bit is in @mask (1u << id) to @v[id] at once:
 * the new set is checked as a whole (dirty_low <= dirty_high holds for
 * the result, not for each step), then applied, then saved.  0 or -EINVAL
 * (nothing changed).
 */
int vc_cache_set_params(struct vc_cache *c, u32 mask, const u64 *v);
/* 0 if @v is in the range of parameter @id, else -EINVAL. */
int vc_param_check(enum vc_param id, u64 v);
u64 vc_cache_get_param(struct vc_cache *c, enum vc_param id);

/* PID lists (see vc_pidlist.h for semantics). */
struct vc_pidlist;
struct vc_pidlist *vc_cache_pidlist(struct vc_cache *c);

/* Run the cleaner now (normally driven by its own timer). */
void vc_cache_kick_cleaner(struct vc_cache *c);

/* ---------------------------------------------------------------------
 * Statistics.
 */
enum vc_bypass_reason {
	VC_BYP_MODE,		/* PT / WA / degraded */
	VC_BYP_SEQ,		/* sequential stream */
	VC_BYP_PID,		/* PID lists */
	VC_BYP_ADMISSION,	/* admission refused */
	VC_BYP_NOSPACE,		/* no clean block to replace */
	VC_BYP_BUSY,		/* bounce allocation failed */
	VC_NR_BYPASS
};

enum vc_clean_trigger {
	VC_CLEAN_WATERMARK,
	VC_CLEAN_AGE,		/* age_based_write_back */
	VC_CLEAN_IDLE,
	VC_CLEAN_FLUSH,		/* flush on demand, detach */
	VC_CLEAN_MODE,		/* draining after leaving write-back */
	VC_CLEAN_TAIL,		/* dirty blocks where replacement looks */
	VC_NR_CLEAN
};

/*
 * Latency paths: a host request is timed from submission to completion
 * and counted in one path (a request that missed anywhere is a miss; one
 * that bypassed anywhere and did not miss is a bypass); a write-back I/O
 * from submission to its backing device's completion.
 */
enum vc_lat_path {
	VC_LAT_READ_HIT,
	VC_LAT_READ_MISS,
	VC_LAT_WRITE_HIT,
	VC_LAT_WRITE_MISS,
	VC_LAT_BYPASS,		/* served around the cache (any reason) */
	VC_LAT_WRITEBACK,	/* the cleaner's merged backing writes */
	VC_LAT_FLUSH,		/* host FLUSH requests */
	VC_NR_LAT
};

/*
 * Log-linear latency buckets in nanoseconds: bucket 0 holds [0, 2^10);
 * then every power of two from 2^10 to 2^38 is split in 2^VC_LAT_SUB_BITS
 * equal parts; the last bucket holds everything from 2^38 ns (275 s).
 * Relative width of a bucket: at most 1/8.  The netlink ABI
 * (include/vcache/vcache_nl.h, VCACHE_LAT_*) uses the same scheme.
 */
#define VC_LAT_MIN_SHIFT	10
#define VC_LAT_MAX_SHIFT	38
#define VC_LAT_SUB_BITS		3
#define VC_LAT_BUCKETS \
	(2 + ((VC_LAT_MAX_SHIFT - VC_LAT_MIN_SHIFT) << VC_LAT_SUB_BITS))

static inline u32 vc_lat_bucket(u64 ns)
{
	u32 m;

	if (ns < (1ULL << VC_LAT_MIN_SHIFT))
		return 0;
	if (ns >= (1ULL << VC_LAT_MAX_SHIFT))
		return VC_LAT_BUCKETS - 1;
	m = 63 - (u32)__builtin_clzll(ns);	/* MIN_SHIFT <= m < MAX_SHIFT */
	return 1 + ((m - VC_LAT_MIN_SHIFT) << VC_LAT_SUB_BITS) +
	       (u32)((ns >> (m - VC_LAT_SUB_BITS)) &
		     ((1u << VC_LAT_SUB_BITS) - 1));
}

/* The first nanosecond value of bucket @b (0 for bucket 0). */
static inline u64 vc_lat_bucket_low(u32 b)
{
	u32 m, sub;

	if (b == 0)
		return 0;
	if (b >= VC_LAT_BUCKETS - 1)
		return 1ULL << VC_LAT_MAX_SHIFT;
	m = VC_LAT_MIN_SHIFT + ((b - 1) >> VC_LAT_SUB_BITS);
	sub = (b - 1) & ((1u << VC_LAT_SUB_BITS) - 1);
	return ((1ULL << VC_LAT_SUB_BITS) + sub) << (m - VC_LAT_SUB_BITS);
}

/*
 * Counters of one backing device (its host I/O and its write-back); the
 * cache's counters of the same names are their sum over every device,
 * detached ones included until the cache's statistics are reset.
 * Hits, misses and bypasses count cache blocks (the part of a request
 * that falls in one block); a miss that is then served around the cache
 * counts as a miss and as a bypass of its reason.
 */
#define VC_DEV_STATS_FIELDS						\
	u64 reads, writes, flushes, discards;	/* host requests */	\
	u64 read_hits, read_misses;		/* per cache block */	\
	u64 write_hits, write_misses;					\
	u64 read_bytes, write_bytes;					\
	u64 read_hit_bytes, read_miss_bytes;				\
	u64 write_hit_bytes, write_miss_bytes;				\
	u64 write_zeroes;						\
	u64 fua_writes;							\
	u64 bypass[VC_NR_BYPASS];		/* per cache block */	\
	u64 bypass_bytes[VC_NR_BYPASS];					\
	u64 wb_blocks, wb_bytes;		/* written back */	\
	u64 wb_ios;				/* merged write-back I/Os */ \
	u64 backing_read_errors, backing_write_errors;			\
	u64 lost_blocks;			/* dirty data lost */	\
	u64 lost_reads;				/* reads failed: data lost */ \
	u64 backing_flushes;			/* host FLUSHes sent home */ \
	u64 wb_flushes;				/* write-back's FLUSHes */ \
	u64 wb_throttled;			/* writes slowed at the mark */ \
	u64 write_waits;			/* waited: block busy */ \
	u64 fills_overtaken;			/* by a whole-block write */ \
	u64 readahead_blocks;			/* read ahead by fills */

struct vc_dev_stats {
	VC_DEV_STATS_FIELDS
};

struct vc_stats {
	union {
		struct { VC_DEV_STATS_FIELDS };
		struct vc_dev_stats dev_sum;	/* the same fields */
	};
	u64 admitted, not_admitted;
	u64 evictions;
	u64 cleanings[VC_NR_CLEAN];		/* blocks written back */
	u64 age_based_write_back;		/* == cleanings[VC_CLEAN_AGE] */
	u64 cache_read_errors, cache_write_errors;
	u64 read_retries;			/* clean block re-read on backing */
	u64 lost_marked;			/* blocks whose reads fail now */
	u64 load_bad_sectors;			/* skipped by a salvage load */
	u64 load_bad_records;
	u64 degradations;			/* mode lowered after errors */
	u64 flash_bytes_written;		/* data + metadata */
	u64 flash_bytes_read;
	u64 backing_bytes_written, backing_bytes_read;
	u64 backing_ios;
	u64 md_writes;				/* metadata sector writes */
	u64 commits;				/* group commits run */
	u64 cache_flushes;			/* FLUSH + PREFLUSH sent to it */
	u64 dirty_overwrites;			/* whole-block writes over dirty */
	u64 oop_writes;				/* of them, out of place */
	u64 nr_blocks, valid_blocks, dirty_blocks;
	u64 block_size;
	u64 mem_bytes;				/* RAM used for metadata */
	u64 mem_millibytes_per_block;		/* mem_bytes*1000/nr_blocks */
	u64 oldest_dirty_age_ms;
	u64 elapsed_ns;				/* since load or reset */
	u64 wb_rate_bps;			/* rated write-back now */
	u32 mode, requested_mode, policy;
};

void vc_cache_get_stats(struct vc_cache *c, struct vc_stats *st);

/*
 * Is block @lba (in cache blocks) of backing device @dev cached and
 * dirty now?  For simulators and tests that shadow the engine.
 */
bool vc_cache_block_dirty(struct vc_cache *c, u32 dev, u64 lba);
void vc_cache_reset_stats(struct vc_cache *c);

/*
 * The counters of backing device @dev (0 <= dev < VC_MAX_BACKING; zero
 * for a slot never used since the last reset).
 */
void vc_cache_get_dev_stats(struct vc_cache *c, u32 dev,
			    struct vc_dev_stats *st);
/* The time the counters cover: since load or the last reset. */
u64 vc_cache_stats_elapsed_ns(struct vc_cache *c);

/*
 * The latency histogram of @path: @buckets[VC_LAT_BUCKETS] gets the
 * number of requests per bucket since load or the last reset, *@sum_ns
 * (may be NULL) the sum of their latencies.
 */
void vc_cache_get_latency(struct vc_cache *c, enum vc_lat_path path,
			  u64 *buckets, u64 *sum_ns);

/*
 * RAM for the per-block metadata, in bytes per cache block (everything
 * that scales with the number of blocks: the packed block word, the
 * replacement and hash links, the hash heads, the metadata-sector state).
 * Returned in thousandths of a byte so the fractional parts show: e.g.
 * 15079 means 15.079 bytes.  vc_cache_mem_bytes() is the total for a
 * cache of @nr_blocks blocks, fixed overhead included.
 */
u64 vc_cache_mem_bytes_per_block(u64 nr_blocks);
u64 vc_cache_mem_bytes(u64 nr_blocks);

/*
 * Blocks that fit a cache device of @sectors with @block_size, whose
 * metadata is written in units of @md_unit bytes (vc_format.h: the
 * device's physical block, at least 4096); vc_cache_blocks_for(): with
 * 4 KiB units.
 */
u64 vc_cache_blocks_for_unit(u64 sectors, u32 block_size, u32 md_unit);
u64 vc_cache_blocks_for(u64 sectors, u32 block_size);

/* ---------------------------------------------------------------------
 * Shutdown.
 */
#define VC_SHUTDOWN_FLUSH	(1u << 0)	/* write back everything first */
/*
 * The cache is being deleted: instead of the clean flag, both superblock
 * copies are erased, so that nothing finds and loads the cache again.
 */
#define VC_SHUTDOWN_FORGET	(1u << 1)
/*
 * Clean shutdown: waits for in-flight I/O (the caller must have stopped
 * submitting), writes all block records and the clean flag, frees @c.
 * Dirty blocks stay cached (persisted) unless VC_SHUTDOWN_FLUSH.
 * Returns 0 or the error of the final metadata write (the cache is freed
 * in every case; an error means the next load sees an unclean shutdown).
 */
int vc_cache_shutdown(struct vc_cache *c, u32 flags);

/*
 * Free @c without writing anything, as if power had been cut (for crash
 * tests and simulators).  In-flight I/O must have completed.
 */
void vc_cache_abandon(struct vc_cache *c);

/* Module-wide setup for the kernel (caches, pools); 0 or -errno. */
int vc_engine_init(void);
void vc_engine_exit(void);

#endif /* VC_ENGINE_H */
