// SPDX-License-Identifier: GPL-2.0
/*
 * cmds.c - the commands: arguments (already checked) into requests.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "flush.h"
#include "guard.h"
#include "ident.h"
#include "job.h"
#include "names.h"
#include "print.h"
#include "probe.h"
#include "size.h"

#define NOMEM() vcc_fail(VCACHE_EXIT_FAIL, "out of memory")

static struct nl_msg *named_msg(struct vcc_nl *nl, int cmd, const char *name)
{
	struct nl_msg *msg = vcc_nl_msg(nl, cmd, 0);

	if (msg && nla_put_string(msg, VCACHE_A_NAME, name)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* BACKING nest for create/attach/hotplug: DEV, IDENT, optional DEVNAME */
static int put_backing(struct nl_msg *msg, const struct vcc_dev *b,
		       const char *devname)
{
	struct nlattr *n = nla_nest_start(msg, VCACHE_A_BACKING);

	if (!n || nla_put_u64(msg, VCACHE_B_DEV, vcc_devnum(b->major, b->minor)) ||
	    nla_put_string(msg, VCACHE_B_IDENT, b->ident) ||
	    (devname && nla_put_string(msg, VCACHE_B_DEVNAME, devname)))
		return -1;
	nla_nest_end(msg, n);
	return 0;
}

/* MODE, POLICY and one PARAMS nest with every parameter given */
static int put_settings(struct nl_msg *msg, const struct vcc_settings *s)
{
	struct nlattr *n;
	int i;
	bool any = false;

	if ((s->has_mode && nla_put_u8(msg, VCACHE_A_MODE, s->mode)) ||
	    (s->has_policy && nla_put_u8(msg, VCACHE_A_POLICY, s->policy)))
		return -1;
	for (i = 1; i < VCC_NR_P; i++)
		any |= s->has[i];
	if (!any)
		return 0;
	n = nla_nest_start(msg, VCACHE_A_PARAMS);
	if (!n)
		return -1;
	for (i = 1; i < VCC_NR_P; i++)
		if (s->has[i] && nla_put_u64(msg, i, s->v[i]))
			return -1;
	nla_nest_end(msg, n);
	return 0;
}

/* After create/attach: where the cached device is. */
/*
 * The kernel announces /dev/vcacheN; udev makes /dev/vcache/NAME a moment
 * later.  A script that runs the next command on that path right after
 * create or attach must find it: wait for it (5 s at most, and only where
 * udev runs).
 */
static void wait_udev_link(const char *devname)
{
	char path[128];
	int i;

	if (access("/run/udev/control", F_OK))
		return;
	snprintf(path, sizeof(path), "/dev/vcache/%s", devname);
	for (i = 0; i < 100 && access(path, F_OK); i++)
		usleep(50000);
}

static void report_backing(struct vcc_nl *nl, const char *cache,
			   const struct vcc_dev *b, const char *verb)
{
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	const struct vcc_backing_info *bk = NULL;

	if (c && !vcc_nl_get(nl, cache, c, NULL))
		bk = vcc_find_backing(c, NULL, vcc_devnum(b->major, b->minor));
	if (bk)
		wait_udev_link(bk->devname);
	if (bk)
		printf("%s %s: /dev/vcache/%s (%s) caches %s (identity %s) through %s\n",
		       cache, verb, bk->devname, bk->disk, b->path, b->ident,
		       c->cache_disk);
	else
		printf("%s %s: caches %s (identity %s)\n", cache, verb, b->path,
		       b->ident);
	free(c);
}

/*
 * A cache on a plain block device is found again from its superblock:
 * create (which formats) refuses to destroy one without --force, saying
 * what it would destroy.  A card's caches live in its regions: the card
 * refuses a duplicate name itself.
 */
