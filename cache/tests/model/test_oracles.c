// SPDX-License-Identifier: GPL-2.0
/*
 * The oracles can fail: each test makes the device return what a broken
 * engine would, and checks that the harness's checkers refuse it (and, as
 * a control, accept what the rules allow).
 *
 * The cache runs in pass-through, so every read after the reload comes
 * from the backing device, whose durable image the test sets with
 * simdev_poke() between the power cut and the reload: that is exactly
 * what the engine would have served had it lost or reordered something.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "harness.h"

static struct harness *new_h(void)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct h_opts o = {
		.seed = 11, .ndev = 1, .backing_sectors = 2048,
		.cache_sectors = 2048, .block_size = 4096,
		.completion = SIMDEV_COMPLETE_INLINE,
		.cut_mode = SIMDEV_CUT_DROP_ALL, .volatile_backing = true,
	};

	assert_non_null(h);
	assert_int_equal(h_init(h, &o), 0);
	h_prefill(h, 0);		/* version 1 everywhere */
	h->cfg.mode = VC_MODE_PT;
	assert_int_equal(h_create(h), 0);
	return h;
}

static void free_h(struct harness *h)
{
	h_fini(h);
	free(h);
}

/* A host op that may fail (injected error). */
static int op(struct harness *h, int o, u32 flags, u64 sector, u32 len)
{
	struct h_io *io = h_io_new(h, 0, o, flags, sector, len);
	int err;

	io->tolerate_err = true;
	h_submit(h, io);
	err = h_wait(h, io);
	h_io_free(io);
	return err;
}

/* Power cut, put version @ver of sector 0 on the backing media, reload. */
static u64 cut_plant_verify(struct harness *h, u32 ver)
{
	u8 p[H_SECT];
	char err[160];

	simdev_power_cut(h->pw);
	h_quiesce(h);
	vc_cache_abandon(h->c);
	h->c = NULL;
	simdev_power_restore(h->pw);
	if (ver != ~0u) {
		if (ver)
			h_fill_sector(p, 0, 0, ver);
		else
			memset(p, 0, sizeof(p));
		simdev_poke(h->dev[0].sd, 0, p, H_SECT);
	}
	assert_int_equal(h_load(h, err, sizeof(err)), 0);
	h->failures = 0;
	h_verify_after_crash(h);
	return h->failures;
}

/*
 * discard -> write -> FLUSH -> cut: the write is durable, the discard is
 * superseded; the pre-discard data, zeroes or anything else is refused.
 * (The checker used to accept any data: the sector still counted as
 * "discarded".)
 */
static void test_superseded_discard_is_checked(void **st)
{
	u32 planted[] = { 1, 0 };
	unsigned int i;

	(void)st;
	for (i = 0; i < 2; i++) {
		struct harness *h = new_h();

		assert_int_equal(op(h, VC_OP_DISCARD, 0, 0, 4096), 0);
		assert_int_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
		assert_int_equal(op(h, VC_OP_FLUSH, 0, 0, 0), 0);
		assert_true(cut_plant_verify(h, planted[i]) > 0);
		free_h(h);
	}
	/* control: the durable write itself passes */
	{
		struct harness *h = new_h();

		assert_int_equal(op(h, VC_OP_DISCARD, 0, 0, 4096), 0);
		assert_int_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
		assert_int_equal(op(h, VC_OP_FLUSH, 0, 0, 0), 0);
		assert_int_equal(cut_plant_verify(h, ~0u), 0);
		free_h(h);
	}
}

/* discard -> write, no FLUSH -> cut: the discard stands, anything goes. */
static void test_pending_discard_accepts_old_data(void **st)
{
	struct harness *h = new_h();

	(void)st;
	assert_int_equal(op(h, VC_OP_DISCARD, 0, 0, 4096), 0);
	assert_int_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
	assert_int_equal(cut_plant_verify(h, 1), 0);
	free_h(h);
}

/*
 * write v2 -> FLUSH -> write v3 fails -> cut: v2 or v3 (or newer) is
 * fine, v1 (older than the durable version) is refused.  (The checker
 * used to accept any version after a failed write.)
 */
static void test_failed_write_never_older(void **st)
{
	u32 planted[] = { 1, 2, 3 };
	u64 want[] = { 1, 0, 0 };
	unsigned int i;

	(void)st;
	for (i = 0; i < 3; i++) {
		struct harness *h = new_h();
		u32 v2;

		assert_int_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
		v2 = h->version;
		assert_int_equal(v2, 2);
		assert_int_equal(op(h, VC_OP_FLUSH, 0, 0, 0), 0);
		simdev_error_range(h->dev[0].sd, SIMDEV_OP_WRITE, 0, 8, -EIO, 1);
		assert_int_not_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
		assert_int_equal(h->version, 3);
		assert_true(h->dev[0].unknown[0]);
		assert_int_equal(cut_plant_verify(h, planted[i]) > 0, want[i]);
		assert_true(h->strict_after_crash > 0);
		free_h(h);
	}
}

/*
 * A read of a block that is not known lost must succeed: -EIO is allowed
 * only for blocks a lossy window touched (found by the sweep).
 */
static void test_eio_only_for_lost_blocks(void **st)
{
	struct harness *h = new_h();
	struct h_io *io;

	(void)st;
	simdev_error_range(h->dev[0].sd, SIMDEV_OP_READ, 0, 8, -EIO, -1);
	/* outside a lossy window: a failed read is a failure */
	io = h_io_new(h, 0, VC_OP_READ, 0, 0, 4096);
	h_submit(h, io);
	h_wait(h, io);
	h_io_free(io);
	assert_int_equal(h->failures, 1);
	/* a lossy window, then the sweep marks the block lost: allowed */
	h->failures = 0;
	h->lose_window = true;
	h_sweep_lost(h);
	assert_int_equal(h->failures, 0);
	assert_true(h->dev[0].lost[0] && h->dev[0].lost[7]);
	assert_false(h->dev[0].lost[8]);
	io = h_io_new(h, 0, VC_OP_READ, 0, 0, 4096);
	h_submit(h, io);
	h_wait(h, io);
	h_io_free(io);
	assert_int_equal(h->failures, 0);
	assert_int_equal(h->lost_reads, 1);
	/* without a window the sweep refuses it */
	simdev_error_range(h->dev[0].sd, SIMDEV_OP_READ, 8, 8, -EIO, -1);
	h_sweep_lost(h);
	assert_int_equal(h->failures, 1);
	free_h(h);
}

/* In a lossy run an older version is never accepted: only -EIO is. */
static void test_lossy_refuses_older_data(void **st)
{
	struct harness *h = new_h();
	u8 p[H_SECT];
	struct h_io *io;

	(void)st;
	h->lossy = true;
	h->lose_window = true;
	assert_int_equal(op(h, VC_OP_WRITE, 0, 0, 4096), 0);
	/* the engine "lost" v2 and serves v1 */
	h_fill_sector(p, 0, 0, 1);
	simdev_poke(h->dev[0].sd, 0, p, H_SECT);
	io = h_io_new(h, 0, VC_OP_READ, 0, 0, 4096);
	io->tolerate_err = true;
	h_submit(h, io);
	h_wait(h, io);
	h_io_free(io);
	assert_int_equal(h->failures, 1);
	assert_int_equal(h->stale_tolerated, 0);
	free_h(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_superseded_discard_is_checked),
		cmocka_unit_test(test_pending_discard_accepts_old_data),
		cmocka_unit_test(test_failed_write_never_older),
		cmocka_unit_test(test_eio_only_for_lost_blocks),
		cmocka_unit_test(test_lossy_refuses_older_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
