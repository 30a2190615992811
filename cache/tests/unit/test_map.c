// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping: memory per block, hits/misses, LRU vs FIFO replacement, policy
 * switch without losing contents, second-hit admission, set placement.
 */
#include "tutil.h"

static void test_mem_per_block(void **st)
{
	u64 sizes[] = { 1000, 32768, 100000, 1ULL << 20, 1ULL << 28,
			(1ULL << 32) - 16 };
	unsigned int i;

	(void)st;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		u64 mb = vc_cache_mem_bytes_per_block(sizes[i]);

		print_message("%llu blocks: %llu.%03llu bytes/block\n",
			      (unsigned long long)sizes[i],
			      (unsigned long long)(mb / 1000),
			      (unsigned long long)(mb % 1000));
		if (sizes[i] >= 1000)
			assert_true(mb <= 16000);
	}
	/* the per-block part alone is 8 + 6 + <=1 + <=0.5 + 5/63 */
	assert_true(vc_cache_mem_bytes_per_block(1ULL << 28) < 15700);
}

static void test_hit_miss(void **st)
{
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, NULL);
	assert_int_equal(t_check_pat(&t, 10, 1, 0), 1);	/* zeroes */
	s = t_stats(&t);
	assert_int_equal(s.read_misses, 1);
	assert_int_equal(s.read_hits, 0);
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 10 * T_BSEC, T_BS,
			      calloc(1, T_BS)), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 1);
	assert_int_equal(s.valid_blocks, 1);
	/* a write, then a read of it: a hit with the data */
	assert_int_equal(t_write_pat(&t, 20, 4, 7, 0), 0);
	assert_int_equal(t_check_pat(&t, 20, 4, 7), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 5);
	assert_int_equal(s.dirty_blocks, 4);
	assert_int_equal(s.mem_bytes, vc_cache_mem_bytes(256));
	t_teardown(&t);
}

/*
 * A read miss whose fill finds no spare piece at once (memory and the
 * pool's reserve empty, in the completion worker): the host waits for the
 * fill write instead of waiting there for a piece.  It reads its data,
 * and the block is cached: the next read is a hit.
 */
static void test_fill_without_spare_piece(void **st)
{
	struct tenv t;
	struct vc_stats s;
	u8 *buf = malloc(T_BS);
	u64 f1;

	(void)st;
	assert_non_null(buf);
	t_setup(&t, 256, 4096, false, NULL);
	t_fill(buf, 10, 1, 5);
	vc_memdev_poke(t.bm, 10 * T_BSEC, buf, T_BS);
	vc_posix_fail_try_allocs(1);
	assert_int_equal(t_check_pat(&t, 10, 1, 5), 0);
	/* the fill asked for a piece and was refused */
	assert_int_equal(vc_posix_try_allocs_left(), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_misses, 1);
	assert_int_equal(s.valid_blocks, 1);
	f1 = s.flash_bytes_written;
	assert_true(f1 >= T_BS);	/* the fill write is done */
	/* the disk changes behind the cache: the read is served from it */
	t_fill(buf, 10, 1, 6);
	vc_memdev_poke(t.bm, 10 * T_BSEC, buf, T_BS);
	assert_int_equal(t_check_pat(&t, 10, 1, 5), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 1);
	/* and with pieces to spare, the same (acked before the fill write) */
	t_fill(buf, 11, 1, 7);
	vc_memdev_poke(t.bm, 11 * T_BSEC, buf, T_BS);
	assert_int_equal(t_check_pat(&t, 11, 1, 7), 0);
	t_run();
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 2);
	assert_true(s.flash_bytes_written >= f1 + T_BS);
	vc_posix_fail_try_allocs(0);
	free(buf);
	t_teardown(&t);
}

