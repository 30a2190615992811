// SPDX-License-Identifier: GPL-2.0
/*
 * print_json.c - list, show and pid list as JSON: raw integers in base
 * units, enums as words, every key always present (null when the kernel
 * did not say).  The schema is in vcache-config(8).
 */
#include <json-c/json.h>
#include <string.h>

#include "names.h"
#include "params.h"
#include "print.h"

static json_object *u64_obj(u64 v)
{
	return json_object_new_uint64(v);
}

/* add @key: @v if @has, else null */
static void add(json_object *o, const char *key, bool has, json_object *v)
{
	if (!has) {
		json_object_put(v);
		v = NULL;
	}
	json_object_object_add(o, key, v);
}

static json_object *str_obj(const char *s)
{
	return json_object_new_string(s);
}

static json_object *dev_obj(u64 dev)
{
	char buf[32];

	return str_obj(vcc_devstr(dev, buf, sizeof(buf)));
}

static json_object *flush_json(const struct vcc_cache_info *c)
{
	const struct vcc_flush_info *fl = &c->flush;
	json_object *o = json_object_new_object();

	add(o, "running", VCC_HAS(fl, VCACHE_FL_RUNNING),
	    json_object_new_boolean(fl->running));
	add(o, "target_blocks", VCC_HAS(fl, VCACHE_FL_TARGET), u64_obj(fl->target));
	add(o, "done_blocks", VCC_HAS(fl, VCACHE_FL_DONE), u64_obj(fl->done));
	add(o, "remaining_blocks", VCC_HAS(fl, VCACHE_FL_REMAINING),
	    u64_obj(fl->remaining));
	add(o, "remaining_bytes", VCC_HAS(fl, VCACHE_FL_REMAINING) &&
	    VCC_HAS(c, VCACHE_A_BLOCK_SIZE),
	    u64_obj(fl->remaining * c->block_size));
	add(o, "last_result_errno", VCC_HAS(fl, VCACHE_FL_RESULT), u64_obj(fl->result));
	add(o, "seq", VCC_HAS(fl, VCACHE_FL_SEQ), u64_obj(fl->seq));
	return o;
}

static json_object *backing_json(const struct vcc_backing_info *b)
{
	json_object *o = json_object_new_object();

	add(o, "devname", VCC_HAS(b, VCACHE_B_DEVNAME), str_obj(b->devname));
	add(o, "disk", VCC_HAS(b, VCACHE_B_DISK), str_obj(b->disk));
	add(o, "backing_disk", VCC_HAS(b, VCACHE_B_BACKING_DISK),
	    str_obj(b->backing_disk));
	add(o, "backing_dev", VCC_HAS(b, VCACHE_B_DEV) && b->dev, dev_obj(b->dev));
	add(o, "ident", VCC_HAS(b, VCACHE_B_IDENT), str_obj(b->ident));
	add(o, "id", VCC_HAS(b, VCACHE_B_ID), u64_obj(b->id));
	add(o, "state", VCC_HAS(b, VCACHE_B_STATE),
	    str_obj(vcc_name_of(vcc_bstates, b->state)));
	add(o, "size_bytes", VCC_HAS(b, VCACHE_B_SIZE), u64_obj(b->size));
	add(o, "dirty_bytes", VCC_HAS(b, VCACHE_B_DIRTY_BYTES),
	    u64_obj(b->dirty_bytes));
	if (VCC_HAS(b, VCACHE_B_STATS)) {
		json_object *s = json_object_new_object();
		int k;

		for (k = 1; k < VCC_NR_S; k++)
			if (b->has_stat[k] && vcc_stat_name(k))
				json_object_object_add(s, vcc_stat_name(k),
						       u64_obj(b->stat[k]));
		json_object_object_add(o, "stats", s);
	}
	return o;
}

