// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the simulated devices themselves: the crash and model tests
 * are only as good as the durability rules simdev enforces.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "vc_posix.h"
#include "simdev.h"

struct req {
	struct vc_dev_io io;
	int done;
	int err;
	u8 data[4096];
};

static void end_io(struct vc_dev_io *io, int err)
{
	struct req *r = io->private;

	r->done++;
	r->err = err;
}

static void prep(struct req *r, struct simdev *d, int op, u32 flags,
		 u64 sector, u32 len, int fill)
{
	memset(r, 0, sizeof(*r));
	r->io.dev = simdev_dev(d);
	r->io.op = (u8)op;
	r->io.flags = flags;
	r->io.sector = sector;
	r->io.len = len;
	r->io.buf = vc_buf_wrap(r->data, sizeof(r->data));
	r->io.end_io = end_io;
	r->io.private = r;
	memset(r->data, fill, len);
}

static void fin(struct req *r)
{
	vc_buf_free(r->io.buf);
}

/* Submit synchronously (inline domain); returns the error. */
static int do_io(struct simdev *d, int op, u32 flags, u64 sector, u32 len,
		 int fill, u8 *out)
{
	struct req r;
	int err;

	prep(&r, d, op, flags, sector, len, fill);
	vc_dev_submit(&r.io);
	assert_int_equal(r.done, 1);
	if (out)
		memcpy(out, r.data, len);
	err = r.err;
	fin(&r);
	return err;
}

static u8 byte_at(struct simdev *d, u64 sector, bool durable)
{
	u8 b[512];

	if (durable)
		simdev_peek_durable(d, sector, b, 512);
	else
		simdev_peek(d, sector, b, 512);
	return b[0];
}

static struct simdev *mkdev(struct simdev_power *p, bool vol,
			    enum simdev_cut_mode m)
{
	struct simdev_config cfg = {
		.name = "t", .nr_sectors = 1024, .volatile_cache = vol,
		.cut_mode = m, .power = p, .seed = 42,
	};

	return simdev_new(&cfg);
}

static void test_volatile_flush(void **st)
{
	struct simdev *d = mkdev(NULL, true, SIMDEV_CUT_DROP_ALL);
	u8 buf[4096];

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 8, 4096, 0xaa, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 8, 4096, 0, buf), 0);
	assert_int_equal(buf[0], 0xaa);
	assert_int_equal(buf[4095], 0xaa);
	assert_int_equal(byte_at(d, 8, true), 0);
	assert_int_equal(simdev_volatile_sectors(d), 8);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	assert_int_equal(byte_at(d, 15, true), 0xaa);
	assert_int_equal(simdev_volatile_sectors(d), 0);
	/* after a flush a cut loses nothing */
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 100, 512, 0xbb, NULL), 0);
	simdev_power_cut(simdev_power_of(d));
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 8, 512, 0, buf), -EIO);
	simdev_power_restore(simdev_power_of(d));
	assert_int_equal(byte_at(d, 8, false), 0xaa);
	assert_int_equal(byte_at(d, 100, false), 0);
	simdev_free(d);
}

static void test_fua_and_preflush(void **st)
{
	struct simdev *d = mkdev(NULL, true, SIMDEV_CUT_DROP_ALL);
	struct simdev_stats s;

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 1, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 1, 512, 2, NULL),
			 0);
	assert_int_equal(byte_at(d, 0, true), 0);
	assert_int_equal(byte_at(d, 1, true), 2);
	/* FUA over a pending sector supersedes it */
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 5, 512, 3, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 5, 512, 4, NULL),
			 0);
	/* PREFLUSH makes the earlier writes durable, not this one */
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_PREFLUSH, 2, 512, 5,
			       NULL), 0);
	assert_int_equal(byte_at(d, 0, true), 1);
	assert_int_equal(byte_at(d, 2, true), 0);
	simdev_power_cut(simdev_power_of(d));
	simdev_power_restore(simdev_power_of(d));
	assert_int_equal(byte_at(d, 0, false), 1);
	assert_int_equal(byte_at(d, 1, false), 2);
	assert_int_equal(byte_at(d, 2, false), 0);
	assert_int_equal(byte_at(d, 5, false), 4);
	simdev_get_stats(d, &s);
	assert_int_equal(s.writes, 5);
	assert_int_equal(s.fua, 2);
	assert_int_equal(s.preflush, 1);
	assert_int_equal(s.cuts, 1);
	simdev_free(d);
}

