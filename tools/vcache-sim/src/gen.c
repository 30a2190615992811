// SPDX-License-Identifier: GPL-2.0
/*
 * gen.c - seeded synthetic traces.
 *
 * zipf:THETA   P(rank k) proportional to 1 / k^THETA, k = 1..blocks, sampled
 *              exactly by inverting the cumulative distribution.
 * pareto:H     fio's random_distribution=pareto:H: a fraction H of the
 *              accesses goes to a fraction 1-H of the blocks, recursively
 *              (rank = blocks * U^(log H / log(1-H))).
 * uniform      every block equally likely.
 * scan:THETA   zipf:THETA over the blocks (the hot set), and at the end of
 *              every quarter of the trace a one-time scan: blocks/5 reads
 *              (twice a cache of 10%) in random order of blocks outside
 *              the hot set; the four scans read four different areas
 *              (the address space is blocks * 1.8).  Random order: the
 *              engine's sequential bypass does not see it.
 * shift:THETA  zipf:THETA whose hot set moves every eighth of the trace:
 *              in phase p rank k is block perm[(k + p * blocks/4) mod
 *              blocks], so each move brings a hot set of new blocks.
 * log:THETA    zipf:THETA over the blocks (a database's tables), and after
 *              every write to them a commit record appended to a log (a
 *              write-ahead log): a circular area of blocks/8 blocks after
 *              the tables, four commits a block, each commit writing the
 *              log's current block again (a log rewrites its partial
 *              page), as submitter 2.  The log is never read.  These
 *              writes come on top of the requests asked for.
 *
 * Ranks are scattered over the address space by a seeded permutation, so
 * hot blocks are not neighbours (no accidental sequential streams).  Every
 * request is one block; a request is a read with probability read_pct.
 * The same options and seed always give the same trace.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

#define GEN_MAX_BLOCKS (1ull << 27)

void vs_gen_opts_init(struct vs_gen_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dist = VS_DIST_ZIPF;
	o->param = 0.9;
	o->blocks = 262144;
	o->block_size = 4096;
	o->requests = 1000000;
	o->read_pct = 80;
	o->seed = 1;
	o->iops = 10000;
	o->filename = "/dev/backing";
}

int vs_gen_parse_dist(const char *s, struct vs_gen_opts *o)
{
	char *end;
	double v;

	if (!strcmp(s, "uniform")) {
		o->dist = VS_DIST_UNIFORM;
		o->param = 0;
		return 0;
	}
	o->shape = VS_SHAPE_PLAIN;
	if (!strncmp(s, "scan:", 5) || !strncmp(s, "shift:", 6) ||
	    !strncmp(s, "log:", 4)) {
		size_t k = s[1] == 'c' ? 5 : s[1] == 'h' ? 6 : 4;

		v = strtod(s + k, &end);
		if (end == s + k || *end || !(v > 0.0) || v > 10.0)
			return -1;
		o->dist = VS_DIST_ZIPF;
		o->shape = k == 5 ? VS_SHAPE_SCAN :
			   k == 6 ? VS_SHAPE_SHIFT : VS_SHAPE_LOG;
		o->param = v;
		return 0;
	}
	if (!strncmp(s, "zipf:", 5)) {
		v = strtod(s + 5, &end);
		if (end == s + 5 || *end || !(v > 0.0) || v > 10.0)
			return -1;
		o->dist = VS_DIST_ZIPF;
		o->param = v;
		return 0;
	}
	if (!strncmp(s, "pareto:", 7)) {
		v = strtod(s + 7, &end);
		if (end == s + 7 || *end || !(v > 0.0) || !(v < 1.0))
			return -1;
		o->dist = VS_DIST_PARETO;
		o->param = v;
		return 0;
	}
	return -1;
}

/* xoshiro256** seeded through splitmix64 */
struct rng {
	uint64_t s[4];
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t res = rotl(r->s[1] * 5, 7) * 9, t = r->s[1] << 17;

	r->s[2] ^= r->s[0];
	r->s[3] ^= r->s[1];
	r->s[1] ^= r->s[2];
	r->s[0] ^= r->s[3];
	r->s[2] ^= t;
	r->s[3] = rotl(r->s[3], 45);
	return res;
}

/* uniform in [0, 1) with 53 bits */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* uniform in [0, n) without modulo bias */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, v;

	do {
		v = rng_next(r);
	} while (v >= lim);
	return v % n;
}

