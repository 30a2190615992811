// SPDX-License-Identifier: GPL-2.0
/*
 * vc-nlfuzz: a generic netlink fuzzer for the vcache family
 * (make fuzz-netlink, tests/vm/fuzz-netlink).
 *
 *   vc-nlfuzz N SEED CACHEDEV BACKDEV [UID]
 *
 * Sends N messages on a raw NETLINK_GENERIC socket: for every command
 * (and unknown ones) attribute sets built from the ABI (vcache_nl.h) with
 * valid-looking, boundary and random values, then mutated: truncated,
 * oversized, bytes flipped, lengths lying, attributes duplicated, shuffled
 * (out of order), nested garbage, wrong nesting flags, random genl
 * versions and netlink flags.  Names are "fz..." (or random): never the
 * name of a cache carrying the test's I/O.  CACHEDEV and BACKDEV
 * (MAJ:MIN) are devices the fuzzer may create a cache "fz" on.
 *
 * With UID the fuzzer drops to that user first (setuid) and every
 * mutating command must fail: EPERM when its message was well formed
 * (not mutated), never success.  Every reply must be an errno (or data,
 * for reads).  A message the kernel may drop silently (a lying length,
 * no NLM_F_REQUEST) is followed by a probe whose answer proves the
 * socket still works.  Prints one summary line; exit 1 on any violation.
 *
 * What a reader may see (vcache(4), NETLINK): every data message of a
 * reply and every event of the family's multicast group (the fuzzer
 * listens to it) is walked; a backing device's identity (VCACHE_B_IDENT)
 * in a BACKING nest is counted, and for an unprivileged reader, or in an
 * event for anyone, each is a violation.  The counts of backing nests
 * seen say the check had something to look at; root's replies carry
 * identities, which shows the walk finds them.
 *
 * Every error's extended-ack message (NLMSGERR_ATTR_MSG) must be one line
 * of printable ASCII, NUL-terminated: the tools print it to a terminal,
 * and a request's own bytes (a name of random bytes) must not come back
 * in it raw.  Each other message is a violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <vcache/vcache_nl.h>

#include "vc-make-it-fail.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLMSGERR_ATTR_MSG
#define NLMSGERR_ATTR_MSG 1
#endif

static uint64_t rs;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}
#define R(n) (rnd() % (n))

static int sk;
static uint32_t seq = 1;
static uint16_t fam;
static uint64_t cachedev, backdev;
static int uid = -1;
/* what readers saw: backing nests and identities, in replies and events */
static uint64_t rep_backing, rep_ident, ev_msgs, ev_backing, ev_ident;

struct buf {
	unsigned char d[70000];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->d))
		n = sizeof(b->d) - b->n;
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static size_t nla_begin(struct buf *b, uint16_t type)
{
	struct nlattr a = { .nla_len = 4, .nla_type = type };
	size_t at = b->n;

	put(b, &a, sizeof(a));
	return at;
}

static void nla_end(struct buf *b, size_t at)
{
	struct nlattr *a = (struct nlattr *)(b->d + at);
	size_t len = b->n - at;
	static const unsigned char z[4];

	a->nla_len = len > 0xffff ? 0xffff : len;
	put(b, z, (4 - len % 4) % 4);
}

static void nla_put(struct buf *b, uint16_t type, const void *p, size_t n)
{
	size_t at = nla_begin(b, type);

	put(b, p, n);
	nla_end(b, at);
}

static void nla_u8(struct buf *b, uint16_t t, uint8_t v) { nla_put(b, t, &v, 1); }
static void nla_u32(struct buf *b, uint16_t t, uint32_t v) { nla_put(b, t, &v, 4); }
static void nla_u64(struct buf *b, uint16_t t, uint64_t v) { nla_put(b, t, &v, 8); }

static const char *const names[] = {
	"fz", "fz", "fz", "fz2", "", "fz.a-b_9", ".fz", "-fz", "fz/x", "../fz",
	"fzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",	/* 31 */
	"fzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",	/* 32 */
	"fz\xff", "fz fz", "FZ",
};