static void test_discard_zeroes(void **st)
{
	struct simdev *d = mkdev(NULL, true, SIMDEV_CUT_DROP_ALL);

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 0, 4096, 9, NULL),
			 0);
	assert_int_equal(do_io(d, VC_DEV_DISCARD, 0, 2, 1024, 0, NULL), 0);
	assert_int_equal(byte_at(d, 2, false), 0);
	assert_int_equal(byte_at(d, 4, false), 9);
	/* the discard is volatile until flushed */
	assert_int_equal(byte_at(d, 2, true), 9);
	assert_true(simdev_pending_zeroes(d, 2));
	assert_false(simdev_pending_zeroes(d, 4));
	/* a later write does not hide it: a cut may keep the discard */
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 2, 512, 7, NULL), 0);
	assert_int_equal(byte_at(d, 2, false), 7);
	assert_true(simdev_pending_zeroes(d, 2));
	/* a FLUSH does */
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	assert_false(simdev_pending_zeroes(d, 2));
	assert_int_equal(byte_at(d, 2, true), 7);
	simdev_free(d);
}

static void test_out_of_range(void **st)
{
	struct simdev *d = mkdev(NULL, false, SIMDEV_CUT_DROP_ALL);

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 1023, 1024, 0, NULL), -EIO);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 1023, 512, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 100, 0, NULL), -EIO);
	simdev_free(d);
}

static void test_nonvolatile(void **st)
{
	struct simdev *d = mkdev(NULL, false, SIMDEV_CUT_DROP_ALL);

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 3, 512, 7, NULL), 0);
	simdev_power_cut(simdev_power_of(d));
	simdev_power_restore(simdev_power_of(d));
	assert_int_equal(byte_at(d, 3, false), 7);
	simdev_free(d);
}

/* Cut at the K-th META write in a domain of two devices. */
static void test_cut_at_meta_write(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE, 1);
	struct simdev *a = mkdev(p, true, SIMDEV_CUT_KEEP_ALL);
	struct simdev *b = mkdev(p, true, SIMDEV_CUT_DROP_ALL);

	(void)st;
	simdev_power_cut_at(p, 2, true);
	assert_int_equal(do_io(a, VC_DEV_WRITE, VC_DEV_META, 0, 512, 1, NULL),
			 0);
	assert_int_equal(do_io(b, VC_DEV_WRITE, 0, 0, 512, 2, NULL), 0);
	assert_int_equal(do_io(a, VC_DEV_WRITE, 0, 1, 512, 3, NULL), 0);
	assert_false(simdev_power_is_cut(p));
	/* second META write: power goes, the write is not applied */
	assert_int_equal(do_io(b, VC_DEV_WRITE, VC_DEV_META, 5, 512, 4, NULL),
			 -EIO);
	assert_true(simdev_power_is_cut(p));
	assert_int_equal(do_io(a, VC_DEV_READ, 0, 0, 512, 0, NULL), -EIO);
	simdev_power_restore(p);
	/* a keeps its volatile part (KEEP_ALL), b drops it */
	assert_int_equal(byte_at(a, 0, false), 1);
	assert_int_equal(byte_at(a, 1, false), 3);
	assert_int_equal(byte_at(b, 0, false), 0);
	assert_int_equal(byte_at(b, 5, false), 0);
	assert_int_equal(simdev_power_writes(p, false), 4);
	assert_int_equal(simdev_power_writes(p, true), 2);
	simdev_free(a);
	simdev_free(b);
	simdev_power_free(p);
}

/* Random cut modes are deterministic per seed and keep a strict subset. */
static void test_random_cut_modes(void **st)
{
	int mode, i, kept[2];

	(void)st;
	for (mode = SIMDEV_CUT_RANDOM_WRITES; mode <= SIMDEV_CUT_RANDOM_SECTORS;
	     mode++) {
		for (i = 0; i < 2; i++) {
			struct simdev *d = mkdev(NULL, true, mode);
			int w, s;

			for (w = 0; w < 64; w++)
				assert_int_equal(do_io(d, VC_DEV_WRITE, 0,
						       w * 8, 4096, w + 1,
						       NULL), 0);
			simdev_power_cut(simdev_power_of(d));
			simdev_power_restore(simdev_power_of(d));
			kept[i] = 0;
			for (w = 0; w < 64; w++) {
				int n = 0;

				for (s = 0; s < 8; s++)
					n += byte_at(d, w * 8 + s, false) ==
					     w + 1;
				if (mode == SIMDEV_CUT_RANDOM_WRITES)
					assert_true(n == 0 || n == 8);
				kept[i] += n;
			}
			simdev_free(d);
		}
		assert_int_equal(kept[0], kept[1]);
		assert_true(kept[0] > 0 && kept[0] < 64 * 8);
	}
}

