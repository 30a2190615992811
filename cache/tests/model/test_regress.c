// SPDX-License-Identifier: GPL-2.0
/*
 * Directed regression tests: minimal, deterministic reproductions of
 * engine bugs found by the model, crash and stress tests.  Each drives
 * the real engine through the harness with queued devices, completing
 * I/Os in one chosen order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"
#include "vc_format.h"

static struct harness *new_h(enum simdev_completion comp, enum vc_mode mode)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct h_opts o = {
		.seed = 7, .ndev = 1, .backing_sectors = 2048,
		.cache_sectors = 2048, .block_size = 4096,
		.completion = comp, .cut_mode = SIMDEV_CUT_DROP_ALL,
		.volatile_backing = true,
	};

	assert_non_null(h);
	assert_int_equal(h_init(h, &o), 0);
	h->cfg.mode = mode;
	/* no cleaning unless a test asks */
	h->cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 100;
	h->cfg.params.v[VC_P_DIRTY_LOW_PCT] = 99;
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	h->cfg.params.v[VC_P_IDLE_MS] = 0;
	assert_int_equal(h_create(h), 0);
	return h;
}

static void free_h(struct harness *h)
{
	h_fini(h);
	free(h);
}

/* Complete everything pending, in submission order. */
static void complete_fifo(struct harness *h)
{
	for (;;) {
		if (simdev_complete_match(h->pw, NULL, -1, false))
			continue;
		if (!vc_posix_run_work())
			break;
	}
}

/*
 * Write-around write to a block whose dirty copy the cleaner is writing
 * back: the cleaner's backing write must not land after the host's.
 * (Passes: the engine orders these.)
 */
static void test_wa_write_races_cleaner(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct h_io *w;
	int err;

	(void)st;
	/* 1: dirty block 0, version A */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	complete_fifo(h);
	assert_true(w->done);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	/* 2: leave write-back: the cleaner drains in the background */
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WA), 0);
	vc_cache_kick_cleaner(h->c);
	vc_posix_run_work();
	/* let the cleaner's cache read finish: it now writes A home */
	while (simdev_complete_match(h->pw, h->csd, VC_DEV_READ, false))
		vc_posix_run_work();
	/* 3: host writes version C around the cache */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	vc_posix_run_work();
	/* 4: the backing device completes the newest write first */
	while (simdev_complete_match(h->pw, h->dev[0].sd, VC_DEV_WRITE, true))
		vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	/* everything written back and durable: the backing device has C */
	err = vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL);
	assert_int_equal(err, 0);
	assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	h_verify_all(h, 0);
	assert_int_equal(h_verify_backing(h, 0, true), 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug found by the proofs, fixed in feb1d10:
 * a read miss fills a whole cache block from the backing device while a
 * write-around write to other sectors of the same block is in flight.
 * The fill's backing read completes first (old data), the block is
 * installed clean, the write then lands on the backing device only: the
 * cache now serves the old data for the written sectors.
 *
 * Found by: model --seed 2 --ops 100000 --queued.
 */
static void test_fill_races_write_around(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WA);
	struct h_io *w, *r;

	(void)st;
	/* backing block 0 holds version A, not cached */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096), 0);
	/* host writes sectors 0-3 around the cache: backing write pending */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 2048);
	h_submit(h, w);
	vc_posix_run_work();
	/* host reads sectors 4-7: a miss, the engine fills block 0 */
	r = h_io_new(h, 0, VC_OP_READ, 0, 4, 2048);
	h_submit(h, r);
	vc_posix_run_work();
	/* the backing device answers the fill's read before the write */
	while (simdev_complete_match(h->pw, h->dev[0].sd, VC_DEV_READ, false))
		vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done && r->done);
	assert_int_equal(w->err, 0);
	assert_int_equal(r->err, 0);
	h_io_free(w);
	h_io_free(r);
	/* every mode reads the cache: sectors 0-3 must be the new data */
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug found by the proofs, fixed in feb1d10:
 * the cleaner has submitted its cache read of a dirty block (old data A)
 * when a write-through host write of new data C to that block arrives:
 * the engine lets it go (cache write and backing write of C).  The
 * backing write of C completes; the cleaner's cache read completes with A
 * (the host's cache write has not landed yet); the cleaner writes A over
 * C on the backing device and marks the block clean.  The backing device
 * keeps the old data; once the block is evicted the host reads A again.
 *
 * Found by: model --seed 4 --ops 100000 --queued (flush-on-demand check).
 */
static void test_wt_write_races_cleaner_read(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct h_io *w;
	unsigned int n;

	(void)st;
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	complete_fifo(h);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	/* leave write-back: the cleaner reads block 0 from the cache */
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WT), 0);
	vc_cache_kick_cleaner(h->c);
	vc_posix_run_work();
	n = simdev_pending(h->pw, h->csd, VC_DEV_READ);
	assert_int_equal(n, 1);
	/* the host writes block 0 again */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	vc_posix_run_work();
	/* its backing write completes first */
	while (simdev_complete_match(h->pw, h->dev[0].sd, VC_DEV_WRITE, false))
		vc_posix_run_work();
	/* then the cleaner's cache read (the host's cache write pending) */
	simdev_complete_match(h->pw, h->csd, VC_DEV_READ, false);
	vc_posix_run_work();
	/* the cleaner's backing write, then everything else */
	while (simdev_complete_match(h->pw, h->dev[0].sd, -1, false))
		vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	assert_int_equal(vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL), 0);
	h_quiesce(h);
	assert_int_equal(h_verify_backing(h, 0, false), 0);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Directed check of the other order (passed from the start): a
 * write-through host write to a dirty block is in flight (its cache write
 * not yet complete) when the cleaner picks the block.  The cleaner must
 * not write the OLD data from the cache over the host's new data on the
 * backing device and mark the block clean.
 */
static void test_cleaner_picks_block_under_wt_write(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct h_io *w;

	(void)st;
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	complete_fifo(h);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WT), 0);
	/* host write-through write C: cache and backing writes pending */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	/* the cleaner runs meanwhile */
	vc_cache_kick_cleaner(h->c);
	vc_posix_run_work();
	/* cache reads first (the host's cache write is still pending) */
	while (simdev_complete_match(h->pw, h->csd, VC_DEV_READ, false))
		vc_posix_run_work();
	/* backing writes in submission order: host's, then cleaner's */
	while (simdev_complete_match(h->pw, h->dev[0].sd, -1, false))
		vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	assert_int_equal(vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL), 0);
	h_quiesce(h);
	assert_int_equal(h_verify_backing(h, 0, false), 0);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug found by the proofs, fixed in fc7c2c7:
 * the cache device fails (here: power lost) while a backing device is
 * being detached.  The detach invalidated the device's blocks; their
 * metadata writes fail, the blocks stay "record pending" (B_TOMB) for
 * ever, and vc_cache_detach() polls for them for ever: a hung detach (in
 * the kernel, a task stuck in D state).  It should give up with -EIO.
 *
 * Found by: crash --scenario detach (K = 1).
 */
