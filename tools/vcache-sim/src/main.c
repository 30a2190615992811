// SPDX-License-Identifier: GPL-2.0
/*
 * vcache-sim - replay a block trace through the vcache engine and report
 * what each cache size and policy would have done.  See vcache-sim(8).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "gen.h"
#include "replay.h"
#include "trace.h"
#include "util.h"

#define MAX_SIZES 64
#define ERRLEN 512

static const char *prog = "vcache-sim";

static void die(const char *fmt, ...) __attribute__((noreturn,
						     format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: vcache-sim [options] TRACE\n"
"       vcache-sim gen [options] -o FILE\n"
"\n"
"Replay TRACE (blkparse text output or fio iolog v2/v3; - for stdin)\n"
"through the vcache engine for each cache size, policy and mode.\n"
"\n"
"  -s, --sizes LIST        cache sizes: 512M,2G,... or %% of the working set\n"
"                          (default 5%%,10%%,25%%,50%%)\n"
"  -p, --policies LIST     fifo,lru,lru+admit,s3fifo,s3fifo+admit,tinylfu\n"
"                          (default all six)\n"
"  -m, --modes LIST        wb,wt,wa (default wb)\n"
"  -b, --block-size SIZE   cache block size, 4K..64K (default 4K)\n"
"      --high-watermark P  start cleaning at P%% dirty\n"
"      --low-watermark P   stop watermark cleaning at P%% dirty\n"
"      --flush-period SEC  maximum dirty age (0: off)\n"
"      --seq-bypass KIB    sequential bypass threshold (0: off)\n"
"      --admit-pct P       admission starts when the cache is P%% full\n"
"      --drain             clean everything after the trace\n"
"      --backing-size SIZE backing device size (default: end of trace)\n"
"  -P, --param NAME=VAL    set any engine parameter (sysfs name), last wins\n"
"      --target-hit PCT    name the smallest size reaching PCT%% hits\n"
"      --latency           time device I/O (flash 80/20 us read/write,\n"
"                          disk 8 ms seek + 150 MB/s, one I/O at a time)\n"
"      --flash-latency R[,W]  flash read[,write] latency in us\n"
"      --hdd-seek MS       disk seek + rotation per random I/O\n"
"      --hdd-mbps N        disk transfer rate\n"
"      --flash-phys-block B  flash physical block in bytes (4096); writes\n"
"                          covering one in part are counted as RMWs\n"
"  -f, --format FMT        auto, blkparse or iolog (default auto)\n"
"  -e, --event E           blkparse event to replay: Q, D or C (default Q)\n"
"      --skip-bad          skip malformed trace lines (default: fail)\n"
"      --rate IOPS         spacing of untimed (fio v2) requests (10000)\n"
"      --no-opt            do not compute OPT\n"
"      --reference         also run the reference models (FIFO, LRU,\n"
"                          LRU + 2nd-hit and TinyLFU-style admission)\n"
"      --json              machine-readable output, base units\n"
"  -h, --help\n"
"\n"
"gen options:\n"
"  -d, --dist D            zipf:THETA, pareto:H, uniform, scan:THETA\n"
"                          (zipf + one-time scans), shift:THETA (zipf\n"
"                          whose hot set moves) or log:THETA (zipf + a\n"
"                          write-ahead log) (zipf:0.9)\n"
"  -n, --blocks N          address space in blocks (262144)\n"
"  -r, --requests N        number of requests (1000000)\n"
"  -R, --read-pct P        percentage of reads (80)\n"
"  -S, --seed N            random seed (1)\n"
"  -b, --block-size SIZE   request and block size (4K)\n"
"  -i, --iops N            request rate for timestamps (10000)\n"
"  -F, --filename NAME     file name written in the log (/dev/backing)\n"
"      --fsync-every N     a sync (FLUSH) after every N writes (0: none)\n"
"  -o, --output FILE       fio version 3 iolog (- for stdout)\n");
}

/* ------------------------------------------------------------------ gen */

