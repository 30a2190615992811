// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - trace parsers and the fio iolog writer.
 *
 * blkparse: the default text format of `blkparse -i dev`:
 *
 *   maj,min cpu seq secs.nsecs pid action rwbs [sector + nsectors] [process]
 *
 * Only one action letter is used (Q by default: what the submitter asked
 * for, before merging; D: what was issued to the device; C: what completed),
 * so that a request is never counted twice.  Lines of other actions are
 * checked for the common prefix and ignored.  The per-CPU summary blkparse
 * prints at the end ("CPU0 (8,0):", "Total (8,0):", ...) ends the events.
 *
 * fio iolog v2 ("fio version 2 iolog") and v3 ("fio version 3 iolog"):
 *
 *   [timestamp_us] filename add|open|close
 *   [timestamp_us] filename read|write|trim|sync|datasync offset length
 *   filename wait usecs 0                 (v2 only)
 *
 * v3 timestamps are microseconds since the start of the run (this is what
 * fio 3.33 writes with --write_iolog).  v2 logs carry no time except wait
 * actions; untimed requests are spaced by 1/rate_iops.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

#define MAX_TOK 16

void vs_parse_opts_init(struct vs_parse_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fmt = VS_FMT_AUTO;
	o->blk_event = 'Q';
	o->rate_iops = 10000;
}

const char *vs_op_name(unsigned int op)
{
	static const char *const names[] = { "read", "write", "trim", "sync" };

	return op < 4 ? names[op] : "?";
}

int vs_trace_push(struct vs_trace *t, const struct vs_req *r)
{
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 4096;
		struct vs_req *n = realloc(t->req, ncap * sizeof(*n));

		if (!n)
			return -1;
		t->req = n;
		t->cap = ncap;
	}
	t->req[t->n++] = *r;
	return 0;
}

int vs_trace_dev(struct vs_trace *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->ndevs; i++)
		if (!strcmp(t->devs[i], name))
			return (int)i;
	if (t->ndevs == VS_MAX_DEVS)
		return -1;
	t->devs[t->ndevs] = strdup(name);
	if (!t->devs[t->ndevs])
		return -1;
	return (int)t->ndevs++;
}

static int find_dev(const struct vs_trace *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->ndevs; i++)
		if (!strcmp(t->devs[i], name))
			return (int)i;
	return -1;
}

void vs_trace_free(struct vs_trace *t)
{
	unsigned int i;

	free(t->req);
	for (i = 0; i < t->ndevs; i++)
		free(t->devs[i]);
	memset(t, 0, sizeof(*t));
}

/* Split s in place at whitespace; returns the number of tokens. */
static int tokenize(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;	/* too many */
		tok[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && *end == '\0';
}

/* "secs.nsecs" (blkparse prints 9 fractional digits) to nanoseconds. */
static bool parse_time_ns(const char *s, uint64_t *ns)
{
	uint64_t secs = 0, frac = 0;
	int digits = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s)) {
		if (secs > UINT64_MAX / 10 / 1000000000ull)
			return false;
		secs = secs * 10 + (uint64_t)(*s++ - '0');
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			if (digits < 9) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				digits++;
			}
			s++;
		}
	}
	if (*s)
		return false;
	while (digits++ < 9)
		frac *= 10;
	*ns = secs * 1000000000ull + frac;
	return true;
}

struct pctx {
	const char *name;
	uint64_t line;
	char *err;
	size_t errlen;
	const struct vs_parse_opts *o;
	struct vs_trace *t;
	uint64_t last_ns;
	bool fatal;		/* out of memory: never skipped */
};

