/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vcache_nl.h - generic netlink ABI of vcache.ko (family "vcache").
 *
 * The contract between the driver's control plane (driver/netlink/) and
 * the tools (tools/vcache-config, vcache-monitor).  Both include this file
 * unchanged.  Numbers are ABI: new commands and attributes are appended,
 * never renumbered; VCACHE_GENL_VERSION grows when the meaning of an
 * existing one changes.
 *
 * Objects
 *   cache          a flash area run by one engine instance: a region of a
 *                  vcache card (/dev/vflashN) or any other block device.
 *                  Named by VCACHE_A_NAME (1..VCACHE_NAME_MAX-1 chars of
 *                  [A-Za-z0-9_.-], not starting with '.' or '-').
 *   backing        a block device served through a cache; each one gets a
 *                  cached device /dev/vcacheN (udev: /dev/vcache/<devname>).
 *                  The first backing of cache NAME is called NAME, later
 *                  ones NAME-<id> unless VCACHE_B_DEVNAME says otherwise.
 *
 * Devices are passed as VCACHE_A_*_DEV: u64, major << 32 | minor (what
 * stat(2) gives in st_rdev, split with major()/minor()).  A backing device
 * is recognised across reboots by its identity string (VCACHE_B_IDENT,
 * computed by the tool from stable properties: WWN, serial, DM/MD uuid,
 * partition uuid), never by its name.
 *
 * Rules
 *   - every command that changes something needs CAP_SYS_ADMIN (EPERM);
 *     GET, PID_GET and dumps are open to every user, but VCACHE_B_IDENT
 *     (what auto-attach matches) is only in replies to CAP_SYS_ADMIN
 *     and never in events;
 *   - errors come back as an errno with an extack message naming what was
 *     wrong (attribute, value, device, state and what to do);
 *   - attributes are validated strictly: unknown attributes, wrong types
 *     or lengths, out-of-range values are refused (EINVAL), never ignored.
 *
 * Events (multicast group "events"): VCACHE_CMD_EVENT messages carrying
 * VCACHE_A_EVENT, VCACHE_A_NAME and, as fits the event, VCACHE_A_STATE,
 * VCACHE_A_BACKING, VCACHE_A_FLUSH, VCACHE_A_ERRNO, VCACHE_A_MESSAGE.
 */
#ifndef _UAPI_VCACHE_NL_H
#define _UAPI_VCACHE_NL_H

#include <linux/types.h>

#define VCACHE_GENL_NAME		"vcache"
#define VCACHE_GENL_VERSION		1
#define VCACHE_GENL_MCGRP_EVENTS	"events"

#define VCACHE_NAME_MAX		32	/* with the NUL */
#define VCACHE_IDENT_MAX	48	/* with the NUL */
#define VCACHE_PIDS_MAX		1024	/* PIDs per PID_SET message */

