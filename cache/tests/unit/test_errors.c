// SPDX-License-Identifier: GPL-2.0
/*
 * Errors: cache read errors (clean: retried on the backing device; dirty:
 * reported, counted lost), cache write errors (degrade WB -> WT -> PT
 * without failing the host), backing errors (propagated), metadata write
 * errors, write-back errors.
 */
#include "tutil.h"

static struct vc_cache_config e_cfg(enum vc_mode m)
{
	struct vc_cache_config cfg;

	vc_cache_config_default(&cfg);
	cfg.mode = m;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	cfg.params.v[VC_P_IDLE_MS] = 0;
	cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	return cfg;
}

static void test_cache_read_error_clean(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_READ, .data_only = true, .left = 1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);	/* clean, cached */
	vc_memdev_set_fail(t.cm, t_inject, &f);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);	/* retried on hdd */
	s = t_stats(&t);
	assert_int_equal(s.cache_read_errors, 1);
	assert_int_equal(s.read_retries, 1);
	assert_int_equal(s.lost_blocks, 0);
	assert_int_equal(s.valid_blocks, 0);	/* the bad copy is dropped */
	vc_memdev_set_fail(t.cm, NULL, NULL);
	t_teardown(&t);
}

static void test_cache_read_error_dirty(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_READ, .data_only = true, .left = 1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);	/* dirty */
	vc_memdev_set_fail(t.cm, t_inject, &f);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), -EIO);
	s = t_stats(&t);
	assert_int_equal(s.cache_read_errors, 1);
	assert_int_equal(s.lost_blocks, 1);
	assert_int_equal(s.dirty_blocks, 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	t_run();
	/* dropped durably: not recovered as dirty after a crash */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	t_teardown(&t);
}

static void test_cache_write_errors_degrade(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_WRITE, .data_only = true, .left = 1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	vc_memdev_set_fail(t.cm, t_inject, &f);
	/* the host write succeeds: its data went to the backing device */
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);
	assert_true(t_backing_has(&t, 4, 1, 3));
	s = t_stats(&t);
	assert_int_equal(s.cache_write_errors, 1);
	assert_int_equal(s.degradations, 1);
	assert_int_equal(vc_cache_get_mode(t.c), VC_MODE_WT);
	assert_int_equal(vc_cache_get_requested_mode(t.c), VC_MODE_WB);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);
	/* a second error: pass-through */
	f.left = 1;
	assert_int_equal(t_write_pat(&t, 9, 1, 4, 0), 0);
	assert_true(t_backing_has(&t, 9, 1, 4));
	assert_int_equal(vc_cache_get_mode(t.c), VC_MODE_PT);
	s = t_stats(&t);
	assert_int_equal(s.degradations, 2);
	assert_int_equal(t_check_pat(&t, 9, 1, 4), 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	/* the administrator re-enables write-back */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), 0);
	assert_int_equal(vc_cache_get_mode(t.c), VC_MODE_WB);
	t_teardown(&t);
}

static void test_metadata_write_error(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_WRITE, .meta_only = true, .left = 1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, true, &cfg);
	vc_memdev_set_fail(t.cm, t_inject, &f);
	/* dirty record cannot be written: data goes home, host succeeds */
	assert_int_equal(t_write_pat(&t, 4, 1, 3, VC_IO_FUA), 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	s = t_stats(&t);
	assert_int_equal(s.degradations, 1);
	assert_int_equal(s.dirty_blocks, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);
	t_teardown(&t);
}

static void test_backing_errors_propagate(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = -1, .left = -1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	t_write_pat(&t, 1, 1, 1, 0);
	vc_memdev_set_fail(t.bm, t_inject, &f);
	assert_int_equal(t_check_pat(&t, 30, 1, 0), -EIO);	/* miss */
	assert_int_equal(t_write_pat(&t, 31, 1, 0, 0), -EIO);	/* WT */
	assert_int_equal(t_check_pat(&t, 1, 1, 1), 0);	/* hit still fine */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), -EIO);
	s = t_stats(&t);
	assert_true(s.backing_read_errors >= 1);
	assert_true(s.backing_write_errors >= 1);
	assert_int_equal(s.degradations, 0);
	/* a failed fill leaves nothing cached */
	assert_int_equal(s.valid_blocks, 1);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	t_teardown(&t);
}

