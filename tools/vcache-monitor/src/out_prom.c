// SPDX-License-Identifier: GPL-2.0
/*
 * out_prom.c - --prometheus: the text exposition format (version 0.0.4)
 * for node_exporter's textfile collector.  Totals since the cache was
 * loaded or reset; labels cache, backing, path (and op, kind, state).
 */
#include <string.h>

#include "mon.h"
#include "names.h"

/* A label value: backslash, double quote and newline escaped. */
static void lv(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fprintf(f, "\\n");
		else
			fputc(*s, f);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{cache="c"[,backing="b"][,key="val"]} value */
static void sample(FILE *f, const char *name, const char *cache,
		   const char *backing, const char *key, const char *val,
		   unsigned long long v)
{
	fprintf(f, "%s{cache=\"", name);
	lv(f, cache);
	if (backing) {
		fprintf(f, "\",backing=\"");
		lv(f, backing);
	}
	if (key) {
		fprintf(f, "\",%s=\"", key);
		lv(f, val);
	}
	fprintf(f, "\"} %llu\n", v);
}

typedef void (*per_set_fn)(FILE *f, const char *cache, const char *backing,
			   const u64 *v);

/* Run @fn for each cache and each of its backing devices. */
static void each(FILE *f, const struct mon_snap *s, per_set_fn fn)
{
	unsigned int i, k;

	for (i = 0; i < s->n; i++) {
		fn(f, s->c[i].name, NULL, s->c[i].stat);
		for (k = 0; k < s->c[i].nr_backing; k++)
			fn(f, s->c[i].name, s->c[i].backing[k].devname,
			   s->c[i].backing[k].stat);
	}
}

static void io_blocks(FILE *f, const char *c, const char *b, const u64 *v)
{
	int p;

	for (p = 0; p < MP_NR; p++)
		sample(f, "vcache_io_blocks_total", c, b, "path", mon_paths[p].name,
		       v[mon_paths[p].ops]);
}

static void io_bytes(FILE *f, const char *c, const char *b, const u64 *v)
{
	int p;

	for (p = 0; p < MP_NR; p++)
		sample(f, "vcache_io_bytes_total", c, b, "path", mon_paths[p].name,
		       v[mon_paths[p].bytes]);
}

static void requests(FILE *f, const char *c, const char *b, const u64 *v)
{
	sample(f, "vcache_requests_total", c, b, "op", "read", v[VCACHE_S_READS]);
	sample(f, "vcache_requests_total", c, b, "op", "write", v[VCACHE_S_WRITES]);
	sample(f, "vcache_requests_total", c, b, "op", "flush", v[VCACHE_S_FLUSHES]);
	sample(f, "vcache_requests_total", c, b, "op", "discard",
	       v[VCACHE_S_DISCARDS]);
}

static void host_bytes(FILE *f, const char *c, const char *b, const u64 *v)
{
	sample(f, "vcache_request_bytes_total", c, b, "op", "read",
	       v[VCACHE_S_READ_BYTES]);
	sample(f, "vcache_request_bytes_total", c, b, "op", "write",
	       v[VCACHE_S_WRITE_BYTES]);
}

static void errors(FILE *f, const char *c, const char *b, const u64 *v)
{
	if (!b) {
		sample(f, "vcache_errors_total", c, b, "kind", "cache_read",
		       v[VCACHE_S_CACHE_READ_ERRORS]);
		sample(f, "vcache_errors_total", c, b, "kind", "cache_write",
		       v[VCACHE_S_CACHE_WRITE_ERRORS]);
	}
	sample(f, "vcache_errors_total", c, b, "kind", "backing_read",
	       v[VCACHE_S_BACKING_READ_ERRORS]);
	sample(f, "vcache_errors_total", c, b, "kind", "backing_write",
	       v[VCACHE_S_BACKING_WRITE_ERRORS]);
}

static void lost(FILE *f, const char *c, const char *b, const u64 *v)
{
	sample(f, "vcache_lost_blocks_total", c, b, NULL, NULL,
	       v[VCACHE_S_LOST_BLOCKS]);
}

static void dirty(FILE *f, const char *c, const char *b, const u64 *v)
{
	sample(f, "vcache_dirty_bytes", c, b, NULL, NULL, v[VCACHE_S_DIRTY_BYTES]);
}

/* Seconds from nanoseconds, exactly as decimal text. */
static void secs(FILE *f, u64 ns)
{
	fprintf(f, "%llu.%09llu", (unsigned long long)(ns / 1000000000ULL),
		(unsigned long long)(ns % 1000000000ULL));
}

static void latency(FILE *f, const struct mon_snap *s)
{
	static const struct { const char *q; u64 ppm; } qs[] = {
		{ "0.5", 500000 }, { "0.99", 990000 }, { "0.999", 999000 },
	};
	struct mon_lat x;
	unsigned int i, k;
	int p;

	head(f, "vcache_latency_seconds", "summary",
	     "Request latency by path since load or reset (quantiles: bucket ends).");
	for (i = 0; i < s->n; i++)
		for (p = 0; p < VCACHE_NR_LAT_PATHS; p++) {
			mon_latency(&s->lat[i], NULL, p, &x);
			for (k = 0; k < 3; k++) {
				u64 q = vcache_lat_quantile((const __u64 *)s->lat[i].b[p], x.count,
							    qs[k].ppm);

				fprintf(f, "vcache_latency_seconds{cache=\"");
				lv(f, s->c[i].name);
				fprintf(f, "\",path=\"%s\",quantile=\"%s\"} ",
					vcc_lat_path_name(p), qs[k].q);
				secs(f, q);
				fprintf(f, "\n");
			}
			fprintf(f, "vcache_latency_seconds_sum{cache=\"");
			lv(f, s->c[i].name);
			fprintf(f, "\",path=\"%s\"} ", vcc_lat_path_name(p));
			secs(f, x.sum_ns);
			fprintf(f, "\nvcache_latency_seconds_count{cache=\"");
			lv(f, s->c[i].name);
			fprintf(f, "\",path=\"%s\"} %llu\n", vcc_lat_path_name(p),
				(unsigned long long)x.count);
		}
}

void mon_print_prometheus(FILE *f, const struct mon_snap *s)
{
	unsigned int i, k;

	head(f, "vcache_info", "gauge",
	     "A cache: 1, with its state, mode and policy as labels.");
	for (i = 0; i < s->n; i++) {
		const struct vcc_cache_info *c = &s->c[i];

		fprintf(f, "vcache_info{cache=\"");
		lv(f, c->name);
		fprintf(f, "\",state=\"%s\",mode=\"%s\",policy=\"%s\",cache_disk=\"",
			vcc_name_of(vcc_states, c->state),
			VCC_HAS(c, VCACHE_A_MODE) ? vcc_name_of(vcc_modes, c->mode) : "",
			VCC_HAS(c, VCACHE_A_POLICY) ?
			vcc_name_of(vcc_policies, c->policy) : "");
		lv(f, c->cache_disk);
		fprintf(f, "\"} 1\n");
	}
	head(f, "vcache_backing_info", "gauge",
	     "A backing device: 1, with its state and disks as labels.");
	for (i = 0; i < s->n; i++)
		for (k = 0; k < s->c[i].nr_backing; k++) {
			const struct vcc_backing_info *b = &s->c[i].backing[k];

			fprintf(f, "vcache_backing_info{cache=\"");
			lv(f, s->c[i].name);
			fprintf(f, "\",backing=\"");
			lv(f, b->devname);
			fprintf(f, "\",state=\"%s\",disk=\"",
				vcc_name_of(vcc_bstates, b->state));
			lv(f, b->disk);
			fprintf(f, "\",backing_disk=\"");
			lv(f, b->backing_disk);
			fprintf(f, "\"} 1\n");
		}
	head(f, "vcache_cache_size_bytes", "gauge", "Size of the cache's flash area.");
	for (i = 0; i < s->n; i++)
		sample(f, "vcache_cache_size_bytes", s->c[i].name, NULL, NULL, NULL,
		       s->c[i].cache_size);
	head(f, "vcache_requests_total", "counter", "Host requests by operation.");
	each(f, s, requests);
	head(f, "vcache_request_bytes_total", "counter", "Host bytes by operation.");
	each(f, s, host_bytes);
	head(f, "vcache_io_blocks_total", "counter",
	     "Cache blocks by path (hit, miss, bypass by reason, write-back).");
	each(f, s, io_blocks);
	head(f, "vcache_io_bytes_total", "counter", "Bytes by path.");
	each(f, s, io_bytes);
	head(f, "vcache_dirty_bytes", "gauge", "Dirty data not yet written back.");
	each(f, s, dirty);
	head(f, "vcache_oldest_dirty_age_seconds", "gauge",
	     "Age of the oldest dirty block (0: none, or no age limit set).");
	for (i = 0; i < s->n; i++) {
		fprintf(f, "vcache_oldest_dirty_age_seconds{cache=\"");
		lv(f, s->c[i].name);
		fprintf(f, "\"} ");
		secs(f, s->c[i].stat[VCACHE_S_OLDEST_DIRTY_AGE_NS]);
		fprintf(f, "\n");
	}
	head(f, "vcache_flush_running", "gauge", "1 while a flush runs.");
	for (i = 0; i < s->n; i++)
		sample(f, "vcache_flush_running", s->c[i].name, NULL, NULL, NULL,
		       s->c[i].flush.running);
	head(f, "vcache_flush_remaining_blocks", "gauge",
	     "Dirty blocks a running flush has left.");
	for (i = 0; i < s->n; i++)
		sample(f, "vcache_flush_remaining_blocks", s->c[i].name, NULL,
		       NULL, NULL, s->c[i].flush.remaining);
	head(f, "vcache_errors_total", "counter", "I/O errors by kind.");
	each(f, s, errors);
	head(f, "vcache_lost_blocks_total", "counter",
	     "Dirty blocks whose data was lost.");
	each(f, s, lost);
	head(f, "vcache_flash_written_bytes_total", "counter",
	     "Bytes written to the flash (data and metadata): wear.");
	for (i = 0; i < s->n; i++)
		sample(f, "vcache_flash_written_bytes_total", s->c[i].name, NULL,
		       NULL, NULL, s->c[i].stat[VCACHE_S_FLASH_BYTES_WRITTEN]);
	head(f, "vcache_metadata_writes_total", "counter",
	     "Metadata sector writes to the flash.");
	for (i = 0; i < s->n; i++)
		sample(f, "vcache_metadata_writes_total", s->c[i].name, NULL,
		       NULL, NULL, s->c[i].stat[VCACHE_S_MD_WRITES]);
	latency(f, s);
	fflush(f);
}
