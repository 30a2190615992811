// SPDX-License-Identifier: GPL-2.0
/*
 * the generic netlink family "vcache": the control plane of the cached
 * devices (include/vcache/vcache_nl.h is its ABI).
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/capability.h>
#include <linux/kdev_t.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "../cached/vcc.h"
#include "vc_nl.h"
#include "vc_pidlist.h"

static bool vcnl_registered;

/* ------------------------------------------------------------ policies */
static const struct nla_policy vcnl_backing_policy[VCACHE_B_MAX + 1] = {
	[VCACHE_B_DEV]		= { .type = NLA_U64 },
	[VCACHE_B_IDENT]	= { .type = NLA_NUL_STRING,
				    .len = VCACHE_IDENT_MAX - 1 },
	[VCACHE_B_DEVNAME]	= { .type = NLA_NUL_STRING,
				    .len = VCACHE_NAME_MAX - 1 },
};

static const struct nla_policy vcnl_param_policy[VCACHE_P_MAX + 1] = {
	[1 ... VCACHE_P_MAX]	= { .type = NLA_U64 },
};

static const struct nla_policy vcnl_pids_policy[VCACHE_A_PID + 1] = {
	[VCACHE_A_PID]		= { .type = NLA_U32 },
};

static const struct nla_policy vcnl_policy[VCACHE_A_MAX + 1] = {
	[VCACHE_A_NAME]		= { .type = NLA_NUL_STRING,
				    .len = VCACHE_NAME_MAX - 1 },
	[VCACHE_A_CACHE_DEV]	= { .type = NLA_U64 },
	[VCACHE_A_CACHE_SIZE]	= { .type = NLA_U64 },
	[VCACHE_A_BLOCK_SIZE]	= { .type = NLA_U32 },	/* checked in create */
	[VCACHE_A_MODE]		= NLA_POLICY_MAX(NLA_U8, VCACHE_NR_MODES - 1),
	[VCACHE_A_POLICY]	= NLA_POLICY_MAX(NLA_U8,
						 VCACHE_NR_POLICIES - 1),
	[VCACHE_A_PARAMS]	= NLA_POLICY_NESTED(vcnl_param_policy),
	[VCACHE_A_FLAGS]	= NLA_POLICY_MASK(NLA_U32, VCACHE_F_ALL),
	[VCACHE_A_BACKING]	= NLA_POLICY_NESTED(vcnl_backing_policy),
	[VCACHE_A_PID_LIST]	= NLA_POLICY_MAX(NLA_U8, VCACHE_PID_CG_DENY),
	[VCACHE_A_PID_OP]	= NLA_POLICY_MAX(NLA_U8, VCACHE_PID_CLEAR),
	[VCACHE_A_PIDS]		= NLA_POLICY_NESTED(vcnl_pids_policy),
	[VCACHE_A_PID_DEFAULT]	= NLA_POLICY_MAX(NLA_U8,
						 VCACHE_PID_CACHE_NONE),
	[VCACHE_A_CGROUP_FD]	= { .type = NLA_U32 },
	[VCACHE_A_CGROUP_ID]	= NLA_POLICY_MIN(NLA_U64, 1),
};

/* -------------------------------------------------------------- helpers */
static const char * const vcnl_param_names[VCACHE_P_MAX + 1] = {
	NULL, VCACHE_PARAMS(VCACHE_X_NAME)
};

int vcnl_param_id(int attr)
{
	if (attr <= 0 || attr > VCACHE_P_MAX)
		return -ENOENT;
	return vc_param_by_name(vcnl_param_names[attr]);
}

static dev_t vcnl_devt(u64 v)
{
	u32 ma = v >> 32, mi = (u32)v;

	if (ma >= (1U << (32 - MINORBITS)) || mi > MINORMASK)
		return 0;
	return MKDEV(ma, mi);
}

bool vcnl_admin(struct sk_buff *skb, struct genl_info *info)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return true;
	NL_SET_ERR_MSG_MOD(info->extack,
			   "this command needs CAP_SYS_ADMIN (run as root)");
	return false;
}

