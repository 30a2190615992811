/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hdd-model: the timing model of a 7200 rpm disk (one actuator, seek curve,
 * rotational position, zoned transfer, NCQ-like SPTF queue, read-ahead
 * buffer, volatile write cache).  Pure: no threads, no clock; times are
 * nanoseconds on a clock the caller owns.  plugin.c drives it in real time
 * for nbdkit; test-model.c drives it in virtual time.
 */
#ifndef HDD_MODEL_H
#define HDD_MODEL_H

#include <stdint.h>
#include <stdbool.h>

struct hdd_params {
	uint32_t rpm;		/* 7200 */
	uint64_t t2t_ns;	/* track-to-track seek, 0.8 ms */
	uint64_t avg_ns;	/* mean seek over random pairs, 8.0 ms */
	uint64_t full_ns;	/* full-stroke seek, 16 ms */
	uint64_t outer_bps;	/* media rate on the outer zone, 200 MB/s */
	uint64_t inner_bps;	/* media rate on the inner zone, 100 MB/s */
	uint32_t zones;		/* 16 */
	uint64_t overhead_ns;	/* command overhead, 50 us */
	uint32_t ncq;		/* commands the disk reorders (SPTF), 32 */
	bool wc;		/* volatile write cache on */
	uint64_t wc_bytes;	/* write cache size, 16 MiB */
	uint32_t wc_cmds;	/* write cache entries, 128 */
	uint64_t ra_bytes;	/* read-ahead after a read, 1 MiB (0 = off) */
	uint64_t starve_ns;	/* a command waiting this long goes first, 1 s */
	uint64_t capacity;	/* bytes the geometry spans (>= the image) */
	uint64_t seed;		/* initial head position and platter phase */
};

enum hdd_op { HDD_READ, HDD_WRITE, HDD_DESTAGE };

struct hdd_req {
	enum hdd_op op;
	uint64_t lba;		/* 512-byte sectors */
	uint32_t nsect;
	uint64_t arrive;	/* ns */
	uint64_t seq;		/* write order (destage entries) */
	bool done;
	struct hdd_req *next;	/* queue link (model-owned while queued) */
	void *priv;
};

struct hdd_stats {
	uint64_t reads, writes, flushes, trims;
	uint64_t read_bytes, write_bytes;
	uint64_t cached_writes;	/* acknowledged from the write cache */
	uint64_t destages;	/* cached writes written to the media */
	uint64_t media_ops;	/* operations served by the actuator */
	uint64_t seeks;		/* media ops that moved the head */
	uint64_t seek_tracks;	/* sum of |distance| of those */
	uint64_t seek_ns, rot_ns, xfer_ns, busy_ns;
	uint64_t ra_hits;	/* reads served from the read-ahead buffer */
	uint64_t max_queue;
};

struct hdd {
	struct hdd_params p;
	/* geometry */
	uint64_t nsect;		/* sectors of the geometry */
	uint64_t rev_ns;
	uint32_t zone_spt[64];	/* sectors per track of each zone */
	uint64_t zone_lba[65];	/* first sector of each zone, [zones] = end */
	uint64_t zone_trk[65];	/* first track of each zone */
	uint64_t tracks;
	double seek_b, seek_c;	/* seek = t2t + b sqrt(x) + c x */
	double skew;		/* track skew (fraction of a revolution) */
	double phase0;		/* platter angle at t = 0 */
	/* state */
	uint64_t head_trk;
	uint64_t ra_lo, ra_t, ra_len;	/* read-ahead: from ra_lo at time ra_t */
	bool ra_live;		/* the head is still reading ahead */
	uint64_t ra_hi;		/* end when no longer live */
	struct hdd_req *queue;	/* waiting for the actuator */
	struct hdd_req *serving;	/* being served (until hdd_done) */
	uint32_t nqueue;
	uint64_t dirty_bytes;
	uint32_t dirty_cmds;
	uint64_t write_seq;
	uint32_t flush_waiting;	/* FLUSHes waiting for destages (the plugin's) */
	struct hdd_stats st;
};

/* Fill with the defaults (capacity 0: the caller sets it). */
void hdd_defaults(struct hdd_params *p);

/* Check the figures and build the geometry; 0 or -1 with a message in err. */
int hdd_init(struct hdd *h, const struct hdd_params *p, char *err, int errlen);

/* Pieces of the model (exposed for the tests). */
uint64_t hdd_seek_ns(const struct hdd *h, uint64_t dist);
uint64_t hdd_track_of(const struct hdd *h, uint64_t lba, uint32_t *spt,
		      uint32_t *sect);
double hdd_angle_at(const struct hdd *h, uint64_t t);
double hdd_angle_of(const struct hdd *h, uint64_t lba);
uint64_t hdd_xfer_ns(const struct hdd *h, uint64_t lba, uint32_t nsect);
/* Time from now until the head is over lba's first sector. */
uint64_t hdd_position_ns(const struct hdd *h, uint64_t now, uint64_t lba);

/* Queue a request for the actuator. */
void hdd_enqueue(struct hdd *h, struct hdd_req *r);
/*
 * A write with the cache on: true if it fits the cache now (then a destage
 * entry was queued, and the write completes after the overhead); false
 * if the caller must wait for space (call again after a completion).
 */
bool hdd_cache_write(struct hdd *h, uint64_t now, uint64_t lba,
		     uint32_t nsect);
/* The request the actuator serves next (SPTF with aging), or NULL. */
struct hdd_req *hdd_pick(struct hdd *h, uint64_t now);
/* Serve r (already removed by hdd_pick) from now: its completion time. */
uint64_t hdd_serve(struct hdd *h, uint64_t now, struct hdd_req *r);
/* r's service is over (a destage leaves the dirty accounting). */
void hdd_done(struct hdd *h, struct hdd_req *r);
/* Oldest write sequence still dirty (UINT64_MAX if none). */
uint64_t hdd_oldest_dirty(const struct hdd *h);

/* The statistics as one JSON object (raw integers, base units). */
int hdd_stats_json(const struct hdd *h, char *buf, int len);

#endif
