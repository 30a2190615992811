// SPDX-License-Identifier: GPL-2.0
/*
 * Cleaner: watermark, max dirty age (age_based_write_back), idle drain,
 * LBA order and merging, in-flight limit, flush on demand (blocking,
 * background, per device, interrupted), detach.
 */
#include "tutil.h"

static void test_watermark(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 10;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 5;
	t_setup(&t, 1000, 8192, false, &cfg);
	for (i = 0; i < 40; i++)
		t_write_pat(&t, i * 3, 1, i, 0);
	t_advance_ms(3000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 40);	/* below low: untouched */
	/* above low: rated write-back ahead of the high mark, down to low */
	for (i = 40; i < 99; i++)
		t_write_pat(&t, i * 3, 1, i, 0);
	t_advance_ms(3000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 50);	/* down to low exactly */
	assert_int_equal(s.cleanings[VC_CLEAN_WATERMARK], 49);
	/* at the high mark: full speed, down to low */
	for (i = 0; i < 50; i++)
		t_write_pat(&t, 2000 + i * 3, 1, i, 0);
	t_advance_ms(10);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 50);
	assert_int_equal(s.cleanings[VC_CLEAN_WATERMARK], 99);
	t_advance_ms(3000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 50);	/* low is the target */
	/* in bytes instead of percent */
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_HIGH_BYTES, 40 * 4096), 0);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_LOW_BYTES, 50 * 4096),
			 -EINVAL);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_LOW_BYTES, 10 * 4096), 0);
	t_advance_ms(10);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 10);
	t_teardown(&t);
}

/*
 * Ahead of the high mark write-back is rated: a proportional controller
 * on dirty data above the low mark (gone in about 4 s), at least 1 MiB/s;
 * at the mark, full speed.
 */
static void test_rated_writeback(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u64 d1;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 90;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 10;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 4;	/* one block a run */
	t_setup(&t, 8192, 16384, false, &cfg);
	for (i = 0; i < 3000; i++)
		t_write_pat(&t, i * 2, 1, i, 0);
	t_advance_ms(1000);
	s = t_stats(&t);
	d1 = s.wb_blocks;
	/* (3000 - 819) / 4 s = 545 blocks/s, and what decays meanwhile */
	print_message("rated write-back: %llu blocks in the first second, rate now %llu B/s\n",
		      (unsigned long long)d1, (unsigned long long)t.c->wb_rate_bps);
	assert_true(d1 >= 300 && d1 <= 700);
	assert_true(s.dirty_blocks > 819);
	t_advance_ms(20000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 819);
	for (i = 0; i < 3000; i++)	/* nothing lost */
		assert_int_equal(t_check_pat(&t, i * 2, 1, i), 0);
	t_teardown(&t);
}

/*
 * Rated write-back earns its tokens whatever wakes the cleaner: a pass
 * sooner than one token's time (a run that ended, a host write, a timer
 * rounded down to the tick) keeps the fraction earned so far instead of
 * throwing it away.  Issue 19: woken every few hundred microseconds, a
 * rated batch at 1 MiB/s of 4 KiB runs earned nothing and sent a block a
 * second; a drain behind it stalled for tens of seconds.
 */
static void test_rated_tokens_woken_often(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u64 wb0;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 90;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 10;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 4;	/* one block a run */
	t_setup(&t, 8192, 16384, false, &cfg);
	/* 500 above the low mark (819): P rate 125/s, so the floor, 256/s */
	for (i = 0; i < 819 + 500; i++)
		t_write_pat(&t, i * 2, 1, i, 0);
	t_advance_ms(10);
	wb0 = t_stats(&t).wb_blocks;
	assert_int_equal(t.c->wb_rate_bps, 1024 * 1024);
	/* one second woken every 500 us (one token takes 3.9 ms) */
	for (i = 0; i < 2000; i++) {
		__atomic_add_fetch(&t_now_ns, 500000ULL, __ATOMIC_SEQ_CST);
		vc_cache_kick_cleaner(t.c);
		t_run();
	}
	s = t_stats(&t);
	print_message("woken every 500 us: %llu blocks written back in 1 s at 256 blocks/s\n",
		      (unsigned long long)(s.wb_blocks - wb0));
	assert_true(s.wb_blocks - wb0 >= 200 && s.wb_blocks - wb0 <= 300);
	t_advance_ms(10000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 819);
	for (i = 0; i < 819 + 500; i++)
		assert_int_equal(t_check_pat(&t, i * 2, 1, i), 0);
	t_teardown(&t);
}

