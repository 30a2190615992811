// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for vc_seq, the sequential-stream detector.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <cmocka.h>

#include "vc_seq.h"

#define KIB_SECT(k)	((u32)((k) * 2))	/* KiB -> 512-byte sectors */
#define U64MAX		(~0ULL)

static struct vc_seq *new_seq(unsigned int streams, u64 kib)
{
	struct vc_seq *s = test_malloc(sizeof(*s));

	assert_int_equal(vc_seq_init(s, streams, kib, true), 0);
	return s;
}

static void free_seq(struct vc_seq *s)
{
	vc_seq_destroy(s);
	test_free(s);
}

static void test_init_validation(void **st)
{
	struct vc_seq s;

	(void)st;
	assert_int_equal(vc_seq_init(&s, 0, 64, true), -EINVAL);
	assert_int_equal(vc_seq_init(&s, VC_SEQ_MAX_STREAMS + 1, 64, true),
			 -EINVAL);
	assert_int_equal(vc_seq_init(&s, 4, 0, true), -EINVAL);
	assert_int_equal(vc_seq_init(&s, 4, VC_SEQ_MAX_THRESH_KIB + 1, true),
			 -EINVAL);
	assert_int_equal(vc_seq_init(&s, VC_SEQ_MAX_STREAMS,
				     VC_SEQ_MAX_THRESH_KIB, false), 0);
	assert_false(vc_seq_enabled(&s));
	assert_int_equal(vc_seq_nr_streams(&s), VC_SEQ_MAX_STREAMS);
	assert_int_equal(vc_seq_threshold_kib(&s), VC_SEQ_MAX_THRESH_KIB);
	assert_int_equal(vc_seq_set_threshold(&s, 0), -EINVAL);
	assert_int_equal(vc_seq_set_streams(&s, 0), -EINVAL);
	assert_int_equal(vc_seq_set_streams(&s, VC_SEQ_MAX_STREAMS + 1),
			 -EINVAL);
	assert_int_equal(vc_seq_threshold_kib(&s), VC_SEQ_MAX_THRESH_KIB);
	vc_seq_destroy(&s);
}

static void test_disabled_never_bypasses(void **st)
{
	struct vc_seq s;
	struct vc_seq_stats stats;
	u64 sec;

	(void)st;
	assert_int_equal(vc_seq_init(&s, 4, 4, false), 0);
	for (sec = 0; sec < 10000; sec += 8)
		assert_false(vc_seq_check(&s, 1, sec, 8));
	vc_seq_get_stats(&s, &stats);
	assert_int_equal(stats.checked, 0);
	assert_int_equal(stats.bypassed_ios, 0);
	assert_int_equal(vc_seq_active_streams(&s), 0);
	vc_seq_destroy(&s);
}

/* 64 KiB threshold, 4 KiB requests: the 17th request crosses it. */
static void test_threshold_edge(void **st)
{
	struct vc_seq *s = new_seq(4, 64);
	struct vc_seq_stats stats;
	int i;

	(void)st;
	for (i = 0; i < 16; i++)
		assert_false(vc_seq_check(s, 7, 1000 + i * 8, 8));
	assert_true(vc_seq_check(s, 7, 1000 + 16 * 8, 8));
	assert_true(vc_seq_check(s, 7, 1000 + 17 * 8, 8));
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.checked, 18);
	assert_int_equal(stats.bypassed_ios, 2);
	assert_int_equal(stats.bypassed_bytes, 2 * 4096);
	assert_int_equal(stats.streams_detected, 1);
	free_seq(s);
}

/* One request of exactly the threshold stays; one sector more bypasses. */
static void test_single_request_edges(void **st)
{
	struct vc_seq *s = new_seq(4, 128);

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, KIB_SECT(128)));
	assert_true(vc_seq_check(s, 2, 5000, KIB_SECT(128) + 1));
	/* submitter 1 continues: now over the threshold. */
	assert_true(vc_seq_check(s, 1, KIB_SECT(128), 1));
	free_seq(s);
}

static void test_zero_length(void **st)
{
	struct vc_seq *s = new_seq(4, 4);
	struct vc_seq_stats stats;

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, 0));
	assert_int_equal(vc_seq_active_streams(s), 0);
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.checked, 0);
	free_seq(s);
}