static void put_str(struct buf *b, uint16_t t, const char *const *dict, int n)
{
	char s[80];
	int k = R(10);

	if (k < 7) {
		nla_put(b, t, dict[R(n)], strlen(dict[R(n)]) + 1);
	} else if (k == 7) {	/* no NUL */
		nla_put(b, t, "fz", 2);
	} else if (k == 8) {	/* long */
		int l = R(80);

		memset(s, 'f', l);
		nla_put(b, t, s, l);
	} else {		/* random bytes */
		int l = R(40), i;

		for (i = 0; i < l; i++)
			s[i] = R(256);
		nla_put(b, t, s, l);
	}
}

static uint64_t val64(void)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 4, 7, 100, 4095, 4096, 4097,
		65536, 1 << 20, 16 << 20, 32 << 20, 100ull << 20, 1ull << 30,
		1ull << 40, UINT32_MAX, UINT64_MAX, INT64_MAX, (uint64_t)INT64_MAX + 1 };

	if (R(4) == 0)
		return rnd() >> R(64);
	return v[R(sizeof(v) / sizeof(v[0]))];
}

static uint64_t devval(void)
{
	switch (R(8)) {
	case 0: case 1: case 2: return cachedev;
	case 3: case 4: return backdev;
	case 5: return 0;
	case 6: return ((uint64_t)R(300) << 32) | R(300);
	default: return rnd();
	}
}

static void put_backing(struct buf *b)
{
	static const char *const idents[] = { "fz:ident", "fz:ident2", "",
		"dm:VCFUZZ", "x", "fz:iiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiiii" };
	size_t at = nla_begin(b, VCACHE_A_BACKING | (R(10) ? NLA_F_NESTED : 0));
	int n = R(5), i;

	for (i = 0; i < n; i++) {
		switch (R(6)) {
		case 0: case 1: nla_u64(b, VCACHE_B_DEV, devval()); break;
		case 2: case 3: put_str(b, VCACHE_B_IDENT, idents, 6); break;
		case 4: put_str(b, VCACHE_B_DEVNAME, names, 15); break;
		default: nla_u64(b, R(14), val64()); break;
		}
	}
	nla_end(b, at);
}

static void put_attr(struct buf *b, int t)
{
	size_t at;
	int i, n;

	switch (t) {
	case VCACHE_A_NAME: put_str(b, t, names, 15); break;
	case VCACHE_A_CACHE_DEV: nla_u64(b, t, devval()); break;
	case VCACHE_A_CACHE_SIZE: nla_u64(b, t, val64()); break;
	case VCACHE_A_BLOCK_SIZE: nla_u32(b, t, R(3) ? 4096u << R(6) : val64()); break;
	case VCACHE_A_MODE: case VCACHE_A_POLICY: case VCACHE_A_PID_LIST:
	case VCACHE_A_PID_OP: case VCACHE_A_PID_DEFAULT:
		nla_u8(b, t, R(4) ? R(5) : R(256)); break;
	case VCACHE_A_FLAGS: nla_u32(b, t, R(4) ? R(16) : rnd()); break;
	case VCACHE_A_BACKING: put_backing(b); break;
	case VCACHE_A_PARAMS:
		at = nla_begin(b, t | (R(10) ? NLA_F_NESTED : 0));
		n = R(6);
		for (i = 0; i < n; i++)
			nla_u64(b, R(VCACHE_P_MAX + 3), val64());
		nla_end(b, at);
		break;
	case VCACHE_A_PIDS:
		at = nla_begin(b, t | (R(10) ? NLA_F_NESTED : 0));
		n = R(10) ? R(8) : R(1100);
		for (i = 0; i < n; i++)
			nla_u32(b, R(10) ? VCACHE_A_PID : R(30), R(2) ? (uint64_t)getpid() : rnd());
		nla_end(b, at);
		break;
	default: {	/* anything else: reply-only attributes, unknown types */
		unsigned char junk[64];
		int l = R(64);

		for (i = 0; i < l; i++)
			junk[i] = R(256);
		nla_put(b, t, junk, l);
	}
	}
}

