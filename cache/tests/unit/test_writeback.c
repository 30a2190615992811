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

/* The backing device's writes, in the order they were sent. */
struct wtrace {
	u64 sector[8192];
	u32 n;
};

static int trace_writes(void *ctx, const struct vc_dev_io *io)
{
	struct wtrace *w = ctx;

	if (io->op == VC_DEV_WRITE && w->n < VC_ARRAY_SIZE(w->sector))
		w->sector[w->n++] = io->sector;
	return 0;
}

/*
 * Write-back goes in LBA order across batches (an elevator over the dirty
 * chunks), not in the sets' hash order: rated batches of a few hundred
 * blocks, 3000 dirty blocks spread over every chunk of the disk, and the
 * disk sees one ascending sweep.  Before, each batch was sorted on its
 * own: the disk went back to the start at every batch.
 */
static void test_writeback_lba_order(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct wtrace *w = calloc(1, sizeof(*w));
	u32 i, down = 0, nbatch;
	struct vc_stats s, s0;
	struct tenv t;

	(void)st;
	assert_non_null(w);
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 90;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 10;
	cfg.params.v[VC_P_WB_MAX_IO_KIB] = 4;	/* one block a run */
	t_setup(&t, 8192, 32768, false, &cfg);
	/* 7919 is prime: 3000 distinct blocks, in every 256-block chunk */
	for (i = 0; i < 3000; i++)
		assert_int_equal(t_write_pat(&t, (i * 7919u) % 32768u, 1, i, 0), 0);
	s0 = t_stats(&t);
	vc_memdev_set_fail(t.bm, trace_writes, w);
	t_advance_ms(20000);
	vc_memdev_set_fail(t.bm, NULL, NULL);
	s = t_stats(&t);
	nbatch = (u32)(s.wb_flushes - s0.wb_flushes);
	for (i = 1; i < w->n; i++)
		if (w->sector[i] < w->sector[i - 1])
			down++;
	print_message("write-back: %u writes in %u batches, %u times back towards the disk's start\n",
		      w->n, nbatch, down);
	assert_int_equal(s.dirty_blocks, 819);		/* down to the low mark */
	assert_int_equal(w->n, 3000 - 819);
	assert_true(nbatch >= 3);			/* several batches... */
	assert_true(down <= 1);				/* ...one sweep */
	for (i = 0; i < 3000; i++)
		assert_int_equal(t_check_pat(&t, (i * 7919u) % 32768u, 1, i), 0);
	t_teardown(&t);
	free(w);
}

/*
 * The sweep takes blocks dirtied behind its cursor on its next round, and
 * a chunk whose blocks all went clean leaves the map.
 */
static void test_writeback_sweep_wraps(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_dirtymap *m;
	u32 i, bits;

	(void)st;
	t_setup(&t, 4096, 32768, false, &cfg);
	m = (struct vc_dirtymap *)(uintptr_t)t.c->bdev[t.dev].dmap;
	assert_non_null(m);
	assert_int_equal(m->nbits, 32768 >> t.c->set_shift);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_write_pat(&t, 30000 - i * 700, 1, i, 0), 0);
	for (bits = 0, i = 0; i < m->nbits; i++)
		bits += (vc_atomic64_read(&m->w[i >> 6]) >> (i & 63)) & 1;
	assert_int_equal(bits, 40);	/* 700 > 256: a chunk each */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	/* behind the cursor now: the next flush still finds them */
	for (i = 0; i < 40; i++)
		assert_int_equal(t_write_pat(&t, 30001 - i * 700, 1, i + 50, 0), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	for (i = 0; i < 40; i++) {
		assert_true(t_backing_has(&t, 30000 - i * 700, 1, i));
		assert_true(t_backing_has(&t, 30001 - i * 700, 1, i + 50));
	}
	/*
	 * One more block: its flush goes round the whole disk and clears the
	 * bits of the chunks it finds clean; only the one it took stays
	 * (cleared when a later round finds it clean).
	 */
	assert_int_equal(t_write_pat(&t, 5, 1, 99, 0), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 0);
	for (bits = 0, i = 0; i < m->nbits; i++)
		bits += (vc_atomic64_read(&m->w[i >> 6]) >> (i & 63)) & 1;
	assert_int_equal(bits, 1);
	assert_int_equal(vc_atomic64_read(&m->w[0]) & 1, 1);
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_write_allocates),
		cmocka_unit_test(test_partial_write_read_error),
		cmocka_unit_test(test_seq_keeps_small_writes),
		cmocka_unit_test(test_idle_means_no_host_io),
		cmocka_unit_test(test_writeback_lba_order),
		cmocka_unit_test(test_writeback_sweep_wraps),
	};

	t_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