/*
 * A flush on demand waits for the batch under way: a rated one then goes
 * on at full speed instead of at its rate (the drain of issue 19 waited
 * for a rated batch of a second's worth, at least, before it began).
 */
static void test_flush_hurries_rated_batch(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 90;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 10;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 4;
	t_setup(&t, 8192, 16384, false, &cfg);
	for (i = 0; i < 819 + 500; i++)
		t_write_pat(&t, i * 2, 1, i, 0);
	t_advance_ms(5);	/* a rated batch of 256 blocks is under way */
	s = t_stats(&t);
	assert_true(s.wb_blocks < 10);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	t_advance_ms(5);
	vc_cache_flush_get_progress(t.c, &p);
	s = t_stats(&t);
	print_message("5 ms after the flush began: %llu dirty, flush %s\n",
		      (unsigned long long)s.dirty_blocks,
		      p.running ? "running" : "done");
	assert_false(p.running);
	assert_int_equal(p.result, 0);
	assert_int_equal(s.dirty_blocks, 0);
	for (i = 0; i < 819 + 500; i++)
		assert_true(t_backing_has(&t, i * 2, 1, i));
	t_teardown(&t);
}

static void test_max_age(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 8000;
	t_setup(&t, 1000, 8192, false, &cfg);
	for (i = 0; i < 20; i++)
		t_write_pat(&t, i * 3, 1, i, 0);
	t_advance_ms(4000);
	for (i = 0; i < 5; i++)	/* younger ones */
		t_write_pat(&t, 500 + i * 3, 1, i, 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 25);
	assert_int_equal(s.age_based_write_back, 0);
	/* the first 20 reach 8 s (+ at most one epoch and a tick) */
	t_advance_ms(4000 + 2000 + 1000);
	s = t_stats(&t);
	assert_true(s.dirty_blocks <= 5);
	assert_true(s.age_based_write_back >= 20);
	for (i = 0; i < 20; i++)
		assert_true(t_backing_has(&t, i * 3, 1, i));
	t_advance_ms(8000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.age_based_write_back, 25);
	assert_int_equal(s.cleanings[VC_CLEAN_AGE], 25);
	t_teardown(&t);
}

static void test_idle(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_IDLE_MS] = 3000;
	t_setup(&t, 1000, 8192, false, &cfg);
	for (i = 0; i < 30; i++)
		t_write_pat(&t, i * 3, 1, i, 0);
	t_check_pat(&t, 4000, 1, 0);	/* a miss: backing busy now */
	t_advance_ms(2000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 30);
	t_advance_ms(2000);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.cleanings[VC_CLEAN_IDLE], 30);
	t_teardown(&t);
}

/* Record backing writes through the memdev's fail hook. */
struct wlog {
	u64 sector[4096];
	u32 len[4096];
	u32 n;
};

static int log_writes(void *ctx, const struct vc_dev_io *io)
{
	struct wlog *l = ctx;

	if (io->op == VC_DEV_WRITE && l->n < 4096) {
		l->sector[l->n] = io->sector;
		l->len[l->n++] = io->len;
	}
	return 0;
}

static void test_merge_and_order(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	static struct wlog l;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 64;
	t_setup(&t, 1000, 8192, false, &cfg);
	/* 40 adjacent blocks written in scattered order + 20 isolated ones */
	for (i = 0; i < 40; i++)
		t_write_pat(&t, 100 + (i * 7) % 40, 1, 5, 0);
	for (i = 0; i < 20; i++)
		t_write_pat(&t, 3000 - i * 10, 1, 6, 0);
	memset(&l, 0, sizeof(l));
	vc_memdev_set_fail(t.bm, log_writes, &l);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	s = t_stats(&t);
	/* 40 blocks in 64 KiB I/Os = 3 runs (16+16+8), 20 single ones */
	assert_int_equal(s.wb_ios, 23);
	assert_int_equal(l.n, 23);
	for (i = 1; i < l.n; i++)
		assert_true(l.sector[i] > l.sector[i - 1]);	/* LBA order */
	assert_int_equal(l.len[0], 64 * 1024);
	assert_true(t_backing_has(&t, 100, 40, 5));
	t_teardown(&t);
}