static void test_detach_hangs_when_cache_dies(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	int ret;

	(void)st;
	/* a few dirty blocks of device 0 */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 16384), 0);
	/* the power goes at the next metadata write */
	simdev_power_cut_at(h->pw, 1, true);
	h_pump(h);
	ret = vc_cache_detach(h->c, h->dev[0].id, 0);
	print_message("  detach returned %d, hung: %s\n", ret,
		      h->hangs ? "yes" : "no");
	assert_int_equal(h->hangs, 0);
	assert_int_equal(ret, -EIO);
	h->failures = 0;
	free_h(h);
}

/*
 * Engine bug found by the proofs, fixed in b985d39:
 * dirty blocks of a backing device that is not attached (kept for it
 * until it comes back) make vc_cache_flush(VC_DEV_ID_ALL) wait for ever:
 * they can never be cleaned.  The flush should clean what it can and
 * return (an error such as -ENODEV for the absent device's blocks is
 * fine), never hang.
 *
 * Found by: the loader fuzz target (seed input two-dev-crash).
 */
static void test_flush_all_with_absent_device(void **st)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct h_opts o = {
		.seed = 7, .ndev = 2, .backing_sectors = 2048,
		.cache_sectors = 2048, .block_size = 4096,
		.completion = SIMDEV_COMPLETE_INLINE,
		.cut_mode = SIMDEV_CUT_DROP_ALL, .volatile_backing = true,
	};
	char err[128];
	int ret;

	(void)st;
	assert_int_equal(h_init(h, &o), 0);
	h->cfg.mode = VC_MODE_WB;
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	assert_int_equal(h_create(h), 0);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 8192), 0);
	assert_int_equal(h_do(h, 1, VC_OP_WRITE, 0, 64, 8192), 0);
	assert_int_equal(vc_cache_shutdown(h->c, 0), 0);
	h->c = NULL;
	/* reload; only device 0 comes back */
	assert_int_equal(h_load_detached(h, err, sizeof(err)), 0);
	assert_int_equal(h_attach(h, 0), 0);
	h_pump(h);
	ret = vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL);
	print_message("  flush(all) returned %d, hung: %s\n", ret,
		      h->hangs ? "yes" : "no");
	assert_int_equal(h->hangs, 0);
	/* device 0's data is home whatever the result */
	assert_int_equal(h_verify_backing(h, 0, false), 0);
	h->failures = 0;
	h_fini(h);
	free(h);
}

/*
 * Everything but the cache device's writes completes (those stay queued),
 * running the work each completion makes due.
 */
static void complete_all_but_cache_writes(struct harness *h)
{
	bool more = true;

	while (more) {
		more = false;
		while (simdev_complete_match(h->pw, h->dev[0].sd, -1, false) ||
		       simdev_complete_match(h->pw, h->csd, VC_DEV_READ,
					     false) ||
		       simdev_complete_match(h->pw, h->csd, VC_DEV_FLUSH,
					     false))
			more = true;
		if (vc_posix_run_work())
			more = true;
	}
}

/*
 * Engine bug found by the proofs, fixed in 8ff4762:
 * the cleaner wrote a dirty block back; the record saying it is clean is
 * still being written when a FUA write to the block goes around the cache
 * (here: its submitter is on the deny list).  The write is acknowledged
 * as soon as its data is on the backing device, before the record write
 * completed.  The power goes: the on-flash record still says DIRTY, the
 * reload trusts it, and the old data comes back over an acknowledged FUA
 * write.
 *
 * Found by: model --seed 29 --ops 100000 --queued --crash (seed sweep).
 */
static void test_fua_bypass_over_lazily_cleaned_block(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct h_io *w;
	char err[128];
	int i;

	(void)st;
	/* dirty block 0 (version A) */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	complete_fifo(h);
	assert_int_equal(w->err, 0);
	h_io_free(w);
	/* age-based write-back cleans it; its record write stays queued */
	assert_int_equal(vc_cache_set_param(h->c, VC_P_MAX_DIRTY_AGE_MS, 1000),
			 0);
	for (i = 0; i < 5; i++) {
		h_advance(h, 1000000000ULL);
		complete_all_but_cache_writes(h);
	}
	print_message("  cache writes queued after the write-back: %u\n",
		      simdev_pending(h->pw, h->csd, VC_DEV_WRITE));
	/* a FUA write (version C) from a denied process, around the cache */
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(h->c), VC_PID_DENY,
					1), 0);
	w = h_io_new(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096);
	w->tolerate_err = true;
	h_submit(h, w);
	complete_all_but_cache_writes(h);
	print_message("  FUA write acknowledged before the record write: %s\n",
		      w->done ? "yes" : "no");
	if (w->done) {
		/* power cut right after the acknowledgement */
		simdev_power_cut(h->pw);
		complete_fifo(h);
		vc_cache_abandon(h->c);
		h->c = NULL;
		simdev_power_restore(h->pw);
		assert_int_equal(h_load(h, err, sizeof(err)), 0);
		h_verify_after_crash(h);
	} else {
		complete_fifo(h);
		h_quiesce(h);
	}
	h_io_free(w);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/* ---------------------------------------------------------------------
 * Issue 6, section 2: error paths that could lose acknowledged data.
 */

/* A power cut now, and the cache loaded again. */
static void cut_reload(struct harness *h)
{
	char err[128];

	simdev_power_cut(h->pw);
	complete_fifo(h);
	vc_cache_abandon(h->c);
	h->c = NULL;
	simdev_power_restore(h->pw);
	assert_int_equal(h_load(h, err, sizeof(err)), 0);
}

/* A power cut now: reload and check nothing acknowledged went back. */
static void cut_reload_verify(struct harness *h)
{
	cut_reload(h);
	h_verify_after_crash(h);
}

/* Fail writes of every record sector @count times (< 0: forever). */
static int fail_record_writes(struct harness *h, s64 count)
{
	struct vc_sb sb;

	simdev_peek(h->csd, VC_SB_SECTOR, &sb, sizeof(sb));
	return simdev_error_range(h->csd, SIMDEV_OP_WRITE,
				  vc_le64_to_cpu(sb.md_start),
				  vc_le64_to_cpu(sb.md_sectors), -EIO, count);
}

/* Write, completing device I/O in submission order; returns the error. */
static int write_fifo(struct harness *h, u32 flags, u64 sector, u32 len,
		      bool tolerate)
{
	struct h_io *w = h_io_new(h, 0, VC_OP_WRITE, flags, sector, len);
	int err;

	w->tolerate_err = tolerate;
	h_submit(h, w);
	complete_fifo(h);
	assert_true(w->done);
	err = w->err;
	h_io_free(w);
	return err;
}

/*
 * Engine bug (issue 6, review): after a failed record-sector write, the
 * cleaner's tick retried the sector even while another write of it was
 * in flight (started by a request meanwhile).  Two writes of one sector in
 * flight land in any order: an older snapshot landing last can erase a
 * DIRTY record of acknowledged data.  The device counts overlapping
 * metadata writes; there must be none.
 */
