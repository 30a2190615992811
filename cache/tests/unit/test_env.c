// SPDX-License-Identifier: GPL-2.0
/*
 * The posix environment: virtual clock, manual work ordering and
 * cancellation, waits, data buffers (incl. NULL), the in-memory device's
 * volatile cache; and the engine's statistics (latency histograms).
 */
#include "tutil.h"

static int order[16], norder;

struct tw {
	vc_work_t w;
	int id;
};

static void work_fn(vc_work_t *w)
{
	struct tw *t = vc_container_of(w, struct tw, w);

	order[norder++] = t->id;
}

static void test_manual_work(void **st)
{
	struct tw a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 };

	(void)st;
	t_init();
	norder = 0;
	vc_work_init(&a.w, work_fn);
	vc_work_init(&b.w, work_fn);
	vc_work_init(&c.w, work_fn);
	vc_work_queue_delayed(&a.w, 3000000);	/* 3 ms */
	vc_work_queue_delayed(&b.w, 1000000);
	vc_work_queue(&c.w);
	vc_work_queue(&c.w);			/* once */
	assert_int_equal(vc_posix_next_work_ns(), t_now_ns);
	assert_int_equal(vc_posix_run_work(), 1);
	assert_int_equal(order[0], 3);
	t_advance_ms(1);
	assert_int_equal(norder, 2);
	assert_int_equal(order[1], 2);
	/* an earlier deadline wins */
	vc_work_queue_delayed(&a.w, 1000000);
	t_advance_ms(1);
	assert_int_equal(norder, 3);
	assert_int_equal(order[2], 1);
	/* cancel */
	vc_work_queue_delayed(&b.w, 1000000);
	vc_work_cancel_sync(&b.w);
	t_advance_ms(5);
	assert_int_equal(norder, 3);
	assert_int_equal(vc_posix_next_work_ns(), ~0ULL);
}

static bool never(void *arg)
{
	(void)arg;
	return false;
}

static bool flag_set(void *arg)
{
	return *(int *)arg != 0;
}

static void test_waits(void **st)
{
	vc_waitq_t q;
	int f = 1;

	(void)st;
	t_init();
	vc_waitq_init(&q);
	assert_int_equal(vc_waitq_wait(&q, flag_set, &f, false, 0), 0);
	/* manual mode, nothing can make progress: no hang */
	assert_int_equal(vc_waitq_wait(&q, never, NULL, false, 0), -EDEADLK);
	vc_posix_interrupt();
	assert_int_equal(vc_waitq_wait(&q, never, NULL, true, 0), -EINTR);
	vc_posix_clear_interrupt();
	vc_waitq_destroy(&q);
}

