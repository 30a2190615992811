// SPDX-License-Identifier: GPL-2.0
/*
 * flush.c - FLUSH, then GET every ~250 ms (VCACHE_POLL_MS) until the
 * flush is over; a progress bar on a terminal, a line every few seconds
 * otherwise; SIGINT/SIGTERM send FLUSH_CANCEL.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flush.h"

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int put_backing(struct nl_msg *msg, const struct vcc_flush_req *r)
{
	struct nlattr *n;

	if (!r->devname && !r->dev)
		return 0;
	n = nla_nest_start(msg, VCACHE_A_BACKING);
	if (!n || (r->devname && nla_put_string(msg, VCACHE_B_DEVNAME, r->devname)) ||
	    (!r->devname && nla_put_u64(msg, VCACHE_B_DEV, r->dev)))
		return -1;
	nla_nest_end(msg, n);
	return 0;
}

static int send_simple(struct vcc_nl *nl, int cmd,
		       const struct vcc_flush_req *r, const char *what)
{
	struct nl_msg *msg = vcc_nl_msg(nl, cmd, 0);

	if (!msg || nla_put_string(msg, VCACHE_A_NAME, r->name) ||
	    (cmd == VCACHE_CMD_FLUSH && put_backing(msg, r))) {
		nlmsg_free(msg);
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	}
	return vcc_nl_do(nl, msg, what, NULL);
}

/* "1:05", "12 s" */
static void eta_str(double s, char *buf, size_t len)
{
	if (s < 0 || s > 99 * 3600)
		snprintf(buf, len, "--:--");
	else
		snprintf(buf, len, "%d:%02d:%02d", (int)s / 3600,
			 (int)s / 60 % 60, (int)s % 60);
}

struct progress {
	bool tty;
	double t0, last_print;
	u64 done0;
	bool first;
};

static void show(struct progress *p, const struct vcc_flush_req *r,
		 const struct vcc_cache_info *c, double t)
{
	const struct vcc_flush_info *f = &c->flush;
	u64 bs = c->block_size ? c->block_size : 4096, left = f->remaining * bs;
	double rate = 0, el = t - p->t0;
	char h[32], e[32];
	unsigned int pct = f->target ? (unsigned int)(f->done * 100 / f->target) :
				       100, i;

	if (p->first) {
		p->first = false;
		p->done0 = f->done;
	}
	if (el > 0.2)
		rate = (double)(f->done - p->done0) * (double)bs / el;
	eta_str(rate > 0 ? (double)left / rate : -1, e, sizeof(e));
	vcc_human(left, h, sizeof(h));
	if (p->tty) {
		fprintf(stderr, "\rflush %s [", r->name);
		for (i = 0; i < 30; i++)
			fputc(i < pct * 30 / 100 ? '#' : '-', stderr);
		fprintf(stderr, "] %3u%%  %s dirty left  %.1f MiB/s  ETA %s\033[K",
			pct, h, rate / 1048576, e);
		fflush(stderr);
	} else if (t - p->last_print >= 5) {
		fprintf(stderr, "flush %s: %u%% done, %s (%llu bytes) dirty left, %.1f MiB/s, ETA %s\n",
			r->name, pct, h, (unsigned long long)left,
			rate / 1048576, e);
		p->last_print = t;
	}
}

static int interrupted(struct vcc_nl *nl, const struct vcc_flush_req *r,
		       bool tty, const char *what)
{
	struct vcc_cache_info c;
	char h[32];
	u64 left;

	if (tty)
		fprintf(stderr, "\n");
	if (send_simple(nl, VCACHE_CMD_FLUSH_CANCEL, r, what))
		return -1;
	memset(&c, 0, sizeof(c));
	if (vcc_nl_get(nl, r->name, &c, NULL))
		return -1;
	left = vcc_cache_dirty(&c);
	return vcc_fail(VCACHE_EXIT_INTR,
			"flush of %s%s%s interrupted (%s) and cancelled: %s (%llu bytes) stay dirty on the cache, which stays consistent; run 'vcache-config flush %s' again to finish",
			r->name, r->label ? " " : "", r->label ? r->label : "",
			strsignal(stop_sig), vcc_human(left, h, sizeof(h)),
			(unsigned long long)left, r->name);
}

static int wait_flush(struct vcc_nl *nl, const struct vcc_flush_req *r,
		      u32 prev_seq, const char *what)
{
	const char *e = getenv("VCACHE_POLL_MS");
	long poll_ms = e ? atol(e) : 250;
	struct progress p = { .tty = isatty(2), .first = true };
	struct timespec ts = { poll_ms / 1000, (poll_ms % 1000) * 1000000 };
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	double t;
	int rc = -1;

	if (!c)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	p.t0 = p.last_print = now_s();
	for (;;) {
		if (!stop_sig)
			nanosleep(&ts, NULL);
		if (stop_sig) {
			rc = interrupted(nl, r, p.tty, what);
			break;
		}
		memset(c, 0, sizeof(*c));
		if (vcc_nl_get(nl, r->name, c, NULL))
			break;
		if (!VCC_HAS(c, VCACHE_A_FLUSH) || !VCC_HAS(&c->flush, VCACHE_FL_SEQ)) {
			vcc_fail(VCACHE_EXIT_FAIL, "%s: the kernel's GET reply has no flush progress",
				 what);
			break;
		}
		t = now_s();
		if (c->flush.running || c->flush.seq == prev_seq) {
			show(&p, r, c, t);
			if (!c->flush.running && t - p.t0 > 10) {
				vcc_fail(VCACHE_EXIT_FAIL, "%s: the kernel accepted the flush but did not start it in 10 s",
					 what);
				break;
			}
			continue;
		}
		show(&p, r, c, t);
		if (p.tty)
			fprintf(stderr, "\n");
		if (c->flush.result) {
			char h[32];

			vcc_fail(VCACHE_EXIT_FAIL, "%s failed: %s; %s (%llu bytes) stay dirty; the cache's log (dmesg) names the blocks; retry with 'vcache-config flush %s'",
				 what, strerror((int)c->flush.result),
				 vcc_human(vcc_cache_dirty(c), h, sizeof(h)),
				 (unsigned long long)vcc_cache_dirty(c), r->name);
			break;
		}
		printf("%s: done, %llu blocks written back in %.1f s\n", what,
		       (unsigned long long)c->flush.target, t - p.t0);
		rc = 0;
		break;
	}
	free(c);
	return rc;
}

int vcc_flush_run(struct vcc_nl *nl, const struct vcc_flush_req *r)
{
	struct sigaction sa, old_int, old_term;
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	char what[160], h[32];
	u32 prev_seq;
	int rc;

	if (!c)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	snprintf(what, sizeof(what), "flush of %s%s%s", r->name,
		 r->label ? " " : "", r->label ? r->label : "");
	if (vcc_nl_get(nl, r->name, c, NULL)) {
		free(c);
		return -1;
	}
	prev_seq = c->flush.seq;
	vcc_human(vcc_cache_dirty(c), h, sizeof(h));
	free(c);
	if (send_simple(nl, VCACHE_CMD_FLUSH, r, what))
		return -1;
	if (r->background) {
		printf("%s started (%s dirty); follow it with 'vcache-config show %s'\n",
		       what, h, r->name);
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: the sleep ends */
	sigemptyset(&sa.sa_mask);
	stop_sig = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = wait_flush(nl, r, prev_seq, what);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