static void test_error_injection(void **st)
{
	struct simdev *d = mkdev(NULL, false, SIMDEV_CUT_DROP_ALL);
	int rule, i, fails = 0;

	(void)st;
	rule = simdev_error_range(d, SIMDEV_OP_READ, 100, 8, -EIO, 2);
	assert_true(rule >= 0);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 93, 4096, 0, NULL), -EIO);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 100, 512, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 107, 512, 0, NULL), -EIO);
	/* count exhausted */
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 100, 512, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 108, 512, 0, NULL), 0);
	rule = simdev_error_range(d, SIMDEV_OP_WRITE, 0, 1, -ENOSPC, -1);
	for (i = 0; i < 3; i++)
		assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0, NULL),
				 -ENOSPC);
	simdev_error_remove(d, rule);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0, NULL), 0);
	/* the 3rd META write fails, only that one */
	simdev_error_at_write(d, 3, true, -EIO);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_META, 0, 512, 0, NULL),
			 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_META, 0, 512, 0, NULL),
			 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_META, 0, 512, 0, NULL),
			 -EIO);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_META, 0, 512, 0, NULL),
			 0);
	/* the 2nd FLUSH fails, only that one; writes do not count */
	simdev_error_at_flush(d, 2, -EIO);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_PREFLUSH, 0, 512, 0,
			       NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), -EIO);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	/* a failed write leaves the old data */
	simdev_error_at_write(d, 1, false, -EIO);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 50, 512, 0x33, NULL), -EIO);
	assert_int_equal(byte_at(d, 50, false), 0);
	simdev_error_random(d, SIMDEV_OP_READ, 100000, -EIO);
	for (i = 0; i < 1000; i++)
		fails += do_io(d, VC_DEV_READ, 0, 0, 512, 0, NULL) != 0;
	assert_true(fails > 50 && fails < 200);
	simdev_error_clear(d);
	assert_int_equal(do_io(d, VC_DEV_READ, 0, 0, 512, 0, NULL), 0);
	simdev_free(d);
}

/*
 * Queued model: data lands at completion; a FLUSH only covers writes
 * completed before it was submitted.
 */
static void test_queued_semantics(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_QUEUED, 9);
	struct simdev *d = mkdev(p, true, SIMDEV_CUT_DROP_ALL);
	struct req w1, w2, fl, rd;

	(void)st;
	prep(&w1, d, VC_DEV_WRITE, 0, 0, 512, 0x11);
	vc_dev_submit(&w1.io);
	assert_int_equal(w1.done, 0);
	prep(&rd, d, VC_DEV_READ, 0, 0, 512, 0x77);
	vc_dev_submit(&rd.io);
	assert_int_equal(simdev_power_inflight(p), 2);
	/* the read may complete before or after the write */
	assert_int_equal(simdev_complete(p, 0), 2);
	assert_true(rd.data[0] == 0x11 || rd.data[0] == 0);
	assert_int_equal(w1.done, 1);
	/* w2 completes only after the flush was submitted: not covered */
	prep(&w2, d, VC_DEV_WRITE, 0, 1, 512, 0x22);
	vc_dev_submit(&w2.io);
	prep(&fl, d, VC_DEV_FLUSH, 0, 0, 0, 0);
	vc_dev_submit(&fl.io);
	simdev_drain(p);
	assert_int_equal(byte_at(d, 0, true), 0x11);
	assert_int_equal(byte_at(d, 1, true), 0);
	/* power cut with a write queued: it never lands, fails */
	fin(&w1);
	prep(&w1, d, VC_DEV_WRITE, 0, 2, 512, 0x33);
	vc_dev_submit(&w1.io);
	simdev_power_cut(p);
	assert_int_equal(simdev_complete(p, 0), 1);
	assert_int_equal(w1.err, -EIO);
	simdev_power_restore(p);
	assert_int_equal(byte_at(d, 2, false), 0);
	assert_int_equal(byte_at(d, 1, false), 0);
	fin(&w1);
	fin(&w2);
	fin(&fl);
	fin(&rd);
	simdev_free(d);
	simdev_power_free(p);
}

/*
 * Torn mode: the write being cut reaches the media partially (sector by
 * sector) and, when it carries PREFLUSH, only after the earlier writes.
 */
