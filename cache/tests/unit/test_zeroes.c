// SPDX-License-Identifier: GPL-2.0
/*
 * WRITE_ZEROES through the cache: zeroes read back over dirty, clean and
 * uncached blocks, whole or partly covered, and are as durable as a
 * write's data (after a FLUSH, or at once with FUA).
 */
#include <string.h>

#include "tutil.h"

/*
 * Block @blk must read as the pattern @seed except sectors [z0, z1), which
 * must be zeroes.
 */
static void check_zeroed(struct tenv *t, u64 blk, u32 seed, u32 z0, u32 z1)
{
	u8 got[T_BS], exp[T_BS];

	t_fill(exp, blk, 1, seed);
	memset(exp + z0 * 512, 0, (z1 - z0) * 512);
	assert_int_equal(t_io(t, VC_OP_READ, 0, blk * T_BSEC, T_BS, got), 0);
	assert_memory_equal(got, exp, T_BS);
}

static int zeroes(struct tenv *t, u32 flags, u64 sector, u32 len)
{
	return t_io(t, VC_OP_WRITE_ZEROES, flags, sector, len, NULL);
}

static void test_zeroes_everywhere(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	u32 i;

	(void)st;
	t_setup(&t, 256, 4096, true, &cfg);
	/* 20: clean cached, sectors 1..3; 21: clean cached, whole */
	assert_int_equal(t_write_pat(&t, 20, 2, 2, 0), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(t_check_pat(&t, 20, 2, 2), 0);
	/* 10: dirty, whole block; 11: dirty, sectors 2..5 */
	assert_int_equal(t_write_pat(&t, 10, 2, 1, 0), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 2);
	/* 30: never cached (written to the backing device directly) */
	for (i = 0; i < 2; i++) {
		u8 buf[T_BS];

		t_fill(buf, 30 + i, 1, 3);
		vc_memdev_poke(t.bm, (30 + i) * T_BSEC, buf, T_BS);
	}
	assert_int_equal(zeroes(&t, 0, 10 * T_BSEC, T_BS), 0);
	assert_int_equal(zeroes(&t, 0, 11 * T_BSEC + 2, 4 * 512), 0);
	assert_int_equal(zeroes(&t, 0, 20 * T_BSEC + 1, 3 * 512), 0);
	assert_int_equal(zeroes(&t, 0, 21 * T_BSEC, T_BS), 0);
	assert_int_equal(zeroes(&t, 0, 30 * T_BSEC + 4, 8 * 512), 0);
	check_zeroed(&t, 10, 1, 0, 8);
	check_zeroed(&t, 11, 1, 2, 6);
	check_zeroed(&t, 20, 2, 1, 4);
	check_zeroed(&t, 21, 2, 0, 8);
	check_zeroed(&t, 30, 3, 4, 8);
	check_zeroed(&t, 31, 3, 0, 4);
	print_message("  dirty after zeroes: %llu (10 and 11 keep theirs in the cache)\n",
		      (unsigned long long)t_stats(&t).dirty_blocks);
	assert_int_equal(t_stats(&t).dirty_blocks, 2);
	assert_int_equal(t_stats(&t).write_zeroes, 5);
	/* durable after a FLUSH */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	check_zeroed(&t, 10, 1, 0, 8);
	check_zeroed(&t, 11, 1, 2, 6);
	check_zeroed(&t, 20, 2, 1, 4);
	check_zeroed(&t, 21, 2, 0, 8);
	check_zeroed(&t, 30, 3, 4, 8);
	check_zeroed(&t, 31, 3, 0, 4);
	/* and written back home */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	check_zeroed(&t, 11, 1, 2, 6);
	t_teardown(&t);
}

/* FUA: durable at completion, without a FLUSH. */
static void test_zeroes_fua(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;

	(void)st;
	t_setup(&t, 256, 4096, true, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 1, 7, VC_IO_FUA), 0);	/* dirty */
	assert_int_equal(t_write_pat(&t, 6, 1, 8, VC_IO_FUA), 0);
	assert_int_equal(zeroes(&t, VC_IO_FUA, 5 * T_BSEC + 1, 512), 0);
	assert_int_equal(zeroes(&t, VC_IO_FUA | VC_IO_PREFLUSH, 6 * T_BSEC,
				T_BS), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	check_zeroed(&t, 5, 7, 1, 2);
	check_zeroed(&t, 6, 8, 0, 8);
	t_teardown(&t);
}

/* Requests it refuses: a buffer is not wanted, the range must fit. */
static void test_zeroes_bad(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;

	(void)st;
	t_setup(&t, 256, 64, true, &cfg);
	assert_int_equal(zeroes(&t, 0, 64 * T_BSEC - 1, 1024), -EINVAL);
	assert_int_equal(zeroes(&t, 0, 0, 100), -EINVAL);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeroes_everywhere),
		cmocka_unit_test(test_zeroes_fua),
		cmocka_unit_test(test_zeroes_bad),
	};

	return cmocka_run_group_tests_name("write zeroes", tests, NULL, NULL);
}
