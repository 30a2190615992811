/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe.h - does a block device hold a vcache cache (the engine's
 * superblock, cache/include/vc_format.h)?  Read-only: for `create` (which
 * refuses to destroy one without --force) and `hotplug` (which asks the
 * kernel to load one).
 */
#ifndef VCC_PROBE_H
#define VCC_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct vcc_probe {
	unsigned int version;		/* on-flash format */
	char name[32];			/* "" for format 2 and older */
	uint32_t block_size;
	uint64_t nr_blocks;
	bool clean;			/* shut down cleanly */
	uint64_t dirty_bytes;		/* DIRTY records that verify */
	uint64_t bad_sectors;		/* record sectors that do not */
};

/*
 * 1 and @p filled: @path holds a cache; 0: it does not; -1: cannot read
 * it (errno).  @count_dirty: also read every record (size of the cache's
 * metadata: about 1 MiB per 128k blocks).
 */
int vcc_probe_cache(const char *path, bool count_dirty, struct vcc_probe *p);

#endif