static void test_writeback_error_keeps_dirty(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	t_write_pat(&t, 1, 2, 1, 0);
	vc_memdev_set_fail(t.bm, t_inject, &f);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), -EIO);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 2);	/* still ours to write */
	assert_int_equal(s.lost_blocks, 0);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_true(t_backing_has(&t, 1, 2, 1));
	t_teardown(&t);
}

/*
 * A host detach that fails (write-back cannot reach the disk) leaves the
 * device attached in the engine; the host then closes it.  Without
 * vc_cache_unplug() the engine kept submitting to it and the identity
 * could never be attached again (EEXIST).
 */
static void test_failed_detach_then_unplug(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct t_inj f = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };
	struct vc_memdev_stats b0, b1;
	struct tenv t;
	struct vc_stats s;
	u32 id;

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	t_write_pat(&t, 1, 2, 1, 0);
	vc_memdev_set_fail(t.bm, t_inject, &f);
	assert_int_equal(vc_cache_detach(t.c, t.dev, 0), -EIO);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0", &id),
			 -EEXIST);
	assert_int_equal(vc_cache_unplug(t.c, t.dev), 0);
	vc_memdev_get_stats(t.bm, &b0);
	/* the device is not touched again: no write-back, no FLUSH */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), -ENODEV);
	t_advance_ms(120000);
	t_run();
	vc_memdev_get_stats(t.bm, &b1);
	assert_int_equal(b1.writes, b0.writes);
	assert_int_equal(b1.flushes, b0.flushes);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 2);	/* kept for its return */
	assert_int_equal(s.lost_blocks, 0);
	assert_int_equal(vc_cache_unplug(t.c, t.dev), 0);	/* idempotent */
	/* it comes back: the same identity, its dirty data */
	vc_memdev_set_fail(t.bm, NULL, NULL);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0", &id), 0);
	assert_int_equal(id, t.dev);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_true(t_backing_has(&t, 1, 2, 1));
	assert_int_equal(vc_cache_unplug(t.c, VC_MAX_BACKING), -EINVAL);
	t_teardown(&t);
}

/*
 * A detach whose last write (the device table) fails keeps the slot
 * reserved, as the flash still says; an attach whose record fails leaves
 * its new slot free.  Before, the detach freed the slot in RAM only: a
 * new device took the slot the flash gave the old one, and the old one
 * (waiting in the driver) got another slot when it came back.
 */
static void test_slot_record_fails(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WT);
	struct t_inj f = { .op = VC_DEV_WRITE, .meta_only = true, .left = -1,
			   .err = -EIO };
	struct vc_backing_info bi;
	struct tenv t;
	u32 id = VC_MAX_BACKING, id2 = VC_MAX_BACKING;

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	t_write_pat(&t, 1, 2, 1, 0);
	vc_memdev_set_fail(t.cm, t_inject, &f);
	assert_int_equal(vc_cache_detach(t.c, t.dev, 0), -EIO);
	assert_int_equal(vc_cache_unplug(t.c, t.dev), 0);	/* the driver's */
	assert_int_equal(vc_cache_backing_info(t.c, t.dev, &bi), 0);
	assert_true(bi.in_use);
	assert_false(bi.attached);
	assert_string_equal(bi.uuid, "hdd0");
	/* a new device whose record fails: no slot taken */
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "other",
					 &id2), -EIO);
	assert_int_equal(vc_cache_backing_info(t.c, t.dev + 1, &bi), -ENOENT);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	/* recorded: another slot than the waiting device's */
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "other",
					 &id2), 0);
	assert_int_not_equal(id2, t.dev);
	assert_int_equal(vc_cache_detach(t.c, id2, 0), 0);
	/* the identity comes back to its own slot */
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0",
					 &id), 0);
	assert_int_equal(id, t.dev);
	assert_int_equal(t_check_pat(&t, 1, 2, 1), 0);
	/* and the flash says the same after a power cut */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t.dev, id);
	assert_int_equal(vc_cache_backing_info(t.c, id2, &bi), -ENOENT);
	t_teardown(&t);
}