static int cmd_gen(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dist", required_argument, NULL, 'd' },
		{ "blocks", required_argument, NULL, 'n' },
		{ "requests", required_argument, NULL, 'r' },
		{ "read-pct", required_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'S' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "iops", required_argument, NULL, 'i' },
		{ "filename", required_argument, NULL, 'F' },
		{ "fsync-every", required_argument, NULL, 'Y' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vs_gen_opts o;
	struct vs_trace t = { 0 };
	const char *out = NULL;
	char err[ERRLEN];
	uint64_t v;
	FILE *f;
	int c;

	vs_gen_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "d:n:r:R:S:b:i:F:Y:o:h", lo,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			if (vs_gen_parse_dist(optarg, &o))
				die("gen: bad distribution '%s' (zipf:THETA, scan:THETA, shift:THETA or log:THETA with 0 < THETA <= 10, pareto:H with 0 < H < 1, or uniform)",
				    optarg);
			break;
		case 'n':
			if (vs_parse_uint(optarg, 1, UINT32_MAX, &o.blocks))
				die("gen: bad block count '%s'", optarg);
			break;
		case 'r':
			if (vs_parse_uint(optarg, 1, 1ull << 32, &o.requests))
				die("gen: bad request count '%s'", optarg);
			break;
		case 'R':
			if (vs_parse_uint(optarg, 0, 100, &v))
				die("gen: read percentage must be 0..100");
			o.read_pct = (unsigned int)v;
			break;
		case 'S':
			if (vs_parse_uint(optarg, 0, UINT64_MAX, &o.seed))
				die("gen: bad seed '%s'", optarg);
			break;
		case 'b':
			if (vs_parse_size(optarg, &v) || v < 512 || v % 512 ||
			    v > (1u << 20))
				die("gen: block size must be a multiple of 512 up to 1M");
			o.block_size = (uint32_t)v;
			break;
		case 'i':
			if (vs_parse_uint(optarg, 1, 1000000000, &o.iops))
				die("gen: bad iops '%s'", optarg);
			break;
		case 'Y':
			if (vs_parse_uint(optarg, 0, 1ull << 32, &o.fsync_every))
				die("gen: bad --fsync-every '%s'", optarg);
			break;
		case 'F':
			if (!*optarg || strpbrk(optarg, " \t\n"))
				die("gen: file name must be non-empty without spaces");
			o.filename = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc)
		die("gen: unexpected argument '%s'", argv[optind]);
	if (!out)
		die("gen: -o FILE is required (- for stdout)");
	if (vs_gen(&o, &t, err, sizeof(err)))
		die("%s", err);
	f = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!f)
		die("%s: %s", out, strerror(errno));
	if (vs_trace_write_iolog(&t, f) || (f != stdout && fclose(f)) ||
	    (f == stdout && fflush(f)))
		die("%s: write error: %s", out, strerror(errno));
	vs_trace_free(&t);
	return 0;
}

/* --------------------------------------------------------------- replay */

struct size_spec {
	uint64_t bytes;		/* when pct == 0 */
	double pct;		/* of the working set */
	char text[32];
};

struct run {
	uint64_t cache_bytes;
	int size_idx;
	enum vs_policy pol;
	enum vs_mode mode;
	struct vs_result r;
};

struct size_models {
	uint64_t cache_bytes, cache_blocks;
	struct vs_hits opt, opt_bypass, oracle, ref[VS_REF_NR];
};

static int parse_list(char *s, const char *const *names, int nnames,
		      int *out, int max, const char *what)
{
	char *tok, *save = NULL;
	int n = 0, i;

	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < nnames; i++)
			if (!strcmp(tok, names[i]))
				break;
		if (i == nnames)
			die("unknown %s '%s'", what, tok);
		if (n == max)
			die("too many %ss", what);
		out[n++] = i;
	}
	if (!n)
		die("empty %s list", what);
	return n;
}