static void test_buffers(void **st)
{
	u8 mem[64], out[64];
	struct vc_buf *a = vc_buf_alloc(64, VC_GFP_KERNEL);
	struct vc_buf *w = vc_buf_wrap(mem, sizeof(mem));
	unsigned int i;

	(void)st;
	for (i = 0; i < 64; i++)
		mem[i] = (u8)i;
	vc_buf_copy(a, 8, w, 16, 32);
	vc_buf_to_mem(out, a, 8, 32);
	assert_memory_equal(out, mem + 16, 32);
	vc_buf_zero(a, 8, 4);
	vc_buf_to_mem(out, a, 8, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(out[i], 0);
	/* NULL: copies from it give zeroes, copies to it vanish */
	vc_buf_copy(w, 0, NULL, 0, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(mem[i], 0);
	vc_buf_copy(NULL, 0, w, 0, 8);
	memset(out, 1, sizeof(out));
	vc_buf_to_mem(out, NULL, 0, 8);
	assert_int_equal(out[3], 0);
	vc_buf_free(a);
	vc_buf_free(w);
	vc_buf_free(NULL);
}

static void io_end(struct vc_dev_io *io, int err)
{
	*(int *)io->private = err + 1;
}

static int dev_io(struct vc_memdev *m, u8 op, u32 flags, u64 sector,
		  void *data)
{
	struct vc_buf *b = data ? vc_buf_wrap(data, 512) : NULL;
	struct vc_dev_io io;
	int done = 0;

	memset(&io, 0, sizeof(io));
	io.dev = vc_memdev_dev(m);
	io.op = op;
	io.flags = flags;
	io.sector = sector;
	io.len = op == VC_DEV_FLUSH ? 0 : 512;
	io.buf = b;
	io.end_io = io_end;
	io.private = &done;
	vc_dev_submit(&io);
	vc_buf_free(b);
	return done - 1;
}

static void test_memdev_volatile(void **st)
{
	struct vc_memdev *m = vc_memdev_create("m", 16, true);
	u8 a[512], b[512], r[512];

	(void)st;
	memset(a, 0xaa, sizeof(a));
	memset(b, 0xbb, sizeof(b));
	assert_int_equal(dev_io(m, VC_DEV_WRITE, 0, 1, a), 0);
	assert_int_equal(dev_io(m, VC_DEV_WRITE, VC_DEV_FUA, 2, b), 0);
	assert_int_equal(dev_io(m, VC_DEV_READ, 0, 1, r), 0);
	assert_memory_equal(r, a, 512);	/* readers see the cache */
	vc_memdev_power_cut(m);
	assert_int_equal(dev_io(m, VC_DEV_READ, 0, 1, r), 0);
	assert_int_equal(r[0], 0);		/* lost */
	assert_int_equal(dev_io(m, VC_DEV_READ, 0, 2, r), 0);
	assert_memory_equal(r, b, 512);	/* FUA survived */
	assert_int_equal(dev_io(m, VC_DEV_WRITE, 0, 1, a), 0);
	assert_int_equal(dev_io(m, VC_DEV_FLUSH, 0, 0, NULL), 0);
	vc_memdev_power_cut(m);
	assert_int_equal(dev_io(m, VC_DEV_READ, 0, 1, r), 0);
	assert_memory_equal(r, a, 512);	/* flushed survived */
	assert_int_equal(dev_io(m, VC_DEV_READ, 0, 16, r), -EIO);	/* range */
	vc_memdev_destroy(m);
}

static u64 lat_count(struct tenv *t, enum vc_lat_path path, u64 *b0)
{
	u64 b[VC_LAT_BUCKETS], n = 0;
	u32 i;

	vc_cache_get_latency(t->c, path, b, NULL);
	for (i = 0; i < VC_LAT_BUCKETS; i++)
		n += b[i];
	if (b0)
		*b0 = b[0];
	return n;
}

static void test_latency_histograms(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct tenv t;
	struct vc_stats s;
	u64 b0;
	u32 i;

	(void)st;
	cfg.mode = VC_MODE_WB;
	t_setup(&t, 64, 1024, false, &cfg);
	for (i = 0; i < 10; i++)
		t_write_pat(&t, i, 1, 1, 0);		/* write misses */
	for (i = 0; i < 3; i++)
		t_write_pat(&t, i, 1, 2, 0);		/* write hits */
	for (i = 0; i < 10; i++)
		t_check_pat(&t, i, 1, i < 3 ? 2 : 1);	/* read hits */
	for (i = 0; i < 5; i++)
		t_check_pat(&t, 100 + i, 1, 0);		/* read misses */
	t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL);
	assert_int_equal(lat_count(&t, VC_LAT_READ_HIT, &b0), 10);
	assert_int_equal(b0, 10);	/* virtual clock: 0 ns */
	assert_int_equal(lat_count(&t, VC_LAT_READ_MISS, NULL), 5);
	assert_int_equal(lat_count(&t, VC_LAT_WRITE_MISS, NULL), 10);
	assert_int_equal(lat_count(&t, VC_LAT_WRITE_HIT, NULL), 3);
	assert_int_equal(lat_count(&t, VC_LAT_BYPASS, NULL), 0);
	assert_int_equal(lat_count(&t, VC_LAT_FLUSH, NULL), 1);
	assert_int_equal(lat_count(&t, VC_LAT_WRITEBACK, NULL), 0);

	/* write-back: ten dirty blocks in one merged run */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	s = t_stats(&t);
	assert_int_equal(lat_count(&t, VC_LAT_WRITEBACK, NULL), s.wb_ios);
	assert_true(s.wb_ios >= 1);
	assert_int_equal(s.wb_blocks, 10);
	assert_int_equal(s.wb_bytes, 10 * T_BS);

	/* a bypass: pass-through mode */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_PT), 0);
	t_check_pat(&t, 200, 1, 0);
	assert_int_equal(lat_count(&t, VC_LAT_BYPASS, NULL) +
			 lat_count(&t, VC_LAT_READ_MISS, NULL), 6);

	s = t_stats(&t);
	assert_true(s.flash_bytes_written >= 10 * 4096);
	assert_true(s.md_writes > 0);
	vc_cache_reset_stats(t.c);
	s = t_stats(&t);
	assert_int_equal(s.reads, 0);
	assert_int_equal(s.read_hit_bytes, 0);
	assert_int_equal(lat_count(&t, VC_LAT_READ_HIT, NULL), 0);
	assert_int_equal(s.valid_blocks, 15);	/* state, not a counter */
	t_teardown(&t);
}