/* Four streams of four submitters interleaved round-robin, plus noise. */
static void test_interleaved_streams(void **st)
{
	struct vc_seq *s = new_seq(8, 32);
	struct vc_seq_stats stats;
	u64 base[4] = { 0, 1 << 20, 7 << 20, 3 << 20 };
	int i, k, noise_bypass = 0;

	(void)st;
	for (i = 0; i < 20; i++) {
		for (k = 0; k < 4; k++) {
			bool b = vc_seq_check(s, 100 + k, base[k] + i * 8, 8);

			/* 32 KiB = 8 requests of 4 KiB: 9th onwards. */
			assert_int_equal(b, i >= 8);
		}
		/* A random reader in between never bypasses. */
		if (vc_seq_check(s, 999, (u64)(i * 7919 % 1000) * 64, 8))
			noise_bypass++;
	}
	assert_int_equal(noise_bypass, 0);
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.streams_detected, 4);
	assert_int_equal(stats.bypassed_ios, 4 * 12);
	free_seq(s);
}

/* One submitter running two scans at once keeps both streams. */
static void test_two_streams_one_submitter(void **st)
{
	struct vc_seq *s = new_seq(4, 16);
	int i;

	(void)st;
	for (i = 0; i < 10; i++) {
		assert_int_equal(vc_seq_check(s, 5, 0 + i * 8, 8), i >= 4);
		assert_int_equal(vc_seq_check(s, 5, 90000 + i * 8, 8), i >= 4);
	}
	assert_int_equal(vc_seq_active_streams(s), 2);
	free_seq(s);
}

/* Another submitter cannot continue someone else's stream. */
static void test_other_submitter_no_continue(void **st)
{
	struct vc_seq *s = new_seq(4, 8);

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, 16));	/* 8 KiB: at threshold */
	assert_false(vc_seq_check(s, 2, 16, 8));	/* not 1's stream */
	assert_true(vc_seq_check(s, 1, 16, 8));	/* 1 continues: 12 KiB */
	assert_false(vc_seq_check(s, 2, 24, 8));	/* 2's run is 8 KiB */
	assert_true(vc_seq_check(s, 2, 32, 1));	/* 2 continues itself */
	free_seq(s);
}

/* A gap, a rewind or an overlap starts a new run. */
static void test_gap_and_rewind_break(void **st)
{
	struct vc_seq *s = new_seq(4, 16);
	int i;

	(void)st;
	for (i = 0; i < 5; i++)
		assert_int_equal(vc_seq_check(s, 1, i * 8, 8), i == 4);
	/* gap of one sector */
	assert_false(vc_seq_check(s, 1, 41, 8));
	/* rewind into the middle of the run */
	assert_false(vc_seq_check(s, 1, 20, 8));
	/* re-read the same block */
	assert_false(vc_seq_check(s, 1, 20, 8));
	/* the original stream is still in the table: continuing it works */
	assert_true(vc_seq_check(s, 1, 40, 8));
	free_seq(s);
}

/* LRU replacement: the least recently used stream is the one evicted. */
static void test_lru_replacement(void **st)
{
	struct vc_seq *s = new_seq(2, 16);
	struct vc_seq_stats stats;

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, 16));	/* A: 8 KiB */
	assert_false(vc_seq_check(s, 2, 1000, 16));	/* B: 8 KiB */
	assert_false(vc_seq_check(s, 1, 16, 8));	/* A: 12 KiB, touched */
	assert_false(vc_seq_check(s, 3, 5000, 8));	/* C evicts B */
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.streams_replaced, 1);
	assert_true(vc_seq_check(s, 1, 24, 16));	/* A: 20 KiB > 16 */
	/* B restarts from scratch: 8 KiB only */
	assert_false(vc_seq_check(s, 2, 1016, 16));
	assert_int_equal(vc_seq_active_streams(s), 2);
	free_seq(s);
}

/* More streams than table entries: they thrash and none is detected. */
static void test_thrash_when_table_too_small(void **st)
{
	struct vc_seq *s = new_seq(2, 8);
	int i, k;

	(void)st;
	for (i = 0; i < 50; i++)
		for (k = 0; k < 3; k++)
			assert_false(vc_seq_check(s, k, (u64)k * 100000 + i * 8,
						  8));
	/* the same workload with room for the three streams is detected */
	assert_int_equal(vc_seq_set_streams(s, 3), 0);
	vc_seq_reset_streams(s);
	for (i = 0; i < 5; i++)
		for (k = 0; k < 3; k++)
			assert_int_equal(vc_seq_check(s, k,
						      (u64)k * 100000 + i * 8,
						      8), i >= 2);
	free_seq(s);
}