static struct nlattr *vcnl_need(struct genl_info *info, int type,
				const char *what)
{
	if (info->attrs[type])
		return info->attrs[type];
	vcc_ext_err(info->extack, "missing %s", what);
	NL_SET_BAD_ATTR(info->extack, NULL);
	return NULL;
}

/*
 * The cache named in @info (vcc_lock held), or NULL with an extack.  A name
 * no cache can have is not echoed: the message is printable text, never a
 * request's own bytes.
 */
struct vcc_cache *vcnl_cache(struct genl_info *info)
{
	struct nlattr *a = vcnl_need(info, VCACHE_A_NAME, "cache name");
	const char *name;
	struct vcc_cache *c;

	if (!a)
		return NULL;
	name = nla_data(a);
	if (!vcc_valid_name(name)) {
		vcc_ext_err(info->extack, "not a cache name: 1-%d of A-Z a-z 0-9 _ . - (see vcache-config list)",
			    VCACHE_NAME_MAX - 1);
		return NULL;
	}
	c = vcc_find(name);
	if (!c)
		vcc_ext_err(info->extack, "no cache named %s (see vcache-config list)",
			    name);
	return c;
}

struct vcnl_backing {
	dev_t devt;
	const char *ident;
	const char *devname;
};

static int vcnl_parse_backing(struct genl_info *info, struct vcnl_backing *b,
			      bool need_dev)
{
	struct nlattr *tb[VCACHE_B_MAX + 1];
	struct nlattr *a = vcnl_need(info, VCACHE_A_BACKING, "backing device");
	int err;

	memset(b, 0, sizeof(*b));
	if (!a)
		return -EINVAL;
	err = nla_parse_nested(tb, VCACHE_B_MAX, a, vcnl_backing_policy,
			       info->extack);
	if (err)
		return err;
	if (tb[VCACHE_B_DEV]) {
		b->devt = vcnl_devt(nla_get_u64(tb[VCACHE_B_DEV]));
		if (!b->devt) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[VCACHE_B_DEV],
					    "bad device number");
			return -EINVAL;
		}
	}
	if (tb[VCACHE_B_IDENT])
		b->ident = nla_data(tb[VCACHE_B_IDENT]);
	if (tb[VCACHE_B_DEVNAME])
		b->devname = nla_data(tb[VCACHE_B_DEVNAME]);
	if (need_dev && (!b->devt || !b->ident)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "the backing device needs its device number and identity");
		return -EINVAL;
	}
	return 0;
}

/* Settings of @info into @s; -EINVAL (extack) on a bad value. */
static int vcnl_parse_settings(struct genl_info *info, struct vcc_settings *s)
{
	struct nlattr *tb[VCACHE_P_MAX + 1];
	int i, err, id;

	memset(s, 0, sizeof(*s));
	s->mode = info->attrs[VCACHE_A_MODE] ?
		  nla_get_u8(info->attrs[VCACHE_A_MODE]) : -1;
	s->policy = info->attrs[VCACHE_A_POLICY] ?
		    nla_get_u8(info->attrs[VCACHE_A_POLICY]) : -1;
	if (!info->attrs[VCACHE_A_PARAMS])
		return 0;
	err = nla_parse_nested(tb, VCACHE_P_MAX, info->attrs[VCACHE_A_PARAMS],
			       vcnl_param_policy, info->extack);
	if (err)
		return err;
	for (i = 1; i <= VCACHE_P_MAX; i++) {
		if (!tb[i])
			continue;
		id = vcnl_param_id(i);
		if (id < 0) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[i],
					    "parameter unknown to this module");
			return -EINVAL;
		}
		s->has[id] = true;
		s->v[id] = nla_get_u64(tb[i]);
	}
	return 0;
}

/* ---------------------------------------------------------------- GET */
#define VCNL_GET_SIZE	(16 * 1024)

