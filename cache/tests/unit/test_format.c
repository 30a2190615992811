// SPDX-License-Identifier: GPL-2.0
/*
 * Persistence: clean shutdown and crash recovery, the on-flash format,
 * and the loader refusing corrupt or foreign metadata.
 */
#include "tutil.h"

static void test_crc32c(void **st)
{
	(void)st;
	assert_int_equal(vc_crc32c(~0u, "123456789", 9) ^ ~0u, 0xe3069283u);
	assert_int_equal(sizeof(struct vc_sb), 512);
	assert_int_equal(sizeof(struct vc_rec_sector), 512);
	assert_int_equal(sizeof(struct vc_dev_sector), 512);
}

static struct vc_cache_config quiet_cfg(void)
{
	struct vc_cache_config cfg;

	vc_cache_config_default(&cfg);
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	cfg.params.v[VC_P_IDLE_MS] = 0;
	cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	return cfg;
}

static void fill_some(struct tenv *t)
{
	u32 i;

	/* 40 dirty blocks, 30 clean ones (read misses) */
	for (i = 0; i < 40; i++)
		assert_int_equal(t_write_pat(t, i * 5, 1, i + 1, 0), 0);
	for (i = 0; i < 30; i++)
		assert_int_equal(t_check_pat(t, 1000 + i, 1, 0), 1);
	/* acknowledged writes are durable after a FLUSH (group commit) */
	assert_int_equal(t_io(t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
}

static void test_clean_shutdown(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	cfg.policy = VC_POLICY_FIFO;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 77;
	t_setup(&t, 256, 4096, true, &cfg);
	fill_some(&t);
	assert_int_equal(vc_cache_shutdown(t.c, 0), 0);
	t.c = NULL;
	vc_memdev_power_cut(t.cm);	/* shutdown made everything stable */
	vc_memdev_power_cut(t.bm);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 70);
	assert_int_equal(s.dirty_blocks, 40);
	assert_int_equal(s.policy, VC_POLICY_FIFO);
	assert_int_equal(vc_cache_get_param(t.c, VC_P_DIRTY_HIGH_PCT), 77);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_check_pat(&t, i * 5, 1, i + 1), 0);
	s = t_stats(&t);
	assert_int_equal(s.read_hits, 40);
	t_teardown(&t);
}

static void test_crash_recovers_exactly_dirty(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct tenv t;
	struct vc_stats s;
	u32 i;

	(void)st;
	t_setup(&t, 256, 4096, true, &cfg);
	fill_some(&t);
	/* clean 10 of them with a per-range flush: write then flush */
	for (i = 0; i < 10; i++)
		assert_int_equal(t_write_pat(&t, 2000 + i, 1, 9, 0), 0);
	assert_int_equal(vc_cache_flush(t.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	for (i = 0; i < 5; i++)	/* and 5 new dirty ones, flushed */
		assert_int_equal(t_write_pat(&t, 3000 + i, 1, 3, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	/*
	 * 2 more, never flushed: their records wait for the next commit and
	 * the power cut drops their data too; they do not come back (the
	 * backing device's older data is what a reader may then see).
	 */
	for (i = 0; i < 2; i++)
		assert_int_equal(t_write_pat(&t, 4000 + i, 1, 4, 0), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 7);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	assert_int_equal(s.valid_blocks, 5);	/* clean records not trusted */
	for (i = 0; i < 5; i++)
		assert_int_equal(t_check_pat(&t, 3000 + i, 1, 3), 0);
	for (i = 0; i < 40; i++)	/* written back before the crash */
		assert_int_equal(t_check_pat(&t, i * 5, 1, i + 1), 0);
	for (i = 0; i < 10; i++)
		assert_int_equal(t_check_pat(&t, 2000 + i, 1, 9), 0);
	/* a second crash right after loading changes nothing */
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 5);
	t_teardown(&t);
}

static void test_dirty_kept_for_absent_device(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct tenv t;
	struct vc_stats s;
	char err[128];

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	assert_int_equal(t_write_pat(&t, 1, 3, 5, 0), 0);
	assert_int_equal(vc_cache_shutdown(t.c, 0), 0);
	assert_int_equal(vc_cache_load(vc_memdev_dev(t.cm), 0, &t.c, err,
				       sizeof(err)), 0);
	t_run();
	s = t_stats(&t);
	assert_int_equal(s.dirty_blocks, 3);	/* waiting for hdd0 */
	{
		/* the same identity, but too small for what we cache */
		struct vc_memdev *small = vc_memdev_create("small", 2 * T_BSEC,
							   false);
		u32 sid;

		assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(small),
						 "hdd0", &sid), -EINVAL);
		vc_memdev_destroy(small);
	}
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0", &t.dev), 0);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0", &t.dev),
			 -EEXIST);
	assert_int_equal(vc_cache_flush(t.c, t.dev, NULL, NULL), 0);
	assert_true(t_backing_has(&t, 1, 3, 5));
	t_teardown(&t);
}

