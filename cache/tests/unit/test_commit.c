// SPDX-License-Identifier: GPL-2.0
/*
 * Group commit of dirty records (vc_commit.c): plain writes are
 * acknowledged without a record write, a FLUSH commits them with one cache
 * flush, FUA and the timer commit too, and what was committed comes back
 * after a power cut.
 */
#include "tutil.h"

static struct vc_cache_config gc_cfg(u64 commit_ms)
{
	struct vc_cache_config cfg = t_cfg_manual();

	cfg.params.v[VC_P_COMMIT_MS] = commit_ms;
	return cfg;
}

/* 32 writes to blocks spread over the cache, then a FLUSH. */
static void test_flush_commits_once(void **st)
{
	struct vc_cache_config cfg = gc_cfg(100);
	struct vc_stats s0, s1, s2;
	struct tenv t;
	u32 i;

	(void)st;
	t_setup(&t, 4096, 16384, true, &cfg);
	s0 = t_stats(&t);
	for (i = 0; i < 32; i++)
		assert_int_equal(t_write_pat(&t, i * 97, 1, i + 1, 0), 0);
	s1 = t_stats(&t);
	print_message("  32 plain writes: %llu record writes, %llu cache flushes\n",
		      (unsigned long long)(s1.md_writes - s0.md_writes),
		      (unsigned long long)(s1.cache_flushes - s0.cache_flushes));
	assert_int_equal(s1.dirty_blocks, 32);
	assert_int_equal(s1.md_writes, s0.md_writes);
	assert_int_equal(s1.cache_flushes, s0.cache_flushes);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	s2 = t_stats(&t);
	print_message("  FLUSH: %llu commits, %llu record writes, %llu cache flushes\n",
		      (unsigned long long)(s2.commits - s1.commits),
		      (unsigned long long)(s2.md_writes - s1.md_writes),
		      (unsigned long long)(s2.cache_flushes - s1.cache_flushes));
	assert_int_equal(s2.commits - s1.commits, 1);
	assert_int_equal(s2.cache_flushes - s1.cache_flushes, 1);
	assert_true(s2.md_writes - s1.md_writes >= 1);
	assert_true(s2.md_writes - s1.md_writes <= 32);
	/* committed: every one comes back after a power cut */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 32);
	for (i = 0; i < 32; i++)
		assert_int_equal(t_check_pat(&t, i * 97, 1, i + 1), 0);
	t_teardown(&t);
}

/* Without a FLUSH, the timer commits after commit_ms. */
static void test_timer_commits(void **st)
{
	struct vc_cache_config cfg = gc_cfg(50);
	struct tenv t;
	u32 i;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	for (i = 0; i < 8; i++)
		assert_int_equal(t_write_pat(&t, i * 7, 1, i + 3, 0), 0);
	assert_int_equal(t_stats(&t).commits, 0);
	t_advance_ms(40);
	assert_int_equal(t_stats(&t).commits, 0);
	t_advance_ms(20);
	assert_int_equal(t_stats(&t).commits, 1);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(t_check_pat(&t, i * 7, 1, i + 3), 0);
	t_teardown(&t);
}

/*
 * Not committed and not flushed: after a power cut those blocks do not
 * come back (their data was in the device's volatile cache too).
 */
static void test_uncommitted_not_recovered(void **st)
{
	struct vc_cache_config cfg = gc_cfg(1000);
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	assert_int_equal(t_write_pat(&t, 5, 1, 9, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(t_write_pat(&t, 6, 1, 9, 0), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 1);
	assert_int_equal(t_check_pat(&t, 5, 1, 9), 0);
	t_teardown(&t);
}

/*
 * FUA: a new dirty block's record goes out at once; a FUA write over a
 * block whose record still waits for a commit goes out of place, and the
 * record sector holding both blocks is written before the ack (not a
 * whole commit).
 */
static void test_fua(void **st)
{
	struct vc_cache_config cfg = gc_cfg(1000);
	struct vc_stats s0, s1;
	struct tenv t;

	(void)st;
	t_setup(&t, 1024, 4096, true, &cfg);
	s0 = t_stats(&t);
	assert_int_equal(t_write_pat(&t, 1, 1, 4, VC_IO_FUA), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.md_writes - s0.md_writes, 1);
	assert_int_equal(s1.commits, 0);
	/* plain write: its record waits; then FUA over the same block */
	assert_int_equal(t_write_pat(&t, 2, 1, 5, 0), 0);
	s0 = t_stats(&t);
	assert_int_equal(t_write_pat(&t, 2, 1, 6, VC_IO_FUA), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.md_writes - s0.md_writes, 1);
	assert_int_equal(s1.commits, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_check_pat(&t, 1, 1, 4), 0);
	assert_int_equal(t_check_pat(&t, 2, 1, 6), 0);
	t_teardown(&t);
}

/* commit_ms 0: every new dirty record is written before the ack. */
static void test_no_group_commit(void **st)
{
	struct vc_cache_config cfg = gc_cfg(0);
	struct vc_stats s0, s1;
	struct tenv t;
	u32 i;

	(void)st;
	t_setup(&t, 4096, 16384, true, &cfg);
	s0 = t_stats(&t);
	for (i = 0; i < 8; i++)
		assert_int_equal(t_write_pat(&t, i * 97, 1, i + 1, 0), 0);
	s1 = t_stats(&t);
	assert_int_equal(s1.md_writes - s0.md_writes, 8);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 8);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_commits_once),
		cmocka_unit_test(test_timer_commits),
		cmocka_unit_test(test_uncommitted_not_recovered),
		cmocka_unit_test(test_fua),
		cmocka_unit_test(test_no_group_commit),
	};

	return cmocka_run_group_tests_name("group commit", tests, NULL, NULL);
}
