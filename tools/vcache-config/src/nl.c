// SPDX-License-Identifier: GPL-2.0
/*
 * nl.c - generic netlink client: requests, ACKs with extack messages,
 * GET / dump / PID_GET replies parsed into info.h structures.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/msg.h>
#include <poll.h>
#include <sys/socket.h>

#include "nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct vcc_nl {
	struct nl_sock *sk;
	int family;
	bool dry;
};

/* One exchange: what the callbacks found. */
struct xfer {
	bool done;
	int err;			/* positive errno from the kernel */
	char ext[512];			/* extack message */
	int (*parse)(struct nlattr *attrs, int len, void *arg);
	void *arg;
	int parse_err;
};

int vcc_nl_open(struct vcc_nl **out)
{
	struct vcc_nl *nl;
	int one = 1, rc;

	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	*out = nl;
	if (getenv("VCACHE_NL_DRYRUN")) {
		nl->dry = true;
		return 0;
	}
	if (getenv("VCACHE_NL_FORBID")) {
		fprintf(stderr, "vcache-config: BUG: netlink socket opened although VCACHE_NL_FORBID is set\n");
		exit(99);
	}
	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	rc = genl_connect(nl->sk);
	if (rc)
		return vcc_fail(VCACHE_EXIT_FAIL, "cannot open a generic netlink socket: %s",
				nl_geterror(rc));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	nl_socket_set_msg_buf_size(nl->sk, 256 * 1024);
	nl_socket_enable_msg_peek(nl->sk);
	nl->family = genl_ctrl_resolve(nl->sk, VCACHE_GENL_NAME);
	if (nl->family < 0) {
		if (nl->family == -NLE_OBJ_NOTFOUND)
			return vcc_fail(VCACHE_EXIT_NOMOD,
					"vcache.ko is not loaded (modprobe vcache): the generic netlink family \"%s\" does not exist",
					VCACHE_GENL_NAME);
		return vcc_fail(VCACHE_EXIT_FAIL, "cannot look up the netlink family \"%s\": %s",
				VCACHE_GENL_NAME, nl_geterror(nl->family));
	}
	return 0;
}

void vcc_nl_close(struct vcc_nl *nl)
{
	if (!nl)
		return;
	if (nl->sk)
		nl_socket_free(nl->sk);
	free(nl);
}

struct nl_msg *vcc_nl_msg(struct vcc_nl *nl, int cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc_size(64 * 1024);

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 (u8)cmd, VCACHE_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* ------------------------------------------------------------ exchange */
static int err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct xfer *x = arg;
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	int off = NLMSG_HDRLEN + (int)sizeof(*e);

	(void)nla;
	x->done = true;
	x->err = -e->error;
	/* extended ACK (kernel >= 4.12): TLVs after the (capped) request */
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += (int)e->msg.nlmsg_len - NLMSG_HDRLEN;
	if (off >= (int)nlh->nlmsg_len)
		return NL_STOP;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + off),
		      (int)nlh->nlmsg_len - off, NULL))
		return NL_STOP;
	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(x->ext, sizeof(x->ext), "%.*s",
			 nla_len(tb[NLMSGERR_ATTR_MSG]),
			 (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int ack_cb(struct nl_msg *msg, void *arg)
{
	struct xfer *x = arg;

	(void)msg;
	x->done = true;
	return NL_STOP;
}

static int valid_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct xfer *x = arg;

	if (x->parse && !x->parse_err)
		x->parse_err = x->parse(genlmsg_attrdata(nlmsg_data(nlh), 0),
					genlmsg_attrlen(nlmsg_data(nlh), 0),
					x->arg);
	return NL_OK;
}

static int fail_errno(const char *what, int err, const char *ext)
{
	if (err == EPERM || err == EACCES)
		return vcc_fail(VCACHE_EXIT_PERM,
				"%s: needs root (CAP_SYS_ADMIN): run it as root or with sudo%s%s",
				what, ext[0] ? "; the kernel says: " : "", ext);
	return vcc_fail(vcc_errno_exit(err), "%s: %s%s%s", what, strerror(err),
			ext[0] ? ": " : "", ext);
}

/* Send @msg (freed) and read until its ACK, error or dump end. */
static int transact(struct vcc_nl *nl, struct nl_msg *msg, struct xfer *x)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int rc;

	if (!cb) {
		nlmsg_free(msg);
		x->err = ENOMEM;
		return -1;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, ack_cb, x);
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, x);
	rc = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (rc < 0) {
		x->err = EIO;
		snprintf(x->ext, sizeof(x->ext), "send: %s", nl_geterror(rc));
	}
	while (rc >= 0 && !x->done) {
		rc = nl_recvmsgs(nl->sk, cb);
		if (rc < 0 && !x->done) {
			x->err = EIO;
			snprintf(x->ext, sizeof(x->ext), "receive: %s",
				 nl_geterror(rc));
		}
	}
	nl_cb_put(cb);
	return x->err ? -1 : 0;
}

