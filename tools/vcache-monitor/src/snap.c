// SPDX-License-Identifier: GPL-2.0
/*
 * snap.c - readings of the caches and the figures of a window (mon.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mon.h"

const struct mon_path_def mon_paths[MP_NR] = {
	[MP_READ_HIT] = { "read_hit", "read hit",
			  VCACHE_S_READ_HITS, VCACHE_S_READ_HIT_BYTES },
	[MP_READ_MISS] = { "read_miss", "read miss",
			   VCACHE_S_READ_MISSES, VCACHE_S_READ_MISS_BYTES },
	[MP_WRITE_HIT] = { "write_hit", "write hit",
			   VCACHE_S_WRITE_HITS, VCACHE_S_WRITE_HIT_BYTES },
	[MP_WRITE_MISS] = { "write_miss", "write miss",
			    VCACHE_S_WRITE_MISSES, VCACHE_S_WRITE_MISS_BYTES },
	[MP_BYP_SEQ] = { "bypass_seq", "bypass seq",
			 VCACHE_S_BYPASS_SEQ, VCACHE_S_BYPASS_SEQ_BYTES },
	[MP_BYP_PID] = { "bypass_pid", "bypass pid",
			 VCACHE_S_BYPASS_PID, VCACHE_S_BYPASS_PID_BYTES },
	[MP_BYP_ADMISSION] = { "bypass_admission", "bypass admit",
			       VCACHE_S_BYPASS_ADMISSION,
			       VCACHE_S_BYPASS_ADMISSION_BYTES },
	[MP_BYP_NOSPACE] = { "bypass_nospace", "bypass full",
			     VCACHE_S_BYPASS_NOSPACE,
			     VCACHE_S_BYPASS_NOSPACE_BYTES },
	[MP_BYP_MODE] = { "bypass_mode", "bypass mode",
			  VCACHE_S_BYPASS_MODE, VCACHE_S_BYPASS_MODE_BYTES },
	[MP_BYP_BUSY] = { "bypass_busy", "bypass busy",
			  VCACHE_S_BYPASS_BUSY, VCACHE_S_BYPASS_BUSY_BYTES },
	[MP_WRITEBACK] = { "writeback", "write-back",
			   VCACHE_S_WB_BLOCKS, VCACHE_S_WB_BYTES },
};

int mon_snap_take(struct vcc_nl *nl, const char *only, struct mon_snap *s)
{
	struct timespec ts;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_REALTIME, &ts);
	s->real_ns = (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
	if (only) {
		s->c = calloc(1, sizeof(*s->c));
		if (!s->c)
			return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
		if (vcc_nl_get(nl, only, s->c, NULL)) {
			mon_snap_free(s);
			return -1;
		}
		s->n = 1;
	} else if (vcc_nl_dump(nl, &s->c, &s->n)) {
		return -1;
	}
	s->lat = calloc(s->n ? s->n : 1, sizeof(*s->lat));
	if (!s->lat) {
		mon_snap_free(s);
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	}
	for (i = 0; i < s->n; i++) {
		/* a cache deleted since the dump has no latency: zeros */
		if (vcc_nl_lat_get(nl, s->c[i].name, &s->lat[i]) &&
		    vcc_err_code != VCACHE_EXIT_NOENT) {
			mon_snap_free(s);
			return -1;
		}
	}
	return 0;
}

void mon_snap_free(struct mon_snap *s)
{
	free(s->c);
	free(s->lat);
	memset(s, 0, sizeof(*s));
}

const struct vcc_cache_info *mon_find_cache(const struct mon_snap *s,
					    const char *name, unsigned int *idx)
{
	unsigned int i;

	for (i = 0; s && i < s->n; i++)
		if (!strcmp(s->c[i].name, name)) {
			if (idx)
				*idx = i;
			return &s->c[i];
		}
	return NULL;
}

