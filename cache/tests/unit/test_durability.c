// SPDX-License-Identifier: GPL-2.0
/*
 * Durability under failures: each test is a way an outside review found to
 * acknowledge a FLUSH, a FUA write or a shutdown whose data a power cut
 * would lose, or to serve older data than was durable.  Each failed before
 * its fix.
 */
#include "tutil.h"

static struct vc_cache_config d_cfg(u64 commit_ms)
{
	struct vc_cache_config cfg = t_cfg_manual();

	cfg.params.v[VC_P_COMMIT_MS] = commit_ms;
	return cfg;
}

/* Put the pattern @seed of block @blk on the backing device, durable. */
static void back_put(struct tenv *t, u64 blk, u32 seed)
{
	u8 buf[T_BS];

	t_fill(buf, blk, 1, seed);
	vc_memdev_poke(t->bm, blk * T_BSEC, buf, T_BS);
}

/* Does block @blk read as pattern @a or @b?  0 yes, 1 no, <0 error */
static int reads_one_of(struct tenv *t, u64 blk, u32 a, u32 b)
{
	int e = t_check_pat(t, blk, 1, a);

	return e == 1 ? t_check_pat(t, blk, 1, b) : e;
}

/*
 * 1. A record write of a group commit fails.  Its sector must wait for the
 * next commit: a later FLUSH that finds "nothing pending" would be
 * acknowledged while the block written before it has no DIRTY record.
 */
static void test_failed_commit_record_requeued(void **st)
{
	struct vc_cache_config cfg = d_cfg(50);
	struct t_inj f = { .op = VC_DEV_WRITE, .meta_only = true, .left = -1,
			 .err = -EIO };
	struct t_inj bw = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 7, 1);
	assert_int_equal(t_write_pat(&t, 7, 1, 2, 0), 0);	/* lazy */
	/* records fail; write-back cannot take the data home either */
	vc_memdev_set_fail(t.cm, t_inject, &f);
	vc_memdev_set_fail(t.bm, t_inject, &bw);
	t_advance_ms(60);		/* the timer's commit: record fails */
	assert_true(f.hits >= 1);
	assert_true(t_stats(&t).commits >= 1);
	assert_int_equal(t_stats(&t).dirty_blocks, 1);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	/* the FLUSH must get the record written */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 2), 0);
	t_teardown(&t);
}

/*
 * A record write with no md_write to be had at once (the I/O paths take
 * one only if there is one: waiting in a completion could hold up the
 * ones that give them back) is retried shortly: a FUA write that needs
 * it is acknowledged once the retry wrote it, durable across a power cut.
 */
static void test_record_write_without_md_write(void **st)
{
	struct vc_cache_config cfg = d_cfg(50);
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 9, 1);
	vc_posix_fail_try_allocs(1);
	t_io_wait_ms = 1;		/* the retry is a timer */
	assert_int_equal(t_write_pat(&t, 9, 1, 2, VC_IO_FUA), 0);
	t_io_wait_ms = 0;
	/* its record write asked for an md_write and was refused */
	assert_int_equal(vc_posix_try_allocs_left(), 0);
	vc_posix_fail_try_allocs(0);
	assert_int_equal(vc_atomic_read(&t.c->md_failed), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 9, 1, 2), 0);
	t_teardown(&t);
}

/*
 * A host FLUSH whose commit failed waits for the dirty data to drain; the
 * administrator's return to write-back meanwhile would let new dirty
 * writes put that off for as long as they come: refused (EBUSY) until
 * the drain is done.
 */
static void test_no_write_back_during_drain(void **st)
{
	struct vc_cache_config cfg = d_cfg(50);
	struct t_inj fl = { .op = VC_DEV_FLUSH, .left = 1, .err = -EIO };
	struct t_hio f;
	struct tenv t;
	struct qdev q;
	int i;

	(void)st;
	q_setup(&t, &q, &cfg);
	assert_int_equal(t_write_pat(&t, 7, 1, 3, 0), 0);	/* dirty */
	vc_memdev_set_fail(t.cm, t_inject, &fl);
	t_submit(&t, &f, VC_OP_FLUSH, 0, 0, 0, NULL);
	while (vc_posix_run_work())
		;
	assert_int_equal(fl.hits, 1);			/* the commit failed */
	assert_false(t_done(&f));			/* waits for the drain */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), -EBUSY);
	for (i = 0; i < 200 && !t_done(&f); i++)
		q_pump(&q);
	assert_true(t_done(&f));
	assert_int_equal(f.err, 0);
	assert_true(t_backing_has(&t, 7, 1, 3));
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), 0);
	q_teardown(&t, &q);
}

