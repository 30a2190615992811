// SPDX-License-Identifier: GPL-2.0
/*
 * out_csv.c - --csv: a header, then one row per cache and per backing
 * device and reading (the backing column empty on a cache's row).
 * Figures over the window; latency columns on cache rows only.
 */
#include "mon.h"
#include "names.h"

void mon_print_csv_header(FILE *f)
{
	int p;

	fprintf(f, "time_ns,cache,backing,state,mode,window_ns,"
		"read_hit_ratio_ppm,write_hit_ratio_ppm,reads,writes");
	for (p = 0; p < MP_NR; p++)
		fprintf(f, ",%s_ops,%s_bytes", mon_paths[p].name, mon_paths[p].name);
	fprintf(f, ",dirty_bytes,oldest_dirty_age_ns,flush_running,"
		"flush_remaining_blocks,cache_read_errors,cache_write_errors,"
		"backing_read_errors,backing_write_errors,lost_blocks,"
		"flash_bytes_written,md_writes");
	for (p = 0; p < VCACHE_NR_LAT_PATHS; p++)
		fprintf(f, ",%s_count,%s_p50_ns,%s_p99_ns,%s_p999_ns",
			vcc_lat_path_name(p), vcc_lat_path_name(p),
			vcc_lat_path_name(p), vcc_lat_path_name(p));
	fprintf(f, "\n");
}

static void ppm(FILE *f, long long v)
{
	if (v < 0)
		fprintf(f, ",");
	else
		fprintf(f, ",%lld", v);
}

static void row_common(FILE *f, const struct mon_win *w)
{
	int p;

	fprintf(f, ",%llu", (unsigned long long)w->ns);
	ppm(f, mon_read_hit_ppm(w));
	ppm(f, mon_write_hit_ppm(w));
	fprintf(f, ",%llu,%llu", (unsigned long long)mon_d(w, VCACHE_S_READS),
		(unsigned long long)mon_d(w, VCACHE_S_WRITES));
	for (p = 0; p < MP_NR; p++)
		fprintf(f, ",%llu,%llu",
			(unsigned long long)mon_d(w, mon_paths[p].ops),
			(unsigned long long)mon_d(w, mon_paths[p].bytes));
}

void mon_print_csv(FILE *f, const struct mon_snap *s,
		   const struct mon_snap *prev)
{
	unsigned long long t = (unsigned long long)s->real_ns;
	unsigned int i, k, pi;
	struct mon_win w;
	struct mon_lat x;
	int p;

	for (i = 0; i < s->n; i++) {
		const struct vcc_cache_info *c = &s->c[i];
		const struct vcc_cache_info *pc = mon_find_cache(prev, c->name, &pi);

		mon_win_cache(&w, c, pc);
		fprintf(f, "%llu,%s,,%s,%s", t, c->name,
			vcc_name_of(vcc_states, c->state),
			VCC_HAS(c, VCACHE_A_MODE) ? vcc_name_of(vcc_modes, c->mode) : "");
		row_common(f, &w);
		fprintf(f, ",%llu,%llu,%d,%llu", (unsigned long long)vcc_cache_dirty(c),
			(unsigned long long)c->stat[VCACHE_S_OLDEST_DIRTY_AGE_NS],
			c->flush.running ? 1 : 0,
			(unsigned long long)c->flush.remaining);
		fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu",
			(unsigned long long)c->stat[VCACHE_S_CACHE_READ_ERRORS],
			(unsigned long long)c->stat[VCACHE_S_CACHE_WRITE_ERRORS],
			(unsigned long long)c->stat[VCACHE_S_BACKING_READ_ERRORS],
			(unsigned long long)c->stat[VCACHE_S_BACKING_WRITE_ERRORS],
			(unsigned long long)c->stat[VCACHE_S_LOST_BLOCKS],
			(unsigned long long)c->stat[VCACHE_S_FLASH_BYTES_WRITTEN],
			(unsigned long long)c->stat[VCACHE_S_MD_WRITES]);
		for (p = 0; p < VCACHE_NR_LAT_PATHS; p++) {
			mon_latency(&s->lat[i], pc ? &prev->lat[pi] : NULL, p, &x);
			fprintf(f, ",%llu,%llu,%llu,%llu", (unsigned long long)x.count,
				(unsigned long long)x.p50, (unsigned long long)x.p99,
				(unsigned long long)x.p999);
		}
		fprintf(f, "\n");
		for (k = 0; k < c->nr_backing; k++) {
			const struct vcc_backing_info *b = &c->backing[k];

			mon_win_backing(&w, b, mon_find_backing(pc, b));
			fprintf(f, "%llu,%s,%s,%s,", t, c->name, b->devname,
				vcc_name_of(vcc_bstates, b->state));
			row_common(f, &w);
			fprintf(f, ",%llu,,,,,,%llu,%llu,%llu,,",
				(unsigned long long)b->dirty_bytes,
				(unsigned long long)b->stat[VCACHE_S_BACKING_READ_ERRORS],
				(unsigned long long)b->stat[VCACHE_S_BACKING_WRITE_ERRORS],
				(unsigned long long)b->stat[VCACHE_S_LOST_BLOCKS]);
			for (p = 0; p < VCACHE_NR_LAT_PATHS; p++)
				fprintf(f, ",,,,");
			fprintf(f, "\n");
		}
	}
	fflush(f);
}