static void test_writeback_read_error_lost(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = VC_DEV_READ, .data_only = true, .left = 1, .err = -EIO };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	t_write_pat(&t, 1, 1, 1, 0);
	t_write_pat(&t, 10, 1, 1, 0);
	vc_memdev_set_fail(t.cm, t_inject, &f);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), -EIO);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	s = t_stats(&t);
	assert_int_equal(s.lost_blocks, 1);
	assert_int_equal(s.dirty_blocks, 0);
	t_teardown(&t);
}

/*
 * A fresh write-back cache (@cfg) with blocks 4 and 9 dirty (pattern 3)
 * and flushed, then the card's data writes failing as @fc says and the
 * backing device's writes as @fb says.
 */
static void two_dirty_then_faults(struct tenv *t,
				  const struct vc_cache_config *cfg,
				  struct t_inj *fc, struct t_inj *fb)
{
	t_setup(t, 64, 1024, false, cfg);
	assert_int_equal(t_write_pat(t, 4, 1, 3, 0), 0);	/* dirty */
	assert_int_equal(t_write_pat(t, 9, 1, 3, 0), 0);	/* dirty too */
	assert_int_equal(t_io(t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	vc_memdev_set_fail(t->cm, t_inject, fc);
	vc_memdev_set_fail(t->bm, t_inject, fb);
}

/*
 * A full-block write over a dirty block whose cache copy and write home
 * both fail (debug-kernel-findings 10: the card's write errors while the
 * disk was flakey): the host write fails, not acknowledged, and the block
 * keeps what was there before: the write went out of place (another
 * block), so its failure left the older dirty data untouched.  Nothing is
 * lost, the older data reads back, across a power cut too.
 */
static void test_double_fault_over_dirty(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct t_inj fc = { .op = VC_DEV_WRITE, .data_only = true, .left = 1, .err = -EIO };
	struct t_inj fb = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };
	struct tenv t;
	struct vc_stats s;

	(void)st;
	two_dirty_then_faults(&t, &cfg, &fc, &fb);
	assert_int_equal(t_write_pat(&t, 4, 1, 5, 0), -EIO);	/* not acked */
	assert_int_equal(fc.hits, 1);
	assert_true(fb.hits >= 1);
	s = t_stats(&t);
	assert_int_equal(s.cache_write_errors, 1);
	assert_int_equal(s.lost_blocks, 0);
	assert_int_equal(s.dirty_blocks, 2);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	t_run();
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);	/* what was there */
	assert_int_equal(t_check_pat(&t, 9, 1, 3), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), 0);
	assert_int_equal(t_check_pat(&t, 9, 1, 3), 0);
	assert_int_equal(t_write_pat(&t, 4, 1, 7, 0), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 7), 0);
	t_teardown(&t);
}

/*
 * The same double fault under a partial write: part of a block is still
 * written in place (going out of place would first read the rest from the
 * cache), so the older dirty data is on the flash under a write that
 * failed: the block is lost (reads fail rather than serve the backing
 * device's older data), counted and logged, until written whole again.
 */
static void test_double_fault_partial_over_dirty(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct t_inj fc = { .op = VC_DEV_WRITE, .data_only = true, .left = 1, .err = -EIO };
	struct t_inj fb = { .op = VC_DEV_WRITE, .left = -1, .err = -EIO };
	struct tenv t;
	struct vc_stats s;
	unsigned long logged;
	char msg[256], buf[512];

	(void)st;
	two_dirty_then_faults(&t, &cfg, &fc, &fb);
	logged = vc_posix_log_errors();
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 4 * T_BSEC, sizeof(buf), buf),
			 -EIO);					/* not acked */
	s = t_stats(&t);
	assert_int_equal(s.cache_write_errors, 1);
	assert_int_equal(s.lost_blocks, 1);
	/* never silent: the loss itself is logged */
	assert_true(vc_posix_log_errors() > logged);
	vc_posix_last_error(msg, sizeof(msg));
	assert_non_null(strstr(msg, "lost"));
	vc_memdev_set_fail(t.cm, NULL, NULL);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	t_run();
	assert_int_equal(t_check_pat(&t, 4, 1, 3), -EIO);	/* not the disk's */
	assert_int_equal(t_check_pat(&t, 9, 1, 3), 0);	/* untouched */
	/* it stays lost across a reload (its record) */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), -EIO);
	assert_int_equal(t_check_pat(&t, 9, 1, 3), 0);
	/* the application writes the block again: readable */
	assert_int_equal(t_write_pat(&t, 4, 1, 7, 0), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 7), 0);
	t_teardown(&t);
}