static int create_guard(const struct vcc_args *a)
{
	struct vcc_probe p;
	char h[32];
	int rc;

	if (a->cache.is_card || a->force)
		return 0;
	rc = vcc_probe_cache(a->cache.path, true, &p);
	if (rc < 0)
		return vcc_fail(VCACHE_EXIT_FAIL, "cannot read %s: %s",
				a->cache.path, strerror(errno));
	if (!rc)
		return 0;
	return vcc_fail(VCACHE_EXIT_BUSY,
			"%s holds a vcache cache%s%s%s (format %u, %llu blocks of %u bytes, %s) with %s (%llu bytes) of dirty data%s: creating a cache there destroys it.\n"
			"  load it instead:   vcache-config hotplug %s\n"
			"  or destroy it:     vcache-config create ... --force",
			a->cache.path, p.name[0] ? " named '" : "", p.name,
			p.name[0] ? "'" : "", p.version,
			(unsigned long long)p.nr_blocks, p.block_size,
			p.clean ? "shut down cleanly" : "not shut down cleanly",
			vcc_human(p.dirty_bytes, h, sizeof(h)),
			(unsigned long long)p.dirty_bytes,
			p.bad_sectors ? " (and record sectors that do not verify)" : "",
			a->cache.path);
}

int vcc_cmd_create(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg;
	char what[256];

	if (create_guard(a))
		return -1;
	msg = named_msg(nl, VCACHE_CMD_CREATE, a->name);

	if (!msg ||
	    nla_put_u64(msg, VCACHE_A_CACHE_DEV,
			vcc_devnum(a->cache.major, a->cache.minor)) ||
	    put_backing(msg, &a->backing, a->devname) ||
	    (a->cache_size && nla_put_u64(msg, VCACHE_A_CACHE_SIZE, a->cache_size)) ||
	    (a->block_size && nla_put_u32(msg, VCACHE_A_BLOCK_SIZE, a->block_size)) ||
	    put_settings(msg, &a->set)) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "create %s (cache device %s, backing device %s)",
		 a->name, a->cache.path, a->backing.path);
	if (vcc_nl_do(nl, msg, what, NULL))
		return -1;
	report_backing(nl, a->name, &a->backing, "created");
	return 0;
}

int vcc_cmd_attach(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg = named_msg(nl, VCACHE_CMD_ATTACH, a->name);
	char what[256];

	if (!msg || put_backing(msg, &a->backing, a->devname)) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "attach %s to cache %s", a->backing.path,
		 a->name);
	if (vcc_nl_do(nl, msg, what, NULL))
		return -1;
	report_backing(nl, a->name, &a->backing, "attached");
	return 0;
}

/*
 * detach NAME: NAME is a cached device's name (/dev/vcache/NAME), or a
 * cache's name with --backing DEV or a single backing device.
 */
static int find_detach(struct vcc_nl *nl, struct vcc_args *a,
		       struct vcc_cache_info *out, unsigned int *idx)
{
	struct vcc_cache_info *cs = NULL;
	unsigned int n = 0, i, j;
	u64 dev = a->has_backing ? vcc_devnum(a->backing.major, a->backing.minor) : 0;
	int rc = -1;

	if (vcc_nl_dump(nl, &cs, &n))
		return -1;
	for (i = 0; i < n && rc; i++)
		for (j = 0; j < cs[i].nr_backing && rc; j++) {
			const struct vcc_backing_info *b = &cs[i].backing[j];
			bool by_name = !dev && !strcmp(b->devname, a->name);
			bool by_dev = dev && !strcmp(cs[i].name, a->name) &&
				      b->dev == dev;
			bool single = !dev && !strcmp(cs[i].name, a->name) &&
				      cs[i].nr_backing == 1;

			if (by_name || by_dev || single) {
				*out = cs[i];
				*idx = j;
				rc = 0;
			}
		}
	free(cs);
	if (!rc)
		return 0;
	if (dev)
		return vcc_fail(VCACHE_EXIT_NOENT, "detach: %s is not a backing device of a cache named %s (vcache-config list shows the caches)",
				a->backing.path, a->name);
	return vcc_fail(VCACHE_EXIT_NOENT, "detach: no cached device named %s (vcache-config list shows them; a cache with several backing devices also takes --backing DEV)",
			a->name);
}