enum vcache_cmd {
	VCACHE_CMD_UNSPEC,
	/*
	 * Create a cache and its first cached device.
	 * NAME, CACHE_DEV, BACKING (nested: DEV, IDENT, optional DEVNAME);
	 * optional CACHE_SIZE (bytes; card: size of the region, default all
	 * free space; other device: at most its size, default all of it),
	 * BLOCK_SIZE, MODE, POLICY, PARAMS.
	 */
	VCACHE_CMD_CREATE = 1,
	/* NAME; FLAGS: FLUSH (write back first) or DISCARD_DIRTY. */
	VCACHE_CMD_DELETE,
	/*
	 * NAME, BACKING (DEV, IDENT, optional DEVNAME).  While it runs (it
	 * reads the disk), a second ATTACH of the identity: EALREADY.  A
	 * CREATE or ATTACH whose card or module goes meanwhile: ECANCELED.
	 */
	VCACHE_CMD_ATTACH,
	/* NAME, BACKING (DEVNAME or DEV); FLAGS: FLUSH or KEEP_DIRTY. */
	VCACHE_CMD_DETACH,
	/*
	 * Start writing back dirty data: NAME, optional BACKING (DEVNAME or
	 * DEV).  Returns at once; progress in GET's VCACHE_A_FLUSH and in
	 * FLUSH events.  The tool waits by polling GET.
	 */
	VCACHE_CMD_FLUSH,
	/* Stop a running flush: NAME (result -EINTR, data consistent). */
	VCACHE_CMD_FLUSH_CANCEL,
	/* Online settings: NAME, any of MODE, POLICY, PARAMS. */
	VCACHE_CMD_SET,
	/*
	 * GET with NAME: one cache; as a dump (NLM_F_DUMP): every cache.
	 * Reply: VCACHE_CMD_GET with NAME, STATE, CACHE_DEV, CACHE_DISK,
	 * CARD, REGION_START, CACHE_SIZE, BLOCK_SIZE, MODE, REQ_MODE, POLICY,
	 * PARAMS, STATS, FLUSH, PID_DEFAULT and one BACKING nest per backing
	 * device (waiting ones included).
	 */
	VCACHE_CMD_GET,
	/*
	 * PID lists: NAME, PID_LIST, PID_OP; PIDS for ADD/DEL; PID_DEFAULT
	 * alone sets the default (then PID_LIST/PID_OP are not given).
	 * PIDs are numbers in the sender's PID namespace; the kernel keeps
	 * the process itself (a later process with the same number is not
	 * on the list) and drops the entry when it exits.  Cgroup lists
	 * (PID_LIST VCACHE_PID_CG_*): ADD takes CGROUP_FD, DEL CGROUP_FD or
	 * CGROUP_ID, CLEAR nothing.
	 */
	VCACHE_CMD_PID_SET,
	/*
	 * NAME.  Reply: NAME, PID_DEFAULT, then for the allow and the deny
	 * list: PID_LIST followed by the PIDS nest of that list (numbers in
	 * the reader's PID namespace, ascending) and PIDS_HIDDEN; then for
	 * the cgroup allow and deny lists: PID_LIST followed by CGROUPS.
	 */
	VCACHE_CMD_PID_GET,
	/*
	 * A block device appeared (udev): BACKING (DEV, IDENT).  If a cache
	 * is waiting for that identity, the device is attached if it also
	 * has exactly the size recorded for it (EMEDIUMTYPE otherwise: ATTACH
	 * by hand vouches for it); no one waiting: ENOENT (nothing to do, not
	 * an error for the udev rule); the same disk being attached by an
	 * earlier HOTPLUG or ATTACH still running: EALREADY (nothing to do
	 * either); its cache's card or the module going: ECANCELED.
	 */
	VCACHE_CMD_HOTPLUG,
	/* Zero the statistics: NAME. */
	VCACHE_CMD_RESET_STATS,
	/* Multicast only. */
	VCACHE_CMD_EVENT,
	/*
	 * Latency histograms: NAME.  Reply: VCACHE_CMD_LAT_GET with NAME and
	 * LATENCY (one nest per path, enum vcache_lat_path + 1 as its type).
	 * Open to every user.
	 */
	VCACHE_CMD_LAT_GET,
	/*
	 * Rewrite the damaged card-space table of a card (its raw disk in
	 * CACHE_DEV) as a valid empty one; the raw disk becomes read-write
	 * again.  Only when the table is damaged (neither copy valid: EINVAL
	 * otherwise).  EBUSY when a damaged copy still lists caches, unless
	 * FLAGS has FORCE: those caches are then forgotten (their data stays
	 * on the card, unreachable, below the raw disk's end).
	 */
	VCACHE_CMD_REPAIR_TABLE,
	/*
	 * Load again, salvaging, the card cache NAME whose metadata did not
	 * verify when its card was probed (state FAILED, nothing loaded):
	 * every record that verifies is loaded, the rest is counted
	 * (load_bad_sectors, load_bad_records) and logged, and the metadata
	 * is rewritten.  Blocks a damaged record described may read older
	 * data: the administrator's decision, never taken automatically.
	 * EINVAL for any other cache.  (A cache on a plain block device:
	 * HOTPLUG with LOAD_CACHE | SALVAGE.)
	 */
	VCACHE_CMD_SALVAGE,
	__VCACHE_CMD_MAX,
};
#define VCACHE_CMD_MAX (__VCACHE_CMD_MAX - 1)

