// SPDX-License-Identifier: GPL-2.0
/*
 * Crash at every metadata write index.
 *
 * For a host workload and for each management operation (create, attach,
 * mode switch with background drain, flush on demand, detach, clean
 * shutdown), a dry run counts the metadata writes (VC_DEV_META) the
 * operation issues: N.  Then for K = 1..N the whole scenario is replayed
 * from scratch (deterministic: inline devices, virtual clock, manual
 * work) with the power cut when metadata write K is submitted.  The
 * volatile part of every device is dropped (or a seeded subset kept), the
 * cache is loaded from the cache device, every backing device re-attached
 * and read back in full through the engine, and:
 *   - every write acknowledged before a completed FLUSH (or with FUA) is
 *     present, nothing older than the durable version comes back, nothing
 *     that was never written to that sector comes back;
 *   - the blocks recovered as dirty are at least the blocks whose data
 *     exists only in the cache, and at most the blocks that were dirty
 *     when the power went (plus those a write in flight was touching):
 *     not "everything valid" as after a dm-cache crash.
 *
 *   crash [--scenario NAME|all] [--stride S] [--max-k N] [--k K] [--seed N]
 *         [--cut-mode drop|random|torn|keep] [--queued] [--block-size B]
 *         [--cut-at meta|write|completion]
 *         [--errors none|single|repeated|enomem|flush|lossy] [--damage-sb]
 *         [--trace DEV:SECTOR]
 *         [-v]
 *
 * --queued: devices complete in a seeded random order, so several writes
 * (data, records, cleaning) are in flight when the power goes; those land
 * or not, in any order, by the cut mode.
 * --cut-at: what K counts: metadata writes (default), every write (data
 * and metadata, cache and backing devices), or every I/O completion (the
 * I/O took effect, the power goes before the engine hears of it).
 * --errors: the armed phase also meets device errors: one cache write
 * failing (its index varies with K), 2% of cache writes failing, or I/O-path
 * allocations failing now and then (ENOMEM).  Failed host writes may leave
 * either data; everything acknowledged is still checked.
 *
 * --errors flush: the cache device's FLUSH fails (the K-dependent one of
 * the armed phase, and 5% at random): a FLUSH or FUA write acknowledged
 * anyway must be durable.
 * --errors lossy: 2% of cache reads and writes and of backing writes fail:
 * dirty data may be lost, and a lost block must then read as -EIO after
 * the reload (and before), never as an older version.
 * --damage-sb: after the cut, before the reload, the newest superblock
 * copy is damaged (the loader takes the older one: it must not trust
 * clean records that blocks reused since made stale).
 *
 * Scenarios beyond the management operations: "lazy-shutdown" leaves
 * group-commit records pending (commit_ms 10 s, plain writes) when
 * the clean shutdown starts; "reloaded" runs the workload on a cache
 * that was shut down cleanly and loaded again; "mode-wt-busy" leaves
 * write-back for write-through while host writes go on (over blocks just
 * written back).  A clean shutdown that
 * returned 0 makes every acknowledged write durable: the model holds it
 * to that.
 *
 * Each scenario reports its cut points, failures, refused loads, the range
 * of dirty blocks recovered and the number of distinct media states the
 * cuts left (hash of every device's durable image).  A scenario with no
 * cut point fails (it proved nothing).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "vc_format.h"

enum scen {
	S_WORKLOAD, S_WORKLOAD_CLEAN, S_CREATE, S_ATTACH, S_MODE, S_MODE_PT, S_FLUSH, S_DETACH,
	S_SHUTDOWN, S_LAZY_SHUTDOWN, S_RELOADED, S_MODE_WT_BUSY, S_NR
};

enum cut_at { CUT_META, CUT_WRITE, CUT_COMPLETION };
static const char *const cut_at_name[] = { "meta", "write", "completion" };

enum err_mode { ERR_NONE, ERR_SINGLE, ERR_REPEATED, ERR_ENOMEM, ERR_FLUSH,
	       ERR_LOSSY, ERR_NR };
static const char *const err_name[] = { "none", "single", "repeated",
					"enomem", "flush", "lossy" };

static const char *const scen_name[S_NR] = {
	"workload", "workload-clean", "create", "attach", "mode-switch", "mode-pt-busy",
	"flush-on-demand", "detach", "shutdown", "lazy-shutdown", "reloaded",
	"mode-wt-busy",
};

struct opts {
	u64 seed;
	u64 stride;
	u64 max_k;
	enum simdev_cut_mode cut_mode;
	int verbose;
	int only;		/* scenario or -1 */
	bool queued;		/* devices complete in seeded random order */
	u32 block_size;
	u64 only_k;		/* one cut point, 0 = all */
	enum cut_at cut_at;
	enum err_mode errors;
	int policy;		/* enum vc_policy of the cache */
	bool damage_sb;		/* damage the newest superblock copy */
	int trace_dev;		/* --trace D:S (replays) */
	long long trace_sector;
};