int vcc_cmd_detach(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	const struct vcc_backing_info *b;
	struct nl_msg *msg;
	struct nlattr *n;
	char what[256], label[64];
	unsigned int idx = 0;
	int rc = -1;

	if (!c)
		return NOMEM();
	if (find_detach(nl, a, c, &idx))
		goto out;
	b = &c->backing[idx];
	if (vcc_guard_detach(c, b, a->flags))
		goto out;
	snprintf(label, sizeof(label), "(%s)", b->devname);
	if ((a->flags & VCACHE_F_FLUSH) && b->dirty_bytes) {
		struct vcc_flush_req r = { .name = c->name, .devname = b->devname,
					   .label = label };

		if (vcc_flush_run(nl, &r))
			goto out;
	}
	snprintf(what, sizeof(what), "detach %s from cache %s (backing disk %s, %s)",
		 b->devname, c->name, b->backing_disk[0] ? b->backing_disk : "-",
		 vcc_name_of(vcc_bstates, b->state));
	msg = named_msg(nl, VCACHE_CMD_DETACH, c->name);
	n = msg ? nla_nest_start(msg, VCACHE_A_BACKING) : NULL;
	if (!n || nla_put_string(msg, VCACHE_B_DEVNAME, b->devname)) {
		nlmsg_free(msg);
		rc = NOMEM();
		goto out;
	}
	nla_nest_end(msg, n);
	if (nla_put_u32(msg, VCACHE_A_FLAGS, a->flags)) {
		nlmsg_free(msg);
		rc = NOMEM();
		goto out;
	}
	rc = vcc_nl_do(nl, msg, what, NULL);
	if (!rc)
		printf("%s: detached from cache %s%s\n", b->devname, c->name,
		       (a->flags & VCACHE_F_KEEP_DIRTY) && b->dirty_bytes ?
		       "; its dirty data stays on the cache until it is attached again" : "");
out:
	free(c);
	return rc;
}

int vcc_cmd_delete(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	struct nl_msg *msg;
	char what[128];
	int rc = -1;

	if (!c)
		return NOMEM();
	if (vcc_nl_get(nl, a->name, c, NULL) || vcc_guard_delete(c, a->flags))
		goto out;
	if ((a->flags & VCACHE_F_FLUSH) && vcc_cache_dirty(c)) {
		struct vcc_flush_req r = { .name = a->name };

		if (vcc_flush_run(nl, &r))
			goto out;
	}
	snprintf(what, sizeof(what), "delete cache %s (%s)", a->name,
		 vcc_name_of(vcc_states, c->state));
	msg = named_msg(nl, VCACHE_CMD_DELETE, a->name);
	if (!msg || nla_put_u32(msg, VCACHE_A_FLAGS, a->flags)) {
		nlmsg_free(msg);
		rc = NOMEM();
		goto out;
	}
	rc = vcc_nl_do(nl, msg, what, NULL);
	if (!rc)
		printf("cache %s deleted\n", a->name);
out:
	free(c);
	return rc;
}

int vcc_cmd_flush(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_flush_req r = { .name = a->name, .background = a->background };

	if (a->has_backing) {
		r.dev = vcc_devnum(a->backing.major, a->backing.minor);
		r.label = a->backing.path;
	}
	return vcc_flush_run(nl, &r);
}

int vcc_cmd_set(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg = named_msg(nl, VCACHE_CMD_SET, a->name);
	char what[96];

	/* one message: the kernel applies all of it or nothing */
	if (!msg || put_settings(msg, &a->set)) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "set on cache %s", a->name);
	return vcc_nl_do(nl, msg, what, NULL);
}