static int perr(struct pctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int perr(struct pctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->err, c->errlen, "%s:%" PRIu64 ": ", c->name, c->line);
	if (n < 0 || (size_t)n >= c->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int push(struct pctx *c, struct vs_req *r)
{
	if (r->t_ns < c->last_ns) {
		c->t->time_regressions++;
		r->t_ns = c->last_ns;	/* the virtual clock never goes back */
	}
	c->last_ns = r->t_ns;
	if (vs_trace_push(c->t, r)) {
		c->fatal = true;
		return perr(c, "out of memory after %zu requests", c->t->n);
	}
	return 0;
}

static int check_extent(struct pctx *c, uint64_t off, uint64_t len)
{
	if (len == 0)
		return perr(c, "zero length");
	if (len > VS_MAX_REQ_LEN)
		return perr(c, "length %" PRIu64 " exceeds %u bytes", len,
			    VS_MAX_REQ_LEN);
	if (off > UINT64_MAX - len)
		return perr(c, "offset + length overflows");
	return 0;
}

/* ---------------------------------------------------------------- blkparse */

static bool is_majmin(const char *s)
{
	const char *comma = strchr(s, ',');
	const char *p;

	if (!comma || comma == s || !comma[1])
		return false;
	for (p = s; *p; p++)
		if (p != comma && !isdigit((unsigned char)*p))
			return false;
	return true;
}

/*
 * RWBS as printed by blk_fill_rwbs(): optional 'F' (preflush), then one of
 * W R D (discard) E (secure erase) F (flush) N (none), then any of F (FUA)
 * A (readahead) S (sync) M (meta).  Returns 0 with *op or 1 for "no data".
 */
static int parse_rwbs(struct pctx *c, const char *s, uint8_t *op,
		      uint8_t *flags)
{
	const char *p = s;

	*flags = 0;
	if (p[0] == 'F' && p[1] && strchr("WRDEFN", p[1])) {
		*flags |= VS_F_PREFLUSH;
		p++;
	}
	switch (*p) {
	case 'W':
		*op = VS_WRITE;
		break;
	case 'R':
		*op = VS_READ;
		break;
	case 'D':
	case 'E':
		*op = VS_DISCARD;
		break;
	case 'F':
		*op = VS_FLUSH;
		break;
	case 'N':
		if (*flags & VS_F_PREFLUSH) {
			*op = VS_FLUSH;
			break;
		}
		return 1;
	default:
		return perr(c, "bad RWBS field '%s'", s);
	}
	for (p++; *p; p++) {
		if (*p == 'F')
			*flags |= VS_F_FUA;
		else if (!strchr("ASMB", *p))
			return perr(c, "bad RWBS field '%s'", s);
	}
	return 0;
}

static int blk_line(struct pctx *c, char *line, bool *summary)
{
	char *tok[MAX_TOK + 1];
	uint64_t cpu, seq, ns, pid, sector, nsect;
	uint8_t op = VS_READ, flags = 0;
	struct vs_req r;
	int n, dev, rc;
	char *s = line;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return 0;
	/* The summary after the events: "CPU0 (8,0):", "Total (8,0):" ... */
	if ((!strncmp(s, "CPU", 3) && isdigit((unsigned char)s[3])) ||
	    !strncmp(s, "Total (", 7)) {
		*summary = true;
		return 0;
	}
	n = tokenize(s, tok, MAX_TOK);
	if (n < 7)
		return perr(c, "expected 'maj,min cpu seq time pid action rwbs ...', got %d fields",
			    n);
	if (!is_majmin(tok[0]))
		return perr(c, "bad device '%s' (expected maj,min)", tok[0]);
	if (!parse_u64(tok[1], &cpu) || !parse_u64(tok[2], &seq))
		return perr(c, "bad cpu or sequence number");
	if (!parse_time_ns(tok[3], &ns))
		return perr(c, "bad timestamp '%s'", tok[3]);
	if (!parse_u64(tok[4], &pid) || pid > UINT32_MAX)
		return perr(c, "bad pid '%s'", tok[4]);
	if (strlen(tok[5]) > 2 || !isalpha((unsigned char)tok[5][0]))
		return perr(c, "bad action '%s'", tok[5]);
	if (tok[5][0] != c->o->blk_event || tok[5][1]) {
		c->t->ignored++;
		return 0;
	}
	rc = parse_rwbs(c, tok[6], &op, &flags);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		c->t->ignored++;
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.t_ns = ns;
	r.pid = (uint32_t)pid;
	r.op = op;
	r.flags = flags;
	if (n >= 10 && !strcmp(tok[8], "+")) {
		if (!parse_u64(tok[7], &sector) || !parse_u64(tok[9], &nsect))
			return perr(c, "bad 'sector + count' field");
		if (sector > UINT64_MAX / 512)
			return perr(c, "sector %" PRIu64 " out of range",
				    sector);
		r.off = sector * 512;
		if (nsect == 0) {
			if (op != VS_FLUSH && !(flags & VS_F_PREFLUSH)) {
				c->t->ignored++;
				return 0;
			}
			r.op = VS_FLUSH;
		} else {
			if (nsect > VS_MAX_REQ_LEN / 512)
				return perr(c, "request of %" PRIu64 " sectors is too large",
					    nsect);
			if (check_extent(c, r.off, nsect * 512))
				return -1;
			r.len = (uint32_t)(nsect * 512);
		}
	} else if (op == VS_FLUSH || (flags & VS_F_PREFLUSH)) {
		r.op = VS_FLUSH;	/* empty flush, e.g. "FWS" alone */
		r.off = 0;
	} else {
		return perr(c, "%s event without 'sector + count'",
			    vs_op_name(op));
	}
	if (r.op == VS_FLUSH)
		r.len = 0;
	dev = vs_trace_dev(c->t, tok[0]);
	if (dev < 0)
		return perr(c, "more than %d devices", VS_MAX_DEVS);
	r.dev = (uint16_t)dev;
	(void)cpu;
	(void)seq;
	return push(c, &r);
}

/* ------------------------------------------------------------------- iolog */

static int iolog_line(struct pctx *c, char *line, int version,
		      uint64_t *clock_us, uint64_t *untimed)
{
	static const char *const acts[] = {
		"read", "write", "trim", "sync", "datasync",
	};
	static const uint8_t act_op[] = {
		VS_READ, VS_WRITE, VS_DISCARD, VS_FLUSH, VS_FLUSH,
	};
	char *tok[MAX_TOK + 1];
	char **a;
	uint64_t ts = 0, off = 0, len = 0;
	struct vs_req r;
	int n, na, dev;
	unsigned int i;

	n = tokenize(line, tok, MAX_TOK);
	if (n == 0)
		return 0;
	a = tok;
	na = n;
	if (version == 3) {
		if (!parse_u64(tok[0], &ts))
			return perr(c, "bad timestamp '%s' (v3 lines start with microseconds)",
				    tok[0]);
		if (ts > UINT64_MAX / 1000)
			return perr(c, "timestamp out of range");
		a++;
		na--;
	}
	if (na < 2)
		return perr(c, "expected 'filename action [offset length]'");
	if (na == 2 && (!strcmp(a[1], "add") || !strcmp(a[1], "open") ||
			!strcmp(a[1], "close"))) {
		if (!strcmp(a[1], "add")) {
			if (vs_trace_dev(c->t, a[0]) < 0)
				return perr(c, "more than %d files",
					    VS_MAX_DEVS);
		} else if (find_dev(c->t, a[0]) < 0) {
			return perr(c, "'%s %s' before 'add'", a[0], a[1]);
		}
		c->t->ignored++;
		return 0;
	}
	if (version == 2 && !strcmp(a[1], "wait")) {
		if (na != 4 || !parse_u64(a[2], &off))
			return perr(c, "expected 'filename wait usecs 0'");
		*clock_us += off;
		c->t->ignored++;
		return 0;
	}
	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (!strcmp(a[1], acts[i]))
			break;
	if (i == sizeof(acts) / sizeof(acts[0]))
		return perr(c, "unknown action '%s'", a[1]);
	if (act_op[i] == VS_FLUSH) {
		if (na != 2 && na != 4)
			return perr(c, "expected 'filename %s [offset length]'",
				    a[1]);
	} else {
		if (na != 4)
			return perr(c, "expected 'filename %s offset length', got %d fields",
				    a[1], na);
		if (!parse_u64(a[2], &off))
			return perr(c, "bad offset '%s'", a[2]);
		if (!parse_u64(a[3], &len))
			return perr(c, "bad length '%s'", a[3]);
		if (check_extent(c, off, len))
			return -1;
	}
	dev = find_dev(c->t, a[0]);
	if (dev < 0)
		return perr(c, "I/O on '%s' before 'add'", a[0]);
	memset(&r, 0, sizeof(r));
	r.op = act_op[i];
	r.off = r.op == VS_FLUSH ? 0 : off;
	r.len = r.op == VS_FLUSH ? 0 : (uint32_t)len;
	r.dev = (uint16_t)dev;
	r.pid = (uint32_t)dev + 1;
	if (version == 3) {
		r.t_ns = ts * 1000;
	} else {
		r.t_ns = *clock_us * 1000 +
			 (*untimed)++ * 1000000000ull / c->o->rate_iops;
	}
	return push(c, &r);
}

/* ------------------------------------------------------------------ common */

int vs_trace_parse(FILE *f, const char *name, const struct vs_parse_opts *o,
		   struct vs_trace *t, char *err, size_t errlen)
{
	struct pctx c = { .name = name, .err = err, .errlen = errlen,
			  .o = o, .t = t };
	enum vs_fmt fmt = o->fmt;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int version = 0, rc = 0;
	uint64_t clock_us = 0, untimed = 0;
	bool summary = false, first = true;

	memset(t, 0, sizeof(*t));
	if (err && errlen)
		err[0] = '\0';
	if (o->blk_event != 'Q' && o->blk_event != 'D' && o->blk_event != 'C') {
		snprintf(err, errlen, "%s: blkparse event must be Q, D or C",
			 name);
		return -1;
	}
	if (!o->rate_iops) {
		snprintf(err, errlen, "%s: rate must be positive", name);
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		c.line++;
		t->lines++;
		if ((size_t)len != strlen(line)) {
			rc = perr(&c, "NUL byte in line (binary file?)");
			goto bad;
		}
		if (first) {
			char *s = line;

			while (isspace((unsigned char)*s))
				s++;
			if (!*s)
				continue;
			first = false;
			if (!strncmp(s, "fio version ", 12)) {
				if (!strncmp(s, "fio version 2 iolog", 19))
					version = 2;
				else if (!strncmp(s, "fio version 3 iolog", 19))
					version = 3;
				else {
					rc = perr(&c, "unsupported fio iolog version (2 and 3 are supported)");
					break;
				}
				if (fmt == VS_FMT_BLKPARSE) {
					rc = perr(&c, "this is a fio iolog, not blkparse output");
					break;
				}
				fmt = VS_FMT_IOLOG;
				t->timed = version == 3;
				continue;
			}
			if (fmt == VS_FMT_IOLOG) {
				rc = perr(&c, "missing 'fio version 2 iolog' or 'fio version 3 iolog' header");
				break;
			}
			fmt = VS_FMT_BLKPARSE;
			t->timed = true;
		}
		if (fmt == VS_FMT_BLKPARSE) {
			if (summary)
				continue;
			rc = blk_line(&c, line, &summary);
		} else {
			rc = iolog_line(&c, line, version, &clock_us,
					&untimed);
		}
bad:
		if (rc < 0) {
			if (!o->skip_bad || c.fatal)
				break;
			t->skipped_bad++;
			rc = 0;
		}
	}
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s: read error: %s", name,
			 strerror(errno));
		rc = -1;
	}
	if (!rc && first) {
		snprintf(err, errlen, "%s: empty trace", name);
		rc = -1;
	}
	if (!rc && t->n == 0) {
		snprintf(err, errlen,
			 "%s: no I/O requests found (%" PRIu64 " lines%s)",
			 name, t->lines,
			 fmt == VS_FMT_BLKPARSE ?
			 "; is the blkparse event (-e Q|D|C) right?" : "");
		rc = -1;
	}
	free(line);
	if (rc)
		vs_trace_free(t);
	return rc;
}

