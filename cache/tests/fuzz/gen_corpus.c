// SPDX-License-Identifier: GPL-2.0
/*
 * Seed corpus for the metadata loader fuzz target, made by the real
 * engine: caches in several states (empty, dirty after a crash, dirty
 * after a clean shutdown, clean after flush, several block sizes and
 * modes, two backing devices), each dumped as a fuzz input (flag byte +
 * metadata prefix of the cache device).
 *
 *   gen-corpus OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_engine.h"
#include "vc_posix.h"
#include "simdev.h"
#include "fuzz_load.h"

static u64 now = 1000000000ULL;

static u64 clk(void *ctx)
{
	(void)ctx;
	return now;
}

static bool pump(void *ctx)
{
	u64 next;

	(void)ctx;
	if (vc_posix_run_work())
		return true;
	next = vc_posix_next_work_ns();
	if (next == ~0ULL)
		return false;
	now = next > now ? next : now + 1000000;
	return true;
}

static void end_io(struct vc_host_io *hio, int err)
{
	*(int *)hio->private = err ? err : 1;
}

static void io(struct vc_cache *c, u32 id, int op, u64 sector, u32 len)
{
	static u8 buf[65536];
	struct vc_host_io hio;
	int done = 0;

	memset(&hio, 0, sizeof(hio));
	memset(buf, (int)(sector & 0xff), sizeof(buf));
	hio.dev_id = id;
	hio.op = (u8)op;
	hio.sector = sector;
	hio.len = len;
	hio.buf = len ? vc_buf_wrap(buf, len) : NULL;
	hio.end_io = end_io;
	hio.private = &done;
	vc_cache_submit(c, &hio);
	while (!done && pump(NULL))
		;
	vc_buf_free(hio.buf);
}

static void dump(const char *dir, const char *name, struct simdev *cd)
{
	static u8 img[FUZZ_IMG_BYTES + 1];
	char path[4096];
	int fix;

	simdev_peek_durable(cd, 0, img + 1, FUZZ_IMG_BYTES);
	for (fix = 0; fix < 2; fix++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s%s", dir, name,
			 fix ? "-fixcrc" : "");
		img[0] = fix ? FUZZ_F_FIXCRC : 0;
		f = fopen(path, "wb");
		if (!f || fwrite(img, 1, sizeof(img), f) != sizeof(img)) {
			perror(path);
			exit(1);
		}
		fclose(f);
	}
}

enum end { END_CRASH, END_CLEAN, END_FLUSHED };

static void make(const char *dir, const char *name, u32 bs, u32 mode,
		 int ndev, int nwrites, enum end how)
{
	struct simdev_config sc = { 0 };
	struct simdev *cd, *bd[2];
	struct vc_cache_config cfg;
	struct vc_cache *c;
	u32 id[2];
	int i, d, ret;

	sc.nr_sectors = FUZZ_CACHE_SECTORS;
	sc.name = "cache";
	cd = simdev_new(&sc);
	sc.nr_sectors = FUZZ_BACKING_SECTORS;
	for (d = 0; d < ndev; d++)
		bd[d] = simdev_new(&sc);
	vc_cache_config_default(&cfg);
	cfg.block_size = bs;
	cfg.mode = mode;
	ret = vc_cache_create(simdev_dev(cd), &cfg, &c);
	if (ret) {
		fprintf(stderr, "gen-corpus: create %s: %d\n", name, ret);
		exit(1);
	}
	for (d = 0; d < ndev; d++) {
		ret = vc_cache_attach(c, simdev_dev(bd[d]),
				      d ? "fuzz-hdd1" : FUZZ_UUID, &id[d]);
		if (ret) {
			fprintf(stderr, "gen-corpus: attach: %d\n", ret);
			exit(1);
		}
	}
	for (i = 0; i < nwrites; i++) {
		d = i % ndev;
		io(c, id[d], VC_OP_WRITE, (u64)(i * 37 % 2000) * 8, 4096);
		if (i % 3 == 0)
			io(c, id[d], VC_OP_READ, (u64)(i * 53 % 2000) * 8 + 8000,
			   8192);
	}
	io(c, id[0], VC_OP_FLUSH, 0, 0);
	if (how == END_FLUSHED)
		vc_cache_flush(c, VC_DEV_ID_ALL, NULL, NULL);
	if (how == END_CRASH)
		vc_cache_abandon(c);
	else
		vc_cache_shutdown(c, 0);
	dump(dir, name, cd);
	simdev_free(cd);
	for (d = 0; d < ndev; d++)
		simdev_free(bd[d]);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen-corpus OUTDIR\n");
		return 2;
	}
	vc_posix_set_log_level(0);
	vc_posix_set_clock(clk, NULL);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(pump, NULL);
	make(argv[1], "empty-clean", 4096, VC_MODE_WB, 1, 0, END_CLEAN);
	make(argv[1], "empty-crash", 4096, VC_MODE_WB, 1, 0, END_CRASH);
	make(argv[1], "dirty-crash", 4096, VC_MODE_WB, 1, 200, END_CRASH);
	make(argv[1], "dirty-clean", 4096, VC_MODE_WB, 1, 200, END_CLEAN);
	make(argv[1], "flushed-clean", 4096, VC_MODE_WB, 1, 150, END_FLUSHED);
	make(argv[1], "two-dev-crash", 4096, VC_MODE_WB, 2, 300, END_CRASH);
	make(argv[1], "wt-clean", 4096, VC_MODE_WT, 1, 100, END_CLEAN);
	make(argv[1], "bs16k-crash", 16384, VC_MODE_WB, 1, 100, END_CRASH);
	make(argv[1], "bs64k-clean", 65536, VC_MODE_WB, 2, 60, END_CLEAN);
	printf("gen-corpus: 18 inputs in %s\n", argv[1]);
	return 0;
}