static int pid_msg(struct vcc_nl *nl, struct vcc_args *a, int list, int op,
		   const u32 *pids, unsigned int n)
{
	struct nl_msg *msg = named_msg(nl, VCACHE_CMD_PID_SET, a->name);
	struct nlattr *nest;
	char what[128];
	unsigned int i;

	if (!msg || nla_put_u8(msg, VCACHE_A_PID_LIST, (u8)list) ||
	    nla_put_u8(msg, VCACHE_A_PID_OP, (u8)op))
		goto nomem;
	if (op != VCACHE_PID_CLEAR) {
		nest = nla_nest_start(msg, VCACHE_A_PIDS);
		if (!nest)
			goto nomem;
		for (i = 0; i < n; i++)
			if (nla_put_u32(msg, VCACHE_A_PID, pids[i]))
				goto nomem;
		nla_nest_end(msg, nest);
	}
	snprintf(what, sizeof(what), "pid %s %s on cache %s",
		 vcc_name_of(vcc_pid_lists, list),
		 op == VCACHE_PID_ADD ? "add" : op == VCACHE_PID_DEL ? "del" : "clear",
		 a->name);
	return vcc_nl_do(nl, msg, what, NULL);
nomem:
	nlmsg_free(msg);
	return NOMEM();
}

/*
 * One cgroup on or off a cgroup list: the kernel takes the cgroup from a
 * descriptor of its directory (so paths mean what they mean here, in our
 * mount and cgroup namespace); a path not found that is not under
 * /sys/fs/cgroup is tried there (list prints cgroup paths); id:N deletes
 * by the id list prints (a removed cgroup has no directory).
 */
static int cgroup_msg(struct vcc_nl *nl, struct vcc_args *a, const char *cg)
{
	struct nl_msg *msg = named_msg(nl, VCACHE_CMD_PID_SET, a->name);
	char what[384], alt[300];
	int fd = -1, rc;
	u64 id;

	if (!msg || nla_put_u8(msg, VCACHE_A_PID_LIST, (u8)a->pid_list) ||
	    nla_put_u8(msg, VCACHE_A_PID_OP, (u8)a->pid_op))
		goto nomem;
	snprintf(what, sizeof(what), "pid %s %s %s on cache %s",
		 vcc_name_of(vcc_pid_lists, a->pid_list),
		 a->pid_op == VCACHE_PID_ADD ? "add" : "del", cg, a->name);
	if (!strncmp(cg, "id:", 3) && !vcc_parse_u64(cg + 3, &id)) {
		if (nla_put_u64(msg, VCACHE_A_CGROUP_ID, id))
			goto nomem;
		return vcc_nl_do(nl, msg, what, NULL);
	}
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && cg[0] == '/' &&
	    strncmp(cg, "/sys/fs/cgroup/", 15) &&
	    (size_t)snprintf(alt, sizeof(alt), "/sys/fs/cgroup%s", cg) < sizeof(alt))
		fd = open(alt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = errno;
		nlmsg_free(msg);
		return vcc_fail(rc == ENOENT || rc == ENOTDIR ? VCACHE_EXIT_USAGE :
				VCACHE_EXIT_FAIL, "%s: %s", what, strerror(rc));
	}
	if (nla_put_u32(msg, VCACHE_A_CGROUP_FD, (u32)fd)) {
		close(fd);
		goto nomem;
	}
	rc = vcc_nl_do(nl, msg, what, NULL);
	close(fd);
	return rc;
nomem:
	nlmsg_free(msg);
	return NOMEM();
}

static void pid_info_free(struct vcc_pid_info *p)
{
	free(p->pids[0]);
	free(p->pids[1]);
	free(p->cg[0]);
	free(p->cg[1]);
}