static int vcnl_put_flush(struct sk_buff *skb, struct vcc_cache *c)
{
	struct vc_flush_progress p = { };
	struct nlattr *n;

	if (c->engine)
		vc_cache_flush_get_progress(c->engine, &p);
	n = nla_nest_start(skb, VCACHE_A_FLUSH);
	if (!n)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, VCACHE_FL_TARGET, p.target, VCACHE_FL_PAD) ||
	    nla_put_u64_64bit(skb, VCACHE_FL_DONE, p.done, VCACHE_FL_PAD) ||
	    nla_put_u64_64bit(skb, VCACHE_FL_REMAINING, p.remaining,
			      VCACHE_FL_PAD) ||
	    nla_put_u8(skb, VCACHE_FL_RUNNING,
		       p.running || READ_ONCE(c->flush_running)) ||
	    nla_put_u32(skb, VCACHE_FL_RESULT,
			(u32)-(c->flush_seq ? c->flush_result : p.result)) ||
	    nla_put_u32(skb, VCACHE_FL_SEQ, c->flush_seq))
		return -EMSGSIZE;
	nla_nest_end(skb, n);
	return 0;
}

/* @v: the counters (enum vcache_stat_attr), @dev: only per-device ones */
static int vcnl_put_stat_nest(struct sk_buff *skb, int type, const u64 *v,
			      bool dev)
{
	struct nlattr *n = nla_nest_start(skb, type);
	int i;

	if (!n)
		return -EMSGSIZE;
	for (i = 1; i <= VCACHE_S_MAX; i++)
		if (vcc_stat_names[i] && (!dev || vcc_stat_per_dev(i)) &&
		    nla_put_u64_64bit(skb, i, v[i], VCACHE_S_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, n);
	return 0;
}

static int vcnl_put_dev_stats(struct sk_buff *skb, struct vcc_cache *c,
			      const struct vcc_dev *d)
{
	u64 *v = kmalloc_array(VCACHE_S_MAX + 1, sizeof(*v), GFP_KERNEL);
	int err;

	if (!v)
		return -ENOMEM;
	vcc_dev_stats_fill(c, d->id, v);
	err = vcnl_put_stat_nest(skb, VCACHE_B_STATS, v, true);
	kfree(v);
	return err;
}

/*
 * @stats: with the device's counters (GET; events go without).  @priv:
 * the reader has CAP_SYS_ADMIN; only then the identity (what auto-attach
 * matches) goes in: other users and the events group never see it.
 */
static int vcnl_put_dev(struct sk_buff *skb, struct vcc_cache *c,
			const struct vcc_dev *d, bool stats, bool priv)
{
	struct nlattr *n = nla_nest_start(skb, VCACHE_A_BACKING);
	bool up = d->state == VCACHE_BS_ATTACHED && d->bh.bdev;

	if (!n)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, VCACHE_B_DEV,
			      up ? (u64)MAJOR(d->bh.bdev->bd_dev) << 32 |
				   MINOR(d->bh.bdev->bd_dev) : 0,
			      VCACHE_B_UNSPEC) ||
	    (priv && nla_put_string(skb, VCACHE_B_IDENT, d->ident)) ||
	    nla_put_string(skb, VCACHE_B_DEVNAME, d->devname) ||
	    (d->disk && nla_put_string(skb, VCACHE_B_DISK, d->disk->disk_name)) ||
	    (up && nla_put_string(skb, VCACHE_B_BACKING_DISK, d->bdev_name)) ||
	    nla_put_u32(skb, VCACHE_B_ID, d->id) ||
	    nla_put_u8(skb, VCACHE_B_STATE, d->state) ||
	    nla_put_u64_64bit(skb, VCACHE_B_SIZE, up ? d->size : 0,
			      VCACHE_B_UNSPEC) ||
	    nla_put_u64_64bit(skb, VCACHE_B_DIRTY_BYTES,
			      vcc_dev_dirty_bytes(c, d->id), VCACHE_B_UNSPEC) ||
	    (stats && c->engine && vcnl_put_dev_stats(skb, c, d)))
		return -EMSGSIZE;
	nla_nest_end(skb, n);
	return 0;
}