int vs_gen(const struct vs_gen_opts *o, struct vs_trace *t, char *err,
	   size_t errlen)
{
	uint32_t *perm = NULL, *sperm = NULL;
	double *cdf = NULL;
	struct rng r;
	uint64_t i, w, n = o->blocks, commits = 0;
	uint64_t loglen = n / 8 ? n / 8 : 1;	/* log blocks */
	uint64_t slen = n / 5 ? n / 5 : 1;	/* scan length */
	uint64_t period = o->requests / 4 ? o->requests / 4 : 1;
	uint64_t phase_len = o->requests / 8 ? o->requests / 8 : 1;
	double ppow = 0;
	int rc = -1;

	if (n == 0 || n > GEN_MAX_BLOCKS) {
		snprintf(err, errlen, "gen: blocks must be 1..%llu",
			 GEN_MAX_BLOCKS);
		return -1;
	}
	if (!o->requests || !o->iops || o->read_pct > 100 ||
	    o->block_size < 512 || o->block_size % 512 ||
	    o->block_size > VS_MAX_REQ_LEN) {
		snprintf(err, errlen,
			 "gen: need requests > 0, iops > 0, read%% <= 100 and a block size that is a multiple of 512");
		return -1;
	}
	rng_seed(&r, o->seed);
	perm = malloc(n * sizeof(*perm));
	if (!perm)
		goto nomem;
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = rng_below(&r, i + 1);
		uint32_t x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	if (o->shape == VS_SHAPE_SCAN) {
		sperm = malloc(slen * sizeof(*sperm));
		if (!sperm)
			goto nomem;
		for (i = 0; i < slen; i++)
			sperm[i] = (uint32_t)i;
		for (i = slen - 1; i > 0; i--) {
			uint64_t j = rng_below(&r, i + 1);
			uint32_t x = sperm[i];

			sperm[i] = sperm[j];
			sperm[j] = x;
		}
	}
	if (o->dist == VS_DIST_ZIPF) {
		double sum = 0;

		cdf = malloc(n * sizeof(*cdf));
		if (!cdf)
			goto nomem;
		for (i = 0; i < n; i++) {
			sum += pow((double)(i + 1), -o->param);
			cdf[i] = sum;
		}
		for (i = 0; i < n; i++)
			cdf[i] /= sum;
		cdf[n - 1] = 1.0;
	} else if (o->dist == VS_DIST_PARETO) {
		ppow = log(o->param) / log(1.0 - o->param);
	}
	if (vs_trace_dev(t, o->filename) < 0)
		goto nomem;
	t->timed = true;
	for (i = 0, w = 0; i < o->requests; i++) {
		struct vs_req q = { 0 };
		uint64_t rank;
		double u = rng_unit(&r);

		if (o->dist == VS_DIST_ZIPF) {
			uint64_t lo = 0, hi = n - 1;

			while (lo < hi) {	/* first k with cdf[k] > u */
				uint64_t mid = lo + (hi - lo) / 2;

				if (cdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			rank = lo;
		} else if (o->dist == VS_DIST_PARETO) {
			uint64_t k = (uint64_t)((double)(n - 1) * pow(u, ppow));

			rank = n - 1 - (k < n ? k : n - 1);
		} else {
			rank = rng_below(&r, n);
		}
		if (o->shape == VS_SHAPE_SHIFT)
			rank = (rank + (i / phase_len) * (n / 4)) % n;
		q.off = (uint64_t)perm[rank] * o->block_size;
		q.len = o->block_size;
		q.op = rng_below(&r, 100) < o->read_pct ? VS_READ : VS_WRITE;
		if (o->shape == VS_SHAPE_SCAN && i % period >= period - slen &&
		    period > slen) {
			/* scan number i / period, its j-th block */
			uint64_t j = i % period - (period - slen);

			q.off = (n + ((i / period) % 4) * slen + sperm[j]) *
				o->block_size;
			q.op = VS_READ;
		}
		q.pid = 1;
		q.t_ns = i * 1000000000ull / o->iops;
		if (vs_trace_push(t, &q))
			goto nomem;
		if (o->shape == VS_SHAPE_LOG && q.op == VS_WRITE) {
			/* the commit record: the log's current block again */
			struct vs_req l = { .op = VS_WRITE, .pid = 2,
					    .len = o->block_size,
					    .t_ns = q.t_ns };

			l.off = (n + (commits++ / 4) % loglen) * o->block_size;
			if (vs_trace_push(t, &l))
				goto nomem;
		}
		if (q.op == VS_WRITE && o->fsync_every &&
		    ++w % o->fsync_every == 0) {
			struct vs_req f = { .op = VS_FLUSH, .pid = 1,
					    .t_ns = q.t_ns };

			if (vs_trace_push(t, &f))
				goto nomem;
		}
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "gen: out of memory");
out:
	free(perm);
	free(sperm);
	free(cdf);
	return rc;
}
