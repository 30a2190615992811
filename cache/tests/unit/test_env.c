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

static void test_latency_histograms(void **st)
{
	struct tenv t;
	struct vc_stats s;
	u64 hit = 0, miss = 0, wr = 0, fl = 0;
	u32 i;

	(void)st;
	t_setup(&t, 64, 1024, false, NULL);
	for (i = 0; i < 10; i++)
		t_write_pat(&t, i, 1, 1, 0);
	for (i = 0; i < 10; i++)
		t_check_pat(&t, i, 1, 1);
	for (i = 0; i < 5; i++)
		t_check_pat(&t, 100 + i, 1, 0);
	t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL);
	s = t_stats(&t);
	for (i = 0; i < VC_LAT_BUCKETS; i++) {
		hit += s.lat[VC_LAT_READ_HIT][i];
		miss += s.lat[VC_LAT_READ_MISS][i];
		wr += s.lat[VC_LAT_WRITE][i];
		fl += s.lat[VC_LAT_FLUSH][i];
	}
	assert_int_equal(hit, 10);
	assert_int_equal(miss, 5);
	assert_int_equal(wr, 10);
	assert_int_equal(fl, 1);
	assert_int_equal(s.lat[VC_LAT_READ_HIT][0], 10);	/* 0 us: virtual */
	assert_true(s.flash_bytes_written >= 10 * 4096);
	assert_true(s.md_writes > 0);
	vc_cache_reset_stats(t.c);
	s = t_stats(&t);
	assert_int_equal(s.reads, 0);
	assert_int_equal(s.dirty_blocks, 10);	/* state, not a counter */
	t_teardown(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manual_work),
		cmocka_unit_test(test_waits),
		cmocka_unit_test(test_buffers),
		cmocka_unit_test(test_memdev_volatile),
		cmocka_unit_test(test_latency_histograms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