/*
 * 2. A write-through write over a block written back whose clean record
 * is not durable (FLASHDIRTY), then a host FLUSH whose cache flush fails:
 * the stale DIRTY record must not serve the old data after a power cut.
 */
static void test_wt_over_flashdirty_failed_flush(void **st)
{
	struct vc_cache_config cfg = d_cfg(0);
	/* -ENOMEM: retried later, no degradation */
	struct t_inj md = { .op = VC_DEV_WRITE, .meta_only = true, .left = -1,
			  .err = -ENOMEM };
	struct t_inj fl = { .op = VC_DEV_FLUSH, .left = -1, .err = -EIO };
	struct tenv t;
	int e;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	assert_int_equal(t_write_pat(&t, 3, 1, 1, 0), 0);	/* DIRTY record */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WT), 0);
	/* write-back: the clean record cannot be written */
	vc_memdev_set_fail(t.cm, t_inject, &md);
	vc_cache_flush(t.c, t.dev, NULL, NULL);
	t_run();
	assert_true(md.hits >= 1);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	/* records writable again, cache FLUSH fails */
	vc_memdev_set_fail(t.cm, t_inject, &fl);
	e = t_write_pat(&t, 3, 1, 2, 0);		/* write-through */
	if (!e) {
		e = t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL);
		print_message("  FLUSH after the failed cache flush: %d\n", e);
		vc_memdev_set_fail(t.cm, NULL, NULL);
		t_crash(&t);
		assert_int_equal(t_reload(&t), 0);
		/* acknowledged and flushed: the new data, never the old */
		if (!e)
			assert_int_equal(t_check_pat(&t, 3, 1, 2), 0);
		else
			assert_int_equal(reads_one_of(&t, 3, 2, 1), 0);
	} else {
		vc_memdev_set_fail(t.cm, NULL, NULL);
	}
	t_teardown(&t);
}

/*
 * 3. Clean shutdown: the records it writes name cache data that must be
 * durable before them.  A device that persists its cached writes in any
 * order (here: the metadata area reached the media, the data did not)
 * must not bring back a DIRTY record over data that was never flushed.
 */
static void test_shutdown_records_after_data(void **st)
{
	struct vc_cache_config cfg = d_cfg(10000);
	struct t_inj fl = { .op = VC_DEV_FLUSH, .left = -1, .err = -EIO };
	struct tenv t;
	u64 data_start;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 11, 1);
	assert_int_equal(t_write_pat(&t, 11, 1, 2, 0), 0);	/* lazy */
	data_start = t.c->data_start;
	/* every cache FLUSH fails from here: the shutdown cannot finish */
	vc_memdev_set_fail(t.cm, t_inject, &fl);
	assert_int_not_equal(vc_cache_shutdown(t.c, 0), 0);
	t.c = NULL;
	vc_memdev_set_fail(t.cm, NULL, NULL);
	vc_memdev_power_cut_keep(t.cm, 0, data_start);
	vc_memdev_power_cut(t.bm);
	assert_int_equal(t_reload(&t), 0);
	/* never acknowledged as durable: old or new, nothing else */
	assert_int_equal(reads_one_of(&t, 11, 2, 1), 0);
	t_teardown(&t);
}

/* The superblock copy with the highest seq (its sector). */
static u64 newest_sb(struct tenv *t)
{
	struct vc_sb a, b;

	vc_memdev_peek(t->cm, VC_SB_SECTOR, &a, sizeof(a));
	vc_memdev_peek(t->cm, VC_SB2_SECTOR, &b, sizeof(b));
	return vc_le64_to_cpu(a.seq) > vc_le64_to_cpu(b.seq) ?
	       VC_SB_SECTOR : VC_SB2_SECTOR;
}

/*
 * 4. After a clean shutdown and a load, the older superblock copy still
 * says "clean".  If the newer copy is later unreadable, the stale clean
 * copy must not make the load trust clean records of blocks reused since.
 */
