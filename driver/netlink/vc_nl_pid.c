// SPDX-License-Identifier: GPL-2.0
/*
 * PID and cgroup allow/deny lists of a cache over netlink (VCACHE_CMD_PID_*).
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/cgroup.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <net/genetlink.h>

#include "../cached/vcc.h"
#include "vc_nl.h"
#include "vc_pidlist.h"

/*
 * PID entries are struct pid references (vc_env_linux.c puts them): the
 * number is resolved in the sender's PID namespace now, and the entry
 * stays that process's even when its number is reused.  Entries of
 * exited processes are dropped before every change and listing (and by
 * the cleaner every 10 s), so a list never shows or counts one.
 */
static int vcnl_pid_one(struct vc_pidlist *pl, int list, bool add, u32 nr)
{
	struct pid *p;
	int err;

	if (!nr || nr > PID_MAX_LIMIT)
		return -EINVAL;
	p = find_get_pid(nr);		/* in current's (the sender's) ns */
	if (!p)
		return add ? -ESRCH : -ENOENT;
	err = add ? vc_pidlist_add(pl, list, (uintptr_t)p) :
		    vc_pidlist_del(pl, list, (uintptr_t)p);
	/* added: the list owns our reference; else (or deleted) drop it */
	if (err || !add)
		put_pid(p);
	return err;
}

struct vcnl_cg_find {
	u64 id;
	u64 key;
};

static void vcnl_cg_find_fn(void *arg, u64 key)
{
	struct vcnl_cg_find *f = arg;

	if (cgroup_id((struct cgroup *)(uintptr_t)key) == f->id)
		f->key = key;
}

static int vcnl_cg_apply(struct vc_pidlist *pl, int list, u8 op,
			 struct genl_info *info)
{
	struct nlattr *fd = info->attrs[VCACHE_A_CGROUP_FD];
	struct nlattr *id = info->attrs[VCACHE_A_CGROUP_ID];
	struct vcnl_cg_find f = { 0 };
	struct cgroup *cg;
	int err;

	if (op == VCACHE_PID_CLEAR)
		return vc_pidlist_clear(pl, list);
	if (op == VCACHE_PID_DEL && id && !fd) {
		/* by id: the way to name a cgroup that was removed */
		f.id = nla_get_u64(id);
		vc_pidlist_visit(pl, list, vcnl_cg_find_fn, &f);
		if (!f.key) {
			vcc_ext_err(info->extack,
				    "cgroup id %llu: not on the list", f.id);
			return -ENOENT;
		}
		return vc_pidlist_del(pl, list, f.key);
	}
	if (!fd) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a cgroup rule needs CGROUP_FD (or CGROUP_ID to delete)");
		return -EINVAL;
	}
	cg = cgroup_get_from_fd((int)nla_get_u32(fd));
	if (IS_ERR(cg)) {
		NL_SET_ERR_MSG_ATTR(info->extack, fd,
				    "not an open cgroup v2 directory");
		return PTR_ERR(cg);
	}
	f.id = cgroup_id(cg);
	err = op == VCACHE_PID_ADD ?
	      vc_pidlist_add(pl, list, (uintptr_t)cg) :
	      vc_pidlist_del(pl, list, (uintptr_t)cg);
	if (err || op != VCACHE_PID_ADD)
		cgroup_put(cg);
	if (err)
		vcc_ext_err(info->extack, "cgroup %llu: %s", f.id,
			    err == -EEXIST ? "already on the list" :
			    err == -ENOENT ? "not on the list" :
			    err == -ENOSPC ? "the list is full" : "refused");
	return err;
}