/* The log-linear buckets: contiguous, ordered, each at most 1/8 wide. */
static void test_latency_buckets(void **st)
{
	u64 ns, lo, hi;
	u32 b;

	(void)st;
	assert_int_equal(vc_lat_bucket(0), 0);
	assert_int_equal(vc_lat_bucket(1023), 0);
	assert_int_equal(vc_lat_bucket(1024), 1);
	assert_int_equal(vc_lat_bucket(~0ULL), VC_LAT_BUCKETS - 1);
	assert_int_equal(vc_lat_bucket(1ULL << VC_LAT_MAX_SHIFT),
			 VC_LAT_BUCKETS - 1);
	assert_int_equal(vc_lat_bucket((1ULL << VC_LAT_MAX_SHIFT) - 1),
			 VC_LAT_BUCKETS - 2);
	for (b = 1; b < VC_LAT_BUCKETS - 1; b++) {
		lo = vc_lat_bucket_low(b);
		hi = vc_lat_bucket_low(b + 1);
		assert_true(lo < hi);
		assert_true((hi - lo) * 8 <= lo);
		assert_int_equal(vc_lat_bucket(lo), b);
		assert_int_equal(vc_lat_bucket(hi - 1), b);
		assert_int_equal(vc_lat_bucket(lo + (hi - lo) / 2), b);
	}
	/* every value lands in the bucket that holds it */
	for (ns = 1; ns < (1ULL << 40); ns = ns * 3 + 7) {
		b = vc_lat_bucket(ns);
		assert_true(vc_lat_bucket_low(b) <= ns);
		if (b < VC_LAT_BUCKETS - 1)
			assert_true(ns < vc_lat_bucket_low(b + 1));
	}
}

/* Two backing devices: each counts its own; the cache has the sums. */
static void test_dev_stats(void **st)
{
	struct vc_cache_config cfg = t_cfg_manual();
	struct vc_dev_stats d0, d1;
	struct vc_memdev *b2;
	struct tenv t;
	struct vc_stats s;
	u32 id2, i, saved;

	(void)st;
	cfg.mode = VC_MODE_WB;
	t_setup(&t, 256, 1024, false, &cfg);
	b2 = vc_memdev_create("hdd1", 1024 * T_BSEC, false);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(b2), "hdd1", &id2), 0);
	for (i = 0; i < 4; i++)
		t_write_pat(&t, i, 1, 1, 0);
	for (i = 0; i < 4; i++)
		t_check_pat(&t, i, 1, 1);
	saved = t.dev;
	t.dev = id2;
	t_write_pat(&t, 0, 2, 3, 0);		/* one request, two blocks */
	t_check_pat(&t, 10, 1, 0);		/* a read miss */
	t_check_pat(&t, 0, 2, 3);		/* two block hits */
	t.dev = saved;
	vc_cache_get_dev_stats(t.c, t.dev, &d0);
	vc_cache_get_dev_stats(t.c, id2, &d1);
	assert_int_equal(d0.writes, 4);
	assert_int_equal(d0.write_misses, 4);
	assert_int_equal(d0.write_miss_bytes, 4 * T_BS);
	assert_int_equal(d0.reads, 4);
	assert_int_equal(d0.read_hits, 4);
	assert_int_equal(d0.read_hit_bytes, 4 * T_BS);
	assert_int_equal(d0.read_misses, 0);
	assert_int_equal(d1.writes, 1);
	assert_int_equal(d1.write_bytes, 2 * T_BS);
	assert_int_equal(d1.write_misses, 2);
	assert_int_equal(d1.reads, 2);
	assert_int_equal(d1.read_hits, 2);
	assert_int_equal(d1.read_misses, 1);
	assert_int_equal(d1.read_miss_bytes, T_BS);
	s = t_stats(&t);
	assert_int_equal(s.reads, d0.reads + d1.reads);
	assert_int_equal(s.read_hits, 6);
	assert_int_equal(s.write_miss_bytes, 6 * T_BS);
	/* write-back is counted per device */
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	vc_cache_get_dev_stats(t.c, t.dev, &d0);
	vc_cache_get_dev_stats(t.c, id2, &d1);
	assert_int_equal(d0.wb_blocks, 4);
	assert_int_equal(d1.wb_blocks, 2);
	assert_int_equal(d1.wb_bytes, 2 * T_BS);
	/* bypass bytes by reason: write-around writes */
	assert_int_equal(vc_cache_set_mode(t.c, VC_MODE_WA), 0);
	t_write_pat(&t, 50, 1, 9, 0);
	vc_cache_get_dev_stats(t.c, t.dev, &d0);
	assert_int_equal(d0.bypass[VC_BYP_MODE], 1);
	assert_int_equal(d0.bypass_bytes[VC_BYP_MODE], T_BS);
	/* an out-of-range slot reads as zero */
	vc_cache_get_dev_stats(t.c, VC_MAX_BACKING, &d1);
	assert_int_equal(d1.reads, 0);
	vc_cache_reset_stats(t.c);
	vc_cache_get_dev_stats(t.c, t.dev, &d0);
	assert_int_equal(d0.reads + d0.writes + d0.wb_blocks, 0);
	t_teardown(&t);
	vc_memdev_destroy(b2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manual_work),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_buffers),
		cmocka_unit_test(test_memdev_volatile),
		cmocka_unit_test(test_latency_histograms),
		cmocka_unit_test(test_latency_buckets),
		cmocka_unit_test(test_dev_stats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