static void test_stale_clean_sb_copy(void **st)
{
	struct vc_cache_config cfg = d_cfg(100);
	struct tenv t;
	u8 junk[512];
	u32 i;

	(void)st;
	cfg.mode = VC_MODE_WT;
	t_setup(&t, 64, 4096, true, &cfg);
	back_put(&t, 5, 1);
	assert_int_equal(t_check_pat(&t, 5, 1, 1), 0);		/* cached */
	assert_int_equal(vc_cache_shutdown(t.c, 0), 0);		/* clean */
	t.c = NULL;
	assert_int_equal(t_reload(&t), 0);
	/* evict block 5: its cache block now holds other data */
	for (i = 100; i < 400; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 0), 1);	/* zeroes */
	for (i = 100; i < 400; i++) {
		back_put(&t, i, 7);
		t_write_pat(&t, i, 1, 7, 0);
	}
	/* the refilled cache blocks are durable */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	/* the newest copy (written at load: not clean) is unreadable */
	memset(junk, 0x5a, sizeof(junk));
	vc_memdev_poke(t.cm, newest_sb(&t), junk, sizeof(junk));
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 5, 1, 1), 0);
	t_teardown(&t);
}

/*
 * 5. A partial write to a dirty block fails on the cache; the merged block
 * then fails on the backing device too.  The block's other dirty data is
 * gone: reads must fail (a lost marker), never return older data.
 */
static void test_double_failure_marks_lost(void **st)
{
	struct vc_cache_config cfg = d_cfg(0);
	struct t_inj cw = { .op = VC_DEV_WRITE, .data_only = true, .left = 1,
			  .err = -EIO };
	struct t_inj bw = { .op = VC_DEV_WRITE, .left = 1, .err = -EIO };
	u8 buf[T_BS], exp[T_BS];
	struct tenv t;
	int e;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 2, 1);
	assert_int_equal(t_write_pat(&t, 2, 1, 2, 0), 0);	/* dirty */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	vc_memdev_set_fail(t.cm, t_inject, &cw);
	vc_memdev_set_fail(t.bm, t_inject, &bw);
	memset(buf, 0xee, 512);
	assert_int_not_equal(t_io(&t, VC_OP_WRITE, 0, 2 * T_BSEC, 512, buf), 0);
	assert_int_equal(cw.hits, 1);
	assert_int_equal(bw.hits, 1);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	e = t_io(&t, VC_OP_READ, 0, 2 * T_BSEC, T_BS, buf);
	if (!e) {
		/* the rest of the block must be the acknowledged data */
		t_fill(exp, 2, 1, 2);
		assert_memory_equal(buf + 512, exp + 512, T_BS - 512);
	} else {
		assert_int_equal(e, -EIO);
		assert_true(t_stats(&t).lost_blocks >= 1);
	}
	t_teardown(&t);
}

/*
 * 6. A lost marker outlives a power cut and a clean reload (format 3: a
 * LOST record): reads keep failing, never return the backing device's
 * older data.  A whole-block write then clears it for good, a partial one
 * does not, and a discard does.
 */
static void test_lost_marker_persists(void **st)
{
	struct vc_cache_config cfg = d_cfg(0);
	struct t_inj rd = { .op = VC_DEV_READ, .data_only = true, .left = 1,
			  .err = -EIO };
	u8 buf[512];
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 4, 1);
	back_put(&t, 6, 1);
	assert_int_equal(t_write_pat(&t, 4, 1, 2, 0), 0);	/* dirty */
	assert_int_equal(t_write_pat(&t, 6, 1, 2, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	vc_memdev_set_fail(t.cm, t_inject, &rd);
	assert_int_equal(t_check_pat(&t, 4, 1, 2), -EIO);	/* lost */
	rd.left = 1;
	assert_int_equal(t_check_pat(&t, 6, 1, 2), -EIO);	/* lost */
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(t_stats(&t).lost_marked, 2);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).lost_marked, 2);
	assert_int_equal(t_check_pat(&t, 4, 1, 1), -EIO);
	assert_int_equal(t_check_pat(&t, 6, 1, 1), -EIO);
	/* a clean shutdown keeps them too */
	assert_int_equal(vc_cache_shutdown(t.c, 0), 0);
	t.c = NULL;
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 1), -EIO);
	/* partial write: still lost; whole block: cleared, durably */
	memset(buf, 0x11, sizeof(buf));
	assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 4 * T_BSEC, 512, buf), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 1), -EIO);
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);
	assert_int_equal(t_io(&t, VC_OP_DISCARD, 0, 6 * T_BSEC, T_BS, NULL), 0);
	assert_int_equal(t_stats(&t).lost_marked, 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).lost_marked, 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);
	assert_true(t_check_pat(&t, 6, 1, 1) >= 0);	/* readable again */
	t_teardown(&t);
}