/* the attributes each command takes (and a few it does not) */
static const int cmd_attrs[][8] = {
	[VCACHE_CMD_CREATE] = { VCACHE_A_NAME, VCACHE_A_CACHE_DEV, VCACHE_A_BACKING,
		VCACHE_A_CACHE_SIZE, VCACHE_A_BLOCK_SIZE, VCACHE_A_MODE, VCACHE_A_POLICY, VCACHE_A_PARAMS },
	[VCACHE_CMD_DELETE] = { VCACHE_A_NAME, VCACHE_A_FLAGS },
	[VCACHE_CMD_ATTACH] = { VCACHE_A_NAME, VCACHE_A_BACKING },
	[VCACHE_CMD_DETACH] = { VCACHE_A_NAME, VCACHE_A_BACKING, VCACHE_A_FLAGS },
	[VCACHE_CMD_FLUSH] = { VCACHE_A_NAME, VCACHE_A_BACKING },
	[VCACHE_CMD_FLUSH_CANCEL] = { VCACHE_A_NAME },
	[VCACHE_CMD_SET] = { VCACHE_A_NAME, VCACHE_A_MODE, VCACHE_A_POLICY, VCACHE_A_PARAMS },
	[VCACHE_CMD_GET] = { VCACHE_A_NAME },
	[VCACHE_CMD_PID_SET] = { VCACHE_A_NAME, VCACHE_A_PID_LIST, VCACHE_A_PID_OP,
		VCACHE_A_PIDS, VCACHE_A_PID_DEFAULT },
	[VCACHE_CMD_PID_GET] = { VCACHE_A_NAME },
	[VCACHE_CMD_HOTPLUG] = { VCACHE_A_BACKING, VCACHE_A_FLAGS, VCACHE_A_NAME },
	[VCACHE_CMD_RESET_STATS] = { VCACHE_A_NAME },
	[VCACHE_CMD_EVENT] = { VCACHE_A_EVENT, VCACHE_A_NAME, VCACHE_A_STATE },
	[VCACHE_CMD_LAT_GET] = { VCACHE_A_NAME },
};

static void put_valid_backing(struct buf *b)
{
	size_t at = nla_begin(b, VCACHE_A_BACKING | NLA_F_NESTED);

	nla_u64(b, VCACHE_B_DEV, backdev);
	nla_put(b, VCACHE_B_IDENT, "fz:ident", 9);
	if (R(2))
		nla_put(b, VCACHE_B_DEVNAME, "fzd", 4);
	nla_end(b, at);
}

/* a well-formed request of @cmd on the scratch cache "fz" */
static void valid_request(struct buf *b, int cmd)
{
	size_t at;

	if (cmd != VCACHE_CMD_HOTPLUG)
		nla_put(b, VCACHE_A_NAME, "fz", 3);
	switch (cmd) {
	case VCACHE_CMD_CREATE:
		nla_u64(b, VCACHE_A_CACHE_DEV, cachedev);
		put_valid_backing(b);
		if (R(2))
			nla_u64(b, VCACHE_A_CACHE_SIZE, (16ull + R(48)) << 20);
		if (R(2))
			nla_u32(b, VCACHE_A_BLOCK_SIZE, 4096u << R(5));
		if (R(2))
			nla_u8(b, VCACHE_A_MODE, R(4));
		break;
	case VCACHE_CMD_DELETE:
		nla_u32(b, VCACHE_A_FLAGS, R(2) ? VCACHE_F_DISCARD_DIRTY : VCACHE_F_FLUSH);
		break;
	case VCACHE_CMD_ATTACH:
		put_valid_backing(b);
		break;
	case VCACHE_CMD_DETACH:
		at = nla_begin(b, VCACHE_A_BACKING | NLA_F_NESTED);
		nla_u64(b, VCACHE_B_DEV, backdev);
		nla_end(b, at);
		nla_u32(b, VCACHE_A_FLAGS, R(2) ? VCACHE_F_FLUSH : VCACHE_F_KEEP_DIRTY);
		break;
	case VCACHE_CMD_SET:
		if (R(2))
			nla_u8(b, VCACHE_A_MODE, R(4));
		if (R(2))
			nla_u8(b, VCACHE_A_POLICY, R(4));
		at = nla_begin(b, VCACHE_A_PARAMS | NLA_F_NESTED);
		nla_u64(b, 1 + R(VCACHE_P_MAX), R(3) ? R(100) : val64());
		nla_end(b, at);
		break;
	case VCACHE_CMD_PID_SET:
		nla_u8(b, VCACHE_A_PID_LIST, R(2));
		nla_u8(b, VCACHE_A_PID_OP, R(3));
		at = nla_begin(b, VCACHE_A_PIDS | NLA_F_NESTED);
		nla_u32(b, VCACHE_A_PID, getpid());
		nla_end(b, at);
		break;
	case VCACHE_CMD_HOTPLUG:
		put_valid_backing(b);
		nla_u32(b, VCACHE_A_FLAGS, R(2) ? VCACHE_F_LOAD_CACHE : 0);
		break;
	default:	/* FLUSH, FLUSH_CANCEL, GET, PID_GET, RESET_STATS, LAT_GET */
		break;
	}
}