static void test_md_retry_beside_inflight_write(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct simdev_stats ss;
	struct h_io *w;

	(void)st;
	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);
	/* the record write of block 1 (same record sector) fails once */
	assert_true(fail_record_writes(h, 1) >= 0);
	/* FUA: its record is written before the acknowledgement */
	w = h_io_new(h, 0, VC_OP_WRITE, VC_IO_FUA, 8, 4096);
	w->tolerate_err = true;
	h_submit(h, w);
	/* its data write, then its record write (fails: the write goes home) */
	assert_true(simdev_complete_match(h->pw, h->csd, VC_DEV_WRITE, false));
	assert_true(simdev_complete_match(h->pw, h->csd, VC_DEV_WRITE, false));
	/* the home write: the block's record is rewritten (request-started) */
	assert_true(simdev_complete_match(h->pw, h->dev[0].sd, VC_DEV_WRITE,
					  false));
	/* now the cleaner's tick runs, with that record write in flight */
	vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done);
	h_io_free(w);
	simdev_get_stats(h->csd, &ss);
	print_message("  overlapping metadata writes: %llu\n",
		      (unsigned long long)ss.overlapping_meta_writes);
	assert_int_equal(ss.overlapping_meta_writes, 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug (issue 6, review): a write-back write whose cache data write
 * fails goes home instead (wb_fallback_end) and the block is dropped; the
 * write was acknowledged before the record saying the block is DIRTY (old
 * data) was cleared.  A power cut in that window brings the old data back
 * over an acknowledged FUA write.
 */
/*
 * A dirty block (A); a FUA write (C) over it whose cache copy fails: it
 * must not be acknowledged before the DIRTY record of A is cleared.
 */
static void test_fallback_ack_waits_for_record(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct h_io *w;

	(void)st;
	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);	/* A, dirty */
	simdev_error_at_write(h->csd, 1, false, -EIO);	/* C's cache copy */
	w = h_io_new(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096);
	h_submit(h, w);
	assert_true(simdev_complete_match(h->pw, h->csd, VC_DEV_WRITE, false));
	complete_all_but_cache_writes(h);
	print_message("  FUA write acknowledged before the record write: %s\n",
		      w->done ? "yes" : "no");
	if (w->done)
		cut_reload_verify(h);
	else
		complete_fifo(h);
	h_quiesce(h);
	assert_true(w->done);
	h_io_free(w);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * A write around the cache (denied process) over a dirty block wrote both
 * copies (wt_sub_end); since 2026-11-29 it goes home first (FUA) and the
 * block is dropped after it (write_home_first(): the double failure of
 * test_write_both_fails_twice_over_dirty).  No cache data write for it,
 * the acknowledgement once the DIRTY record is cleared, and after a power
 * cut the new data: a whole block, and part of one (its rest read from
 * the cache and sent home with it).
 */
static void write_around_dirty_goes_home_first(u32 flags, u32 len)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct simdev_stats a, b;

	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);	/* A, dirty */
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(h->c), VC_PID_DENY, 1), 0);
	simdev_get_stats(h->csd, &a);
	assert_int_equal(write_fifo(h, flags, 0, len, false), 0);
	simdev_get_stats(h->csd, &b);
	print_message("  %u bytes over a dirty block: %llu cache data writes, %llu record writes\n",
		      len, (unsigned long long)(b.writes - b.meta_writes - a.writes + a.meta_writes),
		      (unsigned long long)(b.meta_writes - a.meta_writes));
	assert_int_equal(b.writes - b.meta_writes, a.writes - a.meta_writes);
	assert_true(b.meta_writes > a.meta_writes);	/* the record cleared */
	cut_reload_verify(h);
	h_quiesce(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

static void test_write_around_dirty_goes_home_first(void **st)
{
	(void)st;
	write_around_dirty_goes_home_first(VC_IO_FUA, 4096);
	write_around_dirty_goes_home_first(0, 4096);
	write_around_dirty_goes_home_first(0, 2048);
}

/*
 * Engine bug (issue 18 oracles: crash "reloaded" with --errors single,
 * once failed writes were held to "never older"): a plain (not FUA)
 * whole-block write over a dirty block whose cache copy fails goes home
 * and the block's DIRTY record is cleared; the home write was not FUA, so
 * until the backing device's next FLUSH neither the old durable copy (its
 * record gone) nor the new data (volatile on the backing device) survives
 * a power cut: the block read the backing device's older data.  The home
 * write must be durable before the record of older dirty data goes.
 */
static void test_fallback_home_write_durable_before_record(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);

	(void)st;
	/* A: dirty in the cache, durable (FUA: record and data) */
	assert_int_equal(write_fifo(h, VC_IO_FUA, 0, 4096, false), 0);
	simdev_error_at_write(h->csd, 1, false, -EIO);	/* C's cache copy */
	/* C: acknowledged, not durable; A must survive until C is */
	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);
	cut_reload_verify(h);
	h_quiesce(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug (issue 6, review): when the write clearing a dropped block's
 * DIRTY record fails, the block became a "zombie" out of the hash, and
 * writes to its backing block were acknowledged while the stale DIRTY
 * record stayed on flash: a power cut brought the old data back over an
 * acknowledged FUA write.  Now the block stays a failed tombstone: a write
 * to it retries the record first and fails with EIO while the record
 * cannot be written; once it can, the write goes through.
 */
static void test_failed_record_clear_never_acks_over_stale(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	int rule, err;

	(void)st;
	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);	/* A, dirty */
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(h->c), VC_PID_DENY,
					1), 0);
	/* C around the cache: its cache copy and every record write fail */
	simdev_error_at_write(h->csd, 1, false, -EIO);
	rule = fail_record_writes(h, -1);
	assert_true(rule >= 0);
	err = write_fifo(h, VC_IO_FUA, 0, 4096, true);
	print_message("  write over the block whose record fails: %d\n", err);
	/* D: must not be acknowledged while the stale record may be there */
	err = write_fifo(h, VC_IO_FUA, 0, 4096, true);
	print_message("  next write, record still failing: %d\n", err);
	assert_int_not_equal(err, 0);
	/* the record can be written again: E goes through */
	simdev_error_remove(h->csd, rule);
	assert_int_equal(write_fifo(h, VC_IO_FUA, 0, 4096, false), 0);
	cut_reload_verify(h);
	h_quiesce(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Engine bug (issue 6, review): setting a mode cleared the degradation
 * even while record sectors could not be written, so new DIRTY records
 * could be made beside stale ones.  The mode change must fail (EIO) and
 * the cache stay degraded.
 */
static void test_set_mode_keeps_degradation_while_records_fail(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	struct vc_stats vs;
	int ret;

	(void)st;
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_true(fail_record_writes(h, -1) >= 0);
	/* block 1 becomes dirty: its record write fails, the cache degrades */
	{
		struct h_io *w = h_io_new(h, 0, VC_OP_WRITE, VC_IO_FUA, 8,
					  4096);

		w->tolerate_err = true;
		h_submit(h, w);
		(void)h_wait(h, w);
		h_io_free(w);
	}
	vc_cache_get_stats(h->c, &vs);
	assert_true(vs.degradations >= 1);
	assert_int_not_equal(vc_cache_get_mode(h->c), VC_MODE_WB);
	ret = vc_cache_set_mode(h->c, VC_MODE_WB);
	print_message("  set_mode(WB) with failing records: %d, now %s\n", ret,
		      vc_mode_name(vc_cache_get_mode(h->c)));
	assert_int_equal(ret, -EIO);
	assert_int_not_equal(vc_cache_get_mode(h->c), VC_MODE_WB);
	/* once records can be written again, the administrator's choice holds */
	simdev_error_clear(h->csd);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	assert_int_equal(vc_cache_get_mode(h->c), VC_MODE_WB);
	h->failures = 0;	/* the failed write's data is not checked */
	free_h(h);
}

/*
 * Engine bug (issue 6, review): a clean shutdown marked the cache clean
 * (so the next load trusts clean records) without flushing the backing
 * devices: a write-through write still in the backing device's volatile
 * cache is lost at a power cut, while the cache keeps serving its data as
 * clean, until eviction brings the old data back.  A clean record trusted
 * after a clean shutdown must match the backing device's durable data.
 */
static void test_clean_shutdown_flushes_backing(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WT);
	u8 via_cache[4096], durable[4096];
	char err[128];

	(void)st;
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(vc_cache_shutdown(h->c, 0), 0);
	h->c = NULL;
	simdev_power_cut(h->pw);
	simdev_power_restore(h->pw);
	assert_int_equal(h_load(h, err, sizeof(err)), 0);
	simdev_peek_durable(h->dev[0].sd, 0, durable, sizeof(durable));
	{
		struct h_io *r = h_io_new(h, 0, VC_OP_READ, 0, 0, 4096);

		r->check = false;
		h_submit(h, r);
		assert_int_equal(h_wait(h, r), 0);
		vc_buf_to_mem(via_cache, r->hio.buf, 0, sizeof(via_cache));
		h_io_free(r);
	}
	print_message("  backing durable sector 0 version %lld, cache serves %lld\n",
		      h_sector_version(durable, 0, 0),
		      h_sector_version(via_cache, 0, 0));
	assert_memory_equal(via_cache, durable, sizeof(durable));
	h->failures = 0;
	free_h(h);
}

