/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vc_format.h - on-flash metadata format of a vcache cache device.
 *
 * All fields are little-endian (vc_le* types: plain integers, converted
 * with vc_cpu_to_le* / vc_le*_to_cpu).  Every metadata structure is one
 * 512-byte sector with its own CRC32C, so a torn multi-sector write leaves
 * each sector either old or new, never mixed.
 *
 * Version 4 writes metadata in whole "metadata units" of md_unit bytes
 * (the superblock field: the cache device's physical block size at
 * format, at least 4096, at most 65536), each aligned to md_unit: the
 * device never has to read-modify-write a physical block for metadata,
 * and no two structures share one (a device that tears a write at its
 * physical block never takes two).  With u = md_unit / 512 sectors:
 *
 *   0                       superblock copy 0 (struct vc_sb), alone in
 *                           unit 0 (the rest of the unit is zero)
 *   u .. u + 15             backing device table, one entry per sector
 *                           (struct vc_dev_sector), slot = backing dev id;
 *                           the table fills round_up(16, u) sectors and is
 *                           written a whole unit at a time
 *   sb2 = u + round_up(16, u)   superblock copy 1, alone in its unit
 *   md_start = sb2 + u      block records (struct vc_rec_sector), 63 per
 *                           sector, record i in sector md_start + i / 63;
 *                           md_sectors is rounded up to a whole number of
 *                           units (the tail sectors hold no records) and a
 *                           record write covers its whole unit
 *   data_start ..           cache blocks, block i at
 *                           data_start + i * (block_size / 512);
 *                           data_start is aligned to the block size and
 *                           to the unit
 *
 * Writes of the superblock alternate between the copies (seq even: copy
 * 0, odd: copy 1) and the loader takes the valid one with the highest
 * seq, so a torn or unreadable superblock write leaves the previous one.
 * With a 4 KiB unit the layout is version 3's: 0, 8 .. 23, 24, 32.  A
 * second copy beyond sector 24 (units over 4 KiB) is taken only if
 * sectors 1 .. u - 1 are zero: any other layout has a device table there,
 * so a copy planted in another layout's records or cached data (which a
 * host writes) is never taken.  An older loader refuses version 4 by
 * its version number.
 *
 * Version 3 (still loaded and kept as version 3): the version 4 layout
 * with a 4 KiB unit and no md_unit field; md_sectors is not rounded.  It
 * is written in 4 KiB units too (its layout keeps every structure in its
 * own 4 KiB; the last record unit reaches into the gap before
 * data_start, which nothing reads).
 *
 * Version 2 (still loaded and kept as version 2): copies at 0 and 17, the
 * device table at 1 .. 16, md_start 24, no lost records; written in
 * 512-byte sectors (on a device with larger physical blocks each is a
 * read-modify-write, logged at load: create the cache again to move to
 * version 4).
 *
 * CRCs: crc32c (Castagnoli) over the whole sector with the crc field set
 * to zero.  The superblock's crc starts from ~0; every other sector's crc
 * starts from the superblock's nonce (random at format time), so sectors
 * left over from an earlier format of the same device never validate.
 * Each sector also names its own index, so a misdirected write is caught.
 *
 * The cache device must take 512-byte writes (logical block size 512);
 * its physical block may be larger (512e): version 4 metadata never
 * writes less than one.
 *
 * Version 1 had one superblock copy (sector 0) in the version 2 layout;
 * it is still loaded, and rewritten as version 2 at the first superblock
 * write.
 *
 * Crash consistency:
 *   - sb.clean == VC_SB_CLEAN only after a clean shutdown wrote every
 *     record; the loader clears it (durably) before any I/O is accepted.
 *   - After a clean shutdown every valid record is trusted; after a crash
 *     only DIRTY records are (clean ones may be stale, their blocks having
 *     been reused without a metadata write).
 *   - A DIRTY record is written (with FUA, after a cache FLUSH that
 *     followed the block's data write, or with PREFLUSH) only after the
 *     block's data write completed, and a block whose record may say
 *     DIRTY is never reused before a record saying otherwise is durable:
 *     every DIRTY record found after a crash points to that block's
 *     newest data.  Records of writes never flushed may be missing: those
 *     blocks come back as the backing device has them.
 */
#ifndef VC_FORMAT_H
#define VC_FORMAT_H

#include "vc_env.h"

typedef u16 vc_le16;
typedef u32 vc_le32;
typedef u64 vc_le64;

/* Both supported environments are little-endian (x86_64, arm64 LE). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vc_format.h: add byte swapping for big-endian hosts"
#endif
static inline u16 vc_le16_to_cpu(vc_le16 v) { return v; }
static inline u32 vc_le32_to_cpu(vc_le32 v) { return v; }
static inline u64 vc_le64_to_cpu(vc_le64 v) { return v; }
static inline vc_le16 vc_cpu_to_le16(u16 v) { return v; }
static inline vc_le32 vc_cpu_to_le32(u32 v) { return v; }
static inline vc_le64 vc_cpu_to_le64(u64 v) { return v; }

#define VC_SB_MAGIC		0x444d454843414356ULL	/* "VCACHEMD" */
#define VC_FORMAT_VERSION	4
#define VC_FORMAT_VERSION_MIN	1	/* oldest version still loaded */
#define VC_SB_CLEAN		0x4e41454cu		/* "LEAN" */
#define VC_SB_SECTOR		0
#define VC_SB2_SECTOR		24	/* second copy, 4 KiB unit (and v3) */
#define VC_DEVTAB_SECTOR	8	/* the same */
#define VC_DEVTAB_SECTORS	16			/* = VC_MAX_BACKING */
#define VC_MD_START		32	/* the same */
/* version 4 metadata unit (bytes): the physical block, within these */
#define VC_MD_UNIT_MIN		4096
#define VC_MD_UNIT_MAX		65536
/*
 * Every sector a superblock copy of any version can be at: copy 0, the
 * second copy of versions 3 and 4 (units of 4 KiB .. 64 KiB), version 2's.
 */
#define VC_SB_CANDIDATES	{ VC_SB_SECTOR, VC_SB2_SECTOR, \
				  VC_V2_SB2_SECTOR, 32, 64, 128, 256 }
