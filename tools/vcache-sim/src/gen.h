/* SPDX-License-Identifier: GPL-2.0 */
/* gen.h - seeded synthetic traces (zipf, pareto, uniform). */
#ifndef VS_GEN_H
#define VS_GEN_H

#include <stdint.h>

#include "trace.h"

enum vs_dist { VS_DIST_ZIPF, VS_DIST_PARETO, VS_DIST_UNIFORM };

/*
 * Zipf variants for policy benchmarks (gen.c explains them):
 *   VS_SHAPE_SCAN   plus a one-time random scan of blocks/5 blocks at the
 *                   end of every quarter of the trace
 *   VS_SHAPE_SHIFT  the hot set moves to other blocks every eighth
 *   VS_SHAPE_LOG    plus a log block written after every write (a
 *                   database's write-ahead log, never read)
 */
enum vs_shape { VS_SHAPE_PLAIN, VS_SHAPE_SCAN, VS_SHAPE_SHIFT, VS_SHAPE_LOG };

struct vs_gen_opts {
	enum vs_dist dist;
	double param;		/* zipf theta, or pareto h (fio semantics) */
	enum vs_shape shape;
	uint64_t blocks;	/* address space, in blocks */
	uint32_t block_size;	/* bytes per request and per block */
	uint64_t requests;
	unsigned int read_pct;	/* 0..100 */
	uint64_t seed;
	uint64_t iops;		/* request rate for the timestamps */
	const char *filename;	/* the file name written in the iolog */
	uint64_t fsync_every;	/* a sync after every N writes (0: none) */
};

void vs_gen_opts_init(struct vs_gen_opts *o);
/* Parse "zipf:0.9", "pareto:0.9", "uniform", "scan:0.9", "shift:0.9",
 * "log:0.9"; 0 or -1. */
int vs_gen_parse_dist(const char *s, struct vs_gen_opts *o);
/* Generate into t (which must be zeroed); 0, or -1 with err filled. */
int vs_gen(const struct vs_gen_opts *o, struct vs_trace *t, char *err,
	   size_t errlen);

#endif
