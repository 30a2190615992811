// SPDX-License-Identifier: GPL-2.0
/*
 * Cache modes: where writes go in WB/WT/WA/PT, online switching, leaving
 * write-back drains in the background while I/O continues, discard, FLUSH
 * and FUA durability with volatile device caches.
 */
#include <string.h>

#include "tutil.h"

static struct vc_cache_config cfg_mode(enum vc_mode m)
{
	struct vc_cache_config cfg;

	vc_cache_config_default(&cfg);
	cfg.mode = m;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	cfg.params.v[VC_P_IDLE_MS] = 0;
	cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	return cfg;
}

static void test_wb(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 2, 9, 0), 0);
	assert_false(t_backing_has(&t, 5, 2, 9));	/* not yet home */
	assert_int_equal(t_check_pat(&t, 5, 2, 9), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 2);
	assert_int_equal(s.backing_bytes_written, 0);
	assert_true(s.md_writes > 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_true(t_backing_has(&t, 5, 2, 9));
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.cleanings[VC_CLEAN_FLUSH], 2);
	assert_int_equal(s.wb_ios, 1);	/* adjacent blocks merged */
	assert_int_equal(t_check_pat(&t, 5, 2, 9), 0);
	t_teardown(&t);
}

static void test_wt(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 2, 9, 0), 0);
	assert_true(t_backing_has(&t, 5, 2, 9));
	assert_int_equal(t_check_pat(&t, 5, 2, 9), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.valid_blocks, 2);
	assert_int_equal(s.read_hits, 2);
	t_teardown(&t);
}

static void test_wa(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WA);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	/* read populates, a write then invalidates and goes home */
	assert_int_equal(t_check_pat(&t, 5, 1, 0), 1);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 1);
	assert_int_equal(t_write_pat(&t, 5, 1, 3, 0), 0);
	assert_true(t_backing_has(&t, 5, 1, 3));
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(s.bypass[VC_BYP_MODE], 1);
	assert_int_equal(t_check_pat(&t, 5, 1, 3), 0);
	t_teardown(&t);
}

static void test_pt(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_PT);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 1, 3, 0), 0);
	assert_int_equal(t_check_pat(&t, 5, 1, 3), 0);
	assert_int_equal(t_check_pat(&t, 5, 1, 3), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(s.read_hits, 0);
	assert_true(t_backing_has(&t, 5, 1, 3));
	t_teardown(&t);
}

/* WB -> WT with dirty data: returns at once, drains in the background. */
/*
 * A write-through write holds its block BUSY while both copies go out; a
 * read of the block meanwhile waits (deferred) and must go on when the
 * write ends.  Over a block written back whose clean record is not
 * durable yet (FLASHDIRTY), the write's end cleared BUSY and left the
 * redrive to the record write's end, which redrives only for a tombstone:
 * with nothing else going on, the read waited for ever.
 */
static void test_wt_read_waits_for_write(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WB);
	/* -ENOMEM: the clean record is retried later, no degradation */
	struct t_inj md = { .op = VC_DEV_WRITE, .meta_only = true, .left = -1,
			    .err = -ENOMEM };
	char wbuf[T_BS], rbuf[T_BS];
	struct t_hio w, r;
	struct tenv t;
	struct qdev q;
	int i;

	(void)st;
	q_setup(&t, &q, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 1, 40, 0), 0);	/* dirty */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WT), 0);
	vc_memdev_set_fail(t.cm, t_inject, &md);
	vc_posix_set_pump(q_pump, &q);
	vc_cache_flush(t.c, t.dev, NULL, NULL);		/* written back */
	vc_posix_set_pump(NULL, NULL);
	while (vc_posix_run_work() || q_pump_one(&q))
		;
	assert_true(md.hits >= 1);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	/* clean, its clean record not durable */
	for (i = 0; i < (int)t.c->nr_blocks; i++)
		if ((t.c->words[i] & (B_VALID | B_DIRTY | B_FLASHDIRTY)) ==
		    (B_VALID | B_FLASHDIRTY))
			break;
	assert_true(i < (int)t.c->nr_blocks);

	t_fill(wbuf, 5, 1, 41);
	t_submit(&t, &w, VC_OP_WRITE, 0, 5 * T_BSEC, T_BS, wbuf);
	while (vc_posix_run_work())
		;
	assert_int_equal(q.n, 1);		/* its backing copy held */
	assert_false(t_done(&w));
	memset(rbuf, 0, sizeof(rbuf));
	t_submit(&t, &r, VC_OP_READ, 0, 5 * T_BSEC, T_BS, rbuf);
	while (vc_posix_run_work())
		;
	assert_false(t_done(&r));		/* waits for the block */
	vc_memdev_set_fail(t.cm, NULL, NULL);	/* records writable again */
	assert_true(q_pump_one(&q));		/* the write's backing copy */
	for (i = 0; i < 100 && !(t_done(&w) && t_done(&r)); i++)
		while (vc_posix_run_work() || q_pump_one(&q))
			;
	assert_true(t_done(&w));
	assert_int_equal(w.err, 0);
	assert_true(t_done(&r));		/* not stranded */
	assert_int_equal(r.err, 0);
	assert_memory_equal(rbuf, wbuf, T_BS);
	vc_buf_free(w.b);
	vc_buf_free(r.b);
	q_teardown(&t, &q);
}

