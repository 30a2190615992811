// SPDX-License-Identifier: GPL-2.0
/*
 * nl_fake.c - the kernel's answers to GET and PID_GET in a dry run
 * (VCACHE_NL_DRYRUN, nl.h): read from $VCACHE_NL_FAKE, a document in the
 * format `vcache-config list --json` prints, whose cache objects may also
 * hold "pids": {"default": ..., "allow": [...], "deny": [...]}.  The
 * reverse of print_json.c, so a round trip tests both.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "nl.h"
#include "params.h"

/*
 * $VCACHE_NL_FAKE may name several files, "a.json:b.json:...": one per
 * reading, for vcache-monitor's tests; each GET or dump moves to the next
 * (and stays on the last).
 */
static int fake_reading = -1;

static json_object *load(void)
{
	const char *list = getenv("VCACHE_NL_FAKE");
	char path[4096];
	const char *p = list, *e;
	json_object *o;
	int i;

	for (i = 0; p && i < fake_reading && strchr(p, ':'); i++)
		p = strchr(p, ':') + 1;
	if (p) {
		e = strchr(p, ':');
		snprintf(path, sizeof(path), "%.*s",
			 (int)(e ? (size_t)(e - p) : strlen(p)), p);
	}
	if (!list) {
		vcc_fail(VCACHE_EXIT_NOENT, "dry run: no VCACHE_NL_FAKE file, so no caches");
		return NULL;
	}
	o = json_object_from_file(path);
	if (!o)
		vcc_fail(VCACHE_EXIT_FAIL, "dry run: cannot read %s: %s", path,
			 json_util_get_last_err());
	return o;
}

/* @key of @o: true if present and not null */
static bool get(json_object *o, const char *key, json_object **v)
{
	return json_object_object_get_ex(o, key, v) && *v;
}

static void str(json_object *o, const char *key, char *dst, size_t len,
		u64 *has, int bit)
{
	json_object *v;

	if (get(o, key, &v)) {
		vcc_strlcpy(dst, json_object_get_string(v), len);
		*has |= 1ULL << bit;
	}
}

static bool num(json_object *o, const char *key, u64 *dst, u64 *has, int bit)
{
	json_object *v;

	if (!get(o, key, &v))
		return false;
	*dst = json_object_get_uint64(v);
	*has |= 1ULL << bit;
	return true;
}

static void word(json_object *o, const char *key, const struct vcc_name *t,
		 u8 *dst, u64 *has, int bit)
{
	json_object *v;

	if (get(o, key, &v)) {
		*dst = (u8)vcc_name_lookup(t, json_object_get_string(v));
		*has |= 1ULL << bit;
	}
}

static void dev(json_object *o, const char *key, u64 *dst, u64 *has, int bit)
{
	unsigned int ma, mi;
	json_object *v;

	if (get(o, key, &v) &&
	    sscanf(json_object_get_string(v), "%u:%u", &ma, &mi) == 2) {
		*dst = (u64)ma << 32 | mi;
		*has |= 1ULL << bit;
	}
}

static void table(json_object *o, bool *has, u64 *val, int max,
		  const char *(*name)(int));

static void backing(json_object *o, struct vcc_backing_info *b)
{
	json_object *v;
	u64 x;

	str(o, "devname", b->devname, sizeof(b->devname), &b->has, VCACHE_B_DEVNAME);
	str(o, "disk", b->disk, sizeof(b->disk), &b->has, VCACHE_B_DISK);
	str(o, "backing_disk", b->backing_disk, sizeof(b->backing_disk),
	    &b->has, VCACHE_B_BACKING_DISK);
	str(o, "ident", b->ident, sizeof(b->ident), &b->has, VCACHE_B_IDENT);
	dev(o, "backing_dev", &b->dev, &b->has, VCACHE_B_DEV);
	if (num(o, "id", &x, &b->has, VCACHE_B_ID))
		b->id = (u32)x;
	word(o, "state", vcc_bstates, &b->state, &b->has, VCACHE_B_STATE);
	num(o, "size_bytes", &b->size, &b->has, VCACHE_B_SIZE);
	num(o, "dirty_bytes", &b->dirty_bytes, &b->has, VCACHE_B_DIRTY_BYTES);
	if (get(o, "stats", &v)) {
		VCC_SET_HAS(b, VCACHE_B_STATS);
		table(v, b->has_stat, b->stat, VCACHE_S_MAX, vcc_stat_name);
	}
}

