// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target for the metadata loader (vc_cache_load) and what a loaded
 * cache does with the state it trusted.
 *
 * Input: one flag byte, then the first sectors of a cache device
 * (superblock, backing device table, block records), padded with zeroes
 * to FUZZ_CACHE_SECTORS.  When bit 0 of the flag byte is set, the target
 * recomputes every CRC and sector index first, so the fuzzer gets past
 * the checksums and exercises the semantic checks (bounds, duplicates,
 * geometry, device table); bit 1 marks the superblock clean; bits 2-3
 * choose the size of the backing device that is then attached.
 *
 * Whatever the input, vc_cache_load() must either refuse it with
 * -EUCLEAN / -ENODATA / -EOPNOTSUPP / -EINVAL (and a reason) or return a
 * cache that survives attach, reads, writes, a flush on demand and a clean
 * shutdown - under ASan and UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vc_engine.h"
#include "vc_format.h"
#include "vc_posix.h"
#include "simdev.h"
#include "fuzz_load.h"

static struct simdev *cdev, *bdev[3];
static const u64 bdev_sectors[3] = {
	FUZZ_BACKING_SECTORS, 64, FUZZ_BACKING_SECTORS / 2,
};
static u64 fake_now = 1000000000ULL;
static u64 jumped;		/* virtual ns skipped by waits this input */
#define FUZZ_HANG_NS	(3600ULL * 1000000000ULL)

static u64 fuzz_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static bool fuzz_pump(void *ctx)
{
	u64 next;

	(void)ctx;
	if (vc_posix_run_work() && jumped < FUZZ_HANG_NS)
		return true;
	next = vc_posix_next_work_ns();
	if (next == ~0ULL || jumped >= FUZZ_HANG_NS)
		return false;	/* the engine's wait fails with -EDEADLK */
	jumped += next > fake_now ? next - fake_now : 1000000;
	fake_now = next > fake_now ? next : fake_now + 1000000;
	return true;
}

/* An engine wait that never ends is a bug: report it as a crash. */
static void check_hang(int ret, const char *what)
{
	if (ret == -EDEADLK) {
		fprintf(stderr, "fuzz: %s hung (no progress for an hour of virtual time)\n",
			what);
		abort();
	}
}

static void setup(void)
{
	struct simdev_config sc = { 0 };
	int i;

	if (cdev)
		return;
	vc_posix_set_log_level(0);
	vc_posix_set_clock(fuzz_clock, NULL);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(fuzz_pump, NULL);
	sc.name = "fuzzcache";
	sc.nr_sectors = FUZZ_CACHE_SECTORS;
	cdev = simdev_new(&sc);
	if (!cdev)
		abort();
	for (i = 0; i < 3; i++) {
		sc.name = "fuzzhdd";
		sc.nr_sectors = bdev_sectors[i];
		bdev[i] = simdev_new(&sc);
		if (!bdev[i])
			abort();
	}
}

static void put_crc(u8 *sec, size_t crc_off, u32 seed)
{
	u32 crc;

	memset(sec + crc_off, 0, 4);
	crc = vc_crc32c(seed, sec, 512);
	memcpy(sec + crc_off, &crc, 4);
}

void fuzz_fix_crcs(u8 *img, u64 nsect, bool clean)
{
	struct vc_sb *sb = (struct vc_sb *)img;
	u64 s, md_start, md_end;
	u32 nonce = vc_le32_to_cpu(sb->nonce);

	if (clean)
		sb->clean = vc_cpu_to_le32(VC_SB_CLEAN);
	put_crc(img, __builtin_offsetof(struct vc_sb, crc), ~0u);
	/* the second copy, whatever it holds: its fields get checked */
	put_crc(img + VC_SB2_SECTOR * 512, __builtin_offsetof(struct vc_sb, crc),
		~0u);
	for (s = VC_DEVTAB_SECTOR; s < VC_DEVTAB_SECTOR + VC_DEVTAB_SECTORS;
	     s++) {
		struct vc_dev_sector *ds = (void *)(img + s * 512);

		ds->index = vc_cpu_to_le32((u32)s);
		put_crc((u8 *)ds, __builtin_offsetof(struct vc_dev_sector, crc),
			nonce);
	}
	md_start = vc_le64_to_cpu(sb->md_start);
	md_end = md_start + vc_le64_to_cpu(sb->md_sectors);
	if (md_start > nsect || md_end > nsect || md_end < md_start)
		return;
	for (s = md_start; s < md_end; s++) {
		struct vc_rec_sector *rs = (void *)(img + s * 512);

		rs->index = vc_cpu_to_le32((u32)s);
		put_crc((u8 *)rs, __builtin_offsetof(struct vc_rec_sector, crc),
			nonce);
	}
}