enum vcache_attr {
	VCACHE_A_UNSPEC,
	VCACHE_A_NAME,		/* string */
	VCACHE_A_CACHE_DEV,	/* u64 major << 32 | minor */
	VCACHE_A_CACHE_DISK,	/* string: vflash0, nvme0n1p3 (reply) */
	VCACHE_A_CARD,		/* string: card serial (reply, card caches) */
	VCACHE_A_REGION_START,	/* u64 bytes on the card (reply) */
	VCACHE_A_CACHE_SIZE,	/* u64 bytes */
	VCACHE_A_BLOCK_SIZE,	/* u32 bytes: 4096..65536, power of two */
	VCACHE_A_MODE,		/* u8 enum vcache_mode */
	VCACHE_A_REQ_MODE,	/* u8: the mode asked for (reply) */
	VCACHE_A_POLICY,	/* u8 enum vcache_policy */
	VCACHE_A_PARAMS,	/* nest: enum vcache_param_attr, each u64 */
	VCACHE_A_STATE,		/* u8 enum vcache_state (reply, events) */
	VCACHE_A_FLAGS,		/* u32 VCACHE_F_* */
	VCACHE_A_BACKING,	/* nest: enum vcache_backing_attr */
	VCACHE_A_STATS,		/* nest: enum vcache_stat_attr, each u64 */
	VCACHE_A_FLUSH,		/* nest: enum vcache_flush_attr */
	VCACHE_A_PID_LIST,	/* u8 enum vcache_pid_list */
	VCACHE_A_PID_OP,	/* u8 enum vcache_pid_op */
	VCACHE_A_PIDS,		/* nest of VCACHE_A_PID */
	VCACHE_A_PID,		/* u32 */
	VCACHE_A_PID_DEFAULT,	/* u8 enum vcache_pid_default */
	VCACHE_A_EVENT,		/* u8 enum vcache_event */
	VCACHE_A_ERRNO,		/* u32: a positive errno */
	VCACHE_A_MESSAGE,	/* string */
	VCACHE_A_PAD,
	VCACHE_A_LATENCY,	/* nest: per path, type = vcache_lat_path + 1 */
	/*
	 * u32: a file descriptor of the sender open on a cgroup v2
	 * directory (PID_SET of a cgroup list)
	 */
	VCACHE_A_CGROUP_FD,
	VCACHE_A_CGROUP_ID,	/* u64: cgroup id (the directory's inode) */
	VCACHE_A_CGROUPS,	/* nest of VCACHE_A_CGROUP (reply) */
	VCACHE_A_CGROUP,	/* nest: CGROUP_ID, CGROUP_PATH (reply) */
	/*
	 * string: the cgroup's path in the reader's cgroup namespace, ""
	 * when it cannot be named (removed) (reply)
	 */
	VCACHE_A_CGROUP_PATH,
	/* u32: entries of the list not visible in the reader's PID ns */
	VCACHE_A_PIDS_HIDDEN,
	__VCACHE_A_MAX,
};
#define VCACHE_A_MAX (__VCACHE_A_MAX - 1)

/* VCACHE_A_FLAGS */
#define VCACHE_F_FLUSH		(1u << 0)	/* DELETE, DETACH */
#define VCACHE_F_KEEP_DIRTY	(1u << 1)	/* DETACH */
#define VCACHE_F_DISCARD_DIRTY	(1u << 2)	/* DELETE */
/*
 * HOTPLUG: the device holds a cache (a vcache superblock): load it, named
 * as its superblock says, with its cached devices waiting for their
 * backing devices.  Without it HOTPLUG only attaches a waiting backing
 * device.
 */