/* Requests at the very end of the sector space. */
static void test_sector_wraparound(void **st)
{
	struct vc_seq *s = new_seq(4, 4);
	struct vc_seq_stats stats;

	(void)st;
	/* ends exactly at U64MAX: fine, and 4 KiB is not above 4 KiB */
	assert_false(vc_seq_check(s, 1, U64MAX - 8, 8));
	/* would wrap past the end: never a stream, not recorded */
	assert_false(vc_seq_check(s, 1, U64MAX, 1));
	assert_false(vc_seq_check(s, 2, U64MAX - 3, 8));
	assert_int_equal(vc_seq_active_streams(s), 1);
	/* a wrapped stream must not "continue" at sector 0 */
	assert_false(vc_seq_check(s, 2, 5, 8));
	assert_false(vc_seq_check(s, 1, 0, 8));
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.bypassed_ios, 0);
	free_seq(s);
}

static void test_runtime_threshold_change(void **st)
{
	struct vc_seq *s = new_seq(4, 1024);
	struct vc_seq_stats stats;
	int i;

	(void)st;
	for (i = 0; i < 8; i++)
		assert_false(vc_seq_check(s, 1, i * 8, 8));	/* 32 KiB */
	assert_int_equal(vc_seq_set_threshold(s, 16), 0);
	assert_int_equal(vc_seq_threshold_kib(s), 16);
	assert_true(vc_seq_check(s, 1, 64, 8));
	/* raise it again: the stream drops below and goes through */
	assert_int_equal(vc_seq_set_threshold(s, 64), 0);
	assert_false(vc_seq_check(s, 1, 72, 8));		/* 40 KiB */
	for (i = 10; i < 16; i++)
		assert_int_equal(vc_seq_check(s, 1, i * 8, 8), i >= 16);
	assert_true(vc_seq_check(s, 1, 16 * 8, 8));	/* 68 KiB */
	vc_seq_get_stats(s, &stats);
	/* detected twice: once per crossing */
	assert_int_equal(stats.streams_detected, 2);
	vc_seq_reset_stats(s);
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.streams_detected, 0);
	assert_int_equal(stats.bypassed_ios, 0);
	free_seq(s);
}

static void test_toggle_forgets(void **st)
{
	struct vc_seq *s = new_seq(4, 8);

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, 16));
	assert_true(vc_seq_check(s, 1, 16, 8));
	vc_seq_set_enabled(s, false);
	assert_false(vc_seq_check(s, 1, 24, 8));
	vc_seq_set_enabled(s, true);
	assert_true(vc_seq_enabled(s));
	assert_int_equal(vc_seq_active_streams(s), 0);
	/* the run restarted: 4 KiB then 8 KiB, not above 8 KiB */
	assert_false(vc_seq_check(s, 1, 24, 8));
	assert_false(vc_seq_check(s, 1, 32, 8));
	assert_true(vc_seq_check(s, 1, 40, 8));
	/* enabling twice does not forget */
	vc_seq_set_enabled(s, true);
	assert_true(vc_seq_check(s, 1, 48, 8));
	free_seq(s);
}

static void test_shrink_table(void **st)
{
	struct vc_seq *s = new_seq(8, 8);
	int k;

	(void)st;
	for (k = 0; k < 8; k++)
		vc_seq_check(s, k, (u64)k * 1000, 8);
	assert_int_equal(vc_seq_active_streams(s), 8);
	assert_int_equal(vc_seq_set_streams(s, 3), 0);
	assert_int_equal(vc_seq_active_streams(s), 3);
	assert_int_equal(vc_seq_nr_streams(s), 3);
	/* growing again brings no stale entries back */
	assert_int_equal(vc_seq_set_streams(s, 8), 0);
	assert_int_equal(vc_seq_active_streams(s), 3);
	free_seq(s);
}