static void test_torn_cut_write(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE, 1);
	struct simdev *d = mkdev(p, true, SIMDEV_CUT_RANDOM_SECTORS);
	int s, kept = 0;

	(void)st;
	/* an earlier write, pending in the volatile cache */
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 100, 512, 0x55, NULL), 0);
	simdev_power_cut_at(p, 1, true);
	/* a 4 KiB metadata write with PREFLUSH: the power goes */
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_PREFLUSH | VC_DEV_META,
			       0, 4096, 0x77, NULL), -EIO);
	assert_true(simdev_power_is_cut(p));
	simdev_power_restore(p);
	/* its preflush made the earlier write durable */
	assert_int_equal(byte_at(d, 100, false), 0x55);
	for (s = 0; s < 8; s++) {
		u8 b = byte_at(d, (u64)s, false);

		assert_true(b == 0 || b == 0x77);
		kept += b == 0x77;
	}
	print_message("  torn write: %d of 8 sectors reached the media\n",
		      kept);
	simdev_free(d);
	simdev_power_free(p);
}

/*
 * A FLUSH covers a write that a newer, uncovered write to the same sector
 * replaced in the volatile cache: the sector must not fall back to data
 * older than the covered write.
 */
static void test_flush_covers_replaced_write(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_QUEUED, 5);
	struct simdev *d = mkdev(p, true, SIMDEV_CUT_DROP_ALL);
	struct req a, fl, b;

	(void)st;
	prep(&a, d, VC_DEV_WRITE, 0, 0, 512, 0x0a);
	vc_dev_submit(&a.io);
	simdev_drain(p);
	prep(&fl, d, VC_DEV_FLUSH, 0, 0, 0, 0);
	vc_dev_submit(&fl.io);
	prep(&b, d, VC_DEV_WRITE, 0, 0, 512, 0x0b);
	vc_dev_submit(&b.io);
	/* b lands before the flush completes */
	assert_int_equal(simdev_complete_match(p, d, VC_DEV_WRITE, false), 1);
	assert_int_equal(simdev_complete_match(p, d, VC_DEV_FLUSH, false), 1);
	simdev_power_cut(p);
	simdev_power_restore(p);
	assert_true(byte_at(d, 0, false) == 0x0a || byte_at(d, 0, false) == 0x0b);
	fin(&a);
	fin(&fl);
	fin(&b);
	simdev_free(d);
	simdev_power_free(p);
}

/*
 * Any unflushed version of a sector may survive a cut, older ones
 * included (torn mode), never one that was not written, never one older
 * than the durable version.
 */
static void test_older_versions_survive(void **st)
{
	bool seen[4] = { false };
	u64 seed;

	(void)st;
	for (seed = 1; seed <= 64; seed++) {
		struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE,
							  seed);
		struct simdev_config cfg = {
			.name = "t", .nr_sectors = 64, .volatile_cache = true,
			.cut_mode = SIMDEV_CUT_RANDOM_SECTORS, .power = p,
			.seed = seed,
		};
		struct simdev *d = simdev_new(&cfg);
		u8 b;

		assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 1, NULL), 0);
		assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
		assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 2, NULL), 0);
		assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 3, NULL), 0);
		simdev_power_cut(p);
		simdev_power_restore(p);
		b = byte_at(d, 0, false);
		assert_true(b >= 1 && b <= 3);
		seen[b] = true;
		simdev_free(d);
		simdev_power_free(p);
	}
	print_message("  survivors seen: v1 %d v2 %d v3 %d\n", seen[1], seen[2],
		      seen[3]);
	assert_true(seen[1] && seen[2] && seen[3]);
}

/* A FLUSH makes the versions before it durable, not the ones after. */
static void test_flush_persists_covered_version(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE, 3);
	struct simdev *d = mkdev(p, true, SIMDEV_CUT_DROP_ALL);

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0x11, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0x22, NULL), 0);
	assert_int_equal(byte_at(d, 0, false), 0x22);
	assert_int_equal(byte_at(d, 0, true), 0x11);
	simdev_power_cut(p);
	simdev_power_restore(p);
	assert_int_equal(byte_at(d, 0, false), 0x11);
	simdev_free(d);
	simdev_power_free(p);
}

