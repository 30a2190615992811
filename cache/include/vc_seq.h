/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vc_seq: sequential-stream detection for the vcache engine.
 *
 * Large sequential I/O (backups, table scans, log archiving) would evict the
 * working set from the flash cache for no gain: the backing HDD streams it
 * at full speed anyway.  vc_seq watches the requests of each submitter
 * (a pid, a cpu, whatever identifies "one stream of work" to the caller)
 * and tells the engine to send a request around the cache once the
 * contiguous run it belongs to has grown past a threshold.
 *
 * Several streams are tracked at once in a small table of recent streams
 * keyed by (submitter, next expected sector); a request that continues no
 * known stream starts a new one.  A submitter may own up to
 * VC_SEQ_PER_SUBMITTER streams (two scans in one process); past that its
 * new stream replaces one of its own, so a submitter doing random I/O
 * churns only its own entries.  Otherwise a free entry is used, else the
 * least recently used entry never continued, else the least recently used
 * entry that is not a detected stream, else the least recently used one:
 * a backup streaming next to random OLTP requests keeps its entry as long
 * as the table has room for two entries per busy submitter.
 *
 * Units: sectors of 512 bytes, like the block layer.  The threshold is in
 * KiB: a request is bypassed when the run it extends, including itself,
 * exceeds threshold_kib KiB (strictly more).
 *
 * Thread-safe: vc_seq_check() may be called from any number of CPUs.  A
 * table of VC_SEQ_SHARD_MIN entries or more is split into VC_SEQ_SHARDS
 * shards, each with its own spinlock, by a hash of the submitter (all
 * streams of a submitter live in one shard): a request takes one shard
 * lock and scans that shard only.  "Enabled" and the threshold are read
 * without a lock.  No allocation: struct vc_seq is embedded by its owner.
 */
#ifndef VC_SEQ_H
#define VC_SEQ_H

#include "vc_env.h"

#define VC_SEQ_MAX_STREAMS	64
#define VC_SEQ_DEF_STREAMS	32
#define VC_SEQ_PER_SUBMITTER	2
#define VC_SEQ_SHARDS		4
#define VC_SEQ_SHARD_MIN	16	/* smaller tables are one shard */
#define VC_SEQ_DEF_THRESH_KIB	1024
/* 4 TiB: a larger threshold can never be reached by a useful stream. */
#define VC_SEQ_MAX_THRESH_KIB	(4ULL << 30)

struct vc_seq_stream {
	u64 submitter;		/* who issues this stream */
	u64 next_sector;	/* first sector of the expected next request */
	u64 run_bytes;		/* contiguous bytes seen so far (saturating) */
	u64 last_used;		/* LRU stamp from vc_seq.clock, 0 = free */
	bool bypassing;		/* run has crossed the threshold */
	bool confirmed;		/* continued at least once */
};

struct vc_seq_stats {
	u64 checked;		/* requests looked at while enabled */
	u64 bypassed_ios;	/* requests told to bypass */
	u64 bypassed_bytes;
	u64 streams_detected;	/* streams that crossed the threshold */
	u64 streams_replaced;	/* live entries evicted by a new stream */
};

struct vc_seq_shard {
	/* lock protects the fields below; a leaf lock. */
	vc_spinlock_t lock;
	unsigned int nr;		/* entries of this shard in use */
	u64 clock;			/* LRU clock, bumped per request */
	struct vc_seq_stats stats;
	struct vc_seq_stream streams[VC_SEQ_MAX_STREAMS];
};

struct vc_seq {
	/*
	 * Lock order: ctl_lock, then shard locks in index order.
	 * ctl_lock serialises configuration changes.  enabled and
	 * threshold_bytes are written under ctl_lock and read without a
	 * lock (vc_load_u64).  nr_shards and nr_streams change with
	 * ctl_lock and every shard lock held, so any one shard lock
	 * makes them stable.
	 */
	vc_spinlock_t ctl_lock;
	u64 enabled;
	u64 threshold_bytes;
	u64 nr_shards;			/* 1 or VC_SEQ_SHARDS */
	unsigned int nr_streams;	/* total entries, <= MAX */
	struct vc_seq_shard shard[VC_SEQ_SHARDS];
};

/*
 * Initialise @s: @nr_streams table entries (1..VC_SEQ_MAX_STREAMS),
 * @threshold_kib (1..VC_SEQ_MAX_THRESH_KIB), enabled or not.
 * Returns 0 or -EINVAL.
 */
int vc_seq_init(struct vc_seq *s, unsigned int nr_streams, u64 threshold_kib,
		bool enabled);
void vc_seq_destroy(struct vc_seq *s);

/*
 * Account one request of @nr_sectors at @sector from @submitter and tell
 * whether it should bypass the cache (true) or go through it (false).
 * A zero-length request never bypasses and changes nothing.  Always false
 * while detection is disabled.
 */
bool vc_seq_check(struct vc_seq *s, u64 submitter, u64 sector,
		  u32 nr_sectors);

/* Runtime configuration; each returns 0 or -EINVAL. */
int vc_seq_set_threshold(struct vc_seq *s, u64 threshold_kib);
int vc_seq_set_streams(struct vc_seq *s, unsigned int nr_streams);
/* Turning detection on or off forgets every tracked stream. */
void vc_seq_set_enabled(struct vc_seq *s, bool enabled);

bool vc_seq_enabled(struct vc_seq *s);
u64 vc_seq_threshold_kib(struct vc_seq *s);
unsigned int vc_seq_nr_streams(struct vc_seq *s);
/* Number of table entries currently tracking a stream. */
unsigned int vc_seq_active_streams(struct vc_seq *s);

void vc_seq_get_stats(struct vc_seq *s, struct vc_seq_stats *out);
void vc_seq_reset_stats(struct vc_seq *s);
/* Forget every stream (e.g. on detach or mode change). */
void vc_seq_reset_streams(struct vc_seq *s);

#endif /* VC_SEQ_H */