/* Two streams of one submitter meeting at one sector merge into one. */
static void test_converging_streams(void **st)
{
	struct vc_seq *s = new_seq(4, 16);

	(void)st;
	assert_false(vc_seq_check(s, 1, 0, 24));	/* A: 12 KiB, next 24 */
	assert_false(vc_seq_check(s, 1, 16, 8));	/* B: 4 KiB, next 24 */
	assert_int_equal(vc_seq_active_streams(s), 2);
	/* continuing at 24 takes A (the longer run): 12 KiB + 8 */
	assert_true(vc_seq_check(s, 1, 24, 16));
	assert_int_equal(vc_seq_active_streams(s), 1);
	free_seq(s);
}

/*
 * A backup streams next to a database doing random I/O: hundreds of
 * random requests from other submitters between two backup requests must
 * not make the table forget the backup's stream.
 */
static void test_random_submitters_do_not_evict_stream(void **st)
{
	struct vc_seq *s = new_seq(VC_SEQ_DEF_STREAMS, 64);
	struct vc_seq_stats stats;
	u64 rnd = 12345;
	int i, k;

	(void)st;
	for (i = 0; i < 40; i++) {
		assert_int_equal(vc_seq_check(s, 1, 1000000 + (u64)i * 128,
					      128), i >= 1);
		/* 8 OLTP threads, 25 random 8 KiB requests each */
		for (k = 0; k < 200; k++) {
			rnd = rnd * 6364136223846793005ULL + 1;
			assert_false(vc_seq_check(s, 100 + (u64)(k % 8),
						  (rnd >> 20) % 900000 * 16,
						  16));
		}
	}
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.streams_detected, 1);
	assert_int_equal(stats.bypassed_ios, 39);
	free_seq(s);
}

/* A submitter's own entries are recycled past VC_SEQ_PER_SUBMITTER. */
static void test_per_submitter_limit(void **st)
{
	struct vc_seq *s = new_seq(8, 1024);
	int i;

	(void)st;
	/* submitters 1..4 own one stream each */
	for (i = 1; i <= 4; i++)
		vc_seq_check(s, (u64)i, (u64)i * 100000, 8);
	/* submitter 9: 50 unrelated requests */
	for (i = 0; i < 50; i++)
		vc_seq_check(s, 9, (u64)i * 5000 + 7, 8);
	/* 4 + VC_SEQ_PER_SUBMITTER entries: the others survived */
	assert_int_equal(vc_seq_active_streams(s), 4 + VC_SEQ_PER_SUBMITTER);
	for (i = 1; i <= 4; i++) {
		struct vc_seq_stats a, b;

		vc_seq_get_stats(s, &a);
		vc_seq_check(s, (u64)i, (u64)i * 100000 + 8, 8);
		vc_seq_get_stats(s, &b);
		/* a continuation: no entry replaced */
		assert_int_equal(a.streams_replaced, b.streams_replaced);
	}
	free_seq(s);
}

/* A detected (bypassing) stream outlives newer short-lived entries. */
static void test_detected_stream_protected(void **st)
{
	struct vc_seq *s = new_seq(3, 8);
	int i;

	(void)st;
	for (i = 0; i < 4; i++)
		vc_seq_check(s, 1, (u64)i * 8, 8);	/* detected */
	/* two newcomers fill the table, then a third needs a slot */
	vc_seq_check(s, 2, 50000, 8);
	vc_seq_check(s, 3, 60000, 8);
	vc_seq_check(s, 4, 70000, 8);
	/* stream 1 is the LRU entry but it is detected: 2 went instead */
	assert_true(vc_seq_check(s, 1, 32, 8));
	free_seq(s);
}

#define NTHREADS	8
#define NREQ		20000

struct thr_arg {
	struct vc_seq *s;
	int id;
	long bypassed;
};

static void *seq_thread(void *p)
{
	struct thr_arg *a = p;
	int i;

	for (i = 0; i < NREQ; i++)
		if (vc_seq_check(a->s, 1000 + a->id,
				 (u64)a->id * 10000000 + (u64)i * 8, 8))
			a->bypassed++;
	return NULL;
}

