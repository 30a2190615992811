/* SPDX-License-Identifier: GPL-2.0 */
/*
 * info.h - what the kernel says about a cache (GET) and its PID lists
 * (PID_GET), parsed; the printers and the command logic read these, so
 * they are tested with canned values, without a kernel.
 */
#ifndef VCC_INFO_H
#define VCC_INFO_H

#include <vcache/vcache_nl.h>

#include "util.h"

#define VCC_MAX_BACKING 64
#define VCC_NR_S (VCACHE_S_MAX + 1)	/* indexed by VCACHE_S_* */
#define VCC_HAS(x, attr) (!!((x)->has & (1ULL << (attr))))
#define VCC_SET_HAS(x, attr) ((x)->has |= 1ULL << (attr))

struct vcc_flush_info {
	u64 has;			/* bit per VCACHE_FL_* */
	u64 target, done, remaining;	/* blocks */
	bool running;
	u32 result, seq;
};

struct vcc_backing_info {
	u64 has;			/* bit per VCACHE_B_* */
	u64 dev;
	char ident[VCACHE_IDENT_MAX];
	char devname[VCACHE_NAME_MAX];
	char disk[32];			/* vcache0 */
	u32 id;
	u8 state;
	u64 size, dirty_bytes;
	char backing_disk[32];		/* sdb */
	bool has_stat[VCC_NR_S];	/* VCACHE_B_STATS */
	u64 stat[VCC_NR_S];
};

struct vcc_cache_info {
	u64 has;			/* bit per VCACHE_A_* */
	char name[VCACHE_NAME_MAX];
	u8 state, mode, req_mode, policy, pid_default;
	u64 cache_dev;
	char cache_disk[32];
	char card[64];
	u64 region_start, cache_size;
	u32 block_size;
	bool has_param[VCACHE_P_MAX + 1];
	u64 param[VCACHE_P_MAX + 1];
	bool has_stat[VCC_NR_S];
	u64 stat[VCC_NR_S];
	struct vcc_flush_info flush;
	unsigned int nr_backing;
	struct vcc_backing_info backing[VCC_MAX_BACKING];
};

/* LAT_GET: a histogram per path (VCACHE_LAT_*), buckets as in the ABI */
struct vcc_lat_info {
	bool has;
	u64 count[VCACHE_NR_LAT_PATHS];
	u64 sum_ns[VCACHE_NR_LAT_PATHS];
	u64 b[VCACHE_NR_LAT_PATHS][VCACHE_LAT_BUCKETS];
};

/* "read_hit" for VCACHE_LAT_READ_HIT; NULL outside the table. */
const char *vcc_lat_path_name(int path);

struct vcc_pid_info {
	char name[VCACHE_NAME_MAX];
	bool has_default;
	u8 pid_default;
	unsigned int nr[2];		/* VCACHE_PID_ALLOW, VCACHE_PID_DENY */
	u32 *pids[2];
	bool has_hidden[2];
	u32 hidden[2];			/* not in our PID namespace */
	unsigned int nr_cg[2];		/* VCACHE_PID_CG_ALLOW - 2, ... */
	struct vcc_cgroup_info {
		u64 id;
		char path[256];
	} *cg[2];
};

/* "dirty_blocks" for VCACHE_S_DIRTY_BLOCKS; NULL outside the table. */
const char *vcc_stat_name(int attr);

/* Dirty bytes of the cache: the DIRTY_BYTES statistic, else the sum of
 * the backing devices' dirty bytes. */
u64 vcc_cache_dirty(const struct vcc_cache_info *c);

/* The backing device named @devname, or with device number @dev (if
 * non-zero); NULL if none. */
const struct vcc_backing_info *
vcc_find_backing(const struct vcc_cache_info *c, const char *devname,
		 u64 dev);

/* "254:16" */
char *vcc_devstr(u64 dev, char *buf, size_t len);

#endif