static int progress_calls;
static int progress_stop_at;

static int progress(void *arg, const struct vc_flush_progress *p)
{
	(void)arg;
	progress_calls++;
	assert_true(p->done <= p->target);
	return progress_stop_at && progress_calls >= progress_stop_at;
}

static void write_q(struct tenv *t, struct qdev *q, u64 blk, u32 seed)
{
	char buf[4096];
	struct vc_host_io h;
	int done = 0;

	(void)q;
	t_fill(buf, blk, 1, seed);
	/* WB write hits only the cache device: completes inline */
	assert_int_equal(t_io(t, VC_OP_WRITE, 0, blk * T_BSEC, 4096, buf), 0);
	(void)h;
	(void)done;
}

static void test_inflight_limit_and_flush(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	struct qdev q;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_WB_MAX_INFLIGHT] = 4;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 100; i++)
		write_q(&t, &q, i * 3, i);
	vc_posix_set_pump(q_pump, &q);
	progress_calls = 0;
	progress_stop_at = 0;
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, progress, NULL), 0);
	assert_true(q.max_writes_inflight <= 4);
	assert_true(q.max_writes_inflight >= 2);
	assert_true(progress_calls >= 2);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_false(p.running);
	assert_int_equal(p.target, 100);
	assert_int_equal(p.done, 100);

	/* interrupted by the progress callback */
	for (i = 0; i < 100; i++)
		write_q(&t, &q, i * 3, i + 1);
	progress_calls = 0;
	progress_stop_at = 2;
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, progress, NULL), -EINTR);
	s = t_stats(&t);
	assert_true(s.dirty_blocks > 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_false(p.running);
	assert_int_equal(p.result, -EINTR);
	/* and then to the end */
	progress_stop_at = 0;
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	while (q.n)
		q_pump(&q);
	q_teardown(&t, &q);
}

static int bg_result = 99;

static void bg_done(void *arg, int result)
{
	(void)arg;
	bg_result = result;
}

static int cancel_calls;

/* Progress of a blocking flush: another administrator cancels meanwhile. */
static int cancel_from_elsewhere(void *arg, const struct vc_flush_progress *p)
{
	(void)p;
	cancel_calls++;
	vc_cache_flush_cancel(arg);
	return 0;
}

/*
 * Engine bug (found by the stress test, 1 run in ~12): cancelling "the
 * background flush" interrupted whatever flush ran, also a blocking one
 * (a detach's, or another administrator's), which returned -EINTR.
 */
static void test_cancel_spares_blocking_flush(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct qdev q;
	u32 i;
	int ret;

	(void)st;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 100; i++)
		write_q(&t, &q, i * 3, i);
	vc_posix_set_pump(q_pump, &q);
	cancel_calls = 0;
	ret = vc_cache_flush(t.c, VC_DEV_ID_ALL, cancel_from_elsewhere, t.c);
	print_message("  blocking flush, %d cancels meanwhile: %d\n",
		      cancel_calls, ret);
	assert_true(cancel_calls > 1);
	assert_int_equal(ret, 0);
	for (i = 0; i < 100; i++)
		assert_true(t_backing_has(&t, i * 3, 1, i));
	while (q.n)
		q_pump(&q);
	q_teardown(&t, &q);
}

static u64 bad_sector;

/* Fail cache reads that cover bad_sector. */
static int fail_bad_read(void *ctx, const struct vc_dev_io *io)
{
	(void)ctx;
	if (io->op == VC_DEV_READ && io->sector <= bad_sector &&
	    bad_sector < io->sector + io->len / 512)
		return -EIO;
	return 0;
}

/*
 * Write-back reads the cache in stretches (blocks consecutive in both the
 * backing and the cache device: one read), and a failed stretch is read
 * again block by block, so only the block that fails is lost.
 */
