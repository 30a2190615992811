// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for vcache-sim: trace parsers (including malformed input),
 * generators, the block cutter, exact OPT against a brute-force search, and
 * the reference LRU/FIFO against a naive model.  Prints "N passed, N failed"
 * and exits non-zero on any failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "gen.h"
#include "trace.h"
#include "util.h"

static int failures;	/* in the current test */

/*
 * cmocka runs the tests; inside one, CHECK is an expectation that reports
 * and carries on (every failing case of a table in one run), and the test
 * fails at its end if any did (run() below).
 */
#define CHECK(c) do {							\
		if (!(c)) {						\
			print_error("  %s:%d: CHECK(%s) failed\n",	\
				    __FILE__, __LINE__, #c);		\
			failures++;					\
		}							\
	} while (0)

static int parse_str(const char *text, const struct vs_parse_opts *o,
		     struct vs_trace *t, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	if (!f) {
		snprintf(err, errlen, "fmemopen failed");
		memset(t, 0, sizeof(*t));
		return -1;
	}
	rc = vs_trace_parse(f, "t", o, t, err, errlen);
	fclose(f);
	return rc;
}

/* ------------------------------------------------------------ blkparse */

static const char blk_sample[] =
"  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n"
"  8,0    3        2     0.000001829   697  G   W 223490 + 8 [kjournald]\n"
"  8,0    3        3     0.000002800   697  P   N [kjournald]\n"
"  8,0    3        4     0.000003400   697  I   W 223490 + 8 [kjournald]\n"
"  8,0    3        5     0.000004000   697  D   W 223490 + 8 [kjournald]\n"
"  8,0    0        0     0.000005000     0  m   N cfq697 insert_request\n"
"  8,0    1        7     0.000126214     0  C   W 223490 + 8 [0]\n"
"  8,0    1        8     0.250000000  1201  Q  RA 1000 + 256 [postgres]\n"
"  8,0    1        9     0.250001000  1201  D  RA 1000 + 256 [postgres]\n"
"  8,16   0       10     1.5          1202  Q WFS 77 + 16 [mysqld]\n"
"  8,0    0       11     1.600000000  1203  Q FWS [kworker/0:1H]\n"
"  8,0    0       12     1.700000000  1203  Q   D 4096 + 2048 [fstrim]\n"
"  8,0    0       13     1.800000000  1204  Q FWFS 512 + 8 [jbd2/sda1-8]\n"
"  8,0    1       14     1.900000000  1201  C   R 1000 + 256 [0]\n"
"\n"
"CPU0 (8,0):\n"
" Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\n"
"Total (8,0):\n"
" Reads Queued:           1,      128KiB\t Writes Queued:           1,        4KiB\n"
"Throughput (R/W): 0KiB/s / 0KiB/s\n"
"Events (8,0): 14 entries\n";

static void test_blkparse_q(void)
{
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	if (parse_str(blk_sample, &o, &t, err, sizeof(err))) {
		fprintf(stderr, "  %s\n", err);
		failures++;
		return;
	}
	CHECK(t.n == 6);
	if (t.n != 6)
		goto out;
	CHECK(t.req[0].op == VS_WRITE && t.req[0].off == 223490ull * 512 &&
	      t.req[0].len == 4096 && t.req[0].pid == 697 &&
	      t.req[0].t_ns == 0);
	CHECK(t.req[1].op == VS_READ && t.req[1].off == 512000 &&
	      t.req[1].len == 256 * 512 && t.req[1].t_ns == 250000000);
	CHECK(t.req[2].op == VS_WRITE && (t.req[2].flags & VS_F_FUA) &&
	      !(t.req[2].flags & VS_F_PREFLUSH) && t.req[2].dev == 1 &&
	      t.req[2].t_ns == 1500000000ull);
	CHECK(t.req[3].op == VS_FLUSH && t.req[3].len == 0);
	CHECK(t.req[4].op == VS_DISCARD && t.req[4].len == 2048 * 512);
	CHECK(t.req[5].op == VS_WRITE &&
	      t.req[5].flags == (VS_F_FUA | VS_F_PREFLUSH));
	CHECK(t.ndevs == 2 && !strcmp(t.devs[0], "8,0") &&
	      !strcmp(t.devs[1], "8,16"));
	CHECK(t.timed);
out:
	vs_trace_free(&t);
}

