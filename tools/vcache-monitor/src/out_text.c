// SPDX-License-Identifier: GPL-2.0
/*
 * out_text.c - the human view: one block per cache and per backing device
 * (paths with ops/s and MiB/s on the left, state on the right), and with
 * --detail the latency of every path.  Every line fits 80 columns.
 */
#include <string.h>
#include <time.h>

#include "mon.h"
#include "names.h"

#define WIDTH 80

/* Print one line, cut at WIDTH columns (the text is ASCII). */
static void line(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void line(FILE *f, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	size_t n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	buf[WIDTH] = '\0';
	n = strlen(buf);
	while (n && buf[n - 1] == ' ')
		buf[--n] = '\0';
	fprintf(f, "%s\n", buf);
}

static const char *pct(long long ppm, char *buf, size_t len)
{
	if (ppm < 0)
		snprintf(buf, len, "    -");
	else
		snprintf(buf, len, "%5.1f%%", ppm / 10000.0);
	return buf;
}

/* The right-hand column of a block, row by row. */
struct right {
	char row[MP_NR][96];
};

static void left_and_right(FILE *f, const struct mon_win *w,
			   const struct right *r)
{
	int p;

	line(f, "  %-14s %9s %9s | %s", "PATH", "ops/s", "MiB/s", r->row[0]);
	for (p = 0; p < MP_NR; p++)
		line(f, "  %-14s %9.1f %9.2f | %s", mon_paths[p].label,
		     mon_rate(w, mon_paths[p].ops),
		     mon_rate(w, mon_paths[p].bytes) / (1024.0 * 1024.0),
		     p + 1 < MP_NR ? r->row[p + 1] : "");
}

static void flush_state(const struct vcc_cache_info *c, char *buf, size_t len)
{
	const struct vcc_flush_info *fl = &c->flush;

	if (fl->running && fl->target)
		snprintf(buf, len, "running, %llu of %llu blocks (%.0f%%)",
			 (unsigned long long)fl->done,
			 (unsigned long long)fl->target,
			 100.0 * (double)fl->done / (double)fl->target);
	else if (fl->running)
		snprintf(buf, len, "running");
	else if (fl->seq)
		snprintf(buf, len, "idle (last: %s)",
			 fl->result ? strerror((int)fl->result) : "done");
	else
		snprintf(buf, len, "idle");
}

static void print_cache(FILE *f, const struct vcc_cache_info *c,
			const struct vcc_cache_info *pc)
{
	struct mon_win w;
	struct right r;
	char a[32], b[32], h1[16], h2[16], fl[64];
	u64 dirty = vcc_cache_dirty(c);
	double dpct = c->cache_size ? 100.0 * (double)dirty / (double)c->cache_size : 0;

	mon_win_cache(&w, c, pc);
	memset(&r, 0, sizeof(r));
	line(f, "%s: %s, %s, %s; %s %s, block %s", c->name,
	     vcc_name_of(vcc_states, c->state),
	     VCC_HAS(c, VCACHE_A_MODE) ? vcc_name_of(vcc_modes, c->mode) : "-",
	     VCC_HAS(c, VCACHE_A_POLICY) ? vcc_name_of(vcc_policies, c->policy) : "-",
	     c->cache_disk, vcc_human(c->cache_size, a, sizeof(a)),
	     vcc_human(c->block_size, b, sizeof(b)));
	snprintf(r.row[0], sizeof(r.row[0]), "hit ratio  read %s write %s",
		 pct(mon_read_hit_ppm(&w), h1, sizeof(h1)),
		 pct(mon_write_hit_ppm(&w), h2, sizeof(h2)));
	snprintf(r.row[1], sizeof(r.row[1]), "dirty      %s (%.1f%%)",
		 vcc_human(dirty, a, sizeof(a)), dpct);
	snprintf(r.row[2], sizeof(r.row[2]), "oldest     %s",
		 mon_fmt_ns(c->stat[VCACHE_S_OLDEST_DIRTY_AGE_NS], a, sizeof(a)));
	snprintf(r.row[3], sizeof(r.row[3]), "write-back %.2f MiB/s",
		 mon_rate(&w, VCACHE_S_WB_BYTES) / (1024.0 * 1024.0));
	flush_state(c, fl, sizeof(fl));
	snprintf(r.row[4], sizeof(r.row[4]), "flush      %s", fl);
	snprintf(r.row[5], sizeof(r.row[5]), "errors     cache read %llu write %llu",
		 (unsigned long long)c->stat[VCACHE_S_CACHE_READ_ERRORS],
		 (unsigned long long)c->stat[VCACHE_S_CACHE_WRITE_ERRORS]);
	snprintf(r.row[6], sizeof(r.row[6]), "           backing read %llu write %llu",
		 (unsigned long long)c->stat[VCACHE_S_BACKING_READ_ERRORS],
		 (unsigned long long)c->stat[VCACHE_S_BACKING_WRITE_ERRORS]);
	snprintf(r.row[7], sizeof(r.row[7]), "lost       %llu dirty blocks",
		 (unsigned long long)c->stat[VCACHE_S_LOST_BLOCKS]);
	snprintf(r.row[8], sizeof(r.row[8]), "flash      %s written",
		 vcc_human(c->stat[VCACHE_S_FLASH_BYTES_WRITTEN], a, sizeof(a)));
	snprintf(r.row[9], sizeof(r.row[9]), "metadata   %llu writes",
		 (unsigned long long)c->stat[VCACHE_S_MD_WRITES]);
	snprintf(r.row[10], sizeof(r.row[10]), "window     %.1f s", w.ns / 1e9);
	left_and_right(f, &w, &r);
}

static void print_backing(FILE *f, const struct vcc_backing_info *bk,
			  const struct vcc_backing_info *pb)
{
	struct mon_win w;
	struct right r;
	char a[32], h1[16], h2[16];

	mon_win_backing(&w, bk, pb);
	memset(&r, 0, sizeof(r));
	line(f, "  device %s (%s on %s): %s", bk->devname,
	     bk->disk[0] ? bk->disk : "-",
	     bk->backing_disk[0] ? bk->backing_disk : "-",
	     vcc_name_of(vcc_bstates, bk->state));
	snprintf(r.row[0], sizeof(r.row[0]), "hit ratio  read %s write %s",
		 pct(mon_read_hit_ppm(&w), h1, sizeof(h1)),
		 pct(mon_write_hit_ppm(&w), h2, sizeof(h2)));
	snprintf(r.row[1], sizeof(r.row[1]), "dirty      %s",
		 vcc_human(bk->dirty_bytes, a, sizeof(a)));
	snprintf(r.row[2], sizeof(r.row[2]), "write-back %.2f MiB/s",
		 mon_rate(&w, VCACHE_S_WB_BYTES) / (1024.0 * 1024.0));
	snprintf(r.row[3], sizeof(r.row[3]), "errors     read %llu write %llu",
		 (unsigned long long)bk->stat[VCACHE_S_BACKING_READ_ERRORS],
		 (unsigned long long)bk->stat[VCACHE_S_BACKING_WRITE_ERRORS]);
	snprintf(r.row[4], sizeof(r.row[4]), "lost       %llu dirty blocks",
		 (unsigned long long)bk->stat[VCACHE_S_LOST_BLOCKS]);
	snprintf(r.row[5], sizeof(r.row[5]), "requests   %.1f/s read %.1f/s write",
		 mon_rate(&w, VCACHE_S_READS), mon_rate(&w, VCACHE_S_WRITES));
	left_and_right(f, &w, &r);
}

static void print_latency(FILE *f, const struct vcc_lat_info *l,
			  const struct vcc_lat_info *pl)
{
	char m[16], a[16], b[16], c[16];
	struct mon_lat x;
	int p;

	line(f, "  %-12s %10s %10s %10s %10s %10s", "LATENCY", "count",
	     "mean", "p50", "p99", "p99.9");
	for (p = 0; p < VCACHE_NR_LAT_PATHS; p++) {
		mon_latency(l, pl, p, &x);
		line(f, "  %-12s %10llu %10s %10s %10s %10s",
		     vcc_lat_path_name(p), (unsigned long long)x.count,
		     mon_fmt_ns(x.count ? x.sum_ns / x.count : 0, m, sizeof(m)),
		     mon_fmt_ns(x.p50, a, sizeof(a)), mon_fmt_ns(x.p99, b, sizeof(b)),
		     mon_fmt_ns(x.p999, c, sizeof(c)));
	}
}

void mon_print_text(FILE *f, const struct mon_snap *s,
		    const struct mon_snap *prev, const struct mon_opts *o)
{
	time_t t = (time_t)(s->real_ns / 1000000000ULL);
	unsigned int i, k, pi;
	struct tm tm;
	char ts[32];

	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
	if (o->watch)
		line(f, "vcache-monitor  %s  every %.1f s%s", ts, o->interval,
		     o->tty ? "  (q quits)" : "");
	if (!s->n)
		line(f, "no caches (create one with vcache-config create)");
	for (i = 0; i < s->n; i++) {
		const struct vcc_cache_info *c = &s->c[i];
		const struct vcc_cache_info *pc = mon_find_cache(prev, c->name, &pi);

		if (i || o->watch)
			line(f, "%s", "");
		print_cache(f, c, pc);
		if (o->detail)
			print_latency(f, &s->lat[i], pc ? &prev->lat[pi] : NULL);
		for (k = 0; k < c->nr_backing; k++) {
			line(f, "%s", "");
			print_backing(f, &c->backing[k],
				      mon_find_backing(pc, &c->backing[k]));
		}
	}
}