int vcc_nl_do(struct vcc_nl *nl, struct nl_msg *msg, const char *what,
	      int *err)
{
	struct xfer x = { 0 };

	if (err)
		*err = 0;
	if (nl->dry) {
		/* tests: the fake kernel answers every request with this errno */
		const char *e = getenv("VCACHE_NL_DRY_ERRNO");
		int dry_err = e ? atoi(e) : 0;

		vcc_nl_print_msg(stdout, msg);
		nlmsg_free(msg);
		if (dry_err <= 0)
			return 0;
		if (err)
			*err = dry_err;
		return fail_errno(what, dry_err, "(dry run)");
	}
	if (!transact(nl, msg, &x))
		return 0;
	if (err)
		*err = x.err;
	return fail_errno(what, x.err, x.ext);
}

/* --------------------------------------------------------------- GET */
static bool get_uint(const struct nlattr *a, u64 *v)
{
	switch (nla_len(a)) {
	case 1: *v = nla_get_u8((struct nlattr *)a); return true;
	case 2: *v = nla_get_u16((struct nlattr *)a); return true;
	case 4: *v = nla_get_u32((struct nlattr *)a); return true;
	case 8: *v = nla_get_u64((struct nlattr *)a); return true;
	default: return false;
	}
}

static void get_str(const struct nlattr *a, char *dst, size_t len)
{
	snprintf(dst, len, "%.*s", nla_len(a), (const char *)nla_data(a));
	dst[strnlen(dst, len)] = '\0';
}

/* Each nested u64 counter into v[type], has[type]; @max: highest type. */
static void get_table(struct nlattr *nest, int max, u64 *v, bool *has)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		int t = nla_type(a);

		if (t > 0 && t <= max && get_uint(a, &v[t]))
			has[t] = true;
	}
}

static void get_flush(struct nlattr *nest, struct vcc_flush_info *f)
{
	struct nlattr *a;
	u64 v;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		int t = nla_type(a);

		if (t <= 0 || t > VCACHE_FL_MAX || !get_uint(a, &v))
			continue;
		VCC_SET_HAS(f, t);
		switch (t) {
		case VCACHE_FL_TARGET: f->target = v; break;
		case VCACHE_FL_DONE: f->done = v; break;
		case VCACHE_FL_REMAINING: f->remaining = v; break;
		case VCACHE_FL_RUNNING: f->running = !!v; break;
		case VCACHE_FL_RESULT: f->result = (u32)v; break;
		case VCACHE_FL_SEQ: f->seq = (u32)v; break;
		}
	}
}

static void get_backing(struct nlattr *nest, struct vcc_backing_info *b)
{
	struct nlattr *a;
	u64 v = 0;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		int t = nla_type(a);

		if (t <= 0 || t > VCACHE_B_MAX)
			continue;
		VCC_SET_HAS(b, t);
		switch (t) {
		case VCACHE_B_IDENT: get_str(a, b->ident, sizeof(b->ident)); continue;
		case VCACHE_B_DEVNAME: get_str(a, b->devname, sizeof(b->devname)); continue;
		case VCACHE_B_DISK: get_str(a, b->disk, sizeof(b->disk)); continue;
		case VCACHE_B_BACKING_DISK:
			get_str(a, b->backing_disk, sizeof(b->backing_disk));
			continue;
		case VCACHE_B_STATS:
			get_table(a, VCACHE_S_MAX, b->stat, b->has_stat);
			continue;
		}
		get_uint(a, &v);
		switch (t) {
		case VCACHE_B_DEV: b->dev = v; break;
		case VCACHE_B_ID: b->id = (u32)v; break;
		case VCACHE_B_STATE: b->state = (u8)v; break;
		case VCACHE_B_SIZE: b->size = v; break;
		case VCACHE_B_DIRTY_BYTES: b->dirty_bytes = v; break;
		}
	}
}