static int vcnl_pid_apply(struct vcc_cache *c, struct genl_info *info)
{
	struct vc_pidlist *pl = vc_cache_pidlist(c->engine);
	struct nlattr *lst = info->attrs[VCACHE_A_PID_LIST];
	struct nlattr *op = info->attrs[VCACHE_A_PID_OP];
	struct nlattr *pids = info->attrs[VCACHE_A_PIDS];
	static const int lists[] = {
		[VCACHE_PID_ALLOW] = VC_PID_ALLOW,
		[VCACHE_PID_DENY] = VC_PID_DENY,
		[VCACHE_PID_CG_ALLOW] = VC_CG_ALLOW,
		[VCACHE_PID_CG_DENY] = VC_CG_DENY,
	};
	struct nlattr *a;
	int rem, err, list, n = 0;

	if (!lst || !op) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a PID command needs the list and the operation");
		return -EINVAL;
	}
	list = lists[nla_get_u8(lst)];	/* the policy bounds it */
	vc_pidlist_expire(pl);
	if (list == VC_CG_ALLOW || list == VC_CG_DENY)
		return vcnl_cg_apply(pl, list, nla_get_u8(op), info);
	if (info->attrs[VCACHE_A_CGROUP_FD] || info->attrs[VCACHE_A_CGROUP_ID]) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a cgroup goes on a cgroup list (VCACHE_PID_CG_*)");
		return -EINVAL;
	}
	if (nla_get_u8(op) == VCACHE_PID_CLEAR)
		return vc_pidlist_clear(pl, list);
	if (!pids) {
		NL_SET_ERR_MSG_MOD(info->extack, "no PIDs given");
		return -EINVAL;
	}
	nla_for_each_nested(a, pids, rem) {
		if (nla_type(a) != VCACHE_A_PID || ++n > VCACHE_PIDS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "at most VCACHE_PIDS_MAX PID attributes");
			return -EINVAL;
		}
	}
	/* validated: now apply, stopping at the first refusal */
	nla_for_each_nested(a, pids, rem) {
		u32 pid = nla_get_u32(a);

		err = vcnl_pid_one(pl, list, nla_get_u8(op) == VCACHE_PID_ADD,
				   pid);
		if (err) {
			vcc_ext_err(info->extack, "PID %u: %s", pid,
				    err == -EINVAL ? "not a PID" :
				    err == -ESRCH ? "no such process" :
				    err == -EEXIST ? "already on the list" :
				    err == -ENOENT ? "not on the list" :
				    err == -ENOSPC ? "the list is full" :
				    "refused");
			return err;
		}
	}
	return 0;
}

int vcnl_pid_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *def = info->attrs[VCACHE_A_PID_DEFAULT];
	struct vcc_cache *c;
	int err = -ENOENT;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (!c)
		goto out;
	err = -EIO;
	if (!c->engine) {
		NL_SET_ERR_MSG_MOD(info->extack, "the cache is not running");
		goto out;
	}
	if (def) {
		struct vcc_settings s = { .mode = -1, .policy = -1 };

		s.has[VC_P_PID_MODE] = true;
		s.v[VC_P_PID_MODE] = nla_get_u8(def) == VCACHE_PID_CACHE_NONE ?
				     VC_PID_MODE_CACHE_NONE :
				     VC_PID_MODE_CACHE_ALL;
		err = vcc_set(c, &s, info->extack);
	} else {
		err = vcnl_pid_apply(c, info);
	}
out:
	mutex_unlock(&vcc_lock);
	return err;
}

/* References taken under the list lock, used and dropped outside it. */
struct vcnl_keys {
	unsigned int nr, max;
	bool cg;
	u64 *keys;
};

static void vcnl_keys_fn(void *arg, u64 key)
{
	struct vcnl_keys *k = arg;

	if (k->nr >= k->max)
		return;
	if (k->cg)
		cgroup_get((struct cgroup *)(uintptr_t)key);
	else
		get_pid((struct pid *)(uintptr_t)key);
	k->keys[k->nr++] = key;
}

static int vcnl_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static void vcnl_keys_put(struct vcnl_keys *k)
{
	unsigned int i;

	for (i = 0; i < k->nr; i++)
		if (k->cg)
			cgroup_put((struct cgroup *)(uintptr_t)k->keys[i]);
		else
			put_pid((struct pid *)(uintptr_t)k->keys[i]);
}

/* PIDS: the numbers in the reader's namespace; PIDS_HIDDEN the rest. */
static int vcnl_put_pids(struct sk_buff *msg, struct vcnl_keys *k)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	struct nlattr *nest;
	unsigned int i, n = 0;
	u32 *nrs, hidden = 0;
	int err = -EMSGSIZE;

	nrs = kmalloc_array(max(k->nr, 1U), sizeof(*nrs), GFP_KERNEL);
	if (!nrs)
		return -ENOMEM;
	for (i = 0; i < k->nr; i++) {
		struct pid *p = (struct pid *)(uintptr_t)k->keys[i];
		pid_t nr = pid_has_task(p, PIDTYPE_PID) ? pid_nr_ns(p, ns) : 0;

		if (nr > 0)
			nrs[n++] = nr;
		else
			hidden++;
	}
	sort(nrs, n, sizeof(*nrs), vcnl_cmp_u32, NULL);
	nest = nla_nest_start(msg, VCACHE_A_PIDS);
	if (!nest)
		goto out;
	for (i = 0; i < n; i++)
		if (nla_put_u32(msg, VCACHE_A_PID, nrs[i]))
			goto out;
	nla_nest_end(msg, nest);
	err = nla_put_u32(msg, VCACHE_A_PIDS_HIDDEN, hidden);
