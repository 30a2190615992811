// SPDX-License-Identifier: GPL-2.0
/*
 * out_json.c - --json: one document per reading (schema.json, and
 * vcache-monitor(8)); every number an integer in base units (bytes, ns,
 * counts, parts per million).
 */
#include <json-c/json.h>
#include <string.h>

#include "mon.h"
#include "names.h"

static json_object *u64_obj(u64 v)
{
	return json_object_new_uint64(v);
}

static json_object *ppm_obj(long long ppm)
{
	return ppm < 0 ? NULL : json_object_new_int64(ppm);
}

static void put(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

/* "paths": {"read_hit": {"ops": N, "bytes": N}, ...} over the window */
static json_object *paths_json(const struct mon_win *w)
{
	json_object *o = json_object_new_object(), *p;
	int i;

	for (i = 0; i < MP_NR; i++) {
		p = json_object_new_object();
		put(p, "ops", u64_obj(mon_d(w, mon_paths[i].ops)));
		put(p, "bytes", u64_obj(mon_d(w, mon_paths[i].bytes)));
		put(o, mon_paths[i].name, p);
	}
	return o;
}

/* "counters": every statistic the kernel sent, its total */
static json_object *counters_json(const u64 *v, const bool *has)
{
	json_object *o = json_object_new_object();
	int k;

	for (k = 1; k < VCC_NR_S; k++)
		if (has[k] && vcc_stat_name(k))
			put(o, vcc_stat_name(k), u64_obj(v[k]));
	return o;
}

static void common_json(json_object *o, const struct mon_win *w)
{
	put(o, "window_ns", u64_obj(w->ns));
	put(o, "read_hit_ratio_ppm", ppm_obj(mon_read_hit_ppm(w)));
	put(o, "write_hit_ratio_ppm", ppm_obj(mon_write_hit_ppm(w)));
	put(o, "reads", u64_obj(mon_d(w, VCACHE_S_READS)));
	put(o, "writes", u64_obj(mon_d(w, VCACHE_S_WRITES)));
	put(o, "read_bytes", u64_obj(mon_d(w, VCACHE_S_READ_BYTES)));
	put(o, "write_bytes", u64_obj(mon_d(w, VCACHE_S_WRITE_BYTES)));
	put(o, "paths", paths_json(w));
}

static json_object *latency_json(const struct vcc_lat_info *l,
				 const struct vcc_lat_info *pl)
{
	json_object *o = json_object_new_object(), *p;
	struct mon_lat x;
	int i;

	for (i = 0; i < VCACHE_NR_LAT_PATHS; i++) {
		mon_latency(l, pl, i, &x);
		p = json_object_new_object();
		put(p, "count", u64_obj(x.count));
		put(p, "sum_ns", u64_obj(x.sum_ns));
		put(p, "p50_ns", u64_obj(x.p50));
		put(p, "p99_ns", u64_obj(x.p99));
		put(p, "p999_ns", u64_obj(x.p999));
		put(o, vcc_lat_path_name(i), p);
	}
	return o;
}

static json_object *backing_json(const struct vcc_backing_info *b,
				 const struct vcc_backing_info *pb)
{
	json_object *o = json_object_new_object();
	struct mon_win w;

	mon_win_backing(&w, b, pb);
	put(o, "devname", json_object_new_string(b->devname));
	put(o, "disk", b->disk[0] ? json_object_new_string(b->disk) : NULL);
	put(o, "backing_disk", b->backing_disk[0] ?
	    json_object_new_string(b->backing_disk) : NULL);
	put(o, "id", u64_obj(b->id));
	put(o, "state", json_object_new_string(vcc_name_of(vcc_bstates, b->state)));
	put(o, "size_bytes", u64_obj(b->size));
	put(o, "dirty_bytes", u64_obj(b->dirty_bytes));
	common_json(o, &w);
	put(o, "counters", counters_json(b->stat, b->has_stat));
	return o;
}

static json_object *flush_json(const struct vcc_flush_info *fl)
{
	json_object *o = json_object_new_object();

	put(o, "running", json_object_new_boolean(fl->running));
	put(o, "target_blocks", u64_obj(fl->target));
	put(o, "done_blocks", u64_obj(fl->done));
	put(o, "remaining_blocks", u64_obj(fl->remaining));
	put(o, "last_result_errno", u64_obj(fl->result));
	return o;
}

static json_object *cache_json(const struct vcc_cache_info *c,
			       const struct vcc_cache_info *pc,
			       const struct vcc_lat_info *l,
			       const struct vcc_lat_info *pl)
{
	json_object *o = json_object_new_object(), *a;
	u64 dirty = vcc_cache_dirty(c);
	struct mon_win w;
	unsigned int k;

	mon_win_cache(&w, c, pc);
	put(o, "name", json_object_new_string(c->name));
	put(o, "state", json_object_new_string(vcc_name_of(vcc_states, c->state)));
	put(o, "mode", VCC_HAS(c, VCACHE_A_MODE) ?
	    json_object_new_string(vcc_name_of(vcc_modes, c->mode)) : NULL);
	put(o, "policy", VCC_HAS(c, VCACHE_A_POLICY) ?
	    json_object_new_string(vcc_name_of(vcc_policies, c->policy)) : NULL);
	put(o, "cache_disk", json_object_new_string(c->cache_disk));
	put(o, "cache_size_bytes", u64_obj(c->cache_size));
	put(o, "block_size_bytes", u64_obj(c->block_size));
	common_json(o, &w);
	put(o, "dirty_bytes", u64_obj(dirty));
	put(o, "dirty_ppm", u64_obj(c->cache_size ?
				    (u64)(dirty * 1e6 / (double)c->cache_size) : 0));
	put(o, "oldest_dirty_age_ns",
	    u64_obj(c->stat[VCACHE_S_OLDEST_DIRTY_AGE_NS]));
	put(o, "writeback_bytes", u64_obj(mon_d(&w, VCACHE_S_WB_BYTES)));
	put(o, "flush", flush_json(&c->flush));
	a = json_object_new_object();
	put(a, "cache_read", u64_obj(c->stat[VCACHE_S_CACHE_READ_ERRORS]));
	put(a, "cache_write", u64_obj(c->stat[VCACHE_S_CACHE_WRITE_ERRORS]));
	put(a, "backing_read", u64_obj(c->stat[VCACHE_S_BACKING_READ_ERRORS]));
	put(a, "backing_write", u64_obj(c->stat[VCACHE_S_BACKING_WRITE_ERRORS]));
	put(a, "lost_blocks", u64_obj(c->stat[VCACHE_S_LOST_BLOCKS]));
	put(o, "errors", a);
	put(o, "flash_bytes_written",
	    u64_obj(c->stat[VCACHE_S_FLASH_BYTES_WRITTEN]));
	put(o, "md_writes", u64_obj(c->stat[VCACHE_S_MD_WRITES]));
	put(o, "latency", latency_json(l, pl));
	put(o, "counters", counters_json(c->stat, c->has_stat));
	a = json_object_new_array();
	for (k = 0; k < c->nr_backing; k++)
		json_object_array_add(a, backing_json(&c->backing[k],
				      mon_find_backing(pc, &c->backing[k])));
	put(o, "backing", a);
	return o;
}

void mon_print_json(FILE *f, const struct mon_snap *s,
		    const struct mon_snap *prev, const struct mon_opts *o)
{
	json_object *doc = json_object_new_object(), *a = json_object_new_array();
	unsigned int i, pi;

	put(doc, "time_ns", u64_obj(s->real_ns));
	put(doc, "interval", json_object_new_boolean(prev != NULL));
	for (i = 0; i < s->n; i++) {
		const struct vcc_cache_info *pc = mon_find_cache(prev, s->c[i].name, &pi);

		json_object_array_add(a, cache_json(&s->c[i], pc, &s->lat[i],
						    pc ? &prev->lat[pi] : NULL));
	}
	put(doc, "caches", a);
	/* --watch: one document per line (JSON Lines) */
	fprintf(f, "%s\n", json_object_to_json_string_ext(doc, o->watch ?
		JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY));
	fflush(f);
	json_object_put(doc);
}