#define VCACHE_F_LOAD_CACHE	(1u << 3)
/* REPAIR_TABLE: forget the caches a damaged table still lists. */
#define VCACHE_F_FORCE		(1u << 4)
/*
 * HOTPLUG with LOAD_CACHE: load the cache even if its metadata is damaged
 * (salvage: see VCACHE_CMD_SALVAGE).  Without it such a cache is refused.
 */
#define VCACHE_F_SALVAGE	(1u << 5)
#define VCACHE_F_ALL		0x3fu

enum vcache_backing_attr {
	VCACHE_B_UNSPEC,
	VCACHE_B_DEV,		/* u64 major << 32 | minor (0: waiting) */
	VCACHE_B_IDENT,		/* string, < VCACHE_IDENT_MAX (reply:
				 * CAP_SYS_ADMIN only) */
	VCACHE_B_DEVNAME,	/* string: /dev/vcache/<devname> */
	VCACHE_B_DISK,		/* string: vcache0 (reply) */
	VCACHE_B_ID,		/* u32: the engine's id (reply) */
	VCACHE_B_STATE,		/* u8 enum vcache_backing_state (reply) */
	VCACHE_B_SIZE,		/* u64 bytes (reply) */
	VCACHE_B_DIRTY_BYTES,	/* u64 (reply) */
	VCACHE_B_BACKING_DISK,	/* string: sdb, vda (reply) */
	/*
	 * nest: this device's own counters (reply), enum vcache_stat_attr
	 * types; only those marked "per device" below.
	 */
	VCACHE_B_STATS,
	__VCACHE_B_MAX,
};
#define VCACHE_B_MAX (__VCACHE_B_MAX - 1)

enum vcache_flush_attr {
	VCACHE_FL_UNSPEC,
	VCACHE_FL_TARGET,	/* u64 blocks dirty when the flush started */
	VCACHE_FL_DONE,		/* u64 of those, clean now */
	VCACHE_FL_REMAINING,	/* u64 dirty blocks left */
	VCACHE_FL_RUNNING,	/* u8 0/1 */
	VCACHE_FL_RESULT,	/* u32: 0 or a positive errno (last flush) */
	VCACHE_FL_SEQ,		/* u32: flushes started since load */
	VCACHE_FL_PAD,
	__VCACHE_FL_MAX,
};
#define VCACHE_FL_MAX (__VCACHE_FL_MAX - 1)

enum vcache_mode {
	VCACHE_MODE_WB = 0,	/* write-back */
	VCACHE_MODE_WT = 1,	/* write-through */
	VCACHE_MODE_WA = 2,	/* write-around */
	VCACHE_MODE_PT = 3,	/* pass-through */
	VCACHE_NR_MODES
};

enum vcache_policy {
	VCACHE_POLICY_FIFO = 0,
	VCACHE_POLICY_LRU = 1,
	VCACHE_POLICY_S3FIFO = 2,	/* small + main FIFO with ghost */
	VCACHE_POLICY_TINYLFU = 3,	/* frequency-sketch admission */
	VCACHE_NR_POLICIES
};

enum vcache_state {
	VCACHE_STATE_RUNNING = 0,	/* every backing device attached */
	VCACHE_STATE_WAITING = 1,	/* a backing device is missing */
	VCACHE_STATE_DEGRADED = 2,	/* flash errors: mode lowered */
	VCACHE_STATE_FAILED = 3,	/* flash gone: pass-through */
	VCACHE_STATE_STOPPING = 4,
	VCACHE_NR_STATES
};

enum vcache_backing_state {
	VCACHE_BS_ATTACHED = 0,
	VCACHE_BS_WAITING = 1,		/* not there yet (since load) */
	VCACHE_BS_DETACHED_DIRTY = 2,	/* detached, dirty data kept */
	VCACHE_NR_BSTATES
};

enum vcache_pid_list {
	VCACHE_PID_ALLOW = 0,
	VCACHE_PID_DENY = 1,
	/* cgroups: I/O charged to the cgroup or a descendant (writeback too) */
	VCACHE_PID_CG_ALLOW = 2,
	VCACHE_PID_CG_DENY = 3,
};