out:
	kfree(nrs);
	return err;
}

/* CGROUPS: id and path (in the reader's cgroup namespace) of each. */
static int vcnl_put_cgroups(struct sk_buff *msg, struct vcnl_keys *k)
{
	struct nlattr *nest, *one;
	unsigned int i;
	char *path;
	int err = -EMSGSIZE;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	nest = nla_nest_start(msg, VCACHE_A_CGROUPS);
	if (!nest)
		goto out;
	for (i = 0; i < k->nr; i++) {
		struct cgroup *cg = (struct cgroup *)(uintptr_t)k->keys[i];

		if (cgroup_path_ns(cg, path, PATH_MAX,
				   current->nsproxy->cgroup_ns) < 0)
			path[0] = 0;
		one = nla_nest_start(msg, VCACHE_A_CGROUP);
		if (!one ||
		    nla_put_u64_64bit(msg, VCACHE_A_CGROUP_ID, cgroup_id(cg),
				      VCACHE_A_PAD) ||
		    nla_put_string(msg, VCACHE_A_CGROUP_PATH, path))
			goto out;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, nest);
	err = 0;
out:
	kfree(path);
	return err;
}

static int vcnl_put_list(struct sk_buff *msg, struct vc_pidlist *pl, int list,
			 u8 abi_list)
{
	struct vcnl_keys k = { .max = pl->capacity,
			       .cg = list == VC_CG_ALLOW || list == VC_CG_DENY };
	int err;

	k.keys = kmalloc_array(k.max, sizeof(*k.keys), GFP_KERNEL);
	if (!k.keys)
		return -ENOMEM;
	vc_pidlist_visit(pl, list, vcnl_keys_fn, &k);
	/* PID_LIST first: the PIDS or CGROUPS nest after it is that list's */
	err = nla_put_u8(msg, VCACHE_A_PID_LIST, abi_list);
	if (!err)
		err = k.cg ? vcnl_put_cgroups(msg, &k) : vcnl_put_pids(msg, &k);
	vcnl_keys_put(&k);
	kfree(k.keys);
	return err;
}

int vcnl_pid_get(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	struct sk_buff *msg;
	void *hdr;
	int err = -ENOENT;

	/* PIDs as numbers; cgroups by id and a path (most are short) */
	msg = genlmsg_new(VCACHE_PIDS_MAX * 16 + 2 * VC_PIDLIST_DEF_CAP * 128 +
			  NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (!c)
		goto out;
	err = -EIO;
	if (!c->engine)
		goto out;
	vc_pidlist_expire(vc_cache_pidlist(c->engine));
	err = -EMSGSIZE;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq, &vcnl_family,
			  0, VCACHE_CMD_PID_GET);
	if (!hdr)
		goto out;
	if (nla_put_string(msg, VCACHE_A_NAME, c->name) ||
	    nla_put_u8(msg, VCACHE_A_PID_DEFAULT,
		       vc_pidlist_mode(vc_cache_pidlist(c->engine)) ==
		       VC_PID_MODE_CACHE_NONE) ||
	    vcnl_put_list(msg, vc_cache_pidlist(c->engine), VC_PID_ALLOW,
			  VCACHE_PID_ALLOW) ||
	    vcnl_put_list(msg, vc_cache_pidlist(c->engine), VC_PID_DENY,
			  VCACHE_PID_DENY) ||
	    vcnl_put_list(msg, vc_cache_pidlist(c->engine), VC_CG_ALLOW,
			  VCACHE_PID_CG_ALLOW) ||
	    vcnl_put_list(msg, vc_cache_pidlist(c->engine), VC_CG_DENY,
			  VCACHE_PID_CG_DENY))
		goto out;
	genlmsg_end(msg, hdr);
	err = 0;
out:
	mutex_unlock(&vcc_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}