int vcc_parse_cache(struct nlattr *attrs, int len, struct vcc_cache_info *c)
{
	struct nlattr *a;
	u64 v = 0;
	int rem;

	nla_for_each_attr(a, attrs, len, rem) {
		int t = nla_type(a);

		if (t <= 0 || t > VCACHE_A_MAX)
			continue;
		VCC_SET_HAS(c, t);
		switch (t) {
		case VCACHE_A_NAME: get_str(a, c->name, sizeof(c->name)); continue;
		case VCACHE_A_CACHE_DISK:
			get_str(a, c->cache_disk, sizeof(c->cache_disk));
			continue;
		case VCACHE_A_CARD: get_str(a, c->card, sizeof(c->card)); continue;
		case VCACHE_A_PARAMS:
			get_table(a, VCACHE_P_MAX, c->param, c->has_param);
			continue;
		case VCACHE_A_STATS:
			get_table(a, VCACHE_S_MAX, c->stat, c->has_stat);
			continue;
		case VCACHE_A_FLUSH: get_flush(a, &c->flush); continue;
		case VCACHE_A_BACKING:
			if (c->nr_backing < VCC_MAX_BACKING)
				get_backing(a, &c->backing[c->nr_backing++]);
			continue;
		}
		get_uint(a, &v);
		switch (t) {
		case VCACHE_A_STATE: c->state = (u8)v; break;
		case VCACHE_A_CACHE_DEV: c->cache_dev = v; break;
		case VCACHE_A_REGION_START: c->region_start = v; break;
		case VCACHE_A_CACHE_SIZE: c->cache_size = v; break;
		case VCACHE_A_BLOCK_SIZE: c->block_size = (u32)v; break;
		case VCACHE_A_MODE: c->mode = (u8)v; break;
		case VCACHE_A_REQ_MODE: c->req_mode = (u8)v; break;
		case VCACHE_A_POLICY: c->policy = (u8)v; break;
		case VCACHE_A_PID_DEFAULT: c->pid_default = (u8)v; break;
		}
	}
	return 0;
}

struct dump {
	struct vcc_cache_info *c;
	unsigned int n, cap;
};