static int is_read(int cmd)
{
	return cmd == VCACHE_CMD_GET || cmd == VCACHE_CMD_PID_GET ||
	       cmd == VCACHE_CMD_LAT_GET;
}

/* Each well-formed attribute @a of the @len bytes at @head. */
#define nla_each(a, head, len, left)					\
	for ((a) = (const void *)(head), (left) = (int)(len);		\
	     (left) >= 4 && (a)->nla_len >= 4 && (a)->nla_len <= (left);	\
	     (left) -= NLA_ALIGN((a)->nla_len),				\
	     (a) = (const void *)((const char *)(a) + NLA_ALIGN((a)->nla_len)))
#define nla_inner(a)	((const char *)(a) + NLA_HDRLEN)
#define nla_inner_len(a)	((int)(a)->nla_len - NLA_HDRLEN)

/*
 * Count the BACKING nests of a vcache message and the identities in them
 * (VCACHE_A_BACKING at the top level; an event's attributes too).
 */
static void walk_reply(const struct nlmsghdr *h, bool event)
{
	const struct nlattr *a, *b;
	int left, bl;

	if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return;
	nla_each(a, (const char *)NLMSG_DATA(h) + GENL_HDRLEN,
		 h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, left) {
		if ((a->nla_type & NLA_TYPE_MASK) != VCACHE_A_BACKING)
			continue;
		(*(event ? &ev_backing : &rep_backing))++;
		nla_each(b, nla_inner(a), nla_inner_len(a), bl)
			if ((b->nla_type & NLA_TYPE_MASK) == VCACHE_B_IDENT)
				(*(event ? &ev_ident : &rep_ident))++;
	}
}

/* Wait for the answer to @want: 1 with *err set, 0 if none came. */
static uint64_t ack_msgs, bad_msgs;

/*
 * The extended-ack message of error @h, if any: one NUL-terminated line of
 * printable ASCII, or a violation (the first few printed as hex).
 */
static void check_ack_msg(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off, end = h->nlmsg_len;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) || end < NLMSG_HDRLEN + sizeof(*e))
		return;
	off = NLMSG_HDRLEN + sizeof(*e);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - sizeof(e->msg);
	while (off + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const void *)((const char *)h + off);
		const unsigned char *m = (const unsigned char *)a + NLA_HDRLEN;
		size_t l, i;

		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > end)
			return;
		if ((a->nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			l = a->nla_len - NLA_HDRLEN;
			ack_msgs++;
			for (i = 0; i < l && m[i]; i++)
				if (m[i] < 0x20 || m[i] > 0x7e)
					break;
			if (i == l || m[i]) {
				if (++bad_msgs <= 5) {
					printf("# error %d's message is not printable text:",
					       e->error);
					for (i = 0; i < l && i < 64; i++)
						printf(" %02x", m[i]);
					printf("\n");
				}
			}
		}
		off += NLA_ALIGN(a->nla_len);
	}
}

static int wait_reply(uint32_t want, int *err, int timeout_ms, int *ndata)
{
	static unsigned char rb[1 << 17];

	for (;;) {
		struct pollfd p = { .fd = sk, .events = POLLIN };
		ssize_t n;
		struct nlmsghdr *h;

		if (poll(&p, 1, timeout_ms) <= 0)
			return 0;
		n = recv(sk, rb, sizeof(rb), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS || errno == EAGAIN)
				continue;
			return 0;
		}
		for (h = (void *)rb; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq == 0 && h->nlmsg_type == fam) {
				ev_msgs++;	/* a multicast event */
				walk_reply(h, true);
				continue;
			}
			if (h->nlmsg_seq != want)
				continue;
			if (h->nlmsg_type == fam)
				walk_reply(h, false);
			if (h->nlmsg_type == NLMSG_ERROR) {
				*err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				check_ack_msg(h);
				return 1;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				*err = 0;
				return 1;
			}
			(*ndata)++;
		}
	}
}

/*
 * The family handles a request in the sender's context, inside send():
 * under FAULTS the root run is marked for failslab there only.
 */