static void test_merged_cache_reads(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_memdev_stats m0, m1;
	struct vc_stats s;
	struct tenv t;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 256;
	t_setup(&t, 1000, 8192, false, &cfg);
	/* 32 blocks written in order: consecutive in the cache as well */
	assert_int_equal(t_write_pat(&t, 100, 32, 5, 0), 0);
	vc_memdev_get_stats(t.cm, &m0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	vc_memdev_get_stats(t.cm, &m1);
	print_message("  32 blocks written back with %llu cache reads\n",
		      (unsigned long long)(m1.reads - m0.reads));
	assert_true(m1.reads - m0.reads <= 4);
	assert_true(t_backing_has(&t, 100, 32, 5));
	/* again, with one block unreadable */
	assert_int_equal(t_write_pat(&t, 100, 32, 6, 0), 0);
	bad_sector = 0;
	for (i = 0; i < t.c->nr_blocks; i++) {
		u64 w = t.c->words[i];

		if ((w & B_VALID) && vc_key_lba(w) == 110)
			bad_sector = t.c->data_start + (u64)i * T_BSEC + 3;
	}
	assert_true(bad_sector != 0);
	vc_memdev_set_fail(t.cm, fail_bad_read, NULL);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), -EIO);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	/* the run's other blocks stayed dirty: the next pass writes them */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	s = t_stats(&t);
	print_message("  one unreadable block: %llu lost, %llu still dirty\n",
		      (unsigned long long)s.lost_blocks,
		      (unsigned long long)s.dirty_blocks);
	assert_int_equal(s.lost_blocks, 1);
	assert_int_equal(s.dirty_blocks, 0);
	for (i = 0; i < 32; i++)
		if (i != 10)
			assert_true(t_backing_has(&t, 100 + i, 1, 6));
	t_teardown(&t);
}

static void test_background_flush(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	struct qdev q;
	u32 i;

	(void)st;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 50; i++)
		write_q(&t, &q, i * 3, i);
	bg_result = 99;
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, bg_done, NULL), 0);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, bg_done, NULL), -EBUSY);
	vc_cache_flush_get_progress(t.c, &p);
	assert_true(p.running);
	assert_int_equal(p.target, 50);
	/* I/O goes on meanwhile: a read hit */
	assert_int_equal(t_check_pat(&t, 3, 1, 1), 0);
	while (bg_result == 99)
		assert_true(q_pump(&q));
	assert_int_equal(bg_result, 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_false(p.running);
	assert_int_equal(p.done, 50);
	for (i = 0; i < 50; i++)
		assert_true(t_backing_has(&t, i * 3, 1, i));
	/* cancel */
	for (i = 0; i < 50; i++)
		write_q(&t, &q, i * 3, i + 7);
	bg_result = 99;
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, bg_done, NULL), 0);
	vc_cache_flush_cancel(t.c);
	assert_int_equal(bg_result, -EINTR);
	while (q.n)
		q_pump(&q);
	q_teardown(&t, &q);
}

static void test_per_device_flush_and_detach(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_memdev *b2;
	struct vc_stats s;
	u32 id2, i, saved;

	(void)st;
	t_setup(&t, 1000, 8192, false, &cfg);
	b2 = vc_memdev_create("hdd1", 8192 * 8, false);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(b2), "hdd1", &id2), 0);
	assert_int_equal(id2, 1);
	for (i = 0; i < 10; i++)
		t_write_pat(&t, i * 3, 1, i, 0);
	saved = t.dev;
	t.dev = id2;
	for (i = 0; i < 7; i++)
		t_write_pat(&t, i * 3, 1, 50 + i, 0);
	t.dev = saved;
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 17);
	assert_int_equal(vc_cache_flush(t.c, id2, NULL, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 10);	/* hdd0 untouched */
	assert_int_equal(vc_cache_flush(t.c, 9, NULL, NULL), -ENODEV);
	/* detach hdd0: writes back first */
	assert_int_equal(vc_cache_detach(t.c, t.dev, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.valid_blocks, 7);
	for (i = 0; i < 10; i++)
		assert_true(t_backing_has(&t, i * 3, 1, i));
	/* forced detach drops dirty data (counted) */
	t.dev = id2;
	t_write_pat(&t, 100, 1, 1, 0);
	assert_int_equal(vc_cache_detach(t.c, id2, VC_DETACH_FORCE), 0);
	s = t_stats(&t);
	assert_int_equal(s.lost_blocks, 1);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(vc_cache_detach(t.c, id2, 0), -ENODEV);
	/* the slots are free again, and survive a crash as free */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t.dev, 0);
	t_teardown(&t);
	vc_memdev_destroy(b2);
}