static int vcnl_put_params(struct sk_buff *skb, struct vcc_cache *c)
{
	struct nlattr *n = nla_nest_start(skb, VCACHE_A_PARAMS);
	int i, id;

	if (!n)
		return -EMSGSIZE;
	for (i = 1; i <= VCACHE_P_MAX; i++) {
		id = vcnl_param_id(i);
		if (id >= 0 && nla_put_u64_64bit(skb, i,
						 vc_cache_get_param(c->engine,
								    id),
						 VCACHE_P_UNSPEC))
			return -EMSGSIZE;
	}
	nla_nest_end(skb, n);
	return 0;
}

static int vcnl_put_stats(struct sk_buff *skb, struct vcc_cache *c)
{
	u64 *v = kmalloc_array(VCACHE_S_MAX + 1, sizeof(*v), GFP_KERNEL);
	int err;

	if (!v || vcc_stats_fill(c, v)) {
		kfree(v);
		return -ENOMEM;
	}
	err = vcnl_put_stat_nest(skb, VCACHE_A_STATS, v, false);
	kfree(v);
	return err;
}

/*
 * GET's reply for @c; @dev_stats: with each backing device's counters (a
 * dump leaves them out of a cache that does not fit otherwise); @priv:
 * with the identities (vcnl_put_dev()).
 */
static int vcnl_fill_cache(struct sk_buff *skb, struct vcc_cache *c, u8 cmd,
			   u32 portid, u32 seq, int flags, bool dev_stats,
			   bool priv)
{
	void *hdr = genlmsg_put(skb, portid, seq, &vcnl_family, flags, cmd);
	struct vc_cache *e = c->engine;
	int i;

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, VCACHE_A_NAME, c->name) ||
	    nla_put_u8(skb, VCACHE_A_STATE, c->state) ||
	    nla_put_string(skb, VCACHE_A_CACHE_DISK, c->flash_name) ||
	    nla_put_u64_64bit(skb, VCACHE_A_CACHE_SIZE, c->size, VCACHE_A_PAD) ||
	    nla_put_u32(skb, VCACHE_A_BLOCK_SIZE, c->block_size))
		goto nospace;
	if (c->fbdev &&
	    nla_put_u64_64bit(skb, VCACHE_A_CACHE_DEV,
			      (u64)MAJOR(c->flash_devt ? c->flash_devt :
					 c->fbdev->bd_dev) << 32 |
			      MINOR(c->flash_devt ? c->flash_devt :
				    c->fbdev->bd_dev), VCACHE_A_PAD))
		goto nospace;
	if (c->card && (nla_put_u64_64bit(skb, VCACHE_A_REGION_START,
					  c->region_start, VCACHE_A_PAD) ||
			nla_put_string(skb, VCACHE_A_CARD, c->card_serial)))
		goto nospace;
	if (e && (nla_put_u8(skb, VCACHE_A_MODE, vc_cache_get_mode(e)) ||
		  nla_put_u8(skb, VCACHE_A_REQ_MODE,
			     vc_cache_get_requested_mode(e)) ||
		  nla_put_u8(skb, VCACHE_A_POLICY, vc_cache_get_policy(e)) ||
		  nla_put_u8(skb, VCACHE_A_PID_DEFAULT,
			     vc_pidlist_mode(vc_cache_pidlist(e))) ||
		  vcnl_put_params(skb, c)))
		goto nospace;
	if (vcnl_put_stats(skb, c) || vcnl_put_flush(skb, c))
		goto nospace;
	for (i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i] &&
		    vcnl_put_dev(skb, c, c->devs[i], dev_stats, priv))
			goto nospace;
	genlmsg_end(skb, hdr);
	return 0;