enum vcache_pid_op {
	VCACHE_PID_ADD = 0,
	VCACHE_PID_DEL = 1,
	VCACHE_PID_CLEAR = 2,
};

enum vcache_pid_default {
	VCACHE_PID_CACHE_ALL = 0,	/* cache everything except deny */
	VCACHE_PID_CACHE_NONE = 1,	/* cache nothing except allow */
};

enum vcache_event {
	VCACHE_EV_CREATED = 1,
	VCACHE_EV_DELETED,
	VCACHE_EV_LOADED,		/* came back at probe */
	VCACHE_EV_STATE,		/* VCACHE_A_STATE changed */
	VCACHE_EV_ATTACHED,		/* BACKING */
	VCACHE_EV_DETACHED,		/* BACKING */
	VCACHE_EV_SET,			/* settings changed */
	VCACHE_EV_FLUSH_PROGRESS,	/* FLUSH, about once a second */
	VCACHE_EV_FLUSH_DONE,		/* FLUSH (RESULT) */
	VCACHE_EV_ERROR,		/* ERRNO, MESSAGE */
};

/*
 * Parameters: one attribute each in VCACHE_A_PARAMS (u64), named as the
 * engine names them (vcache-config set NAME KEY=VALUE uses these names).
 * X(ENUM_SUFFIX, name)
 */
#define VCACHE_PARAMS(X)				\
	X(DIRTY_HIGH_PCT, dirty_high_pct)		\
	X(DIRTY_LOW_PCT, dirty_low_pct)			\
	X(DIRTY_HIGH_BYTES, dirty_high_bytes)		\
	X(DIRTY_LOW_BYTES, dirty_low_bytes)		\
	X(MAX_DIRTY_AGE_MS, max_dirty_age_ms)		\
	X(IDLE_MS, idle_ms)				\
	X(WB_MAX_INFLIGHT, wb_max_inflight)		\
	X(WB_MAX_IO_KIB, wb_max_io_kib)			\
	X(CLEAN_INTERVAL_MS, clean_interval_ms)		\
	X(SEQ_ENABLE, seq_enable)			\
	X(SEQ_THRESHOLD_KIB, seq_threshold_kib)		\
	X(ADMISSION, admission)				\
	X(ADMIT_FULL_PCT, admit_full_pct)		\
	X(PID_MODE, pid_mode)				\
	X(COMMIT_MS, commit_ms)				\
	X(READAHEAD_KIB, readahead_kib)

/*
 * Name tables in enum order (index 0 is UNSPEC):
 *   const char *names[] = { NULL, VCACHE_PARAMS(VCACHE_X_NAME) };
 */
#define VCACHE_X_NAME(e, n) #n,

#define VCACHE_P_ENUM_(e, n) VCACHE_P_##e,
enum vcache_param_attr {
	VCACHE_P_UNSPEC,
	VCACHE_PARAMS(VCACHE_P_ENUM_)
	__VCACHE_P_MAX,
};
#undef VCACHE_P_ENUM_
#define VCACHE_P_MAX (__VCACHE_P_MAX - 1)

/*
 * Statistics: one u64 attribute each in VCACHE_A_STATS, raw counts in
 * base units (bytes, ns, blocks, requests).  X(ENUM_SUFFIX, name)
 */