/*
 * detach KEEP: the clean blocks go, the dirty ones stay (never written
 * back while the device is away, not even by a flush), across a crash
 * too, and the same identity takes them back.
 */
static void test_detach_keep_dirty(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_backing_info bi;
	struct vc_stats s;
	u32 i, id;

	(void)st;
	t_setup(&t, 1000, 8192, false, &cfg);
	for (i = 0; i < 6; i++)
		t_write_pat(&t, i * 2, 1, 70 + i, 0);
	assert_int_equal(vc_cache_flush(t.c, t.dev, NULL, NULL), 0);
	for (i = 0; i < 4; i++)		/* 4 dirty over old clean ones */
		t_write_pat(&t, i * 2, 1, 80 + i, 0);
	t_write_pat(&t, 100, 1, 90, 0);	/* and a fifth */
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	assert_int_equal(vc_cache_detach(t.c, t.dev, VC_DETACH_FORCE |
					 VC_DETACH_KEEP), -EINVAL);
	assert_int_equal(vc_cache_detach(t.c, t.dev, VC_DETACH_KEEP), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	assert_int_equal(s.valid_blocks, 5);	/* the 2 clean ones went */
	assert_int_equal(s.lost_blocks, 0);
	assert_int_equal(vc_cache_backing_info(t.c, t.dev, &bi), 0);
	assert_true(bi.in_use);
	assert_false(bi.attached);
	assert_int_equal(bi.dirty_blocks, 5);
	/* nothing reaches the device while it is away */
	assert_int_equal(vc_cache_flush(t.c, t.dev, NULL, NULL), -ENODEV);
	t_advance_ms(120000);
	t_run();
	for (i = 0; i < 4; i++)
		assert_true(t_backing_has(&t, i * 2, 1, 70 + i));
	/* the same identity comes back to its dirty blocks */
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0",
					 &id), 0);
	assert_int_equal(id, t.dev);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	/* and they survive a crash (t_reload attaches it again) */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	for (i = 0; i < 4; i++)
		assert_int_equal(t_check_pat(&t, i * 2, 1, 80 + i), 0);
	assert_int_equal(vc_cache_flush(t.c, t.dev, NULL, NULL), 0);
	for (i = 0; i < 4; i++)
		assert_true(t_backing_has(&t, i * 2, 1, 80 + i));
	assert_true(t_backing_has(&t, 100, 1, 90));
	t_teardown(&t);
}

/* A flush was started: wait until the queued device holds its writes. */
static void q_wait_held(struct qdev *q)
{
	int i;

	for (i = 0; i < 5 && !q->n; i++)
		t_advance_ms(100);
	assert_true(q->n > 0);
}

/* Let the queued device go until the running flush ends (*p: its end). */
static void q_flush_to_end(struct tenv *t, struct qdev *q,
			   struct vc_flush_progress *p)
{
	int i;

	vc_posix_set_pump(q_pump, q);
	for (i = 0; i < 2000; i++) {
		vc_cache_flush_get_progress(t->c, p);
		if (!p->running)
			break;
		q_pump(q);
	}
	vc_posix_set_pump(NULL, NULL);
}

static int unmark_res = 1;

static void unmark_done(void *arg, int err)
{
	(void)arg;
	unmark_res = err;
}

/*
 * A device parked (detach KEEP, unplug) after a flush marked its dirty
 * blocks: the cleaner takes none of them, so the flush waited for them
 * for ever, and with it all write-back but the flush's and every later
 * blocking flush.  It ends now, with -ENODEV, as one that found the
 * device absent; a flush after the device is back writes them home.
 */
static void test_flush_ends_when_device_parked(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	u32 i, id;

	(void)st;
	t_setup(&t, 1000, 8192, false, &cfg);
	for (i = 0; i < 5; i++)
		t_write_pat(&t, i * 3, 1, 60 + i, 0);
	/* marked, the cleaner not run yet (manual work) */
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, unmark_done,
					      NULL), 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_true(p.running);
	assert_int_equal(p.target, 5);
	assert_int_equal(vc_cache_detach(t.c, t.dev, VC_DETACH_KEEP), 0);
	t_advance_ms(2000);
	t_run();
	vc_cache_flush_get_progress(t.c, &p);
	assert_false(p.running);
	assert_int_equal(unmark_res, -ENODEV);
	assert_int_equal(t_stats(&t).dirty_blocks, 5);
	/* back: a blocking flush starts, and takes them home */
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0",
					 &id), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	for (i = 0; i < 5; i++)
		assert_true(t_backing_has(&t, i * 3, 1, 60 + i));
	t_teardown(&t);
}

