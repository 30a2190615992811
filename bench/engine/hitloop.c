// SPDX-License-Identifier: GPL-2.0
/*
 * hitloop - CPU cost of one 4 KiB read hit in the vcache engine.
 *
 * Creates a cache (no data payload, inline simulated devices, virtual
 * clock, manual work: nothing else runs), fills it with reads of a working
 * set smaller than the cache, then calls hit_loop(), which submits N read
 * hits spread over that working set.  Run it under
 *
 *   valgrind --tool=callgrind --toggle-collect=hit_loop hitloop ...
 *
 * and divide the instructions by N.  Without valgrind it checks that every
 * request of the loop was a hit and prints the metadata RAM per block.
 *
 * usage: hitloop [--policy fifo|lru|s3fifo|tinylfu] [--blocks N] [--hits N]
 *        hitloop --mem    (metadata bytes per block, 16K..1G blocks)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_engine.h"
#include "vc_posix.h"

struct nulldev {
	struct vc_dev dev;
	uint64_t ios;
};

static void null_submit(struct vc_dev *dev, struct vc_dev_io *io)
{
	struct nulldev *d = dev->priv;

	d->ios++;
	io->end_io(io, 0);
}

static const struct vc_dev_ops null_ops = { .submit = null_submit };

static uint64_t vclock;

static u64 clock_fn(void *ctx)
{
	(void)ctx;
	return vclock;
}

static int io_err;
static unsigned int done;

static void end_io(struct vc_host_io *hio, int err)
{
	(void)hio;
	if (err)
		io_err = err;
	done++;
}

static void read_block(struct vc_cache *c, u32 id, uint64_t blk)
{
	struct vc_host_io hio;

	memset(&hio, 0, sizeof(hio));
	hio.dev_id = id;
	hio.op = VC_OP_READ;
	hio.sector = blk * 8;
	hio.len = 4096;
	hio.pid = 1;
	hio.tgid = 1;
	hio.stream = 1;
	hio.end_io = end_io;
	vc_cache_submit(c, &hio);
}

/* The measured function: n read hits over nblk resident blocks. */
void hit_loop(struct vc_cache *c, u32 id, uint64_t nblk, uint64_t n);
void __attribute__((noinline)) hit_loop(struct vc_cache *c, u32 id,
					 uint64_t nblk, uint64_t n)
{
	uint64_t i, blk = 0;

	for (i = 0; i < n; i++) {
		read_block(c, id, blk);
		blk += 7919;		/* a prime stride: no locality */
		if (blk >= nblk)
			blk -= nblk;
	}
}

static void die(const char *msg, int err)
{
	fprintf(stderr, "hitloop: %s (error %d)\n", msg, err);
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "blocks", required_argument, NULL, 'b' },
		{ "hits", required_argument, NULL, 'n' },
		{ "mem", no_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct nulldev flash = { 0 }, hdd = { 0 };
	struct vc_cache_config cfg;
	struct vc_stats before, after;
	struct vc_cache *c;
	uint64_t nblocks = 65536, hits = 100000, blk, ws;
	u32 id;
	int e, ch;

	vc_cache_config_default(&cfg);
	while ((ch = getopt_long(argc, argv, "p:b:n:m", lo, NULL)) != -1) {
		switch (ch) {
		case 'm':
			/* metadata RAM per block for a few cache sizes */
			for (blk = 1ull << 14; blk <= 1ull << 30; blk <<= 4)
				printf("mem blocks %" PRIu64 " millibytes_per_block %" PRIu64 "\n",
				       blk,
				       (uint64_t)vc_cache_mem_bytes_per_block(blk));
			return 0;
		case 'p':
			for (cfg.policy = 0; cfg.policy < VC_NR_POLICIES;
			     cfg.policy++)
				if (!strcmp(optarg, vc_policy_name(cfg.policy)))
					break;
			if (cfg.policy == VC_NR_POLICIES)
				die("policy must be fifo, lru, s3fifo or tinylfu", 0);
			break;
		case 'b':
			nblocks = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			hits = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: hitloop [--policy fifo|lru|s3fifo|tinylfu] [--blocks N] [--hits N] | --mem\n");
			return 2;
		}
	}
	if (nblocks < 16 || !hits)
		die("need --blocks >= 16 and --hits > 0", 0);

	vc_posix_set_log_level(1);
	vc_posix_set_clock(clock_fn, NULL);
	vc_posix_set_manual_work(true);
	vclock = 1000000000ull;

	flash.dev.ops = &null_ops;
	flash.dev.priv = &flash;
	flash.dev.nr_sectors = nblocks * 8 * 2 + (64ull << 11);
	snprintf(flash.dev.name, sizeof(flash.dev.name), "null-flash");
	hdd.dev.ops = &null_ops;
	hdd.dev.priv = &hdd;
	hdd.dev.nr_sectors = nblocks * 8 * 4;
	snprintf(hdd.dev.name, sizeof(hdd.dev.name), "null-hdd");

	cfg.block_size = 4096;
	cfg.nr_blocks = nblocks;
	cfg.flags = VC_CFG_NODATA;
	cfg.params.v[VC_P_ADMISSION] = VC_ADMIT_ALL;
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	e = vc_cache_create(&flash.dev, &cfg, &c);
	if (e)
		die("cache create failed", e);
	e = vc_cache_attach(c, &hdd.dev, "hitloop-hdd", &id);
	if (e)
		die("attach failed", e);

	/* warm: 3/4 of the cache, read twice (admission-proof) */
	ws = nblocks * 3 / 4;
	for (blk = 0; blk < ws; blk++)
		read_block(c, id, blk);
	for (blk = 0; blk < ws; blk++)
		read_block(c, id, blk);
	vc_posix_run_work();
	if (io_err)
		die("warm-up I/O failed", io_err);

	vc_cache_get_stats(c, &before);
	done = 0;
	hit_loop(c, id, ws, hits);
	vc_cache_get_stats(c, &after);
	if (io_err)
		die("I/O failed in the hit loop", io_err);
	if (done != hits || after.read_hits - before.read_hits != hits) {
		fprintf(stderr,
			"hitloop: %" PRIu64 " of %" PRIu64 " reads were hits (%u completed)\n",
			(uint64_t)(after.read_hits - before.read_hits), hits,
			done);
		return 1;
	}
	printf("hits %" PRIu64 " blocks %" PRIu64 " mem_millibytes_per_block %"
	       PRIu64 " mem_bytes %" PRIu64 "\n",
	       hits, nblocks, (uint64_t)after.mem_millibytes_per_block,
	       (uint64_t)after.mem_bytes);
	vc_cache_abandon(c);
	return 0;
}