nospace:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int vcnl_get(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	struct sk_buff *msg;
	int err;

	/* 16 devices with their counters: about 12 KiB */
	msg = genlmsg_new(VCNL_GET_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	err = c ? vcnl_fill_cache(msg, c, VCACHE_CMD_GET, info->snd_portid,
				  info->snd_seq, 0, true,
				  netlink_capable(skb, CAP_SYS_ADMIN)) :
		  -ENOENT;
	mutex_unlock(&vcc_lock);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int vcnl_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	bool priv = netlink_capable(cb->skb, CAP_SYS_ADMIN);
	struct vcc_cache *c;
	long idx = 0, start = cb->args[0];
	int err = 0;

	mutex_lock(&vcc_lock);
	for (c = vcc_first(); c; c = vcc_next(c), idx++) {
		if (idx < start)
			continue;
		err = vcnl_fill_cache(skb, c, VCACHE_CMD_GET,
				      NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI, true,
				      priv);
		if (err && !skb->len)
			err = vcnl_fill_cache(skb, c, VCACHE_CMD_GET,
					      NETLINK_CB(cb->skb).portid,
					      cb->nlh->nlmsg_seq, NLM_F_MULTI,
					      false, priv);
		if (err)
			break;
	}
	mutex_unlock(&vcc_lock);
	cb->args[0] = idx;
	/*
	 * A cache that does not fit even an empty message ends the dump with
	 * the error: never a list that silently stops short.
	 */
	if (err && !skb->len)
		return err;
	return skb->len;
}

/* ------------------------------------------------------------- mutate */
static int vcnl_create(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_create_args a = { };
	struct vcnl_backing b;
	struct vcc_settings s;
	struct nlattr *dev;
	int i, err;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	if (!vcnl_need(info, VCACHE_A_NAME, "cache name"))
		return -EINVAL;
	dev = vcnl_need(info, VCACHE_A_CACHE_DEV, "cache device");
	if (!dev)
		return -EINVAL;
	a.name = nla_data(info->attrs[VCACHE_A_NAME]);
	a.cache_devt = vcnl_devt(nla_get_u64(dev));
	if (!a.cache_devt) {
		NL_SET_ERR_MSG_ATTR(info->extack, dev, "bad device number");
		return -EINVAL;
	}
	err = vcnl_parse_backing(info, &b, true);
	if (err)
		return err;
	a.backing_devt = b.devt;
	a.ident = b.ident;
	a.devname = b.devname;
	if (info->attrs[VCACHE_A_CACHE_SIZE])
		a.size = nla_get_u64(info->attrs[VCACHE_A_CACHE_SIZE]);
	err = vcnl_parse_settings(info, &s);
	if (err)
		return err;
	vc_cache_config_default(&a.cfg);
	if (info->attrs[VCACHE_A_BLOCK_SIZE]) {
		a.cfg.block_size = nla_get_u32(info->attrs[VCACHE_A_BLOCK_SIZE]);
		if (!is_power_of_2(a.cfg.block_size) ||
		    a.cfg.block_size < VC_MIN_BLOCK_SIZE ||
		    a.cfg.block_size > VC_MAX_BLOCK_SIZE) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[VCACHE_A_BLOCK_SIZE],
					    "block size must be a power of two from 4 KiB to 64 KiB");
			return -EINVAL;
		}
	}
	if (s.mode >= 0)
		a.cfg.mode = s.mode;
	if (s.policy >= 0)
		a.cfg.policy = s.policy;
	for (i = 0; i < VC_NR_PARAMS; i++)
		if (s.has[i])
			a.cfg.params.v[i] = s.v[i];
	mutex_lock(&vcc_lock);
	err = vcc_create(&a, info->extack);
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_delete(struct sk_buff *skb, struct genl_info *info)
{
	u32 flags = info->attrs[VCACHE_A_FLAGS] ?
		    nla_get_u32(info->attrs[VCACHE_A_FLAGS]) : 0;
	struct vcc_cache *c;
	int err = -ENOENT;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	if (flags & ~(VCACHE_F_FLUSH | VCACHE_F_DISCARD_DIRTY) ||
	    (flags & VCACHE_F_FLUSH && flags & VCACHE_F_DISCARD_DIRTY)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "delete takes FLUSH or DISCARD_DIRTY, not both");
		return -EINVAL;
	}
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (c)
		err = vcc_delete(c, flags, info->extack);
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_attach(struct sk_buff *skb, struct genl_info *info)
{
	struct vcnl_backing b;
	struct vcc_cache *c;
	int err;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	err = vcnl_parse_backing(info, &b, true);
	if (err)
		return err;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	err = c ? vcc_attach(c, b.devt, b.ident, b.devname, info->extack) :
		  -ENOENT;
	mutex_unlock(&vcc_lock);
	return err;
}

