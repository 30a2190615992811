/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the engine's unit tests: in-memory cache and backing
 * devices, a virtual clock, manual (deterministic) work, synchronous I/O.
 */
#ifndef TUTIL_H
#define TUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "vc_engine.h"
#include "vc_posix.h"
#include "vc_internal.h"

#define T_BS		4096u
#define T_BSEC		(T_BS / 512)

struct tenv {
	struct vc_memdev *cm, *bm;	/* cache, backing */
	struct vc_cache *c;
	u32 dev;
	u64 cache_sectors, back_sectors;
	bool vol;
	/*
	 * The cache device has the card's 4 KiB physical blocks: t_teardown()
	 * fails if a metadata write covered one only in part, unless the
	 * test set this (an older format, written by the sector).
	 */
	bool md_rmw_ok;
};

extern u64 t_now_ns;

/*
 * Defaults with nothing running on its own: no sequential bypass, no
 * idle or age-based write-back, no watermark cleaning.
 */
struct vc_cache_config t_cfg_manual(void);

/*
 * The readahead_kib every t_setup() cache gets, whatever its config says:
 * 0 (none) unless a test sets it, since the tests count backing I/O and
 * cached blocks exactly (readahead: test_readahead.c).
 */
extern u64 t_readahead_kib;

/* Clock at 1 s, manual work, quiet logs. */
void t_init(void);
/* Devices + a fresh cache with @cfg (NULL: defaults), one backing dev. */
void t_setup(struct tenv *t, u64 cache_blocks, u64 back_blocks, bool vol,
	     const struct vc_cache_config *cfg);
void t_teardown(struct tenv *t);
/* Power cut: abandon the engine, drop volatile device caches. */
void t_crash(struct tenv *t);
/* Load the cache again and re-attach the backing device. */
int t_reload(struct tenv *t);

/*
 * Device error injection (vc_memdev_set_fail(dev, t_inject, &inj)): fail
 * the I/Os that match with @err, @left times (-1: forever).
 */
struct t_inj {
	int op;			/* VC_DEV_* to fail, -1 any */
	bool meta_only, data_only;
	int left;		/* failures to inject, -1 forever */
	int err;
	u32 hits;
};
int t_inject(void *ctx, const struct vc_dev_io *io);

/*
 * Synchronous host I/O on the backing device through the cache.  With
 * t_io_wait_ms set, a request waiting for a timer advances the clock by
 * that much per idle spin (else it fails after 1000 idle spins).
 */
extern u64 t_io_wait_ms;
/* The cgroup key requests are submitted with (0: none). */
extern u64 t_cgroup;
int t_io(struct tenv *t, u8 op, u32 flags, u64 sector, u32 len, void *data);
/*
 * The same, not waiting: submit, then t_done() says when the engine ended
 * it (h->err its status); vc_buf_free(h->b) after.
 */
struct t_hio {
	struct vc_host_io hio;
	struct vc_buf *b;
	int done;
	int err;
};
void t_submit(struct tenv *t, struct t_hio *h, u8 op, u32 flags,
	      u64 sector, u32 len, void *data);
bool t_done(struct t_hio *h);
int t_write_pat(struct tenv *t, u64 blk, u32 nblk, u32 seed, u32 flags);
/* Read and compare with the pattern; returns 0 if equal, 1 if not, <0 err */
int t_check_pat(struct tenv *t, u64 blk, u32 nblk, u32 seed);
/* Compare the backing device's stable+volatile contents with a pattern */
int t_backing_has(struct tenv *t, u64 blk, u32 nblk, u32 seed);
void t_fill(void *buf, u64 blk, u32 nblk, u32 seed);

/* Advance the virtual clock, running due work on the way (1 ms steps
 * for the first 10 ms, then 100 ms steps). */
void t_advance_ms(u64 ms);
void t_run(void);
struct vc_stats t_stats(struct tenv *t);

/*
 * A queued backing device: its I/O completes only when the test says so
 * (q_pump_one(): the oldest, forwarded to the memdev under it), so that a
 * test can hold a request in flight and race another against it.
 * q_setup() attaches it in place of t_setup()'s backing device (1000
 * cache blocks, 8192 backing); q_pump() is a vc_posix_set_pump() hook
 * (one I/O, 50 ms of clock, due work); q_teardown() pumps it meanwhile.
 */
struct qdev {
	struct vc_dev dev;
	struct vc_dev *under;
	struct vc_dev_io *q[4096];
	u32 n, max_writes_inflight;
};
bool q_pump_one(struct qdev *q);
bool q_pump(void *ctx);
void q_setup(struct tenv *t, struct qdev *q, struct vc_cache_config *cfg);
void q_teardown(struct tenv *t, struct qdev *q);

#endif