static int parse_one(struct nlattr *attrs, int len, void *arg)
{
	struct dump *d = arg;

	if (d->n == d->cap) {
		unsigned int cap = d->cap ? 2 * d->cap : 4;
		struct vcc_cache_info *c = realloc(d->c, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		d->c = c;
		d->cap = cap;
	}
	memset(&d->c[d->n], 0, sizeof(d->c[0]));
	return vcc_parse_cache(attrs, len, &d->c[d->n++]);
}

int vcc_nl_dump(struct vcc_nl *nl, struct vcc_cache_info **cs,
		unsigned int *n)
{
	struct dump d = { 0 };
	struct xfer x = { .parse = parse_one, .arg = &d };
	struct nl_msg *msg;

	if (nl->dry)
		return vcc_fake_caches(cs, n);
	msg = vcc_nl_msg(nl, VCACHE_CMD_GET, NLM_F_DUMP);
	if (!msg)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	if (transact(nl, msg, &x) || x.parse_err) {
		free(d.c);
		return fail_errno("list", x.err ? x.err : -x.parse_err, x.ext);
	}
	*cs = d.c;
	*n = d.n;
	return 0;
}

int vcc_nl_get(struct vcc_nl *nl, const char *name, struct vcc_cache_info *c,
	       int *err)
{
	struct dump d = { 0 };
	struct xfer x = { .parse = parse_one, .arg = &d };
	struct nl_msg *msg;
	char what[96];
	unsigned int i;

	snprintf(what, sizeof(what), "cache %s", name);
	if (err)
		*err = 0;
	if (nl->dry) {
		if (vcc_fake_caches(&d.c, &d.n))
			return -1;
		for (i = 0; i < d.n && strcmp(d.c[i].name, name); i++)
			;
		if (i < d.n)
			*c = d.c[i];
		free(d.c);
		if (i < d.n)
			return 0;
		if (err)
			*err = ENOENT;
		return fail_errno(what, ENOENT, "no cache of that name (dry run)");
	}
	msg = vcc_nl_msg(nl, VCACHE_CMD_GET, 0);
	if (!msg || nla_put_string(msg, VCACHE_A_NAME, name))
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	if (transact(nl, msg, &x) || x.parse_err || d.n != 1) {
		free(d.c);
		if (err)
			*err = x.err;
		if (!x.err && !x.parse_err)
			return vcc_fail(VCACHE_EXIT_FAIL, "%s: the kernel sent %u replies to GET",
					what, d.n);
		return fail_errno(what, x.err ? x.err : -x.parse_err, x.ext);
	}
	*c = d.c[0];
	free(d.c);
	return 0;
}

/* ----------------------------------------------------------- PID_GET */
static int parse_pids(struct nlattr *attrs, int len, void *arg)
{
	struct vcc_pid_info *p = arg;
	struct nlattr *a, *e;
	int rem, r2, list = 0, nests = 0;
	bool named = false;
	u64 v;

	nla_for_each_attr(a, attrs, len, rem) {
		switch (nla_type(a)) {
		case VCACHE_A_PID_DEFAULT:
			if (get_uint(a, &v)) {
				p->has_default = true;
				p->pid_default = (u8)v;
			}
			break;
		case VCACHE_A_PID_LIST:
			if (get_uint(a, &v) && v < 4) {
				list = (int)v;
				named = true;
			}
			break;
		case VCACHE_A_PIDS_HIDDEN:
			if (list < 2 && get_uint(a, &v)) {
				p->has_hidden[list] = true;
				p->hidden[list] = (u32)v;
			}
			break;
		case VCACHE_A_CGROUPS:
			if (list < 2)
				break;
			nla_for_each_nested(e, a, r2) {
				struct vcc_cgroup_info *n, *c;
				struct nlattr *f;
				int r3, l = list - 2;

				if (nla_type(e) != VCACHE_A_CGROUP)
					continue;
				n = realloc(p->cg[l], (p->nr_cg[l] + 1) * sizeof(*n));
				if (!n)
					return -ENOMEM;
				p->cg[l] = n;
				c = &n[p->nr_cg[l]++];
				memset(c, 0, sizeof(*c));
				nla_for_each_nested(f, e, r3) {
					if (nla_type(f) == VCACHE_A_CGROUP_ID)
						get_uint(f, &c->id);
					if (nla_type(f) == VCACHE_A_CGROUP_PATH)
						get_str(f, c->path, sizeof(c->path));
				}
			}
			break;
		case VCACHE_A_PIDS:
			/* a PIDS nest follows its PID_LIST; without: allow, deny */
			if (!named)
				list = nests ? 1 : 0;
			nests++;
			if (list > 1)
				break;
			nla_for_each_nested(e, a, r2) {
				u32 *n;

				if (nla_type(e) != VCACHE_A_PID || !get_uint(e, &v))
					continue;
				n = realloc(p->pids[list],
					    (p->nr[list] + 1) * sizeof(*n));
				if (!n)
					return -ENOMEM;
				n[p->nr[list]++] = (u32)v;
				p->pids[list] = n;
			}
			break;
		}
	}
	return 0;
}

int vcc_nl_pid_get(struct vcc_nl *nl, const char *name,
		   struct vcc_pid_info *p)
{
	struct xfer x = { .parse = parse_pids, .arg = p };
	struct nl_msg *msg;
	char what[96];

	memset(p, 0, sizeof(*p));
	vcc_strlcpy(p->name, name, sizeof(p->name));
	snprintf(what, sizeof(what), "pid lists of cache %s", name);
	if (nl->dry)
		return vcc_fake_pids(name, p);
	msg = vcc_nl_msg(nl, VCACHE_CMD_PID_GET, 0);
	if (!msg || nla_put_string(msg, VCACHE_A_NAME, name))
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	if (transact(nl, msg, &x) || x.parse_err)
		return fail_errno(what, x.err ? x.err : -x.parse_err, x.ext);
	return 0;
}

/* ----------------------------------------------------------- LAT_GET */
static void get_lat_path(struct nlattr *nest, struct vcc_lat_info *l, int p)
{
	struct nlattr *a, *b;
	int rem, rem2;

	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) == VCACHE_L_COUNT)
			get_uint(a, &l->count[p]);
		if (nla_type(a) == VCACHE_L_SUM_NS)
			get_uint(a, &l->sum_ns[p]);
		if (nla_type(a) != VCACHE_L_BUCKETS)
			continue;
		nla_for_each_nested(b, a, rem2) {
			int i = nla_type(b) - 1;

			if (i >= 0 && i < VCACHE_LAT_BUCKETS)
				get_uint(b, &l->b[p][i]);
		}
	}
}