#define VCACHE_STATS(X)					\
	X(READS, reads)					\
	X(WRITES, writes)				\
	X(FLUSHES, flushes)				\
	X(DISCARDS, discards)				\
	X(WRITE_ZEROES, write_zeroes)			\
	X(FUA_WRITES, fua_writes)			\
	X(READ_HITS, read_hits)				\
	X(READ_MISSES, read_misses)			\
	X(WRITE_HITS, write_hits)			\
	X(WRITE_MISSES, write_misses)			\
	X(READ_BYTES, read_bytes)			\
	X(WRITE_BYTES, write_bytes)			\
	X(BYPASS_MODE, bypass_mode)			\
	X(BYPASS_SEQ, bypass_seq)			\
	X(BYPASS_PID, bypass_pid)			\
	X(BYPASS_ADMISSION, bypass_admission)		\
	X(BYPASS_NOSPACE, bypass_nospace)		\
	X(BYPASS_BUSY, bypass_busy)			\
	X(ADMITTED, admitted)				\
	X(NOT_ADMITTED, not_admitted)			\
	X(EVICTIONS, evictions)				\
	X(CLEAN_WATERMARK, clean_watermark)		\
	X(CLEAN_AGE, clean_age)				\
	X(CLEAN_IDLE, clean_idle)			\
	X(CLEAN_FLUSH, clean_flush)			\
	X(CLEAN_MODE, clean_mode)			\
	X(CLEAN_TAIL, clean_tail)			\
	X(WB_IOS, wb_ios)				\
	X(CACHE_READ_ERRORS, cache_read_errors)		\
	X(CACHE_WRITE_ERRORS, cache_write_errors)	\
	X(BACKING_READ_ERRORS, backing_read_errors)	\
	X(BACKING_WRITE_ERRORS, backing_write_errors)	\
	X(READ_RETRIES, read_retries)			\
	X(LOST_BLOCKS, lost_blocks)			\
	X(LOST_READS, lost_reads)			\
	X(LOST_MARKED, lost_marked)			\
	X(LOAD_BAD_SECTORS, load_bad_sectors)		\
	X(LOAD_BAD_RECORDS, load_bad_records)		\
	X(DEGRADATIONS, degradations)			\
	X(FLASH_BYTES_WRITTEN, flash_bytes_written)	\
	X(FLASH_BYTES_READ, flash_bytes_read)		\
	X(BACKING_BYTES_WRITTEN, backing_bytes_written)	\
	X(BACKING_BYTES_READ, backing_bytes_read)	\
	X(BACKING_IOS, backing_ios)			\
	X(MD_WRITES, md_writes)				\
	X(COMMITS, commits)				\
	X(CACHE_FLUSHES, cache_flushes)			\
	X(NR_BLOCKS, nr_blocks)				\
	X(VALID_BLOCKS, valid_blocks)			\
	X(DIRTY_BLOCKS, dirty_blocks)			\
	X(DIRTY_BYTES, dirty_bytes)			\
	X(MEM_BYTES, mem_bytes)				\
	X(OLDEST_DIRTY_AGE_NS, oldest_dirty_age_ns)

/*
 * Added in the monitor's release (after VCACHE_S_PAD, which keeps its
 * number): bytes per path, bypassed bytes by reason, write-back in
 * blocks and bytes, and ELAPSED_NS, the time the counters cover (since
 * the cache was loaded or its statistics were last reset).
 */
#define VCACHE_STATS2(X)				\
	X(READ_HIT_BYTES, read_hit_bytes)		\
	X(READ_MISS_BYTES, read_miss_bytes)		\
	X(WRITE_HIT_BYTES, write_hit_bytes)		\
	X(WRITE_MISS_BYTES, write_miss_bytes)		\
	X(BYPASS_MODE_BYTES, bypass_mode_bytes)		\
	X(BYPASS_SEQ_BYTES, bypass_seq_bytes)		\
	X(BYPASS_PID_BYTES, bypass_pid_bytes)		\
	X(BYPASS_ADMISSION_BYTES, bypass_admission_bytes) \
	X(BYPASS_NOSPACE_BYTES, bypass_nospace_bytes)	\
	X(BYPASS_BUSY_BYTES, bypass_busy_bytes)		\
	X(WB_BLOCKS, wb_blocks)				\
	X(WB_BYTES, wb_bytes)				\
	X(ELAPSED_NS, elapsed_ns)			\
	X(BACKING_FLUSHES, backing_flushes)		\
	X(WB_FLUSHES, wb_flushes)			\
	X(WB_RATE_BPS, wb_rate_bps)			\
	X(WB_THROTTLED, wb_throttled)			\
	X(WRITE_WAITS, write_waits)			\
	X(FILLS_OVERTAKEN, fills_overtaken)		\
	X(READAHEAD_BLOCKS, readahead_blocks)		\
	X(DIRTY_OVERWRITES, dirty_overwrites)		\
	X(OOP_WRITES, oop_writes)