/* The backing device named by BACKING (DEVNAME or DEV) of @c. */
static struct vcc_dev *vcnl_dev(struct vcc_cache *c, struct genl_info *info,
				const struct vcnl_backing *b)
{
	struct vcc_dev *d = vcc_find_dev(c, b->devname, b->devt);

	if (!d)
		vcc_ext_err(info->extack, "cache %s has no such backing device",
			    c->name);
	return d;
}

static int vcnl_detach(struct sk_buff *skb, struct genl_info *info)
{
	u32 flags = info->attrs[VCACHE_A_FLAGS] ?
		    nla_get_u32(info->attrs[VCACHE_A_FLAGS]) : 0;
	struct vcnl_backing b;
	struct vcc_cache *c;
	struct vcc_dev *d;
	int err;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	if (flags & ~(VCACHE_F_FLUSH | VCACHE_F_KEEP_DIRTY) ||
	    (flags & VCACHE_F_FLUSH && flags & VCACHE_F_KEEP_DIRTY)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "detach takes FLUSH or KEEP_DIRTY, not both");
		return -EINVAL;
	}
	err = vcnl_parse_backing(info, &b, false);
	if (err)
		return err;
	mutex_lock(&vcc_lock);
	err = -ENOENT;
	c = vcnl_cache(info);
	d = c ? vcnl_dev(c, info, &b) : NULL;
	if (d)
		err = vcc_detach(c, d, flags, info->extack);
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_dev *d = NULL;
	struct vcnl_backing b;
	struct vcc_cache *c;
	int err = -ENOENT;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (!c)
		goto out;
	if (info->attrs[VCACHE_A_BACKING]) {
		err = vcnl_parse_backing(info, &b, false);
		if (err)
			goto out;
		err = -ENOENT;
		d = vcnl_dev(c, info, &b);
		if (!d)
			goto out;
	}
	err = info->genlhdr->cmd == VCACHE_CMD_FLUSH ?
	      vcc_flush_start(c, d, info->extack) : 0;
	if (info->genlhdr->cmd == VCACHE_CMD_FLUSH_CANCEL)
		vcc_flush_cancel(c);
out:
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_set(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_settings s;
	struct vcc_cache *c;
	int err;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	err = vcnl_parse_settings(info, &s);
	if (err)
		return err;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	err = c ? vcc_set(c, &s, info->extack) : -ENOENT;
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_hotplug(struct sk_buff *skb, struct genl_info *info)
{
	struct vcnl_backing b;
	int err;
	u32 flags = 0;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	if (info->attrs[VCACHE_A_FLAGS])
		flags = nla_get_u32(info->attrs[VCACHE_A_FLAGS]);
	if ((flags & ~(VCACHE_F_LOAD_CACHE | VCACHE_F_SALVAGE)) ||
	    ((flags & VCACHE_F_SALVAGE) && !(flags & VCACHE_F_LOAD_CACHE))) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VCACHE_A_FLAGS],
				    "HOTPLUG takes load-cache, and salvage with it");
		return -EINVAL;
	}
	err = vcnl_parse_backing(info, &b, true);
	if (err)
		return err;
	mutex_lock(&vcc_lock);
	if (flags & VCACHE_F_LOAD_CACHE)
		err = vcc_bdev_load(b.devt, flags & VCACHE_F_SALVAGE,
				    info->extack);
	else
		err = vcc_hotplug(b.devt, b.ident, info->extack);
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_reset_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	int err = -ENOENT;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (c && c->engine) {
		vc_cache_reset_stats(c->engine);
		err = 0;
	} else if (c) {
		err = -EIO;
	}
	mutex_unlock(&vcc_lock);
	return err;
}