/*
 * Engine bug (issue 6, review): a metadata write that could not get
 * memory (-ENOMEM) counted as a cache device error and degraded the cache
 * for good.  It must be retried; the write completes, the cache stays in
 * write-back.
 */
static void test_enomem_does_not_degrade(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	struct vc_stats vs;

	(void)st;
	/* the record write's memory: its pool's reserve serves it */
	vc_posix_fail_io_allocs(4);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096), 0);
	vc_posix_fail_io_allocs(0);
	/* the device itself answers -ENOMEM (the kernel's bio layer can) */
	simdev_error_at_write(h->csd, 2, true, -ENOMEM);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 8, 4096), 0);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 16, 4096), 0);
	vc_cache_get_stats(h->c, &vs);
	print_message("  degradations %llu, mode %s, dirty blocks %llu\n",
		      (unsigned long long)vs.degradations,
		      vc_mode_name(vc_cache_get_mode(h->c)),
		      (unsigned long long)vs.dirty_blocks);
	assert_int_equal(vs.degradations, 0);
	assert_int_equal(vc_cache_get_mode(h->c), VC_MODE_WB);
	assert_int_equal(vs.dirty_blocks, 3);
	{
		struct simdev_stats ss;

		simdev_get_stats(h->csd, &ss);
		assert_int_equal(ss.errors, 1);	/* the -ENOMEM happened */
	}
	cut_reload_verify(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Issue 6 review: "a failed FLUSH of the cache device is ignored whenever
 * no block is dirty, though records that may still say dirty (written
 * back, clean record not yet durable) still depend on the cache device".
 * They describe data already durable on the backing device (a write
 * around such a block waits for its record), so the FLUSH succeeds, and
 * nothing acknowledged is lost at a power cut right after it.  (Failing
 * it would hand a database an fsync error while its data is safe.)
 */
static void test_cache_flush_error_with_pending_clean_record(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	struct vc_stats vs;
	struct h_io *f;
	int i;

	(void)st;
	assert_int_equal(write_fifo(h, 0, 0, 4096, false), 0);
	/* its DIRTY record committed */
	f = h_io_new(h, 0, VC_OP_FLUSH, 0, 0, 0);
	h_submit(h, f);
	complete_fifo(h);
	assert_true(f->done);
	assert_int_equal(f->err, 0);
	h_io_free(f);
	/* age-based write-back cleans it; its record write stays queued */
	assert_int_equal(vc_cache_set_param(h->c, VC_P_MAX_DIRTY_AGE_MS, 1000),
			 0);
	for (i = 0; i < 5; i++) {
		h_advance(h, 1000000000ULL);
		complete_all_but_cache_writes(h);
	}
	vc_cache_get_stats(h->c, &vs);
	print_message("  dirty %llu, cache writes queued %u, flushes queued %u\n",
		      (unsigned long long)vs.dirty_blocks,
		      simdev_pending(h->pw, h->csd, VC_DEV_WRITE),
		      simdev_pending(h->pw, h->csd, VC_DEV_FLUSH));
	assert_int_equal(vs.dirty_blocks, 0);
	assert_true(simdev_pending(h->pw, h->csd, VC_DEV_WRITE) > 0);
	simdev_error_range(h->csd, SIMDEV_OP_FLUSH, 0, 0, -EIO, 1);
	f = h_io_new(h, 0, VC_OP_FLUSH, 0, 0, 0);
	f->tolerate_err = true;
	h_submit(h, f);
	complete_all_but_cache_writes(h);
	complete_fifo(h);
	h_quiesce(h);
	assert_true(f->done);
	print_message("  host FLUSH with the cache FLUSH failing: %d\n", f->err);
	assert_int_equal(f->err, 0);
	h_io_free(f);
	cut_reload_verify(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/* Read without checking the data; returns the error. */
static int read_unchecked(struct harness *h, u64 sector, u32 len)
{
	struct h_io *r = h_io_new(h, 0, VC_OP_READ, 0, sector, len);
	int err;

	r->check = false;
	r->tolerate_err = true;
	h_submit(h, r);
	err = h_wait(h, r);
	h_io_free(r);
	return err;
}

/*
 * Engine bug (issue 6, review): once the dirty data of a block was lost
 * (cache read error), the next read of it went to the backing device and
 * silently returned older data.  Reads must fail with EIO until the whole
 * block is overwritten or discarded; a partial write keeps them failing.
 */
static void test_lost_block_reads_fail_until_overwritten(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	struct vc_stats vs;
	int rule, err;

	(void)st;
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 8, 4096), 0);
	rule = simdev_error_range(h->csd, SIMDEV_OP_READ, 0,
				  h->o.cache_sectors, -EIO, -1);
	assert_true(rule >= 0);
	assert_int_equal(read_unchecked(h, 0, 4096), -EIO);	/* lost */
	assert_int_equal(read_unchecked(h, 8, 4096), -EIO);	/* lost */
	simdev_error_remove(h->csd, rule);
	err = read_unchecked(h, 0, 4096);
	print_message("  second read of the lost block: %d\n", err);
	assert_int_equal(err, -EIO);
	assert_int_equal(read_unchecked(h, 2, 512), -EIO);
	vc_cache_get_stats(h->c, &vs);
	print_message("  lost blocks %llu, lost reads %llu, marked %llu\n",
		      (unsigned long long)vs.lost_blocks,
		      (unsigned long long)vs.lost_reads,
		      (unsigned long long)vs.lost_marked);
	assert_int_equal(vs.lost_blocks, 2);
	assert_int_equal(vs.lost_marked, 2);
	/* a partial write goes through; the rest of the block stays lost */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 2048), 0);
	assert_int_equal(read_unchecked(h, 4, 2048), -EIO);
	/* a whole-block write ends it */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(h_do(h, 0, VC_OP_READ, 0, 0, 4096), 0);
	/* so does a whole-block discard */
	assert_int_equal(h_do(h, 0, VC_OP_DISCARD, 0, 8, 4096), 0);
	assert_int_equal(read_unchecked(h, 8, 4096), 0);
	vc_cache_get_stats(h->c, &vs);
	assert_int_equal(vs.lost_marked, 0);
	assert_true(vs.lost_reads >= 3);
	h->failures = 0;	/* the model does not know the data was lost */
	free_h(h);
}