static void test_block_sizes(void **st)
{
	u32 bs;

	(void)st;
	for (bs = 4096; bs <= 65536; bs *= 2) {
		struct vc_cache_config cfg = quiet_cfg();
		struct tenv t;
		struct vc_stats s;
		u8 *buf = malloc(bs), *rd = malloc(bs);
		u32 i;

		cfg.block_size = bs;
		t_setup(&t, 64, 256, true, &cfg);
		for (i = 0; i < bs; i++)
			buf[i] = (u8)(i ^ bs);
		assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 3 * (bs / 512), bs, buf), 0);
		/* a partial write inside a dirty block */
		assert_int_equal(t_io(&t, VC_OP_WRITE, 0, 3 * (bs / 512) + 1, 512,
				      buf + 4096 % bs), 0);
		memcpy(buf + 512, buf + 4096 % bs, 512);
		assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
		s = t_stats(&t);
		assert_int_equal(s.block_size, bs);
		assert_int_equal(s.dirty_blocks, 1);
		t_crash(&t);
		assert_int_equal(t_reload(&t), 0);
		assert_int_equal(t_io(&t, VC_OP_READ, 0, 3 * (bs / 512), bs, rd), 0);
		assert_memory_equal(buf, rd, bs);
		t_teardown(&t);
		free(buf);
		free(rd);
	}
}

static void test_bad_config(void **st)
{
	struct vc_memdev *m = vc_memdev_create("f", 4096, false);
	struct vc_cache_config cfg;
	struct vc_cache *c;

	(void)st;
	t_init();
	vc_cache_config_default(&cfg);
	cfg.block_size = 8192 + 512;
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), -EINVAL);
	cfg.block_size = 128 * 1024;
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), -EINVAL);
	vc_cache_config_default(&cfg);
	cfg.nr_blocks = 1000;	/* 4096 sectors hold fewer */
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), -ENOSPC);
	vc_cache_config_default(&cfg);
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 90;	/* above high */
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), -EINVAL);
	vc_cache_config_default(&cfg);
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), 0);
	assert_int_equal(c->nr_blocks, vc_cache_blocks_for(4096, 4096));
	assert_true(c->data_start + c->nr_blocks * 8 <= 4096);
	assert_int_equal(vc_cache_set_param(c, VC_P_WB_MAX_INFLIGHT, 0), -EINVAL);
	assert_int_equal(vc_cache_set_param(c, VC_P_DIRTY_HIGH_PCT, 101), -EINVAL);
	assert_int_equal(vc_cache_set_param(c, VC_P_DIRTY_HIGH_PCT, 30), -EINVAL);
	assert_int_equal(vc_cache_set_param(c, VC_P_IDLE_MS, 10), 0);
	assert_int_equal(vc_param_by_name("idle_ms"), VC_P_IDLE_MS);
	assert_int_equal(vc_param_by_name("idle"), -ENOENT);
	assert_int_equal(vc_cache_shutdown(c, 0), 0);
	vc_memdev_destroy(m);
}

/* ---- corruption ---- */
static struct tenv ct;

static void corrupt_setup(void)
{
	struct vc_cache_config cfg = quiet_cfg();

	t_setup(&ct, 256, 4096, false, &cfg);
	fill_some(&ct);
	t_crash(&ct);
}

static int load_err(char *err, size_t n)
{
	struct vc_cache *c = NULL;
	int e = vc_cache_load(vc_memdev_dev(ct.cm), 0, &c, err, n);

	if (!e)
		vc_cache_abandon(c);
	return e;
}

static void rd_sector(u64 s, void *buf)
{
	vc_memdev_peek(ct.cm, s, buf, 512);
}

static void wr_sector(u64 s, const void *buf)
{
	vc_memdev_poke(ct.cm, s, buf, 512);
}

/* Both superblock copies. */
static void wr_sb(const struct vc_sb *sb)
{
	wr_sector(VC_SB_SECTOR, sb);
	wr_sector(VC_SB2_SECTOR, sb);
}

static u32 nonce(void)
{
	struct vc_sb sb;

	rd_sector(0, &sb);
	return sb.nonce;
}

static void fix_rec_crc(struct vc_rec_sector *rs)
{
	rs->crc = 0;
	rs->crc = vc_crc32c(nonce(), rs, sizeof(*rs));
}

static void fix_sb_crc(struct vc_sb *sb)
{
	sb->crc = 0;
	sb->crc = vc_crc32c(~0u, sb, sizeof(*sb));
}