static void flush(json_object *o, struct vcc_flush_info *f)
{
	json_object *v;
	u64 x;

	if (get(o, "running", &v)) {
		f->running = json_object_get_boolean(v);
		VCC_SET_HAS(f, VCACHE_FL_RUNNING);
	}
	num(o, "target_blocks", &f->target, &f->has, VCACHE_FL_TARGET);
	num(o, "done_blocks", &f->done, &f->has, VCACHE_FL_DONE);
	num(o, "remaining_blocks", &f->remaining, &f->has, VCACHE_FL_REMAINING);
	if (num(o, "last_result_errno", &x, &f->has, VCACHE_FL_RESULT))
		f->result = (u32)x;
	if (num(o, "seq", &x, &f->has, VCACHE_FL_SEQ))
		f->seq = (u32)x;
}

static void table(json_object *o, bool *has, u64 *val, int max,
		  const char *(*name)(int))
{
	json_object_object_foreach(o, key, v) {
		int i;

		for (i = 1; i <= max; i++)
			if (name(i) && !strcmp(name(i), key)) {
				has[i] = true;
				val[i] = json_object_get_uint64(v);
			}
	}
}

static void cache(json_object *o, struct vcc_cache_info *c)
{
	json_object *v;
	u64 x;
	size_t i;

	str(o, "name", c->name, sizeof(c->name), &c->has, VCACHE_A_NAME);
	word(o, "state", vcc_states, &c->state, &c->has, VCACHE_A_STATE);
	word(o, "mode", vcc_modes, &c->mode, &c->has, VCACHE_A_MODE);
	word(o, "requested_mode", vcc_modes, &c->req_mode, &c->has,
	     VCACHE_A_REQ_MODE);
	word(o, "policy", vcc_policies, &c->policy, &c->has, VCACHE_A_POLICY);
	word(o, "pid_default", vcc_pid_defaults, &c->pid_default, &c->has,
	     VCACHE_A_PID_DEFAULT);
	dev(o, "cache_dev", &c->cache_dev, &c->has, VCACHE_A_CACHE_DEV);
	str(o, "cache_disk", c->cache_disk, sizeof(c->cache_disk), &c->has,
	    VCACHE_A_CACHE_DISK);
	str(o, "card", c->card, sizeof(c->card), &c->has, VCACHE_A_CARD);
	num(o, "region_start_bytes", &c->region_start, &c->has, VCACHE_A_REGION_START);
	num(o, "cache_size_bytes", &c->cache_size, &c->has, VCACHE_A_CACHE_SIZE);
	if (num(o, "block_size_bytes", &x, &c->has, VCACHE_A_BLOCK_SIZE))
		c->block_size = (u32)x;
	if (get(o, "flush", &v)) {
		VCC_SET_HAS(c, VCACHE_A_FLUSH);
		flush(v, &c->flush);
	}
	if (get(o, "params", &v)) {
		VCC_SET_HAS(c, VCACHE_A_PARAMS);
		table(v, c->has_param, c->param, VCACHE_P_MAX, vcc_param_name);
	}
	if (get(o, "stats", &v)) {
		VCC_SET_HAS(c, VCACHE_A_STATS);
		table(v, c->has_stat, c->stat, VCACHE_S_MAX, vcc_stat_name);
	}
	if (get(o, "backing", &v))
		for (i = 0; i < json_object_array_length(v) &&
		     c->nr_backing < VCC_MAX_BACKING; i++) {
			VCC_SET_HAS(c, VCACHE_A_BACKING);
			backing(json_object_array_get_idx(v, i),
				&c->backing[c->nr_backing++]);
		}
}

