/* SPDX-License-Identifier: GPL-2.0 */
/*
 * simdev: simulated block devices for the engine's proofs (model, crash,
 * stress tests).  Userspace only.
 *
 * A simdev is a struct vc_dev (vc_env.h) backed by RAM, with:
 *  - an optional VOLATILE write cache: a completed write is only in the
 *    "current" image until a FLUSH (or a PREFLUSH write) that was
 *    submitted after the write completed, or FUA on the write itself,
 *    makes it durable.  Every unflushed version of a sector is kept (the
 *    newest 16): a power cut keeps the durable image and, depending on
 *    the cut mode, none, the newest, the newest of a seeded random subset
 *    of writes, or per sector any version, older ones included (torn);
 *    writes in flight at the cut land or not, in a random order (none in
 *    drop mode, all in keep mode); a device may IGNORE FLUSH and FUA (a
 *    lying disk);
 *  - a power domain shared by several devices (a cache card and its HDDs
 *    lose power together), with a write-index counter: "cut power when
 *    write number K (optionally counting only VC_DEV_META writes) is
 *    submitted", or "when the K-th I/O completion took effect" (its
 *    submitter gets -EIO).  Write K is not applied (in the torn mode a random subset
 *    of its sectors is); from the cut on every I/O of the domain fails
 *    with -EIO until simdev_power_restore();
 *  - error injection: on sector ranges (per op, for N I/Os or forever),
 *    at the K-th write of the device, or at random with a rate in ppm;
 *  - three completion models: inline (before submit returns), queued (the
 *    test completes pending I/Os in a seeded random order with
 *    simdev_complete()), and threaded (a completion thread per domain does
 *    the same).  In queued and threaded models a write's data lands when
 *    it completes, so reading a block whose write is in flight returns the
 *    old data, as on a real device.
 *
 * Everything random is drawn from splitmix64 seeded by the caller.
 */
#ifndef SIMDEV_H
#define SIMDEV_H

#include "vc_env.h"

enum simdev_cut_mode {
	SIMDEV_CUT_DROP_ALL = 0,	/* only durable data survives */
	SIMDEV_CUT_KEEP_ALL,		/* the whole cache made it out */
	SIMDEV_CUT_RANDOM_WRITES,	/* each pending write all or nothing */
	SIMDEV_CUT_RANDOM_SECTORS,	/* each pending sector: torn writes */
	SIMDEV_NR_CUT_MODES
};

enum simdev_completion {
	SIMDEV_COMPLETE_INLINE = 0,
	SIMDEV_COMPLETE_QUEUED,
	SIMDEV_COMPLETE_THREAD,
};

/* Op masks for error injection. */
#define SIMDEV_OP_READ		(1u << VC_DEV_READ)
#define SIMDEV_OP_WRITE		(1u << VC_DEV_WRITE)
#define SIMDEV_OP_FLUSH		(1u << VC_DEV_FLUSH)
#define SIMDEV_OP_DISCARD	(1u << VC_DEV_DISCARD)
#define SIMDEV_OP_WRITE_ZEROES	(1u << VC_DEV_WRITE_ZEROES)
#define SIMDEV_OP_ALL		0x1fu

struct simdev_power;
struct simdev;

/*
 * A power domain.  @completion applies to every device of the domain
 * (threaded: one completion thread for the domain).  @seed drives the
 * completion order and the random cut modes.
 */
struct simdev_power *simdev_power_new(enum simdev_completion completion,
				      u64 seed);
/* All devices of the domain must have been freed. */
void simdev_power_free(struct simdev_power *p);

/* Cut power now (mode set per device). */
void simdev_power_cut(struct simdev_power *p);
/* Power back on: I/O works again; each device shows its durable image. */
void simdev_power_restore(struct simdev_power *p);
bool simdev_power_is_cut(struct simdev_power *p);
/*
 * Arm a cut at the @k-th write submitted from now on (1-based, counted
 * over the domain; only writes flagged VC_DEV_META when @meta_only).
 * @k = 0 disarms.
 */
void simdev_power_cut_at(struct simdev_power *p, u64 k, bool meta_only);
/*
 * Arm a cut at the @k-th I/O completion from now on (1-based, any device
 * of the domain, successful I/Os): the I/O took effect, the power goes
 * before its end_io, which gets -EIO.  @k = 0 disarms.
 */
void simdev_power_cut_at_completion(struct simdev_power *p, u64 k);
/* Successful I/O completions in the domain so far. */
u64 simdev_power_completions(struct simdev_power *p);
/* Writes (all, and VC_DEV_META ones) submitted in the domain so far. */
u64 simdev_power_writes(struct simdev_power *p, bool meta_only);
/* I/Os submitted and not yet completed in the domain. */
unsigned int simdev_power_inflight(struct simdev_power *p);
/*
 * Queued model: complete up to @max pending I/Os (0 = all), picking them
 * in seeded random order; returns how many were completed.
 */