int vs_trace_load(const char *path, const struct vs_parse_opts *o,
		  struct vs_trace *t, char *err, size_t errlen)
{
	FILE *f;
	int rc;

	if (!strcmp(path, "-"))
		return vs_trace_parse(stdin, "<stdin>", o, t, err, errlen);
	f = fopen(path, "r");
	if (!f) {
		memset(t, 0, sizeof(*t));
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = vs_trace_parse(f, path, o, t, err, errlen);
	fclose(f);
	return rc;
}

int vs_trace_write_iolog(const struct vs_trace *t, FILE *f)
{
	unsigned int d;
	size_t i;

	fprintf(f, "fio version 3 iolog\n");
	for (d = 0; d < t->ndevs; d++)
		fprintf(f, "0 %s add\n", t->devs[d]);
	for (d = 0; d < t->ndevs; d++)
		fprintf(f, "0 %s open\n", t->devs[d]);
	for (i = 0; i < t->n; i++) {
		const struct vs_req *r = &t->req[i];
		uint64_t us = r->t_ns / 1000;

		if (r->op == VS_FLUSH)
			fprintf(f, "%" PRIu64 " %s sync 0 0\n", us,
				t->devs[r->dev]);
		else
			fprintf(f, "%" PRIu64 " %s %s %" PRIu64 " %u\n", us,
				t->devs[r->dev], vs_op_name(r->op), r->off,
				r->len);
	}
	for (d = 0; d < t->ndevs; d++)
		fprintf(f, "%" PRIu64 " %s close\n",
			t->n ? t->req[t->n - 1].t_ns / 1000 : 0, t->devs[d]);
	return ferror(f) ? -1 : 0;
}