int vcc_cmd_pid(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_pid_info p;
	struct nl_msg *msg;
	unsigned int i, n;
	char what[96];
	int rc;

	switch (a->pid_cmd) {
	case VCC_PID_LIST_CMD:
		if (vcc_nl_pid_get(nl, a->name, &p))
			return -1;
		(a->json ? &vcc_print_json : &vcc_print_text)->pids(stdout, &p);
		pid_info_free(&p);
		return 0;
	case VCC_PID_CLEAR_ALL:
		return pid_msg(nl, a, VCACHE_PID_ALLOW, VCACHE_PID_CLEAR, NULL, 0) ||
		       pid_msg(nl, a, VCACHE_PID_DENY, VCACHE_PID_CLEAR, NULL, 0) ||
		       pid_msg(nl, a, VCACHE_PID_CG_ALLOW, VCACHE_PID_CLEAR, NULL, 0) ||
		       pid_msg(nl, a, VCACHE_PID_CG_DENY, VCACHE_PID_CLEAR, NULL, 0) ?
		       -1 : 0;
	case VCC_PID_DEFAULT_CMD:
		msg = named_msg(nl, VCACHE_CMD_PID_SET, a->name);
		if (!msg || nla_put_u8(msg, VCACHE_A_PID_DEFAULT, (u8)a->pid_default)) {
			nlmsg_free(msg);
			return NOMEM();
		}
		snprintf(what, sizeof(what), "pid default on cache %s", a->name);
		return vcc_nl_do(nl, msg, what, NULL);
	case VCC_PID_CHANGE:
		if (a->pid_op == VCACHE_PID_CLEAR)
			return pid_msg(nl, a, a->pid_list, a->pid_op, NULL, 0);
		for (i = 0; i < a->nr_cgroups; i++) {
			rc = cgroup_msg(nl, a, a->cgroups[i]);
			if (rc && i)
				fprintf(stderr, "vcache-config: note: the first %u cgroups were already %s\n",
					i, a->pid_op == VCACHE_PID_ADD ? "added" : "removed");
			if (rc)
				return rc;
		}
		/* at most VCACHE_PIDS_MAX per message */
		for (i = 0; i < a->nr_pids; i += n) {
			n = a->nr_pids - i;
			if (n > VCACHE_PIDS_MAX)
				n = VCACHE_PIDS_MAX;
			rc = pid_msg(nl, a, a->pid_list, a->pid_op, a->pids + i, n);
			if (rc && i)
				fprintf(stderr, "vcache-config: note: the first %u PIDs were already %s\n",
					i, a->pid_op == VCACHE_PID_ADD ? "added" : "removed");
			if (rc)
				return rc;
		}
		return 0;
	}
	return vcc_usage_err("pid: nothing to do");
}

int vcc_cmd_list(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_cache_info *cs = NULL;
	unsigned int n = 0;

	if (vcc_nl_dump(nl, &cs, &n))
		return -1;
	(a->json ? &vcc_print_json : &vcc_print_text)->list(stdout, cs, n);
	free(cs);
	return 0;
}

int vcc_cmd_show(struct vcc_nl *nl, struct vcc_args *a)
{
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return NOMEM();
	rc = vcc_nl_get(nl, a->name, c, NULL);
	if (!rc)
		(a->json ? &vcc_print_json : &vcc_print_text)->show(stdout, c, a->all);
	free(c);
	return rc;
}

/*
 * Is @b used underneath another device (device-mapper, md)?  A cache seen
 * through it (a linear map from sector 0) lives on the upper device.
 */
static bool held_by_another(const struct vcc_dev *b)
{
	char path[512];
	struct dirent *de;
	bool held = false;
	DIR *d;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/holders",
		 vcc_sysfs_root(), b->major, b->minor);
	d = opendir(path);
	if (!d)
		return false;
	while (!held && (de = readdir(d)))
		held = de->d_name[0] != '.';
	closedir(d);
	return held;
}

/*
 * @b holds a cache (its superblock): ask the kernel to load it.  1 loaded,
 * 0 none there or loaded already, -1 error.
 */
static int hotplug_cache(struct vcc_nl *nl, const struct vcc_dev *b)
{
	struct nl_msg *msg;
	struct vcc_probe p;
	char what[128];
	int err;

	if (b->is_card || held_by_another(b) ||
	    vcc_probe_cache(b->path, false, &p) != 1)
		return 0;
	msg = vcc_nl_msg(nl, VCACHE_CMD_HOTPLUG, 0);
	if (!msg || put_backing(msg, b, NULL) ||
	    nla_put_u32(msg, VCACHE_A_FLAGS, VCACHE_F_LOAD_CACHE)) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "load the cache on %s", b->path);
	if (vcc_nl_do(nl, msg, what, &err)) {
		size_t n = strlen(vcc_errbuf);

		if (err == EBUSY)
			return 0;	/* loaded (or in use) already */
		if (err == EUCLEAN || err == EIO)
			snprintf(vcc_errbuf + n, sizeof(vcc_errbuf) - n,
				 "\n  (damaged metadata is never salvaged automatically: 'vcache-config salvage %s' loads what verifies; see 'vcache-config help salvage')",
				 b->path);
		return -1;
	}
	printf("%s: cache %s loaded\n", b->path, p.name[0] ? p.name : "(unnamed)");
	return 1;
}

