/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace-only controls of the posix environment: virtual clock,
 * deterministic (manually pumped) deferred work, interrupting waits,
 * wrapping caller memory as a data buffer, and an in-memory device.
 */
#ifndef VC_POSIX_H
#define VC_POSIX_H

#include "vc_env.h"

/*
 * Virtual clock.  With @fn set, vc_now_ns() returns fn(ctx); NULL goes
 * back to CLOCK_MONOTONIC.  Process-wide.
 */
void vc_posix_set_clock(u64 (*fn)(void *ctx), void *ctx);

/*
 * Work execution model.  Default (manual = false): one worker thread runs
 * due work items, sleeping on real time, or polling every millisecond of
 * real time for due items when a virtual clock is set.
 *
 * manual = true: no thread; work items only run inside
 * vc_posix_run_work(), in the caller's thread, in deadline order (ties:
 * queueing order) - fully deterministic.  vc_waitq_wait() then calls the
 * pump hook (or vc_posix_run_work() if none) instead of sleeping, and
 * fails with -EDEADLK when the pump made no progress and the condition
 * still does not hold.
 */
void vc_posix_set_manual_work(bool manual);
/* Run every item due at vc_now_ns(); returns how many ran. */
unsigned int vc_posix_run_work(void);
/* Deadline of the earliest queued item, or ~0ULL if none. */
u64 vc_posix_next_work_ns(void);
/*
 * Hook for manual mode waits: called repeatedly while a condition does
 * not hold; returns true if it made progress (e.g. completed queued
 * simulated I/O, advanced the virtual clock).
 */
void vc_posix_set_pump(bool (*pump)(void *ctx), void *ctx);

/* Make the current and next interruptible waits return -EINTR (any thread). */
void vc_posix_interrupt(void);
void vc_posix_clear_interrupt(void);

/*
 * PID liveness for PID-list expiry: NULL (default) = every pid is alive;
 * vc_posix_pid_alive_kill checks the real system with kill(pid, 0).
 */
void vc_posix_set_pid_alive(bool (*fn)(void *ctx, u64 pid), void *ctx);
bool vc_posix_pid_alive_kill(void *ctx, u64 pid);

/*
 * Fault point: the next @n allocations made on the I/O path (gfp other than
 * VC_GFP_KERNEL) fail, as they may in the kernel under memory pressure.
 */
void vc_posix_fail_io_allocs(unsigned long n);
/*
 * Fault point: the next @n vc_mempool_try_alloc() calls return NULL, as
 * when memory and the pool's reserve have nothing at once; and how many
 * of them are left (not yet met).
 */
void vc_posix_fail_try_allocs(unsigned long n);
unsigned long vc_posix_try_allocs_left(void);

/* 0 = silent, 1 = errors, 2 = +warnings, 3 = +info (default 1). */
void vc_posix_set_log_level(int level);
/* How many errors were logged (vc_log_err), whatever the level. */
unsigned long vc_posix_log_errors(void);
/* The last error logged ("" if none). */
void vc_posix_last_error(char *buf, size_t size);

/* Wrap caller memory (not freed by vc_buf_free()). */
struct vc_buf *vc_buf_wrap(void *data, u32 len);
/* Direct pointer to a buffer's bytes (userspace only). */
static inline void *vc_buf_ptr(struct vc_buf *b) { return b ? b->data : NULL; }

/*
 * In-memory device for tests: @nr_sectors of RAM, completes inline.
 * Volatile write cache: when @volatile_cache, completed writes without
 * FUA are kept in a volatile layer until a FLUSH (or a PREFLUSH write);
 * vc_memdev_power_cut() drops that layer.  Error injection: @fail, when
 * set, is asked before each I/O; a non-zero return fails it with that
 * errno (negative).
 */
struct vc_memdev;
struct vc_memdev *vc_memdev_create(const char *name, u64 nr_sectors,
				   bool volatile_cache);
void vc_memdev_destroy(struct vc_memdev *m);
struct vc_dev *vc_memdev_dev(struct vc_memdev *m);
void vc_memdev_set_fail(struct vc_memdev *m,
			int (*fail)(void *ctx, const struct vc_dev_io *io),
			void *ctx);
/* Lose the volatile layer, as at a power cut. */
void vc_memdev_power_cut(struct vc_memdev *m);
/*
 * A power cut that reorders: the volatile writes of sectors [first,
 * first + nr) reached the media, every other volatile write is lost (a
 * device may persist its cached writes in any order).
 */
void vc_memdev_power_cut_keep(struct vc_memdev *m, u64 first, u64 nr);
/* Read stable + volatile contents (what a reader sees) without I/O. */
void vc_memdev_peek(struct vc_memdev *m, u64 sector, void *dst, u32 len);
void vc_memdev_poke(struct vc_memdev *m, u64 sector, const void *src, u32 len);
/* Counters. */
struct vc_memdev_stats {
	u64 reads, writes, flushes, discards, fua, preflush;
	u64 read_bytes, write_bytes;
	/*
	 * Writes flagged VC_DEV_META; writes that cover a physical block
	 * (vc_dev.physical_block_size, if over 512) only in part, all and
	 * VC_DEV_META ones: the device would read-modify-write those.
	 */
	u64 meta_writes, rmw_writes, meta_rmw_writes;
};
void vc_memdev_get_stats(struct vc_memdev *m, struct vc_memdev_stats *st);

#endif /* VC_POSIX_H */