static void test_leave_wb_drains(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 100;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 90;
	t_setup(&t, 4096, 65536, false, &cfg);
	for (i = 0; i < 3000; i++)
		assert_int_equal(t_write_pat(&t, i * 3, 1, i, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 3000);
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WT), 0);
	/* nothing ran yet: still dirty, I/O goes on */
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 3000);
	assert_int_equal(t_write_pat(&t, 1, 1, 77, 0), 0);
	assert_true(t_backing_has(&t, 1, 1, 77));	/* WT now */
	assert_int_equal(t_check_pat(&t, 3, 1, 1), 0);
	t_run();
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.cleanings[VC_CLEAN_MODE], 3000);
	for (i = 0; i < 3000; i += 97)
		assert_true(t_backing_has(&t, i * 3, 1, i));
	/* and back to WB */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), 0);
	assert_int_equal(t_write_pat(&t, 2, 1, 5, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 1);
	assert_int_equal(vc_cache_set_mode(t.c, 9), -EINVAL);
	t_teardown(&t);
}

static void test_discard(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	struct vc_memdev_stats ms;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	assert_int_equal(t_write_pat(&t, 10, 4, 1, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_DISCARD, 0, 10 * T_BSEC, 4 * T_BS, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.valid_blocks, 0);
	vc_memdev_get_stats(t.bm, &ms);
	assert_int_equal(ms.discards, 1);
	/* reads now come from the (discarded = zero) backing device */
	assert_int_equal(t_check_pat(&t, 10, 1, 1), 1);
	/* the discard is durable: a crash does not resurrect the data */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	t_teardown(&t);
}

/* With volatile device caches: FLUSH makes earlier writes durable. */
static void test_flush_durability(void **st)
{
	u32 modes[] = { VC_MODE_WB, VC_MODE_WT, VC_MODE_WA };
	unsigned int m;

	(void)st;
	for (m = 0; m < 3; m++) {
		struct vc_cache_config cfg = cfg_mode(modes[m]);
		struct tenv t;

		t_setup(&t, 256, 4096, true, &cfg);
		assert_int_equal(t_write_pat(&t, 1, 1, 11, 0), 0);
		assert_int_equal(t_write_pat(&t, 1, 1, 12, 0), 0); /* overwrite */
		assert_int_equal(t_write_pat(&t, 7, 3, 13, 0), 0);
		assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
		assert_int_equal(t_write_pat(&t, 20, 1, 14, 0), 0); /* after */
		t_crash(&t);
		assert_int_equal(t_reload(&t), 0);
		assert_int_equal(t_check_pat(&t, 1, 1, 12), 0);
		assert_int_equal(t_check_pat(&t, 7, 3, 13), 0);
		t_teardown(&t);
	}
}

static void test_fua_durability(void **st)
{
	u32 modes[] = { VC_MODE_WB, VC_MODE_WT, VC_MODE_WA };
	unsigned int m;

	(void)st;
	for (m = 0; m < 3; m++) {
		struct vc_cache_config cfg = cfg_mode(modes[m]);
		struct tenv t;

		t_setup(&t, 256, 4096, true, &cfg);
		assert_int_equal(t_write_pat(&t, 3, 1, 21, 0), 0);
		assert_int_equal(t_write_pat(&t, 3, 1, 22, VC_IO_FUA), 0);
		assert_int_equal(t_write_pat(&t, 4, 2, 23, VC_IO_FUA), 0);
		assert_int_equal(t_write_pat(&t, 9, 1, 24, VC_IO_PREFLUSH), 0);
		t_crash(&t);
		assert_int_equal(t_reload(&t), 0);
		assert_int_equal(t_check_pat(&t, 3, 1, 22), 0);
		assert_int_equal(t_check_pat(&t, 4, 2, 23), 0);
		t_teardown(&t);
	}
}

static void test_bad_requests(void **st)
{
	struct tenv t;
	u8 buf[512];

	(void)st;
	t_setup(&t, 64, 64, false, NULL);
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 64 * T_BSEC, 512, buf), -EINVAL);
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 0, 100, buf), -EINVAL);
	assert_int_equal(t_io(&t, 9, 0, 0, 512, buf), -EINVAL);
	t.dev = 5;
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 0, 512, buf), -ENODEV);
	t.dev = 0;
	t_teardown(&t);
}

