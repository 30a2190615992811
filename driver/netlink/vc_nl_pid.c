// SPDX-License-Identifier: GPL-2.0
/*
 * PID allow/deny lists of a cache over netlink (VCACHE_CMD_PID_*).
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/slab.h>
#include <net/genetlink.h>

#include "../cached/vcc.h"
#include "vc_nl.h"
#include "vc_pidlist.h"

static int vcnl_pid_apply(struct vcc_cache *c, struct genl_info *info)
{
	struct vc_pidlist *pl = vc_cache_pidlist(c->engine);
	struct nlattr *lst = info->attrs[VCACHE_A_PID_LIST];
	struct nlattr *op = info->attrs[VCACHE_A_PID_OP];
	struct nlattr *pids = info->attrs[VCACHE_A_PIDS];
	struct nlattr *a;
	int rem, err, list, n = 0;

	if (!lst || !op) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "a PID command needs the list and the operation");
		return -EINVAL;
	}
	list = nla_get_u8(lst) == VCACHE_PID_DENY ? VC_PID_DENY : VC_PID_ALLOW;
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
		s32 pid = (s32)nla_get_u32(a);

		err = nla_get_u8(op) == VCACHE_PID_ADD ?
		      vc_pidlist_add(pl, list, pid) :
		      vc_pidlist_del(pl, list, pid);
		if (err) {
			vcc_ext_err(info->extack, "PID %d: %s", pid,
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

static int vcnl_put_list(struct sk_buff *msg, struct vc_pidlist *pl, int list,
			 u8 abi_list)
{
	unsigned int n = vc_pidlist_count(pl, list);
	struct nlattr *nest;
	s32 *ids;
	int i, got;

	ids = kmalloc_array(max(n, 1U), sizeof(*ids), GFP_KERNEL);
	if (!ids)
		return -ENOMEM;
	got = vc_pidlist_get(pl, list, ids, n);
	/* PID_LIST first: the PIDS nest after it is that list's */
	if (nla_put_u8(msg, VCACHE_A_PID_LIST, abi_list))
		goto nospace;
	nest = nla_nest_start(msg, VCACHE_A_PIDS);
	if (!nest || got < 0)
		goto nospace;
	for (i = 0; i < min_t(int, got, n); i++)
		if (nla_put_u32(msg, VCACHE_A_PID, ids[i]))
			goto nospace;
	nla_nest_end(msg, nest);
	kfree(ids);
	return 0;
nospace:
	kfree(ids);
	return -EMSGSIZE;
}

int vcnl_pid_get(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	struct sk_buff *msg;
	void *hdr;
	int err = -ENOENT;

	msg = genlmsg_new(VCACHE_PIDS_MAX * 16 + NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (!c)
		goto out;
	err = -EIO;
	if (!c->engine)
		goto out;
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
			  VCACHE_PID_DENY))
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
