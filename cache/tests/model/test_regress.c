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
	assert_int_equal(vc_cache_load(simdev_dev(h->csd), 0, &h->c, err,
				       sizeof(err)), 0);
	h->dev[1].id = H_NO_ID;
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
	};

	return cmocka_run_group_tests_name("engine regressions", tests, NULL,
					   NULL);
}