/*
 * 6b. A lost marker's device is detached (not kept): the marker and its
 * LOST record go with it, so the slot can name another device.
 */
static void test_lost_marker_leaves_with_device(void **st)
{
	struct vc_cache_config cfg = d_cfg(0);
	struct t_inj rd = { .op = VC_DEV_READ, .data_only = true, .left = 1,
			  .err = -EIO };
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	assert_int_equal(t_write_pat(&t, 4, 1, 2, 0), 0);
	vc_memdev_set_fail(t.cm, t_inject, &rd);
	assert_int_equal(t_check_pat(&t, 4, 1, 2), -EIO);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(vc_cache_detach(t.c, t.dev, 0), 0);
	assert_int_equal(t_stats(&t).lost_marked, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).lost_marked, 0);
	assert_true(t_check_pat(&t, 4, 1, 2) >= 0);
	t_teardown(&t);
}


/*
 * Issue 19: a host FLUSH flushes the backing device only if a host write
 * completed there since its last FLUSH; what it did flush survives a
 * power cut, and what write-back sent home is flushed by write-back.
 */
static void test_flush_home_only_when_needed(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	char half[2048];

	(void)st;
	t_setup(&t, 256, 4096, true, &cfg);
	/* write-back only: FLUSH commits the cache, the disk is left alone */
	assert_int_equal(t_write_pat(&t, 1, 4, 1, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	/* the first FLUSH after attach goes home: what came before is unknown */
	s = t_stats(&t);
	assert_int_equal(s.flushes, 1);
	assert_int_equal(s.backing_flushes, 1);
	assert_int_equal(t_write_pat(&t, 5, 4, 1, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(s.backing_flushes, 1);
	/* a write-through write went home: the next FLUSH goes home */
	memset(half, 0x5a, sizeof(half));
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WT), 0);
	assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 100 * T_BSEC, sizeof(half),
			      half), 0);
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(s.backing_flushes, 2);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(t_stats(&t).backing_flushes, 2);
	/* write-back's own FLUSH covers what it wrote home */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	s = t_stats(&t);
	assert_true(s.wb_flushes >= 1);
	assert_int_equal(s.backing_flushes, 2);
	/* power cut: everything flushed is there */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 1, 8, 1), 0);
	{
		char back[2048];

		assert_int_equal(t_io(&t, VC_OP_READ, 0, 100 * T_BSEC,
				      sizeof(back), back), 0);
		assert_memory_equal(back, half, sizeof(half));
	}
	t_teardown(&t);
}

/*
 * Overwrites of a dirty block go out of place (vc_write.c
 * oop_take_locked()): the new data in another block, the two records
 * switched in one sector write by the next commit.  A power cut before
 * that commit brings back the older version (the new one was never
 * flushed), after it the newer; never the disk's older data, never both
 * records (a load would refuse the cache: "cached twice").  Many
 * overwrites of a few blocks with flushes between keep one block each.
 */
static void test_oop_overwrite_across_power_cuts(void **st)
{
	struct vc_cache_config cfg = d_cfg(50);
	struct tenv t;
	struct vc_stats s;
	u32 i, b;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	back_put(&t, 7, 1);
	assert_int_equal(t_write_pat(&t, 7, 1, 2, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(t_write_pat(&t, 7, 1, 3, 0), 0);	/* lazy */
	assert_int_equal(t_check_pat(&t, 7, 1, 3), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 1);
	assert_int_equal(s.lost_blocks, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 2), 0);	/* the flushed one */
	/* flushed: the newer one */
	assert_int_equal(t_write_pat(&t, 7, 1, 4, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 4), 0);
	/* FUA: durable when acknowledged */
	assert_int_equal(t_write_pat(&t, 7, 1, 5, VC_IO_FUA), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 5), 0);
	/* the commit timer alone makes it durable too */
	assert_int_equal(t_write_pat(&t, 7, 1, 6, 0), 0);
	t_advance_ms(60);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 6), 0);
	/* many overwrites of four blocks, a flush every third */
	for (i = 0; i < 300; i++) {
		b = 20 + i % 4;
		assert_int_equal(t_write_pat(&t, b, 1, 100 + i, 0), 0);
		if (i % 3 == 2)
			assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	}
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	assert_int_equal(s.lost_blocks, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	for (b = 20; b < 24; b++)	/* the last write of each was flushed */
		assert_int_equal(t_check_pat(&t, b, 1, 100 + 296 + (b - 20)), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 6), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 5);
	t_teardown(&t);
}