unsigned int simdev_complete(struct simdev_power *p, unsigned int max);
/*
 * Queued model, directed: complete the oldest (or newest) pending I/O of
 * device @d (NULL: any) with op @op (< 0: any).  Returns 1 if one was
 * completed, 0 if none matched.  For tests that need one precise order.
 */
unsigned int simdev_complete_match(struct simdev_power *p, struct simdev *d,
				   int op, bool newest);
/* Pending I/Os of @d (NULL: any) with op @op (< 0: any). */
unsigned int simdev_pending(struct simdev_power *p, struct simdev *d, int op);
/* Wait until nothing is in flight (threaded model; others: completes). */
void simdev_drain(struct simdev_power *p);

struct simdev_config {
	const char *name;
	u64 nr_sectors;
	bool volatile_cache;
	enum simdev_cut_mode cut_mode;
	struct simdev_power *power;	/* NULL: a private inline domain */
	bool ignore_flush;		/* FLUSH, PREFLUSH and FUA do nothing */
	u64 seed;			/* errors at random, random cut */
	u32 physical_block_size;	/* bytes; 0 = 512 (counts RMWs) */
};

struct simdev *simdev_new(const struct simdev_config *cfg);
void simdev_free(struct simdev *d);
struct vc_dev *simdev_dev(struct simdev *d);
struct simdev *simdev_of(struct vc_dev *dev);
struct simdev_power *simdev_power_of(struct simdev *d);
void simdev_set_cut_mode(struct simdev *d, enum simdev_cut_mode mode);
/* Log (stderr) every I/O covering @sector (-1: stop, -2: all I/O), and every FLUSH. */
void simdev_trace(struct simdev *d, s64 sector);

/* What a reader sees now / what survives a DROP_ALL cut, without I/O. */
void simdev_peek(struct simdev *d, u64 sector, void *dst, u32 len);
void simdev_peek_durable(struct simdev *d, u64 sector, void *dst, u32 len);
/* Write durably without I/O (test setup, corrupting metadata). */
void simdev_poke(struct simdev *d, u64 sector, const void *src, u32 len);
/* Copy the whole durable image of @src to @dst (same size). */
void simdev_copy_image(struct simdev *dst, struct simdev *src);
/* Sectors written but not durable. */
u64 simdev_volatile_sectors(struct simdev *d);
/*
 * Does any unflushed version of @sector (one a power cut may keep) read as
 * zeroes: a discard or write-zeroes not yet made durable, even if a later
 * write covered it since?
 */
bool simdev_pending_zeroes(struct simdev *d, u64 sector);

/*
 * Fail I/Os of @op_mask overlapping [sector, sector + nr_sectors) with
 * @err (negative errno), @count times (< 0: forever).  Returns a rule id
 * (>= 0) for simdev_error_remove(), or -ENOSPC.
 */
int simdev_error_range(struct simdev *d, u32 op_mask, u64 sector,
		       u64 nr_sectors, int err, s64 count);
void simdev_error_remove(struct simdev *d, int rule);
/*
 * Fail the @k-th write submitted to this device from now on (only META
 * writes counted when @meta_only) with @err.  @k = 0 disarms.
 */
void simdev_error_at_write(struct simdev *d, u64 k, bool meta_only, int err);
/*
 * Fail the @k-th FLUSH (the op, not a write's PREFLUSH) submitted to this
 * device from now on with @err.  @k = 0 disarms.
 */
void simdev_error_at_flush(struct simdev *d, u64 k, int err);
/* Fail each I/O of @op_mask with probability @ppm / 1e6. */
void simdev_error_random(struct simdev *d, u32 op_mask, u32 ppm, int err);
void simdev_error_clear(struct simdev *d);

struct simdev_stats {
	u64 reads, writes, meta_writes, flushes, fua, preflush, discards;
	u64 write_zeroes;	/* counted in writes too */
	u64 read_bytes, write_bytes;
	u64 errors;		/* I/Os failed by injection or power cut */
	u64 cuts;		/* power cuts seen */
	/*
	 * Writes (or discards) submitted while another one to an overlapping
	 * range was in flight on the same device (queued and threaded
	 * models); those where either is a VC_DEV_META write.
	 */
	u64 overlapping_writes, overlapping_meta_writes;
	u64 landed_at_cut;	/* writes in flight that landed at a cut */
	/*
	 * Writes covering a physical block only in part (smaller than one or
	 * misaligned): a read-modify-write on such a device; VC_DEV_META ones.
	 */
	u64 rmw_writes, rmw_meta_writes;
};
void simdev_get_stats(struct simdev *d, struct simdev_stats *st);

#endif /* SIMDEV_H */