static int parse_sizes(char *s, struct size_spec *sz)
{
	char *tok, *save = NULL, *end;
	int n = 0;

	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t l = strlen(tok);

		if (n == MAX_SIZES)
			die("at most %d cache sizes", MAX_SIZES);
		memset(&sz[n], 0, sizeof(sz[n]));
		snprintf(sz[n].text, sizeof(sz[n].text), "%s", tok);
		if (l > 1 && tok[l - 1] == '%') {
			tok[l - 1] = '\0';
			errno = 0;
			sz[n].pct = strtod(tok, &end);
			if (errno || end == tok || *end || !(sz[n].pct > 0) ||
			    sz[n].pct > 1000)
				die("bad cache size percentage '%s%%'", tok);
		} else if (vs_parse_size(tok, &sz[n].bytes) || !sz[n].bytes) {
			die("bad cache size '%s' (e.g. 512M, 2G, 10%%)", tok);
		}
		n++;
	}
	if (!n)
		die("empty size list");
	return n;
}

static void json_hits(const char *name, const struct vs_hits *h, bool comma)
{
	printf("\"%s\": {\"read_accesses\": %" PRIu64 ", \"read_hits\": %" PRIu64
	       ", \"write_accesses\": %" PRIu64 ", \"write_hits\": %" PRIu64
	       ", \"fills\": %" PRIu64 "}%s",
	       name, h->read_acc, h->read_hits, h->write_acc, h->write_hits,
	       h->fills, comma ? ", " : "");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	enum {
		O_HIGH = 256, O_LOW, O_PERIOD, O_SEQ, O_ADMIT, O_DRAIN,
		O_BACKING, O_SKIP, O_RATE, O_NOOPT, O_REF, O_JSON,
		O_LAT, O_FLAT, O_SEEK, O_MBPS, O_TARGET, O_PHYS,
	};
	double dv;
	char *end;
	char *eq;
	static const struct option lo[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "policies", required_argument, NULL, 'p' },
		{ "modes", required_argument, NULL, 'm' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "high-watermark", required_argument, NULL, O_HIGH },
		{ "low-watermark", required_argument, NULL, O_LOW },
		{ "flush-period", required_argument, NULL, O_PERIOD },
		{ "seq-bypass", required_argument, NULL, O_SEQ },
		{ "admit-pct", required_argument, NULL, O_ADMIT },
		{ "drain", no_argument, NULL, O_DRAIN },
		{ "backing-size", required_argument, NULL, O_BACKING },
		{ "param", required_argument, NULL, 'P' },
		{ "latency", no_argument, NULL, O_LAT },
		{ "flash-latency", required_argument, NULL, O_FLAT },
		{ "hdd-seek", required_argument, NULL, O_SEEK },
		{ "hdd-mbps", required_argument, NULL, O_MBPS },
		{ "flash-phys-block", required_argument, NULL, O_PHYS },
		{ "target-hit", required_argument, NULL, O_TARGET },
		{ "format", required_argument, NULL, 'f' },
		{ "event", required_argument, NULL, 'e' },
		{ "skip-bad", no_argument, NULL, O_SKIP },
		{ "rate", required_argument, NULL, O_RATE },
		{ "no-opt", no_argument, NULL, O_NOOPT },
		{ "reference", no_argument, NULL, O_REF },
		{ "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char def_sizes[] = "5%,10%,25%,50%";
	struct size_spec sizes[MAX_SIZES];
	int pols[VS_POL_NR] = { VS_POL_FIFO, VS_POL_LRU, VS_POL_LRU_ADMIT };
	int modes[VS_MODE_NR] = { VS_MODE_WB };
	int nsizes, npols = VS_POL_NR, nmodes = 1, i, j, k, c;
	struct size_models *sm;
	struct vs_parse_opts po;
	struct vs_trace t;
	struct vs_blocks b;
	struct vs_cfg cfg;
	struct run *runs;
	int nruns = 0;
	bool json = false, opt = true, ref = false;
	double target = -1;
	char *size_arg = def_sizes;
	char err[ERRLEN], b1[32], b2[32], b3[32], b4[32];
	uint64_t v, ws_bytes, reads = 0, writes = 0, trims = 0, flushes = 0;
	const char *path;

	if (argc > 1 && !strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);

	vs_parse_opts_init(&po);
	vs_cfg_init(&cfg);
	while ((c = getopt_long(argc, argv, "s:p:m:b:f:e:P:h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			size_arg = optarg;
			break;
		case 'p':
			npols = parse_list(optarg, vs_policy_names, VS_POL_NR,
					   pols, VS_POL_NR, "policy");
			break;
		case 'm':
			nmodes = parse_list(optarg, vs_mode_names, VS_MODE_NR,
					    modes, VS_MODE_NR, "mode");
			break;
		case 'b':
			if (vs_parse_size(optarg, &v) || v < 4096 ||
			    v > 65536 || (v & (v - 1)))
				die("block size must be a power of two from 4K to 64K");
			cfg.block_size = (uint32_t)v;
			break;
		case O_HIGH:
			if (vs_parse_uint(optarg, 0, 100, &v))
				die("high watermark must be 0..100 (percent)");
			cfg.dirty_high_pct = (int)v;
			break;
		case O_LOW:
			if (vs_parse_uint(optarg, 0, 100, &v))
				die("low watermark must be 0..100 (percent)");
			cfg.dirty_low_pct = (int)v;
			break;
		case O_PERIOD:
			if (vs_parse_uint(optarg, 0, 1u << 30, &v))
				die("flush period must be a number of seconds");
			cfg.flush_period_s = (int64_t)v;
			break;
		case O_SEQ:
			if (vs_parse_uint(optarg, 0, 1ull << 32, &v))
				die("sequential bypass threshold must be KiB (0: off)");
			cfg.seq_thresh_kib = (int64_t)v;
			break;
		case O_ADMIT:
			if (vs_parse_uint(optarg, 0, 100, &v))
				die("admission fullness must be 0..100 (percent)");
			cfg.admit_pct = (int)v;
			break;
		case O_DRAIN:
			cfg.drain_at_end = true;
			break;
		case O_BACKING:
			if (vs_parse_size(optarg, &cfg.backing_bytes) ||
			    !cfg.backing_bytes)
				die("bad backing size '%s'", optarg);
			break;
		case 'P':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg ||
			    vs_parse_uint(eq + 1, 0, UINT64_MAX, &v))
				die("--param wants NAME=VALUE with an unsigned integer VALUE");
			if (cfg.nparams == VS_MAX_PARAMS)
				die("at most %d --param options", VS_MAX_PARAMS);
			*eq = '\0';
			cfg.param_name[cfg.nparams] = optarg;
			cfg.param_value[cfg.nparams++] = v;
			break;
		case O_LAT:
			cfg.latency = true;
			break;
		case O_FLAT:
			/* READ_US[,WRITE_US] */
			errno = 0;
			dv = strtod(optarg, &end);
			if (errno || end == optarg || !(dv > 0) || dv > 1e7)
				die("flash latency must be READ_US[,WRITE_US] in microseconds");
			cfg.flash_read_ns = (uint64_t)(dv * 1000);
			cfg.flash_write_ns = cfg.flash_read_ns;
			if (*end == ',') {
				char *w = end + 1;

				dv = strtod(w, &end);
				if (end == w || !(dv > 0) || dv > 1e7)
					die("flash latency must be READ_US[,WRITE_US] in microseconds");
				cfg.flash_write_ns = (uint64_t)(dv * 1000);
			}
			if (*end || !cfg.flash_read_ns || !cfg.flash_write_ns)
				die("flash latency must be READ_US[,WRITE_US] in microseconds");
			cfg.latency = true;
			break;
		case O_SEEK:
			errno = 0;
			dv = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(dv >= 0) ||
			    dv > 1e5)
				die("disk seek time must be milliseconds (e.g. 8 or 4.5)");
			cfg.hdd_seek_ns = (uint64_t)(dv * 1e6);
			cfg.latency = true;
			break;
		case O_TARGET:
			errno = 0;
			target = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(target > 0) ||
			    target > 100)
				die("target hit ratio must be a percentage (0..100]");
			break;
		case O_PHYS:
			if (vs_parse_uint(optarg, 512, 65536, &v) ||
			    (v & (v - 1)))
				die("flash physical block must be a power of two, 512..65536 bytes");
			cfg.flash_phys_block = (uint32_t)v;
			break;
		case O_MBPS:
			if (vs_parse_uint(optarg, 1, 1000000, &v))
				die("disk transfer rate must be 1..1000000 MB/s");
			cfg.hdd_bytes_per_s = v * 1000000;
			cfg.latency = true;
			break;
		case 'f':
			if (!strcmp(optarg, "auto"))
				po.fmt = VS_FMT_AUTO;
			else if (!strcmp(optarg, "blkparse"))
				po.fmt = VS_FMT_BLKPARSE;
			else if (!strcmp(optarg, "iolog"))
				po.fmt = VS_FMT_IOLOG;
			else
				die("format must be auto, blkparse or iolog");
			break;
		case 'e':
			if (strlen(optarg) != 1 || !strchr("QDC", optarg[0]))
				die("blkparse event must be Q, D or C");
			po.blk_event = optarg[0];
			break;
		case O_SKIP:
			po.skip_bad = true;
			break;
		case O_RATE:
			if (vs_parse_uint(optarg, 1, 1000000000, &po.rate_iops))
				die("rate must be 1..1000000000 IOPS");
			break;
		case O_NOOPT:
			opt = false;
			break;
		case O_REF:
			ref = true;
			break;
		case O_JSON:
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (cfg.dirty_high_pct >= 0 && cfg.dirty_low_pct >= 0 &&
	    cfg.dirty_low_pct > cfg.dirty_high_pct)
		die("low watermark (%d%%) above high watermark (%d%%)",
		    cfg.dirty_low_pct, cfg.dirty_high_pct);
	nsizes = parse_sizes(size_arg, sizes);
	path = argv[optind];

	if (vs_trace_load(path, &po, &t, err, sizeof(err)))
		die("%s", err);
	if (po.skip_bad && t.skipped_bad)
		fprintf(stderr, "%s: %s: skipped %" PRIu64 " malformed lines\n",
			prog, path, t.skipped_bad);
	if (vs_blocks_build(&t, cfg.block_size, &b))
		die("out of memory cutting the trace into blocks");
	for (i = 0; i < (int)t.n; i++) {
		switch (t.req[i].op) {
		case VS_READ:
			reads++;
			break;
		case VS_WRITE:
			writes++;
			break;
		case VS_DISCARD:
			trims++;
			break;
		default:
			flushes++;
		}
	}
	ws_bytes = (uint64_t)b.nids_rw * cfg.block_size;

	sm = calloc((size_t)nsizes, sizeof(*sm));
	runs = calloc((size_t)(nsizes * npols * nmodes), sizeof(*runs));
	if (!sm || !runs)
		die("out of memory");
	for (i = 0; i < nsizes; i++) {
		uint64_t bytes = sizes[i].pct > 0 ?
			(uint64_t)((double)ws_bytes * sizes[i].pct / 100.0) :
			sizes[i].bytes;

		sm[i].cache_blocks = bytes / cfg.block_size;
		sm[i].cache_bytes = sm[i].cache_blocks * cfg.block_size;
		if (!sm[i].cache_blocks)
			die("cache size %s is less than one %u-byte block (working set %s)",
			    sizes[i].text, cfg.block_size,
			    vs_fmt_size(ws_bytes, b1, sizeof(b1)));
		if (opt && (vs_opt(&b, sm[i].cache_blocks, 0, &sm[i].opt) ||
			    vs_opt(&b, sm[i].cache_blocks, 1,
				   &sm[i].opt_bypass) ||
			    vs_oracle_lfu(&b, sm[i].cache_blocks,
					  &sm[i].oracle)))
			die("out of memory computing OPT");
		for (j = 0; ref && j < VS_REF_NR; j++)
			if (vs_refsim(&b, sm[i].cache_blocks,
				      (enum vs_ref_policy)j, &sm[i].ref[j]))
				die("out of memory in the reference model");
		for (j = 0; j < nmodes; j++) {
			for (k = 0; k < npols; k++) {
				struct run *r = &runs[nruns++];
				struct vs_cfg rc = cfg;

				r->cache_bytes = sm[i].cache_bytes;
				r->size_idx = i;
				r->pol = (enum vs_policy)pols[k];
				r->mode = (enum vs_mode)modes[j];
				rc.cache_bytes = r->cache_bytes;
				rc.policy = r->pol;
				rc.mode = r->mode;
				if (vs_replay(&t, &rc, &r->r, err,
					      sizeof(err)))
					die("%s (cache %s, %s, %s)", err,
					    vs_fmt_size(r->cache_bytes, b1,
							sizeof(b1)),
					    vs_policy_names[r->pol],
					    vs_mode_names[r->mode]);
			}
		}
	}

	if (json) {
		printf("{\"trace\": {\"path\": ");
		json_string(path);
		printf(", \"requests\": %zu, \"reads\": %" PRIu64
		       ", \"writes\": %" PRIu64 ", \"discards\": %" PRIu64
		       ", \"flushes\": %" PRIu64 ", \"devices\": %u"
		       ", \"block_size_bytes\": %u, \"block_accesses\": %zu"
		       ", \"working_set_blocks\": %u, \"working_set_bytes\": %"
		       PRIu64 ", \"duration_ns\": %" PRIu64
		       ", \"skipped_lines\": %" PRIu64
		       ", \"time_regressions\": %" PRIu64 "},\n",
		       t.n, reads, writes, trims, flushes, t.ndevs,
		       cfg.block_size, b.n, b.nids_rw, ws_bytes,
		       t.req[t.n - 1].t_ns, t.skipped_bad, t.time_regressions);
		printf(" \"engine\": ");
		json_string(vs_replay_backend());
		printf(",\n \"sizes\": [");
		for (i = 0; i < nsizes; i++) {
			printf("%s\n  {\"spec\": ", i ? "," : "");
			json_string(sizes[i].text);
			printf(", \"cache_bytes\": %" PRIu64
			       ", \"cache_blocks\": %" PRIu64,
			       sm[i].cache_bytes, sm[i].cache_blocks);
			if (opt) {
				printf(", ");
				json_hits("opt", &sm[i].opt, true);
				json_hits("opt_bypass", &sm[i].opt_bypass,
					  false);
				printf(", ");
				json_hits("oracle_lfu", &sm[i].oracle, false);
			}
			for (j = 0; ref && j < VS_REF_NR; j++) {
				printf(", ");
				json_hits(vs_ref_names[j], &sm[i].ref[j],
					  false);
			}
			printf("}");
		}
		printf("],\n \"runs\": [");
		for (i = 0; i < nruns; i++) {
			const struct vs_result *r = &runs[i].r;

			printf("%s\n  {\"cache_bytes\": %" PRIu64
			       ", \"policy\": \"%s\", \"mode\": \"%s\"",
			       i ? "," : "", runs[i].cache_bytes,
			       vs_policy_names[runs[i].pol],
			       vs_mode_names[runs[i].mode]);
#define F(x) printf(", \"" #x "\": %" PRIu64, r->x)
			F(cache_blocks); F(host_ios); F(reads); F(writes);
			F(discards); F(flushes); F(read_blocks);
			F(read_hit_blocks); F(write_blocks);
			F(write_hit_blocks); F(bypassed_blocks);
			F(bypass_mode); F(bypass_seq); F(bypass_pid);
			F(bypass_admission); F(bypass_nospace); F(bypass_busy);
			F(flash_bytes_written); F(flash_meta_bytes_written);
			F(flash_meta_writes); F(flash_flushes);
			F(flash_rmw_writes); F(flash_meta_rmw_writes);
			F(flash_bytes_read); F(backing_ios);
			F(backing_read_ios); F(backing_write_ios);
			F(backing_bytes_read); F(backing_bytes_written);
			F(backing_flushes); F(cleaned_blocks);
			F(cleaned_unknown); F(evictions); F(dirty_overwrites); F(oop_writes); F(not_admitted); F(clean_watermark); F(clean_age);
			F(clean_idle); F(clean_demand); F(dirty_age_max_ns);
			F(dirty_age_sum_ns); F(dirty_age_p99_ns);
			F(dirty_at_end); F(dirty_oldest_at_end_ns);
			F(shadow_dirty_at_end); F(overlapping_writes);
			F(meta_millibytes_per_block);
			F(mem_bytes);
			F(virtual_ns); F(read_lat_avg_ns); F(read_lat_p99_ns);
			F(read_lat_max_ns); F(write_lat_avg_ns);
			F(write_lat_p99_ns); F(write_lat_max_ns);
#undef F
			printf("}");
		}
		printf("]}\n");
	} else {
		printf("trace %s: %zu requests (%" PRIu64 " reads, %" PRIu64
		       " writes, %" PRIu64 " discards, %" PRIu64
		       " flushes) over %s\n",
		       path, t.n, reads, writes, trims, flushes,
		       vs_fmt_ns(t.req[t.n - 1].t_ns, b1, sizeof(b1)));
		printf("working set %s (%u blocks of %s), engine: %s\n",
		       vs_fmt_size(ws_bytes, b2, sizeof(b2)), b.nids_rw,
		       vs_fmt_size(cfg.block_size, b3, sizeof(b3)),
		       vs_replay_backend());
		printf("\n%-7s %-9s %-4s %6s %6s %6s %6s %6s %6s %6s %7s %8s %8s %22s %7s\n",
		       "cache", "policy", "mode", "hit%", "read%", "write%",
		       "OPT%", "OPTb%", "ORCL%", "byp%", "flashW", "flashW/IO",
		       "bkIO/IO",
		       "dirty age max/avg/p99", "age_wb");
		if (cfg.latency)
			printf("%-7s %-9s %-4s %24s %24s\n", "", "", "",
			       "read latency avg/p99", "write latency avg/p99");
		for (i = 0; i < nruns; i++) {
			const struct vs_result *r = &runs[i].r;
			const struct size_models *m = &sm[runs[i].size_idx];
			char age[48];
			char ob[16] = "-", obb[16] = "-", orc[16] = "-", fw[32];

			if (opt) {
				snprintf(ob, sizeof(ob), "%6.2f",
					 vs_hit_pct(m->opt.read_hits +
						    m->opt.write_hits,
						    m->opt.read_acc +
						    m->opt.write_acc));
				snprintf(obb, sizeof(obb), "%6.2f",
					 vs_hit_pct(m->opt_bypass.read_hits +
						    m->opt_bypass.write_hits,
						    m->opt_bypass.read_acc +
						    m->opt_bypass.write_acc));
				snprintf(orc, sizeof(orc), "%6.2f",
					 vs_hit_pct(m->oracle.read_hits +
						    m->oracle.write_hits,
						    m->oracle.read_acc +
						    m->oracle.write_acc));
			}
			if (r->cleaned_blocks)
				snprintf(age, sizeof(age), "%s/%s/%s",
					 vs_fmt_ns(r->dirty_age_max_ns, b1,
						   sizeof(b1)),
					 vs_fmt_ns(r->dirty_age_sum_ns /
						   r->cleaned_blocks, b2,
						   sizeof(b2)),
					 vs_fmt_ns(r->dirty_age_p99_ns, b3,
						   sizeof(b3)));
			else
				snprintf(age, sizeof(age), "-");
			printf("%-7s %-9s %-4s %6.2f %6.2f %6.2f %6s %6s %6s %6.2f %7s %8.3f %8.3f %22s %7" PRIu64 "\n",
			       vs_fmt_size(runs[i].cache_bytes, b4,
					   sizeof(b4)),
			       vs_policy_names[runs[i].pol],
			       vs_mode_names[runs[i].mode],
			       vs_hit_pct(r->read_hit_blocks +
					  r->write_hit_blocks,
					  r->read_blocks + r->write_blocks),
			       vs_hit_pct(r->read_hit_blocks, r->read_blocks),
			       vs_hit_pct(r->write_hit_blocks,
					  r->write_blocks),
			       ob, obb, orc,
			       vs_hit_pct(r->bypassed_blocks,
					  r->read_blocks + r->write_blocks),
			       vs_fmt_size(r->flash_bytes_written, fw,
					   sizeof(fw)),
			       r->host_ios ? (double)r->flash_bytes_written /
					     cfg.block_size /
					     (double)r->host_ios : 0.0,
			       r->host_ios ? (double)r->backing_ios /
					     (double)r->host_ios : 0.0,
			       age, r->clean_age);
			if (cfg.latency) {
				char rl[48], wl[48];

				snprintf(rl, sizeof(rl), "%.3f/%.3f ms",
					 (double)r->read_lat_avg_ns / 1e6,
					 (double)r->read_lat_p99_ns / 1e6);
				snprintf(wl, sizeof(wl), "%.3f/%.3f ms",
					 (double)r->write_lat_avg_ns / 1e6,
					 (double)r->write_lat_p99_ns / 1e6);
				printf("%-7s %-9s %-4s %24s %24s\n", "", "", "",
				       rl, wl);
			}
		}
		if (target > 0) {
			printf("\nsmallest cache reaching %.2f%% hits:\n", target);
			for (j = 0; j < nmodes; j++) {
				for (k = 0; k < npols; k++) {
					const struct run *best = NULL;

					for (i = 0; i < nruns; i++) {
						const struct vs_result *r = &runs[i].r;

						if ((int)runs[i].pol != pols[k] ||
						    (int)runs[i].mode != modes[j] ||
						    vs_hit_pct(r->read_hit_blocks +
							       r->write_hit_blocks,
							       r->read_blocks +
							       r->write_blocks) < target)
							continue;
						if (!best ||
						    runs[i].cache_bytes < best->cache_bytes)
							best = &runs[i];
					}
					printf("  %-9s %-4s %s\n",
					       vs_policy_names[pols[k]],
					       vs_mode_names[modes[j]],
					       best ? vs_fmt_size(best->cache_bytes,
								  b1, sizeof(b1)) :
					       "none of the sizes given");
				}
			}
			/* the bound: OPT that may also decline to admit */
			k = -1;
			for (i = 0; opt && i < nsizes; i++)
				if (vs_hit_pct(sm[i].opt_bypass.read_hits +
					       sm[i].opt_bypass.write_hits,
					       sm[i].opt_bypass.read_acc +
					       sm[i].opt_bypass.write_acc) >=
				    target && (k < 0 || sm[i].cache_bytes <
						       sm[k].cache_bytes))
					k = i;
			if (opt)
				printf("  %-14s %s (no policy reaches it with a smaller size given)\n",
				       "OPT", k >= 0 ?
				       vs_fmt_size(sm[k].cache_bytes, b1,
						   sizeof(b1)) :
				       "none of the sizes given");
		}
		if (ref) {
			printf("\nreference models (hit%%): fifo, lru (every miss admitted), lru_2hit, lru_tinylfu, lfu (exact, whole history)\n");
			for (i = 0; i < nsizes; i++) {
				printf("%-7s", vs_fmt_size(sm[i].cache_bytes,
							   b1, sizeof(b1)));
				for (j = 0; j < VS_REF_NR; j++)
					printf(" %s %6.2f", vs_ref_names[j] + 4,
					       vs_hit_pct(sm[i].ref[j].read_hits +
							  sm[i].ref[j].write_hits,
							  sm[i].ref[j].read_acc +
							  sm[i].ref[j].write_acc));
				printf("\n");
			}
		}
		printf("\nhit%%: cache-block hits / block accesses (reads and writes); OPT%%: Belady, every miss admitted;\n"
		       "OPTb%%: Belady with optional admission; byp%%: block accesses sent around the cache;\n"
		       "flashW: bytes written to flash (data and metadata); flashW/IO: blocks per host I/O;\n"
		       "bkIO/IO: backing-device I/Os per host I/O; age_wb: blocks cleaned by the flush period\n");
	}
	free(sm);
	free(runs);
	vs_blocks_free(&b);
	vs_trace_free(&t);
	return 0;
}