/*
 * A flush cancelled with its batch still to end, then a new one, while
 * that batch ends: the new flush counts what it marked, and ends when
 * those are home.  (The race fixed beside this test, the old batch
 * cleaning a stale mark while the new flush's walk has not reached its
 * set, taking it off the new count, needs the batch to end inside the
 * walk: single-threaded tests cannot interleave it.)
 */
static void test_flush_after_cancel_counts_right(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	struct qdev q;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_WB_MAX_INFLIGHT] = 4;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 40; i++)
		t_write_pat(&t, i * 5, 1, 30 + i, 0);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL),
			 0);
	/* the cleaner starts a batch: runs in flight, held by the device */
	q_wait_held(&q);	/* the flush's writes held by the device */
	vc_cache_flush_cancel(t.c);
	/* a second flush, while the first one's batch ends */
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL),
			 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_true(p.running);
	q_flush_to_end(&t, &q, &p);
	assert_false(p.running);
	assert_int_equal(p.result, 0);
	/* done means done: nothing it marked is still dirty */
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	while (q.n)
		q_pump(&q);
	q_teardown(&t, &q);
}

/*
 * A blocking flush first waits for a running one (a background flush) to
 * end; its progress callback stops it in that wait too, as the driver
 * stops a delete's write-back when the card goes or the module unloads.
 * Before, it was asked only once its own flush ran: behind a background
 * flush whose writes a device held, nothing could stop it.
 */
static struct qdev *stall_q;
static u64 stall_until_ns;
static int stop_calls;

/* The clock moves; the device holds its I/O until stall_until_ns. */
static bool stall_pump(void *ctx)
{
	(void)ctx;
	t_now_ns += 10000000ULL;
	if (t_now_ns >= stall_until_ns)
		q_pump_one(stall_q);
	vc_posix_run_work();
	return true;
}

static int stop_at_once(void *arg, const struct vc_flush_progress *p)
{
	(void)arg;
	(void)p;
	stop_calls++;
	return 1;
}

static void test_blocking_flush_stops_while_waiting(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct tenv t;
	struct qdev q;
	u64 start;
	u32 i;

	(void)st;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 8; i++)
		t_write_pat(&t, i * 4, 1, 50 + i, 0);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL),
			 0);
	q_wait_held(&q);	/* the flush's writes held by the device */
	stall_q = &q;
	start = t_now_ns;
	stall_until_ns = start + 30000000000ULL;
	vc_posix_set_pump(stall_pump, NULL);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, stop_at_once, NULL),
			 -EINTR);
	vc_posix_set_pump(NULL, NULL);
	/* stopped at its first look, the background flush still running */
	assert_true(t_now_ns - start < 1000000000ULL);
	assert_int_equal(stop_calls, 1);
	vc_cache_flush_get_progress(t.c, &p);
	assert_true(p.running);
	/* the device lets go: the background flush takes everything home */
	q_flush_to_end(&t, &q, &p);
	assert_false(p.running);
	assert_int_equal(p.result, 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	for (i = 0; i < 8; i++)
		assert_true(t_backing_has(&t, i * 4, 1, 50 + i));
	q_teardown(&t, &q);
}

/*
 * Detaching a clean device does not wait for a background flush of the
 * others: it had flushed the device first, and a flush waits for a
 * running one to end (all of it, interruptibly: a signal failed the
 * detach, and the driver, holding its control lock all along, unplugged
 * the device).
 */