/*
 * Out of place, the failed cache write alone: the new data goes home
 * instead, the write succeeds, and the block's older version in the cache
 * is dropped only once the new one is durable at home.
 */
static void test_oop_cache_write_fails(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct t_inj fc = { .op = VC_DEV_WRITE, .data_only = true, .left = 1, .err = -EIO };
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	vc_memdev_set_fail(t.cm, t_inject, &fc);
	assert_int_equal(t_write_pat(&t, 4, 1, 5, 0), 0);
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(fc.hits, 1);
	s = t_stats(&t);
	assert_int_equal(s.lost_blocks, 0);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(t_backing_has(&t, 4, 1, 5), 1);
	assert_int_equal(t_check_pat(&t, 4, 1, 5), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 5), 0);
	t_teardown(&t);
}

/*
 * The flash dies (every I/O fails): a dirty block read fails and becomes
 * a lost marker whose record may still say dirty.  A write of the whole
 * block must not drop the marker before that record is cleared: the
 * write fails (its record cannot be written) and later reads keep failing
 * rather than serve the backing device's older data.  Other blocks pass
 * through to the backing device.
 */
static void test_dead_flash_overwrite_of_lost_block(void **st)
{
	struct vc_cache_config cfg = e_cfg(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct t_inj f = { .op = -1, .left = -1, .err = -ENODEV };

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	assert_int_equal(t_write_pat(&t, 4, 1, 3, 0), 0);	/* dirty */
	vc_memdev_set_fail(t.cm, t_inject, &f);
	assert_int_equal(t_check_pat(&t, 4, 1, 3), -EIO);	/* lost */
	assert_int_equal(t_write_pat(&t, 4, 1, 5, 0), -EIO);	/* refused */
	t_run();
	assert_int_equal(t_check_pat(&t, 4, 1, 3), -EIO);	/* still lost */
	assert_int_equal(t_check_pat(&t, 4, 1, 5), -EIO);
	/* a block never cached goes to the backing device */
	assert_int_equal(t_write_pat(&t, 9, 1, 6, 0), 0);
	assert_int_equal(t_check_pat(&t, 9, 1, 6), 0);
	s = t_stats(&t);
	assert_int_equal(s.lost_blocks, 1);
	assert_true(s.lost_reads >= 2);
	/* the flash comes back: the record is cleared, the overwrite works */
	vc_memdev_set_fail(t.cm, NULL, NULL);
	assert_int_equal(t_write_pat(&t, 4, 1, 7, 0), 0);
	assert_int_equal(t_check_pat(&t, 4, 1, 7), 0);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_read_error_clean),
		cmocka_unit_test(test_cache_read_error_dirty),
		cmocka_unit_test(test_double_fault_over_dirty),
		cmocka_unit_test(test_double_fault_partial_over_dirty),
		cmocka_unit_test(test_oop_cache_write_fails),
		cmocka_unit_test(test_cache_write_errors_degrade),
		cmocka_unit_test(test_metadata_write_error),
		cmocka_unit_test(test_backing_errors_propagate),
		cmocka_unit_test(test_writeback_error_keeps_dirty),
		cmocka_unit_test(test_writeback_read_error_lost),
		cmocka_unit_test(test_failed_detach_then_unplug),
		cmocka_unit_test(test_slot_record_fails),
		cmocka_unit_test(test_dead_flash_overwrite_of_lost_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