/*
 * A fresh cache (@cfg, volatile device caches) whose block 7 holds
 * pattern 2, dirty and flushed, over pattern 1 on the backing device.
 */
static void oop_flushed_block(struct tenv *t, const struct vc_cache_config *cfg)
{
	t_setup(t, 1024, 4096, true, cfg);
	back_put(t, 7, 1);
	assert_int_equal(t_write_pat(t, 7, 1, 2, 0), 0);
	assert_int_equal(t_io(t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
}

/*
 * An out-of-place FUA overwrite whose record write fails: the new block
 * stands for the older (flushed) data too, since the old one is a
 * tombstone by then.  Its data must go home FUA (a power cut right after
 * the acknowledgement finds it on the disk, not the disk's older data),
 * and if that home write fails too the block is lost (EIO), never the
 * disk's older data.  Both failed before the review of the change.
 */
static void test_oop_record_fails(void **st)
{
	struct vc_cache_config cfg = d_cfg(50);
	struct t_inj fm = { .op = VC_DEV_WRITE, .meta_only = true, .left = 1,
			  .err = -EIO };
	struct t_inj fb = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };
	struct tenv t;
	int e;

	(void)st;
	oop_flushed_block(&t, &cfg);
	vc_memdev_set_fail(t.cm, t_inject, &fm);
	assert_int_equal(t_write_pat(&t, 7, 1, 3, VC_IO_FUA), 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(fm.hits, 1);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 3), 0);
	t_teardown(&t);

	/* no group commit: a plain overwrite writes its record at once too */
	cfg = d_cfg(0);
	oop_flushed_block(&t, &cfg);
	fm.left = 1;
	fm.hits = 0;
	vc_memdev_set_fail(t.cm, t_inject, &fm);
	assert_int_equal(t_write_pat(&t, 7, 1, 3, 0), 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(fm.hits, 1);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 7, 1, 3), 0);
	t_teardown(&t);
	cfg = d_cfg(50);

	/* the same with the disk failing too: lost or the older, never v0 */
	oop_flushed_block(&t, &cfg);
	fm.left = 1;
	fm.hits = 0;
	vc_memdev_set_fail(t.cm, t_inject, &fm);
	vc_memdev_set_fail(t.bm, t_inject, &fb);
	assert_int_equal(t_write_pat(&t, 7, 1, 3, VC_IO_FUA), -EIO);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	t_run();
	e = t_check_pat(&t, 7, 1, 2);
	assert_true(e == 0 || e == -EIO);
	assert_int_not_equal(t_check_pat(&t, 7, 1, 1), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	e = t_check_pat(&t, 7, 1, 2);
	assert_true(e == 0 || e == -EIO);
	assert_int_not_equal(t_check_pat(&t, 7, 1, 1), 0);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_home_only_when_needed),
		cmocka_unit_test(test_failed_commit_record_requeued),
		cmocka_unit_test(test_oop_overwrite_across_power_cuts),
		cmocka_unit_test(test_oop_record_fails),
		cmocka_unit_test(test_record_write_without_md_write),
		cmocka_unit_test(test_no_write_back_during_drain),
		cmocka_unit_test(test_wt_over_flashdirty_failed_flush),
		cmocka_unit_test(test_shutdown_records_after_data),
		cmocka_unit_test(test_stale_clean_sb_copy),
		cmocka_unit_test(test_double_failure_marks_lost),
		cmocka_unit_test(test_lost_marker_persists),
		cmocka_unit_test(test_lost_marker_leaves_with_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