const struct vcc_backing_info *
mon_find_backing(const struct vcc_cache_info *c, const struct vcc_backing_info *b)
{
	unsigned int i;

	for (i = 0; c && i < c->nr_backing; i++)
		if (c->backing[i].id == b->id &&
		    !strcmp(c->backing[i].devname, b->devname))
			return &c->backing[i];
	return NULL;
}

/*
 * The window's length: the kernel's ELAPSED_NS moved by this much; a
 * reset (elapsed went back) starts the window at the reset.
 */
static void win_init(struct mon_win *w, const u64 *cur, const bool *has,
		     const u64 *prev, const bool *prev_has)
{
	u64 e = has[VCACHE_S_ELAPSED_NS] ? cur[VCACHE_S_ELAPSED_NS] : 0;

	w->cur = cur;
	w->has = has;
	w->prev = NULL;
	w->ns = e;
	if (prev && prev_has[VCACHE_S_ELAPSED_NS] &&
	    prev[VCACHE_S_ELAPSED_NS] <= e) {
		w->prev = prev;
		w->ns = e - prev[VCACHE_S_ELAPSED_NS];
	}
}

void mon_win_cache(struct mon_win *w, const struct vcc_cache_info *c,
		   const struct vcc_cache_info *prev)
{
	win_init(w, c->stat, c->has_stat, prev ? prev->stat : NULL,
		 prev ? prev->has_stat : NULL);
}

void mon_win_backing(struct mon_win *w, const struct vcc_backing_info *b,
		     const struct vcc_backing_info *prev)
{
	win_init(w, b->stat, b->has_stat, prev ? prev->stat : NULL,
		 prev ? prev->has_stat : NULL);
}

u64 mon_d(const struct mon_win *w, int stat)
{
	u64 v = w->has[stat] ? w->cur[stat] : 0;

	if (w->prev && w->prev[stat] <= v)
		return v - w->prev[stat];
	return v;
}

double mon_rate(const struct mon_win *w, int stat)
{
	return w->ns ? (double)mon_d(w, stat) * 1e9 / (double)w->ns : 0.0;
}

long long mon_ppm(u64 hits, u64 misses)
{
	if (!hits && !misses)
		return -1;
	return (long long)((hits * 1000000.0) / ((double)hits + (double)misses) + 0.5);
}

long long mon_read_hit_ppm(const struct mon_win *w)
{
	return mon_ppm(mon_d(w, VCACHE_S_READ_HITS), mon_d(w, VCACHE_S_READ_MISSES));
}

long long mon_write_hit_ppm(const struct mon_win *w)
{
	return mon_ppm(mon_d(w, VCACHE_S_WRITE_HITS),
		       mon_d(w, VCACHE_S_WRITE_MISSES));
}

void mon_latency(const struct vcc_lat_info *cur, const struct vcc_lat_info *prev,
		 int path, struct mon_lat *out)
{
	__u64 b[VCACHE_LAT_BUCKETS];
	bool delta = prev && prev->has && prev->count[path] <= cur->count[path];
	int i;

	for (i = 0; i < VCACHE_LAT_BUCKETS; i++) {
		b[i] = cur->b[path][i];
		if (delta && prev->b[path][i] <= b[i])
			b[i] -= prev->b[path][i];
	}
	out->count = cur->count[path] - (delta ? prev->count[path] : 0);
	out->sum_ns = cur->sum_ns[path];
	if (delta && prev->sum_ns[path] <= out->sum_ns)
		out->sum_ns -= prev->sum_ns[path];
	out->p50 = vcache_lat_quantile(b, out->count, 500000);
	out->p99 = vcache_lat_quantile(b, out->count, 990000);
	out->p999 = vcache_lat_quantile(b, out->count, 999000);
}

char *mon_fmt_ns(u64 ns, char *buf, size_t len)
{
	if (!ns)
		snprintf(buf, len, "-");
	else if (ns < 10000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000)
		snprintf(buf, len, "%.0f us", ns / 1e3);
	else if (ns < 10000000)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.0f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.1f s", ns / 1e9);
	return buf;
}