static void test_refuse_corrupt(void **st)
{
	struct vc_sb sb, orig, orig2;
	struct vc_rec_sector rs, rs0;
	char err[160];
	u32 i, j;
	u64 mds;

	(void)st;
	corrupt_setup();
	assert_int_equal(load_err(err, sizeof(err)), 0);
	rd_sector(VC_SB_SECTOR, &orig);
	rd_sector(VC_SB2_SECTOR, &orig2);

	/* not a vcache device */
	memset(&sb, 0, sizeof(sb));
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "magic"));
	/* future version */
	sb = orig;
	sb.version = 99;
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EOPNOTSUPP);
	/* bit flip */
	sb = orig;
	sb.nr_blocks ^= 4;
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "checksum"));
	/* consistent checksum, impossible geometry */
	sb = orig;
	sb.nr_blocks = 1ULL << 40;
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	sb = orig;
	sb.block_size = 3000;
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	sb = orig;
	sb.set_shift = 3;	/* an unknown set hash */
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "set hash"));
	sb = orig;
	sb.params[VC_P_WB_MAX_INFLIGHT] = 0;
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	wr_sector(VC_SB_SECTOR, &orig);
	wr_sector(VC_SB2_SECTOR, &orig2);
	assert_int_equal(load_err(err, sizeof(err)), 0);

	/* record sector: flipped bit */
	for (mds = VC_MD_START; mds < VC_MD_START + 5; mds++) {
		rd_sector(mds, &rs0);
		for (i = 0; i < VC_RECS_PER_SECTOR; i++)
			if (rs0.rec[i] & VC_REC_DIRTY)
				break;
		if (i < VC_RECS_PER_SECTOR)
			break;
	}
	rs = rs0;
	rs.rec[3] ^= 1ULL << 20;
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "checksum"));
	/* a sector from an earlier format (other nonce) */
	rs = rs0;
	rs.crc = 0;
	rs.crc = vc_crc32c(nonce() + 1, &rs, sizeof(rs));
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	/* misplaced sector */
	rs = rs0;
	rs.index++;
	fix_rec_crc(&rs);
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "misplaced"));

	/* find a dirty record to play with */
	for (i = 0; i < VC_RECS_PER_SECTOR; i++)
		if (rs0.rec[i] & VC_REC_DIRTY)
			break;
	assert_true(i < VC_RECS_PER_SECTOR);
	/* unknown device */
	rs = rs0;
	rs.rec[i] |= 7ULL << VC_REC_DEV_SHIFT;
	fix_rec_crc(&rs);
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "device"));
	/* unknown flag */
	rs = rs0;
	rs.rec[i] |= 1ULL << 62;
	fix_rec_crc(&rs);
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	/* beyond the backing device */
	rs = rs0;
	rs.rec[i] = (rs.rec[i] & ~VC_REC_BLOCK_MASK) | 5000;
	fix_rec_crc(&rs);
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	/* the same block cached twice, or in the wrong set */
	for (j = 0; j < VC_RECS_PER_SECTOR; j++)
		if (j != i && !(rs0.rec[j] & VC_REC_DIRTY))
			break;
	rs = rs0;
	rs.rec[j] = rs0.rec[i];
	fix_rec_crc(&rs);
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	wr_sector(mds, &rs0);
	assert_int_equal(load_err(err, sizeof(err)), 0);

	/* device table */
	rd_sector(VC_DEVTAB_SECTOR, &rs);
	((u8 *)&rs)[40] ^= 0x10;
	wr_sector(VC_DEVTAB_SECTOR, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	t_teardown(&ct);
}

static void test_reformat_forgets(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct tenv t;
	struct vc_stats s;

	(void)st;
	t_setup(&t, 256, 4096, false, &cfg);
	fill_some(&t);
	t_crash(&t);
	cfg.nr_blocks = 256;
	assert_int_equal(vc_cache_create(vc_memdev_dev(t.cm), &cfg, &t.c), 0);
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0", &t.dev), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	t_crash(&t);
	assert_int_equal(t_reload(&t), 0);
	s = t_stats(&t);
	assert_int_equal(s.valid_blocks, 0);
	t_teardown(&t);
}

/*
 * Two superblock copies (format version 2): one damaged copy is not a
 * refusal, and a torn write of the newest (the clean flag of a clean
 * shutdown) falls back to the previous one: recovery as after a crash.
 */
