/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - block I/O traces for vcache-sim: the in-memory form, the
 * parsers (blkparse text output, fio iolog v2/v3) and the fio iolog writer.
 */
#ifndef VS_TRACE_H
#define VS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum vs_op {
	VS_READ = 0,
	VS_WRITE = 1,
	VS_DISCARD = 2,
	VS_FLUSH = 3,		/* cache flush (REQ_PREFLUSH / fsync) */
};

#define VS_F_FUA	0x01	/* forced unit access write */
#define VS_F_PREFLUSH	0x02	/* write preceded by a flush */

/* One host request.  Offsets and lengths are in bytes. */
struct vs_req {
	uint64_t t_ns;		/* time since the start of the trace */
	uint64_t off;
	uint32_t len;
	uint32_t pid;		/* submitter (blkparse pid; fio: 1 + file) */
	uint16_t dev;		/* index into vs_trace.devs */
	uint8_t op;		/* enum vs_op */
	uint8_t flags;		/* VS_F_* */
};

#define VS_MAX_DEVS	64
#define VS_MAX_REQ_LEN	(64u << 20)	/* refuse larger single requests */

struct vs_trace {
	struct vs_req *req;
	size_t n, cap;
	char *devs[VS_MAX_DEVS];	/* device "maj,min" or fio file name */
	unsigned int ndevs;
	bool timed;			/* timestamps came from the trace */
	/* parse statistics */
	uint64_t lines;
	uint64_t skipped_bad;		/* malformed lines skipped */
	uint64_t ignored;		/* well-formed lines with no I/O */
	uint64_t time_regressions;	/* timestamps that went backwards */
};

enum vs_fmt {
	VS_FMT_AUTO = 0,
	VS_FMT_BLKPARSE,
	VS_FMT_IOLOG,
};

struct vs_parse_opts {
	enum vs_fmt fmt;
	char blk_event;		/* 'Q', 'D' or 'C': which blkparse action */
	bool skip_bad;		/* skip malformed lines instead of failing */
	uint64_t rate_iops;	/* spacing for untimed traces (fio v2) */
};

void vs_parse_opts_init(struct vs_parse_opts *o);

/*
 * Parse a trace.  On error returns -1 and writes a message of the form
 * "NAME:LINE: what is wrong" into err.  On success returns 0.
 */
int vs_trace_parse(FILE *f, const char *name, const struct vs_parse_opts *o,
		   struct vs_trace *t, char *err, size_t errlen);
int vs_trace_load(const char *path, const struct vs_parse_opts *o,
		  struct vs_trace *t, char *err, size_t errlen);
void vs_trace_free(struct vs_trace *t);

/* Append a request (used by parsers and generators); 0 or -1 (ENOMEM). */
int vs_trace_push(struct vs_trace *t, const struct vs_req *r);
/* Register a device name, returning its index, or -1 when full. */
int vs_trace_dev(struct vs_trace *t, const char *name);

/* Write the trace as a fio version 3 iolog (microsecond timestamps). */
int vs_trace_write_iolog(const struct vs_trace *t, FILE *f);

const char *vs_op_name(unsigned int op);

#endif
