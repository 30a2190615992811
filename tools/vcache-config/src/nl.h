/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nl.h - the generic netlink client of vcache-config (family "vcache").
 *
 * Environment, for tests:
 *   VCACHE_NL_FORBID=1  opening the socket is a bug: print so and exit 99
 *                       (proves that a refusal happened before netlink);
 *   VCACHE_NL_DRYRUN=1  no socket: every message that would be sent is
 *                       printed on stdout, decoded, one line each ("CREATE
 *                       name=db ..."), and succeeds; GET and PID_GET are
 *                       answered from $VCACHE_NL_FAKE, a file in the
 *                       format of `vcache-config list --json` (ENOENT when
 *                       unset or the cache is not in it).
 */
#ifndef VCC_NL_H
#define VCC_NL_H

#include <netlink/genl/genl.h>

#include "info.h"

struct vcc_nl;

/* Connect and resolve the family; -1 with VCACHE_EXIT_NOMOD if missing. */
int vcc_nl_open(struct vcc_nl **out);
void vcc_nl_close(struct vcc_nl *nl);

/* A new request: genl header with @cmd, NLM_F_REQUEST | @flags. */
struct nl_msg *vcc_nl_msg(struct vcc_nl *nl, int cmd, int flags);

/*
 * Send @msg (freed), wait for the ACK.  On an error: -1, the message
 * "@what: <errno text>: <the kernel's extack message>" and the exit code
 * of the errno (vcc_errno_exit); *err (may be NULL) gets the errno.
 */
int vcc_nl_do(struct vcc_nl *nl, struct nl_msg *msg, const char *what,
	      int *err);

/* GET of one cache; -1 as vcc_nl_do (VCACHE_EXIT_NOENT: no such cache). */
int vcc_nl_get(struct vcc_nl *nl, const char *name, struct vcc_cache_info *c,
	       int *err);
/* Every cache (a dump); *cs is malloc'ed. */
int vcc_nl_dump(struct vcc_nl *nl, struct vcc_cache_info **cs,
		unsigned int *n);
int vcc_nl_pid_get(struct vcc_nl *nl, const char *name,
		   struct vcc_pid_info *p);
/*
 * Follow the multicast group "events": @fn gets each event's attributes
 * until it returns non-zero or *@stop becomes true (a signal); -1 with
 * vcc_errbuf on a socket error.  Not in a dry run.
 */
int vcc_nl_listen(struct vcc_nl *nl,
		  int (*fn)(struct nlattr *attrs, int len, void *arg),
		  void *arg, volatile int *stop);

/* LAT_GET of cache @name; -1 as vcc_nl_do. */
int vcc_nl_lat_get(struct vcc_nl *nl, const char *name,
		   struct vcc_lat_info *l);

/* Parse one GET reply's attributes (also used by the fake kernel). */
int vcc_parse_cache(struct nlattr *attrs, int len, struct vcc_cache_info *c);

/* dry run: print @msg decoded on stdout (nl_dump.c) */
void vcc_nl_print_msg(FILE *f, struct nl_msg *msg);
/* dry run: the caches of $VCACHE_NL_FAKE (nl_fake.c); -1 if none */
int vcc_fake_caches(struct vcc_cache_info **cs, unsigned int *n);
int vcc_fake_pids(const char *name, struct vcc_pid_info *p);
/* dry run: "latency" of cache @name in $VCACHE_NL_FAKE (zeros if none) */
int vcc_fake_latency(const char *name, struct vcc_lat_info *l);

#endif
