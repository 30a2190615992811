// SPDX-License-Identifier: GPL-2.0
/*
 * S3-FIFO and TinyLFU (vc_policy.c): replacement order, scan resistance
 * (LRU as the control that loses the hot set), dirty blocks never
 * evicted, online switches between every pair of policies without losing
 * contents, the cleaner's walk over the blocks nearest eviction.
 */
#include "tutil.h"

#define HOT	64u
#define CACHE	256u
#define SCAN	1024u	/* 4x the cache */
#define BACK	(2 * SCAN + 4096u)

static struct vc_cache_config cfg_of(enum vc_policy p, enum vc_mode m)
{
	struct vc_cache_config cfg = t_cfg_manual();

	cfg.policy = p;
	cfg.mode = m;
	return cfg;
}

static u64 hits_now(struct tenv *t)
{
	return t_stats(t).read_hits;
}

/* S3-FIFO: a block hit in the small queue survives; the next one goes. */
static void test_s3fifo_order(void **st)
{
	struct vc_cache_config cfg = cfg_of(VC_POLICY_S3FIFO, VC_MODE_WT);
	struct tenv t;
	u64 h;
	u32 i;

	(void)st;
	t_setup(&t, 64, 4096, false, &cfg);
	for (i = 0; i < 64; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 0), 1);
	assert_int_equal(t_check_pat(&t, 0, 1, 0), 1);	/* a hit on 0 */
	assert_int_equal(t_check_pat(&t, 100, 1, 0), 1);	/* evicts one */
	assert_int_equal(t_stats(&t).evictions, 1);
	h = hits_now(&t);
	assert_int_equal(t_check_pat(&t, 0, 1, 0), 1);
	assert_int_equal(hits_now(&t) - h, 1);		/* 0 promoted */
	h = hits_now(&t);
	assert_int_equal(t_check_pat(&t, 1, 1, 0), 1);
	assert_int_equal(hits_now(&t) - h, 0);		/* 1 evicted */
	t_teardown(&t);
}

/*
 * A hot set read a few times, then a one-time scan of 4x the cache in an
 * order the sequential detector does not see: how much of the hot set
 * is still cached?
 */
static u64 scan_run(enum vc_policy p, u32 admission)
{
	struct vc_cache_config cfg = cfg_of(p, VC_MODE_WT);
	struct tenv t;
	u64 h;
	u32 i, r;

	cfg.params.v[VC_P_ADMISSION] = admission;
	t_setup(&t, CACHE, BACK, false, &cfg);
	for (r = 0; r < 4; r++)
		for (i = 0; i < HOT; i++)
			assert_int_equal(t_check_pat(&t, i, 1, 0), 1);
	for (i = 0; i < SCAN; i++)
		assert_int_equal(t_check_pat(&t, 1000 + (i * 37) % SCAN, 1,
					     0), 1);
	h = hits_now(&t);
	for (i = 0; i < HOT; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 0), 1);
	h = hits_now(&t) - h;
	print_message("%s%s: %llu of %u hot blocks kept after the scan\n",
		      vc_policy_name(p), admission ? "+admission" : "",
		      (unsigned long long)h, HOT);
	t_teardown(&t);
	return h;
}

static void test_scan_resistance(void **st)
{
	(void)st;
	/* the control: LRU loses the whole hot set */
	assert_int_equal(scan_run(VC_POLICY_LRU, VC_ADMIT_ALL), 0);
	assert_int_equal(scan_run(VC_POLICY_FIFO, VC_ADMIT_ALL), 0);
	assert_int_equal(scan_run(VC_POLICY_S3FIFO, VC_ADMIT_ALL), HOT);
	assert_int_equal(scan_run(VC_POLICY_S3FIFO, VC_ADMIT_SECOND_HIT), HOT);
	assert_int_equal(scan_run(VC_POLICY_TINYLFU, VC_ADMIT_ALL), HOT);
}

/*
 * Write-back, the cleaner off: dirty blocks fill the cache, then misses
 * of other blocks must go around it; no dirty block is ever evicted, and
 * after a flush the backing device has every one.
 */
