// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - find a vcache superblock on a block device (probe.h).  The
 * format is the engine's (vc_format.h): magic, version, crc32c of the
 * sector, two copies where the version puts them, the newest seq wins.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "vc_format.h"

static int rd(int fd, uint64_t sector, void *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, (off_t)(sector * 512));

	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

/*
 * Sectors 1 .. @usec - 1 all zero: the engine takes a second copy beyond
 * sector 24 (a unit over 4 KiB) only then (a copy planted in cached data
 * never passes: every other layout has a device table in there).
 */
static bool unit0_zero(int fd, uint32_t usec)
{
	unsigned char sec[512];
	uint32_t s, j;

	for (s = 1; s < usec; s++) {
		if (rd(fd, s, sec, sizeof(sec)))
			return false;
		for (j = 0; j < sizeof(sec); j++)
			if (sec[j])
				return false;
	}
	return true;
}

/* A superblock copy read at @where that is valid there. */
static bool sb_ok(int fd, const struct vc_sb *in, uint64_t where)
{
	struct vc_sb sb = *in;
	uint32_t crc = vc_le32_to_cpu(sb.crc), v = vc_le32_to_cpu(sb.version);

	if (vc_le64_to_cpu(sb.magic) != VC_SB_MAGIC ||
	    v < VC_FORMAT_VERSION_MIN || v > VC_FORMAT_VERSION)
		return false;
	if (where != VC_SB_SECTOR &&
	    where != vc_fmt_sb2_sector(v, vc_le32_to_cpu(sb.md_unit)))
		return false;
	sb.crc = 0;
	if (vc_crc32c(~0u, &sb, sizeof(sb)) != crc)
		return false;
	return where <= VC_SB2_SECTOR ||
	       unit0_zero(fd, vc_le32_to_cpu(sb.md_unit) >> 9);
}

static int count_dirty(int fd, const struct vc_sb *sb, struct vcc_probe *p)
{
	uint64_t md = vc_le64_to_cpu(sb->md_sectors), i;
	uint64_t start = vc_le64_to_cpu(sb->md_start);
	uint32_t nonce = vc_le32_to_cpu(sb->nonce);
	struct vc_rec_sector rs;
	unsigned int j;

	for (i = 0; i < md; i++) {
		uint32_t crc;

		if (rd(fd, start + i, &rs, sizeof(rs)))
			return -1;
		crc = vc_le32_to_cpu(rs.crc);
		rs.crc = 0;
		if (vc_crc32c(nonce, &rs, sizeof(rs)) != crc) {
			p->bad_sectors++;
			continue;
		}
		for (j = 0; j < VC_RECS_PER_SECTOR; j++)
			if (vc_le64_to_cpu(rs.rec[j]) & VC_REC_DIRTY)
				p->dirty_bytes += p->block_size;
	}
	return 0;
}

int vcc_probe_cache(const char *path, bool dirty, struct vcc_probe *p)
{
	static const uint64_t where[] = VC_SB_CANDIDATES;
	struct vc_sb cand, best;
	bool found = false;
	unsigned int i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;

	if (fd < 0)
		return -1;
	memset(p, 0, sizeof(*p));
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (rd(fd, where[i], &cand, sizeof(cand)) ||
		    !sb_ok(fd, &cand, where[i]))
			continue;
		if (!found || vc_le64_to_cpu(cand.seq) > vc_le64_to_cpu(best.seq))
			best = cand;
		found = true;
	}
	if (!found) {
		close(fd);
		return 0;
	}
	p->version = vc_le32_to_cpu(best.version);
	if (p->version >= 3)
		memcpy(p->name, best.label, sizeof(p->name) - 1);
	p->block_size = vc_le32_to_cpu(best.block_size);
	p->nr_blocks = vc_le64_to_cpu(best.nr_blocks);
	p->clean = vc_le32_to_cpu(best.clean) == VC_SB_CLEAN;
	if (dirty && count_dirty(fd, &best, p))
		rc = -1;
	close(fd);
	return rc;
}