struct result {
	u64 meta_writes;	/* in the armed phase */
	bool cut;
	int load_err;
	u64 failures;
	u64 dirty_loaded, dirty_lo, dirty_hi;
	u64 state;		/* hash of the durable images after the cut */
	bool damaged;		/* a superblock copy was damaged */
};

/* Figures. */
static u64 total_points, total_failures, total_sectors, total_strict,
	   total_damaged, total_superseded, total_lost;

static u64 dirty_now(struct harness *h)
{
	struct vc_stats st;

	if (!h->c)
		return 0;
	vc_cache_get_stats(h->c, &st);
	return st.dirty_blocks;
}

/* State across the armed phase for the dirty upper bound. */
struct track {
	u64 dirty_max;		/* max dirty seen before an op */
	u64 span;		/* blocks the op in progress touches */
};

static void before_op(struct harness *h, struct track *t, u32 len)
{
	u64 d = dirty_now(h);
	u64 span = len ? (len + h->cfg.block_size - 1) / h->cfg.block_size + 1
		       : 0;

	if (d > t->dirty_max)
		t->dirty_max = d;
	if (span > t->span)
		t->span = span;
}

static bool is_cut(struct harness *h)
{
	return simdev_power_is_cut(h->pw);
}

/* Denied submitter of the workload-clean scenario (0: none). */
static s32 bypass_pid;
/* Errors are being injected in the armed phase: failures are allowed. */
static enum err_mode injecting;

/* Errors may explain a failure: the power is cut, or errors are on. */
static bool excused(struct harness *h)
{
	return is_cut(h) || injecting != ERR_NONE;
}

/* Host op from @pid; errors are expected once the power is gone. */
static void hop_pid(struct harness *h, struct track *t, int d, int op,
		    u32 flags, u64 sector, u32 len, s32 pid)
{
	struct h_io *io;

	if (!h->c || h->dev[d].id == H_NO_ID)
		return;
	before_op(h, t, len);
	io = h_io_new(h, d, op, flags, sector, len);
	io->hio.pid = pid;
	io->hio.tgid = pid;
	io->tolerate_err = true;
	if (injecting == ERR_ENOMEM && !h_rand_below(h, 6))
		vc_posix_fail_io_allocs(1 + h_rand_below(h, 2));
	h_submit(h, io);
	h_wait(h, io);
	vc_posix_fail_io_allocs(0);
	if (io->err && !excused(h))
		h_fail(h, "host op %d dev %d sector %llu failed (%d) with power on",
		       op, d, (unsigned long long)sector, io->err);
	h_io_free(io);
}

static void hop(struct harness *h, struct track *t, int d, int op, u32 flags,
		u64 sector, u32 len)
{
	hop_pid(h, t, d, op, flags, sector, len, 1);
}

/*
 * The deterministic host workload: writes (some FUA, some PREFLUSH) over
 * a hot area, reads that fill the cache with clean blocks, FLUSHes,
 * discards, partial-block writes.
 */