static int send_msg(const void *p, size_t n)
{
	ssize_t r;

	vc_make_it_fail(1);
	r = send(sk, p, n, 0);
	vc_make_it_fail(0);
	return r == (ssize_t)n ? 0 : -errno;
}

/* a GETFAMILY request for "vcache": answers with the family id */
static int probe(void)
{
	struct buf b = { .n = 0 };
	struct nlmsghdr h = { .nlmsg_type = GENL_ID_CTRL,
		.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = ++seq };
	struct genlmsghdr g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 };
	int err = -1, nd = 0;

	put(&b, &h, sizeof(h));
	put(&b, &g, sizeof(g));
	nla_put(&b, CTRL_ATTR_FAMILY_NAME, "vcache", 7);
	((struct nlmsghdr *)b.d)->nlmsg_len = b.n;
	if (send_msg(b.d, b.n))
		return -1;
	if (!wait_reply(seq, &err, 10000, &nd))
		return -1;
	if (!fam && nd) {
		/* the first reply carries CTRL_ATTR_FAMILY_ID; re-read it */
	}
	return err;
}

/* Listen to every multicast group of the family (its events). */
static int groups_joined;

static void join_groups(const struct nlattr *groups)
{
	const struct nlattr *g, *x;
	int left, xl;

	nla_each(g, nla_inner(groups), nla_inner_len(groups), left) {
		nla_each(x, nla_inner(g), nla_inner_len(g), xl) {
			uint32_t id;

			if ((x->nla_type & NLA_TYPE_MASK) != CTRL_ATTR_MCAST_GRP_ID)
				continue;
			memcpy(&id, nla_inner(x), 4);
			if (!setsockopt(sk, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
					&id, sizeof(id)))
				groups_joined++;
		}
	}
}