static void test_unaligned(void **st)
{
	struct tenv t;
	u8 *buf = malloc(3 * T_BS), *rd = malloc(3 * T_BS);
	unsigned int i;

	(void)st;
	t_setup(&t, 256, 4096, false, NULL);
	t_write_pat(&t, 0, 3, 1, 0);
	for (i = 0; i < 3 * T_BS; i++)
		buf[i] = (u8)(i * 7 + 3);
	/* 2.5 blocks starting at sector 3 */
	assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 3, 5 * 1024, buf), 0);
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 3, 5 * 1024, rd), 0);
	assert_memory_equal(buf, rd, 5 * 1024);
	assert_int_equal(t_io(&t, VC_OP_READ, 0, 1, 512, rd), 0);
	/* after a clean flush the backing device agrees */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	vc_memdev_peek(t.bm, 3, rd, 5 * 1024);
	assert_memory_equal(buf, rd, 5 * 1024);
	free(buf);
	free(rd);
	t_teardown(&t);
}

/* Fill a 64-block cache, touch block 0, insert one more: who is gone? */
static void replacement_run(enum vc_policy pol, bool expect_first_kept)
{
	struct vc_cache_config cfg;
	struct tenv t;
	struct vc_stats s;
	u64 hits;
	u32 i;

	vc_cache_config_default(&cfg);
	cfg.policy = pol;
	cfg.mode = VC_MODE_WT;
	t_setup(&t, 64, 4096, false, &cfg);
	for (i = 0; i < 64; i++)
		assert_int_equal(t_check_pat(&t, i, 1, 0), 1);
	assert_int_equal(t_check_pat(&t, 0, 1, 0), 1);	/* touch 0 */
	assert_int_equal(t_check_pat(&t, 100, 1, 0), 1);	/* evicts one */
	s = t_stats(&t);
	assert_int_equal(s.evictions, 1);
	hits = s.read_hits;
	assert_int_equal(t_check_pat(&t, 0, 1, 0), 1);
	s = t_stats(&t);
	assert_int_equal(s.read_hits - hits, expect_first_kept ? 1 : 0);
	t_teardown(&t);
}

static void test_lru(void **st)
{
	(void)st;
	replacement_run(VC_POLICY_LRU, true);
}

static void test_fifo(void **st)
{
	(void)st;
	replacement_run(VC_POLICY_FIFO, false);
}