static void test_superblock_copies(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct vc_sb a, b, junk;
	struct vc_stats s;
	char err[160];

	(void)st;
	t_setup(&ct, 256, 4096, false, &cfg);
	fill_some(&ct);
	assert_int_equal(vc_cache_shutdown(ct.c, 0), 0);	/* clean */
	ct.c = NULL;
	rd_sector(VC_SB_SECTOR, &a);
	rd_sector(VC_SB2_SECTOR, &b);
	assert_int_equal(a.version, VC_FORMAT_VERSION);
	assert_int_equal(a.set_shift, VC_SET_SHIFT);	/* new caches */
	assert_int_equal(b.version, VC_FORMAT_VERSION);
	assert_true(a.seq != b.seq);
	memset(&junk, 0x5a, sizeof(junk));
	/* either copy alone is enough (a load writes a copy: restore) */
	wr_sector(VC_SB_SECTOR, &junk);
	assert_int_equal(load_err(err, sizeof(err)), 0);
	wr_sector(VC_SB_SECTOR, &a);
	wr_sector(VC_SB2_SECTOR, &junk);
	assert_int_equal(load_err(err, sizeof(err)), 0);
	/* both damaged: refused, with the damage named */
	wr_sector(VC_SB_SECTOR, &junk);
	wr_sector(VC_SB2_SECTOR, &junk);
	assert_int_equal(load_err(err, sizeof(err)), -ENODATA);
	junk = a;
	junk.nr_blocks ^= 1;
	wr_sector(VC_SB2_SECTOR, &junk);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	print_message("  both copies damaged: %s\n", err);
	assert_non_null(strstr(err, "checksum"));
	memset(&junk, 0x5a, sizeof(junk));
	wr_sector(VC_SB_SECTOR, &a);
	wr_sector(VC_SB2_SECTOR, &b);
	/* the newest copy (written by the clean shutdown) torn */
	wr_sector(a.seq > b.seq ? VC_SB_SECTOR : VC_SB2_SECTOR, &junk);
	assert_int_equal(t_reload(&ct), 0);
	s = t_stats(&ct);
	print_message("  newest superblock torn: %llu valid, %llu dirty blocks back\n",
		      (unsigned long long)s.valid_blocks,
		      (unsigned long long)s.dirty_blocks);
	assert_int_equal(s.dirty_blocks, 40);
	assert_int_equal(s.valid_blocks, 40);	/* clean records not trusted */
	t_teardown(&ct);
}

/*
 * A version 2 cache (copies at 0 and 17, device table at 1, records at
 * 24), left by an older module after a crash, loads with every dirty
 * block and stays version 2 (an older module can still load it).
 */
static void test_loads_version_2(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct vc_dev_sector ds;
	struct vc_rec_sector rs;
	struct vc_sb sb, a, b;
	u64 i, md;
	u8 zero[512];

	(void)st;
	t_setup(&ct, 256, 4096, false, &cfg);
	fill_some(&ct);
	t_crash(&ct);
	ct.md_rmw_ok = true;	/* version 2 writes 512-byte sectors */
	rd_sector(VC_SB_SECTOR, &a);
	rd_sector(VC_SB2_SECTOR, &b);
	sb = a.seq > b.seq ? a : b;
	md = (sb.nr_blocks + VC_RECS_PER_SECTOR - 1) / VC_RECS_PER_SECTOR;
	/* move the device table and the records to the version 2 places */
	for (i = 0; i < VC_DEVTAB_SECTORS; i++) {
		rd_sector(VC_DEVTAB_SECTOR + i, &ds);
		ds.index = (u32)(VC_V2_DEVTAB_SECTOR + i);
		ds.crc = 0;
		ds.crc = vc_crc32c(nonce(), &ds, sizeof(ds));
		wr_sector(VC_V2_DEVTAB_SECTOR + i, &ds);
	}
	for (i = 0; i < md; i++) {
		rd_sector(VC_MD_START + i, &rs);
		rs.index = (u32)(VC_V2_MD_START + i);
		fix_rec_crc(&rs);
		wr_sector(VC_V2_MD_START + i, &rs);
	}
	memset(zero, 0, sizeof(zero));
	for (i = VC_V2_MD_START + md; i < sb.data_start; i++)
		wr_sector(i, zero);
	sb.version = 2;
	sb.md_start = VC_V2_MD_START;
	sb.md_sectors = md;
	sb.md_unit = 0;
	fix_sb_crc(&sb);
	wr_sector(VC_SB_SECTOR, &sb);
	sb.seq--;
	fix_sb_crc(&sb);
	wr_sector(VC_V2_SB2_SECTOR, &sb);
	assert_int_equal(t_reload(&ct), 0);
	assert_int_equal(t_stats(&ct).dirty_blocks, 40);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_check_pat(&ct, i * 5, 1, (u32)i + 1), 0);
	assert_int_equal(vc_cache_shutdown(ct.c, 0), 0);
	ct.c = NULL;
	rd_sector(VC_SB_SECTOR, &a);
	rd_sector(VC_V2_SB2_SECTOR, &b);
	assert_int_equal(a.version, 2);
	assert_int_equal(b.version, 2);
	assert_int_equal(t_reload(&ct), 0);
	assert_int_equal(t_stats(&ct).dirty_blocks, 40);
	assert_int_equal(t_check_pat(&ct, 5, 1, 2), 0);
	t_teardown(&ct);
}