/* the version 1 and 2 layout */
#define VC_V2_SB2_SECTOR	17
#define VC_V2_DEVTAB_SECTOR	1
#define VC_V2_MD_START		24
#define VC_RECS_PER_SECTOR	63
#define VC_FMT_MAX_PARAMS	32
#define VC_LABEL_LEN		32	/* names kept on flash, with the NUL */
#define VC_DEV_MAGIC		0x56454456u		/* "VDEV" */
#define VC_REC_MAGIC		0x43455256u		/* "VREC" */

struct vc_sb {
	vc_le64 magic;
	vc_le32 version;
	vc_le32 crc;
	vc_le32 block_size;	/* bytes, power of two, 4096..65536 */
	vc_le32 clean;		/* VC_SB_CLEAN or 0 */
	vc_le64 nr_blocks;
	vc_le64 md_start;	/* sectors */
	vc_le64 md_sectors;
	vc_le64 data_start;
	vc_le64 dev_sectors;	/* cache device size at format */
	vc_le64 seq;		/* bumped at every superblock write */
	vc_le32 nonce;		/* seeds the other sectors' crcs */
	vc_le32 mode;		/* enum vc_mode requested */
	vc_le32 policy;		/* enum vc_policy */
	vc_le32 nr_params;	/* <= VC_FMT_MAX_PARAMS */
	vc_le64 params[VC_FMT_MAX_PARAMS];
	/*
	 * A backing block's set is a hash of (device, block >> set_shift):
	 * 0 in version 1 caches (every block hashed on its own), VC_SET_SHIFT
	 * in new ones (runs of 2^VC_SET_SHIFT blocks share a set, so a large
	 * or sequential I/O stays in one set, lies in order in the cache and
	 * needs few record sectors).
	 */
	vc_le32 set_shift;
	/*
	 * Version 3: the cache's name, NUL padded (the kernel finds a cache
	 * on a plain block device again by it).  Zero in older versions.
	 */
	u8 label[VC_LABEL_LEN];
	/*
	 * Version 4: bytes per metadata write (the layout above).  Zero in
	 * older versions.
	 */
	vc_le32 md_unit;
	u8 reserved[512 - 96 - VC_LABEL_LEN - 8 * VC_FMT_MAX_PARAMS];
};

#define VC_SET_SHIFT	8

/* struct vc_dev_sector.flags */
#define VC_DEVF_IN_USE	(1u << 0)

struct vc_dev_sector {
	vc_le32 magic;		/* VC_DEV_MAGIC */
	vc_le32 crc;
	vc_le32 index;		/* its sector number */
	vc_le32 flags;
	vc_le64 nr_sectors;	/* backing device size when attached */
	u8 uuid[48];		/* NUL padded identity */
	/* version 3: the cached device's name, NUL padded; zero before */
	u8 label[VC_LABEL_LEN];
	u8 reserved[512 - 72 - VC_LABEL_LEN];
};