static int vcnl_repair_table(struct sk_buff *skb, struct genl_info *info)
{
	u32 flags = info->attrs[VCACHE_A_FLAGS] ?
		    nla_get_u32(info->attrs[VCACHE_A_FLAGS]) : 0;
	struct nlattr *dev;
	dev_t devt;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	if (flags & ~VCACHE_F_FORCE) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[VCACHE_A_FLAGS],
				    "REPAIR_TABLE takes only the force flag");
		return -EINVAL;
	}
	dev = vcnl_need(info, VCACHE_A_CACHE_DEV, "the card's raw disk");
	if (!dev)
		return -EINVAL;
	devt = vcnl_devt(nla_get_u64(dev));
	if (!devt) {
		NL_SET_ERR_MSG_ATTR(info->extack, dev, "bad device number");
		return -EINVAL;
	}
	return vcc_card_repair(devt, flags & VCACHE_F_FORCE, info->extack);
}

static int vcnl_salvage(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	int err;

	if (!vcnl_admin(skb, info))
		return -EPERM;
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	err = c ? vcc_card_salvage(c, info->extack) : -ENOENT;
	mutex_unlock(&vcc_lock);
	return err;
}

/* ------------------------------------------------------------ LAT_GET */
/* Each path: its nest, COUNT, the BUCKETS nest and every bucket. */
#define VCNL_LAT_SIZE							\
	(nla_total_size(0) + VCACHE_NR_LAT_PATHS *			\
	 (nla_total_size(0) + 2 * nla_total_size_64bit(8) +		\
	  nla_total_size(0) + VCACHE_LAT_BUCKETS * nla_total_size_64bit(8)))

static int vcnl_put_latency(struct sk_buff *skb, struct vcc_cache *c)
{
	u64 *b = kmalloc_array(VCACHE_LAT_BUCKETS, sizeof(*b), GFP_KERNEL);
	struct nlattr *top, *pn, *bn;
	int p, i, err = -EMSGSIZE;
	u64 n, sum;

	if (!b)
		return -ENOMEM;
	top = nla_nest_start(skb, VCACHE_A_LATENCY);
	if (!top)
		goto out;
	for (p = 0; p < VCACHE_NR_LAT_PATHS; p++) {
		vcc_latency(c, p, b, &n, &sum);
		pn = nla_nest_start(skb, p + 1);
		if (!pn || nla_put_u64_64bit(skb, VCACHE_L_COUNT, n, VCACHE_L_PAD) ||
		    nla_put_u64_64bit(skb, VCACHE_L_SUM_NS, sum, VCACHE_L_PAD))
			goto out;
		bn = nla_nest_start(skb, VCACHE_L_BUCKETS);
		if (!bn)
			goto out;
		for (i = 0; i < VCACHE_LAT_BUCKETS; i++)
			if (b[i] && nla_put_u64_64bit(skb, i + 1, b[i],
						      VCACHE_LAT_BUCKETS + 1))
				goto out;
		nla_nest_end(skb, bn);
		nla_nest_end(skb, pn);
	}
	nla_nest_end(skb, top);
	err = 0;
out:
	kfree(b);
	return err;
}