/* A deleted cache (VC_SHUTDOWN_FORGET) is not found again. */
static void test_forget(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	char err[160];

	(void)st;
	t_setup(&ct, 256, 4096, false, &cfg);
	fill_some(&ct);
	assert_int_equal(vc_cache_shutdown(ct.c, VC_SHUTDOWN_FORGET), 0);
	ct.c = NULL;
	assert_int_equal(load_err(err, sizeof(err)), -ENODATA);
	t_teardown(&ct);
}

/* Names kept with the cache (format 3) come back after a cut and a reload. */
static void test_labels(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct vc_backing_info bi;
	char name[32], err[160];
	struct vc_sb sb;

	(void)st;
	strcpy(cfg.label, "db-cache");
	t_setup(&ct, 256, 4096, false, &cfg);
	assert_int_equal(vc_cache_set_dev_label(ct.c, ct.dev, "pgdata"), 0);
	assert_int_equal(vc_cache_set_dev_label(ct.c, ct.dev,
		"0123456789012345678901234567890123"), -EINVAL);
	assert_int_equal(vc_cache_set_dev_label(ct.c, 5, "x"), -ENOENT);
	fill_some(&ct);
	t_crash(&ct);
	assert_int_equal(t_reload(&ct), 0);
	vc_cache_get_label(ct.c, name);
	assert_string_equal(name, "db-cache");
	assert_int_equal(vc_cache_backing_info(ct.c, ct.dev, &bi), 0);
	assert_string_equal(bi.label, "pgdata");
	assert_int_equal(vc_cache_set_label(ct.c, "renamed"), 0);
	t_crash(&ct);
	/* an unterminated name is refused with a reason */
	rd_sector(VC_SB_SECTOR, &sb);
	memset(sb.label, 'a', sizeof(sb.label));
	fix_sb_crc(&sb);
	wr_sb(&sb);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_non_null(strstr(err, "name"));
	t_teardown(&ct);
}

/*
 * A damaged record sector refuses the whole cache; VC_LOAD_SALVAGE loads
 * every record that verifies, counts what it skipped and rewrites the
 * metadata, so the next plain load works.
 */
/*
 * Each block fill_some() wrote reads back its data or fails; one reads
 * older data at most (its record was the damaged one); @eio fail.
 */
static void check_salvaged(u64 eio)
{
	u32 i, old = 0, failed = 0;

	for (i = 0; i < 40; i++) {
		int e = t_check_pat(&ct, i * 5, 1, i + 1);

		if (e == 1)
			old++;
		else if (e)
			failed++;
	}
	assert_true(old <= 1);
	assert_int_equal(failed, eio);
}

static void test_salvage(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct vc_rec_sector rs;
	struct vc_stats s;
	char err[160];
	u64 mds, lost = 0;
	u32 i;

	(void)st;
	t_setup(&ct, 256, 4096, false, &cfg);
	fill_some(&ct);
	t_crash(&ct);
	/* damage the first record sector holding dirty records */
	for (mds = VC_MD_START; mds < VC_MD_START + 5; mds++) {
		rd_sector(mds, &rs);
		for (i = 0, lost = 0; i < VC_RECS_PER_SECTOR; i++)
			lost += (rs.rec[i] & VC_REC_DIRTY) != 0;
		if (lost)
			break;
	}
	assert_true(lost > 0);
	rs.rec[0] ^= 1ULL << 30;
	wr_sector(mds, &rs);
	assert_int_equal(load_err(err, sizeof(err)), -EUCLEAN);
	assert_int_equal(vc_cache_load(vc_memdev_dev(ct.cm), VC_LOAD_SALVAGE,
				       &ct.c, err, sizeof(err)), 0);
	s = t_stats(&ct);
	print_message("  salvage: %llu bad sectors, %llu bad records, %llu of 40 dirty blocks back (%llu in the bad sector)\n",
		      (unsigned long long)s.load_bad_sectors,
		      (unsigned long long)s.load_bad_records,
		      (unsigned long long)s.dirty_blocks,
		      (unsigned long long)lost);
	assert_int_equal(s.load_bad_sectors, 1);
	assert_int_equal(s.dirty_blocks, 40 - lost);
	/*
	 * The damaged sector's records that still name a dirty block (all
	 * but the flipped one, which now names a block beyond the device)
	 * are lost markers: those blocks read as errors, never as the
	 * backing device's older data.
	 */
	print_message("  %llu lost markers from the damaged sector\n",
		      (unsigned long long)s.lost_marked);
	assert_int_equal(s.lost_marked, lost - 1);
	assert_int_equal(vc_cache_attach(ct.c, vc_memdev_dev(ct.bm), "hdd0",
					 &ct.dev), 0);
	check_salvaged(lost - 1);
	t_crash(&ct);
	/* the metadata verifies again; the markers stay */
	assert_int_equal(t_reload(&ct), 0);
	s = t_stats(&ct);
	assert_int_equal(s.dirty_blocks, 40 - lost);
	assert_int_equal(s.lost_marked, lost - 1);
	assert_int_equal(s.load_bad_sectors, 0);
	check_salvaged(lost - 1);
	t_teardown(&ct);
}