static void dirty_run(enum vc_policy p)
{
	struct vc_cache_config cfg = cfg_of(p, VC_MODE_WB);
	struct tenv t;
	struct vc_stats s;
	u32 i;

	t_setup(&t, 64, 4096, false, &cfg);
	for (i = 0; i < 64; i++)
		assert_int_equal(t_write_pat(&t, i, 1, 5, 0), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 64);
	for (i = 0; i < 300; i++)
		assert_int_equal(t_check_pat(&t, 500 + i % 150, 1, 0), 1);
	s = t_stats(&t);
	assert_int_equal(s.evictions, 0);
	assert_int_equal(s.dirty_blocks, 64);
	for (i = 0; i < 64; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 5), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	for (i = 0; i < 64; i++)
		assert_int_equal(t_backing_has(&t, i, 1, 5), 1);
	/* clean now: the cache takes new blocks again */
	for (i = 0; i < 200; i++)
		assert_int_equal(t_check_pat(&t, 500 + i % 100, 1, 0), 1);
	assert_true(t_stats(&t).evictions > 0);
	t_teardown(&t);
}

static void test_dirty_not_evicted(void **st)
{
	(void)st;
	dirty_run(VC_POLICY_S3FIFO);
	dirty_run(VC_POLICY_TINYLFU);
}

/*
 * Every policy to every other, with data written and blocks evicted in
 * between: everything cached stays cached and correct.
 */
static void test_switch_every_pair(void **st)
{
	struct vc_cache_config cfg = cfg_of(VC_POLICY_S3FIFO, VC_MODE_WB);
	struct tenv t;
	u32 a, b, i, round = 0;

	(void)st;
	t_setup(&t, 128, 4096, false, &cfg);
	for (a = 0; a < VC_NR_POLICIES; a++) {
		for (b = 0; b < VC_NR_POLICIES; b++) {
			u64 h, m;

			if (a == b)
				continue;
			round++;
			assert_int_equal(vc_cache_set_policy(t.c, a), 0);
			/* churn: misses that evict, hits, new dirty data */
			for (i = 0; i < 200; i++)
				t_check_pat(&t, 1000 + (round * 53 + i) % 400,
					    1, 0);
			for (i = 0; i < 40; i++)
				assert_int_equal(t_write_pat(&t, i, 1, round,
							     0), 0);
			for (i = 0; i < 40; i++)
				assert_int_equal(t_check_pat(&t, i, 1, round),
						 0);
			h = hits_now(&t);
			m = t_stats(&t).read_misses;
			assert_int_equal(vc_cache_set_policy(t.c, b), 0);
			assert_int_equal(vc_cache_get_policy(t.c), b);
			for (i = 0; i < 40; i++)
				assert_int_equal(t_check_pat(&t, i, 1, round),
						 0);
			assert_int_equal(hits_now(&t) - h, 40);
			assert_int_equal(t_stats(&t).read_misses, m);
		}
	}
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_backing_has(&t, i, 1, round), 1);
	t_teardown(&t);
}

/* The policy survives a reload, and the cache works under it. */
static void test_policy_persists(void **st)
{
	struct vc_cache_config cfg = cfg_of(VC_POLICY_TINYLFU, VC_MODE_WB);
	struct tenv t;
	u32 i;

	(void)st;
	t_setup(&t, 64, 4096, false, &cfg);
	for (i = 0; i < 20; i++)
		assert_int_equal(t_write_pat(&t, i, 1, 9, 0), 0);
	assert_int_equal(vc_cache_set_policy(t.c, VC_POLICY_S3FIFO), 0);
	/* the writes durable (a FLUSH), then the power goes */
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(vc_cache_get_policy(t.c), VC_POLICY_S3FIFO);
	for (i = 0; i < 20; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 9), 0);
	for (i = 0; i < 300; i++)
		t_check_pat(&t, 100 + i % 120, 1, 0);
	for (i = 0; i < 20; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 9), 0);
	assert_string_equal(vc_policy_name(VC_POLICY_S3FIFO), "s3fifo");
	assert_string_equal(vc_policy_name(VC_POLICY_TINYLFU), "tinylfu");
	assert_string_equal(vc_policy_name(VC_NR_POLICIES), "?");
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3fifo_order),
		cmocka_unit_test(test_scan_resistance),
		cmocka_unit_test(test_dirty_not_evicted),
		cmocka_unit_test(test_switch_every_pair),
		cmocka_unit_test(test_policy_persists),
	};

	t_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