static void test_policy_switch_keeps_contents(void **st)
{
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	t_setup(&t, 128, 4096, false, NULL);
	for (i = 0; i < 100; i++)
		t_write_pat(&t, i, 1, i, 0);
	assert_int_equal(vc_cache_set_policy(t.c, VC_POLICY_FIFO), 0);
	assert_int_equal(vc_cache_get_policy(t.c), VC_POLICY_FIFO);
	for (i = 0; i < 100; i++)
		assert_int_equal(t_check_pat(&t, i, 1, i), 0);
	assert_int_equal(vc_cache_set_policy(t.c, VC_POLICY_LRU), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(t_check_pat(&t, i, 1, i), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 200);
	assert_int_equal(s.read_misses, 0);
	assert_int_equal(vc_cache_set_policy(t.c, 7), -EINVAL);
	t_teardown(&t);
}

static void test_admission(void **st)
{
	struct vc_cache_config cfg;
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	vc_cache_config_default(&cfg);
	cfg.params.v[VC_P_ADMISSION] = VC_ADMIT_SECOND_HIT;
	cfg.params.v[VC_P_ADMIT_FULL_PCT] = 50;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	t_setup(&t, 64, 4096, false, &cfg);
	/* below 50% full: every miss admitted */
	for (i = 0; i < 32; i++)
		t_check_pat(&t, i, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 32);
	assert_int_equal(s.not_admitted, 0);
	/* now half full: first miss refused, second admitted */
	t_check_pat(&t, 1000, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 32);
	assert_int_equal(s.not_admitted, 1);
	assert_int_equal(s.bypass[VC_BYP_ADMISSION], 1);
	t_check_pat(&t, 1000, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 33);
	t_check_pat(&t, 1000, 1, 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 1);
	/* write misses too: the first goes around, the second is cached */
	assert_int_equal(t_write_pat(&t, 2000, 1, 3, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 33);
	assert_int_equal(s.not_admitted, 2);
	assert_true(t_backing_has(&t, 2000, 1, 3));
	assert_int_equal(t_write_pat(&t, 2000, 1, 4, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 34);
	assert_int_equal(s.dirty_blocks, 1);
	assert_int_equal(t_check_pat(&t, 2000, 1, 4), 0);
	t_teardown(&t);
}

static void test_many_sets(void **st)
{
	struct vc_cache_config cfg;
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	vc_cache_config_default(&cfg);
	cfg.mode = VC_MODE_WT;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	/* 3 sets of ~21845 ways */
	t_setup(&t, 65537, 200000, false, &cfg);
	assert_int_equal(t.c->nr_sets, 3);
	for (i = 0; i < 3000; i++)
		assert_int_equal(t_write_pat(&t, i * 37, 1, i, 0), 0);
	for (i = 0; i < 3000; i++)
		assert_int_equal(t_check_pat(&t, i * 37, 1, i), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 3000);
	/* every block sits in the set its key hashes to */
	for (i = 0; i < t.c->nr_blocks; i++) {
		u64 w = t.c->words[i];
		struct vc_set *set;

		if (!(w & B_VALID))
			continue;
		set = &t.c->sets[vc_set_of(t.c, w)];
		assert_true(i >= set->first && i < set->first + set->ways);
	}
	t_teardown(&t);
}

/* Address-only simulation: NULL buffers, devices that ignore data. */
static u64 null_ios;
static int null_errors;

static void null_end(struct vc_host_io *h, int err)
{
	(void)h;
	if (err)
		null_errors++;
}

static void null_submit(struct vc_dev *d, struct vc_dev_io *io)
{
	(void)d;
	null_ios++;
	if (io->op != VC_DEV_FLUSH && io->op != VC_DEV_DISCARD &&
	    !(io->flags & VC_DEV_META))
		assert_null(io->buf);	/* no bounce buffers for data */
	io->end_io(io, 0);
}

static const struct vc_dev_ops null_ops = { .submit = null_submit };

static void test_nodata(void **st)
{
	struct vc_dev cd = { .ops = &null_ops, .nr_sectors = 1 << 20 };
	struct vc_dev bd = { .ops = &null_ops, .nr_sectors = 1 << 24 };
	struct vc_cache_config cfg;
	struct vc_host_io h;
	struct vc_cache *c;
	struct vc_stats s;
	u32 id, i;

	(void)st;
	t_init();
	vc_cache_config_default(&cfg);
	cfg.flags = VC_CFG_NODATA;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	/* the superblock read at format sees zeroes (no data): fine */
	assert_int_equal(vc_cache_create(&cd, &cfg, &c), 0);
	assert_int_equal(vc_cache_attach(c, &bd, "null", &id), 0);
	memset(&h, 0, sizeof(h));
	h.dev_id = id;
	h.len = 4096;
	for (i = 0; i < 3000; i++) {
		struct vc_host_io x = h;

		x.op = (i % 3) ? VC_OP_READ : VC_OP_WRITE;
		x.sector = (u64)(i % 1000) * 8;
		x.end_io = null_end;
		vc_cache_submit(c, &x);
		t_run();
	}
	assert_int_equal(vc_cache_flush(c, VC_DEV_ID_ALL, NULL, NULL), 0);
	vc_cache_get_stats(c, &s);
	assert_int_equal(s.reads + s.writes, 3000);
	assert_true(s.read_hits > 1000);
	assert_int_equal(s.dirty_blocks, 0);
	assert_true(s.wb_ios > 0);
	assert_int_equal(null_errors, 0);
	assert_int_equal(vc_cache_shutdown(c, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mem_per_block),
		cmocka_unit_test(test_hit_miss),
		cmocka_unit_test(test_fill_without_spare_piece),
		cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_policy_switch_keeps_contents),
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_many_sets),
		cmocka_unit_test(test_nodata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