/*
 * Engine bug (61-fault-ack in the VM, 2026-11-29: card write errors and a
 * flakey backing disk at once; five acknowledged blocks read older data or
 * zeroes): a write that writes both copies (write-through: the cache
 * degraded, or a denied process) over a dirty block, whose cache copy and
 * home copy both failed, dropped the block as if it were clean.  Its older
 * dirty data, acknowledged and only in the cache (whose copy the failed
 * write may have torn), was gone, and reads served the backing device's
 * older data.  Such a write now goes home first and drops the block only
 * once the new data is there (write_home_first()): the cache copy is not
 * touched, and when the home write fails the block keeps its acknowledged
 * data, dirty.  @len: the failed write's length (a whole block, or part of
 * one).
 */
static void write_both_fails_twice_over_dirty(u32 len)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	int rule, err;

	/* A: dirty in the cache, acknowledged; the disk holds zeroes */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(h->c), VC_PID_DENY, 1), 0);
	simdev_error_at_write(h->csd, 1, false, -EIO);		/* B's cache copy */
	rule = simdev_error_range(h->dev[0].sd, SIMDEV_OP_WRITE, 0, 8, -EIO, -1);
	assert_true(rule >= 0);					/* B's home copy */
	err = write_fifo(h, 0, 0, len, true);
	simdev_error_remove(h->dev[0].sd, rule);
	simdev_error_at_write(h->csd, 0, false, 0);
	print_message("  write of %u bytes failing on both copies: %d\n", len, err);
	assert_int_equal(err, -EIO);
	/* A, checked by the model: untouched in the cache, still dirty */
	assert_int_equal(h_do(h, 0, VC_OP_READ, 0, 0, 4096), 0);
	cut_reload_verify(h);
	h_quiesce(h);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

static void test_write_both_fails_twice_over_dirty(void **st)
{
	(void)st;
	write_both_fails_twice_over_dirty(4096);
	write_both_fails_twice_over_dirty(2048);
}

/*
 * Engine bug (model --seed 32 --queued --crash --policy lru --errors
 * lossy, 2026-11-27): a whole-block write over a lost marker whose LOST
 * record is on flash cleared the record first, then wrote the data like
 * any miss.  A power cut before the next FLUSH then left neither the
 * marker nor the new data: the reload served the backing device's older
 * data, older than the version the marker stood for (the host's last
 * durable write).  The data now goes home first (FUA), then the record is
 * cleared.  After the cut the block must read as the new data or fail
 * (the write was acknowledged, not flushed): never as the disk's zeroes.
 * In write-through mode too (the seed's case), and for write-zeroes.
 */
static void lost_marker_superseded_cut(enum vc_mode mode, int op)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_INLINE, VC_MODE_WB);
	struct h_io *w, *r;
	long long v;
	u32 ver;
	int rule;

	/* the disk holds version D, durably; A only in the cache, durable */
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WA), 0);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	/* the cache copy becomes unreadable: A is lost, a LOST record */
	rule = simdev_error_range(h->csd, SIMDEV_OP_READ, 0,
				  h->o.cache_sectors, -EIO, -1);
	assert_true(rule >= 0);
	assert_int_equal(read_unchecked(h, 0, 4096), -EIO);
	simdev_error_remove(h->csd, rule);
	assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	assert_int_equal(vc_cache_set_mode(h->c, mode), 0);
	/* the whole block rewritten (B, or zeroes), acknowledged, no FLUSH */
	w = h_io_new(h, 0, op, 0, 0, 4096);
	h_submit(h, w);
	assert_int_equal(h_wait(h, w), 0);
	ver = op == VC_OP_WRITE ? w->ver : 0;
	h_io_free(w);
	/* power cut: the backing device loses what it was not told to keep */
	cut_reload(h);
	r = h_io_new(h, 0, VC_OP_READ, 0, 0, 4096);
	r->check = false;
	r->tolerate_err = true;
	h_submit(h, r);
	h_wait(h, r);
	v = r->err ? -1 : h_sector_version(r->data, 0, 0);
	print_message("  %s, %s: after the cut the block reads %s (version %lld, the write's %u)\n",
		      vc_mode_name(mode),
		      op == VC_OP_WRITE ? "write" : "write-zeroes",
		      r->err ? "EIO (still lost)" : "data", v, ver);
	/* the new data or the marker; not D, the disk's older data */
	if (r->err != -EIO) {
		assert_int_equal(r->err, 0);
		assert_true(v == (long long)ver);
	}
	h_io_free(r);
	h->failures = 0;	/* the model does not know the data was lost */
	free_h(h);
}

static void test_lost_marker_superseded_then_cut(void **st)
{
	(void)st;
	lost_marker_superseded_cut(VC_MODE_WT, VC_OP_WRITE);
	lost_marker_superseded_cut(VC_MODE_WB, VC_OP_WRITE);
	lost_marker_superseded_cut(VC_MODE_WA, VC_OP_WRITE);
	lost_marker_superseded_cut(VC_MODE_WB, VC_OP_WRITE_ZEROES);
}