static void test_clean_detach_during_background_flush(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_flush_progress p;
	struct vc_memdev *b2;
	struct tenv t;
	struct qdev q;
	u32 id2, i;

	(void)st;
	q_setup(&t, &q, &cfg);
	b2 = vc_memdev_create("hdd1", 8192 * 8, false);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(b2), "hdd1", &id2),
			 0);
	for (i = 0; i < 6; i++)
		t_write_pat(&t, i * 4, 1, 20 + i, 0);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL),
			 0);
	q_wait_held(&q);	/* the flush's writes held by the device */
	/* no pump: a wait for the background flush could only fail */
	assert_int_equal(vc_cache_detach(t.c, id2, 0), 0);
	vc_cache_flush_get_progress(t.c, &p);
	assert_true(p.running);
	q_flush_to_end(&t, &q, &p);
	assert_false(p.running);
	assert_int_equal(p.result, 0);
	for (i = 0; i < 6; i++)
		assert_true(t_backing_has(&t, i * 4, 1, 20 + i));
	q_teardown(&t, &q);
	vc_memdev_destroy(b2);
}

/*
 * Over the high watermark a write-back write that would dirty one more
 * block is written through: with no cleaning at all, dirty data stays at
 * the mark and the rest reaches the backing device at once.
 */
/*
 * At the high watermark writes that would dirty one more block are slowed
 * (they wait for write-back), not written through; past the hard limit
 * (halfway to a full cache) they are written through.
 */
static void test_high_watermark_writes_through(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	t_setup(&t, 1000, 8192, false, &cfg);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_LOW_PCT, 5), 0);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_HIGH_PCT, 10), 0);
	for (i = 0; i < 300; i++)
		assert_int_equal(t_write_pat(&t, i * 7, 1, 3 + i, 0), 0);
	s = t_stats(&t);
	print_message("300 writes over a 100-block mark: %llu slowed, %llu dirty\n",
		      (unsigned long long)s.wb_throttled,
		      (unsigned long long)s.dirty_blocks);
	/* each time the mark is reached: one write waits for a batch */
	assert_true(s.wb_throttled >= 3);
	assert_true(s.dirty_blocks <= 100);
	assert_true(s.valid_blocks >= 250);	/* still cached */
	/* slowed, not written through: nothing went around write-back */
	assert_int_equal(s.backing_bytes_written, s.wb_bytes);
	for (i = 0; i < 300; i++)
		assert_int_equal(t_check_pat(&t, i * 7, 1, 3 + i), 0);
	/* rewriting a dirty block is never slowed */
	assert_int_equal(t_write_pat(&t, 299 * 7, 1, 999, 0), 0);
	s = t_stats(&t);
	assert_int_equal(t_stats(&t).wb_throttled, s.wb_throttled);
	t_teardown(&t);

	/* past the hard limit (no write-back: the device is parked) */
	t_setup(&t, 1000, 8192, false, &cfg);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_LOW_PCT, 50), 0);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_DIRTY_HIGH_PCT, 50), 0);
	t.c->bdev[t.dev].parked = true;	/* the cleaner picks none */
	t_io_wait_ms = 10;		/* a slowed write waits 100 ms */
	for (i = 0; i < 800; i++)
		assert_int_equal(t_write_pat(&t, i * 7, 1, 3 + i, 0), 0);
	t_io_wait_ms = 0;
	s = t_stats(&t);
	print_message("past the hard limit: %llu dirty, %llu slowed\n",
		      (unsigned long long)s.dirty_blocks,
		      (unsigned long long)s.wb_throttled);
	assert_int_equal(s.dirty_blocks, 750);	/* 500 + (1000 - 500) / 2 */
	assert_true(s.wb_throttled >= 250);
	for (i = 750; i < 800; i++)	/* written through */
		assert_true(t_backing_has(&t, i * 7, 1, 3 + i));
	t.c->bdev[t.dev].parked = false;
	t_teardown(&t);
}

/*
 * A cache full of dirty blocks: misses make the cleaner clean the tail
 * (for S3-FIFO the small queue's, then the main one's: where the policy
 * evicts next).
 */