/* Writes in flight at a cut: none land (drop), all land (keep). */
static void test_inflight_writes_at_cut(void **st)
{
	int mode;

	(void)st;
	for (mode = 0; mode < 2; mode++) {
		struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_QUEUED,
							  9);
		struct simdev *d = mkdev(p, true, mode ? SIMDEV_CUT_KEEP_ALL :
						  SIMDEV_CUT_DROP_ALL);
		struct simdev_stats ss;
		struct req a, b;

		prep(&a, d, VC_DEV_WRITE, VC_DEV_FUA, 0, 512, 0x31);
		prep(&b, d, VC_DEV_WRITE, 0, 8, 512, 0x32);
		vc_dev_submit(&a.io);
		vc_dev_submit(&b.io);
		simdev_power_cut(p);
		simdev_drain(p);
		assert_int_equal(a.err, -EIO);
		assert_int_equal(b.err, -EIO);
		simdev_power_restore(p);
		simdev_get_stats(d, &ss);
		assert_int_equal(byte_at(d, 0, false), mode ? 0x31 : 0);
		assert_int_equal(byte_at(d, 8, false), mode ? 0x32 : 0);
		assert_int_equal(ss.landed_at_cut, mode ? 2 : 0);
		fin(&a);
		fin(&b);
		simdev_free(d);
		simdev_power_free(p);
	}
}

/* A lying device: FLUSH and FUA do nothing, a cut loses everything. */
static void test_ignore_flush(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE, 4);
	struct simdev_config cfg = {
		.name = "liar", .nr_sectors = 64, .volatile_cache = true,
		.cut_mode = SIMDEV_CUT_DROP_ALL, .power = p, .seed = 4,
		.ignore_flush = true,
	};
	struct simdev *d = simdev_new(&cfg);

	(void)st;
	assert_int_equal(do_io(d, VC_DEV_WRITE, 0, 0, 512, 0x41, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_FLUSH, 0, 0, 0, 0, NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 8, 512, 0x42,
			       NULL), 0);
	simdev_power_cut(p);
	simdev_power_restore(p);
	assert_int_equal(byte_at(d, 0, false), 0);
	assert_int_equal(byte_at(d, 8, false), 0);
	simdev_free(d);
	simdev_power_free(p);
}

/* Cut at a completion: the I/O took effect, its submitter sees -EIO. */
static void test_cut_at_completion(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_INLINE, 6);
	struct simdev *d = mkdev(p, true, SIMDEV_CUT_DROP_ALL);

	(void)st;
	simdev_power_cut_at_completion(p, 2);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 0, 512, 0x51,
			       NULL), 0);
	assert_int_equal(do_io(d, VC_DEV_WRITE, VC_DEV_FUA, 8, 512, 0x52,
			       NULL), -EIO);
	assert_true(simdev_power_is_cut(p));
	simdev_power_restore(p);
	assert_int_equal(byte_at(d, 0, false), 0x51);
	assert_int_equal(byte_at(d, 8, false), 0x52);	/* it landed */
	simdev_free(d);
	simdev_power_free(p);
}

static void test_threaded_completion(void **st)
{
	struct simdev_power *p = simdev_power_new(SIMDEV_COMPLETE_THREAD, 3);
	struct simdev *d = mkdev(p, false, SIMDEV_CUT_DROP_ALL);
	static struct req r[64];
	int i;

	(void)st;
	for (i = 0; i < 64; i++) {
		prep(&r[i], d, VC_DEV_WRITE, 0, i * 8, 4096, i);
		vc_dev_submit(&r[i].io);
	}
	simdev_drain(p);
	for (i = 0; i < 64; i++) {
		assert_int_equal(r[i].done, 1);
		assert_int_equal(r[i].err, 0);
		assert_int_equal(byte_at(d, i * 8 + 7, false), i);
		fin(&r[i]);
	}
	simdev_free(d);
	simdev_power_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_volatile_flush),
		cmocka_unit_test(test_fua_and_preflush),
		cmocka_unit_test(test_discard_zeroes),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_nonvolatile),
		cmocka_unit_test(test_cut_at_meta_write),
		cmocka_unit_test(test_random_cut_modes),
		cmocka_unit_test(test_error_injection),
		cmocka_unit_test(test_queued_semantics),
		cmocka_unit_test(test_torn_cut_write),
		cmocka_unit_test(test_flush_covers_replaced_write),
		cmocka_unit_test(test_threaded_completion),
		cmocka_unit_test(test_older_versions_survive),
		cmocka_unit_test(test_flush_persists_covered_version),
		cmocka_unit_test(test_inflight_writes_at_cut),
		cmocka_unit_test(test_ignore_flush),
		cmocka_unit_test(test_cut_at_completion),
	};

	return cmocka_run_group_tests_name("simdev", tests, NULL, NULL);
}