/* ---- metadata in whole physical blocks (issue 19) ---- */

/* Watches the metadata writes of a device (a vc_memdev fail hook). */
struct md_watch {
	u32 pbs;
	u64 writes, bad, bad_sector;
	u32 bad_len;
};

static int md_watch_fn(void *ctx, const struct vc_dev_io *io)
{
	struct md_watch *w = ctx;

	if ((io->op != VC_DEV_WRITE && io->op != VC_DEV_WRITE_ZEROES) ||
	    !(io->flags & VC_DEV_META))
		return 0;
	w->writes++;
	if (((io->sector << 9) | io->len) & (w->pbs - 1)) {
		if (!w->bad++) {
			w->bad_sector = io->sector;
			w->bad_len = io->len;
		}
	}
	return 0;
}

static void md_watch_check(const struct md_watch *w)
{
	print_message("  %llu metadata writes, %llu not whole %u-byte blocks (first: sector %llu, %u bytes)\n",
		      (unsigned long long)w->writes,
		      (unsigned long long)w->bad, w->pbs,
		      (unsigned long long)w->bad_sector, w->bad_len);
	assert_true(w->writes > 0);
	assert_int_equal(w->bad, 0);
}

/* Sectors [from, to) of the cache device read as zeroes. */
static void assert_zero_sectors(struct vc_memdev *m, u64 from, u64 to)
{
	u8 sec[512], zero[512];

	memset(zero, 0, sizeof(zero));
	for (; from < to; from++) {
		vc_memdev_peek(m, from, sec, sizeof(sec));
		assert_memory_equal(sec, zero, sizeof(sec));
	}
}

/*
 * A cache device with 512-byte logical and 4 KiB physical blocks (the
 * card): format 4 puts the superblock copies and the device table each in
 * their own 4 KiB, the records in whole 4 KiB units, and every metadata
 * write of a create, host writes with group commits and FUA, a flush on
 * demand, names, attaching and detaching a second disk, a crash and its
 * recovery, a clean shutdown and its load covers whole 4 KiB blocks,
 * aligned.
 */