/* Concurrent submitters: exact counts whatever the interleaving. */
static void test_concurrent_submitters(void **st)
{
	struct vc_seq *s = new_seq(NTHREADS, 16);
	struct thr_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	struct vc_seq_stats stats;
	int i;

	(void)st;
	for (i = 0; i < NTHREADS; i++) {
		args[i] = (struct thr_arg){ .s = s, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, seq_thread,
						&args[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].bypassed, NREQ - 4);
	}
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.checked, (u64)NTHREADS * NREQ);
	assert_int_equal(stats.bypassed_ios, (u64)NTHREADS * (NREQ - 4));
	assert_int_equal(stats.streams_detected, NTHREADS);
	assert_int_equal(stats.streams_replaced, 0);
	free_seq(s);
}

/* 16 submitters over a sharded table (4 shards of 8): exact counts. */
static void test_concurrent_sharded(void **st)
{
	struct vc_seq *s = new_seq(VC_SEQ_DEF_STREAMS, 16);
	struct thr_arg args[16];
	pthread_t th[16];
	struct vc_seq_stats stats;
	int i;

	(void)st;
	for (i = 0; i < 16; i++) {
		args[i] = (struct thr_arg){ .s = s, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, seq_thread,
						&args[i]), 0);
	}
	for (i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(args[i].bypassed, NREQ - 4);
	}
	vc_seq_get_stats(s, &stats);
	assert_int_equal(stats.checked, 16ULL * NREQ);
	assert_int_equal(stats.streams_detected, 16);
	assert_int_equal(stats.streams_replaced, 0);
	free_seq(s);
}

static int cfg_stop;

static void *cfg_thread(void *p)
{
	struct vc_seq *s = p;
	unsigned int i = 0;

	while (!__atomic_load_n(&cfg_stop, __ATOMIC_ACQUIRE)) {
		switch (i++ % 4) {
		case 0:
			vc_seq_set_streams(s, 1 + i % VC_SEQ_MAX_STREAMS);
			break;
		case 1:
			vc_seq_set_threshold(s, 1 + i % 64);
			break;
		case 2:
			vc_seq_set_enabled(s, i % 3 != 0);
			break;
		default:
			vc_seq_active_streams(s);
			vc_seq_reset_stats(s);
		}
	}
	return NULL;
}

/* Requests race with every kind of reconfiguration (run under TSan). */
static void test_concurrent_reconfigure(void **st)
{
	struct vc_seq *s = new_seq(VC_SEQ_DEF_STREAMS, 16);
	struct thr_arg args[4];
	pthread_t th[4], cfg;
	struct vc_seq_stats stats;
	int i;

	(void)st;
	cfg_stop = 0;
	assert_int_equal(pthread_create(&cfg, NULL, cfg_thread, s), 0);
	for (i = 0; i < 4; i++) {
		args[i] = (struct thr_arg){ .s = s, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, seq_thread,
						&args[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&cfg_stop, 1, __ATOMIC_RELEASE);
	pthread_join(cfg, NULL);
	vc_seq_get_stats(s, &stats);
	assert_true(stats.bypassed_ios <= stats.checked);
	assert_true(vc_seq_active_streams(s) <= vc_seq_nr_streams(s));
	free_seq(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_validation),
		cmocka_unit_test(test_disabled_never_bypasses),
		cmocka_unit_test(test_threshold_edge),
		cmocka_unit_test(test_single_request_edges),
		cmocka_unit_test(test_zero_length),
		cmocka_unit_test(test_interleaved_streams),
		cmocka_unit_test(test_two_streams_one_submitter),
		cmocka_unit_test(test_other_submitter_no_continue),
		cmocka_unit_test(test_gap_and_rewind_break),
		cmocka_unit_test(test_lru_replacement),
		cmocka_unit_test(test_thrash_when_table_too_small),
		cmocka_unit_test(test_sector_wraparound),
		cmocka_unit_test(test_runtime_threshold_change),
		cmocka_unit_test(test_toggle_forgets),
		cmocka_unit_test(test_shrink_table),
		cmocka_unit_test(test_converging_streams),
		cmocka_unit_test(test_random_submitters_do_not_evict_stream),
		cmocka_unit_test(test_per_submitter_limit),
		cmocka_unit_test(test_detected_stream_protected),
		cmocka_unit_test(test_concurrent_submitters),
		cmocka_unit_test(test_concurrent_sharded),
		cmocka_unit_test(test_concurrent_reconfigure),
	};

	return cmocka_run_group_tests_name("vc_seq", tests, NULL, NULL);
}