/*
 * Per device (sent in each VCACHE_B_STATS too): READS, WRITES, FLUSHES,
 * DISCARDS, WRITE_ZEROES, FUA_WRITES, READ_HITS, READ_MISSES, WRITE_HITS,
 * WRITE_MISSES, READ_BYTES, WRITE_BYTES, BYPASS_*, WB_IOS,
 * BACKING_READ_ERRORS, BACKING_WRITE_ERRORS, LOST_BLOCKS, LOST_READS,
 * every *_BYTES of VCACHE_STATS2, WB_BLOCKS, ELAPSED_NS, DIRTY_BYTES,
 * BACKING_FLUSHES (host FLUSHes that had to FLUSH the backing device:
 * something was written there since its last FLUSH), WB_FLUSHES (FLUSHes
 * of the backing device by write-back, one per batch).  WB_RATE_BPS (cache
 * only) is the rate of rate-controlled write-back now, 0 when none runs
 * or it runs at full speed.  WB_THROTTLED: writes slowed at the high
 * watermark (they waited for write-back, at most 100 ms).
 * WRITE_WAITS: writes that waited for their block (busy: being filled,
 * read, written or written back).  FILLS_OVERTAKEN: read-miss fills
 * whose block a write-back write of the whole block took over while they
 * read it from the backing device (the write did not wait for the disk).
 * READAHEAD_BLOCKS: blocks a read-miss fill read ahead into free cache
 * blocks (readahead_kib) and installed clean.
 * DIRTY_OVERWRITES (cache only): whole-block write-back writes over a
 * dirty block; OOP_WRITES: those of them written out of place (another
 * cache block, the mapping switched by the next commit), so that a
 * failed write leaves the block's older data; the rest were written in
 * place (cache/API.md, "Durability rules").
 */

#define VCACHE_S_ENUM_(e, n) VCACHE_S_##e,
enum vcache_stat_attr {
	VCACHE_S_UNSPEC,
	VCACHE_STATS(VCACHE_S_ENUM_)
	VCACHE_S_PAD,
	VCACHE_STATS2(VCACHE_S_ENUM_)
	__VCACHE_S_MAX,
};
#undef VCACHE_S_ENUM_

/* Names in enum order: const char *n[] = VCACHE_STAT_NAMES; */
#define VCACHE_STAT_NAMES \
	{ NULL, VCACHE_STATS(VCACHE_X_NAME) NULL, VCACHE_STATS2(VCACHE_X_NAME) }

/*
 * Latency (VCACHE_CMD_LAT_GET): a histogram per path of the time from a
 * request's arrival to its completion (write-back: from the submission
 * of a merged backing write to its completion), in nanoseconds.
 */
enum vcache_lat_path {
	VCACHE_LAT_READ_HIT = 0,
	VCACHE_LAT_READ_MISS,	/* a read with any block missed */
	VCACHE_LAT_WRITE_HIT,
	VCACHE_LAT_WRITE_MISS,	/* a write with any block not cached */
	VCACHE_LAT_BYPASS,	/* no miss, but a block went around the cache */
	VCACHE_LAT_WRITEBACK,
	VCACHE_LAT_FLUSH,	/* host FLUSH requests */
	VCACHE_NR_LAT_PATHS
};

/* Names in enum order: const char *n[] = VCACHE_LAT_PATH_NAMES; */
#define VCACHE_LAT_PATH_NAMES {						\
	[VCACHE_LAT_READ_HIT] = "read_hit",				\
	[VCACHE_LAT_READ_MISS] = "read_miss",				\
	[VCACHE_LAT_WRITE_HIT] = "write_hit",				\
	[VCACHE_LAT_WRITE_MISS] = "write_miss",				\
	[VCACHE_LAT_BYPASS] = "bypass",					\
	[VCACHE_LAT_WRITEBACK] = "writeback",				\
	[VCACHE_LAT_FLUSH] = "flush",					\
}