/* Offer @b to the caches: 1 attached, 0 nobody waits for it, -1 error. */
static int hotplug_one(struct vcc_nl *nl, const struct vcc_dev *b)
{
	struct nl_msg *msg = vcc_nl_msg(nl, VCACHE_CMD_HOTPLUG, 0);
	char what[128];
	int err;

	if (!msg || put_backing(msg, b, NULL)) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "hotplug %s (identity %s)", b->path,
		 b->ident);
	/*
	 * ENOENT: no cache waits for it; EALREADY: another offer of it (udev
	 * sends one per event) is attaching it
	 */
	if (vcc_nl_do(nl, msg, what, &err))
		return err == ENOENT || err == EALREADY ? 0 : -1;
	printf("%s (identity %s): attached to the cache that was waiting for it\n",
	       b->path, b->ident);
	return 1;
}

/*
 * hotplug --all: how long a device's step may take before the device is
 * said not to answer (it is then waited for at the end), and how many
 * devices are read at once besides those.
 */
#define HOTPLUG_WAIT_MS 5000
#define HOTPLUG_JOBS 8

/* One device's step of hotplug --all, in its own process (job.h). */
struct hp_step {
	int pass;		/* 0: load its cache; 1: offer it */
	struct vcc_dev b;
};

static int hotplug_step(void *arg)
{
	struct hp_step *st = arg;
	struct vcc_nl *nl = NULL;
	int r;

	if (vcc_nl_open(&nl)) {
		vcc_nl_close(nl);
		/* unloaded meanwhile: nothing to offer, as in main() */
		return vcc_err_code == VCACHE_EXIT_NOMOD ? 0 : -1;
	}
	r = st->pass == 0 ? hotplug_cache(nl, &st->b) : hotplug_one(nl, &st->b);
	vcc_nl_close(nl);
	return r;
}

struct hp_state {
	struct vcc_job *jobs;	/* running, in time or late */
	unsigned int n, cap;
	bool offering;		/* pass 1 begun: a cache loaded now is late */
	bool late_load;		/* ... and its devices must be offered again */
	int rc, first_code;
	char first[sizeof(vcc_errbuf)];
};

/*
 * A step ended with @r: keep the first failure to end (a later device's
 * ordinary ENOENT, nobody waits for it, also leaves its message).
 */
static void hp_result(struct hp_state *hs, int tag, int r, int code,
		      const char *msg)
{
	if (tag == 0 && r > 0 && hs->offering)
		hs->late_load = true;
	if (r >= 0)
		return;
	if (!hs->rc) {
		vcc_strlcpy(hs->first, msg, sizeof(hs->first));
		hs->first_code = code;
	}
	hs->rc = -1;
}

static unsigned int hp_in_time(const struct hp_state *hs)
{
	unsigned int i, k = 0;

	for (i = 0; i < hs->n; i++)
		k += !hs->jobs[i].late;
	return k;
}

/*
 * Steps past due are said not to answer (and hp_wait() returns: room for
 * the next device); else wait for the first step to end, at most until
 * the oldest step still in time is due (for ever if every step is late).
 * 0 when something happened, -1 if nothing runs.
 */
static int hp_wait(struct hp_state *hs)
{
	long long now = vcc_now_ms(), due = -1;
	bool turned = false;
	unsigned int i;
	int k;

	if (!hs->n)
		return -1;
	for (i = 0; i < hs->n; i++) {
		struct vcc_job *j = &hs->jobs[i];
		long long left = j->start_ms + HOTPLUG_WAIT_MS - now;

		if (j->late)
			continue;
		if (left <= 0) {
			fprintf(stderr, "vcache-config: hotplug: %s does not answer after %d s: the other devices go on, it is waited for at the end\n",
				j->what, HOTPLUG_WAIT_MS / 1000);
			j->late = true;
			turned = true;
			continue;
		}
		if (due < 0 || left < due)
			due = left;
	}
	if (turned)
		return 0;	/* room for the next device now */
	k = vcc_job_wait_any(hs->jobs, hs->n, (int)due);
	if (k >= 0) {
		struct vcc_job *j = &hs->jobs[k];

		hp_result(hs, j->tag, j->r, j->code, j->msg);
		hs->jobs[k] = hs->jobs[--hs->n];
	}
	return 0;
}