static void test_seq_bypass(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_SEQ_ENABLE] = 1;
	cfg.params.v[VC_P_SEQ_THRESHOLD_KIB] = 64;
	t_setup(&t, 1024, 4096, false, &cfg);
	for (i = 0; i < 64; i++)
		t_check_pat(&t, 100 + i, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 16);	/* first 64 KiB cached */
	assert_int_equal(s.bypass[VC_BYP_SEQ], 48);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_SEQ_ENABLE, 0), 0);
	for (i = 0; i < 64; i++)
		t_check_pat(&t, 500 + i, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 80);
	t_teardown(&t);
}

static void test_pid_lists(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 1024, 4096, false, &cfg);
	/* tutil submits as pid 100 */
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_PID_DENY, 100), 0);
	t_check_pat(&t, 1, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(s.bypass[VC_BYP_PID], 1);
	assert_int_equal(vc_pidlist_del(vc_cache_pidlist(t.c), VC_PID_DENY, 100), 0);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_PID_MODE,
					    VC_PID_MODE_CACHE_NONE), 0);
	t_check_pat(&t, 2, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_PID_ALLOW, 100), 0);
	t_check_pat(&t, 3, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 1);
	t_teardown(&t);
}

/* A cgroup list: requests charged to the cgroup bypass, others do not. */
static void test_cgroup_lists(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WT);
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 1024, 4096, false, &cfg);
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_CG_DENY,
					0x77), 0);
	t_cgroup = 0x77;
	t_check_pat(&t, 1, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(s.bypass[VC_BYP_PID], 1);
	t_cgroup = 0x78;
	t_check_pat(&t, 2, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 1);
	assert_int_equal(s.bypass[VC_BYP_PID], 1);
	t_cgroup = 0;
	t_teardown(&t);
}

static u64 dead_pid;

static bool fake_alive(void *ctx, u64 pid)
{
	(void)ctx;
	return pid != dead_pid;
}

static void test_pid_expiry(void **st)
{
	struct vc_cache_config cfg = cfg_mode(VC_MODE_WT);
	struct tenv t;

	(void)st;
	t_setup(&t, 64, 1024, false, &cfg);
	vc_posix_set_pid_alive(fake_alive, NULL);
	dead_pid = 0;
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_PID_DENY, 555), 0);
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_PID_DENY, 556), 0);
	dead_pid = 555;		/* process 555 exits */
	t_advance_ms(12000);	/* the cleaner's tick expires it */
	assert_false(vc_pidlist_contains(vc_cache_pidlist(t.c), VC_PID_DENY, 555, 555));
	assert_true(vc_pidlist_contains(vc_cache_pidlist(t.c), VC_PID_DENY, 556, 556));
	assert_int_equal(vc_pidlist_add(vc_cache_pidlist(t.c), VC_PID_DENY, 555), -ESRCH);
	vc_posix_set_pid_alive(NULL, NULL);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wb),
		cmocka_unit_test(test_wt),
		cmocka_unit_test(test_wt_read_waits_for_write),
		cmocka_unit_test(test_wa),
		cmocka_unit_test(test_pt),
		cmocka_unit_test(test_leave_wb_drains),
		cmocka_unit_test(test_discard),
		cmocka_unit_test(test_flush_durability),
		cmocka_unit_test(test_fua_durability),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_seq_bypass),
		cmocka_unit_test(test_pid_lists),
		cmocka_unit_test(test_pid_expiry),
		cmocka_unit_test(test_cgroup_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