static void workload(struct harness *h, struct track *t, u64 nops)
{
	u64 spb = h->cfg.block_size / H_SECT, i;

	for (i = 0; i < nops && !is_cut(h) && !h->failures; i++) {
		int d = (int)h_rand_below(h, h->o.ndev);
		u64 nblk = h->dev[d].nr_sectors / spb;
		u64 blk = h_rand_below(h, nblk / 2);
		u64 x = h_rand_below(h, 100);
		u32 len = (u32)(spb * H_SECT * (1 + h_rand_below(h, 4)));
		u64 sec = blk * spb;

		if (sec + len / H_SECT > h->dev[d].nr_sectors)
			continue;
		if (x < 35) {
			hop(h, t, d, VC_OP_READ, 0, sec, len);
		} else if (x < 75) {
			hop(h, t, d, VC_OP_WRITE, 0, sec, len);
		} else if (x < 80) {
			hop(h, t, d, VC_OP_WRITE, VC_IO_FUA, sec, len);
		} else if (x < 84) {
			hop(h, t, d, VC_OP_WRITE, VC_IO_PREFLUSH, sec, len);
		} else if (x < 88) {
			/* partial block */
			hop(h, t, d, VC_OP_WRITE, 0, sec + 1, H_SECT * 3);
		} else if (x < 91 && bypass_pid) {
			/* around the cache: the submitter is denied */
			hop_pid(h, t, d, VC_OP_WRITE,
				h_rand_below(h, 2) ? VC_IO_FUA : 0, sec, len,
				bypass_pid);
		} else if (x < 94) {
			hop(h, t, d, VC_OP_FLUSH, 0, 0, 0);
		} else {
			hop(h, t, d, VC_OP_DISCARD, 0, sec, len);
		}
		h_advance(h, 50000);
		h_pump(h);
	}
}

/* Pre-phase shared by the management scenarios: dirty and clean data. */
static void prepare(struct harness *h, struct track *t)
{
	u64 spb = h->cfg.block_size / H_SECT, b;
	u64 nblk = h->dev[0].nr_sectors / spb;
	u64 b1 = nblk / 2, b2 = nblk * 3 / 4;

	workload(h, t, 120);
	/* flush dev 1 on demand: its blocks become clean but stay cached */
	if (h->o.ndev > 1 && h->dev[1].id != H_NO_ID && !h->failures)
		vc_cache_flush(h->c, h->dev[1].id, NULL, NULL);
	/* a few more dirty blocks on dev 0, acknowledged-durable by FLUSH */
	for (b = 0; b < 8 && b1 + b * 3 < b2; b++)
		hop(h, t, 0, VC_OP_WRITE, 0, (b1 + b * 3) * spb,
		    h->cfg.block_size);
	hop(h, t, 0, VC_OP_FLUSH, 0, 0, 0);
	/* and some acknowledged but not flushed */
	for (b = 0; b < 4 && b2 + b < nblk; b++)
		hop(h, t, 0, VC_OP_WRITE, 0, (b2 + b) * spb,
		    h->cfg.block_size);
}

static void setup_harness(struct harness *h, const struct opts *o)
{
	struct h_opts ho = {
		.seed = o->seed, .ndev = 2,
		.backing_sectors = 2 * 2048,	/* 2 MiB */
		.cache_sectors = 1024 * 2,	/* 1 MiB */
		.block_size = o->block_size,
		.completion = o->queued ? SIMDEV_COMPLETE_QUEUED :
					  SIMDEV_COMPLETE_INLINE,
		.cut_mode = o->cut_mode,
		.volatile_backing = true,
		.verbose = o->verbose,
	};
	int d;

	if (h_init(h, &ho)) {
		fprintf(stderr, "crash: harness init failed\n");
		exit(2);
	}
	h->trace_dev = o->trace_dev;
	h->trace_sector = o->trace_sector;
	if (o->trace_sector >= 0) {
		simdev_trace(h->dev[o->trace_dev].sd, o->trace_sector);
		if (getenv("MODEL_TRACE_CACHE"))
			simdev_trace(h->csd, -2);
	}
	for (d = 0; d < (int)ho.ndev; d++)
		h_prefill(h, d);
	h->cfg.mode = VC_MODE_WB;
	h->cfg.policy = (u32)o->policy;
	/* the cleaner only runs when a scenario asks for it */
	h->cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 100;
	h->cfg.params.v[VC_P_DIRTY_LOW_PCT] = 99;
	h->cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	h->cfg.params.v[VC_P_IDLE_MS] = 0;
}

/*
 * Pump the engine until nothing is dirty or the power is cut; with @busy,
 * host I/O goes on meanwhile (leaving write-back does not wait).
 */
static void drive_until_clean(struct harness *h, struct track *t, bool busy)
{
	unsigned int i;

	for (i = 0; i < 200000 && !is_cut(h) && !h->failures; i++) {
		before_op(h, t, 0);
		if (!dirty_now(h))
			break;
		if (busy && i % 4 == 0)
			workload(h, t, 1);
		if (!h_pump(h))
			h_advance(h, 10000000);
		if (i % 64 == 0)
			vc_cache_kick_cleaner(h->c);
	}
}