int vcc_fake_caches(struct vcc_cache_info **cs, unsigned int *n)
{
	json_object *o, *a;
	size_t i, len;

	fake_reading++;
	o = load();
	if (!o)
		return -1;
	if (!get(o, "caches", &a) || !json_object_is_type(a, json_type_array)) {
		json_object_put(o);
		return vcc_fail(VCACHE_EXIT_FAIL, "dry run: no \"caches\" array in %s",
				getenv("VCACHE_NL_FAKE"));
	}
	len = json_object_array_length(a);
	*cs = calloc(len ? len : 1, sizeof(**cs));
	if (!*cs) {
		json_object_put(o);
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	}
	for (i = 0; i < len; i++)
		cache(json_object_array_get_idx(a, i), &(*cs)[i]);
	*n = (unsigned int)len;
	json_object_put(o);
	return 0;
}

/* The cache object named @name in document @o, or NULL. */
static json_object *find_cache(json_object *o, const char *name)
{
	json_object *a, *c, *v;
	size_t i;

	if (!get(o, "caches", &a))
		return NULL;
	for (i = 0; i < json_object_array_length(a); i++) {
		c = json_object_array_get_idx(a, i);
		if (get(c, "name", &v) && !strcmp(json_object_get_string(v), name))
			return c;
	}
	return NULL;
}

int vcc_fake_pids(const char *name, struct vcc_pid_info *p)
{
	json_object *o = load(), *c, *pids, *v;
	size_t j;
	int l;

	if (!o)
		return -1;
	c = find_cache(o, name);
	if (c && get(c, "pids", &pids)) {
		if (get(pids, "default", &v)) {
			p->has_default = true;
			p->pid_default = (u8)vcc_name_lookup(vcc_pid_defaults,
					json_object_get_string(v));
		}
		for (l = 0; l < 2; l++) {
			if (!get(pids, vcc_name_of(vcc_pid_lists, l), &v))
				continue;
			p->nr[l] = (unsigned int)json_object_array_length(v);
			p->pids[l] = calloc(p->nr[l] + 1, sizeof(u32));
			for (j = 0; p->pids[l] && j < p->nr[l]; j++)
				p->pids[l][j] = (u32)json_object_get_uint64(
					json_object_array_get_idx(v, j));
		}
		json_object_put(o);
		return 0;
	}
	json_object_put(o);
	return vcc_fail(VCACHE_EXIT_NOENT, "pid lists of cache %s: %s", name,
			strerror(ENOENT));
}

/*
 * "latency": {"read_hit": {"count": N, "sum_ns": N, "buckets": {"<index>": N, ...}},
 * ...} of the cache named @name (all zero when it has none).
 */
int vcc_fake_latency(const char *name, struct vcc_lat_info *l)
{
	json_object *o = load(), *c, *lat, *p, *b, *v;
	int k;

	if (!o)
		return -1;
	c = find_cache(o, name);
	if (!c) {
		json_object_put(o);
		return vcc_fail(VCACHE_EXIT_NOENT, "latency of cache %s: %s", name,
				strerror(ENOENT));
	}
	l->has = true;
	for (k = 0; get(c, "latency", &lat) && k < VCACHE_NR_LAT_PATHS; k++) {
		if (!get(lat, vcc_lat_path_name(k), &p))
			continue;
		if (get(p, "count", &v))
			l->count[k] = json_object_get_uint64(v);
		if (get(p, "sum_ns", &v))
			l->sum_ns[k] = json_object_get_uint64(v);
		if (!get(p, "buckets", &b))
			continue;
		json_object_object_foreach(b, key, n) {
			long idx = strtol(key, NULL, 10);

			if (idx >= 0 && idx < VCACHE_LAT_BUCKETS)
				l->b[k][idx] = json_object_get_uint64(n);
		}
	}
	json_object_put(o);
	return 0;
}
