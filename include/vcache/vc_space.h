/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vc_space.h - the card-space table: how a vcache card's capacity is
 * shared between raw use (/dev/vflashN) and caches, like NVMe namespace
 * management.  Written and read by the driver (driver/vc_space.c); the
 * prose is docs/card-space.md.  If the two disagree, this header wins.
 *
 * Layout (byte offsets from the card's first byte, C = capacity in bytes,
 * T = round_down(C - VC_SPACE_TABLE_BYTES, VC_SPACE_ALIGN)):
 *
 *   0 ........... raw ........... | region ... region | copy A | copy B | ..|
 *                                 ^ lowest region      T        T+64K      C
 *
 *  - Two copies of the table, VC_SPACE_COPY_BYTES each, at T and
 *    T + VC_SPACE_COPY_BYTES (the table starts aligned like a region; the
 *    bytes after copy B up to C are unused).  T follows from the capacity:
 *    a card whose capacity changes loses its table (it then reads as a
 *    card without one).  A change writes copy A with FUA,
 *    then copy B with FUA, both with the next generation.  Loading takes
 *    the valid copy (magic, version, crc32c) with the highest generation,
 *    so a power cut during a change leaves the old or the new table.
 *  - Regions are carved downward from below the table (the highest free
 *    extent that fits), VC_SPACE_ALIGN aligned.  The raw disk shows bytes
 *    0 up to the lowest region (up to T when there is none), so a region
 *    is never writable through it.  A card with no table (neither copy has
 *    the magic) is raw up to T too: the table's area (T to C) is never
 *    writable through the raw disk, whatever the state, so no table can be
 *    planted there.  A table with no valid copy ("damaged") leaves the raw
 *    disk read-only until `vcache-config repair-table` rewrites it.
 *  - A copy is one 4 KiB header block followed by VC_SPACE_MAX_REGIONS
 *    entry blocks of 4 KiB; unused entries are zero.
 *  - crc32c (Castagnoli, seed ~0, no final inversion) over the whole copy
 *    with the crc field zero.  All integers little-endian.
 */
#ifndef VCACHE_VC_SPACE_H
#define VCACHE_VC_SPACE_H

#include <linux/types.h>

#define VC_SPACE_MAGIC		0x50534356u	/* "VCSP" */
#define VC_SPACE_VERSION	1
#define VC_SPACE_BLOCK		4096
#define VC_SPACE_MAX_REGIONS	15
#define VC_SPACE_COPY_BYTES	((VC_SPACE_MAX_REGIONS + 1) * VC_SPACE_BLOCK)
#define VC_SPACE_TABLE_BYTES	(2 * VC_SPACE_COPY_BYTES)
#define VC_SPACE_ALIGN		(1u << 20)	/* region start and length */
#define VC_SPACE_NAME_LEN	32		/* with the NUL */
#define VC_SPACE_CONF_MAX	2048		/* the owner's blob */

/* Header block of a copy. */
struct vc_space_hdr {
	__le32 magic;		/* VC_SPACE_MAGIC */
	__le16 version;		/* VC_SPACE_VERSION */
	__le16 block;		/* VC_SPACE_BLOCK */
	__le32 crc;		/* of the whole copy, this field zero */
	__le32 nr_regions;	/* entries in use (the first); the rest zero */
	__le64 generation;	/* +1 per change; the higher copy wins */
	__le64 capacity;	/* card bytes when written (a card that
				 * shrank refuses the table) */
	__le32 lba_size;	/* card LBA size when written */
	__le32 max_regions;	/* VC_SPACE_MAX_REGIONS */
	__u8 reserved[VC_SPACE_BLOCK - 40];
};

/* Entry block: one region. */
struct vc_space_entry {
	char name[VC_SPACE_NAME_LEN];	/* unique, isgraph() ASCII, NUL */
	__le64 start;		/* bytes, VC_SPACE_ALIGN aligned */
	__le64 len;		/* bytes, VC_SPACE_ALIGN multiple */
	__le32 block_size;	/* the owner's block size, bytes */
	__le32 conf_len;	/* bytes of conf in use */
	__le64 created;		/* seconds since the epoch */
	__u8 reserved[64 - 8 - 8 - 4 - 4 - 8];
	__u8 conf[VC_SPACE_CONF_MAX];	/* the owner's settings */
	__u8 pad[VC_SPACE_BLOCK - VC_SPACE_NAME_LEN - 64 - VC_SPACE_CONF_MAX];
};

#endif /* VCACHE_VC_SPACE_H */
