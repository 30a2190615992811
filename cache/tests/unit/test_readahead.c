// SPDX-License-Identifier: GPL-2.0
/*
 * Readahead of read misses (vc_ra.c): one backing read brings the
 * uncached blocks of the window around a miss into free cache blocks,
 * with the right data; never over a cached (dirty) block, never past the
 * device's end, never by evicting, and not at all with readahead_kib 0.
 */
#include <string.h>

#include "tutil.h"

/* Blocks [first, first + n) hold pattern @seed on the backing device only. */
static void poke_pat(struct tenv *t, u64 first, u32 n, u32 seed)
{
	u8 buf[T_BS];
	u32 i;

	for (i = 0; i < n; i++) {
		t_fill(buf, first + i, 1, seed);
		vc_memdev_poke(t->bm, (first + i) * T_BSEC, buf, T_BS);
	}
}

static struct vc_memdev_stats back_stats(struct tenv *t)
{
	struct vc_memdev_stats ms;

	vc_memdev_get_stats(t->bm, &ms);
	return ms;
}

static void test_readahead_window(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_memdev_stats m0, m1;
	struct vc_stats s0, s1;
	struct vc_params def;
	struct tenv t;

	(void)st;
	vc_params_default(&def);
	assert_int_equal(def.v[VC_P_READAHEAD_KIB], 64);	/* the default */
	cfg.mode = VC_MODE_WB;
	t_readahead_kib = 64;
	t_setup(&t, 1000, 8190, false, &cfg);
	poke_pat(&t, 0, 8190, 5);
	/* block 21 is dirty in the cache with newer data */
	assert_int_equal(t_write_pat(&t, 21, 1, 6, 0), 0);

	/* a miss at 18: the run 16..20 in one read (21 is cached) */
	m0 = back_stats(&t);
	s0 = t_stats(&t);
	assert_int_equal(t_check_pat(&t, 18, 1, 5), 0);
	m1 = back_stats(&t);
	s1 = t_stats(&t);
	assert_int_equal(m1.reads - m0.reads, 1);
	assert_int_equal(m1.read_bytes - m0.read_bytes, 5 * T_BS);
	assert_int_equal(s1.readahead_blocks - s0.readahead_blocks, 4);
	/* they are hits with the disk's data; 21 kept its newer data */
	s0 = s1;
	assert_int_equal(t_check_pat(&t, 16, 5, 5), 0);
	assert_int_equal(t_check_pat(&t, 21, 1, 6), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.read_hits - s0.read_hits, 6);
	assert_int_equal(s1.read_misses - s0.read_misses, 0);
	assert_int_equal(back_stats(&t).reads, m1.reads);
	/* the rest of the window above 21: a miss at 25 brings 22..31 */
	s0 = t_stats(&t);
	assert_int_equal(t_check_pat(&t, 25, 1, 5), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.readahead_blocks - s0.readahead_blocks, 9);
	assert_int_equal(t_check_pat(&t, 22, 10, 5), 0);
	/* the device's end: 8176..8189, the window cut there */
	s0 = t_stats(&t);
	assert_int_equal(t_check_pat(&t, 8189, 1, 5), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.readahead_blocks - s0.readahead_blocks, 13);
	assert_int_equal(t_check_pat(&t, 8176, 14, 5), 0);
	/* the dirty block is written back with its own data */
	assert_int_equal(vc_cache_flush(t.c, t.dev, NULL, NULL), 0);
	assert_true(t_backing_has(&t, 21, 1, 6));
	assert_true(t_backing_has(&t, 20, 1, 5));
	t_teardown(&t);
}

static void test_readahead_off_and_full(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_stats s0, s1;
	struct tenv t;
	u64 b;

	(void)st;
	cfg.mode = VC_MODE_WT;
	t_readahead_kib = 64;
	t_setup(&t, 256, 8192, false, &cfg);
	poke_pat(&t, 0, 8192, 9);
	/* off: a miss reads its block alone */
	assert_int_equal(vc_cache_set_param(t.c, VC_P_READAHEAD_KIB, 0), 0);
	s0 = t_stats(&t);
	assert_int_equal(t_check_pat(&t, 100, 1, 9), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.readahead_blocks, s0.readahead_blocks);
	assert_int_equal(s1.backing_bytes_read - s0.backing_bytes_read, T_BS);
	assert_int_equal(vc_cache_set_param(t.c, VC_P_READAHEAD_KIB, 64), 0);
	/* fill the cache with readahead: far fewer backing reads than blocks */
	for (b = 1024; b < 1024 + 4 * 256; b += 16)
		assert_int_equal(t_check_pat(&t, b, 1, 9), 0);
	s1 = t_stats(&t);
	print_message("  cache of 256 blocks: %llu read ahead\n",
		      (unsigned long long)s1.readahead_blocks);
	assert_true(s1.readahead_blocks > 128);
	/* now full: a miss evicts for its own block, reads no more */
	for (b = 4096; b < 4096 + 4 * 256; b++)
		assert_int_equal(t_check_pat(&t, b, 1, 9), 0);
	s0 = t_stats(&t);
	assert_int_equal(s0.valid_blocks, 256);
	assert_int_equal(t_check_pat(&t, 6000, 1, 9), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.readahead_blocks, s0.readahead_blocks);
	assert_int_equal(s1.backing_bytes_read - s0.backing_bytes_read, T_BS);
	/* everything cached reads right */
	for (b = 1024; b < 1024 + 4 * 256; b++)
		assert_int_equal(t_check_pat(&t, b, 1, 9), 0);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readahead_window),
		cmocka_unit_test(test_readahead_off_and_full),
	};

	t_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