/* Start one device's step, with room for it among the steps in time. */
static void hp_run(struct hp_state *hs, struct hp_step *st)
{
	struct vcc_job *j;
	int r;

	while (hp_in_time(hs) >= HOTPLUG_JOBS)
		hp_wait(hs);
	if (hs->n == hs->cap) {
		unsigned int cap = hs->cap ? 2 * hs->cap : 16;
		struct vcc_job *n = realloc(hs->jobs, cap * sizeof(*n));

		if (n) {
			hs->jobs = n;
			hs->cap = cap;
		}
	}
	while (hs->n < hs->cap) {
		j = &hs->jobs[hs->n];
		snprintf(j->what, sizeof(j->what), "%s", st->b.path);
		j->tag = st->pass;
		if (!vcc_job_start(j, hotplug_step, st)) {
			hs->n++;
			return;
		}
		/* no process to be had: make room by waiting for one */
		if (hp_wait(hs))
			break;
	}
	/* nothing else runs (or no memory to track it): here, then */
	r = hotplug_step(st);
	hp_result(hs, st->pass, r, vcc_err_code, vcc_errbuf);
}

/* One pass over every block device of the system. */
static int hp_pass(struct hp_state *hs, int pass)
{
	struct dirent *de;
	DIR *dir;

	dir = opendir("/sys/class/block");
	if (!dir)
		return vcc_fail(VCACHE_EXIT_FAIL, "cannot list /sys/class/block: %s",
				strerror(errno));
	while ((de = readdir(dir))) {
		struct hp_step st;
		char path[300];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		st.pass = pass;
		if (vcc_dev_open(path, &st.b) || st.b.is_card || st.b.is_cached)
			continue;
		if (pass == 1 && !st.b.ident[0])
			continue;	/* no identity: nobody can wait for it */
		hp_run(hs, &st);
	}
	closedir(dir);
	return 0;
}

/* Until every step still in time (@all: every step) has ended. */
static void hp_drain(struct hp_state *hs, bool all)
{
	while (hs->n && (all || hp_in_time(hs)))
		hp_wait(hs);
}

/*
 * hotplug --all: every block device of the system is offered (the module
 * was loaded; a card came back with caches whose backing devices were
 * there before it): caches on block devices first, then their backing
 * devices.  Each device's step runs in a child process, several at once
 * (hp_run()): a disk that does not answer holds its own step only, not
 * the caches of the other disks; it is waited for at the end, and a cache
 * it then brings has its devices offered again.
 */
static int hotplug_all(struct vcc_nl *nl)
{
	struct hp_state hs = { 0 };
	int pass, err = 0;

	(void)nl;	/* each step opens its own */
	for (pass = 0; pass < 2 && !err; pass++) {
		hs.offering = pass == 1;
		err = hp_pass(&hs, pass);
		hp_drain(&hs, false);
	}
	hp_drain(&hs, true);
	if (!err && hs.late_load) {
		hs.late_load = false;
		err = hp_pass(&hs, 1);
		hp_drain(&hs, true);
	}
	free(hs.jobs);
	if (err)
		return -1;	/* the listing failed: its error */
	if (hs.rc)
		vcc_fail(hs.first_code, "%s", hs.first);
	return hs.rc;
}

int vcc_cmd_hotplug(struct vcc_nl *nl, struct vcc_args *a)
{
	int r;

	if (a->all)
		return hotplug_all(nl);
	/* a cache device: its cache, then every device it may wait for */
	r = hotplug_cache(nl, &a->backing);
	if (r > 0)
		return hotplug_all(nl);
	if (r < 0)
		return -1;
	return hotplug_one(nl, &a->backing) < 0 ? -1 : 0;
}