static int vcnl_lat_get(struct sk_buff *skb, struct genl_info *info)
{
	struct vcc_cache *c;
	struct sk_buff *msg;
	void *hdr;
	int err = -ENOENT;

	msg = genlmsg_new(nla_total_size(VCACHE_NAME_MAX) + VCNL_LAT_SIZE,
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq, &vcnl_family,
			  0, VCACHE_CMD_LAT_GET);
	mutex_lock(&vcc_lock);
	c = vcnl_cache(info);
	if (c && hdr)
		err = nla_put_string(msg, VCACHE_A_NAME, c->name) ?:
		      vcnl_put_latency(msg, c);
	mutex_unlock(&vcc_lock);
	if (!hdr)
		err = -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * -------------------------------------------------------------- family
 * No doit may return -EINTR: netlink_rcv_skb() sends no answer for it (it
 * means "restart" there), and the sender would wait for ever; the one
 * source, an interrupted write-back, is -ECANCELED (vcc_flush_unlocked()).
 */
static const struct genl_small_ops vcnl_ops[] = {
	{ .cmd = VCACHE_CMD_CREATE, .doit = vcnl_create },
	{ .cmd = VCACHE_CMD_DELETE, .doit = vcnl_delete },
	{ .cmd = VCACHE_CMD_ATTACH, .doit = vcnl_attach },
	{ .cmd = VCACHE_CMD_DETACH, .doit = vcnl_detach },
	{ .cmd = VCACHE_CMD_FLUSH, .doit = vcnl_flush },
	{ .cmd = VCACHE_CMD_FLUSH_CANCEL, .doit = vcnl_flush },
	{ .cmd = VCACHE_CMD_SET, .doit = vcnl_set },
	{ .cmd = VCACHE_CMD_GET, .doit = vcnl_get, .dumpit = vcnl_dump },
	{ .cmd = VCACHE_CMD_PID_SET, .doit = vcnl_pid_set },
	{ .cmd = VCACHE_CMD_PID_GET, .doit = vcnl_pid_get },
	{ .cmd = VCACHE_CMD_HOTPLUG, .doit = vcnl_hotplug },
	{ .cmd = VCACHE_CMD_RESET_STATS, .doit = vcnl_reset_stats },
	{ .cmd = VCACHE_CMD_LAT_GET, .doit = vcnl_lat_get },
	{ .cmd = VCACHE_CMD_REPAIR_TABLE, .doit = vcnl_repair_table },
	{ .cmd = VCACHE_CMD_SALVAGE, .doit = vcnl_salvage },
};

static const struct genl_multicast_group vcnl_mcgrps[] = {
	{ .name = VCACHE_GENL_MCGRP_EVENTS },
};

struct genl_family vcnl_family __ro_after_init = {
	.name = VCACHE_GENL_NAME,
	.version = VCACHE_GENL_VERSION,
	.maxattr = VCACHE_A_MAX,
	.policy = vcnl_policy,
	.netnsok = false,
	.parallel_ops = true,	/* vcc_lock; long commands don't stall genl */
	.module = THIS_MODULE,
	.small_ops = vcnl_ops,
	.n_small_ops = ARRAY_SIZE(vcnl_ops),
	.resv_start_op = VCACHE_CMD_EVENT + 1,	/* strict for every command */
	.mcgrps = vcnl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(vcnl_mcgrps),
};

/* Multicast @ev about @c (best effort: an event that cannot be sent is
 * dropped, the state stays readable with GET).
 */
void vcnl_event(struct vcc_cache *c, enum vcache_event ev,
		const struct vcc_dev *d, int err, const char *msg)
{
	struct sk_buff *skb;
	void *hdr;

	if (!READ_ONCE(vcnl_registered))
		return;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_NOIO);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &vcnl_family, 0, VCACHE_CMD_EVENT);
	if (!hdr)
		goto drop;
	if (nla_put_u8(skb, VCACHE_A_EVENT, ev) ||
	    nla_put_string(skb, VCACHE_A_NAME, c->name) ||
	    nla_put_u8(skb, VCACHE_A_STATE, c->state) ||
	    (err && nla_put_u32(skb, VCACHE_A_ERRNO, (u32)abs(err))) ||
	    (msg && nla_put_string(skb, VCACHE_A_MESSAGE, msg)) ||
	    (d && vcnl_put_dev(skb, c, d, false, false)) ||
	    ((ev == VCACHE_EV_FLUSH_PROGRESS || ev == VCACHE_EV_FLUSH_DONE) &&
	     vcnl_put_flush(skb, c)))
		goto drop;
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&vcnl_family, skb, 0, 0, GFP_NOIO);
	return;
drop:
	nlmsg_free(skb);
}

int vcnl_init(void)
{
	int err = genl_register_family(&vcnl_family);

	if (!err)
		WRITE_ONCE(vcnl_registered, true);
	return err;
}

void vcnl_exit(void)
{
	WRITE_ONCE(vcnl_registered, false);
	genl_unregister_family(&vcnl_family);
	vc_compat_extack_exit();	/* 6.1: no request can use them now */
}