/*
 * A block record: one little-endian 64-bit word.
 *   bits  0..47  backing block number (in cache blocks)
 *   bits 48..55  backing device id
 *   bits 56..63  flags
 */
#define VC_REC_BLOCK_BITS	48
#define VC_REC_BLOCK_MASK	((1ULL << VC_REC_BLOCK_BITS) - 1)
#define VC_REC_DEV_SHIFT	48
#define VC_REC_DEV_MASK		0xffULL
#define VC_REC_FLAG_SHIFT	56
#define VC_REC_VALID		(1ULL << 56)
#define VC_REC_DIRTY		(1ULL << 57)
/*
 * Version 3: (without VALID) the newest data of the backing block was
 * lost (a cache read or write-back failure): reads of it fail until a
 * write covers the whole block or a discard does.  Trusted after a crash
 * like a DIRTY record.
 */
#define VC_REC_LOST		(1ULL << 58)
#define VC_REC_KNOWN_FLAGS	(VC_REC_VALID | VC_REC_DIRTY | VC_REC_LOST)

struct vc_rec_sector {
	vc_le32 crc;
	vc_le32 index;		/* its sector number */
	vc_le64 rec[VC_RECS_PER_SECTOR];
};

#define VC_STATIC_ASSERT_FMT(c, m) _Static_assert(c, m)
VC_STATIC_ASSERT_FMT(sizeof(struct vc_sb) == 512, "vc_sb is one sector");
VC_STATIC_ASSERT_FMT(sizeof(struct vc_dev_sector) == 512, "dev sector");
VC_STATIC_ASSERT_FMT(sizeof(struct vc_rec_sector) == 512, "rec sector");

/* crc32c (Castagnoli, reflected, poly 0x82f63b78), no final inversion. */
u32 vc_crc32c(u32 crc, const void *data, size_t len);

/*
 * Sectors per metadata unit of a cache of @version whose superblock says
 * @md_unit bytes: version 4 its own, version 3 4 KiB, older ones 512
 * bytes (their layout shares 4 KiB between structures).
 */
static inline u32 vc_fmt_unit_sectors(u32 version, u32 md_unit)
{
	if (version >= 4)
		return md_unit >> 9;
	return version == 3 ? VC_MD_UNIT_MIN >> 9 : 1;
}

/* Where a version puts its second superblock copy, device table, records. */
static inline u64 vc_fmt_devtab_sector(u32 version, u32 md_unit)
{
	u32 u = vc_fmt_unit_sectors(version, md_unit);

	if (version < 3)
		return VC_V2_DEVTAB_SECTOR;
	return u;
}

static inline u64 vc_fmt_sb2_sector(u32 version, u32 md_unit)
{
	u32 u = vc_fmt_unit_sectors(version, md_unit);

	if (version < 3)
		return VC_V2_SB2_SECTOR;
	return u + ((VC_DEVTAB_SECTORS + u - 1) & ~(u - 1));
}

static inline u64 vc_fmt_md_start(u32 version, u32 md_unit)
{
	if (version < 3)
		return VC_V2_MD_START;
	return vc_fmt_sb2_sector(version, md_unit) +
	       vc_fmt_unit_sectors(version, md_unit);
}

/* Record sectors of @nr_blocks blocks (version 4: whole units). */
static inline u64 vc_fmt_md_sectors(u32 version, u32 md_unit, u64 nr_blocks)
{
	u64 n = (nr_blocks + VC_RECS_PER_SECTOR - 1) / VC_RECS_PER_SECTOR;
	u32 u = vc_fmt_unit_sectors(version, md_unit);

	if (version < 4)
		return n;
	return (n + u - 1) & ~(u64)(u - 1);	/* u: a power of two */
}

/* Sector of the record of cache block @i. */
static inline u64 vc_rec_sector_of(u64 md_start, u64 i)
{
	return md_start + i / VC_RECS_PER_SECTOR;
}

/*
 * Validate a superblock read from a device of @dev_sectors sectors;
 * 0 or a negative errno with a reason in @err.  Used by the loader and by
 * fuzzers.
 */
int vc_sb_check(const struct vc_sb *sb, u64 dev_sectors, char *err,
		size_t errlen);

#endif /* VC_FORMAT_H */