static void tail_cleaning_run(enum vc_policy pol)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	cfg.policy = pol;
	t_setup(&t, 256, 8192, false, &cfg);
	for (i = 0; i < 256; i++)
		assert_int_equal(t_write_pat(&t, i * 2, 1, i, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 256);
	/* a miss finds no clean victim: read around, cleaner kicked */
	assert_int_equal(t_check_pat(&t, 5001, 1, 0), 1);
	s = t_stats(&t);
	assert_int_equal(s.bypass[VC_BYP_NOSPACE], 1);
	t_run();
	s = t_stats(&t);
	assert_true(s.cleanings[VC_CLEAN_TAIL] >= 32);
	assert_true(s.dirty_blocks <= 256 - 32);
	/* the oldest were written home and can be replaced now */
	assert_true(t_backing_has(&t, 0, 1, 0));
	for (i = 0; i < 20; i++)
		assert_int_equal(t_check_pat(&t, 6000 + i, 1, 0), 1);
	s = t_stats(&t);
	assert_int_equal(s.bypass[VC_BYP_NOSPACE], 1);
	/* TinyLFU may refuse a block seen once: that is admission */
	assert_int_equal(s.evictions + s.bypass[VC_BYP_ADMISSION], 20);
	if (pol != VC_POLICY_TINYLFU)
		assert_int_equal(s.evictions, 20);
	for (i = 0; i < 256; i++)	/* nothing lost */
		assert_int_equal(t_check_pat(&t, i * 2, 1, i), 0);
	t_teardown(&t);
}

static void test_tail_cleaning(void **st)
{
	u32 p;

	(void)st;
	for (p = 0; p < VC_NR_POLICIES; p++)
		tail_cleaning_run((enum vc_policy)p);
}


/*
 * Issue 19: a host write to a block whose write-back is in flight does
 * not wait for it (nor for the batch's FLUSH); the block stays dirty, and
 * the completion of the older version's write-back does not mark it
 * clean.  The next write-back sends the newer data home.
 */
static void test_write_races_writeback(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct qdev q;
	struct vc_stats s;
	u32 i, flushes;
	int n;

	(void)st;
	q_setup(&t, &q, &cfg);
	for (i = 0; i < 8; i++)
		write_q(&t, &q, 10 + i, 1);
	assert_int_equal(vc_cache_flush_start(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	t_run();
	/* the cleaner's merged write of blocks 10..17 is queued */
	assert_int_equal(q.n, 1);
	assert_int_equal(q.q[0]->op, VC_DEV_WRITE);
	/* rewriting two of them completes at once (nothing pumped) */
	write_q(&t, &q, 12, 2);
	write_q(&t, &q, 17, 2);
	assert_int_equal(q.n, 1);
	/* the write home ends: a FLUSH follows; then blocks become clean */
	assert_true(q_pump_one(&q));
	t_run();
	assert_int_equal(q.n, 1);
	assert_int_equal(q.q[0]->op, VC_DEV_FLUSH);
	/* between the write home and its FLUSH, a write re-dirties too */
	write_q(&t, &q, 15, 3);
	assert_true(q_pump_one(&q));
	t_run();
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 3);	/* 12, 15, 17 */
	assert_true(t_backing_has(&t, 10, 2, 1));
	assert_false(t_backing_has(&t, 12, 1, 2));
	assert_int_equal(t_check_pat(&t, 12, 1, 2), 0);
	assert_int_equal(t_check_pat(&t, 15, 1, 3), 0);
	assert_int_equal(t_check_pat(&t, 17, 1, 2), 0);
	/* the newer versions go home with the next flush */
	vc_posix_set_pump(q_pump, &q);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_true(t_backing_has(&t, 12, 1, 2));
	assert_true(t_backing_has(&t, 15, 1, 3));
	assert_true(t_backing_has(&t, 17, 1, 2));
	(void)flushes;
	(void)n;
	q_teardown(&t, &q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watermark),
		cmocka_unit_test(test_rated_writeback),
		cmocka_unit_test(test_max_age),
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_merge_and_order),
		cmocka_unit_test(test_write_races_writeback),
		cmocka_unit_test(test_rated_tokens_woken_often),
		cmocka_unit_test(test_flush_hurries_rated_batch),
		cmocka_unit_test(test_inflight_limit_and_flush),
		cmocka_unit_test(test_background_flush),
		cmocka_unit_test(test_cancel_spares_blocking_flush),
		cmocka_unit_test(test_merged_cache_reads),
		cmocka_unit_test(test_per_device_flush_and_detach),
		cmocka_unit_test(test_detach_keep_dirty),
		cmocka_unit_test(test_flush_ends_when_device_parked),
		cmocka_unit_test(test_flush_after_cancel_counts_right),
		cmocka_unit_test(test_blocking_flush_stops_while_waiting),
		cmocka_unit_test(test_clean_detach_during_background_flush),
		cmocka_unit_test(test_high_watermark_writes_through),
		cmocka_unit_test(test_tail_cleaning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
