// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 19: write-back that never stalls the host - partial writes that
 * allocate, sequential detection that keeps small synchronous writes,
 * idle meaning "no host I/O", a rate-controlled cleaner, and writers
 * slowed (not sent to the disk) at the high watermark.
 */
#include "tutil.h"
#include <string.h>

/* A partial write that misses allocates the block (read-modify-write). */
static void test_partial_write_allocates(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s, s0;
	char blk[T_BS], part[512], back[T_BS];
	u32 i;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	/* what the disk holds: a pattern, written around the cache */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WA), 0);
	assert_int_equal(t_write_pat(&t, 7, 1, 9, 0), 0);
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WB), 0);
	s0 = t_stats(&t);
	t_fill(blk, 7, 1, 9);
	/* eight 512-byte appends, as a log writes */
	for (i = 0; i < 8; i++) {
		memset(part, 'a' + i, sizeof(part));
		memcpy(blk + i * 512, part, sizeof(part));
		assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 7 * T_BSEC + i,
				      sizeof(part), part), 0);
		if (i == 0) {
			/* the rest of the block is the disk's */
			assert_int_equal(t_io(&t, VC_OP_READ, 0, 7 * T_BSEC,
					      T_BS, back), 0);
			assert_memory_equal(back, blk, T_BS);
		}
	}
	s = t_stats(&t);
	assert_int_equal(s.write_misses - s0.write_misses, 1);
	assert_int_equal(s.write_hits - s0.write_hits, 7);
	assert_int_equal(s.bypass[VC_BYP_MODE] - s0.bypass[VC_BYP_MODE], 0);
	assert_int_equal(s.dirty_blocks, 1);
	/* nothing written home yet; the block reads back whole */
	assert_true(t_backing_has(&t, 7, 1, 9));
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 7 * T_BSEC, T_BS, back), 0);
	assert_memory_equal(back, blk, T_BS);
	/* and write-back sends it home */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(vc_sync_io(vc_memdev_dev(t.bm), VC_DEV_READ, 0,
				    7 * T_BSEC, T_BS, vc_buf_wrap(back, T_BS)), 0);
	assert_memory_equal(back, blk, T_BS);
	t_teardown(&t);
}

/* ...and if the disk read fails, the write goes around the cache. */
static void test_partial_write_read_error(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct t_inj inj = { .op = VC_DEV_READ, .left = 1, .err = -EIO };
	struct tenv t;
	struct vc_stats s;
	char part[512], back[512];

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	vc_memdev_set_fail(t.bm, t_inject, &inj);
	memset(part, 'z', sizeof(part));
	assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 9 * T_BSEC + 3, sizeof(part),
			      part), 0);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	assert_int_equal(inj.hits, 1);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.valid_blocks, 0);
	assert_int_equal(s.backing_read_errors, 1);
	assert_int_equal(vc_sync_io(vc_memdev_dev(t.bm), VC_DEV_READ, 0,
				    9 * T_BSEC + 3, sizeof(back),
				    vc_buf_wrap(back, sizeof(back))), 0);
	assert_memory_equal(back, part, sizeof(part));
	t_teardown(&t);
}


/*
 * Sequential detection: a stream of small writes (a log) stays in the
 * cache; large streaming writes and reads past the threshold go around.
 */
static void test_seq_keeps_small_writes(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_SEQ_ENABLE] = 1;
	cfg.params.v[VC_P_SEQ_THRESHOLD_KIB] = 64;
	t_setup(&t, 1024, 8192, false, &cfg);
	/* 512 KiB of 4 KiB sequential writes, FUA like a log's */
	for (i = 0; i < 128; i++)
		assert_int_equal(t_write_pat(&t, 100 + i, 1, 1, VC_IO_FUA), 0);
	s = t_stats(&t);
	assert_int_equal(s.bypass[VC_BYP_SEQ], 0);
	assert_int_equal(s.dirty_blocks, 128);
	/* ...also without FUA: below 64 KiB a write is not streaming */
	for (i = 0; i < 128; i++)
		assert_int_equal(t_write_pat(&t, 300 + i, 1, 2, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.bypass[VC_BYP_SEQ], 0);
	/* 1 MiB of 128 KiB writes: past 64 KiB they go around */
	for (i = 0; i < 8; i++)
		assert_int_equal(t_write_pat(&t, 1000 + i * 32, 32, 3, 0), 0);
	s = t_stats(&t);
	assert_true(s.bypass[VC_BYP_SEQ] >= 6 * 32);
	/* and a sequential read of small requests still does */
	for (i = 0; i < 64; i++)
		t_check_pat(&t, 3000 + i, 1, 0);
	s = t_stats(&t);
	assert_true(s.bypass[VC_BYP_SEQ] >= 6 * 32 + 48);
	for (i = 0; i < 8; i++)
		assert_int_equal(t_check_pat(&t, 1000 + i * 32, 32, 3), 0);
	t_teardown(&t);
}

/*
 * "Idle" is no host I/O to the device for idle_ms: a burst of writes
 * that only reach the cache is not idle time.
 */
static void test_idle_means_no_host_io(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.params.v[VC_P_IDLE_MS] = 3000;
	t_setup(&t, 1024, 8192, false, &cfg);
	/* 6 s of cache-only writes, one every 500 ms: never idle */
	for (i = 0; i < 12; i++) {
		assert_int_equal(t_write_pat(&t, i * 5, 1, i, 0), 0);
		t_advance_ms(500);
	}
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 12);
	assert_int_equal(s.cleanings[VC_CLEAN_IDLE], 0);
	/* then quiet: drained */
	t_advance_ms(4500);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 0);
	assert_int_equal(s.cleanings[VC_CLEAN_IDLE], 12);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_write_allocates),
		cmocka_unit_test(test_partial_write_read_error),
		cmocka_unit_test(test_seq_keeps_small_writes),
		cmocka_unit_test(test_idle_means_no_host_io),
	};

	t_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