/*
 * Documented behaviour, not a bug (cache/API.md): the backing device must
 * honour FLUSH.  Behind a disk that acknowledges FLUSH without making
 * anything durable, data the cleaner wrote back (then recorded clean) is
 * lost at a power cut, as it would be without vcache.  This test shows the
 * loss happens through that disk and only through it: the same steps with
 * an honest disk keep the data.
 */
static void test_backing_that_ignores_flush(void **st)
{
	int liar;

	(void)st;
	for (liar = 0; liar < 2; liar++) {
		struct harness *h = calloc(1, sizeof(*h));
		struct h_opts o = {
			.seed = 7, .ndev = 1, .backing_sectors = 2048,
			.cache_sectors = 2048, .block_size = 4096,
			.completion = SIMDEV_COMPLETE_INLINE,
			.cut_mode = SIMDEV_CUT_DROP_ALL,
			.volatile_backing = true,
			.backing_ignores_flush = liar,
		};
		char err[128];
		u64 before;

		assert_non_null(h);
		assert_int_equal(h_init(h, &o), 0);
		h->cfg.mode = VC_MODE_WB;
		assert_int_equal(h_create(h), 0);
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096), 0);
		/* written back, FLUSHed, recorded clean */
		assert_int_equal(vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL),
				 0);
		before = h->failures;
		simdev_power_cut(h->pw);
		vc_cache_abandon(h->c);
		h->c = NULL;
		simdev_power_restore(h->pw);
		assert_int_equal(h_load(h, err, sizeof(err)), 0);
		h_verify_after_crash(h);
		print_message("  backing %s FLUSH: %llu sectors of an acknowledged FUA write lost\n",
			      liar ? "ignores" : "honours",
			      (unsigned long long)(h->failures - before));
		if (liar)
			assert_true(h->failures > before);
		else
			assert_int_equal(h->failures, 0);
		h->failures = 0;
		h_fini(h);
		free(h);
	}
}

/*
 * Engine bug (found by vcache-sim under ASan, at 1113dc1 already): the
 * cleaner probes past each run's end for adjacent dirty blocks; those
 * probes could fill its run table (2 x 1024 blocks) before the batch's
 * later candidates were added, which then went past its end (heap
 * overflow).  It takes a filtered batch among other dirty blocks: here a
 * flush on demand of every third block while the two between are dirty
 * but not part of it.  The asan build of this test fails on the old code.
 */
static void test_cleaner_probes_overrun(void **st)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct h_opts o = {
		.seed = 7, .ndev = 1, .backing_sectors = 3 * 1200 * 8,
		.cache_sectors = 4000 * 8, .block_size = 4096,
		.completion = SIMDEV_COMPLETE_INLINE,
		.cut_mode = SIMDEV_CUT_DROP_ALL, .volatile_backing = true,
	};
	u64 b;
	int ret;

	(void)st;
	assert_non_null(h);
	assert_int_equal(h_init(h, &o), 0);
	h->cfg.mode = VC_MODE_WB;
	h->cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 100;
	h->cfg.params.v[VC_P_DIRTY_LOW_PCT] = 99;
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	h->cfg.params.v[VC_P_IDLE_MS] = 0;
	assert_int_equal(h_create(h), 0);
	for (b = 0; b < 1200; b++)
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, b * 3 * 8, 4096), 0);
	/* every third block is marked for the flush ... */
	assert_int_equal(vc_cache_flush_start(h->c, VC_DEV_ID_ALL, NULL, NULL),
			 0);
	/* ... the two between become dirty before the cleaner runs */
	for (b = 0; b < 1200; b++) {
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, (b * 3 + 1) * 8,
				      4096), 0);
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, (b * 3 + 2) * 8,
				      4096), 0);
	}
	h_quiesce(h);
	ret = vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL);
	assert_int_equal(ret, 0);
	assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	assert_int_equal(h_verify_backing(h, 0, true), 0);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	h_fini(h);
	free(h);
}

/*
 * Issue 19 (write p99 on a slow disk): a write-back write of a whole block
 * whose read-miss fill is still reading it from the backing device takes
 * the block over instead of waiting for the disk.  The fill then serves
 * its reader what it read (older than the write, which came after the
 * read) and never writes its data over the write's.  A partial write
 * still waits (it needs the rest of the block).
 */
static void test_whole_block_write_overtakes_fill(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WA);
	struct h_io *a, *r, *w, *p;
	struct vc_stats s0, s1;
	u32 i;

	(void)st;
	/* backing block 0 holds version A, not cached (written around) */
	a = h_io_new(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096);
	h_submit(h, a);
	assert_int_equal(h_wait(h, a), 0);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	vc_cache_get_stats(h->c, &s0);
	/* a read of sectors 4-7 misses: the fill reads block 0 from disk */
	r = h_io_new(h, 0, VC_OP_READ, 0, 4, 2048);
	r->check = false;		/* concurrent with the write: checked here */
	h_submit(h, r);
	vc_posix_run_work();
	/* the whole block written meanwhile: done with the disk still busy */
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 4096);
	h_submit(h, w);
	vc_posix_run_work();
	while (simdev_complete_match(h->pw, h->csd, -1, false))
		vc_posix_run_work();
	assert_true(w->done);
	assert_int_equal(w->err, 0);
	assert_false(r->done);
	/* a partial write of the block now waits for the write, not the disk */
	p = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 1024);
	h_submit(h, p);
	vc_posix_run_work();
	while (simdev_complete_match(h->pw, h->csd, -1, false))
		vc_posix_run_work();
	assert_true(p->done);
	assert_false(r->done);
	/* the disk answers the fill: the reader gets version A */
	complete_fifo(h);
	h_quiesce(h);
	assert_true(r->done);
	assert_int_equal(r->err, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(h_sector_version(r->data + i * 512, 0, 4 + i),
				 a->ver);
	vc_cache_get_stats(h->c, &s1);
	assert_int_equal(s1.fills_overtaken - s0.fills_overtaken, 1);
	assert_int_equal(s1.write_waits - s0.write_waits, 0);
	/* the cache holds the writes, never the fill's older block */
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	assert_int_equal(vc_cache_get_mode(h->c), VC_MODE_WB);
	h_io_free(a);
	h_io_free(r);
	h_io_free(w);
	h_io_free(p);
	free_h(h);
}

/*
 * Engine bug found by the proofs (2026-11-27): a discard drops a dirty
 * block (version B over A on the disk) and is then sent down to the disk;
 * before it lands, a read miss of a neighbour reads the window around it
 * from the disk (readahead), block 5 included: A.  The disk then discards
 * the block, and the cache keeps A: a version older than B, which the
 * host wrote and was told was safe, served after the discard.  The same
 * for a read miss of the block itself, and for write-zeroes (whose zeroes
 * must read back).  Now the request counts in its blocks' sets from its
 * piece until it has gone down: fills in flight are stale, new misses go
 * around, readahead passes the set by.
 *
 * Found by: model --seed 1 --ops 150000 --queued --crash --policy tinylfu
 * (with the cleaner's record writes batched, which moved the timing).
 */