struct done {
	int called;
	int err;
};

static void end_io(struct vc_host_io *hio, int err)
{
	struct done *d = hio->private;

	d->called++;
	d->err = err;
}

static void host_io(struct vc_cache *c, u32 id, int op, u64 sector, u32 len,
		    u8 *data)
{
	struct vc_host_io hio;
	struct done d = { 0 };
	int guard = 0;

	memset(&hio, 0, sizeof(hio));
	hio.dev_id = id;
	hio.op = (u8)op;
	hio.sector = sector;
	hio.len = len;
	hio.buf = len ? vc_buf_wrap(data, len) : NULL;
	hio.end_io = end_io;
	hio.private = &d;
	vc_cache_submit(c, &hio);
	jumped = 0;
	while (!d.called && guard++ < 100000)
		if (!fuzz_pump(NULL))
			break;
	if (d.called != 1) {
		fprintf(stderr, "fuzz: host I/O completed %d times\n",
			d.called);
		abort();
	}
	vc_buf_free(hio.buf);
}

int fuzz_one(const u8 *data, size_t size)
{
	static u8 img[FUZZ_IMG_BYTES];
	static u8 buf[64 * 1024];
	char err[256];
	struct vc_cache *c = NULL;
	struct simdev *bd;
	u64 bsect;
	u8 flags;
	u32 id;
	int ret, i;

	setup();
	if (!size)
		return 0;
	flags = data[0];
	data++;
	size--;
	memset(img, 0, sizeof(img));
	memcpy(img, data, size < sizeof(img) ? size : sizeof(img));
	if (flags & 1)
		fuzz_fix_crcs(img, FUZZ_IMG_BYTES / 512, flags & 2);
	/* the whole device: image at the start, zeroes after */
	jumped = 0;
	simdev_poke(cdev, 0, img, sizeof(img));
	memset(buf, 0, sizeof(buf));
	for (i = FUZZ_IMG_BYTES / 512; i < FUZZ_CACHE_SECTORS; i += 128)
		simdev_poke(cdev, (u64)i, buf,
			    (u32)vc_min_u64(sizeof(buf),
					    (FUZZ_CACHE_SECTORS - (u64)i) * 512));
	err[0] = 0;
	ret = vc_cache_load(simdev_dev(cdev),
			    (flags & 16) ? VC_LOAD_SALVAGE : 0, &c, err,
			    sizeof(err));
	if (ret) {
		if (ret != -EUCLEAN && ret != -ENODATA && ret != -EOPNOTSUPP &&
		    ret != -EINVAL) {
			fprintf(stderr, "fuzz: load returned %d (%s)\n", ret,
				err);
			abort();
		}
		if (!err[0]) {
			fprintf(stderr, "fuzz: load refused (%d) without a reason\n",
				ret);
			abort();
		}
		return 0;
	}
	/* A loaded cache must behave. */
	/* 1: smaller than most records point to */
	bd = bdev[((flags >> 2) & 3) % 3];
	bsect = simdev_dev(bd)->nr_sectors;
	/* stale contents from the last input do not matter: no data check */
	ret = vc_cache_attach(c, simdev_dev(bd), FUZZ_UUID, &id);
	if (!ret) {
		for (i = 0; i < 4; i++) {
			u64 sec = ((u64)i * 977) % (bsect - 24);

			host_io(c, id, VC_OP_READ, sec, 8192, buf);
			host_io(c, id, VC_OP_WRITE, sec + 8, 4096, buf);
		}
		/*
		 * Everything: dirty blocks of devices of the table that are
		 * not attached are skipped (-ENODEV), never waited for.
		 */
		jumped = 0;
		check_hang(vc_cache_flush(c, VC_DEV_ID_ALL, NULL, NULL),
			   "flush");
	}
	jumped = 0;
	check_hang(vc_cache_shutdown(c, 0), "shutdown");
	return 0;
}