/* In each path nest of VCACHE_A_LATENCY: */
enum vcache_lat_attr {
	VCACHE_L_UNSPEC,
	VCACHE_L_COUNT,		/* u64: requests */
	/*
	 * nest: the non-empty buckets, each a u64 count whose attribute
	 * type is its bucket's index + 1.
	 */
	VCACHE_L_BUCKETS,
	VCACHE_L_PAD,
	VCACHE_L_SUM_NS,	/* u64: their latencies added up */
	__VCACHE_L_MAX,
};
#define VCACHE_L_MAX (__VCACHE_L_MAX - 1)

/*
 * Buckets, log-linear: bucket 0 holds [0, 2^10) ns; then each power of two
 * [2^m, 2^(m+1)) for m = 10..37 is split into 8 equal buckets; the last
 * bucket holds [2^38 ns, infinity).  vcache_lat_low(b) is the first
 * nanosecond value of bucket b; the bucket ends where b + 1 starts.
 */
#define VCACHE_LAT_MIN_SHIFT	10
#define VCACHE_LAT_MAX_SHIFT	38
#define VCACHE_LAT_SUB_BITS	3
#define VCACHE_LAT_BUCKETS \
	(2 + ((VCACHE_LAT_MAX_SHIFT - VCACHE_LAT_MIN_SHIFT) << VCACHE_LAT_SUB_BITS))

static inline __u64 vcache_lat_low(unsigned int b)
{
	unsigned int m, sub;

	if (b == 0)
		return 0;
	if (b >= VCACHE_LAT_BUCKETS - 1)
		return 1ULL << VCACHE_LAT_MAX_SHIFT;
	m = VCACHE_LAT_MIN_SHIFT + ((b - 1) >> VCACHE_LAT_SUB_BITS);
	sub = (b - 1) & ((1u << VCACHE_LAT_SUB_BITS) - 1);
	return ((1ULL << VCACHE_LAT_SUB_BITS) + sub) << (m - VCACHE_LAT_SUB_BITS);
}

/*
 * The @ppm-th quantile (parts per million: 500000 is the median, 999000
 * p99.9) of @count requests in @b[VCACHE_LAT_BUCKETS], reported as the
 * end of the bucket that holds it (at most 1/8 above the true value;
 * the last bucket reports its start); 0 if @count is 0.
 */
static inline __u64 vcache_lat_quantile(const __u64 *b, __u64 count,
					__u64 ppm)
{
	__u64 cum = 0;
	unsigned int i;

	if (!count)
		return 0;
	for (i = 0; i < VCACHE_LAT_BUCKETS - 1; i++) {
		cum += b[i];
		if (cum * 1000000 >= count * ppm)
			return vcache_lat_low(i + 1);
	}
	return vcache_lat_low(VCACHE_LAT_BUCKETS - 1);
}
#define VCACHE_S_MAX (__VCACHE_S_MAX - 1)

/*
 * Exit codes of vcache-config (documented in vcache-config(8)), here so
 * that scripts and tests share them.
 */
#define VCACHE_EXIT_OK		0
#define VCACHE_EXIT_FAIL	1	/* the kernel refused or failed */
#define VCACHE_EXIT_USAGE	2	/* bad arguments: nothing changed */
#define VCACHE_EXIT_NOENT	3	/* no such cache or device */
#define VCACHE_EXIT_BUSY	4	/* dirty data, device in use */
#define VCACHE_EXIT_INTR	5	/* flush wait interrupted (Ctrl-C) */
#define VCACHE_EXIT_NOMOD	6	/* vcache.ko not loaded */
#define VCACHE_EXIT_PERM	7	/* needs root (CAP_SYS_ADMIN) */

#endif /* _UAPI_VCACHE_NL_H */