static int parse_lat(struct nlattr *attrs, int len, void *arg)
{
	struct vcc_lat_info *l = arg;
	struct nlattr *a, *p;
	int rem, rem2;

	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != VCACHE_A_LATENCY)
			continue;
		l->has = true;
		nla_for_each_nested(p, a, rem2) {
			int path = nla_type(p) - 1;

			if (path >= 0 && path < VCACHE_NR_LAT_PATHS)
				get_lat_path(p, l, path);
		}
	}
	return 0;
}

int vcc_nl_lat_get(struct vcc_nl *nl, const char *name,
		   struct vcc_lat_info *l)
{
	struct xfer x = { .parse = parse_lat, .arg = l };
	struct nl_msg *msg;
	char what[96];

	memset(l, 0, sizeof(*l));
	if (nl->dry)
		return vcc_fake_latency(name, l);
	snprintf(what, sizeof(what), "latency of cache %s", name);
	msg = vcc_nl_msg(nl, VCACHE_CMD_LAT_GET, 0);
	if (!msg || nla_put_string(msg, VCACHE_A_NAME, name))
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	if (transact(nl, msg, &x) || x.parse_err)
		return fail_errno(what, x.err ? x.err : -x.parse_err, x.ext);
	return 0;
}

/* ------------------------------------------------------------ events */
struct listen {
	int (*fn)(struct nlattr *attrs, int len, void *arg);
	void *arg;
	int rc;
};

static int event_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *g = nlmsg_data(nlh);
	struct listen *l = arg;

	if (g->cmd != VCACHE_CMD_EVENT)
		return NL_OK;
	l->rc = l->fn(genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0), l->arg);
	return l->rc ? NL_STOP : NL_OK;
}

int vcc_nl_listen(struct vcc_nl *nl,
		  int (*fn)(struct nlattr *attrs, int len, void *arg),
		  void *arg, volatile int *stop)
{
	struct listen l = { .fn = fn, .arg = arg };
	int grp, rc;

	if (nl->dry)
		return vcc_fail(VCACHE_EXIT_FAIL, "events: no events in a dry run");
	grp = genl_ctrl_resolve_grp(nl->sk, VCACHE_GENL_NAME,
				    VCACHE_GENL_MCGRP_EVENTS);
	if (grp < 0)
		return vcc_fail(VCACHE_EXIT_FAIL, "events: no multicast group \"%s\": %s",
				VCACHE_GENL_MCGRP_EVENTS, nl_geterror(grp));
	rc = nl_socket_add_membership(nl->sk, grp);
	if (rc)
		return vcc_fail(VCACHE_EXIT_FAIL, "events: cannot join group \"%s\": %s",
				VCACHE_GENL_MCGRP_EVENTS, nl_geterror(rc));
	nl_socket_disable_seq_check(nl->sk);
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, event_cb, &l);
	while (!*stop && !l.rc) {
		/* libnl restarts an interrupted recv: wait here instead */
		struct pollfd pfd = { .fd = nl_socket_get_fd(nl->sk),
				      .events = POLLIN };

		if (poll(&pfd, 1, 250) <= 0)
			continue;
		rc = nl_recvmsgs_default(nl->sk);
		if (rc < 0 && rc != -NLE_INTR && rc != -NLE_AGAIN && !*stop)
			return vcc_fail(VCACHE_EXIT_FAIL, "events: receive: %s",
					nl_geterror(rc));
	}
	return 0;
}