static void test_blkparse_dc(void)
{
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	o.blk_event = 'D';
	CHECK(parse_str(blk_sample, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 2);
	if (t.n == 2)
		CHECK(t.req[0].op == VS_WRITE && t.req[1].op == VS_READ &&
		      t.req[1].t_ns == 250001000);
	vs_trace_free(&t);
	o.blk_event = 'C';
	CHECK(parse_str(blk_sample, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 2);
	if (t.n == 2)
		CHECK(t.req[0].t_ns == 126214 && t.req[1].len == 131072);
	vs_trace_free(&t);
	o.blk_event = 'X';
	CHECK(parse_str(blk_sample, &o, &t, err, sizeof(err)) == -1);
}

struct bad_case {
	const char *text;
	const char *want;	/* substring of the error */
};

static void expect_error(const struct bad_case *c, enum vs_fmt fmt)
{
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	o.fmt = fmt;
	if (parse_str(c->text, &o, &t, err, sizeof(err)) != -1) {
		fprintf(stderr, "  accepted: %s", c->text);
		failures++;
		vs_trace_free(&t);
		return;
	}
	if (!strstr(err, c->want)) {
		fprintf(stderr, "  error '%s' lacks '%s'\n", err, c->want);
		failures++;
	}
}

static void test_blkparse_malformed(void)
{
	static const struct bad_case cases[] = {
		{ "8,0 0 1 0.1 5 Q W 10 + 8 [a]\n8,0 0 2 0.2 5 Q W x + 8 [a]\n",
		  "t:2: bad 'sector + count'" },
		{ "8,0 0 1 0.1 5 Q W 10 + 8 [a]\ngarbage here\n",
		  "t:2: expected" },
		{ "sda 0 1 0.1 5 Q W 10 + 8 [a]\n", "t:1: bad device" },
		{ "8,0 0 1 0.1x 5 Q W 10 + 8 [a]\n", "t:1: bad timestamp" },
		{ "8,0 0 1 0.1 -5 Q W 10 + 8 [a]\n", "t:1: bad pid" },
		{ "8,0 0 1 0.1 5 Q WQ 10 + 8 [a]\n", "t:1: bad RWBS" },
		{ "8,0 0 1 0.1 5 Q W [a]\n", "t:1: write event without" },
		{ "8,0 0 1 0.1 5 Q W 10 + 99999999999 [a]\n",
		  "too large" },
		{ "8,0 0 1 0.1 5 G W 10 + 8 [a]\n", "no I/O requests" },
		{ "\n\n", "empty trace" },
		{ "", "empty trace" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(&cases[i], VS_FMT_AUTO);
}

static void test_skip_bad(void)
{
	static const char text[] =
		"8,0 0 1 0.1 5 Q W 10 + 8 [a]\n"
		"8,0 0 2 0.2 5 Q W oops + 8 [a]\n"
		"junk\n"
		"8,0 0 3 0.3 5 Q R 20 + 8 [a]\n";
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	o.skip_bad = true;
	CHECK(parse_str(text, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 2 && t.skipped_bad == 2);
	vs_trace_free(&t);
	o.skip_bad = false;
	CHECK(parse_str(text, &o, &t, err, sizeof(err)) == -1);
	CHECK(strstr(err, "t:2:") != NULL);
}

static void test_time_regression(void)
{
	static const char text[] =
		"8,0 0 1 2.0 5 Q W 10 + 8 [a]\n"
		"8,0 1 1 1.0 5 Q W 18 + 8 [a]\n";
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	CHECK(parse_str(text, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 2 && t.time_regressions == 1 &&
	      t.req[1].t_ns == 2000000000ull);
	vs_trace_free(&t);
}

/* ---------------------------------------------------------------- iolog */

/* written by fio 3.33 --write_iolog (trimmed) */
static const char fio_v3[] =
"fio version 3 iolog\n"
"17 /tmp/fiot.dat add\n"
"187 /tmp/fiot.dat open\n"
"191 /tmp/fiot.dat read 61440 4096\n"
"393 /tmp/fiot.dat write 774144 4096\n"
"1161 /tmp/fiot.dat trim 880640 8192\n"
"1311 /tmp/fiot.dat sync 0 0\n"
"2207 /tmp/fiot.dat read 417792 4096\n"
"9385 /tmp/fiot.dat close\n";

static void test_iolog_v3(void)
{
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	CHECK(parse_str(fio_v3, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 5 && t.timed && t.ndevs == 1);
	if (t.n != 5)
		goto out;
	CHECK(t.req[0].op == VS_READ && t.req[0].off == 61440 &&
	      t.req[0].len == 4096 && t.req[0].t_ns == 191000);
	CHECK(t.req[1].op == VS_WRITE && t.req[1].t_ns == 393000);
	CHECK(t.req[2].op == VS_DISCARD && t.req[2].len == 8192);
	CHECK(t.req[3].op == VS_FLUSH);
	CHECK(t.req[4].t_ns == 2207000);
out:
	vs_trace_free(&t);
}

static void test_iolog_v2(void)
{
	static const char text[] =
		"fio version 2 iolog\n"
		"/dev/a add\n/dev/b add\n/dev/a open\n/dev/b open\n"
		"/dev/a read 0 4096\n"
		"/dev/b write 8192 16384\n"
		"/dev/a wait 5000 0\n"
		"/dev/a datasync\n"
		"/dev/b trim 0 4096\n"
		"/dev/a close\n";
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	o.rate_iops = 1000;
	CHECK(parse_str(text, &o, &t, err, sizeof(err)) == 0);
	CHECK(t.n == 4 && !t.timed && t.ndevs == 2);
	if (t.n != 4)
		goto out;
	CHECK(t.req[0].t_ns == 0 && t.req[1].t_ns == 1000000);
	CHECK(t.req[1].dev == 1 && t.req[1].pid == 2 &&
	      t.req[1].len == 16384);
	/* wait adds 5 ms, then the third untimed request: 2 ms */
	CHECK(t.req[2].op == VS_FLUSH && t.req[2].t_ns == 7000000);
	CHECK(t.req[3].op == VS_DISCARD);
out:
	vs_trace_free(&t);
}

static void test_iolog_malformed(void)
{
	static const struct bad_case cases[] = {
		{ "fio version 3 iolog\n0 /a add\n5 /a read 0\n",
		  "t:3: expected 'filename read offset length'" },
		{ "fio version 3 iolog\n0 /a add\nx /a read 0 4096\n",
		  "t:3: bad timestamp" },
		{ "fio version 2 iolog\n/a add\n/a frobnicate 0 1\n",
		  "t:3: unknown action 'frobnicate'" },
		{ "fio version 2 iolog\n/a read 0 4096\n",
		  "t:2: I/O on '/a' before 'add'" },
		{ "fio version 2 iolog\n/a open\n", "before 'add'" },
		{ "fio version 2 iolog\n/a add\n/a read -1 4096\n",
		  "t:3: bad offset" },
		{ "fio version 2 iolog\n/a add\n/a write 0 0\n",
		  "t:3: zero length" },
		{ "fio version 2 iolog\n/a add\n/a write 0 12q\n",
		  "t:3: bad length" },
		{ "fio version 2 iolog\n/a add\n/a write 18446744073709551615 4096\n",
		  "overflows" },
		{ "fio version 4 iolog\n", "t:1: unsupported fio iolog" },
		{ "fio version 2 iolog\n/a add\n", "no I/O requests" },
	};
	static const struct bad_case forced = {
		"8,0 0 1 0.1 5 Q W 10 + 8 [a]\n", "t:1: missing 'fio version"
	};
	static const struct bad_case wrong = {
		"fio version 2 iolog\n", "not blkparse"
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(&cases[i], VS_FMT_AUTO);
	expect_error(&forced, VS_FMT_IOLOG);
	expect_error(&wrong, VS_FMT_BLKPARSE);
}

static void test_nul_byte(void)
{
	static const char text[] = "fio version 2 iolog\n/a add\n/a re\0ad 0 1\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct vs_parse_opts o;
	struct vs_trace t;
	char err[256];

	vs_parse_opts_init(&o);
	CHECK(f && vs_trace_parse(f, "t", &o, &t, err, sizeof(err)) == -1);
	CHECK(strstr(err, "t:3: NUL byte") != NULL);
	if (f)
		fclose(f);
}

static void test_iolog_roundtrip_all_ops(void)
{
	static const char text[] =
		"8,0 0 1 0.000001 5 Q R 8 + 8 [a]\n"
		"8,16 0 2 0.000002 6 Q W 16 + 16 [a]\n"
		"8,0 0 3 0.000003 5 Q D 0 + 2048 [a]\n"
		"8,16 0 4 0.000004 6 Q FN [a]\n"
		"8,0 0 5 1.5 5 Q WS 24 + 1 [a]\n";
	struct vs_parse_opts o;
	struct vs_trace a, b;
	char err[256], *buf = NULL;
	size_t len = 0, i;
	FILE *f;

	vs_parse_opts_init(&o);
	CHECK(parse_str(text, &o, &a, err, sizeof(err)) == 0);
	CHECK(a.n == 5 && a.ndevs == 2);
	f = open_memstream(&buf, &len);
	CHECK(f && vs_trace_write_iolog(&a, f) == 0);
	if (f)
		fclose(f);
	CHECK(parse_str(buf, &o, &b, err, sizeof(err)) == 0);
	CHECK(b.n == a.n && b.ndevs == 2 && b.timed);
	for (i = 0; i < a.n && i < b.n; i++) {
		/* the iolog keeps op, device, extent and time (in us) */
		CHECK(b.req[i].op == a.req[i].op && b.req[i].off == a.req[i].off &&
		      b.req[i].len == a.req[i].len &&
		      b.req[i].t_ns == a.req[i].t_ns / 1000 * 1000);
		CHECK(!strcmp(b.devs[b.req[i].dev], a.devs[a.req[i].dev]));
	}
	CHECK(b.n == 5 && b.req[4].len == 512 && b.req[4].t_ns == 1500000000ull);
	free(buf);
	vs_trace_free(&a);
	vs_trace_free(&b);
}

static void test_blk_times(void)
{
	static const struct {
		const char *t;
		uint64_t ns;
	} ok_times[] = {
		{ "12", 12000000000ull }, { "1.5", 1500000000ull },
		{ "0.000000001", 1 }, { "3.1234567891", 3123456789ull },
		{ "0.000", 0 },
	};
	struct vs_parse_opts o;
	struct vs_trace t;
	char line[128], err[256];
	unsigned int i;

	vs_parse_opts_init(&o);
	for (i = 0; i < sizeof(ok_times) / sizeof(ok_times[0]); i++) {
		snprintf(line, sizeof(line), "8,0 0 1 %s 5 Q R 8 + 8 [a]\n",
			 ok_times[i].t);
		CHECK(parse_str(line, &o, &t, err, sizeof(err)) == 0);
		CHECK(t.n == 1 && t.req[0].t_ns == ok_times[i].ns);
		vs_trace_free(&t);
	}
	CHECK(parse_str("8,0 0 1 .5 5 Q R 8 + 8 [a]\n", &o, &t, err,
			sizeof(err)) == -1);
	CHECK(parse_str("8,0 0 1 99999999999999999999.0 5 Q R 8 + 8 [a]\n",
			&o, &t, err, sizeof(err)) == -1);
	CHECK(strstr(err, "bad timestamp") != NULL);
}

/* ------------------------------------------------------------ generator */

static void test_gen_roundtrip(void)
{
	struct vs_gen_opts g;
	struct vs_trace a = { 0 }, b = { 0 }, c;
	struct vs_parse_opts o;
	char err[256], *buf = NULL;
	size_t len = 0, i, reads = 0;
	FILE *f;

	vs_gen_opts_init(&g);
	g.blocks = 1000;
	g.requests = 20000;
	g.read_pct = 70;
	g.seed = 42;
	CHECK(vs_gen(&g, &a, err, sizeof(err)) == 0);
	CHECK(vs_gen(&g, &b, err, sizeof(err)) == 0);
	CHECK(a.n == 20000 && b.n == 20000);
	CHECK(!memcmp(a.req, b.req, a.n * sizeof(*a.req)));
	for (i = 0; i < a.n; i++) {
		reads += a.req[i].op == VS_READ;
		if (a.req[i].off % 4096 || a.req[i].off >= 1000 * 4096 ||
		    a.req[i].len != 4096 || a.req[i].t_ns != i * 100000)
			break;
	}
	CHECK(i == a.n);
	CHECK(reads > 13600 && reads < 14400);	/* 70% +- 2% */

	f = open_memstream(&buf, &len);
	CHECK(f && vs_trace_write_iolog(&a, f) == 0);
	if (f)
		fclose(f);
	vs_parse_opts_init(&o);
	CHECK(parse_str(buf, &o, &c, err, sizeof(err)) == 0);
	CHECK(c.n == a.n && !memcmp(c.req, a.req, a.n * sizeof(*a.req)));
	vs_trace_free(&c);
	free(buf);

	g.seed = 43;
	vs_trace_free(&b);
	memset(&b, 0, sizeof(b));
	CHECK(vs_gen(&g, &b, err, sizeof(err)) == 0);
	CHECK(memcmp(a.req, b.req, a.n * sizeof(*a.req)) != 0);
	vs_trace_free(&a);
	vs_trace_free(&b);
}

/* share of accesses that go to the k most accessed blocks */
static double top_share(const struct vs_trace *t, uint64_t nblocks,
			uint64_t k)
{
	uint64_t *cnt = calloc(nblocks, sizeof(*cnt)), sum = 0, i, j;

	for (i = 0; i < t->n; i++)
		cnt[t->req[i].off / 4096]++;
	/* partial selection of the k largest */
	for (i = 0; i < k; i++) {
		uint64_t best = i;

		for (j = i + 1; j < nblocks; j++)
			if (cnt[j] > cnt[best])
				best = j;
		sum += cnt[best];
		cnt[best] = cnt[i];
	}
	free(cnt);
	return (double)sum / (double)t->n;
}

static void test_gen_distributions(void)
{
	struct vs_gen_opts g;
	struct vs_trace t = { 0 };
	char err[256];
	double want = 0, norm = 0;
	uint64_t i;

	vs_gen_opts_init(&g);
	g.blocks = 2000;
	g.requests = 200000;
	CHECK(vs_gen_parse_dist("zipf:1.2", &g) == 0);
	CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
	for (i = 1; i <= g.blocks; i++) {
		norm += pow((double)i, -1.2);
		if (i <= 20)
			want += pow((double)i, -1.2);
	}
	want /= norm;
	CHECK(fabs(top_share(&t, g.blocks, 20) - want) < 0.01);
	vs_trace_free(&t);
	memset(&t, 0, sizeof(t));

	/* pareto:0.9: 90% of the accesses on 10% of the blocks */
	CHECK(vs_gen_parse_dist("pareto:0.9", &g) == 0);
	CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
	CHECK(fabs(top_share(&t, g.blocks, 200) - 0.9) < 0.02);
	vs_trace_free(&t);

	/* scan: four one-time scans of blocks/5 reads outside the hot set */
	{
		uint64_t outside = 0, seen_twice = 0;
		uint8_t *seen = calloc(g.blocks * 2, 1);

		CHECK(vs_gen_parse_dist("scan:0.9", &g) == 0);
		CHECK(g.shape == VS_SHAPE_SCAN);
		memset(&t, 0, sizeof(t));
		CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
		for (i = 0; i < t.n; i++) {
			uint64_t blk = t.req[i].off / g.block_size;

			if (blk < g.blocks)
				continue;
			outside++;
			CHECK(t.req[i].op == VS_READ);
			CHECK(blk < g.blocks + 4 * (g.blocks / 5));
			seen_twice += seen[blk - g.blocks]++ > 0;
		}
		CHECK(outside == 4 * (g.blocks / 5));
		CHECK(seen_twice == 0);	/* one-time */
		free(seen);
		vs_trace_free(&t);
	}
	/* shift: the hottest block of phase 0 is cold in phase 1 */
	{
		uint64_t *cnt0 = calloc(g.blocks, sizeof(*cnt0));
		uint64_t *cnt1 = calloc(g.blocks, sizeof(*cnt1));
		uint64_t top = 0, ph = g.requests / 8;

		CHECK(vs_gen_parse_dist("shift:1.2", &g) == 0);
		CHECK(g.shape == VS_SHAPE_SHIFT);
		memset(&t, 0, sizeof(t));
		CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
		for (i = 0; i < 2 * ph; i++)
			(i < ph ? cnt0 : cnt1)[t.req[i].off / g.block_size]++;
		for (i = 0; i < g.blocks; i++)
			if (cnt0[i] > cnt0[top])
				top = i;
		CHECK(cnt0[top] > ph / 20);
		CHECK(cnt1[top] * 50 < cnt0[top]);
		free(cnt0);
		free(cnt1);
		vs_trace_free(&t);
	}
	/* log: a log write (submitter 2) after every table write, four a block */
	{
		uint64_t writes = 0, logs = 0, prev_log = ~0ull, same = 0;

		CHECK(vs_gen_parse_dist("log:0.9", &g) == 0);
		CHECK(g.shape == VS_SHAPE_LOG);
		memset(&t, 0, sizeof(t));
		CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
		for (i = 0; i < t.n; i++) {
			uint64_t blk = t.req[i].off / g.block_size;

			if (blk < g.blocks) {
				CHECK(t.req[i].pid == 1);
				if (t.req[i].op == VS_WRITE) {
					writes++;
					CHECK(i + 1 < t.n && t.req[i + 1].pid == 2);
				}
				continue;
			}
			logs++;
			CHECK(t.req[i].op == VS_WRITE && t.req[i].pid == 2);
			CHECK(blk < g.blocks + g.blocks / 8);
			CHECK(prev_log == ~0ull || blk == prev_log ||
			      blk == prev_log + 1 || blk == g.blocks);
			same += blk == prev_log;
			prev_log = blk;
		}
		CHECK(logs == writes && t.n == g.requests + logs);
		CHECK(same * 4 >= logs * 3 - 4);	/* each block 4 times */
		vs_trace_free(&t);
	}
	CHECK(vs_gen_parse_dist("log:0", &g) == -1);
	CHECK(vs_gen_parse_dist("zipf:0.9", &g) == 0 && g.shape == VS_SHAPE_PLAIN);
	CHECK(vs_gen_parse_dist("scan:", &g) == -1);
	CHECK(vs_gen_parse_dist("shift:0", &g) == -1);
	CHECK(vs_gen_parse_dist("pareto:1", &g) == -1);
	CHECK(vs_gen_parse_dist("zipf:", &g) == -1);
	CHECK(vs_gen_parse_dist("zipf:-1", &g) == -1);
	CHECK(vs_gen_parse_dist("normal", &g) == -1);
	g.blocks = 0;
	memset(&t, 0, sizeof(t));
	CHECK(vs_gen(&g, &t, err, sizeof(err)) == -1);
	vs_trace_free(&t);
}

/* --------------------------------------------------------------- blocks */

static void test_blocks_build(void)
{
	struct vs_trace t = { 0 };
	struct vs_blocks b;
	struct vs_req r = { .len = 4096 };

	CHECK(vs_trace_dev(&t, "a") == 0 && vs_trace_dev(&t, "b") == 1);
	r.op = VS_READ;
	r.off = 4096;
	vs_trace_push(&t, &r);			/* block 1 */
	r.off = 6144;
	r.len = 8192;
	vs_trace_push(&t, &r);			/* blocks 1, 2, 3 */
	r.op = VS_FLUSH;
	vs_trace_push(&t, &r);			/* none */
	r.op = VS_WRITE;
	r.dev = 1;
	r.off = 4096;
	r.len = 512;
	vs_trace_push(&t, &r);			/* b:1, another device */
	r.op = VS_DISCARD;
	r.off = 40960;
	vs_trace_push(&t, &r);			/* b:10 */
	CHECK(vs_blocks_build(&t, 4096, &b) == 0);
	CHECK(b.n == 6 && b.nids == 5 && b.nids_rw == 4);
	if (b.n == 6) {
		CHECK(b.id[0] == b.id[1] && b.id[2] != b.id[1]);
		CHECK(b.id[4] != b.id[0] && b.op[4] == VS_WRITE);
		CHECK(b.op[5] == VS_DISCARD);
	}
	vs_blocks_free(&b);
	vs_trace_free(&t);
}

/* ------------------------------------------------ OPT vs brute force */

static uint64_t bf_best;

/* max hits from position i with the given resident set (bitmask) */
static void bf(const struct vs_blocks *b, size_t i, unsigned int set,
	       unsigned int cap, int bypass, uint64_t hits)
{
	unsigned int id, v;

	for (; i < b->n; i++) {
		id = 1u << b->id[i];
		if (b->op[i] == VS_DISCARD) {
			set &= ~id;
			continue;
		}
		if (set & id) {
			hits++;
			continue;
		}
		if ((unsigned int)__builtin_popcount(set) < cap) {
			set |= id;
			continue;
		}
		if (!cap)
			continue;
		/* full: branch over every victim (and bypass) */
		if (bypass)
			bf(b, i + 1, set, cap, bypass, hits);
		for (v = 0; v < 32; v++)
			if (set & (1u << v))
				bf(b, i + 1, (set & ~(1u << v)) | id, cap,
				   bypass, hits);
		return;
	}
	if (hits > bf_best)
		bf_best = hits;
}

static uint64_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rnd_state >> 33) % n;
}

static void random_blocks(struct vs_blocks *b, size_t n, uint32_t nids,
			  bool discards)
{
	size_t i;

	b->n = n;
	b->nids = nids;
	b->nids_rw = nids;
	b->block_size = 4096;
	b->id = malloc(n * sizeof(*b->id));
	b->op = malloc(n);
	for (i = 0; i < n; i++) {
		uint32_t r = rnd(10);

		b->id[i] = rnd(nids);
		b->op[i] = discards && r == 0 ? VS_DISCARD :
			   r < 4 ? VS_WRITE : VS_READ;
	}
}

static void test_opt_bruteforce(void)
{
	int iter, mismatches = 0;

	for (iter = 0; iter < 600; iter++) {
		struct vs_blocks b;
		struct vs_hits h;
		unsigned int cap = 1 + rnd(3);
		int bypass = iter & 1;

		random_blocks(&b, 8 + rnd(7), 2 + rnd(4), iter % 3 == 0);
		bf_best = 0;
		bf(&b, 0, 0, cap, bypass, 0);
		CHECK(vs_opt(&b, cap, bypass, &h) == 0);
		if (h.read_hits + h.write_hits != bf_best)
			mismatches++;
		CHECK(h.read_acc + h.write_acc <= b.n);
		vs_blocks_free(&b);
	}
	CHECK(mismatches == 0);
}

static void test_opt_known(void)
{
	/* the classic example: a b c d a b e a b c d e, 3 frames: 7 faults */
	static const uint32_t seq[] = { 0, 1, 2, 3, 0, 1, 4, 0, 1, 2, 3, 4 };
	struct vs_blocks b = { .n = 12, .nids = 5, .nids_rw = 5 };
	uint8_t ops[12] = { 0 };
	struct vs_hits h;

	b.id = (uint32_t *)seq;
	b.op = ops;
	CHECK(vs_opt(&b, 3, 0, &h) == 0);
	CHECK(h.read_acc == 12 && h.read_hits == 5 && h.fills == 7);
	CHECK(vs_opt(&b, 0, 0, &h) == 0 && h.read_hits == 0);
	CHECK(vs_opt(&b, 100, 0, &h) == 0 && h.read_hits == 7);
}

/* ------------------------------------------- reference LRU/FIFO vs naive */

static uint64_t naive(const struct vs_blocks *b, unsigned int cap, bool lru)
{
	uint32_t slot[64];
	unsigned int used = 0, j, k;
	uint64_t hits = 0;
	size_t i;

	for (i = 0; i < b->n; i++) {
		for (j = 0; j < used; j++)
			if (slot[j] == b->id[i])
				break;
		if (b->op[i] == VS_DISCARD) {
			if (j < used) {
				memmove(&slot[j], &slot[j + 1],
					(used - j - 1) * sizeof(slot[0]));
				used--;
			}
			continue;
		}
		if (j < used) {
			hits++;
			if (lru) {	/* move to the back (most recent) */
				uint32_t x = slot[j];

				for (k = j; k + 1 < used; k++)
					slot[k] = slot[k + 1];
				slot[used - 1] = x;
			}
			continue;
		}
		if (!cap)
			continue;
		if (used == cap) {
			memmove(&slot[0], &slot[1],
				(used - 1) * sizeof(slot[0]));
			used--;
		}
		slot[used++] = b->id[i];
	}
	return hits;
}

static void test_refsim(void)
{
	int iter, bad = 0;

	for (iter = 0; iter < 300; iter++) {
		struct vs_blocks b;
		struct vs_hits h;
		unsigned int cap = rnd(20);

		random_blocks(&b, 2000, 1 + rnd(40), iter & 1);
		CHECK(vs_refsim(&b, cap, VS_REF_LRU, &h) == 0);
		bad += h.read_hits + h.write_hits != naive(&b, cap, true);
		CHECK(vs_refsim(&b, cap, VS_REF_FIFO, &h) == 0);
		bad += h.read_hits + h.write_hits != naive(&b, cap, false);
		vs_blocks_free(&b);
	}
	CHECK(bad == 0);
}

static void test_ref_admission(void)
{
	static const uint32_t seq[] = { 0, 0, 1, 1, 1, 0 };
	struct vs_blocks b = { .n = 6, .nids = 2, .nids_rw = 2 };
	uint8_t ops[6] = { 0 };
	struct vs_hits h;

	b.id = (uint32_t *)seq;
	b.op = ops;
	/* 0 in; 0 hit; 1 refused (ghost); 1 admitted; 1 hit; 0 refused */
	CHECK(vs_refsim(&b, 1, VS_REF_LRU_2HIT, &h) == 0);
	CHECK(h.read_hits == 2 && h.fills == 2);
	/* counts: 1 (1 <= 2) refused twice, admitted at 3 > 2; 0 (3 <= 3) */
	CHECK(vs_refsim(&b, 1, VS_REF_LRU_TLFU, &h) == 0);
	CHECK(h.read_hits == 1 && h.fills == 2);
	/* writes are subject to admission too */
	memset(ops, VS_WRITE, sizeof(ops));
	CHECK(vs_refsim(&b, 1, VS_REF_LRU_2HIT, &h) == 0);
	CHECK(h.write_hits == 2 && h.write_acc == 6 && h.fills == 2);
	CHECK(vs_refsim(&b, 1, VS_REF_LRU, &h) == 0);
	CHECK(h.write_hits == 3 && h.fills == 3);
}

/* The static oracle LFU on a hand example and against OPT. */
static void test_oracle_lfu(void)
{
	static const uint32_t seq[] = { 0, 0, 0, 1, 1, 2, 1, 0 };
	struct vs_blocks b = { .n = 8, .nids = 3, .nids_rw = 3 };
	uint8_t ops[8] = { 0 };
	struct vs_hits h, ob;
	int iter, bad = 0;

	b.id = (uint32_t *)seq;
	b.op = ops;
	/* keeps 0 (4 accesses): 3 hits, one fetch */
	CHECK(vs_oracle_lfu(&b, 1, &h) == 0);
	CHECK(h.read_hits == 3 && h.fills == 1 && h.read_acc == 8);
	/* keeps 0 and 1: 3 + 2 hits */
	CHECK(vs_oracle_lfu(&b, 2, &h) == 0);
	CHECK(h.read_hits == 5 && h.fills == 2);
	CHECK(vs_oracle_lfu(&b, 0, &h) == 0 && h.read_hits == 0);
	/*
	 * Never above OPT with optional admission (it is such a policy),
	 * on traces without discards (the oracle ignores them).
	 */
	for (iter = 0; iter < 200; iter++) {
		unsigned int cap = rnd(8);

		random_blocks(&b, 300, 1 + rnd(30), false);
		CHECK(vs_oracle_lfu(&b, cap, &h) == 0);
		CHECK(vs_opt(&b, cap, 1, &ob) == 0);
		bad += h.read_hits + h.write_hits >
		       ob.read_hits + ob.write_hits;
		vs_blocks_free(&b);
	}
	CHECK(bad == 0);
}

/* Exact LFU: the heap version against a naive scan of the residents. */
static uint64_t naive_lfu(const struct vs_blocks *b, unsigned int cap)
{
	uint32_t slot[64], cnt[64] = { 0 };
	uint64_t last[64], t = 0, hits = 0;
	unsigned int used = 0, j, v;
	size_t i;

	for (i = 0; i < b->n; i++) {
		uint32_t id = b->id[i];

		for (j = 0; j < used; j++)
			if (slot[j] == id)
				break;
		if (b->op[i] == VS_DISCARD) {
			if (j < used) {
				slot[j] = slot[used - 1];
				last[j] = last[used - 1];
				used--;
			}
			continue;
		}
		cnt[id]++;
		t++;
		if (j < used) {
			hits++;
			last[j] = t;
			continue;
		}
		if (!cap)
			continue;
		if (used == cap) {
			for (v = 0, j = 1; j < used; j++)
				if (cnt[slot[j]] < cnt[slot[v]] ||
				    (cnt[slot[j]] == cnt[slot[v]] &&
				     last[j] < last[v]))
					v = j;
			if (cnt[id] <= cnt[slot[v]])
				continue;
			slot[v] = slot[used - 1];
			last[v] = last[used - 1];
			used--;
		}
		slot[used] = id;
		last[used++] = t;
	}
	return hits;
}

static void test_ref_lfu(void)
{
	int iter, bad = 0;

	for (iter = 0; iter < 300; iter++) {
		struct vs_blocks b;
		struct vs_hits h;
		unsigned int cap = rnd(20);

		random_blocks(&b, 2000, 1 + rnd(40), iter & 1);
		CHECK(vs_refsim(&b, cap, VS_REF_LFU, &h) == 0);
		bad += h.read_hits + h.write_hits != naive_lfu(&b, cap);
		vs_blocks_free(&b);
	}
	CHECK(bad == 0);
}

/* OPT bounds every policy, and OPT with bypass bounds OPT. */
static void test_opt_bounds(void)
{
	struct vs_gen_opts g;
	struct vs_trace t = { 0 };
	struct vs_blocks b;
	struct vs_hits o, ob, l, f;
	char err[256];
	uint64_t cap;

	vs_gen_opts_init(&g);
	g.blocks = 5000;
	g.requests = 50000;
	CHECK(vs_gen(&g, &t, err, sizeof(err)) == 0);
	CHECK(vs_blocks_build(&t, 4096, &b) == 0);
	for (cap = 50; cap <= 5000; cap *= 10) {
		CHECK(vs_opt(&b, cap, 0, &o) == 0);
		CHECK(vs_opt(&b, cap, 1, &ob) == 0);
		CHECK(vs_refsim(&b, cap, VS_REF_LRU, &l) == 0);
		CHECK(vs_refsim(&b, cap, VS_REF_FIFO, &f) == 0);
		CHECK(o.read_hits + o.write_hits >= l.read_hits + l.write_hits);
		CHECK(o.read_hits + o.write_hits >= f.read_hits + f.write_hits);
		CHECK(ob.read_hits + ob.write_hits >=
		      o.read_hits + o.write_hits);
		CHECK(vs_refsim(&b, cap, VS_REF_LRU_2HIT, &l) == 0);
		CHECK(ob.read_hits + ob.write_hits >=
		      l.read_hits + l.write_hits);
		CHECK(vs_refsim(&b, cap, VS_REF_LRU_TLFU, &l) == 0);
		CHECK(ob.read_hits + ob.write_hits >=
		      l.read_hits + l.write_hits);
		CHECK(vs_refsim(&b, cap, VS_REF_LRU, &l) == 0);
		CHECK(o.read_acc + o.write_acc == 50000 &&
		      o.read_acc == l.read_acc && o.write_acc == f.write_acc);
	}
	/* a cache as big as the working set only misses compulsorily */
	CHECK(vs_opt(&b, b.nids, 0, &o) == 0);
	CHECK(vs_refsim(&b, b.nids, VS_REF_FIFO, &f) == 0);
	CHECK(o.read_hits + o.write_hits == 50000 - b.nids_rw &&
	      f.read_hits + f.write_hits == 50000 - b.nids_rw);
	vs_blocks_free(&b);
	vs_trace_free(&t);
}

/* ----------------------------------------------------------------- util */

static void test_util(void)
{
	uint64_t v;
	char buf[32];

	CHECK(vs_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(vs_parse_size("4K", &v) == 0 && v == 4096);
	CHECK(vs_parse_size("4k", &v) == 0 && v == 4096);
	CHECK(vs_parse_size("1.5G", &v) == 0 && v == 3ull << 29);
	CHECK(vs_parse_size("64KiB", &v) == 0 && v == 65536);
	CHECK(vs_parse_size("2TB", &v) == 0 && v == 2ull << 40);
	CHECK(vs_parse_size("0.5K", &v) == 0 && v == 512);
	CHECK(vs_parse_size("512b", &v) == 0 && v == 512);
	CHECK(vs_parse_size("1.3", &v) == -1);
	CHECK(vs_parse_size("-1", &v) == -1);
	CHECK(vs_parse_size("1X", &v) == -1);
	CHECK(vs_parse_size("1Kx", &v) == -1);
	CHECK(vs_parse_size("", &v) == -1);
	CHECK(vs_parse_size("99999999999P", &v) == -1);
	CHECK(vs_parse_uint("10", 1, 10, &v) == 0 && v == 10);
	CHECK(vs_parse_uint("11", 1, 10, &v) == -1);
	CHECK(vs_parse_uint("1e3", 1, 10000, &v) == -1);
	CHECK(!strcmp(vs_fmt_size(1u << 30, buf, sizeof(buf)), "1G"));
	CHECK(!strcmp(vs_fmt_size(1536, buf, sizeof(buf)), "1.50K"));
	CHECK(!strcmp(vs_fmt_ns(1500000000ull, buf, sizeof(buf)), "1.5s"));
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "blkparse_q", test_blkparse_q },
	{ "blkparse_d_c", test_blkparse_dc },
	{ "blkparse_malformed", test_blkparse_malformed },
	{ "skip_bad", test_skip_bad },
	{ "time_regression", test_time_regression },
	{ "iolog_v3", test_iolog_v3 },
	{ "iolog_v2", test_iolog_v2 },
	{ "iolog_malformed", test_iolog_malformed },
	{ "nul_byte", test_nul_byte },
	{ "iolog_roundtrip_all_ops", test_iolog_roundtrip_all_ops },
	{ "blkparse_times", test_blk_times },
	{ "gen_roundtrip", test_gen_roundtrip },
	{ "gen_distributions", test_gen_distributions },
	{ "blocks_build", test_blocks_build },
	{ "opt_known", test_opt_known },
	{ "opt_bruteforce", test_opt_bruteforce },
	{ "refsim_vs_naive", test_refsim },
	{ "ref_admission_models", test_ref_admission },
	{ "opt_bounds", test_opt_bounds },
	{ "oracle_lfu", test_oracle_lfu },
	{ "ref_lfu_vs_naive", test_ref_lfu },
	{ "util", test_util },
};

static void run(void **state)
{
	const struct test *t = *state;

	failures = 0;
	t->fn();
	if (failures)
		fail_msg("%d check(s) failed", failures);
}

int main(void)
{
	struct CMUnitTest cm[sizeof(tests) / sizeof(tests[0])];
	unsigned int i;
	int nfail;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		cm[i] = (struct CMUnitTest){ .name = tests[i].name, .test_func = run,
					     .initial_state = (void *)&tests[i] };
	nfail = _cmocka_run_group_tests("vcache-sim", cm, i, NULL, NULL);
	printf("unit: %u passed, %d failed\n", i - (unsigned int)nfail, nfail);
	return nfail ? 1 : 0;
}