/* What K counts, so far in this run. */
static u64 counted(struct harness *h, enum cut_at a)
{
	if (a == CUT_COMPLETION)
		return simdev_power_completions(h->pw);
	return simdev_power_writes(h->pw, a == CUT_META);
}

/* Arm the armed phase's device errors (they vary with the cut point). */
static void inject(struct harness *h, const struct opts *o, u64 k)
{
	injecting = o->errors;
	switch (o->errors) {
	case ERR_SINGLE:
		simdev_error_at_write(h->csd, 1 + (k * 7 + o->seed) % 23, false,
				      -EIO);
		break;
	case ERR_REPEATED:
		simdev_error_random(h->csd, SIMDEV_OP_WRITE, 20000, -EIO);
		break;
	case ERR_FLUSH:
		/*
		 * Not in the dry run (K = 0), which counts the cut points:
		 * were its failing FLUSH a shutdown's first, the shutdown
		 * would stop before any write and leave none (a failure).
		 */
		if (k)
			simdev_error_at_flush(h->csd,
					      1 + (k * 5 + o->seed) % 13, -EIO);
		simdev_error_random(h->csd, SIMDEV_OP_FLUSH, 50000, -EIO);
		break;
	case ERR_LOSSY: {
		u32 d;

		simdev_error_random(h->csd, SIMDEV_OP_READ | SIMDEV_OP_WRITE,
				    20000, -EIO);
		for (d = 0; d < h->o.ndev; d++)
			simdev_error_random(h->dev[d].sd, SIMDEV_OP_WRITE,
					    20000, -EIO);
		h->lossy = true;
		h->lose_window = true;
		break;
	}
	default:
		break;
	}
}

/* Hash of every device's durable image: the state a cut left. */
static u64 media_hash(struct harness *h)
{
	u8 sec[H_SECT];
	u64 x = 0xcbf29ce484222325ULL, i, n;
	u32 d, j;

	for (d = 0; d <= h->o.ndev; d++) {
		struct simdev *sd = d < h->o.ndev ? h->dev[d].sd : h->csd;

		n = simdev_dev(sd)->nr_sectors;
		for (i = 0; i < n; i++) {
			simdev_peek_durable(sd, i, sec, H_SECT);
			for (j = 0; j < H_SECT; j += 8) {
				u64 w;

				memcpy(&w, sec + j, 8);
				x = (x ^ w) * 0x100000001b3ULL;
			}
		}
	}
	return x;
}

/*
 * Damage the newest valid superblock copy's durable image (both copies
 * must carry the magic; the older one is left alone).  True if done.
 */