static void discard_then_fill(enum vc_op op, bool own_block)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WA);
	bool zeroes = op == VC_OP_WRITE_ZEROES;
	struct h_io *d, *r, *z;
	u32 i;

	/*
	 * The disk holds A in blocks 0-15; for a discard, block 5 is B,
	 * dirty in the cache (write-zeroes keeps a dirty block's zeroes in
	 * the cache: its race is with a block the cache does not hold).
	 */
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 65536), 0);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	if (!zeroes)
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, 40, 4096), 0);
	/* the discard (or zeroes) of block 5: the record first, then the disk */
	d = h_io_new(h, 0, op, 0, 40, 4096);
	d->check = false;
	h_submit(h, d);
	vc_posix_run_work();
	while (simdev_complete_match(h->pw, h->csd, -1, false))
		vc_posix_run_work();
	assert_int_equal(simdev_pending(h->pw, h->dev[0].sd,
					zeroes ? VC_DEV_WRITE_ZEROES :
					VC_DEV_DISCARD), 1);
	assert_false(d->done);
	/* a read miss (block 4 with readahead over 5, or 5 itself) meanwhile */
	r = h_io_new(h, 0, VC_OP_READ, 0, own_block ? 40 : 32, 4096);
	r->check = false;	/* concurrent with the discard */
	h_submit(h, r);
	vc_posix_run_work();
	/* the disk answers the read before it discards */
	while (simdev_complete_match(h->pw, h->dev[0].sd, VC_DEV_READ, false))
		vc_posix_run_work();
	complete_fifo(h);
	h_quiesce(h);
	assert_true(d->done && r->done);
	assert_int_equal(d->err, 0);
	assert_int_equal(r->err, 0);
	if (!zeroes) {
		/* block 5 reads zeroes (or B) now: never A */
		h_verify_all(h, 0);
		assert_int_equal(h->failures, 0);
	} else {
		/* the model has no write-zeroes: block 5 must read zeroes */
		z = h_io_new(h, 0, VC_OP_READ, 0, 40, 4096);
		z->check = false;
		h_submit(h, z);
		assert_int_equal(h_wait(h, z), 0);
		for (i = 0; i < 4096; i++)
			assert_int_equal(z->data[i], 0);
		h_io_free(z);
	}
	h_io_free(d);
	h_io_free(r);
	free_h(h);
}

static void test_discard_races_readahead(void **st)
{
	(void)st;
	discard_then_fill(VC_OP_DISCARD, false);
}

static void test_discard_races_fill(void **st)
{
	(void)st;
	discard_then_fill(VC_OP_DISCARD, true);
}

static void test_zeroes_race_readahead(void **st)
{
	(void)st;
	discard_then_fill(VC_OP_WRITE_ZEROES, false);
}

/*
 * The same race, but the write covers part of the block: it waits for the
 * fill (counted in write_waits), which is not overtaken.
 */
static void test_partial_write_waits_for_fill(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WA);
	struct h_io *r, *w;
	struct vc_stats s0, s1;

	(void)st;
	assert_int_equal(h_do(h, 0, VC_OP_WRITE, VC_IO_FUA, 0, 4096), 0);
	assert_int_equal(vc_cache_set_mode(h->c, VC_MODE_WB), 0);
	vc_cache_get_stats(h->c, &s0);
	r = h_io_new(h, 0, VC_OP_READ, 0, 4, 2048);
	h_submit(h, r);
	vc_posix_run_work();
	w = h_io_new(h, 0, VC_OP_WRITE, 0, 0, 2048);
	h_submit(h, w);
	vc_posix_run_work();
	while (simdev_complete_match(h->pw, h->csd, -1, false))
		vc_posix_run_work();
	assert_false(w->done);
	complete_fifo(h);
	h_quiesce(h);
	assert_true(r->done && w->done);
	assert_int_equal(r->err, 0);
	assert_int_equal(w->err, 0);
	vc_cache_get_stats(h->c, &s1);
	assert_int_equal(s1.fills_overtaken - s0.fills_overtaken, 0);
	assert_int_equal(s1.write_waits - s0.write_waits, 1);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	h_io_free(r);
	h_io_free(w);
	free_h(h);
}

/*
 * Issue 18 lead ("the engine stalls with every allocation failing"): with
 * every I/O-path allocation failing for good, host I/O of every kind
 * still completes (pools' reserves, bypass without a bounce buffer), with
 * the right data, and write-back and a flush on demand finish.
 */
static void test_all_io_allocs_fail(void **st)
{
	struct harness *h = new_h(SIMDEV_COMPLETE_QUEUED, VC_MODE_WB);
	u32 i;

	(void)st;
	h->cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 60;
	vc_posix_fail_io_allocs(~0UL);
	for (i = 0; i < 200; i++) {
		u64 sec = (i * 37 % 240) * 8;

		assert_int_equal(h_do(h, 0, VC_OP_WRITE, i % 7 ? 0 : VC_IO_FUA,
				      sec, i % 3 ? 4096 : 1024), 0);
		assert_int_equal(h_do(h, 0, VC_OP_READ, 0, (i * 53 % 250) * 8,
				      i % 2 ? 4096 : 8192), 0);
		if (i % 50 == 49)
			assert_int_equal(h_do(h, 0, VC_OP_FLUSH, 0, 0, 0), 0);
	}
	assert_int_equal(vc_cache_flush(h->c, h->dev[0].id, NULL, NULL), 0);
	vc_posix_fail_io_allocs(0);
	h_verify_all(h, 0);
	assert_int_equal(h->failures, 0);
	free_h(h);
}

/*
 * Issue 18: auto-attach checked only an identity and a size, both of which
 * a disk can copy, before writing another disk's dirty data over it.  The
 * clean blocks loaded for a waiting slot tell the disk that was there
 * from one that only claims to be it.
 */
static struct simdev *other_disk(struct harness *h, const char *name)
{
	struct simdev_config sc = {
		.name = name, .nr_sectors = h->dev[0].nr_sectors,
		.cut_mode = SIMDEV_CUT_DROP_ALL,
	};

	return simdev_new(&sc);
}

/* A write-back harness with one backing device and no age write-back. */
static struct harness *verify_harness(u64 seed)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct h_opts o = {
		.seed = seed, .ndev = 1, .backing_sectors = 8192,
		.cache_sectors = 4096, .block_size = 4096,
		.completion = SIMDEV_COMPLETE_INLINE,
		.cut_mode = SIMDEV_CUT_DROP_ALL,
	};

	assert_non_null(h);
	assert_int_equal(h_init(h, &o), 0);
	h->cfg.mode = VC_MODE_WB;
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	assert_int_equal(h_create(h), 0);
	return h;
}

/* 1.5 MiB written, then written back: clean blocks over the cache. */
static void clean_over_cache(struct harness *h)
{
	u32 i;

	for (i = 0; i < 384; i++)
		assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0, (u64)i * 8, 4096), 0);
	assert_int_equal(vc_cache_flush(h->c, h->dev[0].id, NULL, NULL), 0);
}

