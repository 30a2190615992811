/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness: drives the real engine on simulated devices (simdev) with a
 * virtual clock and manually pumped work, and keeps a reference model of
 * every backing device's contents.  Shared by the model test, the crash
 * test and the stress test.
 *
 * The model, per 512-byte sector of each backing device:
 *   cur     the version of the last acknowledged write (0 = zeroes: never
 *           written, or discarded);
 *   dur     the version known durable (lazily: while the sector's last
 *           acknowledged write predates the last completed FLUSH, cur is
 *           durable and dur is stale);
 *   hi      the highest version ever acknowledged for the sector;
 *   alt     after a discard, the pre-discard version (a read may still
 *           return it: discarded data is undefined but never older);
 *   unknown set when a write or discard to it failed (partial writes are
 *           allowed): a read accepts any data stamped for this sector, or
 *           zeroes; after a crash a failed write's sector still accepts
 *           nothing older than its durable version (the old data or the
 *           failed write's, "undefined but never older"), a failed
 *           discard's (uany) anything, as a completed discard's;
 *   lost    the engine found the block's dirty data lost to an injected
 *           error: reads of it may fail with -EIO (never return older
 *           data) until a write covers the whole block.
 * Every written sector carries a stamp (magic, device, sector, version)
 * and a filler derived from it, so a wrong read names what it got.
 */
#ifndef VC_HARNESS_H
#define VC_HARNESS_H

#include <stdio.h>

#include "vc_engine.h"
#include "vc_posix.h"
#include "vc_pidlist.h"
#include "simdev.h"

#define H_MAX_DEV	4
#define H_NO_ID		0xffffffffu
#define H_SECT		512u
#define H_HANG_NS	(3600ULL * 1000000000ULL)	/* one virtual hour */

struct h_dev {
	struct simdev *sd;
	char uuid[VC_UUID_LEN];
	u32 id;			/* engine id, H_NO_ID while detached */
	u64 nr_sectors;
	u32 *cur, *dur, *hi, *alt, *wepoch;
	u8 *unknown;
	u8 *uany;		/* unknown from a failed discard: any data */
	u8 *lost;		/* reads may fail with -EIO (lost marker) */
	u8 *zsince;		/* discarded since last known durable point */
	u8 *busy;		/* H_BUSY_*: host I/O in flight on the sector */
	struct h_io **rd;	/* the read in flight on the sector, if any */
	/* FLUSH is per device, as for any block device */
	u32 epoch;		/* FLUSH submissions so far + 1 */
	u32 durable_epoch;	/* writes with wepoch < this: durable */
};

struct h_opts {
	u64 seed;
	u32 ndev;		/* backing devices, 1..H_MAX_DEV */
	u64 backing_sectors;
	u64 cache_sectors;
	u32 block_size;
	enum simdev_completion completion;
	enum simdev_cut_mode cut_mode;
	bool volatile_backing;
	bool backing_ignores_flush;	/* a lying disk (documented loss) */
	int verbose;
};

struct h_io;

struct harness {
	struct h_opts o;
	struct simdev_power *pw;
	struct simdev *csd;		/* cache device */
	struct vc_cache *c;
	struct vc_cache_config cfg;
	struct h_dev dev[H_MAX_DEV];
	u64 now;			/* virtual clock, ns */
	u64 rng;
	u32 version;			/* last version handed out */
	unsigned int inflight;		/* host I/Os not completed */
	/*
	 * Errors that may lose data are injected right now: any host I/O may
	 * fail, a read of a block whose dirty data was lost fails with -EIO
	 * (never older data).  Off again, only the blocks found lost
	 * (dev.lost) may fail.
	 */
	bool lossy;
	/* a lossy window opened since the lost blocks were last looked for */
	bool lose_window;
	u64 failures;			/* model mismatches */
	/* figures */
	u64 n_reads, n_writes, n_flushes, n_discards, n_errors;
	u64 sectors_checked;
	u64 stale_tolerated;		/* old data accepted (must stay 0) */
	u64 lost_reads;			/* -EIO reads of lost blocks */
	u64 strict_after_crash;		/* failed-write sectors checked */
	u64 discard_superseded;		/* discarded, then a durable write */
	char last_op[160];
	/*
	 * Virtual time engine waits have skipped forward (to the next timer)
	 * since the harness last submitted something; past H_HANG_NS a wait
	 * is declared hung: the pump reports no progress, the engine's wait
	 * returns -EDEADLK, and a failure is recorded.
	 */
	u64 idle_jump_ns;
	u64 hangs;
	/* --trace D:S: log every host I/O covering device D sector S */
	int trace_dev;
	long long trace_sector;
};

/* Host I/O as the harness tracks it. */
struct h_io {
	struct vc_host_io hio;
	struct harness *h;
	int d;				/* harness device index */
	u8 *data;
	u32 ver;			/* first version (writes) */
	u32 snap;			/* epoch at submission (FLUSH/PREFLUSH) */
	bool done;
	int err;
	bool check;			/* verify read data on completion */
	/*
	 * Reads: the versions of its sectors at submission; racy once a
	 * write over them was submitted before it completed (either version
	 * may then be read, or one written in between).
	 */
	u32 *subver;
	bool racy;
	bool tolerate_err;		/* errors expected (injection on) */
};

u64 h_rand(struct harness *h);
static inline u64 h_rand_below(struct harness *h, u64 n)
{
	return n ? h_rand(h) % n : 0;
}

/* Set up devices (no cache yet).  Returns 0 or -errno. */
int h_init(struct harness *h, const struct h_opts *o);
void h_fini(struct harness *h);
/* Create a new cache with h->cfg and attach every backing device. */
int h_create(struct harness *h);
/* Load the cache from the cache device and re-attach every device. */
int h_load(struct harness *h, char *err, size_t errlen);
/* Load the cache again with no backing device attached (all waiting). */
int h_load_detached(struct harness *h, char *err, size_t errlen);
int h_attach(struct harness *h, int d);
/* Drive the engine until nothing is in flight. */
void h_quiesce(struct harness *h);
/* One round of the event loop: complete device I/O, run due work. */
bool h_pump(struct harness *h);
void h_advance(struct harness *h, u64 ns);

/*
 * Host I/O.  h_submit() starts it; h_wait() pumps until it completes and
 * returns its error (the model is updated and reads are checked in the
 * completion).  h_io_free() releases it.
 */
struct h_io *h_io_new(struct harness *h, int d, int op, u32 flags,
		      u64 sector, u32 len);
void h_submit(struct harness *h, struct h_io *io);
int h_wait(struct harness *h, struct h_io *io);
void h_io_free(struct h_io *io);
/* Submit, wait, free: returns the error. */
int h_do(struct harness *h, int d, int op, u32 flags, u64 sector, u32 len);
/* Is [sector, +len) free of in-flight host I/O?  Mark it busy. */
bool h_range_free(struct harness *h, int d, u64 sector, u32 len);
/* Has [sector, +len) no host I/O in flight but reads?  (a racing write) */
bool h_range_reads_only(struct harness *h, int d, u64 sector, u32 len);
#define H_BUSY_READ	1
#define H_BUSY_OTHER	2

/*
 * After data was dropped on purpose (forced detach): what the backing
 * device holds becomes the model of device @d.
 */
void h_resync_from_backing(struct harness *h, int d);
/*
 * Everything acknowledged so far is durable (a clean shutdown returned 0),
 * as if every device had completed a FLUSH.
 */
void h_all_durable(struct harness *h);
/* Fill backing device @d durably with stamped data (before create). */
void h_prefill(struct harness *h, int d);
/* Compare every sector of device @d through the engine with the model. */
void h_verify_all(struct harness *h, int d);
/* Compare a device's backing image (durable or current) with the model. */
u64 h_verify_backing(struct harness *h, int d, bool durable);
/*
 * Read every block of every attached device (errors off): a block whose
 * read fails with -EIO is lost (allowed only after a lossy window), its
 * sectors may fail from now on; data read is checked as any read.
 */
void h_sweep_lost(struct harness *h);
/*
 * After a crash and reload: read everything through the engine, check
 * each sector is allowed (durable version or newer, nothing stale), then
 * make the model agree with what was read.
 */
void h_verify_after_crash(struct harness *h);
/*
 * Blocks of device @d for which the backing device's durable image holds
 * data older than the durable model version: the newest durable data is
 * only in the cache, so they must come back dirty after a crash.
 */
u64 h_blocks_only_in_cache(struct harness *h, int d);

/*
 * Rules of device use the engine must keep whatever the order of events:
 * never two writes of overlapping metadata sectors in flight at once.
 * Counts a failure for each breach seen so far.
 */
void h_check_device_rules(struct harness *h);

/* Report a model failure (prints, counts; the caller decides to stop). */
void h_fail(struct harness *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Pattern helpers. */
void h_fill_sector(u8 *p, u32 dev, u64 sector, u32 ver);
/* Version stamped for (dev, sector) in p, 0 if zeroes, -1 if garbage. */
long long h_sector_version(const u8 *p, u32 dev, u64 sector);

#endif /* VC_HARNESS_H */
