// SPDX-License-Identifier: GPL-2.0
/*
 * info.c - helpers over parsed GET replies (info.h).
 */
#include <stdio.h>
#include <string.h>

#include "info.h"

static const char *const stat_names[VCC_NR_S] = VCACHE_STAT_NAMES;

static const char *const lat_names[VCACHE_NR_LAT_PATHS] = VCACHE_LAT_PATH_NAMES;

const char *vcc_lat_path_name(int path)
{
	return path >= 0 && path < VCACHE_NR_LAT_PATHS ? lat_names[path] : NULL;
}

const char *vcc_stat_name(int attr)
{
	return attr > 0 && attr < VCC_NR_S ? stat_names[attr] : NULL;
}

u64 vcc_cache_dirty(const struct vcc_cache_info *c)
{
	u64 sum = 0;
	unsigned int i;

	if (c->has_stat[VCACHE_S_DIRTY_BYTES])
		return c->stat[VCACHE_S_DIRTY_BYTES];
	for (i = 0; i < c->nr_backing; i++)
		sum += c->backing[i].dirty_bytes;
	return sum;
}

const struct vcc_backing_info *
vcc_find_backing(const struct vcc_cache_info *c, const char *devname, u64 dev)
{
	unsigned int i;

	for (i = 0; i < c->nr_backing; i++) {
		const struct vcc_backing_info *b = &c->backing[i];

		if (devname && VCC_HAS(b, VCACHE_B_DEVNAME) &&
		    !strcmp(b->devname, devname))
			return b;
		if (dev && VCC_HAS(b, VCACHE_B_DEV) && b->dev == dev)
			return b;
	}
	return NULL;
}

char *vcc_devstr(u64 dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", (unsigned int)(dev >> 32),
		 (unsigned int)(dev & 0xffffffffu));
	return buf;
}