/* One cache: the object of show, and of list's "caches" array. */
static json_object *cache_json(const struct vcc_cache_info *c)
{
	json_object *o = json_object_new_object(), *a, *p, *s;
	unsigned int i;
	int k;

	add(o, "name", true, str_obj(c->name));
	add(o, "state", VCC_HAS(c, VCACHE_A_STATE),
	    str_obj(vcc_name_of(vcc_states, c->state)));
	add(o, "mode", VCC_HAS(c, VCACHE_A_MODE),
	    str_obj(vcc_name_of(vcc_modes, c->mode)));
	add(o, "requested_mode", VCC_HAS(c, VCACHE_A_REQ_MODE),
	    str_obj(vcc_name_of(vcc_modes, c->req_mode)));
	add(o, "policy", VCC_HAS(c, VCACHE_A_POLICY),
	    str_obj(vcc_name_of(vcc_policies, c->policy)));
	add(o, "cache_dev", VCC_HAS(c, VCACHE_A_CACHE_DEV), dev_obj(c->cache_dev));
	add(o, "cache_disk", VCC_HAS(c, VCACHE_A_CACHE_DISK),
	    str_obj(c->cache_disk));
	add(o, "card", VCC_HAS(c, VCACHE_A_CARD), str_obj(c->card));
	add(o, "region_start_bytes", VCC_HAS(c, VCACHE_A_REGION_START),
	    u64_obj(c->region_start));
	add(o, "cache_size_bytes", VCC_HAS(c, VCACHE_A_CACHE_SIZE),
	    u64_obj(c->cache_size));
	add(o, "block_size_bytes", VCC_HAS(c, VCACHE_A_BLOCK_SIZE),
	    u64_obj(c->block_size));
	add(o, "dirty_bytes", true, u64_obj(vcc_cache_dirty(c)));
	add(o, "pid_default", VCC_HAS(c, VCACHE_A_PID_DEFAULT),
	    str_obj(vcc_name_of(vcc_pid_defaults, c->pid_default)));
	add(o, "flush", VCC_HAS(c, VCACHE_A_FLUSH), flush_json(c));
	a = json_object_new_array();
	for (i = 0; i < c->nr_backing; i++)
		json_object_array_add(a, backing_json(&c->backing[i]));
	json_object_object_add(o, "backing", a);
	p = json_object_new_object();
	for (k = 1; k <= VCACHE_P_MAX; k++)
		if (c->has_param[k])
			json_object_object_add(p, vcc_param_name(k),
					       u64_obj(c->param[k]));
	add(o, "params", VCC_HAS(c, VCACHE_A_PARAMS), p);
	s = json_object_new_object();
	for (k = 1; k < VCC_NR_S; k++)
		if (c->has_stat[k] && vcc_stat_name(k))
			json_object_object_add(s, vcc_stat_name(k),
					       u64_obj(c->stat[k]));
	add(o, "stats", VCC_HAS(c, VCACHE_A_STATS), s);
	return o;
}

static void out(FILE *f, json_object *o)
{
	fprintf(f, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void list(FILE *f, const struct vcc_cache_info *c, unsigned int n)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	unsigned int i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, cache_json(&c[i]));
	json_object_object_add(o, "caches", a);
	out(f, o);
}

/* JSON is always complete: --all changes only the text */
static void show(FILE *f, const struct vcc_cache_info *c, bool all)
{
	(void)all;
	out(f, cache_json(c));
}

static void pids(FILE *f, const struct vcc_pid_info *p)
{
	json_object *o = json_object_new_object();
	unsigned int l, i;

	add(o, "name", true, str_obj(p->name));
	add(o, "default", p->has_default,
	    str_obj(vcc_name_of(vcc_pid_defaults, p->pid_default)));
	for (l = 0; l < 2; l++) {
		json_object *a = json_object_new_array();

		for (i = 0; i < p->nr[l]; i++)
			json_object_array_add(a, u64_obj(p->pids[l][i]));
		json_object_object_add(o, vcc_name_of(vcc_pid_lists, (int)l), a);
		add(o, l ? "deny_hidden" : "allow_hidden", p->has_hidden[l],
		    u64_obj(p->hidden[l]));
	}
	for (l = 0; l < 2; l++) {
		json_object *a = json_object_new_array();

		for (i = 0; i < p->nr_cg[l]; i++) {
			json_object *c = json_object_new_object();

			add(c, "id", true, u64_obj(p->cg[l][i].id));
			add(c, "path", true, str_obj(p->cg[l][i].path));
			json_object_array_add(a, c);
		}
		json_object_object_add(o, l ? "cgroup_deny" : "cgroup_allow", a);
	}
	out(f, o);
}

const struct vcc_printer vcc_print_json = { list, show, pids };