int vcc_cmd_ident(struct vcc_nl *nl, struct vcc_args *a)
{
	(void)nl;
	if (!a->backing.ident[0])
		return vcc_fail(VCACHE_EXIT_FAIL, "%s (%s) has no stable identity (no WWN, serial, DM/MD uuid or partition uuid in sysfs); vcache will not cache it without --ident",
				a->backing.path, a->backing.name);
	printf("%s\n", a->backing.ident);
	return 0;
}

int vcc_cmd_reset_stats(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg = named_msg(nl, VCACHE_CMD_RESET_STATS, a->name);
	char what[96];

	if (!msg)
		return NOMEM();
	snprintf(what, sizeof(what), "reset-stats of cache %s", a->name);
	return vcc_nl_do(nl, msg, what, NULL);
}

int vcc_cmd_repair_table(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg = vcc_nl_msg(nl, VCACHE_CMD_REPAIR_TABLE, 0);
	char what[160];
	size_t n;
	int err = 0;

	if (!msg || nla_put_u64(msg, VCACHE_A_CACHE_DEV,
				vcc_devnum(a->cache.major, a->cache.minor)) ||
	    (a->force && nla_put_u32(msg, VCACHE_A_FLAGS, VCACHE_F_FORCE))) {
		nlmsg_free(msg);
		return NOMEM();
	}
	snprintf(what, sizeof(what), "repair-table %s%s", a->cache.name,
		 a->force ? " --force" : "");
	if (vcc_nl_do(nl, msg, what, &err)) {
		n = strlen(vcc_errbuf);
		if (err == EBUSY)
			snprintf(vcc_errbuf + n, sizeof(vcc_errbuf) - n,
				 "\n  --force writes an empty table and forgets these caches: their data stays on the card, but no cache can be loaded from it any more and the raw disk %s may overwrite it",
				 a->cache.name);
		else if (err == EINVAL)
			snprintf(vcc_errbuf + n, sizeof(vcc_errbuf) - n,
				 "\n  (only a damaged table is rewritten: see vcache-config cards)");
		return -1;
	}
	printf("%s: card-space table rewritten, empty%s; the raw disk is read-write\n",
	       a->cache.name,
	       a->force ? " (any cache the damaged table listed is forgotten)" : "");
	return 0;
}

/*
 * Load a cache whose metadata did not verify, skipping what does not: a
 * card cache by NAME (VCACHE_CMD_SALVAGE), a plain device's by DEV
 * (HOTPLUG with LOAD_CACHE | SALVAGE).
 */
int vcc_cmd_salvage(struct vcc_nl *nl, struct vcc_args *a)
{
	struct nl_msg *msg;
	char what[160];
	int err = 0;

	if (a->has_cache) {
		msg = vcc_nl_msg(nl, VCACHE_CMD_HOTPLUG, 0);
		if (!msg || put_backing(msg, &a->cache, NULL) ||
		    nla_put_u32(msg, VCACHE_A_FLAGS,
				VCACHE_F_LOAD_CACHE | VCACHE_F_SALVAGE)) {
			nlmsg_free(msg);
			return NOMEM();
		}
		snprintf(what, sizeof(what), "salvage the cache on %s",
			 a->cache.path);
	} else {
		msg = named_msg(nl, VCACHE_CMD_SALVAGE, a->name);
		if (!msg)
			return NOMEM();
		snprintf(what, sizeof(what), "salvage cache %s", a->name);
	}
	if (vcc_nl_do(nl, msg, what, &err))
		return -1;
	printf("%s: loaded; what did not verify was skipped: see the kernel log and\n"
	       "  vcache-config show NAME --all (load_bad_sectors, load_bad_records,\n"
	       "  lost_marked: blocks that read as errors until rewritten); blocks the\n"
	       "  damage described may read older data\n",
	       a->has_cache ? a->cache.path : a->name);
	/* its cached devices wait: offer every block device, as hotplug does */
	return hotplug_all(nl) < 0 ? -1 : 0;
}