static void test_md_whole_physical_blocks(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct md_watch w = { .pbs = 4096 };
	struct vc_memdev *b2 = vc_memdev_create("hdd1", 4096, true);
	struct vc_memdev_stats ms;
	struct vc_stats s;
	struct vc_sb sb;
	u32 i, id2;

	(void)st;
	assert_non_null(b2);
	t_setup(&ct, 2100, 8192, true, &cfg);
	vc_memdev_set_fail(ct.cm, md_watch_fn, &w);
	assert_int_equal(ct.c->version, 4);
	assert_int_equal(ct.c->md_unit, 4096);
	assert_int_equal(ct.c->devtab_sector, 8);
	assert_int_equal(ct.c->sb2_sector, 24);
	assert_int_equal(ct.c->md_start, 32);
	/* 34 record sectors rounded up to 5 units of 8 */
	assert_int_equal(ct.c->md_sectors, 40);
	assert_int_equal(ct.c->data_start % 8, 0);
	rd_sector(VC_SB_SECTOR, &sb);
	assert_int_equal(sb.version, 4);
	assert_int_equal(sb.md_unit, 4096);
	assert_int_equal(sb.md_sectors, 40);
	/* each superblock copy alone in its 4 KiB */
	assert_zero_sectors(ct.cm, 1, 8);
	assert_zero_sectors(ct.cm, 25, 32);

	fill_some(&ct);
	for (i = 0; i < 300; i++)
		assert_int_equal(t_write_pat(&ct, 4000 + (i * 37) % 4000, 1,
					     i + 7, i % 5 ? 0 : VC_IO_FUA), 0);
	assert_int_equal(t_io(&ct, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(vc_cache_set_label(ct.c, "db"), 0);
	assert_int_equal(vc_cache_set_dev_label(ct.c, ct.dev, "pgdata"), 0);
	assert_int_equal(vc_cache_attach(ct.c, vc_memdev_dev(b2), "hdd1",
					 &id2), 0);
	assert_int_equal(vc_cache_detach(ct.c, id2, 0), 0);
	assert_int_equal(vc_cache_flush(ct.c, VC_DEV_ID_ALL, NULL, NULL), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_write_pat(&ct, i * 5, 1, i + 1, 0), 0);
	assert_int_equal(t_io(&ct, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&ct);
	assert_int_equal(t_reload(&ct), 0);
	s = t_stats(&ct);
	assert_int_equal(s.dirty_blocks, 40);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_check_pat(&ct, i * 5, 1, i + 1), 0);
	assert_int_equal(vc_cache_shutdown(ct.c, 0), 0);
	ct.c = NULL;
	assert_int_equal(t_reload(&ct), 0);
	s = t_stats(&ct);
	assert_int_equal(s.dirty_blocks, 40);
	md_watch_check(&w);
	vc_memdev_get_stats(ct.cm, &ms);
	assert_int_equal(ms.meta_rmw_writes, 0);
	/*
	 * A superblock planted in cached data where a 64 KiB-unit cache
	 * keeps its second copy (sector 256: a data block here), newer than
	 * ours and valid in itself, is not taken: unit 0 is not padded as a
	 * 64 KiB layout pads it.
	 */
	t_crash(&ct);
	assert_true(ct.c == NULL);
	rd_sector(VC_SB_SECTOR, &sb);
	assert_true(256 >= sb.data_start);
	sb.md_unit = 65536;
	sb.md_start = 384;
	sb.md_sectors = 128;
	sb.data_start = 512;
	sb.nr_blocks = 100;
	sb.seq += 1000;
	fix_sb_crc(&sb);
	wr_sector(256, &sb);
	assert_int_equal(t_reload(&ct), 0);
	assert_int_equal(ct.c->md_unit, 4096);
	assert_int_equal(ct.c->nr_blocks, 2100);
	assert_int_equal(t_stats(&ct).dirty_blocks, 40);
	t_teardown(&ct);
	vc_memdev_destroy(b2);
}

/*
 * 16 KiB physical blocks: the unit follows (sb copy 0, the device table at
 * 32, copy 1 at 64, records from 96); a damaged copy 0 leaves copy 1,
 * found where its unit puts it; a bad unit in the superblock is refused;
 * physical blocks over 64 KiB cannot hold a cache.
 */
static void test_md_16k_physical_blocks(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct md_watch w = { .pbs = 16384 };
	struct tenv t;
	struct vc_sb sb, junk;
	char err[160];
	u32 i;

	(void)st;
	t_init();
	memset(&t, 0, sizeof(t));
	t.cm = vc_memdev_create("flash16k", 64 * 1024, true);
	t.bm = vc_memdev_create("hdd", 8192 * 8, true);
	assert_non_null(t.cm);
	assert_non_null(t.bm);
	vc_memdev_dev(t.cm)->physical_block_size = 16384;
	vc_memdev_set_fail(t.cm, md_watch_fn, &w);
	assert_int_equal(vc_cache_create(vc_memdev_dev(t.cm), &cfg, &t.c), 0);
	assert_int_equal(t.c->md_unit, 16384);
	assert_int_equal(t.c->devtab_sector, 32);
	assert_int_equal(t.c->sb2_sector, 64);
	assert_int_equal(t.c->md_start, 96);
	assert_int_equal(t.c->md_sectors % 32, 0);
	assert_int_equal(t.c->data_start % 32, 0);
	assert_true(t.c->data_start + t.c->nr_blocks * 8 <= 64 * 1024);
	assert_int_equal(t.c->nr_blocks,
			 vc_cache_blocks_for_unit(64 * 1024, 4096, 16384));
	assert_int_equal(vc_cache_attach(t.c, vc_memdev_dev(t.bm), "hdd0",
					 &t.dev), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_write_pat(&t, i * 7, 1, i + 3, 0), 0);
	assert_int_equal(t_io(&t, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	t_crash(&t);
	/* copy 0 damaged: copy 1 at 64 carries the cache */
	vc_memdev_peek(t.cm, VC_SB_SECTOR, &sb, sizeof(sb));
	memset(&junk, 0x5a, sizeof(junk));
	vc_memdev_poke(t.cm, VC_SB_SECTOR, &junk, sizeof(junk));
	assert_int_equal(t_reload(&t), 0);
	assert_int_equal(t_stats(&t).dirty_blocks, 40);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_check_pat(&t, i * 7, 1, i + 3), 0);
	assert_int_equal(vc_cache_shutdown(t.c, 0), 0);
	t.c = NULL;
	md_watch_check(&w);
	/* a unit that is no power of two in range is refused */
	vc_memdev_peek(t.cm, VC_SB_SECTOR, &sb, sizeof(sb));
	vc_memdev_peek(t.cm, 64, &junk, sizeof(junk));
	sb.md_unit = 6144;
	fix_sb_crc(&sb);
	vc_memdev_poke(t.cm, VC_SB_SECTOR, &sb, sizeof(sb));
	memset(&junk, 0x5a, sizeof(junk));
	vc_memdev_poke(t.cm, 64, &junk, sizeof(junk));
	assert_int_equal(vc_cache_load(vc_memdev_dev(t.cm), 0, &t.c, err,
				       sizeof(err)), -EUCLEAN);
	print_message("  unit 6144: %s\n", err);
	assert_non_null(strstr(err, "metadata unit"));
	vc_memdev_destroy(t.cm);
	/* 128 KiB physical blocks: refused */
	t.cm = vc_memdev_create("flash128k", 64 * 1024, true);
	vc_memdev_dev(t.cm)->physical_block_size = 128 * 1024;
	assert_int_equal(vc_cache_create(vc_memdev_dev(t.cm), &cfg, &t.c),
			 -EINVAL);
	vc_memdev_destroy(t.cm);
	vc_memdev_destroy(t.bm);
}

/*
 * A version 3 cache (no unit field, records not rounded to a unit), left
 * by an older module after a crash, loads with every dirty block, stays
 * version 3 (an older module can still load it) and is written in 4 KiB
 * units too: its layout keeps each structure in its own 4 KiB.  A
 * version 4 superblock is refused cleanly by a version 3 loader (its
 * version, and the unit in bytes a version 3 loader requires to be zero).
 */
static void test_loads_version_3(void **st)
{
	struct vc_cache_config cfg = quiet_cfg();
	struct md_watch w = { .pbs = 4096 };
	struct vc_sb sb, a, b;
	u64 md;
	u32 i;

	(void)st;
	t_setup(&ct, 2100, 8192, false, &cfg);
	fill_some(&ct);
	t_crash(&ct);
	rd_sector(VC_SB_SECTOR, &a);
	rd_sector(VC_SB2_SECTOR, &b);
	sb = a.seq > b.seq ? a : b;
	md = (sb.nr_blocks + VC_RECS_PER_SECTOR - 1) / VC_RECS_PER_SECTOR;
	assert_true(md % 8 != 0);	/* the tail of the last unit */
	sb.version = 3;
	sb.md_sectors = md;
	sb.md_unit = 0;
	fix_sb_crc(&sb);
	wr_sector(VC_SB_SECTOR, &sb);
	sb.seq--;
	fix_sb_crc(&sb);
	wr_sector(VC_SB2_SECTOR, &sb);
	vc_memdev_set_fail(ct.cm, md_watch_fn, &w);
	assert_int_equal(t_reload(&ct), 0);
	assert_int_equal(ct.c->version, 3);
	assert_int_equal(ct.c->md_sectors, md);
	assert_int_equal(t_stats(&ct).dirty_blocks, 40);
	for (i = 0; i < 40; i++)
		assert_int_equal(t_check_pat(&ct, i * 5, 1, i + 1), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(t_write_pat(&ct, 3000 + i * 3, 1, i, 0), 0);
	assert_int_equal(t_io(&ct, VC_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(vc_cache_shutdown(ct.c, 0), 0);
	ct.c = NULL;
	md_watch_check(&w);
	rd_sector(VC_SB_SECTOR, &a);
	rd_sector(VC_SB2_SECTOR, &b);
	assert_int_equal(a.version, 3);
	assert_int_equal(b.version, 3);
	assert_int_equal(a.md_unit, 0);
	assert_int_equal(t_reload(&ct), 0);
	assert_int_equal(t_stats(&ct).dirty_blocks, 140);
	t_teardown(&ct);
}

/* A cache device with 4096-byte logical blocks cannot take our metadata. */
static void test_4kn_cache_device(void **st)
{
	struct vc_cache_config cfg;
	struct vc_memdev *m = vc_memdev_create("flash4k", 8192, false);
	struct vc_cache *c = NULL;
	char err[160];

	(void)st;
	t_init();
	assert_non_null(m);
	vc_cache_config_default(&cfg);
	vc_memdev_dev(m)->logical_block_size = 4096;
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), -EINVAL);
	assert_int_equal(vc_cache_load(vc_memdev_dev(m), 0, &c, err,
				       sizeof(err)), -EINVAL);
	print_message("  load: %s\n", err);
	assert_non_null(strstr(err, "512-byte"));
	/* 512e works */
	vc_memdev_dev(m)->logical_block_size = 512;
	vc_memdev_dev(m)->physical_block_size = 4096;
	assert_int_equal(vc_cache_create(vc_memdev_dev(m), &cfg, &c), 0);
	assert_int_equal(vc_cache_shutdown(c, 0), 0);
	vc_memdev_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_clean_shutdown),
		cmocka_unit_test(test_crash_recovers_exactly_dirty),
		cmocka_unit_test(test_dirty_kept_for_absent_device),
		cmocka_unit_test(test_block_sizes),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_refuse_corrupt),
		cmocka_unit_test(test_reformat_forgets),
		cmocka_unit_test(test_superblock_copies),
		cmocka_unit_test(test_loads_version_2),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_salvage),
		cmocka_unit_test(test_4kn_cache_device),
		cmocka_unit_test(test_md_whole_physical_blocks),
		cmocka_unit_test(test_md_16k_physical_blocks),
		cmocka_unit_test(test_loads_version_3),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