static int resolve_family(void)
{
	unsigned char rb[8192];
	struct buf b = { .n = 0 };
	struct nlmsghdr h = { .nlmsg_type = GENL_ID_CTRL,
		.nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = ++seq };
	struct genlmsghdr g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 };
	ssize_t n;
	struct nlmsghdr *r = (void *)rb;
	const struct nlattr *a;
	int left;

	put(&b, &h, sizeof(h));
	put(&b, &g, sizeof(g));
	nla_put(&b, CTRL_ATTR_FAMILY_NAME, "vcache", 7);
	((struct nlmsghdr *)b.d)->nlmsg_len = b.n;
	if (send_msg(b.d, b.n) || (n = recv(sk, rb, sizeof(rb), 0)) <= 0 ||
	    r->nlmsg_type == NLMSG_ERROR)
		return -1;
	nla_each(a, (const char *)NLMSG_DATA(r) + GENL_HDRLEN,
		 r->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, left) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			memcpy(&fam, nla_inner(a), sizeof(fam));
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS)
			join_groups(a);
	}
	return fam ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t n, i, sent, nclean = 0, replies = 0, errs = 0, oks = 0, silent = 0, eperm = 0, bad = 0;
	uint64_t per_cmd_ok[32] = { 0 }, per_errno[140] = { 0 };
	unsigned maj, min;
	int one = 1;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	if (argc < 5) {
		fprintf(stderr, "usage: vc-nlfuzz N SEED CACHEDEV BACKDEV [UID]\n");
		return 2;
	}
	n = strtoull(argv[1], NULL, 0);
	rs = strtoull(argv[2], NULL, 0) * 2654435761u + 88172645463325252ull;
	sscanf(argv[3], "%u:%u", &maj, &min);
	cachedev = (uint64_t)maj << 32 | min;
	sscanf(argv[4], "%u:%u", &maj, &min);
	backdev = (uint64_t)maj << 32 | min;
	if (argc > 5) {
		uid = atoi(argv[5]);
		if (setgid(uid) || setuid(uid)) {
			perror("setuid");
			return 2;
		}
	}
	sk = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (sk < 0 || bind(sk, (void *)&sa, sizeof(sa)))
		return 2;
	setsockopt(sk, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	{
		int sz = 4 << 20;

		setsockopt(sk, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (resolve_family()) {
		fprintf(stderr, "vc-nlfuzz: no vcache family\n");
		return 2;
	}
	/* the root run's requests meet failslab (an unprivileged one's
	 * /proc/self is root's after setuid) */
	if (uid < 0)
		vc_make_it_fail_init("vc-nlfuzz");
	for (i = 0; i < n; i++) {
		static struct buf b;
		struct nlmsghdr *h;
		struct genlmsghdr *g;
		int cmd, k, na, clean, mutated = 0, may_drop = 0, err = 0, nd = 0, j;
		uint16_t flags = NLM_F_REQUEST | NLM_F_ACK;

		/*
		 * a line every 10000 messages, flushed: a long run that is
		 * stopped (the debug kernel: over two hours for 1,000,000)
		 * still says how far it got and that nothing was wrong so far
		 */
		if (i && !(i % 10000)) {
			printf("# progress: %" PRIu64 " of %" PRIu64 " sent, %" PRIu64
			       " replies, %" PRIu64 " succeeded, %" PRIu64 " EPERM, %" PRIu64
			       " violations\n", i, n, replies, oks, eperm, bad);
			fflush(stdout);
		}
		cmd = R(10) ? 1 + R(VCACHE_CMD_MAX) : (int)R(256);
		clean = uid >= 0 && R(4) == 0;
		if (clean)	/* a well-formed mutating request: EPERM */
			do
				cmd = 1 + R(VCACHE_CMD_MAX);
			while (is_read(cmd) || cmd == VCACHE_CMD_EVENT);
		b.n = 0;
		put(&b, &(struct nlmsghdr){ 0 }, sizeof(struct nlmsghdr));
		put(&b, &(struct genlmsghdr){ .cmd = cmd, .version = VCACHE_GENL_VERSION },
		    sizeof(struct genlmsghdr));
		if (clean) {
			nla_put(&b, VCACHE_A_NAME, "fz", 3);
			goto send;
		}
		/*
		 * one in five: the command's valid request on the scratch
		 * cache (so that "fz" exists and is changed, flushed,
		 * detached...), sometimes with one attribute more or wrong
		 */
		if (R(5) == 0 && cmd >= 1 && cmd <= VCACHE_CMD_MAX) {
			valid_request(&b, cmd);
			if (R(3) == 0)
				put_attr(&b, cmd_attrs[cmd][R(8)] ?: (int)R(VCACHE_A_MAX + 4));
			goto send;
		}
		/* attributes: the command's own, in order or not, some twice */
		na = R(9);
		for (k = 0; k < na; k++) {
			int t;

			if (cmd <= VCACHE_CMD_MAX && R(5))
				t = cmd_attrs[cmd][R(8)];
			else
				t = R(VCACHE_A_MAX + 4);
			if (!t)
				continue;
			if (R(50) == 0)
				t |= NLA_F_NESTED;
			put_attr(&b, t);
		}
		if (R(200) == 0) {	/* oversized: a 60 KiB attribute */
			static unsigned char big[61440];

			memset(big, R(256), sizeof(big));
			nla_put(&b, R(2) ? VCACHE_A_NAME : VCACHE_A_PARAMS, big, sizeof(big) - R(100));
			mutated = 1;
		}
		/* mutations */
		switch (R(12)) {
		case 0: {	/* flip bytes */
			int f = 1 + R(4);

			for (j = 0; j < f && b.n > 16; j++)
				b.d[16 + R(b.n - 16)] ^= 1 << R(8);
			mutated = 1;
			break;
		}
		case 1:		/* truncate (possibly inside the genl header) */
			b.n = 16 + R(b.n - 15);
			mutated = 1;
			break;
		case 2: {	/* a random attribute length */
			if (b.n >= 24) {
				struct nlattr *a = (void *)(b.d + 20);

				a->nla_len = R(3) ? R(40) : rnd();
				mutated = 1;
			}
			break;
		}
		case 3:		/* trailing garbage */
			for (j = R(16); j > 0; j--) {
				unsigned char c = R(256);

				put(&b, &c, 1);
			}
			mutated = 1;
			break;
		default:
			break;
		}
send:
		h = (void *)b.d;
		g = (void *)(b.d + 16);
		h->nlmsg_len = b.n;
		h->nlmsg_type = fam;
		if (clean)
			goto sent;
		if (R(30) == 0) {
			g->version = R(256);
			mutated = 1;
		}
		if (R(25) == 0) {
			flags = R(65536);
			if (!(flags & NLM_F_REQUEST) || !(flags & NLM_F_ACK))
				may_drop = 1;
			mutated = 1;
		} else if (R(20) == 0) {
			flags |= NLM_F_DUMP;
			mutated = 1;
		}
		if (R(60) == 0) {	/* a lying length */
			h->nlmsg_len = R(2) ? b.n + 1 + R(100) : R(b.n + 1);
			may_drop = 1;
			mutated = 1;
		}
		if (R(200) == 0) {
			h->nlmsg_type = R(65536);	/* another family, or none */
			may_drop = 1;
			mutated = 1;
		}
sent:
		h->nlmsg_flags = flags;
		h->nlmsg_seq = ++seq;
		if (b.n < 20)
			mutated = 1;
		if (send_msg(b.d, b.n)) {
			/* the socket refused it (e.g. too long): fine */
			continue;
		}
		if (!wait_reply(seq, &err, may_drop ? 0 : 30000, &nd)) {
			if (!may_drop) {
				printf("# message %" PRIu64 " (cmd %d, %zu bytes): no answer in 30 s\n", i, cmd, b.n);
				bad++;
				break;
			}
			silent++;
			if (probe() != 0) {
				printf("# message %" PRIu64 ": the socket stopped answering\n", i);
				bad++;
				break;
			}
			continue;
		}
		replies++;
		if (err > 0 || err < -4095) {
			printf("# message %" PRIu64 ": reply %d is not an errno\n", i, err);
			bad++;
		} else if (err == 0) {
			oks++;
			if (cmd < 32)
				per_cmd_ok[cmd]++;
			/*
			 * netlink acks a message without NLM_F_REQUEST with 0
			 * and never hands it to the family: not a success.
			 * A flipped byte may have made the command a read
			 * one (PID_SET 9 ^ 1 is GET 8): judged by the command
			 * the message carries, not the one it was made for.
			 */
			if (uid >= 0 && !is_read(b.n > 16 ? g->cmd : cmd) &&
			    h->nlmsg_type == fam && (flags & NLM_F_REQUEST)) {
				printf("# message %" PRIu64 ": unprivileged cmd %d succeeded\n", i, cmd);
				bad++;
			}
		} else {
			errs++;
			if (-err < 140)
				per_errno[-err]++;
			if (err == -EPERM)
				eperm++;
			if (clean && err != -EPERM) {
				printf("# message %" PRIu64 ": unprivileged cmd %d: errno %d, not EPERM\n",
				       i, cmd, -err);
				bad++;
			}
		}
		nclean += clean;
		(void)mutated;
		if (bad > 20)
			break;
	}
	sent = i;
	/* what readers saw (see the top): identities only for root, never in events */
	if (uid >= 0 && rep_ident) {
		printf("# %" PRIu64 " backing identities in replies to an unprivileged reader\n", rep_ident);
		bad++;
	}
	if (ev_ident) {
		printf("# %" PRIu64 " backing identities in events\n", ev_ident);
		bad++;
	}
	if (bad_msgs) {
		printf("# %" PRIu64 " of %" PRIu64 " error messages are not printable text\n",
		       bad_msgs, ack_msgs);
		bad++;
	}
	printf("NLREAD groups=%d backing_in_replies=%" PRIu64 " ident_in_replies=%" PRIu64
	       " events=%" PRIu64 " backing_in_events=%" PRIu64 " ident_in_events=%" PRIu64 " uid=%d\n",
	       groups_joined, rep_backing, rep_ident, ev_msgs, ev_backing, ev_ident, uid);
	printf("# errnos:");
	for (i = 0; i < 140; i++)
		if (per_errno[i])
			printf(" %s=%" PRIu64, strerrorname_np(i) ?: "?", per_errno[i]);
	printf("\n# succeeded per command:");
	for (i = 0; i < 32; i++)
		if (per_cmd_ok[i])
			printf(" %" PRIu64 "=%" PRIu64, i, per_cmd_ok[i]);
	printf("\n");
	printf("NLFUZZ sent=%" PRIu64 " replies=%" PRIu64 " ok=%" PRIu64 " errno=%" PRIu64
	       " eperm=%" PRIu64 " silent=%" PRIu64 " wellformed_unprivileged=%" PRIu64
	       " messages=%" PRIu64 " violations=%" PRIu64 " uid=%d\n",
	       sent, replies, oks, errs, eperm, silent, nclean, ack_msgs, bad, uid);
	return bad ? 1 : 0;
}