static bool damage_newest_sb(struct harness *h)
{
	static const u64 where[2] = { VC_SB_SECTOR, VC_SB2_SECTOR };
	struct vc_sb sb[2];
	u8 sec[H_SECT];
	int i, newest;

	for (i = 0; i < 2; i++) {
		simdev_peek_durable(h->csd, where[i], sec, H_SECT);
		memcpy(&sb[i], sec, sizeof(sb[i]));
		if (vc_le64_to_cpu(sb[i].magic) != VC_SB_MAGIC)
			return false;
	}
	newest = vc_le64_to_cpu(sb[1].seq) > vc_le64_to_cpu(sb[0].seq);
	simdev_peek_durable(h->csd, where[newest], sec, H_SECT);
	memset(sec + 8, 0x5a, 64);	/* the crc no longer matches */
	simdev_poke(h->csd, where[newest], sec, H_SECT);
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Run scenario @s, cutting at write (or completion) @k of the armed phase
 * (0: never).  Fills @res.
 */
static void run(const struct opts *o, int s, u64 k, struct result *res)
{
	static struct harness hh;
	struct harness *h = &hh;
	struct track t = { 0 };
	u64 base, lo = 0;
	char err[160] = "";
	struct vc_stats st0 = { 0 }, st1;
	int ret, d;
	bool freed = false, shut_clean = false;

	memset(res, 0, sizeof(*res));
	setup_harness(h, o);
	snprintf(h->last_op, sizeof(h->last_op), "%s K=%llu", scen_name[s],
		 (unsigned long long)k);

	/* 10 s (the most) between group commits: lazy records stay pending */
	if (s == S_LAZY_SHUTDOWN)
		h->cfg.params.v[VC_P_COMMIT_MS] = 10000;
	if (s != S_CREATE) {
		ret = h_create(h);
		if (ret) {
			h_fail(h, "create: %d", ret);
			goto out;
		}
		if (s == S_ATTACH) {
			vc_cache_detach(h->c, h->dev[1].id, 0);
			h->dev[1].id = H_NO_ID;
		}
		if (s != S_WORKLOAD)
			prepare(h, &t);
		if (s == S_LAZY_SHUTDOWN) {
			/*
			 * Plain writes, no FLUSH, to blocks nothing cached
			 * yet (new dirty blocks): their DIRTY records wait
			 * for a group commit 10 s away (pre-phase: 2 s), their
			 * data in the cache device's volatile cache.
			 */
			u64 spb = h->cfg.block_size / H_SECT, b;
			u64 nblk = h->dev[0].nr_sectors / spb;

			for (b = 0; b < 24 && nblk * 7 / 8 + b / 2 < nblk; b++)
				hop(h, &t, (int)(b % h->o.ndev), VC_OP_WRITE, 0,
				    (nblk * 7 / 8 + b / 2) * spb,
				    h->cfg.block_size);
		}
		if (s == S_RELOADED && !h->failures) {
			/*
			 * Clean shutdown, load (marks the superblocks not
			 * clean), then blocks get reused before the cut.
			 */
			ret = vc_cache_shutdown(h->c, 0);
			h->c = NULL;
			if (ret) {
				h_fail(h, "shutdown before reload: %d", ret);
				goto out;
			}
			h_all_durable(h);
			ret = h_load(h, err, sizeof(err));
			if (ret) {
				h_fail(h, "reload: %d (%s)", ret, err);
				goto out;
			}
			workload(h, &t, 60);
		}
		if (h->failures)
			goto out;
	}
	/*
	 * Let deferred metadata writes (clean records of blocks cleaned to
	 * make room) go out: the bound below is about the state at the cut.
	 */
	for (d = 0; d < 20 && h->c; d++) {
		h_advance(h, 100000000);
		h_pump(h);
	}
	h_quiesce(h);
	t = (struct track){ 0 };
	before_op(h, &t, 0);
	if (h->c)
		vc_cache_get_stats(h->c, &st0);
	base = counted(h, o->cut_at);
	if (o->cut_at == CUT_COMPLETION)
		simdev_power_cut_at_completion(h->pw, k);
	else
		simdev_power_cut_at(h->pw, k, o->cut_at == CUT_META);
	inject(h, o, k);

	switch (s) {
	case S_WORKLOAD:
	case S_RELOADED:
		workload(h, &t, 300);
		break;
	case S_WORKLOAD_CLEAN:
		/*
		 * The cleaner runs (age and watermark) while some writes go
		 * around the cache: records of cleaned blocks race with them.
		 */
		vc_cache_set_param(h->c, VC_P_MAX_DIRTY_AGE_MS, 200);
		vc_cache_set_param(h->c, VC_P_DIRTY_LOW_PCT, 5);
		vc_cache_set_param(h->c, VC_P_DIRTY_HIGH_PCT, 10);
		vc_pidlist_add(vc_cache_pidlist(h->c), VC_PID_DENY, 77);
		bypass_pid = 77;
		workload(h, &t, 300);
		bypass_pid = 0;
		break;
	case S_CREATE:
		ret = h_create(h);
		if (ret && !excused(h))
			h_fail(h, "create: %d", ret);
		if (!ret && !excused(h))
			workload(h, &t, 10);
		break;
	case S_ATTACH:
		ret = h_attach(h, 1);
		if (ret && !excused(h))
			h_fail(h, "attach: %d", ret);
		break;
	case S_MODE:
	case S_MODE_PT:
	case S_MODE_WT_BUSY:
		vc_cache_set_mode(h->c, s == S_MODE_PT ? VC_MODE_PT : VC_MODE_WT);
		/*
		 * mode-wt-busy: write-through writes and FLUSHes go on
		 * while the drain writes blocks back: they land on blocks
		 * whose clean records may not be durable yet.
		 */
		for (d = 0; s == S_MODE_WT_BUSY && d < 200 && !is_cut(h) &&
			    !h->failures; d++) {
			workload(h, &t, 1);
			if (d % 8 == 0)
				vc_cache_kick_cleaner(h->c);
			h_pump(h);
		}
		drive_until_clean(h, &t, s != S_MODE);
		if (!excused(h) && dirty_now(h))
			h_fail(h, "after leaving write-back: still %llu dirty",
			       (unsigned long long)dirty_now(h));
		break;
	case S_FLUSH:
		ret = vc_cache_flush(h->c, VC_DEV_ID_ALL, NULL, NULL);
		if (ret && !excused(h))
			h_fail(h, "flush on demand: %d", ret);
		break;
	case S_DETACH:
		ret = vc_cache_detach(h->c, h->dev[0].id, 0);
		if (ret && !excused(h))
			h_fail(h, "detach: %d", ret);
		/* once detached, the data must be home */
		if (!ret)
			h->dev[0].id = H_NO_ID;
		break;
	case S_SHUTDOWN:
	case S_LAZY_SHUTDOWN:
		ret = vc_cache_shutdown(h->c, 0);
		h->c = NULL;
		freed = true;
		if (ret && !excused(h))
			h_fail(h, "shutdown: %d", ret);
		/* a clean shutdown persisted everything acknowledged */
		if (!ret) {
			h_all_durable(h);
			shut_clean = true;
		}
		break;
	}
	res->meta_writes = counted(h, o->cut_at) - base;
	res->cut = is_cut(h);
	injecting = ERR_NONE;
	h->lossy = false;	/* lose_window stays: lost blocks may fail */
	for (d = 0; d < (int)h->o.ndev; d++)
		simdev_error_clear(h->dev[d].sd);
	simdev_error_clear(h->csd);
	vc_posix_fail_io_allocs(0);
	if (h->failures)
		goto out;
	/* No cut reached: cut now, after the operation completed. */
	if (!res->cut)
		simdev_power_cut(h->pw);
	before_op(h, &t, 0);
	h_quiesce(h);
	if (h->c && !freed) {
		vc_cache_abandon(h->c);
		h->c = NULL;
	}
	simdev_power_restore(h->pw);
	if (o->damage_sb)
		res->damaged = damage_newest_sb(h);
	res->state = media_hash(h);
	for (d = 0; d < (int)h->o.ndev; d++)
		lo += h_blocks_only_in_cache(h, d);
	ret = h_load(h, err, sizeof(err));
	res->load_err = ret;
	if (ret) {
		/*
		 * Only an interrupted create may leave nothing to load; the
		 * backing devices must then hold everything (nothing was
		 * cached yet).
		 */
		if (s == S_CREATE && (ret == -ENODATA || ret == -EUCLEAN)) {
			for (d = 0; d < (int)h->o.ndev; d++)
				h_verify_backing(h, d, true);
		} else {
			h_fail(h, "load after cut: %d (%s)", ret, err);
		}
		goto out;
	}
	res->dirty_loaded = dirty_now(h);
	/*
	 * After a clean shutdown every block comes back, clean or dirty
	 * (unless its superblock was damaged: the older copy says "not
	 * clean", so only the dirty ones do; or the shutdown failed, on an
	 * injected error: then it was no clean shutdown).
	 */
	if (shut_clean && !res->cut && !res->damaged) {
		vc_cache_get_stats(h->c, &st1);
		if (st1.valid_blocks != st0.valid_blocks ||
		    st1.dirty_blocks != st0.dirty_blocks)
			h_fail(h, "clean shutdown had %llu valid / %llu dirty blocks, reload has %llu / %llu",
			       (unsigned long long)st0.valid_blocks,
			       (unsigned long long)st0.dirty_blocks,
			       (unsigned long long)st1.valid_blocks,
			       (unsigned long long)st1.dirty_blocks);
	}
	res->dirty_lo = lo;
	res->dirty_hi = t.dirty_max + t.span;
	/* a block whose dirty data was lost comes back as a lost marker */
	vc_cache_get_stats(h->c, &st1);
	if (res->dirty_loaded + st1.lost_marked < lo)
		h_fail(h, "%llu blocks recovered dirty, but %llu blocks hold data only in the cache",
		       (unsigned long long)res->dirty_loaded,
		       (unsigned long long)lo);
	if (res->dirty_loaded > res->dirty_hi)
		h_fail(h, "%llu blocks recovered dirty, at most %llu were dirty at the cut",
		       (unsigned long long)res->dirty_loaded,
		       (unsigned long long)res->dirty_hi);
	h_verify_after_crash(h);
	h_check_device_rules(h);
	total_sectors += h->sectors_checked;
	total_strict += h->strict_after_crash;
	total_superseded += h->discard_superseded;
	total_lost += h->lost_reads;
out:
	res->failures = h->failures;
	h_fini(h);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: crash [--scenario NAME|all] [--stride S] [--max-k N] [--k K]\n"
		"             [--seed N] [--cut-mode drop|random|torn|keep] [--queued]\n"
		"             [--block-size B] [--cut-at meta|write|completion]\n"
		"             [--errors none|single|repeated|enomem|flush|lossy]\n"
		"             [--policy fifo|lru|s3fifo|tinylfu] [--damage-sb]\n"
		"             [--trace DEV:SECTOR] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "scenario", 1, NULL, 'S' }, { "stride", 1, NULL, 't' },
		{ "max-k", 1, NULL, 'm' }, { "seed", 1, NULL, 's' },
		{ "cut-mode", 1, NULL, 'c' }, { "k", 1, NULL, 'k' },
		{ "queued", 0, NULL, 'q' }, { "block-size", 1, NULL, 'b' }, { "verbose", 0, NULL, 'v' },
		{ "cut-at", 1, NULL, 'a' }, { "errors", 1, NULL, 'e' },
		{ "policy", 1, NULL, 'P' }, { "damage-sb", 0, NULL, 'D' },
		{ "trace", 1, NULL, 'T' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .seed = 1, .stride = 1, .max_k = 0, .only = -1,
			  .cut_mode = SIMDEV_CUT_DROP_ALL, .block_size = 4096,
			  .policy = VC_POLICY_LRU, .trace_sector = -1 };
	struct result dry, res;
	int c, s, bad_scen = 0;
	clock_t t0 = clock();

	while ((c = getopt_long(argc, argv, "S:t:m:s:c:k:qb:va:e:P:DT:", lo, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (sscanf(optarg, "%d:%lld", &o.trace_dev,
				   &o.trace_sector) != 2 || o.trace_dev < 0 ||
			    o.trace_dev > 1)
				usage();
			break;
		case 'D':
			o.damage_sb = true;
			break;
		case 'P':
			for (s = 0; s < VC_NR_POLICIES; s++)
				if (!strcmp(optarg, vc_policy_name((enum vc_policy)s)))
					break;
			if (s == VC_NR_POLICIES)
				usage();
			o.policy = s;
			break;
		case 'a':
			for (s = 0; s < 3; s++)
				if (!strcmp(optarg, cut_at_name[s]))
					break;
			if (s == 3)
				usage();
			o.cut_at = (enum cut_at)s;
			break;
		case 'e':
			for (s = 0; s < ERR_NR; s++)
				if (!strcmp(optarg, err_name[s]))
					break;
			if (s == ERR_NR)
				usage();
			o.errors = (enum err_mode)s;
			break;
		case 'S':
			if (!strcmp(optarg, "all"))
				break;
			for (s = 0; s < S_NR; s++)
				if (!strcmp(optarg, scen_name[s]))
					o.only = s;
			if (o.only < 0)
				usage();
			break;
		case 't':
			o.stride = strtoull(optarg, NULL, 0);
			if (!o.stride)
				usage();
			break;
		case 'm': o.max_k = strtoull(optarg, NULL, 0); break;
		case 'k': o.only_k = strtoull(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'c':
			if (optarg[0] >= '0' && optarg[0] <= '3' && !optarg[1])
				o.cut_mode = optarg[0] - '0';
			else if (!strcmp(optarg, "drop"))
				o.cut_mode = SIMDEV_CUT_DROP_ALL;
			else if (!strcmp(optarg, "random"))
				o.cut_mode = SIMDEV_CUT_RANDOM_WRITES;
			else if (!strcmp(optarg, "torn"))
				o.cut_mode = SIMDEV_CUT_RANDOM_SECTORS;
			else if (!strcmp(optarg, "keep"))
				o.cut_mode = SIMDEV_CUT_KEEP_ALL;
			else
				usage();
			break;
		case 'v': o.verbose++; break;
		case 'q': o.queued = true; break;
		case 'b': o.block_size = (u32)strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	printf("crash: seed %llu stride %llu cut-mode %d block %u%s, cut at every %s, errors %s, policy %s%s\n",
	       (unsigned long long)o.seed, (unsigned long long)o.stride,
	       o.cut_mode, o.block_size, o.queued ? " queued" : "",
	       cut_at_name[o.cut_at], err_name[o.errors],
	       vc_policy_name((enum vc_policy)o.policy),
	       o.damage_sb ? ", newest superblock damaged after the cut" : "");
	for (s = 0; s < S_NR; s++) {
		u64 k, n, points = 0, fails = 0, loads_refused = 0, states = 0;
		u64 dmin = ~0ULL, dmax = 0, *hashes;

		if (o.only >= 0 && s != o.only)
			continue;
		run(&o, s, 0, &dry);
		if (dry.failures) {
			printf("crash: %-16s dry run FAILED\n", scen_name[s]);
			bad_scen++;
			total_failures += dry.failures;
			continue;
		}
		n = dry.meta_writes;
		if (o.max_k && n > o.max_k)
			n = o.max_k;
		hashes = calloc(n / o.stride + 2, sizeof(*hashes));
		if (!hashes)
			abort();
		for (k = 1; k <= n; k += o.stride) {
			if (o.only_k && k != o.only_k)
				continue;
			run(&o, s, k, &res);
			hashes[points] = res.state;
			points++;
			total_damaged += res.damaged;
			if (res.load_err)
				loads_refused++;
			if (res.dirty_loaded < dmin)
				dmin = res.dirty_loaded;
			if (res.dirty_loaded > dmax)
				dmax = res.dirty_loaded;
			if (res.failures) {
				fails++;
				if (fails <= 3)
					printf("crash: %s: FAILED at K=%llu (replay: --scenario %s --k %llu --seed %llu --cut-mode %d --block-size %u --cut-at %s --errors %s --policy %s%s%s)\n",
					       scen_name[s],
					       (unsigned long long)k,
					       scen_name[s],
					       (unsigned long long)k,
					       (unsigned long long)o.seed,
					       o.cut_mode, o.block_size,
					       cut_at_name[o.cut_at],
					       err_name[o.errors],
					       vc_policy_name((enum vc_policy)o.policy),
					       o.queued ? " --queued" : "",
					       o.damage_sb ? " --damage-sb" : "");
			}
		}
		qsort(hashes, points, sizeof(*hashes), cmp_u64);
		for (k = 0; k < points; k++)
			states += !k || hashes[k] != hashes[k - 1];
		free(hashes);
		printf("crash: %-16s %5llu %s, %4llu cut points, %llu failed, %llu loads refused, dirty after reload %llu..%llu, %llu media states\n",
		       scen_name[s], (unsigned long long)dry.meta_writes,
		       o.cut_at == CUT_META ? "metadata writes" :
		       o.cut_at == CUT_WRITE ? "writes" : "completions",
		       (unsigned long long)points, (unsigned long long)fails,
		       (unsigned long long)loads_refused,
		       (unsigned long long)(points ? dmin : 0),
		       (unsigned long long)dmax, (unsigned long long)states);
		/* no cut point: the scenario proved nothing */
		if (!points) {
			printf("crash: %s: FAILED: no cut point (the armed phase counted %llu, --k %llu)\n",
			       scen_name[s], (unsigned long long)dry.meta_writes,
			       (unsigned long long)o.only_k);
			fails++;
		}
		fflush(stdout);
		total_points += points;
		total_failures += fails;
		if (fails)
			bad_scen++;
	}
	printf("crash: %llu cut points, %llu sectors verified (%llu after a failed write, held to never older; %llu discarded then durably rewritten, checked against the write), %llu lost blocks read as -EIO, %llu superblocks damaged, %.1f s CPU: %s\n",
	       (unsigned long long)total_points,
	       (unsigned long long)total_sectors,
	       (unsigned long long)total_strict,
	       (unsigned long long)total_superseded,
	       (unsigned long long)total_lost,
	       (unsigned long long)total_damaged,
	       (double)(clock() - t0) / CLOCKS_PER_SEC,
	       bad_scen ? "FAILED" : "OK");
	return bad_scen ? 1 : 0;
}