/* The disk that was there: every sample compared equal. */
static void verify_self(struct harness *h, u32 id, const char *how)
{
	struct vc_verify_result v;

	assert_int_equal(vc_cache_verify_backing(h->c, id,
			 simdev_dev(h->dev[0].sd), &v), 0);
	print_message("  %s, the disk itself: %u compared, %u differ, %u skipped\n",
		      how, v.compared, v.differ, v.skipped);
	assert_true(v.compared >= VC_VERIFY_SAMPLES / 2);
	assert_int_equal(v.differ, 0);
}

/*
 * Disks with the identity and size copied but other data: a new one
 * (zeroes) and another disk's data.  Every block compared differs.
 */
static void verify_forgeries(struct harness *h, u32 id, const char *how)
{
	struct simdev *zero, *changed;
	struct vc_verify_result v;
	static u8 junk[4096];
	u64 s;

	zero = other_disk(h, "zero");
	assert_int_equal(vc_cache_verify_backing(h->c, id, simdev_dev(zero),
						 &v), 0);
	print_message("  %s, a zeroed disk: %u compared, %u differ\n", how,
		      v.compared, v.differ);
	assert_true(v.compared >= VC_VERIFY_SAMPLES / 2);
	assert_int_equal(v.differ, v.compared);
	changed = other_disk(h, "other");
	memset(junk, 0x5a, sizeof(junk));
	for (s = 0; s < h->dev[0].nr_sectors; s += 8)
		simdev_poke(changed, s, junk, sizeof(junk));
	assert_int_equal(vc_cache_verify_backing(h->c, id, simdev_dev(changed),
						 &v), 0);
	assert_true(v.compared > 0);
	assert_int_equal(v.differ, v.compared);
	simdev_free(zero);
	simdev_free(changed);
}

/* The real disk takes the waiting slot back; every block verifies. */
static void verify_reattach(struct harness *h, u32 id)
{
	struct vc_verify_result v;

	assert_int_equal(h_attach(h, 0), 0);
	assert_int_equal(h->dev[0].id, id);
	assert_int_equal(vc_cache_verify_backing(h->c, id,
			 simdev_dev(h->dev[0].sd), &v), -ENOENT);
	h_verify_all(h, 0);
}

static void test_verify_returning_backing(void **st)
{
	struct harness *h = verify_harness(11);
	struct vc_verify_result v;
	struct simdev *clone;
	char err[128];
	u32 id;

	(void)st;
	clean_over_cache(h);
	id = h->dev[0].id;
	assert_int_equal(vc_cache_verify_backing(h->c, id,
			 simdev_dev(h->dev[0].sd), &v), -ENOENT);	/* attached */
	assert_int_equal(vc_cache_shutdown(h->c, 0), 0);
	h->c = NULL;
	assert_int_equal(h_load_detached(h, err, sizeof(err)), 0);

	verify_self(h, id, "reloaded");
	/* a copy of it (a clone holds the same data: it may take its place) */
	clone = other_disk(h, "clone");
	simdev_copy_image(clone, h->dev[0].sd);
	assert_int_equal(vc_cache_verify_backing(h->c, id, simdev_dev(clone),
						 &v), 0);
	assert_true(v.compared > 0);
	assert_int_equal(v.differ, 0);
	simdev_free(clone);
	verify_forgeries(h, id, "reloaded");
	/* the cache is unchanged by all that: the real disk attaches */
	verify_reattach(h, id);
	assert_int_equal(h->failures, 0);
	h_fini(h);
	free(h);
}

/*
 * A disk that left while the cache ran (detach with KEEP, unplug) has its
 * clean blocks dropped; fingerprints of a few of them are kept and a disk
 * claiming the slot is compared with them: the one that left passes, a
 * zeroed one and another disk's data do not.
 */
static void test_verify_disk_that_left(void **st)
{
	struct harness *h = verify_harness(12);
	struct vc_backing_info bi;
	u32 id, i, round;

	(void)st;
	id = h->dev[0].id;
	for (round = 0; round < 2; round++) {
		const char *how = round ? "unplugged" : "detached --keep-dirty";

		clean_over_cache(h);
		/* and some dirty blocks */
		for (i = 0; i < 16; i++)
			assert_int_equal(h_do(h, 0, VC_OP_WRITE, 0,
					      (u64)(600 + i) * 8, 4096), 0);
		if (round == 0)
			assert_int_equal(vc_cache_detach(h->c, id,
							 VC_DETACH_KEEP), 0);
		else
			assert_int_equal(vc_cache_unplug(h->c, id), 0);
		h->dev[0].id = H_NO_ID;
		assert_int_equal(vc_cache_backing_info(h->c, id, &bi), 0);
		assert_false(bi.attached);
		assert_true(bi.dirty_blocks > 0);
		verify_self(h, id, how);
		verify_forgeries(h, id, how);
		verify_reattach(h, id);
	}
	assert_int_equal(h->failures, 0);
	h_fini(h);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wa_write_races_cleaner),
		cmocka_unit_test(test_fill_races_write_around),
		cmocka_unit_test(test_wt_write_races_cleaner_read),
		cmocka_unit_test(test_cleaner_picks_block_under_wt_write),
		cmocka_unit_test(test_detach_hangs_when_cache_dies),
		cmocka_unit_test(test_flush_all_with_absent_device),
		cmocka_unit_test(test_fua_bypass_over_lazily_cleaned_block),
		cmocka_unit_test(test_md_retry_beside_inflight_write),
		cmocka_unit_test(test_fallback_ack_waits_for_record),
		cmocka_unit_test(test_write_around_dirty_goes_home_first),
		cmocka_unit_test(test_fallback_home_write_durable_before_record),
		cmocka_unit_test(test_failed_record_clear_never_acks_over_stale),
		cmocka_unit_test(test_set_mode_keeps_degradation_while_records_fail),
		cmocka_unit_test(test_clean_shutdown_flushes_backing),
		cmocka_unit_test(test_enomem_does_not_degrade),
		cmocka_unit_test(test_cache_flush_error_with_pending_clean_record),
		cmocka_unit_test(test_lost_block_reads_fail_until_overwritten),
		cmocka_unit_test(test_write_both_fails_twice_over_dirty),
		cmocka_unit_test(test_lost_marker_superseded_then_cut),
		cmocka_unit_test(test_backing_that_ignores_flush),
		cmocka_unit_test(test_cleaner_probes_overrun),
		cmocka_unit_test(test_whole_block_write_overtakes_fill),
		cmocka_unit_test(test_partial_write_waits_for_fill),
		cmocka_unit_test(test_discard_races_readahead),
		cmocka_unit_test(test_discard_races_fill),
		cmocka_unit_test(test_zeroes_race_readahead),
		cmocka_unit_test(test_all_io_allocs_fail),
		cmocka_unit_test(test_verify_returning_backing),
		cmocka_unit_test(test_verify_disk_that_left),
	};

	return cmocka_run_group_tests_name("engine regressions", tests, NULL,
					   NULL);
}
