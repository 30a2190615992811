/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mon.h - vcache-monitor's model: snapshots of every cache (GET dump and
 * LAT_GET, through vcache-config's netlink client) and the figures of a
 * window between two snapshots, which every printer shares.
 */
#ifndef MON_H
#define MON_H

#include <stdio.h>

#include "info.h"
#include "nl.h"

/* The paths of the table, each a pair of counters: blocks and bytes. */
enum mon_path {
	MP_READ_HIT, MP_READ_MISS, MP_WRITE_HIT, MP_WRITE_MISS,
	MP_BYP_SEQ, MP_BYP_PID, MP_BYP_ADMISSION, MP_BYP_NOSPACE,
	MP_BYP_MODE, MP_BYP_BUSY, MP_WRITEBACK,
	MP_NR
};

struct mon_path_def {
	const char *name;	/* stable: JSON, CSV, Prometheus label */
	const char *label;	/* the table */
	int ops, bytes;		/* VCACHE_S_* */
};

extern const struct mon_path_def mon_paths[MP_NR];

/* One reading of every cache (or of one). */
struct mon_snap {
	u64 real_ns;			/* CLOCK_REALTIME */
	unsigned int n;
	struct vcc_cache_info *c;
	struct vcc_lat_info *lat;	/* one per cache */
};

/* Read every cache, or only @only (NULL: all); -1 with vcc_errbuf. */
int mon_snap_take(struct vcc_nl *nl, const char *only, struct mon_snap *s);
void mon_snap_free(struct mon_snap *s);

/*
 * A window: the counters of a cache or of one of its backing devices now
 * (@cur) and at the previous reading (@prev, NULL: since the cache was
 * loaded or reset, then the window is its elapsed_ns).
 */
struct mon_win {
	const u64 *cur, *prev;
	const bool *has;
	u64 ns;				/* the window's length */
};

void mon_win_cache(struct mon_win *w, const struct vcc_cache_info *c,
		   const struct vcc_cache_info *prev);
void mon_win_backing(struct mon_win *w, const struct vcc_backing_info *b,
		     const struct vcc_backing_info *prev);

/* The change of counter @stat over the window (its total if no prev). */
u64 mon_d(const struct mon_win *w, int stat);
/* Per second over the window (0 for an empty window). */
double mon_rate(const struct mon_win *w, int stat);
/* @hits of @hits + @misses in parts per million; -1 if both are 0. */
long long mon_ppm(u64 hits, u64 misses);
long long mon_read_hit_ppm(const struct mon_win *w);
long long mon_write_hit_ppm(const struct mon_win *w);

/* The matching cache (by name) and backing device (by id) of @prev. */
const struct vcc_cache_info *mon_find_cache(const struct mon_snap *s,
					    const char *name, unsigned int *idx);
const struct vcc_backing_info *
mon_find_backing(const struct vcc_cache_info *c, const struct vcc_backing_info *b);

/* Latency of one path over the window. */
struct mon_lat {
	u64 count, sum_ns, p50, p99, p999;	/* ns */
};

void mon_latency(const struct vcc_lat_info *cur, const struct vcc_lat_info *prev,
		 int path, struct mon_lat *out);

/* Printers (out_*.c).  @prev may be NULL: figures since load or reset. */
struct mon_opts {
	bool detail;
	bool watch;
	bool tty;		/* redraw in place */
	double interval;	/* seconds */
};

void mon_print_text(FILE *f, const struct mon_snap *s,
		    const struct mon_snap *prev, const struct mon_opts *o);
void mon_print_json(FILE *f, const struct mon_snap *s,
		    const struct mon_snap *prev, const struct mon_opts *o);
void mon_print_csv_header(FILE *f);
void mon_print_csv(FILE *f, const struct mon_snap *s,
		   const struct mon_snap *prev);
void mon_print_prometheus(FILE *f, const struct mon_snap *s);

/* "1.5 ms", "120 us", "-" for 0 */
char *mon_fmt_ns(u64 ns, char *buf, size_t len);

#endif
